// I-5, W-5, W-8, M-1..M-4: indexedDbStore / indexedDbMemory pass the store contract
// (tests/stores/contract.mjs) on IndexedDB in headless Chromium (playwright-core,
// /usr/bin/chromium); the restart phase runs after a page reload.
import { test } from 'node:test'
import { reportContract } from '../stores/report.mjs'
import { useChromium } from './launch.mjs'

const chrome = useChromium()
const { skip } = chrome

test('I-5 W-5 W-8 M-4 IndexedDB store contract in Chromium, then a reloaded page reads back the same session and recall', { skip }, async (t) => {
  const context = await chrome.browser.newContext()
  const page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  await page.goto(`${chrome.base}/tests/stores/index.html`)
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' })
  const first = await page.evaluate(() => window.runStoresContract('first', null))
  await reportContract(t, first, 12)
  await page.reload()
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' })
  const again = await page.evaluate((fp) => window.runStoresContract('restart', fp), first.fingerprint)
  await reportContract(t, again, 2)
  await t.test('no page errors', () => { if (errors.length) throw errors[0] })
  await context.close()
})
