// Memory (M-1..M-4) assertions as a runtime-neutral module: no node: imports, so a
// browser harness can import it and run the same cases against the web build.
//
//   import { memoryCases } from './memory-cases.mjs'
//   for (const { name, run } of memoryCases(api)) await run()
//
// `api` is the package namespace after init: { ContextCompactor, MemoryIndex,
// recallToolDefinition }. Each `run` is async and throws on a failed assertion.

/** Deterministic OpenAI-chat transcript: a prior summary, injected context, a large
 *  tool output and enough old turns to fold. */
export function memoryTranscript() {
  let body = ''
  for (let i = 0; i < 80; i++) {
    body += `flux-${String(i).padStart(2, '0')}.log: capacitor voltage 1.21 gigawatts, reading ${i}\n`
  }
  body += 'needle: the calibration constant is 7734\n'
  const msgs = [
    { role: 'system', content: 'You are a careful lab assistant.' },
    { role: 'assistant', content: 'Earlier we looked at the walrus dataset.', summary_level: 1, transcript_role: 'compaction_summary' },
    { role: 'user', content: 'Please inspect the flux capacitor logs in /srv/lab/flux and report anomalies.' },
    { role: 'user', content: 'RETRIEVED DOCUMENT: secretword zebra handbook', transcript_role: 'injected_context' },
    { role: 'assistant', content: 'I will read the logs first.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_logs', arguments: '{"dir":"/srv/lab/flux"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: body, artifact_ref: 'artifact#3' },
    { role: 'assistant', content: 'The logs show the calibration constant drifted on Tuesday.' },
  ]
  for (let i = 0; i < 8; i++) {
    msgs.push({ role: 'user', content: `Follow-up question number ${i} about the oscilloscope traces.` })
    msgs.push({ role: 'assistant', content: `Answer ${i}: the oscilloscope trace looks nominal.` })
  }
  msgs.push({ role: 'user', content: 'Now write the final report.' })
  return msgs
}

/** Compactor options that fold the old rows and roll the prior summary up (so both
 *  the injected context and the old summary leave the transcript). */
export const memoryCompactorOptions = { format: 'openai-chat', contextWindow: 4000, preserveRecentTurns: 2, maxSummariesBeforeRollup: 1 }

/** A memory record of `session` (all required fields). */
export function record(session, n, content, extra = {}) {
  return {
    id: `${session}-${n}`, session, messageId: `msg-${n}`, role: 'assistant',
    sourceRange: [n, n], byteRange: [0, content.length], kind: 'narrative', content, ...extra,
  }
}

function fail(msg) { throw new Error(`assertion failed: ${msg}`) }
function ok(cond, msg) { if (!cond) fail(msg) }
function eq(actual, expected, msg) {
  const a = JSON.stringify(actual); const e = JSON.stringify(expected)
  if (a !== e) fail(`${msg}: expected ${e}, got ${a}`)
}
async function rejects(promiseOrFn, check, msg) {
  let err
  try { await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn) } catch (e) { err = e }
  ok(err !== undefined, `${msg}: expected a rejection`)
  check(err)
  return err
}

const allText = (records) => records.map((r) => r.content).join('\n')

