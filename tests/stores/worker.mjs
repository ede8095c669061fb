// A Worker with one Durable Object class whose storage runs the store contract
// (contract.mjs) through durableObjectStore / durableObjectMemory in workerd.
// POST /contract?phase=first|restart (body: the fingerprint for 'restart') -> result JSON.
import * as api from 'context-compactor'
import { durableObjectMemory, durableObjectStore } from 'context-compactor/stores'
import { runContract } from './contract.mjs'

export class ContractObject {
  constructor(ctx) {
    this.storage = ctx.storage
  }

  async fetch(request) {
    const url = new URL(request.url)
    const phase = url.searchParams.get('phase') ?? 'first'
    const fingerprint = phase === 'restart' ? await request.json() : null
    const storage = this.storage
    const env = {
      api,
      name: 'durable-object (workerd)',
      sessionStore: (id) => durableObjectStore(storage, id),
      memory: (o = {}) => durableObjectMemory(storage, { MemoryIndex: api.MemoryIndex, ...o }),
      valueLimit: 128 * 1024,
      async pieces(id) {
        const m = await storage.list({ prefix: `scc/ssession/s${encodeURIComponent(id)}/` })
        return [...m.values()].filter((v) => v instanceof Uint8Array).map((v) => v.byteLength)
      },
    }
    return Response.json(await runContract(env, phase, fingerprint))
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url)
    if (url.pathname !== '/contract') return new Response(`context-compactor ${api.version()}\n`)
    const stub = env.CONTRACT.get(env.CONTRACT.idFromName('contract'))
    return stub.fetch(request)
  },
}
