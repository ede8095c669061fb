// Runs the store contract (contract.mjs) on SQLite in Node: `node node-sqlite.mjs
// <first|restart> <db path> <driver: better-sqlite3|node:sqlite> [fingerprint.json]`;
// prints the result JSON on its last line. A new process per phase (the restart).
import { readFileSync } from 'node:fs'
import * as api from 'context-compactor'
import { sqliteMemory, sqliteStore } from 'context-compactor/stores'
import { runContract } from './contract.mjs'

const [phase, path, driver, fpFile] = process.argv.slice(2)
let db
if (driver === 'node:sqlite') {
  const { DatabaseSync } = await import('node:sqlite')
  db = new DatabaseSync(path)
} else {
  const { default: Database } = await import('better-sqlite3')
  db = new Database(path)
  db.pragma('journal_mode = WAL')
}
const env = {
  api,
  name: `sqlite (${driver})`,
  sessionStore: (id) => sqliteStore(db, id),
  memory: (o = {}) => sqliteMemory(db, { MemoryIndex: api.MemoryIndex, ...o }),
}
const fingerprint = fpFile ? JSON.parse(readFileSync(fpFile, 'utf8')) : null
const out = await runContract(env, phase, fingerprint)
db.close()
console.log(JSON.stringify(out))
