// Types of every entry of the package: "." (node / web / workerd builds), "./web",
// "./workerd" (J-3: every public function, option and result). The raw module "./wasm"
// is typed in js/wasm.d.ts.
// Units: tokens are estimated (C-7) or provider-reported tokens; bytes are UTF-8 bytes;
// boundaries are answered / refused requests (C-4). Shapes follow the Rust sources
// (src/wasm/*.rs and the JSON they produce); requirement IDs are in brackets.

import type { DocumentOf, DocumentTypes, StoredDocumentOf } from './formats.js'
export * from './formats.js'

/** A value or a Promise of it: every hook may answer synchronously or asynchronously (J-2). */
export type MaybePromise<T> = T | Promise<T>

/** Transcript formats the engine reads and writes: the five provider formats, and
 * `canonical` (the engine's own JSON, F-1). `auto` in options = detect per transcript. */
export type ProviderFormat = 'openai-chat' | 'anthropic' | 'gemini' | 'openai-responses' | 'ai-sdk' | 'canonical'
/** Formats `recallToolDefinition` has a tool shape for (M-2): the provider formats. */
export type ToolFormat = Exclude<ProviderFormat, 'canonical'>
/** Log formats `importTranscript` converts into a provider format. */
export type LogKind = 'claude-code-jsonl' | 'codex-rollout' | 'swe-agent-traj' | 'tau-bench' | 'glaive' | 'glaive-jsonl'
/** Named presets of the configuration. */
export type Profile = 'kerkov' | 'meerkat' | 'default'
/** C-1: provider-reported usage only; C-2: every pressure signal. */
export type TriggerMode = 'provider_usage' | 'signals'

/** Stable `code` of every error the package throws (`err.code`). */
export type ErrorCode =
  | 'invalid_transcript' | 'unpaired_tool_result' | 'unanswered_tool_call' | 'duplicate_tool_call_id'
  | 'invalid_config' | 'invalid_state' | 'invalid_rewrite' | 'summary_failed' | 'protocol_error'
  /** A save named a revision that is no longer current (W-5). */
  | 'stale_revision'
  | 'unknown_format'
  /** A memory projection, embedder or store failed (M-1, W-3). */
  | 'memory_failed'
  /** The host's `save` refused a record for a reason other than a stale revision (W-3, W-8). */
  | 'save_failed'
  /** A host callback did not settle within its `timeoutMs` (I-6); nothing was committed. */
  | 'timeout'
  /** The call's `signal` (an `AbortSignal`) fired (I-6); nothing was committed. */
  | 'aborted'
  /** The transcript is over `maxTranscriptBytes`, or the result would not fit one JS
   * string (issue 15). */
  | 'too_large'
  /** The call needs a part the `context-compactor/lite` build leaves out (the log
   * importers, the embedded `MemoryIndex`); the message names it (issue 15). */
  | 'not_in_lite'

/** The errors the package throws: a JS `Error` with a stable `code` (J-2). A hook's own
 * error (summarize, curator, memory, store) reaches the caller unchanged instead. An
 * aborted call rejects with a {@link ContextCompactorAbortError} instead. */
export interface ContextCompactorError extends Error {
  name: 'ContextCompactorError'
  code: ErrorCode
  /** On a failed `compact`: the session state to persist (cadence, spend). */
  state?: SessionState
}

/** The rejection of a call whose `signal` fired (I-6), as `fetch` gives one and the AI
 * SDK's `isAbortError` reads it: a `DOMException` named `AbortError` (`TimeoutError` when
 * the signal's reason is one, e.g. `AbortSignal.timeout()`), with the engine's
 * `code: 'aborted'` (an own property over DOMException's numeric code) and `cause` the
 * signal's `reason`. The same from the AI SDK and LangChain middlewares and as the
 * `reason` of the `signal` a summarize callback gets. */
export interface ContextCompactorAbortError extends Error {
  name: 'AbortError' | 'TimeoutError'
  code: 'aborted'
  cause: unknown
  /** On a failed `compact`: the session state to persist (cadence, spend). */
  state?: SessionState
}

/** A provider transcript document (the format's own JSON), or its JSON text. Typed by
 * the format `F` a compactor was built for (`ContextCompactor<'anthropic'>` takes
 * Anthropic documents); with `auto`, any object. */
export type TranscriptInput<F extends ProviderFormat | 'auto' = 'auto'> = (F extends ProviderFormat ? DocumentOf<F> : object) | string

/** Options of `new ContextCompactor(options)`; unset fields come from the profile.
 * Unknown fields are rejected with `invalid_config`. The seed's snake_case names
 * (`max_context_tokens`, `threshold_pct`, ...) are accepted as aliases at runtime. */
export interface CompactorOptions {
  /** Transcript format, or `auto` (default) to detect it per call. */
  format?: ProviderFormat | 'auto'
  /** Preset the other fields default from. Default `default`. */
  profile?: Profile
  /** C-1 / C-2 mode (default `signals`, `provider_usage` for `kerkov`), or K-2 trigger
   * clauses (LangChain style): one clause fires when all its thresholds are reached; a
   * list fires when any clause does. */
  trigger?: TriggerMode | TriggerClause | TriggerClause[]
  /** Model context window, tokens. Default 200,000. */
  contextWindow?: number
  /** Compact at this fraction of the window (0 < x <= 1). Default 0.65 (C-1). */
  thresholdPct?: number
  /** Messages kept verbatim at the end. Default 6 (S-2). */
  preserveRecentTurns?: number
  /** Budget of the recent window, UTF-8 bytes. Default 65,536 (S-2). */
  preserveRecentBytes?: number
  /** Evict tool-result bodies larger than this, UTF-8 bytes. Default 1,024 (E-3). */
  evictToolResultMinBytes?: number
  /** Head kept when a body is clipped, UTF-8 bytes (E-4, E-5). Default 1,200. */
  clipHeadBytes?: number
  /** Tail kept when a body is clipped, UTF-8 bytes (E-4, E-5). Default 400. */
  clipTailBytes?: number
  /** How many evicted bodies stay indexed by handle under a summary. Default 60 (Y-2). */
  maxIndexedArtifacts?: number
  /** Most UTF-8 bytes of text the pinned rows may hold; pins past it (the oldest kept)
   * are not honoured and a `pins_over_cap` warning names them. Default 32,768 (Y-10). */
  maxPinnedBytes?: number
  /** Roll level-1 summaries up when the block holds more than this. Default 4 (Y-3). */
  maxSummariesBeforeRollup?: number
  /** Merge level-2 summaries when more than this. Default 4 (Y-3). */
  maxRolledUpSummaries?: number
  /** Reserved for the model's answer, tokens (C-2, C-8). Kerkov 0; otherwise unset =
   * min(4,096, a tenth of the window). */
  outputReserveTokens?: number
  /** Provider request-body cap, UTF-8 bytes (C-2, B-1). Unset: no cap. */
  maxRequestBytes?: number
  /** Estimator ratio, UTF-8 bytes per token (C-7). Default 4; must be > 0. */
  bytesPerToken?: number
  /** Estimated tokens per image / media block (C-7). Default 1,600. */
  imageTokens?: number
  /** Output budget of a summary, tokens (Y-8). Default 2,048. */
  summaryMaxOutputTokens?: number
  /** Context window of the summarizer model, tokens (Y-1, Y-8). Default: `contextWindow`. */
  summarizerContextWindow?: number
  /**
   * Bound on the summarize request (instructions + rows) as a share of the folded rows'
   * bytes, in (0, 1] (Y-8). Rows are clipped head/tail (tool outputs first, then every
   * row, user text twice as long), then the oldest dropped; never bounded under 2,048
   * bytes of rows. Default 0.25; Kerkov 1 (window only).
   */
  summaryInputShare?: number
  /**
   * Project the discarded rows into memory records (M-1). Default true. `false` for a
   * host that never recalls: `result.memory.projected` is then 0 and no memory step
   * runs.
   */
  projectMemory?: boolean
  /** Largest transcript accepted, UTF-8 bytes of its JSON text; a larger one throws
   * `too_large` before it is decoded. Default 268,435,456 (256 MiB). */
  maxTranscriptBytes?: number
  /** Under byte pressure keep fewer recent rows so the rebuilt request fits (S-8). */
  fitRecentWindow?: boolean
  /** Never fold the newest user request (S-6, S-9). */
  protectRunRequest?: boolean
  /** Fold the open run's completed rounds when nothing before the run is left (S-6 stage 2). */
  inRunStage2?: boolean
  /** Append the folded-call ledger to stage-2 summaries (Y-5). */
  foldedCallLedger?: boolean
  /** Rehydration budget, UTF-8 bytes (N-6): instruction documents the folded rows loaded
   * and the latest plan state are re-attached verbatim after the summary, newest first;
   * the rest is named with its handle. 0 disables. Default 8,192 (kerkov, meerkat: 0). */
  rehydrateBytes?: number
  /** Instructions of a summary call, replacing the built-in prompt (Y-9); not blank.
   * The engine still fences the transcript as data. */
  summaryPrompt?: string
  /** Instructions of a rollup merge call, replacing the built-in prompt (Y-3, Y-9); not blank. */
  rollupPrompt?: string
  /** Minimum cadence between compaction attempts, boundaries (C-4, C-5). After an
   * attempt at boundary B an ordinary high-water crossing waits until B + this;
   * recovery crossings, a recorded refusal and `force` never wait. Default 2 (Kerkov 0). */
  minBoundariesBetween?: number
  /** K-1: clear old tool results before any summary (Anthropic `clear_tool_uses` names). */
  clearToolUses?: ClearToolUsesOptions
  /** K-1: drop old reasoning whole (Anthropic `clear_thinking`). */
  clearThinking?: ClearThinkingOptions
  /** K-2: newest user messages kept verbatim out of a fold, up to this many tokens
   * (Codex keeps 20,000). Unset: off. */
  preserveRecentUserTokens?: number
  /** K-3: prompt-cache prices and policy. Unset: the decision still prices a clearing
   * with Anthropic's defaults; nothing is vetoed. */
  promptCache?: PromptCacheOptions
}

