// context-compactor/ai-sdk (I-1) with the AI SDK's own mock models (ai/test) in
// multi-step tool loops; usage read from the SDK (I-3).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateText, streamText, tool, jsonSchema, stepCountIs, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test'
import { compactionMiddleware, prepareStepCompaction } from 'context-compactor/ai-sdk'

const WINDOW = 8000 // tokens
const STEPS = 30
const BODY = 6000 // bytes of each tool result
const opts = { contextWindow: WINDOW, preserveRecentTurns: 2, preserveRecentBytes: 8000, outputReserveTokens: 256 }

const promptBytes = (prompt) => JSON.stringify(prompt).length
// the engine's estimate: 4 bytes a token (C-7)
const promptTokens = (prompt) => Math.ceil(promptBytes(prompt) / 4)

function usageV4(input) {
  return { inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 12, text: 12, reasoning: 0 } }
}

/** A mock model that calls `read` STEPS - 1 times, then answers; records every prompt.
 *  `Mock`: the ai package's mock model class (ai 7: MockLanguageModelV4). */
function loopModel(prompts, Mock = MockLanguageModelV4) {
  return new Mock({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt)
      const n = prompts.length
      const content = n < STEPS
        ? [{ type: 'tool-call', toolCallId: `call-${n}`, toolName: 'read', input: JSON.stringify({ path: `src/file${n}.rs` }) }]
        : [{ type: 'text', text: 'all files read' }]
      return { content, finishReason: { unified: n < STEPS ? 'tool-calls' : 'stop', raw: undefined }, usage: usageV4(promptTokens(prompt)), warnings: [] }
    },
  })
}

const tools = {
  read: tool({
    description: 'read a file',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => `contents of ${path}\n` + `fn item() { /* ${path} */ }\n`.repeat(Math.ceil(BODY / 30)).slice(0, BODY),
  }),
}

function assertLoop(prompts, view, label, t) {
  assert.equal(prompts.length, STEPS, `${label}: ${STEPS} steps ran`)
  const worst = Math.max(...prompts.map(promptTokens))
  const kb = (b) => (b / 1000).toFixed(1)
  t?.diagnostic(`${label}: worst prompt ${worst} tokens of ${WINDOW}; ${view.compactions.length} compactions: ${view.compactions.map((c) => `${kb(c.before)}->${kb(c.after)} KB`).join(', ')}`)
  assert.ok(worst < WINDOW, `${label}: every prompt under the window (worst ${worst} tokens of ${WINDOW})`)
  const c = view.compactions
  assert.ok(c.length >= 10, `${label}: at least 10 compactions in ${STEPS} steps, got ${c.length}`)
  for (const k of [1, 2, 9]) {
    assert.ok(c[k].after < c[k].before, `${label}: compaction ${k + 1} shrinks the prompt (${c[k].before} -> ${c[k].after} bytes)`)
    assert.ok(c[k].after < c[k].before * 0.7, `${label}: compaction ${k + 1} shrinks it by more than 30%`)
  }
  // the user's request is still in the last prompt
  assert.ok(JSON.stringify(prompts.at(-1)).includes('read every file'), `${label}: the request survives`)
}

test('i1_prepare_step_compaction_keeps_a_30_step_tool_loop_under_the_window_and_compacts_again', async (t) => {
  const prompts = []
  const prepareStep = prepareStepCompaction({ ...opts, tools, system: 'You are a careful agent.' })
  const r = await generateText({
    model: loopModel(prompts), system: 'You are a careful agent.', prompt: 'read every file of the crate', tools,
    stopWhen: stepCountIs(STEPS), prepareStep,
  })
  assert.equal(r.text, 'all files read')
  assertLoop(prompts, prepareStep.view, 'prepareStep', t)
  // without the integration the same loop goes over the window
  const bare = []
  await generateText({ model: loopModel(bare), system: 'x', prompt: 'read every file of the crate', tools, stopWhen: stepCountIs(STEPS) })
  assert.ok(Math.max(...bare.map(promptTokens)) > WINDOW, 'the bare loop exceeds the window (the test can fail)')
})

