// W-5 / issue 14: two workerd workers, one Durable Object holding the session. Random
// interleavings of append, recordFinding and compact from both workers lose no row (every
// appended row is in the final transcript, verbatim or named by a committed summary), and
// the final transcript is valid. Runs the real workerd binary (npm package `workerd`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ContextCompactor } from 'context-compactor'
import { bundleLikeWrangler, root, startWorkerd, workerValue } from './launch.mjs'

async function build(dir) {
  await bundleLikeWrangler(join(root, 'tests/workerd/session-worker.mjs'), join(dir, 'worker.js'))
  await copyFile(join(root, 'tests/workerd/session-store.mjs'), join(dir, 'store.js'))
  const worker = (name) => workerValue(`
    (name = "STORE", durableObjectNamespace = (className = "SessionStore", serviceName = "store")),
    (name = "NAME", text = "${name}"),
  `)
  await writeFile(join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "a", worker = .workerA), (name = "b", worker = .workerB), (name = "store", worker = .store)],
  sockets = [
    (name = "http-a", address = "127.0.0.1:0", http = (), service = "a"),
    (name = "http-b", address = "127.0.0.1:0", http = (), service = "b"),
  ],
);
const store :Workerd.Worker = (
  modules = [(name = "store.js", esModule = embed "store.js")],
  compatibilityDate = "2025-01-01",
  durableObjectNamespaces = [(className = "SessionStore", uniqueKey = "cc-session-store")],
  durableObjectStorage = (inMemory = void),
);
const workerA :Workerd.Worker = ${worker('a')};
const workerB :Workerd.Worker = ${worker('b')};
`)
}

test('W-5 (issue 14): two workerd workers over one Durable Object: no row lost in any interleaving', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-workerd-do-'))
  let wd
  try {
    await build(dir)
    wd = await startWorkerd(dir, { sockets: ['http-a', 'http-b'], experimental: true })
    const { urls } = wd
    for (const u of urls) assert.match(await (await fetch(u)).text(), /^worker [ab]\n$/, wd.log())
    const call = async (w, path) => {
      const res = await fetch(urls[w] + path)
      const body = await res.json()
      if (res.status !== 200 && body.error?.code !== 'stale_revision') throw new Error(`${path}: ${JSON.stringify(body)}\n${wd.log()}`)
      return body
    }
    const appended = []
    let rnd = 7
    const next = () => (rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648
    let committed = 0
    const statuses = []
    for (let round = 0; round < 6; round++) {
      const ops = []
      for (let k = 0; k < 8; k++) {
        const w = next() < 0.5 ? 0 : 1
        const p = next()
        if (p < 0.55) {
          const mark = `ROW-${round * 100 + k}`
          appended.push(mark)
          ops.push(call(w, `/append?text=${mark}%20${'pad'.repeat(60)}`))
        } else if (p < 0.7) {
          ops.push(call(w, `/finding?text=finding-${round}-${k}`))
        } else {
          ops.push(call(w, `/compact?delay=${Math.floor(next() * 20)}`).then((r) => { if (r.status === 'compacted') committed++ ; statuses.push(r.status ?? r.error?.code); return r }))
        }
      }
      await Promise.all(ops)
      // between the racing batches, one compaction alone commits over what they wrote
      const quiet = await call(round % 2, '/compact?delay=0')
      statuses.push(quiet.status ?? quiet.error?.code)
      if (quiet.status === 'compacted') committed++
    }
    assert.ok(committed > 0, `some compactions committed between the appends: ${statuses}`)
    const rec = await call(0, '/get')
    const all = JSON.stringify(rec.transcript)
    const lost = appended.filter((m) => !new RegExp(`${m}\\b`).test(all))
    assert.deepEqual(lost, [], `every appended row is in the final transcript (verbatim or named by a summary); ${committed} compactions committed`)
    // valid for its format (pairing, shape) and the state's revision is the record's
    new ContextCompactor({ format: 'openai-chat' }).check(rec.state, rec.transcript)
    assert.equal(rec.state.revision, rec.revision)
    assert.ok(rec.revision >= appended.length, 'every write advanced the revision')
  } finally {
    await wd?.stop()
    await rm(dir, { recursive: true, force: true })
  }
})
