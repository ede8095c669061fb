// The CLI shell: argument handling and the HTTP summarizer (no engine needed).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { FORMATS, httpSummarizer } from '../../bin/context-compactor.mjs'

const bin = fileURLToPath(new URL('../../bin/context-compactor.mjs', import.meta.url))

async function cli(...args) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args])
    return { code: 0, stdout, stderr }
  } catch (err) {
    return { code: err.code, stdout: err.stdout, stderr: err.stderr }
  }
}

test('--help prints the usage and exits 0', async () => {
  const r = await cli('--help')
  assert.equal(r.code, 0)
  assert.match(r.stdout, /Usage:\n {2}context-compactor compact INPUT/)
  for (const flag of ['--format', '--context-window', '--profile', '--out', '--json', '--summarizer-url', '--model']) {
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