test('i1_middleware_compacts_the_prompt_in_a_30_step_loop_and_reads_provider_usage', async (t) => {
  const prompts = []
  const events = []
  const middleware = compactionMiddleware({ ...opts, onEvent: (e) => events.push(e) })
  const model = wrapLanguageModel({ model: loopModel(prompts), middleware })
  await generateText({ model, system: 'You are a careful agent.', prompt: 'read every file of the crate', tools, stopWhen: stepCountIs(STEPS) })
  assertLoop(prompts, middleware.view, 'middleware', t)
  // the system row reaches the model untouched, first
  assert.deepEqual(prompts.at(-1)[0], { role: 'system', content: 'You are a careful agent.' })
  // every answer's provider-level usage was read: the anchor is set (C-3, I-3)
  assert.ok(middleware.view.state.cadence.anchor?.inputTokens > 0)
  assert.ok(!events.some((e) => e.data?.code === 'usage_unreadable'))
  assert.ok(events.some((e) => e.type === 'compaction_completed'))
})

test('i1_middleware_passes_the_prompt_through_unchanged_under_the_threshold', async () => {
  const seen = []
  const middleware = compactionMiddleware({ contextWindow: 100_000 })
  const inner = new MockLanguageModelV4({ doGenerate: async (o) => { seen.push(o); return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: undefined }, usage: usageV4(10), warnings: [] } } })
  const params = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi', providerOptions: { x: { y: 1 } } }] }] }
  const out = await middleware.transformParams({ type: 'generate', params, model: inner })
  assert.equal(out, params, 'the same params object')
  assert.equal(out.prompt, params.prompt)
})

test('i1_streamText_with_middleware_reads_the_finish_usage', async () => {
  const middleware = compactionMiddleware({ contextWindow: 100_000 })
  const inner = new MockLanguageModelV4({
    doStream: async () => ({
      stream: convertArrayToReadableStream([
        { type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'hello' }, { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usageV4(4321) },
      ]),
    }),
  })
  const r = streamText({ model: wrapLanguageModel({ model: inner, middleware }), prompt: 'say hello' })
  assert.equal(await r.text, 'hello')
  assert.equal(middleware.view.state.cadence.anchor.inputTokens, 4321)
})

test('i1_prepare_step_returns_nothing_when_no_compaction_is_due', async () => {
  const prepareStep = prepareStepCompaction({ contextWindow: 100_000 })
  const messages = [{ role: 'user', content: 'hello' }]
  assert.deepEqual(await prepareStep({ steps: [], stepNumber: 0, messages }), {})
})

/** An in-memory session store with compare-and-swap (W-5); counts saves by kind. */
function memoryStore() {
  const s = {
    record: null, appends: 0, rewrites: 0, refused: 0, anchored: 0,
    load() { return s.record === null ? null : JSON.parse(s.record) },
    async save(record, { expectedRevision, patch }) {
      await null
      const current = s.record === null ? 0 : JSON.parse(s.record).revision
      if (current !== expectedRevision) { s.refused++; return { ok: false, reason: 'stale_revision' } }
      s.record = JSON.stringify(record)
      if (record.state?.cadence?.anchor?.inputTokens > 0) s.anchored++
      if (patch.length === 1 && patch[0].deleteCount === 0) s.appends++
      else if (patch.length > 0) s.rewrites++
      return { ok: true }
    },
  }
  return s
}

/** Wraps a store so every save is counted the same way (append patch / rewrite). */
function counted(store) {
  const c = {
    appends: 0, rewrites: 0, anchored: 0,
    load: () => store.load(),
    async save(record, info) {
      const r = await store.save(record, info)
      if (r?.ok !== false) {
        if (record.state?.cadence?.anchor?.inputTokens > 0) c.anchored++
        if (info.patch.length === 1 && info.patch[0].deleteCount === 0) c.appends++
        else if (info.patch.length > 0) c.rewrites++
      }
      return r
    },
  }
  return c
}

const rowsOf = (t) => (Array.isArray(t) ? t : t.messages)

