// A browser chat UI whose session lives in IndexedDB (context-compactor/stores): the
// transcript, the engine state and the session's memory survive reloads. Each turn:
// append the user message, the compaction check before the model call, the model call
// with memory recall offered as a tool, append the reply. The model is your backend's
// OpenAI-compatible endpoint at /api/chat (never put a provider key in a page).
import init, { ContextCompactor, MemoryIndex, Session, recallFromStore, recallToolDefinition } from 'context-compactor'
import { indexedDbMemory, indexedDbStore, openIndexedDb } from 'context-compactor/stores'

await init()
const params = new URLSearchParams(location.search)
const sessionId = params.get('chat') ?? 'default'
const db = await openIndexedDb(indexedDB, 'chat-example')
const store = indexedDbStore(db, sessionId)
const memory = indexedDbMemory(db, { MemoryIndex, maxIndexes: 2 })
const compactor = new ContextCompactor({ format: 'openai-chat', profile: 'default', contextWindow: Number(params.get('window') ?? 128_000) })
const session = new Session(compactor, store)
const RECALL_TOOL = recallToolDefinition('openai-chat')

async function callModel(body) {
  const res = await fetch('/api/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!res.ok) throw new Error(`model answered ${res.status}`)
  return res.json()
}

async function turn(text) {
  // Session.append: one compare-and-swap save, reloaded and retried when another tab wrote first
  await session.append({ role: 'user', content: text })
  // the compaction check before the model call; a refused save (stale_revision: another
  // tab wrote first) is checked once more on the fresh record
  const summarize = async (req) => (await callModel({ messages: [{ role: 'system', content: req.system }, ...req.messages], max_tokens: req.maxOutputTokens })).choices[0].message.content
  let compaction = 'refused'
  for (let attempt = 0; attempt < 2 && compaction === 'refused'; attempt++) {
    try {
      compaction = (await session.compact({ sessionId, store: memory, summarize })).status
    } catch (err) {
      if (err.code !== 'stale_revision') throw err
    }
  }
  for (let step = 0; step < 4; step++) {
    const msg = (await callModel({ messages: await session.request(), tools: [RECALL_TOOL] })).choices[0].message
    if (!msg.tool_calls?.length) {
      const { revision } = await session.append({ role: 'assistant', content: msg.content })
      return { compaction, revision }
    }
    const results = []
    for (const call of msg.tool_calls) {
      const { query, limit } = JSON.parse(call.function.arguments)
      const found = await recallFromStore(memory, sessionId, query, { limit })
      results.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(found.hits.map((h) => ({ content: h.content, score: h.score }))) })
    }
    await session.append([{ role: 'assistant', content: msg.content ?? null, tool_calls: msg.tool_calls }, ...results])
  }
  throw new Error('too many tool rounds')
}

async function render() {
  const log = document.getElementById('log')
  log.replaceChildren()
  for (const m of (await store.load()).transcript) {
    if (m.role === 'system' || m.role === 'tool' || m.content == null) continue
    const row = document.createElement('div')
    row.className = `row ${m.summary_level ? 'summary' : m.role}`
    row.textContent = m.content // transcript text is data: never innerHTML
    log.append(row)
  }
}

let turns = 0
document.getElementById('form').addEventListener('submit', async (e) => {
  e.preventDefault()
  const box = document.getElementById('message')
  const text = box.value.trim()
  if (!text) return
  box.value = ''
  const status = document.getElementById('status')
  try {
    const { compaction, revision } = await turn(text)
    status.textContent = `compaction: ${compaction} · revision ${revision}`
  } catch (err) {
    status.textContent = `error: ${err.code ?? ''} ${err.message}`
  }
  await render()
  document.body.dataset.turns = String(++turns)
})
await render()
document.body.dataset.ready = 'true'
