// Types of every entry of the package: "." (node / web / workerd builds), "./web",
// "./workerd". The raw module "./wasm" is typed in js/wasm.d.ts.
// Units: tokens are estimated or provider-reported tokens; bytes are UTF-8 bytes.

/** A value or a Promise of it: every hook may answer synchronously or asynchronously (J-2). */
export type MaybePromise<T> = T | Promise<T>

/** Provider formats the engine reads and writes (`auto` = detect per transcript). */
export type ProviderFormat = 'openai-chat' | 'anthropic' | 'gemini' | 'openai-responses' | 'ai-sdk'
/** Log formats `importTranscript` converts into a provider format. */
export type LogKind = 'claude-code-jsonl' | 'swe-agent-traj' | 'tau-bench' | 'glaive'
/** Named presets of the configuration. */
export type Profile = 'kerkov' | 'meerkat' | 'default'
/** C-1: provider-reported usage only; C-2: every pressure signal. */
export type TriggerMode = 'provider_usage' | 'signals'

/** Stable `code` of every error the package throws (`err.code`). */
export type ErrorCode =
  | 'invalid_transcript' | 'unpaired_tool_result' | 'unanswered_tool_call' | 'duplicate_tool_call_id'
  | 'invalid_config' | 'invalid_state' | 'invalid_rewrite' | 'summary_failed' | 'protocol_error'
  | 'stale_revision' | 'unknown_format' | 'memory_failed'

/** The errors the package throws: a JS `Error` with a stable `code`. */
export interface ContextCompactorError extends Error {
  name: 'ContextCompactorError'
  code: ErrorCode
  /** On a failed `compact`: the session state to persist (cadence, spend). */
  state?: SessionState
}

/** A provider transcript document (the format's own JSON), or its JSON text. */
export type TranscriptInput = object | string

/** Options of `new ContextCompactor(options)`; unset fields come from the profile. */
export interface CompactorOptions {
  /** Provider format, or `auto` (default) to detect it per call. */
  format?: ProviderFormat | 'auto'
  /** Preset the other fields default from. Default `default`. */
  profile?: Profile
  trigger?: TriggerMode
  /** Model context window, tokens. Default 200,000. */
  contextWindow?: number
  /** Compact at this fraction of the window (0 < x <= 1). Default 0.65. */
  thresholdPct?: number
  /** Messages kept verbatim at the end. */
  preserveRecentTurns?: number
  /** Byte budget of the recent window, bytes. */
  preserveRecentBytes?: number
  /** Evict tool-result bodies larger than this, bytes. */
  evictToolResultMinBytes?: number
  /** Head kept when a body is clipped, bytes. */
  clipHeadBytes?: number
  /** Tail kept when a body is clipped, bytes. */
  clipTailBytes?: number
  /** How many evicted bodies stay recoverable by handle. */
  maxIndexedArtifacts?: number
  maxSummariesBeforeRollup?: number
  maxRolledUpSummaries?: number
  /** Reserved for the model's answer, tokens. */
  outputReserveTokens?: number
  /** Hard cap on the request body, bytes. */
  maxRequestBytes?: number
  /** Estimation ratio, bytes per token. */
  bytesPerToken?: number
  /** Estimated tokens per image / media block. */
  imageTokens?: number
  /** Output budget of a summary, tokens. */
  summaryMaxOutputTokens?: number
  /** Context window of the summarizer model, tokens (defaults to `contextWindow`). */
  summarizerContextWindow?: number
  fitRecentWindow?: boolean
  protectRunRequest?: boolean
  inRunStage2?: boolean
  foldedCallLedger?: boolean
}

/** The resolved configuration (`compactor.config`). */
export interface ResolvedConfig extends Required<Omit<CompactorOptions, 'format' | 'outputReserveTokens' | 'maxRequestBytes' | 'summarizerContextWindow'>> {
  outputReserveTokens: number | null
  maxRequestBytes: number | null
  summarizerContextWindow: number | null
}

