// SQLite (I-5): sessions and memory in a SQLite database, `better-sqlite3` (12.x) or
// `node:sqlite` (`DatabaseSync`) where present. A save is ONE statement whose WHERE
// clause is the compare-and-swap (`... WHERE revision = expectedRevision`); memory
// writes and scope drops are transactions. Memory records live in `cc_memory` with an
// FTS5 index (`cc_memory_fts`) for the lexical side of recall. No chunking: a SQLite
// text value holds up to 1e9 bytes by default.
import { STALE, IndexCache, addToIndex, checkPageSize, checkRecords, checkSession, emptyRecord, expectedOf, memoryError, recallIds, revisionOf } from './common.mjs'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS cc_sessions (id TEXT PRIMARY KEY, revision INTEGER NOT NULL, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cc_memory (seq INTEGER PRIMARY KEY, session TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL, vector TEXT, UNIQUE (session, id));
CREATE TABLE IF NOT EXISTS cc_memory_meta (session TEXT PRIMARY KEY, revision INTEGER NOT NULL, snapshot BLOB, snapshot_revision INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS cc_memory_fts USING fts5(content, session UNINDEXED);
`

const ready = new WeakSet()

function prepareDb(db) {
  if (!db || typeof db.prepare !== 'function' || typeof db.exec !== 'function') {
    throw Object.assign(new Error('sqliteStore: db must be a better-sqlite3 Database or a node:sqlite DatabaseSync'), { code: 'invalid_config' })
  }
  if (!ready.has(db)) {
    db.exec(SCHEMA)
    ready.add(db)
  }
  const cache = new Map()
  const stmt = (sql) => {
    let s = cache.get(sql)
    if (!s) { s = db.prepare(sql); cache.set(sql, s) }
    return s
  }
  // better-sqlite3 has db.transaction(fn); node:sqlite has only BEGIN / COMMIT
  const tx = typeof db.transaction === 'function'
    ? (fn) => db.transaction(fn).immediate()
    : (fn) => {
      db.exec('BEGIN IMMEDIATE')
      try { const r = fn(); db.exec('COMMIT'); return r } catch (e) { db.exec('ROLLBACK'); throw e }
    }
  return { stmt, tx }
}

const toBlob = (bytes) => (globalThis.Buffer ? globalThis.Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes)

/**
 * `sqliteStore(db, sessionId, { emptyTranscript? })` -> `{ load, save, size }` for
 * `new Session(compactor, store)` (W-5, W-8). Row `cc_sessions(id, revision, record)`.
 */
export function sqliteStore(db, sessionId, options = {}) {
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw Object.assign(new Error('sessionId must be a non-empty string'), { code: 'invalid_config' })
  }
  const { stmt } = prepareDb(db)
  return {
    /** The session's id (the AI SDK helper scopes memory and artifact handles by it). */
    sessionId,
    load() {
      const row = stmt('SELECT revision, record FROM cc_sessions WHERE id = ?').get(sessionId)
      if (!row) return emptyRecord(options)
      const record = JSON.parse(row.record)
      record.revision = Number(row.revision)
      return record
    },
    /** One statement: writes only while the row is at `expectedRevision` (or absent at 0). */
    save(record, info) {
      const expected = expectedOf(record, info)
      const revision = revisionOf(record, info)
      const text = JSON.stringify({ ...record, revision })
      const r = expected === 0
        ? stmt(`INSERT INTO cc_sessions (id, revision, record) VALUES (?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, record = excluded.record WHERE cc_sessions.revision = 0`).run(sessionId, revision, text)
        : stmt('UPDATE cc_sessions SET revision = ?, record = ? WHERE id = ? AND revision = ?').run(revision, text, sessionId, expected)
      return Number(r.changes) === 1 ? { ok: true, revision } : STALE
    },
    size() {
      const row = stmt('SELECT length(CAST(record AS BLOB)) AS n FROM cc_sessions WHERE id = ?').get(sessionId)
      return row ? Number(row.n) : 0
    },
  }
}

/** FTS5 query matching any word of `query` (each quoted, so no operator syntax leaks). */
function ftsQuery(query) {
  const words = String(query).match(/[\p{L}\p{N}_]+/gu) ?? []
  return [...new Set(words)].slice(0, 64).map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ')
}

/**
 * `sqliteMemory(db, { MemoryIndex, maxIndexes? })` -> `{ put, search, enumerate, drop,
 * loadedSessions }` (M-1..M-4). `search` fuses the session index's ranking with the
 * FTS5 (bm25) ranking by reciprocal rank (score = sum of 1 / (60 + rank)); with a
 * query vector it ranks by the host vectors alone on the index side.
 */
export function sqliteMemory(db, options = {}) {
  const { stmt, tx } = prepareDb(db)
  const cache = new IndexCache(options.MemoryIndex, options.maxIndexes ?? 32)
  const meta = (s) => stmt('SELECT revision, snapshot, snapshot_revision FROM cc_memory_meta WHERE session = ?').get(s)

  function putSession(s, entries) {
    try {
      putTx(s, entries)
    } catch (err) {
      cache.forget(s) // the cached index may hold records the rollback took back
      throw err
    }
  }

  function putTx(s, entries) {
    tx(() => {
      const before = meta(s)
      for (const { record, vector } of entries) {
        const text = JSON.stringify(record)
        const vec = vector ? JSON.stringify(Array.from(vector)) : null
        const old = stmt('SELECT seq FROM cc_memory WHERE session = ? AND id = ?').get(s, record.id)
        let seq
        if (old) {
          seq = old.seq
          stmt('UPDATE cc_memory SET record = ?, vector = ? WHERE seq = ?').run(text, vec, seq)
          stmt('DELETE FROM cc_memory_fts WHERE rowid = ?').run(seq)
        } else {
          seq = stmt('INSERT INTO cc_memory (session, id, record, vector) VALUES (?, ?, ?, ?)').run(s, record.id, text, vec).lastInsertRowid
        }
        stmt('INSERT INTO cc_memory_fts (rowid, content, session) VALUES (?, ?, ?)').run(seq, record.content ?? '', s)
      }
      const revision = before ? Number(before.revision) + 1 : 1
      stmt(`INSERT INTO cc_memory_meta (session, revision) VALUES (?, ?)
            ON CONFLICT (session) DO UPDATE SET revision = excluded.revision`).run(s, revision)
      const cached = before ? cache.peek(s, Number(before.revision)) : null
      if (cached) {
        addToIndex(cached.index, entries.map((e) => e.record), entries[0].vector ? entries.map((e) => e.vector) : null)
        stmt('UPDATE cc_memory_meta SET snapshot = ?, snapshot_revision = ? WHERE session = ?').run(toBlob(cached.index.snapshot()), revision, s)
        cache.set(s, { index: cached.index, revision })
      }
    })
  }

  function indexOf(s) {
    const m = meta(s)
    if (!m) return null
    const revision = Number(m.revision)
    const hit = cache.peek(s, revision)
    if (hit) return hit
    let built = m.snapshot && Number(m.snapshot_revision) === revision ? cache.build(null, new Uint8Array(m.snapshot)) : null
    if (!built || !built.fromSnapshot) {
      const rows = stmt('SELECT record, vector FROM cc_memory WHERE session = ? ORDER BY seq').all(s)
      if (rows.length === 0) return null
      built = cache.build(rows.map((r) => ({ record: JSON.parse(r.record), vector: r.vector ? JSON.parse(r.vector) : null })), null)
      stmt('UPDATE cc_memory_meta SET snapshot = ?, snapshot_revision = ? WHERE session = ? AND revision = ?').run(toBlob(built.index.snapshot()), revision, s, revision)
    }
    cache.loads++
    const entry = { index: built.index, revision }
    cache.set(s, entry)
    return entry
  }

  return {
    put(records, vectors) {
      for (const [s, entries] of checkRecords(records, vectors)) putSession(s, entries)
    },
    search({ session, query, vector, limit }) {
      const s = checkSession(session, 'search')
      const n = limit ?? 5
      const idx = indexOf(s)
      if (!idx) return []
      const byId = stmt('SELECT record FROM cc_memory WHERE session = ? AND id = ?')
      const ranked = recallIds(idx.index, s, String(query ?? ''), n, vector).map((h) => h.id)
      const q = ftsQuery(query ?? '')
      const lexical = q
        ? stmt(`SELECT m.id AS id FROM cc_memory_fts JOIN cc_memory m ON m.seq = cc_memory_fts.rowid
                WHERE cc_memory_fts MATCH ? AND cc_memory_fts.session = ? ORDER BY bm25(cc_memory_fts), m.seq LIMIT ?`).all(q, s, n).map((r) => r.id)
        : []
      const score = new Map()
      for (const list of [ranked, lexical]) list.forEach((id, rank) => score.set(id, (score.get(id) ?? 0) + 1 / (60 + rank + 1)))
      return [...score].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n).flatMap(([id, sc]) => {
        const row = byId.get(s, id)
        return row ? [{ record: JSON.parse(row.record), score: sc }] : []
      })
    },
    enumerate({ session, pageToken, pageSize }) {
      const s = checkSession(session, 'enumerate')
      const size = checkPageSize(pageSize, 'enumerate')
      const after = pageToken ? Number(pageToken) : 0
      if (!Number.isSafeInteger(after) || after < 0) throw memoryError(`enumerate: bad pageToken ${JSON.stringify(pageToken)}`)
      const rows = stmt('SELECT seq, record FROM cc_memory WHERE session = ? AND seq > ? ORDER BY seq LIMIT ?').all(s, after, size + 1)
      return { records: rows.slice(0, size).map((r) => JSON.parse(r.record)), next: rows.length > size ? String(rows[size - 1].seq) : null }
    },
    /** One transaction removes the records, their FTS rows and the index snapshot. */
    drop({ session }) {
      const s = checkSession(session, 'drop')
      const n = tx(() => {
        stmt('DELETE FROM cc_memory_fts WHERE rowid IN (SELECT seq FROM cc_memory WHERE session = ?)').run(s)
        const removed = Number(stmt('DELETE FROM cc_memory WHERE session = ?').run(s).changes)
        stmt('UPDATE cc_memory_meta SET revision = revision + 1, snapshot = NULL, snapshot_revision = NULL WHERE session = ?').run(s)
        return removed
      })
      cache.forget(s)
      return n
    },
    loadedSessions() { return cache.sessions() },
    get indexLoads() { return cache.loads },
  }
}
