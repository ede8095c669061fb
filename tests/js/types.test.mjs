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

test('J-3 every runtime export is declared in js/index.d.ts', async () => {
  const dts = await (await import('node:fs/promises')).readFile(join(root, 'js/index.d.ts'), 'utf8')
  for (const name of Object.keys(api)) {
    if (name === 'default') continue
    assert.match(dts, new RegExp(`export (declare )?(function|class|const) ${name}\\b`), `${name} is declared`)
  }
})
