// context-compactor/langchain: LangChain.js messages and a createAgent middleware (I-2).
//
//   fromLangChainMessages(messages) -> OpenAI-chat rows the engine reads (format
//                                      "openai-chat"), every BaseMessage field kept
//   toLangChainMessages(rows)       -> the BaseMessage objects back (lossless)
//   compactionMiddleware(options)   -> middleware for LangChain v1 `createAgent`
//
// Each row is an OpenAI Chat message (role, content, tool_calls / tool_call_id, so the
// engine pairs calls and results) plus one `lc` key holding the message's type and its
// other fields as given (id, name, additional_kwargs, response_metadata, tool_calls
// with their parsed args, invalid_tool_calls, usage_metadata, artifact, status, ...).
// The engine carries unknown keys through untouched. Provenance the engine stamped
// (summary rows) travels in `additional_kwargs.context_compactor` on the LangChain
// side, so the agent state is the stored view; it is removed from the messages the
// model gets (the request view, F-4).
import { AIMessage, ChatMessage, FunctionMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { toJsonSchema } from '@langchain/core/utils/json_schema'
import { createMiddleware } from 'langchain'
import { ContextCompactor, MemoryIndex } from 'context-compactor'
import { abortError, anySignal } from './stored-view.mjs'

const PROVENANCE = ['summary_level', 'artifact_ref', 'transcript_role', 'message_id', 'observation_source', 'pinned']
const SKIP = new Set(['lc_serializable', 'lc_kwargs', 'lc_namespace', 'lc_direct_tool_output', 'type', 'content'])
/** The LangGraph messages reducer's "remove every message" id. */
const REMOVE_ALL_MESSAGES = '__remove_all__'
const ROLE = { human: 'user', ai: 'assistant', system: 'system', developer: 'system', tool: 'tool', function: 'tool' }

/** LangChain message class names (the `id` tail of a serialized message) -> message type. */
const CLASS_TYPE = {
  HumanMessage: 'human', HumanMessageChunk: 'human',
  AIMessage: 'ai', AIMessageChunk: 'ai',
  SystemMessage: 'system', SystemMessageChunk: 'system',
  ToolMessage: 'tool', ToolMessageChunk: 'tool',
  FunctionMessage: 'function', FunctionMessageChunk: 'function',
  ChatMessage: 'generic', ChatMessageChunk: 'generic',
}
/** `type` of a stored message (`{ type, data }`), JS and Python spellings, chunks included. */
const STORED_TYPE = { human: 'human', ai: 'ai', system: 'system', developer: 'developer', tool: 'tool', function: 'function', generic: 'generic', chat: 'generic', ...CLASS_TYPE }

function unreadable(i, what) {
  return Object.assign(new Error(`fromLangChainMessages: message ${i} ${what}; nothing was converted`), { name: 'ContextCompactorError', code: 'invalid_transcript' })
}

const isObject = (v) => v != null && typeof v === 'object' && !Array.isArray(v)

/**
 * One LangChain message in any of its forms -> `{ type, fields, content }` (`fields`: every
 * field but `type` and `content`, as given). Forms: a `BaseMessage` instance; a stored
 * message `{ type, data }` (LangChain.js `mapChatMessagesToStoredMessages`, Python
 * `messages_to_dict`); a serialized one `{ lc: 1, type: "constructor", id: [..., class],
 * kwargs }` (`JSON.stringify` of a message, Python `dumpd`), read as data, never
 * instantiated; a plain `{ type, content, ... }` object. Anything else, a `RemoveMessage`,
 * or a message without content (a string or a list of content blocks) throws
 * `invalid_transcript` naming the index (N-1: never a row without its text).
 */
function readMessage(m, i) {
  if (m == null || typeof m !== 'object' || Array.isArray(m)) throw unreadable(i, `is ${m === null ? 'null' : Array.isArray(m) ? 'an array' : typeof m}, not a LangChain message`)
  let type
  let source
  if (typeof m.getType === 'function' || typeof m._getType === 'function') {
    type = typeof m.getType === 'function' ? m.getType() : m._getType()
    source = {}
    for (const [k, v] of Object.entries(m)) if (!SKIP.has(k)) source[k] = v
    source.content = m.content
    if (type === 'generic') source.role = m.role
  } else if (m.lc === 1 && (m.type === 'constructor' || m.type === 'secret' || m.type === 'not_implemented')) {
    const id = Array.isArray(m.id) ? m.id : []
    const cls = id[id.length - 1]
    if (m.type !== 'constructor') throw unreadable(i, `is a serialized ${m.type} (${id.join('.') || 'no id'}), not a message`)
    type = CLASS_TYPE[cls]
    if (!type) throw unreadable(i, `is a serialized ${cls === undefined ? 'object without a class id' : `"${String(cls)}"`}, not a message class LangChain stores (${Object.keys(CLASS_TYPE).join(', ')})`)
    if (!isObject(m.kwargs)) throw unreadable(i, `(${cls}) has no kwargs object`)
    source = m.kwargs
  } else if (isObject(m.data) && typeof m.type === 'string' && Object.keys(m).every((k) => k === 'type' || k === 'data')) {
    type = STORED_TYPE[m.type]
    if (!type) throw unreadable(i, `is a stored message of type "${m.type}", not one LangChain converts to a chat message (${Object.keys(STORED_TYPE).join(', ')})`)
    source = m.data
  } else if (typeof m.type === 'string') {
    type = STORED_TYPE[m.type]
    if (!type) throw unreadable(i, `has type "${m.type}", not a LangChain message type`)
    source = m
  } else {
    throw unreadable(i, 'is not a LangChain message (a BaseMessage, a stored { type, data } message, or a serialized { lc: 1, type: "constructor", id, kwargs } one)')
  }
  if (type === 'remove') throw unreadable(i, 'is a RemoveMessage (a state update, not a message)')
  const content = source.content
  if (typeof content !== 'string' && !Array.isArray(content)) {
    throw unreadable(i, `(${type}) has ${content === undefined ? 'no content' : `content of type ${content === null ? 'null' : typeof content}`}: expected a string or a list of content blocks`)
  }
  const fields = {}
  for (const [k, v] of Object.entries(source)) if (!SKIP.has(k) && v !== undefined) fields[k] = v
  return { type, fields, content }
}

/**
 * Nesting the engine reads in one row: 127 levels of objects and arrays, the row itself
 * the first (its JSON parser stops at 128, the document's array included).
 */
const MAX_ROW_DEPTH = 127

/**
 * Why `v` cannot go into a row as JSON (`[path, what]`), or `null`: a circular
 * reference, a BigInt, or nesting past MAX_ROW_DEPTH (`depth`: the level `v` would sit at, the row being 1).
 * `path` names the field. A walk over the containers (strings are leaves), with the
 * enclosing objects of the current path held to tell a cycle from a shared value.
 */
function jsonProblem(v, path, depth, open = new Set()) {
  if (typeof v === 'bigint') return [path, 'is a BigInt, which JSON cannot hold']
  if (v === null || typeof v !== 'object') return null
  if (typeof v.toJSON === 'function') {
    try { v = v.toJSON() } catch (e) { return [path, `has a toJSON() that threw (${e?.message ?? e})`] }
    if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? [path, 'is a BigInt, which JSON cannot hold'] : null
  }
  if (open.has(v)) return [path, 'refers back to an object that contains it (a circular reference)']
  if (depth > MAX_ROW_DEPTH) return [path, `is nested past ${MAX_ROW_DEPTH} levels of objects and arrays (the row being the first), deeper than the engine reads`]
  open.add(v)
  let problem = null
  if (Array.isArray(v)) {
    for (let k = 0; k < v.length && !problem; k++) problem = jsonProblem(v[k], `${path}[${k}]`, depth + 1, open)
  } else {
    for (const k of Object.keys(v)) {
      problem = jsonProblem(v[k], `${path}.${k}`, depth + 1, open)
      if (problem) break
    }
  }
  open.delete(v)
  return problem
}

/** A path shortened for a message: the first and last few steps of a long one. */
function shortPath(p) {
  if (p.length <= 120) return p
  return `${p.slice(0, 50)}...${p.slice(-50)}`
}

function argumentsText(args) {
  return typeof args === 'string' ? args : JSON.stringify(args ?? {})
}

/**
 * LangChain messages -> OpenAI Chat rows for a compactor with `format: "openai-chat"`
 * (I-2). Reads `BaseMessage` instances, stored messages (`{ type, data }`: LangChain.js
 * `mapChatMessagesToStoredMessages`, Python `messages_to_dict`) and serialized ones
 * (`{ lc: 1, type: "constructor", id, kwargs }`: `JSON.stringify` of a message, Python
 * `dumpd`), mixed freely. Every field of each message rides in the row's `lc` key;
 * provenance in `additional_kwargs.context_compactor` becomes the row's provenance keys.
 * Throws `invalid_transcript` naming the index of a message it cannot read (not an
 * object, an unknown type or class, a `RemoveMessage`, no string or block-list
 * `content`): never a row without the message's text (N-1); or of one whose fields JSON
 * cannot hold (a circular reference, a BigInt, more than 127 levels of nesting in the
 * row: what the engine reads), naming the field.
 */
export function fromLangChainMessages(messages) {
  if (!Array.isArray(messages)) throw Object.assign(new Error(`fromLangChainMessages: expected an array of messages, got ${messages === null ? 'null' : typeof messages}`), { name: 'ContextCompactorError', code: 'invalid_transcript' })
  return messages.map((m, i) => {
    const { type, fields, content } = readMessage(m, i)
    // never a row the engine cannot read as JSON (a cycle, a BigInt, 5000 levels deep):
    // the row's `content` sits at level 2, its `lc` fields at level 3
    let problem = jsonProblem(content, 'content', 2)
    for (const [k, v] of Object.entries(fields)) if (!problem) problem = jsonProblem(v, k, 3)
    if (problem) throw unreadable(i, `(${type}) cannot be written as JSON: ${shortPath(problem[0])} ${problem[1]}`)
    let provenance = {}
    const kw = fields.additional_kwargs
    if (kw && typeof kw === 'object' && kw.context_compactor && typeof kw.context_compactor === 'object') {
      provenance = kw.context_compactor
      const { context_compactor: _, ...rest } = kw
      fields.additional_kwargs = rest
    }
    const role = type === 'generic' ? (['user', 'assistant', 'system'].includes(fields.role) ? fields.role : 'user') : ROLE[type] ?? 'user'
    const row = { role, content }
    if (type === 'ai' && Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0) {
      row.tool_calls = fields.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: argumentsText(c.args) } }))
    }
    if (type === 'tool') row.tool_call_id = fields.tool_call_id
    row.lc = { type, ...fields }
    for (const k of PROVENANCE) if (provenance[k] !== undefined) row[k] = provenance[k]
    return row
  })
}

