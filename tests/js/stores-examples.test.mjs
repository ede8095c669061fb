// The worked examples of the README "Stores" section, run as they are:
//   - examples/workers-chat/worker.mjs in workerd: a Durable Object per chat session, the
//     compaction check before each model call, memory recall as a tool; two requests
//     compacting one session at once (one commit, one refusal, no row lost); a restarted
//     workerd reads the same session back (I-5, W-5, W-8, M-2);
//   - examples/browser-chat/ in Chromium: the chat UI over IndexedDB, compaction, recall
//     through the tool, and a page reload showing the same conversation.
// The model is tests/stores/fake-model.mjs (deterministic; no LLM in tests).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { answer } from '../stores/fake-model.mjs'
import { bundleWorker, root, startWorkerd, useChromium } from './launch.mjs'

const WORDS = ['walrus', 'pelican', 'zeppelin', 'quasar', 'marmot', 'glacier', 'tundra']
const turn = (i) => `turn ${i}: the ${WORDS[i]} code is ${WORDS[i].toUpperCase()}-${i * 7}. ${'context '.repeat(150)}`

test('I-5 W-5 W-8 M-2 the Workers chat example: a Durable Object per session, compaction before the model call, recall as a tool, a race and a restart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-chat-'))
  let w
  const say = async (session, message) => {
    const res = await fetch(`${w.url}/chat/${session}`, { method: 'POST', body: JSON.stringify({ message }) })
    const text = await res.text()
    assert.equal(res.status, 200, `${text}\n${w.log()}`)
    return JSON.parse(text)
  }
  const record = async (session) => (await fetch(`${w.url}/chat/${session}`)).json()
  try {
    await bundleWorker(dir, join(root, 'examples/workers-chat/worker.mjs'), [{ className: 'ChatSession', binding: 'CHAT' }],
      [{ name: 'model', entry: join(root, 'tests/stores/fake-model.mjs'), binding: 'MODEL' }], { CONTEXT_WINDOW: 3000 })
    w = await startWorkerd(dir)

    await t.test('the check compacts only once the session is over the threshold; the reply follows', async () => {
      const statuses = []
      for (let i = 0; i < 7; i++) {
        const r = await say('alice', turn(i))
        assert.equal(r.reply, `echo: ${turn(i).slice(0, 40)}`)
        statuses.push(r.compaction)
      }
      assert.deepEqual(statuses.slice(0, 5), ['skipped', 'skipped', 'skipped', 'skipped', 'skipped'], 'under the threshold: no compaction')
      assert.ok(statuses.includes('compacted'), `compacted once over the threshold: ${statuses}`)
      const rec = await record('alice')
      assert.ok(rec.transcript.some((m) => m.summary_level >= 1 || /^SUMMARY:/.test(m.content ?? '')), 'a summary row replaced the older turns')
      assert.ok(!rec.transcript.some((m) => m.role === 'user' && m.content === turn(0)), 'turn 0 is no longer in the transcript verbatim')
    })

    await t.test('recall as a tool: the model asks, the session memory answers with the compacted turn', async () => {
      const r = await say('alice', 'recall: walrus code')
      assert.match(r.reply, /^From memory: .*WALRUS-0/)
      const rec = await record('alice')
      const call = rec.transcript.find((m) => m.tool_calls?.[0]?.function.name === 'recall')
      assert.deepEqual(JSON.parse(call.tool_calls[0].function.arguments), { query: 'walrus code', limit: 3 })
      const result = rec.transcript.find((m) => m.role === 'tool' && m.tool_call_id === call.tool_calls[0].id)
      assert.match(JSON.parse(result.content)[0].content, /the walrus code is WALRUS-0/)
    })

    await t.test('W-5 two requests compacting one session at once: one commit, one refusal, no row lost', async () => {
      for (let i = 0; i < 5; i++) await say('bob', turn(i))
      assert.equal((await record('bob')).transcript.filter((m) => m.summary_level).length, 0, 'bob is not compacted yet')
      // each message alone takes bob over the threshold; the model answers summaries after
      // 300 ms, so both requests are inside their compaction at the same time
      const [a, b] = await Promise.all([say('bob', turn(5).replace('turn 5', 'race A')), say('bob', turn(6).replace('turn 6', 'race B'))])
      assert.equal([a, b].filter((r) => r.compaction === 'compacted').length, 1, `one commit: ${JSON.stringify([a.compaction, b.compaction])}`)
      assert.ok(a.refusals + b.refusals >= 1, 'and at least one refused save (the store compared the revision)')
      const rec = await record('bob')
      const text = JSON.stringify(rec.transcript)
      for (const tag of ['race A', 'race B']) assert.ok(text.includes(tag), `${tag} is in the session`)
      // each request's reply was appended after its own turn (a reply may answer the other
      // request's message when that one was appended first: both are in the request)
      const replies = rec.transcript.filter((m) => m.role === 'assistant' && /^echo: race /.test(m.content ?? '')).map((m) => m.content)
      assert.deepEqual(replies.sort(), [a.reply, b.reply].sort(), 'both replies appended')
      assert.equal(rec.state.revision, rec.revision, 'state and record at the same revision')
    })

    await t.test('W-8 after a workerd restart each session reads back the same and keeps going', async () => {
      const before = { alice: await record('alice'), bob: await record('bob') }
      await w.stop()
      w = await startWorkerd(dir)
      assert.deepEqual(await record('alice'), before.alice)
      assert.deepEqual(await record('bob'), before.bob)
      const r = await say('alice', 'recall: zeppelin code')
      assert.match(r.reply, /ZEPPELIN-14/)
      const after = await record('alice')
      assert.equal(after.revision, r.revision, 'the reply is the last write')
      assert.ok(r.revision >= before.alice.revision + 3, 'the message, the tool round and the reply appended at later revisions')
      assert.deepEqual(after.transcript.slice(0, before.alice.transcript.length), before.alice.transcript, 'appended after what was stored')
    })
  } finally {
    await w?.stop()
    await rm(dir, { recursive: true, force: true })
  }
})

