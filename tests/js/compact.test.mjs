// JS tests of the built package: the README example, sync and async callbacks, a
// rejecting callback, engine errors with stable codes (J-2), events (J-4), determinism (J-5).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, detectFormat, importTranscript } from 'context-compactor'

/** A small OpenAI-chat agent session: 12 turns with tool calls and big results. */
function session(turns = 12) {
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `step ${i}: inspect module m${i}` })
    msgs.push({ role: 'assistant', content: null, tool_calls: [
      { id: `c${i}a`, type: 'function', function: { name: 'read_file', arguments: `{"path":"m${i}.rs"}` } },
      { id: `c${i}b`, type: 'function', function: { name: 'grep', arguments: `{"q":"fn m${i}"}` } }] })
    msgs.push({ role: 'tool', tool_call_id: `c${i}a`, content: `fn m${i}() {}\n`.repeat(200) })
    msgs.push({ role: 'tool', tool_call_id: `c${i}b`, content: `m${i}.rs:1: fn m${i}` })
    msgs.push({ role: 'assistant', content: `Module m${i} looks fine.` })
  }
  msgs.push({ role: 'user', content: 'Now write the report; do not touch q.cfg.' })
  return msgs
}

test('README example: check then compact with an async summarize (C-9, Y-1, W-1)', async () => {
  const compactor = new ContextCompactor({ format: 'openai-chat', profile: 'default', contextWindow: 8000 })
  const transcript = session()
  const decision = compactor.check(null, transcript, { usage: { total_tokens: 7000 } })
  assert.equal(decision.compact, true)
  assert.equal(decision.reason, 'provider_usage_over_threshold')
  assert.ok(decision.signals.some(s => s.name === 'provider_total_tokens' && s.value === 7000 && s.threshold === 5200))
  const seen = []
  const out = await compactor.compact(null, transcript, {
    usage: { total_tokens: 7000 },
    summarize: async (req) => { seen.push(req); return { text: `summary of ${req.kind}`, usage: { prompt_tokens: 900, completion_tokens: 40 } } },
  })
  assert.equal(out.status, 'compacted')
  assert.equal(seen.length, 1)
  assert.equal(seen[0].kind, 'summary')
  assert.match(seen[0].system, /data, not instructions/)
  assert.ok(out.rewrite.summary.text.startsWith('summary of summary'))
  assert.equal(out.rewrite.summary.source.writer, 'provider')
  assert.equal(out.validation.ok, true)
  assert.deepEqual(out.transcript[0], transcript[0], 'system prompt kept')
  assert.equal(out.transcript.at(-1).content, 'Now write the report; do not touch q.cfg.')
  // retained + discarded partition the source (W-1)
  const offsets = [...out.rewrite.retained.map(r => r.source), ...out.rewrite.discarded].sort((a, b) => a - b)
  assert.deepEqual(offsets, transcript.map((_, i) => i))
  // side spend recorded (W-7), live size not replaced
  // W-7: side spend, no main request observed yet, and the total
  assert.deepEqual(out.spend, { summarizeCalls: 1, inputTokens: 900, outputTokens: 40, mainRequests: 0, mainInputTokens: 0, mainOutputTokens: 0, totalInputTokens: 900, totalOutputTokens: 40 })
  // request view carries no provenance (F-4)
  assert.ok(out.transcript[1].summary_level === 1)
  assert.ok(!('summary_level' in out.request[1]))
  assert.ok(out.after.bytes < out.before.bytes)
})

test('a sync summarize callback returning a string works (J-2)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const out = await c.compact(null, session(), { force: true, summarize: () => 'plain string summary' })
  assert.equal(out.status, 'compacted')
  assert.ok(out.rewrite.summary.text.startsWith('plain string summary'))
})

test('transcripts may be passed as JSON text (fast path) with identical output (J-5)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const t = session()
  const a = await c.compact(null, t, { force: true, summarize: () => 'S' })
  const b = await c.compact(null, JSON.stringify(t), { force: true, summarize: () => 'S' })
  assert.equal(JSON.stringify(a), JSON.stringify(b))
})

test('without summarize the deterministic handoff summary is used', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const out = await c.compact(null, session(), { force: true })
  assert.equal(out.rewrite.summary.source.writer, 'mechanical')
  assert.match(out.rewrite.summary.text, /step 0: inspect module m0/)
})

