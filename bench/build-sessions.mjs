#!/usr/bin/env node
// Builds long OpenAI-chat sessions for the benchmark from the real transcripts in
// ../shared/transcripts (tau-bench and SWE-agent), imported with the package's own
// `importTranscript` so call ids are already unique within each source.
//
// A session is: the tau-bench system prompt, then the sources' conversations (system
// rows of later sources become user rows), repeated as often as needed. Every copy k of
// source j (but the very first, kept as is) gets every tool-call id suffixed with `~c<k>s<j>`,
// so ids stay unique across sources and copies. The session is cut right after a user
// request (never inside a tool exchange) at
// the last such point under the target size, so pairing stays valid; `validate` checks
// that with the package (a forced compaction must not reject the input).
//
// Generated sessions go to a temp dir, never into the repository.
// Usage: node bench/build-sessions.mjs [sizeMB ...]   (default: 1 10 50)
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const SHARED = resolve(root, '..', 'shared', 'transcripts')
export const OUT_DIR = join(tmpdir(), 'context-compactor-bench')
export const MB = 1024 * 1024

function listTraj(dir) {
  const out = []
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...listTraj(p))
    else if (name.endsWith('.traj')) out.push(p)
  }
  return out
}

/** The real transcripts as imported documents: [{ name, kind, messages }]. */
export function loadSources(wasm) {
  if (!existsSync(SHARED)) throw new Error(`no shared transcripts at ${SHARED}`)
  const sources = []
  const tau = join(SHARED, 'tau-bench', 'gpt-4o-airline.json')
  sources.push({ name: 'tau-bench/gpt-4o-airline.json', kind: 'tau-bench', file: tau })
  for (const f of listTraj(join(SHARED, 'swe-agent'))) {
    sources.push({ name: f.slice(SHARED.length + 1), kind: 'swe-agent-traj', file: f })
  }
  for (const s of sources) {
    const { format, document } = wasm.importTranscript(s.kind, readFileSync(s.file, 'utf8'))
    if (format !== 'openai-chat') throw new Error(`${s.name}: imported as ${format}`)
    s.messages = document.messages
  }
  return sources
}

function suffixIds(msg, suffix) {
  if (!suffix) return msg
  const m = { ...msg }
  if (Array.isArray(m.tool_calls)) m.tool_calls = m.tool_calls.map((c) => ({ ...c, id: `${c.id}${suffix}` }))
  if (typeof m.tool_call_id === 'string') m.tool_call_id = `${m.tool_call_id}${suffix}`
  return m
}

/**
 * `messages` up to the last point where every tool call is answered: a source that ends
 * on a call with no result (a SWE-agent trajectory's final `submit`) would leave that call
 * open in the session, and no later row could be a cut point.
 */
function answered(messages) {
  let open = 0
  let end = 0
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) open += m.tool_calls.length
    if (m.role === 'tool') open = Math.max(0, open - 1)
    if (open === 0) end = i + 1
  }
  return messages.slice(0, end)
}

/**
 * Builds one session of at most `targetBytes` UTF-8 bytes of JSON (`{"messages":[...]}`).
 * Returns `{ text, messages, bytes }`.
 */
export function buildSession(sources, targetBytes) {
  const head = sources[0].messages[0]
  if (head?.role !== 'system') throw new Error('tau-bench import does not start with its system prompt')
  const out = [head]
  let bytes = Buffer.byteLength(JSON.stringify({ messages: [head] }))
  // cut point: (message count, bytes) right after a user request with no call open
  let cut = { count: out.length, bytes }
  let open = 0
  for (let copy = 0; bytes < targetBytes; copy++) {
    for (let j = 0; j < sources.length && bytes < targetBytes; j++) {
      const suffix = copy === 0 && j === 0 ? '' : `~c${copy}s${j}`
      const msgs = answered(sources[j].messages)
      for (let i = j === 0 ? 1 : 0; i < msgs.length; i++) {
        let m = suffixIds(msgs[i], suffix)
        if (m.role === 'system') m = { ...m, role: 'user' }
        if (bytes >= targetBytes) break
        if (m.role === 'assistant' && Array.isArray(m.tool_calls)) open += m.tool_calls.length
        if (m.role === 'tool') open = Math.max(0, open - 1)
        out.push(m)
        bytes += Buffer.byteLength(JSON.stringify(m)) + 1
        if (m.role === 'user' && open === 0 && bytes <= targetBytes) cut = { count: out.length, bytes }
      }
    }
  }
  // the session ends with a user request: the turn the next model call answers
  out.length = cut.count
  const ids = new Set()
  for (const m of out) {
    for (const c of m.tool_calls ?? []) {
      if (ids.has(c.id)) throw new Error(`duplicate tool call id ${c.id}`)
      ids.add(c.id)
    }
  }
  const text = JSON.stringify({ messages: out })
  return { text, messages: out.length, bytes: Buffer.byteLength(text) }
}

/** Pairing check with the package: a forced compaction must not reject the input. */
export async function validate(wasm, text) {
  const c = new wasm.ContextCompactor({ format: 'openai-chat' })
  try {
    const r = await c.compact(null, text, { force: true, summarize: () => 'ok' })
    return r.status
  } catch (e) {
    if (['unpaired_tool_result', 'unanswered_tool_call', 'duplicate_tool_call_id', 'invalid_transcript'].includes(e.code)) {
      throw new Error(`built session is not a valid transcript: ${e.code}: ${e.message}`)
    }
    throw e
  }
}

/** Path of the session of `mb` MB, building (and validating) it when missing. */
export async function sessionFile(wasm, mb, sources) {
  mkdirSync(OUT_DIR, { recursive: true })
  const path = join(OUT_DIR, `openai-chat-${mb}mb.json`)
  if (!existsSync(path)) {
    const s = buildSession(sources ?? loadSources(wasm), Math.round(mb * MB))
    await validate(wasm, s.text)
    writeFileSync(path, s.text)
  }
  return path
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wasm = await import('../pkg/node/context_compactor.js')
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  const sources = loadSources(wasm)
  for (const mb of sizes.length ? sizes : [1, 10, 50]) {
    const s = buildSession(sources, Math.round(mb * MB))
    const status = await validate(wasm, s.text)
    mkdirSync(OUT_DIR, { recursive: true })
    const path = join(OUT_DIR, `openai-chat-${mb}mb.json`)
    writeFileSync(path, s.text)
    console.log(`${path}: ${s.messages} messages, ${s.bytes} bytes, forced compaction: ${status}`)
  }
}
