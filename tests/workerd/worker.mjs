// A Cloudflare Worker that imports the package by name (resolved through the "workerd"
// export condition, which instantiates the wasm on import) and compacts the transcript
// POSTed to it with the golden options; replies with the result's JSON text.
import { ContextCompactor, version } from 'context-compactor'
import { GOLDEN_OPTIONS, goldenSummarize } from '../runtime/golden.mjs'

export default {
  async fetch(request) {
    if (request.method !== 'POST') return new Response(`context-compactor ${version()}\n`)
    try {
      const transcript = await request.json()
      const result = await new ContextCompactor(GOLDEN_OPTIONS).compact(null, transcript, { summarize: goldenSummarize, memoryRecords: 'result' })
      return new Response(JSON.stringify(result), { headers: { 'content-type': 'application/json' } })
    } catch (err) {
      return Response.json({ error: { code: err.code ?? 'internal', message: String(err.message ?? err) } }, { status: 400 })
    }
  },
}
