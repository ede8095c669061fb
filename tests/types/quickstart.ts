// The README "Quick start", checked by tsc --strict (issue 16.5): the same code, typed.
import { ContextCompactor, type OpenAIChatMessage, type SessionState } from 'context-compactor'
declare function callModel(req: { system?: string; messages: unknown[]; max_tokens?: number }): Promise<{ text: string; usage: Record<string, unknown> }>
declare const console: { log(...args: unknown[]): void }

const compactor = new ContextCompactor({ format: 'openai-chat', profile: 'default', contextWindow: 128_000 })
let state: SessionState | null = null       // plain JSON: persist it next to the transcript
let usage: Record<string, unknown> | undefined  // the provider's usage object from the last answer, if any

export async function nextRequest(messages: OpenAIChatMessage[]) {
  // Before each model call: a pure check with every signal and its threshold (C-9).
  const decision = compactor.check(state, messages, { usage })
  if (!decision.compact) return { messages, request: compactor.toRequest(messages, state) }
  const out = await compactor.compact(state, messages, {
    usage,
    summarize: async (req) => {               // sync or async; a string or { text, usage }
      const r = await callModel({ system: req.system, messages: req.messages, max_tokens: req.maxOutputTokens })
      return { text: r.text, usage: r.usage }
    },
    onEvent: (e) => console.log(e.type),      // compaction_started, compaction_completed, warning, ...
  })
  state = out.state
  // status: "compacted" (out.transcript is the rewrite), or "skipped" / "cannot_fit" with a
  // typed reason (out.transcript is the input, untouched).
  return { messages: out.transcript, request: out.request }
}

// after each answer: tell the engine, so the cadence and the projection move (C-3..C-6)
export function answered(messagesSent: OpenAIChatMessage[], response: { usage: Record<string, unknown> }) {
  usage = response.usage
  state = compactor.observeUsage(state, messagesSent, { usage })
}
