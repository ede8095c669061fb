// The CLI shell: argument handling and the HTTP summarizer (no engine needed).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { FORMATS, httpSummarizer, report } from '../../bin/context-compactor.mjs'

const bin = fileURLToPath(new URL('../../bin/context-compactor.mjs', import.meta.url))

async function cli(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { maxBuffer: 256 << 20 })
    return { code: 0, stdout, stderr }
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

test('--help prints the usage and exits 0', async () => {
  const r = await cli('--help')
  assert.equal(r.code, 0)
  assert.match(r.stdout, /Usage:\n {2}context-compactor compact INPUT/)
  for (const flag of ['--format', '--context-window', '--profile', '--out', '--state', '--json', '--summarizer-url', '--model']) {
    assert.ok(r.stdout.includes(flag), `help mentions ${flag}`)
  }
  for (const f of FORMATS) assert.ok(r.stdout.includes(f), `help lists format ${f}`)
  assert.ok(r.stdout.includes('CONTEXT_COMPACTOR_API_KEY'))
})

test('usage errors exit 1 with "error: <code>: <message>"', async () => {
  for (const args of [[], ['compact'], ['frobnicate', 'x.json'], ['compact', 'x.json', '--bogus'],
    ['compact', 'x.json', '--format', 'nope'], ['compact', 'x.json', '--context-window=-5'], ['compact', 'x.json', '--context-window', '1.5'],
    ['compact', 'x.json', '--profile', 'nope'], ['compact', 'x.json', '--summarizer-url', 'http://x']]) {
    const r = await cli(...args)
    assert.equal(r.code, 1, `exit 1 for ${JSON.stringify(args)}`)
    assert.match(r.stderr, /^error: usage: .+\n$/, `usage error for ${JSON.stringify(args)}`)
  }
})

test('a missing input file is an io_error', async () => {
  const r = await cli('compact', '/nonexistent/input.json')
  assert.equal(r.code, 1)
  assert.match(r.stderr, /^error: io_error: cannot read \/nonexistent\/input.json/)
})

test('J-5 break4 9: a JSON transcript file that starts with a UTF-8 byte order mark is read', async () => {
  const { mkdtemp, writeFile } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = await mkdtemp(join(tmpdir(), 'cc-bom-'))
  const file = join(dir, 'bom.json')
  const rows = [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hello there' }, { role: 'assistant', content: 'hi' }]
  await writeFile(file, '\ufeff' + JSON.stringify(rows))
  const r = await cli('compact', file, '--format', 'openai-chat', '--context-window', '16000')
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stderr, /expected value/)
})

async function withServer(handler, fn) {
  const server = createServer(handler)
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    return await fn(`http://127.0.0.1:${server.address().port}`)
  } finally {
    server.close()
  }
}

test('httpSummarizer POSTs an OpenAI chat-completions request and returns the content', async () => {
  let seen
  await withServer((req, res) => {
    let body = ''
    req.on('data', (c) => { body += c })
    req.on('end', () => {
      seen = { url: req.url, auth: req.headers.authorization, body: JSON.parse(body) }
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'SUMMARY' } }] }))
    })
  }, async (base) => {
    const summarize = httpSummarizer({ url: `${base}/v1`, model: 'm1', apiKey: 'k123' })
    const text = await summarize({ system: 'SYS', messages: [{ role: 'user', content: 'hi' }], maxOutputTokens: 77 })
    assert.equal(text, 'SUMMARY')
  })
  assert.equal(seen.url, '/v1/chat/completions')
  assert.equal(seen.auth, 'Bearer k123')
  assert.deepEqual(seen.body, {
    model: 'm1',
    messages: [{ role: 'system', content: 'SYS' }, { role: 'user', content: 'hi' }],
    max_tokens: 77,
  })
})

