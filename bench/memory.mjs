#!/usr/bin/env node
// Semantic-memory benchmark (M-1..M-3): recall quality and search latency of the
// embedded default (wasm build) against a plain bag-of-words baseline implemented here.
//
//   npm run bench:memory            (needs a build: npm run build; and ../shared/transcripts)
//
// 1. Probe set. Every transcript under ../shared/transcripts is imported and compacted
//    at a small window (16,000 tokens, 2 recent turns, 8,000 recent bytes, forced), so
//    most of it is discarded and projected into memory records (out.memory). From the
//    records we take fact lines (a line naming a number, path or identifier plus a few
//    content words; for Chinese text, a line with CJK runs) at evenly spaced positions,
//    and write a query for each that paraphrases it: the anchor (number / file name) is
//    kept, only some content words are kept, they are re-inflected (plural <-> singular)
//    or swapped for a synonym, reordered, lower-cased and wrapped in a question template.
//    Paths shrink to their last segment. Chinese queries keep 2-4 character pieces of
//    the line's runs, separated by spaces, in a Chinese question template. Everything is
//    deterministic (FNV hashes, no randomness). A probe is found when one of the top 5
//    hits of its transcript's session contains the fact line (recall@5).
// 2. Baseline: lower-cased whitespace split, counts hashed (FNV-1a) into 2^18 buckets,
//    cosine; exact scan in JS.
// 3. Latency: records of all transcripts replicated to 1k / 10k / 100k in one session;
//    median wall time of one `MemoryIndex.recall(session, query, { limit: 5 })` call
//    (JSON crossing included) vs the median of the baseline's JS scan over the same
//    records, measured in the same run; the ratio is wasm / baseline.
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { join, relative, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { ContextCompactor, MemoryIndex, importTranscript } from 'context-compactor'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const shared = join(root, '..', 'shared', 'transcripts')
if (!existsSync(shared)) {
  console.error(`bench:memory: ${shared} is missing; the probe set is built from it`)
  process.exit(1)
}

// ---------- helpers ------------------------------------------------------------------
function fnv(s) {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

function listFiles(dir) {
  const out = []
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...listFiles(p))
    else if (!e.name.endsWith('.md')) out.push(p)
  }
  return out.sort()
}

// ---------- baseline: whitespace bag of words, hashed counts, cosine -------------------
const BUCKETS = 1 << 18
function bowVector(text) {
  const counts = new Map()
  for (const tok of text.toLowerCase().split(/\s+/)) {
    if (!tok) continue
    const b = fnv(tok) % BUCKETS
    counts.set(b, (counts.get(b) || 0) + 1)
  }
  let norm = 0
  for (const c of counts.values()) norm += c * c
  norm = Math.sqrt(norm)
  return { counts, norm }
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
    return scored.slice(0, limit).map(([score, i]) => ({ score, content: this.records[i].content }))
  }
}

// ---------- probes ---------------------------------------------------------------------
const STOP = new Set(('the and for that this with from are was were has have had not but you your our its '
  + 'can will would should could into than then them they their there here what when where which who '
  + 'all any each out use using used via per also just only more most some such very been being '
  + 'let now get got one two does did done make made please need true false none null').split(' '))
const SYNONYMS = {
  error: 'failure', errors: 'failures', failed: 'broke', run: 'execute', running: 'executing',
  create: 'make', created: 'made', check: 'verify', checked: 'verified', find: 'locate', found: 'located',
  show: 'display', shows: 'displays', change: 'modify', changed: 'modified', value: 'number',
  values: 'numbers', file: 'document', files: 'documents', total: 'sum', result: 'outcome',
  results: 'outcomes', correct: 'right', wrong: 'incorrect', start: 'begin', begin: 'start',
  reservation: 'booking', booking: 'reservation', flight: 'flight', cancel: 'call off',
  price: 'cost', cost: 'price', customer: 'client', user: 'person', data: 'dataset',
  compute: 'calculate', calculate: 'compute', number: 'count', list: 'listing', output: 'printout',
}
const EN_TEMPLATES = [
  (t, a) => `what did we learn about ${t} ${a}`,
  (t, a) => `remind me of ${a} and the ${t}`,
  (t, a) => `earlier there was something on ${t} mentioning ${a}`,
  (t, a) => `find the part about ${t} with ${a}`,
  (t, a) => `${a} ${t} what was that again`,
]
const ZH_TEMPLATES = [
  (t) => `之前说到的 ${t} 是什么`,
  (t) => `请回忆一下 ${t}`,
  (t) => `关于 ${t} 的内容`,
]
const CJK = /[\u3400-\u9fff\uf900-\ufaff]+/g

