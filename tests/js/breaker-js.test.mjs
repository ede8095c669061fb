// Breaker findings 2, 3 (AI SDK), 5, 6, 9 (JS side) and 11 of session 5, each as a test
// that fails on the code before the fix: LangChain stored messages keep their text
// (N-1, N-3, I-2), the AI SDK session mode scopes memory and handles by the session's id
// (M-2, M-4), bounds its own store calls (I-6), counts the current system prompt (C-2,
// C-8) and names the host's history index (J-2); typed errors at the edges (J-2, M-4);
// an abort during a hung onEvent commits nothing (I-6).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import Database from 'better-sqlite3'
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages'
import { ContextCompactor, MemoryIndex, Session, recallFromStore } from 'context-compactor'
import { fromLangChainMessages, toLangChainMessages } from 'context-compactor/langchain'
import { compactionMiddleware, prepareStepCompaction } from 'context-compactor/ai-sdk'
import { sqliteMemory, sqliteStore } from 'context-compactor/stores'

const CONSTRAINT = 'You must never book before 9am.'

/** A compare-and-swap session store in memory, JSON-cloned like a real one, without a sessionId. */
function memStore() {
  const s = {
    record: null,
    saves: 0,
    load() { return s.record && JSON.parse(s.record) },
    save(r, { expectedRevision }) {
      const cur = s.record ? JSON.parse(s.record).revision : 0
      if (cur !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      s.record = JSON.stringify(r)
      s.saves++
      return { ok: true }
    },
  }
  return s
}

const u = (t) => ({ role: 'user', content: t })
const a = (t) => ({ role: 'assistant', content: [{ type: 'text', text: t }] })

async function rejection(p) {
  try { await p } catch (e) { return e }
  assert.fail('expected a rejection')
}

function thrown(f) {
  try { f() } catch (e) { return e }
  assert.fail('expected a throw')
}

// ---------------------------------------------------------------- finding 2 (LangChain)

function tripMessages() {
  const msgs = [new HumanMessage(`Plan my trip. ${CONSTRAINT}`)]
  for (let i = 0; i < 10; i++) msgs.push(new AIMessage(`leg ${i} ` + 'z'.repeat(900)), new HumanMessage(`leg ${i}: always prefer trains.`))
  return msgs
}

test('n1_i2_langchain_js_stored_messages_keep_their_text_through_a_compaction', async () => {
  // what LangChain.js chat-history stores persist, read back as JSON
  const stored = JSON.parse(JSON.stringify(mapChatMessagesToStoredMessages(tripMessages())))
  assert.deepEqual(Object.keys(stored[0]).sort(), ['data', 'type'])
  const rows = fromLangChainMessages(stored)
  assert.equal(rows[0].role, 'user')
  assert.equal(rows[0].content, `Plan my trip. ${CONSTRAINT}`)
  assert.equal(rows[1].role, 'assistant')
  assert.ok(rows[1].content.startsWith('leg 0 '))
  const out = await new ContextCompactor({ format: 'openai-chat', contextWindow: 2000 }).compact(null, rows, { force: true })
  assert.equal(out.status, 'compacted')
  assert.ok(JSON.stringify(out.transcript).includes('never book before 9am'), 'N-1: the first task\'s constraint survives')
  // and back to messages with their text
  const back = toLangChainMessages(rows)
  assert.equal(back[0].content, `Plan my trip. ${CONSTRAINT}`)
  assert.equal(back[0].getType(), 'human')
})

test('n1_i2_python_messages_to_dict_and_serialized_lc_messages_keep_every_field', () => {
  const dict = [
    { type: 'human', data: { content: 'Weather in Oslo?', type: 'human', id: null, additional_kwargs: {}, response_metadata: {} } },
    { type: 'ai', data: { content: '', type: 'ai', tool_calls: [{ name: 'weather', args: { city: 'Oslo' }, id: 'call_1', type: 'tool_call' }], usage_metadata: { input_tokens: 20, output_tokens: 9, total_tokens: 29 } } },
    { type: 'tool', data: { content: '4°C', type: 'tool', tool_call_id: 'call_1', status: 'success' } },
    { type: 'chat', data: { content: 'critique', type: 'chat', role: 'assistant' } },
    { type: 'AIMessageChunk', data: { content: [{ type: 'text', text: 'chunked' }], type: 'AIMessageChunk' } },
  ]
  const rows = fromLangChainMessages(dict)
  assert.deepEqual(rows.map((r) => r.role), ['user', 'assistant', 'tool', 'assistant', 'assistant'])
  assert.equal(rows[0].content, 'Weather in Oslo?')
  assert.deepEqual(rows[1].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }])
  assert.deepEqual(rows[1].lc.usage_metadata, { input_tokens: 20, output_tokens: 9, total_tokens: 29 })
  assert.equal(rows[2].tool_call_id, 'call_1')
  assert.equal(rows[2].lc.status, 'success')
  assert.equal(rows[3].content, 'critique')
  assert.deepEqual(rows[4].content, [{ type: 'text', text: 'chunked' }])
  // the lc form: Python dumpd, and JSON.stringify of a LangChain.js message
  const lc = [
    { lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', 'AIMessage'], kwargs: { content: 'It is 4°C.', type: 'ai', tool_calls: [] } },
    ...JSON.parse(JSON.stringify([new SystemMessage('Answer briefly.'), new HumanMessage({ content: CONSTRAINT, id: 'h1', name: 'ana' }), new ToolMessage({ content: 'r', tool_call_id: 'c9', artifact: { a: 1 } })])),
  ]
  assert.equal(lc[1].lc, 1)
  const rows2 = fromLangChainMessages(lc)
  assert.deepEqual(rows2.map((r) => [r.role, r.content]), [['assistant', 'It is 4°C.'], ['system', 'Answer briefly.'], ['user', CONSTRAINT], ['tool', 'r']])
  assert.equal(rows2[2].lc.id, 'h1')
  assert.equal(rows2[2].lc.name, 'ana')
  assert.deepEqual(rows2[3].lc.artifact, { a: 1 })
  assert.equal(rows2[3].tool_call_id, 'c9')
})

