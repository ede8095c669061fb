// A typed consumer of context-compactor/stores (I-5): compiles with tsc --noEmit; the
// lines marked as expected errors must not compile.
import { ContextCompactor, MemoryIndex, Session, recallFromStore } from 'context-compactor'
import { denoKvStore, durableObjectMemory, durableObjectStore, sqliteMemory, sqliteStore, type DurableObjectStorageLike, type DenoKvLike, type SqliteDatabaseLike, type StoreSession } from 'context-compactor/stores'

declare const storage: DurableObjectStorageLike
declare const kv: DenoKvLike
declare const db: SqliteDatabaseLike

const compactor = new ContextCompactor({ format: 'openai-chat' })
const store: StoreSession = durableObjectStore(storage, 'chat-1')
const session = new Session(compactor, store)
const memory = durableObjectMemory(storage, { MemoryIndex, maxIndexes: 8 })
export async function turn(): Promise<number> {
  const out = await session.compact({ sessionId: 'chat-1', store: memory })
  const hits = await recallFromStore(memory, 'chat-1', 'parser', { limit: 3 })
  const answer = await sqliteStore(db, 'x').save({ transcript: [], state: out.state, revision: 1 }, { expectedRevision: 0, revision: 1, patch: [] })
  if (!answer.ok) return answer.reason === 'stale_revision' ? -1 : -2
  new Session(compactor, denoKvStore(kv, 'y', { emptyTranscript: { messages: [] } }))
  return hits.hits.length + memory.loadedSessions().length + sqliteMemory(db, { MemoryIndex }).indexLoads
}
// @ts-expect-error a memory store needs the MemoryIndex class
sqliteMemory(db, {})
// @ts-expect-error the session id is required
durableObjectStore(storage)
