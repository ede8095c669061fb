// Issue 14, the items left after the first hardening pass, through the built package:
// options named in invalid_config (NaN / Infinity), countTokens bounded (I-6), every
// Session rejection carrying err.state, the live transcript's trust boundary and
// pairing, the CLI's --json without rounding, artifact handles that cannot collide in a
// shared store.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, Session } from 'context-compactor'
import { logDoc as doc } from './fixtures.mjs'

const summarize = (req) => `Summary of ${req.kind}.`

test('issue 14 item 7: contextWindow NaN / Infinity / negative / string is invalid_config naming the option', () => {
  for (const v of [NaN, Infinity, -Infinity, -5, '5000', 1.5]) {
    assert.throws(() => new ContextCompactor({ contextWindow: v }), (e) => e.code === 'invalid_config' && /contextWindow/.test(e.message), String(v))
  }
  assert.throws(() => new ContextCompactor({ thresholdPct: NaN }), (e) => e.code === 'invalid_config' && /thresholdPct/.test(e.message))
  // null / undefined still mean "the default"
  assert.equal(new ContextCompactor({ contextWindow: undefined }).config.contextWindow, 200000)
})

test('I-6 (issue 14 item 5): countTokens is bounded by timeoutMs / timeouts.countTokens / signal', async () => {
  const c = new ContextCompactor({ contextWindow: 4000 })
  const never = () => new Promise(() => {})
  await assert.rejects(c.checkAsync(null, doc(), { countTokens: never, timeoutMs: 30 }), (e) => e.code === 'timeout' && /countTokens/.test(e.message))
  await assert.rejects(c.compact(null, doc(), { force: true, summarize, countTokens: never, timeouts: { countTokens: 30 } }), (e) => e.code === 'timeout' && e.state !== undefined)
  const ac = new AbortController()
  const p = c.checkAsync(null, doc(), { countTokens: never, signal: ac.signal })
  setTimeout(() => ac.abort(new Error('user left')), 10)
  await assert.rejects(p, (e) => e.code === 'aborted' && e.cause?.message === 'user left')
  // an already fired signal: the synchronous check does not call the counter at all
  let called = 0
  const fired = AbortSignal.abort()
  assert.throws(() => c.check(null, doc(), { countTokens: (t) => { called++; return t.map(() => 1) }, signal: fired }), (e) => e.code === 'aborted')
  assert.equal(called, 0)
  const live = c.open(doc())
  await assert.rejects(live.compact(null, { force: true, summarize, countTokens: never, timeoutMs: 30 }), (e) => e.code === 'timeout')
  assert.equal(live.length, doc().length, 'the held transcript is kept')
  await assert.rejects(c.checkAsync(null, doc(), { countTokens: never, timeouts: { tokens: 5 } }), (e) => e.code === 'invalid_config' && /countTokens/.test(e.message))
})

test('J-2 (issue 14 item 7): a Session whose save or load throws a primitive rejects with err.state', async () => {
  const c = new ContextCompactor({ contextWindow: 4000 })
  const record = { transcript: doc(), state: null, revision: 0 }
  for (const thrown of ['disk full', 42, null, Object.freeze(new Error('frozen'))]) {
    const s = new Session(c, { load: () => structuredClone(record), save: () => { throw thrown } })
    await assert.rejects(s.compact({ force: true, summarize }), (e) => e instanceof Error && e.state !== undefined && typeof e.code === 'string', `compact, save throws ${String(thrown)}`)
    await assert.rejects(s.append({ role: 'assistant', content: 'x' }), (e) => e.state !== undefined, `append, save throws ${String(thrown)}`)
    await assert.rejects(s.recordFinding('a fact'), (e) => e.state !== undefined, `recordFinding, save throws ${String(thrown)}`)
    const l = new Session(c, { load: () => { throw thrown }, save: () => {} })
    await assert.rejects(l.compact({ force: true, summarize }), (e) => e.state === null, `compact, load throws ${String(thrown)}`)
    await assert.rejects(l.append({ role: 'assistant', content: 'x' }), (e) => e.state === null)
  }
  // an engine code the host threw is kept
  const s = new Session(c, { load: () => structuredClone(record), save: () => { throw Object.freeze(Object.assign(new Error('gone'), { code: 'save_failed' })) } })
  await assert.rejects(s.compact({ force: true, summarize }), (e) => e.code === 'save_failed' && e.cause?.message === 'gone' && e.state !== undefined)
})

