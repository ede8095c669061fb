// Runs the store contract (contract.mjs) on IndexedDB in a browser page:
// `await window.runStoresContract(phase, fingerprint)` -> the result object.
// The restart phase runs after a page reload (a new JS realm over the same database).
import init, * as api from '../../js/web.mjs'
import { indexedDbMemory, indexedDbStore, openIndexedDb } from '../../js/stores/index.mjs'
import { runContract } from './contract.mjs'

window.runStoresContract = async (phase, fingerprint) => {
  await init()
  const db = await openIndexedDb(indexedDB, 'cc-contract')
  const env = {
    api,
    name: `indexeddb (${navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? navigator.userAgent})`,
    sessionStore: (id) => indexedDbStore(db, id),
    memory: (o = {}) => indexedDbMemory(db, { MemoryIndex: api.MemoryIndex, ...o }),
  }
  const out = await runContract(env, phase, fingerprint)
  db.close()
  return out
}
document.body.dataset.ready = 'true'
