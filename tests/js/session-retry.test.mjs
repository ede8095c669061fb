// W-5, W-8, I-6 (break3 finding 6): a Session.append whose store `save` commits but
// answers after `timeoutMs` must say the write may have landed, and a retry of the same
// rows (provider SDK rows: no message_id) must not write them twice.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, Session } from 'context-compactor'
import { sqliteStore } from 'context-compactor/stores'
import Database from 'better-sqlite3'

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** A compare-and-swap store whose next save commits and then answers `lateMs` later
 * (`lose: true`: never writes and never answers). */
function lateStore() {
  let rec = null
  const s = {
    late: null,
    onLoad: null,
    load: () => { const out = rec && structuredClone(rec); s.onLoad?.(); return out },
    save: async (r, { expectedRevision }) => {
      const late = s.late
      s.late = null
      if (late?.lose) return new Promise(() => {})
      if (late?.gate) await late.gate // the commit itself is held back
      if ((rec?.revision ?? 0) !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      rec = structuredClone(r)
      if (late) await sleep(late.ms)
    },
    get record() { return rec },
  }
  return s
}

const head = [{ role: 'system', content: 'Sys.' }, { role: 'user', content: 'List the files.' }]
const exchange = [
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'a.py b.py' },
]
const roles = (rec) => rec.transcript.map((m) => m.role + (m.tool_call_id ? `:${m.tool_call_id}` : ''))

test('W-5 I-6: an append whose save lands after timeoutMs rejects saying it may have completed, and its retry writes the rows once', async () => {
  const store = lateStore()
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const s = new Session(c, store)
  await s.append(head)
  store.late = { ms: 150 }
  const err = await s.append(exchange, { timeoutMs: 40 }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  assert.doesNotMatch(err.message, /nothing was committed/)
  assert.match(err.message, /save may still have completed.*load the record/)
  assert.equal(err.mayHaveCommitted, true)
  assert.match(err.appendId, /^append-[0-9a-f]{20}$/)
  await sleep(200)
  // the host retries the same call, as it must
  const r = await s.append(exchange, { timeoutMs: 1000 })
  assert.deepEqual({ rows: r.rows, alreadyStored: r.alreadyStored, revision: r.revision, appendId: r.appendId }, { rows: 0, alreadyStored: true, revision: 2, appendId: err.appendId })
  const rec = await s.load()
  assert.deepEqual(roles(rec), ['system', 'user', 'assistant', 'tool:call_1'])
  assert.equal(rec.revision, 2)
  c.check(rec.state, rec.transcript)
  // the next turn appends normally
  const next = await s.append({ role: 'user', content: 'thanks' })
  assert.equal(next.rows, 1)
  assert.equal((await s.load()).transcript.length, 5)
})

test('W-5 I-6: the retry is still safe when the late save lands after the retry loaded (the retry is refused, reloads, finds its own rows)', async () => {
  const store = lateStore()
  const s = new Session(new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }), store)
  await s.append(head)
  // the first try's save is still running: its commit waits until the retry has loaded
  let release
  store.late = { gate: new Promise((r) => { release = r }) }
  const err = await s.append(exchange, { timeoutMs: 30 }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  let loads = 0
  store.onLoad = () => { if (++loads === 1) release() }
  const r = await s.append(exchange)
  assert.ok(loads >= 2, 'the retry was refused and loaded again')
  assert.equal(r.rows, 0)
  assert.equal(r.alreadyStored, true)
  assert.deepEqual(roles(await s.load()), ['system', 'user', 'assistant', 'tool:call_1'])
})

test('W-5 I-6: a save that timed out and never landed: the retry writes the rows (once)', async () => {
  const store = lateStore()
  const s = new Session(new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }), store)
  await s.append(head)
  store.late = { lose: true }
  const err = await s.append(exchange, { timeouts: { save: 30 } }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  const r = await s.append(exchange)
  assert.equal(r.rows, 2)
  assert.equal(r.appendId, err.appendId, 'the retry reuses the failed append\'s id')
  assert.deepEqual(roles(await s.load()), ['system', 'user', 'assistant', 'tool:call_1'])
  // a deliberate second append of the same rows (not a retry) is written: only a failed save is remembered
  const again = await s.append({ role: 'user', content: 'ok' })
  const twice = await s.append({ role: 'user', content: 'ok' })
  assert.deepEqual([again.rows, twice.rows], [1, 1])
})

test('W-5 W-8 I-6: appendId retries from another Session (another process) and rejects reuse for other rows; the marks ride through sqliteStore', async () => {
  const db = new Database(':memory:')
  const base = sqliteStore(db, 'chat-1')
  let late = false
  const slow = {
    load: () => base.load(),
    save: async (r, info) => {
      const out = await base.save(r, info)
      if (late) { late = false; await sleep(120) }
      return out
    },
  }
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  await new Session(c, slow).append(head)
  late = true
  const err = await new Session(c, slow).append(exchange, { appendId: 'req-7', timeoutMs: 30 }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  assert.equal(err.appendId, 'req-7')
  await sleep(150)
  // a new Session (another worker) retries with the id
  const other = new Session(c, sqliteStore(db, 'chat-1'))
  const r = await other.append(exchange, { appendId: 'req-7' })
  assert.deepEqual([r.rows, r.alreadyStored], [0, true])
  const rec = await other.load()
  assert.equal(rec.transcript.length, 4)
  assert.deepEqual(rec.state.appends.map((m) => [m.id, m.revision, m.rows]).slice(-1), [['req-7', 2, 2]])
  // the same id for other rows is refused, nothing written
  await assert.rejects(other.append({ role: 'user', content: 'other' }, { appendId: 'req-7' }), (e) => e.code === 'invalid_config' && /req-7.*other rows/.test(e.message))
  await assert.rejects(other.append({ role: 'user', content: 'x' }, { appendId: '' }), (e) => e.code === 'invalid_config')
  assert.equal((await other.load()).transcript.length, 4)
  db.close()
})

test('W-5 I-6: a Session.compact whose save times out says the save may still have completed', async () => {
  const store = lateStore()
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const s = new Session(c, store)
  const rows = [{ role: 'system', content: 'Sys.' }]
  for (let i = 0; i < 6; i++) rows.push({ role: 'user', content: `task ${i} ${'word '.repeat(80)}` }, { role: 'assistant', content: `done ${i}` })
  await s.append(rows)
  store.late = { ms: 100 }
  const err = await s.compact({ force: true, timeouts: { save: 20 } }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  assert.equal(err.mayHaveCommitted, true)
  assert.match(err.message, /may still have completed/)
  await sleep(120)
  assert.equal(store.record.revision, 2, 'the late save landed, as the message says it may')
})