test('n1_n3_an_unreadable_langchain_message_is_a_typed_error_naming_its_index', () => {
  const ok = { type: 'human', data: { content: 'fine' } }
  for (const [bad, words] of [
    [{ type: 'human', data: { text: 'no content key' } }, 'no content'],
    [{ type: 'human', data: { content: 42 } }, 'content of type number'],
    [{ type: 'remove', data: { id: 'x' } }, 'type "remove"'],
    [{ type: 'banana', data: { content: 'x' } }, 'type "banana"'],
    [{ lc: 1, type: 'secret', id: ['OPENAI_API_KEY'] }, 'serialized secret'],
    [{ lc: 1, type: 'constructor', id: ['langchain', 'prompts', 'PromptTemplate'], kwargs: { template: 'x' } }, '"PromptTemplate"'],
    [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'] }, 'no kwargs'],
    [null, 'null'],
    ['just text', 'string'],
    [{ role: 'user', content: 'an OpenAI row' }, 'not a LangChain message'],
  ]) {
    const e = thrown(() => fromLangChainMessages([ok, bad]))
    assert.equal(e.code, 'invalid_transcript', JSON.stringify(bad))
    assert.match(e.message, /message 1\b/, e.message)
    assert.ok(e.message.includes(words), `${e.message} should say ${words}`)
  }
})

// ------------------------------------------------------- finding 3 (AI SDK session scope)

test('m2_m4_ai_sdk_session_mode_scopes_memory_by_the_session_id', async () => {
  const db = new Database(':memory:')
  const memory = sqliteMemory(db, { MemoryIndex })
  for (const [chat, secret] of [['chat-alice', 'Alice lives at 12 Elm Street'], ['chat-bob', 'Bob lives at 99 Oak Avenue']]) {
    const h = [u(`Remember: ${secret}.`)]
    for (let i = 0; i < 8; i++) h.push(a(`noted ${i} ` + 'w'.repeat(1200)), u(`more ${i}`))
    const p = prepareStepCompaction({ contextWindow: 3000, preserveRecentTurns: 2, store: memory, session: sqliteStore(db, chat) })
    const r = await p({ messages: h, steps: [], stepNumber: 0 })
    assert.ok(r.messages, `${chat} compacted`)
  }
  const texts = async (s) => (await recallFromStore(memory, s, 'where does she live street avenue')).hits.map((h) => h.content).join(' | ')
  const alice = await texts('chat-alice')
  const bob = await texts('chat-bob')
  assert.ok(alice.includes('12 Elm Street') && !alice.includes('Oak Avenue'), alice)
  assert.ok(bob.includes('99 Oak Avenue') && !bob.includes('Elm Street'), bob)
  assert.equal(await texts('default'), '', 'nothing lands in the shared "default" scope')
  // a store with no id of its own: memory hooks need a sessionId, never the shared scope
  const e = thrown(() => prepareStepCompaction({ contextWindow: 3000, store: memory, session: memStore() }))
  assert.equal(e.code, 'invalid_config')
  assert.match(e.message, /sessionId/)
  // an explicit sessionId wins over the store's
  const p = prepareStepCompaction({ contextWindow: 3000, store: memory, session: sqliteStore(db, 'x'), sessionId: 'chat-carol' })
  assert.equal(p.view.sessionId, 'chat-carol')
})

test('m2_m4_ai_sdk_session_mode_two_chats_never_share_an_artifact_handle', async () => {
  const db = new Database(':memory:')
  const artifacts = new Map()
  const overwrites = []
  const storeArtifact = (item) => {
    if (artifacts.has(item.handle) && artifacts.get(item.handle) !== item.body) overwrites.push(item.handle)
    artifacts.set(item.handle, item.body)
  }
  const call = (id) => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'account', input: {} }] })
  const res = (id, body) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'account', output: { type: 'text', value: body } }] })
  const opening = [u('Show my account'), call('c1'), res('c1', 'ACCOUNT OVERVIEW '.repeat(300)), a('Here it is.')]
  const handles = {}
  for (const [chat, who] of [['chat-alice', 'ALICE'], ['chat-bob', 'BOB']]) {
    const o = { contextWindow: 1800, preserveRecentTurns: 2, outputReserveTokens: 100, storeArtifact, session: sqliteStore(db, chat) }
    const h1 = [...opening, u('my card please')]
    await prepareStepCompaction(o)({ messages: h1, steps: [], stepNumber: 0 })
    const h2 = [...h1, call('c2'), res('c2', `${who} CARD NUMBER `.repeat(300)), a('done'), u('thanks')]
    await prepareStepCompaction(o)({ messages: h2, steps: [], stepNumber: 0 })
    handles[chat] = new Set([...JSON.stringify(sqliteStore(db, chat).load()).matchAll(/artifact#[a-z0-9]+-\d+/g)].map((m) => m[0]))
  }
  assert.ok(handles['chat-alice'].size > 0 && handles['chat-bob'].size > 0, 'both chats evicted behind handles')
  for (const h of handles['chat-alice']) assert.ok(!handles['chat-bob'].has(h), `handle ${h} in both chats`)
  assert.deepEqual(overwrites, [], 'no body was stored under another chat\'s handle')
})

// ------------------------------------------------------- finding 5 (AI SDK session bounds)

test('i6_ai_sdk_session_mode_bounds_store_load_by_timeout_and_signal', async () => {
  const hung = { load: () => new Promise(() => {}), save: () => new Promise(() => {}) }
  const t0 = Date.now()
  const e = await rejection(prepareStepCompaction({ contextWindow: 8000, session: hung, timeoutMs: 100 })({ messages: [u('hi')], steps: [], stepNumber: 0 }))
  assert.equal(e.code, 'timeout')
  assert.match(e.message, /load callback did not settle within 100 ms/)
  assert.ok(Date.now() - t0 < 1500)
  const ac = new AbortController()
  setTimeout(() => ac.abort(new Error('user cancelled')), 50)
  const e2 = await rejection(prepareStepCompaction({ contextWindow: 8000, session: hung, signal: ac.signal })({ messages: [u('hi')], steps: [], stepNumber: 0 }))
  assert.equal(e2.code, 'aborted')
  assert.equal(e2.cause.message, 'user cancelled')
  // the middleware too, and a bad bound is a typed invalid_config
  const mw = compactionMiddleware({ contextWindow: 8000, session: hung, timeouts: { load: 80 } })
  const e3 = await rejection(mw.transformParams({ params: { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] } }))
  assert.equal(e3.code, 'timeout')
  const e4 = await rejection(prepareStepCompaction({ contextWindow: 8000, session: hung, timeoutMs: -5 })({ messages: [u('hi')], steps: [], stepNumber: 0 }))
  assert.equal(e4.code, 'invalid_config')
})