test('Y-10 (issue 14 item 6): LiveTranscript.check applies the trust boundary: a self-pinned row is not in the floor', () => {
  const c = new ContextCompactor({ contextWindow: 8000, format: 'openai-chat' })
  const rows = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'x'.repeat(20000), pinned: true }, { role: 'user', content: 'next' }]
  const live = c.open(rows)
  const whole = c.check(null, rows)
  const d = live.check(null)
  assert.equal(d.floor.protectedTokens, whole.floor.protectedTokens)
  assert.ok(d.floor.protectedTokens < 1000, `unconfirmed pin not counted: ${d.floor.protectedTokens}`)
})

test('F-5 (issue 14 item 7): live.append of an orphan tool result is refused, nothing appended', () => {
  const c = new ContextCompactor({ contextWindow: 8000, format: 'openai-chat' })
  const live = c.open([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }])
  assert.throws(() => live.append({ role: 'tool', tool_call_id: 'nobody', content: 'stray' }), (e) => e.code === 'unpaired_tool_result' && /message 2/.test(e.message))
  assert.equal(live.length, 2)
  live.check(null)
})

test('T-1 (issue 14 item 3): the CLI --json keeps integers past 2^53', async () => {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const { mkdtemp, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = await mkdtemp(join(tmpdir(), 'cc-i14-json-'))
  const rows = doc(6).map((m) => JSON.stringify(m))
  rows.splice(rows.length - 1, 0, '{"trace_id":1234567890123456789,"role":"assistant","content":"noted","pinned":false}')
  const input = join(dir, 'in.json')
  await writeFile(input, `[${rows.join(',')}]`)
  const bin = new URL('../../bin/context-compactor.mjs', import.meta.url).pathname
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'compact', input, '--format', 'openai-chat', '--context-window', '4000', '--json'], { maxBuffer: 64 << 20 })
  assert.match(stdout, /"trace_id": 1234567890123456789,/)
  assert.doesNotMatch(stdout, /1234567890123456800/)
  const parsed = JSON.parse(stdout)
  assert.equal(parsed.status, 'compacted')
  assert.ok(Array.isArray(parsed.transcript) && parsed.rewrite, 'the whole result object')
})

test('E-6 (issue 14 item 2): two sessions over one artifact store keyed by handle alone never collide, and recall resolves the right body', async () => {
  const { MemoryIndex } = await import('context-compactor')
  const c = new ContextCompactor({ contextWindow: 4000, format: 'openai-chat' })
  const store = new Map()
  const storeArtifact = (item) => {
    assert.ok(!store.has(item.handle), `handle ${item.handle} proposed twice`)
    store.set(item.handle, { session: item.sessionId, body: item.body })
  }
  const sessionDoc = (who) => doc(6).map((m) => (m.role === 'tool' ? { ...m, content: `${who} ${m.content}` } : m))
  const memory = new MemoryIndex()
  const states = {}
  // same default-looking setup in both: the same session-id scheme, the same system prompt
  for (const who of ['alice', 'bob', 'alice', 'bob']) {
    const before = states[who] ?? null
    const out = await c.compact(before, sessionDoc(who), { force: true, summarize, storeArtifact, sessionId: who, memory })
    states[who] = out.state
    assert.match(out.state.artifactTag, /^[a-z]{8}$/)
  }
  assert.notEqual(states.alice.artifactTag, states.bob.artifactTag)
  assert.ok(store.size >= 4)
  for (const who of ['alice', 'bob']) {
    const hit = memory.recall(who, 'log line', { limit: 20 }).hits.find((h) => h.handle)
    assert.ok(hit, `${who} has a hit naming a handle`)
    const body = await memory.resolveHandle(who, hit.handle, (h) => store.get(h)?.body)
    assert.ok(body.startsWith(`${who} log`), `${who}'s handle resolves to ${who}'s body`)
    assert.equal(store.get(hit.handle).session, who)
  }
  // a handle of the old form still recalls (states written before the tag)
  const legacy = { nextArtifact: 3 }
  const rows = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'k1', type: 'function', function: { name: 'read_log', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'k1', content: 'old body', artifact_ref: 'artifact#2' }, { role: 'assistant', content: 'ok' }, ...doc(4)]
  const out = await c.compact(legacy, rows, { force: true, summarize, storeArtifact, sessionId: 'carol', memory, memoryRecords: 'result' })
  assert.ok(out.memory.records.some((r) => r.handle === 'artifact#2'), 'the legacy handle is kept on its record')
  assert.equal(await memory.resolveHandle('carol', 'artifact#2', (h) => `loaded ${h}`), 'loaded artifact#2')
})
