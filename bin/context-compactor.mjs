#!/usr/bin/env node
// context-compactor CLI: compact a transcript file and report what the engine did.
// Node >= 20, no dependencies. The engine calls are all in `runEngine` below.
import { readFile, writeFile } from 'node:fs/promises'
import { existsSync, realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { resolve as resolvePath } from 'node:path'
import { parseArgs } from 'node:util'

export const FORMATS = [
  'auto', 'openai-chat', 'anthropic', 'gemini', 'openai-responses', 'ai-sdk', 'canonical',
  'claude-code-jsonl', 'codex-rollout', 'swe-agent-traj', 'tau-bench', 'glaive', 'glaive-jsonl',
]
export const SUBAGENTS = ['attach', 'drop']
/** How many import warnings the report lists one by one. */
const WARNINGS_SHOWN = 5
export const PROFILES = ['kerkov', 'meerkat', 'default']
const API_KEY_ENV = 'CONTEXT_COMPACTOR_API_KEY'
/** How long `--summarizer-url` may take to answer by default (I-6), milliseconds. */
export const DEFAULT_TIMEOUT_MS = 120000

export const USAGE = `Usage:
  context-compactor compact INPUT [options]
  context-compactor --help

Compact the transcript in INPUT once (forced) and print a report of what changed.

Options:
  --format F            input format (default: auto):
                        ${FORMATS.join(', ')}
  --context-window N    the model's context window in tokens (default: the profile's)
  --profile P           ${PROFILES.join(' | ')} (default: default)
  --subagents M         Claude Code subagent runs: ${SUBAGENTS.join(' | ')} (default: attach;
                        they never enter the main thread)
  --out FILE            write the compacted transcript (stored view) to FILE as JSON
  --out-request FILE    write the request view (what to send the provider) to FILE
  --state FILE          the engine state (W-6): read from FILE when it exists, and the
                        new state written to it. Default: read INPUT.state.json when it
                        exists (the state an earlier --out run wrote beside its output),
                        and write OUT.state.json beside --out. With the state, the
                        summaries of an earlier run are known as the engine's own: a
                        re-compaction keeps them oldest first and rolls them up
  --out-memory FILE     write the memory records of what was folded to FILE as JSON
                        Lines (one record object a line): the only whole copy of the
                        user texts the summary names "whole in memory"
  --json                print the whole result object as JSON instead of the report
  --no-memory           project no memory records (projectMemory: false): the
                        result and --json leave them out
  --verbose             list every evicted tool result (default: the first 10
                        and a count)
  --summarizer-url URL  summarize with an OpenAI-compatible chat-completions endpoint
                        (a base URL such as https://host/v1, or the full
                        .../chat/completions URL); the API key is read from
                        ${API_KEY_ENV}. Without it the engine's built-in
                        deterministic summary is used.
  --model NAME          the summarizer model (required with --summarizer-url)
  --timeout-ms N        how long the summarizer may take to answer, milliseconds
                        (default: ${DEFAULT_TIMEOUT_MS}); past it the command fails
                        with "error: timeout: ..." (exit 1)
  -h, --help            show this help

Exit status: 0 on success, 1 on error (printed as "error: <code>: <message>").`

/** Whether `text` is itself the provider document of `format` (not a log to convert). */
function isProviderText(wasm, kind, text, format) {
  if (kind !== 'auto') return kind === format
  try {
    return wasm.detectFormat(text) === format
  } catch {
    return false
  }
}

/**
 * JSON text re-indented like `JSON.stringify(value, null, 2)`, token by token, so every
 * number keeps its exact digits (issue 14: no rounding past 2^53).
 */
export function indentJson(text) {
  let out = ''
  let depth = 0
  const pad = () => '\n' + '  '.repeat(depth)
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      out += text.slice(i, j + 1)
      i = j
    } else if (c === '{' || c === '[') {
      let j = i + 1
      while (j < text.length && /\s/.test(text[j])) j++
      if (text[j] === (c === '{' ? '}' : ']')) {
        out += c + text[j]
        i = j
      } else {
        depth++
        out += c + pad()
      }
    } else if (c === '}' || c === ']') {
      depth--
      out += pad() + c
    } else if (c === ',') {
      out += ',' + pad()
    } else if (c === ':') {
      out += ': '
    } else if (!/\s/.test(c)) {
      out += c
    }
  }
  return out
}

