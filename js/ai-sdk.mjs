// context-compactor/ai-sdk: compaction for the Vercel AI SDK (I-1), `ai` 7.x and 6.x.
//
//   compactionMiddleware(options)  -> a LanguageModelMiddleware for wrapLanguageModel:
//                                     compacts the prompt the model is about to get.
//   prepareStepCompaction(options) -> a prepareStep function for generateText /
//                                     streamText / ToolLoopAgent.
//
// Both keep the stored view of the conversation between calls (see stored-view.mjs), in
// the instance, or with `session` (a session store) in the store through the engine's
// `Session` (rows appended with `Session.append`, compactions committed with
// `Session.compact`, both compare-and-swap):
// the SDK hands the history back in its request view on every step, and the rows a
// compaction replaced (or the compacted rows a step returned) are mapped back onto the
// stored rows, so the second, third, ... compaction of one loop still finds its summary.
// Both count the system prompt and the tool definitions and read the SDK's usage
// (LanguageModelUsage, or the provider-level usage a middleware sees).
import { ContextCompactor, MemoryIndex, Session } from 'context-compactor'
import { SessionView, StoredView, anySignal } from './stored-view.mjs'

const HOOK_KEYS = ['summarize', 'curator', 'storeArtifact', 'onEvent', 'countTokens', 'sessionId', 'memory', 'embed', 'embedDimension', 'store', 'timeoutMs', 'timeouts', 'signal']

function split(options = {}) {
  const hooks = {}
  const config = {}
  for (const [k, v] of Object.entries(options)) {
    if (HOOK_KEYS.includes(k)) hooks[k] = v
    else if (!['compactor', 'tools', 'system', 'instructions', 'session'].includes(k)) config[k] = v
  }
  const compactor = options.compactor ?? new ContextCompactor({ profile: 'default', ...config, format: 'ai-sdk' })
  return { compactor, hooks }
}

/** The conversation's loop: over the engine's `Session` on `options.session` (a session
 * store) when given, else held in this instance. */
function viewOf(options) {
  const { compactor, hooks } = split(options)
  const view = options.session != null
    ? new SessionView(compactor, options.session, hooks, { tag: 'ai-sdk', Session })
    : new StoredView(compactor, hooks)
  // N-1 / M-1: the folded user text a summary clips must be whole somewhere. With no
  // memory hook of the host's (`memory` / `store`), the helper keeps its own in-process
  // MemoryIndex (one per helper, so one conversation's scope): `view.memory`, recallable
  // with `view.memory.recall(sessionId ?? 'default', query)`.
  if (hooks.memory == null && hooks.store == null && hooks.embed == null) {
    view.hooks = { ...view.hooks, memory: new MemoryIndex() }
  }
  view.memory = view.hooks.memory ?? null
  return view
}

function systemText(s) {
  if (s == null) return undefined
  if (typeof s === 'string') return s
  if (Array.isArray(s)) return s.map(systemText).filter((t) => t != null).join('\n')
  if (typeof s === 'object' && typeof s.content === 'string') return s.content
  return JSON.stringify(s)
}

/** Tool definitions as the provider gets them: name, description, JSON schema (JSON-serializable). */
function toolDefs(tools) {
  if (tools == null) return undefined
  if (Array.isArray(tools)) return tools
  return Object.entries(tools).map(([name, t]) => ({
    name,
    description: t?.description,
    inputSchema: schemaJson(t?.inputSchema ?? t?.parameters),
  }))
}

/** JSON Schema of a tool's input: the AI SDK `Schema`'s `jsonSchema`, a standard
 * schema's own JSON Schema (zod 4), or the value when it is plain JSON. */
function schemaJson(schema) {
  if (schema == null) return undefined
  const std = schema['~standard']
  for (const get of [() => schema.jsonSchema, () => std?.jsonSchema?.input?.({ target: 'draft-07' }), () => schema.toJSONSchema?.()]) {
    try {
      const v = get()
      if (v != null && typeof v === 'object' && typeof v.then !== 'function') return JSON.parse(JSON.stringify(v))
    } catch { /* try the next form */ }
  }
  try { return JSON.parse(JSON.stringify(schema)) } catch { return undefined }
}

