// A deterministic stand-in for an OpenAI-compatible chat model, for the worked examples'
// tests (no LLM in tests). `answer(body)` maps a chat-completions request body to a
// response body:
//   - a summarize request (system prompt of the engine's summarizer): "SUMMARY: " + the
//     head of each transcript entry;
//   - the last message a tool result: "From memory: " + the first recalled passage;
//   - the last user message "recall: <query>": a `recall` tool call with that query;
//   - otherwise: "echo: " + the head of the last user message.
// The default export is a Worker serving it on POST (summaries answered after
// `SUMMARY_DELAY_MS`, so two requests compacting at once overlap).
export function answer(body) {
  const msgs = body.messages ?? []
  const last = msgs[msgs.length - 1] ?? {}
  const text = (m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''))
  if (msgs.some((m) => m.role === 'system' && /handoff summary/.test(text(m)))) {
    const heads = [...text(last).matchAll(/\[#\d+ (\w+)\]\n([^\n]{0,60})/g)].map((x) => `${x[1]}: ${x[2]}`)
    return completion({ role: 'assistant', content: `SUMMARY: ${heads.join(' | ')}` })
  }
  if (last.role === 'tool') {
    const hits = JSON.parse(text(last))
    return completion({ role: 'assistant', content: `From memory: ${hits[0]?.content.slice(0, 160) ?? 'nothing found'}` })
  }
  const m = /^recall: (.+)$/s.exec(text(last))
  if (last.role === 'user' && m && (body.tools ?? []).some((t) => t.function?.name === 'recall')) {
    const n = msgs.filter((x) => x.tool_calls).length
    return completion({ role: 'assistant', content: null, tool_calls: [{ id: `call_${n}`, type: 'function', function: { name: 'recall', arguments: JSON.stringify({ query: m[1], limit: 3 }) } }] })
  }
  const lastUser = [...msgs].reverse().find((x) => x.role === 'user') ?? last
  return completion({ role: 'assistant', content: `echo: ${text(lastUser).slice(0, 40)}` })
}

function completion(message) {
  return { id: 'fake', object: 'chat.completion', choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } }
}

const SUMMARY_DELAY_MS = 300

export default {
  async fetch(request) {
    const body = await request.json()
    const out = answer(body)
    if (/^SUMMARY/.test(out.choices[0].message.content ?? '')) await new Promise((r) => setTimeout(r, SUMMARY_DELAY_MS))
    return Response.json(out)
  },
}