const CLASSES = { human: HumanMessage, ai: AIMessage, system: SystemMessage, tool: ToolMessage, generic: ChatMessage, function: FunctionMessage }

/**
 * OpenAI Chat rows (from `fromLangChainMessages`, or written by the engine) -> LangChain
 * messages (I-2). A row without `lc` (a summary the engine wrote) becomes a message of
 * its role; its provenance keys go to `additional_kwargs.context_compactor`, unless
 * `{ view: "request" }` is given.
 */
export function toLangChainMessages(rows, { view = 'stored' } = {}) {
  const list = Array.isArray(rows) ? rows : rows?.messages ?? []
  return list.map((row) => {
    const lc = row.lc ?? {}
    const type = lc.type ?? ({ user: 'human', assistant: 'ai', system: 'system', developer: 'system', tool: 'tool' }[row.role] ?? 'human')
    const { type: _, ...fields } = lc
    const provenance = {}
    for (const k of PROVENANCE) if (row[k] !== undefined) provenance[k] = row[k]
    if (view === 'stored' && Object.keys(provenance).length > 0) {
      fields.additional_kwargs = { ...(fields.additional_kwargs ?? {}), context_compactor: provenance }
    }
    if (type === 'ai' && !lc.tool_calls && Array.isArray(row.tool_calls)) {
      fields.tool_calls = row.tool_calls.map((c) => ({ id: c.id, name: c.function?.name, args: safeParse(c.function?.arguments), type: 'tool_call' }))
    }
    if (type === 'tool' && fields.tool_call_id === undefined) fields.tool_call_id = row.tool_call_id
    const Class = CLASSES[type] ?? HumanMessage
    return new Class({ ...fields, content: row.content ?? '' })
  })
}

