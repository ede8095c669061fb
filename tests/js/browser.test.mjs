// Headless Chromium (playwright-core driving /usr/bin/chromium; no browser download):
//   - J-5: the web build in a real page compacts the golden transcript to the golden bytes;
//   - the www/ demo loads the sample, compacts it, marks rows and shows the summary, and
//     saves a screenshot to test-results/demo.png.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { chromium } from 'playwright-core'
import { startServer } from '../../scripts/serve.mjs'

const root = fileURLToPath(new URL('../../', import.meta.url))
const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium'
const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))
const skip = existsSync(executablePath) ? false : `no Chromium at ${executablePath}`
if (skip && process.env.CI === 'true') throw new Error(`${skip} (required under CI)`)

let browser, server, base
before(async () => {
  if (skip) return
  ;({ server, url: base } = await startServer({ port: 0 }))
  browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  })
})
after(async () => {
  await browser?.close()
  server?.close()
})

test('J-1 J-5 Chromium page (web build, init() fetches the .wasm) matches the golden bytes', { skip }, async () => {
  const page = await browser.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  await page.goto(`${base}/tests/runtime/`)
  const got = await page.evaluate(async () => {
    const api = await import('/js/web.mjs')
    const { runGolden } = await import('/tests/runtime/golden.mjs')
    await api.default()
    const transcript = await (await fetch('/tests/fixtures/golden.json')).json()
    const { status, bytes, sha256 } = await runGolden(api, transcript)
    return { status, bytes, sha256, ua: navigator.userAgent }
  })
  assert.match(got.ua, /HeadlessChrome|Chrome/)
  assert.equal(got.status, 'compacted')
  assert.equal(got.bytes, expected.bytes)
  assert.equal(got.sha256, expected.sha256)
  assert.deepEqual(errors, [])
  await page.close()
})

test('www demo: the sample compacts in Chromium; rows are marked, the summary and events show; screenshot saved', { skip }, async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  await page.goto(`${base}/`)
  await page.waitForSelector('body[data-ready="true"]')
  assert.match(await page.textContent('#version'), /^v\d+\.\d+\.\d+/)
  await page.click('#sample')
  await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length > 0)
  assert.match(await page.textContent('#loaded'), /sample-session\.json: openai-chat, 57 rows/)
  await page.fill('#window', '16000')

  await page.click('#check')
  await page.waitForSelector('#result:not([hidden])')
  assert.match(await page.textContent('#decision'), /reason/)

  await page.click('#compact')
  await page.waitForSelector('#timeline .row.summary')
  const marks = await page.$$eval('#timeline .row', (rows) => rows.map((r) => r.dataset.mark))
  const count = (m) => marks.filter((x) => x === m).length
  const result = await page.evaluate(() => window.__lastResult)
  assert.equal(result.status, 'compacted')
  assert.equal(count('summary'), 1, 'one summary row')
  assert.equal(count('summarized'), result.rewrite.discarded.length, 'every discarded row is marked summarized')
  assert.ok(count('protected') >= 2, 'system row and newest request are protected')
  assert.ok(count('kept') + count('protected') + count('evicted') === result.rewrite.retained.length, 'retained rows are marked')
  assert.equal(marks.length, 57 + 1)
  const handles = await page.$$eval('#timeline .row.evicted .handle', (hs) => hs.map((h) => h.textContent))
  const keptEvicted = result.rewrite.evicted.filter((e) => !result.rewrite.discarded.includes(e.offset))
  assert.equal(handles.length, keptEvicted.length)
  for (const h of handles) assert.match(h, /^artifact#\d+$|^clipped$/)
  const summary = await page.textContent('#summary')
  assert.equal(summary, result.rewrite.summary.text)
  assert.ok(summary.length > 40)
  assert.ok(await page.isVisible('#summary'))
  assert.equal(await page.locator('#sizes .bar').count(), 2)
  assert.ok((await page.locator('#events li').count()) >= 2)
  assert.match(await page.textContent('#events'), /compaction_completed/)
  assert.match(await page.textContent('#status'), /compacted/)
  assert.deepEqual(errors, [])

  await mkdir(join(root, 'test-results'), { recursive: true })
  await page.screenshot({ path: join(root, 'test-results/demo.png'), fullPage: false })
  await page.close()
})
