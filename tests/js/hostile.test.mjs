// Hostile input at every export (J-2): wrong types, extreme sizes, malformed transcripts
// of every format, misbehaving hooks, extreme options, and a seeded fuzz loop.
// Each call must either succeed with a sensible result or throw an `Error` whose `code`
// is one of the documented codes; and afterwards the SAME module instance must still
// compact a known transcript to the same bytes (a Rust panic in wasm is a trap,
// `RuntimeError: unreachable`, that can poison the instance).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ContextCompactor, MemoryIndex, Session, detectFormat, importTranscript, recallToolDefinition, recordFinding, version,
} from 'context-compactor'

const here = dirname(fileURLToPath(import.meta.url))
const FORMATS = ['openai-chat', 'anthropic', 'gemini', 'openai-responses', 'ai-sdk', 'canonical']
const fixture = Object.fromEntries(FORMATS.map(f => [f, JSON.parse(readFileSync(join(here, '..', 'fixtures', 'formats', `${f}.json`), 'utf8'))]))

/** The documented error codes (js/index.d.ts `ErrorCode`). */
const CODES = new Set(['invalid_transcript', 'unpaired_tool_result', 'unanswered_tool_call', 'duplicate_tool_call_id',
  'invalid_config', 'invalid_state', 'invalid_rewrite', 'summary_failed', 'protocol_error', 'stale_revision',
  'unknown_format', 'memory_failed', 'save_failed', 'too_large'])

/** A small OpenAI-chat agent session with big tool results. */
function session(turns = 8) {
  const msgs = [{ role: 'system', content: 'You are a coding agent.' }]
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `step ${i}: inspect module m${i}` })
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read_file', arguments: `{"path":"m${i}.rs"}` } }] })
    msgs.push({ role: 'tool', tool_call_id: `c${i}`, content: `fn m${i}() {}\n`.repeat(150) })
    msgs.push({ role: 'assistant', content: `Module m${i} looks fine.` })
  }
  msgs.push({ role: 'user', content: 'Now write the report.' })
  return msgs
}

const good = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
const goodInput = session()
const expected = JSON.stringify(await good.compact(null, goodInput, { force: true }))

/** The instance still works: the known compaction gives the same bytes. */
async function healthy(label) {
  let got
  try {
    got = JSON.stringify(await good.compact(null, goodInput, { force: true }))
  } catch (e) {
    assert.fail(`${label}: the module instance is broken afterwards: ${e && e.stack}`)
  }
  assert.ok(got === expected, `${label}: the known compaction changed afterwards`)
}

/** Asserts a thrown value is a typed package error. */
function typed(e, label) {
  assert.ok(e instanceof Error, `${label}: threw a non-Error ${typeof e}: ${String(e)}`)
  assert.ok(!(e instanceof WebAssembly.RuntimeError), `${label}: wasm trap: ${e.message}`)
  assert.ok(CODES.has(e.code), `${label}: untyped error (${e.name}: ${e.message}), code ${e.code}`)
  assert.ok(typeof e.message === 'string' && e.message.length > 0, `${label}: empty message`)
}

/** Runs `fn`: it returns a value (checked by `ok` if given) or throws a typed error; then
 * the instance must still be healthy. Returns `{ value }` or `{ error }`. */
async function hostile(label, fn, { ok, allow } = {}) {
  let out
  try {
    const value = await fn()
    if (ok) ok(value)
    out = { value }
  } catch (e) {
    if (e && e.code === 'ERR_ASSERTION') throw e
    if (allow && allow(e)) out = { error: e }
    else {
      typed(e, label)
      out = { error: e }
    }
  }
  await healthy(label)
  return out
}

const WRONG = [0, 1, -1, 1e308, NaN, Infinity, -Infinity, true, false, '', 'not json', '{', '[', '"str"', '123', 'null',
  [], [1, 2], {}, { messages: 5 }, Symbol.iterator.description, '\ud800', '\udfff x', () => 1, new Date(0), 10n]