const chrome = useChromium()
const { skip } = chrome

test('I-5 W-8 M-2 the browser chat example: IndexedDB session, compaction before the model call, recall as a tool, the same chat after a reload', { skip }, async () => {
  const context = await chrome.browser.newContext()
  const page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  const bodies = []
  // the page's model endpoint, answered by the deterministic fake model
  await page.route('**/api/chat', async (route) => {
    const body = JSON.parse(route.request().postData())
    bodies.push(body)
    await route.fulfill({ contentType: 'application/json', body: JSON.stringify(answer(body)) })
  })
  await page.goto(`${chrome.base}/examples/browser-chat/?window=3000`)
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' })
  const send = async (text) => {
    const n = Number(await page.evaluate(() => document.body.dataset.turns ?? 0))
    await page.fill('#message', text)
    await page.click('#send')
    await page.waitForFunction((k) => Number(document.body.dataset.turns ?? 0) > k, n)
    return { reply: await page.locator('#log .assistant').last().textContent(), status: await page.textContent('#status') }
  }
  const statuses = []
  for (let i = 0; i < 7; i++) {
    const r = await send(turn(i))
    assert.equal(r.reply, `echo: ${turn(i).slice(0, 40)}`)
    statuses.push(r.status)
  }
  assert.ok(statuses.some((s) => /compacted/.test(s)), `compacted once over the threshold: ${statuses}`)
  assert.ok(bodies.some((b) => /handoff summary/.test(b.messages[0].content)), 'the summarizer went through the same model endpoint')
  assert.ok(bodies.every((b) => !b.tools || b.tools[0].function.name === 'recall'), 'recall is offered as a tool')
  const r = await send('recall: pelican code')
  assert.match(r.reply, /^From memory: .*PELICAN-7/)
  const shown = await page.locator('#log .row').allTextContents()
  await page.reload()
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' })
  assert.deepEqual(await page.locator('#log .row').allTextContents(), shown, 'the same conversation after a reload')
  const again = await send('recall: quasar code')
  assert.match(again.reply, /QUASAR-21/, 'memory recalled after the reload')
  assert.deepEqual(errors, [])
  await context.close()
})
