// `context-compactor/lite` (issue 15): the `lite` build (Cargo feature `lite`, built by
// scripts/build.mjs into pkg/lite/) leaves out the log importers and the embedded memory
// index. It loads in Node through the package's exports map and compacts a transcript
// to the same bytes as the full build (J-5); the calls it leaves out throw
// `not_in_lite` naming what is missing; the projection to host memory hooks stays (M-1).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as lite from 'context-compactor/lite'
import * as full from 'context-compactor'
import { GOLDEN_OPTIONS, goldenSummarize, runGolden, sha256Hex } from '../runtime/golden.mjs'
import { bundleLikeWrangler, singleWorkerConfig, startWorkerd } from './launch.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))
const golden = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.json'), 'utf8'))
const liteWasm = await readFile(join(root, 'pkg/lite/web/context_compactor_bg.wasm'))
const fullWasm = await readFile(join(root, 'pkg/web/context_compactor_bg.wasm'))

test('issue15_lite_loads_in_node_and_compacts_the_golden_transcript_to_the_full_builds_bytes', async () => {
  const got = await runGolden(lite, golden)
  assert.equal(got.status, 'compacted')
  assert.equal(got.sha256, expected.sha256, 'lite: SHA-256 of JSON.stringify(result) (J-5)')
  assert.equal(got.bytes, expected.bytes)
  assert.equal(lite.version(), full.version())
  assert.equal(lite.detectFormat(golden), 'openai-chat')
})

test('issue15_lite_import_transcript_throws_not_in_lite_naming_the_log_importers', () => {
  const line = JSON.stringify(golden)
  // the full build imports it ...
  assert.equal(full.importTranscript('openai-chat', line).format, 'openai-chat')
  // ... the lite one says what is missing and where it is
  for (const kind of ['auto', 'claude-code-jsonl', 'openai-chat']) {
    assert.throws(() => lite.importTranscript(kind, line), (err) => {
      assert.equal(err.name, 'ContextCompactorError')
      assert.equal(err.code, 'not_in_lite')
      assert.match(err.message, /^importTranscript is not in context-compactor\/lite/)
      assert.match(err.message, /log importers \(claude-code-jsonl, codex-rollout, swe-agent-traj, tau-bench, glaive\)/)
      assert.match(err.message, /import it from 'context-compactor'/)
      return true
    })
  }
})

test('issue15_lite_memory_index_throws_not_in_lite_and_the_wasm_has_no_index', () => {
  for (const [what, call] of [['new MemoryIndex()', () => new lite.MemoryIndex()], ['MemoryIndex.restore', () => lite.MemoryIndex.restore(new Uint8Array(2))]]) {
    assert.throws(call, (err) => {
      assert.equal(err.code, 'not_in_lite')
      assert.ok(err.message.startsWith(`${what} is not in context-compactor/lite`), err.message)
      assert.match(err.message, /embedded memory index/)
      return true
    })
  }
  // what the module exports: the index's methods and the importers' code are not in it
  const names = (bytes) => WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((e) => e.name)
  const liteNames = names(liteWasm)
  const fullNames = names(fullWasm)
  for (const m of ['memoryindex_recall', 'memoryindex_add', 'memoryindex_snapshot']) {
    assert.ok(fullNames.includes(m), `full build exports ${m}`)
    assert.ok(!liteNames.includes(m), `lite build does not export ${m}`)
  }
  assert.ok(liteNames.includes('importTranscript') && liteNames.includes('contextcompactor_compact'))
  assert.ok(liteWasm.length < fullWasm.length, `lite ${liteWasm.length} bytes < full ${fullWasm.length}`)
})

test('issue15_lite_keeps_the_memory_projection_to_a_host_store_m1', async () => {
  const puts = []
  const store = { put: (records, vectors) => { puts.push({ records, vectors }) } }
  const compactor = new lite.ContextCompactor(GOLDEN_OPTIONS)
  const out = await compactor.compact(null, golden, { summarize: goldenSummarize, store, sessionId: 's1' })
  assert.equal(out.status, 'compacted')
  assert.equal(puts.length, 1)
  assert.ok(puts[0].records.length > 0)
  assert.ok(puts[0].records.every((r) => r.session === 's1' && /^mem-[0-9a-f]{16}$/.test(r.id)))
  assert.deepEqual(out.memory.ids, puts[0].records.map((r) => r.id))
  // the same records the full build projects
  const fullPuts = []
  await new full.ContextCompactor(GOLDEN_OPTIONS).compact(null, golden, { summarize: goldenSummarize, store: { put: (r) => { fullPuts.push(r) } }, sessionId: 's1' })
  assert.deepEqual(puts[0].records, fullPuts[0])
})

test('issue15_lite_web_entry_guards_before_init_and_compacts_after_init_sync', async () => {
  const web = await import('../../js/lite.mjs')
  assert.throws(() => new web.ContextCompactor(GOLDEN_OPTIONS), (err) => err.code === 'not_initialized')
  web.initSync({ module: liteWasm })
  const got = await runGolden(web, golden)
  assert.equal(got.sha256, expected.sha256)
  assert.throws(() => web.importTranscript('auto', '{}'), (err) => err.code === 'not_in_lite')
})

test('issue15_lite_every_runtime_export_is_typed_and_the_same_names_as_the_full_entry', async () => {
  const dts = ['js/lite.d.ts', 'js/web.d.ts', 'js/index.d.ts']
  const text = (await Promise.all(dts.map((f) => readFile(join(root, f), 'utf8')))).join('\n')
  const names = (m) => Object.keys(m).filter((n) => n !== 'default').sort()
  assert.deepEqual(names(lite), names(full), 'the lite entry has the names of the full one')
  for (const name of names(lite)) {
    assert.match(text, new RegExp(`export (declare )?(function|class|const) ${name}\\b`), `${name} is declared`)
  }
  // the two left-out calls are typed as throwing in lite.d.ts
  const liteDts = await readFile(join(root, 'js/lite.d.ts'), 'utf8')
  assert.match(liteDts, /export function importTranscript\([^)]*\): never/)
  assert.match(liteDts, /export class MemoryIndex \{/)
})

test('issue15_lite_in_workerd_compacts_to_the_golden_bytes_and_says_not_in_lite', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-lite-workerd-'))
  let w
  try {
    await bundleLikeWrangler(join(root, 'tests/workerd/lite-worker.mjs'), join(dir, 'worker.js'))
    // the helper copies the full module beside the bundle; this worker's is the lite one
    await copyFile(join(root, 'pkg/lite/web/context_compactor_bg.wasm'), join(dir, 'context_compactor_bg.wasm'))
    await writeFile(join(dir, 'config.capnp'), singleWorkerConfig())
    const bundle = await readFile(join(dir, 'worker.js'), 'utf8')
    assert.match(bundle, /pkg\/lite\/web\/context_compactor\.js/, 'the bundle takes the lite glue (workerd condition)')
    assert.doesNotMatch(bundle, /pkg\/web\/context_compactor\.js/, 'and not the full one')
    w = await startWorkerd(dir)
    const res = await fetch(`${w.url}/`, { method: 'POST', body: JSON.stringify(golden), headers: { 'content-type': 'application/json' } })
    const text = await res.text()
    assert.equal(res.status, 200, text)
    assert.equal(await sha256Hex(text), expected.sha256, 'lite in workerd: the golden bytes (J-5)')
    const imp = await (await fetch(`${w.url}/import`)).json()
    assert.equal(imp.error.code, 'not_in_lite')
    assert.match(imp.error.message, /log importers/)
  } finally {
    await w?.stop()
    await rm(dir, { recursive: true, force: true })
  }
})