/** What the host knows about the next request, all optional (C-2). */
export interface Signals {
  /** Provider usage of the last completion, in the provider's own field names. */
  usage?: Record<string, unknown>
  /** Tool definitions sent with each request (any JSON). */
  tools?: unknown
  /** Or just their serialized size, bytes. */
  toolsBytes?: number
  /** The exact provider request body size, bytes. */
  requestBytes?: number
  /** Compact regardless of the measures. */
  force?: boolean
}

/** A plain chat message of a summarize request. */
export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

/** What the engine asks the host's summarizer for. */
export interface SummarizeRequest {
  /** `summary` (fold rows) or `rollup` (merge summaries). */
  kind: 'summary' | 'rollup'
  /** System prompt for the summarizer. */
  system: string
  messages: ChatMessage[]
  /** Output budget, tokens. */
  maxOutputTokens: number
  /** Estimated input size of this request, tokens. */
  estimatedInputTokens: number
  /** How much of the folded history the request carries. */
  coverage: 'whole' | 'trimmed'
}

/** A summarize hook's answer: the text, optionally with the provider usage of the call. */
export type SummarizeReply = string | { text: string; usage?: Record<string, unknown> }

/** An event for the host (J-4). */
export interface CompactionEvent {
  type: 'compaction_started' | 'compaction_completed' | 'compaction_failed' | 'warning' | (string & {})
  data: Record<string, unknown>
}

/** Hooks (and signals) of one `compact` call. */
export interface CompactHooks extends Signals {
  /** Writes a summary. Without it the deterministic handoff summary is used. A throw or
   * rejection leaves the transcript untouched and reaches the caller unchanged. */
  summarize?: (request: SummarizeRequest) => MaybePromise<SummarizeReply>
  /** Receives each event after the job ends, in order; awaited. */
  onEvent?: (event: CompactionEvent) => MaybePromise<void>
}

/** One measured signal. */
export interface SignalValue { name: string; unit: 'tokens' | 'bytes'; value: number; threshold: number; crossed: boolean }

/** The floor compaction cannot remove (C-8), tokens. */
export interface Floor {
  systemTokens: number
  toolsTokens: number
  protectedTokens: number
  outputReserveTokens: number
  totalTokens: number
  budgetTokens: number
}

/** The result of `check` (C-9). */
export interface Decision {
  compact: boolean
  /** `provider_usage_over_threshold`, `estimate_over_threshold`, `forecast_over_threshold`,
   * `request_bytes_over_cap`, `refusal_recovery`, `forced`, `under_threshold`,
   * `no_provider_usage`, `cannot_fit`. */
  reason: string
  decidedBy: string | null
  signals: SignalValue[]
  floor: Floor
  thresholdTokens: number
  contextWindow: number
}

/** Size of a transcript. */
export interface Size { messages: number; bytes: number; estimatedTokens: number }

export interface SummaryInfo {
  text: string
  /** 1 = summary of rows, 2 = rolled-up summary. */
  level: number
  source: { writer: 'provider' | 'mechanical'; coverage: 'whole' | 'trimmed' | 'requests_only' }
  messageId: string
  /** Offset in the new transcript. */
  offset: number
}

/** A kept row: its offset in the source, in the new transcript, and its stable id. */
export interface Retained { source: number; offset: number; id: string }

/** One splice of the patch (W-4): at `start`, delete `deleteCount` rows, insert `insert`. */
export interface Splice { start: number; deleteCount: number; insert: unknown[] }

/** What eviction did to one tool result (E-). */
export interface Evicted {
  /** Source offset of the message carrying the result. */
  offset: number
  messageId: string
  callId: string
  toolName: string | null
  /** `artifact#N` when recoverable. */
  handle: string | null
  /** The body became a head/tail clip (unrecoverable). */
  clipped: boolean
  bodyBytes: number
  keptBytes: number
}

export interface Rollup { pass: 'level1_to_level2' | 'level2_merge'; merged: number; writer: string }

/** A committed rewrite (W-1, W-4). */
export interface Rewrite {
  baseRevision: number
  revision: number
  stage: 'before_run' | 'in_run'
  summary: SummaryInfo
  retained: Retained[]
  /** Source offsets folded into the summary. */
  discarded: number[]
  patch: Splice[]
  evicted: Evicted[]
  rollups: Rollup[]
}

