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

/** A mock model that calls `read` STEPS - 1 times, then answers; records every prompt. */
function loopModel(prompts) {
  return new MockLanguageModelV4({
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
    record: null, appends: 0, rewrites: 0, refused: 0,
    load() { return s.record === null ? null : JSON.parse(s.record) },
    async save(record, { expectedRevision, patch }) {
      await null
      const current = s.record === null ? 0 : JSON.parse(s.record).revision
      if (current !== expectedRevision) { s.refused++; return { ok: false, reason: 'stale_revision' } }
      s.record = JSON.stringify(record)
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
    appends: 0, rewrites: 0,
    load: () => store.load(),
    async save(record, info) {
      const r = await store.save(record, info)
      if (r?.ok !== false) {
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
  // the usage of each answer rode into the state of the next save (C-3, I-3)
  assert.ok(rec.state.cadence.anchor?.inputTokens > 0, `${label}: the observed usage is stored`)
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
  const loop6 = (prompts) => new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt)
      const n = prompts.length
      const content = n < STEPS
        ? [{ type: 'tool-call', toolCallId: `call-${n}`, toolName: 'read', input: JSON.stringify({ path: `src/file${n}.rs` }) }]
        : [{ type: 'text', text: 'all files read' }]
      return { content, finishReason: { unified: n < STEPS ? 'tool-calls' : 'stop', raw: undefined }, usage: usageV4(promptTokens(prompt)), warnings: [] }
    },
  })
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
