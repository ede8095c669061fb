// Session and memory stores over an ordered key-value store with an atomic commit
// (I-5): Deno KV (`atomic().check().set()`) and Durable Object storage
// (`storage.transaction`). Each platform module hands in a small driver:
//
//   driver = {
//     prefix: key parts every key starts with,
//     maxValue: bytes per value (chunks are cut to it),
//     atomicBudget: { mutations, bytes } one atomic commit may hold,
//     get(key) -> { value, stamp } | null,           stamp: what `atomic` checks
//     getMany(keys) -> values (undefined when absent),
//     list(prefix, { after?, limit }) -> [{ key, value }] in key order,
//     atomic(check | null, sets: [key, value][], deletes: key[]) -> boolean
//        (all or nothing; false when `check.key` no longer has `check.stamp`),
//     write(sets, deletes) -> void                    (non-atomic, for staging)
//   }
//
// Layout (key parts after the prefix):
//   ['session', id]                      -> { revision, gen, chunks, bytes, v }
//   ['session', id, gen, i]              -> Uint8Array piece i of the record's JSON
//   ['memory', s]                        -> { revision, gen, nextSeq, count, snap, v }
//   ['memory', s, gen, 'r', seq]         -> { record, vector }
//   ['memory', s, gen, 'i', id]          -> seq
//   ['memory', s, gen, 's', rev, i]      -> Uint8Array piece i of the index snapshot
// A save writes its pieces under a fresh generation and swaps the meta entry in the
// atomic commit that checks it (the compare-and-swap); the old pieces are deleted in
// that commit when they fit, else right after (they are unreachable by then).

import { STALE, IndexCache, addToIndex, checkPageSize, checkRecords, checkSession, emptyRecord, expectedOf, fromChunks, joinBytes, memoryError, splitBytes, newGeneration, recallIds, revisionOf, toChunks } from './common.mjs'

const range = (n) => Array.from({ length: n }, (_, i) => i)

/** Rough bytes of one mutation (key parts + value), for the atomic budget. */
function cost(key, value) {
  let n = 16
  for (const p of key) n += typeof p === 'string' ? p.length * 3 + 4 : 12
  if (value instanceof Uint8Array) n += value.byteLength
  else if (value !== undefined) n += JSON.stringify(value).length * 3
  return n
}

/**
 * One compare-and-swap commit of `finalSets` checked on `check`, with `staged` entries
 * (under keys nobody reads yet) and `deletes` (of entries nobody reads after the swap).
 * When everything fits one atomic commit it is one; else the staged entries are written
 * first and removed again on refusal, and the deletes follow the swap.
 */
async function casCommit(driver, check, staged, finalSets, deletes) {
  const budget = driver.atomicBudget
  const all = [...staged, ...finalSets]
  const bytes = all.reduce((n, [k, v]) => n + cost(k, v), 0) + deletes.reduce((n, k) => n + cost(k), 0)
  if (all.length + deletes.length <= budget.mutations && bytes <= budget.bytes) {
    return driver.atomic(check, all, deletes)
  }
  await writeBatched(driver, staged, [])
  const ok = await driver.atomic(check, finalSets, [])
  if (!ok) {
    await writeBatched(driver, [], staged.map(([k]) => k))
    return false
  }
  await writeBatched(driver, [], deletes)
  return true
}

/** Writes `sets` then `deletes` in atomic groups within the budget (each group whole). */
async function writeBatched(driver, sets, deletes) {
  const budget = driver.atomicBudget
  let group = []
  let bytes = 0
  const flush = async () => {
    if (group.length === 0) return
    const s = group.filter((m) => m.length === 2)
    const d = group.filter((m) => m.length === 1).map(([k]) => k)
    await driver.write(s, d)
    group = []
    bytes = 0
  }
  for (const m of [...sets, ...deletes.map((k) => [k])]) {
    const c = cost(m[0], m[1])
    if (group.length + 1 > budget.mutations || bytes + c > budget.bytes) await flush()
    group.push(m)
    bytes += c
  }
  await flush()
}

async function listAll(driver, prefix) {
  const out = []
  let after
  for (;;) {
    const page = await driver.list(prefix, { after, limit: 500 })
    out.push(...page)
    if (page.length < 500) return out
    after = page[page.length - 1].key
  }
}