/**
 * The engine state a re-run starts from (W-6, Y-4): `args.stateIn` (`--state FILE`, else
 * `INPUT.state.json`) parsed, when that file exists; `null` otherwise (a new session).
 * Sets `args.stateRead` to the file read. Errors: `io_error` (unreadable), `invalid_state`
 * (not JSON; the engine checks its fields).
 */
async function readState(args) {
  if (!args.stateIn || !existsSync(args.stateIn)) return null
  let text
  try {
    text = await readFile(args.stateIn, 'utf8')
  } catch (err) {
    throw fail('io_error', `cannot read ${args.stateIn}: ${err.message}`)
  }
  try {
    const state = JSON.parse(text)
    args.stateRead = args.stateIn
    return state
  } catch (err) {
    throw fail('invalid_state', `${args.stateIn} is not the JSON state a run wrote (${err.message})${args.stateGiven ? '' : '; it was read because it sits beside INPUT: pass --state FILE to name another'}`)
  }
}

/** An error carrying a stable `code`, printed as `error: <code>: <message>`. */
function fail(code, message) {
  return Object.assign(new Error(message), { code })
}

/**
 * The only code that talks to the wasm engine. Returns `{ format, decision, out }`.
 * `options` = { profile?, contextWindow? }; `summarize` is optional.
 */
async function runEngine({ kind, text, options, summarize, importOptions, timeoutMs, state = null }) {
  let wasm
  try {
    wasm = await import('../pkg/node/context_compactor.js')
  } catch (err) {
    throw fail('not_built', `cannot load the wasm package (${err.message}); run \`npm run build\``)
  }
  if (typeof wasm.importTranscript !== 'function' || typeof wasm.ContextCompactor !== 'function') {
    throw fail('not_implemented', 'this build does not export importTranscript / ContextCompactor yet')
  }
  const imported = wasm.importTranscript(kind, text, importOptions ?? {})
  const { format, document } = imported
  // issue 14: a provider-format file goes in as its own text (JSON.parse would round
  // integers past 2^53); a converted log goes in as the converted document
  const input = isProviderText(wasm, kind, text, format) ? text : document
  const compactor = new wasm.ContextCompactor({ format, ...options })
  // C-1 / I-3: the usage a log recorded (the importer's, else the newest assistant row's)
  const usage = imported.usage ?? logUsage(kind, text)
  const signals = usage ? { usage } : {}
  const decision = compactor.check(state, input, signals)
  const contextWindow = compactor.config.contextWindow
  // --json prints the memory records too (the library leaves them out of its result by default)
  // I-6: the summarizer is bounded (the engine's timeoutMs; the request itself is aborted too)
  const out = await compactor.compact(state, input, { ...signals, force: true, resultText: true, memoryRecords: 'result', ...(summarize ? { summarize, timeoutMs } : {}) })
  return { format, decision, out, contextWindow, usage, imported }
}

/** The import lines of the report: warning count, the first few, subagent runs. */
export function importLines(imported) {
  const warnings = imported?.warnings ?? []
  const lines = [`import:     ${warnings.length} warning${warnings.length === 1 ? '' : 's'}${imported?.subagents?.length ? `, ${imported.subagents.length} subagent run${imported.subagents.length === 1 ? '' : 's'} kept apart` : ''}`]
  for (const w of warnings.slice(0, WARNINGS_SHOWN)) {
    const msg = String(w.message ?? '')
    lines.push(`  ${w.line != null ? `line ${w.line}` : '-'} ${w.code}: ${msg.length > 120 ? `${msg.slice(0, 119)}…` : msg}`)
  }
  if (warnings.length > WARNINGS_SHOWN) lines.push(`  … and ${warnings.length - WARNINGS_SHOWN} more`)
  return lines
}

/**
 * The provider usage a Claude Code log recorded for its newest answer: `message.usage`
 * of the last `assistant` line (Anthropic shape). `undefined` for other inputs or
 * when no line carries one.
 */