/** A K-2 trigger clause: every threshold set must be reached. */
export interface TriggerClause {
  /** Messages (rows) in the transcript. */
  messages?: number
  /** Estimated tokens of the transcript. */
  tokens?: number
  /** Estimated tokens as a fraction of `contextWindow`, in (0, 1]. */
  fraction?: number
  /** Tool calls in the transcript. */
  toolUses?: number
}

/** A count, or Anthropic's `{ type, value }` form. */
export type CountInput = number | { type?: string; value: number }

/** `clearToolUses` (K-1). */
export interface ClearToolUsesOptions {
  /** Clear when the input reaches this many tokens (the provider's input count when
   * `usage` is given, else the estimate). Default 100,000. */
  trigger?: CountInput
  /** Most recent tool uses kept whole. Default 3. */
  keep?: CountInput
  /** A batch clearing fewer tokens is not applied. Default 0. */
  clearAtLeast?: CountInput
  /** Tool names never cleared. */
  excludeTools?: string[]
  /** Also empty the cleared calls' arguments. Default false. */
  clearToolInputs?: boolean
}

/** `clearThinking` (K-1): assistant turns whose reasoning is kept (default 1), or `all`. */
export interface ClearThinkingOptions { keep?: CountInput | 'all' }

/** `promptCache` (K-3). Multipliers are of the uncached input-token price. */
export interface PromptCacheOptions {
  /** Default `anthropic`. */
  provider?: 'anthropic' | 'openai' | 'gemini' | 'none'
  /** Anthropic 1.25 (5 min) / 2 (1 h); OpenAI and Gemini 1. */
  writeMultiplier?: number
  /** Anthropic 0.1, OpenAI 0.5, Gemini 0.25. */
  readMultiplier?: number
  /** Output price of the summary call; Anthropic 5, OpenAI 4, Gemini 8. */
  outputMultiplier?: number
  /** Anthropic 300 or 3600 (picks the write multiplier). Default 300. */
  ttlSeconds?: number
  /** `report` (default) or `pays`: an ordinary trigger compacts only when the rewrite
   * pays for its cache break over `horizonTurns`; recovery never waits. */
  policy?: 'report' | 'pays'
  /** Turns a saving is counted over. Default 10. */
  horizonTurns?: number
}

/** The resolved configuration (`compactor.config`); `format` is not part of it. */
export interface ResolvedConfig extends Required<Omit<CompactorOptions,
  'format' | 'outputReserveTokens' | 'maxRequestBytes' | 'summarizerContextWindow' | 'summaryPrompt' | 'rollupPrompt'
  | 'trigger' | 'clearToolUses' | 'clearThinking' | 'preserveRecentUserTokens' | 'promptCache'>> {
  trigger: TriggerMode
  /** K-2 clauses; present only when set. */
  triggerOn?: TriggerClause[]
  /** Present only when set (K-1). */
  clearToolUses?: { trigger: number; keep: number; clearAtLeast: number; excludeTools: string[]; clearToolInputs: boolean }
  /** Present only when set (K-1); `keep: null` = all. */
  clearThinking?: { keep: number | null }
  /** Present only when set (K-2). */
  preserveRecentUserTokens?: number
  /** Present only when set (K-3). */
  promptCache?: Required<PromptCacheOptions>
  /** Tokens; `null` = the default reserve (min(4,096, window / 10)). */
  outputReserveTokens: number | null
  /** UTF-8 bytes; `null` = no cap. */
  maxRequestBytes: number | null
  /** Tokens; `null` = `contextWindow`. */
  summarizerContextWindow: number | null
  /** Present only when set (Y-9). */
  summaryPrompt?: string
  /** Present only when set (Y-3, Y-9). */
  rollupPrompt?: string
}

/** What the host knows about the next request, all optional (C-2, C-3, C-6). */
export interface Signals extends CallBounds {
  /** Provider usage of the last completion, in the provider's own field names. */
  usage?: Record<string, unknown>
  /** Tool definitions sent with each request (any JSON); counted in the forecast and floor. */
  tools?: unknown
  /** Or just their serialized size, UTF-8 bytes. */
  toolsBytes?: number
  /** The exact provider-lowered request body size, UTF-8 bytes (C-2). */
  requestBytes?: number
  /** Compact regardless of the measures and the cadence. */
  force?: boolean
  /** Provider the next request goes to (the host's name). A projection anchor counted
   * by another provider is not used (C-3). */
  provider?: string
  /** Model the next request goes to. An anchor counted by another model is not used (C-3). */
  model?: string
  /** The check runs inside an open run (after its first response): it does not see a
   * recorded refusal (C-6). Default false (a run's first, whole-transcript check). */
  inRun?: boolean
  /** A host tokenizer (I-4): gets texts (the document-level fields as JSON, `""` when
   * none; then each message's request-view JSON; then `tools` as JSON when given) and
   * returns one token count a text, synchronously or as a Promise. The counts replace
   * the 4-bytes-a-token estimate in `estimated_transcript_tokens`,
   * `projected_input_tokens` and `forecast_request_tokens`. `check` and the live
   * `check` need a synchronous answer (a Promise throws `invalid_config`: use
   * `checkAsync`); `compact` awaits it, within `timeoutMs` / `timeouts.countTokens` /
   * `signal` (a synchronous call is not interrupted; an already fired `signal` rejects
   * with `aborted` before it). */
  countTokens?: (texts: string[]) => MaybePromise<number[]>
}

/** A plain chat message of a summarize request. */
export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

/** What the engine asks the host's summarizer (or curator) for (Y-1, Y-3, Y-8). */
export interface SummarizeRequest {
  /** `summary` (fold rows), `rollup` (merge summaries) or `curate` (the host's `curator`
   * writes the stage-1 summary of the rows before the open run, Y-1 / S-6). */
  kind: 'summary' | 'rollup' | 'curate'
  /** System prompt for the summarizer. */
  system: string
  /** Chat messages to send after the system prompt. */
  messages: ChatMessage[]
  /** Output budget, tokens. */
  maxOutputTokens: number
  /** Estimated input size of this request (system + messages), tokens. */
  estimatedInputTokens: number
  /** How much of the folded history the request carries. */
  coverage: 'whole' | 'trimmed'
  /** `curate` only: the rows handed to the curator, in the stored view (provider JSON
   * with provenance keys), oldest first; only rows before the open run (S-6). Absent
   * for the other kinds. */
  rows?: object[]
}

/** A summarize / curator hook's answer: the text, optionally with the provider usage of
 * the call (W-7: recorded as side spend). */