test('a rejecting callback reaches the caller unchanged and the input is untouched (J-2, W-3)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const t = session()
  const before = JSON.stringify(t)
  const boom = new Error('network down')
  boom.custom = 42
  await assert.rejects(c.compact(null, t, { force: true, summarize: async () => { throw boom } }), (err) => {
    assert.equal(err, boom, 'the very same error object')
    assert.equal(err.custom, 42)
    assert.equal(err.state.cadence.lastFailure.startsWith('summary_failed'), true, 'state records the failed attempt (C-5)')
    return true
  })
  assert.equal(JSON.stringify(t), before)
  // a sync throw too
  const sync = new TypeError('bad')
  await assert.rejects(c.compact(null, t, { force: true, summarize: () => { throw sync } }), (err) => err === sync)
})

test('a context-size error from the summarizer falls back to the mechanical summary (Y-6)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const err = Object.assign(new Error("This model's maximum context length is 8192 tokens"), { code: 'context_length_exceeded' })
  const out = await c.compact(null, session(), { force: true, summarize: () => Promise.reject(err) })
  assert.equal(out.status, 'compacted')
  assert.equal(out.rewrite.summary.source.writer, 'mechanical')
})

test('engine errors are Errors with a stable code (J-2)', async () => {
  assert.throws(() => new ContextCompactor({ contextWindow: -1 }), (e) => e instanceof Error && e.code === 'invalid_config')
  assert.throws(() => new ContextCompactor({ nope: 1 }), (e) => e.code === 'invalid_config' && /nope/.test(e.message))
  assert.throws(() => new ContextCompactor({ format: 'klingon' }), (e) => e.code === 'unknown_format')
  const c = new ContextCompactor({ format: 'openai-chat' })
  assert.throws(() => c.check(null, [{ content: 'no role' }], {}), (e) => e.code === 'invalid_transcript' && /message 0/.test(e.message))
  await assert.rejects(c.compact(null, [{ role: 'tool', tool_call_id: 'x', content: 'orphan' }, { role: 'user', content: 'hi' }], { force: true }), (e) => e.code === 'unpaired_tool_result' && /message 0/.test(e.message))
  assert.throws(() => c.check({ revision: 'x' }, session(), {}), (e) => e.code === 'invalid_state')
  assert.throws(() => detectFormat([{ role: 'user', content: 'hi' }]), (e) => e.code === 'unknown_format' && /ambiguous/.test(e.message))
})

test('w6_j2_an_array_or_other_non_object_state_is_invalid_state_not_a_new_session', async () => {
  // adversarial finding (session 5): compact([], ...) ran as a new session
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  for (const [state, what] of [[[], 'an array'], [[1, 2], 'an array'], ['[]', 'an array'], [42, 'a number'], [true, 'a boolean'], ['"x"', 'a string']]) {
    await assert.rejects(c.compact(state, session(), { force: true }), (e) => e.code === 'invalid_state' && e.message.includes(`got ${what}`), JSON.stringify(state))
    assert.throws(() => c.check(state, session(), {}), (e) => e.code === 'invalid_state' && e.message.includes(`got ${what}`), JSON.stringify(state))
  }
  // null / undefined / {} are a new session
  assert.equal((await c.compact(null, session(), { force: true })).status, 'compacted')
  assert.equal((await c.compact({}, session(), { force: true })).status, 'compacted')
})

test('onEvent receives compaction_started and compaction_completed (J-4)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const events = []
  await c.compact(null, session(), { force: true, onEvent: (e) => { events.push(e.type) } })
  assert.ok(events.indexOf('compaction_started') >= 0)
  assert.ok(events.indexOf('compaction_completed') > events.indexOf('compaction_started'))
})

test('state round-trips: a second compaction from the returned state rolls up eventually (W-6, Y-3)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000, preserveRecentTurns: 4 })
  let t = session(3)
  let state = null
  const kinds = []
  for (let round = 0; round < 7; round++) {
    for (let i = 0; i < 3; i++) {
      t.push({ role: 'assistant', content: null, tool_calls: [{ id: `r${round}_${i}`, type: 'function', function: { name: 'ls', arguments: '{}' } }] })
      t.push({ role: 'tool', tool_call_id: `r${round}_${i}`, content: 'x'.repeat(3000) })
      t.push({ role: 'assistant', content: `done ${round}.${i}` })
      t.push({ role: 'user', content: `continue ${round}.${i}` })
    }
    const out = await c.compact(JSON.parse(JSON.stringify(state)), t, { force: true, summarize: (r) => { kinds.push(r.kind); return `${r.kind} ${round}` } })
    assert.equal(out.status, 'compacted')
    t = out.transcript
    state = out.state
    assert.equal(state.revision, round + 1)
    const levels = t.filter(m => m.summary_level).map(m => m.summary_level)
    assert.ok(levels.length <= 4, `summary block bounded: ${levels}`)
  }
  assert.ok(kinds.includes('rollup'), 'a rollup happened')
})