/** Side spend of summarize calls (W-7), tokens. */
export interface Spend { summarizeCalls: number; inputTokens: number; outputTokens: number }

/** Persisted per-session state (W-6). `null` or `{}` starts a new session. */
export interface SessionState {
  revision: number
  nextArtifact: number
  cadence: {
    boundary: number
    lastAttemptBoundary: number | null
    lastRewriteTokens: number | null
    refusal: boolean
    lastFailure: string | null
  }
  ledger: { callId: string; name: string; arguments: string; failed: boolean }[]
  ledgerRun: string | null
  spend: Spend
  calibration: number
  selectionWarned: boolean
}

/** The result of `compact`. */
export interface CompactResult {
  status: 'compacted' | 'skipped' | 'cannot_fit' | 'failed'
  reason: string
  decision: Decision
  /** The stored transcript (with provenance), in the input's format. */
  transcript: any
  /** The request view: provenance removed (F-4). */
  request: any
  rewrite: Rewrite | null
  before: Size
  after: Size
  validation: { ok: boolean; checks: string[] }
  /** Persist this and pass it to the next call. */
  state: SessionState
  spend: Spend
  events: CompactionEvent[]
  error: { code: ErrorCode; message: string } | null
}

/** The compactor: options are resolved once; every call is independent and pure. */
export class ContextCompactor {
  /** @throws {ContextCompactorError} `invalid_config` naming the bad field; `unknown_format`. */
  constructor(options?: CompactorOptions | null)
  /** The resolved configuration. */
  readonly config: ResolvedConfig
  /** Pure check (C-9): should this transcript be compacted now? */
  check(state: Partial<SessionState> | null | undefined, transcript: TranscriptInput, signals?: Signals | null): Decision
  /** Runs one compaction. Rejects with a `ContextCompactorError` (or the summarize hook's
   * own error), carrying `state`; the input transcript is never modified. */
  compact(state: Partial<SessionState> | null | undefined, transcript: TranscriptInput, hooks?: CompactHooks | null): Promise<CompactResult>
  /** The request view of a stored transcript: provenance keys removed (F-4). */
  toRequest(transcript: TranscriptInput): any
  /** Frees the wasm memory now (otherwise a FinalizationRegistry does it). */
  free(): void
  [Symbol.dispose](): void
}

/** The provider format of a transcript. @throws {ContextCompactorError} `unknown_format`. */
export function detectFormat(transcript: TranscriptInput): ProviderFormat

/** Converts a log or provider document to `{ format, document }`.
 * @param kind `auto`, a log kind, or a provider format name.
 * @throws {ContextCompactorError} `invalid_transcript` (naming the line / index), `unknown_format`. */
export function importTranscript(kind: 'auto' | LogKind | ProviderFormat, text: string): { format: ProviderFormat; document: any }

/** The package version (Cargo.toml). */
export function version(): string

/** What `init` / `initSync` accept: a URL or response of the .wasm, its bytes, or a compiled module. */
export type InitInput = RequestInfo | URL | Response | BufferSource | WebAssembly.Module
export type SyncInitInput = BufferSource | WebAssembly.Module

/** Instantiates the wasm (web / Deno / bundlers). Without an argument it fetches the .wasm
 * next to the module. A no-op in Node and workerd (instantiated on import). Idempotent. */
export function init(input?: { module_or_path: InitInput | Promise<InitInput> }): Promise<unknown>
/** Instantiates synchronously from bytes or a `WebAssembly.Module` (e.g. `context-compactor/wasm`). Idempotent. */
export function initSync(input: { module: SyncInitInput }): unknown
export default init

// ---- Semantic memory: the host-store path (M-2, M-4) --------------------------------
// recallFromStore / enumerateStore / dropStoreScope read back the records a host keeps in
// its own store (the `store` hook of `compact`): same shapes as MemoryIndex, same rules.

