// I-5, W-5, W-8, M-1..M-4: sqliteStore / sqliteMemory pass the store contract
// (tests/stores/contract.mjs) on SQLite in Node (better-sqlite3 12; node:sqlite where
// this Node has it), the restart phase in a new Node process over the same file.
import { test } from 'node:test'
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { lastJson, reportContract } from '../stores/report.mjs'

const run = promisify(execFile)
const runner = fileURLToPath(new URL('../stores/node-sqlite.mjs', import.meta.url))
let nodeSqlite = true
try { await import('node:sqlite') } catch { nodeSqlite = false }

for (const driver of ['better-sqlite3', 'node:sqlite']) {
  const skip = driver === 'node:sqlite' && !nodeSqlite ? `node:sqlite is not in Node ${process.version}` : false
  test(`I-5 W-5 W-8 M-4 sqlite store contract on ${driver}, then a new process reads back the same session and recall`, { skip }, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'cc-sqlite-'))
    try {
      const db = join(dir, 'sessions.sqlite')
      const first = lastJson((await run(process.execPath, [runner, 'first', db, driver])).stdout)
      await reportContract(t, first, 12)
      await writeFile(join(dir, 'fp.json'), JSON.stringify(first.fingerprint))
      const again = lastJson((await run(process.execPath, [runner, 'restart', db, driver, join(dir, 'fp.json')])).stdout)
      await reportContract(t, again, 2)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
}
