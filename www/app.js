// The demo page: loads the web build, imports a transcript, runs check / compact in the
// browser and shows what compaction did to every row. No framework, no build step.
import init, { ContextCompactor, importTranscript, version } from '../js/web.mjs'

const $ = (id) => document.getElementById(id)
const ui = {
  drop: $('drop'), file: $('file'), sample: $('sample'), loaded: $('loaded'), format: $('format'), profile: $('profile'),
  window: $('window'), summarizer: $('summarizer'), endpoint: $('endpoint'), url: $('url'), model: $('model'), key: $('key'),
  check: $('check'), compact: $('compact'), status: $('status'), result: $('result'), decision: $('decision'),
  sizes: $('sizes'), summaryWrap: $('summary-wrap'), summary: $('summary'), summarySource: $('summary-source'),
  events: $('events'), timeline: $('timeline'), evictedWrap: $('evicted-wrap'), evicted: $('evicted'), evictedCount: $('evicted-count'),
  detail: $('detail'), detailTitle: $('detail-title'), detailWhat: $('detail-what'), detailOriginal: $('detail-original'),
  detailReplacement: $('detail-replacement'), detailClose: $('detail-close'),
}
/** What the rows of the last rendering came from: the source rows and the result. */
let shown = { rows: [], result: null }
/** The loaded file: its name and text. */
let input = null

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v
    else if (k === 'style') e.style.cssText = v
    else e.setAttribute(k, v)
  }
  for (const c of children) if (c != null) e.append(c)
  return e
}
const fmt = (n) => Number(n).toLocaleString('en-US')
function setStatus(text, error = false) {
  ui.status.textContent = text
  ui.status.classList.toggle('error', error)
}

// ---- transcript rows, whatever the provider format ---------------------------------
function rowsOf(doc) {
  if (Array.isArray(doc)) return doc
  return doc?.messages ?? doc?.contents ?? doc?.input ?? []
}
function roleOf(m) {
  return String(m?.role ?? m?.type ?? '?')
}
function clip(s, n = 240) {
  s = String(s).replace(/\s+/g, ' ').trim()
  return s.length > n ? `${s.slice(0, n)}…` : s
}
function partText(p) {
  if (typeof p === 'string') return p
  if (p == null || typeof p !== 'object') return ''
  if (typeof p.text === 'string') return p.text
  if (p.type === 'tool_use') return `→ ${p.name}(${JSON.stringify(p.input ?? {})})`
  if (p.type === 'tool_result') return `⇐ ${typeof p.content === 'string' ? p.content : (p.content ?? []).map(partText).join(' ')}`
  if (p.type === 'tool-call') return `→ ${p.toolName}(${JSON.stringify(p.input ?? p.args ?? {})})`
  if (p.type === 'tool-result') return `⇐ ${JSON.stringify(p.output ?? p.result ?? '')}`
  if (p.functionCall) return `→ ${p.functionCall.name}(${JSON.stringify(p.functionCall.args ?? {})})`
  if (p.functionResponse) return `⇐ ${JSON.stringify(p.functionResponse.response ?? {})}`
  if (p.type === 'image' || p.type === 'image_url' || p.inlineData) return '[image]'
  return JSON.stringify(p)
}
function textOf(m) {
  const out = []
  const c = m?.content ?? m?.parts
  if (typeof c === 'string') out.push(c)
  else if (Array.isArray(c)) out.push(...c.map(partText))
  for (const call of m?.tool_calls ?? []) out.push(`→ ${call.function?.name}(${call.function?.arguments ?? ''})`)
  if (m?.type === 'function_call') out.push(`→ ${m.name}(${m.arguments ?? ''})`)
  if (m?.type === 'function_call_output') out.push(`⇐ ${typeof m.output === 'string' ? m.output : JSON.stringify(m.output)}`)
  const text = out.filter(Boolean).join(' · ')
  return text || JSON.stringify(m)
}
const bytesOf = (m) => new TextEncoder().encode(JSON.stringify(m)).length
const isSystem = (m) => /^(system|developer)$/.test(roleOf(m))
/** A user row that asks something (not one carrying tool results). */
function isRequest(m) {
  if (roleOf(m) !== 'user') return false
  const t = textOf(m)
  return !t.startsWith('⇐')
}

