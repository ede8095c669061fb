// The ONE contract every store of context-compactor/stores passes on its real runtime
// (I-5, W-5, W-8, M-1..M-4). Runtime-neutral (no node: imports): Node (SQLite), Deno
// (Deno KV), workerd (Durable Object storage) and Chromium (IndexedDB) import it and
// call `runContract(env, phase, fingerprint)`; the runtime's test asserts every case
// passed. Phase 'first' writes and returns a fingerprint (transcript, state, revision,
// recall results, enumeration); phase 'restart' runs in a new process / isolate / page
// over the same storage and must read back exactly that fingerprint.
//
// env = {
//   api,                         // the context-compactor module (Session, MemoryIndex, ...)
//   name,                        // the engine's name, for messages
//   sessionStore(id),            // a NEW store object over the shared storage (a new worker)
//   memory({ maxIndexes }?),     // a NEW memory store object over the shared storage
//   pieces?(id),                 // byte sizes of the pieces session `id` is stored in (chunked stores)
//   valueLimit?,                 // the engine's value limit in bytes (chunked stores)
// }

const summarize = (req) => `SUMMARY of ${req.messages.length} messages: ${req.messages.map((m) => String(m.content).slice(0, 24)).join(' | ')}`

/** Old turns with distinctive words, tool calls and results, then an open run (OpenAI chat). */
export function conversation(tag, turns = 5) {
  const msgs = [{ role: 'system', content: 'You are a careful agent.' }]
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `${tag} task ${i}: look at the ${WORDS[i % WORDS.length]} module ${'detail '.repeat(50)}` })
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `${tag}-o${i}`, type: 'function', function: { name: 'read_log', arguments: `{"n":${i}}` } }] })
    msgs.push({ role: 'tool', tool_call_id: `${tag}-o${i}`, content: `log ${i} of ${WORDS[i % WORDS.length]}: ${'line ✓\n'.repeat(300)}` })
    msgs.push({ role: 'assistant', content: `the ${WORDS[i % WORDS.length]} log ${i} shows error code E${100 + i}` })
  }
  msgs.push({ role: 'user', content: `${tag}: fix the parser` })
  for (let k = 1; k <= 3; k++) msgs.push(...round(`${tag}-c${k}`))
  return msgs
}

const WORDS = ['walrus', 'pelican', 'zeppelin', 'quasar', 'marmot', 'glacier', 'tundra']

export function round(id) {
  return [
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'edit', arguments: `{"id":"${id}"}` } }] },
    { role: 'tool', tool_call_id: id, content: `edited ${id}` },
  ]
}

const json = (v) => JSON.stringify(v)
function eq(a, b, what) {
  if (json(a) !== json(b)) throw new Error(`${what}: expected ${json(b).slice(0, 300)}, got ${json(a).slice(0, 300)}`)
}
function ok(c, what) { if (!c) throw new Error(what) }

/** Appends `rows` to the stored transcript: one more compare-and-swap save (W-5). */
async function append(store, rows) {
  const rec = await store.load()
  const revision = rec.revision + 1
  return store.save({ transcript: [...rec.transcript, ...rows], state: rec.state, revision }, { expectedRevision: rec.revision, revision, patch: [] })
}

/** Appends until the store accepts (a refused append is retried on the new revision). */
async function appendRetrying(store, rows) {
  for (let i = 0; i < 20; i++) {
    const r = await append(store, rows)
    if (r?.ok !== false) return i
  }
  throw new Error('append kept being refused')
}

async function enumerateAll(api, memory, session, pageSize) {
  const pages = []
  let pageToken = null
  for (let i = 0; i < 1000; i++) {
    const page = await api.enumerateStore(memory, session, { pageToken, pageSize })
    pages.push(page.records.map((r) => r.id))
    if (!page.next) return pages
    pageToken = page.next
  }
  throw new Error('enumeration did not end')
}

const QUERIES = ['walrus module', 'zeppelin error code', 'quasar log', 'nothing matches xylophone']

async function recallAll(api, memory, session) {
  const out = {}
  for (const q of QUERIES) out[q] = (await api.recallFromStore(memory, session, q, { limit: 3 })).hits.map((h) => ({ id: h.id, score: h.score }))
  return out
}

/** A deterministic host embedder (hashed words, 16 components). */
function embed(texts) {
  return texts.map((t) => {
    const v = new Array(16).fill(0)
    for (const w of String(t).toLowerCase().match(/[a-z]+/g) ?? []) {
      let h = 2166136261
      for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0
      v[h % 16] += 1
    }
    v[15] += 0.01
    return v
  })
}

