// Headless Chromium (playwright-core driving /usr/bin/chromium; no browser download):
//   - J-5: the web build in a real page compacts the golden transcript to the golden bytes;
//   - the www/ demo loads the sample, compacts it, marks rows and shows the summary, and
//     saves a screenshot to test-results/demo.png.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { root, useChromium } from './launch.mjs'

const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))
const chrome = useChromium()
const { skip } = chrome

test('J-1 J-5 Chromium page (web build, init() fetches the .wasm) matches the golden bytes', { skip }, async () => {
  const page = await chrome.browser.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  await page.goto(`${chrome.base}/tests/runtime/`)
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
  const page = await chrome.browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  await page.goto(`${chrome.base}/`)
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
  for (const h of handles) assert.match(h, /^artifact#([a-z]{1,16}-)?\d+$|^clipped$/)
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

test('www_demo_lists_evicted_results_and_opens_a_row_with_its_original_and_replacement', { skip }, async () => {
  const page = await chrome.browser.newPage({ viewport: { width: 1400, height: 1000 } })
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  await page.goto(`${chrome.base}/`)
  await page.waitForSelector('body[data-ready="true"]')
  await page.click('#sample')
  await page.waitForFunction(() => document.querySelectorAll('#timeline .row').length > 0)
  await page.fill('#window', '16000')
  await page.click('#compact')
  await page.waitForSelector('#timeline .row.summary')
  const result = await page.evaluate(() => window.__lastResult)
  const evicted = result.rewrite.evicted
  assert.ok(evicted.length > 0, 'the sample evicts tool results at a 16,000-token window')
  // every eviction is listed, with its handle or clip and sizes
  assert.ok(await page.isVisible('#evicted-wrap'))
  const items = await page.$$eval('#evicted li', (li) => li.map((x) => x.textContent))
  assert.equal(items.length, evicted.length)
  for (const [k, e] of evicted.entries()) {
    assert.ok(items[k].includes(`#${e.offset} `) && items[k].includes(e.handle ?? 'clipped'), items[k])
  }
  // evicted rows folded into the summary carry a badge in the timeline
  const folded = evicted.filter((e) => result.rewrite.discarded.includes(e.offset))
  assert.equal(await page.locator('#timeline .row .evicted-badge').count(), folded.length)

  // open a folded row: its original JSON, and the summary that replaced it
  const sampleRows = (await (await fetch(`${chrome.base}/examples/sample-session.json`)).json()).messages
  const foldedRow = result.rewrite.discarded[0]
  await page.click(`#timeline .row[data-index="${foldedRow}"]`)
  assert.ok(await page.isVisible('#detail'))
  assert.deepEqual(JSON.parse(await page.textContent('#detail-original')), sampleRows[foldedRow])
  assert.equal(await page.textContent('#detail-replacement'), result.rewrite.summary.text)
  assert.match(await page.textContent('#detail-what'), /Folded into the summary/)
  if (folded.length > 0) {
    await page.click(`#timeline .row[data-index="${folded[0].offset}"]`)
    assert.match(await page.textContent('#detail-what'), /was evicted/)
  }
  // open a kept row: the row of the new transcript
  const kept = result.rewrite.retained.at(-1)
  await page.click(`#timeline .row[data-index="${kept.source}"]`)
  assert.match(await page.textContent('#detail-what'), new RegExp(`Kept as row ${kept.offset} of the new transcript`))
  assert.deepEqual(JSON.parse(await page.textContent('#detail-replacement')), result.transcript.messages[kept.offset])
  assert.deepEqual(errors, [])
  await page.screenshot({ path: join(root, 'test-results/demo-detail.png'), fullPage: false })
  await page.close()
})

test('j1_quickstart_browser_page_with_an_import_map_and_init', { skip }, async () => {
  const page = await chrome.browser.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  // the page maps the bare name to ./node_modules/context-compactor/js/web.mjs (a user's
  // project layout); here that path is served from this checkout
  await page.route(/\/examples\/quickstart\/node_modules\/context-compactor\/(.*)$/, (route) => {
    const rel = new URL(route.request().url()).pathname.replace(/^.*\/node_modules\/context-compactor\//, '')
    return route.fulfill({ path: join(root, rel) })
  })
  await page.goto(`${chrome.base}/examples/quickstart/`)
  await page.waitForFunction(() => document.getElementById('out').textContent.startsWith('{'))
  const out = JSON.parse(await page.textContent('#out'))
  assert.deepEqual(out, { runtime: 'browser', status: 'compacted', before: 19, after: out.after })
  assert.ok(out.after < 19)
  assert.deepEqual(errors, [])
  await page.close()
})
