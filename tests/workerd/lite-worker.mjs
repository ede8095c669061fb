// A Cloudflare Worker over `context-compactor/lite` (workerd condition: js/lite-workerd.mjs,
// the lite wasm handed in as a module and instantiated on import). POST: compacts the
// transcript with the golden options and replies with the result's JSON text; GET /import:
// the `not_in_lite` error of importTranscript; GET: the version.
import { ContextCompactor, importTranscript, version } from 'context-compactor/lite'
import { GOLDEN_OPTIONS, goldenSummarize } from '../runtime/golden.mjs'

export default {
  async fetch(request) {
    try {
      if (new URL(request.url).pathname === '/import') importTranscript('auto', '{}')
      if (request.method !== 'POST') return new Response(`context-compactor ${version()}\n`)
      const transcript = await request.json()
      const result = await new ContextCompactor(GOLDEN_OPTIONS).compact(null, transcript, { summarize: goldenSummarize, memoryRecords: 'result' })
      return new Response(JSON.stringify(result), { headers: { 'content-type': 'application/json' } })
    } catch (err) {
      return Response.json({ error: { code: err.code ?? 'internal', message: String(err.message ?? err) } }, { status: 400 })
    }
  },
}
