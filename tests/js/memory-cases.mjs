// Memory (M-1..M-4) assertions as a runtime-neutral module: no node: imports, so a
// browser harness can import it and run the same cases against the web build.
//
//   import { memoryCases } from './memory-cases.mjs'
//   for (const { name, run } of memoryCases(api)) await run()
//
// `api` is the package namespace after init: { ContextCompactor, MemoryIndex,
// recallToolDefinition, recallFromStore, enumerateStore, dropStoreScope }. Each `run`
// is async and throws on a failed assertion.

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

/** Dimension of the test embedder. */
export const HASH_DIM = 64

/** A tiny deterministic host embedder: lower-case alphanumeric words hashed into
 *  HASH_DIM buckets, plus a small constant component so no vector is ever zero. */
export function hashEmbed(texts) {
  return texts.map((t) => {
    const v = new Array(HASH_DIM).fill(0)
    v[0] = 0.01
    for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      let h = 2166136261
      for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0
      v[1 + (h % (HASH_DIM - 1))] += 1
    }
    return v
  })
}

/** An in-memory host store implementing put / search / enumerate / drop, sync or
 *  async (`{ async: true }`: every method answers a promise). `calls` logs the
 *  requests. search: cosine over the stored vectors when the request has `vector`,
 *  else the share of query words a record contains. enumerate: source order, the
 *  page token is the offset as a string. drop: removes the scope, answers the count. */
