// context-compactor/langchain (I-2): lossless BaseMessage conversion, and the
// createAgent middleware with LangChain's fake chat model; usage_metadata read (I-3).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { tool } from '@langchain/core/tools'
import { createAgent } from 'langchain'
import { ContextCompactor } from 'context-compactor'
import { compactionMiddleware, fromLangChainMessages, toLangChainMessages } from 'context-compactor/langchain'

/** Every field a message holds (what the conversion must keep). */
function fields(m) {
  const out = { type: m.getType() }
  for (const [k, v] of Object.entries(m)) if (!k.startsWith('lc_') && v !== undefined) out[k] = v
  return out
}

function everyKind() {
  return [
    new SystemMessage({ content: 'You are careful.', id: 'sys-1', additional_kwargs: { cache: 'ephemeral' } }),
    new HumanMessage({ content: [{ type: 'text', text: 'look at this' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }], id: 'h-1', name: 'ana', response_metadata: { src: 'ui' } }),
    new AIMessage({
      content: 'reading', id: 'ai-1', name: 'agent',
      tool_calls: [{ id: 'call_1', name: 'read_file', args: { path: 'a.rs', lines: [1, 2] }, type: 'tool_call' }],
      invalid_tool_calls: [{ id: 'bad_1', name: 'oops', args: '{not json', error: 'parse', type: 'invalid_tool_call' }],
      additional_kwargs: { reasoning: { summary: 'r' } },
      response_metadata: { model_name: 'gpt-x', finish_reason: 'tool_calls' },
      usage_metadata: { input_tokens: 350, output_tokens: 240, total_tokens: 590, input_token_details: { cache_read: 100 }, output_token_details: { reasoning: 200 } },
    }),
    new ToolMessage({ content: 'fn a() {}', tool_call_id: 'call_1', name: 'read_file', id: 'tool-1', artifact: { bytes: 9, path: 'a.rs' }, status: 'success', metadata: { k: 1 }, response_metadata: { t: 2 } }),
    new ChatMessage({ content: 'a note', role: 'critic', id: 'c-1' }),
    new AIMessage({ content: [{ type: 'text', text: 'done' }], id: 'ai-2' }),
  ]
}

test('i2_from_and_to_langchain_messages_round_trip_every_field', () => {
  const original = everyKind()
  const rows = fromLangChainMessages(original)
  // rows are plain JSON (a host stores them as text)
  const back = toLangChainMessages(JSON.parse(JSON.stringify(rows)))
  assert.equal(back.length, original.length)
  for (let i = 0; i < original.length; i++) {
    assert.equal(back[i].constructor, original[i].constructor, `message ${i} class`)
    assert.deepEqual(fields(back[i]), fields(original[i]), `message ${i} fields`)
  }
  // the rows are valid OpenAI chat for the engine (calls paired with results)
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  assert.equal(c.check(null, rows).compact, false)
  assert.deepEqual(rows[2].tool_calls, [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.rs","lines":[1,2]}' } }])
  assert.equal(rows[3].tool_call_id, 'call_1')
})

test('i2_rows_kept_by_a_compaction_convert_back_unchanged_and_the_summary_keeps_its_provenance', async () => {
  const msgs = [new SystemMessage('sys')]
  for (let i = 0; i < 6; i++) {
    msgs.push(new HumanMessage({ content: `task ${i} ` + 'detail '.repeat(200), id: `h${i}` }))
    msgs.push(new AIMessage({ content: `answer ${i}`, id: `a${i}`, response_metadata: { n: i } }))
  }
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 2000, preserveRecentTurns: 2 })
  // memory records on: the folded requests past the summary budget are whole there (N-1)
  const out = await c.compact(null, fromLangChainMessages(msgs), { force: true, memoryRecords: 'result' })
  assert.equal(out.status, 'compacted')
  const back = toLangChainMessages(out.transcript)
  const last = back.at(-1)
  assert.deepEqual(fields(last), fields(msgs.at(-1)))
  const summary = back.find((m) => m.additional_kwargs?.context_compactor?.transcript_role === 'compaction_summary')
  assert.ok(summary, 'the summary row carries its provenance on the LangChain side')
  // and it comes back as the engine's stored view
  const rows = fromLangChainMessages(back)
  assert.ok(rows.some((r) => r.transcript_role === 'compaction_summary' && r.summary_level === 1))
  // the request view has none of it
  const req = toLangChainMessages(out.transcript, { view: 'request' })
  assert.ok(req.every((m) => !m.additional_kwargs?.context_compactor))
})

