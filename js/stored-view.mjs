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

/**
 * One `AbortSignal` that fires when any of `signals` does (`null` / `undefined` skipped),
 * with that signal's `reason`; the one signal itself when only one is given, `undefined`
 * when none is (break finding 14: a request's own signal and the helper's `signal`).
 */
export function anySignal(...signals) {
  const given = signals.filter((s) => s != null)
  if (given.length <= 1) return given[0]
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(given)
  const c = new AbortController()
  for (const s of given) {
    if (s.aborted) {
      c.abort(s.reason)
      break
    }
    s.addEventListener('abort', () => c.abort(s.reason), { once: true })
  }
  return c.signal
}

/**
 * The rejection of an aborted call (I-6), as `fetch` gives one and the AI SDK's
 * `isAbortError` reads it: a `DOMException` named `AbortError` (`TimeoutError` when the
 * signal's reason is one, as `AbortSignal.timeout()` gives), with the engine's `code:
 * "aborted"` as an own property (over DOMException's legacy numeric code) and `cause` the
 * signal's reason (a reason the host gave, e.g. `controller.abort(new Error('user left'))`,
 * is that `cause`). An `Error` with that name where `DOMException` is missing. The same
 * shape as the engine's own aborted rejections (src/wasm/mod.rs `abort_error`).
 */
export function abortError(message, reason) {
  const name = reason?.name === 'TimeoutError' ? 'TimeoutError' : 'AbortError'
  const e = typeof DOMException === 'function' ? new DOMException(message, name) : Object.assign(new Error(message), { name })
  Object.defineProperty(e, 'code', { value: 'aborted', writable: true, enumerable: true, configurable: true })
  Object.defineProperty(e, 'cause', { value: reason, writable: true, enumerable: false, configurable: true })
  return e
}