test('hostile: every export survives wrong-typed arguments (J-2)', async () => {
  for (const bad of [...WRONG, undefined, null]) {
    const L = `arg ${typeof bad}:${String(bad).slice(0, 20)}`
    await hostile(`new ContextCompactor(${L})`, () => new ContextCompactor(bad))
    await hostile(`check(state=${L})`, () => good.check(bad, goodInput))
    await hostile(`check(transcript=${L})`, () => good.check(null, bad))
    await hostile(`check(signals=${L})`, () => good.check(null, goodInput, bad))
    await hostile(`compact(state=${L})`, () => good.compact(bad, goodInput))
    await hostile(`compact(transcript=${L})`, () => good.compact(null, bad))
    await hostile(`compact(hooks=${L})`, () => good.compact(null, goodInput, bad))
    await hostile(`toRequest(${L})`, () => good.toRequest(bad))
    await hostile(`toRequest(state=${L})`, () => good.toRequest(goodInput, bad))
    await hostile(`observeUsage(${L})`, () => good.observeUsage(null, goodInput, bad))
    await hostile(`observeUsage(transcript=${L})`, () => good.observeUsage(null, bad, {}))
    await hostile(`recordRefusal(${L})`, () => good.recordRefusal(bad))
    await hostile(`noteTranscriptEdit(kind=${L})`, () => good.noteTranscriptEdit(null, bad))
    await hostile(`noteTranscriptEdit(state=${L})`, () => good.noteTranscriptEdit(bad, 'edit'))
    await hostile(`boundRequest(opts=${L})`, () => good.boundRequest(null, goodInput, bad))
    await hostile(`boundRequest(transcript=${L})`, () => good.boundRequest(null, bad, {}))
    await hostile(`open(${L})`, () => good.open(bad))
    await hostile(`recordFinding(state=${L})`, () => recordFinding(bad, 'a finding'))
    await hostile(`recordFinding(text=${L})`, () => recordFinding(null, bad))
    await hostile(`detectFormat(${L})`, () => detectFormat(bad))
    await hostile(`recallToolDefinition(${L})`, () => recallToolDefinition(bad))
    for (const kind of ['auto', 'claude-code-jsonl', 'swe-agent-traj', 'tau-bench', 'glaive', ...FORMATS, 'nope']) {
      await hostile(`importTranscript(${kind}, ${L})`, () => importTranscript(kind, bad))
    }
    await hostile(`importTranscript(kind=${L})`, () => importTranscript(bad, '{}'))
    await hostile(`new Session(${L})`, () => new Session(good, bad))
    await hostile(`new MemoryIndex(${L})`, () => new MemoryIndex(bad))
    const mem = new MemoryIndex()
    await hostile(`MemoryIndex.add(${L})`, () => mem.add(bad))
    await hostile(`MemoryIndex.addWithVectors(${L})`, () => mem.addWithVectors(bad, bad))
    await hostile(`MemoryIndex.recall(${L})`, () => mem.recall(bad, bad, bad))
    await hostile(`MemoryIndex.enumerate(${L})`, () => mem.enumerate(bad, bad))
    await hostile(`MemoryIndex.size(${L})`, () => mem.size(bad))
    await hostile(`MemoryIndex.dropScope(${L})`, () => mem.dropScope(bad))
    await hostile(`MemoryIndex.resolveHandle(${L})`, () => mem.resolveHandle(bad, bad, bad))
    await hostile(`MemoryIndex.restore(${L})`, () => MemoryIndex.restore(bad))
    const host = new MemoryIndex({ dimension: 3 })
    await hostile(`host.addWithVectors(${L})`, () => host.addWithVectors([], bad))
    await hostile(`host.recall(vector=${L})`, () => host.recall('s', 'q', { vector: bad }))
    mem.free(); host.free()
  }
  assert.equal(typeof version(), 'string')
})

test('hostile: MemoryIndex.restore of garbage bytes gives memory_failed (M-3)', async () => {
  const bytes = [new Uint8Array(0), new Uint8Array([0xff, 0xfe, 0x00]), new TextEncoder().encode('{"version":1}'),
    new TextEncoder().encode('{"version":1,"dimension":0,"records":[]}'), new TextEncoder().encode('{"version":99}'),
    new TextEncoder().encode('[' .repeat(10000)), new TextEncoder().encode('{"version":1,"dimension":4294967296}')]
  // A real snapshot with every field mangled in turn.
  const m = new MemoryIndex()
  m.add([{ id: 'mem-0000000000000001', session: 's', messageId: 'm1', role: 'user', sourceRange: [0, 0], byteRange: [0, 5], kind: 'narrative', content: 'hello world' }])
  const snap = JSON.parse(new TextDecoder().decode(m.snapshot()))
  const mangle = (v, depth = 0) => {
    const out = []
    if (v && typeof v === 'object') {
      for (const k of Object.keys(v)) {
        for (const repl of [null, -1, 1e300, 'x', [], {}, 4294967297]) {
          const c = structuredClone(v); c[k] = repl; out.push(c)
        }
        if (depth < 3) for (const sub of mangle(v[k], depth + 1)) { const c = structuredClone(v); c[k] = sub; out.push(c) }
      }
    }
    return out
  }
  for (const s of mangle(snap)) bytes.push(new TextEncoder().encode(JSON.stringify(s)))
  for (const [i, b] of bytes.entries()) {
    await hostile(`restore #${i}`, () => {
      const r = MemoryIndex.restore(b)
      // whatever it restored must still answer
      r.recall('s', 'hello'); r.enumerate('s'); r.snapshot(); r.free()
    })
  }
})

test('hostile: deep nesting and lone surrogates (F-1, J-2)', async () => {
  let deep = 'x'
  for (let i = 0; i < 5000; i++) deep = [deep]
  let deepObj = {}
  for (let i = 0; i < 200; i++) deepObj = { a: deepObj }
  const deepText = '['.repeat(100000) + ']'.repeat(100000)
  for (const t of [deep, deepText, { messages: deep }, [{ role: 'user', content: deepObj }], [{ role: 'user', content: 'a', extra: deepObj }]]) {
    await hostile('check(deep)', () => good.check(null, t))
    await hostile('compact(deep)', () => good.compact(null, t, { force: true }))
    await hostile('detectFormat(deep)', () => detectFormat(t))
  }
  for (const kind of ['auto', 'claude-code-jsonl', 'swe-agent-traj', 'tau-bench', 'glaive', 'openai-chat']) {
    await hostile(`importTranscript(${kind}, deep)`, () => importTranscript(kind, deepText))
  }
  const lone = ['\ud800', 'a\udc00b', '\udbff\udbff', 'x'.repeat(1023) + '\ud83d']
  for (const s of lone) {
    const t = [{ role: 'system', content: s }, { role: 'user', content: s }, { role: 'assistant', content: s.repeat(3000) }, { role: 'user', content: s }]
    await hostile('check(lone surrogates)', () => good.check(null, t), { ok: d => assert.equal(typeof d.compact, 'boolean') })
    await hostile('compact(lone surrogates)', () => good.compact(null, t, { force: true, summarize: () => s }))
    await hostile('toRequest(lone surrogates)', () => good.toRequest(JSON.stringify(t)))
    await hostile('recordFinding(lone surrogate)', () => recordFinding(null, s))
    await hostile('importTranscript(lone)', () => importTranscript('auto', s))
    const mem = new MemoryIndex()
    await hostile('recall(lone)', () => mem.recall(s, s))
    mem.free()
  }
})