export type SummarizeReply = string | { text: string; usage?: Record<string, unknown> }

/** Known event types (J-4); other strings may appear. */
export type EventType =
  | 'compaction_started' | 'compaction_completed' | 'compaction_failed' | 'warning'
  | 'summary_written' | 'summary_discarded' | 'tool_results_bounded_for_request'

/** An event for the host (J-4). Warnings carry `data.code` (`cannot_fit`,
 * `selection_failed`, `artifact_store_failed`, `mechanical_fallback`,
 * `history_over_threshold_after_rewrite`, ...) and `data.message`. */
export interface CompactionEvent {
  type: EventType | (string & {})
  data: Record<string, unknown>
}

/** One tool result the host's artifact store is asked to keep before eviction (E-6). */
export interface ArtifactItem {
  /** The handle the engine proposes (`artifact#<tag>-N`: `state.artifactTag`, N from
   * `state.nextArtifact`; unique across the sessions of one store, issue 14). */
  handle: string
  /** Source offset of the message carrying the result. */
  offset: number
  messageId: string
  callId: string
  toolName: string | null
  /** The whole result body (text; media not included). */
  body: string
  /** The session scope (`hooks.sessionId`, default `"default"`). A store shared by
   * sessions may key by `handle` alone (it carries the session's tag). */
  sessionId: string
}

/** A `storeArtifact` hook's answer (E-6): a string is the handle to use;
 * `undefined` / `null` / `true` accepts the proposed handle; `false` (or a throw) means
 * not stored, so that body is clipped instead. `{ handle }` is read like a string. */
export type StoreArtifactReply = string | { handle: string } | boolean | null | undefined | void

/** Where memory records go in a `compact` call: a `MemoryIndex`, or any object with
 * `add(records)` and, with `embed`, `addWithVectors(records, vectors)` (M-1). */
export interface MemorySink {
  add?(records: MemoryRecord[]): MaybePromise<unknown>
  addWithVectors?(records: MemoryRecord[], vectors: number[][]): MaybePromise<unknown>
}

/** The host's own memory store (M-1, M-3): `put` must accept the batch before the
 * commit; a throw or rejection fails the compaction with nothing committed. `vectors`
 * is `null` unless `embed` is given. The other methods are the host's own (M-4). */
export interface HostMemoryStore {
  put(records: MemoryRecord[], vectors: number[][] | null): MaybePromise<unknown>
  search?(...args: any[]): unknown
  enumerate?(...args: any[]): unknown
  drop?(...args: any[]): unknown
}

/** Vectors from the host's embedder: one per text, `embedDimension` finite components
 * each, not all zero (plain arrays or typed arrays). */
export type Vectors = ReadonlyArray<ArrayLike<number>>

/** Memory hooks of one `compact` call (M-1..M-4). Give `memory` or `store`, not both
 * (`invalid_config`). The projected batch must be accepted before the commit; a throw
 * rejects the call with nothing committed (W-3). */
export interface MemoryHooks {
  /** Scope of the projected records (M-4); non-empty. Default `"default"`. */
  sessionId?: string
  /** A `MemoryIndex` (or any `MemorySink`): records are added before the commit. */
  memory?: MemoryIndex | MemorySink
  /** The host's embedder: texts in, one vector per text out. Needs `embedDimension` and
   * a `store` (or a host-vector `MemoryIndex` as `memory`). */
  embed?: (texts: string[]) => MaybePromise<Vectors>
  /** Components of each `embed` vector, an integer in 1..=65,536; required with `embed`. */
  embedDimension?: number
  /** The host's memory store. */
  store?: HostMemoryStore
  /** What the result's `memory` carries (issue 15). Default `"ids"`: `{ session,
   * projected, ids }` — the records went to `memory` / `store` / `embed` inside the call
   * and are not copied into the result. `"result"`: the records as data too
   * (`memory.records`), for a host that stores them itself after the call. Another value
   * throws `invalid_config` before anything runs. */
  memoryRecords?: 'ids' | 'result'
}

/** The second argument of `summarize` / `curator`. */
export interface SummarizeContext {
  /** Fires when the compaction stops waiting for this callback (aborted or timed out). */
  readonly signal: AbortSignalLike
}

/** Hooks (and signals) of one `compact` call. */
export interface CompactHooks extends Signals, MemoryHooks, CallBounds {
  /** Writes a summary or rollup. Without it the deterministic handoff summary is used.
   * A throw or rejection leaves the transcript untouched; a recognised context-size
   * error (`contextExceeded: true`, `status: 413`, or such a message) falls back to the
   * mechanical summary (Y-6), any other reaches the caller unchanged.
   * The second argument's `signal` fires when the call stops waiting for this callback
   * (the `signal` option fired, or its `timeoutMs` / `timeouts.summarize` ran out); its
   * `reason` is the `aborted` / `timeout` error the call rejects with. Pass it on to the
   * HTTP request (`fetch(url, { signal })`) so the summarizer's work stops too. */
  summarize?: (request: SummarizeRequest, context: SummarizeContext) => MaybePromise<SummarizeReply>
  /** Writes the stage-1 summary of the rows before the open run (Y-1): called with
   * `kind: 'curate'` and `rows`. A throw fails the attempt, never a fallback. Gets
   * `{ signal }` as `summarize` does. */
  curator?: (request: SummarizeRequest, context: SummarizeContext) => MaybePromise<SummarizeReply>
  /** Keeps an evicted tool-result body in the host's store before eviction (E-6). */
  storeArtifact?: (item: ArtifactItem) => MaybePromise<StoreArtifactReply>
  /** Receives each event as it happens (J-4): the ones before a host call are delivered
   * before it (`compaction_started` before the first `summarize`), the rest when the job
   * ends; awaited in order. A throw, rejection or timeout never fails the call: it is
   * reported as an `on_event_failed` warning at the end of the result's `events`. */
  onEvent?: (event: CompactionEvent) => MaybePromise<void>
  /** The context window of the model that answers this call's `summarize` requests,
   * tokens (Y-1: after a model fallback it may differ from `summarizerContextWindow`);
   * the summarize request is sized to it for this call only. */
  summarizerContextWindow?: number
}

/** Bounds on the host callbacks one call awaits (I-6). A callback that does not settle
 * in time rejects the call with `timeout`; a fired `signal` with `aborted` (a
 * {@link ContextCompactorAbortError}: an `AbortError` whose `cause` is `signal.reason`). Before the commit nothing is written (transcript, state and store
 * untouched). A timed-out `save` may still land later: reload to see which revision won. */
export interface CallBounds {
  /** Milliseconds any one callback may take to settle (every hook, `load`, `save`). */
  timeoutMs?: number
  /** Per hook, overriding `timeoutMs`; `memory` bounds `embed` + `store` / `memory` together. */
  timeouts?: Partial<Record<'summarize' | 'curator' | 'storeArtifact' | 'memory' | 'onEvent' | 'load' | 'save' | 'countTokens', number>>
  /** An `AbortSignal`: stops waiting when it fires; checked before each callback too. */
  signal?: AbortSignalLike
}

/** Options of `Session.append`: the call bounds plus the append's id (W-5, I-6). */
export interface AppendOptions extends CallBounds {
  /** The append's id (a non-empty string, at most 256 bytes): give a retry of the same
   * rows the same id (e.g. `err.appendId` of the failed call, or your request id) and a
   * save that already landed is not written twice. Default: the id of this Session's
   * earlier failed append of the same rows, else a fresh one. */
  appendId?: string
}

/** What `Session.append` resolves to. */
export interface AppendResult {
  /** The revision the rows were saved at (the loaded one when nothing was written). */
  revision: number
  /** The revision that save expected. */
  expectedRevision: number
  /** Rows this call wrote (0 when the store held them all already). */
  rows: number
  /** The append's id (`options.appendId` or the one the session made). */
  appendId: string
  /** An earlier try of this append (same id, same rows) had landed: nothing written now. */
  alreadyStored?: true
  /** With `alreadyStored`: the revision the store is at now. */
  storeRevision?: number
}