// ---- rendering ---------------------------------------------------------------------
function row(index, role, mark, text, bytes, extra) {
  return el('li', { class: `row ${mark}`, 'data-mark': mark, 'data-index': String(index) },
    el('span', { class: 'idx' }, String(index)),
    el('span', {}, el('span', { class: `tag ${mark}` }, mark)),
    el('span', { class: 'role' }, role, extra ?? null),
    el('span', { class: 'text', title: clip(text, 2000) }, clip(text)),
    el('span', { class: 'bytes' }, bytes))
}

function renderPlain(doc) {
  shown = { rows: rowsOf(doc), result: null }
  ui.detail.hidden = true
  ui.timeline.replaceChildren(...rowsOf(doc).map((m, i) => row(i, roleOf(m), 'pending', textOf(m), `${fmt(bytesOf(m))} B`)))
}

/** Marks every source row from the rewrite: summarized (discarded), evicted (handle),
 * protected (system rows and the newest request), kept; inserts the summary row. */
function renderRewrite(doc, result) {
  const rows = rowsOf(doc)
  const rw = result.rewrite
  if (!rw) return renderPlain(doc)
  shown = { rows, result }
  ui.detail.hidden = true
  const discarded = new Set(rw.discarded)
  const retained = new Map(rw.retained.map((r) => [r.source, r]))
  const evicted = new Map(rw.evicted.map((e) => [e.offset, e]))
  let lastRequest = -1
  rows.forEach((m, i) => { if (isRequest(m)) lastRequest = i })
  const summaryRow = () => row('+', 'summary', 'summary', rw.summary.text, `${fmt(new TextEncoder().encode(rw.summary.text).length)} B`)
  const items = []
  let summaryShown = false
  rows.forEach((m, i) => {
    const kept = retained.get(i)
    // The summary sits where it is in the new transcript: before the first folded row or
    // the first kept row that comes after it.
    if (!summaryShown && (discarded.has(i) || (kept && kept.offset > rw.summary.offset))) { items.push(summaryRow()); summaryShown = true }
    const ev = evicted.get(i)
    let mark = 'kept'
    if (discarded.has(i)) mark = 'summarized'
    else if (ev) mark = 'evicted'
    else if (isSystem(m) || i === lastRequest) mark = 'protected'
    const bytes = ev && mark === 'evicted' ? `${fmt(ev.bodyBytes)}→${fmt(ev.keptBytes)} B` : `${fmt(bytesOf(m))} B`
    // an evicted result is shown whether its row was kept or folded into the summary
    const extra = !ev ? null : !discarded.has(i) ? el('span', { class: 'handle' }, ev.handle ?? (ev.clipped ? 'clipped' : ''))
      : el('span', { class: 'evicted-badge', title: `evicted: ${fmt(ev.bodyBytes)} → ${fmt(ev.keptBytes)} bytes` }, ev.handle ?? 'clipped')
    items.push(row(i, roleOf(m), mark, textOf(m), bytes, extra))
  })
  if (!summaryShown) items.push(summaryRow())
  ui.timeline.replaceChildren(...items)
}

function renderEvicted(result) {
  const list = result.rewrite?.evicted ?? []
  ui.evictedWrap.hidden = list.length === 0
  ui.evictedCount.textContent = `${list.length}, ${fmt(list.reduce((a, e) => a + e.bodyBytes, 0))} → ${fmt(list.reduce((a, e) => a + e.keptBytes, 0))} bytes`
  ui.evicted.replaceChildren(...list.map((e) => el('li', { 'data-offset': String(e.offset) },
    `#${e.offset} `, el('code', {}, e.toolName ?? '?'), ` (${e.callId ?? '?'}) → ${e.handle ?? (e.clipped ? 'clipped' : 'no handle')}, ${fmt(e.bodyBytes)} → ${fmt(e.keptBytes)} bytes`)))
}

