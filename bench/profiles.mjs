#!/usr/bin/env node
// Build-profile comparison (a benchmark, not a test): N builds of the package, each a
// folder holding pkg/web (e.g. the same source built at opt-level "z", "s" and 3 with
// `cargo build --config 'profile.release.opt-level="s"'` and wasm-bindgen), measured in
// this one process on the same session. Runs alternate between the builds so machine load
// hits all alike; each build gets a fresh wasm instance. Per build: `_bg.wasm` size raw
// and brotli (quality 11), and medians of `compact` (JSON text in, result object out, a
// summarize callback answering at once), `check` and `toRequest`, each as a ratio to the
// JSON.parse + JSON.stringify round trip measured in the same loop.
// Usage: node bench/profiles.mjs NAME=DIR [NAME=DIR ...] [--mb 10] [--runs 9]
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { brotliCompressSync, constants as zc } from 'node:zlib'
import { loadSources, sessionFile } from './build-sessions.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const at = argv.indexOf(`--${name}`)
  return at >= 0 ? argv[at + 1] : dflt
}
const specs = argv.filter((a, i) => a.includes('=') && !argv[i - 1]?.startsWith('--'))
if (specs.length === 0) {
  console.error('usage: node bench/profiles.mjs NAME=DIR [NAME=DIR ...] [--mb 10] [--runs 9]')
  process.exit(2)
}
const mb = Number(opt('mb', 10))
const runs = Number(opt('runs', 9))
const sourcesWasm = await import('../pkg/node/context_compactor.js')
const text = readFileSync(await sessionFile(sourcesWasm, mb, loadSources(sourcesWasm)), 'utf8')
const bytes = Buffer.byteLength(text)

async function load(name, dir, tag) {
  const web = join(resolve(dir), 'pkg', 'web')
  const wasm = readFileSync(join(web, 'context_compactor_bg.wasm'))
  const mod = await import(`${pathToFileURL(join(web, 'context_compactor.js')).href}?profile=${tag}`)
  mod.initSync({ module: wasm })
  const brotli = brotliCompressSync(wasm, { params: { [zc.BROTLI_PARAM_QUALITY]: 11 } }).length
  return { name, raw: wasm.length, brotli, compactor: new mod.ContextCompactor({ format: 'openai-chat' }), t: { compact: [], check: [], toRequest: [] } }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const summarize = () => 'The user and the agent worked through earlier tasks.'
const builds = []
for (const [i, spec] of specs.entries()) {
  const [name, dir] = spec.split('=')
  builds.push(await load(name, dir, i))
}
for (const b of builds) await b.compactor.compact(null, text, { summarize }) // warm-up
const roundTrips = []
for (let i = 0; i < runs; i++) {
  let t0 = performance.now()
  JSON.stringify(JSON.parse(text))
  roundTrips.push(performance.now() - t0)
  for (const b of builds) {
    t0 = performance.now()
    await b.compactor.compact(null, text, { summarize })
    b.t.compact.push(performance.now() - t0)
    t0 = performance.now()
    b.compactor.check(null, text, {})
    b.t.check.push(performance.now() - t0)
    t0 = performance.now()
    b.compactor.toRequest(text)
    b.t.toRequest.push(performance.now() - t0)
  }
}
const rt = median(roundTrips)
console.log(`${mb} MB session (${bytes} bytes), ${runs} alternating runs; round trip median ${rt.toFixed(1)} ms`)
console.log('| build | _bg.wasm raw | brotli | compact, text | check | toRequest |')
console.log('|---|---|---|---|---|---|')
for (const b of builds) {
  const r = (k) => `${median(b.t[k]).toFixed(1)} ms (${(median(b.t[k]) / rt).toFixed(2)}x)`
  console.log(`| ${b.name} | ${(b.raw / 1024).toFixed(1)} KB | ${(b.brotli / 1024).toFixed(1)} KB | ${r('compact')} | ${r('check')} | ${r('toRequest')} |`)
}