/** The part of `AbortSignal` the engine uses (typed structurally: no DOM lib needed). */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: () => void): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/** One measured signal (C-4, C-9). */
export interface SignalValue {
  /** `provider_total_tokens`, `projected_input_tokens`, `estimated_transcript_tokens`,
   * `forecast_request_tokens`, `request_bytes`, `refusal`. */
  name: string
  /** `flag` values are 0 / 1. */
  unit: 'tokens' | 'bytes' | 'flag'
  value: number
  threshold: number
  crossed: boolean
  /** How a crossing is treated: `high_water` (waits for the cadence), `recovery` (never
   * waits unless the last attempt failed, C-5), `history` (recovery when the last
   * rewrite got history under the threshold, else waits), `refusal` (forces one
   * compaction on a whole-transcript check, C-6). */
  kind: 'high_water' | 'recovery' | 'history' | 'refusal'
}

/** Where the cadence stands at this check (C-4, C-5). */
export interface CadenceView {
  /** The boundary this check counts as. */
  boundary: number
  lastAttemptBoundary: number | null
  /** Boundaries. */
  minBoundariesBetween: number
  /** An ordinary high-water mark may compact now. */
  open: boolean
  /** The last attempt failed (C-5): recovery crossings wait for the cadence too. */
  lastAttemptFailed: boolean
  /** The last committed rewrite left history at or above the threshold. */
  lastRewriteOverThreshold: boolean
}

/** The projection of the next request's input (C-2, C-3), tokens. */
export interface Projection {
  /** The anchor's provider-reported input tokens. */
  anchorTokens: number
  /** Estimated tokens (C-7, calibrated) of the rows appended since the anchor. */
  appendedTokens: number
  /** Rows appended since the anchor. */
  appendedRows: number
  /** `anchorTokens + appendedTokens`. */
  projectedTokens: number
}

/** A warning attached to a decision (C-4: `history_over_threshold_after_rewrite`). */
export interface DecisionWarning { code: string; message: string }

/** The floor compaction cannot remove (C-8), tokens, by part. */
export interface Floor {
  /** System rows and document-level system prompt. */
  systemTokens: number
  /** Tool definitions. */
  toolsTokens: number
  /** The protected newest request and pinned rows. */
  protectedTokens: number
  /** The findings ledger rendered into every request (Y-10). */
  findingsTokens: number
  /** With `projectMemory: false`: the user text every summary must quote whole (the
   * rows' but the protected request's, and what the summary block carries; N-1).
   * Omitted when 0 (always with memory on). */
  userTextTokens?: number
  outputReserveTokens: number
  totalTokens: number
  /** What the floor is held to: the threshold. */
  budgetTokens: number
}

/** Stable reason codes of a decision (C-9); other strings may appear. */
export type DecisionReason =
  | 'provider_usage_over_threshold' | 'projection_over_threshold' | 'estimate_over_threshold'
  | 'forecast_over_window' | 'request_bytes_over_cap' | 'refusal_recovery' | 'forced'
  | 'under_threshold' | 'waiting_for_cadence' | 'unchanged_since_failed_attempt'
  | 'no_provider_usage' | 'cannot_fit'

/** The result of `check` (C-9). */
export interface Decision {
  compact: boolean
  reason: DecisionReason | (string & {})
  /** The signal that decided (`forced` for `force`), or null. */
  decidedBy: string | null
  signals: SignalValue[]
  /** Signals that crossed but wait for the cadence (C-4, C-5). */
  suppressed: string[]
  cadence: CadenceView
  /** The projection when an anchor is usable (C-3). */
  projection: Projection | null
  /** The check was an in-run check (it does not see a refusal, C-6). */
  inRun: boolean
  warnings: DecisionWarning[]
  floor: Floor
  /** `ceil(thresholdPct x contextWindow)`, tokens. */
  thresholdTokens: number
  /** Tokens. */
  contextWindow: number
  /** K-1: what the clearing tier would do now (when `clearToolUses` / `clearThinking` is set). */
  clearing?: ClearingForecast
  /** K-3 / K-4: the prompt-cache cost of the rewrite this check would make. */
  cache?: CacheReport
}

/** K-1: what clearing alone reaches (estimated tokens). */
export interface ClearingForecast {
  items: number
  clearableTokens: number
  tokensBefore: number
  tokensAfter: number
  targetTokens: number
  /** Clearing alone gets under the target: no summary call will be made. */
  reachesTarget: boolean
  firstChangedOffset: number | null
}

/** K-3: a rewrite's prompt-cache cost over `horizonTurns`, in uncached-input-token equivalents. */
export interface CacheReport {
  tier: 'clear' | 'summary'
  firstChangedOffset: number | null
  /** Cached-prefix tokens the rewrite invalidates. */
  invalidatedTokens: number
  keptPrefixTokens: number
  tokensBefore: number
  tokensAfter: number
  callCost: number
  breakCost: number
  savingPerTurn: number
  horizonTurns: number
  costWithout: number
  costWith: number
  /** `costWithout - costWith`: positive when the rewrite pays. */
  netSaving: number
  pays: boolean
  provider: string
}

/** K-1: one item the clearing tier cleared. */
export interface Cleared {
  kind: 'tool_result' | 'thinking'
  offset: number
  messageId: string
  callId?: string
  toolName?: string
  /** The artifact handle holding the full body, when stored. */
  handle?: string
  inputCleared: boolean
  /** UTF-8 bytes removed. */
  bytes: number
}

/** Size of a transcript. */
export interface Size {
  messages: number
  /** UTF-8 bytes of the serialized messages plus document-level fields. */
  bytes: number
  /** Tokens (C-7). */
  estimatedTokens: number
}

/** Who wrote a summary and how much of the history its source carried (Y-7). */
export interface SummarySource {
  writer: 'provider' | 'curator' | 'mechanical'
  coverage: 'whole' | 'trimmed' | 'requests_only'
}

export interface SummaryInfo {
  text: string
  /** 1 = summary of rows, 2 = rolled-up summary (Y-3). */
  level: number
  source: SummarySource
  messageId: string
  /** Offset in the new transcript. */
  offset: number
}

/** A kept row: its offset in the source, in the new transcript, and its stable id (T-4). */
export interface Retained { source: number; offset: number; id: string }

/** One splice of the patch (W-4): at `start`, delete `deleteCount` rows, insert `insert`
 * (stored-view messages). */
export interface Splice { start: number; deleteCount: number; insert: object[] }

/** What eviction did to one tool result (E-1..E-6). */
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
  /** Whole body, UTF-8 bytes. */
  bodyBytes: number
  /** What the copy keeps, UTF-8 bytes. */
  keptBytes: number
}

/** One rollup pass (Y-3). */
export interface Rollup { pass: 'level1_to_level2' | 'level2_merge'; merged: number; writer: 'provider' | 'mechanical' | (string & {}) }

/** A committed rewrite (W-1, W-4). */
export interface Rewrite {
  baseRevision: number
  revision: number
  /** S-6 stage 1 (`before_run`) or stage 2 (`in_run`); `clear` when the clearing tier
   * alone reached the target (K-1). */
  stage: 'before_run' | 'in_run' | 'clear'
  /** `null` when the clearing tier alone reached the target (no summary call, K-1). */
  summary: SummaryInfo | null
  retained: Retained[]
  /** Source offsets folded into the summary. */
  discarded: number[]
  patch: Splice[]
  evicted: Evicted[]
  rollups: Rollup[]
  /** K-1: what the clearing tier cleared in the kept rows. */
  cleared: Cleared[]
  /** K-4: first row that differs from the source in the request view. */
  firstChangedOffset: number | null
}

/** Side spend of summarize calls (W-7), tokens. */
/** Spend (W-7), tokens: summarizer side spend, main requests (from `observeUsage`), and their sum. */
export interface Spend {
  summarizeCalls: number
  /** Side spend: the summarizer's input / output tokens. */
  inputTokens: number
  outputTokens: number
  /** Main requests observed with `observeUsage`, and their tokens. */
  mainRequests: number
  mainInputTokens: number
  mainOutputTokens: number
  /** Main plus side. */
  totalInputTokens: number
  totalOutputTokens: number
}

/** The projection anchor (C-3): the provider's count for the last answered request sent whole. */
export interface Anchor {
  /** Provider-reported input tokens of that request (cached tokens included). */
  inputTokens: number
  /** Messages of the transcript the request carried (`rows[0..rows]`). */
  rows: number
  /** Stable id (T-4) of the last covered message. */
  lastRowId: string | null
  /** Provider that counted (the host's name), if given. */
  provider: string | null
  /** Model that counted, if given. */
  model: string | null
}