function assertStoredSession(rec, store, view, label) {
  const rows = rowsOf(rec.transcript)
  const summaries = rows.filter((m) => m.transcript_role === 'compaction_summary')
  assert.equal(summaries.length, 1, `${label}: the stored view keeps one summary row with its provenance`)
  assert.ok(rec.state.summaries?.length >= 1, `${label}: the state vouches for it (issue 14 trust boundary)`)
  assert.ok(rows.filter((m) => m !== summaries[0]).every((m) => /^ai-sdk:\d+$/.test(m.message_id)), `${label}: every appended row carries its host row number`)
  // every row went in through Session.append (one append patch per step) and every
  // compaction through Session.compact (a rewrite patch)
  assert.ok(store.appends >= STEPS, `${label}: ${store.appends} appends for ${STEPS} steps`)
  assert.equal(store.rewrites, view.compactions.length, `${label}: one saved rewrite per compaction`)
  assert.equal(rec.revision, rec.state.revision)
  // the usage of each answer rode into the state of the next save (C-3, I-3); a save
  // that compacts consumes it, so the last record may hold none when the last step compacted
  assert.ok(store.anchored >= STEPS / 2, `${label}: the observed usage is stored (${store.anchored} saves carried it)`)
}

test('i1_w5_prepare_step_over_a_session_store_keeps_a_30_step_loop_under_the_window_and_compacts_again', async (t) => {
  const store = memoryStore()
  const prompts = []
  const prepareStep = prepareStepCompaction({ ...opts, tools, system: 'You are a careful agent.', session: store })
  const r = await generateText({
    model: loopModel(prompts), system: 'You are a careful agent.', prompt: 'read every file of the crate', tools,
    stopWhen: stepCountIs(STEPS), prepareStep,
  })
  assert.equal(r.text, 'all files read')
  assertLoop(prompts, prepareStep.view, 'prepareStep over a session store', t)
  const rec = JSON.parse(store.record)
  assertStoredSession(rec, store, prepareStep.view, 'prepareStep')
  assert.equal(rec.transcript.system, 'You are a careful agent.', 'the system prompt is counted in the stored document')
  assert.equal(store.refused, 0)
  // the provider never sees a provenance key
  for (const p of prompts) assert.ok(!/"(message_id|summary_level|transcript_role)"/.test(JSON.stringify(p)))
})

test('i1_w5_middleware_over_sqlite_store_keeps_a_30_step_loop_under_the_window_and_compacts_again', async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const { sqliteStore } = await import('context-compactor/stores')
  const db = new Database(':memory:')
  try {
    const store = counted(sqliteStore(db, 'chat-1'))
    const prompts = []
    const middleware = compactionMiddleware({ ...opts, session: store })
    const model = wrapLanguageModel({ model: loopModel(prompts), middleware })
    await generateText({ model, system: 'You are a careful agent.', prompt: 'read every file of the crate', tools, stopWhen: stepCountIs(STEPS) })
    assertLoop(prompts, middleware.view, 'middleware over sqliteStore', t)
    assert.deepEqual(prompts.at(-1)[0], { role: 'system', content: 'You are a careful agent.' })
    assertStoredSession(await store.load(), store, middleware.view, 'middleware')
    // the Session the integration writes through is the engine's own, for request() / recordFinding()
    const request = await middleware.view.session.request()
    assert.ok(JSON.stringify(request).includes('read every file'))
  } finally {
    db.close()
  }
})