// ------------------------------------------------------- finding 6 (current system prompt)

test('c2_c8_ai_sdk_session_mode_counts_the_current_system_prompt', async () => {
  const hist = [u('hi'), a('hello'), u('summarise the doc'), a('ok ' + 'z'.repeat(2000)), u('go on')]
  const store = memStore()
  await prepareStepCompaction({ contextWindow: 8000, system: 'short', session: store })({ messages: hist.slice(0, 3), steps: [], stepNumber: 0 })
  assert.equal(JSON.parse(store.record).transcript.system, 'short')
  const big = 'Reference manual. '.repeat(2000) // 36 KB: ~9000 tokens, over the 8000 window alone
  const ps = prepareStepCompaction({ contextWindow: 8000, system: big, session: store })
  await ps({ messages: hist, steps: [], stepNumber: 0 })
  const d = ps.view.lastDecision
  const forecast = d.signals.find((s) => s.name === 'forecast_request_tokens').value
  assert.ok(forecast > 9000, `the forecast (${forecast}) counts the grown system prompt`)
  assert.equal(d.reason, 'cannot_fit')
  assert.equal(JSON.parse(store.record).transcript.system, big, 'the store holds the current system prompt')
})

test('c2_c8_ai_sdk_middleware_session_takes_a_changed_system_row', async () => {
  const hist = [u('hi'), a('hello'), u('summarise the doc'), a('ok ' + 'z'.repeat(2000)), u('go on')]
  const store = memStore()
  const mw = compactionMiddleware({ contextWindow: 100000, session: store })
  const p = (sys, rows) => ({ params: { prompt: [{ role: 'system', content: sys }, ...rows.map((r) => (r.role === 'user' ? { role: 'user', content: [{ type: 'text', text: r.content }] } : r))] } })
  const first = p('You are helpful. Today is 2026-12-01.', hist.slice(0, 3))
  assert.equal(await mw.transformParams(first), first.params)
  const second = p('You are helpful. Today is 2026-12-02.', hist)
  const out = await mw.transformParams(second)
  assert.equal(out, second.params, 'nothing to compact: the prompt goes out as it is')
  const rec = JSON.parse(store.record)
  assert.equal(rec.transcript.system, 'You are helpful. Today is 2026-12-02.')
  assert.equal(rec.transcript.messages.length, hist.length)
  assert.ok(rec.transcript.messages.every((r) => r.role !== 'system'))
  // and a compaction returns the current system row in front of the compacted rows
  const small = compactionMiddleware({ contextWindow: 2000, preserveRecentTurns: 1, session: memStore() })
  const long = [u('task')]
  for (let i = 0; i < 8; i++) long.push(a('x'.repeat(1500) + i), u('q' + i))
  const third = p('Today is 2026-12-03.', long)
  const r = await small.transformParams(third)
  assert.notEqual(r, third.params)
  assert.deepEqual(r.prompt[0], { role: 'system', content: 'Today is 2026-12-03.' })
  assert.ok(r.prompt.length < third.params.prompt.length)
})