/** Opens source row `i`: its original JSON and what replaced it in the rewrite. */
function openRow(i) {
  const m = shown.rows[i]
  if (m === undefined) return
  for (const r of ui.timeline.querySelectorAll('.row.open')) r.classList.remove('open')
  ui.timeline.querySelector(`.row[data-index="${i}"]`)?.classList.add('open')
  ui.detail.hidden = false
  ui.detailTitle.textContent = `Row ${i} · ${roleOf(m)}`
  ui.detailOriginal.textContent = JSON.stringify(m, null, 2)
  const result = shown.result
  const rw = result?.rewrite
  if (!rw) {
    ui.detailWhat.textContent = 'Not compacted yet.'
    ui.detailReplacement.textContent = '—'
    return
  }
  const ev = rw.evicted.find((e) => e.offset === i)
  const kept = rw.retained.find((r) => r.source === i)
  const newRows = rowsOf(result.transcript)
  const evicted = ev ? ` Its tool result (${fmt(ev.bodyBytes)} bytes) was evicted: ${ev.handle ? `stored as ${ev.handle}` : 'clipped head and tail'}, ${fmt(ev.keptBytes)} bytes kept in the summarizer's copy.` : ''
  if (kept) {
    const now = newRows[kept.offset]
    const same = JSON.stringify(now) === JSON.stringify(m)
    ui.detailWhat.textContent = `Kept as row ${kept.offset} of the new transcript${same ? ', unchanged' : ', rewritten'}.${evicted}`
    ui.detailReplacement.textContent = JSON.stringify(now, null, 2)
  } else {
    const records = (result.memory?.records ?? []).filter((r) => r.sourceRange[0] <= i && i <= r.sourceRange[1])
    ui.detailWhat.textContent = `Folded into the summary (row ${rw.summary.offset} of the new transcript).${evicted} ${records.length} memory record${records.length === 1 ? '' : 's'} keep its text findable.`
    ui.detailReplacement.textContent = rw.summary.text
  }
}
ui.timeline.addEventListener('click', (e) => {
  const li = e.target.closest?.('.row')
  if (li && li.dataset.index !== '+') openRow(Number(li.dataset.index))
})
ui.detailClose.addEventListener('click', () => { ui.detail.hidden = true })

function kv(pairs) {
  return el('dl', { class: 'kv' }, ...pairs.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]))
}
function renderDecision(d) {
  const signals = d.signals.map((s) => `${s.name} ${fmt(s.value)}/${fmt(s.threshold)} ${s.unit}${s.crossed ? ' ✗' : ''}`).join(', ')
  ui.decision.replaceChildren(kv([
    ['compact', d.compact ? 'yes' : 'no'], ['reason', d.reason], ['decided by', d.decidedBy ?? '—'],
    ['threshold', `${fmt(d.thresholdTokens)} of ${fmt(d.contextWindow)} tokens`], ['floor', `${fmt(d.floor.totalTokens)} tokens`],
    ['signals', signals || '—'],
  ]))
}
function bar(label, tokens, scale, threshold, window, cls) {
  const pct = (x) => `${Math.min(100, (100 * x) / scale).toFixed(2)}%`
  return el('div', { class: 'bar', 'data-bar': cls },
    el('div', { class: `fill ${cls}`, style: `width:${pct(tokens)}` }),
    el('div', { class: 'mark', style: `left:${pct(threshold)}`, title: 'threshold' }),
    el('div', { class: 'mark window', style: `left:calc(${pct(window)} - 2px)`, title: 'context window' }),
    el('span', { class: 'label' }, `${label}: ${fmt(tokens)} tokens`))
}
function renderSizes(result) {
  const d = result.decision
  const scale = Math.max(d.contextWindow, result.before.estimatedTokens)
  ui.sizes.replaceChildren(
    bar(`before · ${result.before.messages} messages`, result.before.estimatedTokens, scale, d.thresholdTokens, d.contextWindow, 'before'),
    bar(`after · ${result.after.messages} messages`, result.after.estimatedTokens, scale, d.thresholdTokens, d.contextWindow, 'after'),
    el('div', { class: 'sizes-caption' }, `Estimated tokens. Black line: the ${fmt(d.contextWindow)}-token window; red line: the ${fmt(d.thresholdTokens)}-token threshold. ` +
      `${fmt(result.before.bytes)} → ${fmt(result.after.bytes)} bytes.`))
}
function renderEvents(events) {
  ui.events.replaceChildren(...events.map((e) => el('li', {}, el('code', {}, e.type), ' ', clip(JSON.stringify(e.data), 200))))
}

// ---- actions -----------------------------------------------------------------------
function prepared() {
  const { format, document } = importTranscript(ui.format.value, input.text)
  const compactor = new ContextCompactor({ format, profile: ui.profile.value, contextWindow: Number(ui.window.value) })
  return { format, document, compactor }
}

