// Issue 14 through the built package: CAS over every write (W-5, Session.append),
// onEvent failures and err.state (J-2, J-4), events as they happen (J-4, I-6), timeoutMs
// and signal on every awaited callback (I-6), and the smaller contract gaps.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ContextCompactor, Session, MemoryIndex, detectFormat } from 'context-compactor'
import { logDoc as doc } from './fixtures.mjs'

/** An in-memory CAS store; `null` record = nothing saved yet. */
function memoryStore(transcript) {
  const s = {
    record: transcript === undefined ? null : JSON.stringify({ transcript, state: null, revision: 0 }),
    load() { return s.record === null ? null : JSON.parse(s.record) },
    async save(record, { expectedRevision }) {
      await null
      const current = s.record === null ? 0 : JSON.parse(s.record).revision
      if (current !== expectedRevision) return { ok: false, reason: 'stale_revision' }
      s.record = JSON.stringify(record)
      return { ok: true }
    },
  }
  return s
}

const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4000, preserveRecentTurns: 1 })
const summarize = (req) => `SUMMARY of ${req.messages[0].content.length} bytes`
const texts = (t) => t.map(m => typeof m.content === 'string' ? m.content : '')

test('W-5 (issue 14): append during compact is not overwritten; the compaction is refused stale', async () => {
  const store = memoryStore(doc())
  const a = new Session(compactor, store)
  const b = new Session(compactor, store)
  let release
  const gate = new Promise(r => { release = r })
  const slow = async (req) => { await gate; return summarize(req) }
  const compacting = a.compact({ force: true, summarize: slow })
  await new Promise(r => setTimeout(r, 5))
  const appended = await b.append([{ role: 'assistant', content: 'APPENDED-1' }])
  assert.equal(appended.revision, 1)
  release()
  await assert.rejects(compacting, (e) => e.code === 'stale_revision' && e.state !== undefined)
  const rec = JSON.parse(store.record)
  assert.ok(texts(rec.transcript).includes('APPENDED-1'), 'the appended row is kept')
  assert.equal(rec.revision, 1)
  // retried, the compaction commits over the appended row and keeps it (newest rows)
  const done = await a.compact({ force: true, summarize })
  assert.equal(done.status, 'compacted')
  assert.ok(texts(JSON.parse(store.record).transcript).includes('APPENDED-1'))
})

test('W-5 (issue 14): a skipped compaction advances the revision and cannot overwrite an append', async () => {
  const store = memoryStore(doc(1))
  const a = new Session(compactor, store)
  let release
  const gate = new Promise(r => { release = r })
  // the store's load is slow for the compaction only: the append lands in between
  let slowLoad = true
  const inner = store.load
  const slowStore = { load: async () => { const r = inner(); if (slowLoad) { slowLoad = false; await gate } return r }, save: store.save }
  const skipping = new Session(compactor, slowStore).compact({ summarize })
  await new Promise(r => setTimeout(r, 5))
  await a.append({ role: 'assistant', content: 'APPENDED-2' })
  release()
  await assert.rejects(skipping, (e) => e.code === 'stale_revision')
  assert.ok(texts(JSON.parse(store.record).transcript).includes('APPENDED-2'))
  const r = await a.compact({ summarize })
  assert.equal(r.status, 'skipped')
  assert.deepEqual(r.saved, { revision: 2, expectedRevision: 1 }, 'a skip is a write: the revision moves')
})

test('W-5 (issue 14): recordFinding during a compaction is not overwritten', async () => {
  const store = memoryStore(doc())
  const a = new Session(compactor, store)
  let release
  const gate = new Promise(r => { release = r })
  const compacting = a.compact({ force: true, summarize: async (req) => { await gate; return summarize(req) } })
  await new Promise(r => setTimeout(r, 5))
  const st = await new Session(compactor, store).recordFinding('the key is K-42')
  assert.deepEqual(st.findings, ['the key is K-42'])
  release()
  await assert.rejects(compacting, (e) => e.code === 'stale_revision')
  assert.deepEqual(JSON.parse(store.record).state.findings, ['the key is K-42'])
  assert.equal(JSON.parse(store.record).revision, 1)
})