/** The cases: [{ name, run }]. */
export function memoryCases(api) {
  const { ContextCompactor, MemoryIndex, recallToolDefinition } = api
  const compactor = () => new ContextCompactor(memoryCompactorOptions)

  return [
    {
      name: 'M-1 compaction projects discarded narrative and tool output; injected context and summaries are never indexed',
      async run() {
        const memory = new MemoryIndex()
        const out = await compactor().compact(null, memoryTranscript(), { force: true, sessionId: 'sess-a', memory })
        eq(out.status, 'compacted', 'status')
        ok(out.rewrite.discarded.includes(1) && out.rewrite.discarded.includes(3), 'summary (1) and injected row (3) were discarded')
        eq(out.memory.session, 'sess-a', 'batch session')
        const recs = out.memory.records
        ok(recs.length > 0, 'records projected')
        ok(recs.every((r) => r.session === 'sess-a'), 'every record carries the session')
        ok(recs.every((r) => out.rewrite.discarded.includes(r.sourceRange[0])), 'records come from discarded rows')
        const text = allText(recs)
        ok(text.includes('Please inspect the flux capacitor logs'), 'user narrative indexed')
        ok(text.includes('calibration constant drifted on Tuesday'), 'assistant narrative indexed')
        ok(!text.includes('secretword'), 'injected context not indexed')
        ok(!text.includes('walrus'), 'compaction summary not indexed')
        const tool = recs.filter((r) => r.kind === 'tool_output')
        ok(tool.length >= 2, `the 5 KB tool output is chunked (got ${tool.length})`)
        ok(tool.every((r) => r.toolName === 'read_logs' && r.callId === 'call_1' && r.handle === 'artifact#3'), 'tool output carries tool name, call id and handle')
        ok(tool.some((r) => r.content.includes('calibration constant is 7734')), 'the evicted body itself is indexed')
        ok(!text.includes('[evicted'), 'the placeholder is not indexed')
        // Records were added on commit: the same count, findable by a paraphrase.
        eq(memory.size('sess-a'), recs.length, 'records added to the index')
        const hit = memory.recall('sess-a', 'which number did calibration have', {}).hits[0]
        ok(hit && hit.content.includes('7734'), 'recall finds the discarded fact')
        eq(hit.handle, 'artifact#3', 'the hit names its artifact')
        eq(await memory.resolveHandle('sess-a', hit.handle, (h) => `stored ${h}`), 'stored artifact#3', 'handle resolves through the loader (sync loader)')
        // No memory hooks: the batch is still reported, nothing is asked.
        const plain = await compactor().compact(null, memoryTranscript(), { force: true })
        eq(plain.memory.session, 'default', 'default session id')
        eq(plain.memory.records.length, recs.length, 'same projection without hooks')
      },
    },
    {
      name: 'M-1 W-3 a throwing or rejecting store fails the compaction with its own error and commits nothing',
      async run() {
        const boom = new Error('disk full')
        let seen = null
        const store = { put(records, vectors) { seen = { records, vectors }; throw boom } }
        const err = await rejects(compactor().compact(null, memoryTranscript(), { force: true, store }), () => {}, 'sync throw')
        ok(err === boom, 'the store error reaches the caller unchanged')
        ok(seen && seen.records.length > 0 && seen.vectors === null, 'put saw the batch (no embedder: vectors null)')
        eq(err.state.revision, 0, 'revision not advanced')
        // Async rejection, and a throwing embedder, behave the same.
        const later = new Error('quota exceeded')
        const err2 = await rejects(compactor().compact(null, memoryTranscript(), { force: true, store: { put: async () => { throw later } } }), () => {}, 'async reject')
        ok(err2 === later, 'async rejection reaches the caller')
        let puts = 0
        const embedErr = new Error('embedder down')
        const err3 = await rejects(compactor().compact(null, memoryTranscript(), {
          force: true, embedDimension: 4, embed: async () => { throw embedErr }, store: { put() { puts++ } },
        }), () => {}, 'embedder throws')
        ok(err3 === embedErr && puts === 0, 'a failing embedder fails the compaction before put')
        // A malformed embedder answer is a typed memory_failed error.
        await rejects(compactor().compact(null, memoryTranscript(), {
          force: true, embedDimension: 4, embed: (texts) => texts.map(() => [1, 2, 3]), store: { put() { puts++ } },
        }), (e) => eq(e.code, 'memory_failed', 'wrong dimension code'), 'wrong dimension')
        eq(puts, 0, 'nothing put after a bad embedding')
        // A failed compaction leaves an embedded index untouched too.
        const memory = new MemoryIndex()
        await rejects(compactor().compact(null, memoryTranscript(), { force: true, memory, embedDimension: 4, embed: () => { throw boom } }), () => {}, 'memory + failing embed')
        eq(memory.size('default'), 0, 'nothing added')
      },
    },
    {
      name: 'M-3 host embedder and store receive one vector of the declared dimension per record',
      async run() {
        const puts = []
        const embed = async (texts) => texts.map((t) => [t.length, 1, (t.match(/7734/g) || []).length, 0.5])
        const out = await compactor().compact(null, memoryTranscript(), {
          force: true, sessionId: 'host', embedDimension: 4, embed, store: { put: (records, vectors) => { puts.push({ records, vectors }) } },
        })
        eq(out.status, 'compacted', 'status')
        eq(puts.length, 1, 'one put per compaction')
        eq(puts[0].records.length, out.memory.records.length, 'the whole batch')
        ok(puts[0].vectors.every((v) => v.length === 4), 'vectors of embedDimension')
        eq(puts[0].vectors[0][0], puts[0].records[0].content.length, 'vector i embeds record i')
        // embed into a host-vector MemoryIndex.
        const memory = new MemoryIndex({ dimension: 4 })
        await compactor().compact(null, memoryTranscript(), { force: true, sessionId: 'hv', memory, embedDimension: 4, embed })
        eq(memory.embedder, 'host', 'host-vector index')
        eq(memory.size('hv'), out.memory.records.length, 'vectors stored')
        const r = memory.recall('hv', 'anything', { vector: [100, 1, 1, 0.5], limit: 2 })
        eq(r.hits.length, 2, 'vector recall honours limit')
        await rejects(async () => compactor().compact(null, memoryTranscript(), { force: true, embed, store: { put() {} } }),
          (e) => eq(e.code, 'invalid_config', 'embed without embedDimension'), 'missing embedDimension')
      },
    },
    {
      name: 'M-3 snapshot round trip: restore gives the same records, recall and bytes',
      async run() {
        const idx = new MemoryIndex()
        idx.add([record('a', 1, 'the deploy key lives in vault path secret/ci'), record('a', 2, 'lunch order was falafel'), record('b', 1, 'another session entirely')])
        const bytes = idx.snapshot()
        ok(bytes instanceof Uint8Array && bytes.length > 0, 'snapshot is a Uint8Array')
        const back = MemoryIndex.restore(bytes)
        eq(back.sessions(), ['a', 'b'], 'sessions restored')
        eq(back.enumerate('a', {}).records, idx.enumerate('a', {}).records, 'records restored')
        eq(back.recall('a', 'where is the deploy key kept', {}), idx.recall('a', 'where is the deploy key kept', {}), 'same recall')
        eq(Array.from(back.snapshot()), Array.from(bytes), 'same bytes')
        await rejects(async () => MemoryIndex.restore(new TextEncoder().encode('{"format":"nope"}')),
          (e) => eq(e.code, 'memory_failed', 'bad snapshot code'), 'bad snapshot')
      },
    },
    {
      name: 'M-4 recall and handles never cross sessions',
      async run() {
        const idx = new MemoryIndex()
        idx.add([
          record('alice', 1, 'alice api token rotated on monday', { kind: 'tool_output', toolName: 'shell', handle: 'artifact#1' }),
          record('bob', 1, 'bob api token rotated on friday', { kind: 'tool_output', toolName: 'shell', handle: 'artifact#2' }),
        ])
        for (const q of ['bob api token rotated on friday', 'bob-1', 'artifact#2 friday']) {
          const r = idx.recall('alice', q, { limit: 20 })
          ok(r.hits.every((h) => h.id.startsWith('alice-')), `query ${JSON.stringify(q)} stays in alice's scope`)
        }
        eq(idx.recall('carol', 'api token', {}).hits, [], 'unknown session has nothing')
        const loads = []
        const loadArtifact = async (h) => { loads.push(h); return `full body of ${h}` }
        eq(await idx.resolveHandle('alice', 'artifact#1', loadArtifact), 'full body of artifact#1', 'own handle resolves')
        await rejects(async () => idx.resolveHandle('alice', 'artifact#2', loadArtifact), (e) => eq(e.code, 'memory_failed', 'foreign handle code'), 'foreign handle')
        eq(loads, ['artifact#1'], 'the loader never saw the foreign handle')
      },
    },
    {
      name: 'M-4 lifecycle: enumerate pages deterministically, dropScope removes a whole scope atomically',
      async run() {
        const idx = new MemoryIndex()
        const recs = []
        for (let i = 0; i < 250; i++) recs.push(record('s', i, `record number ${i} about topic ${i % 7}`))
        recs.reverse() // insertion order must not matter
        idx.add(recs)
        idx.add([record('other', 1, 'kept elsewhere')])
        const pages = []
        let token = null
        do {
          const page = idx.enumerate('s', { pageToken: token, pageSize: 100 })
          pages.push(page)
          token = page.next
        } while (token)
        eq(pages.map((p) => p.records.length), [100, 100, 50], 'page sizes')
        const ids = pages.flatMap((p) => p.records.map((r) => r.id))
        eq(ids, Array.from({ length: 250 }, (_, i) => `s-${i}`), 'source order, no repeats, no gaps')
        eq(idx.enumerate('s', { pageToken: pages[0].next, pageSize: 100 }), pages[1], 'same token, same page')
        await rejects(async () => idx.enumerate('s', { pageToken: 'garbage' }), (e) => eq(e.code, 'memory_failed', 'bad token code'), 'bad token')
        eq(idx.dropScope('s'), 250, 'dropScope returns the count')
        eq(idx.enumerate('s', {}), { records: [], next: null }, 'scope empty')
        eq(idx.recall('s', 'record number topic', {}).hits, [], 'nothing recalled after drop')
        eq(idx.size('other'), 1, 'other scope untouched')
      },
    },
    {
      name: 'M-2 recall limit defaults to 5 and is capped at 20; tool definition per format',
      async run() {
        const idx = new MemoryIndex()
        idx.add(Array.from({ length: 30 }, (_, i) => record('s', i, `build failure ${i} in module compiler`)))
        const d = idx.recall('s', 'compiler build failure', {})
        eq([d.limit, d.hits.length], [5, 5], 'default limit')
        const m = idx.recall('s', 'compiler build failure', { limit: 50 })
        eq([m.limit, m.hits.length], [20, 20], 'max limit')
        eq(idx.recall('s', 'compiler build failure', { limit: 3 }).hits.length, 3, 'explicit limit')
        const h = d.hits[0]
        ok(typeof h.content === 'string' && h.score > 0 && h.score <= 1 && typeof h.messageId === 'string' && h.sourceRange.length === 2, 'hit shape')
        ok(d.hits.every((x, i) => i === 0 || d.hits[i - 1].score >= x.score), 'best first')
        eq(recallToolDefinition('anthropic').name, 'recall', 'anthropic')
        eq(recallToolDefinition('anthropic').input_schema.properties.limit.maximum, 20, 'schema max')
        eq(recallToolDefinition('openai-chat').function.name, 'recall', 'openai-chat')
        eq(recallToolDefinition('openai-responses').type, 'function', 'openai-responses')
        eq(recallToolDefinition('gemini').parameters.type, 'OBJECT', 'gemini')
        eq(recallToolDefinition('ai-sdk').inputSchema.required, ['query'], 'ai-sdk')
        await rejects(async () => recallToolDefinition('smoke-signals'), (e) => eq(e.code, 'unknown_format', 'unknown format'), 'unknown format')
      },
    },
  ]
}
