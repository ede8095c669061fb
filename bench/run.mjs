#!/usr/bin/env node
// The benchmark (`npm run bench`): a benchmark, not a test; it asserts nothing.
//
// For each session size (built by bench/build-sessions.mjs from the real transcripts),
// in this one Node process, on a fresh wasm instance per size, it measures medians of
// several runs, each as a ratio to the `JSON.parse` + `JSON.stringify` round trip of the
// same session text:
//   - compact (text):   full compaction, host input (JSON text) -> host output (the
//                       result object), summarize callback answering at once;
//   - compact (object): the same with the transcript passed as a JS object;
//   - fresh check:      `check` on the whole transcript (JSON text), for reference;
//   - live check:       `append` one row to a live handle (`compactor.open`) + `check`;
//   - trimMessages:     @langchain/core trimMessages fitting the same token budget
//                       (messages converted to LangChain classes beforehand);
//   - pruneMessages:    ai pruneMessages on the same session (converted to ModelMessage
//                       beforehand; it fits no budget);
//   - peak memory:      the wasm memory's byteLength after the compactions of this size
//                       (wasm memory never shrinks), and after the live handle too, as a
//                       multiple of the transcript bytes.
// Then, on each real transcript (tau-bench, SWE-agent) as imported, the summarize
// request's estimated tokens as a share of the folded range's tokens (forced compaction,
// default profile: eviction runs before the summary).
//
// Usage: node bench/run.mjs [--sizes 1,10,50] [--runs N] [--markdown]
import { existsSync, readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { brotliCompressSync, constants as zc } from 'node:zlib'
import { resolve, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadSources, sessionFile, SHARED } from './build-sessions.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const { values: args } = parseArgs({
  options: { sizes: { type: 'string', default: '1,10,50' }, runs: { type: 'string' }, 'skip-incumbents': { type: 'boolean' }, large: { type: 'boolean' } },
})
const SIZES = args.sizes.split(',').map(Number).filter((n) => n > 0)
const WASM_BYTES = readFileSync(join(root, 'pkg/web/context_compactor_bg.wasm'))

/** A fresh wasm instance (own memory) of the web build. */
async function freshInstance(tag) {
  const mod = await import(`../pkg/web/context_compactor.js?instance=${tag}`)
  const exports = mod.initSync({ module: WASM_BYTES })
  return { mod, memory: exports.memory }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

async function timeRuns(n, fn) {
  const out = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await fn(i)
    out.push(performance.now() - t0)
  }
  return median(out)
}

// ---- conversions for the incumbents (outside the timed region) ----------------------
function parseArgsJson(s) {
  try {
    const v = JSON.parse(s)
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v }
  } catch {
    return { input: s }
  }
}
function text(content) {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('\n')
  return ''
}
function toLangChain(lc, messages) {
  return messages.map((m) => {
    switch (m.role) {
      case 'system': return new lc.SystemMessage(text(m.content))
      case 'user': return new lc.HumanMessage(text(m.content))
      case 'assistant': return new lc.AIMessage({
        content: text(m.content),
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function?.name ?? '', args: parseArgsJson(c.function?.arguments ?? '{}'), type: 'tool_call' })),
      })
      default: return new lc.ToolMessage({ content: text(m.content), tool_call_id: m.tool_call_id })
    }
  })
}
function toModelMessages(messages) {
  const names = new Map()
  return messages.map((m) => {
    switch (m.role) {
      case 'system': return { role: 'system', content: text(m.content) }
      case 'user': return { role: 'user', content: text(m.content) }
      case 'assistant': {
        const parts = []
        const t = text(m.content)
        if (t) parts.push({ type: 'text', text: t })
        for (const c of m.tool_calls ?? []) {
          names.set(c.id, c.function?.name ?? '')
          parts.push({ type: 'tool-call', toolCallId: c.id, toolName: c.function?.name ?? '', input: parseArgsJson(c.function?.arguments ?? '{}') })
        }
        return { role: 'assistant', content: parts }
      }
      default: return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: m.tool_call_id, toolName: names.get(m.tool_call_id) ?? '', output: { type: 'text', value: text(m.content) } }],
      }
    }
  })
}
/** The same estimate the engine uses (C-7 default): 4 bytes of JSON a token. */
function lcTokenCounter(msgs) {
  let chars = 0
  for (const m of msgs) {
    chars += typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length
    for (const c of m.tool_calls ?? []) chars += JSON.stringify(c.args).length + c.name.length
  }
  return Math.ceil(chars / 4)
}