test('i2_create_agent_middleware_compacts_a_tool_loop_and_reads_usage_metadata', async () => {
  const WINDOW = 6000
  const STEPS = 16
  const estimate = (messages) => Math.ceil(JSON.stringify(fromLangChainMessages(messages)).length / 4)
  const model = fakeModel()
  for (let i = 1; i < STEPS; i++) {
    model.respond((messages) => new AIMessage({
      content: '', id: `ai-${i}`,
      tool_calls: [{ id: `call_${i}`, name: 'read_file', args: { path: `src/f${i}.rs` }, type: 'tool_call' }],
      usage_metadata: { input_tokens: estimate(messages), output_tokens: 10, total_tokens: estimate(messages) + 10 },
    }))
  }
  model.respond(new AIMessage({ content: 'all read', id: 'ai-last' }))
  const readFile = tool(async ({ path }) => `// ${path}\n` + 'let x = compute(1, 2, 3);\n'.repeat(220), {
    name: 'read_file', description: 'read a file',
    schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  })
  const events = []
  const middleware = compactionMiddleware({ contextWindow: WINDOW, preserveRecentTurns: 2, preserveRecentBytes: 6000, outputReserveTokens: 256, tools: [readFile], onEvent: (e) => events.push(e) })
  const agent = createAgent({ model, tools: [readFile], middleware: [middleware] })
  const result = await agent.invoke({ messages: [new HumanMessage({ content: 'read every file of the crate', id: 'req' })] }, { recursionLimit: 100 })
  assert.equal(result.messages.at(-1).content, 'all read')
  const calls = model.calls
  assert.equal(calls.length, STEPS)
  const worst = Math.max(...calls.map((c) => estimate(c.messages)))
  assert.ok(worst < WINDOW, `every model call under the window (worst ${worst} tokens)`)
  const { compactions, state } = middleware.stats()
  assert.ok(compactions.length >= 3, `at least 3 compactions, got ${compactions.length}`)
  for (const [k, c] of compactions.entries()) assert.ok(c.after < c.before * 0.7, `compaction ${k + 1} shrinks the history (${c.before} -> ${c.after})`)
  // every answer's usage_metadata was observed: each is a boundary of the cadence (C-3, C-4, I-3)
  assert.ok(state.cadence.boundary >= STEPS - 2, `boundary ${state.cadence.boundary}`)
  assert.ok(!events.some((e) => e.data?.code === 'usage_unreadable'))
  // the model never saw the provenance (request view)
  for (const c of calls) assert.ok(c.messages.every((m) => !m.additional_kwargs?.context_compactor))
  // the user's request survives every compaction
  assert.ok(JSON.stringify(calls.at(-1).messages.map((m) => m.content)).includes('read every file'))
  // without the middleware the same loop goes over the window (the test can fail)
  const bare = fakeModel()
  for (let i = 1; i < STEPS; i++) bare.respondWithTools([{ name: 'read_file', args: { path: `f${i}` }, id: `b${i}` }])
  bare.respond(new AIMessage('x'))
  await createAgent({ model: bare, tools: [readFile] }).invoke({ messages: [new HumanMessage('read every file of the crate')] }, { recursionLimit: 100 })
  assert.ok(Math.max(...bare.calls.map((c) => estimate(c.messages))) > WINDOW)
})

