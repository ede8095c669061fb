// I-6 (helper "refs", finding G): an aborted call rejects the way `fetch` does and the AI
// SDK's `isAbortError` reads it (`error instanceof Error && name === 'AbortError' |
// 'TimeoutError'`): a DOMException named AbortError (TimeoutError for AbortSignal.timeout),
// `cause` the signal's reason, and the engine's `code: "aborted"` kept on it. Through the
// AI SDK middleware, the LangChain middleware, `compact` and the summarize `{ signal }`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateText, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { fakeModel } from '@langchain/core/testing'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { createAgent } from 'langchain'
import { ContextCompactor } from 'context-compactor'
import { compactionMiddleware as aiMiddleware } from 'context-compactor/ai-sdk'
import { compactionMiddleware as lcMiddleware } from 'context-compactor/langchain'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** The AI SDK's own test (packages/provider-utils isAbortError), restated. */
const isAbortError = (e) => e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')

function assertAbort(e, reason, name = 'AbortError') {
  assert.ok(e instanceof DOMException, `a DOMException: ${e?.name}: ${e?.message}`)
  assert.ok(isAbortError(e), 'the AI SDK reads it as an abort')
  assert.equal(e.name, name)
  assert.equal(e.code, 'aborted', 'the engine code stays on it')
  assert.equal(e.cause, reason, 'cause: the signal reason')
  assert.match(e.message, /^aborted: .*nothing was committed/)
}

function chat(n) {
  const rows = [{ role: 'system', content: 'You are a helpful agent.' }]
  for (let i = 0; i < n; i++) rows.push({ role: 'user', content: `question ${i} ${'in detail '.repeat(20)}` }, { role: 'assistant', content: `answer ${i} ${'z'.repeat(1500)}` })
  rows.push({ role: 'user', content: 'and now the summary' })
  return rows
}

test('I-6: compact aborted while summarize runs rejects with an AbortError carrying code aborted; the summarize signal reason is the same shape', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const ac = new AbortController()
  const reason = new Error('user left')
  let seen
  const p = c.compact(null, chat(10), {
    force: true,
    signal: ac.signal,
    summarize: (req, { signal }) => new Promise(() => { signal.addEventListener('abort', () => { seen = signal.reason }) }),
  })
  setTimeout(() => ac.abort(reason), 50)
  const e = await p.then(() => null, (x) => x)
  assertAbort(e, reason)
  assert.ok(e.state !== undefined, 'the state to persist rides on it')
  assertAbort(seen, reason)
  // AbortSignal.timeout(): named TimeoutError, as fetch rejects
  // (Node's AbortSignal.timeout timer does not keep the process alive: a timer here does)
  const hold = setTimeout(() => {}, 5000)
  const t = await c.compact(null, chat(10), { force: true, signal: AbortSignal.timeout(30), summarize: () => new Promise(() => {}) }).then(() => null, (x) => x)
  clearTimeout(hold)
  assert.equal(t.name, 'TimeoutError')
  assert.equal(t.code, 'aborted')
  assert.ok(isAbortError(t) && t.cause?.name === 'TimeoutError')
  // already aborted before the call
  const pre = AbortSignal.abort()
  const a = await c.compact(null, chat(10), { force: true, signal: pre, summarize: () => 'S' }).then(() => null, (x) => x)
  assertAbort(a, pre.reason)
})

test('I-6: an aborted generateText through the AI SDK middleware rejects with an AbortError (code aborted), as fetch would', async () => {
  const mw = aiMiddleware({ contextWindow: 3000, summarize: () => new Promise(() => {}) })
  let calls = 0
  const model = wrapLanguageModel({
    model: new MockLanguageModelV4({ doGenerate: async () => { calls++; throw new Error('not reached') } }),
    middleware: mw,
  })
  const ac = new AbortController()
  const reason = new Error('user pressed stop')
  setTimeout(() => ac.abort(reason), 50)
  const e = await generateText({ model, messages: chat(10).slice(1), abortSignal: ac.signal, maxRetries: 0 }).then(() => null, (x) => x)
  assertAbort(e, reason)
  assert.equal(calls, 0)
  assert.equal(mw.view.state, null, 'nothing committed')
})

test('I-6: a cancelled LangChain invocation: the middleware rejects with an AbortError carrying code aborted', async () => {
  const middleware = lcMiddleware({ contextWindow: 3000, summarize: () => new Promise(() => {}) })
  const messages = []
  for (let i = 0; i < 10; i++) messages.push(new HumanMessage(`q${i}`), new AIMessage('a'.repeat(2000)))
  messages.push(new HumanMessage('last'))
  // the hook the agent runs before each model call, with the runtime's signal
  const ac = new AbortController()
  const reason = new Error('tab closed')
  setTimeout(() => ac.abort(reason), 50)
  const e = await middleware.beforeModel({ messages }, { signal: ac.signal }).then(() => null, (x) => x)
  assertAbort(e, reason)
  assert.equal(middleware.stats().state, null, 'no state committed')
  // through an agent: LangChain races the signal itself and rethrows its reason (as fetch
  // does); either way the caller sees an abort and nothing is committed
  const model = fakeModel()
  model.respond(new AIMessage({ content: 'ok', id: 'a' }))
  const agent = createAgent({ model, tools: [], middleware: [middleware] })
  const ac2 = new AbortController()
  setTimeout(() => ac2.abort(reason), 50)
  const e2 = await agent.invoke({ messages }, { signal: ac2.signal }).then(() => null, (x) => x)
  assert.ok(e2 === reason || (isAbortError(e2) && e2.code === 'aborted'), `${e2?.name}: ${e2?.message}`)
  assert.equal(middleware.stats().compactions.length, 0, 'no compaction recorded')
})
