// Capacity exports of ContextCompactor through the built package (C-3, C-6, B-1..B-3).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor } from 'context-compactor'

const user = (text) => ({ role: 'user', content: [{ type: 'text', text }] })
const assistant = (text) => ({ role: 'assistant', content: [{ type: 'text', text }] })

function history (turns, bytes) {
  const messages = []
  for (let i = 0; i < turns; i++) {
    messages.push(user(`q${i} ${'x'.repeat(bytes)}`), assistant(`a${i} ${'y'.repeat(bytes)}`))
  }
  messages.push(user('last question'))
  return { system: 'You are terse.', messages }
}

test('check sees provider usage, observeUsage anchors a projection, edits drop it (C-2, C-3, C-9)', () => {
  const cc = new ContextCompactor({ format: 'anthropic', contextWindow: 10000 })
  const doc = history(2, 40)
  const over = cc.check(null, doc, { usage: { input_tokens: 7000, output_tokens: 10 } })
  assert.equal(over.compact, true)
  assert.equal(over.decidedBy, 'provider_total_tokens')
  const names = over.signals.map((s) => s.name)
  assert.ok(names.includes('estimated_transcript_tokens') && names.includes('refusal'))

  let state = cc.observeUsage(null, doc, { usage: { input_tokens: 6000 }, provider: 'anthropic', model: 'm1' })
  assert.equal(state.cadence.anchor.inputTokens, 6000)
  assert.equal(state.cadence.anchor.rows, 5)
  const grown = { ...doc, messages: [...doc.messages, assistant('z'.repeat(3000))] }
  const d = cc.check(state, grown, { provider: 'anthropic', model: 'm1' })
  assert.equal(d.decidedBy, 'projected_input_tokens')
  assert.equal(cc.check(state, grown, { provider: 'openai', model: 'm1' }).projection, null)
  state = cc.noteTranscriptEdit(state, 'system_prompt')
  assert.equal(state.cadence.anchor, undefined)
  assert.throws(() => cc.noteTranscriptEdit(state, 'nope'), (e) => e.code === 'invalid_config')
})

test('recordRefusal forces exactly one compaction, cleared by the attempt (C-6)', async () => {
  const cc = new ContextCompactor({ format: 'anthropic', contextWindow: 100000 })
  const doc = history(4, 200)
  assert.equal(cc.check(null, doc).compact, false)
  const refused = cc.recordRefusal(null)
  assert.equal(refused.cadence.refusal, true)
  // Survives a restart: the state is plain JSON.
  const restored = JSON.parse(JSON.stringify(refused))
  assert.equal(cc.check(restored, doc, { inRun: true }).compact, false, 'in-run checks do not see it')
  const d = cc.check(restored, doc)
  assert.equal(d.compact, true)
  assert.equal(d.reason, 'refusal_recovery')
  let calls = 0
  const out = await cc.compact(restored, doc, { summarize: () => { calls++; return 'summary of the old turns' } })
  assert.equal(out.status, 'compacted')
  assert.equal(calls, 1)
  assert.equal(out.state.cadence.refusal, false)
  assert.equal(cc.check(out.state, out.transcript).compact, false, 'no second forced compaction')
})

test('boundRequest shortens the open run\'s oversized result for the request only (B-1..B-3)', () => {
  const cc = new ContextCompactor({ format: 'anthropic', contextWindow: 20000, maxRequestBytes: 60000 })
  const big = 'const x = 1; '.repeat(30000)
  const doc = {
    system: 'You are a code assistant.',
    messages: [
      user('Summarize big.ts'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_big', name: 'read_file', input: { path: 'big.ts' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_big', content: big }] }
    ]
  }
  const before = JSON.stringify(doc)
  const b = cc.boundRequest(null, doc, {})
  assert.equal(JSON.stringify(doc), before, 'the stored transcript is untouched')
  assert.equal(b.fits, true)
  assert.ok(JSON.stringify(b.request).length <= 60000)
  assert.equal(b.bounded.length, 1)
  assert.equal(b.bounded[0].callId, 'toolu_big')
  assert.equal(b.bounded[0].wholeBytes, big.length)
  assert.ok(b.bounded[0].keptBytes > 0 && b.bounded[0].keptBytes < big.length)
  assert.equal(b.request.messages[1].content[0].id, 'toolu_big')
  assert.equal(b.request.messages[2].content[0].tool_use_id, 'toolu_big')
  const body = b.request.messages[2].content[0].content
  assert.match(body, /already ran/)
  assert.match(body, /omitted/)
  assert.equal(b.event.type, 'tool_results_bounded_for_request')
  assert.equal(b.state.cadence.refusal, true)
  assert.equal(b.state.cadence.refusalSource, 'bounded_request')
  const off = cc.boundRequest(null, doc, { compaction: false })
  assert.equal(off.bounded.length, 1)
  assert.equal(off.state.cadence.refusal, false, 'compaction off: nothing recorded')
  // The bounded answer anchors nothing and keeps the fact.
  const after = cc.observeUsage(b.state, doc, { usage: { input_tokens: 9000 }, bounded: true })
  assert.equal(after.cadence.anchor, undefined)
  assert.equal(after.cadence.refusal, true)
})
