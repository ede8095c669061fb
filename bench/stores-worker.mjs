// workerd side of `npm run bench:stores`: the same session in a Durable Object's storage.
// Only storage is reported: workerd's clocks do not advance during execution, so wall time
// inside the object is not measurable. Bundled and started by bench/stores.mjs.
import * as api from 'context-compactor'
import { durableObjectMemory, durableObjectStore } from 'context-compactor/stores'
import { runSession } from './stores-core.mjs'

export class BenchObject {
  constructor(ctx) { this.storage = ctx.storage }

  async fetch(request) {
    const url = new URL(request.url)
    const r = await runSession({
      api, store: durableObjectStore(this.storage, 'bench'), memory: durableObjectMemory(this.storage, { MemoryIndex: api.MemoryIndex }), sessionId: 'bench',
      turns: Number(url.searchParams.get('turns')), contextWindow: Number(url.searchParams.get('window')), now: () => 0,
    })
    let storedBytes = 0
    let memoryBytes = 0
    let keys = 0
    for (const [k, v] of await this.storage.list()) {
      const n = v instanceof Uint8Array ? v.byteLength : new TextEncoder().encode(JSON.stringify(v)).byteLength
      storedBytes += n
      keys++
      if (k.startsWith('scc/smemory/')) memoryBytes += n
    }
    return Response.json({ engine: 'Durable Object (workerd, SQLite-backed)', compactions: r.compactions, revision: r.revision, recordBytes: r.recordBytes, peakRecordBytes: r.peakRecordBytes, storedBytes, memoryBytes, keys })
  }
}

export default {
  fetch(request, env) {
    return env.BENCH.get(env.BENCH.idFromName('bench')).fetch(request)
  },
}