test('i1_w5_a_new_instance_over_the_same_store_appends_only_the_new_rows', async () => {
  const store = memoryStore()
  const prompts = []
  const p1 = prepareStepCompaction({ ...opts, tools, session: store })
  const r = await generateText({ model: loopModel(prompts), prompt: 'read every file of the crate', tools, stopWhen: stepCountIs(STEPS), prepareStep: p1 })
  const held = rowsOf(JSON.parse(store.record).transcript)
  assert.ok(held.some((m) => m.transcript_role === 'compaction_summary'))
  // the next request of the conversation (another process): the SDK's whole history, uncompacted
  const history = [{ role: 'user', content: 'read every file of the crate' }, ...r.steps.flatMap((s) => s.response.messages), { role: 'user', content: 'and now the tests' }]
  const p2 = prepareStepCompaction({ ...opts, tools, session: store })
  const out = await p2({ steps: [], stepNumber: 0, messages: history })
  let rows = rowsOf(JSON.parse(store.record).transcript)
  const once = (rows, content) => rows.filter((m) => m.content === content).length === 1
  assert.ok(once(rows, 'and now the tests'), 'the new row appended once')
  assert.deepEqual({ ...rows.at(-1) }, { role: 'user', content: 'and now the tests', message_id: `ai-sdk:${history.length - 1}` })
  const calls = JSON.stringify(rows).match(/"toolCallId":"call-\d+"/g)
  assert.equal(new Set(calls).size * 2, calls.length, 'no row of the history written twice (each call id in one call and one result)')
  assert.ok(out.messages, 'the compacted rows are sent, not the whole history')
  assert.ok(promptBytes(out.messages) < promptBytes(history) / 3)
  assert.equal(out.messages.at(-1), history.at(-1), 'the new row is the SDK\'s own object')
  // the host fed back what it was sent (the request view): again only the new row is appended
  const carried = [...out.messages, { role: 'assistant', content: 'the tests pass' }]
  const p3 = prepareStepCompaction({ ...opts, tools, session: store })
  await p3({ steps: [], stepNumber: 0, messages: carried })
  rows = rowsOf(JSON.parse(store.record).transcript)
  assert.ok(once(rows, 'and now the tests') && once(rows, 'the tests pass'))
  assert.equal(rows.at(-1).content, 'the tests pass')
  // a finding (Y-10) rendered into what is sent, fed back: still only the new row is appended
  await p3.view.session.recordFinding('the test server listens on port 8080')
  const sent = await p3({ steps: [], stepNumber: 0, messages: carried })
  assert.ok(JSON.stringify(sent.messages).includes('port 8080'), 'the findings ledger is in the request')
  await p3({ steps: [], stepNumber: 0, messages: [...sent.messages, { role: 'user', content: 'ship it' }] })
  rows = rowsOf(JSON.parse(store.record).transcript)
  assert.ok(once(rows, 'the tests pass') && once(rows, 'ship it'), 'no row written twice')
  assert.ok(!rows.some((m) => JSON.stringify(m.content).includes('port 8080')), 'the finding stays in the state, not in the rows')
  // a Session itself is not a store: the error says what to pass
  const { Session, ContextCompactor } = await import('context-compactor')
  assert.throws(() => prepareStepCompaction({ session: new Session(new ContextCompactor({ format: 'ai-sdk' }), store) }), (e) => e.code === 'invalid_config' && /pass the store/.test(e.message))
  // another conversation's history is refused, nothing written
  const before = store.record
  await assert.rejects(p3({ steps: [], stepNumber: 0, messages: [{ role: 'user', content: 'something else' }, { role: 'assistant', content: 'ok' }] }), (e) => e.code === 'invalid_transcript')
  assert.equal(store.record, before)
})

test('i1_w5_two_writers_on_one_session_lose_no_row', async () => {
  // a second writer (another tab / request) appends between this step's append and its compaction
  const store = memoryStore()
  const { Session, ContextCompactor } = await import('context-compactor')
  const other = new Session(new ContextCompactor({ format: 'ai-sdk' }), store)
  let raced = 0
  // the other writer appends while the compaction's summary is being written (between
  // Session.compact's load and its save)
  const summarize = async (req) => {
    if (raced++ === 0) await other.append({ role: 'user', content: 'a note from the other tab' })
    return `SUMMARY of ${req.messages.length} messages`
  }
  const prepareStep = prepareStepCompaction({ ...opts, tools, session: store, summarize })
  const messages = [{ role: 'user', content: 'read every file of the crate' }]
  for (let i = 1; i <= 12; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'read', input: { path: `f${i}` } }] })
    messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'read', output: { type: 'text', value: 'x'.repeat(6000) } }] })
  }
  const r = await prepareStep({ steps: [], stepNumber: 1, messages })
  assert.ok(raced >= 2, 'summarized twice: the refused compaction was run again')
  assert.equal(store.refused, 1, 'the stale compaction save was refused')
  const rows = rowsOf(JSON.parse(store.record).transcript)
  assert.ok(rows.some((m) => m.content === 'a note from the other tab'), 'the other writer\'s row survives')
  assert.ok(r.messages && rows.some((m) => m.transcript_role === 'compaction_summary'), 'the compaction was checked again on the fresh record and committed')
})

