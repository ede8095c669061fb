// Break-report findings (session 6) fixed on the fix-edges branch: the CLI's memory
// records (1, N-1), aborts through the integrations and the summarize signal (14, I-6),
// Gemini context-size errors (10, Y-6), JSON nested past the reader's limit (12),
// cache breakpoints (13, K-4), summarize results (16, Y-1).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { generateText, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { fakeModel } from '@langchain/core/testing'
import { AIMessage, HumanMessage } from '@langchain/core/messages'
import { createAgent } from 'langchain'
import { ContextCompactor, importTranscript } from 'context-compactor'
import { compactionMiddleware as aiMiddleware } from 'context-compactor/ai-sdk'
import { compactionMiddleware as lcMiddleware } from 'context-compactor/langchain'
import { warningStream } from '../../bin/context-compactor.mjs'

const bin = fileURLToPath(new URL('../../bin/context-compactor.mjs', import.meta.url))
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

async function cli(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { maxBuffer: 64 << 20 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

/** An openai-chat chat of `n` turns, each user text unique (USER-TEXT-i). */
function chat(n) {
  const rows = [{ role: 'system', content: 'You are a helpful agent.' }]
  for (let i = 0; i < n; i++) {
    rows.push({ role: 'user', content: `USER-TEXT-${i}: please look at record ${i} and tell me what changed ${'in detail '.repeat(20)}` })
    rows.push({ role: 'assistant', content: `answer ${i} ${'z'.repeat(1500)}` })
  }
  rows.push({ role: 'user', content: 'USER-TEXT-LAST: and now the summary' })
  return rows
}

test('N-1 break 1: CLI --out-memory writes the memory records; without it the report warns how many user texts only they hold', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-edges-'))
  const input = join(dir, 'chat.json')
  const rows = chat(40)
  await writeFile(input, JSON.stringify(rows))
  const outT = join(dir, 'out.json')
  const warned = await cli('compact', input, '--format', 'openai-chat', '--context-window', '4000', '--out', outT)
  assert.equal(warned.code, 0, warned.stderr)
  const line = warned.stdout.split('\n').find((l) => l.includes('memory_not_written'))
  assert.ok(line, `a warning line: ${warned.stdout}`)
  const named = Number(line.match(/memory_not_written: ([\d,]+) user texts? exist/)?.[1]?.replace(/,/g, ''))
  assert.ok(named > 0, line)
  assert.match(line, /--out-memory FILE/)
  // once: both streams are pipes here, so the line is on stdout only (issue 13)
  assert.equal(warned.stdout.split('\n').filter((l) => l.includes('memory_not_written')).length, 1, warned.stdout)
  assert.ok(!warned.stderr.includes('memory_not_written'), `printed once, not on stderr too: ${warned.stderr}`)
  // stdout redirected while stderr is the terminal: the line goes to stderr instead
  assert.deepEqual([warningStream(true, true), warningStream(false, false), warningStream(true, false), warningStream(false, true)], ['stdout', 'stdout', 'stdout', 'stderr'])

  const outM = join(dir, 'memory.jsonl')
  const saved = await cli('compact', input, '--format', 'openai-chat', '--context-window', '4000', '--out', outT, '--out-memory', outM)
  assert.equal(saved.code, 0, saved.stderr)
  assert.ok(!saved.stdout.includes('memory_not_written'), 'no warning once the records are written')
  assert.match(saved.stdout, /wrote: {6}.*memory\.jsonl \([\d,]+ memory records?, JSON Lines\)/)
  const records = (await readFile(outM, 'utf8')).trim().split('\n').map((l) => JSON.parse(l))
  assert.ok(records.length > 0)
  const userIds = new Set(records.filter((r) => r.role === 'user' && r.kind === 'narrative').map((r) => r.messageId))
  assert.equal(userIds.size, named, 'the warning counted the user texts the records hold')
  // nothing lost: every user text is in the written transcript or whole in the written records
  const transcript = await readFile(outT, 'utf8')
  const memory = records.map((r) => r.content).join('\n')
  for (let i = 0; i < 40; i++) {
    const tag = `USER-TEXT-${i}:`
    const whole = rows[2 * i + 1].content.trim()
    assert.ok(transcript.includes(JSON.stringify(whole).slice(1, -1)) || memory.includes(whole), `${tag} kept whole in --out or --out-memory`)
  }
  // --json prints the records itself: no warning
  const json = await cli('compact', input, '--format', 'openai-chat', '--context-window', '4000', '--json')
  assert.equal(json.code, 0)
  assert.ok(!json.stderr.includes('memory_not_written'))
})

/** A mock AI SDK model answering `ok`; counts its calls. */
function okModel(calls) {
  return new MockLanguageModelV4({
    doGenerate: async () => {
      calls.n++
      return { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }, warnings: [] }
    },
  })
}