test('hostile: degenerate transcripts of every format (F-1, F-5)', async () => {
  const sys = { 'openai-chat': [{ role: 'system', content: 'sys' }, { role: 'system', content: 'sys2' }] }
  const cases = {
    empty: { 'openai-chat': [], anthropic: { messages: [] }, gemini: { contents: [] }, 'openai-responses': { input: [] }, 'ai-sdk': { messages: [] }, canonical: { messages: [] } },
    systemOnly: { 'openai-chat': sys['openai-chat'], anthropic: { system: 'sys', messages: [] }, gemini: { systemInstruction: { parts: [{ text: 'sys' }] }, contents: [] },
      'openai-responses': { instructions: 'sys', input: [{ role: 'system', content: 'sys' }] }, 'ai-sdk': { messages: [{ role: 'system', content: 'sys' }] },
      canonical: { messages: [{ role: 'system', content: [{ type: 'text', text: 'sys' }] }] } },
    toolResultsOnly: { 'openai-chat': [{ role: 'tool', tool_call_id: 'x', content: 'r' }],
      anthropic: { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] }] },
      gemini: { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: { r: 1 } } }] }] },
      'openai-responses': { input: [{ type: 'function_call_output', call_id: 'x', output: 'r' }] },
      'ai-sdk': { messages: [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'f', output: { type: 'text', value: 'r' } }] }] } },
  }
  for (const [name, byFormat] of Object.entries(cases)) {
    for (const [format, t] of Object.entries(byFormat)) {
      const c = new ContextCompactor({ format, contextWindow: 1000 })
      const L = `${name}/${format}`
      await hostile(`check ${L}`, () => c.check(null, t), { ok: d => assert.equal(typeof d.compact, 'boolean') })
      await hostile(`compact ${L}`, () => c.compact(null, t, { force: true }), { ok: r => assert.ok(['compacted', 'skipped', 'cannot_fit'].includes(r.status)) })
      await hostile(`boundRequest ${L}`, () => c.boundRequest(null, t, { maxRequestBytes: 10 }))
      await hostile(`observeUsage ${L}`, () => c.observeUsage(null, t, { usage: { prompt_tokens: 10 } }))
      await hostile(`toRequest ${L}`, () => c.toRequest(t))
      await hostile(`open ${L}`, async () => { const live = c.open(t); live.check(null); await live.compact(null, { force: true }); live.free() })
      await hostile(`detect ${L}`, () => detectFormat(t))
      c.free()
    }
  }
})

test('hostile: every field of every format missing or ill-typed (F-1)', async () => {
  const REPL = [undefined, null, 0, -1, 1e300, '', 'x', [], {}, [null], true]
  // Every path into the fixture (depth-limited), replaced by each value.
  const paths = []
  const walk = (v, path, depth) => {
    if (depth > 5 || !v || typeof v !== 'object') return
    const keys = Array.isArray(v) ? [...v.keys()].slice(0, 3) : Object.keys(v)
    for (const k of keys) { paths.push([...path, k]); walk(v[k], [...path, k], depth + 1) }
  }
  const set = (obj, path, val) => {
    const c = structuredClone(obj); let o = c
    for (const k of path.slice(0, -1)) o = o[k]
    if (val === undefined) { if (Array.isArray(o)) o.splice(path.at(-1), 1); else delete o[path.at(-1)] } else o[path.at(-1)] = val
    return c
  }
  let n = 0
  for (const format of FORMATS) {
    const c = new ContextCompactor({ format, contextWindow: 2000 })
    paths.length = 0
    walk(fixture[format], [], 0)
    for (const p of paths.filter((_, i) => i % 3 === 0)) {
      for (const val of REPL) {
        const t = set(fixture[format], p, val)
        const L = `${format} ${p.join('.')}=${JSON.stringify(val)}`
        // cheap calls: no health check each time (done every 50)
        for (const [what, fn] of [['check', () => c.check(null, t)], ['toRequest', () => c.toRequest(t)], ['bound', () => c.boundRequest(null, t, { maxRequestBytes: 500 })]]) {
          try { fn() } catch (e) { typed(e, `${what} ${L}`) }
        }
        try { await c.compact(null, t, { force: true }) } catch (e) { typed(e, `compact ${L}`) }
        if (++n % 50 === 0) await healthy(L)
      }
    }
    c.free()
  }
  await healthy('field mangling')
})