// ------------------------------------------------------- finding 9 (JS side)

test('j2_ai_sdk_session_mode_errors_name_the_history_index', async () => {
  const h = [u('task')]
  for (let i = 0; i < 8; i++) h.push(a('x'.repeat(1500) + i), u('q' + i))
  const store = memStore()
  const o = { contextWindow: 2000, preserveRecentTurns: 2, session: store }
  assert.ok((await prepareStepCompaction(o)({ messages: h, steps: [], stepNumber: 0 })).messages)
  const bad = [...h, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'ghost', toolName: 'x', output: { type: 'text', value: 'r' } }] }]
  const e = await rejection(prepareStepCompaction(o)({ messages: bad, steps: [], stepNumber: 1 }))
  assert.equal(e.code, 'unpaired_tool_result')
  assert.equal(e.historyIndex, bad.length - 1)
  assert.match(e.message, new RegExp(`message ${bad.length - 1} of the history`))
})

test('j2_pin_and_trust_provenance_before_init_throw_not_initialized', async () => {
  for (const entry of ['context-compactor/web', '../../js/lite.mjs']) {
    const m = await import(entry)
    for (const [name, call] of [['pin', () => m.pin(null, 'm1')], ['trustProvenance', () => m.trustProvenance(null, [])]]) {
      const e = thrown(call)
      assert.equal(e.code, 'not_initialized', `${entry} ${name}: ${e.message}`)
      assert.ok(e.message.startsWith(`${name}()`))
    }
  }
})

