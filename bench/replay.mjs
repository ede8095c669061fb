#!/usr/bin/env node
// The replay benchmark (`npm run bench:replay`): a benchmark, not a test; it asserts nothing.
//
// Replays each real agent session of ../shared/transcripts (the 6 Claude Code sessions
// and the 6 SWE-agent trajectories, as `importTranscript` reads them) request by
// request: before every assistant message the agent sends the history so far; the
// compactor runs on that history (`compact`, which skips when its check says so) and
// the history it returns is what the next requests carry. Three policies, same window:
//   - summarize only:          the default profile;
//   - clear then summarize:    + clearToolUses { trigger: half the window, keep 3,
//                                clearAtLeast: a twentieth of the window };
//   - the same with clearAtLeast a fifth of the window (fewer, larger cache breaks);
//   - cache-aware:             clear then summarize (clearAtLeast a twentieth) +
//                                promptCache { provider: anthropic, policy: pays }.
// Billing uses one fixed price table (Anthropic, 5-minute cache): each request's rows
// that are byte-identical, in order from the first, to the previous request's rows are
// cache reads (0.1x); the rest of the request is a cache write (1.25x); summary calls
// are billed as uncached input (1x) plus output (5x), their input counted as the
// request's `estimatedInputTokens`. Tokens are UTF-8 bytes / 4 of the request view.
// Printed per policy: summary calls, clearings (rewrites with no summary), input tokens
// billed (uncached-input equivalents, summary calls included), cache reads and writes,
// peak request size (largest over the sessions, and the mean of the per-session peaks).
//
// Usage: node bench/replay.mjs [--markdown]
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs'
import { join, dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const HERE = dirname(fileURLToPath(import.meta.url))
const SHARED = resolve(HERE, '../../shared/transcripts')
const { values: args } = parseArgs({ options: { markdown: { type: 'boolean', default: false } } })
const wasm = await import('../pkg/node/context_compactor.js')

const PRICE = { read: 0.1, write: 1.25, input: 1, output: 5 }
const SUMMARY = 'Summary of the earlier work: goals, decisions, files touched, open items. '.repeat(20)

function sessions() {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (/\.(jsonl|traj)$/.test(name)) out.push(p)
    }
  }
  for (const sub of ['claude-code', 'swe-agent']) {
    const d = join(SHARED, sub)
    if (existsSync(d)) walk(d)
  }
  return out.map((p) => {
    const kind = p.endsWith('.jsonl') ? 'claude-code-jsonl' : 'swe-agent-traj'
    const { format, document } = wasm.importTranscript(kind, readFileSync(p, 'utf8'))
    const rows = Array.isArray(document) ? document : document.messages ?? document.contents ?? document.input
    const envelope = Array.isArray(document) ? null : Object.fromEntries(Object.entries(document).filter(([k]) => !['messages', 'contents', 'input'].includes(k)))
    return { name: p.slice(SHARED.length + 1), format, rows, envelope }
  })
}

const tokens = (s) => Math.ceil(Buffer.byteLength(s) / 4)
const isAssistant = (format, m) => (format === 'gemini' ? m.role === 'model' : m.role === 'assistant' || m.type === 'function_call' || m.type === 'reasoning')
const wrap = (s, rows) => (s.envelope ? { ...s.envelope, messages: rows } : rows)

