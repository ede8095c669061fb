// Node-side helpers for the workerd store tests: bundle a worker the way wrangler does
// (workerd/worker/browser conditions, the .wasm kept as a module), write a workerd config
// with Durable Object namespaces on local-disk storage, start and stop workerd.
import { spawn } from 'node:child_process'
import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

export const root = fileURLToPath(new URL('../../', import.meta.url))

/**
 * Bundles `entry` into `dir` and writes `dir/config.capnp`: the worker with
 * `objects` ([{ className, binding }]) as SQLite-backed Durable Object namespaces whose
 * storage lives in `dir/do` (kept across workerd restarts), plus `extraWorkers`
 * ([{ name, entry, binding }]) bound to the main worker as services, and `text`
 * ({ NAME: value }) as text bindings.
 */
export async function bundleWorker(dir, entry, objects, extraWorkers = [], text = {}) {
  await mkdir(join(dir, 'do'), { recursive: true })
  const build = (input, out) => esbuild.build({
    entryPoints: [input], bundle: true, format: 'esm', platform: 'neutral', absWorkingDir: root,
    conditions: ['workerd', 'worker', 'browser'], outfile: join(dir, out), logLevel: 'error',
    plugins: [{ name: 'wasm-module', setup(b) { b.onResolve({ filter: /\.wasm$/ }, () => ({ path: 'context_compactor_bg.wasm', external: true })) } }],
  })
  await build(entry, 'worker.js')
  for (const w of extraWorkers) await build(w.entry, `${w.name}.js`)
  await copyFile(join(root, 'pkg/web/context_compactor_bg.wasm'), join(dir, 'context_compactor_bg.wasm'))
  const extra = extraWorkers.map((w) => `const ${w.name} :Workerd.Worker = (
  modules = [(name = "${w.name}.js", esModule = embed "${w.name}.js")],
  compatibilityDate = "2025-01-01",
);`).join('\n')
  await writeFile(join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker), (name = "do-disk", disk = (path = ${JSON.stringify(join(dir, 'do'))}, writable = true))${extraWorkers.map((w) => `, (name = "${w.name}", worker = .${w.name})`).join('')}],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "context_compactor_bg.wasm", wasm = embed "context_compactor_bg.wasm"),
  ],
  compatibilityDate = "2025-01-01",
  durableObjectNamespaces = [${objects.map((o) => `(className = "${o.className}", uniqueKey = "cc-${o.className}", enableSql = true)`).join(', ')}],
  durableObjectStorage = (localDisk = "do-disk"),
  bindings = [${[...objects.map((o) => `(name = "${o.binding}", durableObjectNamespace = "${o.className}")`), ...extraWorkers.map((w) => `(name = "${w.binding}", service = "${w.name}")`), ...Object.entries(text).map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(String(v))})`)].join(', ')}],
);
${extra}
`)
}

async function freePort() {
  const srv = createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

/** Starts workerd on `dir/config.capnp`; resolves `{ url, stop, log }` once it answers. */
export async function startWorkerd(dir) {
  const port = await freePort()
  const child = spawn(join(root, 'node_modules', '.bin', 'workerd'), ['serve', join(dir, 'config.capnp'), '--socket-addr', `http=127.0.0.1:${port}`], { cwd: dir })
  let log = ''
  child.stdout.on('data', (d) => { log += d })
  child.stderr.on('data', (d) => { log += d })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`workerd exited early:\n${log}`)
    try { await (await fetch(`${url}/`)).text(); break } catch { if (i > 200) throw new Error(`workerd did not answer:\n${log}`); await new Promise((r) => setTimeout(r, 100)) }
  }
  const stop = async () => {
    if (child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  return { url, stop, log: () => log }
}