test('m4_memory_store_enumerate_refuses_a_bad_page_size_with_invalid_config', () => {
  const sm = sqliteMemory(new Database(':memory:'), { MemoryIndex })
  for (const pageSize of [0, -1, 1.5, 1001, '10', NaN]) {
    const e = thrown(() => sm.enumerate({ session: 's', pageToken: null, pageSize }))
    assert.equal(e.code, 'invalid_config', String(pageSize))
    assert.match(e.message, /pageSize must be an integer in 1\.\.1000/)
  }
  assert.deepEqual(sm.enumerate({ session: 's', pageToken: null, pageSize: 1 }), { records: [], next: null })
  assert.deepEqual(sm.enumerate({ session: 's', pageToken: null }), { records: [], next: null })
})

test('m2_recall_from_store_checks_ranking_and_clamps_limit_as_memory_index', async () => {
  const rows = [u('Task: start the server. You must use port 8080.')]
  for (let i = 0; i < 8; i++) rows.push({ role: 'assistant', content: `step ${i}: the server listens on port ${9000 + i}. ` + 'w'.repeat(600) }, u('next ' + i))
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const memory = new MemoryIndex()
  const sm = sqliteMemory(new Database(':memory:'), { MemoryIndex })
  await c.compact(null, rows, { force: true, memory, sessionId: 's' })
  await c.compact(null, rows, { force: true, store: sm, sessionId: 's' })
  const e1 = thrown(() => memory.recall('s', 'port', { ranking: 'bogus' }))
  const e2 = await rejection(recallFromStore(sm, 's', 'port', { ranking: 'bogus' }))
  assert.equal(e2.code, e1.code)
  assert.match(e2.message, /ranking must be "fused", "lexical" or "vector"/)
  // a valid ranking reaches the store's search
  let asked
  await recallFromStore({ search: (req) => { asked = req; return [] } }, 's', 'port', { ranking: 'lexical' })
  assert.equal(asked.ranking, 'lexical')
  // limit: rounded down and clamped to 1..20 on both paths (documented)
  for (const limit of [0, -1, 2.5, 21]) {
    const a1 = memory.recall('s', 'port', { limit })
    const a2 = await recallFromStore(sm, 's', 'port', { limit })
    assert.equal(a2.limit, a1.limit, `limit ${limit}`)
    assert.equal(a1.limit, Math.min(20, Math.max(1, Math.floor(limit))))
  }
})

