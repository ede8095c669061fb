// Adversarial findings 3, 7 and 9 (engine side) through the built package: a cancel is
// no failed attempt and an over-window forecast never waits for a back-off (C-4, C-5,
// C-8, I-6); artifact handles follow the session id and a fork gets its own tag (issue
// 14, M-2, M-4, J-5); errors name a lone surrogate and a bad sessionId (J-2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, Session, MemoryIndex } from 'context-compactor'

/** The finding's transcript: ~10,000 forecast tokens against an 8,000 window. */
function overWindow() {
  const rows = [{ role: 'user', content: 'Task.' }]
  for (let i = 0; i < 12; i++) rows.push({ role: 'assistant', content: 'a'.repeat(3000) }, { role: 'user', content: 'q' + i })
  return rows
}
const forecast = (d) => d.signals.find((s) => s.name === 'forecast_request_tokens')

test('C-5 / I-6: an abort (also one fired before the call) records no failed attempt; the next check still compacts', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const rows = overWindow()
  assert.ok(forecast(c.check(null, rows)).value > 8000)
  for (const signal of [AbortSignal.abort(new Error('stop')), null]) {
    const ac = new AbortController()
    const p = c.compact(null, rows, { signal: signal ?? ac.signal, summarize: () => new Promise(() => {}) })
    if (!signal) setTimeout(() => ac.abort(new Error('user left')), 10)
    const err = await p.then(() => null, (e) => e)
    assert.equal(err?.code, 'aborted')
    assert.equal(err.state.cadence.lastAttemptBoundary, null, 'no attempt recorded')
    assert.equal(err.state.cadence.lastFailure, null)
    assert.equal(err.state.spend.summarizeCalls, 0)
    const d = c.check(err.state, rows)
    assert.equal(d.compact, true, d.reason)
    assert.notEqual(d.reason, 'waiting_for_cadence')
  }
  // a Session over a store: the aborted compaction saves nothing, the next one runs
  let record = { transcript: rows, state: null, revision: 0 }
  const store = { load: () => structuredClone(record), save: (r, { expectedRevision }) => { if (expectedRevision !== record.revision) return { ok: false, reason: 'stale_revision' }; record = structuredClone(r); return { ok: true } } }
  const s = new Session(c, store)
  await assert.rejects(s.compact({ signal: AbortSignal.abort(), summarize: () => 'S' }), (e) => e.code === 'aborted')
  assert.equal(record.revision, 0)
  const out = await s.compact({ summarize: () => 'Summary of the earlier turns.' })
  assert.equal(out.status, 'compacted', out.reason)
})

test('C-8 over C-5: after a summarizer timeout (a failed attempt) a forecast over the window still compacts', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 8000 })
  const rows = overWindow()
  const err = await c.compact(null, rows, { timeoutMs: 20, summarize: () => new Promise(() => {}) }).then(() => null, (e) => e)
  assert.equal(err?.code, 'timeout')
  assert.equal(err.state.cadence.lastAttemptBoundary, err.state.cadence.boundary, 'a timeout is a failed attempt (C-5)')
  const d = c.check(err.state, rows)
  assert.equal(d.cadence.lastAttemptFailed, true)
  assert.equal(d.compact, true, `${d.reason} ${d.suppressed}`)
  assert.equal(d.reason, 'forecast_over_window')
  // under the window, the same failure still backs off (C-5)
  const wide = new ContextCompactor({ format: 'openai-chat', contextWindow: 11000, outputReserveTokens: 500 })
  const e2 = await wide.compact(null, rows, { force: true, timeoutMs: 20, summarize: () => new Promise(() => {}) }).then(() => null, (e) => e)
  assert.equal(e2?.code, 'timeout')
  const d2 = wide.check(e2.state, rows)
  assert.ok(forecast(d2).value < 11000, `${forecast(d2).value}`)
  assert.equal(d2.compact, false)
  assert.equal(d2.reason, 'waiting_for_cadence')
})