// ---- one size -----------------------------------------------------------------------
async function benchSize(mb, sourcesWasm, sources) {
  const path = await sessionFile(sourcesWasm, mb, sources)
  const sessionText = readFileSync(path, 'utf8')
  const bytes = Buffer.byteLength(sessionText)
  const runs = Number(args.runs ?? (mb >= 50 ? 5 : mb >= 10 ? 7 : 25))
  const { mod, memory } = await freshInstance(mb)
  const memInitial = memory.buffer.byteLength
  const compactor = new mod.ContextCompactor({ format: 'openai-chat' })
  const cfg = compactor.config
  const budget = Math.ceil(cfg.contextWindow * cfg.thresholdPct)
  const summarize = () => 'The user and the agent worked through earlier tasks.'
  const row = { role: 'user', content: 'One more question about my reservation, please.' }

  // warm-up (JIT, wasm tier-up) and sanity
  JSON.stringify(JSON.parse(sessionText))
  const first = await compactor.compact(null, sessionText, { summarize })
  if (first.status !== 'compacted') throw new Error(`${mb} MB: compaction ${first.status}: ${first.reason}`)

  const roundTrip = await timeRuns(runs, () => JSON.stringify(JSON.parse(sessionText)))
  const compactText = await timeRuns(runs, () => compactor.compact(null, sessionText, { summarize }))
  const obj = JSON.parse(sessionText)
  const compactObject = await timeRuns(runs, () => compactor.compact(null, obj, { summarize }))
  const memCompact = memory.buffer.byteLength
  // the same compaction with the records handed to a memory hook (a sink that keeps nothing)
  const sink = { add() {} }
  const compactMemory = await timeRuns(runs, () => compactor.compact(null, sessionText, { summarize, memory: sink }))
  // the records asked into the result (memoryRecords: "result"): what writing them costs
  const compactRecords = await timeRuns(runs, () => compactor.compact(null, sessionText, { summarize, memoryRecords: 'result' }))
  // JS side: JSON.parse of the result text the engine hands over (one string)
  const resultText = JSON.stringify(first)
  const resultParse = await timeRuns(runs, () => JSON.parse(resultText))
  const toRequest = await timeRuns(runs, () => compactor.toRequest(sessionText))
  const toRequestObject = await timeRuns(runs, () => compactor.toRequest(obj))
  // what toRequest's result costs JS alone: JSON.parse of the request text it hands over
  const requestText = JSON.stringify(compactor.toRequest(sessionText))
  const requestParse = await timeRuns(runs, () => JSON.parse(requestText))
  const freshCheck = await timeRuns(runs, () => compactor.check(null, sessionText, {}))
  let liveCheck = NaN
  if (typeof compactor.open === 'function') {
    const live = compactor.open(sessionText)
    live.append([row])
    live.check(null, {})
    liveCheck = await timeRuns(Math.max(runs, 21), () => {
      live.append([row])
      return live.check(null, {})
    })
    live.free()
  }
  const memLive = memory.buffer.byteLength

  let trim = NaN
  let trimSpeedup = NaN
  let trimPairs = 0
  let prune = NaN
  if (!args['skip-incumbents']) {
    const lc = await import('@langchain/core/messages')
    const { pruneMessages } = await import('ai')
    const lcMessages = toLangChain(lc, obj.messages)
    const modelMessages = toModelMessages(obj.messages)
    // trimMessages grows faster than linearly (minutes at 10 MB): one run at 10 MB,
    // none above (it would take hours); the table says so.
    // The speed-up is measured in pairs, a compaction from text then a trimMessages run
    // back to back, and is the median of the pairs' ratios: the machine's load moves
    // between the compaction's runs above and trimMessages' (the ratio of the two
    // medians swung 4.6x-5.8x over three runs at 1 MB), and a pair sees about one load.
    trimPairs = mb > 10 ? 0 : mb >= 10 ? 1 : 15
    const times = []
    const ratios = []
    for (let i = 0; i < trimPairs; i++) {
      let t0 = performance.now()
      await compactor.compact(null, sessionText, { summarize })
      const c = performance.now() - t0
      t0 = performance.now()
      await lc.trimMessages(lcMessages, { maxTokens: budget, strategy: 'last', tokenCounter: lcTokenCounter, includeSystem: true, startOn: 'human' })
      const t = performance.now() - t0
      times.push(t)
      ratios.push(t / c)
    }
    if (trimPairs) {
      trim = median(times)
      trimSpeedup = median(ratios)
    }
    prune = await timeRuns(runs, () => pruneMessages({ messages: modelMessages, reasoning: 'all', toolCalls: 'before-last-message', emptyMessages: 'remove' }))
  }
  compactor.free()
  // the decode's own peak: one check on a fresh instance (wasm memory never shrinks)
  const probe = await freshInstance(`${mb}-check`)
  new probe.mod.ContextCompactor({ format: 'openai-chat' }).check(null, sessionText, {})
  const memCheck = probe.memory.buffer.byteLength
  // where a compaction's peak is reached: one compaction on a fresh instance, the memory
  // read when the summarize callback is called (decode, selection, eviction and the
  // summarize request built) and after the call (projection, N-1 check, result written)
  const probe2 = await freshInstance(`${mb}-compact`)
  let memAtSummarize = NaN
  let requestBytes = NaN
  await new probe2.mod.ContextCompactor({ format: 'openai-chat' }).compact(null, sessionText, {
    summarize: (req) => {
      memAtSummarize = probe2.memory.buffer.byteLength
      requestBytes = Buffer.byteLength(JSON.stringify(req))
      return 'The user and the agent worked through earlier tasks.'
    },
  })
  const memFreshCompact = probe2.memory.buffer.byteLength
  return { mb, bytes, messages: obj.messages.length, runs, memInitial, memCheck, memAtSummarize, requestBytes, memFreshCompact, requestParse, roundTrip, compactText, compactObject, compactMemory, compactRecords, resultParse, resultBytes: Buffer.byteLength(resultText), toRequest, toRequestObject, freshCheck, liveCheck, trim, trimSpeedup, trimPairs, prune, memCompact, memLive }
}