test('I-6 break 14: the AI SDK middleware passes the call\'s abortSignal: an aborted generateText rejects soon, commits nothing, and summarize gets a signal that fires', async () => {
  const calls = { n: 0 }
  const seen = { started: 0, finished: 0, signalFired: false, reason: null }
  const mw = aiMiddleware({
    contextWindow: 3000,
    summarize: async (req, ctx) => {
      seen.started++
      assert.ok(ctx?.signal instanceof AbortSignal, 'summarize gets { signal }')
      ctx.signal.addEventListener('abort', () => { seen.signalFired = true; seen.reason = ctx.signal.reason })
      await sleep(3000)
      seen.finished++
      return 'summary text'
    },
  })
  const model = wrapLanguageModel({ model: okModel(calls), middleware: mw })
  const messages = []
  for (let i = 0; i < 10; i++) messages.push({ role: 'user', content: `q${i}` }, { role: 'assistant', content: 'a'.repeat(2000) })
  messages.push({ role: 'user', content: 'last' })
  const ac = new AbortController()
  setTimeout(() => ac.abort(new Error('user pressed stop')), 100)
  const t0 = Date.now()
  await assert.rejects(generateText({ model, messages, abortSignal: ac.signal, maxRetries: 0 }), (e) => {
    const err = e?.code === 'aborted' ? e : e?.cause ?? e?.lastError ?? e?.errors?.[0]
    assert.equal(err?.code, 'aborted', `${e?.name}: ${e?.message}`)
    return true
  })
  // well before the 3 s summarizer ends (a loaded machine may hold the timer a while)
  assert.ok(Date.now() - t0 < 2500, `rejected soon after the abort (${Date.now() - t0} ms)`)
  assert.equal(seen.finished, 0, 'the summarizer had not finished')
  assert.equal(seen.started, 1)
  assert.ok(seen.signalFired, 'the summarize signal fired')
  assert.equal(seen.reason?.code, 'aborted', 'its reason is the aborted error')
  assert.equal(calls.n, 0, 'the inner model is not called')
  assert.equal(mw.view.compactions.length, 0, 'no compaction recorded')
  assert.equal(mw.view.state, null, 'no state committed')
})

test('I-6 break 14: summarize gets { signal } that fires on the call\'s timeout too', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  let fired = null
  await assert.rejects(c.compact(null, chat(10), {
    force: true,
    timeoutMs: 100,
    summarize: (req, { signal }) => new Promise(() => { signal.addEventListener('abort', () => { fired = signal.reason }) }),
  }), (e) => e.code === 'timeout')
  assert.equal(fired?.code, 'timeout', 'the callback was told to stop')
})

test('I-6 break 14: the LangChain middleware honours the invocation\'s signal: a cancelled invoke commits no compaction', async () => {
  const model = fakeModel()
  model.respond(new AIMessage({ content: 'ok', id: 'a' }))
  let done = 0
  let fired = false
  const middleware = lcMiddleware({
    contextWindow: 3000,
    summarize: async (req, { signal }) => {
      signal.addEventListener('abort', () => { fired = true })
      await sleep(1500)
      done++
      return 'sum'
    },
  })
  const agent = createAgent({ model, tools: [], middleware: [middleware] })
  const messages = []
  for (let i = 0; i < 10; i++) messages.push(new HumanMessage(`q${i}`), new AIMessage('a'.repeat(2000)))
  messages.push(new HumanMessage('last'))
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 100)
  await assert.rejects(agent.invoke({ messages }, { signal: ac.signal }))
  await sleep(1700)
  assert.ok(fired, 'the summarize signal fired')
  assert.equal(middleware.stats().compactions.length, 0, 'no compaction recorded for the cancelled invoke')
  assert.equal(middleware.stats().state, null, 'no state committed')
  assert.equal(done, 1, 'the (uncancellable) sleep still ended; its result was dropped')
})

