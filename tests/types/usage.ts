// Compiled by `tsc --noEmit -p tests/types` (tests/js/types.test.mjs): a typed consumer of
// every export. Lines marked @ts-expect-error must stay errors: the types reject misuse.
import init, {
  ContextCompactor, detectFormat, importTranscript, initSync, version,
  type CompactHooks, type CompactResult, type ContextCompactorError, type Decision,
  type SessionState, type SummarizeRequest, type ProviderFormat,
} from 'context-compactor'
import wasmModule from 'context-compactor/wasm'

export async function main(transcript: object, saved: SessionState | null): Promise<SessionState> {
  await init()
  initSync({ module: wasmModule })
  const v: string = version()
  const c = new ContextCompactor({ format: 'openai-chat', profile: 'meerkat', contextWindow: 128_000, thresholdPct: 0.7 })
  const window: number = c.config.contextWindow
  const d: Decision = c.check(saved, transcript, { usage: { total_tokens: 90_000 }, toolsBytes: 2048 })
  if (!d.compact) return saved ?? ({} as SessionState)
  const reason: string = d.reason
  const firstSignal = d.signals[0]?.unit satisfies 'tokens' | 'bytes' | undefined

  // Hooks may be sync or async (J-2).
  const syncHooks: CompactHooks = { summarize: (req: SummarizeRequest) => `sync ${req.kind} ${req.messages.length}` }
  const asyncHooks: CompactHooks = {
    summarize: async (req) => ({ text: `async ${req.maxOutputTokens}`, usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    onEvent: async (e) => { console.log(e.type, e.data) },
    force: true,
  }
  const r1: CompactResult = await c.compact(saved, transcript, syncHooks)
  const r2 = await c.compact(r1.state, JSON.stringify(transcript), asyncHooks)
  if (r2.rewrite) {
    const handles: (string | null)[] = r2.rewrite.evicted.map((e) => e.handle)
    const kept: number[] = r2.rewrite.retained.map((k) => k.source)
    const summary: string = r2.rewrite.summary.text
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
