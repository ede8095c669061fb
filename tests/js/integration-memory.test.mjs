// N-1 / M-1 (adversarial finding, session 5): with no memory hook of the host's, the AI SDK
// helpers and the LangChain middleware keep the folded user text a summary clips whole in
// their own in-process MemoryIndex, instead of a result nobody reads.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { HumanMessage, AIMessage } from '@langchain/core/messages'
import { MemoryIndex } from 'context-compactor'
import { prepareStepCompaction } from 'context-compactor/ai-sdk'
import { compactionMiddleware } from 'context-compactor/langchain'

const long = (i) => `Request ${i}: ` + `detail${i} `.repeat(120) + `UNIQUE-TAIL-${i}`

/** The tails a text no longer holds. */
const missing = (text) => [...Array(12).keys()].filter((i) => !text.includes(`UNIQUE-TAIL-${i}`))

/** Every record's content of a MemoryIndex scope, joined. */
function recorded(memory, session = 'default') {
  return memory.enumerate(session, { pageSize: 1000 }).records.map((r) => r.content).join('\n')
}

test('n1_m1_ai_sdk_prepare_step_without_a_memory_hook_keeps_clipped_user_text_in_its_own_memory', async () => {
  const ps = prepareStepCompaction({ contextWindow: 4000 })
  assert.ok(ps.view.memory instanceof MemoryIndex, 'the helper holds its own MemoryIndex')
  const msgs = []
  for (let i = 0; i < 12; i++) msgs.push({ role: 'user', content: [{ type: 'text', text: long(i) }] }, { role: 'assistant', content: [{ type: 'text', text: `ok ${i}` }] })
  const r = await ps({ messages: msgs, steps: [], stepNumber: 0 })
  assert.ok(r.messages, 'compacted')
  const sent = JSON.stringify(r.messages)
  const gone = missing(sent)
  assert.ok(gone.length > 0, 'some requests were clipped in the summary')
  // every request the prompt no longer holds whole is whole in the helper's memory
  const inMemory = recorded(ps.view.memory)
  assert.deepEqual(gone.filter((i) => !inMemory.includes(`UNIQUE-TAIL-${i}`)), [])
  const hit = ps.view.memory.recall('default', `UNIQUE-TAIL-${gone[0]}`, { limit: 5 }).hits
  assert.ok(hit.some((h) => h.content.includes(`UNIQUE-TAIL-${gone[0]}`)), 'recallable')
  // a host memory hook is used as given
  const own = new MemoryIndex()
  assert.equal(prepareStepCompaction({ contextWindow: 4000, memory: own }).view.memory, own)
})

test('n1_m1_langchain_middleware_without_a_memory_hook_keeps_clipped_user_text_in_its_own_memory', async () => {
  const mw = compactionMiddleware({ contextWindow: 4000 })
  assert.ok(mw.memory instanceof MemoryIndex)
  const messages = []
  for (let i = 0; i < 12; i++) messages.push(new HumanMessage(long(i)), new AIMessage(`ok ${i}`))
  const out = await mw.beforeModel({ messages }, {})
  assert.ok(out?.messages, 'compacted')
  const kept = JSON.stringify(out.messages.slice(1).map((m) => m.content))
  const gone = missing(kept)
  assert.ok(gone.length > 0)
  const inMemory = recorded(mw.memory)
  assert.deepEqual(gone.filter((i) => !inMemory.includes(`UNIQUE-TAIL-${i}`)), [])
})