test('Y-6 break 10: Gemini / GenAI SDK / Vertex context-size errors fall back to the mechanical summary; a bare 400 does not', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const errors = {
    genaiApiError: Object.assign(new Error('{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}'), { name: 'ApiError', status: 400 }),
    geminiRest: Object.assign(new Error('The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).'), { code: 400, status: 'INVALID_ARGUMENT' }),
    vertex: new Error('Unable to submit request because the input token count is 1200000 but model only supports up to 1048576. Reduce the input token count and try again.'),
  }
  for (const [name, err] of Object.entries(errors)) {
    const r = await c.compact(null, chat(10), { force: true, summarize: () => { throw err } })
    assert.equal(r.status, 'compacted', name)
    assert.equal(r.rewrite.summary.source.writer, 'mechanical', name)
    assert.ok(r.events.some((e) => e.type === 'warning' && e.data?.code === 'mechanical_fallback'), name)
  }
  const bare = Object.assign(new Error('Request contains an invalid argument.'), { status: 400 })
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => { throw bare } }), (e) => e === bare)
})

test('Y-6 break3 10: llama.cpp server\'s context-size error falls back to the mechanical summary', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const errors = {
    message: Object.assign(new Error('400 the request exceeds the available context size, try increasing it'), { status: 400 }),
    typeOnly: Object.assign(new Error('400 bad request'), { status: 400, type: 'exceed_context_size_error' }),
  }
  for (const [name, err] of Object.entries(errors)) {
    const r = await c.compact(null, chat(10), { force: true, summarize: () => { throw err } })
    assert.equal(r.status, 'compacted', name)
    assert.equal(r.rewrite.summary.source.writer, 'mechanical', name)
  }
  const bare = Object.assign(new Error('400 the request is malformed'), { status: 400 })
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => { throw bare } }), (e) => e === bare)
})

test('Y-1 break 16: unreadable or malformed summarize results are typed summary_failed errors that say what is wrong', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const boom = new Error('boom get')
  const proxy = new Proxy({}, { get() { throw boom } })
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => proxy }), (e) => {
    assert.equal(e.code, 'summary_failed')
    assert.match(e.message, /summarize callback returned a value that cannot be read .*boom get/)
    assert.equal(e.cause, boom)
    assert.ok(e.state, 'with the state')
    return true
  })
  const getterErr = new TypeError('getter')
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => ({ get text() { throw getterErr } }) }), (e) => {
    assert.equal(e.code, 'summary_failed')
    assert.match(e.message, /reading `text` of the summarize callback's result threw: getter/)
    assert.equal(e.cause, getterErr)
    return true
  })
  for (const [ret, re] of [[{ foo: 1 }, /returned an object without a string `text` \(it has no `text`\)/], [{ text: 5 }, /without a string `text` \(it has `text` of type number\)/], [['a'], /returned an array instead of a string or \{ text \}/]]) {
    await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => ret }), (e) => {
      assert.equal(e.code, 'summary_failed', JSON.stringify(ret))
      assert.match(e.message, re)
      assert.doesNotMatch(e.message, /empty summary/)
      return true
    })
  }
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => ({ text: '  ' }) }), (e) => e.code === 'summary_failed' && /empty/.test(e.message))
})

test('K-4 break 13: toRequest with cacheBreakpoints never returns more than 4 cache_control marks', async () => {
  const c = new ContextCompactor({ format: 'anthropic', contextWindow: 3000 })
  const cc = { type: 'ephemeral' }
  const mk = (marks) => {
    const doc = { system: [{ type: 'text', text: 'sys' }], messages: [] }
    for (let i = 0; i < 8; i++) {
      doc.messages.push({ role: 'user', content: [{ type: 'text', text: `q${i} ${'x'.repeat(800)}`, ...(marks.includes(i) ? { cache_control: cc } : {}) }] }, { role: 'assistant', content: [{ type: 'text', text: `a${i} ${'y'.repeat(800)}` }] })
    }
    doc.messages.push({ role: 'user', content: [{ type: 'text', text: 'latest' }] })
    return doc
  }
  for (const marks of [[], [6], [5, 6], [4, 5, 6], [3, 4, 5, 6]]) {
    const doc = mk(marks)
    const out = await c.compact(null, doc, { force: true })
    for (const d of [doc, out.transcript]) {
      const req = c.toRequest(d, out.state, { cacheBreakpoints: true })
      const n = JSON.stringify(req).split('"cache_control"').length - 1
      assert.ok(n <= 4, `host marks ${marks.length}: ${n} marks`)
      if (d === doc) assert.equal(n, Math.min(4, marks.length + 2), `host marks ${marks.length}: the engine fills what is left (system, last message)`)
    }
  }
})