// ---- opt-in: a generated 100 MB transcript (--large) ----------------------------------
/** 100 MB of OpenAI-chat rows: many small ones, and a few huge tool results (8 MB each). */
function largeSession(shape) {
  const messages = [{ role: 'system', content: 'You are a helpful agent.' }]
  let bytes = 0
  const target = 100 * 1024 * 1024
  for (let i = 0; bytes < target; i++) {
    const huge = shape === 'huge' && i % 2000 === 1000
    const body = huge ? 'log line with a value\n'.repeat(8 * 1024 * 1024 / 22) : `result ${i}: ${'ok '.repeat(40)}`
    const rows = [
      { role: 'user', content: `step ${i}: look up order ${i}` },
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'lookup', arguments: `{"order":${i}}` } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: body },
      { role: 'assistant', content: `Order ${i} is fine.` },
    ]
    for (const r of rows) bytes += JSON.stringify(r).length + 1
    messages.push(...rows)
  }
  return JSON.stringify({ messages })
}

async function benchLarge() {
  const out = []
  for (const shape of ['small', 'huge']) {
    const text = largeSession(shape)
    const { mod, memory } = await freshInstance(`large-${shape}`)
    const c = new mod.ContextCompactor({ format: 'openai-chat' })
    const t0 = performance.now()
    let status
    try {
      status = (await c.compact(null, text, { summarize: () => 'The user and the agent worked through earlier tasks.' })).status
    } catch (e) {
      status = `threw ${e.code ?? e.name}: ${String(e.message).slice(0, 80)}`
    }
    const ms = performance.now() - t0
    let limited
    try {
      new mod.ContextCompactor({ format: 'openai-chat', maxTranscriptBytes: 50 * 1024 * 1024 }).check(null, text)
      limited = 'accepted'
    } catch (e) {
      limited = e.code
    }
    out.push({ shape, bytes: Buffer.byteLength(text), status, ms, mem: memory.buffer.byteLength, limited })
  }
  return out
}