function cases(env, phase, fingerprint) {
  const { api } = env
  const compactor = new api.ContextCompactor({ format: 'openai-chat', profile: 'meerkat' })
  const run = `${phase}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
  const first = {
    async w8_a_session_never_written_loads_empty_and_its_first_write_creates_it() {
      const id = `fresh-${run}`
      const store = env.sessionStore(id)
      const rec = await store.load()
      eq(rec.revision, 0, 'revision of a new session')
      eq(rec.transcript, [], 'transcript of a new session')
      ok(rec.state == null, 'no state yet')
      const session = new api.Session(compactor, store)
      eq((await session.load()).revision, 0, 'Session.load of a new session')
      const rows = conversation('n', 1)
      eq(await store.save({ transcript: rows, state: null, revision: 1 }, { expectedRevision: 0, revision: 1, patch: [] }), { ok: true, revision: 1 }, 'first write')
      const back = await env.sessionStore(id).load()
      eq(back.revision, 1, 'revision after the first write')
      eq(back.transcript, rows, 'transcript after the first write')
    },
    async w5_a_stale_save_is_refused_by_the_store_and_writes_nothing() {
      const id = `stale-${run}`
      const a = env.sessionStore(id)
      const b = env.sessionStore(id)
      eq(await a.save({ transcript: conversation('a', 1), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 }), { ok: true, revision: 1 }, 'writer a')
      eq(await b.save({ transcript: conversation('b', 1), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 }), { ok: false, reason: 'stale_revision' }, 'writer b at the old revision')
      const rec = await env.sessionStore(id).load()
      eq(rec.transcript, conversation('a', 1), 'the stored transcript is writer a\'s')
      eq(await b.save({ transcript: [], state: null, revision: 9 }, { expectedRevision: 5, revision: 9 }), { ok: false, reason: 'stale_revision' }, 'a save expected ahead of the store')
      eq((await env.sessionStore(id).load()).revision, 1, 'still at revision 1')
    },
    async w5_two_saves_in_flight_at_once_one_is_refused_by_the_atomic_commit() {
      const id = `inflight-${run}`
      await env.sessionStore(id).save({ transcript: conversation('i', 1), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      // both saves start before either finishes: a read-then-write would let both through
      const rows = (w) => [...conversation('i', 1), { role: 'user', content: `from ${w}` }]
      const answers = await Promise.all(['A', 'B', 'C'].map((w) => env.sessionStore(id).save({ transcript: rows(w), state: null, revision: 2 }, { expectedRevision: 1, revision: 2 })))
      eq(answers.filter((a) => a.ok).length, 1, `exactly one of three concurrent saves commits: ${json(answers)}`)
      const rec = await env.sessionStore(id).load()
      const winner = ['A', 'B', 'C'][answers.findIndex((a) => a.ok)]
      eq(rec.transcript, rows(winner), 'the stored transcript is the committed one, whole')
      eq(rec.revision, 2, 'revision')
    },
    async w5_two_workers_compacting_one_session_one_commits_one_is_refused_no_row_lost() {
      const id = `race-${run}`
      const rows = conversation('r')
      await env.sessionStore(id).save({ transcript: rows, state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      let arrived = 0
      let release
      const gate = new Promise((r) => { release = r })
      // both load before either saves: each summarize waits until both arrived
      const slow = async (req) => { if (++arrived === 2) release(); await gate; return summarize(req) }
      const workers = [new api.Session(compactor, env.sessionStore(id)), new api.Session(compactor, env.sessionStore(id))]
      const settled = await Promise.allSettled(workers.map((w) => w.compact({ force: true, summarize: slow })))
      const won = settled.filter((s) => s.status === 'fulfilled')
      const lost = settled.filter((s) => s.status === 'rejected')
      eq([won.length, lost.length], [1, 1], 'one commit, one refusal')
      eq(lost[0].reason.code, 'stale_revision', 'the refusal code')
      const rec = await env.sessionStore(id).load()
      eq(rec.revision, 2, 'one rewrite committed')
      eq(rec.state.revision, 2, 'state saved with the transcript')
      eq(rec.transcript, won[0].value.transcript, 'the stored transcript is the winner\'s')
      // no row lost: every row of the open run is there verbatim, the rest is summarized
      const runStart = rows.findIndex((m) => m.content === 'r: fix the parser')
      for (const m of rows.slice(runStart)) ok(rec.transcript.some((x) => x.content === m.content && json(x.tool_calls) === json(m.tool_calls)), `row kept: ${json(m).slice(0, 80)}`)
      ok(won[0].value.rewrite.discarded.length > 0, 'older rows were folded into the summary')
      // the loser retries on the new revision and gets a consistent answer
      const retry = await workers[1].compact({ summarize })
      ok(retry.status === 'skipped' || retry.status === 'compacted', `retry status ${retry.status}`)
    },
    async w5_w8_two_appends_racing_one_is_refused_and_after_its_retry_both_rows_are_there() {
      const id = `append-${run}`
      await env.sessionStore(id).save({ transcript: conversation('p', 1), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      const a = env.sessionStore(id)
      const b = env.sessionStore(id)
      const [ra, rb] = [await a.load(), await b.load()]
      const rowA = { role: 'user', content: 'row from worker A' }
      const rowB = { role: 'user', content: 'row from worker B' }
      const sa = await a.save({ transcript: [...ra.transcript, rowA], state: ra.state, revision: 2 }, { expectedRevision: 1, revision: 2 })
      const sb = await b.save({ transcript: [...rb.transcript, rowB], state: rb.state, revision: 2 }, { expectedRevision: 1, revision: 2 })
      eq([sa.ok, sb.ok], [true, false], 'one append commits, the other is refused')
      const tries = await appendRetrying(b, [rowB])
      eq(tries, 0, 'the retry on the new revision commits')
      const rec = await env.sessionStore(id).load()
      eq(rec.transcript.slice(-2), [rowA, rowB], 'both rows, in commit order')
      eq(rec.revision, 3, 'two appends, two revisions')
      if (typeof api.Session.prototype.append === 'function') {
        const s = new api.Session(compactor, env.sessionStore(id))
        await s.append([{ role: 'user', content: 'row from Session.append' }])
        const after = await env.sessionStore(id).load()
        eq(after.transcript.at(-1).content, 'row from Session.append', 'Session.append wrote through the store')
        ok(after.revision > 3, 'Session.append advanced the revision')
      }
    },
    async w8_a_large_transcript_is_chunked_within_the_value_limit_and_reads_back_whole() {
      const id = `large-${run}`
      const rows = [{ role: 'system', content: 'big' }]
      // ~1.4 MB with multi-byte text: over Deno KV's 800 KiB a commit, 64 KiB a value,
      // and the Durable Object's 128 KiB a value
      for (let i = 0; i < 44; i++) rows.push({ role: i % 2 ? 'assistant' : 'user', content: `${i} ${'ünïcødé ✓ '.repeat(2000)}` })
      const bytes = new TextEncoder().encode(JSON.stringify(rows)).byteLength
      ok(bytes > 1_200_000, `the transcript is large (${bytes} bytes)`)
      const store = env.sessionStore(id)
      eq(await store.save({ transcript: rows, state: null, revision: 1 }, { expectedRevision: 0, revision: 1 }), { ok: true, revision: 1 }, 'large save')
      let firstCount = 0
      if (env.pieces) {
        const sizes = await env.pieces(id)
        firstCount = sizes.length
        ok(sizes.length >= Math.ceil(bytes / env.valueLimit), `stored in ${sizes.length} pieces`)
        ok(Math.max(...sizes) <= env.valueLimit, `every piece within the ${env.valueLimit}-byte value limit (largest ${Math.max(...sizes)})`)
        ok(sizes.reduce((a, b) => a + b, 0) >= bytes, 'the pieces hold the whole record')
      }
      eq((await env.sessionStore(id).load()).transcript, rows, 'read back whole')
      // a stale large save leaves nothing behind; a current one replaces every piece
      const stale = await env.sessionStore(id).save({ transcript: [...rows, ...rows], state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      eq(stale, { ok: false, reason: 'stale_revision' }, 'stale large save refused')
      const before = env.pieces ? (await env.pieces(id)).length : 0
      if (env.pieces) eq(before, firstCount, 'the refused (twice as large) save left no pieces behind')
      const smaller = rows.slice(0, 2) // ~32 KB: one piece
      eq(await store.save({ transcript: smaller, state: null, revision: 2 }, { expectedRevision: 1, revision: 2 }), { ok: true, revision: 2 }, 'smaller save')
      eq((await env.sessionStore(id).load()).transcript, smaller, 'read back the smaller one')
      if (env.pieces) eq((await env.pieces(id)).length, 1, `old pieces removed (${before} -> 1)`)
      // compaction works on the chunked session
      const big = [...conversation('L'), ...rows.slice(1, 10)]
      await store.save({ transcript: big, state: null, revision: 3 }, { expectedRevision: 2, revision: 3 })
      const out = await new api.Session(compactor, env.sessionStore(id)).compact({ force: true, summarize })
      eq(out.saved, { revision: 4, expectedRevision: 3 }, 'compaction of the chunked session saved')
      eq((await env.sessionStore(id).load()).transcript, out.transcript, 'compacted transcript read back')
    },
    async m1_m2_compaction_puts_records_and_recall_finds_them() {
      const id = `mem-${run}`
      const memory = env.memory()
      await env.sessionStore(id).save({ transcript: conversation('m'), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      const out = await new api.Session(compactor, env.sessionStore(id)).compact({ force: true, summarize, sessionId: id, store: memory })
      eq(out.status, 'compacted', 'compacted')
      const r = await api.recallFromStore(env.memory(), id, 'zeppelin', { limit: 3 })
      ok(r.hits.length > 0, 'recall found records')
      ok(/zeppelin/.test(r.hits[0].content), `best hit names the zeppelin: ${r.hits[0].content.slice(0, 60)}`)
      ok(r.hits.every((h) => typeof h.score === 'number'), 'scores are numbers')
    },
    async m4_enumeration_pages_deterministically_and_replaced_ids_are_not_duplicated() {
      const id = `enum-${run}`
      const memory = env.memory()
      const records = Array.from({ length: 23 }, (_, i) => rec(id, i, `${WORDS[i % WORDS.length]} note ${i}`))
      await memory.put(records.slice(0, 15), null)
      await memory.put(records.slice(10), null) // 10..14 again: replaced, not duplicated
      const pages = await enumerateAll(api, env.memory(), id, 4)
      eq(pages.map((p) => p.length), [4, 4, 4, 4, 4, 3], 'page sizes')
      eq(pages.flat(), records.map((r) => r.id), 'every record once, in insertion order')
      eq(await enumerateAll(api, env.memory(), id, 4), pages, 'same pages the second time')
      eq((await enumerateAll(api, env.memory(), id, 100)).flat(), pages.flat(), 'same order with one page')
    },
    async m4_recall_never_crosses_sessions_and_a_scope_drops_at_once() {
      const [a, b] = [`scope-a-${run}`, `scope-b-${run}`]
      const memory = env.memory()
      await memory.put([rec(a, 0, 'walrus in session a'), rec(a, 1, 'pelican in session a')], null)
      await memory.put(Array.from({ length: 30 }, (_, i) => rec(b, i, `walrus number ${i} in session b`)), null)
      const hits = (await api.recallFromStore(env.memory(), a, 'walrus', { limit: 20 })).hits
      ok(hits.length >= 1 && hits.every((h) => h.id.startsWith(`${a}-`)), `only session a's records: ${hits.map((h) => h.id)}`)
      eq(await api.dropStoreScope(env.memory(), b), 30, 'dropped count')
      eq((await api.enumerateStore(env.memory(), b, {})).records, [], 'scope b is empty')
      eq((await api.recallFromStore(env.memory(), b, 'walrus', {})).hits, [], 'nothing to recall in b')
      eq((await enumerateAll(api, env.memory(), a, 10)).flat().length, 2, 'scope a untouched')
      await memory.put([rec(b, 99, 'a new walrus after the drop')], null)
      eq((await api.enumerateStore(env.memory(), b, {})).records.map((r) => r.id), [`${b}-99`], 'the scope is usable again')
    },
    async m3_a_session_index_loads_on_its_first_recall_and_an_lru_bound_evicts() {
      const ids = [0, 1, 2].map((i) => `lru-${i}-${run}`)
      const writer = env.memory()
      for (const [k, s] of ids.entries()) await writer.put(Array.from({ length: 5 }, (_, i) => rec(s, i, `${WORDS[(i + k) % WORDS.length]} fact ${i}`)), null)
      const memory = env.memory({ maxIndexes: 2 })
      eq(memory.loadedSessions(), [], 'nothing loaded before a recall')
      const first = await api.recallFromStore(memory, ids[0], 'walrus fact', {})
      eq(memory.loadedSessions(), [ids[0]], 'loaded on the first recall')
      await api.recallFromStore(memory, ids[0], 'pelican', {})
      eq(memory.indexLoads, 1, 'the second recall reuses the loaded index')
      await api.recallFromStore(memory, ids[1], 'walrus', {})
      await api.recallFromStore(memory, ids[2], 'walrus', {})
      eq(memory.loadedSessions(), [ids[1], ids[2]], 'the least recently used index was evicted')
      eq(await api.recallFromStore(memory, ids[0], 'walrus fact', {}), first, 'reloaded after eviction: same results')
      eq(memory.indexLoads, 4, 'four loads')
      // another writer adds to a session: the loaded index sees it on the next recall
      await writer.put([rec(ids[0], 50, 'the aurora appears later')], null)
      const later = await api.recallFromStore(memory, ids[0], 'aurora', {})
      eq(later.hits[0]?.id, `${ids[0]}-50`, 'a record written by another worker is recalled')
    },
    async m2_host_vectors_are_stored_with_the_records_and_recalled_by_vector() {
      const id = `vec-${run}`
      await env.sessionStore(id).save({ transcript: conversation('v'), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
      const out = await new api.Session(compactor, env.sessionStore(id)).compact({ force: true, summarize, sessionId: id, store: env.memory(), embed, embedDimension: 16 })
      eq(out.status, 'compacted', 'compacted with host vectors')
      const r = await api.recallFromStore(env.memory(), id, 'quasar', { embed, embedDimension: 16, limit: 3 })
      ok(r.hits.length > 0 && /quasar/.test(r.hits[0].content), `vector recall found the quasar: ${r.hits[0]?.content.slice(0, 60)}`)
    },
  }
  const restart = {
    async m2_m4_after_a_restart_recall_and_enumeration_give_the_same_results() {
      const memory = env.memory()
      eq(memory.loadedSessions(), [], 'a new isolate holds no index')
      eq(await recallAll(api, memory, fingerprint.id), fingerprint.recall, 'recall results')
      eq(memory.loadedSessions(), [fingerprint.id], 'the index was loaded lazily')
      eq(await enumerateAll(api, memory, fingerprint.id, 3), fingerprint.pages, 'enumeration pages')
    },
    async w6_w8_after_a_restart_the_session_reads_back_the_same_transcript_state_and_revision() {
      const rec = await env.sessionStore(fingerprint.id).load()
      eq(rec.transcript, fingerprint.transcript, 'transcript')
      eq(rec.state, fingerprint.state, 'state')
      eq(rec.revision, fingerprint.revision, 'revision')
      const session = new api.Session(compactor, env.sessionStore(fingerprint.id))
      eq(await session.request(), fingerprint.request, 'request view')
      // the restarted session keeps going: append, then compact at the next revision
      await appendRetrying(env.sessionStore(fingerprint.id), round('after-restart'))
      const out = await session.compact({ force: true, summarize, sessionId: fingerprint.id, store: env.memory() })
      eq(out.saved.expectedRevision, fingerprint.revision + 1, 'compaction expected at the revision after the append')
    },
  }
  return phase === 'restart' ? restart : first
}