test('n1_i2_langchain_text_file_blocks_are_read_as_the_users_text_and_come_back_as_given', async () => {
  // adversarial finding (session 5): LangChain v1 standard `file` / `text-plain` blocks
  // (and the older `source_type: "text"` / base64 text/plain data blocks) were a document
  // placeholder or dropped, so an attached text file folded away unquoted
  const spec = 'Spec from the customer: the export runs nightly. You must keep the CSV header order. DOCSECRET42 is the batch name.'
  const b64 = Buffer.from(spec).toString('base64')
  const blocks = [
    { type: 'file', mimeType: 'text/plain', data: b64, metadata: { filename: 'spec.txt' } },
    { type: 'text-plain', text: spec, mimeType: 'text/plain', title: 'spec' },
    { type: 'text-plain', data: b64, mimeType: 'text/plain' },
    { type: 'text-plain', base64: b64, mime_type: 'text/plain' },
    { type: 'file', url: `data:text/markdown;base64,${b64}` },
    { type: 'file', source_type: 'text', text: spec },
    { type: 'file', source_type: 'base64', mime_type: 'text/plain', data: b64 },
  ]
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000, preserveRecentTurns: 2 })
  for (const block of blocks) {
    const msgs = [new SystemMessage('sys'), new HumanMessage({ content: 'First task: build the exporter.', id: 'h0' })]
    msgs.push(new HumanMessage({ content: [{ type: 'text', text: 'Here is the spec.' }, block], id: 'h-spec' }))
    for (let i = 0; i < 8; i++) {
      msgs.push(new AIMessage({ content: `step ${i} ` + 'detail '.repeat(200), id: `a${i}` }))
      msgs.push(new HumanMessage({ content: `next ${i}`, id: `h${i + 1}` }))
    }
    const rows = fromLangChainMessages(msgs)
    // the round trip gives the block back as given
    assert.deepEqual(toLangChainMessages(JSON.parse(JSON.stringify(rows)))[2].content, [{ type: 'text', text: 'Here is the spec.' }, block])
    const out = await c.compact(null, rows, { force: true, memoryRecords: 'result' })
    assert.equal(out.status, 'compacted', out.reason)
    const summary = out.transcript.find((r) => r.transcript_role === 'compaction_summary')
    assert.ok(out.transcript.every((r) => r.lc?.id !== 'h-spec'), `${JSON.stringify(block)}: the attachment's row is folded`)
    assert.ok(JSON.stringify(summary.content).includes('You must keep the CSV header order.'), `${JSON.stringify(block)}: the constraint is quoted verbatim`)
    assert.ok(out.memory.records.some((r) => r.content.includes('DOCSECRET42')), `${JSON.stringify(block)}: whole in memory`)
    // rows the compaction kept come back as the messages they were
    const back = toLangChainMessages(out.transcript)
    assert.deepEqual(fields(back.at(-1)), fields(msgs.at(-1)))
  }
  // LangChain.js also takes `data` as a Uint8Array (JSON writes it as an object of bytes)
  const msgs = [new HumanMessage('First task: build the exporter.')]
  msgs.push(new HumanMessage({ content: [{ type: 'text-plain', mimeType: 'text/plain', data: new TextEncoder().encode(spec) }], id: 'h-bytes' }))
  for (let i = 0; i < 8; i++) msgs.push(new AIMessage(`step ${i} ` + 'detail '.repeat(200)), new HumanMessage(`next ${i}`))
  const out = await c.compact(null, fromLangChainMessages(msgs), { force: true, memoryRecords: 'result' })
  assert.ok(out.memory.records.some((r) => r.content.includes('DOCSECRET42')), 'a Uint8Array text file is read as text')
})

test('j2_i2_from_langchain_messages_gives_a_typed_error_naming_the_message_for_fields_json_cannot_hold', async () => {
  // adversarial finding (session 5): 5000-deep or circular fields threw a codeless
  // RangeError / TypeError (or an engine error naming no message)
  const nest = (n) => { let v = 1; for (let k = 0; k < n; k++) v = { x: v }; return v }
  const circ = { a: 1 }
  circ.self = circ
  const cases = [
    [new AIMessage({ content: 'x', additional_kwargs: { deep: nest(5000) } }), /additional_kwargs\.deep\.x.*nested past 127 levels/],
    [{ type: 'ai', content: 'x', additional_kwargs: nest(5000) }, /nested past 127 levels/],
    [new AIMessage({ content: 'x', additional_kwargs: { circ } }), /additional_kwargs\.circ\.self refers back to an object that contains it \(a circular reference\)/],
    [{ type: 'ai', content: '', tool_calls: [{ id: 'c', name: 'f', args: circ }] }, /tool_calls\[0\]\.args\.self refers back/],
    [{ type: 'ai', content: '', tool_calls: [{ id: 'c', name: 'f', args: nest(5000) }] }, /tool_calls\[0\]\.args\.x.*nested past/],
    [new HumanMessage({ content: [{ type: 'text', text: 'hi', extra: nest(5000) }] }), /content\[0\]\.extra\.x.*nested past/],
    [{ type: 'human', content: 'hi', response_metadata: { n: 10n } }, /response_metadata\.n is a BigInt/],
  ]
  for (const [m, says] of cases) {
    const e = (() => { try { fromLangChainMessages([new HumanMessage('first'), m]); return null } catch (err) { return err } })()
    assert.ok(e, `${says}: throws`)
    assert.equal(e.name, 'ContextCompactorError', e.message)
    assert.equal(e.code, 'invalid_transcript', e.message)
    assert.match(e.message, /^fromLangChainMessages: message 1 /)
    assert.match(e.message, says)
  }
  // the bound is the engine's: a row of 127 levels is read, one of 128 refused by both
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 100_000 })
  const at = (n) => ({ type: 'ai', content: 'x', additional_kwargs: nest(n) }) // row 1, lc 2, additional_kwargs 3..
  const rows = fromLangChainMessages([new HumanMessage('first'), at(125)])
  assert.equal(c.check(null, rows).compact, false)
  assert.throws(() => fromLangChainMessages([new HumanMessage('first'), at(126)]), (e) => e.code === 'invalid_transcript' && /message 1/.test(e.message))
  const row128 = { ...rows[1], lc: { ...rows[1].lc, additional_kwargs: { x: rows[1].lc.additional_kwargs } } }
  assert.throws(() => c.check(null, [rows[0], row128]), (e) => e.code === 'invalid_transcript' && /message 1/.test(e.message))
  // shared (not circular) values are fine
  const shared = { k: 1 }
  assert.equal(fromLangChainMessages([new AIMessage({ content: 'x', additional_kwargs: { a: shared, b: shared } })]).length, 1)
  // the middleware gives the same typed error
  const mw = compactionMiddleware({ contextWindow: 4000 })
  await assert.rejects(mw.beforeModel({ messages: [new HumanMessage('hi'), new AIMessage({ content: 'x', additional_kwargs: { circ } })] }, {}), (e) => e.code === 'invalid_transcript' && /message 1/.test(e.message))
})