function safeParse(s) {
  try { return typeof s === 'string' ? JSON.parse(s) : s ?? {} } catch { return {} }
}

/** A tool's input schema as JSON Schema (zod and standard schemas converted), for counting. */
function schemaJson(schema) {
  if (schema == null) return undefined
  try { return toJsonSchema(schema) } catch { /* not a schema LangChain converts */ }
  try { return JSON.parse(JSON.stringify(schema)) } catch { return undefined }
}

function stripProvenance(messages) {
  let changed = false
  const out = messages.map((m) => {
    const kw = m?.additional_kwargs
    if (!kw || !kw.context_compactor) return m
    changed = true
    const [row] = fromLangChainMessages([m])
    return toLangChainMessages([row], { view: 'request' })[0]
  })
  return changed ? out : messages
}

const HOOK_KEYS = ['summarize', 'curator', 'storeArtifact', 'onEvent', 'countTokens', 'sessionId', 'memory', 'embed', 'embedDimension', 'store', 'timeoutMs', 'timeouts', 'signal']

/** The engine's `aborted` error for `signal`: an `AbortError` with `code: "aborted"`
 * and `cause` the signal's reason ([`abortError`]). */
function abortedError(signal) {
  return abortError('aborted: the signal fired as the compaction settled; nothing was committed', signal.reason)
}

