// IndexedDB (I-5): sessions and memory in the browser. Every save, memory write and
// scope drop is ONE readwrite transaction over the object stores it touches, which
// IndexedDB runs all or nothing and serializes against every other readwrite
// transaction on those stores (other tabs included): the revision compared in it
// cannot move before it commits. Values are structured clones (no size limit to cut
// to; the origin's quota applies).
import { STALE, IndexCache, addToIndex, checkPageSize, checkRecords, checkSession, emptyRecord, expectedOf, memoryError, recallIds, revisionOf } from './common.mjs'

const SESSIONS = 'cc-sessions'
const MEMORY = 'cc-memory'
const META = 'cc-memory-meta'
const MAX_SEQ = Number.MAX_SAFE_INTEGER

/** Creates the object stores the IndexedDB stores use; call it in `onupgradeneeded`. */
export function upgradeIndexedDb(db) {
  if (!db.objectStoreNames.contains(SESSIONS)) db.createObjectStore(SESSIONS)
  if (!db.objectStoreNames.contains(MEMORY)) db.createObjectStore(MEMORY, { keyPath: ['session', 'seq'] }).createIndex('byId', ['session', 'id'], { unique: true })
  if (!db.objectStoreNames.contains(META)) db.createObjectStore(META)
}

/** `openIndexedDb(indexedDB, name = 'context-compactor')` -> Promise of an `IDBDatabase` with the stores. */
export function openIndexedDb(factory = globalThis.indexedDB, name = 'context-compactor', version = 1) {
  return new Promise((resolve, reject) => {
    const r = factory.open(name, version)
    r.onupgradeneeded = () => upgradeIndexedDb(r.result)
    r.onsuccess = () => resolve(r.result)
    r.onerror = () => reject(r.error)
    r.onblocked = () => reject(Object.assign(new Error(`IndexedDB ${name} is blocked by another connection`), { code: 'load_failed' }))
  })
}

const req = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error) })
const done = (t) => new Promise((resolve, reject) => { t.oncomplete = () => resolve(); t.onabort = () => reject(t.error ?? new Error('transaction aborted')); t.onerror = () => reject(t.error) })

function checkDb(db) {
  if (!db || typeof db.transaction !== 'function' || !db.objectStoreNames) {
    throw Object.assign(new Error('indexedDbStore: db must be an IDBDatabase (see openIndexedDb)'), { code: 'invalid_config' })
  }
  for (const name of [SESSIONS, MEMORY, META]) {
    if (!db.objectStoreNames.contains(name)) throw Object.assign(new Error(`indexedDbStore: the database has no object store ${name} (create them with upgradeIndexedDb in onupgradeneeded)`), { code: 'invalid_config' })
  }
}

/**
 * `indexedDbStore(db, sessionId, { emptyTranscript? })` -> `{ load, save, size }` for
 * `new Session(compactor, store)` (W-5, W-8). `db` from `openIndexedDb()`.
 */
export function indexedDbStore(db, sessionId, options = {}) {
  checkDb(db)
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw Object.assign(new Error('sessionId must be a non-empty string'), { code: 'invalid_config' })
  }
  return {
    /** The session's id (the AI SDK helper scopes memory and artifact handles by it). */
    sessionId,
    async load() {
      const row = await req(db.transaction(SESSIONS, 'readonly').objectStore(SESSIONS).get(sessionId))
      if (!row) return emptyRecord(options)
      return { ...row.record, revision: row.revision }
    },
    /** Reads the stored revision and writes in the same readwrite transaction. */
    async save(record, info) {
      const expected = expectedOf(record, info)
      const revision = revisionOf(record, info)
      const t = db.transaction(SESSIONS, 'readwrite')
      const finished = done(t)
      const store = t.objectStore(SESSIONS)
      const row = await req(store.get(sessionId))
      const current = row ? row.revision : 0
      if (current !== expected) {
        await finished
        return STALE
      }
      store.put({ revision, record: { ...record, revision } }, sessionId)
      await finished
      return { ok: true, revision }
    },
    async size() {
      const row = await req(db.transaction(SESSIONS, 'readonly').objectStore(SESSIONS).get(sessionId))
      return row ? new TextEncoder().encode(JSON.stringify(row.record)).byteLength : 0
    },
  }
}

/**
 * `indexedDbMemory(db, { MemoryIndex, maxIndexes? })` -> `{ put, search, enumerate,
 * drop, loadedSessions }` (M-1..M-4).
 */
