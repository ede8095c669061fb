#!/usr/bin/env node
// Size and start-up benchmark (not a test): for each .wasm given (default: the two built
// entries, pkg/web/ (full) and pkg/lite/web/ (lite), each against its brotli target:
// full <= 205 KB, lite <= 120 KB, KB = 1024 bytes) reports the size raw, gzip (level 9) and brotli
// (quality 11) via node:zlib, and the median time to compile + instantiate it in Node
// (WebAssembly.compile + the web build's initSync in a fresh module instance). The
// baseline measured in the same run is one golden compaction (tests/fixtures/golden.json)
// on an instantiated module; start-up is also reported as a ratio to it. Where the bytes
// are: the code section (function bodies) and the data section (string constants) are also
// compressed alone, so a target that is not met prints what its brotli bytes are made of
// (by crate and module: bench/size-breakdown.mjs over a build that keeps its names).
// Usage: npm run bench:size [-- file.wasm ...] [-- --runs N] [-- --json]
import { readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL, fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { sections } from '../bench/wasm-sections.mjs'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const args = process.argv.slice(2)
const runsAt = args.indexOf('--runs')
const runs = runsAt >= 0 ? Number(args[runsAt + 1]) : 15
const json = args.includes('--json')
const files = args.filter((a, i) => a.endsWith('.wasm') && args[i - 1] !== '--runs')
// The issue 15 targets (brotli quality 11, KB = 1024 bytes, as bench/run.mjs counts them).
const TARGETS = [
  { entry: 'context-compactor (full)', path: resolve(root, 'pkg/web/context_compactor_bg.wasm'), brotliKB: 205 },
  { entry: 'context-compactor/lite', path: resolve(root, 'pkg/lite/web/context_compactor_bg.wasm'), brotliKB: 120 },
]
if (files.length === 0) for (const t of TARGETS) if (existsSync(t.path)) files.push(t.path)
const targetOf = (file) => TARGETS.find((t) => t.path === resolve(file))

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2 }
// The wasm-bindgen glue must come from the same wasm-bindgen run as the module: use the
// context_compactor.js next to the .wasm, else the package's pkg/web one.
const glueFor = (file) => {
  const near = resolve(dirname(file), 'context_compactor.js')
  return pathToFileURL(existsSync(near) ? near : resolve(root, 'pkg/web/context_compactor.js')).href
}
const { runGolden } = await import(pathToFileURL(resolve(root, 'tests/runtime/golden.mjs')).href)
const golden = JSON.parse(await readFile(resolve(root, 'tests/fixtures/golden.json'), 'utf8'))
const expected = JSON.parse(await readFile(resolve(root, 'tests/fixtures/golden.expected.json'), 'utf8'))
let fresh = 0

async function startup(bytes, glue) {
  // A fresh instance of the glue module each time (a new URL = a new module record).
  const api = await import(`${glue}?instance=${fresh++}`)
  const t0 = performance.now()
  const module = await WebAssembly.compile(bytes)
  api.initSync({ module })
  return { ms: performance.now() - t0, api }
}

const brotliOf = (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length
const rows = []
for (const file of files) {
  const bytes = await readFile(file)
  const parts = sections(bytes)
  const code = parts.find((x) => x.id === 10)?.body ?? Buffer.alloc(0) // function bodies
  const data = parts.find((x) => x.id === 11)?.body ?? Buffer.alloc(0) // data segments
  const gzip = gzipSync(bytes, { level: 9 }).length
  const brotli = brotliOf(bytes)
  await startup(bytes, glueFor(file)) // warm-up (V8 caches nothing across distinct modules, but the glue and JIT settle)
  const starts = []
  const compactions = []
  for (let i = 0; i < runs; i++) {
    const { ms, api } = await startup(bytes, glueFor(file))
    starts.push(ms)
    const t0 = performance.now()
    const r = await runGolden(api, golden)
    compactions.push(performance.now() - t0)
    if (r.sha256 !== expected.sha256) throw new Error(`${file}: golden compaction differs from tests/fixtures/golden.expected.json`)
  }
  const s = median(starts)
  const c = median(compactions)
  const target = targetOf(file)
  rows.push({ file: basename(file), path: file, entry: target?.entry ?? null, targetBrotli: target ? target.brotliKB * 1024 : null, met: target ? brotli <= target.brotliKB * 1024 : null, raw: bytes.length, gzip, brotli, codeRaw: code.length, codeBrotli: brotliOf(code), dataRaw: data.length, dataBrotli: brotliOf(data), startupMs: +s.toFixed(2), goldenCompactMs: +c.toFixed(2), startupPerCompaction: +(s / c).toFixed(2), runs })
}

if (json) console.log(JSON.stringify(rows, null, 2))
else {
  const kb = (n) => `${(n / 1024).toFixed(1)} KiB`
  console.log(`node ${process.version}, ${runs} runs, medians`)
  console.log('entry | file | raw | gzip | brotli | brotli target | compile+instantiate | golden compaction (baseline) | ratio')
  for (const r of rows) {
    const target = r.targetBrotli === null ? '-' : `<= ${kb(r.targetBrotli)}: ${r.met ? 'met' : `NOT met (${kb(r.brotli - r.targetBrotli)} over)`}`
    console.log(`${r.entry ?? '-'} | ${r.path} | ${kb(r.raw)} | ${kb(r.gzip)} | ${kb(r.brotli)} | ${target} | ${r.startupMs} ms | ${r.goldenCompactMs} ms | ${r.startupPerCompaction}x`)
  }
  for (const r of rows) {
    console.log(`${r.entry ?? r.file}: code section ${kb(r.codeRaw)} raw, ${kb(r.codeBrotli)} brotli alone; data section (string constants) ${kb(r.dataRaw)} raw, ${kb(r.dataBrotli)} brotli alone`)
    if (r.met === false) {
      const over = r.brotli - r.targetBrotli
      console.log(`  ${kb(over)} over: ${r.codeBrotli > over ? `the code alone is ${kb(r.codeBrotli)}, so the cut is ${(100 * over / r.codeBrotli).toFixed(0)}% of the compressed code` : 'more than the code'} (or the data: ${kb(r.dataBrotli)}); by crate and module: node bench/size-breakdown.mjs on a --names build`)
    }
  }
}
