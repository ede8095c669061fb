// Durable Object storage (I-5): sessions and memory in `ctx.storage` of a Durable
// Object (one object per session scales a chat backend out by session id). The
// compare-and-swap runs inside `storage.transaction()`, which the object applies all or
// nothing; works on KV-backed and SQLite-backed objects. Values are cut to 120 KiB (the
// KV-backed limit is 128 KiB a value); `put` / `delete` / `get` take 128 keys a call.
import { kvMemoryStore, kvSessionStore } from './kv.mjs'

// Key parts -> one string that sorts like the parts: numbers zero-padded, strings
// percent-encoded so the separator cannot appear inside a part.
const enc = (parts) => parts.map((p) => (typeof p === 'number' ? `n${String(p).padStart(16, '0')}` : `s${encodeURIComponent(p)}`)).join('/')
const dec = (key) => key.split('/').map((p) => (p[0] === 'n' ? Number(p.slice(1)) : decodeURIComponent(p.slice(1))))
const groups = (list, n) => Array.from({ length: Math.ceil(list.length / n) }, (_, i) => list.slice(i * n, i * n + n))

function driver(storage, prefix) {
  if (!storage || typeof storage.transaction !== 'function' || typeof storage.list !== 'function') {
    throw Object.assign(new Error('durableObjectStore: storage must be a Durable Object ctx.storage'), { code: 'invalid_config' })
  }
  const apply = async (target, sets, deletes) => {
    for (const g of groups(sets, 128)) await target.put(Object.fromEntries(g.map(([k, v]) => [enc(k), v])))
    for (const g of groups(deletes, 128)) await target.delete(g.map(enc))
  }
  return {
    prefix,
    maxValue: 120 * 1024,
    atomicBudget: { mutations: 4096, bytes: 16 * 1024 * 1024 },
    async get(key) {
      const v = await storage.get(enc(key))
      return v === undefined ? null : { value: v, stamp: v.v ?? null }
    },
    async getMany(keys) {
      const out = []
      for (const g of groups(keys, 128)) {
        const m = await storage.get(g.map(enc))
        for (const k of g) out.push(m.get(enc(k)))
      }
      return out
    },
    async list(p, { after, limit }) {
      const opts = { prefix: `${enc(p)}/`, limit }
      if (after) opts.startAfter = enc(after)
      const m = await storage.list(opts)
      return [...m].map(([k, value]) => ({ key: dec(k), value }))
    },
    atomic(check, sets, deletes) {
      return storage.transaction(async (txn) => {
        if (check) {
          const cur = await txn.get(enc(check.key))
          if ((cur === undefined ? null : cur.v ?? null) !== check.stamp) return false
        }
        await apply(txn, sets, deletes)
        return true
      })
    },
    write(sets, deletes) {
      return apply(storage, sets, deletes)
    },
  }
}

/**
 * `durableObjectStore(storage, sessionId, { prefix?, emptyTranscript? })` ->
 * `{ load, save, size }` for `new Session(compactor, store)` (W-5, W-8); `storage` is
 * the object's `ctx.storage`.
 */
export function durableObjectStore(storage, sessionId, options = {}) {
  return kvSessionStore(driver(storage, options.prefix ?? ['cc']), sessionId, options)
}

/**
 * `durableObjectMemory(storage, { MemoryIndex, maxIndexes?, prefix? })` -> `{ put,
 * search, enumerate, drop, loadedSessions }` (M-1..M-4).
 */
export function durableObjectMemory(storage, options = {}) {
  return kvMemoryStore(driver(storage, options.prefix ?? ['cc']), options)
}
