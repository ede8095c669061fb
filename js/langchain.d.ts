// Types of context-compactor/langchain (I-2).
import type { BaseMessage } from '@langchain/core/messages'
import type { AgentMiddleware } from 'langchain'
import type { CompactHooks, CompactorOptions, ContextCompactor, MemoryIndex, OpenAIChatMessage, Provenance, SessionState } from './index.js'

/** An OpenAI Chat row holding a LangChain message: every field of it in `lc`. */
export interface LangChainRow extends OpenAIChatMessage, Provenance {
  lc: { type: string; id?: string; name?: string; [field: string]: unknown }
}

/** A stored message: LangChain.js `mapChatMessagesToStoredMessages`, Python `messages_to_dict`. */
export interface StoredLangChainMessage { type: string; data: { content: string | readonly unknown[]; [field: string]: unknown } }
/** A serialized message: `JSON.stringify` of a LangChain.js message, Python `dumpd`. */
export interface SerializedLangChainMessage { lc: 1; type: 'constructor'; id: readonly string[]; kwargs: { content: string | readonly unknown[]; [field: string]: unknown } }

/** LangChain messages (instances, stored `{ type, data }` or serialized `{ lc: 1, ... }`,
 * mixed freely) -> OpenAI Chat rows for a compactor with `format: 'openai-chat'`;
 * lossless (I-2). @throws an error with `code: 'invalid_transcript'` naming the index of a
 * message it cannot read (not a message, an unknown type or class, a RemoveMessage, no
 * string or block-list content): never a row without its text (N-1). */
export function fromLangChainMessages(messages: readonly (BaseMessage | StoredLangChainMessage | SerializedLangChainMessage)[]): LangChainRow[]

/** Rows back to LangChain messages (I-2). `view: 'request'` leaves the provenance out. */
export function toLangChainMessages(rows: readonly (LangChainRow | OpenAIChatMessage)[] | { messages: readonly OpenAIChatMessage[] }, options?: { view?: 'stored' | 'request' }): BaseMessage[]

export interface LangChainCompactionOptions extends Omit<CompactorOptions, 'format'>,
  Pick<CompactHooks, 'summarize' | 'curator' | 'storeArtifact' | 'onEvent' | 'countTokens' | 'sessionId' | 'memory' | 'embed' | 'embedDimension' | 'store' | 'timeoutMs' | 'timeouts' | 'signal'> {
  compactor?: ContextCompactor<'openai-chat'> | ContextCompactor<'auto'>
  /** The agent's tools (counted in the forecast). */
  tools?: readonly { name: string; description?: string; schema?: unknown }[]
  /** The agent's system prompt (counted). */
  systemPrompt?: string
  /** Middleware name. Default `ContextCompactorMiddleware`. */
  name?: string
}

/** Middleware for LangChain v1 `createAgent` (I-2). */
export function compactionMiddleware(options?: LangChainCompactionOptions): AgentMiddleware & {
  readonly compactor: ContextCompactor<'openai-chat'> | ContextCompactor<'auto'>
  /** Where the folded rows' memory records went (N-1, M-1): the `memory` hook given, or,
   * with no `memory` / `store` / `embed` hook, the middleware's own in-process MemoryIndex;
   * null with a host `store` / `embed`. */
  readonly memory: MemoryIndex | { add(records: unknown[]): unknown } | null
  /** Per thread (M-4): `state` of that LangGraph `thread_id` (or of the thread-less
   * invocations when omitted); every compaction with its `thread` (null: none); the threads seen. */
  stats(threadId?: string | null): { state: SessionState | null; compactions: { thread: string | null; before: number; after: number }[]; threads: (string | null)[] }
}
