// Usage objects of every SDK through the built package (I-3), and the countTokens hook
// (I-4) with a real tokenizer (js-tiktoken, o200k_base).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getEncoding } from 'js-tiktoken'
import { ContextCompactor } from 'context-compactor'

const o200k = getEncoding('o200k_base')
const tiktokenCount = (texts) => texts.map((t) => o200k.encode(t).length)

function chat(n = 6) {
  const msgs = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < n; i++) {
    msgs.push({ role: 'user', content: `question ${i}: ` + 'explain the parser state machine in detail '.repeat(20) })
    msgs.push({ role: 'assistant', content: `answer ${i}: ` + 'the lexer hands tokens to the parser, '.repeat(20) })
  }
  return msgs
}

const signal = (d, name) => d.signals.find((s) => s.name === name)?.value

test('i3_every_sdk_usage_shape_sets_the_provider_total_tokens_signal', () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  const shapes = {
    'openai chat': [{ prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, prompt_tokens_details: { cached_tokens: 1024 } }, 1500],
    'openai responses': [{ input_tokens: 900, input_tokens_details: { cached_tokens: 512 }, output_tokens: 100, total_tokens: 1000 }, 1000],
    anthropic: [{ input_tokens: 50, cache_creation_input_tokens: 2000, cache_read_input_tokens: 30000, output_tokens: 700 }, 32750],
    gemini: [{ promptTokenCount: 4000, cachedContentTokenCount: 3000, candidatesTokenCount: 200, totalTokenCount: 4200 }, 4200],
    'ai sdk': [{ inputTokens: 5000, inputTokenDetails: { cacheReadTokens: 4000 }, outputTokens: 300, outputTokenDetails: { reasoningTokens: 100 }, totalTokens: 5300 }, 5300],
    'ai sdk provider v3/v4': [{ inputTokens: { total: 800, cacheRead: 500 }, outputTokens: { total: 60, reasoning: 10 } }, 860],
    langchain: [{ input_tokens: 350, output_tokens: 240, total_tokens: 590, input_token_details: { cache_read: 100 } }, 590],
  }
  for (const [name, [usage, total]] of Object.entries(shapes)) {
    const d = c.check(null, chat(1), { usage })
    assert.equal(signal(d, 'provider_total_tokens'), total, name)
    assert.ok(!d.warnings.some((w) => w.code === 'usage_unreadable'), name)
  }
})

test('i3_unreadable_usage_raises_a_warning_naming_its_keys_in_check_compact_and_observe', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  const usage = { promptTokens: 10, completionTokens: 3 }
  const d = c.check(null, chat(1), { usage })
  const w = d.warnings.find((x) => x.code === 'usage_unreadable')
  assert.ok(w && w.message.includes('"promptTokens"') && w.message.includes('"completionTokens"'), JSON.stringify(d.warnings))
  assert.equal(signal(d, 'provider_total_tokens'), undefined)
  const events = []
  await c.compact(null, chat(4), { usage, force: true, onEvent: (e) => events.push(e) })
  assert.ok(events.some((e) => e.type === 'warning' && e.data.code === 'usage_unreadable' && e.data.message.includes('"promptTokens"')))
  const seen = []
  const state = c.observeUsage(null, chat(1), { usage, onEvent: (e) => seen.push(e) })
  assert.equal(seen.length, 1)
  assert.equal(seen[0].data.code, 'usage_unreadable')
  assert.ok(!state.cadence.anchor, 'nothing anchored from an unreadable usage')
})

test('i4_count_tokens_hook_with_tiktoken_replaces_the_estimate', () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  const doc = chat(6)
  let texts = null
  const d = c.check(null, doc, { countTokens: (t) => { texts = t; return tiktokenCount(t) } })
  assert.equal(texts.length, doc.length + 1, 'the envelope, then one text a message')
  assert.equal(texts[1], JSON.stringify(doc[0]))
  const expected = tiktokenCount(texts).reduce((a, b) => a + b, 0)
  assert.equal(signal(d, 'estimated_transcript_tokens'), expected)
  const plain = c.check(null, doc, {})
  assert.notEqual(signal(plain, 'estimated_transcript_tokens'), expected, 'the hook changed the figure')
  // tools counted by the hook in the forecast
  const tools = [{ type: 'function', function: { name: 'read_file', description: 'read a file', parameters: { type: 'object' } } }]
  const withTools = c.check(null, doc, { tools, countTokens: tiktokenCount })
  const toolTokens = o200k.encode(JSON.stringify(tools)).length
  assert.equal(signal(withTools, 'forecast_request_tokens'), expected + toolTokens + 4096) // output reserve: min(4096, window / 10)
})

test('i4_count_tokens_decides_compaction_when_the_byte_estimate_would_not', async () => {
  // 400 tokens a message by the host's count: 13 rows x 400 = 5200 >= 0.65 x 8000
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  // longer answers: N-1 quotes every folded user text in the summary, so the fold
  // shrinks the transcript only by what the answers held
  const doc = chat(6).map((m) => (m.role === 'assistant' ? { ...m, content: m.content + 'and the parser builds the tree. '.repeat(40) } : m))
  assert.equal(c.check(null, doc, {}).compact, false)
  const heavy = (texts) => texts.map(() => 400)
  const d = c.check(null, doc, { countTokens: heavy })
  assert.equal(d.compact, true)
  assert.equal(d.decidedBy, 'estimated_transcript_tokens')
  const out = await c.compact(null, doc, { countTokens: async (t) => heavy(t) })
  assert.equal(out.status, 'compacted')
  // the live handle uses it too
  const live = c.open(doc)
  assert.equal(live.check(null, { countTokens: heavy }).compact, true)
})

test('i4_async_count_tokens_needs_check_async', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  const doc = chat(2)
  const asyncCount = async (texts) => tiktokenCount(texts)
  assert.throws(() => c.check(null, doc, { countTokens: asyncCount }), (e) => e.code === 'invalid_config' && /checkAsync/.test(e.message))
  const d = await c.checkAsync(null, doc, { countTokens: asyncCount })
  assert.equal(signal(d, 'estimated_transcript_tokens'), tiktokenCount(['', ...doc.map((m) => JSON.stringify(m))]).reduce((a, b) => a + b, 0))
  // a bad answer is a typed error; a throw reaches the caller unchanged
  await assert.rejects(c.checkAsync(null, doc, { countTokens: () => [1, 2] }), (e) => e.code === 'invalid_config' && /2 counts for 6 texts/.test(e.message))
  const mine = new Error('tokenizer down')
  await assert.rejects(c.checkAsync(null, doc, { countTokens: async () => { throw mine } }), (e) => e === mine)
})
