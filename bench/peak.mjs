#!/usr/bin/env node
// Peak wasm memory per call (a benchmark, not a test): each call runs on a fresh wasm
// instance of each build, so the memory's byteLength afterwards (wasm memory never
// shrinks) is that call's own peak. Figures are ratios to the session's bytes, and the
// module's initial memory is printed beside them.
// Calls: check, toRequest, compact from text (default options), compact with the
// records handed to a memory hook (a sink that keeps nothing), compact with
// memoryRecords: "result", open (a live handle), compact with projectMemory: false; and
// the memory when the summarize callback of the default compaction is called (what the
// call reached before it: decode, fold, eviction, the request).
// Usage: node bench/peak.mjs [--mb 1,10,50] [NAME=CHECKOUT ...]   (default: this checkout)
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { OUT_DIR } from './build-sessions.mjs'

const argv = process.argv.slice(2)
const at = argv.indexOf('--mb')
const sizes = at >= 0 ? argv[at + 1].split(',').map(Number) : [1, 10, 50]
const named = argv.filter((a, i) => a.includes('=') && argv[i - 1] !== '--mb')
const builds = named.length ? named.map((a) => a.split('=')) : [['this', '.']]

let tag = 0
async function fresh(root) {
  const dir = join(resolve(root), 'pkg', 'web')
  const mod = await import(`${pathToFileURL(join(dir, 'context_compactor.js')).href}?peak=${tag++}`)
  const exports = mod.initSync({ module: readFileSync(join(dir, 'context_compactor_bg.wasm')) })
  return { mod, memory: exports.memory }
}

const summarize = () => 'The user and the agent worked through earlier tasks.'
const sink = { add() {} }
let memoryNow = () => 0
let atSummarize = 0
const calls = {
  check: (c, text) => c.check(null, text),
  toRequest: (c, text) => c.toRequest(text),
  'compact: at summarize': (c, text) => c.compact(null, text, { summarize: () => ((atSummarize = memoryNow()), summarize()) }),
  compact: (c, text) => c.compact(null, text, { summarize }),
  'compact, object': (c, text, obj) => c.compact(null, obj, { summarize }),
  'compact+memory hook': (c, text) => c.compact(null, text, { summarize, memory: sink }),
  'compact+records': (c, text) => c.compact(null, text, { summarize, memoryRecords: 'result' }),
  open: (c, text) => c.open(text),
}

for (const mb of sizes) {
  const text = readFileSync(join(OUT_DIR, `openai-chat-${mb}mb.json`), 'utf8')
  const bytes = Buffer.byteLength(text)
  const obj = JSON.parse(text)
  const rows = []
  for (const [name, root] of builds) {
    const row = { build: name }
    for (const [call, run] of Object.entries(calls)) {
      const { mod, memory } = await fresh(root)
      row.initial = memory.buffer.byteLength / bytes
      const c = new mod.ContextCompactor({ format: 'openai-chat' })
      memoryNow = () => memory.buffer.byteLength
      atSummarize = 0
      await run(c, text, obj)
      row[call] = (call === 'compact: at summarize' ? atSummarize : memory.buffer.byteLength) / bytes
    }
    rows.push(row)
  }
  console.log(`\n${mb} MB (${bytes} bytes): peak wasm memory / session bytes, one call per fresh instance`)
  console.log(['build', 'initial', ...Object.keys(calls)].join(' | '))
  for (const r of rows) console.log([r.build, r.initial.toFixed(2), ...Object.keys(calls).map((k) => r[k].toFixed(2))].join(' | '))
}
