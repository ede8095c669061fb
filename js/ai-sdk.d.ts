// Types of context-compactor/ai-sdk (I-1). Structural: they name only what the AI SDK
// hands in and takes back, so they fit `ai` 6.x and 7.x without importing it.
import type { AbortSignalLike, CompactHooks, CompactorOptions, ContextCompactor, Decision, MemoryIndex, SessionState, SessionStore, Session, AiSdkMessage } from './index.js'

/** Options of both helpers: the compactor's options (its `format` is `ai-sdk`) or a
 * ready `compactor`, the compact hooks, and a session store for the conversation. */
export interface AiSdkCompactionOptions extends Omit<CompactorOptions, 'format'>,
  Pick<CompactHooks, 'summarize' | 'curator' | 'storeArtifact' | 'onEvent' | 'countTokens' | 'sessionId' | 'memory' | 'embed' | 'embedDimension' | 'store' | 'timeoutMs' | 'timeouts' | 'signal'> {
  /** A compactor built for `ai-sdk` (instead of the options above). */
  compactor?: ContextCompactor<'ai-sdk'> | ContextCompactor<'auto'>
  /** Keeps the conversation in a session store (W-5, W-8): any store of
   * `context-compactor/stores` (`sqliteStore(db, id)`, `durableObjectStore(...)`,
   * `denoKvStore(...)`, `indexedDbStore(...)`) or your own compare-and-swap `{ load,
   * save }`. The helper writes through the engine's `Session`: the rows the store does not
   * hold yet go in with `Session.append` (each with `message_id: "ai-sdk:<n>"`, n = its
   * place in the SDK's history; the provider never sees it), a compaction commits with
   * `Session.compact`, and the usage of each answer rides in the state of the next save.
   * A new helper over the same store (another request or process) appends only what the
   * store lacks, whether it is given the SDK's whole history or what it was sent. A history
   * that continues neither rejects with `invalid_transcript`. One store per conversation.
   * Memory records and artifact handles are scoped by `sessionId`, else the store's own
   * `sessionId` (the stores above have one); a store without one, with `memory`, `store`
   * or `storeArtifact`, needs `sessionId` (`invalid_config`). The system prompt of each
   * step (the middleware: the prompt's leading system rows) is the record's current one.
   * `timeoutMs` / `timeouts.load` / `signal` bound the helper's own `load()` calls too. */
  session?: SessionStore
}

/** The conversation an integration follows: engine state and compaction sizes. */
export interface StoredView {
  state: SessionState | null
  /** UTF-8 bytes (JSON) of the prompt rows before and after each committed compaction. */
  compactions: { before: number; after: number }[]
  /** The last check's decision (C-9). */
  lastDecision: Decision | null
  /** With `session`: the id memory and artifact handles are scoped by (undefined: none
   * was given and the store has none). */
  sessionId?: string
  /** With `session`: the engine's `Session` the helper writes through (`request()`,
   * `load()`, `recordFinding()`); absent without one. */
  session?: Session<'ai-sdk'>
  /** Where the folded rows' memory records went (N-1, M-1): the `memory` hook given, or,
   * with no `memory` / `store` / `embed` hook, the helper's own in-process MemoryIndex
   * (recall with `view.memory.recall(sessionId ?? 'default', query)`); null with a host
   * `store` / `embed`. */
  memory: MemoryIndex | { add(records: unknown[]): unknown } | null
}

/** A language-model middleware (`wrapLanguageModel({ model, middleware })`). */
export interface CompactionMiddleware {
  readonly specificationVersion: 'v4'
  readonly view: StoredView
  /** `params.abortSignal` (the call's) bounds the compaction with the `signal` option:
   * once either fires the call rejects with an `AbortError` carrying `code: 'aborted'` (as `fetch` rejects), nothing committed (I-6). */
  transformParams(options: { type: 'generate' | 'stream'; params: { prompt: unknown[]; tools?: unknown; abortSignal?: AbortSignalLike; [key: string]: unknown }; model?: unknown }): Promise<any>
  wrapGenerate(options: { doGenerate: () => PromiseLike<any>; [key: string]: unknown }): Promise<any>
  wrapStream(options: { doStream: () => PromiseLike<any>; [key: string]: unknown }): Promise<any>
}

/** Compacts the prompt the model is about to get (I-1); each call's `abortSignal`
 * cancels its compaction (rejects with an `AbortError` carrying `code: 'aborted'`, commits nothing). */
export function compactionMiddleware(options?: AiSdkCompactionOptions): CompactionMiddleware

/** What `prepareStep` is given (the fields read). */
export interface PrepareStepInput {
  steps: ReadonlyArray<{ usage?: unknown }>
  stepNumber: number
  messages: AiSdkMessage[] | any[]
  instructions?: unknown
  [key: string]: unknown
}

/** A `prepareStep` function for generateText / streamText / ToolLoopAgent (I-1):
 * `{ messages }` when it compacted, else `{}`. */
export interface PrepareStepCompaction {
  (step: PrepareStepInput): Promise<{ messages?: any[] }>
  readonly view: StoredView
}

export function prepareStepCompaction(options?: AiSdkCompactionOptions & {
  /** The tool set (counted in the forecast and the floor). */
  tools?: Record<string, unknown> | unknown[]
  /** The system prompt / instructions (counted). Default: the step's `instructions`. */
  system?: unknown
  instructions?: unknown
}): PrepareStepCompaction

export type { Decision }