test('W-5 (issue 14): interleavings of append, finding and compact over two Sessions lose no row', async () => {
  for (let seed = 1; seed <= 12; seed++) {
    const store = memoryStore(doc(3))
    const sessions = [new Session(compactor, store), new Session(compactor, store)]
    let rnd = seed
    const next = () => (rnd = (rnd * 1103515245 + 12345) % 2147483648) / 2147483648
    const appendedRows = []
    const ops = []
    for (let k = 0; k < 10; k++) {
      const s = sessions[Math.floor(next() * 2)]
      const pick = next()
      const delay = Math.floor(next() * 4)
      if (pick < 0.5) {
        const text = `ROW-${seed}-${k}`
        appendedRows.push(text)
        ops.push((async () => { await new Promise(r => setTimeout(r, delay)); return s.append([{ role: 'user', content: text }, { role: 'assistant', content: `ack ${text}` }]) })())
      } else if (pick < 0.7) {
        ops.push((async () => { await new Promise(r => setTimeout(r, delay)); return s.recordFinding(`finding ${seed}-${k}`) })())
      } else {
        // the summary names every appended row it folds, so a folded row stays findable
        ops.push(s.compact({ force: true, summarize: async (req) => { await new Promise(r => setTimeout(r, delay)); return `SUMMARY ${[...new Set(req.messages[0].content.match(/ROW-\d+-\d+/g) ?? [])].join(' ')}` } }).catch(e => { if (e.code !== 'stale_revision') throw e }))
      }
    }
    await Promise.all(ops)
    const rec = JSON.parse(store.record)
    const all = JSON.stringify(rec.transcript)
    // every appended row is in the final transcript: verbatim, or named by a committed summary
    const lost = appendedRows.filter(t => !new RegExp(`${t}\\b`).test(all))
    assert.deepEqual(lost, [], `seed ${seed}`)
    // the final transcript is valid for its format
    compactor.check(rec.state, rec.transcript)
    assert.equal(rec.state.revision, rec.revision)
  }
})

test('W-8 (issue 14): a Session over an empty store loads as empty and its first write creates it', async () => {
  const store = memoryStore(undefined)
  const s = new Session(compactor, store)
  const rec0 = await s.load()
  assert.deepEqual(rec0.transcript, [])
  assert.equal(rec0.revision, 0)
  const r = await s.append([{ role: 'user', content: 'hello' }])
  assert.deepEqual(r, { revision: 1, expectedRevision: 0, rows: 1, appendId: r.appendId })
  assert.match(r.appendId, /^append-[0-9a-f]{20}$/)
  assert.deepEqual(JSON.parse(store.record).transcript, [{ role: 'user', content: 'hello' }])
  await assert.rejects(s.append(null), (e) => e.code === 'invalid_transcript')
  await assert.rejects(s.append({ role: 'tool', tool_call_id: 'nope', content: 'x' }), (e) => e.code === 'unpaired_tool_result')
})

test('J-4 (issue 14): a throwing onEvent never turns a committed compaction into a rejection', async () => {
  const store = memoryStore(doc())
  const r = await new Session(compactor, store).compact({ force: true, summarize, onEvent: () => { throw new Error('listener broke') } })
  assert.equal(r.status, 'compacted')
  assert.equal(JSON.parse(store.record).revision, 1)
  const w = r.events.filter(e => e.type === 'warning' && e.data.code === 'on_event_failed')
  assert.ok(w.length >= 1 && /listener broke/.test(w[0].data.message))
  const r2 = await compactor.compact(null, doc(), { force: true, summarize, onEvent: async () => { throw new Error('async listener broke') } })
  assert.equal(r2.status, 'compacted')
})

test('J-4 (issue 14): compaction_started arrives before the summarize call', async () => {
  const log = []
  await compactor.compact(null, doc(), { force: true, summarize: (req) => { log.push('summarize'); return summarize(req) }, onEvent: (e) => log.push(e.type) })
  assert.ok(log.indexOf('compaction_started') >= 0 && log.indexOf('compaction_started') < log.indexOf('summarize'), log.join(','))
  assert.ok(log.indexOf('compaction_completed') > log.indexOf('summarize'))
})

test('B-3 (issue 14): boundRequest delivers tool_results_bounded_for_request to onEvent', () => {
  const seen = []
  const t = [{ role: 'user', content: 'go' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'dump', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(50000) }]
  const out = compactor.boundRequest(null, t, { maxRequestBytes: 8000, onEvent: (e) => seen.push(e) })
  assert.equal(out.event.type, 'tool_results_bounded_for_request')
  assert.deepEqual(seen, [out.event])
})

test('J-2 (issue 14): every rejection carries err.state; non-string summaries are summary_failed', async () => {
  for (const bad of [5, null, () => 'x', true]) {
    await assert.rejects(compactor.compact(null, doc(), { force: true, summarize: () => bad }), (e) => e.code === 'summary_failed' && e.state && typeof e.state.revision === 'number')
  }
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize: () => { throw 'plain string' } }), (e) => e.state !== undefined)
  await assert.rejects(compactor.compact(null, [{ role: 'tool', tool_call_id: 'x', content: 'y' }], { force: true, summarize }), (e) => e.code === 'unpaired_tool_result' && e.state !== undefined)
})