function inflect(w, h) {
  if (SYNONYMS[w] && h % 2 === 0) return SYNONYMS[w]
  if (h % 3 === 0) return w
  if (w.endsWith('ies')) return w.slice(0, -3) + 'y'
  if (w.endsWith('s') && !w.endsWith('ss') && w.length > 4) return w.slice(0, -1)
  if (w.endsWith('y') && w.length > 3) return w.slice(0, -1) + 'ies'
  return w + 's'
}

function anchorOf(words) {
  let best = null
  for (const w of words) {
    if (!/[0-9]/.test(w) && !/[A-Za-z][/_.][A-Za-z0-9]/.test(w)) continue
    if (w.length < 2 || w.length > 60) continue
    if (!best || w.length > best.length) best = w
  }
  if (!best) return null
  const seg = best.split('/').filter(Boolean).pop() || best
  return seg.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '')
}

function englishProbe(line, seed) {
  // `cat -n` style line-number prefixes ("154→") are not facts.
  const body = line.replace(/^\s*\d+→\s*/, '')
  const words = body.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}/_.]+|[^\p{L}\p{N}]+$/gu, '')).filter(Boolean)
  const anchor = anchorOf(words)
  if (!anchor) return null
  const content = [...new Set(words.filter((w) => /^[A-Za-z]{3,}$/.test(w)).map((w) => w.toLowerCase()).filter((w) => !STOP.has(w)))]
  if (content.length < 3) return null
  const kept = content.map((w) => [fnv(w + seed), w]).sort((a, b) => a[0] - b[0]).slice(0, Math.min(4, content.length - 1)).map(([h, w]) => inflect(w, h))
  const terms = kept.join(' ')
  const query = EN_TEMPLATES[fnv(seed) % EN_TEMPLATES.length](terms, anchor.toLowerCase())
  if (line.toLowerCase().includes(query) || line.includes(terms)) return null
  return query
}

function chineseProbe(line, seed) {
  const runs = (line.match(CJK) || []).filter((r) => r.length >= 3)
  if (runs.length < 2) return null
  const pieces = runs.map((r, i) => {
    const len = 2 + ((fnv(seed + i) >>> 0) % 3)
    const start = Math.max(0, Math.floor((r.length - len) / 2))
    return r.slice(start, start + len)
  })
  const chosen = pieces.map((p, i) => [fnv(p + seed + i), p]).sort((a, b) => a[0] - b[0]).slice(0, 3).map(([, p]) => p)
  return ZH_TEMPLATES[fnv(seed) % ZH_TEMPLATES.length](chosen.join(' '))
}

function candidateLines(record) {
  const out = []
  for (const raw of record.content.split(/\n|(?<=[.!?。！？])\s+/)) {
    const line = raw.trim()
    if (line.length < 25 || line.length > 240) continue
    out.push(line)
  }
  return out
}

// ---------- 1. build memory per transcript, then probes --------------------------------
const sessions = []
for (const file of listFiles(shared)) {
  const name = relative(shared, file)
  const { format, document } = importTranscript('auto', readFileSync(file, 'utf8'))
  const compactor = new ContextCompactor({ format, contextWindow: 16000, preserveRecentTurns: 2, preserveRecentBytes: 8000 })
  const out = await compactor.compact(null, document, { force: true, sessionId: name, memoryRecords: 'result' })
  if (out.status !== 'compacted' || !out.memory) continue
  sessions.push({ name, records: out.memory.records })
}