test('httpSummarizer throws with err.status on an HTTP error', async () => {
  await withServer((req, res) => {
    req.resume()
    res.statusCode = 429
    res.end('slow down')
  }, async (base) => {
    const summarize = httpSummarizer({ url: `${base}/v1/chat/completions`, model: 'm1' })
    await assert.rejects(summarize({ system: 's', messages: [], maxOutputTokens: 10 }),
      (err) => err.status === 429 && /HTTP 429: slow down/.test(err.message))
  })
})

test('report() renders a result of the documented shape', () => {
  const out = {
    status: 'compacted', reason: 'forced',
    before: { messages: 57, bytes: 99507, estimatedTokens: 24877 },
    after: { messages: 12, bytes: 9000, estimatedTokens: 2250 },
    rewrite: {
      summary: { text: 'Line one\n\nLine two', level: 1, source: 'builtin', messageId: 'm1' },
      retained: [{ source: 0, offset: 0, id: 'a' }, { source: 50, offset: 2, id: 'b' }],
      discarded: [1, 2, 3],
      evicted: [
        { offset: 3, callId: 'call_001', toolName: 'list_files', handle: 'artifact#1', clipped: false, bodyBytes: 4377, keptBytes: 10 },
        { offset: 4, callId: 'call_002', toolName: 'search_code', handle: null, clipped: true, bodyBytes: 4499, keptBytes: 1024 },
      ],
    },
    validation: { ok: true, checks: ['pairing'] },
  }
  const text = report({ input: 'in.json', format: 'openai-chat', decision: { compact: true, reason: 'over_window' }, out, contextWindow: 16000 })
  assert.deepEqual(text.split('\n'), [
    'input:      in.json (format: openai-chat)',
    'window:     16,000 tokens',
    'before:     57 messages, 99,507 bytes, ~24,877 tokens',
    'after:      12 messages, 9,000 bytes, ~2,250 tokens',
    'check:      would compact (over_window)',
    'status:     compacted (forced)',
    'evicted:    2 tool results',
    '  #3 list_files (call_001) -> artifact#1, 4,377 -> 10 bytes',
    '  #4 search_code (call_002) -> clipped, 4,499 -> 1,024 bytes',
    'summary:    level 1, source builtin, 18 chars',
    '  | Line one',
    '  | Line two',
    'kept:       2 messages, discarded 3',
    'validation: ok (pairing)',
  ])
})

// ---- issue 16.7: --no-memory, the bounded eviction list, the usage of a Claude Code log ----
const shared = fileURLToPath(new URL('../../../shared/transcripts/', import.meta.url))
const { existsSync } = await import('node:fs')
const haveShared = existsSync(shared)

test('cli_no_memory_leaves_the_memory_records_out_of_json', { skip: !haveShared && 'no ../shared/transcripts' }, async () => {
  const file = `${shared}claude-code/energy-ac-optimal-power-flow.jsonl`
  const withMemory = JSON.parse((await cli('compact', file, '--context-window', '16000', '--json')).stdout)
  const without = JSON.parse((await cli('compact', file, '--context-window', '16000', '--json', '--no-memory')).stdout)
  assert.ok(withMemory.memory.records.length > 100)
  assert.equal(without.memory.records.length, 0)
  assert.equal(without.status, 'compacted')
  assert.ok(JSON.stringify(without).length < JSON.stringify(withMemory).length / 2)
  // N-1: with no memory every folded user text is quoted whole; tau-bench's 200
  // conversations of user text cannot fit 16,000 tokens that way, and the result says so
  const tau = JSON.parse((await cli('compact', `${shared}tau-bench/gpt-4o-airline.json`, '--context-window', '16000', '--json', '--no-memory')).stdout)
  assert.equal(tau.status, 'cannot_fit')
  // the check's floor counts that user text (N-1, C-8), so it says so before any summary
  assert.match(tau.reason, /^cannot_fit: the floor \(\d+ tokens: system \d+, tools \d+, protected request \d+, findings ledger \d+, user text quoted whole as projectMemory is off \d+, output reserve \d+\)/)
})

