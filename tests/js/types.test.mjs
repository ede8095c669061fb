// TypeScript: js/index.d.ts types every export; a typed consumer (tests/types/usage.ts,
// including lines that must NOT compile) passes `tsc --noEmit` through the exports map.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { promisify } from 'node:util'
import * as api from 'context-compactor'

const root = fileURLToPath(new URL('../../', import.meta.url))

test('J-3 tsc --noEmit compiles tests/types/usage.ts against the package types', async () => {
  try {
    await promisify(execFile)(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', join(root, 'tests/types')], { cwd: root })
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`)
  }
})

test('i1_i2_tsc_strict_compiles_the_ai_sdk_and_langchain_integrations', async () => {
  try {
    await promisify(execFile)(join(root, 'node_modules/.bin/tsc'), ['--noEmit', '-p', join(root, 'tests/types/integrations')], { cwd: root })
  } catch (err) {
    assert.fail(`tsc failed:\n${err.stdout}${err.stderr}`)
  }
})

test('J-3 every runtime export is declared in js/index.d.ts (init / initSync in js/web.d.ts only)', async () => {
  const { readFile } = await import('node:fs/promises')
  const shared = await readFile(join(root, 'js/index.d.ts'), 'utf8')
  const dts = shared + await readFile(join(root, 'js/web.d.ts'), 'utf8')
  assert.doesNotMatch(shared, /export function init(Sync)?\b/, 'the CommonJS types do not name init / initSync')
  const cts = await readFile(join(root, 'js/index.d.cts'), 'utf8')
  assert.doesNotMatch(cts, /\binit(Sync)?\b\(/)
  for (const name of Object.keys(api)) {
    if (name === 'default') continue
    assert.match(dts, new RegExp(`export (declare )?(function|class|const) ${name}\\b`), `${name} is declared`)
  }
})