test('m4_break3_5_one_middleware_keeps_engine_state_and_memory_scope_per_langgraph_thread', async () => {
  const mw = compactionMiddleware({ contextWindow: 2000 })
  const before = mw.beforeModel?.hook ?? mw.beforeModel
  const threads = { A: [], B: [] }
  const turn = async (t, i) => {
    threads[t].push(new HumanMessage({ content: `${t}${i}: secret of thread ${t} number ${i}. ` + 'detail '.repeat(40), id: `${t}h${i}` }))
    const r = await before({ messages: threads[t] }, { configurable: { thread_id: t } })
    if (r?.messages) threads[t] = r.messages.slice(1)
    threads[t].push(new AIMessage({ content: `reply ${t}${i} ` + 'words '.repeat(40), id: `${t}a${i}` }))
  }
  for (let i = 1; i <= 8; i++) await turn('A', i)
  for (let i = 1; i <= 8; i++) await turn('B', i)
  const a = mw.stats('A'), b = mw.stats('B')
  assert.ok(a.state && b.state, 'each thread has its own state')
  assert.notEqual(a.state, b.state)
  assert.deepEqual(a.threads, ['A', 'B'])
  assert.ok(a.compactions.some((c) => c.thread === 'A') && a.compactions.some((c) => c.thread === 'B'))
  assert.equal(mw.stats().state, null, 'no thread-less state')
  const fromA = mw.memory.recall('A', 'secret of thread B', { limit: 20 }).hits
  assert.ok(fromA.length > 0 && fromA.every((h) => !h.content.includes('thread B')), 'thread A recalls none of B')
  assert.ok(mw.memory.recall('B', 'secret of thread B', { limit: 5 }).hits.some((h) => h.content.includes('thread B')))
  assert.equal(mw.memory.recall('default', 'secret', { limit: 5 }).hits.length, 0, 'nothing in the shared default scope')
})

test('m4_break5_12_a_thread_named_default_does_not_share_the_thread_less_memory_scope', async () => {
  const mw = compactionMiddleware({ contextWindow: 2000 })
  const before = mw.beforeModel?.hook ?? mw.beforeModel
  const convs = { t: [], none: [] }
  const turn = async (k, i, runtime) => {
    convs[k].push(new HumanMessage({ content: `${k}${i}: account ${k === 't' ? 'TTT-' : 'NNN-'}${i} of conversation ${k}. ` + 'detail '.repeat(40), id: `${k}h${i}` }))
    const r = await before({ messages: convs[k] }, runtime)
    if (r?.messages) convs[k] = r.messages.slice(1)
    convs[k].push(new AIMessage({ content: `reply ${k}${i} ` + 'words '.repeat(40), id: `${k}a${i}` }))
  }
  for (let i = 1; i <= 8; i++) await turn('t', i, { configurable: { thread_id: 'default' } })
  for (let i = 1; i <= 8; i++) await turn('none', i, {})
  const shared = mw.memory.recall('default', 'account', { limit: 50 }).hits
  assert.ok(shared.length > 0 && shared.every((h) => !h.content.includes('TTT-')), 'the thread-less scope holds none of thread "default"')
  assert.ok(mw.memory.recall('thread:default', 'account', { limit: 50 }).hits.some((h) => h.content.includes('TTT-')))
})