test('cli_eviction_list_shows_ten_and_a_count_unless_verbose', { skip: !haveShared && 'no ../shared/transcripts' }, async () => {
  const file = `${shared}tau-bench/gpt-4o-airline.json`
  const short = (await cli('compact', file, '--context-window', '16000')).stdout
  const evicted = Number(/evicted: +(\d+) tool results/.exec(short)[1])
  assert.ok(evicted > 10)
  const rows = (s) => s.split('\n').filter((l) => /^ {2}#\d+ /.test(l)).length
  assert.equal(rows(short), 10)
  assert.ok(short.includes(`... and ${evicted - 10} more (--verbose lists all)`))
  const all = (await cli('compact', file, '--context-window', '16000', '--verbose')).stdout
  assert.equal(rows(all), evicted)
})

test('cli_reads_the_usage_recorded_in_a_claude_code_log', { skip: !haveShared && 'no ../shared/transcripts' }, async () => {
  const file = `${shared}claude-code/citation-check.jsonl`
  const out = (await cli('compact', file, '--context-window', '200000')).stdout
  // the newest assistant line: input 0 + cache creation 195 + cache read 45368, output 1
  assert.match(out, /usage: +45,564 tokens \(recorded in the log/)
  const json = JSON.parse((await cli('compact', file, '--context-window', '60000', '--json', '--no-memory')).stdout)
  const signal = json.decision.signals.find((s) => s.name === 'provider_total_tokens')
  assert.equal(signal.value, 45564)
})

test('I-6: --summarizer-url on an endpoint that never answers fails with a typed timeout after --timeout-ms (exit 1)', async () => {
  const golden = fileURLToPath(new URL('../fixtures/golden.json', import.meta.url))
  let requests = 0
  const server = createServer((req) => { requests++; req.resume() }) // never answers
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const url = `http://127.0.0.1:${server.address().port}/v1`
    const started = Date.now()
    const r = await cli('compact', golden, '--summarizer-url', url, '--model', 'x', '--timeout-ms', '3000')
    assert.equal(r.code, 1, r.stdout + r.stderr)
    assert.match(r.stderr, /^error: timeout: .*3000 ms/m)
    assert.ok(requests >= 1, 'the summarizer was asked')
    assert.ok(Date.now() - started < 30000, 'no hang')
  } finally {
    server.closeAllConnections()
    server.close()
  }
  // the flag is checked like the others
  for (const args of [['--timeout-ms', '0'], ['--timeout-ms', 'soon'], ['--timeout-ms', '1.5']]) {
    const r = await cli('compact', golden, '--summarizer-url', 'http://127.0.0.1:9/v1', '--model', 'x', ...args)
    assert.equal(r.code, 1)
    assert.match(r.stderr, /^error: usage: --timeout-ms must be a positive integer/)
  }
  const r = await cli('compact', golden, '--timeout-ms', '100')
  assert.match(r.stderr, /^error: usage: --timeout-ms is only used with --summarizer-url/)
  assert.match((await cli('--help')).stdout, /--timeout-ms N .*\n.*\(default: 120000\)/)
})

test('I-6: httpSummarizer aborts a request that does not answer within timeoutMs (code timeout)', async () => {
  const server = createServer((req) => { req.resume() })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const summarize = httpSummarizer({ url: `http://127.0.0.1:${server.address().port}/v1`, model: 'm1', timeoutMs: 200 })
    await assert.rejects(summarize({ system: 's', messages: [], maxOutputTokens: 10 }), (err) => err.code === 'timeout' && /within 200 ms/.test(err.message))
  } finally {
    server.closeAllConnections()
    server.close()
  }
})