export function memoryStore({ async = false } = {}) {
  const scopes = new Map()
  const calls = []
  const answer = (v) => (async ? Promise.resolve(v) : v)
  const scope = (s) => { if (!scopes.has(s)) scopes.set(s, new Map()); return scopes.get(s) }
  const words = (t) => new Set(t.toLowerCase().match(/[a-z0-9]+/g) ?? [])
  const norm = (v) => Math.sqrt(v.reduce((a, x) => a + x * x, 0))
  const cosine = (a, b) => a.reduce((acc, x, i) => acc + x * b[i], 0) / (norm(a) * norm(b))
  const order = (a, b) => a.sourceRange[0] - b.sourceRange[0] || a.byteRange[0] - b.byteRange[0] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  return {
    calls,
    size: (s) => scopes.get(s)?.size ?? 0,
    put(records, vectors) {
      calls.push({ op: 'put', count: records.length, vectors: vectors === null ? null : vectors.length })
      records.forEach((record, i) => scope(record.session).set(record.id, { record, vector: vectors ? vectors[i] : null }))
      return answer(undefined)
    },
    search(req) {
      calls.push({ op: 'search', ...req })
      const q = words(req.query)
      const hits = [...(scopes.get(req.session)?.values() ?? [])]
        .map(({ record, vector }) => {
          if (req.vector) return { record, score: vector ? cosine(req.vector, vector) : 0 }
          const w = words(record.content)
          return { record, score: q.size ? [...q].filter((x) => w.has(x)).length / q.size : 0 }
        })
        .filter((h) => h.score > 0)
        .sort((a, b) => b.score - a.score || order(a.record, b.record))
        .slice(0, req.limit)
      return answer(hits)
    },
    enumerate(req) {
      calls.push({ op: 'enumerate', ...req })
      const all = [...(scopes.get(req.session)?.values() ?? [])].map((e) => e.record).sort(order)
      const start = req.pageToken === null ? 0 : Number(req.pageToken)
      const end = start + req.pageSize
      return answer({ records: all.slice(start, end), next: end < all.length ? String(end) : null })
    },
    drop(req) {
      calls.push({ op: 'drop', ...req })
      const n = scopes.get(req.session)?.size ?? 0
      scopes.delete(req.session)
      return answer(n)
    },
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

const failedWith = (pattern) => (e) => {
  eq(e.code, 'memory_failed', `code of ${JSON.stringify(e.message)}`)
  ok(pattern.test(e.message), `message ${JSON.stringify(e.message)} matches ${pattern}`)
}

const allText = (records) => records.map((r) => r.content).join('\n')

/** The cases: [{ name, run }]. */
export function memoryCases(api) {
  const { ContextCompactor, MemoryIndex, recallToolDefinition, recallFromStore, enumerateStore, dropStoreScope } = api
  const compactor = () => new ContextCompactor(memoryCompactorOptions)
  // the transcript stands for the host's stored one: its state vouches for the stored
  // summary and artifact ref (issue 14 trust boundary)
  const stored = () => api.trustProvenance(null, memoryTranscript(), 'openai-chat')

  return [
    {
      name: 'M-1 compaction projects discarded narrative and tool output; injected context and summaries are never indexed',
      async run() {
        const memory = new MemoryIndex()
        const out = await compactor().compact(stored(), memoryTranscript(), { force: true, sessionId: 'sess-a', memory, memoryRecords: 'result' })
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
        const hit = memory.recall('sess-a', 'what was the calibration constant?', {}).hits.find((h) => h.content.includes('7734'))
        ok(hit, 'recall finds the discarded fact in its top 5')
        eq(hit.handle, 'artifact#3', 'the hit names its artifact')
        eq(await memory.resolveHandle('sess-a', hit.handle, (h) => `stored ${h}`), 'stored artifact#3', 'handle resolves through the loader (sync loader)')
        // No memory hooks: the records are asked into the result, nothing else is asked.
        const plain = await compactor().compact(stored(), memoryTranscript(), { force: true, memoryRecords: 'result' })
        eq(plain.memory.session, 'default', 'default session id')
        eq(plain.memory.projected, recs.length, 'same projection without hooks')
        eq(plain.memory.ids, plain.memory.records.map((r) => r.id), 'the result names every projected id')
        // The default result names the records the index took, and does not copy them (issue 15).
        const named = await compactor().compact(stored(), memoryTranscript(), { force: true, sessionId: 'sess-n', memory: new MemoryIndex() })
        eq(named.memory.projected, recs.length, 'named count')
        eq(named.memory.records, undefined, 'records are not copied into the result by default')
        // Nothing takes them and nobody asked: only the clipped user text is projected, into the result.
        const bare = await compactor().compact(stored(), memoryTranscript(), { force: true })
        eq(bare.memory.ids, bare.memory.records.map((r) => r.id), 'no consumer: the records are in the result')
        eq(bare.memory.records.filter((r) => r.role !== 'user'), [], 'no consumer: only user text is projected')
        eq(out.memory.ids, recs.map((r) => r.id), 'ids beside the records')
      },
    },
    {
      name: 'M-1 W-3 a throwing or rejecting store fails the compaction with its own error and commits nothing',
      async run() {
        const boom = new Error('disk full')
        let seen = null
        const store = { put(records, vectors) { seen = { records, vectors }; throw boom } }
        const err = await rejects(compactor().compact(stored(), memoryTranscript(), { force: true, store }), () => {}, 'sync throw')
        ok(err === boom, 'the store error reaches the caller unchanged')
        ok(seen && seen.records.length > 0 && seen.vectors === null, 'put saw the batch (no embedder: vectors null)')
        eq(err.state.revision, 0, 'revision not advanced')
        // Async rejection, and a throwing embedder, behave the same.
        const later = new Error('quota exceeded')
        const err2 = await rejects(compactor().compact(stored(), memoryTranscript(), { force: true, store: { put: async () => { throw later } } }), () => {}, 'async reject')
        ok(err2 === later, 'async rejection reaches the caller')
        let puts = 0
        const embedErr = new Error('embedder down')
        const err3 = await rejects(compactor().compact(stored(), memoryTranscript(), {
          force: true, embedDimension: 4, embed: async () => { throw embedErr }, store: { put() { puts++ } },
        }), () => {}, 'embedder throws')
        ok(err3 === embedErr && puts === 0, 'a failing embedder fails the compaction before put')
        // A malformed embedder answer is a typed memory_failed error.
        await rejects(compactor().compact(stored(), memoryTranscript(), {
          force: true, embedDimension: 4, embed: (texts) => texts.map(() => [1, 2, 3]), store: { put() { puts++ } },
        }), (e) => eq(e.code, 'memory_failed', 'wrong dimension code'), 'wrong dimension')
        eq(puts, 0, 'nothing put after a bad embedding')
        // A failed compaction leaves an embedded index untouched too.
        const memory = new MemoryIndex()
        await rejects(compactor().compact(stored(), memoryTranscript(), { force: true, memory, embedDimension: 4, embed: () => { throw boom } }), () => {}, 'memory + failing embed')
        eq(memory.size('default'), 0, 'nothing added')
      },
    },
    {
      name: 'M-3 host embedder and store receive one vector of the declared dimension per record',
      async run() {
        const puts = []
        const embed = async (texts) => texts.map((t) => [t.length, 1, (t.match(/7734/g) || []).length, 0.5])
        const out = await compactor().compact(stored(), memoryTranscript(), {
          force: true, sessionId: 'host', embedDimension: 4, embed, store: { put: (records, vectors) => { puts.push({ records, vectors }) } },
        })
        eq(out.status, 'compacted', 'status')
        eq(puts.length, 1, 'one put per compaction')
        eq(puts[0].records.length, out.memory.projected, 'the whole batch')
        eq(puts[0].records.map((r) => r.id), out.memory.ids, 'the result names what the store took')
        ok(puts[0].vectors.every((v) => v.length === 4), 'vectors of embedDimension')
        eq(puts[0].vectors[0][0], puts[0].records[0].content.length, 'vector i embeds record i')
        // embed into a host-vector MemoryIndex.
        const memory = new MemoryIndex({ dimension: 4 })
        await compactor().compact(stored(), memoryTranscript(), { force: true, sessionId: 'hv', memory, embedDimension: 4, embed })
        eq(memory.embedder, 'host', 'host-vector index')
        eq(memory.size('hv'), out.memory.projected, 'vectors stored')
        const r = memory.recall('hv', 'anything', { vector: [100, 1, 1, 0.5], limit: 2 })
        eq(r.hits.length, 2, 'vector recall honours limit')
        await rejects(async () => compactor().compact(stored(), memoryTranscript(), { force: true, embed, store: { put() {} } }),
          (e) => eq(e.code, 'invalid_config', 'embed without embedDimension'), 'missing embedDimension')
      },
    },
    {
      name: 'M-3 host-vector recall fuses BM25 with the host vectors (alpha), or either alone',
      async run() {
        const idx = new MemoryIndex({ dimension: 3 })
        idx.addWithVectors([record('h', 1, 'the deploy key lives in vault path secret/ci'), record('h', 2, 'lunch order was falafel'), record('h', 3, 'the weather is sunny')],
          [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        const nearLunch = [0.3, 1, 0.2]
        const first = (q, o) => idx.recall('h', q, { vector: nearLunch, ...o }).hits[0]?.content
        eq(first('where is the deploy key kept', { ranking: 'vector' }), 'lunch order was falafel', 'the vectors alone prefer lunch')
        eq(first('where is the deploy key kept', {}), 'the deploy key lives in vault path secret/ci', 'fused by default: the shared words win at alpha 0.2')
        eq(first('where is the deploy key kept', { alpha: 1 }), 'lunch order was falafel', 'alpha 1: the vectors')
        eq(idx.recall('h', 'where is the deploy key kept', { vector: nearLunch, ranking: 'lexical' }).hits.length, 1, 'BM25 alone: the record sharing a term')
        eq(first('midday meal', {}), 'lunch order was falafel', 'no shared word: found by its vector')
        await rejects(async () => idx.recall('h', 'deploy', { vector: nearLunch, alpha: 2 }), (e) => eq(e.code, 'memory_failed', 'alpha out of range'), 'bad alpha')
        await rejects(async () => idx.recall('h', 'deploy', { vector: nearLunch, alpha: 'x' }), (e) => eq(e.code, 'memory_failed', 'alpha not a number'), 'alpha type')
      },
    },
    {
      name: 'M-3 addWithVectors takes Float32Array rows, one flat Float32Array or number[][], with the same result',
      async run() {
        const recs = (s) => [record(s, 1, 'the deploy key lives in vault path secret/ci'), record(s, 2, 'lunch order was falafel'), record(s, 3, 'the weather is sunny')]
        const rows = [[1, 0, 0], [0, 1, 0], [0.5, 0, 1]]
        const byArray = new MemoryIndex({ dimension: 3 })
        byArray.addWithVectors(recs('h'), rows)
        const byRows = new MemoryIndex({ dimension: 3 })
        eq(byRows.addWithVectors(recs('h'), rows.map((r) => new Float32Array(r))).added, 3, 'Float32Array rows')
        const byFlat = new MemoryIndex({ dimension: 3 })
        eq(byFlat.addWithVectors(recs('h'), new Float32Array(rows.flat())).added, 3, 'one flat Float32Array')
        const by64 = new MemoryIndex({ dimension: 3 })
        eq(by64.addWithVectors(recs('h'), rows.map((r) => new Float64Array(r))).added, 3, 'Float64Array rows')
        const want = Array.from(byArray.snapshot())
        for (const [name, idx] of [['rows', byRows], ['flat', byFlat], ['float64', by64]]) eq(Array.from(idx.snapshot()), want, `${name}: the same index as number[][]`)
        eq(byFlat.recall('h', 'midday meal', { vector: new Float32Array([0.3, 1, 0.2]) }).hits[0]?.content, 'lunch order was falafel', 'a Float32Array query vector')
        await rejects(async () => new MemoryIndex({ dimension: 3 }).addWithVectors(recs('h'), new Float32Array(8)),
          failedWith(/a Float32Array of 8 components/), 'ragged flat array')
        await rejects(async () => new MemoryIndex({ dimension: 3 }).addWithVectors(recs('h'), [[1, 0, 0], [0, 'x', 0], [0, 0, 1]]),
          failedWith(/vectors\[1\]\[1\]: not a number/), 'number[] still checked element by element')
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
    {
      name: 'M-2 M-3 recallFromStore: the host embedder embeds the query, the host store searches one session, MemoryIndex.recall shape',
      async run() {
        for (const async of [true, false]) {
          const store = memoryStore({ async })
          const embed = async ? async (texts) => hashEmbed(texts) : hashEmbed
          const out = await compactor().compact(stored(), memoryTranscript(), { force: true, sessionId: 'store-a', embedDimension: HASH_DIM, embed, store, memoryRecords: 'result' })
          eq(out.status, 'compacted', 'status')
          eq(store.size('store-a'), out.memory.records.length, 'compact put the batch into the store')
          store.put([record('store-b', 1, 'the calibration constant is 1111 in session b')], hashEmbed(['the calibration constant is 1111 in session b']))
          const r = await recallFromStore(store, 'store-a', 'calibration constant 7734', { embed, embedDimension: HASH_DIM })
          const req = store.calls.filter((c) => c.op === 'search').at(-1)
          eq([req.session, req.query, req.limit, req.vector.length], ['store-a', 'calibration constant 7734', 5, HASH_DIM], 'search request')
          eq(req.vector, hashEmbed(['calibration constant 7734'])[0], 'the query vector is the host embedding')
          eq([r.query, r.limit], ['calibration constant 7734', 5], 'query and default limit')
          ok(r.hits.length > 0 && r.hits.length <= 5, `1..5 hits (got ${r.hits.length})`)
          ok(r.hits[0].content.includes('calibration'), 'best hit names the calibration')
          ok(r.hits.some((h) => h.content.includes('7734') && h.handle === 'artifact#3' && h.toolName === 'read_logs'), 'the evicted fact is among the hits, with its handle')
          eq(r.hits.map((h) => h.id), (await store.search(req)).map((h) => h.record.id), 'the store\'s own ranking, unchanged')
          ok(r.hits.every((h) => out.memory.records.some((x) => x.id === h.id)), 'only session store-a records')
          ok(r.hits.every((h, i) => i === 0 || r.hits[i - 1].score >= h.score), 'best first')
          const idx = new MemoryIndex()
          idx.add(out.memory.records)
          const local = idx.recall('store-a', 'calibration constant 7734', {})
          eq(Object.keys(r.hits[0]).sort(), Object.keys(local.hits[0]).sort(), 'hit fields as MemoryIndex.recall')
          eq(Object.keys(r).sort(), Object.keys(local).sort(), 'result fields as MemoryIndex.recall')
          // limit: capped at 20, at least 1; the store is asked for the effective limit.
          const big = await recallFromStore(store, 'store-a', 'flux capacitor voltage reading', { limit: 50, embed, embedDimension: HASH_DIM })
          eq([big.limit, store.calls.at(-1).limit], [20, 20], 'limit 50 -> 20')
          ok(big.hits.length > 5 && big.hits.length <= 20, `up to 20 hits (got ${big.hits.length})`)
          eq((await recallFromStore(store, 'store-a', 'flux', { limit: 0, embed, embedDimension: HASH_DIM })).limit, 1, 'limit 0 -> 1')
          // Without embed the store searches by the query text alone.
          const text = await recallFromStore(store, 'store-a', 'calibration constant 7734', { limit: 3 })
          ok(!('vector' in store.calls.at(-1)), 'no vector in the request without embed')
          eq(text.limit, 3, 'explicit limit')
          ok(text.hits[0].content.includes('7734'), 'text search finds the fact')
          eq((await recallFromStore(store, 'nobody', 'calibration', {})).hits, [], 'unknown session has nothing')
        }
      },
    },
    {
      name: 'M-4 recallFromStore never returns another session\'s records, even from a store that ignores the session',
      async run() {
        const leaky = {
          search: async () => [
            { record: record('alice', 1, 'alice token rotated monday'), score: 0.5 },
            { record: record('bob', 1, 'bob token rotated friday'), score: 0.99 },
            { record: record('alice', 1, 'alice token rotated monday'), score: 0.4 },
            { record: record('alice', 2, 'alice token expires soon'), score: 0.7 },
          ],
        }
        const r = await recallFromStore(leaky, 'alice', 'bob token friday', { limit: 20 })
        eq(r.hits.map((h) => h.id), ['alice-2', 'alice-1'], 'only alice, one hit per id, best first')
        ok(Math.abs(r.hits[0].score - 0.7) < 1e-6 && r.hits[1].score === 0.5, 'the store scores pass through (the best hit of a duplicate id is kept)')
        eq((await recallFromStore(leaky, 'carol', 'token', {})).hits, [], 'a third session gets nothing')
        eq((await recallFromStore({ search: () => ({ hits: [] }) }, 'alice', 'x', {})).hits, [], '{ hits } answer accepted')
      },
    },
    {
      name: 'M-2 recallFromStore rejects bad arguments and malformed store or embedder answers with memory_failed naming the problem',
      async run() {
        const rec = record('s', 1, 'some text')
        const search = (hits) => ({ search: () => hits })
        const e = { embed: hashEmbed, embedDimension: HASH_DIM }
        await rejects(() => recallFromStore({}, 's', 'q', {}), failedWith(/store\.search must be a function/), 'no search')
        await rejects(() => recallFromStore(null, 's', 'q', {}), failedWith(/store must be an object/), 'no store')
        await rejects(() => recallFromStore(search([]), '', 'q', {}), failedWith(/session must be a non-empty string/), 'empty session')
        await rejects(() => recallFromStore(search([]), 's', 42, {}), failedWith(/query must be a string/), 'query not a string')
        await rejects(() => recallFromStore(search([]), 's', 'q', { limit: 'many' }), failedWith(/limit/), 'bad limit')
        await rejects(() => recallFromStore(search('nope'), 's', 'q', {}), failedWith(/must return an array/), 'not an array')
        await rejects(() => recallFromStore(search([{ record: rec, score: 1 }, { record: { id: 'x' }, score: 1 }]), 's', 'q', {}), failedWith(/hit 1: record/), 'bad record')
        await rejects(() => recallFromStore(search([{ score: 1 }]), 's', 'q', {}), failedWith(/hit 0: record/), 'missing record')
        await rejects(() => recallFromStore(search([{ record: rec, score: NaN }]), 's', 'q', {}), failedWith(/hit 0: score/), 'NaN score')
        await rejects(() => recallFromStore(search([{ record: rec }]), 's', 'q', {}), failedWith(/hit 0: score/), 'missing score')
        await rejects(() => recallFromStore(search([]), 's', 'q', { embed: hashEmbed }), failedWith(/embedDimension/), 'embed without dimension')
        await rejects(() => recallFromStore(search([]), 's', 'q', { embed: 'yes', embedDimension: 4 }), failedWith(/embed must be a function/), 'embed not a function')
        await rejects(() => recallFromStore(search([]), 's', 'q', { ...e, embedDimension: 8 }), failedWith(/64 components; embedDimension is 8/), 'wrong dimension')
        await rejects(() => recallFromStore(search([]), 's', 'q', { embed: () => [[0, 0]], embedDimension: 2 }), failedWith(/zero or not finite/), 'zero vector')
        await rejects(() => recallFromStore(search([]), 's', 'q', { embed: () => [[1], [1]], embedDimension: 1 }), failedWith(/2 vectors for 1 texts/), 'two vectors')
        // The host's own errors pass through unchanged.
        const boom = new Error('vector db offline')
        ok((await rejects(() => recallFromStore({ search: () => { throw boom } }, 's', 'q', {}), () => {}, 'sync throw')) === boom, 'store throw passes through')
        ok((await rejects(() => recallFromStore({ search: async () => { throw boom } }, 's', 'q', {}), () => {}, 'async reject')) === boom, 'store rejection passes through')
        let searched = false
        ok((await rejects(() => recallFromStore({ search: () => { searched = true; return [] } }, 's', 'q', { embedDimension: 4, embed: async () => { throw boom } }), () => {}, 'embed throws')) === boom, 'embedder error passes through')
        ok(!searched, 'a failing embedder stops before the search')
      },
    },
    {
      name: 'M-4 enumerateStore pages a host store deterministically and dropStoreScope drops one whole scope; answers are validated',
      async run() {
        for (const async of [true, false]) {
          const store = memoryStore({ async })
          const recs = Array.from({ length: 250 }, (_, i) => record('s', i, `record number ${i}`)).reverse()
          store.put(recs, null)
          store.put([record('other', 1, 'kept elsewhere')], null)
          const sizes = []
          const ids = []
          let token = null
          do {
            const page = await enumerateStore(store, 's', { pageToken: token, pageSize: 100 })
            sizes.push(page.records.length)
            ids.push(...page.records.map((r) => r.id))
            token = page.next
          } while (token)
          eq(sizes, [100, 100, 50], 'page sizes')
          eq(ids, Array.from({ length: 250 }, (_, i) => `s-${i}`), 'source order, no repeats, no gaps')
          const first = await enumerateStore(store, 's', {})
          eq([store.calls.at(-1).pageToken, store.calls.at(-1).pageSize, first.next], [null, 100, '100'], 'defaults: first page of 100')
          await enumerateStore(store, 's', { pageSize: 5000 })
          eq(store.calls.at(-1).pageSize, 1000, 'pageSize clamped to 1000')
          eq((await enumerateStore(store, 's', { pageSize: 0 })).records.length, 1, 'pageSize at least 1')
          eq(await dropStoreScope(store, 's'), 250, 'drop answers the count')
          eq(store.calls.at(-1), { op: 'drop', session: 's' }, 'drop request')
          eq(await enumerateStore(store, 's', {}), { records: [], next: null }, 'scope empty after drop')
          eq((await recallFromStore(store, 's', 'record number', {})).hits, [], 'nothing recalled after drop')
          eq(store.size('other'), 1, 'other scope untouched')
        }
        const rec = record('s', 1, 'x')
        const en = (answer) => ({ enumerate: () => answer })
        await rejects(() => enumerateStore({}, 's', {}), failedWith(/store\.enumerate must be a function/), 'no enumerate')
        await rejects(() => enumerateStore(en({ records: [], next: null }), 7, {}), failedWith(/session must be a non-empty string/), 'bad session')
        await rejects(() => enumerateStore(en({ records: [], next: null }), 's', { pageToken: 5 }), failedWith(/pageToken/), 'numeric token')
        await rejects(() => enumerateStore(en({ records: [], next: null }), 's', { pageSize: 'all' }), failedWith(/pageSize/), 'bad pageSize')
        await rejects(() => enumerateStore(en([rec]), 's', {}), failedWith(/must return \{ records/), 'bare array')
        await rejects(() => enumerateStore(en({ records: [rec, record('t', 2, 'y')], next: null }), 's', {}), failedWith(/record 1 \("t-2"\) belongs to session "t"/), 'foreign record')
        await rejects(() => enumerateStore(en({ records: [rec, { id: 'broken' }], next: null }), 's', {}), failedWith(/record 1/), 'malformed record')
        await rejects(() => enumerateStore(en({ records: [rec, rec], next: null }), 's', { pageSize: 1 }), failedWith(/2 records for pageSize 1/), 'page too long')
        await rejects(() => enumerateStore(en({ records: [rec], next: 2 }), 's', {}), failedWith(/next must be a string or null/), 'numeric next')
        await rejects(() => enumerateStore(en({ records: [rec], next: 'p1' }), 's', { pageToken: 'p1' }), failedWith(/new non-empty token/), 'same token again')
        eq(await enumerateStore(en({ records: [rec] }), 's', {}), { records: [rec], next: null }, 'absent next means last page')
        await rejects(() => dropStoreScope({}, 's'), failedWith(/store\.drop must be a function/), 'no drop')
        await rejects(() => dropStoreScope({ drop: () => 0 }, ''), failedWith(/session must be a non-empty string/), 'empty session')
        await rejects(() => dropStoreScope({ drop: () => 'yes' }, 's'), failedWith(/non-negative integer/), 'string answer')
        await rejects(() => dropStoreScope({ drop: async () => -1 }, 's'), failedWith(/non-negative integer/), 'negative count')
        eq(await dropStoreScope({ drop: () => {} }, 's'), null, 'no count -> null')
        const boom = new Error('durable object gone')
        ok((await rejects(() => dropStoreScope({ drop: async () => { throw boom } }, 's'), () => {}, 'drop rejects')) === boom, 'drop error passes through')
        ok((await rejects(() => enumerateStore({ enumerate: () => { throw boom } }, 's', {}), () => {}, 'enumerate throws')) === boom, 'enumerate error passes through')
      },
    },
    {
      name: 'M-1 tool-call arguments reach memory with tool name, call id, role and the paths they mention; recall shows them',
      async run() {
        const memory = new MemoryIndex()
        const out = await compactor().compact(null, memoryTranscript(), { force: true, sessionId: 'sess-in', memory, memoryRecords: 'result' })
        const inputs = out.memory.records.filter((r) => r.kind === 'tool_input')
        eq(inputs.length, 1, 'one call with arguments was folded')
        eq([inputs[0].toolName, inputs[0].callId, inputs[0].role, inputs[0].content], ['read_logs', 'call_1', 'assistant', 'dir: /srv/lab/flux'], 'tool input record')
        ok(inputs[0].mentions.includes('/srv/lab/flux'), `mentions ${JSON.stringify(inputs[0].mentions)}`)
        const hits = memory.recall('sess-in', 'where was /srv/lab/flux read?', { limit: 2 }).hits
        const hit = hits.find((h) => h.kind === 'tool_input')
        ok(hit, `the tool input is recalled by the path it names: ${JSON.stringify(hits.map((h) => h.kind))}`)
        eq([hit.toolName, hit.callId, hit.role], ['read_logs', 'call_1', 'assistant'], 'the hit says tool, call id and role')
        ok(hit.mentions.includes('/srv/lab/flux'), 'the hit lists what it mentions')
        const bySegment = memory.recall('sess-in', 'lab', { limit: 20 }).hits
        ok(bySegment.some((h) => h.kind === 'tool_input'), 'a path segment finds the call')
      },
    },
    {
      name: 'M-3 recall ranks by BM25 and the embedded vectors, fused; ranking option; snapshot version 4, versions 1, 2 and 3 restore',
      async run() {
        const idx = new MemoryIndex()
        idx.add([
          record('s', 1, 'opened src/foo/bar_baz.py to look at the parser'),
          record('s', 2, 'the bar is closed and baz is a word'),
          record('s', 3, 'wrote docs/guide.md about the release'),
        ])
        for (const q of ['bar_baz.py', 'bar baz py', 'src/foo/bar_baz.py']) eq(idx.recall('s', q, {}).hits[0].id, 's-1', q)
        const fused = idx.recall('s', 'bar baz', { limit: 5 })
        eq(idx.recall('s', 'bar baz', { limit: 5, ranking: 'fused' }), fused, 'fused is the default')
        ok(fused.hits.every((h) => h.score > 0 && h.score <= 1), 'scores in (0, 1]')
        for (const ranking of ['lexical', 'vector']) ok(idx.recall('s', 'bar baz', { ranking }).hits.length === 2, ranking)
        await rejects(async () => idx.recall('s', 'bar', { ranking: 'magic' }), failedWith(/ranking/), 'unknown ranking')
        await rejects(async () => idx.recall('s', 'bar', { ranking: 3 }), failedWith(/ranking/), 'non-string ranking')
        const snap = JSON.parse(new TextDecoder().decode(idx.snapshot()))
        eq([snap.version, snap.lexical.length, snap.lexical[0].session], [4, 1, 's'], 'version 4 carries the inverted index')
        // version 3 wrote the same inverted index (version 4 added host-vector partitions): loaded as written
        const three = MemoryIndex.restore(new TextEncoder().encode(JSON.stringify({ ...snap, version: 3 })))
        eq(Array.from(three.snapshot()), Array.from(idx.snapshot()), 'a version-3 snapshot restores and snapshots as version 4')
        const v1 = { format: snap.format, version: 1, embedder: snap.embedder, dimension: snap.dimension, records: snap.records }
        const old = MemoryIndex.restore(new TextEncoder().encode(JSON.stringify(v1)))
        eq(old.recall('s', 'bar_baz.py', {}), idx.recall('s', 'bar_baz.py', {}), 'a version-1 snapshot restores to the same answers')
        eq(Array.from(old.snapshot()), Array.from(idx.snapshot()), 'and snapshots as version 4')
        // version 2 counted each term once; its postings are not loaded as written, its records are indexed again
        const v2 = { ...snap, version: 2, lexical: snap.lexical.map((l) => ({ ...l, terms: l.terms.map(([t, flat]) => [t, flat.map((x, i) => (i % 2 ? Math.max(1, x >> 2) : x))]) })) }
        const two = MemoryIndex.restore(new TextEncoder().encode(JSON.stringify(v2)))
        eq(Array.from(two.snapshot()), Array.from(idx.snapshot()), 'a version-2 snapshot becomes the version-4 index of its records')
        await rejects(async () => MemoryIndex.restore(new TextEncoder().encode(JSON.stringify({ ...v1, version: 7 }))), failedWith(/version 7/), 'unknown version')
      },
    },
    {
      name: 'M-4 MemoryIndex input errors are typed: add -> memory_failed, a non-string pageToken, lone surrogates in session names',
      async run() {
        const idx = new MemoryIndex()
        for (const bad of [5, null, undefined, 'not json', '{"records": 3}', [{ id: 1 }], { records: 'x' }, () => 1, 10n]) {
          await rejects(async () => idx.add(bad), (e) => eq(e.code, 'memory_failed', `add(${String(bad)}) code: ${e.message}`), `add(${String(bad)})`)
        }
        eq(idx.sessions(), [], 'nothing stored by a failed add')
        idx.add([record('s', 1, 'alpha beta'), record('s', 2, 'gamma delta')])
        for (const pageToken of [5, true, {}, ['v1']]) {
          await rejects(async () => idx.enumerate('s', { pageToken }), failedWith(/pageToken must be a string or null/), `pageToken ${JSON.stringify(pageToken)}`)
        }
        await rejects(async () => idx.enumerate('s', { pageSize: 'all' }), failedWith(/pageSize/), 'bad pageSize')
        eq(idx.enumerate('s', { pageToken: null, pageSize: 1 }).records.length, 1, 'null token is the first page')
        // lone surrogates: 't\uD800' and 't\uFFFD' must not share a scope
        idx.add([record('t\uFFFD', 1, 'replacement char scope')])
        for (const [label, f] of [
          ['recall', () => idx.recall('t\uD800', 'replacement', {})],
          ['size', () => idx.size('t\uD800')],
          ['enumerate', () => idx.enumerate('t\uDFFF', {})],
          ['dropScope', () => idx.dropScope('t\uD800')],
          ['resolveHandle', () => idx.resolveHandle('t\uD800', 'artifact#1', () => 1)],
        ]) {
          await rejects(async () => f(), failedWith(/lone surrogate/), label)
        }
        await rejects(async () => idx.add([record('t\uD800', 2, 'forged scope')]), (e) => eq(e.code, 'memory_failed', 'record session code'), 'record with a lone surrogate session')
        eq(idx.size('t\uFFFD'), 1, 'the U+FFFD scope is untouched')
        eq(idx.recall('t\uFFFD', 'replacement', {}).hits.length, 1, 'and still answers')
        await rejects(() => recallFromStore({ search: () => [] }, 't\uD800', 'q', {}), failedWith(/lone surrogate/), 'recallFromStore')
        await rejects(() => enumerateStore({ enumerate: () => ({ records: [], next: null }) }, 't\uD800', {}), failedWith(/lone surrogate/), 'enumerateStore')
        await rejects(() => dropStoreScope({ drop: () => 0 }, 't\uD800'), failedWith(/lone surrogate/), 'dropStoreScope')
        await rejects(() => compactor().compact(null, memoryTranscript(), { force: true, sessionId: 't\uD800', memory: idx }),
          (e) => { eq(e.code, 'invalid_config', 'sessionId code'); ok(/lone surrogate|invalid JSON/.test(e.message), e.message) }, 'compact sessionId')
        eq(idx.size('t\uFFFD'), 1, 'no compaction wrote into the U+FFFD scope')
      },
    },
  ]
}
