// Deno consumer: imports the web build, lets `init()` fetch the .wasm next to it (file:
// URL), runs the golden compaction and prints { status, bytes, sha256 } as JSON.
// Run: deno run --allow-read=. tests/runtime/deno-golden.mjs
import init, * as api from '../../js/web.mjs'
import { runGolden } from './golden.mjs'

await init()
const transcript = JSON.parse(await Deno.readTextFile(new URL('../fixtures/golden.json', import.meta.url)))
const { status, bytes, sha256 } = await runGolden(api, transcript)
console.log(JSON.stringify({ status, bytes, sha256, runtime: `deno ${Deno.version.deno}`, engine: api.version() }))
