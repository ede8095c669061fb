// The README quick starts, one per runtime (issue 16.6, J-1): the files in
// examples/quickstart run as they are, in a fresh project that has the package in
// node_modules: Node, Deno (await init(), --allow-read), workerd (bundled the way
// wrangler bundles, served on loopback), an esbuild browser bundle, and the wrangler
// config they come with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile, copyFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import * as esbuild from 'esbuild'

const root = fileURLToPath(new URL('../../', import.meta.url))
const bin = (name) => join(root, 'node_modules', '.bin', name)
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

async function freePort() {
  const srv = createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

test('j1_quickstart_cloudflare_worker_on_workerd_bundled_like_wrangler', async () => {
  const out = join(dir, 'dist')
  await mkdir(out, { recursive: true })
  // wrangler's bundle: esbuild with the workerd / worker / browser conditions, .wasm
  // imports kept as modules the runtime compiles (its default CompiledWasm rule)
  await esbuild.build({
    entryPoints: [join(dir, 'worker.mjs')], bundle: true, format: 'esm', platform: 'neutral', absWorkingDir: dir,
    conditions: ['workerd', 'worker', 'browser'], outfile: join(out, 'worker.js'), logLevel: 'error',
    plugins: [{ name: 'wasm-module', setup(b) { b.onResolve({ filter: /\.wasm$/ }, () => ({ path: 'context_compactor_bg.wasm', external: true })) } }],
  })
  await copyFile(join(root, 'pkg/web/context_compactor_bg.wasm'), join(out, 'context_compactor_bg.wasm'))
  const wrangler = await readFile(join(dir, 'wrangler.toml'), 'utf8')
  assert.match(wrangler, /^main = "worker\.mjs"$/m, 'the wrangler config names the quick-start worker')
  const date = /^compatibility_date = "([\d-]+)"$/m.exec(wrangler)[1]
  await writeFile(join(out, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "context_compactor_bg.wasm", wasm = embed "context_compactor_bg.wasm"),
  ],
  compatibilityDate = "${date}",
);
`)
  const port = await freePort()
  let log = ''
  const child = spawn(bin('workerd'), ['serve', join(out, 'config.capnp'), '--socket-addr', `http=127.0.0.1:${port}`], { cwd: out })
  child.stdout.on('data', (d) => { log += d })
  child.stderr.on('data', (d) => { log += d })
  try {
    const { transcript } = await import(pathToFileURL(join(dir, 'transcript.mjs')).href)
    let res
    for (let i = 0; i < 150 && res === undefined; i++) {
      try { res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: JSON.stringify(transcript()) }) } catch { await new Promise((r) => setTimeout(r, 100)) }
      assert.equal(child.exitCode, null, `workerd exited early:\n${log}`)
    }
    assert.equal(res.status, 200, log)
    assertCompacted(await res.json(), 'workerd')
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
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
