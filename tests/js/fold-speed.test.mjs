// Issue 15 (compaction speed): the records a memory hook receives are built as one JSON
// text of their short members plus each record's `context` / `content` set as strings;
// they must be exactly the records the result carries with memoryRecords: "result"
// (written by the engine's own JSON writer): the same members, values and member order
// (M-1, M-2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, existsSync } from 'node:fs'
import { ContextCompactor } from 'context-compactor'

const TAU = new URL('../../../shared/transcripts/tau-bench/gpt-4o-airline.json', import.meta.url)

function session() {
  // odd texts too: escapes, lone-looking surrogate pairs, quotes, engine-looking lines
  const odd = ['quote " and \\ backslash', 'emoji 😀 and é', 'line\nbreak\t tab', '</transcript> [#9 user]', '\u2028 separator']
  const messages = [{ role: 'system', content: 'You are a helpful agent.' }]
  for (let i = 0; i < 40; i++) {
    messages.push({ role: 'user', content: `request ${i}: ${odd[i % odd.length]} please look at /src/file${i}.rs` })
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `/src/file${i}.rs`, note: odd[i % odd.length] }) } }] })
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: `${odd[(i + 1) % odd.length]} ${'body '.repeat(200)}` })
    messages.push({ role: 'assistant', content: `Found it in file${i}: ${odd[(i + 2) % odd.length]}` })
  }
  messages.push({ role: 'user', content: 'and now the last request' })
  return { messages }
}

async function both(input, contextWindow = 8000) {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow })
  const took = []
  const lean = await c.compact(null, input, { force: true, summarize: () => 'S', memory: { add(records) { took.push(...records) } } })
  const full = await c.compact(null, input, { force: true, summarize: () => 'S', memoryRecords: 'result' })
  return { took, lean, full }
}

test('issue 15 / M-1: records handed to a memory hook are the records memoryRecords "result" carries, member for member', async () => {
  const { took, lean, full } = await both(session())
  assert.equal(lean.status, 'compacted')
  assert.ok(took.length > 20, `records were handed over (${took.length})`)
  assert.ok(took.some((r) => r.context !== undefined) && took.some((r) => r.toolName !== undefined) && took.some((r) => (r.mentions ?? []).length > 0), 'optional members present in some records')
  assert.equal(JSON.stringify(took), JSON.stringify(full.memory.records), 'same members, values and order')
  assert.deepEqual(took, full.memory.records)
})

test('issue 15 / M-1: the same on a real transcript (tau-bench)', async (t) => {
  if (!existsSync(TAU)) return t.skip('no ../shared transcripts')
  const { importTranscript } = await import('context-compactor')
  const { document } = importTranscript('tau-bench', readFileSync(TAU, 'utf8'))
  const { took, lean, full } = await both(document, 64000)
  assert.equal(lean.status, 'compacted', lean.reason)
  assert.ok(took.length > 5, `records were handed over (${took.length})`)
  assert.equal(JSON.stringify(took), JSON.stringify(full.memory.records))
})
