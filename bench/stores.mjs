#!/usr/bin/env node
// Stores benchmark (I-5): what one chat session costs in storage and per turn.
//
//   npm run bench:stores [-- --turns 200 --window 32000]    (needs a build: npm run build)
//
// One synthetic agent session (bench/stores-core.mjs: 200 turns of a user request, a tool
// call, a ~3 KB tool result and a reply; context window 32,000 tokens) is driven turn by
// turn: append the turn (one compare-and-swap save), the compaction check with the memory
// store, the request view. Engines, measured in the same run:
//   - baseline: an in-memory store (a JSON string per session, the same CAS rule) and an
//     in-memory memory store (records in an array, no index) in Node;
//   - SQLite (better-sqlite3 12, a file, WAL) in Node;
//   - Deno KV (a file) under Deno;
//   - a Durable Object (SQLite-backed, local disk) in workerd: storage only (workerd's clocks
//     stand still during execution, so per-turn time is not measurable there).
// Per turn: median and p95 wall time, and CPU time (Node: process.cpuUsage), and the ratio of
// the median to the baseline's. Storage: the session record's JSON bytes (transcript +
// state) at the end and at its largest (measured after each turn, outside the timing), the
// memory it holds (records, plus the index snapshot in the stores), and the bytes the store
// keeps for the session (the SQLite file; Deno KV: every value).
// Not a test: no assertions; prints a table.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import Database from 'better-sqlite3'
import * as api from 'context-compactor'
import { sqliteMemory, sqliteStore } from 'context-compactor/stores'
import { median, p95, runSession } from './stores-core.mjs'
import { bundleWorker, startWorkerd } from '../tests/js/launch.mjs'

const arg = (name, dflt) => { const i = process.argv.indexOf(name); return i > 0 ? Number(process.argv[i + 1]) : dflt }
const turns = arg('--turns', 200)
const contextWindow = arg('--window', 32_000)
const root = fileURLToPath(new URL('..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'cc-bench-stores-'))
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const now = () => performance.now()

function baselineStores() {
  let text = null
  const records = []
  return {
    store: {
      load: () => (text ? JSON.parse(text) : { transcript: [], state: null, revision: 0 }),
      save(record, { expectedRevision }) {
        const current = text ? JSON.parse(text).revision : 0
        if (current !== expectedRevision) return { ok: false, reason: 'stale_revision' }
        text = JSON.stringify(record)
        return { ok: true }
      },
    },
    memory: {
      put(rs) { records.push(...rs) },
      search: ({ query }) => records.filter((r) => query.split(' ').some((w) => r.content.includes(w))).slice(0, 5).map((record) => ({ record, score: 1 })),
    },
    bytes: () => (text ? Buffer.byteLength(text) : 0) + Buffer.byteLength(JSON.stringify(records)),
    memoryBytes: () => Buffer.byteLength(JSON.stringify(records)),
  }
}

const rows = []
try {
  const b = baselineStores()
  const base = await runSession({ api, store: b.store, memory: b.memory, sessionId: 'bench', turns, contextWindow, now, cpu })
  rows.push({ engine: 'baseline (in-memory, Node)', medianMs: median(base.wall), p95Ms: p95(base.wall), cpuMs: median(base.cpuMs), compactions: base.compactions, recordBytes: base.recordBytes, peakRecordBytes: base.peakRecordBytes, storedBytes: b.bytes(), memoryBytes: b.memoryBytes() })

  const file = join(dir, 'bench.sqlite')
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  const sq = await runSession({ api, store: sqliteStore(db, 'bench'), memory: sqliteMemory(db, { MemoryIndex: api.MemoryIndex }), sessionId: 'bench', turns, contextWindow, now, cpu })
  db.pragma('wal_checkpoint(TRUNCATE)')
  const memoryBytes = db.prepare('SELECT coalesce(sum(length(record)), 0) + coalesce((SELECT sum(length(snapshot)) FROM cc_memory_meta), 0) AS n FROM cc_memory').get().n
  db.close()
  rows.push({ engine: 'SQLite (better-sqlite3, file, Node)', medianMs: median(sq.wall), p95Ms: p95(sq.wall), cpuMs: median(sq.cpuMs), compactions: sq.compactions, recordBytes: sq.recordBytes, peakRecordBytes: sq.peakRecordBytes, storedBytes: statSync(file).size, memoryBytes })

  const deno = spawnSync(join(root, 'node_modules/.bin/deno'), ['run', '--no-prompt', '--unstable-kv', `--allow-read=${root},${dir}`, `--allow-write=${dir}`, join(root, 'bench/stores-deno.mjs'), join(dir, 'kv.sqlite3'), String(turns), String(contextWindow)],
    { cwd: root, encoding: 'utf8', env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } })
  if (deno.status === 0) rows.push(JSON.parse(deno.stdout.trim().split('\n').pop()))
  else console.error(`deno run failed:\n${deno.stderr}`)

  const wdir = join(dir, 'workerd')
  await bundleWorker(wdir, join(root, 'bench/stores-worker.mjs'), [{ className: 'BenchObject', binding: 'BENCH' }])
  const w = await startWorkerd(wdir)
  try {
    const res = await fetch(`${w.url}/?turns=${turns}&window=${contextWindow}`)
    const text = await res.text()
    if (res.ok) rows.push({ ...JSON.parse(text), medianMs: null, p95Ms: null })
    else console.error(`workerd run failed: ${text}\n${w.log()}`)
  } finally {
    await w.stop()
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`
const baseMedian = rows[0].medianMs
console.log(`stores benchmark: ${turns} turns, context window ${contextWindow} tokens, node ${process.version}, engine ${api.version()}`)
console.log('| engine | median ms / turn | p95 ms / turn | CPU ms / turn (median) | x baseline (median) | compactions | session record (end / peak) | memory | stored for the session |')
console.log('|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  const ms = (x) => (x == null ? 'n/a' : x.toFixed(2))
  console.log(`| ${r.engine} | ${ms(r.medianMs)} | ${ms(r.p95Ms)} | ${ms(r.cpuMs)} | ${r.medianMs == null ? 'n/a' : `${(r.medianMs / baseMedian).toFixed(2)}x`} | ${r.compactions} | ${kb(r.recordBytes)} / ${kb(r.peakRecordBytes)} | ${kb(r.memoryBytes)} | ${kb(r.storedBytes)}${r.keys ? ` in ${r.keys} keys` : ''} |`)
}