/** `{ load, save }` for `new Session(compactor, store)` over a driver (W-5, W-8). */
export function kvSessionStore(driver, sessionId, options = {}) {
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw Object.assign(new Error('sessionId must be a non-empty string'), { code: 'invalid_config' })
  }
  const metaKey = [...driver.prefix, 'session', sessionId]
  const pieceKeys = (m) => range(m.chunks).map((i) => [...metaKey, m.gen, i])
  return {
    /** The session's id (the AI SDK helper scopes memory and artifact handles by it). */
    sessionId,
    /** The stored record, or the empty one (revision 0) for a session never written. */
    async load() {
      for (let attempt = 0; attempt < 8; attempt++) {
        const m = await driver.get(metaKey)
        if (!m) return emptyRecord(options)
        const pieces = await driver.getMany(pieceKeys(m.value))
        // a newer save swapped the meta and deleted these pieces in between: read again
        if (pieces.some((p) => p == null)) continue
        const record = JSON.parse(fromChunks(pieces))
        record.revision = m.value.revision
        return record
      }
      throw Object.assign(new Error(`load: session ${JSON.stringify(sessionId)} kept changing while being read`), { code: 'load_failed' })
    },
    /**
     * Writes `record` when the stored revision is still `expectedRevision`, else answers
     * `{ ok: false, reason: 'stale_revision' }` and writes nothing. The atomic commit
     * checks the meta entry that was read, so a save racing this one between the read
     * and the commit makes the commit fail (compare-and-swap by the store).
     */
    async save(record, info) {
      const expected = expectedOf(record, info)
      const revision = revisionOf(record, info)
      const m = await driver.get(metaKey)
      const current = m ? m.value.revision : 0
      if (current !== expected) return STALE
      const gen = newGeneration()
      const text = JSON.stringify({ ...record, revision })
      const pieces = toChunks(text, driver.maxValue)
      const staged = pieces.map((p, i) => [[...metaKey, gen, i], p])
      const meta = { revision, gen, chunks: pieces.length, bytes: pieces.reduce((n, p) => n + p.byteLength, 0), v: (m?.value.v ?? 0) + 1 }
      const ok = await casCommit(driver, { key: metaKey, stamp: m ? m.stamp : null }, staged, [[metaKey, meta]], m ? pieceKeys(m.value) : [])
      return ok ? { ok: true, revision } : STALE
    },
    /** Bytes the stored record takes (its JSON text), 0 when never written. */
    async size() {
      const m = await driver.get(metaKey)
      return m ? m.value.bytes : 0
    },
  }
}

/**
 * Memory store over a driver: the `store` hook of `compact` (`put`) and what
 * `recallFromStore` / `enumerateStore` / `dropStoreScope` ask (`search`, `enumerate`,
 * `drop`), M-1..M-4.
 */
