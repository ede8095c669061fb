#!/usr/bin/env node
// Same-process A/B of two builds of the package (a benchmark, not a test): the current
// pkg/web against another checkout's pkg/web, on one session from bench/build-sessions.mjs.
// Runs alternate between the builds (A, B, A, B, ...) so machine load hits both alike; each
// build gets a fresh wasm instance. Reports the median `compact` time from JSON text (with a
// summarize callback that answers at once), the median JSON.parse + JSON.stringify round
// trip measured in the same loop, and each build's wasm memory after its runs.
// `--call check` / `--call toRequest` times that call instead of `compact`; `--object` passes the
// transcript as the parsed object instead of its JSON text.
// Usage: node bench/ab.mjs OTHER_CHECKOUT [--mb 10] [--runs 15] [--call compact|check|toRequest] [--object]
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { OUT_DIR } from './build-sessions.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? argv[at + 1] : dflt
}
const other = argv[0] && !argv[0].startsWith('--') ? resolve(argv[0]) : null
if (!other) {
  console.error('usage: node bench/ab.mjs OTHER_CHECKOUT [--mb 10] [--runs 15]')
  process.exit(2)
}
const mb = Number(opt('mb', 10))
const runs = Number(opt('runs', 15))
const call = opt('call', 'compact')
if (!['compact', 'check', 'toRequest'].includes(call)) {
  console.error(`--call takes compact, check or toRequest, not ${call}`)
  process.exit(2)
}
const path = join(OUT_DIR, `openai-chat-${mb}mb.json`)
let text
try {
  text = readFileSync(path, 'utf8')
} catch {
  console.error(`${path} is missing: run node bench/build-sessions.mjs ${mb} first`)
  process.exit(2)
}
const bytes = Buffer.byteLength(text)
const input = argv.includes('--object') ? JSON.parse(text) : text

async function load(root, tag) {
  const dir = join(root, 'pkg', 'web')
  const mod = await import(`${pathToFileURL(join(dir, 'context_compactor.js')).href}?ab=${tag}`)
  const exports = mod.initSync({ module: readFileSync(join(dir, 'context_compactor_bg.wasm')) })
  const compactor = new mod.ContextCompactor({ format: 'openai-chat' })
  return { name: root, compactor, memory: exports.memory, times: [] }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const summarize = () => 'The user and the agent worked through earlier tasks.'
const builds = [await load(resolve('.'), 'a'), await load(other, 'b')]
const roundTrips = []
const run = (c) => (call === 'check' ? c.check(null, input, {}) : call === 'toRequest' ? c.toRequest(input) : c.compact(null, input, { summarize }))
for (const b of builds) await run(b.compactor) // warm-up
for (let i = 0; i < runs; i++) {
  let t0 = performance.now()
  JSON.stringify(JSON.parse(text))
  roundTrips.push(performance.now() - t0)
  for (const b of builds) {
    t0 = performance.now()
    await run(b.compactor)
    b.times.push(performance.now() - t0)
  }
}
const rt = median(roundTrips)
console.log(`${mb} MB session (${bytes} bytes, given as ${input === text ? 'JSON text' : 'an object'}), ${runs} alternating runs; round trip median ${rt.toFixed(1)} ms`)
console.log(`| build | ${call === 'compact' ? 'compact' : call} (ms) | ratio to round trip | wasm memory / transcript bytes |`)
console.log('|---|---|---|---|')
for (const b of builds) {
  const t = median(b.times)
  console.log(`| ${b.name} | ${t.toFixed(1)} | ${(t / rt).toFixed(2)}x | ${(b.memory.buffer.byteLength / bytes).toFixed(2)}x |`)
}
