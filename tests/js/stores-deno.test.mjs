// I-5, W-5, W-8, M-1..M-4: denoKvStore / denoKvMemory pass the store contract
// (tests/stores/contract.mjs) on Deno KV under Deno (npm package `deno`, --unstable-kv,
// a KV file in a temp dir), and sqliteStore / sqliteMemory pass it over Deno's node:sqlite
// (DatabaseSync, the API without db.transaction); each restart phase in a new Deno process.
import { test } from 'node:test'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { lastJson, reportContract } from '../stores/report.mjs'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const deno = join(root, 'node_modules', '.bin', 'deno')

const cases = [
  ['Deno KV store contract', 'tests/stores/deno-kv.mjs', 'kv.sqlite3'],
  ['SQLite store contract over the node:sqlite API (DatabaseSync as Deno implements it)', 'tests/stores/deno-sqlite.mjs', 'db.sqlite'],
]

for (const [what, script, file] of cases) test(`I-5 W-5 W-8 M-4 ${what}, then a new Deno process reads back the same session and recall`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-deno-'))
  const env = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }
  const runner = join(root, script)
  const args = (...rest) => ['run', '--no-prompt', '--unstable-kv', `--allow-read=${root},${dir}`, `--allow-write=${dir}`, runner, ...rest]
  try {
    const kv = join(dir, file)
    const first = lastJson((await run(deno, args('first', kv), { cwd: root, env })).stdout)
    await reportContract(t, first, 12)
    await writeFile(join(dir, 'fp.json'), JSON.stringify(first.fingerprint))
    const again = lastJson((await run(deno, args('restart', kv, join(dir, 'fp.json')), { cwd: root, env })).stdout)
    await reportContract(t, again, 2)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
