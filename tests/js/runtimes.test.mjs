// J-5: the golden transcript compacted in every runtime gives the same result bytes as
// the fixture generated in Node (scripts/golden.mjs). Each runtime runs for real: Node ESM
// and CJS, Deno (npm package `deno`), workerd (npm package `workerd`, a worker bundled the
// way wrangler does it and serving on loopback), and an esbuild browser bundle.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import * as esbuild from 'esbuild'
import * as api from 'context-compactor'
import { runGolden, sha256Hex } from '../runtime/golden.mjs'
import { bin, bundleLikeWrangler, root, singleWorkerConfig, startWorkerd } from './launch.mjs'
const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))
const golden = await readFile(join(root, 'tests/fixtures/golden.json'), 'utf8')
const run = promisify(execFile)

function assertGolden(got, where) {
  assert.equal(got.status, 'compacted', `${where}: status`)
  assert.equal(got.bytes, expected.bytes, `${where}: byte length`)
  assert.equal(got.sha256, expected.sha256, `${where}: SHA-256 of JSON.stringify(result)`)
}

test('J-5 golden fixture: the golden transcript is openai-chat with parallel tool calls and compacts', () => {
  const doc = JSON.parse(golden)
  assert.equal(api.detectFormat(doc), 'openai-chat')
  assert.ok(doc.messages.length >= 30)
  assert.ok(doc.messages.some((m) => (m.tool_calls ?? []).length >= 2), 'has a parallel tool call')
  assert.equal(expected.status, 'compacted')
})

test('J-1 J-5 Node ESM (node + import condition) matches the golden bytes', async () => {
  assertGolden(await runGolden(api, JSON.parse(golden)), 'node esm')
})

test('J-1 J-5 Node CJS (node + require condition) matches the golden bytes', async () => {
  const { stdout } = await run(process.execPath, [join(root, 'tests/runtime/cjs-golden.cjs')], { cwd: root })
  const got = JSON.parse(stdout)
  assert.equal(got.format, 'openai-chat')
  assertGolden(got, 'node cjs')
})

test('J-1 J-5 Deno (web build, init() fetches the .wasm) matches the golden bytes', async () => {
  const { stdout } = await run(bin('deno'), ['run', '--no-prompt', `--allow-read=${root}`, join(root, 'tests/runtime/deno-golden.mjs')],
    { cwd: root, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } })
  const got = JSON.parse(stdout.trim().split('\n').pop())
  assert.match(got.runtime, /^deno \d+\./)
  assertGolden(got, 'deno')
})

/** Bundle like wrangler: workerd/worker/browser conditions, .wasm kept as a module. */
async function bundleWorker(dir) {
  await bundleLikeWrangler(join(root, 'tests/workerd/worker.mjs'), join(dir, 'worker.js'))
  await writeFile(join(dir, 'config.capnp'), singleWorkerConfig())
}

test('J-1 J-5 workerd (workerd condition, wasm handed in as a Module) compacts a POSTed transcript to the golden bytes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-workerd-'))
  let w
  try {
    await bundleWorker(dir)
    const bundle = await readFile(join(dir, 'worker.js'), 'utf8')
    assert.match(bundle, /initSync\(\{ module: /, 'the workerd entry (and its initSync) is in the bundle')
    w = await startWorkerd(dir)
    const url = `${w.url}/`
    const hello = await (await fetch(url)).text()
    assert.equal(hello, `context-compactor ${api.version()}\n`, `workerd answered GET:\n${w.log()}`)
    const res = await fetch(url, { method: 'POST', body: golden, headers: { 'content-type': 'application/json' } })
    const text = await res.text()
    assert.equal(res.status, 200, text)
    assertGolden({ status: JSON.parse(text).status, bytes: Buffer.byteLength(text), sha256: await sha256Hex(text) }, 'workerd')
    const bad = await fetch(url, { method: 'POST', body: '{"messages": 3}' })
    assert.equal(bad.status, 400)
    assert.equal(typeof (await bad.json()).error.code, 'string', 'errors carry a code across the worker')
  } finally {
    await w?.stop()
    await rm(dir, { recursive: true, force: true })
  }
})

test('J-1 J-5 esbuild browser bundle of the package loads with initSync and matches the golden bytes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-esbuild-'))
  try {
    const entry = join(root, 'tests/runtime/bundle-entry.mjs')
    const result = await esbuild.build({
      entryPoints: [entry], bundle: true, format: 'esm', platform: 'browser', outfile: join(dir, 'bundle.mjs'),
      absWorkingDir: root, logLevel: 'error', metafile: true, minify: true,
    })
    const inputs = Object.keys(result.metafile.inputs)
    assert.ok(inputs.some((p) => p.endsWith('pkg/web/context_compactor.js')), `browser condition picks the web build: ${inputs}`)
    assert.ok(!inputs.some((p) => p.includes('pkg/node')), 'no node build in a browser bundle')
    const bundle = await readFile(join(dir, 'bundle.mjs'), 'utf8')
    assert.doesNotMatch(bundle, /from\s*"node:|require\(/, 'no Node built-ins in the bundle')
    const mod = await import(pathToFileURL(join(dir, 'bundle.mjs')).href)
    mod.initSync({ module: await readFile(join(root, 'pkg/web/context_compactor_bg.wasm')) })
    assertGolden(await runGolden(mod, JSON.parse(golden)), 'esbuild bundle')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('j2_web_entry_before_init_throws_not_initialized_saying_what_to_call', async () => {
  const web = await import('context-compactor/web')
  for (const call of [() => new web.ContextCompactor({ format: 'openai-chat' }), () => web.detectFormat([]), () => web.version(), () => web.MemoryIndex.restore(new Uint8Array())]) {
    assert.throws(call, (e) => e.code === 'not_initialized' && e.name === 'ContextCompactorError' && /await init\(\)/.test(e.message) && /initSync/.test(e.message))
  }
  web.initSync({ module: await readFile(join(root, 'pkg/web/context_compactor_bg.wasm')) })
  const c = new web.ContextCompactor({ format: 'openai-chat' })
  assert.ok(c instanceof web.ContextCompactor)
  assert.equal(web.version(), api.version())
  assertGolden(await runGolden(web, JSON.parse(golden)), 'web entry after initSync')
})
