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
  /**
   * Bound on the summarize request (instructions + rows) as a share of the folded rows'
   * bytes, in (0, 1] (Y-8). Rows are clipped head/tail (tool outputs first, then every
   * row, user text twice as long), then the oldest dropped; never bounded under 2,048
   * bytes of rows. Default 0.25; Kerkov 1 (window only).
   */
  summaryInputShare?: number
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
