#!/usr/bin/env node
// Shadow-stack high-water mark per call (a benchmark, not a test): the module's stack is
// the first region of its memory ([0, stack top), rustc's stack-first layout, growing
// down), which starts zeroed, so after a call on a fresh instance the lowest non-zero byte
// below the stack top is as deep as that call's stack went (a write of zeros only at the
// deepest point would read shallower; read the figure with some margin). The stack top is
// the initial value of the module's first global (`__stack_pointer`). Each scenario runs
// on a fresh instance of each build and prints the bytes used and the share of the stack.
// Scenarios: the deepest JSON the reader accepts (128 levels, F-1) in each place a host
// value is read (rows of every provider format, tool arguments, results, state, options,
// memory records, importTranscript), checked, compacted (forced, a summarize hook, records
// in the result), toRequest; a value past the limit (the typed error's path); the golden
// compaction and the 1 MB bench session.
// Usage: node bench/stack.mjs [NAME=CHECKOUT ...]   (default: this checkout)
import { readFileSync, existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { OUT_DIR } from './build-sessions.mjs'
import { GOLDEN_OPTIONS, goldenSummarize } from '../tests/runtime/golden.mjs'

const named = process.argv.slice(2).filter((a) => a.includes('='))
const builds = named.length ? named.map((a) => a.split('=')) : [['this', '.']]

/** The initial value of the module's first global (wasm-ld's `__stack_pointer`). */
function stackTop(bytes) {
  let p = 8
  const leb = () => {
    let v = 0, shift = 0, b
    do { b = bytes[p++]; v |= (b & 0x7f) << shift; shift += 7 } while (b & 0x80)
    return v
  }
  while (p < bytes.length) {
    const id = bytes[p++]
    const size = leb()
    const end = p + size
    if (id === 6) {
      leb() // count
      p += 2 // value type, mutability
      if (bytes[p++] !== 0x41) throw new Error('first global is not an i32.const')
      return leb() >>> 0
    }
    p = end
  }
  throw new Error('no global section')
}

let tag = 0
async function fresh(root) {
  const dir = join(resolve(root), 'pkg', 'web')
  const bytes = readFileSync(join(dir, 'context_compactor_bg.wasm'))
  const mod = await import(`${pathToFileURL(join(dir, 'context_compactor.js')).href}?stack=${tag++}`)
  const exports = mod.initSync({ module: bytes })
  return { mod, memory: exports.memory, top: stackTop(bytes) }
}

function used(memory, top) {
  const m = new Uint8Array(memory.buffer, 0, top)
  let i = 0
  while (i < top && m[i] === 0) i++
  return top - i
}

const deepText = (d, leaf = '1') => `${'{"a":'.repeat(d)}${leaf}${'}'.repeat(d)}`
const deepArr = (d) => `${'['.repeat(d)}1${']'.repeat(d)}`
const deep = (d) => JSON.parse(deepText(d))
const summarize = () => 'The user and the agent worked through earlier tasks.'
const pad = 'x'.repeat(3000)

// OpenAI chat rows with a deep value in each host-JSON place: an extra key (row at depth 2,
// so 126 more levels), tool arguments (their own JSON text), a result body that is JSON
const openai = (d) => {
  const rows = []
  for (let i = 0; i < 12; i++) {
    rows.push({ role: 'user', content: `task ${i} ${pad}`, extra: deep(d - 2) })
    rows.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run', arguments: deepText(d) } }] })
    rows.push({ role: 'tool', tool_call_id: `c${i}`, content: `${deepText(d)} ${pad}` })
    rows.push({ role: 'assistant', content: `done ${i}`, extra: JSON.parse(deepArr(d - 2)) })
  }
  return rows
}
const anthropic = (d) => ({
  system: 'sys',
  messages: Array.from({ length: 8 }, (_, i) => [
    { role: 'user', content: `task ${i} ${pad}` },
    { role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'run', input: deep(d - 5) }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `${deepText(d)} ${pad}` }] },
    { role: 'assistant', content: `done ${i}` },
  ]).flat(),
})
const gemini = (d) => Array.from({ length: 8 }, (_, i) => [
  { role: 'user', parts: [{ text: `task ${i} ${pad}` }] },
  { role: 'model', parts: [{ functionCall: { name: 'run', args: deep(d - 5) } }] },
  { role: 'user', parts: [{ functionResponse: { name: 'run', response: deep(d - 5) } }] },
  { role: 'model', parts: [{ text: `done ${i}` }] },
]).flat()

