// Smoke tests of the built package, imported by its own name through the exports map.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { version } from 'context-compactor'

const cargoToml = await readFile(new URL('../../Cargo.toml', import.meta.url), 'utf8')
const cargoVersion = cargoToml.match(/^version\s*=\s*"([^"]+)"/m)?.[1]

test('version() returns the Cargo.toml version (ESM, node entry)', () => {
  assert.ok(cargoVersion, 'Cargo.toml has a version')
  assert.equal(version(), cargoVersion)
})

test('require("context-compactor") gives the same API (CommonJS)', () => {
  const require = createRequire(import.meta.url)
  assert.equal(require('context-compactor').version(), cargoVersion)
})

test('the web entry works after initSync with the "./wasm" export', async () => {
  const web = await import(new URL('../../js/web.mjs', import.meta.url))
  const wasmPath = fileURLToPath(import.meta.resolve('context-compactor/wasm'))
  web.initSync({ module: await readFile(wasmPath) })
  assert.equal(web.version(), cargoVersion)
  assert.equal(typeof web.init, 'function')
})