/**
 * `compactionMiddleware(options)`: a language-model middleware (`wrapLanguageModel({
 * model, middleware })`) that compacts the prompt before the model gets it (I-1).
 * `options`: the `ContextCompactor` options (`contextWindow`, `profile`, ...; `format`
 * is `ai-sdk`) or `compactor`, the compact hooks (`summarize`, `onEvent`,
 * `countTokens`, `storeArtifact`, memory hooks) and `session`, a session store (any
 * store of `context-compactor/stores`, or a compare-and-swap `{ load, save }`) that holds
 * the conversation: each call appends the prompt rows the store lacks with
 * `Session.append` (each row gets `message_id: "ai-sdk:<n>"`, its place in the prompt;
 * the model never sees it) and commits a compaction with `Session.compact` (a refused,
 * stale save is checked once more on the fresh record); the usage of each answer is
 * saved with the next write. Without `session` one middleware instance follows one
 * conversation (a prompt that does not continue the last one starts over); with it, a
 * prompt that continues neither the store's rows nor what was sent, or an edited one (an
 * earlier row changed or dropped), rejects with `invalid_transcript` (the prompt is
 * matched row by row, never by equal text found elsewhere). A prompt over the budget
 * with nothing to fold (`cannot_fit`) is passed on and `onEvent` gets a `warning` with
 * `data.code: "cannot_fit"` and the figures (tokens). The prompt's leading system rows
 * are the document's `system` (counted, never matched as history rows, so a changed one
 * is taken as the current one, C-2) and `params.tools` are counted; the
 * usage of each answer (generate and stream) is read.
 * The prompt is passed on unchanged (the same object) when nothing was compacted.
 * The call's `params.abortSignal` (what `generateText({ abortSignal })` passes) bounds the
 * compaction together with the `signal` option (I-6): once either fires, the request
 * rejects with an `AbortError` (a DOMException, as `fetch` rejects) carrying `code:
 * "aborted"` and `cause` the signal's reason, and nothing is committed (no stored rows, no state); the
 * `summarize` callback gets the engine's signal as `{ signal }` to cancel its own request.
 */
export function compactionMiddleware(options = {}) {
  const view = viewOf(options)
  let usage
  const observe = (u) => {
    if (u == null) return
    view.observe(u)
    usage = u
  }
  return {
    specificationVersion: 'v4',
    /** The stored view (state, compactions) of the conversation, for inspection. */
    view,
    async transformParams({ params }) {
      const prompt = params.prompt
      if (!Array.isArray(prompt) || prompt.length === 0) return params
      const last = prompt[prompt.length - 1]
      const signals = { usage, tools: toolDefs(params.tools), inRun: last?.role === 'tool' }
      // break finding 14 (I-6): the call's own `abortSignal` bounds its compaction with the
      // helper's `signal`: an aborted request rejects with `aborted`, nothing committed
      const signal = anySignal(view.hooks.signal, params.abortSignal)
      if (signal !== undefined) signals.signal = signal
      // C-2 / C-8: the leading system rows are this request's system prompt (counted as
      // the document's `system`, never matched as history rows: a changed one is current)
      let k = 0
      while (k < prompt.length - 1 && prompt[k]?.role === 'system') k++
      const lead = prompt.slice(0, k)
      const system = systemText(lead)
      const r = await view.prepare(prompt.slice(k), { envelope: k > 0 ? { system } : {}, signals, lead })
      return r.changed ? { ...params, prompt: r.rows } : params
    },
    async wrapGenerate({ doGenerate }) {
      const result = await doGenerate()
      observe(result?.usage)
      return result
    },
    async wrapStream({ doStream }) {
      const { stream, ...rest } = await doStream()
      const watch = new TransformStream({
        transform(part, controller) {
          if (part?.type === 'finish') observe(part.usage)
          controller.enqueue(part)
        },
      })
      return { stream: stream.pipeThrough(watch), ...rest }
    },
  }
}

/**
 * `prepareStepCompaction(options)`: a `prepareStep` function for `generateText`,
 * `streamText` and `ToolLoopAgent` (I-1). Before each step it reads the usage of the
 * step before, checks the history it is given (plus `system` / `instructions` and
 * `tools` from the options, or the step's `instructions`) and, when the engine says so,
 * returns `{ messages }` compacted; otherwise `{}` (the SDK sends its own messages;
 * over the budget with nothing to fold, `onEvent` gets the `cannot_fit` warning).
 * Options as `compactionMiddleware`, plus `tools` (the tool set, counted) and `system`.
 * With `session`, each step's system prompt is the record's (`{ system, messages }`):
 * the first record gets it, a changed one replaces it before the check (C-2, C-8), and
 * the steps' messages are appended to it. Memory and artifact handles are scoped by
 * `sessionId`, else the store's `sessionId` (M-2, M-4); `timeoutMs` / `signal` bound the
 * helper's own store calls (I-6).
 * The returned function carries `.view` (state, compactions, and `.session`).
 */
export function prepareStepCompaction(options = {}) {
  const view = viewOf(options)
  let observed = 0
  const fn = async (step) => {
    const steps = step?.steps ?? []
    let usage
    if (steps.length > observed) {
      usage = steps[steps.length - 1]?.usage
      view.observe(usage)
      observed = steps.length
    }
    const messages = step?.messages ?? []
    if (messages.length === 0) return {}
    const system = systemText(options.system ?? options.instructions ?? step?.instructions)
    const envelope = system == null ? {} : { system }
    const signals = { usage, tools: toolDefs(options.tools), inRun: (step?.stepNumber ?? 0) > 0 }
    const r = await view.prepare(messages, { envelope, signals })
    return r.changed ? { messages: r.rows } : {}
  }
  fn.view = view
  return fn
}
