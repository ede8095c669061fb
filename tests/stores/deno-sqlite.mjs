// Runs the store contract (contract.mjs) on sqliteStore / sqliteMemory over the
// `node:sqlite` API (`DatabaseSync`) as Deno implements it (the Node used by the suite may
// predate node:sqlite):
//   deno run --allow-read --allow-write=<dir> deno-sqlite.mjs <first|restart> <db path> [fingerprint.json]
import { DatabaseSync } from 'node:sqlite'
import init, * as api from '../../js/web.mjs'
import { sqliteMemory, sqliteStore } from '../../js/stores/index.mjs'
import { runContract } from './contract.mjs'

const [phase, path, fpFile] = Deno.args
await init()
const db = new DatabaseSync(path)
const env = {
  api,
  name: `sqlite (node:sqlite in deno ${Deno.version.deno})`,
  sessionStore: (id) => sqliteStore(db, id),
  memory: (o = {}) => sqliteMemory(db, { MemoryIndex: api.MemoryIndex, ...o }),
}
const fingerprint = fpFile ? JSON.parse(await Deno.readTextFile(fpFile)) : null
const out = await runContract(env, phase, fingerprint)
db.close()
console.log(JSON.stringify(out))
