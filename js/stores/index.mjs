// context-compactor/stores (I-5): session stores (`{ load, save }` for `new Session`)
// and memory stores (the `store` hook of `compact`, and what `recallFromStore`,
// `enumerateStore` and `dropStoreScope` ask) on Durable Objects, Deno KV, IndexedDB and
// SQLite. Nothing here imports a platform module: each function takes the platform's
// own handle (ctx.storage, a Deno.Kv, an IDBDatabase, a SQLite database).
export { durableObjectStore, durableObjectMemory } from './durable-object.mjs'
export { denoKvStore, denoKvMemory } from './deno-kv.mjs'
export { indexedDbStore, indexedDbMemory, openIndexedDb, upgradeIndexedDb } from './indexeddb.mjs'
export { sqliteStore, sqliteMemory } from './sqlite.mjs'
