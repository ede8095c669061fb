// I-5, W-5, W-8, M-1..M-4: indexedDbStore / indexedDbMemory pass the store contract
// (tests/stores/contract.mjs) on IndexedDB in headless Chromium (playwright-core,
// /usr/bin/chromium); the restart phase runs after a page reload.
import { test, before, after } from 'node:test'
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'
import { startServer } from '../../scripts/serve.mjs'
import { reportContract } from '../stores/report.mjs'

const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium'
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

test('I-5 W-5 W-8 M-4 IndexedDB store contract in Chromium, then a reloaded page reads back the same session and recall', { skip }, async (t) => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e))
  await page.goto(`${base}/tests/stores/index.html`)
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
