// The stored view an integration keeps between calls (I-1, I-2).
//
// Frameworks hand the whole history back on every call, in the request view (no
// provenance keys): either the rows they hold themselves (the source rows a compaction
// replaced), or the compacted rows an earlier call returned. Neither tells the engine
// which row is its summary, and the engine never trusts summary-looking text in rows
// it did not stamp. So the integration keeps the stored rows of the last compaction
// and maps every incoming history back onto them: when the incoming rows start with the
// rows that compaction replaced, or with the request rows it returned, those rows are
// replaced by the stored rows (with their provenance) and only the rows after them are
// new. Rows are compared by their JSON text. `StoredView` keeps the stored rows in the
// instance; `SessionView` (below) keeps them in a session store, through `Session`.
//
// Not part of the public API: used by `context-compactor/ai-sdk`.

const text = (row) => JSON.stringify(row)

function startsWith(rows, prefix) {
  if (!prefix || rows.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (rows[i] !== prefix[i]) return false
  return true
}

/**
 * One conversation's compaction loop over a host that re-sends its history.
 * `compactor`: a ContextCompactor; `hooks`: the compact hooks (summarize, onEvent,
 * countTokens, storeArtifact, memory hooks ...) passed through unchanged.
 */
export class StoredView {
  constructor(compactor, hooks = {}) {
    this.compactor = compactor
    this.hooks = hooks
    this.state = null
    /** Stored-view rows of the last compaction (provenance keys kept). */
    this.stored = null
    /** The request rows that compaction returned (objects) and their JSON texts. */
    this.requestRows = null
    this.requestText = null
    /** JSON texts of the source rows that compaction replaced. */
    this.sourceText = null
    /** The stored document of the last request, for observeUsage. */
    this.lastSent = null
    /** How many compactions committed, and the prompt sizes around each (UTF-8 bytes of the rows). */
    this.compactions = []
    /** The last check's decision (C-9), for inspection. */
    this.lastDecision = null
  }

  /**
   * Maps `incoming` (request-view rows) onto the stored view. Returns
   * `{ rowsText, stored, request, same }`: the stored rows to measure, the request rows
   * to send when nothing is compacted, and whether `request` is `incoming` itself.
   */
  map(incoming) {
    const rowsText = incoming.map(text)
    if (this.stored) {
      if (startsWith(rowsText, this.requestText)) {
        const k = this.requestText.length
        return { rowsText, stored: [...this.stored, ...incoming.slice(k)], request: incoming, same: true }
      }
      if (startsWith(rowsText, this.sourceText)) {
        const k = this.sourceText.length
        return { rowsText, stored: [...this.stored, ...incoming.slice(k)], request: [...this.requestRows, ...incoming.slice(k)], same: false }
      }
      // another history (edited, or another conversation): start over
      this.stored = this.requestRows = this.requestText = this.sourceText = null
    }
    return { rowsText, stored: incoming, request: incoming, same: true }
  }

  /**
   * Records the usage of the last request (C-3, I-3): `usage` in any SDK's shape.
   */
  observe(usage) {
    if (usage == null || this.lastSent == null) return
    this.state = this.compactor.observeUsage(this.state, this.lastSent, { usage, onEvent: this.hooks.onEvent })
  }

  /**
   * The rows to send for `incoming`: compacted when the engine says so (C-9 check, then
   * compact), else the incoming rows (the same array when nothing was mapped).
   * `envelope`: document-level fields (`system`, ...) of the format's document;
   * `signals`: usage, tools, inRun ...
   * Returns `{ rows, changed, result }`.
   */
  async prepare(incoming, { envelope = {}, signals = {} } = {}) {
    const m = this.map(incoming)
    const doc = { ...envelope, messages: m.stored }
    const hooks = { ...this.hooks, ...signals }
    const decision = typeof hooks.countTokens === 'function'
      ? await this.compactor.checkAsync(this.state, doc, hooks)
      : this.compactor.check(this.state, doc, hooks)
    this.lastDecision = decision
    if (!decision.compact) {
      this.lastSent = doc
      return { rows: m.request, changed: !m.same, decision }
    }
    const out = await this.compactor.compact(this.state, doc, hooks)
    this.state = out.state
    if (out.status !== 'compacted') {
      this.lastSent = doc
      return { rows: m.request, changed: !m.same, decision, result: out }
    }
    const storedRows = out.transcript.messages ?? out.transcript
    const fresh = out.request.messages ?? out.request
    // Rows the rewrite kept keep the host's own objects when their JSON is unchanged.
    const rows = fresh.slice()
    for (const { source, offset } of out.rewrite.retained) {
      const original = m.request[source]
      if (original !== undefined && text(original) === text(fresh[offset])) rows[offset] = original
    }
    this.compactions.push({ before: m.request.reduce((a, r) => a + text(r).length, 0), after: rows.reduce((a, r) => a + text(r).length, 0) })
    this.stored = storedRows
    this.requestRows = rows
    this.requestText = rows.map(text)
    this.sourceText = m.rowsText
    this.lastSent = { ...envelope, messages: storedRows }
    return { rows, changed: true, decision, result: out }
  }
}

// ---------------------------------------------------------------------------------
// The same loop over the engine's `Session` (W-5, W-8): the conversation lives in a host
// session store (any store of `context-compactor/stores`, or a `{ load, save }` of your
// own). Each call appends the rows the store does not hold yet through `Session.append`
// (one compare-and-swap save, reloaded and retried on a refusal) and, when the check says
// so, compacts through `Session.compact` (one compare-and-swap save of the new transcript
// and state). The store holds the stored view: the engine's summary rows keep their
// provenance, and every row the integration appended carries `message_id: "<tag>:<n>"`
// (n counts the host's rows from 0), so a new instance over the same store (another
// request, another process) knows how many of the host's rows the store already holds.
// The provider never sees these keys (the request view drops them, F-4).

const PROVENANCE = ['summary_level', 'artifact_ref', 'transcript_role', 'message_id', 'observation_source', 'pinned']

/** A row as the provider gets it: the provenance keys left out (F-4). */
function requestRow(row) {
  if (row == null || typeof row !== 'object' || !PROVENANCE.some((k) => k in row)) return row
  const out = {}
  for (const [k, v] of Object.entries(row)) if (!PROVENANCE.includes(k)) out[k] = v
  return out
}

function listOf(transcript) {
  if (Array.isArray(transcript)) return transcript
  return Array.isArray(transcript?.messages) ? transcript.messages : []
}

/** The call bounds of `hooks` (`timeoutMs`, `timeouts`, `signal`, I-6), for `Session.append`. */
function bounds(hooks) {
  const out = {}
  for (const k of ['timeoutMs', 'timeouts', 'signal']) if (hooks[k] !== undefined) out[k] = hooks[k]
  return out
}

function historyMismatch(detail) {
  return Object.assign(new Error(`the history does not continue the conversation the session store holds (${detail}): give each conversation a store of its own`), { name: 'ContextCompactorError', code: 'invalid_transcript' })
}

/**
 * One conversation's compaction loop over a `Session` on a host session store.
 * `compactor`: a ContextCompactor; `store`: `{ load, save }` (compare-and-swap, W-5);
 * `hooks`: the compact hooks; `options.tag`: the `message_id` prefix of appended rows;
 * `options.Session`: the engine's `Session` class of the build in use.
 * Same surface as `StoredView` (`prepare`, `observe`, `state`, `compactions`,
 * `lastDecision`), plus `session` (the `Session`, for `request()`, `load()`,
 * `recordFinding()`).
 */
export class SessionView {
  constructor(compactor, store, hooks = {}, { tag = 'host', Session } = {}) {
    if (store == null || typeof store.load !== 'function' || typeof store.save !== 'function') {
      const what = store != null && typeof store.append === 'function' ? 'a Session (pass the store you gave it: the helper builds its own Session over it)' : typeof store
      throw Object.assign(new Error(`session must be a session store { load(), save(record, info) }, e.g. sqliteStore(db, id) from context-compactor/stores; got ${what}`), { name: 'ContextCompactorError', code: 'invalid_config' })
    }
    this.compactor = compactor
    this.hooks = hooks
    this.tag = `${tag}:`
    this.state = null
    this.compactions = []
    this.lastDecision = null
    /** The usage of the last answer and the stored document it answered, until a save holds it. */
    this.pending = null
    this.lastSent = null
    this.envelope = {}
    const view = this
    // The usage observed since the last save rides in the state of the next save (append
    // or compact) through this wrapper: `Session` loads the record here, so the state it
    // writes is the loaded one with the observation applied (C-3).
    this.store = {
      async load() {
        let rec = await store.load()
        if (rec == null || (listOf(rec.transcript).length === 0 && !(rec.revision > 0))) {
          const empty = rec?.transcript
          const transcript = Object.keys(view.envelope).length > 0 && Array.isArray(empty ?? [])
            ? { ...view.envelope, messages: [] } : (empty ?? [])
          rec = { ...(rec ?? {}), transcript, state: rec?.state ?? null, revision: rec?.revision ?? 0 }
        }
        const p = view.pending
        if (p) rec = { ...rec, state: view.compactor.observeUsage(rec.state, p.sent, { usage: p.usage, onEvent: view.hooks.onEvent }) }
        return rec
      },
      async save(record, info) {
        const r = await store.save(record, info)
        if (!(r && typeof r === 'object' && r.ok === false)) {
          view.pending = null
          view.state = record.state
        }
        return r
      },
    }
    this.session = new Session(compactor, this.store)
  }

  /** Records the usage of the last request (C-3, I-3); saved with the next write. */
  observe(usage) {
    if (usage == null || this.lastSent == null) return
    this.pending = { usage, sent: this.lastSent }
    this.state = this.compactor.observeUsage(this.state, this.lastSent, { usage, onEvent: this.hooks.onEvent })
  }

  /**
   * How many of the host's rows (`texts`: their JSON) the stored rows already hold, and
   * the next `message_id` number. The host's history is either the request view of the
   * stored rows (it fed back what an earlier call returned, maybe with the findings
   * rendered in) or its own rows, where a row stamped `<tag>:<n>` is row n. The newest
   * stamped row that is unchanged in the stored view is looked up in the history: at its
   * number first, then near its stored place, then anywhere (newest first); the rows the
   * history has after it are new. Rows another writer appended (not stamped) are not
   * the host's and are skipped.
   */
  held(stored, texts) {
    if (stored.length === 0) return { held: 0, next: 0, same: true }
    const tagged = []
    for (let i = 0; i < stored.length; i++) {
      const id = stored[i]?.message_id
      if (typeof id !== 'string' || !id.startsWith(this.tag)) continue
      const n = Number(id.slice(this.tag.length))
      if (Number.isSafeInteger(n) && n >= 0) tagged.push({ i, n })
    }
    const next = tagged.reduce((m, t) => Math.max(m, t.n + 1), 0)
    if (texts.length >= stored.length && stored.every((r, i) => text(requestRow(r)) === texts[i])) {
      return { held: stored.length, next, same: true }
    }
    for (let t = tagged.length - 1; t >= 0; t--) {
      const { i, n } = tagged[t]
      const row = text(requestRow(stored[i]))
      const after = tagged.length - 1 - t // stamped rows after this one
      const at = [n, i, i + 1, i + 2, i + 3].find((j) => j < texts.length && texts[j] === row) ?? texts.lastIndexOf(row)
      if (at >= 0 && at + 1 + after <= texts.length) return { held: at + 1 + after, next, same: false }
    }
    throw historyMismatch(`${stored.length} stored rows, ${texts.length} given`)
  }

  /** `Session.compact`, checked once more on the fresh record when the save was refused
   * (`stale_revision`: another writer saved this session first). */
  async compactRetried(hooks) {
    try {
      return await this.session.compact(hooks)
    } catch (err) {
      if (err?.code !== 'stale_revision') throw err
      return this.session.compact(hooks)
    }
  }

  /** The rows to send: the host's own objects where a row is unchanged (same JSON). */
  reuse(rows, incoming, texts) {
    const byText = new Map()
    texts.forEach((t, i) => { if (!byText.has(t)) byText.set(t, incoming[i]) })
    return rows.map((r) => byText.get(text(r)) ?? r)
  }

  /**
   * As `StoredView.prepare`: appends what the store does not hold, checks (C-9), and
   * compacts through `Session.compact` when the engine says so. `envelope.system` goes
   * into the first record of a new session.
   */
  async prepare(incoming, { envelope = {}, signals = {} } = {}) {
    this.envelope = envelope
    const texts = incoming.map(text)
    const hooks = { ...this.hooks, ...signals }
    let rec = await this.store.load()
    let stored = listOf(rec.transcript)
    const h = this.held(stored, texts)
    if (h.held < incoming.length) {
      const fresh = incoming.slice(h.held).map((row, i) => ({ ...row, message_id: `${this.tag}${h.next + i}` }))
      await this.session.append(fresh, bounds(hooks))
      rec = await this.store.load()
      stored = listOf(rec.transcript)
    }
    this.state = rec.state
    // the findings ledger (Y-10) is rendered into the request view: then it is not the host's rows
    const same = h.same && stored.length === incoming.length && !(rec.state?.findings?.length > 0)
    const doc = rec.transcript
    const decision = typeof hooks.countTokens === 'function'
      ? await this.compactor.checkAsync(rec.state, doc, hooks)
      : this.compactor.check(rec.state, doc, hooks)
    this.lastDecision = decision
    this.lastSent = doc
    const unchanged = async () => {
      if (same) return { rows: incoming, changed: false, decision }
      const request = listOf(await this.session.request())
      return { rows: this.reuse(request, incoming, texts), changed: true, decision }
    }
    if (!decision.compact) return unchanged()
    let out
    try {
      out = await this.compactRetried(hooks)
    } catch (err) {
      // another writer saved first, twice: nothing was written; the next call checks again
      if (err?.code === 'stale_revision') return { ...(await unchanged()), refused: true }
      throw err
    }
    this.state = out.state
    if (out.status !== 'compacted') return { ...(await unchanged()), result: out }
    const before = stored.reduce((a, r) => a + text(requestRow(r)).length, 0)
    const rows = this.reuse(listOf(out.request), incoming, texts)
    this.compactions.push({ before, after: rows.reduce((a, r) => a + text(r).length, 0) })
    this.lastSent = out.transcript
    return { rows, changed: true, decision, result: out }
  }
}