/** A transcript's extent: its number of rows and the id of its last row. */
export interface RowsMark { rows: number; lastRowId: string | null }

/** Cadence: what rate-limits compaction (C-4, C-5, C-6). */
export interface Cadence {
  /** Boundaries (answered / refused requests, or bare `compact` calls) seen so far. */
  boundary: number
  /** Boundary of the last compaction attempt, committed or failed (C-5). */
  lastAttemptBoundary: number | null
  /** Estimated tokens of the history right after the last committed rewrite. */
  lastRewriteTokens: number | null
  /** A refusal (or a bounded request) awaits recovery (C-6, B-3). */
  refusal: boolean
  /** The last selection or floor check could not compact: reason code. */
  lastFailure: string | null
  /** What recorded `refusal`; absent when none is recorded. */
  refusalSource?: 'context_refusal' | 'bounded_request'
  /** The projection anchor (C-3); absent after a rewrite, edit, restore, system-prompt
   * update or fork, until the next `observeUsage`. */
  anchor?: Anchor
  /** `boundary` as it was at the last `compact` call (C-4). */
  lastCheckBoundary?: number
  /** The C-4 warning for the last rewrite was given; absent when false. */
  overThresholdWarned?: boolean
  /** The transcript a selection found nothing to fold in (C-5). */
  failedOn?: RowsMark
}

/** A call folded by a stage-2 compaction (Y-5). */
export interface FoldedCall {
  callId: string
  name: string
  /** Arguments, JSON text, clipped to 200 UTF-8 bytes. */
  arguments: string
  /** The result was an error: the call may be made again. */
  failed: boolean
}

/** Persisted per-session state (W-6). `null` or `{}` starts a new session; pass the
 * latest one to every call. */
export interface SessionState {
  /** Revision of the stored transcript; +1 per committed rewrite (W-5). */
  revision: number
  /** Number of the next artifact handle `artifact#<tag>-N` (E-6). */
  nextArtifact: number
  /** The session's tag in its artifact handles (8 lowercase letters set at the first
   * stored body, or your own: 1-16 lowercase letters; issue 14). Omitted when unset. */
  artifactTag?: string
  /** Whose tag `artifactTag` is: 16 hex digits of the FNV-1a hash of the session id it
   * was derived under; a call under another `sessionId` re-tags first (issue 14).
   * Omitted when unset. */
  artifactTagSession?: string
  /** The session's earlier artifact tags, oldest first (newest 64): their handles are
   * still the session's. Omitted when empty. */
  earlierArtifactTags?: string[]
  /** The tag came from `noteTranscriptEdit(state, 'fork')`: it is derived again from the
   * fork's own rows before its first handle, so two forks of one state differ (J-5).
   * Omitted when false. */
  artifactTagFork?: boolean
  cadence: Cadence
  /** Calls folded by stage-2 compactions of the open run (Y-5), oldest first. */
  ledger: FoldedCall[]
  /** Id of the run request the ledger belongs to. */
  ledgerRun: string | null
  spend: Spend
  /** Provider-reported / estimated tokens (C-7); 0 = unknown. */
  calibration: number
  /** A selection failure was already warned about (S-5). */
  selectionWarned: boolean
  /** Findings ledger (Y-10), oldest first: never folded, counted in the floor (C-8),
   * rendered into every request view. */
  findings: string[]
  /** The summaries the engine wrote that are still in the transcript (issue 14 trust
   * boundary): a row's `summary_level` / `compaction_summary` marks are honoured only
   * when listed here. Omitted when empty. */
  summaries?: { id: string; hash: string }[]
  /** Ids of rows the host pinned with `pin(state, messageId)`: the only `pinned: true`
   * rows honoured (Y-10). Omitted when empty. */
  pins?: string[]
  /** Host-named artifact handles the engine stored (newest 512): stamped refs naming
   * them count as the session's. Omitted when empty. */
  handles?: string[]
  /** Content ids of repeated rows (T-4, issue 14): a retained row whose earlier twin was
   * folded keeps its id through this table, with no key added to the row. Omitted when
   * empty. */
  twins?: { hash: string; counters: number[] }[]
  /** The last appends `Session.append` saved, oldest first (newest 16): id, FNV-1a hash
   * of the rows' JSON (16 hex digits), the revision saved, the rows added; a retried
   * append finds its own here (W-5, I-6). Omitted when empty. */
  appends?: { id: string; hash: string; revision: number; rows: number }[]
}

/** A state as accepted on input: any subset (missing fields default), or null. */
export type StateInput = Partial<SessionState> | null | undefined

/** What a memory record was projected from (M-1): user / assistant text, a tool result
 * body, a tool call's arguments (one `key: value` line per argument), or an instruction
 * document the summary did not re-attach whole (N-6; `mentions[0]` is its message id). */
export type RecordKind = 'narrative' | 'tool_output' | 'tool_input' | 'instruction'

/** One memory record (M-1): a chunk of discarded context, scoped to one session. */
export interface MemoryRecord {
  /** `mem-` + 16 lowercase hex digits, deterministic. */
  id: string
  /** The owning session; recall never crosses it (M-4). */
  session: string
  /** Stable id of the source message (T-4). */
  messageId: string
  role: 'system' | 'user' | 'assistant' | 'tool'
  /** Inclusive source message offsets `[start, end]`. */
  sourceRange: [number, number]
  /** Half-open UTF-8 byte range `[start, end)` of `content` in the source text. */
  byteRange: [number, number]
  kind: RecordKind
  toolName?: string
  /** The call a tool output answered, or the call of a tool input. */
  callId?: string
  /** Artifact handle (`artifact#N`) of the full output in the host store (M-2). */
  handle?: string
  /** File paths, URLs and identifiers the content names (a tool output also lists its
   * call's); at most 32; absent when none. */
  mentions?: string[]
  /** What led to the record, at most 300 UTF-8 bytes, indexed at a quarter of a
   * content word's weight and never returned as the passage: a tool output's call's
   * argument values (one a line); for a tool call's arguments and assistant text, the
   * newest user text before the row. Absent otherwise (and in older records). */
  context?: string
  /** The chunk text, at most 1,000 UTF-8 bytes. */
  content: string
}

/** The records one compaction projected (M-1), all of one session, in source order. */
export interface MemoryBatch { session: string; records: MemoryRecord[] }

/** The result's `memory` (M-1, issue 15): the session, how many records were projected
 * (and accepted by the memory hooks, W-3) and their ids in source order; `records` only
 * with `memoryRecords: "result"`. */
export interface MemorySummary { session: string; projected: number; ids: string[]; records?: MemoryRecord[] }

/** The result of `compact`, typed by the compactor's format `F`. */
export interface CompactResult<out F extends ProviderFormat | 'auto' = ProviderFormat | 'auto'> {
  status: 'compacted' | 'skipped' | 'cannot_fit' | 'failed'
  reason: string
  decision: Decision
  /** The stored transcript (with provenance), in the input's format. */
  transcript: StoredDocumentOf<F>
  /** The request view: provenance removed (F-4), findings rendered in (Y-10). */
  request: DocumentOf<F>
  rewrite: Rewrite | null
  before: Size
  after: Size
  validation: { ok: boolean; checks: string[] }
  /**
   * Set when the committed rewrite still leaves the next request over the compaction
   * threshold or the context window (N-4; also a `warning` event with code
   * `over_window`); `null` otherwise. Tokens: the next request (transcript, tool
   * definitions, findings, output reserve), the window, the threshold, the floor
   * compaction cannot remove (C-8), which limit is crossed and by how much.
   */
  overWindow: {
    tokens: number
    contextWindow: number
    thresholdTokens: number
    floorTokens: number
    limit: 'context_window' | 'threshold'
    by: number
  } | null
  /** Persist this and pass it to the next call. */
  state: SessionState
  spend: Spend
  events: CompactionEvent[]
  error: { code: ErrorCode; message: string } | null
  /** What the committed rewrite discarded, projected into memory records (M-1): their
   * count and ids (the records themselves with `memoryRecords: "result"`); null when
   * nothing was committed. */
  memory: MemorySummary | null
}