export function indexedDbMemory(db, options = {}) {
  checkDb(db)
  const cache = new IndexCache(options.MemoryIndex, options.maxIndexes ?? 32)
  const scope = (s, after = -1) => IDBKeyRange.bound([s, after], [s, MAX_SEQ], true, false)

  async function putSession(s, entries) {
    const t = db.transaction([MEMORY, META], 'readwrite')
    const finished = done(t)
    const mem = t.objectStore(MEMORY)
    const metas = t.objectStore(META)
    let cached = null
    try {
      const m = (await req(metas.get(s))) ?? { revision: 0, nextSeq: 0, count: 0, snapshot: null, snapshotRevision: null }
      for (const { record, vector } of entries) {
        let key = await req(mem.index('byId').getKey([s, record.id]))
        if (!key) { key = [s, m.nextSeq++]; m.count++ }
        mem.put({ session: s, seq: key[1], id: record.id, record, vector: vector ? Array.from(vector) : null })
      }
      cached = cache.peek(s, m.revision)
      m.revision++
      if (cached) {
        addToIndex(cached.index, entries.map((e) => e.record), entries[0].vector ? entries.map((e) => e.vector) : null)
        m.snapshot = cached.index.snapshot()
        m.snapshotRevision = m.revision
      }
      metas.put(m, s)
      await finished
      if (cached) cache.set(s, { index: cached.index, revision: m.revision })
    } catch (err) {
      cache.forget(s)
      try { t.abort() } catch { /* already finished */ }
      await finished.catch(() => {})
      throw err
    }
  }

  async function indexOf(s) {
    const t = db.transaction([MEMORY, META], 'readonly')
    const m = await req(t.objectStore(META).get(s))
    if (!m || m.count === 0) return null
    const hit = cache.peek(s, m.revision)
    if (hit) return hit
    let built = m.snapshot && m.snapshotRevision === m.revision ? cache.build(null, m.snapshot) : null
    if (!built || !built.fromSnapshot) {
      const rows = await req(t.objectStore(MEMORY).getAll(scope(s)))
      built = cache.build(rows.map((r) => ({ record: r.record, vector: r.vector })), null)
      // keep the rebuilt index for the next page load, if nothing moved meanwhile
      const w = db.transaction(META, 'readwrite')
      const wdone = done(w)
      const cur = await req(w.objectStore(META).get(s))
      if (cur && cur.revision === m.revision) w.objectStore(META).put({ ...cur, snapshot: built.index.snapshot(), snapshotRevision: m.revision }, s)
      await wdone
    }
    cache.loads++
    const entry = { index: built.index, revision: m.revision }
    cache.set(s, entry)
    return entry
  }

  return {
    async put(records, vectors) {
      for (const [s, entries] of checkRecords(records, vectors)) await putSession(s, entries)
    },
    async search({ session, query, vector, limit }) {
      const s = checkSession(session, 'search')
      const idx = await indexOf(s)
      if (!idx) return []
      const hits = recallIds(idx.index, s, String(query ?? ''), limit ?? 5, vector)
      const byId = db.transaction(MEMORY, 'readonly').objectStore(MEMORY).index('byId')
      const rows = await Promise.all(hits.map((h) => req(byId.get([s, h.id]))))
      return hits.flatMap((h, i) => (rows[i] ? [{ record: rows[i].record, score: h.score }] : []))
    },
    async enumerate({ session, pageToken, pageSize }) {
      const s = checkSession(session, 'enumerate')
      const size = checkPageSize(pageSize, 'enumerate')
      const after = pageToken ? Number(pageToken) : -1
      if (!Number.isSafeInteger(after)) throw memoryError(`enumerate: bad pageToken ${JSON.stringify(pageToken)}`)
      const rows = await req(db.transaction(MEMORY, 'readonly').objectStore(MEMORY).getAll(scope(s, after), size + 1))
      return { records: rows.slice(0, size).map((r) => r.record), next: rows.length > size ? String(rows[size - 1].seq) : null }
    },
    /** One readwrite transaction deletes the scope's records and resets its meta. */
    async drop({ session }) {
      const s = checkSession(session, 'drop')
      const t = db.transaction([MEMORY, META], 'readwrite')
      const finished = done(t)
      const n = await req(t.objectStore(MEMORY).count(scope(s)))
      t.objectStore(MEMORY).delete(scope(s))
      const m = await req(t.objectStore(META).get(s))
      if (m) t.objectStore(META).put({ revision: m.revision + 1, nextSeq: m.nextSeq, count: 0, snapshot: null, snapshotRevision: null }, s)
      await finished
      cache.forget(s)
      return n
    },
    loadedSessions() { return cache.sessions() },
    get indexLoads() { return cache.loads },
  }
}