// ai 6.x (installed as the alias `ai6`): the same helpers, MockLanguageModelV3, the same loop.
test('i1_ai_sdk_6x_prepare_step_and_middleware_keep_the_loop_under_the_window', async (t) => {
  const ai6 = await import('ai6')
  const { MockLanguageModelV3 } = await import('ai6/test')
  const loop6 = (prompts) => loopModel(prompts, MockLanguageModelV3)
  const tools6 = { read: ai6.tool({ description: 'read a file', inputSchema: ai6.jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }), execute: tools.read.execute }) }
  const a = []
  const prepareStep = prepareStepCompaction({ ...opts, tools: tools6 })
  const r = await ai6.generateText({ model: loop6(a), prompt: 'read every file of the crate', tools: tools6, stopWhen: ai6.stepCountIs(STEPS), prepareStep })
  assert.equal(r.text, 'all files read')
  assertLoop(a, prepareStep.view, 'ai 6 prepareStep', t)
  const b = []
  const middleware = compactionMiddleware(opts)
  await ai6.generateText({ model: ai6.wrapLanguageModel({ model: loop6(b), middleware }), prompt: 'read every file of the crate', tools: tools6, stopWhen: ai6.stepCountIs(STEPS) })
  assertLoop(b, middleware.view, 'ai 6 middleware', t)
  assert.ok(middleware.view.state.cadence.boundary >= STEPS - 1, 'every answer observed')
  // over a session store, as with ai 7
  const c = []
  const store = memoryStore()
  const overSession = prepareStepCompaction({ ...opts, tools: tools6, session: store })
  await ai6.generateText({ model: loop6(c), prompt: 'read every file of the crate', tools: tools6, stopWhen: ai6.stepCountIs(STEPS), prepareStep: overSession })
  assertLoop(c, overSession.view, 'ai 6 prepareStep over a session store', t)
  assertStoredSession(JSON.parse(store.record), store, overSession.view, 'ai 6')
})

test('i1_tools_and_system_prompt_are_counted_zod_schemas_included', async () => {
  const { z } = await import('zod')
  const zodTools = { read: tool({ description: 'read a file from the repository', inputSchema: z.object({ path: z.string().describe('the path to read') }) }) }
  const messages = [{ role: 'user', content: 'hello' }]
  const forecast = (view) => view.lastDecision.signals.find((s) => s.name === 'forecast_request_tokens').value
  const bare = prepareStepCompaction({ contextWindow: 100_000 })
  await bare({ steps: [], stepNumber: 0, messages })
  const withTools = prepareStepCompaction({ contextWindow: 100_000, tools: zodTools, system: 'You are a careful agent. '.repeat(40) })
  await withTools({ steps: [], stepNumber: 0, messages })
  // the system prompt (~1,000 bytes) and the tool's JSON schema are both in the forecast
  assert.ok(forecast(withTools.view) > forecast(bare.view) + 250, `${forecast(withTools.view)} vs ${forecast(bare.view)}`)
  const withJson = prepareStepCompaction({ contextWindow: 100_000, tools: zodTools })
  await withJson({ steps: [], stepNumber: 0, messages })
  assert.ok(forecast(withJson.view) > forecast(bare.view), 'the zod schema became JSON Schema and was counted')
})

test('i1_rows_a_compaction_keeps_are_the_sdks_own_objects', async () => {
  const messages = [{ role: 'user', content: [{ type: 'text', text: 'read every file of the crate', providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }] }]
  for (let i = 1; i <= 12; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'read', input: { path: `f${i}` } }] })
    messages.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'read', output: { type: 'text', value: 'x'.repeat(6000) } }] })
  }
  const prepareStep = prepareStepCompaction(opts)
  const r = await prepareStep({ steps: [], stepNumber: 1, messages })
  assert.ok(r.messages, 'compacted')
  assert.ok(r.messages.length < messages.length)
  const kept = r.messages.filter((m) => messages.includes(m))
  assert.ok(kept.length >= 2, 'the newest round is passed on as the same objects')
  assert.equal(r.messages.at(-1), messages.at(-1))
  // and no provenance key reaches the model
  for (const m of r.messages) for (const k of ['summary_level', 'transcript_role', 'message_id', 'artifact_ref']) assert.ok(!(k in m), k)
})

// ---------------------------------------------------------------------------------
// issue 16 (adversarial findings): the session mode maps the history onto the store
// exactly, never by equal text alone; appends are idempotent on message_id; an
// over-window request with nothing to fold is reported; misuse gets typed errors.