/** What `observeUsage` records about one answered request (C-3, C-6, C-7). */
export interface Observation {
  /** Provider usage of the answer, in the provider's own field names. */
  usage?: Record<string, unknown> | null
  /** The provider that counted (compared as given). */
  provider?: string | null
  /** The model that counted. */
  model?: string | null
  /** The request carried the open run's results shortened (`boundRequest` returned a
   * non-empty `bounded`): it anchors nothing and keeps a recorded refusal (B-3). */
  bounded?: boolean
  /** Tool definitions sent with the request (any JSON), for calibration. */
  tools?: unknown
  /** Or their size, UTF-8 bytes. */
  toolsBytes?: number | null
  /** Receives a `warning` event (`usage_unreadable`, naming the keys) when `usage`
   * has no token count the engine reads (I-3). */
  onEvent?: (event: CompactionEvent) => unknown
}

/** Host changes to the transcript outside compaction (C-3, C-6). */
export type EditKind = 'edit' | 'revision_restore' | 'system_prompt' | 'fork'

/** Options of `boundRequest` (B-1..B-3). */
export interface BoundOptions {
  /** Provider request-body cap, UTF-8 bytes. Default: the config's `maxRequestBytes`. */
  maxRequestBytes?: number | null
  /** The model's input budget, tokens. Default: `contextWindow` - output reserve. */
  inputBudgetTokens?: number | null
  /** Tool definitions sent with the request (any JSON). */
  tools?: unknown
  /** Or their size, UTF-8 bytes. */
  toolsBytes?: number | null
  /** Exact provider-lowered body size of the composed request, UTF-8 bytes. */
  requestBytes?: number | null
  /** Compaction is on for this session (default true). Off: nothing is recorded in the state. */
  compaction?: boolean
  /** Receives the `tool_results_bounded_for_request` event when anything was shortened
   * (B-3, J-4); called synchronously, a throw is ignored (the event is in the result). */
  onEvent?: (event: CompactionEvent) => void
}

/** One result shortened for the request (B-2). */
export interface BoundedCall {
  callId: string
  name: string | null
  /** Offset of the message carrying the result. */
  offset: number
  /** UTF-8 bytes of the result's text the request keeps (the head). */
  keptBytes: number
  /** The whole result: text bytes plus media payload bytes. */
  wholeBytes: number
  /** Media items replaced by placeholders. */
  mediaOmitted: number
}

/** The limit a request was held to (B-1). */
export interface RequestLimit {
  /** Body cap, UTF-8 bytes, if any. */
  maxRequestBytes: number | null
  /** Input budget, tokens. */
  inputBudgetTokens: number
  overBytes: boolean
  overTokens: boolean
  /** The share each shortened result got, UTF-8 bytes; null when nothing was shortened. */
  shareBytes: number | null
}

/** Request size: body UTF-8 bytes and input forecast tokens. */
export interface RequestSize { bytes: number; forecastTokens: number }

/** The result of `boundRequest` (B-1..B-3). */
export interface BoundResult<out F extends ProviderFormat | 'auto' = ProviderFormat | 'auto'> {
  /** The request view to send (a copy; the stored transcript is not touched). */
  request: DocumentOf<F>
  bounded: BoundedCall[]
  limit: RequestLimit
  before: RequestSize
  after: RequestSize
  /** Within both limits after bounding. */
  fits: boolean
  /** `tool_results_bounded_for_request` when anything was shortened, else null. */
  event: CompactionEvent | null
  /** The state with the bound recorded like a refusal (B-3). */
  state: SessionState
}

/** The compactor: options are resolved once; every call is independent and pure. */
/** A transcript held by the engine (`compactor.open(transcript)`). */
export class LiveTranscript<F extends ProviderFormat | 'auto' = 'auto'> {
  private constructor()
  /** Adds provider messages (an array, one message, or their JSON text); only these rows
   * are decoded and measured. Atomic: throws `invalid_transcript` naming the offset and
   * appends nothing. */
  append(rows: object | object[] | string): void
  /** The same decision as `compactor.check(state, transcript, signals)` on the held
   * transcript, in time independent of its length (C-9). */
  check(state: StateInput, signals?: Signals | null): Decision
  /** Compacts the held transcript; a committed rewrite replaces it. While it runs the
   * other methods throw `protocol_error`. */
  compact(state: StateInput, hooks?: CompactHooks | null): Promise<CompactResult<F>>
  /** The held transcript, stored view. */
  transcript(): StoredDocumentOf<F>
  /** Rows held. */
  readonly length: number
  free(): void
}

/** `F`: the format named in the options (`new ContextCompactor({ format: 'anthropic' })`
 * is a `ContextCompactor<'anthropic'>`): transcripts, results and requests are typed as
 * that provider's documents (F-1, J-3). */
export class ContextCompactor<F extends ProviderFormat | 'auto' = 'auto'> {
  /** @throws {ContextCompactorError} `invalid_config` naming the bad field; `unknown_format`. */
  constructor(options?: (CompactorOptions & { format?: F }) | null)
  /** The resolved configuration. */
  readonly config: ResolvedConfig
  /** Pure check (C-9): should this transcript be compacted now?
   * @throws {ContextCompactorError} `invalid_state`, `invalid_transcript`, `unknown_format`, `invalid_config` (signals). */
  check(state: StateInput, transcript: TranscriptInput<F>, signals?: Signals | null): Decision
  /** The same dry run as `check`, as a Promise: for an async `countTokens` hook (I-4). */
  checkAsync(state: StateInput, transcript: TranscriptInput<F>, signals?: Signals | null): Promise<Decision>
  /** Runs one compaction. Rejects with a `ContextCompactorError` (or a hook's own
   * error), carrying `state`; the input transcript is never modified (W-3). */
  compact(state: StateInput, transcript: TranscriptInput<F>, hooks?: CompactHooks | null): Promise<CompactResult<F>>
  /** The request view of a stored transcript: provenance keys removed (F-4); with a
   * `state` holding findings, the findings ledger as one pinned user-role text message
   * right after the system rows (Y-10). */
  /** `cacheBreakpoints: true` (Anthropic): `cache_control` on the system prompt, the end
   * of the summary block and the last message (K-4). */
  toRequest(transcript: TranscriptInput<F>, state?: StateInput, options?: { cacheBreakpoints?: boolean }): DocumentOf<F>
  /** Holds the decoded transcript (JSON text is the fast path) with its measures, so
   * each later `check` costs what was appended, not the whole transcript (issue
   * "performance"). @throws {ContextCompactorError} `invalid_transcript`, `unknown_format`. */
  open(transcript: TranscriptInput<F>): LiveTranscript<F>
  /** Records an answered request (C-3, C-6, C-7): `transcript` as that request carried
   * it (before the answer). Returns the new state; advances the cadence by one boundary.
   * Sent whole: anchors the projection, calibrates the estimate, clears a refusal. */
  observeUsage(state: StateInput, transcript: TranscriptInput<F>, observation?: Observation | null): SessionState
  /** The provider refused a request for not fitting the context: the next
   * whole-transcript check compacts once (C-6). Returns the new state. */
  recordRefusal(state: StateInput): SessionState
  /** A host change to the transcript: drops the projection anchor; `edit` and `fork`
   * also drop a recorded refusal (C-3, C-6). @throws {ContextCompactorError} `invalid_config` for another kind. */
  noteTranscriptEdit(state: StateInput, kind: EditKind): SessionState
  /** Bounds the open run's own tool results for one request (B-1..B-3): call after the
   * check, with the transcript about to be sent. Every call / result id is kept. */
  boundRequest(state: StateInput, transcript: TranscriptInput<F>, options?: BoundOptions | null): BoundResult<F>
  /** Frees the wasm memory now (otherwise a FinalizationRegistry does it). */
  free(): void
}

/** What a host store keeps per session (W-5, W-8): the stored-view transcript, the
 * state and the record's revision. */
export interface SessionRecord<out F extends ProviderFormat | 'auto' = ProviderFormat | 'auto'> {
  transcript: F extends ProviderFormat ? StoredDocumentOf<F> : object
  state: SessionState
  /** +1 per committed rewrite. */
  revision: number
  /** The folded user text, whole (N-1): the user `narrative` memory records of the rows
   * `Session.compact` folded while no memory hook (`memory`, `store`, `embed`) took
   * them, oldest first. Every save carries them on. Omitted when empty. */
  memory?: MemoryRecord[]
}