const call = (id, body) => [{ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read', arguments: '{}' } }] }, { role: 'tool', tool_call_id: id, content: body }]
const base = [{ role: 'system', content: 'You are the support bot.' }, { role: 'user', content: 'Show me my invoices.' }, ...call('c1', 'INVOICE LIST '.repeat(200)), { role: 'assistant', content: 'Here they are.' }, { role: 'user', content: 'ok' }, { role: 'assistant', content: 'anything else?' }]
const tail = (who) => [{ role: 'user', content: 'my card' }, ...call('c2', `${who} CARD `.repeat(200)), { role: 'assistant', content: 'done' }, { role: 'user', content: 'thanks' }, { role: 'assistant', content: 'bye' }]

test('issue 14 / M-4: chats that ran under one session id get their own tags once each runs under its own id; old handles still recall', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000, preserveRecentTurns: 2 })
  const shared = new Map()
  const overwritten = []
  const storeArtifact = (item) => { if (shared.has(item.handle) && shared.get(item.handle) !== item.body) overwritten.push(item.handle); shared.set(item.handle, item.body) }
  const memory = new MemoryIndex()
  // the finding: both chats' first compaction ran as "default" with the same rows
  const a0 = await c.compact(null, base, { force: true, storeArtifact })
  const b0 = await c.compact(null, base, { force: true, storeArtifact })
  assert.equal(a0.state.artifactTag, b0.state.artifactTag, 'same inputs, same tag (J-5)')
  const oldHandle = a0.rewrite.evicted[0].handle
  // then each runs under its own session id (the AI SDK session mode now passes it)
  const a1 = await c.compact(a0.state, [...a0.transcript, ...tail('ALICE')], { force: true, storeArtifact, sessionId: 'chat-alice', memory })
  const b1 = await c.compact(b0.state, [...b0.transcript, ...tail('BOB')], { force: true, storeArtifact, sessionId: 'chat-bob', memory })
  assert.deepEqual(overwritten, [], 'no handle names two bodies')
  assert.notEqual(a1.state.artifactTag, b1.state.artifactTag)
  assert.deepEqual(a1.state.earlierArtifactTags, [a0.state.artifactTag])
  const aliceHandle = a1.rewrite.evicted.find((e) => e.handle)?.handle
  assert.match(aliceHandle, new RegExp(`^artifact#${a1.state.artifactTag}-\\d+$`))
  assert.match(shared.get(aliceHandle), /ALICE CARD/)
  // recall resolves Alice's handle for Alice only (no cross-session reads)
  assert.match(await memory.resolveHandle('chat-alice', aliceHandle, (h) => shared.get(h)), /ALICE CARD/)
  await assert.rejects(async () => memory.resolveHandle('chat-bob', aliceHandle, (h) => shared.get(h)), (e) => e.code === 'memory_failed')
  // the body stored under the old tag is still there for recall by its handle
  assert.match(shared.get(oldHandle), /INVOICE LIST/)
})

test('issue 14: a fork (noteTranscriptEdit "fork") never proposes its parent\'s handles, under the same or a new session id', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000, preserveRecentTurns: 2 })
  const r = await c.compact(null, base, { force: true, storeArtifact: () => {}, sessionId: 'main' })
  const fork = c.noteTranscriptEdit(r.state, 'fork')
  assert.notEqual(fork.artifactTag, r.state.artifactTag)
  assert.deepEqual(c.noteTranscriptEdit(r.state, 'fork'), fork, 'deterministic (J-5)')
  for (const forkSession of ['main', 'fork-1']) {
    const seen = new Map()
    const storeArtifact = (item) => { assert.ok(!seen.has(item.handle), `${item.handle} proposed twice`); seen.set(item.handle, item.body) }
    const a = await c.compact(r.state, [...r.transcript, ...tail('MAIN')], { force: true, storeArtifact, sessionId: 'main' })
    const b = await c.compact(fork, [...r.transcript, ...tail('FORK')], { force: true, storeArtifact, sessionId: forkSession })
    assert.notEqual(a.state.artifactTag, b.state.artifactTag)
    assert.ok(seen.size >= 2)
  }
})

test('J-2 / issue 14: a lone surrogate is named with where it is; a bad sessionId is named as sessionId', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 2000 })
  let record = null
  const s = new Session(c, { load: () => record, save: (r) => { record = r; return { ok: true } } })
  await s.append([{ role: 'user', content: 'Task: you must use port 8080.' }, { role: 'assistant', content: 'ok' }])
  await assert.rejects(s.append([{ role: 'user', content: 'bad \uD800 text' }]), (e) => e.code === 'invalid_transcript' && /\[0\]\.content holds a lone surrogate \(\\uD800/.test(e.message) && !/hex escape/.test(e.message))
  const rows = [{ role: 'user', content: 'ok' }, { role: 'assistant', content: 'x' }, { role: 'user', content: 'bad \uDC00 text' }]
  assert.throws(() => c.check(null, rows), (e) => e.code === 'invalid_transcript' && /^message 2: the string at \.content holds a lone surrogate \(\\uDC00/.test(e.message))
  await assert.rejects(s.compact({ force: true, sessionId: 'a\uDC00', memory: new MemoryIndex() }), (e) => e.code === 'invalid_config' && /^sessionId holds a lone surrogate/.test(e.message) && !/signals/.test(e.message))
})
