// importTranscript's result surface (N-2): warnings naming lines, subagent runs kept
// apart (attach / drop), usage, and detection that refuses foreign shapes (N-3); the
// CLI prints the import warnings.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ContextCompactor, detectFormat, importTranscript } from 'context-compactor'

const cli = fileURLToPath(new URL('../../bin/context-compactor.mjs', import.meta.url))
const row = (type, content, extra = {}) => ({ type, session_id: 's', parent_tool_use_id: null, message: { role: type, content, ...(type === 'assistant' ? { id: extra.id ?? 'm' } : {}) }, ...extra })

function taskLog() {
  const rows = [
    'bash: no job control in this shell',
    row('user', 'Count the tests'),
    row('assistant', [{ type: 'tool_use', id: 'task1', name: 'Task', input: { prompt: 'count' } }], { id: 'm1' }),
    { ...row('user', 'sub prompt'), parent_tool_use_id: 'task1' },
    { ...row('assistant', [{ type: 'text', text: 'sub answer' }], { id: 's1' }), parent_tool_use_id: 'task1' },
    row('user', [{ type: 'tool_result', tool_use_id: 'task1', content: '3 tests' }]),
    { ...row('assistant', [{ type: 'text', text: 'There are 3.' }], { id: 'm2' }), message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'There are 3.' }], usage: { input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 9 } } },
    '{"type":"user","session_id":"s","message":{"role":"user","content":"tor',
  ]
  return rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')
}

test('N-2: importTranscript returns warnings with lines, subagents apart from the main thread, usage', async () => {
  const r = importTranscript('auto', taskLog())
  assert.equal(r.format, 'anthropic')
  assert.equal(r.document.messages.length, 4)
  assert.deepEqual(r.warnings.map((w) => [w.line, w.code]), [[1, 'not_json'], [8, 'torn_line']])
  assert.equal(r.subagents.length, 1)
  assert.equal(r.subagents[0].callId, 'task1')
  assert.equal(r.subagents[0].format, 'anthropic')
  assert.equal(r.subagents[0].document.messages.length, 2)
  assert.deepEqual(r.usage, { input_tokens: 105, output_tokens: 9, total_tokens: 114, cached_input_tokens: 100, reasoning_tokens: 0 })
  const out = await new ContextCompactor({ format: r.format, contextWindow: 8000 }).compact(null, r.document, { force: true })
  assert.notEqual(out.status, 'failed', out.reason)
  const dropped = importTranscript('claude-code-jsonl', taskLog(), { subagents: 'drop' })
  assert.equal(dropped.subagents, undefined)
  assert.ok(dropped.warnings.some((w) => w.code === 'subagent_dropped' && w.line === 4))
  assert.throws(() => importTranscript('claude-code-jsonl', taskLog(), { subagents: 'nope' }), (e) => e.code === 'invalid_config')
})

test('N-2: codex-rollout and Glaive JSONL kinds', () => {
  const line = (type, payload) => JSON.stringify({ timestamp: 't', type, payload })
  const rollout = [
    line('session_meta', { id: 't1', instructions: 'Be careful.' }),
    line('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests' }] }),
    line('event_msg', { type: 'user_message', message: 'Run the tests' }),
    line('response_item', { type: 'function_call', name: 'shell', arguments: '{}', call_id: 'c1' }),
    line('response_item', { type: 'function_call_output', call_id: 'c1', output: 'ok' }),
    line('event_msg', { type: 'token_count', info: { last_token_usage: { input_tokens: 50, cached_input_tokens: 40, output_tokens: 5, reasoning_output_tokens: 2, total_tokens: 55 } } }),
  ].join('\n')
  const r = importTranscript('auto', rollout)
  assert.equal(r.format, 'openai-responses')
  assert.equal(r.document.instructions, 'Be careful.')
  assert.equal(r.document.input.length, 3)
  assert.deepEqual(r.usage, { input_tokens: 50, output_tokens: 5, total_tokens: 55, cached_input_tokens: 40, reasoning_tokens: 2 })
  const glaive = [{ conversations: [{ from: 'system', value: 'S' }, { from: 'human', value: 'q' }, { from: 'gpt', value: 'a' }] }, { conversations: [{ from: 'human', value: 'q2' }] }].map((c) => JSON.stringify(c)).join('\n')
  const g = importTranscript('glaive-jsonl', glaive)
  assert.deepEqual(g.document.messages.map((m) => m.role), ['system', 'user', 'assistant', 'user'])
})

test('N-3: detection refuses LangChain dumps and wrapped rollouts with a hint; {contents: 5} is no Gemini', () => {
  const lc = JSON.stringify([{ type: 'human', data: { content: 'hi', type: 'human' } }, { type: 'ai', data: { content: 'yo', type: 'ai' } }])
  assert.throws(() => importTranscript('auto', lc), (e) => e.code === 'unknown_format' && /LangChain/.test(e.message) && /langchain integration/.test(e.message))
  assert.throws(() => detectFormat(lc), (e) => e.code === 'unknown_format')
  const wrapped = JSON.stringify([{ timestamp: 't', type: 'session_meta', payload: { id: 'x' } }])
  assert.throws(() => importTranscript('auto', wrapped), (e) => e.code === 'unknown_format' && /codex-rollout/.test(e.message))
  assert.throws(() => detectFormat({ contents: 5 }), (e) => e.code === 'unknown_format')
})

test('CLI prints the import warnings (count and the first few)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cc-import-'))
  const file = join(dir, 'log.jsonl')
  writeFileSync(file, taskLog())
  const out = execFileSync('node', [cli, 'compact', file, '--format', 'claude-code-jsonl', '--context-window', '8000'], { encoding: 'utf8' })
  assert.match(out, /^import: {5}2 warnings, 1 subagent run kept apart$/m)
  assert.match(out, /^ {2}line 8 torn_line: /m)
  const dropped = execFileSync('node', [cli, 'compact', file, '--subagents', 'drop', '--context-window', '8000'], { encoding: 'utf8' })
  assert.match(dropped, /subagent_dropped/)
})
