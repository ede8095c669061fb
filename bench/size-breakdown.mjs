#!/usr/bin/env node
// Where the size of a wasm build goes (an analysis, not a test; issue 15): reads a module
// that keeps its name section (`node scripts/build.mjs --only full --out DIR --names`)
// and groups its function bodies by the crate / module their name starts with (a generic
// instantiation counts where its outermost path is: serde's readers of our types count as
// serde_json). Per group: raw bytes of code, function count, and the group's *marginal*
// brotli bytes = brotli(all bodies) - brotli(all bodies but the group's), quality 11,
// which is what leaving the group out would save over the wire. Near-duplicate
// instantiations compress to almost nothing, so the marginal column, not the raw one,
// says what a cut would gain. Also prints the data section (string constants) alone.
// Usage: node bench/size-breakdown.mjs DIR/pkg/web/context_compactor_bg.wasm [--min 8000] [--depth 1] [--match REGEX ...]
//   --depth  path segments that name a library group (2: core::fmt, core::slice, ...)
//   --match  also print the marginal brotli of every function whose full name matches
//            REGEX, wherever its path puts it (e.g. 'serde' for all serde code: serde_json,
//            serde_core and the derived impls of our types); repeatable
import { readFileSync } from 'node:fs'
import { brotliCompressSync, constants } from 'node:zlib'
import { readLeb } from './wasm-sections.mjs'

const argv = process.argv.slice(2)
const file = argv.find((a) => a.endsWith('.wasm'))
const min = argv.includes('--min') ? Number(argv[argv.indexOf('--min') + 1]) : 8000
const depth = argv.includes('--depth') ? Number(argv[argv.indexOf('--depth') + 1]) : 1
const matches = argv.flatMap((a, i) => (argv[i - 1] === '--match' ? [a] : []))
if (!file) {
  console.error('usage: node bench/size-breakdown.mjs MODULE_WITH_NAMES.wasm [--min BYTES]')
  process.exit(2)
}
const buf = readFileSync(file)

// The few sections read here (import, code, data, custom "name"), per the wasm binary format.
let p = 8
const leb = () => {
  const [v, next] = readLeb(buf, p)
  p = next
  return v
}
const skipName = () => {
  const l = leb()
  p += l
}
let importedFns = 0
const bodies = []
const names = new Map()
let data = Buffer.alloc(0)
while (p < buf.length) {
  const id = buf[p++]
  const size = leb()
  const start = p
  if (id === 2) {
    for (let n = leb(), i = 0; i < n; i++) {
      skipName(); skipName()
      const kind = buf[p++]
      if (kind === 0) { leb(); importedFns++ } // func: type index
      else if (kind === 1) { p++; if (leb() & 1) leb(); leb() } // table: reftype, limits
      else if (kind === 2) { if (leb() & 1) { leb(); leb() } else leb() } // memory: limits
      else if (kind === 3) p += 2 // global: valtype, mut
      else { p++; leb() } // tag
    }
  } else if (id === 10) {
    for (let n = leb(), i = 0; i < n; i++) {
      const s = leb()
      bodies.push(buf.subarray(p, p + s))
      p += s
    }
  } else if (id === 11) {
    data = buf.subarray(start, start + size)
  } else if (id === 0) {
    const nameLen = leb()
    const section = buf.subarray(p, p + nameLen).toString()
    p += nameLen
    while (section === 'name' && p < start + size) {
      const sub = buf[p++]
      const end = leb() + p
      if (sub === 1) {
        for (let n = leb(), i = 0; i < n; i++) {
          const idx = leb()
          const l = leb()
          names.set(idx, buf.subarray(p, p + l).toString())
          p += l
        }
      }
      p = end
    }
  }
  p = start + size
}
if (names.size === 0) {
  console.error(`${file} has no name section: build it with scripts/build.mjs --names`)
  process.exit(1)
}

const groupOf = (name) => {
  const n = name.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]+\]/g, '')
  const path = /^<?(?:&mut |&|\[)?([A-Za-z_][\w]*(?:::[a-z_][\w]*)*)/.exec(n)?.[1] ?? 'other'
  const parts = path.split('::')
  if (parts[0] !== 'context_compactor') return parts.slice(0, depth).join('::')
  // our crate: module, and the submodule for the folders
  return parts.slice(0, ['formats', 'memory', 'summarize', 'engine', 'wasm'].includes(parts[1]) ? 3 : 2).join('::')
}
const groups = new Map()
bodies.forEach((_, i) => {
  const g = groupOf(names.get(i + importedFns) ?? 'other')
  if (!groups.has(g)) groups.set(g, [])
  groups.get(g).push(i)
})
const brotli = (parts) => brotliCompressSync(Buffer.concat(parts), { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 22 } }).length
const all = brotli(bodies)
const rawAll = bodies.reduce((a, b) => a + b.length, 0)
console.log(`${file}: ${bodies.length} functions, code ${rawAll} bytes raw, ${all} brotli; data ${data.length} raw, ${brotli([data])} brotli`)
console.log('| group | functions | code raw | marginal brotli |')
console.log('|---|---|---|---|')
const rows = []
for (const [g, idx] of groups) {
  const raw = idx.reduce((a, i) => a + bodies[i].length, 0)
  if (raw < min) continue
  const set = new Set(idx)
  rows.push({ g, n: idx.length, raw, marginal: all - brotli(bodies.filter((_, i) => !set.has(i))) })
}
rows.sort((a, b) => b.marginal - a.marginal)
for (const r of rows) console.log(`| ${r.g} | ${r.n} | ${r.raw} | ${r.marginal} |`)
// Our crate as a whole (every module, including those under --min), beside the libraries.
const ours = [...groups].filter(([g]) => g.startsWith('context_compactor')).flatMap(([, idx]) => idx)
const oursSet = new Set(ours)
console.log(`| context_compactor (all modules) | ${ours.length} | ${ours.reduce((a, i) => a + bodies[i].length, 0)} | ${all - brotli(bodies.filter((_, i) => !oursSet.has(i)))} |`)
// Cross-cutting sets by name (--match): e.g. everything serde, wherever its path is.
for (const m of matches) {
  const re = new RegExp(m)
  const idx = bodies.map((_, i) => i).filter((i) => re.test(names.get(i + importedFns) ?? ''))
  const set = new Set(idx)
  console.log(`| names matching /${m}/ | ${idx.length} | ${idx.reduce((a, i) => a + bodies[i].length, 0)} | ${all - brotli(bodies.filter((_, i) => !set.has(i)))} |`)
}