/**
 * `compactionMiddleware(options)`: middleware for LangChain v1 `createAgent({ model,
 * tools, middleware: [compactionMiddleware(...)] })` (I-2). Before each model call
 * (`beforeModel`) it reads the newest AI message's `usage_metadata` (I-3), checks the
 * agent's messages (plus `systemPrompt` and `tools` from the options) and, when the
 * engine says so, replaces the state's messages with the compacted ones. The state
 * keeps the engine's provenance (stored view); `wrapModelCall` sends the model the
 * request view. Options: the `ContextCompactor` options (`contextWindow`, `profile`,
 * ...; `format` is `openai-chat`) or `compactor`, and the compact hooks (`summarize`,
 * `onEvent`, `countTokens`, `timeoutMs`, `signal`, ...). The invocation's signal
 * (`agent.invoke(input, { signal })`, the runtime's `signal`) bounds the compaction with
 * the `signal` option (I-6): a cancelled invocation rejects with an `AbortError` carrying
 * `code: "aborted"` (its `cause` the signal's reason) and commits no compaction. Threads
 * (M-4): each LangGraph `thread_id` (`invoke(input, { configurable: { thread_id } })`)
 * keeps its own engine state and memory scope (`sessionId` = the thread id (a thread
 * named `"default"`: `"thread:default"`), or
 * `<sessionId option>:<thread id>`); invocations without one share the `sessionId`
 * option's scope (default `"default"`). The per-thread states are held in process for
 * the middleware's life. `.compactor`, `.memory` and `.stats(threadId?)` are exposed for
 * inspection (`{ state, compactions, threads }`: that thread's engine state, or the
 * thread-less one's; every compaction with its `thread`; the threads seen).
 */
