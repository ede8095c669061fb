// A chat backend on Cloudflare Workers: one Durable Object per chat session holds the
// transcript, the engine state and the session's memory (context-compactor/stores).
// Each turn: append the user message, run the compaction check before the model call
// (compacts only over the threshold), call the model with memory recall offered as a
// tool, answer recall calls from the session's memory, append the reply.
//
//   POST /chat/<session>  { "message": "..." }  -> { reply, compaction, refusals, revision }
//   GET  /chat/<session>                         -> the stored record
//
// Bindings: CHAT (Durable Object namespace of ChatSession, SQLite-backed), MODEL (a
// service binding or fetcher to an OpenAI-compatible chat-completions endpoint, e.g. an
// AI Gateway), CONTEXT_WINDOW (optional, tokens).
import { ContextCompactor, MemoryIndex, Session, recallFromStore, recallToolDefinition } from 'context-compactor'
import { durableObjectMemory, durableObjectStore } from 'context-compactor/stores'

const RECALL_TOOL = recallToolDefinition('openai-chat')

export class ChatSession {
  constructor(ctx, env) {
    this.env = env
    this.storage = ctx.storage
    this.memory = durableObjectMemory(ctx.storage, { MemoryIndex, maxIndexes: 4 })
    this.compactor = new ContextCompactor({ format: 'openai-chat', profile: 'default', contextWindow: Number(env.CONTEXT_WINDOW ?? 128_000) })
  }

  async fetch(request) {
    const id = new URL(request.url).searchParams.get('session')
    const store = durableObjectStore(this.storage, id)
    if (request.method === 'GET') return Response.json(await store.load())
    const { message } = await request.json()
    const session = new Session(this.compactor, store)
    // Session.append: one compare-and-swap save, reloaded and retried when another request wrote first
    await session.append({ role: 'user', content: String(message) })

    // The compaction check before the model call (compacts only over the threshold).
    const compaction = await compactChecked(session, { sessionId: id, store: this.memory, summarize: (req) => this.summarize(req) })

    // The model call, with recall as a tool answered from this session's memory.
    for (let step = 0; step < 4; step++) {
      const answer = await this.callModel({ messages: await session.request(), tools: [RECALL_TOOL] })
      const msg = answer.choices[0].message
      if (!msg.tool_calls?.length) {
        const { revision } = await session.append({ role: 'assistant', content: msg.content })
        return Response.json({ reply: msg.content, compaction: compaction.status, refusals: compaction.refusals, revision })
      }
      const results = []
      for (const call of msg.tool_calls) {
        const { query, limit } = JSON.parse(call.function.arguments)
        const found = await recallFromStore(this.memory, id, query, { limit })
        const passages = found.hits.map((h) => ({ content: h.content, score: h.score, messageId: h.messageId }))
        results.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(passages) })
      }
      await session.append([{ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls }, ...results])
    }
    return Response.json({ error: 'too many tool rounds' }, { status: 502 })
  }

  async summarize(req) {
    const answer = await this.callModel({ messages: [{ role: 'system', content: req.system }, ...req.messages], max_tokens: req.maxOutputTokens })
    return answer.choices[0].message.content
  }

  async callModel(body) {
    const res = await this.env.MODEL.fetch('https://model.invalid/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: this.env.MODEL_NAME ?? 'gpt-4o-mini', ...body }),
    })
    if (!res.ok) throw new Error(`model answered ${res.status}`)
    return res.json()
  }
}

/**
 * `session.compact(hooks)`, checked again on the fresh record when the save was refused
 * (stale_revision: another request wrote this session first). Gives up after one retry:
 * the next turn's check picks the session up again.
 */
async function compactChecked(session, hooks) {
  let refusals = 0
  for (;;) {
    try {
      return { status: (await session.compact(hooks)).status, refusals }
    } catch (err) {
      if (err.code !== 'stale_revision') throw err
      if (++refusals > 1) return { status: 'refused', refusals }
    }
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url)
    const m = /^\/chat\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname)
    if (!m) return new Response('not found\n', { status: 404 })
    // sessions shard by id: one Durable Object per session
    const stub = env.CHAT.get(env.CHAT.idFromName(m[1]))
    url.searchParams.set('session', m[1])
    return stub.fetch(new Request(url, request))
  },
}
