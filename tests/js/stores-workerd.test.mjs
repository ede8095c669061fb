// I-5, W-5, W-8, M-1..M-4: durableObjectStore / durableObjectMemory pass the store
// contract (tests/stores/contract.mjs) inside a Durable Object in workerd (SQLite-backed
// object, local-disk storage); the restart phase runs after workerd is stopped and
// started again over the same storage directory (a new isolate).
import { test } from 'node:test'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { reportContract } from '../stores/report.mjs'
import { bundleWorker, root, startWorkerd } from './launch.mjs'

test('I-5 W-5 W-8 M-4 Durable Object store contract in workerd, then a restarted workerd reads back the same session and recall', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-do-'))
  let w
  try {
    await bundleWorker(dir, join(root, 'tests/stores/worker.mjs'), [{ className: 'ContractObject', binding: 'CONTRACT' }])
    w = await startWorkerd(dir)
    const res = await fetch(`${w.url}/contract?phase=first`, { method: 'POST' })
    const first = JSON.parse(await res.text())
    await reportContract(t, first, 12)
    await w.stop()
    w = await startWorkerd(dir)
    const again = await (await fetch(`${w.url}/contract?phase=restart`, { method: 'POST', body: JSON.stringify(first.fingerprint) })).json()
    await reportContract(t, again, 2)
  } finally {
    await w?.stop()
    await rm(dir, { recursive: true, force: true })
  }
})