// ---- break3 finding 7 (Y-4, W-6): compacting the CLI's own --out file again ----
test('Y-4 W-6: cli_recompacting_its_own_out_file_reads_the_state_written_beside_it_and_keeps_summaries_oldest_first', { skip: !haveShared && 'no ../shared/transcripts' }, async () => {
  const { mkdtemp, readFile, writeFile, rm } = await import('node:fs/promises')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const dir = await mkdtemp(join(tmpdir(), 'cc-recompact-'))
  try {
    const first = join(dir, 'a.json')
    const r1 = await cli('compact', `${shared}claude-code/citation-check.jsonl`, '--format', 'claude-code-jsonl', '--context-window', '16000', '--out', first, '--out-memory', join(dir, 'a.mem'))
    assert.equal(r1.code, 0, r1.stderr)
    assert.ok(r1.stdout.includes(`wrote:      ${first}.state.json (engine state`))
    const state1 = JSON.parse(await readFile(`${first}.state.json`, 'utf8'))
    assert.deepEqual(state1.summaries.map((s) => s.id), ['summary-r1-1'])
    const summaries = (res) => (res.transcript.messages ?? res.transcript).filter((m) => m.transcript_role === 'compaction_summary')
    // both windows put the summary block (the first summary, ~7.9 KB, and the new one) over a
    // quarter of the window, so it rolls up by size (N-4, Y-3)
    for (const window of ['4000', '6000']) {
      const res = JSON.parse((await cli('compact', first, '--format', 'anthropic', '--context-window', window, '--json')).stdout)
      const warnings = res.events.filter((e) => e.type === 'warning').map((e) => e.data.code)
      assert.ok(!warnings.includes('untrusted_provenance'), `window ${window}: no untrusted_provenance (${warnings})`)
      const rows = summaries(res)
      // the new summary is last in the block (Y-4), and every summary row is one the state vouches for
      assert.equal(rows.at(-1).message_id, res.rewrite.summary.messageId)
      const vouched = res.state.summaries.map((s) => s.id)
      assert.deepEqual(rows.map((m) => m.message_id).filter((id) => !vouched.includes(id)), [])
      // the old summary is rolled up into the new one (level 2), not put after it
      assert.equal(res.rewrite.summary.level, 2)
      assert.equal(rows.findIndex((m) => m.message_id === 'summary-r1-1'), -1)
    }
    // the report says which state it read; --state names another file to read and write
    const r2 = await cli('compact', first, '--format', 'anthropic', '--context-window', '4000', '--state', join(dir, 's.json'))
    assert.equal(r2.code, 0, r2.stderr)
    assert.match(r2.stdout, /warning: {4}untrusted_provenance: 1 summary row \(summary-r1-1\) read as ordinary rows; no engine state was given: .*--state FILE/)
    assert.ok(JSON.parse(await readFile(join(dir, 's.json'), 'utf8')).revision >= 1)
    const r3 = await cli('compact', first, '--format', 'anthropic', '--context-window', '4000', '--state', `${first}.state.json`, '--out', join(dir, 'b.json'))
    assert.match(r3.stdout, new RegExp(`state: {6}read ${first.replace(/[.]/g, '\\.')}\\.state\\.json`))
    assert.doesNotMatch(r3.stdout, /untrusted_provenance/)
    // a summary edited in the file is no longer vouched for: then (only then) it warns
    const edited = (await readFile(first, 'utf8')).replace('Handoff summary (deterministic', 'Handoff summary (EDITED')
    await writeFile(first, edited)
    const r4 = await cli('compact', first, '--format', 'anthropic', '--context-window', '4000')
    assert.match(r4.stdout, new RegExp(`untrusted_provenance: 1 summary row \\(summary-r1-1\\) read as ordinary rows; the state in ${first.replace(/[.]/g, '\\.')}\\.state\\.json does not vouch for them`))
    // the state file is an output too: it may not overwrite the input or another output
    const clash = await cli('compact', first, '--state', first)
    assert.equal(clash.code, 1)
    assert.match(clash.stderr, /^error: usage: the state file and the input name the same file/)
    await writeFile(join(dir, 'bad.json'), 'not json')
    const bad = await cli('compact', first, '--state', join(dir, 'bad.json'))
    assert.match(bad.stderr, /^error: invalid_state: .*bad\.json is not the JSON state a run wrote/)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