const forced = (c, t) => c.compact(null, t, { force: true, summarize, memoryRecords: 'result' })
const scenarios = {
  'openai: check, 128 deep': (m) => new m.ContextCompactor({ format: 'openai-chat' }).check(null, JSON.stringify(openai(128))),
  'openai: compact, 128 deep': (m) => forced(new m.ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }), JSON.stringify(openai(128))),
  'openai: compact object, 128 deep': (m) => forced(new m.ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }), openai(128)),
  'openai: toRequest, 128 deep': (m) => new m.ContextCompactor({ format: 'openai-chat' }).toRequest(JSON.stringify(openai(128))),
  'openai: open + append + compact': async (m) => {
    const live = new m.ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }).open(JSON.stringify(openai(128)))
    live.append(openai(127).slice(0, 4)) // the rows array is one level more
    await live.compact(null, { force: true, summarize })
  },
  'anthropic: compact, 128 deep': (m) => forced(new m.ContextCompactor({ format: 'anthropic', contextWindow: 8000 }), JSON.stringify(anthropic(128))),
  'gemini: compact, 128 deep': (m) => forced(new m.ContextCompactor({ format: 'gemini', contextWindow: 8000 }), JSON.stringify(gemini(128))),
  'openai: compact, arguments and results 5000 deep': (m) => {
    const rows = openai(128).map((r) => (r.role === 'user' || r.role === 'assistant' && !r.tool_calls ? { ...r, extra: undefined } : r))
    const text = JSON.stringify(rows).replaceAll(JSON.stringify(deepText(128)).slice(1, -1), JSON.stringify(deepText(5000)).slice(1, -1))
    return forced(new m.ContextCompactor({ format: 'openai-chat', contextWindow: 8000 }), text)
  },
  'past the limit (typed error)': (m) => {
    try {
      new m.ContextCompactor({ format: 'gemini' }).check(null, JSON.stringify(gemini(5000)))
    } catch {}
  },
  'state and options, deep': (m) => {
    try {
      new m.ContextCompactor({ format: 'openai-chat', extra: deep(126) }).check(deepText(127), JSON.stringify(openai(20)))
    } catch {}
  },
  'importTranscript claude-code, deep fields': (m) => {
    const row = (i, d) => JSON.stringify({ type: 'user', sessionId: 's', uuid: `u${i}`, parentUuid: i ? `u${i - 1}` : null, message: { role: 'user', content: `hi ${i}` }, toolUseResult: 'DEEP' }).replace('"DEEP"', deepText(d))
    m.importTranscript('claude-code-jsonl', [row(0, 120), row(1, 126), row(2, 5000)].join('\n') + '\n')
  },
  'memory index: add + recall': (m) => {
    const ix = new m.MemoryIndex()
    const content = `${deepText(120)} ${pad}`
    ix.add([{ id: 'mem-0000000000000001', session: 's', messageId: 'm1', role: 'tool', sourceRange: [0, 0], byteRange: [0, content.length], kind: 'tool_output', content, meta: deep(126) }])
    ix.recall('s', 'a a a')
  },
  golden: (m) => new m.ContextCompactor(GOLDEN_OPTIONS).compact(null, JSON.parse(readFileSync('tests/fixtures/golden.json', 'utf8')), { summarize: goldenSummarize, memoryRecords: 'result' }),
}
const session = join(OUT_DIR, 'openai-chat-1mb.json')
if (existsSync(session)) {
  const text = readFileSync(session, 'utf8')
  scenarios['1 MB session: compact + memory hook'] = (m) => new m.ContextCompactor({ format: 'openai-chat' }).compact(null, text, { summarize, memory: { add() {} } })
}

console.log(['scenario', ...builds.map(([n]) => `${n}: bytes (share of stack)`)].join(' | '))
let worst = builds.map(() => 0)
for (const [name, run] of Object.entries(scenarios)) {
  const cells = []
  for (const [k, [, root]] of builds.entries()) {
    const { mod, memory, top } = await fresh(root)
    let note = ''
    try {
      await run(mod)
    } catch (e) {
      note = ` threw ${e.constructor.name}: ${String(e.message).slice(0, 60)}`
    }
    const u = used(memory, top)
    worst[k] = Math.max(worst[k], u)
    cells.push(`${u} (${((100 * u) / top).toFixed(1)}% of ${top})${note}`)
  }
  console.log([name, ...cells].join(' | '))
}
console.log(['worst', ...worst.map(String)].join(' | '))
