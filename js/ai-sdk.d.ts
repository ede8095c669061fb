// Types of context-compactor/ai-sdk (I-1). Structural: they name only what the AI SDK
// hands in and takes back, so they fit `ai` 6.x and 7.x without importing it.
import type { CompactHooks, CompactorOptions, ContextCompactor, Decision, SessionState, AiSdkMessage } from './index.js'

/** Options of both helpers: the compactor's options (its `format` is `ai-sdk`) or a
 * ready `compactor`, the compact hooks, and a host store for the stored view. */
export interface AiSdkCompactionOptions extends Omit<CompactorOptions, 'format'>,
  Pick<CompactHooks, 'summarize' | 'curator' | 'storeArtifact' | 'onEvent' | 'countTokens' | 'sessionId' | 'memory' | 'embed' | 'embedDimension' | 'store'> {
  /** A compactor built for `ai-sdk` (instead of the options above). */
  compactor?: ContextCompactor<'ai-sdk'> | ContextCompactor<'auto'>
  /** Keeps the stored view across processes: `load()` returns the last saved snapshot
   * or null; `save(snapshot)` after each committed compaction. */
  session?: { load(): unknown; save(snapshot: StoredViewSnapshot): unknown }
}

/** What a `session` store keeps: plain JSON. */
export interface StoredViewSnapshot {
  state: SessionState | null
  stored: AiSdkMessage[] | null
  requestRows: AiSdkMessage[] | null
  sourceText: string[] | null
}

/** The conversation an integration follows: engine state and compaction sizes. */
export interface StoredView {
  state: SessionState | null
  /** The stored-view rows of the last compaction (provenance keys kept). */
  stored: AiSdkMessage[] | null
  /** UTF-8 bytes (JSON) of the prompt rows before and after each committed compaction. */
  compactions: { before: number; after: number }[]
  snapshot(): StoredViewSnapshot
}

/** A language-model middleware (`wrapLanguageModel({ model, middleware })`). */
export interface CompactionMiddleware {
  readonly specificationVersion: 'v4'
  readonly view: StoredView
  transformParams(options: { type: 'generate' | 'stream'; params: { prompt: unknown[]; tools?: unknown; [key: string]: unknown }; model?: unknown }): Promise<any>
  wrapGenerate(options: { doGenerate: () => PromiseLike<any>; [key: string]: unknown }): Promise<any>
  wrapStream(options: { doStream: () => PromiseLike<any>; [key: string]: unknown }): Promise<any>
}

/** Compacts the prompt the model is about to get (I-1). */
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
