// Deno KV (I-5): sessions and memory in a `Deno.Kv` (`await Deno.openKv(path)`). The
// compare-and-swap is Deno KV's own `atomic().check({ key, versionstamp })`. Values are
// cut to 60 KiB (the limit is 64 KiB a value); one atomic commit is kept under 900
// mutations and 700 KiB (limits: 1,000 and 800 KiB); `getMany` reads 10 keys a call.
import { kvMemoryStore, kvSessionStore } from './kv.mjs'

const sameKey = (a, b) => a.length === b.length && a.every((p, i) => p === b[i])

function driver(kv, prefix) {
  if (!kv || typeof kv.atomic !== 'function' || typeof kv.getMany !== 'function') {
    throw Object.assign(new Error('denoKvStore: kv must be a Deno.Kv (await Deno.openKv())'), { code: 'invalid_config' })
  }
  const op = (check, sets, deletes) => {
    const a = kv.atomic()
    if (check) a.check({ key: check.key, versionstamp: check.stamp })
    for (const [k, v] of sets) a.set(k, v)
    for (const k of deletes) a.delete(k)
    return a.commit()
  }
  return {
    prefix,
    maxValue: 60 * 1024,
    atomicBudget: { mutations: 900, bytes: 700 * 1024 },
    async get(key) {
      const e = await kv.get(key)
      return e.versionstamp === null ? null : { value: e.value, stamp: e.versionstamp }
    },
    async getMany(keys) {
      const out = []
      for (let i = 0; i < keys.length; i += 10) {
        for (const e of await kv.getMany(keys.slice(i, i + 10))) out.push(e.versionstamp === null ? undefined : e.value)
      }
      return out
    },
    async list(p, { after, limit }) {
      const out = []
      const it = kv.list(after ? { prefix: p, start: after } : { prefix: p }, { limit: after ? limit + 1 : limit })
      for await (const e of it) if (!after || !sameKey(e.key, after)) out.push({ key: e.key, value: e.value })
      return out.slice(0, limit)
    },
    async atomic(check, sets, deletes) {
      return (await op(check, sets, deletes)).ok
    },
    async write(sets, deletes) {
      const r = await op(null, sets, deletes)
      if (!r.ok) throw Object.assign(new Error('Deno KV refused an unchecked write'), { code: 'save_failed' })
    },
  }
}

/**
 * `denoKvStore(kv, sessionId, { prefix?, emptyTranscript? })` -> `{ load, save, size }`
 * for `new Session(compactor, store)` (W-5, W-8). Keys start with `prefix` (default
 * `['context-compactor']`), then `'session', sessionId`.
 */
export function denoKvStore(kv, sessionId, options = {}) {
  return kvSessionStore(driver(kv, options.prefix ?? ['context-compactor']), sessionId, options)
}

/**
 * `denoKvMemory(kv, { MemoryIndex, maxIndexes?, prefix? })` -> `{ put, search,
 * enumerate, drop, loadedSessions }`: the `store` hook of `compact` and the store of
 * `recallFromStore` / `enumerateStore` / `dropStoreScope` (M-1..M-4).
 */
export function denoKvMemory(kv, options = {}) {
  return kvMemoryStore(driver(kv, options.prefix ?? ['context-compactor']), options)
}
