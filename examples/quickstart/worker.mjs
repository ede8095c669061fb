// Quick start, Cloudflare Workers (wrangler, or raw workerd): the "workerd" export
// condition gives an entry that instantiates the wasm on import (wrangler hands the
// .wasm in as a WebAssembly.Module), so no init() is needed. POST a transcript.
import { ContextCompactor } from 'context-compactor'

const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4_000 })

export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response('POST an OpenAI-chat transcript\n')
    const out = await compactor.compact(null, await request.json())
    return Response.json({ runtime: 'workerd', status: out.status, before: out.before.messages, after: out.after.messages })
  },
}
