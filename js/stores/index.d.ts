// Types of context-compactor/stores (I-5). The platform handles are typed structurally
// (only what the adapters call), so no platform type package is needed.
import type { HostStorePage, HostStoreRecord, HostStoreSearchRequest, HostStoreHit, MemoryIndex, MemoryRecord, SessionRecord, SessionRecordInput, SaveInfo } from '../index.js'

/** What a store answers `save`: `{ ok: true, revision }`, or the refusal of a stale save
 * (W-5): `{ ok: false, reason: 'stale_revision' }`, nothing written. */
export type SaveAnswer = { ok: true; revision: number } | { ok: false; reason: 'stale_revision' }

/** `{ load, save }` for `new Session(compactor, store)` (W-5, W-8), plus `size()`. */
export interface StoreSession {
  /** The id the store was opened with (`sqliteStore(db, sessionId)`, ...): the AI SDK
   * helper's `sessionId` (memory scope, artifact handle tag) when none is given (M-2, M-4). */
  readonly sessionId: string
  /** The stored record; a session never written loads as `{ transcript: [] (or
   * options.emptyTranscript), state: null, revision: 0 }`. */
  load(): Promise<SessionRecordInput & { revision: number }> | (SessionRecordInput & { revision: number })
  /** Writes `record` only while the stored revision is `info.expectedRevision` (the
   * store's atomic primitive compares and swaps); a session at revision 0 that was never
   * written is created by it. */
  save(record: SessionRecord, info: SaveInfo): Promise<SaveAnswer> | SaveAnswer
  /** UTF-8 bytes of the stored record's JSON (0 when never written). */
  size(): Promise<number> | number
}

/** Options of every session store. */
export interface StoreOptions {
  /** What a session never written loads as (default `[]`); a value (cloned) or a
   * function returning one, e.g. `{ messages: [] }` for an envelope format. */
  emptyTranscript?: unknown
}

/** Options of every memory store. */
export interface MemoryStoreOptions {
  /** The `MemoryIndex` class of the context-compactor build in use (required). */
  MemoryIndex: typeof MemoryIndex
  /** Session indexes kept in memory at once, least recently used evicted first (default 32). */
  maxIndexes?: number
}

/** A memory store: the `store` hook of `compact` and the store of `recallFromStore`,
 * `enumerateStore` and `dropStoreScope` (M-1..M-4). */
export interface StoreMemory {
  /** Persists the batch (records and host vectors) before the compaction commits. */
  put(records: ReadonlyArray<MemoryRecord | HostStoreRecord>, vectors: number[][] | null): Promise<void> | void
  /** One session's best records for `query` (its index loaded on first use). */
  search(request: HostStoreSearchRequest): Promise<HostStoreHit[]> | HostStoreHit[]
  /** One page of a session's records in insertion order; `next` null on the last page. */
  enumerate(request: { session: string; pageToken: string | null; pageSize: number }): Promise<HostStorePage> | HostStorePage
  /** Removes a session's records at once (one transaction / atomic commit); the count removed. */
  drop(request: { session: string }): Promise<number> | number
  /** Sessions whose index is loaded here, least recently used first. */
  loadedSessions(): string[]
  /** How many session indexes were loaded (restored or rebuilt) so far. */
  readonly indexLoads: number
}

/** Durable Object storage (`ctx.storage`), the calls the adapters make. */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>
  get(keys: string[]): Promise<Map<string, unknown>>
  put(entries: Record<string, unknown>): Promise<void>
  delete(keys: string[]): Promise<number>
  list(options: { prefix?: string; startAfter?: string; limit?: number }): Promise<Map<string, unknown>>
  transaction<T>(fn: (txn: any) => Promise<T>): Promise<T>
}

/** A `Deno.Kv` (`await Deno.openKv()`), the calls the adapters make. */
export interface DenoKvLike {
  get(key: unknown[]): Promise<{ key: unknown[]; value: unknown; versionstamp: string | null }>
  getMany(keys: unknown[][]): Promise<Array<{ key: unknown[]; value: unknown; versionstamp: string | null }>>
  list(selector: { prefix: unknown[]; start?: unknown[] }, options?: { limit?: number }): AsyncIterable<{ key: unknown[]; value: unknown }>
  atomic(): any
}

/** A `better-sqlite3` Database (12.x) or a `node:sqlite` DatabaseSync. */
export interface SqliteDatabaseLike {
  prepare(sql: string): any
  exec(sql: string): unknown
  transaction?: (fn: (...args: any[]) => any) => any
}

/** Sessions in a Durable Object's storage; values cut to 120 KiB, the swap inside
 * `storage.transaction()`. */
export function durableObjectStore(storage: DurableObjectStorageLike, sessionId: string, options?: StoreOptions & { prefix?: string[] }): StoreSession
/** Memory records and per-session index snapshots in a Durable Object's storage. */
export function durableObjectMemory(storage: DurableObjectStorageLike, options: MemoryStoreOptions & { prefix?: string[] }): StoreMemory

/** Sessions in Deno KV; values cut to 60 KiB, the swap by `atomic().check()`. */
export function denoKvStore(kv: DenoKvLike, sessionId: string, options?: StoreOptions & { prefix?: unknown[] }): StoreSession
/** Memory records and per-session index snapshots in Deno KV. */
export function denoKvMemory(kv: DenoKvLike, options: MemoryStoreOptions & { prefix?: unknown[] }): StoreMemory

/** Sessions in IndexedDB; the swap inside one readwrite transaction. */
export function indexedDbStore(db: IDBDatabaseLike, sessionId: string, options?: StoreOptions): StoreSession
/** Memory records and per-session index snapshots in IndexedDB. */
export function indexedDbMemory(db: IDBDatabaseLike, options: MemoryStoreOptions): StoreMemory
/** Opens (creating the object stores on first use) the database the IndexedDB stores use. */
export function openIndexedDb(factory?: unknown, name?: string, version?: number): Promise<IDBDatabaseLike>
/** Creates the object stores (`cc-sessions`, `cc-memory`, `cc-memory-meta`); call it in `onupgradeneeded`. */
export function upgradeIndexedDb(db: IDBDatabaseLike): void
/** An `IDBDatabase`. */
export interface IDBDatabaseLike {
  transaction(stores: string | string[], mode?: 'readonly' | 'readwrite'): any
  readonly objectStoreNames: { contains(name: string): boolean }
  close(): void
}

/** Sessions in SQLite (table `cc_sessions`); the swap is one UPDATE ... WHERE revision = ?. */
export function sqliteStore(db: SqliteDatabaseLike, sessionId: string, options?: StoreOptions): StoreSession
/** Memory records in SQLite (`cc_memory` with the FTS5 index `cc_memory_fts`). */
export function sqliteMemory(db: SqliteDatabaseLike, options: MemoryStoreOptions): StoreMemory