function startsWith(rows, prefix) {
  if (!prefix || rows.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (rows[i] !== prefix[i]) return false
  return true
}

/**
 * Tells the host (J-4, issue 16) that the request goes out over its budget with nothing
 * to fold (the check's `cannot_fit`, C-8): `onEvent({ type: 'warning', data: { code:
 * 'cannot_fit', message, floor, forecastTokens, thresholdTokens, contextWindow } })`
 * (tokens), the shape the engine's own `cannot_fit` warning has. The rows are sent as
 * they are; nothing throws.
 */
function warnCannotFit(decision, hooks) {
  if (decision?.reason !== 'cannot_fit' || typeof hooks.onEvent !== 'function') return
  const fl = decision.floor ?? {}
  const forecast = decision.signals?.find((s) => s.name === 'forecast_request_tokens')?.value ?? null
  const message = `cannot_fit: the request (${forecast ?? '?'} tokens forecast, context window ${decision.contextWindow}) is over budget and nothing can be folded: the floor (${fl.totalTokens} tokens: system ${fl.systemTokens}, tools ${fl.toolsTokens}, protected request ${fl.protectedTokens}, findings ledger ${fl.findingsTokens ?? 0}, output reserve ${fl.outputReserveTokens}) is over the budget of ${fl.budgetTokens} tokens; the prompt goes out unchanged`
  hooks.onEvent({ type: 'warning', data: { code: 'cannot_fit', message, floor: fl, forecastTokens: forecast, thresholdTokens: decision.thresholdTokens, contextWindow: decision.contextWindow } })
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
   * `{ rowsText, stored, request, same, base, k }`: the stored rows to measure, the
   * request rows to send when nothing is compacted, whether `request` is `incoming`
   * itself, and `stored[base + i]` is `incoming[k + i]`.
   */
  map(incoming) {
    const rowsText = incoming.map(text)
    if (this.stored) {
      if (startsWith(rowsText, this.requestText)) {
        const k = this.requestText.length
        return { rowsText, stored: [...this.stored, ...incoming.slice(k)], request: incoming, same: true, base: this.stored.length, k }
      }
      if (startsWith(rowsText, this.sourceText)) {
        const k = this.sourceText.length
        return { rowsText, stored: [...this.stored, ...incoming.slice(k)], request: [...this.requestRows, ...incoming.slice(k)], same: false, base: this.stored.length, k }
      }
      // another history (edited, or another conversation): start over
      this.stored = this.requestRows = this.requestText = this.sourceText = null
    }
    return { rowsText, stored: incoming, request: incoming, same: true, base: 0, k: 0 }
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
   * `signals`: usage, tools, inRun ...; `lead`: rows the caller took out of the front of
   * the history (the middleware's system rows, their text in `envelope.system`), put
   * back in front of the rows returned. Engine errors name the history's index of the row.
   * Returns `{ rows, changed, result }`.
   */
  async prepare(incoming, { envelope = {}, signals = {}, lead } = {}) {
    const head = lead ?? []
    const m = this.map(incoming)
    const r = await this.prepareMapped(m, envelope, signals).catch((err) => {
      // engine errors name the history's index of the row (the rows before `base` are the stored view's)
      throw relocate(err, (i) => (i < m.base ? null : m.k + (i - m.base) + head.length))
    })
    return head.length === 0 ? r : { ...r, rows: [...head, ...r.rows] }
  }

  /** `prepare` on the mapped history `m` (see `map`). */
  async prepareMapped(m, envelope, signals) {
    const doc = { ...envelope, messages: m.stored }
    const hooks = { ...this.hooks, ...signals }
    const decision = typeof hooks.countTokens === 'function'
      ? await this.compactor.checkAsync(this.state, doc, hooks)
      : this.compactor.check(this.state, doc, hooks)
    this.lastDecision = decision
    warnCannotFit(decision, hooks)
    if (!decision.compact) {
      this.lastSent = doc
      return { rows: m.request, changed: !m.same, decision }
    }
    const out = await this.compactor.compact(this.state, doc, hooks)
    // break finding 14: aborted as the compaction settled: the cancelled request keeps nothing
    if (hooks.signal?.aborted) throw abortError('aborted: the signal fired as the compaction settled; nothing was committed', hooks.signal.reason)
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

const LEDGER_HEAD = 'Findings recorded during this session (pinned; kept outside compaction):'

/** The text parts of a row's content, in order. */
function textParts(row) {
  const c = row?.content
  if (typeof c === 'string') return [c]
  return Array.isArray(c) ? c.filter((p) => p?.type === 'text').map((p) => p.text) : []
}

/** The findings ledger the request view renders in (Y-10): a user row that opens with its heading. */
function isLedger(row) {
  return row?.role === 'user' && textParts(row)[0]?.startsWith(LEDGER_HEAD) === true
}

/** Tool-call ids a row carries (its calls, or the results it answers). */
function callIds(row) {
  const c = row?.content
  return Array.isArray(c) ? c.filter((p) => p?.type === 'tool-call' || p?.type === 'tool-result').map((p) => p.toolCallId) : []
}

/**
 * Whether `host` is `stored` as the engine may have changed it in the stored view: a tool
 * row with the same tool calls (results cleared or evicted behind a handle), an assistant
 * row with the same text and tool calls (reasoning or call inputs cleared). User and
 * system rows, and an assistant's text, are never changed by the engine: an edit there
 * is the host's.
 */
function engineChanged(stored, host) {
  if (stored == null || host == null || stored.role !== host.role) return false
  if (stored.role !== 'tool' && stored.role !== 'assistant') return false
  const a = callIds(stored)
  const b = callIds(host)
  if (a.length !== b.length || a.some((id, i) => id !== b[i])) return false
  if (stored.role === 'tool') return a.length > 0
  const ta = textParts(stored)
  const tb = textParts(host)
  return ta.length === tb.length && ta.every((t, i) => t === tb[i])
}

const typedError = (code, message, extra = {}) => Object.assign(new Error(message), { name: 'ContextCompactorError', code, ...extra })

function msOf(v, what) {
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw typedError('invalid_config', `${what} must be a positive number of milliseconds, got ${typeof v === 'number' ? v : typeof v}`)
  return v
}

/**
 * Awaits `run()` (a call that waits on the host's `hook` callback; `what` says which call)
 * within the bounds of `hooks` (I-6), as the engine bounds its own: `timeouts[hook]` or
 * `timeoutMs` milliseconds, and `signal`. Rejects with `timeout` / `aborted` (its `cause`
 * the signal's reason), the engine's codes and wording; nothing was committed by then,
 * except by a `save` (it cannot be cancelled and may still land: that rejection says so
 * and carries `mayHaveCommitted: true`).
 */
async function within(hooks, hook, what, run) {
  const ms = msOf(hooks.timeouts?.[hook], `timeouts.${hook}`) ?? msOf(hooks.timeoutMs, 'timeoutMs')
  const signal = hooks.signal ?? undefined
  if (signal !== undefined && typeof signal?.addEventListener !== 'function') throw typedError('invalid_config', 'signal must be an AbortSignal')
  // a save was handed the record and cannot be cancelled: it may still land (W-5, I-6)
  const left = hook === 'save'
    ? 'the save may still have completed (a callback cannot be cancelled): load the record to see which revision the store holds before writing again'
    : 'nothing was committed'
  const uncertain = (e) => (hook === 'save' ? Object.assign(e, { mayHaveCommitted: true }) : e)
  const aborted = () => uncertain(abortError(`aborted: the signal fired while awaiting the ${hook} callback (${what}); ${left}`, signal.reason))
  if (signal?.aborted) throw aborted()
  if (ms === undefined && signal === undefined) return run()
  let timer
  let onAbort
  const stop = new Promise((_, reject) => {
    if (ms !== undefined) timer = setTimeout(() => reject(uncertain(typedError('timeout', `timeout: the ${hook} callback did not settle within ${ms} ms (${what}); ${left}`))), ms)
    if (signal !== undefined) {
      onAbort = () => reject(aborted())
      signal.addEventListener('abort', onAbort, { once: true })
    }
  })
  try {
    return await Promise.race([Promise.resolve().then(run), stop])
  } finally {
    clearTimeout(timer)
    if (onAbort) signal.removeEventListener('abort', onAbort)
  }
}

/**
 * Rewrites the row locations of an engine error (`message N`, an index into the rows the
 * engine was given) to the host's history index (`hostIndex(N)`: a number, or null for a
 * row the host did not send, e.g. a summary), so the host can find the row (breaker
 * finding 9). The first located row's history index is also `err.historyIndex`.
 */
function relocate(err, hostIndex) {
  if (!err || typeof err.message !== 'string' || typeof err.code !== 'string' || err.historyIndex !== undefined) return err
  let first
  const message = err.message.replace(/\bmessage (\d+)\b/g, (all, n) => {
    const h = hostIndex(Number(n))
    if (h == null) return `stored row ${n} (a row the engine wrote, not one of the history's)`
    if (first === undefined) first = h
    return `message ${h} of the history`
  })
  if (message === err.message) return err
  try {
    err.message = message
    if (first !== undefined) err.historyIndex = first
  } catch { /* a frozen error stays as it is */ }
  return err
}

function historyMismatch(detail) {
  return Object.assign(new Error(`the history does not continue the conversation the session store holds (${detail}): an edited or regenerated history, or another conversation, is not taken; give it a store of its own`), { name: 'ContextCompactorError', code: 'invalid_transcript' })
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
    // M-2 / M-4 (breaker finding 3): memory records and artifact handles are scoped by
    // the conversation's own id: `sessionId` given, else the store's (`sqliteStore(db, id)`, ...)
    const sessionId = hooks.sessionId ?? store.sessionId
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId === '')) {
      throw typedError('invalid_config', `sessionId must be a non-empty string, got ${sessionId === null ? 'null' : typeof sessionId}`)
    }
    if (sessionId === undefined && ['memory', 'store', 'storeArtifact'].some((k) => hooks[k] != null)) {
      throw typedError('invalid_config', 'session: this store has no sessionId and none was given: pass sessionId (the conversation\'s id), so the memory records and artifact handles of two conversations over one store never share a scope')
    }
    this.compactor = compactor
    this.hooks = sessionId === undefined ? hooks : { ...hooks, sessionId }
    /** The id memory and artifact handles are scoped by (undefined: the engine's "default"). */
    this.sessionId = sessionId
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
    try {
      this.session = new Session(compactor, this.store)
    } catch (err) {
      if (err?.code !== 'invalid_config') throw err
      // issue 16: e.g. a context-compactor/lite compactor, whose Session is not this build's
      throw Object.assign(new Error(`session: the helper runs over the Session of the full entry, so \`compactor\` must be a ContextCompactor from 'context-compactor' (or leave it out and pass the options); ${err.message}`), { name: 'ContextCompactorError', code: 'invalid_config' })
    }
  }

  /** Records the usage of the last request (C-3, I-3); saved with the next write. */
  observe(usage) {
    if (usage == null || this.lastSent == null) return
    this.pending = { usage, sent: this.lastSent }
    this.state = this.compactor.observeUsage(this.state, this.lastSent, { usage, onEvent: this.hooks.onEvent })
  }

  /**
   * How many of the host's rows (`texts`: their JSON; `incoming`: the rows) the stored
   * rows already hold, and the next `message_id` number. The stored rows are walked in
   * order against the history, and every one must be accounted for (issue 16: never
   * equal text found somewhere else): a row stamped `<tag>:<n>` must be the history's row
   * at that point (or the same row as the engine changed it: a cleared tool result,
   * cleared reasoning); the engine's summaries and the rows another writer appended are
   * either in the history at that point (the host fed back the request view, the findings
   * ledger maybe rendered in) or not (the host sent its own rows: then the history holds,
   * in place of a summary, the rows it folded, as many as the stamp numbers around it
   * say). The rows the history has after the walk are new. A history that diverges (an
   * edited or regenerated earlier row, a shorter history) rejects with
   * `invalid_transcript`.
   */
  held(stored, texts, incoming = []) {
    if (stored.length === 0) return { held: 0, next: 0, same: true }
    const nums = stored.map((r) => {
      const id = r?.message_id
      if (typeof id !== 'string' || !id.startsWith(this.tag)) return null
      const n = Number(id.slice(this.tag.length))
      return Number.isSafeInteger(n) && n >= 0 ? n : null
    })
    const next = nums.reduce((m, n) => (n == null ? m : Math.max(m, n + 1)), 0)
    const req = stored.map((r) => text(requestRow(r)))
    if (texts.length >= stored.length && req.every((t, i) => t === texts[i])) {
      return { held: stored.length, next, same: true }
    }
    let deepest = { i: -1, j: -1 }
    const fail = (i, j) => { if (i > deepest.i) deepest = { i, j }; return -1 }
    const ledger = (j) => isLedger(incoming[j])
    // walks stored[i..] against texts[j..]; prev: the stamp number of the last stamped row; returns held or -1
    // the walk backtracks only at summaries and unstamped rows; a bound keeps a
    // diverging history with many of them from costing more than a linear pass would
    let budget = 64 * (stored.length + texts.length) + 4096
    const walk = (i, j, prev) => {
      while (i < stored.length) {
        if (--budget < 0) return fail(i, j)
        const n = nums[i]
        if (n != null) {
          if (j < texts.length && (texts[j] === req[i] || engineChanged(stored[i], incoming[j]))) { prev = n; i++; j++; continue }
          if (j < texts.length && ledger(j)) { j++; continue }
          // rows the engine dropped without a summary: the host's own history still holds them
          if (n > prev + 1 && j + (n - prev - 1) < texts.length) return walk(i, j + (n - prev - 1), prev)
          return fail(i, j)
        }
        // a run of rows the host did not stamp: summaries, other writers' rows
        let k = i
        while (k < stored.length && nums[k] == null) k++
        // (B) the host fed back the request view: the rows are there, the ledger maybe before them
        let jb = j
        let ok = true
        for (let x = i; x < k; x++) {
          while (jb < texts.length && texts[jb] !== req[x] && ledger(jb)) jb++
          if (jb < texts.length && texts[jb] === req[x]) jb++
          else { ok = false; break }
        }
        if (ok) {
          const r = walk(k, jb, prev)
          if (r >= 0) return r
        }
        // (A) the host's own rows: the rows the summaries folded stand in their place
        if (k === stored.length) return j
        const folded = nums[k] - prev - 1
        if (folded >= 0) {
          const r = walk(k, j + folded, prev)
          if (r >= 0) return r
        }
        // neither: the next stamped row where the whole rest of the walk holds, if exactly one place does
        const found = new Set()
        for (let q = j; q < texts.length && found.size < 2; q++) {
          if (texts[q] !== req[k]) continue
          const r = walk(k, q, prev)
          if (r >= 0) found.add(r)
        }
        return found.size === 1 ? [...found][0] : fail(k, j)
      }
      return j
    }
    const held = walk(0, 0, -1)
    if (held >= 0) return { held, next, same: false }
    const at = deepest.i >= 0 && deepest.i < stored.length ? `; stored row ${deepest.i} (${stored[deepest.i]?.message_id ?? 'unstamped'}) is not the history's row ${deepest.j}` : ''
    throw historyMismatch(`${stored.length} stored rows, ${texts.length} given${at}`)
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
   * The record with `system` as its transcript's system prompt (C-2, C-8: each step's
   * prompt is the current one): saved (compare-and-swap, once more on a refusal) when it
   * changed, so the check, the compaction and a later instance all see it. `system`
   * undefined removes it. A legacy array transcript with rows gets the envelope.
   */
  async withSystem(rec, system, hooks) {
    for (let attempt = 0; attempt < 2; attempt++) {
      const t = rec.transcript
      const current = Array.isArray(t) ? undefined : t?.system
      if (current === system || JSON.stringify(current) === JSON.stringify(system)) return rec
      const messages = listOf(t)
      const { system: _, ...rest } = Array.isArray(t) ? {} : (t ?? {})
      const transcript = system === undefined ? { ...rest, messages } : { ...rest, system, messages }
      const revision = (rec.revision ?? 0) + 1
      const record = { transcript, state: rec.state ?? null, revision }
      let refused = false
      try {
        const r = await within(hooks, 'save', 'saving the new system prompt', () => this.store.save(record, { expectedRevision: rec.revision ?? 0, revision, patch: [] }))
        if (r && typeof r === 'object' && r.ok === false) {
          if (r.reason !== 'stale_revision') throw typedError('save_failed', `save() refused the record: ${r.reason ?? 'no reason given'}`)
          refused = true
        }
      } catch (err) {
        // a store may refuse a stale save by throwing (W-5)
        if (err?.code !== 'stale_revision' && err?.reason !== 'stale_revision') throw err
        refused = true
      }
      if (!refused) return { ...rec, transcript, revision }
      rec = await within(hooks, 'load', 'loading the session record', () => this.store.load())
    }
    // refused twice (other writers): this call still measures the current prompt
    const t = rec.transcript
    const { system: _, ...rest } = Array.isArray(t) ? { messages: t } : t
    return { ...rec, transcript: system === undefined ? rest : { ...rest, system } }
  }

  /**
   * As `StoredView.prepare`: appends what the store does not hold, checks (C-9), and
   * compacts through `Session.compact` when the engine says so. `envelope.system` is the
   * record's system prompt: the first record of a new session gets it, and a changed one
   * replaces the stored one (C-2, C-8). `lead`: the leading system rows the middleware
   * took out of the prompt (their text is `envelope.system`); they go back in front of
   * the rows returned, and a store written before (its first row a system row) keeps
   * them as rows. `store.load()` and `session.request()` are bounded by `timeoutMs` /
   * `timeouts.load` / `signal` (I-6). Engine errors name the history's index of the row.
   */
  async prepare(incoming, { envelope = {}, signals = {}, lead } = {}) {
    const hooks = { ...this.hooks, ...signals }
    const loadRec = () => within(hooks, 'load', 'loading the session record', () => this.store.load())
    this.envelope = envelope
    let rec = await loadRec()
    let stored = listOf(rec.transcript)
    let head = lead ?? []
    if (lead !== undefined && stored[0]?.role === 'system') {
      // written before the system prompt left the rows: the system rows stay rows
      incoming = [...lead, ...incoming]
      head = []
      envelope = {}
      this.envelope = envelope
    } else if (lead !== undefined || envelope.system !== undefined) {
      rec = await this.withSystem(rec, envelope.system, hooks)
      stored = listOf(rec.transcript)
    }
    const texts = incoming.map(text)
    // stored row -> the host's history index (its `<tag>:<n>` stamp counts the host's rows)
    let located = stored
    const hostIndex = (i) => {
      const id = located[i]?.message_id
      if (typeof id !== 'string' || !id.startsWith(this.tag)) return null
      const n = Number(id.slice(this.tag.length))
      return Number.isSafeInteger(n) ? n + head.length : null
    }
    const withHead = (r) => (head.length === 0 ? r : { ...r, rows: [...head, ...r.rows] })
    try {
      const h = this.held(stored, texts, incoming)
      if (h.held < incoming.length) {
        const fresh = incoming.slice(h.held).map((row, i) => ({ ...row, message_id: `${this.tag}${h.next + i}` }))
        located = [...stored, ...fresh]
        await this.session.append(fresh, bounds(hooks))
        rec = await loadRec()
        stored = listOf(rec.transcript)
        located = stored
      }
      this.state = rec.state
      // the findings ledger (Y-10) is rendered into the request view: then it is not the host's rows
      const same = h.same && stored.length === incoming.length && !(rec.state?.findings?.length > 0)
      const doc = rec.transcript
      const decision = typeof hooks.countTokens === 'function'
        ? await this.compactor.checkAsync(rec.state, doc, hooks)
        : this.compactor.check(rec.state, doc, hooks)
      this.lastDecision = decision
      warnCannotFit(decision, hooks)
      this.lastSent = doc
      const unchanged = async () => {
        if (same) return { rows: incoming, changed: false, decision }
        const request = listOf(await within(hooks, 'load', 'session.request(), loading the session record', () => this.session.request()))
        return { rows: this.reuse(request, incoming, texts), changed: true, decision }
      }
      if (!decision.compact) return withHead(await unchanged())
      let out
      try {
        out = await this.compactRetried(hooks)
      } catch (err) {
        // another writer saved first, twice: nothing was written; the next call checks again
        if (err?.code === 'stale_revision') return withHead({ ...(await unchanged()), refused: true })
        throw err
      }
      this.state = out.state
      if (out.status !== 'compacted') return withHead({ ...(await unchanged()), result: out })
      const before = stored.reduce((a, r) => a + text(requestRow(r)).length, 0)
      const rows = this.reuse(listOf(out.request), incoming, texts)
      this.compactions.push({ before, after: rows.reduce((a, r) => a + text(r).length, 0) })
      this.lastSent = out.transcript
      return withHead({ rows, changed: true, decision, result: out })
    } catch (err) {
      throw relocate(err, hostIndex)
    }
  }
}
