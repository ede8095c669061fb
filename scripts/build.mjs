#!/usr/bin/env node
// Build the wasm modules and the wasm-bindgen outputs the package ships:
//   pkg/node       full build, --target nodejs (CommonJS; loads the .wasm synchronously with fs)
//   pkg/web        full build, --target web (ESM; `init()` / `initSync()` instantiate the .wasm)
//   pkg/lite/node  `lite` build (Cargo feature `lite`: no log importers, no embedded
//   pkg/lite/web   memory index), the same two targets; the `context-compactor/lite` entry
// Size settings (chosen by measurement, README "Performance", docs/performance.md): the
// Cargo release profile (opt-level "z", lto, codegen-units 1, panic abort); no
// name/producers sections; then three wasm-opt (binaryen, the npm devDependency) passes
// that only merge identical functions, renumber locals and drop the target_features
// section: the only ones measured that make the brotli transfer smaller (about 1 KiB).
// wasm-opt's -O modes shrink the raw module but grow its brotli size by 6-10%.
// Usage: node scripts/build.mjs [--only full|lite] [--out DIR] [--config KEY=VALUE ...] [--names] [--no-wasm-opt]
//   --only    build one of the two (default both)
//   --out     write DIR/pkg/... instead of ./pkg/... (profile candidates, bench/profiles.mjs)
//   --config  passed to cargo as `--config KEY=VALUE` (e.g. 'profile.release.opt-level="s"')
//   --names   keep the name section (for bench/size-breakdown.mjs; not for shipping)
//   --no-wasm-opt  leave the module as wasm-bindgen writes it (bench/build-profiles.mjs)
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const crate = 'context_compactor'
const wasmTarget = 'wasm32-unknown-unknown'

const argv = process.argv.slice(2)
const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1] : null
const outRoot = argv.includes('--out') ? resolve(argv[argv.indexOf('--out') + 1]) : root
const names = argv.includes('--names')
const wasmOpt = !argv.includes('--no-wasm-opt')
const configs = argv.flatMap((a, i) => (argv[i - 1] === '--config' ? ['--config', a] : []))
if (only && only !== 'full' && only !== 'lite') {
  console.error('build: --only takes full or lite')
  process.exit(2)
}

function run(cmd, args) {
  console.log(`$ ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.error) throw r.error
  if (r.status !== 0) process.exit(r.status ?? 1)
}

// cargo honours CARGO_TARGET_DIR; the default is the repo's own target/.
const targetDir = process.env.CARGO_TARGET_DIR || 'target'
const wasm = join(isAbsolute(targetDir) ? targetDir : join(root, targetDir),
  wasmTarget, 'release', `${crate}.wasm`)

// binaryen's wasm-opt from node_modules (npm ci installs it; no global tool). It reads the
// wasm features rustc used from the module's target_features section, then drops that
// section (tool metadata; no runtime reads it).
const wasmOptBin = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'wasm-opt.cmd' : 'wasm-opt')
const wasmOptArgs = ['--duplicate-function-elimination', '--reorder-locals', '--strip-target-features', ...(names ? ['--debuginfo'] : [])]

const builds = [
  { name: 'full', features: [], outs: [['nodejs', 'pkg/node'], ['web', 'pkg/web']] },
  { name: 'lite', features: ['--features', 'lite'], outs: [['nodejs', 'pkg/lite/node'], ['web', 'pkg/lite/web']] },
].filter((b) => !only || b.name === only)

// One after the other in the same target dir: both write target/.../context_compactor.wasm,
// so each build's wasm-bindgen runs before the next cargo build (dependencies are shared).
for (const b of builds) {
  run('cargo', ['build', '--release', '--target', wasmTarget, '--lib', ...b.features, ...configs])
  for (const [target, outDir] of b.outs) {
    const out = join(outRoot, outDir)
    rmSync(out, { recursive: true, force: true })
    mkdirSync(out, { recursive: true })
    // Names and producers sections are debug metadata (~400 KB of names); not shipped.
    run('wasm-bindgen', [wasm, '--target', target, '--out-dir', out, ...(names ? [] : ['--remove-name-section']), '--remove-producers-section'])
    if (wasmOpt) {
      const bg = join(out, `${crate}_bg.wasm`)
      run(wasmOptBin, [...wasmOptArgs, bg, '-o', bg])
    }
    // The package is "type": "module"; the nodejs output is CommonJS, so mark its folder.
    if (target === 'nodejs') writeFileSync(join(out, 'package.json'), '{ "type": "commonjs" }\n')
  }
}