export function logUsage(kind, text) {
  const head = text.slice(0, 4096)
  const looksLikeLog = head.includes('"session_id"') || head.includes('"sessionId"')
  if (kind !== 'claude-code-jsonl' && !(kind === 'auto' && looksLikeLog)) return undefined
  const lines = text.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i].trim()
    if (!line.includes('"usage"')) continue
    try {
      const row = JSON.parse(line)
      if (row?.type === 'assistant' && row.message?.usage && typeof row.message.usage === 'object') return row.message.usage
    } catch { /* not a JSON line: the importer reports it */ }
  }
  return undefined
}

/**
 * The `warning: memory_not_written ...` line for `records` (the result's memory records)
 * when they hold folded text this command writes nowhere, else `null`. Names how many
 * user texts (user messages with a narrative record) exist only in those records.
 */
export function memoryNotWritten(records) {
  if (!records?.length) return null
  const users = new Set(records.filter((r) => r?.role === 'user' && r?.kind === 'narrative').map((r) => r.messageId))
  const what = users.size
    ? `${n(users.size)} user text${users.size === 1 ? '' : 's'} exist${users.size === 1 ? 's' : ''} only in memory records (${n(records.length)} in all) that were not written`
    : `${n(records.length)} memory record${records.length === 1 ? '' : 's'} of the folded rows were not written`
  return `warning:    memory_not_written: ${what}; pass --out-memory FILE to keep them (or --json to print them)`
}

/**
 * Where the `memory_not_written` line goes, once (issue 13: the demo printed it twice
 * when stdout and stderr reach the same place): `'stdout'`, after the report, unless
 * stdout is redirected or piped while stderr is the terminal (`'stderr'`, so the person
 * running the command still sees it). `stdoutTTY` / `stderrTTY`: `process.stdout.isTTY`
 * and `process.stderr.isTTY`.
 */
export function warningStream(stdoutTTY, stderrTTY) {
  return !stdoutTTY && stderrTTY ? 'stderr' : 'stdout'
}

/** Evicted entries shown in the report without --verbose. */
export const EVICTED_SHOWN = 10

/**
 * A `summarize` callback that POSTs an OpenAI chat-completions request and returns the
 * first choice's content. Throws on an HTTP error with `err.status` set, and with code
 * `timeout` when no whole answer came within `timeoutMs` milliseconds (default
 * DEFAULT_TIMEOUT_MS; the request is aborted, I-6).
 */
export function httpSummarizer({ url, model, apiKey, fetchImpl = globalThis.fetch, timeoutMs = DEFAULT_TIMEOUT_MS }) {
  const endpoint = /\/chat\/completions\/?$/.test(url) ? url : `${url.replace(/\/+$/, '')}/chat/completions`
  return async (req) => {
    const messages = [
      ...(req.system != null ? [{ role: 'system', content: req.system }] : []),
      ...(req.messages ?? []),
    ]
    const body = { model, messages, ...(req.maxOutputTokens != null ? { max_tokens: req.maxOutputTokens } : {}) }
    const headers = { 'content-type': 'application/json' }
    if (apiKey) headers.authorization = `Bearer ${apiKey}`
    const signal = AbortSignal.timeout(timeoutMs)
    const timedOut = () => fail('timeout', `the summarizer at ${endpoint} did not answer within ${timeoutMs} ms (--timeout-ms)`)
    let res
    try {
      res = await fetchImpl(endpoint, { method: 'POST', headers, body: JSON.stringify(body), signal })
    } catch (err) {
      if (signal.aborted) throw timedOut()
      throw fail('summarizer_unreachable', `cannot reach ${endpoint}: ${err?.cause?.message ?? err?.message ?? err}`)
    }
    let raw
    try {
      raw = await res.text()
    } catch (err) {
      if (signal.aborted) throw timedOut()
      throw fail('summarizer_unreachable', `the answer from ${endpoint} broke off: ${err?.cause?.message ?? err?.message ?? err}`)
    }
    if (!res.ok) {
      throw Object.assign(fail('summarizer_http_error', `summarizer returned HTTP ${res.status}: ${raw.slice(0, 500)}`),
        { status: res.status })
    }
    let content
    try {
      content = JSON.parse(raw)?.choices?.[0]?.message?.content
    } catch {
      throw fail('summarizer_bad_response', `summarizer response is not JSON: ${raw.slice(0, 200)}`)
    }
    if (typeof content !== 'string') {
      throw fail('summarizer_bad_response', 'summarizer response has no choices[0].message.content string')
    }
    return content
  }
}

