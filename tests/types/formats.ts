// Types that follow the format (J-3, issue 16.5): ContextCompactor<'anthropic'> takes and
// gives Anthropic documents; a wrong shape does not compile.
import { ContextCompactor, type AnthropicMessage, type CompactResult, type OpenAIChatMessage, type AiSdkMessage, type ImportResult, importTranscript } from 'context-compactor'

export async function anthropic(): Promise<string> {
  const c = new ContextCompactor({ format: 'anthropic', contextWindow: 200_000 })
  const messages: AnthropicMessage[] = [
    { role: 'user', content: 'read the file' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: { path: 'a' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'body' }] },
  ]
  const out: CompactResult<'anthropic'> = await c.compact(null, { system: 'be brief', messages })
  const doc = out.request
  const rows: AnthropicMessage[] = Array.isArray(doc) ? doc : doc.messages
  const first = rows[0]
  const role: 'user' | 'assistant' = first.role
  // @ts-expect-error an Anthropic row has no `tool_calls` array typed as OpenAI's (unknown, not an array)
  first.tool_calls.map((x: unknown) => x)
  // @ts-expect-error an OpenAI chat `tool` role is not an Anthropic message
  await c.compact(null, [{ role: 'tool', content: 'x', tool_call_id: 'c1' }])
  const req = c.toRequest({ messages })
  const same: AnthropicMessage[] = Array.isArray(req) ? req : req.messages
  return role + same.length
}

export function openaiChat(): number {
  const c = new ContextCompactor({ format: 'openai-chat' })
  const live = c.open([{ role: 'user', content: 'hi' }])
  const t = live.transcript()
  const rows: OpenAIChatMessage[] = Array.isArray(t) ? t : t.messages
  // @ts-expect-error a Gemini content (parts) is not an OpenAI chat message
  c.check(null, [{ role: 'model', parts: [{ text: 'x' }] }])
  return rows.length
}

export function aiSdk(): void {
  const c = new ContextCompactor({ format: 'ai-sdk' })
  const m: AiSdkMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]
  c.check(null, { system: 'x', messages: m })
}

export function imported(text: string): number {
  const r: ImportResult = importTranscript('auto', text)
  if (r.format === 'gemini') {
    const contents = Array.isArray(r.document) ? r.document : r.document.contents
    return contents.length
  }
  return 0
}

// `auto` (no format named) takes any object and gives the union of documents.
export function auto(doc: object): void {
  new ContextCompactor().check(null, doc)
}