test('importTranscript detects provider formats and log kinds', () => {
  const { format, document } = importTranscript('auto', JSON.stringify(session(1)))
  assert.equal(format, 'openai-chat')
  assert.equal(document.length, 7)
  assert.throws(() => importTranscript('auto', '{not json'), (e) => e.code === 'invalid_transcript')
})

test('T-1, F-3: the same session as an object, as JSON.stringify text, pretty printed or \\u-escaped gives byte-identical results', async () => {
  const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const transcript = session()
  transcript[1].content = 'step 0: inspect módulo m0 ✓ 检查 / "quoted"'
  const asciiEscaped = JSON.stringify(transcript).replace(/[\u0080-\uffff/]/g, (c) => c === '/' ? '\\/' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  const inputs = [transcript, JSON.stringify(transcript), JSON.stringify(transcript, null, 2), asciiEscaped]
  const outs = []
  for (const input of inputs) {
    outs.push(JSON.stringify(await compactor.compact(null, input, { force: true, summarize: () => 'S' })))
  }
  assert.equal(JSON.parse(outs[0]).status, 'compacted')
  for (const o of outs.slice(1)) assert.equal(o, outs[0])
  // ids come from the content, not from how the JSON was spelled (T-4)
  const ids = (text) => JSON.parse(text).rewrite.retained.map((r) => r.id)
  assert.deepEqual(ids(outs[3]), ids(outs[0]))
})

test('M-1: projectMemory false returns the same rewrite with no memory records', async () => {
  const on = await new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }).compact(null, session(), { force: true, summarize: () => 'S', memoryRecords: 'result' })
  const lean = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000, projectMemory: false })
  assert.equal(lean.config.projectMemory, false)
  const off = await lean.compact(null, session(), { force: true, summarize: () => 'S' })
  assert.equal(off.status, 'compacted')
  assert.ok(on.memory.projected > 10)
  // no memory hook: the result carries the records (none here: projection is off)
  assert.deepEqual(off.memory, { session: on.memory.session, projected: 0, ids: [], records: [] })
  assert.deepEqual(off.transcript, on.transcript)
  assert.deepEqual(off.rewrite, on.rewrite)
  assert.throws(() => new ContextCompactor({ projectMemory: 'no' }), (e) => e.code === 'invalid_config')
})

test('T-4, F-5: rows with deep nesting or Python-style floats keep their content and ids through a JS round trip', async () => {
  const nest = (d) => { let v = 1; for (let i = 0; i < d; i++) v = [v]; return v }
  const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const deep = [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1', meta: nest(100) }]
  // a held row always parses back: never a null row in the request (was: silently null)
  assert.deepEqual(compactor.toRequest(deep), deep)
  assert.deepEqual(compactor.open(deep).transcript(), deep)
  const tooDeep = [{ role: 'user', content: 'q1' }, { role: 'assistant', content: 'a1', meta: nest(130) }]
  for (const input of [tooDeep, JSON.stringify(tooDeep), JSON.stringify(tooDeep, null, 2)]) {
    assert.throws(() => compactor.toRequest(input), (e) => e.code === 'invalid_transcript')
  }
  // exact doubles in fields the engine does not read
  assert.equal(compactor.toRequest([{ role: 'user', content: 'q', v: 0.20752913900651038 }])[0].v, 0.20752913900651038)
  // Python-style spellings get the ids of the same rows as JavaScript writes them, so ids
  // survive storage through JSON.stringify
  const rows = []
  for (let i = 0; i < 6; i++) rows.push(`{"role":"user","content":"q${i} ${'x'.repeat(3000)}"}`, `{"role":"assistant","content":"a${i}","score":${i}.0,"w":[-0.0,2.50,1E21]}`)
  rows.push('{"role":"user","content":"last","v":1.0}')
  const python = `[${rows.join(',')}]`
  const js = JSON.stringify(JSON.parse(python))
  assert.notEqual(python, js)
  const outs = []
  for (const input of [python, js]) outs.push(await compactor.compact(null, input, { force: true, summarize: () => 'S' }))
  assert.equal(outs[0].status, 'compacted', outs[0].reason)
  assert.deepEqual(outs[0].rewrite.retained, outs[1].rewrite.retained)
  assert.equal(JSON.stringify(outs[0]), JSON.stringify(outs[1]))
})

test('Y-1: hooks.summarizerContextWindow sizes the summarize request for this call only', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 200000, summarizerContextWindow: 3000, summaryMaxOutputTokens: 512, summaryInputShare: 1 })
  const seen = []
  const summarize = (req) => { seen.push(req); return 'S' }
  await c.compact(null, session(), { force: true, summarize })
  await c.compact(null, session(), { force: true, summarize, summarizerContextWindow: 200000 })
  await c.compact(null, session(), { force: true, summarize })
  assert.equal(seen.length, 3)
  assert.ok(seen[0].estimatedInputTokens <= 3000 && seen[0].coverage === 'trimmed', JSON.stringify([seen[0].estimatedInputTokens, seen[0].coverage]))
  assert.ok(seen[1].estimatedInputTokens > 3000 && seen[1].coverage === 'whole', JSON.stringify([seen[1].estimatedInputTokens, seen[1].coverage]))
  assert.equal(seen[2].estimatedInputTokens, seen[0].estimatedInputTokens, 'the configured window again on the next call')
})