/** A compare-and-swap store whose saves take `delay` ms (so two helpers interleave). */
function slowStore(delay) {
  const s = {
    record: null,
    load() { return s.record === null ? null : JSON.parse(s.record) },
    async save(record, { expectedRevision }) {
      await new Promise((r) => setTimeout(r, delay))
      const current = s.record === null ? 0 : JSON.parse(s.record).revision
      if (current !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      s.record = JSON.stringify(record)
      return { ok: true }
    },
  }
  return s
}
const uRow = (t) => ({ role: 'user', content: t })
const aRow = (t) => ({ role: 'assistant', content: [{ type: 'text', text: t }] })
const storedOf = (s) => rowsOf(JSON.parse(s.record).transcript)
const step = (messages) => ({ messages, steps: [], stepNumber: 0 })

test('i1_w5_an_edited_earlier_row_rejects_with_invalid_transcript_and_the_store_keeps_its_rows', async () => {
  const store = slowStore(0)
  const o = { contextWindow: 100_000, session: store }
  await prepareStepCompaction(o)(step([uRow('hi'), aRow('hello'), uRow('what is 2+2'), aRow('5')]))
  const before = store.record
  // the host corrected the answer, then asked on
  const edited = [uRow('hi'), aRow('hello'), uRow('what is 2+2'), aRow('4 (corrected)'), uRow('thanks')]
  await assert.rejects(prepareStepCompaction(o)(step(edited)), (e) => e.code === 'invalid_transcript' && /stored row 3 \(ai-sdk:3\)/.test(e.message) && /edited or regenerated/.test(e.message))
  // a regenerated answer (the old one dropped) is a divergence too
  await assert.rejects(prepareStepCompaction(o)(step([uRow('hi'), aRow('hello'), uRow('what is 2+2')])), (e) => e.code === 'invalid_transcript')
  // an edited user row
  await assert.rejects(prepareStepCompaction(o)(step([uRow('hi'), aRow('hello'), uRow('what is 3+3'), aRow('5'), uRow('ok')])), (e) => e.code === 'invalid_transcript')
  assert.equal(store.record, before, 'nothing was written for a diverging history')
  // the history that does continue the store appends its new row
  const r = await prepareStepCompaction(o)(step([uRow('hi'), aRow('hello'), uRow('what is 2+2'), aRow('5'), uRow('thanks')]))
  assert.deepEqual(r, {})
  assert.deepEqual(storedOf(store).map((m) => m.message_id), ['ai-sdk:0', 'ai-sdk:1', 'ai-sdk:2', 'ai-sdk:3', 'ai-sdk:4'])
})

test('i1_y10_a_repeated_short_text_with_the_findings_ledger_appends_every_new_row', async () => {
  const store = slowStore(0)
  // a summary that quotes every folded user text (N-1)
  const quoted = (c) => (typeof c === 'string' ? c : c.filter((p) => p.type === 'text').map((p) => p.text).join('\n'))
  const summarize = async (req) => `SUMMARY\n${req.messages.filter((m) => m.role === 'user').map((m) => quoted(m.content)).join('\n')}`
  const o = { contextWindow: 3000, preserveRecentTurns: 1, preserveRecentBytes: 600, outputReserveTokens: 100, session: store, summarize }
  const big = (i) => `turn ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(40)
  const own = []
  // the bulk is in the answers: folded user text is kept whole in the summary (N-1)
  for (let i = 0; i < 12; i++) own.push(uRow(`question ${i}`), aRow(big(i)))
  own.push(uRow('continue')) // row 24
  const first = prepareStepCompaction(o)
  const r = await first(step(own))
  assert.ok(r.messages, 'the first call compacted')
  await first.view.session.recordFinding('The build uses cargo 1.80.')
  const sent = (await prepareStepCompaction(o)(step(r.messages))).messages
  assert.ok(sent[0].content[0].text.startsWith('Findings recorded'), 'the request view carries the ledger')
  // the host feeds back what it was sent, then 24 rows that repeat "ok" / "continue" (one of them at index 24)
  const fresh = []
  while (sent.length + fresh.length < 27) fresh.push(fresh.length % 2 ? uRow('continue') : aRow('ok'))
  fresh[1] = uRow('IMPORTANT: use staging not prod')
  fresh.push(uRow('LAST'))
  const h2 = [...sent, ...fresh]
  assert.deepEqual(h2[24], uRow('continue'))
  const before = storedOf(store).length
  await prepareStepCompaction({ ...o, contextWindow: 100_000 })(step(h2))
  const after = storedOf(store)
  assert.equal(after.length - before, fresh.length, 'every new row was appended')
  assert.deepEqual(after.slice(before).map((m) => m.content), fresh.map((m) => m.content))
  // the host's own rows (not the request view) with the same repeats: the new rows start at 25
  const store2 = slowStore(0)
  const o2 = { ...o, session: store2 }
  const r2 = await prepareStepCompaction(o2)(step(own))
  assert.ok(r2.messages)
  const more = [aRow('ok'), uRow('continue'), aRow('ok'), uRow('IMPORTANT 2'), aRow('ok'), uRow('continue')]
  const b2 = storedOf(store2).length
  await prepareStepCompaction({ ...o2, contextWindow: 100_000 })(step([...own, ...more]))
  const st2 = storedOf(store2)
  assert.deepEqual(st2.slice(b2).map((m) => [m.message_id, m.content]), more.map((m, i) => [`ai-sdk:${25 + i}`, m.content]))
})

test('i1_k1_a_cleared_tool_result_in_the_store_still_matches_the_hosts_own_row', async () => {
  const store = slowStore(0)
  const o = { contextWindow: 6000, preserveRecentTurns: 1, session: store, clearToolUses: {}, summarize: async () => 'SUMMARY' }
  const call = (i) => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c' + i, toolName: 'read', input: { i } }] })
  const res = (i) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c' + i, toolName: 'read', output: { type: 'text', value: ('result ' + i + ' ').repeat(300) } }] })
  const h = [uRow('task: read files')]
  for (let i = 0; i < 6; i++) h.push(call(i), res(i))
  h.push(aRow('done'), uRow('next'))
  await prepareStepCompaction(o)(step(h))
  assert.match(JSON.stringify(storedOf(store)[2]), /cleared by context editing/, 'the store holds a cleared result')
  const n = storedOf(store).length
  await prepareStepCompaction({ ...o, contextWindow: 100_000 })(step([...h, aRow('reading on')]))
  assert.deepEqual(storedOf(store).slice(n).map((m) => [m.message_id, m.content[0].text]), [['ai-sdk:15', 'reading on']])
})

test('i1_w5_two_helpers_racing_on_one_history_write_each_row_once', async () => {
  const store = slowStore(5)
  const o = { contextWindow: 100_000, session: store }
  const h = [uRow('hi'), aRow('hello')]
  await prepareStepCompaction(o)(step(h))
  const h2 = [...h, uRow('q2'), aRow('a2')]
  await Promise.all([prepareStepCompaction(o)(step(h2)), prepareStepCompaction(o)(step(h2))])
  assert.deepEqual(storedOf(store).map((m) => m.message_id), ['ai-sdk:0', 'ai-sdk:1', 'ai-sdk:2', 'ai-sdk:3'])
  // a tool exchange and a longer history at once: the shared rows once, the extra row after them
  const call = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'x', input: {} }] }
  const res = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'x', output: { type: 'text', value: 'r' } }] }
  const h3 = [...h2, call, res]
  await Promise.all([prepareStepCompaction(o)(step(h3)), prepareStepCompaction(o)(step([...h3, aRow('done')]))])
  assert.deepEqual(storedOf(store).map((m) => m.message_id), ['ai-sdk:0', 'ai-sdk:1', 'ai-sdk:2', 'ai-sdk:3', 'ai-sdk:4', 'ai-sdk:5', 'ai-sdk:6'])
  await prepareStepCompaction(o)(step([...h3, aRow('done'), uRow('next')]))
  assert.equal(storedOf(store).length, 8)
  // two different rows under one id: the later append is refused, typed
  const { Session, ContextCompactor } = await import('context-compactor')
  const s = new Session(new ContextCompactor({ format: 'ai-sdk' }), store)
  assert.deepEqual((await s.append({ ...uRow('next'), message_id: 'ai-sdk:7' })).rows, 0, 'a repeat writes nothing')
  await assert.rejects(s.append({ ...uRow('other'), message_id: 'ai-sdk:7' }), (e) => e.code === 'invalid_transcript' && /message_id "ai-sdk:7"/.test(e.message))
  assert.equal(storedOf(store).length, 8)
})

test('i1_c8_over_the_window_with_nothing_to_fold_warns_cannot_fit_with_figures', async () => {
  for (const session of [undefined, slowStore(0)]) {
    const events = []
    const ps = prepareStepCompaction({ contextWindow: 2000, session, onEvent: (e) => events.push(e) })
    const r = await ps(step([uRow('task'), aRow('ok'), uRow('x'.repeat(20000))]))
    assert.deepEqual(r, {}, 'the prompt goes out as it is')
    const w = events.filter((e) => e.type === 'warning' && e.data.code === 'cannot_fit')
    assert.equal(w.length, 1, `${session ? 'session' : 'instance'}: one cannot_fit warning`)
    assert.equal(w[0].data.contextWindow, 2000)
    assert.ok(w[0].data.forecastTokens > 5000 && w[0].data.floor.totalTokens > w[0].data.floor.budgetTokens)
    assert.match(w[0].data.message, /over budget and nothing can be folded/)
  }
})

test('i1_typed_errors_for_a_lite_compactor_over_a_session_a_non_compactor_and_freed_objects', async () => {
  const lite = await import('context-compactor/lite')
  const m = await import('context-compactor')
  const compactor = new lite.ContextCompactor({ format: 'ai-sdk', contextWindow: 8000 })
  assert.throws(() => prepareStepCompaction({ compactor, session: slowStore(0) }), (e) => e.code === 'invalid_config' && /from 'context-compactor'/.test(e.message) && /another build/.test(e.message))
  const store = { load() {}, save() {} }
  assert.throws(() => new m.Session({}, store), (e) => e.code === 'invalid_config' && /must be a ContextCompactor/.test(e.message))
  assert.throws(() => new m.Session(compactor, store), (e) => e.code === 'invalid_config' && /another build/.test(e.message))
  assert.throws(() => new lite.Session(new m.ContextCompactor({ format: 'ai-sdk' }), store), (e) => e.code === 'invalid_config')
  assert.ok(new lite.Session(compactor, store) instanceof lite.Session, 'a lite compactor takes the lite Session')
  assert.ok(new m.Session(new m.ContextCompactor({ format: 'ai-sdk' }), store) instanceof m.Session)
  assert.throws(() => new m.LiveTranscript().length, (e) => e.code === 'invalid_state' && /compactor\.open\(transcript\)/.test(e.message))
  assert.throws(() => new m.LiveTranscript().append([]), (e) => e.code === 'invalid_state')
  const freed = new m.ContextCompactor({ format: 'openai-chat' })
  freed.free()
  assert.throws(() => freed.check(null, []), (e) => e.code === 'invalid_state' && /free\(\) was called/.test(e.message))
  assert.throws(() => new m.Session(freed, store), (e) => e.code === 'invalid_state')
  const lf = new lite.ContextCompactor({ format: 'openai-chat' })
  lf.free()
  assert.throws(() => lf.check(null, []), (e) => e.code === 'invalid_state')
})

test('W-5 I-6 (break3 finding 6): the session helper\'s own save that times out says it may still have completed, and its append retry writes once', async () => {
  const store = slowStore(80)
  const o = { contextWindow: 100_000, session: store, timeouts: { save: 20 } }
  // the helper's first write of a new session is the system prompt's save
  const err = await prepareStepCompaction({ ...o, system: 'Be brief.' })({ ...step([uRow('hi')]), system: 'Be brief.' }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  assert.equal(err.mayHaveCommitted, true)
  assert.match(err.message, /the save may still have completed .*load the record/)
  assert.doesNotMatch(err.message, /nothing was committed/)
  await new Promise((r) => setTimeout(r, 120))
  // the next call (no save bound) finds what landed and appends the turn's rows once
  await prepareStepCompaction({ contextWindow: 100_000, session: store, system: 'Be brief.' })({ ...step([uRow('hi')]), system: 'Be brief.' })
  assert.equal(JSON.parse(store.record).transcript.system, 'Be brief.')
  assert.deepEqual(storedOf(store).map((m) => m.content), ['hi'])
})
