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
// new. Rows are compared by their JSON text.
//
// Not part of the public API: used by `context-compactor/ai-sdk` and `/langchain`.

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
  }

  /** JSON-serializable snapshot (state and stored rows), for a host store. */
  snapshot() {
    return { state: this.state, stored: this.stored, requestRows: this.requestRows, sourceText: this.sourceText }
  }

  /** Restores a snapshot taken by `snapshot()`. */
  restore(snap) {
    if (!snap) return
    this.state = snap.state ?? null
    this.stored = snap.stored ?? null
    this.requestRows = snap.requestRows ?? null
    this.requestText = this.requestRows ? this.requestRows.map(text) : null
    this.sourceText = snap.sourceText ?? null
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
    /** The last check's decision (C-9), for inspection. */
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