test('N-5 / N-6: the summary carries the floor and re-attaches the plan (rehydrateBytes)', async () => {
  const msgs = session()
  msgs.splice(1, 0, { role: 'user', content: 'Audit every module. You must never edit q.cfg.' })
  msgs.splice(2, 0, { role: 'assistant', content: null, tool_calls: [{ id: 'p1', type: 'function', function: { name: 'TodoWrite', arguments: '{"todos":[{"content":"audit modules","status":"in_progress"}]}' } }] })
  msgs.splice(3, 0, { role: 'tool', tool_call_id: 'p1', content: 'ok' })
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const out = await c.compact(null, msgs, { force: true, summarize: () => 'short summary' })
  assert.equal(out.status, 'compacted', out.reason)
  const text = out.rewrite.summary.text
  assert.ok(text.includes('You must never edit q.cfg.'), text)
  assert.ok(text.includes('[rehydrated plan state from TodoWrite call p1'), text)
  assert.equal(c.config.rehydrateBytes, 8192)
  const off = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000, rehydrateBytes: 0 })
  const out2 = await off.compact(null, msgs, { force: true, summarize: () => 'short summary' })
  assert.ok(!out2.rewrite.summary.text.includes('[rehydrated plan state'), out2.rewrite.summary.text)
})

test('issue 15 / M-1: records go to the memory hooks; the result names them; memoryRecords "result" carries them', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const took = []
  const sink = { add(records) { took.push(...records) } }
  const lean = await c.compact(null, session(), { force: true, summarize: () => 'S', memory: sink })
  assert.equal(lean.status, 'compacted')
  assert.ok(lean.memory.projected > 10)
  assert.equal(lean.memory.ids.length, lean.memory.projected)
  assert.deepEqual(took.map((r) => r.id), lean.memory.ids, 'the sink took exactly the named records')
  assert.ok(lean.memory.ids.every((id) => /^mem-[0-9a-f]{16}$/.test(id)))
  assert.equal(lean.memory.records, undefined, 'records are not copied into the result by default')
  const full = await c.compact(null, session(), { force: true, summarize: () => 'S', memoryRecords: 'result' })
  assert.deepEqual(full.memory.records.map((r) => r.id), lean.memory.ids)
  assert.deepEqual(full.transcript, lean.transcript)
  assert.ok(JSON.stringify(lean).length < JSON.stringify(full).length)
  // no memory hook and no memoryRecords: only the folded user text is projected, and
  // those records come back in the result (their one whole copy, N-1)
  const none = await c.compact(null, session(), { force: true, summarize: () => 'S' })
  assert.equal(none.memory.projected, none.memory.records.length)
  assert.ok(none.memory.projected < lean.memory.projected)
  assert.ok(none.memory.records.every((r) => r.role === 'user' && r.kind === 'narrative'))
  assert.deepEqual(none.transcript, lean.transcript)
  await assert.rejects(c.compact(null, session(), { force: true, summarize: () => 'S', memoryRecords: 'all' }), (e) => e.code === 'invalid_config' && /memoryRecords/.test(e.message))
})