/** What `load()` may return: missing `state` = a new session, missing `revision` =
 * `state.revision`. */
export interface SessionRecordInput {
  transcript: object
  state?: StateInput
  revision?: number | null
  memory?: MemoryRecord[] | null
}

/** The second argument of `save` (W-5). */
export interface SaveInfo {
  /** Write only when the stored revision is still this one (compare-and-swap). */
  expectedRevision: number
  /** The revision of the record being written. */
  revision: number
  /** The splices from the loaded transcript to the new one (W-4); empty when unchanged. */
  patch: Splice[]
}

/** Host storage of a `Session` (W-5, W-8). `save` refuses a stale write by throwing an
 * error with `code: 'stale_revision'` or by answering `{ ok: false, reason:
 * 'stale_revision' }`; another `{ ok: false, reason }` becomes `save_failed`. */
export interface SessionStore {
  /** `null` / `undefined` = nothing saved yet (an empty session at revision 0). */
  load(): MaybePromise<SessionRecordInput | null | undefined>
  save(record: SessionRecord, info: SaveInfo): MaybePromise<unknown>
  /** The conversation's id (the stores of `context-compactor/stores` have it): the AI SDK
   * helper's `sessionId` (memory scope, artifact handle tag) when none is given (M-2, M-4). */
  readonly sessionId?: string
}

/** The result of `Session.compact`: the `compact` result plus the saved revisions. */
export interface SessionCompactResult<out F extends ProviderFormat | 'auto' = ProviderFormat | 'auto'> extends CompactResult<F> {
  saved: { revision: number; expectedRevision: number }
}

/** A compacted session kept in host storage (W-5, W-8): load, compact, save in ONE
 * compare-and-swap `save` call. */
export class Session<F extends ProviderFormat | 'auto' = 'auto'> {
  /** The compactor's options apply to every call.
   * @throws {ContextCompactorError} `invalid_config` when `load` or `save` is not a
   * function, or `compactor` is not a ContextCompactor of this entry's build (a
   * `context-compactor/lite` compactor takes the lite `Session`); `invalid_state` when
   * `compactor` was freed. */
  constructor(compactor: ContextCompactor<F>, store: SessionStore)
  /** Loads, compacts with the same hooks as `ContextCompactor.compact`, saves transcript
   * and state together at the next revision, expected at the loaded one (a skip is a
   * write too: the revision always moves). Rejects with `stale_revision` when the store
   * refuses (nothing written; load and retry), `save_failed`, `timeout` / `aborted`
   * (`hooks` bound `load` and `save` too), or as `compact` does (a failed compaction
   * saves nothing). Every rejection carries `err.state`. */
  compact(hooks?: CompactHooks | null): Promise<SessionCompactResult<F>>
  /** Appends stored-view messages (one, an array, or their JSON text) in ONE
   * compare-and-swap `save` at the next revision, with the patch `[{ start, deleteCount:
   * 0, insert }]`. A stale refusal reloads and retries (up to 8 tries): no row is lost or
   * written twice. Idempotent on `message_id`: a row whose `message_id` a stored row has
   * with the same JSON is not written again (when all are held nothing is saved and
   * `rows` is 0; `rows` counts the rows written). A store with nothing saved yet (`load`
   * gives null) gets its first record. Rejects with `invalid_transcript` (or a pairing
   * code; also when a stored row has one's `message_id` with other content),
   * `stale_revision`, `timeout`, `aborted`; `invalid_config` for a bad `appendId` or one
   * already saved with other rows.
   *
   * Safe to retry (W-5, I-6): a `save` that timed out or was aborted may still have
   * landed (the rejection says so and carries `mayHaveCommitted: true`; every rejection
   * after the first load carries `appendId`). Each append records its id and its rows'
   * hash in the saved state (`state.appends`, newest 16), so retrying the same rows on
   * this Session, or passing `appendId` from another one, resolves with `rows: 0` and
   * `alreadyStored: true` when the first save landed, and writes them otherwise. */
  append(rows: object | object[] | string, options?: AppendOptions | null): Promise<AppendResult>
  /** The stored record, normalised (`state` complete, `revision` set). */
  load(): Promise<SessionRecord<F>>
  /** The request view of the stored transcript with the findings rendered in (F-4, Y-10). */
  request(): Promise<DocumentOf<F>>
  /** Records a finding (Y-10) and saves it at the next revision (compare-and-swap; a
   * stale refusal reloads and retries, up to 8 tries). Resolves to the new state.
   * Rejects with `invalid_state` for blank text or text over 4,096 UTF-8 bytes,
   * `stale_revision` when every try was refused, `timeout`, `aborted`. */
  recordFinding(text: string, options?: CallBounds | null): Promise<SessionState>
  free(): void
}

/** Returns `state` with `messageId` in `state.pins` (Y-10, issue 14): a row is pinned
 * only when it carries `pinned: true` and the state lists its id.
 * @throws {ContextCompactorError} `invalid_state` for a blank id. */
export function pin(state: StateInput, messageId: string): SessionState

/** Returns `state` vouching for the provenance of a transcript the host's own store kept
 * (its summary rows, pinned rows, artifact refs), e.g. one stored before the state
 * recorded summaries. Never for text a user, a tool or a model wrote (issue 14).
 * @throws {ContextCompactorError} `invalid_state`, `invalid_transcript`, `unknown_format`. */
export function trustProvenance(state: StateInput, transcript: TranscriptInput, format?: ProviderFormat | null): SessionState

/** Returns `state` with `text` in its findings ledger (Y-10); an exact repeat is not
 * added twice. @throws {ContextCompactorError} `invalid_state` for blank text or text
 * over 4,096 UTF-8 bytes. */
export function recordFinding(state: StateInput, text: string): SessionState

/** What an add did (M-3). */
export interface AddReport {
  /** Records newly stored. */
  added: number
  /** Records that replaced a stored record with the same id in the same session. */
  replaced: number
  /** Ids of records not stored because their content has no tokens. */
  skipped: string[]
}

/** One recalled passage (M-2). */
export interface RecallHit {
  /** Memory record id. */
  id: string
  content: string
  /** Relevance in (0, 1], higher is better: the fused score over the best possible one
   * (the `ranking`'s own score otherwise; a host store's score from `recallFromStore`). */
  score: number
  /** Stable id of the source message (T-4). */
  messageId: string
  role: 'system' | 'user' | 'assistant' | 'tool'
  /** Inclusive source message offsets `[start, end]`. */
  sourceRange: [number, number]
  kind: RecordKind
  toolName?: string
  callId?: string
  /** Artifact handle (`artifact#N`); resolve it with `resolveHandle` (M-2). */
  handle?: string
  /** Paths and identifiers the passage mentions; absent when none. */
  mentions?: string[]
}

/** The answer to one recall (M-2). */
export interface RecallResult {
  query: string
  /** The effective limit, 1..=20. */
  limit: number
  /** Best first; at most `limit`. */
  hits: RecallHit[]
}

/** Options of `MemoryIndex.recall`. */
export interface RecallOptions {
  /** Hits wanted; default 5, floored and clamped to 1..=20. */
  limit?: number | null
  /** A host-vector index only (required there): the host's embedding of the query,
   * `dimension` components. */
  vector?: ArrayLike<number> | null
  /** `'fused'` (default), `'lexical'` (BM25 alone) or `'vector'` (the vectors alone).
   * Embedded index: fused = BM25 over the inverted index and the embedded vectors,
   * weighted reciprocal rank fusion. Host-vector index: fused = BM25 over the records'
   * terms and the host vectors' cosine, relative score fusion weighted by `alpha`; a
   * record sharing no word with the query is found by its vector. Anything else throws
   * `memory_failed`. */
  ranking?: 'fused' | 'lexical' | 'vector' | null
  /** Host-vector index, fused ranking: weight of the host vectors, a number in [0, 1]
   * (0 = BM25 alone, 1 = the vectors alone; default 0.2); anything else throws
   * `memory_failed`. Ignored on an embedded index. */
  alpha?: number | null
  /** Host-vector index: a session of at least 4,096 records is read through its
   * partition (an IVF index: the lists nearest to `vector`, about 2,048 records, plus the
   * BM25 candidates); `true` computes every record's cosine instead (an exact scan, for
   * comparison). Default false; anything but a boolean throws `memory_failed`. */
  exact?: boolean | null
}