test('I-6 (issue 14): a summarize that never settles times out; nothing committed', async () => {
  const store = memoryStore(doc())
  const never = () => new Promise(() => {})
  await assert.rejects(new Session(compactor, store).compact({ force: true, summarize: never, timeoutMs: 30 }), (e) => e.code === 'timeout' && e.state !== undefined)
  assert.equal(JSON.parse(store.record).revision, 0, 'the store is untouched')
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize: never, timeouts: { summarize: 20 } }), (e) => e.code === 'timeout' && /summarize/.test(e.message))
  // per hook: a generous default does not stop the shorter summarize bound
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize: never, timeoutMs: 60000, timeouts: { summarize: 20 } }), (e) => e.code === 'timeout')
  // storeArtifact, save and load are bounded too
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize, storeArtifact: never, timeouts: { storeArtifact: 20 } }), (e) => e.code === 'timeout' && /storeArtifact/.test(e.message))
  const hung = { load: store.load, save: never }
  await assert.rejects(new Session(compactor, hung).compact({ force: true, summarize, timeouts: { save: 20 } }), (e) => e.code === 'timeout' && /save/.test(e.message))
  await assert.rejects(new Session(compactor, { load: never, save: store.save }).append({ role: 'user', content: 'x' }, { timeoutMs: 20 }), (e) => e.code === 'timeout')
  // bad shapes are typed errors
  await assert.rejects(compactor.compact(null, doc(), { timeoutMs: -1 }), (e) => e.code === 'invalid_config')
  await assert.rejects(compactor.compact(null, doc(), { timeouts: { sumarize: 5 } }), (e) => e.code === 'invalid_config')
})

test('I-6 (issue 14): an AbortSignal stops the wait; aborted before the call never calls', async () => {
  const store = memoryStore(doc())
  const ac = new AbortController()
  const p = new Session(compactor, store).compact({ force: true, summarize: () => new Promise(() => {}), signal: ac.signal })
  setTimeout(() => ac.abort(new Error('user left')), 10)
  await assert.rejects(p, (e) => e.code === 'aborted' && e.cause?.message === 'user left' && e.state !== undefined)
  assert.equal(JSON.parse(store.record).revision, 0)
  let called = false
  const done = AbortSignal.abort()
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize: (r) => { called = true; return summarize(r) }, signal: done }), (e) => e.code === 'aborted')
  assert.equal(called, false)
  // memory hooks: an embedder that hangs is bounded as `memory`
  await assert.rejects(compactor.compact(null, doc(), { force: true, summarize, sessionId: 's', store: { put() {} }, embed: () => new Promise(() => {}), embedDimension: 4, timeouts: { memory: 20 } }), (e) => e.code === 'timeout')
})

test('issue 14 item 8: live.append(null) throws; detectFormat({contents: 5}) is not gemini', () => {
  const live = compactor.open([{ role: 'user', content: 'hi' }])
  assert.throws(() => live.append(null), (e) => e.code === 'invalid_transcript')
  assert.throws(() => live.append(undefined), (e) => e.code === 'invalid_transcript')
  assert.equal(live.length, 1)
  assert.throws(() => detectFormat({ contents: 5 }), (e) => e.code === 'unknown_format')
})

test('issue 14 item 8: an empty call id is refused the same way by check and compact', async () => {
  const pad = 'detail '.repeat(300)
  const chat = (i) => [{ role: 'user', content: `q${i} ` + pad }, { role: 'assistant', content: 'a' + pad }]
  const gem = (i) => [{ role: 'user', parts: [{ text: `q${i} ` + pad }] }, { role: 'model', parts: [{ text: 'a' + pad }] }]
  const more = (f) => Array.from({ length: 6 }, (_, i) => f(i)).flat()
  const docs = {
    'openai-responses': [{ role: 'user', content: 'go ' + pad }, { type: 'function_call', call_id: '', name: 'f', arguments: '{}' }, { type: 'function_call_output', call_id: '', output: 'ok ' + pad }, { role: 'assistant', content: 'done' }, ...more(chat), { role: 'user', content: 'next' }],
    'ai-sdk': [{ role: 'user', content: 'go ' + pad }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: '', toolName: 'f', input: {} }] }, { role: 'tool', content: [{ type: 'tool-result', toolCallId: '', toolName: 'f', output: { type: 'text', value: 'ok' + pad } }] }, ...more(chat), { role: 'user', content: 'next' }],
    gemini: { contents: [{ role: 'user', parts: [{ text: 'go' + pad }] }, { role: 'model', parts: [{ functionCall: { id: '', name: 'f', args: {} } }] }, { role: 'user', parts: [{ functionResponse: { id: '', name: 'f', response: { output: 'ok' + pad } } }] }, ...more(gem), { role: 'user', parts: [{ text: 'next' }] }] },
  }
  for (const [format, d] of Object.entries(docs)) {
    const c = new ContextCompactor({ format, contextWindow: 4000, preserveRecentTurns: 1 })
    assert.throws(() => c.check(null, d), (e) => e.code === 'invalid_transcript' && /empty call id/.test(e.message), format)
    await assert.rejects(c.compact(null, d, { force: true, summarize, sessionId: 's', memory: new MemoryIndex() }), (e) => e.code === 'invalid_transcript' && e.state !== undefined, format)
  }
})

