#!/usr/bin/env node
// Build the wasm module and the two wasm-bindgen outputs the package ships:
//   pkg/node  (--target nodejs, CommonJS; loads the .wasm synchronously with fs)
//   pkg/web   (--target web, ESM; `init()` / `initSync()` instantiate the .wasm)
// Size settings (README "Runtimes and size"): Cargo release profile opt-level "z", lto,
// codegen-units 1, panic abort; no name/producers sections. wasm-opt (binaryen) was
// measured and not adopted: smaller raw, but larger gzip/brotli and slower.
// Usage: node scripts/build.mjs   (or: npm run build)
import { spawnSync } from 'node:child_process'
import { rmSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const crate = 'context_compactor'
const wasmTarget = 'wasm32-unknown-unknown'

function run(cmd, args) {
  console.log(`$ ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' })
  if (r.error) throw r.error
  if (r.status !== 0) process.exit(r.status ?? 1)
}

run('cargo', ['build', '--release', '--target', wasmTarget, '--lib'])

// cargo honours CARGO_TARGET_DIR; the default is the repo's own target/.
const targetDir = process.env.CARGO_TARGET_DIR || 'target'
const wasm = join(isAbsolute(targetDir) ? targetDir : join(root, targetDir),
  wasmTarget, 'release', `${crate}.wasm`)

for (const [target, outDir] of [['nodejs', 'pkg/node'], ['web', 'pkg/web']]) {
  rmSync(join(root, outDir), { recursive: true, force: true })
  // Names and producers sections are debug metadata (~150 KB of names); not shipped.
  run('wasm-bindgen', [wasm, '--target', target, '--out-dir', outDir, '--remove-name-section', '--remove-producers-section'])
}

// The package is "type": "module"; the nodejs output is CommonJS, so mark its folder.
writeFileSync(join(root, 'pkg/node/package.json'), '{ "type": "commonjs" }\n')