/** Options of `MemoryIndex.enumerate` (M-4). */
export interface EnumerateOptions {
  /** `next` of the previous page; absent for the first page. */
  pageToken?: string | null
  /** Records per page; default 100, clamped to 1..=1,000. */
  pageSize?: number | null
}

/** One page of `MemoryIndex.enumerate` (M-4). */
export interface MemoryPage {
  /** Records in source order. */
  records: MemoryRecord[]
  /** Token of the next page; null on the last page. */
  next: string | null
}

/** A session-scoped memory index living in wasm (M-3, M-4). `new MemoryIndex()` uses the
 * embedded embedder (deterministic hashed, IDF-weighted bag of words, 512 dimensions)
 * and an inverted index: recall ranks by BM25 and the embedded vectors, fused;
 * `new MemoryIndex({ dimension })` stores host vectors of that many components
 * (`addWithVectors`, `recall(session, query, { vector })`). Every read names one session
 * and never sees another session's records. Methods throw `memory_failed`. */
export class MemoryIndex {
  /** @throws {ContextCompactorError} `memory_failed` when `dimension` is not an integer in 1..=65,536. */
  constructor(options?: { dimension?: number | null } | null)
  /** Rebuilds an index from `snapshot()` bytes (version 2, with the inverted index, or
   * version 1, whose records are indexed again).
   * @throws {ContextCompactorError} `memory_failed` on bytes that are not a snapshot of a
   * version this build reads (the message names the version). */
  static restore(bytes: Uint8Array): MemoryIndex
  /** Versioned JSON snapshot (version 2: records and each session's inverted index), UTF-8
   * bytes (same index, same bytes). */
  snapshot(): Uint8Array
  /** Vector components (512 for the embedded embedder). */
  readonly dimension: number
  /** Who embeds this index's records. */
  readonly embedder: 'embedded' | 'host'
  /** Number of records stored for `session`. */
  size(session: string): number
  /** Sessions holding records, in byte order. */
  sessions(): string[]
  /** Adds records (each into its own `session`; same id replaces). Embedded index only;
   * stores nothing on malformed records or a host index (`memory_failed`). */
  add(records: MemoryRecord[] | MemoryBatch): AddReport
  /** Adds records with host vectors (one per record, `dimension` components, not all
   * zero). Host index only; stores nothing otherwise (`memory_failed`). */
  addWithVectors(records: MemoryRecord[] | MemoryBatch, vectors: Vectors): AddReport
  /** Searches `session`'s records only (M-2, M-4); one hit per distinct passage. A host
   * index needs `options.vector`. Session names must be well-formed UTF-16 (a lone
   * surrogate throws `memory_failed`, here and in every method that takes a session). */
  recall(session: string, query: string, options?: RecallOptions | null): RecallResult
  /** Pages through `session`'s records in source order (M-4).
   * @throws {ContextCompactorError} `memory_failed` when `pageToken` is not a string or null,
   * `pageSize` is not a finite number, or the token was not issued by this index. */
  enumerate(session: string, options?: EnumerateOptions | null): MemoryPage
  /** Removes every record of `session` at once (M-4); returns how many. */
  dropScope(session: string): number
  /** Loads an artifact by handle through the host's loader (M-2). The handle must belong
   * to a record of `session`; otherwise it throws `memory_failed` and the loader is not
   * called (no cross-session reads, M-4). */
  resolveHandle<T>(session: string, handle: string, loadArtifact: (handle: string) => MaybePromise<T>): Promise<T>
  free(): void
}

/** JSON schema of the recall tool's parameters: `query` (string, required), `limit`
 * (integer 1..=20, default 5). Gemini's is the OpenAPI subset with upper-case types. */
export type RecallToolSchema = Record<string, unknown>

/** The `recall` tool in each provider's tool shape (M-2). */
export interface RecallToolDefinitions {
  /** An entry of `tools[]`. */
  'openai-chat': { type: 'function'; function: { name: 'recall'; description: string; parameters: RecallToolSchema } }
  'openai-responses': { type: 'function'; name: 'recall'; description: string; parameters: RecallToolSchema; strict: false }
  anthropic: { name: 'recall'; description: string; input_schema: RecallToolSchema }
  /** An entry of `tools[].functionDeclarations`. */
  gemini: { name: 'recall'; description: string; parameters: RecallToolSchema }
  'ai-sdk': { name: 'recall'; description: string; inputSchema: RecallToolSchema }
}

/** The `recall` tool definition in a provider's tool shape (M-2); answer its calls with
 * `MemoryIndex.recall`. @throws {ContextCompactorError} `unknown_format` for another name
 * (including `canonical`). */
export function recallToolDefinition<F extends ToolFormat>(format: F): RecallToolDefinitions[F]

/** The format of a transcript (F-1). @throws {ContextCompactorError} `unknown_format`
 * when the shape is ambiguous or unknown. */
export function detectFormat(transcript: TranscriptInput): ProviderFormat

/** One input line or entry an importer skipped or repaired (N-2). */
export interface ImportWarning {
  /** 1-based line of a JSON Lines input; `null` for whole-JSON inputs (the message names the index). */
  line: number | null
  /** Stable code, e.g. `torn_line`, `not_json`, `missing_type`, `bad_content`, `duplicate_row`, `reused_uuid`,
   * `compact_boundary`, `attachment_not_imported`, `subagent_dropped`, `orphan_result`,
   * `unanswered_call`, `duplicate_call_id`, `orphan_observation`, `unknown_line_type`. */
  code: string
  /** What was skipped or repaired, and why. */
  message: string
}

/** A Claude Code subagent run, kept out of the main thread (N-2). */
export interface ImportedSubagent {
  /** The `Task` / `Agent` tool_use id the run answers; `null` when the log does not say. */
  callId: string | null
  /** The subagent's `agentId` (session logs; else the run's own session id). */
  agentId?: string
  /** Always `anthropic`. */
  format: 'anthropic'
  /** The run as a valid document of `format`. */
  document: DocumentTypes['anthropic']
}

/** Tokens of the last model call a log recorded (input includes cached tokens). */
export interface ImportUsage {
  input_tokens: number
  output_tokens: number
  total_tokens: number
  /** Cache reads included in `input_tokens` (0 when the log does not say). */
  cached_input_tokens: number
  /** Reasoning tokens included in `output_tokens` (0 when the log does not say). */
  reasoning_tokens: number
}

/** Options of `importTranscript`. */
export interface ImportOptions {
  /** Claude Code subagent runs: kept in `subagents` (`attach`, default) or dropped with a
   * counted warning (`drop`). Never in the main thread either way. */
  subagents?: 'attach' | 'drop'
}

/** What `importTranscript` returns: the format and its document, typed together (the
 * document passes its format's pairing check), with `warnings` (skipped and repaired
 * input, in input order), `subagents` (Claude Code runs; absent when there are none) and
 * `usage` (the log's last recorded model call: Claude Code `message.usage`, Codex
 * `token_count.last_token_usage`). */
export type ImportResult = {
  [K in ProviderFormat]: { format: K; document: DocumentTypes[K]; warnings: ImportWarning[]; subagents?: ImportedSubagent[]; usage?: ImportUsage }
}[ProviderFormat]

/** Converts a log or provider document to `{ format, document, warnings, subagents?, usage? }` (N-2).
 * @param kind `auto` (a sniffed log kind, else the detected provider format, N-3), a log
 *   kind, or a format name (the text is parsed as its JSON).
 * @throws {ContextCompactorError} `invalid_transcript` (nothing valid remains), `unknown_format`
 *   (with a hint naming the likely source, e.g. a LangChain dump), `invalid_config` (options). */
export function importTranscript(kind: 'auto' | LogKind | ProviderFormat, text: string, options?: ImportOptions): ImportResult

/** The package version (Cargo.toml). */
export function version(): string


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
export interface HostStoreSearchRequest { session: string; query: string; limit: number; vector?: number[]; ranking?: 'fused' | 'lexical' | 'vector' }
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
    /** Hits at most: default 5, rounded down and clamped to 1..20 (as `MemoryIndex.recall`). */
    limit?: number
    /** Checked as `MemoryIndex.recall` checks it (another name: `memory_failed`) and handed
     * to `store.search` as `ranking` when given. */
    ranking?: 'fused' | 'lexical' | 'vector' | null
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
