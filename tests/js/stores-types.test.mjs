// I-5 J-3: context-compactor/stores is typed: a typed consumer (tests/stores/types/usage.ts,
// with lines that must NOT compile) passes `tsc --noEmit` through the exports map, and
// every runtime export of the subpath is declared.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import * as stores from 'context-compactor/stores'

const root = fileURLToPath(new URL('../../', import.meta.url))

test('I-5 J-3 tsc --noEmit compiles a typed consumer of context-compactor/stores', async () => {
  try {
    await promisify(execFile)(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', join(root, 'tests/stores/types')], { cwd: root })
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`)
  }
})

test('I-5 every export of context-compactor/stores is declared in js/stores/index.d.ts', async () => {
  const dts = await readFile(join(root, 'js/stores/index.d.ts'), 'utf8')
  const names = Object.keys(stores)
  assert.deepEqual(names.sort(), ['denoKvMemory', 'denoKvStore', 'durableObjectMemory', 'durableObjectStore', 'indexedDbMemory', 'indexedDbStore', 'openIndexedDb', 'sqliteMemory', 'sqliteStore', 'upgradeIndexedDb'])
  for (const name of names) assert.match(dts, new RegExp(`export function ${name}\\b`), `${name} is declared`)
})

test('I-5 the stores import no platform module and the core does not import the stores', async () => {
  for (const f of ['index.mjs', 'common.mjs', 'kv.mjs', 'deno-kv.mjs', 'durable-object.mjs', 'indexeddb.mjs', 'sqlite.mjs']) {
    const src = await readFile(join(root, 'js/stores', f), 'utf8')
    const specifiers = [...src.matchAll(/^\s*(?:import|export)[^'"]*from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1])
    for (const s of specifiers) assert.match(s, /^\.\/[a-z-]+\.mjs$/, `${f} imports only sibling files, not ${s}`)
  }
  for (const f of ['web.mjs', 'node.mjs', 'workerd.mjs']) assert.doesNotMatch(await readFile(join(root, 'js', f), 'utf8'), /stores/, `js/${f} does not load the stores`)
})

test('I-5 the npm tarball ships context-compactor/stores and its types', async () => {
  const { stdout } = await promisify(execFile)(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, maxBuffer: 1 << 24 })
  const files = JSON.parse(stdout)[0].files.map((f) => f.path)
  for (const f of ['index.mjs', 'index.d.ts', 'common.mjs', 'kv.mjs', 'deno-kv.mjs', 'durable-object.mjs', 'indexeddb.mjs', 'sqlite.mjs']) {
    assert.ok(files.includes(`js/stores/${f}`), `tarball has js/stores/${f}`)
  }
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
  assert.deepEqual(pkg.exports['./stores'], { types: './js/stores/index.d.ts', default: './js/stores/index.mjs' })
  for (const dep of ['better-sqlite3', 'deno', 'workerd', 'playwright-core']) {
    assert.ok(!(dep in (pkg.dependencies ?? {})), `${dep} is no runtime dependency (the stores take the platform's handle)`)
  }
})