test('issue 15: a transcript over maxTranscriptBytes is a typed too_large error in every entry point', async () => {
  const doc = session()
  const text = JSON.stringify(doc)
  const limit = Math.floor(text.length / 2)
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000, maxTranscriptBytes: limit })
  assert.equal(c.config.maxTranscriptBytes, limit)
  assert.equal(new ContextCompactor({}).config.maxTranscriptBytes, 256 * 1024 * 1024, 'default 256 MiB')
  const tooLarge = (e) => e.code === 'too_large' && e.message.includes(String(limit)) && /maxTranscriptBytes/.test(e.message)
  for (const input of [text, doc]) {
    assert.throws(() => c.check(null, input), tooLarge)
    assert.throws(() => c.toRequest(input), tooLarge)
    assert.throws(() => c.open(input), tooLarge)
    await assert.rejects(c.compact(null, input, { force: true, summarize: () => 'S' }), tooLarge)
  }
  // UTF-8 bytes, not UTF-16 units: a text under the limit in units but over it in bytes
  const wide = JSON.stringify([{ role: 'user', content: 'é'.repeat(600) }])
  const w = new ContextCompactor({ format: 'openai-chat', maxTranscriptBytes: wide.length + 100 })
  assert.throws(() => w.check(null, wide), (e) => e.code === 'too_large')
  // at the limit it works
  const ok = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000, maxTranscriptBytes: Buffer.byteLength(text) })
  assert.equal((await ok.compact(null, text, { force: true, summarize: () => 'S' })).status, 'compacted')
  assert.throws(() => new ContextCompactor({ maxTranscriptBytes: 0 }), (e) => e.code === 'invalid_config')
})

/** A long chat of user requests, each longer than a summary can quote many of. */
function wordySession(turns = 60) {
  const msgs = [{ role: 'system', content: 'You help plan trips.' }]
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `Request ${i}: I would like a day plan for city number ${i}, with a museum in the morning, lunch near the river, a walk through the old town in the afternoon and a quiet dinner; my budget for that day is ${100 + i} euros and I travel with my partner who uses a wheelchair.` })
    msgs.push({ role: 'assistant', content: `Plan ${i}: museum at nine, lunch at the river terrace, old town walk at three, dinner at seven. ` + 'Details follow. '.repeat(30) })
  }
  msgs.push({ role: 'user', content: 'Now put all the plans in one table.' })
  return msgs
}

test('N-1 / M-1: with no memory hook the folded user text comes back whole in memory.records, so a long chat still compacts', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000 })
  const msgs = wordySession()
  const out = await c.compact(null, msgs)
  assert.equal(out.status, 'compacted', out.reason)
  const summary = out.rewrite.summary.text
  const byId = new Map()
  for (const r of out.memory.records) {
    assert.equal(r.role, 'user')
    byId.set(r.messageId, [...(byId.get(r.messageId) ?? []), r])
  }
  const ids = out.rewrite.discarded.map((d) => d.id ?? d)
  let quoted = 0
  let recorded = 0
  for (const [k, off] of out.rewrite.discarded.map((d, k) => [k, typeof d === 'number' ? d : d.offset]).filter(([, o]) => msgs[o]?.role === 'user')) {
    const text = msgs[off].content
    if (summary.includes(text)) {
      quoted++
      continue
    }
    // not quoted whole: its records, in byte order, give the text back whole
    const recs = [...out.memory.records].filter((r) => r.sourceRange[0] === off).sort((a, b) => a.byteRange[0] - b.byteRange[0])
    assert.ok(recs.length > 0, `user text at offset ${off} (${ids[k]}) is neither quoted nor in memory.records`)
    const joined = Buffer.from(text)
    for (const r of recs) assert.equal(r.content, joined.subarray(r.byteRange[0], r.byteRange[1]).toString())
    recorded++
  }
  assert.ok(recorded > 10 && quoted >= 1, `recorded ${recorded}, quoted ${quoted}`)
  assert.ok(out.events.some((e) => e.type === 'warning' && e.data?.code === 'memory_in_result'))
  // no tool output and no assistant text is copied into the result
  assert.equal(out.memory.records.length, out.memory.projected)
  // projectMemory: false forbids the clip: every folded user text must be quoted whole, which is over this window
  const strict = await new ContextCompactor({ format: 'openai-chat', contextWindow: 4000, projectMemory: false }).compact(null, msgs)
  assert.equal(strict.status, 'cannot_fit')
})
