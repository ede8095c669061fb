// Compiled by `tsc --noEmit -p tests/types` (tests/js/types.test.mjs): a typed consumer of
// every export. Lines marked @ts-expect-error must stay errors: the types reject misuse.
// Compiled with lib es2022 only: the package types need no DOM or Node lib.
declare const console: { log(...args: unknown[]): void }
import init, {
  ContextCompactor, detectFormat, importTranscript, initSync, version,
  type CompactHooks, type CompactResult, type ContextCompactorError, type Decision,
  type SessionState, type SummarizeRequest, type ProviderFormat,
  MemoryIndex, Session, recallToolDefinition, recordFinding,
  type AddReport, type ArtifactItem, type BoundResult, type ErrorCode, type HostMemoryStore, type MemoryRecord,
  type OpenAIChatDocument, type RecallHit, type RecallResult, type SessionCompactResult, type SessionRecord, type SessionStore,
} from 'context-compactor'
import wasmModule from 'context-compactor/wasm'

export async function main(transcript: OpenAIChatDocument, saved: SessionState | null): Promise<SessionState> {
  await init()
  initSync({ module: wasmModule })
  const v: string = version()
  const c = new ContextCompactor({ format: 'openai-chat', profile: 'meerkat', contextWindow: 128_000, thresholdPct: 0.7 })
  const window: number = c.config.contextWindow
  const d: Decision = c.check(saved, transcript, { usage: { total_tokens: 90_000 }, toolsBytes: 2048 })
  if (!d.compact) return saved ?? ({} as SessionState)
  const reason: string = d.reason
  const firstSignal = d.signals[0]?.unit satisfies 'tokens' | 'bytes' | 'flag' | undefined

  // Hooks may be sync or async (J-2).
  const syncHooks: CompactHooks = { summarize: (req: SummarizeRequest) => `sync ${req.kind} ${req.messages.length}` }
  const asyncHooks: CompactHooks = {
    summarize: async (req) => ({ text: `async ${req.maxOutputTokens}`, usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    onEvent: async (e) => { console.log(e.type, e.data) },
    force: true,
  }
  // break finding 14: the second argument carries the engine's signal (aborted or timed out)
  const cancellable: CompactHooks = {
    summarize: async (req, { signal }) => {
      const aborted: boolean = signal.aborted
      signal.addEventListener('abort', () => { console.log('stop', signal.reason) })
      return aborted ? '' : `cancellable ${req.kind}`
    },
  }
  await c.compact(null, transcript, cancellable)
  const r1: CompactResult = await c.compact(saved, transcript, syncHooks)
  const r2 = await c.compact(r1.state, JSON.stringify(transcript), asyncHooks)
  if (r2.rewrite) {
    const handles: (string | null)[] = r2.rewrite.evicted.map((e) => e.handle)
    const kept: number[] = r2.rewrite.retained.map((k) => k.source)
    const summary: string | undefined = r2.rewrite.summary?.text
    console.log(handles, kept, summary, r2.rewrite.discarded.length, r2.after.estimatedTokens - r2.before.estimatedTokens)
  }
  try {
    await c.compact(null, transcript)
  } catch (err) {
    const e = err as ContextCompactorError
    const code: 'invalid_transcript' | string = e.code
    console.log(code, e.state?.revision)
  }
  const f: ProviderFormat = detectFormat(transcript)
  const imported = importTranscript('claude-code-jsonl', '{}')
  const f2: ProviderFormat = imported.format
  console.log(v, window, reason, firstSignal, f, f2, c.toRequest(r2.transcript))
  c.free()
  return r2.state
}

// @ts-expect-error unknown profile
new ContextCompactor({ profile: 'fast' })
// @ts-expect-error a summarize hook must return text (or { text })
const bad: CompactHooks = { summarize: () => 42 }
// @ts-expect-error importTranscript takes a known kind
importTranscript('yaml', '')
export { bad }

// Capacity (C-3, C-6, B-1..B-3), findings (Y-10), sessions (W-5, W-8), memory (M-1..M-4).
export async function capacity(c: ContextCompactor, transcript: object, s0: SessionState): Promise<number> {
  const s1: SessionState = c.observeUsage(s0, transcript, { usage: { input_tokens: 50_000 }, provider: 'anthropic', model: 'claude', toolsBytes: 512 })
  const anchorTokens: number | undefined = s1.cadence.anchor?.inputTokens
  const s2 = c.recordRefusal(s1)
  const source: 'context_refusal' | 'bounded_request' | undefined = s2.cadence.refusalSource
  const s3 = c.noteTranscriptEdit(s2, 'fork')
  const d = c.check(s3, transcript, { provider: 'anthropic', model: 'claude', inRun: true })
  const projected: number | undefined = d.projection?.projectedTokens
  const open: boolean = d.cadence.open
  const waiting: string[] = d.suppressed
  const findingsTokens: number = d.floor.findingsTokens
  const b: BoundResult = c.boundRequest(s3, transcript, { maxRequestBytes: 1_000_000, compaction: true })
  const kept: number[] = b.bounded.map((x) => x.keptBytes)
  const s4 = recordFinding(b.state, 'the build needs --no-default-features')
  const findings: string[] = s4.findings
  const req = c.toRequest(transcript, s4)
  console.log(anchorTokens, source, projected, open, waiting, findingsTokens, kept, findings, req, b.fits, b.event?.type)
  return c.config.minBoundariesBetween
}

export async function sessions(c: ContextCompactor): Promise<SessionState> {
  let stored: SessionRecord | null = null
  const store: SessionStore = {
    load: async () => stored ?? { transcript: { messages: [] } },
    save: (record, info) => {
      if (stored && stored.revision !== info.expectedRevision) return { ok: false, reason: 'stale_revision' }
      stored = record
      return info.patch.length
    },
  }
  const s = new Session(c, store)
  const r: SessionCompactResult = await s.compact({ force: true, sessionId: 'chat-1' })
  const rev: number = r.saved.revision
  const loaded: SessionRecord = await s.load()
  const state: SessionState = await s.recordFinding('user prefers metric units')
  console.log(rev, loaded.revision, await s.request())
  s.free()
  return state
}

export async function memory(c: ContextCompactor, transcript: object): Promise<RecallHit[]> {
  const index = new MemoryIndex()
  const curate: CompactHooks = {
    curator: async (req: SummarizeRequest) => `curated ${req.kind === 'curate' ? req.rows?.length : 0}`,
    storeArtifact: async (item: ArtifactItem) => (item.body.length > 0 ? `blob:${item.callId}` : false),
    sessionId: 'chat-1',
    memory: index,
    memoryRecords: 'result',
  }
  const r = await c.compact(null, transcript, curate)
  const records: MemoryRecord[] = r.memory?.records ?? []
  const memProjected: number = r.memory?.projected ?? 0
  const memIds: string[] = r.memory?.ids ?? []
  console.log(memProjected, memIds.length)
  const writer: 'provider' | 'curator' | 'mechanical' | undefined = r.rewrite?.summary?.source.writer
  const report: AddReport = index.add(records)
  const hits: RecallResult = index.recall('chat-1', 'units', { limit: 3 })
  const page = index.enumerate('chat-1', { pageSize: 10 })
  const next: string | null = page.next
  const body: string = await index.resolveHandle('chat-1', 'artifact#1', async (h) => `body of ${h}`)
  const bytes: Uint8Array = index.snapshot()
  const copy = MemoryIndex.restore(bytes)
  const dropped: number = copy.dropScope('chat-1')

  // A host embedder and store (sync or async, J-2).
  const hostIndex = new MemoryIndex({ dimension: 3 })
  const hostStore: HostMemoryStore = { put: async (recs, vectors) => { console.log(recs.length, vectors?.length) } }
  await c.compact(r.state, transcript, { embed: (texts) => texts.map(() => [1, 0, 0]), embedDimension: 3, store: hostStore })
  await c.compact(r.state, transcript, { embed: async (texts) => texts.map(() => new Float32Array([0, 1, 0])), embedDimension: 3, memory: hostIndex })
  const hostHits = hostIndex.recall('default', 'q', { vector: [0, 1, 0] }).hits
  const tool = recallToolDefinition('anthropic')
  const schema: Record<string, unknown> = tool.input_schema
  const fn: 'recall' = recallToolDefinition('openai-chat').function.name
  const embedder: 'embedded' | 'host' = index.embedder
  console.log(report.added, next, body, dropped, schema, fn, embedder, writer, index.dimension, index.sessions(), index.size('chat-1'))
  const code: ErrorCode = 'save_failed'
  const fmt: ProviderFormat = 'canonical'
  console.log(code, fmt, new ContextCompactor({ format: 'canonical', summaryPrompt: 'Summarize.', rollupPrompt: 'Merge.', minBoundariesBetween: 0 }))
  return [...hits.hits, ...hostHits]
}

// @ts-expect-error noteTranscriptEdit takes a known edit kind
new ContextCompactor().noteTranscriptEdit(null, 'rename')
// @ts-expect-error recallToolDefinition has no tool shape for the canonical format
recallToolDefinition('canonical')
// @ts-expect-error a Session store needs save
new Session(new ContextCompactor(), { load: () => ({ transcript: {} }) })
// @ts-expect-error embed must return vectors, not one string per text
const badEmbed: CompactHooks = { embed: (texts: string[]) => texts, embedDimension: 3 }
// @ts-expect-error MemoryIndex.recall options take a numeric limit
new MemoryIndex().recall('s', 'q', { limit: 'five' })
export { badEmbed }

// A live handle: appends cost what was appended (issue "performance").
export async function liveHandle(): Promise<number> {
  const c = new ContextCompactor({ format: 'openai-chat' })
  const live = c.open('[{"role":"user","content":"hi"}]')
  live.append({ role: 'assistant', content: 'hello' })
  live.append([{ role: 'user', content: 'more' }])
  const d: Decision = live.check(null, { force: false })
  const out: CompactResult = await live.compact(null, { force: true })
  // @ts-expect-error append takes messages, not numbers
  live.append(42)
  return live.length + (d.compact ? 1 : 0) + out.after.messages
}
