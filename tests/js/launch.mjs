// The one launcher of the tests (and bench/stores.mjs) that start a real runtime:
//   - headless Chromium: playwright-core driving /usr/bin/chromium (or $CHROMIUM; no
//     browser download), with the repository served on loopback by scripts/serve.mjs;
//   - workerd (npm package `workerd`): a worker bundled the way wrangler bundles it
//     (esbuild, workerd / worker / browser conditions, the .wasm kept as a module the
//     runtime compiles), a config written for it, the binary started on loopback ports.
import { before, after } from 'node:test'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { copyFile, mkdir, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'
import { chromium } from 'playwright-core'
import { startServer } from '../../scripts/serve.mjs'

export const root = fileURLToPath(new URL('../../', import.meta.url))
/** A binary of the repository's node_modules (deno, workerd, tsc, ...). */
export const bin = (name) => join(root, 'node_modules', '.bin', name)

// ---- Chromium ---------------------------------------------------------------------

export const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium'

/** `false` when Chromium is there, else why its tests skip; under CI=true a missing
 * Chromium throws instead (the browser tests are required there). */
export function chromiumSkip() {
  const skip = existsSync(executablePath) ? false : `no Chromium at ${executablePath}`
  if (skip && process.env.CI === 'true') throw new Error(`${skip} (required under CI)`)
  return skip
}

/** A headless Chromium (close it with `browser.close()`). */
export function launchChromium() {
  return chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
}

/**
 * Registers `before` / `after` hooks of the calling test file: the repository served on
 * a free loopback port and one Chromium. Returns `{ skip, browser, base }`; `browser`
 * and `base` (the server's URL) are set once `before` has run (not when skipped).
 */
export function useChromium() {
  const ctx = { skip: chromiumSkip(), browser: null, base: null, server: null }
  before(async () => {
    if (ctx.skip) return
    ;({ server: ctx.server, url: ctx.base } = await startServer({ port: 0 }))
    ctx.browser = await launchChromium()
  })
  after(async () => {
    await ctx.browser?.close()
    ctx.server?.close()
  })
  return ctx
}

// ---- workerd ----------------------------------------------------------------------

function bundle(entry, outfile, absWorkingDir) {
  return esbuild.build({
    entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', absWorkingDir,
    conditions: ['workerd', 'worker', 'browser'], outfile, logLevel: 'error',
    plugins: [{ name: 'wasm-module', setup(b) { b.onResolve({ filter: /\.wasm$/ }, () => ({ path: 'context_compactor_bg.wasm', external: true })) } }],
  })
}

/** Bundles `entry` to `outfile` the way wrangler does and copies the .wasm beside it. */
export async function bundleLikeWrangler(entry, outfile, absWorkingDir = root) {
  await bundle(entry, outfile, absWorkingDir)
  await copyFile(join(root, 'pkg/web/context_compactor_bg.wasm'), join(dirname(outfile), 'context_compactor_bg.wasm'))
}

/** The modules of a worker bundled by `bundleLikeWrangler` (capnp). */
const WORKER_MODULES = `modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "context_compactor_bg.wasm", wasm = embed "context_compactor_bg.wasm"),
  ]`

/** A workerd config serving one worker (`worker.js` + the .wasm) on socket `http`. */
export function singleWorkerConfig(compatibilityDate = '2025-01-01') {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  ${WORKER_MODULES},
  compatibilityDate = "${compatibilityDate}",
);
`
}

/** A worker's capnp value (`worker.js` + the .wasm) with the given `bindings` (capnp text). */
export function workerValue(bindings = '', compatibilityDate = '2025-01-01') {
  return `(
  ${WORKER_MODULES},
  compatibilityDate = "${compatibilityDate}",${bindings ? `\n  bindings = [${bindings}],` : ''}
)`
}

/**
 * Bundles `entry` into `dir` and writes `dir/config.capnp`: the worker with
 * `objects` ([{ className, binding }]) as SQLite-backed Durable Object namespaces whose
 * storage lives in `dir/do` (kept across workerd restarts), plus `extraWorkers`
 * ([{ name, entry, binding }]) bound to the main worker as services, and `text`
 * ({ NAME: value }) as text bindings.
 */
export async function bundleWorker(dir, entry, objects, extraWorkers = [], text = {}) {
  await mkdir(join(dir, 'do'), { recursive: true })
  await bundleLikeWrangler(entry, join(dir, 'worker.js'))
  for (const w of extraWorkers) await bundle(w.entry, join(dir, `${w.name}.js`), root)
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
  ${WORKER_MODULES},
  compatibilityDate = "2025-01-01",
  durableObjectNamespaces = [${objects.map((o) => `(className = "${o.className}", uniqueKey = "cc-${o.className}", enableSql = true)`).join(', ')}],
  durableObjectStorage = (localDisk = "do-disk"),
  bindings = [${[...objects.map((o) => `(name = "${o.binding}", durableObjectNamespace = "${o.className}")`), ...extraWorkers.map((w) => `(name = "${w.binding}", service = "${w.name}")`), ...Object.entries(text).map(([k, v]) => `(name = "${k}", text = ${JSON.stringify(String(v))})`)].join(', ')}],
);
${extra}
`)
}

/** A loopback port free right now. */
export async function freePort() {
  const srv = createServer()
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address()
  await new Promise((resolve) => srv.close(resolve))
  return port
}

/**
 * Starts workerd on `dir/config.capnp` with each of `sockets` (socket names of the
 * config) on a free loopback port; resolves once every socket answers a GET of `/`.
 * Returns `{ url, urls, stop, log }`: `url` is the first socket's, `urls` all of them in
 * order; `stop()` ends workerd (SIGTERM) and waits for it; `log()` is its output so far.
 * `experimental`: passes `--experimental` (needed by some configs).
 */
export async function startWorkerd(dir, { sockets = ['http'], experimental = false } = {}) {
  const ports = []
  for (const _ of sockets) ports.push(await freePort())
  const args = ['serve', join(dir, 'config.capnp'), ...(experimental ? ['--experimental'] : []),
    ...sockets.flatMap((s, i) => ['--socket-addr', `${s}=127.0.0.1:${ports[i]}`])]
  const child = spawn(bin('workerd'), args, { cwd: dir })
  let log = ''
  child.stdout.on('data', (d) => { log += d })
  child.stderr.on('data', (d) => { log += d })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  const urls = ports.map((p) => `http://127.0.0.1:${p}`)
  try {
    for (const url of urls) {
      for (let i = 0; ; i++) {
        if (child.exitCode !== null) throw new Error(`workerd exited early:\n${log}`)
        try { await (await fetch(`${url}/`)).text(); break } catch { if (i > 200) throw new Error(`workerd did not answer:\n${log}`); await new Promise((r) => setTimeout(r, 100)) }
      }
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { url: urls[0], urls, stop, log: () => log }
}