/** A memory record as the engine projects it (M-1) and a host store keeps it. */
export interface HostStoreRecord {
  /** `mem-` + 16 hex digits, deterministic. */
  id: string
  /** The owning session (scope); reads never cross it (M-4). */
  session: string
  messageId: string
  role: string
  /** Inclusive source message offsets. */
  sourceRange: [number, number]
  /** Half-open UTF-8 byte range of `content` in the source text. */
  byteRange: [number, number]
  kind: 'narrative' | 'tool_output'
  toolName?: string
  callId?: string
  /** `artifact#N`: the full tool output in the host's artifact store. */
  handle?: string
  /** At most 1,000 UTF-8 bytes. */
  content: string
}

/** What `store.search` is asked: `vector` only when `recallFromStore` got `embed`;
 * `limit` is the effective one (1..20). */
export interface HostStoreSearchRequest { session: string; query: string; limit: number; vector?: number[] }
/** One answer of `store.search`: a full record and a finite score (higher is better). */
export interface HostStoreHit { record: HostStoreRecord; score: number }

/** A host store (IndexedDB, a Durable Object, a vector DB). Every method may be sync or
 * return a promise; a throw or rejection reaches the caller unchanged. */
export interface HostMemoryStore {
  /** Called by `compact` before the commit; `vectors` is null without an `embed` hook. */
  put(records: HostStoreRecord[], vectors: number[][] | null): unknown
  search?(request: HostStoreSearchRequest): HostStoreHit[] | { hits: HostStoreHit[] } | Promise<HostStoreHit[] | { hits: HostStoreHit[] }>
  /** `pageToken` null on the first page; answer at most `pageSize` records of `session`
   * and `next` null on the last page. */
  enumerate?(request: { session: string; pageToken: string | null; pageSize: number }): HostStorePage | Promise<HostStorePage>
  /** Removes the whole scope at once; answer the number removed (or nothing). */
  drop?(request: { session: string }): number | void | null | Promise<number | void | null>
}

/** A page of a store scope: records in the store's (stable) order. */
export interface HostStorePage { records: HostStoreRecord[]; next: string | null }

/** A recall answered from a host store; the same shape as `MemoryIndex.recall`. */
export interface HostStoreRecall {
  query: string
  /** Effective limit: default 5, clamped to 1..20. */
  limit: number
  /** Best first, only records of the asked session, one per id, at most `limit`. */
  hits: Array<{
    id: string; content: string; score: number; messageId: string; sourceRange: [number, number]
    kind: 'narrative' | 'tool_output'; toolName?: string; handle?: string
  }>
}

/** Recall (M-2) from a host store. With `embed` + `embedDimension` the query is embedded by
 * the host and `store.search` gets `{ session, query, vector, limit }`; without, it gets
 * `{ session, query, limit }` and searches by its own means (the embedded embedder is not
 * used: its vectors are weighted per in-wasm scope). Hits of other sessions are dropped.
 * @throws {ContextCompactorError} (rejection) `memory_failed` naming a bad argument, a
 * missing `store.search`, a bad query vector or a malformed hit. */
export function recallFromStore(
  store: Pick<HostMemoryStore, 'search'>,
  session: string,
  query: string,
  options?: {
    limit?: number
    embed?: (texts: string[]) => ArrayLike<number>[] | Promise<ArrayLike<number>[]>
    embedDimension?: number
  } | null,
): Promise<HostStoreRecall>

/** One page of a store scope (M-4); `pageSize` default 100, clamped to 1..1000.
 * @throws {ContextCompactorError} (rejection) `memory_failed` when the store answers more
 * than `pageSize` records, a record of another session, a malformed record, or a `next`
 * that is not a new token or null. */
export function enumerateStore(
  store: Pick<HostMemoryStore, 'enumerate'>,
  session: string,
  options?: { pageToken?: string | null; pageSize?: number } | null,
): Promise<HostStorePage>

/** Drops a whole store scope (M-4): the number of records removed, or null when the store
 * does not say. @throws {ContextCompactorError} (rejection) `memory_failed` on an answer
 * that is not a non-negative integer or nothing. */
export function dropStoreScope(store: Pick<HostMemoryStore, 'drop'>, session: string): Promise<number | null>