function parse(argv) {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        format: { type: 'string', default: 'auto' },
        'context-window': { type: 'string' },
        profile: { type: 'string' },
        out: { type: 'string' },
        'out-request': { type: 'string' },
        'out-memory': { type: 'string' },
        json: { type: 'boolean', default: false },
        'no-memory': { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        'summarizer-url': { type: 'string' },
        model: { type: 'string' },
        'timeout-ms': { type: 'string' },
        subagents: { type: 'string' },
        state: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    })
  } catch (err) {
    throw fail('usage', `${err.message} (see --help)`)
  }
  const { values: v, positionals } = parsed
  if (v.help) return { help: true }
  const [command, input, ...extra] = positionals
  if (command !== 'compact') {
    throw fail('usage', command ? `unknown command "${command}" (see --help)` : 'missing command (see --help)')
  }
  if (!input) throw fail('usage', 'missing INPUT file (see --help)')
  if (extra.length) throw fail('usage', `unexpected argument "${extra[0]}" (see --help)`)
  if (!FORMATS.includes(v.format)) throw fail('usage', `unknown --format "${v.format}"; expected one of ${FORMATS.join(', ')}`)
  if (v.profile !== undefined && !PROFILES.includes(v.profile)) {
    throw fail('usage', `unknown --profile "${v.profile}"; expected one of ${PROFILES.join(', ')}`)
  }
  if (v.subagents !== undefined && !SUBAGENTS.includes(v.subagents)) {
    throw fail('usage', `unknown --subagents "${v.subagents}"; expected one of ${SUBAGENTS.join(', ')}`)
  }
  let contextWindow
  if (v['context-window'] !== undefined) {
    contextWindow = Number(v['context-window'])
    if (!Number.isSafeInteger(contextWindow) || contextWindow <= 0) {
      throw fail('usage', `--context-window must be a positive integer, got "${v['context-window']}"`)
    }
  }
  const url = v['summarizer-url']
  if (url !== undefined && !v.model) throw fail('usage', '--summarizer-url needs --model')
  if (url === undefined && v.model) throw fail('usage', '--model is only used with --summarizer-url')
  let timeoutMs = DEFAULT_TIMEOUT_MS
  if (v['timeout-ms'] !== undefined) {
    if (url === undefined) throw fail('usage', '--timeout-ms is only used with --summarizer-url')
    timeoutMs = Number(v['timeout-ms'])
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
      throw fail('usage', `--timeout-ms must be a positive integer, got "${v['timeout-ms']}"`)
    }
  }
  // Y-4 (break3 finding 7): the state file a re-run reads (the one written beside an
  // earlier --out by default) and the one this run writes
  const stateIn = v.state ?? `${input}.state.json`
  const stateOut = v.state ?? (v.out !== undefined ? `${v.out}.state.json` : undefined)
  // no output may overwrite the input or another output (break2 finding C)
  const named = [['the input', input], ['--out', v.out], ['--out-request', v['out-request']], ['--out-memory', v['out-memory']], ['the state file', stateOut]].filter(([, f]) => f !== undefined)
  for (let i = 0; i < named.length; i++) {
    for (let j = i + 1; j < named.length; j++) {
      if (resolvePath(named[i][1]) === resolvePath(named[j][1])) throw fail('usage', `${named[j][0]} and ${named[i][0]} name the same file (${named[j][1]}): each output needs its own file`)
    }
  }
  return {
    input, kind: v.format, out: v.out, stateIn, stateOut, stateGiven: v.state !== undefined, importOptions: v.subagents !== undefined ? { subagents: v.subagents } : {}, outRequest: v['out-request'], outMemory: v['out-memory'], json: v.json, verbose: v.verbose,
    options: {
      ...(v['no-memory'] ? { projectMemory: false } : {}),
      ...(v.profile !== undefined ? { profile: v.profile } : {}),
      ...(contextWindow !== undefined ? { contextWindow } : {}),
    },
    summarizer: url === undefined ? null : { url, model: v.model, apiKey: process.env[API_KEY_ENV], timeoutMs },
  }
}

