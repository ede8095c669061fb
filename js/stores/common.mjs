// Shared pieces of the stores (I-5): the empty record, chunking of record text into
// values a store accepts, the refusal answer of a stale save, and the per-session
// memory-index cache (lazy load, LRU eviction). No platform API is used here.

/** The answer a store gives `Session` for a refused save (W-5). */
export const STALE = Object.freeze({ ok: false, reason: 'stale_revision' })

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

/** What a session that was never written loads as (revision 0, no state). */
export function emptyRecord(options) {
  const t = options?.emptyTranscript
  return { transcript: typeof t === 'function' ? t() : (t === undefined ? [] : structuredClone(t)), state: null, revision: 0 }
}

/** Revision a save asks the store to still be at (`expectedRevision`, W-5). */
export function expectedOf(record, info) {
  const e = info?.expectedRevision
  if (Number.isSafeInteger(e) && e >= 0) return e
  throw Object.assign(new Error(`save: expectedRevision must be a non-negative integer, got ${e}`), { code: 'invalid_state' })
}

/** Revision the saved record is at. */
export function revisionOf(record, info) {
  const r = record?.revision ?? info?.revision ?? record?.state?.revision
  if (Number.isSafeInteger(r) && r >= 0) return r
  throw Object.assign(new Error(`save: the record's revision must be a non-negative integer, got ${r}`), { code: 'invalid_state' })
}

/** UTF-8 bytes of `text` cut into pieces of at most `max` bytes (at least one piece). */
export function toChunks(text, max) {
  return splitBytes(encoder.encode(text), max)
}

/** `bytes` cut into copies of at most `max` bytes (at least one piece). */
export function splitBytes(bytes, max) {
  const out = []
  for (let i = 0; i < bytes.length; i += max) out.push(bytes.slice(i, i + max))
  if (out.length === 0) out.push(new Uint8Array(0))
  return out
}

/** Joins pieces made by `toChunks` back into the text. */
export function fromChunks(chunks) {
  return decoder.decode(joinBytes(chunks))
}

/** Joins byte pieces into one `Uint8Array`. */
export function joinBytes(chunks) {
  let n = 0
  for (const c of chunks) n += c.byteLength
  const all = new Uint8Array(n)
  let at = 0
  for (const c of chunks) { all.set(c instanceof Uint8Array ? c : new Uint8Array(c), at); at += c.byteLength }
  return all
}

export function utf8Length(text) {
  return encoder.encode(text).byteLength
}

/** A fresh generation tag (names one write's chunks). */
export function newGeneration() {
  if (globalThis.crypto?.randomUUID) return globalThis.crypto.randomUUID()
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`
}

export function memoryError(message) {
  return Object.assign(new Error(message), { code: 'memory_failed' })
}

/**
 * `pageSize` of a memory store's `enumerate` (M-4): absent -> 100; else an integer in
 * 1..=1000 (what `enumerateStore` and `MemoryIndex.enumerate` send after clamping), or
 * `invalid_config` naming the value.
 */
export function checkPageSize(pageSize, what) {
  if (pageSize === undefined || pageSize === null) return 100
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    throw Object.assign(new Error(`${what}: pageSize must be an integer in 1..1000 (records per page), got ${typeof pageSize === 'number' ? pageSize : typeof pageSize}`), { name: 'ContextCompactorError', code: 'invalid_config' })
  }
  return pageSize
}

export function checkSession(session, what) {
  if (typeof session !== 'string' || session === '') throw memoryError(`${what}: session must be a non-empty string`)
  return session
}

/**
 * Per-session `MemoryIndex` objects kept in memory: built on a session's first recall
 * (from its persisted snapshot when that matches the stored memory revision, else from
 * its records), reused while the stored revision stays put, evicted least recently used
 * beyond `maxIndexes`.
 */
export class IndexCache {
  constructor(MemoryIndex, maxIndexes = 32) {
    if (typeof MemoryIndex !== 'function' || typeof MemoryIndex.restore !== 'function') {
      throw Object.assign(new Error('memory stores need the MemoryIndex class of context-compactor (options.MemoryIndex)'), { code: 'invalid_config' })
    }
    if (!Number.isSafeInteger(maxIndexes) || maxIndexes < 1) {
      throw Object.assign(new Error(`maxIndexes must be a positive integer, got ${maxIndexes}`), { code: 'invalid_config' })
    }
    this.MemoryIndex = MemoryIndex
    this.max = maxIndexes
    this.map = new Map() // session -> { index, revision, dimension }
    this.loads = 0
  }

  /** Sessions whose index is in memory, least recently used first. */
  sessions() { return [...this.map.keys()] }

  peek(session, revision) {
    const e = this.map.get(session)
    if (!e || e.revision !== revision) return null
    this.map.delete(session)
    this.map.set(session, e)
    return e
  }

  set(session, entry) {
    this.map.delete(session)
    this.map.set(session, entry)
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value)
  }

  forget(session) { this.map.delete(session) }

  /** Builds an index from a snapshot, or from `entries` ([{ record, vector }]). */
  build(entries, snapshot) {
    if (snapshot) {
      try {
        const index = this.MemoryIndex.restore(snapshot instanceof Uint8Array ? snapshot : new Uint8Array(snapshot))
        return { index, fromSnapshot: true }
      } catch {
        // a snapshot of another engine version: rebuild from the records
      }
    }
    const withVectors = entries.filter((e) => e.vector)
    let index
    if (withVectors.length > 0) {
      if (withVectors.length !== entries.length) throw memoryError('a session mixes records with and without host vectors')
      index = new this.MemoryIndex({ dimension: withVectors[0].vector.length })
      index.addWithVectors(entries.map((e) => e.record), entries.map((e) => Array.from(e.vector)))
    } else {
      index = new this.MemoryIndex()
      if (entries.length) index.add(entries.map((e) => e.record))
    }
    return { index, fromSnapshot: false }
  }
}

/** Adds a put batch to a cached index (same rule as `build`). */
export function addToIndex(index, records, vectors) {
  if (vectors) index.addWithVectors(records, vectors.map((v) => Array.from(v)))
  else index.add(records)
}

/** Recall on one session's index: hits `{ id, score }` best first. */
export function recallIds(index, session, query, limit, vector) {
  if (index.embedder === 'host' && !vector) throw memoryError('this session holds host vectors: recall needs the query vector (recallFromStore with embed)')
  if (index.embedder !== 'host' && vector) throw memoryError('this session holds no host vectors: recall without embed')
  const opts = vector ? { limit, vector: Array.from(vector) } : { limit }
  return index.recall(session, query, opts).hits.map((h) => ({ id: h.id, score: h.score }))
}

export function checkRecords(records, vectors) {
  if (!Array.isArray(records)) throw memoryError('put: records must be an array')
  if (vectors != null && (!Array.isArray(vectors) || vectors.length !== records.length)) throw memoryError('put: vectors must be null or one vector per record')
  const by = new Map()
  records.forEach((r, i) => {
    if (!r || typeof r.id !== 'string' || typeof r.session !== 'string' || r.session === '') throw memoryError(`put: record ${i} needs a string id and session`)
    by.set(r.session, (by.get(r.session) ?? []).concat([{ record: r, vector: vectors ? vectors[i] : null }]))
  })
  return by
}