// ---- summarize request share on the real transcripts --------------------------------
async function summarizeShare(wasm, sources) {
  const rows = []
  for (const s of sources) {
    const c = new wasm.ContextCompactor({ format: 'openai-chat' })
    let req = null
    const out = await c.compact(null, { messages: s.messages }, { force: true, summarize: (r) => { req = r; return 'summary' } })
    if (out.status !== 'compacted' || !req) {
      rows.push({ name: s.name, status: out.status })
      continue
    }
    const folded = out.rewrite.discarded.reduce((sum, i) => sum + Math.ceil(Buffer.byteLength(JSON.stringify(s.messages[i])) / 4), 0)
    rows.push({ name: s.name, status: out.status, folded, request: req.estimatedInputTokens, coverage: req.coverage, share: req.estimatedInputTokens / folded })
    c.free()
  }
  return rows
}

// ---- main -----------------------------------------------------------------------------
const sourcesWasm = await import('../pkg/node/context_compactor.js')
const sources = loadSources(sourcesWasm)
const results = []
for (const mb of SIZES) {
  process.stderr.write(`bench: ${mb} MB ...\n`)
  results.push(await benchSize(mb, sourcesWasm, sources))
}
const large = args.large ? await benchLarge() : []
const share = await summarizeShare(sourcesWasm, sources)
const brotli = brotliCompressSync(WASM_BYTES, { params: { [zc.BROTLI_PARAM_QUALITY]: 11 } }).length
// the lite entry's module (scripts/build.mjs builds it into pkg/lite/web; `npm run bench:size` for both)
const LITE_WASM = join(root, 'pkg/lite/web/context_compactor_bg.wasm')
const liteBrotli = existsSync(LITE_WASM) ? brotliCompressSync(readFileSync(LITE_WASM), { params: { [zc.BROTLI_PARAM_QUALITY]: 11 } }).length : null

const r2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a')
const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(2)}%` : 'n/a')
const lines = []
lines.push(`Node ${process.version}, ${SHARED.includes('shared') ? 'sessions from ../shared/transcripts' : ''}; medians; every figure is a ratio to the JSON.parse + JSON.stringify round trip of the same session unless marked.`)
lines.push('')
lines.push('| session | messages | round trip (ms) | compact, text | compact, object | compact, text, records to a memory hook | fresh check | live append + check | trimMessages | pruneMessages | peak wasm memory (compact / + live) |')
lines.push('|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of results) {
  const x = (v) => r2(v / r.roundTrip)
  lines.push(`| ${(r.bytes / 1048576).toFixed(1)} MB | ${r.messages} | ${r.roundTrip.toFixed(1)} | ${x(r.compactText)}x | ${x(r.compactObject)}x | ${x(r.compactMemory)}x | ${x(r.freshCheck)}x | ${pct(r.liveCheck / r.roundTrip)} (${r.liveCheck.toFixed(3)} ms) | ${Number.isFinite(r.trim) ? `${x(r.trim)}x` : 'not run'} | ${x(r.prune)}x | ${r2(r.memCompact / r.bytes)}x / ${r2(r.memLive / r.bytes)}x (growth ${r2((r.memCompact - r.memInitial) / r.bytes)}x / ${r2((r.memLive - r.memInitial) / r.bytes)}x) |`)
}
lines.push('')
lines.push('Per-phase breakdown of one compaction from text (ms; measured as differences between calls in this run: decode = `check`, which decodes and decides; projection = a compaction handing the records of every folded row to a memory hook minus the default one, which projects only the folded user text and returns it in the result (N-1); output = what `memoryRecords: "result"` adds over the hook; JS side = `JSON.parse` of the result text; engine = the rest of the default compaction):')
lines.push('')
lines.push('| session | compaction | decode | engine | projection | output (records into the result) | JS side (result parse) | toRequest | result bytes |')
lines.push('|---|---|---|---|---|---|---|---|---|')
for (const r of results) {
  const f = (v) => Math.max(0, v).toFixed(1)
  const engine = r.compactText - r.freshCheck - r.resultParse
  lines.push(`| ${(r.bytes / 1048576).toFixed(1)} MB | ${f(r.compactText)} | ${f(r.freshCheck)} | ${f(engine)} | ${f(r.compactMemory - r.compactText)} | ${f(r.compactRecords - r.compactMemory)} | ${f(r.resultParse)} | ${f(r.toRequest)} (${r2(r.toRequest / r.roundTrip)}x) | ${r.resultBytes} |`)
}
if (large.length) {
  lines.push('')
  lines.push('Generated 100 MB transcripts (--large; one run each, fresh instance): many small rows, and the same with a huge 8 MB tool result every 2,000 rounds.')
  lines.push('')
  lines.push('| shape | bytes | compact | ms | peak wasm memory | with maxTranscriptBytes 50 MiB |')
  lines.push('|---|---|---|---|---|---|')
  for (const l of large) lines.push(`| ${l.shape} | ${l.bytes} | ${l.status} | ${l.ms.toFixed(0)} | ${(l.mem / 1048576).toFixed(0)} MiB (${r2(l.mem / l.bytes)}x) | ${l.limited} |`)
}
lines.push('')
lines.push('Summarize request on the real transcripts (forced compaction, default profile; request = its estimated input tokens, folded = the discarded rows at 4 bytes a token):')
lines.push('')
lines.push('| transcript | folded tokens | request tokens | share | coverage |')
lines.push('|---|---|---|---|---|')
for (const s of share) {
  lines.push(s.folded ? `| ${s.name} | ${s.folded} | ${s.request} | ${pct(s.share)} | ${s.coverage} |` : `| ${s.name} | - | - | - | ${s.status} |`)
}
lines.push('')
lines.push(`\`context_compactor_bg.wasm\`: ${WASM_BYTES.length} bytes, ${brotli} bytes brotli (quality 11).`)