async function replay(s, options) {
  const c = new wasm.ContextCompactor({ format: s.format, ...options })
  let state = null
  let history = []
  let prev = []
  const r = { requests: 0, summaries: 0, clearings: 0, billed: 0, reads: 0, writes: 0, peak: 0, sent: 0 }
  let lastWasAssistant = false
  for (const row of s.rows) {
    const assistant = isAssistant(s.format, row)
    if (assistant && !lastWasAssistant && history.length > 0) {
      const out = await c.compact(state, wrap(s, history), {
        summarize: (req) => {
          r.summaries++
          r.billed += req.estimatedInputTokens * PRICE.input + tokens(SUMMARY) * PRICE.output
          return SUMMARY
        },
      })
      state = out.state
      if (out.status === 'compacted') {
        if (!out.rewrite.summary) r.clearings++
        const t = out.transcript
        history = Array.isArray(t) ? t : t.messages
      }
      const req = c.toRequest(wrap(s, history), state)
      const rows = (Array.isArray(req) ? req : req.messages).map((m) => JSON.stringify(m))
      let same = 0
      while (same < rows.length && same < prev.length && rows[same] === prev[same]) same++
      const head = s.envelope ? tokens(JSON.stringify(s.envelope)) : 0
      const readT = rows.slice(0, same).reduce((a, x) => a + tokens(x), head)
      const writeT = rows.slice(same).reduce((a, x) => a + tokens(x), prev.length ? 0 : head)
      r.requests++
      r.reads += readT
      r.writes += writeT
      r.billed += readT * PRICE.read + writeT * PRICE.write
      r.sent += readT + writeT
      r.peak = Math.max(r.peak, readT + writeT)
      prev = rows
    }
    lastWasAssistant = assistant
    history.push(row)
  }
  c.free()
  return r
}

const all = sessions()
const sizes = all.map((s) => tokens(JSON.stringify(s.rows)))
const policies = [
  ['summarize only', (w) => ({ contextWindow: w })],
  ['clear then summarize', (w) => ({ contextWindow: w, clearToolUses: { trigger: Math.ceil(w / 2), keep: 3, clearAtLeast: Math.ceil(w / 20) } })],
  ['clear then summarize, clearAtLeast w/5', (w) => ({ contextWindow: w, clearToolUses: { trigger: Math.ceil(w / 2), keep: 3, clearAtLeast: Math.ceil(w / 5) } })],
  ['cache-aware', (w) => ({ contextWindow: w, clearToolUses: { trigger: Math.ceil(w / 2), keep: 3, clearAtLeast: Math.ceil(w / 20) }, promptCache: { provider: 'anthropic', policy: 'pays' } })],
]
const table = []
for (const [name, opts] of policies) {
  const t = { name, requests: 0, summaries: 0, clearings: 0, billed: 0, reads: 0, writes: 0, sent: 0, peak: 0, peaks: 0 }
  for (let i = 0; i < all.length; i++) {
    // the window each session runs in: a third of its whole size, at least 8,000 tokens
    const w = Math.max(8000, Math.ceil(sizes[i] / 3))
    const r = await replay(all[i], opts(w))
    for (const k of ['requests', 'summaries', 'clearings', 'billed', 'reads', 'writes', 'sent']) t[k] += r[k]
    t.peak = Math.max(t.peak, r.peak)
    t.peaks += r.peak / all.length
  }
  table.push(t)
}

const n = (x) => Math.round(x).toLocaleString('en-US')
const base = table[0].billed
const head = ['policy', 'summary calls', 'clearings', 'input billed (x1 tokens)', 'vs summarize only', 'cache reads', 'cache writes', 'peak request (max / mean)']
const rowsOut = table.map((t) => [t.name, n(t.summaries), n(t.clearings), n(t.billed), `${(t.billed / base).toFixed(3)}x`, n(t.reads), n(t.writes), `${n(t.peak)} / ${n(t.peaks)}`])
console.log(`Replay of ${all.length} sessions (${n(table[0].requests)} requests each policy), Node ${process.version}; Anthropic 5-minute prices (read 0.1x, write 1.25x, summary output 5x).`)
if (args.markdown) {
  console.log(`| ${head.join(' | ')} |`)
  console.log(`|${head.map(() => '---').join('|')}|`)
  for (const r of rowsOut) console.log(`| ${r.join(' | ')} |`)
} else {
  const widths = head.map((h, i) => Math.max(h.length, ...rowsOut.map((r) => r[i].length)))
  console.log(head.map((h, i) => h.padEnd(widths[i])).join('  '))
  for (const r of rowsOut) console.log(r.map((x, i) => x.padEnd(widths[i])).join('  '))
}
