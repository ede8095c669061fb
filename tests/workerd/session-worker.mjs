// A worker serving one Session over the SessionStore Durable Object (W-5, W-8, issue 14):
// /append?text=, /finding?text=, /compact?delay=, /get. Two of these workers share one
// object; the test interleaves their requests.
import { ContextCompactor, Session } from 'context-compactor'

const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000, preserveRecentTurns: 1 })
/** A summarizer that names every appended row it folds (so a folded row stays findable). */
const summarizer = (delay) => async (req) => {
  await new Promise((r) => setTimeout(r, delay))
  const marks = [...new Set(req.messages[0].content.match(/ROW-\d+/g) ?? [])]
  return `SUMMARY ${marks.join(' ')}`
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url)
    const stub = env.STORE.get(env.STORE.idFromName('one-session'))
    const session = new Session(compactor, { load: () => stub.load(), save: (record, info) => stub.save(record, info) })
    const text = url.searchParams.get('text') ?? ''
    try {
      switch (url.pathname) {
        case '/append':
          return Response.json(await session.append([{ role: 'user', content: text }, { role: 'assistant', content: `ack ${text}` }]))
        case '/finding':
          return Response.json(await session.recordFinding(text))
        case '/compact': {
          const r = await session.compact({ force: true, summarize: summarizer(Number(url.searchParams.get('delay') ?? 0)) })
          return Response.json({ status: r.status, saved: r.saved })
        }
        case '/get':
          return Response.json(await session.load())
        default:
          return new Response(`worker ${env.NAME}\n`)
      }
    } catch (err) {
      return Response.json({ error: { code: err.code ?? 'internal', message: String(err.message ?? err) } }, { status: 409 })
    }
  },
}
