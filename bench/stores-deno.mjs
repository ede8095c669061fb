// Deno side of `npm run bench:stores`: the same session on Deno KV (a file in the given
// directory). Prints one JSON line. Run by bench/stores.mjs.
import init, * as api from '../js/web.mjs'
import { denoKvMemory, denoKvStore } from '../js/stores/index.mjs'
import { median, p95, runSession } from './stores-core.mjs'

const [path, turns, contextWindow] = Deno.args
await init()
const kv = await Deno.openKv(path)
const r = await runSession({ api, store: denoKvStore(kv, 'bench'), memory: denoKvMemory(kv, { MemoryIndex: api.MemoryIndex }), sessionId: 'bench', turns: Number(turns), contextWindow: Number(contextWindow), now: () => performance.now() })
let bytes = 0
let keys = 0
let memoryBytes = 0
for await (const e of kv.list({ prefix: [] })) {
  const n = e.value instanceof Uint8Array ? e.value.byteLength : new TextEncoder().encode(JSON.stringify(e.value)).byteLength
  bytes += n
  keys++
  if (e.key[1] === 'memory') memoryBytes += n
}
kv.close()
console.log(JSON.stringify({ engine: `Deno KV (deno ${Deno.version.deno})`, medianMs: median(r.wall), p95Ms: p95(r.wall), compactions: r.compactions, revision: r.revision, recordBytes: r.recordBytes, peakRecordBytes: r.peakRecordBytes, storedBytes: bytes, memoryBytes, keys, recallHits: r.recallHits }))
