// A Durable Object holding one session record with compare-and-swap (W-5, issue 14): the
// object's input gate keeps each save's read-compare-write free of interleaving.
import { DurableObject } from 'cloudflare:workers'

export class SessionStore extends DurableObject {
  async load() {
    return (await this.ctx.storage.get('record')) ?? null
  }

  async save(record, { expectedRevision }) {
    const current = await this.ctx.storage.get('record')
    if ((current?.revision ?? 0) !== expectedRevision) return { ok: false, reason: 'stale_revision' }
    await this.ctx.storage.put('record', record)
    return { ok: true }
  }
}

export default { fetch() { return new Response('session store') } }