test('F-1 break 12: nesting past the reader limit: a typed error naming the row; a 5,000-deep Claude Code field is read, not torn', () => {
  const deep = (d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`
  const c = new ContextCompactor({ format: 'gemini', contextWindow: 4000 })
  const msgs = (d) => `[{"role":"user","parts":[{"text":"Parse the file."}]},{"role":"model","parts":[{"functionCall":{"name":"parse","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"parse","response":${deep(d)}}}]},{"role":"model","parts":[{"text":"parsed"}]}]`
  assert.doesNotThrow(() => c.check(null, msgs(100)))
  assert.throws(() => c.check(null, msgs(5000)), (e) => {
    assert.equal(e.code, 'invalid_transcript')
    // counted from the document's top (its array, the row's 4 levels, then 5,000), with where
    assert.match(e.message, /^message 2: the JSON value is nested 5005 levels deep \(objects \/ arrays inside each other\) at \.parts\[0\]\.functionResponse\.response\.a/)
    return true
  })
  const rows = [
    { type: 'user', sessionId: 's', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'Please fix the build.' } },
    { type: 'assistant', sessionId: 's', uuid: 'u2', parentUuid: 'u1', message: { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] } },
    { type: 'user', sessionId: 's', uuid: 'u3', parentUuid: 'u2', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok rows' }] }, toolUseResult: 'DEEP' },
    { type: 'user', sessionId: 's', uuid: 'u4', parentUuid: 'u3', message: { role: 'user', content: 'Now add a test, and never use unwrap.' }, toolUseResult: 'DEEP' },
  ]
  const log = rows.map((r) => JSON.stringify(r).replace('"DEEP"', deep(5000))).join('\n') + '\n'
  const r = importTranscript('claude-code-jsonl', log)
  assert.deepEqual(r.warnings.map((w) => [w.line, w.code]), [[3, 'nested_too_deep'], [4, 'nested_too_deep']])
  assert.doesNotMatch(r.warnings[0].message, /torn/)
  const text = JSON.stringify(r.document)
  assert.ok(text.includes('Now add a test, and never use unwrap.') && text.includes('ok rows'))
})

test('E-4 / M-1 break 17: a cleared result whose body memory holds says so (recall it), not "not recoverable"', async () => {
  const { MemoryIndex } = await import('context-compactor')
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 20000, clearToolUses: { trigger: 1000, keep: 1 } })
  const m = [{ role: 'user', content: 'go' }]
  for (let i = 0; i < 5; i++) m.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read', arguments: '{}' } }] }, { role: 'tool', tool_call_id: `c${i}`, content: `SECRET-FINDING-${i} ${'q'.repeat(3000)}` })
  m.push({ role: 'assistant', content: 'done' })
  const mem = new MemoryIndex()
  const out = await c.compact(null, m, { memory: mem, sessionId: 's' })
  const placeholder = out.transcript[2].content
  assert.match(placeholder, /in session memory: recall it/)
  assert.doesNotMatch(placeholder, /not recoverable/)
  assert.ok(mem.recall('s', 'SECRET-FINDING-0', { limit: 1 }).hits[0].content.includes('SECRET-FINDING-0'), 'and recall finds it')
  // with no memory hook the body is in no memory: the placeholder says so
  const bare = await c.compact(null, m, {})
  assert.match(bare.transcript[2].content, /not recoverable/)
})

test('M-2 break 17: recallFromStore / enumerateStore give a thrown non-Error a memory_failed code (an Error passes through)', async () => {
  const { recallFromStore, enumerateStore } = await import('context-compactor')
  for (const [name, thrown] of [['string', 'x'], ['null', null], ['number', 42]]) {
    await assert.rejects(recallFromStore({ search: () => { throw thrown } }, 's', 'q'), (e) => {
      assert.ok(e instanceof Error, name)
      assert.equal(e.code, 'memory_failed', name)
      assert.match(e.message, /store\.search\(\) threw a value that is not an Error/)
      assert.equal(e.cause, thrown)
      return true
    })
  }
  await assert.rejects(recallFromStore({ search: async () => { throw 42 } }, 's', 'q'), (e) => e.code === 'memory_failed' && e.cause === 42)
  await assert.rejects(enumerateStore({ enumerate: () => { throw 'boom' } }, 's', {}), (e) => e.code === 'memory_failed' && /store\.enumerate\(\) threw .*"boom"/.test(e.message))
  const own = new Error('mine')
  await assert.rejects(recallFromStore({ search: () => { throw own } }, 's', 'q'), (e) => e === own)
})

test('N-1 break2 C: CLI outputs may not overwrite the input or each other (usage error, nothing written)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-edges-'))
  const input = join(dir, 'chat.json')
  const original = JSON.stringify(chat(40))
  await writeFile(input, original)
  const outT = join(dir, 'out.json')
  for (const args of [['--out', outT, '--out-memory', outT], ['--out-memory', input], ['--out', input], ['--out', outT, '--out-request', join(dir, '.', 'out.json')]]) {
    const r = await cli('compact', input, '--format', 'openai-chat', '--context-window', '4000', ...args)
    assert.equal(r.code, 1, args.join(' '))
    assert.match(r.stderr, /^error: usage: .* name the same file/m, args.join(' '))
  }
  assert.equal(await readFile(input, 'utf8'), original, 'the input is untouched')
  await assert.rejects(readFile(outT, 'utf8'), 'no output was written')
})

