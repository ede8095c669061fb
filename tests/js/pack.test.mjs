// The `npm pack` tarball installs into an empty project (offline, from the tarball only)
// and works there from ESM, CJS and the ./wasm subpath; it ships only the allow-listed files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))

test('npm pack output installs offline into an empty project and works (ESM, CJS, ./wasm)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-pack-'))
  try {
    const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, maxBuffer: 1 << 24 })
    const [info] = JSON.parse(stdout)
    const files = info.files.map((f) => f.path).sort()
    for (const f of ['package.json', 'README.md', 'js/index.d.ts', 'js/node.mjs', 'js/web.mjs', 'js/workerd.mjs', 'js/wasm.d.ts',
      'pkg/node/context_compactor.js', 'pkg/node/context_compactor_bg.wasm', 'pkg/web/context_compactor.js',
      'pkg/web/context_compactor_bg.wasm', 'bin/context-compactor.mjs']) {
      assert.ok(files.includes(f), `tarball has ${f}`)
    }
    assert.ok(!files.some((f) => /^(src|tests|target|scripts|www|node_modules)\//.test(f)), `only allow-listed files: ${files}`)

    const app = join(dir, 'app')
    await run('mkdir', ['-p', app])
    await writeFile(join(app, 'package.json'), '{ "name": "app", "version": "1.0.0", "private": true }\n')
    await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, info.filename)], { cwd: app })
    await writeFile(join(app, 'golden.json'), await readFile(join(root, 'tests/fixtures/golden.json')))
    await writeFile(join(app, 'golden.mjs'), await readFile(join(root, 'tests/runtime/golden.mjs')))
    await writeFile(join(app, 'esm.mjs'), `
import { readFileSync } from 'node:fs'
import * as api from 'context-compactor'
import { runGolden } from './golden.mjs'
const r = await runGolden(api, JSON.parse(readFileSync('golden.json', 'utf8')))
const wasm = import.meta.resolve('context-compactor/wasm')
console.log(JSON.stringify({ status: r.status, sha256: r.sha256, version: api.version(), wasm }))
`)
    await writeFile(join(app, 'cjs.cjs'), "const { version, ContextCompactor } = require('context-compactor')\nconsole.log(JSON.stringify({ version: version(), ctor: typeof ContextCompactor }))\n")
    const esm = JSON.parse((await run(process.execPath, ['esm.mjs'], { cwd: app })).stdout)
    assert.equal(esm.status, 'compacted')
    assert.equal(esm.sha256, expected.sha256)
    assert.equal(esm.version, expected.engine)
    assert.match(esm.wasm, /node_modules\/context-compactor\/pkg\/web\/context_compactor_bg\.wasm$/)
    const cjs = JSON.parse((await run(process.execPath, ['cjs.cjs'], { cwd: app })).stdout)
    assert.deepEqual(cjs, { version: expected.engine, ctor: 'function' })
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