export function kvMemoryStore(driver, options = {}) {
  const cache = new IndexCache(options.MemoryIndex, options.maxIndexes ?? 32)
  const metaKey = (s) => [...driver.prefix, 'memory', s]
  const recKey = (s, gen, seq) => [...driver.prefix, 'memory', s, gen, 'r', seq]
  const idKey = (s, gen, id) => [...driver.prefix, 'memory', s, gen, 'i', id]
  const snapKeys = (s, m) => (m.snap ? range(m.snap.chunks).map((i) => [...driver.prefix, 'memory', s, m.gen, 's', m.snap.revision, i]) : [])
  const fresh = () => ({ revision: 0, gen: newGeneration(), nextSeq: 0, count: 0, snap: null, v: 0 })

  /** Snapshot pieces of `index` staged for meta `m` at `revision`. */
  function snapshotSets(s, m, index, revision) {
    const pieces = splitBytes(index.snapshot(), driver.maxValue)
    const snap = { revision, chunks: pieces.length }
    return { snap, sets: pieces.map((p, i) => [[...driver.prefix, 'memory', s, m.gen, 's', revision, i], p]) }
  }

  async function putSession(s, entries) {
    for (let attempt = 0; attempt < 16; attempt++) {
      const got = await driver.get(metaKey(s))
      const m = got ? got.value : fresh()
      const seqs = await driver.getMany(entries.map((e) => idKey(s, m.gen, e.record.id)))
      let nextSeq = m.nextSeq
      let count = m.count
      const sets = []
      const seen = new Map()
      entries.forEach((e, i) => {
        let seq = seqs[i] ?? seen.get(e.record.id)
        if (seq == null) {
          seq = nextSeq++
          count++
          seen.set(e.record.id, seq)
          sets.push([idKey(s, m.gen, e.record.id), seq])
        }
        sets.push([recKey(s, m.gen, seq), { record: e.record, vector: e.vector ? Array.from(e.vector) : null }])
      })
      const revision = m.revision + 1
      // the index of this session is kept current (and its snapshot with it) only when
      // it is already loaded; otherwise the first recall builds it from the records
      const cached = cache.peek(s, m.revision)
      let snap = null
      let staged = []
      if (cached) {
        try {
          addToIndex(cached.index, entries.map((e) => e.record), entries[0].vector ? entries.map((e) => e.vector) : null)
          ;({ snap, sets: staged } = snapshotSets(s, m, cached.index, revision))
        } catch (err) {
          cache.forget(s)
          throw err
        }
      }
      const meta = { ...m, revision, nextSeq, count, snap, v: m.v + 1 }
      const ok = await casCommit(driver, { key: metaKey(s), stamp: got ? got.stamp : null }, [...sets, ...staged], [[metaKey(s), meta]], snapKeys(s, m))
      if (ok) {
        if (cached) cache.set(s, { index: cached.index, revision })
        return
      }
      cache.forget(s)
    }
    throw memoryError(`put: session ${JSON.stringify(s)} kept changing under concurrent writers`)
  }

  /** The session's index at the stored revision: cached, restored, or rebuilt. */
  async function indexOf(s) {
    const got = await driver.get(metaKey(s))
    if (!got || got.value.count === 0) return null
    const m = got.value
    const hit = cache.peek(s, m.revision)
    if (hit) return { ...hit, meta: m }
    let built = null
    if (m.snap && m.snap.revision === m.revision) {
      const pieces = await driver.getMany(snapKeys(s, m))
      if (pieces.every((p) => p != null)) built = cache.build(null, joinBytes(pieces))
      if (built && !built.fromSnapshot) built = null
    }
    if (!built) {
      const rows = await listAll(driver, [...driver.prefix, 'memory', s, m.gen, 'r'])
      built = cache.build(rows.map((r) => r.value), null)
      // persist the rebuilt index for the next process (checked: only if nothing moved)
      const { snap, sets } = snapshotSets(s, m, built.index, m.revision)
      await casCommit(driver, { key: metaKey(s), stamp: got.stamp }, sets, [[metaKey(s), { ...m, snap, v: m.v + 1 }]], snapKeys(s, m))
    }
    cache.loads++
    const entry = { index: built.index, revision: m.revision }
    cache.set(s, entry)
    return { ...entry, meta: m }
  }

  return {
    /** `put(records, vectors | null)`: the `store` hook of `compact` (M-1). */
    async put(records, vectors) {
      for (const [s, entries] of checkRecords(records, vectors)) {
        // a batch too large for one atomic commit goes in several, each whole
        const groups = []
        let g = []
        let bytes = 0
        for (const e of entries) {
          const c = cost(['r'], e.record) + (e.vector ? e.vector.length * 20 : 0)
          if (g.length && (g.length * 2 + 8 > driver.atomicBudget.mutations || bytes + c > driver.atomicBudget.bytes / 2)) { groups.push(g); g = []; bytes = 0 }
          g.push(e)
          bytes += c
        }
        if (g.length) groups.push(g)
        for (const group of groups) await putSession(s, group)
      }
    },
    /** `search({ session, query, vector?, limit })` -> `[{ record, score }]` (M-2). */
    async search({ session, query, vector, limit }) {
      const s = checkSession(session, 'search')
      const idx = await indexOf(s)
      if (!idx) return []
      const hits = recallIds(idx.index, s, String(query ?? ''), limit ?? 5, vector)
      const seqs = await driver.getMany(hits.map((h) => idKey(s, idx.meta.gen, h.id)))
      const rows = await driver.getMany(seqs.map((q) => recKey(s, idx.meta.gen, q ?? -1)))
      return hits.flatMap((h, i) => (rows[i] ? [{ record: rows[i].record, score: h.score }] : []))
    },
    /** `enumerate({ session, pageToken, pageSize })` -> `{ records, next }` (M-4). */
    async enumerate({ session, pageToken, pageSize }) {
      const s = checkSession(session, 'enumerate')
      const got = await driver.get(metaKey(s))
      if (!got) return { records: [], next: null }
      const m = got.value
      let after
      if (pageToken) {
        const [gen, seq] = String(pageToken).split('~')
        if (gen !== m.gen || !/^\d+$/.test(seq ?? '')) return { records: [], next: null }
        after = recKey(s, m.gen, Number(seq))
      }
      const size = checkPageSize(pageSize, 'enumerate')
      const page = await driver.list([...driver.prefix, 'memory', s, m.gen, 'r'], { after, limit: size + 1 })
      const records = page.slice(0, size).map((r) => r.value.record)
      const next = page.length > size ? `${m.gen}~${page[size - 1].key[page[size - 1].key.length - 1]}` : null
      return { records, next }
    },
    /** `drop({ session })` -> records removed, all at once (M-4): one atomic swap. */
    async drop({ session }) {
      const s = checkSession(session, 'drop')
      for (let attempt = 0; attempt < 16; attempt++) {
        const got = await driver.get(metaKey(s))
        if (!got) return 0
        const m = got.value
        const next = { ...fresh(), revision: m.revision + 1, v: m.v + 1 }
        if (await driver.atomic({ key: metaKey(s), stamp: got.stamp }, [[metaKey(s), next]], [])) {
          cache.forget(s)
          // the old generation is unreachable from here on; clear it away
          const old = await listAll(driver, [...driver.prefix, 'memory', s, m.gen])
          await writeBatched(driver, [], old.map((r) => r.key))
          return m.count
        }
      }
      throw memoryError(`drop: session ${JSON.stringify(s)} kept changing under concurrent writers`)
    },
    /** Sessions whose index is loaded in this isolate, least recently used first. */
    loadedSessions() { return cache.sessions() },
    /** How many indexes were loaded (restored or rebuilt) so far. */
    get indexLoads() { return cache.loads },
  }
}