// targets
const at = (mb) => results.find((r) => r.mb === mb)
const t = []
const r10 = at(10)
const cause = (r) => {
  const engine = r.compactText - r.freshCheck - r.resultParse
  const parts = [['decode', r.freshCheck], ['engine', engine], ['JS side', r.resultParse]]
  parts.sort((a, b) => b[1] - a[1])
  const what = { decode: 'split and typed parse of every row, canonical check, content id', engine: 'summarize request rendering, N-1 floor and check, facts, the user-text records and their JSON, eviction: the CPU profile in docs/performance.md', 'JS side': 'JSON.parse of the result' }
  return `largest phases: ${parts.slice(0, 2).map(([n, v]) => `${n} ${r2(v / r.roundTrip)}x (${what[n]})`).join(', ')}`
}
const compactTarget = (r, limit) => {
  const worst = Math.max(r.compactText, r.compactObject) / r.roundTrip
  t.push([`full compaction <= ${limit}x the round trip at ${r.mb} MB (text and object)`, worst <= limit, `text ${r2(r.compactText / r.roundTrip)}x, object ${r2(r.compactObject / r.roundTrip)}x (records to a memory hook: ${r2(r.compactMemory / r.roundTrip)}x)${worst <= limit ? '' : `; ${cause(r)}`}`])
}
for (const r of results) {
  if (r.mb === 1) compactTarget(r, 2)
  if (r.mb === 10) compactTarget(r, 1.5)
}
for (const r of results.filter((x) => x.mb === 10 || results.length === 1)) {
  t.push([`check <= 1.0x the round trip at ${r.mb} MB`, r.freshCheck / r.roundTrip <= 1.0, `${r2(r.freshCheck / r.roundTrip)}x (decode of every row: a typed view per row plus its content hash)`])
  t.push([`toRequest <= 1.2x the round trip at ${r.mb} MB (text and object)`, Math.max(r.toRequest, r.toRequestObject) / r.roundTrip <= 1.2, `text ${r2(r.toRequest / r.roundTrip)}x, object ${r2(r.toRequestObject / r.roundTrip)}x (a compact text that is its own request view is scanned once and the host's string parsed: JSON.parse of the request alone ${r2(r.requestParse / r.roundTrip)}x; an object is JSON.stringify-ed first, and stringify + parse is the round trip itself)`])
}
const lives = results.filter((r) => Number.isFinite(r.liveCheck))
if (lives.length > 1) {
  const lo = lives[0]
  const hi = lives[lives.length - 1]
  t.push([`live append + check flat in the held rows (${lo.messages} -> ${hi.messages} rows within 1.5x)`, hi.liveCheck / lo.liveCheck <= 1.5, lives.map((r) => `${(r.liveCheck * 1000).toFixed(1)} us`).join(' / ')])
}
if (r10) {
  t.push(['check after one appended row <= 2% of the round trip at 10 MB', r10.liveCheck / r10.roundTrip <= 0.02, pct(r10.liveCheck / r10.roundTrip)])
}
const r1 = at(1)
const r50 = at(50)
if (r1 && r50) {
  const k = (r) => [r.compactText, r.compactObject, r.freshCheck].map((v) => v / r.roundTrip)
  const a = k(r1)
  const b = k(r50)
  const worst = Math.max(...b.map((v, i) => v / a[i]))
  t.push(['ratios at 50 MB within 1.2x of those at 1 MB (compactions, fresh check)', worst <= 1.2, `worst 50 MB / 1 MB: ${r2(worst)}`])
}
const speedups = results.filter((r) => Number.isFinite(r.trimSpeedup)).map((r) => r.trimSpeedup)
if (speedups.length) {
  const trimmed = results.filter((r) => Number.isFinite(r.trimSpeedup))
  const slowest = trimmed.reduce((a, r) => (r.trimSpeedup < a.trimSpeedup ? r : a), trimmed[0])
  const ok = Math.min(...speedups) >= 5
  t.push(['>= 5x faster than trimMessages', ok, `compaction (text) is ${trimmed.map((r) => `${r2(r.trimSpeedup)}x (${r.mb} MB, median of ${r.trimPairs} back-to-back pairs)`).join(' / ')} faster${ok ? '' : `; at ${slowest.mb} MB trimMessages takes ${slowest.trim.toFixed(0)} ms, the compaction ${slowest.compactText.toFixed(0)} ms, ${cause(slowest)}`}`])
}
const mem = Math.max(...results.map((r) => r.memCompact / r.bytes))
const worstMem = results.reduce((a, r) => (r.memCompact / r.bytes > a.memCompact / a.bytes ? r : a), results[0])
const memCause = (r) => {
  const x = (v) => r2(v / r.bytes)
  return `at ${r.mb} MB, one compaction on a fresh instance: ${x(r.memAtSummarize)}x when summarize is called, ${x(r.memFreshCompact)}x after it; a check alone ${x(r.memCheck)}x (the input text, which the rows borrow, beside each row's readable text and its structures); the module's initial memory ${x(r.memInitial)}x (256 KiB of it the stack); the summarize request (${x(r.requestBytes)}x) is written once into a buffer sized beforehand; what the call adds after the callback is the commit's (the memory projection and the result's text, not measured apart)`
}
t.push(['peak wasm memory <= 3x the transcript bytes', mem <= 3, `worst ${r2(mem)}x (compaction, ${worstMem.mb} MB)${mem <= 3 ? '' : `; ${results.filter((r) => r.memCompact / r.bytes > 3).map(memCause).join('; ')}`}`])
const shares = share.filter((s) => s.share != null).map((s) => s.share)
if (shares.length) t.push(['summarize request <= 30% of the folded range tokens', Math.max(...shares) <= 0.3, `max ${pct(Math.max(...shares))}`])
t.push(['_bg.wasm <= 205 KB brotli', brotli <= 205 * 1024, `${(brotli / 1024).toFixed(1)} KB`])
t.push(['lite entry (no log importers, no embedded memory) <= 120 KB brotli', liteBrotli !== null && liteBrotli <= 120 * 1024, liteBrotli === null ? 'pkg/lite/web not built (npm run build)' : `${(liteBrotli / 1024).toFixed(1)} KB (see docs/performance.md, "Build size")`])
lines.push('')
lines.push('| target | met | measured |')
lines.push('|---|---|---|')
for (const [name, ok, v] of t) lines.push(`| ${name} | ${ok ? 'met' : 'NOT met'} | ${v} |`)
console.log(lines.join('\n'))