const n = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : String(x ?? '?'))
const size = (m) => `${n(m?.messages)} messages, ${n(m?.bytes)} bytes, ~${n(m?.estimatedTokens)} tokens`

/** The human-readable report, one string. */
export function report({ input, format, decision, out, contextWindow, usage, verbose = false, imported, stateRead }) {
  const rw = out.rewrite ?? {}
  const lines = [
    `input:      ${input} (format: ${format})`,
    ...(imported ? importLines(imported) : []),
    `window:     ${contextWindow != null ? `${n(contextWindow)} tokens` : 'profile default'}`,
    `before:     ${size(out.before)}`,
    `after:      ${size(out.after)}`,
  ]
  if (usage) {
    const total = decision?.signals?.find((x) => x.name === 'provider_total_tokens')?.value
    lines.push(`usage:      ${total != null ? `${n(total)} tokens` : 'not read'} (recorded in the log for its newest answer)`)
  }
  if (decision) lines.push(`check:      ${decision.compact ? 'would compact' : 'would not compact'} (${decision.reason})`)
  lines.push(`status:     ${out.status} (${out.reason})`)
  const evicted = rw.evicted ?? []
  lines.push(`evicted:    ${evicted.length} tool result${evicted.length === 1 ? '' : 's'}`)
  const shown = verbose ? evicted : evicted.slice(0, EVICTED_SHOWN)
  for (const e of shown) {
    const how = e.handle ?? (e.clipped ? 'clipped' : 'no handle')
    lines.push(`  #${e.offset} ${e.toolName ?? '?'} (${e.callId ?? '?'}) -> ${how}, ${n(e.bodyBytes)} -> ${n(e.keptBytes)} bytes`)
  }
  if (shown.length < evicted.length) lines.push(`  ... and ${n(evicted.length - shown.length)} more (--verbose lists all)`)
  const s = rw.summary
  if (s) {
    const text = String(s.text ?? '')
    const first = text.split('\n').filter((l) => l.trim()).slice(0, 6)
    lines.push(`summary:    level ${s.level}, source ${typeof s.source === 'object' && s.source ? `${s.source.writer} (${s.source.coverage})` : s.source}, ${n(text.length)} chars`)
    for (const l of first) lines.push(`  | ${l.length > 100 ? `${l.slice(0, 99)}…` : l}`)
  } else {
    lines.push('summary:    none')
  }
  lines.push(`kept:       ${n(rw.retained?.length ?? 0)} messages, discarded ${n(rw.discarded?.length ?? 0)}`)
  const v = out.validation
  if (v) lines.push(`validation: ${v.ok ? 'ok' : 'FAILED'}${v.checks?.length ? ` (${v.checks.join(', ')})` : ''}`)
  // Y-4: summary rows the state does not vouch for are read as ordinary rows (their
  // order and levels are lost): say why and what to pass
  const untrusted = (out.events ?? []).find((e) => e?.type === 'warning' && e.data?.code === 'untrusted_provenance')?.data
  if (untrusted?.summaries?.length) {
    const why = stateRead ? `the state in ${stateRead} does not vouch for them: their text was edited, or the state is another run's` : 'no engine state was given: if INPUT is the --out of an earlier run, pass the state it wrote with --state FILE'
    lines.push(`warning:    untrusted_provenance: ${n(untrusted.summaries.length)} summary row${untrusted.summaries.length === 1 ? '' : 's'} (${untrusted.summaries.slice(0, 3).join(', ')}${untrusted.summaries.length > 3 ? ', ...' : ''}) read as ordinary rows; ${why}`)
  }
  const ow = out.overWindow
  if (ow) {
    const limit = ow.limit === 'threshold' ? `the compaction threshold (${n(ow.thresholdTokens)} tokens)` : `the context window (${n(ow.contextWindow)} tokens)`
    lines.push(`warning:    over_window: the next request is ~${n(ow.tokens)} tokens, over ${limit} by ${n(ow.by)}; floor ${n(ow.floorTokens)} tokens`)
  }
  return lines.join('\n')
}

