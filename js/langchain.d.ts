// Types of context-compactor/langchain (I-2).
import type { BaseMessage } from '@langchain/core/messages'
import type { AgentMiddleware } from 'langchain'
import type { CompactHooks, CompactorOptions, ContextCompactor, OpenAIChatMessage, Provenance, SessionState } from './index.js'

/** An OpenAI Chat row holding a LangChain message: every field of it in `lc`. */
export interface LangChainRow extends OpenAIChatMessage, Provenance {
  lc: { type: string; id?: string; name?: string; [field: string]: unknown }
}

/** LangChain messages -> OpenAI Chat rows for a compactor with `format: 'openai-chat'`;
 * lossless (I-2). @throws an error with `code: 'invalid_transcript'` for a non-message. */
export function fromLangChainMessages(messages: readonly BaseMessage[]): LangChainRow[]

/** Rows back to LangChain messages (I-2). `view: 'request'` leaves the provenance out. */
export function toLangChainMessages(rows: readonly (LangChainRow | OpenAIChatMessage)[] | { messages: readonly OpenAIChatMessage[] }, options?: { view?: 'stored' | 'request' }): BaseMessage[]

export interface LangChainCompactionOptions extends Omit<CompactorOptions, 'format'>,
  Pick<CompactHooks, 'summarize' | 'curator' | 'storeArtifact' | 'onEvent' | 'countTokens' | 'sessionId' | 'memory' | 'embed' | 'embedDimension' | 'store'> {
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
  stats(): { state: SessionState | null; compactions: { before: number; after: number }[] }
}
