// Runtime-neutral core of `npm run bench:stores` (bench/stores.mjs): one synthetic agent
// session driven turn by turn through a store, as a chat backend would: append the turn's
// rows (one compare-and-swap save), the compaction check (session.compact with the memory
// store; compacts only over the threshold), the request view for the model call.
// Deterministic content (no randomness): each turn is a user request, a tool call, a
// ~3 KB tool result and a short reply.

const WORDS = ['parser', 'lexer', 'cache', 'router', 'scheduler', 'allocator', 'codec', 'planner']

export function turnRows(i) {
  const w = WORDS[i % WORDS.length]
  return [
    { role: 'user', content: `step ${i}: check the ${w} for regression R-${i} and report what changed` },
    { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'run_tests', arguments: JSON.stringify({ suite: w, step: i }) } }] },
    { role: 'tool', tool_call_id: `call_${i}`, content: Array.from({ length: 60 }, (_, k) => `${w} test ${k} of step ${i}: ${k % 17 === 0 ? 'FAILED assertion at line ' + (k * 13 + i) : 'ok'}`).join('\n') },
    { role: 'assistant', content: `The ${w} suite at step ${i}: ${i % 3 === 0 ? 'one failure, fixed in place' : 'all green'}.` },
  ]
}

async function append(store, rows) {
  for (let attempt = 0; attempt < 8; attempt++) {
    const rec = await store.load()
    const revision = rec.revision + 1
    const state = rec.state ? { ...rec.state, revision } : null
    const saved = await store.save({ transcript: [...rec.transcript, ...rows], state, revision }, { expectedRevision: rec.revision, revision, patch: [] })
    if (saved?.ok !== false) return revision
  }
  throw new Error('append refused')
}

/**
 * Runs `turns` turns on `store` / `memory`; returns per-turn wall times (ms, from `now()`),
 * per-turn CPU (ms, from `cpu()` when given), the number of compactions and the final revision.
 */
export async function runSession({ api, store, memory, sessionId, turns, contextWindow, now, cpu }) {
  const compactor = new api.ContextCompactor({ format: 'openai-chat', profile: 'default', contextWindow })
  const session = new api.Session(compactor, store)
  await append(store, [{ role: 'system', content: 'You are a careful coding agent.' }])
  const wall = []
  const cpuMs = []
  let compactions = 0
  let peak = 0
  const summarize = (req) => `Summary of ${req.messages.length} messages.`
  for (let i = 0; i < turns; i++) {
    const t0 = now()
    const c0 = cpu ? cpu() : 0
    await append(store, turnRows(i))
    const out = await session.compact({ sessionId, store: memory, summarize })
    if (out.status === 'compacted') compactions++
    await session.request()
    wall.push(now() - t0)
    if (cpu) cpuMs.push(cpu() - c0)
    peak = Math.max(peak, new TextEncoder().encode(JSON.stringify(await store.load())).byteLength)
  }
  const rec = await store.load()
  const recall = await api.recallFromStore(memory, sessionId, 'regression R-3 in the lexer', { limit: 5 })
  return { wall, cpuMs, compactions, revision: rec.revision, recordBytes: new TextEncoder().encode(JSON.stringify(rec)).byteLength, peakRecordBytes: peak, recallHits: recall.hits.length }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.floor(s.length / 2)] : 0
}

export function p95(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] : 0
}