export async function main(argv = process.argv.slice(2)) {
  try {
    const args = parse(argv)
    if (args.help) {
      console.log(USAGE)
      return 0
    }
    let text
    try {
      text = await readFile(args.input, 'utf8')
    } catch (err) {
      throw fail('io_error', `cannot read ${args.input}: ${err.message}`)
    }
    // a UTF-8 byte order mark (Windows editors write one) is not part of the JSON (break4 9)
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    const state = await readState(args)
    const summarize = args.summarizer ? httpSummarizer(args.summarizer) : undefined
    const { format, decision, out, contextWindow, usage, imported } = await runEngine({ kind: args.kind, text, options: args.options, summarize, importOptions: args.importOptions, timeoutMs: args.summarizer?.timeoutMs, state })
    const records = out.memory?.records ?? []
    // the records first: a transcript that names them "whole in memory" is never written without them
    if (args.outMemory) {
      try {
        await writeFile(args.outMemory, records.map((r) => `${JSON.stringify(r)}\n`).join(''))
      } catch (err) {
        throw fail('io_error', `cannot write ${args.outMemory}: ${err.message}`)
      }
    }
    if (args.out) {
      try {
        await writeFile(args.out, `${out.transcriptText != null ? indentJson(out.transcriptText) : JSON.stringify(out.transcript, null, 2)}\n`)
      } catch (err) {
        throw fail('io_error', `cannot write ${args.out}: ${err.message}`)
      }
    }
    if (args.stateOut) {
      try {
        await writeFile(args.stateOut, `${JSON.stringify(out.state, null, 2)}\n`)
      } catch (err) {
        throw fail('io_error', `cannot write ${args.stateOut}: ${err.message}`)
      }
    }
    if (args.outRequest) {
      try {
        await writeFile(args.outRequest, `${out.requestText != null ? indentJson(out.requestText) : JSON.stringify(out.request, null, 2)}\n`)
      } catch (err) {
        throw fail('io_error', `cannot write ${args.outRequest}: ${err.message}`)
      }
    }
    // break finding 1 (N-1): the records are the one whole copy of the user text the
    // summary clips or names "whole in memory"; say so when this command writes them nowhere
    const unsaved = !args.json && !args.outMemory ? memoryNotWritten(records) : null
    if (args.json) {
      if (imported?.warnings?.length) console.error(importLines(imported).join('\n'))
      // issue 14: the engine's own JSON text, re-indented (JSON.stringify of the parsed
      // result would round integers past 2^53)
      const { transcriptText, requestText, resultText, ...rest } = out
      console.log(resultText != null ? indentJson(resultText) : JSON.stringify(rest, null, 2))
    } else {
      console.log(report({ input: args.input, format, decision, out, contextWindow, usage, verbose: args.verbose, imported, stateRead: args.stateRead }))
      if (state) console.log(`state:      read ${args.stateRead} (the engine state of an earlier run)`)
      if (args.out) console.log(`wrote:      ${args.out}`)
      if (args.stateOut) console.log(`wrote:      ${args.stateOut} (engine state: pass it back with --state, or keep it beside the file)`)
      if (args.outRequest) console.log(`wrote:      ${args.outRequest} (request view)`)
      if (args.outMemory) console.log(`wrote:      ${args.outMemory} (${n(records.length)} memory record${records.length === 1 ? '' : 's'}, JSON Lines)`)
      if (unsaved) {
        if (warningStream(process.stdout.isTTY, process.stderr.isTTY) === 'stderr') console.error(unsaved)
        else console.log(unsaved)
      }
    }
    return 0
  } catch (err) {
    const code = err?.code ?? 'internal_error'
    const message = err?.message ?? String(err)
    console.error(`error: ${code}: ${message}`)
    return 1
  }
}

// Run when executed (directly or through the npm bin symlink), not when imported by tests.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main()
}