/** An OpenAI-compatible chat-completions summarizer; URL, model and key stay in the page. */
function endpointSummarizer() {
  const url = ui.url.value.trim()
  const model = ui.model.value.trim()
  const key = ui.key.value
  if (!url || !model) throw Object.assign(new Error('endpoint URL and model are required'), { code: 'invalid_config' })
  return async (req) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ model, max_tokens: req.maxOutputTokens, messages: [{ role: 'system', content: req.system }, ...req.messages] }),
    })
    const body = await res.json().catch(() => ({}))
    if (!res.ok) throw Object.assign(new Error(body?.error?.message ?? `HTTP ${res.status}`), { status: res.status, code: body?.error?.code })
    return { text: body?.choices?.[0]?.message?.content ?? '', usage: body?.usage }
  }
}

function guard(fn) {
  return async () => {
    if (!input) return
    ui.check.disabled = ui.compact.disabled = true
    try { await fn() } catch (err) {
      setStatus(`${err.code ?? 'error'}: ${err.message ?? err}`, true)
    } finally { ui.check.disabled = ui.compact.disabled = false }
  }
}

ui.check.addEventListener('click', guard(async () => {
  const { format, document, compactor } = prepared()
  const d = compactor.check(null, document)
  ui.result.hidden = false
  ui.summaryWrap.hidden = true
  renderDecision(d)
  ui.sizes.replaceChildren(el('div', { class: 'sizes-caption' }, 'Run a compaction to compare before and after.'))
  ui.events.replaceChildren()
  renderPlain(document)
  setStatus(`${format}: ${d.compact ? 'over the threshold — compaction advised' : 'under the threshold'} (${d.reason})`)
}))

ui.compact.addEventListener('click', guard(async () => {
  const { format, document, compactor } = prepared()
  const hooks = { force: $('force').checked, memoryRecords: 'result' }
  if (ui.summarizer.value === 'endpoint') hooks.summarize = endpointSummarizer()
  setStatus('compacting…')
  const result = await compactor.compact(null, document, hooks)
  ui.result.hidden = false
  renderDecision(result.decision)
  renderSizes(result)
  renderEvents(result.events)
  renderEvicted(result)
  renderRewrite(document, result)
  if (result.rewrite) {
    ui.summaryWrap.hidden = false
    ui.summary.textContent = result.rewrite.summary.text
    ui.summarySource.textContent = `${result.rewrite.summary.source.writer}, coverage ${result.rewrite.summary.source.coverage}, level ${result.rewrite.summary.level}`
  } else ui.summaryWrap.hidden = true
  setStatus(`${format}: ${result.status} (${result.reason}); ${result.before.messages} → ${result.after.messages} messages`)
  window.__lastResult = result
}))

function load(name, text) {
  input = { name, text }
  try {
    const { format, document } = importTranscript(ui.format.value, text)
    ui.loaded.textContent = `${name}: ${format}, ${rowsOf(document).length} rows, ${fmt(new TextEncoder().encode(text).length)} bytes`
    renderPlain(document)
    ui.result.hidden = true
    setStatus('')
  } catch (err) {
    ui.loaded.textContent = `${name}: ${fmt(text.length)} characters`
    setStatus(`${err.code ?? 'error'}: ${err.message}`, true)
  }
  ui.check.disabled = ui.compact.disabled = false
}

ui.file.addEventListener('change', async () => { const f = ui.file.files?.[0]; if (f) load(f.name, await f.text()) })
ui.drop.addEventListener('dragover', (e) => { e.preventDefault(); ui.drop.classList.add('over') })
ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'))
ui.drop.addEventListener('drop', async (e) => {
  e.preventDefault()
  ui.drop.classList.remove('over')
  const f = e.dataTransfer?.files?.[0]
  if (f) load(f.name, await f.text())
})
ui.sample.addEventListener('click', async () => {
  const res = await fetch('../examples/sample-session.json')
  load('sample-session.json', await res.text())
})
ui.format.addEventListener('change', () => { if (input) load(input.name, input.text) })
ui.summarizer.addEventListener('change', () => { ui.endpoint.hidden = ui.summarizer.value !== 'endpoint' })

await init()
$('version').textContent = `v${version()} · wasm`
document.body.dataset.ready = 'true'