function rec(session, i, content) {
  return { id: `${session}-${i}`, session, messageId: `m${i}`, role: 'user', sourceRange: [i, i], byteRange: [0, content.length], kind: 'narrative', content }
}

/** Writes the session the restart phase reads back; returns its fingerprint. */
async function prepareRestart(env) {
  const { api } = env
  const compactor = new api.ContextCompactor({ format: 'openai-chat', profile: 'meerkat' })
  const id = `restart-${Date.now().toString(36)}`
  await env.sessionStore(id).save({ transcript: conversation('s', 6), state: null, revision: 1 }, { expectedRevision: 0, revision: 1 })
  const session = new api.Session(compactor, env.sessionStore(id))
  await session.compact({ force: true, summarize, sessionId: id, store: env.memory() })
  await appendRetrying(env.sessionStore(id), round('g1'))
  await session.recordFinding('the walrus module owns the parser')
  const rec = await env.sessionStore(id).load()
  const memory = env.memory()
  return {
    id,
    transcript: rec.transcript,
    state: rec.state,
    revision: rec.revision,
    request: await session.request(),
    recall: await recallAll(api, memory, id),
    pages: await enumerateAll(api, memory, id, 3),
  }
}

/**
 * Runs the contract's cases for `phase` ('first' or 'restart'): `{ results: [{ name,
 * ok, error? }], fingerprint? }` (the fingerprint only from 'first').
 */
export async function runContract(env, phase = 'first', fingerprint = null) {
  const results = []
  for (const [name, fn] of Object.entries(cases(env, phase, fingerprint))) {
    try {
      await fn()
      results.push({ name, ok: true })
    } catch (err) {
      results.push({ name, ok: false, error: `${err?.code ?? ''} ${err?.stack ?? err}`.trim() })
    }
  }
  let fp = null
  if (phase === 'first') {
    try {
      fp = await prepareRestart(env)
      results.push({ name: 'w8_restart_fingerprint_written', ok: true })
    } catch (err) {
      results.push({ name: 'w8_restart_fingerprint_written', ok: false, error: `${err?.code ?? ''} ${err?.stack ?? err}` })
    }
  }
  return { engine: env.name, phase, results, fingerprint: fp }
}
