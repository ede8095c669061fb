// The README quick starts, one per runtime (issue 16.6, J-1): the files in
// examples/quickstart run as they are, in a fresh project that has the package in
// node_modules: Node, Deno (await init(), --allow-read), workerd (bundled the way
// wrangler bundles, served on loopback), an esbuild browser bundle, and the wrangler
// config they come with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import * as esbuild from 'esbuild'
import { bin, bundleLikeWrangler, root, singleWorkerConfig, startWorkerd } from './launch.mjs'
const run = promisify(execFile)
const denoEnv = { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' }

async function project() {
  const dir = await mkdtemp(join(tmpdir(), 'cc-quickstart-'))
  await cp(join(root, 'examples/quickstart'), dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), '{ "name": "quickstart", "private": true, "type": "module" }\n')
  await mkdir(join(dir, 'node_modules'))
  await symlink(root, join(dir, 'node_modules', 'context-compactor'))
  return dir
}

function assertCompacted(out, runtime) {
  assert.equal(out.runtime, runtime)
  assert.equal(out.status, 'compacted', runtime)
  assert.equal(out.before, 19, runtime)
  assert.ok(out.after < out.before, `${runtime}: ${out.before} -> ${out.after} messages`)
}

const dir = await project()
test.after(() => rm(dir, { recursive: true, force: true }))

test('j1_quickstart_node', async () => {
  assertCompacted(JSON.parse((await run(process.execPath, ['node.mjs'], { cwd: dir })).stdout), 'node')
})

test('j1_quickstart_deno_with_init_and_allow_read', async () => {
  const { stdout } = await run(bin('deno'), ['run', '--no-prompt', '--allow-read', 'deno.mjs'], { cwd: dir, env: denoEnv })
  assertCompacted(JSON.parse(stdout.trim().split('\n').pop()), 'deno')
  // without --allow-read, init() cannot read the .wasm: the flag in the quick start is needed
  await assert.rejects(run(bin('deno'), ['run', '--no-prompt', 'deno.mjs'], { cwd: dir, env: denoEnv }), (e) => /allow-read|NotCapable|PermissionDenied/i.test(e.stderr))
})

test('j1_quickstart_cloudflare_worker_on_workerd_bundled_like_wrangler', async () => {
  const out = join(dir, 'dist')
  await mkdir(out, { recursive: true })
  // wrangler's bundle: esbuild with the workerd / worker / browser conditions, .wasm
  // imports kept as modules the runtime compiles (its default CompiledWasm rule)
  await bundleLikeWrangler(join(dir, 'worker.mjs'), join(out, 'worker.js'), dir)
  const wrangler = await readFile(join(dir, 'wrangler.toml'), 'utf8')
  assert.match(wrangler, /^main = "worker\.mjs"$/m, 'the wrangler config names the quick-start worker')
  const date = /^compatibility_date = "([\d-]+)"$/m.exec(wrangler)[1]
  await writeFile(join(out, 'config.capnp'), singleWorkerConfig(date))
  const w = await startWorkerd(out)
  try {
    const { transcript } = await import(pathToFileURL(join(dir, 'transcript.mjs')).href)
    const res = await fetch(`${w.url}/`, { method: 'POST', body: JSON.stringify(transcript()) })
    assert.equal(res.status, 200, w.log())
    assertCompacted(await res.json(), 'workerd')
  } finally {
    await w.stop()
  }
})

test('j1_quickstart_bundler_browser_build_with_init', async () => {
  const outfile = join(dir, 'dist', 'bundle.mjs')
  const result = await esbuild.build({
    entryPoints: [join(dir, 'bundler.mjs')], bundle: true, format: 'esm', platform: 'browser', absWorkingDir: dir,
    outfile, logLevel: 'error', metafile: true,
  })
  assert.ok(Object.keys(result.metafile.inputs).some((p) => p.endsWith('js/web.mjs')), 'the browser condition picks the web entry')
  const mod = await import(pathToFileURL(outfile).href)
  assertCompacted(await mod.run(await readFile(join(root, 'pkg/web/context_compactor_bg.wasm'))), 'bundle')
})

test('j1_readme_quick_start_snippets_are_the_tested_files', async () => {
  const readme = await readFile(join(root, 'README.md'), 'utf8')
  for (const f of ['node.mjs', 'deno.mjs', 'worker.mjs']) {
    const body = (await readFile(join(root, 'examples/quickstart', f), 'utf8')).trim()
    assert.ok(readme.includes(body), `README shows examples/quickstart/${f} as it is`)
  }
})
