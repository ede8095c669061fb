#!/usr/bin/env node
// Build-profile candidates (a benchmark, not a test; issue 15 item 3): builds this source
// once per Cargo profile candidate (scripts/build.mjs --only full --out DIR --config ...,
// each in its own target dir under the OS temp dir), adds wasm-opt (npm `binaryen`)
// -O passes over the shipped build, then runs bench/profiles.mjs over all of them at each size
// (10 MB and 1 MB by default): `_bg.wasm` raw and brotli, and compaction, check and
// toRequest as ratios to the JSON.parse + JSON.stringify round trip of the same run.
// The table it prints is the one in docs/performance.md ("Build size").
// Usage: node bench/build-profiles.mjs [--reuse] [--only NAME,NAME] [--sizes 10,1] [--runs 7]
//   --reuse  keep candidates already built in the temp dir (by name)
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const opt = (name, dflt) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : dflt)
const reuse = argv.includes('--reuse')
const sizes = opt('sizes', '10,1').split(',')
const runs = opt('runs', '7')
const base = join(tmpdir(), 'context-compactor-profiles')

// Cargo candidates: name -> `--config` values on top of Cargo.toml's release profile (which
// is the shipped one: "z", serde_json at "s"), extra scripts/build.mjs arguments, and the
// candidate whose target dir it shares (same cargo settings, so nothing is rebuilt). Each
// is post-passed as scripts/build.mjs ships it unless its args say `--no-wasm-opt`. Names
// have no commas (--only splits on them).
const cargo = {
  'z+serde_json@s': { configs: [] },
  'z+serde_json@s no-post': { configs: [], args: ['--no-wasm-opt'], target: 'z+serde_json@s' },
  z: { configs: ['profile.release.package.serde_json.opt-level="z"'] },
  'z+serde_json@3': { configs: ['profile.release.package.serde_json.opt-level=3'] },
  s: { configs: ['profile.release.opt-level="s"'] },
  o3: { configs: ['profile.release.opt-level=3', 'profile.release.package.serde_json.opt-level=3'] },
}
const shipped = 'z+serde_json@s'
// wasm-opt -O modes over the shipped build (binaryen reads the features from the module).
const wasmOpt = { 'z+serde_json@s+wasm-opt -Oz': ['-Oz'], 'z+serde_json@s+wasm-opt -O3': ['-O3'] }
const only = opt('only', null)?.split(',')
const wanted = (name) => !only || only.includes(name)
const dirOf = (name) => join(base, name.replace(/[^A-Za-z0-9@+.-]/g, '_'))

function run(cmd, args, env = {}) {
  console.error(`$ ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } })
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status})`)
}

mkdirSync(base, { recursive: true })
for (const [name, { configs, args = [], target = name }] of Object.entries(cargo)) {
  if (!wanted(name) && !(name === shipped && Object.keys(wasmOpt).some(wanted))) continue
  const dir = dirOf(name)
  if (reuse && existsSync(join(dir, 'pkg/web/context_compactor_bg.wasm'))) continue
  run('node', ['scripts/build.mjs', '--only', 'full', '--out', dir, ...args, ...configs.flatMap((c) => ['--config', c])],
    { CARGO_TARGET_DIR: join(base, `target-${target.replace(/[^A-Za-z0-9]/g, '_')}`) })
}
for (const [name, passes] of Object.entries(wasmOpt)) {
  if (!wanted(name)) continue
  const dir = dirOf(name)
  if (reuse && existsSync(join(dir, 'pkg/web/context_compactor_bg.wasm'))) continue
  rmSync(dir, { recursive: true, force: true })
  cpSync(join(dirOf(shipped), 'pkg'), join(dir, 'pkg'), { recursive: true })
  const wasm = join(dir, 'pkg/web/context_compactor_bg.wasm')
  run(join(root, 'node_modules/.bin/wasm-opt'), [...passes, wasm, '-o', wasm])
}
const specs = [...Object.keys(cargo), ...Object.keys(wasmOpt)].filter(wanted).map((n) => `${n}=${dirOf(n)}`)
for (const mb of sizes) run('node', ['bench/profiles.mjs', ...specs, '--mb', mb, '--runs', runs])
