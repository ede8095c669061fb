// JS tests of Session (W-5, W-8), curator (Y-1), storeArtifact (E-6) and the findings
// ledger (Y-10) through the built package.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, MemoryIndex, Session, recordFinding } from 'context-compactor'

/** Old turns, then an open run with three rounds (OpenAI chat). */
function doc() {
  const msgs = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < 4; i++) {
    msgs.push({ role: 'user', content: `old task ${i}: ${'detail '.repeat(60)}` })
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `o${i}`, type: 'function', function: { name: 'read_log', arguments: `{"n":${i}}` } }] })
    msgs.push({ role: 'tool', tool_call_id: `o${i}`, content: `log ${i} ✓ ${'line\n'.repeat(400)}` })
    msgs.push({ role: 'assistant', content: `read log ${i}` })
  }
  msgs.push({ role: 'user', content: 'fix the parser' })
  for (let k = 1; k <= 3; k++) msgs.push(...round(`c${k}`))
  return msgs
}

function round(id) {
  return [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'edit', arguments: `{"id":"${id}"}` } }] },
    { role: 'tool', tool_call_id: id, content: `edited ${id}` },
  ]
}

/** An in-memory store with compare-and-swap; records go through JSON like a real store. */
function memoryStore(transcript) {
  const s = {
    record: JSON.stringify({ transcript, state: null, revision: 0 }),
    saves: 0,
    load() { return JSON.parse(s.record) },
    async save(record, { expectedRevision }) {
      const current = JSON.parse(s.record).revision
      if (current !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      s.record = JSON.stringify(record)
      s.saves++
      return { ok: true }
    },
  }
  return s
}

const compactor = new ContextCompactor({ format: 'openai-chat', profile: 'meerkat' })
const summarize = (req) => `SUMMARY of ${req.messages[0].content.length} bytes`

test('W-5: two workers compacting one session: the second save is refused, nothing half-written', async () => {
  const store = memoryStore(doc())
  let arrived = 0
  let release
  const gate = new Promise(r => { release = r })
  // both workers load before either saves: each summarize waits until both have arrived
  const slow = async (req) => { if (++arrived === 2) release(); await gate; return summarize(req) }
  const a = new Session(compactor, store)
  const b = new Session(compactor, store)
  const [ra, rb] = await Promise.allSettled([a.compact({ force: true, summarize: slow }), b.compact({ force: true, summarize: slow })])
  const results = [ra, rb]
  const ok = results.filter(r => r.status === 'fulfilled')
  const bad = results.filter(r => r.status === 'rejected')
  assert.equal(ok.length, 1)
  assert.equal(bad.length, 1)
  assert.equal(bad[0].reason.code, 'stale_revision')
  assert.equal(store.saves, 1, 'one save written')
  const rec = JSON.parse(store.record)
  assert.equal(rec.revision, 1)
  assert.equal(rec.state.revision, 1, 'state and transcript saved in the same call')
  assert.deepEqual(rec.transcript, ok[0].value.transcript)
  assert.deepEqual(ok[0].value.saved, { revision: 1, expectedRevision: 0 })
})

test('W-5: a save that throws stale_revision rejects with that code', async () => {
  const store = memoryStore(doc())
  store.save = () => { const e = new Error('revision moved'); e.code = 'stale_revision'; throw e }
  await assert.rejects(new Session(compactor, store).compact({ force: true, summarize }), (e) => e.code === 'stale_revision')
  assert.equal(JSON.parse(store.record).revision, 0)
})

test('W-8: a session saved and reloaded behaves exactly like the live one', async () => {
  const store = memoryStore(doc())
  const session = new Session(compactor, store)
  let liveTranscript = doc()
  let liveState = null
  for (let k = 0; k < 4; k++) {
    const live = await compactor.compact(liveState, liveTranscript, { force: true, summarize })
    const saved = await session.compact({ force: true, summarize })
    assert.equal(saved.status, live.status)
    assert.deepEqual(saved.transcript, live.transcript, `round ${k}: transcript`)
    assert.deepEqual(saved.state, live.state, `round ${k}: state`)
    assert.deepEqual(saved.rewrite, live.rewrite, `round ${k}: rewrite`)
    const rec = await session.load()
    assert.deepEqual(rec.transcript, live.transcript)
    assert.deepEqual(rec.state, live.state)
    liveTranscript = [...live.transcript, ...round(`g${k}`)]
    liveState = live.state
    const r = JSON.parse(store.record)
    r.transcript.push(...round(`g${k}`))
    store.record = JSON.stringify(r)
  }
  const state = JSON.parse(store.record).state
  assert.ok(state.ledger.length >= 3, 'the folded-call ledger persisted across reloads')
})

test('Y-1: the curator gets only the rows before the run; its failure keeps history', async () => {
  const transcript = doc()
  const runStart = transcript.findIndex(m => m.content === 'fix the parser')
  const seen = []
  const out = await compactor.compact(null, transcript, {
    force: true,
    summarize: () => { throw new Error('summarize must not be called in stage 1') },
    curator: async (req) => { seen.push(req); return 'CURATED' },
  })
  assert.equal(out.status, 'compacted')
  assert.equal(seen.length, 1)
  assert.equal(seen[0].kind, 'curate')
  assert.ok(seen[0].rows.length > 0)
  for (const row of seen[0].rows) assert.ok(transcript.slice(1, runStart).some(m => JSON.stringify(m) === JSON.stringify(row)))
  assert.equal(out.rewrite.summary.source.writer, 'curator')
  const err = new Error('context_length_exceeded')
  await assert.rejects(compactor.compact(null, transcript, { force: true, summarize, curator: () => { throw err } }), (e) => e === err)
})

test('E-6: with storeArtifact every evicted body is a handle resolving to the original bytes', async () => {
  const transcript = doc()
  const bodies = new Map()
  const out = await compactor.compact(null, transcript, {
    force: true,
    summarize,
    storeArtifact: async ({ handle, body }) => { bodies.set(handle, body); return handle },
  })
  assert.equal(out.status, 'compacted')
  assert.ok(out.rewrite.evicted.length >= 3)
  for (const e of out.rewrite.evicted) {
    assert.equal(e.clipped, false)
    const original = transcript.find(m => m.tool_call_id === e.callId).content
    assert.equal(bodies.get(e.handle), original)
    assert.ok(out.rewrite.summary.text.includes(e.handle))
  }
})

test('Y-10: findings ride in every request view and through the session store', async () => {
  const state = recordFinding(recordFinding(null, 'rate limit is 600/min'), 'use --locked')
  assert.deepEqual(state.findings, ['rate limit is 600/min', 'use --locked'])
  assert.throws(() => recordFinding(state, '  '), (e) => e.code === 'invalid_state')
  const req = compactor.toRequest(doc(), state)
  assert.equal(req[0].role, 'system')
  assert.match(req[1].content, /rate limit is 600\/min/)
  assert.equal(compactor.toRequest(doc()).length, doc().length, 'no state: no findings message')
  const store = memoryStore(doc())
  const session = new Session(compactor, store)
  await session.recordFinding('the key is in kv/deploy')
  for (let k = 0; k < 3; k++) {
    const out = await session.compact({ force: true, summarize })
    assert.deepEqual(out.state.findings, ['the key is in kv/deploy'])
    assert.match(out.request[1].content, /kv\/deploy/)
  }
  const view = await session.request()
  assert.match(view[1].content, /kv\/deploy/)
})

test('n1_w8_session_compact_without_a_memory_hook_saves_the_folded_user_text_records', async () => {
  // adversarial finding (session 5): the save kept only transcript / state / revision,
  // so the folded user text (whole only in the result's memory.records) was lost to a
  // host that reloads the session
  const msgs = [{ role: 'system', content: 'You are careful.' }]
  for (let i = 0; i < 8; i++) {
    msgs.push({ role: 'user', content: `request ${i}: you must keep port 80${i}0.\n${'pasted config line\n'.repeat(90)}` })
    msgs.push({ role: 'assistant', content: `answer ${i} ${'detail '.repeat(120)}` })
  }
  msgs.push({ role: 'user', content: 'now write the report' })
  const store = memoryStore(msgs)
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000, preserveRecentTurns: 1 })
  const session = new Session(c, store)
  const out = await session.compact({ force: true })
  assert.equal(out.status, 'compacted', out.reason)
  assert.ok(out.memory.records.length > 0, 'the result has the folded user text')
  const saved = JSON.parse(store.record)
  assert.deepEqual(saved.memory, out.memory.records, 'the saved record keeps them')
  // each folded request rebuilds byte for byte from the saved records
  for (const i of out.rewrite.discarded) {
    if (msgs[i].role !== 'user') continue
    const parts = saved.memory.filter((r) => r.sourceRange[0] === i).sort((a, b) => a.byteRange[0] - b.byteRange[0])
    assert.equal(parts.map((r) => r.content).join(''), msgs[i].content, `message ${i}`)
  }
  // an append and a finding carry them on; load() gives them back
  await session.append({ role: 'assistant', content: 'report written' })
  await session.recordFinding('port 8080 is staging')
  assert.deepEqual((await session.load()).memory, out.memory.records)
  // with a memory hook the records go there, and the record keeps what it had
  const index = new MemoryIndex()
  const store2 = memoryStore(msgs)
  await new Session(c, store2).compact({ force: true, memory: index })
  assert.equal(JSON.parse(store2.record).memory, undefined)
  assert.ok(index.size('default') > 0)
})