export function compactionMiddleware(options = {}) {
  const hooks = {}
  const config = {}
  for (const [k, v] of Object.entries(options)) {
    if (HOOK_KEYS.includes(k)) hooks[k] = v
    else if (!['compactor', 'tools', 'systemPrompt', 'name'].includes(k)) config[k] = v
  }
  const compactor = options.compactor ?? new ContextCompactor({ profile: 'default', ...config, format: 'openai-chat' })
  // N-1 / M-1: with no memory hook of the host's, the folded user text a summary clips is
  // kept whole in the middleware's own in-process MemoryIndex (`middleware.memory`)
  if (hooks.memory == null && hooks.store == null && hooks.embed == null) hooks.memory = new MemoryIndex()
  const tools = options.tools?.map((t) => ({ name: t.name, description: t.description, schema: schemaJson(t.schema) }))
  const envelope = options.systemPrompt ? [{ role: 'system', content: String(options.systemPrompt) }] : []
  // M-4 (break3 finding 5): one middleware serves every thread of its agent; each
  // LangGraph thread (`thread_id` of the invocation's `configurable`) keeps its own engine
  // state, usage mark and memory scope. Invocations without a thread id share one.
  const threads = new Map()
  const threadOf = (runtime) => {
    const id = runtime?.configurable?.thread_id ?? runtime?.config?.configurable?.thread_id
    return id == null ? null : String(id)
  }
  const slot = (thread) => {
    let t = threads.get(thread)
    if (t === undefined) threads.set(thread, t = { state: null, observedId: null })
    return t
  }
  const compactions = []
  const middleware = createMiddleware({
    name: options.name ?? 'ContextCompactorMiddleware',
    beforeModel: async (agentState, runtime) => {
      const messages = agentState.messages ?? []
      if (messages.length === 0) return undefined
      const thread = threadOf(runtime)
      const t = slot(thread)
      let state = t.state
      // the memory scope: the thread id (after the `sessionId` option and a colon when both are set)
      // (break5 finding 12: a thread named "default" gets "thread:default", not the
      // thread-less invocations' scope)
      const sessionId = thread == null ? hooks.sessionId : hooks.sessionId != null ? `${hooks.sessionId}:${thread}` : thread === 'default' ? 'thread:default' : thread
      const rows = fromLangChainMessages(messages)
      // I-3: the newest answer's usage, once, against the rows that request carried
      let lastAi = -1
      for (let i = rows.length - 1; i >= 0; i--) if (rows[i].lc.type === 'ai' && rows[i].lc.usage_metadata) { lastAi = i; break }
      let usage
      if (lastAi >= 0) {
        const id = rows[lastAi].lc.id ?? `#${lastAi}`
        usage = rows[lastAi].lc.usage_metadata
        if (id !== t.observedId) {
          state = t.state = compactor.observeUsage(state, [...envelope, ...rows.slice(0, lastAi)], { usage, onEvent: hooks.onEvent })
          t.observedId = id
        }
      }
      const doc = [...envelope, ...rows]
      const inRun = rows[rows.length - 1]?.role === 'tool'
      const signals = { ...hooks, usage, tools, inRun }
      if (sessionId !== undefined) signals.sessionId = sessionId
      // break finding 14 (I-6): the invocation's signal (`invoke(..., { signal })`, the
      // runtime's) bounds the compaction with the `signal` option: a cancelled invoke
      // rejects with `aborted` and commits no compaction
      const signal = anySignal(hooks.signal, runtime?.signal)
      if (signal !== undefined) signals.signal = signal
      const decision = typeof hooks.countTokens === 'function' ? await compactor.checkAsync(state, doc, signals) : compactor.check(state, doc, signals)
      if (!decision.compact) return undefined
      const out = await compactor.compact(state, doc, signals)
      // aborted as the compaction settled: the cancelled invocation keeps nothing of it
      if (signal?.aborted) throw abortedError(signal)
      t.state = out.state
      if (out.status !== 'compacted') return undefined
      const kept = out.transcript.slice(envelope.length)
      compactions.push({ thread, before: JSON.stringify(rows).length, after: JSON.stringify(kept).length })
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...toLangChainMessages(kept)] }
    },
    wrapModelCall: async (request, handler) => {
      const messages = stripProvenance(request.messages ?? [])
      return handler(messages === request.messages ? request : { ...request, messages })
    },
  })
  Object.defineProperty(middleware, 'compactor', { value: compactor, enumerable: false })
  Object.defineProperty(middleware, 'memory', { value: hooks.memory ?? null, enumerable: false })
  Object.defineProperty(middleware, 'stats', {
    value: (thread = null) => ({ state: threads.get(thread == null ? null : String(thread))?.state ?? null, compactions, threads: [...threads.keys()] }),
    enumerable: false,
  })
  return middleware
}