test('hostile: large transcripts: 10k messages, 5 MB messages (C-7, E-3)', async () => {
  const many = [{ role: 'system', content: 's' }]
  for (let i = 0; i < 10000; i++) many.push({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` })
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000 })
  await hostile('check 10k', () => c.check(null, many), { ok: d => assert.equal(d.compact, true) })
  // with memory records (N-1: the folded user text past the summary budget is whole there;
  // with no memory at all every one would be quoted whole, over this window: cannot_fit)
  await hostile('compact 10k', () => c.compact(null, many, { memoryRecords: 'result' }), { ok: r => { assert.equal(r.status, 'compacted'); assert.ok(r.after.messages < 100) } })
  const big = 'x'.repeat(5 * 1024 * 1024)
  const huge = [{ role: 'user', content: big }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'a', content: big }, { role: 'assistant', content: big }, { role: 'user', content: 'go' }]
  await hostile('compact 5MB', () => c.compact(null, huge, { force: true }), { ok: r => assert.ok(['compacted', 'cannot_fit'].includes(r.status)) })
  await hostile('bound 5MB', () => c.boundRequest(null, huge, { maxRequestBytes: 1000 }))
  const live = c.open([])
  await hostile('live append 5MB', () => live.append(huge))
  await hostile('live check 5MB', () => live.check(null))
  live.free()
})

test('hostile: hooks answering wrong shapes or throwing non-Errors (J-2, Y-1, E-6)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const replies = [42, {}, { text: 5 }, { text: null }, [], null, undefined, '', '   ', { text: 'ok', usage: 'x' }, { text: 'ok', usage: { prompt_tokens: -5, completion_tokens: 1e300 } },
    { text: 'ok', usage: { prompt_tokens: NaN } }, Symbol('s'), 10n, 'x'.repeat(2e6), '\ud800']
  for (const r of replies) {
    const L = `summarize -> ${typeof r}:${String(r?.toString?.() ?? r).slice(0, 20)}`
    await hostile(L, () => c.compact(null, goodInput, { force: true, summarize: () => r }))
    await hostile(`curator ${L}`, () => c.compact(null, goodInput, { force: true, curator: () => r, summarize: () => r }))
    await hostile(`storeArtifact ${L}`, () => c.compact(null, goodInput, { force: true, storeArtifact: () => r }))
    await hostile(`onEvent ${L}`, () => c.compact(null, goodInput, { force: true, onEvent: () => r }))
    await hostile(`embed ${L}`, () => c.compact(null, goodInput, { force: true, embed: () => r, embedDimension: 3, store: { put() {} } }))
    await hostile(`memory.add ${L}`, () => c.compact(null, goodInput, { force: true, memory: { add: () => r } }))
  }
  // A hook's own throw reaches the caller unchanged (J-2): any value is allowed through.
  const own = e => e === 'boom' || e === undefined || e === 7 || (e && e.own)
  for (const t of ['boom', undefined, 7, { own: true }]) {
    const thrower = () => { throw t }
    const rejecter = () => Promise.reject(t)
    for (const [name, hooks] of [['summarize', { summarize: thrower }], ['summarize async', { summarize: rejecter }], ['curator', { curator: thrower }],
      ['storeArtifact', { storeArtifact: thrower }], ['onEvent', { onEvent: thrower }], ['embed', { embed: thrower, embedDimension: 3, store: { put() {} } }],
      ['store.put', { store: { put: thrower } }], ['memory.add', { memory: { add: rejecter } }]]) {
      await hostile(`${name} throws ${String(t)}`, () => c.compact(null, goodInput, { force: true, ...hooks }), { allow: own })
    }
    const store = { load: thrower, save: thrower }
    const s = new Session(c, store)
    for (const m of ['compact', 'load', 'request']) await hostile(`Session.${m} load throws`, () => s[m](), { allow: own })
    await hostile('Session.recordFinding load throws', () => s.recordFinding('f'), { allow: own })
    s.free()
  }
  // Stores answering wrong shapes.
  for (const loaded of [42, null, 'x', {}, { transcript: 5 }, { transcript: goodInput, state: 'x' }, { transcript: goodInput, revision: -1 }, { transcript: goodInput, revision: 1e300 },
    { transcript: goodInput, revision: NaN }, { transcript: goodInput, revision: 2 ** 53 + 10 }]) {
    const s = new Session(c, { load: () => loaded, save: () => ({ ok: 'maybe' }) })
    await hostile(`Session.compact load=${JSON.stringify(loaded)?.slice(0, 30)}`, () => s.compact({ force: true }))
    await hostile('Session.load', () => s.load())
    await hostile('Session.request', () => s.request())
    await hostile('Session.recordFinding', () => s.recordFinding('f'))
    await hostile('Session.recordFinding(5)', () => s.recordFinding(5))
    s.free()
  }
  for (const saved of [42, 'x', { ok: false }, { ok: false, reason: 5 }, { ok: false, reason: 'stale_revision' }]) {
    const s = new Session(c, { load: () => ({ transcript: goodInput }), save: () => saved })
    await hostile(`Session.compact save=${JSON.stringify(saved)}`, () => s.compact({ force: true }))
    s.free()
  }
  // LiveTranscript with a throwing hook keeps its rows.
  const live = c.open(goodInput)
  await hostile('live compact throws', () => live.compact(null, { force: true, summarize: () => { throw 'no' } }), { allow: e => e === 'no' })
  assert.equal(live.length, goodInput.length)
  await hostile('live append bad', () => live.append([{ role: 5 }]))
  assert.equal(live.length, goodInput.length, 'nothing half-appended')
  await hostile('live append half bad', () => live.append([{ role: 'user', content: 'ok' }, { role: 'tool' }]))
  assert.equal(live.length, goodInput.length, 'nothing half-appended')
  live.free()
})

test('hostile: options at extreme values (C-1, S-2)', async () => {
  const extremes = [
    { contextWindow: 1 }, { contextWindow: 1, thresholdPct: 1 }, { thresholdPct: 1 }, { thresholdPct: 1e-300 }, { thresholdPct: 0 }, { thresholdPct: -1 }, { thresholdPct: NaN },
    { thresholdPct: 1.0000001 }, { contextWindow: 0 }, { contextWindow: -5 }, { contextWindow: 1.5 }, { contextWindow: Number.MAX_SAFE_INTEGER }, { contextWindow: 1e300 },
    { contextWindow: 2 ** 64 }, { preserveRecentTurns: 0 }, { preserveRecentTurns: 4294967295 }, { preserveRecentTurns: 2 ** 40 }, { preserveRecentBytes: 0 },
    { preserveRecentBytes: 4294967295 }, { evictToolResultMinBytes: 0 }, { clipHeadBytes: 0, clipTailBytes: 0 }, { clipHeadBytes: 4294967295, clipTailBytes: 4294967295 },
    { maxIndexedArtifacts: 0 }, { maxSummariesBeforeRollup: 0 }, { maxRolledUpSummaries: 0 }, { maxSummariesBeforeRollup: 0, maxRolledUpSummaries: 0 },
    { outputReserveTokens: 0 }, { outputReserveTokens: Number.MAX_SAFE_INTEGER }, { outputReserveTokens: 2 ** 64 }, { maxRequestBytes: 0 }, { maxRequestBytes: 1 },
    { maxRequestBytes: Number.MAX_SAFE_INTEGER }, { bytesPerToken: 0 }, { bytesPerToken: 1 }, { bytesPerToken: 4294967295 }, { bytesPerToken: 2 ** 64 }, { imageTokens: 0 },
    { imageTokens: Number.MAX_SAFE_INTEGER }, { bytesPerToken: 2 ** 32 }, { bytesPerToken: 2 ** 40 }, { preserveRecentBytes: 2 ** 32 }, { maxRequestBytes: 2 ** 40 }, { summaryMaxOutputTokens: 0 }, { summaryMaxOutputTokens: Number.MAX_SAFE_INTEGER }, { summarizerContextWindow: 0 },
    { summarizerContextWindow: 1 }, { summaryInputShare: 1e-300 }, { summaryInputShare: 0 }, { minBoundariesBetween: 0 }, { minBoundariesBetween: Number.MAX_SAFE_INTEGER },
    { summaryPrompt: '' }, { summaryPrompt: 5 }, { rollupPrompt: '   ' }, { profile: 'nope' }, { trigger: 'nope' }, { format: 'nope' }, { format: 5 }, { unknown: 1 },
    { contextWindow: '8000' }, { fitRecentWindow: 'yes' }, { profile: 'kerkov', contextWindow: 1 }, { profile: 'meerkat', contextWindow: 1, preserveRecentTurns: 0, preserveRecentBytes: 0 },
    { contextWindow: 1, preserveRecentTurns: 0, preserveRecentBytes: 0, evictToolResultMinBytes: 0, clipHeadBytes: 0, clipTailBytes: 0, maxIndexedArtifacts: 0, summaryMaxOutputTokens: 0, outputReserveTokens: 0, maxRequestBytes: 0, bytesPerToken: 1, summarizerContextWindow: 1 },
    { contextWindow: Number.MAX_SAFE_INTEGER, thresholdPct: 1, outputReserveTokens: Number.MAX_SAFE_INTEGER, maxRequestBytes: Number.MAX_SAFE_INTEGER, imageTokens: Number.MAX_SAFE_INTEGER, summaryMaxOutputTokens: Number.MAX_SAFE_INTEGER, summarizerContextWindow: Number.MAX_SAFE_INTEGER, minBoundariesBetween: Number.MAX_SAFE_INTEGER },
  ]
  const image = [{ role: 'system', content: 'sys' }, { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }, ...goodInput.slice(1)]
  for (const opts of extremes) {
    const L = JSON.stringify(opts)
    const r = await hostile(`new ContextCompactor(${L})`, () => new ContextCompactor({ format: 'openai-chat', ...opts }))
    if (r.error) { assert.ok(['invalid_config', 'unknown_format'].includes(r.error.code), `${L}: ${r.error.code}`); continue }
    const c = r.value
    for (const t of [goodInput, image]) {
      await hostile(`check ${L}`, () => c.check(null, t, { usage: { total_tokens: 1e300 }, toolsBytes: Number.MAX_SAFE_INTEGER, requestBytes: Number.MAX_SAFE_INTEGER }))
      await hostile(`check signals ${L}`, () => c.check(null, t, { usage: { total_tokens: -1, prompt_tokens: NaN }, toolsBytes: -1, requestBytes: 1e300, tools: [{ a: 1 }] }))
      await hostile(`compact ${L}`, () => c.compact(null, t, { force: true }), { ok: x => assert.ok(['compacted', 'skipped', 'cannot_fit'].includes(x.status), x.status) })
      await hostile(`compact summarize ${L}`, () => c.compact(null, t, { force: true, summarize: req => 'S'.repeat(Math.min(req.maxOutputTokens, 5000)) }))
      await hostile(`bound ${L}`, () => c.boundRequest(null, t, { maxRequestBytes: 1, inputBudgetTokens: 0, toolsBytes: Number.MAX_SAFE_INTEGER }))
      await hostile(`bound2 ${L}`, () => c.boundRequest(null, t, { maxRequestBytes: -1, inputBudgetTokens: 1e300, requestBytes: NaN }))
      await hostile(`observe ${L}`, () => c.observeUsage(null, t, { usage: { prompt_tokens: Number.MAX_SAFE_INTEGER, input_tokens: 1e300 }, toolsBytes: Number.MAX_SAFE_INTEGER }))
      const st = await hostile(`observe0 ${L}`, () => c.observeUsage(null, t, { usage: { prompt_tokens: 0 } }))
      if (st.value) await hostile(`check after observe0 ${L}`, () => c.check(st.value, [...t, { role: 'assistant', content: 'more' }]))
      const st2 = await hostile(`observe1 ${L}`, () => c.observeUsage(null, t, { usage: { prompt_tokens: 1 } }))
      if (st2.value) await hostile(`check after observe1 ${L}`, () => c.check(st2.value, [...t, { role: 'assistant', content: 'more' }]))
    }
    c.free()
  }
})

test('hostile: states with extreme or ill-typed fields (W-6)', async () => {
  const states = [{ revision: -1 }, { revision: 1e300 }, { revision: Number.MAX_SAFE_INTEGER }, { nextArtifact: Number.MAX_SAFE_INTEGER }, { nextArtifact: 2 ** 64 },
    { calibration: -5 }, { calibration: 1e300 }, { calibration: 1e-300 }, { cadence: 5 }, { cadence: { boundary: Number.MAX_SAFE_INTEGER } }, { cadence: { boundary: 2 ** 64 - 1 } },
    { cadence: { boundary: 0, lastAttemptBoundary: Number.MAX_SAFE_INTEGER } }, { cadence: { anchor: { inputTokens: Number.MAX_SAFE_INTEGER, rows: 4294967295, lastRowId: 'x' } } },
    { cadence: { anchor: { inputTokens: 5, rows: 99999, lastRowId: null } } }, { cadence: { lastRewriteTokens: Number.MAX_SAFE_INTEGER, refusal: true } },
    { cadence: { failedOn: { rows: 4294967295, lastRowId: 'q' } } }, { ledger: 'x' }, { ledger: [{ callId: 'a', name: 'b', arguments: '\ud800'.repeat(500), failed: false }] },
    { findings: ['x'.repeat(100000)] }, { findings: Array(10000).fill('f') }, { spend: { summarizeCalls: Number.MAX_SAFE_INTEGER, inputTokens: Number.MAX_SAFE_INTEGER, outputTokens: Number.MAX_SAFE_INTEGER } }]
  for (const s of states) {
    const L = JSON.stringify(s).slice(0, 80)
    await hostile(`check state ${L}`, () => good.check(s, goodInput, { usage: { total_tokens: 5 } }))
    await hostile(`compact state ${L}`, () => good.compact(s, goodInput, { force: true, storeArtifact: () => undefined }))
    await hostile(`compact state usage ${L}`, () => good.compact(s, goodInput, { usage: { total_tokens: 7900 }, summarize: () => ({ text: 's', usage: { prompt_tokens: Number.MAX_SAFE_INTEGER, completion_tokens: Number.MAX_SAFE_INTEGER } }) }))
    await hostile(`observe state ${L}`, () => good.observeUsage(s, goodInput, { usage: { prompt_tokens: 5 } }))
    await hostile(`refusal state ${L}`, () => good.recordRefusal(s))
    await hostile(`edit state ${L}`, () => good.noteTranscriptEdit(s, 'fork'))
    await hostile(`bound state ${L}`, () => good.boundRequest(s, goodInput, { maxRequestBytes: 100 }))
    await hostile(`toRequest state ${L}`, () => good.toRequest(goodInput, s))
    await hostile(`finding state ${L}`, () => recordFinding(s, 'f'))
    await hostile(`live state ${L}`, () => { const l = good.open(goodInput); try { return l.check(s) } finally { l.free() } })
  }
})

// ---- seeded fuzz --------------------------------------------------------------------

/** mulberry32: a small deterministic PRNG. */
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function fuzzInput(rnd) {
  const pick = a => a[Math.floor(rnd() * a.length)]
  const int = n => Math.floor(rnd() * n)
  const str = () => pick(['', 'a', 'hello world', '\ud800', '✓ 检查', 'x'.repeat(int(5000)), '{"json":1}', 'artifact#3', '\u0000', 'call_1'])
  const ids = ['c0', 'c1', 'c2', 'c1', '', 'x']
  const scalar = () => pick([null, 0, -1, 1e300, true, str(), [], {}])
  const maybe = v => (rnd() < 0.08 ? scalar() : v)
  const omit = (o) => { if (rnd() < 0.1) { const ks = Object.keys(o); if (ks.length) delete o[pick(ks)] } return o }
  const format = pick(FORMATS)
  const n = int(14)
  const rows = []
  for (let i = 0; i < n; i++) {
    const id = pick(ids)
    let m
    switch (format) {
      case 'openai-chat':
        m = pick([
          { role: 'system', content: maybe(str()) }, { role: 'user', content: maybe(str()) }, { role: 'assistant', content: maybe(str()) },
          { role: 'assistant', content: null, tool_calls: maybe([{ id: maybe(id), type: 'function', function: maybe({ name: maybe('f'), arguments: maybe('{}') }) }]) },
          { role: 'tool', tool_call_id: maybe(id), content: maybe(str()) }, { role: 'user', content: maybe([{ type: maybe('text'), text: maybe(str()) }, { type: 'image_url', image_url: maybe({ url: 'data:x' }) }]) }])
        break
      case 'anthropic':
        m = pick([{ role: 'user', content: maybe(str()) }, { role: 'assistant', content: maybe([{ type: 'text', text: maybe(str()) }]) },
          { role: 'assistant', content: [{ type: 'tool_use', id: maybe(id), name: maybe('f'), input: maybe({}) }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: maybe(id), content: maybe(str()), is_error: maybe(false) }] },
          { role: 'user', content: [{ type: 'image', source: maybe({ type: 'base64', media_type: 'image/png', data: 'AAAA' }) }] }])
        break
      case 'gemini':
        m = pick([{ role: 'user', parts: maybe([{ text: maybe(str()) }]) }, { role: 'model', parts: [{ text: maybe(str()) }] },
          { role: 'model', parts: [{ functionCall: maybe({ name: maybe('f'), args: maybe({}), id: maybe(id) }) }] },
          { role: 'user', parts: [{ functionResponse: maybe({ name: maybe('f'), response: maybe({ out: str() }), id: maybe(id) }) }] },
          { role: 'user', parts: [{ inlineData: maybe({ mimeType: 'image/png', data: 'AAAA' }) }] }])
        break
      case 'openai-responses':
        m = pick([{ role: 'user', content: maybe(str()) }, { type: 'message', role: 'assistant', content: maybe([{ type: 'output_text', text: maybe(str()) }]) },
          { type: 'function_call', call_id: maybe(id), name: maybe('f'), arguments: maybe('{}') }, { type: 'function_call_output', call_id: maybe(id), output: maybe(str()) },
          { type: 'reasoning', summary: maybe([]) }, { role: 'system', content: maybe(str()) }])
        break
      case 'ai-sdk':
        m = pick([{ role: 'system', content: maybe(str()) }, { role: 'user', content: maybe(str()) }, { role: 'assistant', content: maybe([{ type: 'text', text: maybe(str()) }]) },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: maybe(id), toolName: maybe('f'), input: maybe({}) }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: maybe(id), toolName: maybe('f'), output: maybe({ type: 'text', value: str() }) }] }])
        break
      default:
        m = pick([{ role: pick(['system', 'user', 'assistant', 'tool', 5]), content: maybe([{ type: maybe('text'), text: maybe(str()) }]) },
          { role: 'assistant', content: [{ type: 'tool_call', id: maybe(id), name: maybe('f'), arguments: maybe({}) }] },
          { role: 'tool', content: [{ type: 'tool_result', call_id: maybe(id), content: maybe([{ type: 'text', text: str() }]) }] }])
    }
    rows.push(omit(structuredClone(m)))
  }
  const doc = { 'openai-chat': rows, anthropic: { system: maybe('sys'), messages: rows }, gemini: { contents: rows }, 'openai-responses': { input: rows },
    'ai-sdk': { messages: rows }, canonical: { messages: rows } }[format]
  const opts = { format: rnd() < 0.3 ? 'auto' : format, contextWindow: pick([1, 10, 100, 500, 2000, 8000, 200000]), thresholdPct: pick([1e-9, 0.1, 0.65, 1]),
    preserveRecentTurns: pick([0, 1, 2, 6, 1000]), preserveRecentBytes: pick([0, 1, 100, 65536, 4294967295]), evictToolResultMinBytes: pick([0, 10, 1024]),
    clipHeadBytes: pick([0, 3, 1200]), clipTailBytes: pick([0, 1, 400]), maxRequestBytes: pick([undefined, 0, 10, 5000]), minBoundariesBetween: pick([0, 2]),
    profile: pick(['default', 'kerkov', 'meerkat']), maxSummariesBeforeRollup: pick([0, 1, 4]), maxRolledUpSummaries: pick([0, 1, 4]) }
  return { doc: rnd() < 0.2 ? JSON.stringify(doc) : doc, opts, rnd }
}

test('hostile: seeded fuzz of check / compact / boundRequest / open (500 iterations)', async () => {
  const rnd = prng(0xC0FFEE)
  for (let i = 0; i < 500; i++) {
    const { doc, opts } = fuzzInput(rnd)
    const L = `fuzz #${i} ${JSON.stringify(opts)} ${JSON.stringify(doc).slice(0, 300)}`
    let c
    try { c = new ContextCompactor(opts) } catch (e) { typed(e, L); continue }
    const signals = { usage: { total_tokens: Math.floor(rnd() * 1e6) }, force: rnd() < 0.5, requestBytes: rnd() < 0.3 ? Math.floor(rnd() * 1e5) : undefined }
    try { const d = c.check(null, doc, signals); assert.equal(typeof d.compact, 'boolean', L) } catch (e) { if (e.code === 'ERR_ASSERTION') throw e; typed(e, `check ${L}`) }
    try { c.boundRequest(null, doc, { maxRequestBytes: Math.floor(rnd() * 3000) }) } catch (e) { typed(e, `bound ${L}`) }
    try { c.toRequest(doc) } catch (e) { typed(e, `toRequest ${L}`) }
    try {
      const r = await c.compact(null, doc, { ...signals, summarize: rnd() < 0.5 ? (req => `summary ${req.kind}`) : undefined, storeArtifact: rnd() < 0.3 ? (() => undefined) : undefined })
      assert.ok(['compacted', 'skipped', 'cannot_fit'].includes(r.status), `${L}: ${r.status}`)
      if (r.status === 'compacted') {
        assert.equal(r.validation.ok, true, L)
        // the rewrite is a valid transcript of the same format again
        c.check(r.state, r.transcript, {})
      }
    } catch (e) { if (e.code === 'ERR_ASSERTION') throw e; typed(e, `compact ${L}`) }
    try {
      const live = c.open(doc)
      live.append(Array.isArray(doc) ? [{ role: 'user', content: 'more' }] : [])
      live.check(null, signals)
      live.free()
    } catch (e) { typed(e, `live ${L}`) }
    c.free()
    if (i % 25 === 24) await healthy(L)
  }
  await healthy('fuzz end')
})

test('hostile regressions: non-string arguments of string parameters get typed codes, not a wasm trap (J-2)', async () => {
  const code = async (fn, want, label) => {
    const r = await hostile(label, fn)
    assert.ok(r.error, `${label}: expected a throw`)
    assert.equal(r.error.code, want, `${label}: ${r.error.message}`)
    return r.error
  }
  const e = await code(() => good.noteTranscriptEdit(null, 0), 'invalid_config', 'noteTranscriptEdit(kind=0)')
  assert.match(e.message, /kind must be a string, got number/)
  await code(() => recordFinding(null, 5), 'invalid_state', 'recordFinding(text=5)')
  await code(() => recordFinding(null, null), 'invalid_state', 'recordFinding(text=null)')
  await code(() => importTranscript(5, '{}'), 'unknown_format', 'importTranscript(kind=5)')
  await code(() => importTranscript('auto', undefined), 'invalid_transcript', 'importTranscript(text=undefined)')
  await code(() => recallToolDefinition({}), 'unknown_format', 'recallToolDefinition({})')
  await code(() => MemoryIndex.restore('bytes'), 'memory_failed', 'restore(string)')
  await code(() => MemoryIndex.restore([1, 2, 3]), 'memory_failed', 'restore(array)')
  const mem = new MemoryIndex()
  await code(() => mem.size(5), 'memory_failed', 'size(5)')
  await code(() => mem.recall('s', null), 'memory_failed', 'recall(query=null)')
  await code(() => mem.enumerate([]), 'memory_failed', 'enumerate([])')
  await code(() => mem.dropScope(undefined), 'memory_failed', 'dropScope(undefined)')
  await code(() => mem.resolveHandle('s', 1, () => 1), 'memory_failed', 'resolveHandle(handle=1)')
  mem.free()
  const s = new Session(good, { load: () => ({ transcript: goodInput }), save: () => {} })
  await code(() => s.recordFinding(5), 'invalid_state', 'Session.recordFinding(5)')
  s.free()
  // W-5: a revision JavaScript cannot hold exactly is rejected, not wrapped.
  await code(() => good.check({ revision: 2 ** 60 }, goodInput), 'invalid_state', 'state.revision 2^60')
  const s2 = new Session(good, { load: () => ({ transcript: goodInput, revision: 2 ** 60 }), save: () => {} })
  await code(() => s2.compact({ force: true }), 'invalid_state', 'record revision 2^60')
  s2.free()
})

test('hostile regressions: counters and sizes at the limits saturate (C-4, C-7, W-7)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 1000, imageTokens: 2 ** 63, clipHeadBytes: 4294967295, clipTailBytes: 4294967295 })
  const image = [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'go' }]
  const r = await hostile('check imageTokens 2^63', () => c.check(null, image, { toolsBytes: 2 ** 63 }))
  const est = r.value.signals.find(s => s.name === 'estimated_transcript_tokens')
  assert.ok(est.value >= 2 ** 63, `estimate saturates high, got ${est.value}`)
  // toolsBytes over 2^32 used to be truncated to 32 bits on wasm32 (2^63 counted as 0).
  assert.ok(r.value.floor.toolsTokens >= 2 ** 61, `tools counted whole, got ${r.value.floor.toolsTokens}`)
  assert.equal(r.value.reason, 'cannot_fit')
  // bytesPerToken 2^32 was truncated to 0 on wasm32 and divided by zero in the summary request (a trap).
  const b = new ContextCompactor({ format: 'openai-chat', contextWindow: 1000, bytesPerToken: 2 ** 32 })
  await hostile('compact bytesPerToken 2^32', () => b.compact(null, goodInput, { force: true, summarize: () => 'S' }), { ok: x => assert.ok(['compacted', 'cannot_fit', 'skipped'].includes(x.status)) })
  b.free()
  const st = await hostile('recordRefusal at boundary 2^63', () => c.recordRefusal({ cadence: { boundary: 2 ** 63 } }))
  assert.ok(st.value.cadence.boundary >= 2 ** 63)
  c.free()
})