test('j2_free_twice_is_invalid_state_naming_free', () => {
  const c = new ContextCompactor({ format: 'openai-chat' })
  c.free()
  const e = thrown(() => c.free())
  assert.equal(e.code, 'invalid_state')
  assert.match(e.message, /^ContextCompactor\.free: free\(\) was already called/)
  assert.ok(!e.message.includes('__destroy_into_raw'))
  const m = new MemoryIndex()
  m.free()
  assert.equal(thrown(() => m.free()).code, 'invalid_state')
})

// ------------------------------------------------------- finding 11 (abort during onEvent)

test('i6_an_abort_during_a_hung_on_event_commits_nothing_and_names_on_event', async () => {
  const rows = [u('Task.')]
  for (let i = 0; i < 8; i++) rows.push({ role: 'assistant', content: 'a'.repeat(2000) }, u('q' + i))
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const hang = (e) => (e.type === 'compaction_started' ? new Promise(() => {}) : undefined)
  // no summarize hook: every event is delivered at the end; the result must not come back
  const ac = new AbortController()
  setTimeout(() => ac.abort(new Error('user pressed stop')), 50)
  const e = await rejection(c.compact(null, rows, { force: true, signal: ac.signal, onEvent: hang }))
  assert.equal(e.code, 'aborted')
  assert.match(e.message, /onEvent/)
  assert.match(e.message, /compaction_started/)
  assert.equal(e.cause.message, 'user pressed stop')
  assert.ok(e.state, 'the rejection carries the state given')
  // with a summarize hook: the abort is blamed on onEvent and summarize is never called
  let summarized = 0
  const ac2 = new AbortController()
  setTimeout(() => ac2.abort(), 50)
  const e2 = await rejection(c.compact(null, rows, { force: true, signal: ac2.signal, summarize: () => { summarized++; return 'S' }, onEvent: hang }))
  assert.equal(e2.code, 'aborted')
  assert.match(e2.message, /onEvent/)
  assert.doesNotMatch(e2.message, /summarize/)
  assert.equal(summarized, 0)
  // through a Session: nothing is saved
  let saved = 0
  const rec = { transcript: rows, state: null, revision: 1 }
  const s = new Session(c, { load: () => rec, save: () => { saved++; return { ok: true } } })
  const ac3 = new AbortController()
  setTimeout(() => ac3.abort(), 50)
  const e3 = await rejection(s.compact({ force: true, signal: ac3.signal, summarize: () => 'S', onEvent: hang }))
  assert.equal(e3.code, 'aborted')
  assert.equal(saved, 0)
  // a live transcript commits (settles) before the last events: the abort only stops the wait
  const live = c.open(rows)
  const ac4 = new AbortController()
  setTimeout(() => ac4.abort(), 50)
  const lr = await live.compact(null, { force: true, signal: ac4.signal, onEvent: hang })
  assert.equal(lr.status, 'compacted')
  const w = lr.events.filter((ev) => ev.type === 'warning' && ev.data.code === 'on_event_failed').map((ev) => ev.data.message).join(' ')
  assert.match(w, /committed before it fired/)
  assert.doesNotMatch(w, /nothing was committed/)
  // an onEvent that merely hangs with a timeout stays a warning (issue 14), not a rejection
  const out = await c.compact(null, rows, { force: true, timeouts: { onEvent: 30 }, onEvent: hang })
  assert.equal(out.status, 'compacted')
  assert.ok(out.events.some((ev) => ev.type === 'warning' && ev.data.code === 'on_event_failed'))
})
