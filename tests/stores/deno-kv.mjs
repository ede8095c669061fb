// Runs the store contract (contract.mjs) on Deno KV under Deno:
//   deno run --unstable-kv --allow-read --allow-write=<dir> deno-kv.mjs <first|restart> <kv path> [fingerprint.json]
// prints the result JSON on its last line. A new Deno process per phase (the restart).
import init, * as api from '../../js/web.mjs'
import { denoKvMemory, denoKvStore } from '../../js/stores/index.mjs'
import { runContract } from './contract.mjs'

const [phase, path, fpFile] = Deno.args
await init()
const kv = await Deno.openKv(path)
const env = {
  api,
  name: `deno-kv (deno ${Deno.version.deno})`,
  sessionStore: (id) => denoKvStore(kv, id),
  memory: (o = {}) => denoKvMemory(kv, { MemoryIndex: api.MemoryIndex, ...o }),
  valueLimit: 64 * 1024,
  async pieces(id) {
    const sizes = []
    for await (const e of kv.list({ prefix: ['context-compactor', 'session', id] })) if (e.value instanceof Uint8Array) sizes.push(e.value.byteLength)
    return sizes
  },
}
const fingerprint = fpFile ? JSON.parse(await Deno.readTextFile(fpFile)) : null
const out = await runContract(env, phase, fingerprint)
kv.close()
console.log(JSON.stringify(out))