const probes = []
for (const s of sessions) {
  const isZh = s.name.startsWith('glaive/')
  const cands = []
  const seen = new Set()
  for (const r of s.records) {
    for (const line of candidateLines(r)) {
      if (seen.has(line)) continue
      seen.add(line)
      const query = isZh ? chineseProbe(line, line) : englishProbe(line, line)
      if (query) cands.push({ line, query })
    }
  }
  const want = s.records.length > 1000 ? 8 : 4
  const n = Math.min(want, cands.length)
  for (let i = 0; i < n; i++) {
    const c = cands[Math.floor(((i + 0.5) * cands.length) / n)]
    probes.push({ session: s.name, lang: isZh ? 'zh' : 'en', ...c })
  }
}

const memory = new MemoryIndex()
for (const s of sessions) memory.add(s.records)
const bows = new Map(sessions.map((s) => [s.name, new BowIndex(s.records)]))

const found = (hits, line) => hits.some((h) => h.content.includes(line))
const tally = { all: [0, 0, 0], en: [0, 0, 0], zh: [0, 0, 0] }
const examples = []
for (const p of probes) {
  const e = found(memory.recall(p.session, p.query, { limit: 5 }).hits, p.line) ? 1 : 0
  const b = found(bows.get(p.session).search(p.query, 5), p.line) ? 1 : 0
  for (const k of ['all', p.lang]) {
    tally[k][0] += 1
    tally[k][1] += e
    tally[k][2] += b
  }
  if (examples.length < 4 && p.lang === 'en' && examples.every((x) => x.session !== p.session)) examples.push(p)
}
const pct = (x, n) => (n ? ((100 * x) / n).toFixed(1) : '-')

console.log(`# Semantic memory benchmark\n`)
console.log(`Transcripts: ${sessions.length}, memory records: ${sessions.reduce((a, s) => a + s.records.length, 0)}, probes: ${probes.length}\n`)
console.log('| probes | n | recall@5 embedded (wasm) | recall@5 bag-of-words baseline |')
console.log('|---|---|---|---|')
for (const [k, label] of [['en', 'English (claude-code, swe-agent, tau-bench)'], ['zh', 'Chinese (glaive)'], ['all', 'all']]) {
  const [n, e, b] = tally[k]
  console.log(`| ${label} | ${n} | ${pct(e, n)}% | ${pct(b, n)}% |`)
}
console.log('\nExample probes (fact line -> query):')
for (const p of examples) console.log(`- ${p.session}: "${p.line.slice(0, 90)}" -> "${p.query}"`)

// ---------- 3. latency -----------------------------------------------------------------
const pool = sessions.flatMap((s) => s.records)
const queries = probes.filter((p) => p.lang === 'en').map((p) => p.query)
console.log('\n| records | embedded recall (wasm), median ms | bag-of-words JS scan, median ms | ratio wasm / baseline |')
console.log('|---|---|---|---|')
for (const n of [1_000, 10_000, 100_000]) {
  const records = []
  for (let i = 0; i < n; i++) {
    const r = pool[i % pool.length]
    const copy = i < pool.length ? r.content : `${r.content} copy${Math.floor(i / pool.length)}`
    records.push({ ...r, id: `bench-${i}`, session: 'bench', sourceRange: [i, i], content: copy })
  }
  const idx = new MemoryIndex()
  idx.add(records)
  const bow = new BowIndex(records)
  const rounds = n >= 100_000 ? 1 : 3
  const tw = []
  const tb = []
  for (let r = 0; r < rounds; r++) {
    for (const q of queries) {
      let t0 = performance.now()
      idx.recall('bench', q, { limit: 5 })
      tw.push(performance.now() - t0)
      t0 = performance.now()
      bow.search(q, 5)
      tb.push(performance.now() - t0)
    }
  }
  const mw = median(tw)
  const mb = median(tb)
  console.log(`| ${n.toLocaleString('en-US')} | ${mw.toFixed(2)} | ${mb.toFixed(2)} | ${(mw / mb).toFixed(2)} |`)
  idx.free()
}