test('T-1 (issue 14 item 7): a lone surrogate is refused the same way as JSON text and as an object', async () => {
  const rows = [{ role: 'user', content: 'bad \uD800 text' }, { role: 'assistant', content: 'ok' }]
  const asText = JSON.stringify(rows).replace('\\ud800', '\uD800')
  for (const input of [rows, asText]) {
    assert.throws(() => compactor.check(null, input), (e) => e.code === 'invalid_transcript', typeof input)
    await assert.rejects(compactor.compact(null, input, { force: true, summarize }), (e) => e.code === 'invalid_transcript' && e.state !== undefined)
  }
})

test('T-1 (issue 14 item 7, issue 15): JSON text is scanned for lone surrogates only when its UTF-8 holds U+FFFD: a real U+FFFD is kept, a lone surrogate beside or without one is refused', async () => {
  const rows = [{ role: 'user', content: 'a real \uFFFD replacement character' }, { role: 'assistant', content: 'ok' }]
  const text = JSON.stringify(rows)
  assert.ok(text.includes('\uFFFD'))
  assert.equal(compactor.check(null, text).compact, compactor.check(null, rows).compact)
  assert.deepEqual(compactor.toRequest(text), rows)
  for (const bad of [text.replace('real', 'real \uD800'), text.replace('real \uFFFD', 'lone \uDBFF'), JSON.stringify(rows).replace('\uFFFD', '\uDC00')]) {
    assert.throws(() => compactor.check(null, bad), (e) => e.code === 'invalid_transcript' && /lone surrogate/.test(e.message), JSON.stringify(bad))
    assert.throws(() => compactor.toRequest(bad), (e) => e.code === 'invalid_transcript' && /lone surrogate/.test(e.message))
  }
})

test('T-1 (issue 14 item 7): the CLI keeps integers past 2^53 and null / false provenance keys byte for byte', async () => {
  const { execFile } = await import('node:child_process')
  const { promisify } = await import('node:util')
  const { mkdtemp, writeFile, readFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = await mkdtemp(join(tmpdir(), 'cc-i14-'))
  const rows = doc(6).map((m, i) => JSON.stringify(m))
  // the retained tail: a big integer, a false pin and a null level, in the host's key order
  rows.splice(rows.length - 1, 0, '{"trace_id":1234567890123456789,"role":"assistant","content":"noted","pinned":false,"summary_level":null}')
  const input = join(dir, 'in.json')
  const out = join(dir, 'out.json')
  await writeFile(input, `[${rows.join(',')}]`)
  const bin = new URL('../../bin/context-compactor.mjs', import.meta.url).pathname
  await promisify(execFile)(process.execPath, [bin, 'compact', input, '--format', 'openai-chat', '--context-window', '4000', '--out', out])
  const text = await readFile(out, 'utf8')
  assert.match(text, /"trace_id": 1234567890123456789,/)
  assert.doesNotMatch(text, /1234567890123456800/)
  assert.match(text, /"pinned": false,\n\s+"summary_level": null/)
  assert.deepEqual(Object.keys(JSON.parse(text).at(-2)), ['trace_id', 'role', 'content', 'pinned', 'summary_level'])
})

test('E-6 (issue 14): storeArtifact sees the sessionId, and handles carry a per-session tag', async () => {
  const shared = new Map()
  const storeArtifact = (item) => { const key = `${item.sessionId}/${item.handle}`; assert.ok(!shared.has(key), `no collision on ${key}`); shared.set(key, item.body) }
  await compactor.compact(null, doc(), { force: true, summarize, storeArtifact, sessionId: 'alpha' })
  await compactor.compact(null, doc(), { force: true, summarize, storeArtifact, sessionId: 'beta' })
  const handles = [...shared.keys()].map((k) => k.split('/')[1])
  assert.ok(handles.every((h) => /^artifact#[a-z]{8}-\d+$/.test(h)), handles.join(' '))
  assert.equal(new Set(handles).size, handles.length, 'no handle proposed twice across the two sessions')
})
