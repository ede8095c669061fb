// JS tests of the live handle (`compactor.open`): append + check give the same decision
// as a fresh check of the whole transcript (C-9), compact replaces the held transcript
// with the result (W-1), and errors keep stable codes (J-2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor } from 'context-compactor'

function round(i) {
  return [
    { role: 'user', content: `step ${i}: inspect module m${i}` },
    { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"m${i}.rs"}` } }] },
    { role: 'tool', tool_call_id: `c${i}`, content: `fn m${i}() {}\n`.repeat(100) },
    { role: 'assistant', content: `Module m${i} looks fine.` },
  ]
}

test('C-9: live append + check equals a fresh check of the whole transcript', () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000 })
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }, ...round(0)]
  const live = c.open(JSON.stringify({ messages: msgs }))
  for (let i = 1; i < 10; i++) {
    const rows = round(i)
    live.append(rows[0]) // one message object
    msgs.push(rows[0])
    assert.deepEqual(live.check(null, {}), c.check(null, { messages: msgs }, {}))
    live.append(JSON.stringify(rows.slice(1))) // JSON text of an array
    msgs.push(...rows.slice(1))
    assert.deepEqual(live.check(null, { toolsBytes: 500 }), c.check(null, { messages: msgs }, { toolsBytes: 500 }))
  }
  assert.equal(live.length, msgs.length)
  assert.deepEqual(live.transcript(), { messages: msgs })
  live.free()
})

test('W-1: live compact gives the same result as compact and holds the new transcript', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000 })
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let i = 0; i < 10; i++) msgs.push(...round(i))
  msgs.push({ role: 'user', content: 'Now write the report.' })
  const summarize = async () => 'Earlier modules were inspected.'
  const expected = await c.compact(null, { messages: msgs }, { summarize })
  const live = c.open({ messages: msgs })
  const out = await live.compact(null, { summarize })
  assert.equal(out.status, 'compacted')
  assert.deepEqual(out, expected)
  assert.deepEqual(live.transcript(), out.transcript)
  live.append({ role: 'assistant', content: 'Report written.' })
  const now = [...out.transcript.messages, { role: 'assistant', content: 'Report written.' }]
  assert.deepEqual(live.check(out.state, {}), c.check(out.state, { messages: now }, {}))
  live.free()
})

test('J-2: a bad appended row throws invalid_transcript and appends nothing', () => {
  const c = new ContextCompactor({ format: 'openai-chat' })
  const live = c.open([{ role: 'user', content: 'hi' }])
  assert.throws(() => live.append([{ role: 'user', content: 'ok' }, { content: 'no role' }]), (e) => e.code === 'invalid_transcript' && /message 2/.test(e.message))
  assert.equal(live.length, 1)
  live.free()
})