test('Y-6 break5 11: an AI SDK APICallError (statusCode 413) and text-generation-inference\'s 422 input validation error fall back to the mechanical summary', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const errors = {
    aiSdk413: Object.assign(new Error('Request Entity Too Large'), { name: 'AI_APICallError', statusCode: 413 }),
    tgi422: Object.assign(new Error('Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5012 `inputs` tokens and 512 `max_new_tokens`'), { status: 422 }),
  }
  for (const [name, err] of Object.entries(errors)) {
    const r = await c.compact(null, chat(10), { force: true, summarize: () => { throw err } })
    assert.equal(r.status, 'compacted', name)
    assert.equal(r.rewrite.summary.source.writer, 'mechanical', name)
  }
  const other = Object.assign(new Error('Bad Request'), { name: 'AI_APICallError', statusCode: 400 })
  await assert.rejects(c.compact(null, chat(10), { force: true, summarize: () => { throw other } }), (e) => e === other)
})

test('Y-5 break5 1: an openai-chat tool result given as a plain string that opens as an error is a call that ran and failed (object and text input)', async () => {
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 3000 })
  const rows = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'Book the flight.' }]
  rows.push({ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book_flight', arguments: '{"id":"F1"}' } }] })
  rows.push({ role: 'tool', tool_call_id: 'c1', content: 'Error: payment amount does not add up' })
  rows.push({ role: 'assistant', content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"app.log"}' } }] })
  // a reader's result that names its tool (LangChain ToolMessage, OpenAI `name`): its content, not a failure
  rows.push({ role: 'tool', tool_call_id: 'c2', name: 'read_file', content: 'ERROR: 2026-01-01 disk full\nINFO: retried' })
  for (let i = 0; i < 8; i++) rows.push({ role: 'user', content: `more ${i} ` + 'x'.repeat(600) }, { role: 'assistant', content: `ok ${i}` })
  for (const input of [rows, JSON.stringify(rows)]) {
    const r = await c.compact(null, input, { force: true })
    assert.equal(r.status, 'compacted')
    const s = r.rewrite.summary.text
    const line = s.split('\n').find((l) => l.includes('book_flight'))
    assert.match(line, /failed/, s)
    const read = s.split('\n').filter((l) => l.includes('read_file') || l.includes('app.log'))
    assert.ok(read.length > 0 && read.every((l) => !/failed/.test(l)), s)
  }
})

test('M-1 W-3: a memory hook that throws a non-Error rejects with memory_failed (not summary_failed), the thrown value as cause', async () => {
  const msgs = [{ role: 'user', content: 'first task please do X' }, { role: 'assistant', content: 'ok ' + 'x'.repeat(3000) }, { role: 'user', content: 'second' }, { role: 'assistant', content: 'done ' + 'y'.repeat(3000) }, { role: 'user', content: 'third' }]
  const c = new ContextCompactor({ format: 'openai-chat', contextWindow: 2000 })
  for (const thrown of ['a string', 42]) {
    await assert.rejects(c.compact(null, msgs, { force: true, memory: { add () { throw thrown } } }), (e) => e.code === 'memory_failed' && e.cause === thrown && e.state != null)
  }
})
