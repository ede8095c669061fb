// Semantic memory (M-1..M-4) in headless Chromium: the very cases of memory-cases.mjs
// (the ones tests/js/memory.test.mjs runs in Node) run in a real page against the web
// build (`/js/web.mjs`, `init()` fetches the .wasm). playwright-core drives
// /usr/bin/chromium (no browser download); the repo root is served on 127.0.0.1 by
// scripts/serve.mjs. Each case becomes one Node test that fails with the in-page error.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { startServer } from '../../scripts/serve.mjs'
import { chromiumSkip, launchChromium } from './launch.mjs'
import { memoryCases } from './memory-cases.mjs'

const skip = chromiumSkip()

// Case names only (the api is not needed to list them).
const names = memoryCases({}).map((c) => c.name)

let browser, server, results, pageErrors
before(async () => {
  if (skip) return
  const started = await startServer({ port: 0 })
  server = started.server
  browser = await launchChromium()
  const page = await browser.newPage()
  pageErrors = []
  page.on('pageerror', (e) => pageErrors.push(String(e)))
  await page.goto(`${started.url}/tests/runtime/`)
  results = await page.evaluate(async () => {
    const api = await import('/js/web.mjs')
    await api.init()
    const { memoryCases } = await import('/tests/js/memory-cases.mjs')
    const out = { ua: navigator.userAgent, cases: [] }
    for (const { name, run } of memoryCases(api)) {
      try {
        await run()
        out.cases.push({ name, ok: true })
      } catch (e) {
        out.cases.push({ name, ok: false, error: `${e?.code ? `[${e.code}] ` : ''}${e?.message ?? e}\n${e?.stack ?? ''}` })
      }
    }
    return out
  })
  await page.close()
})
after(async () => {
  await browser?.close()
  server?.close()
})

test('M-1..M-4 memory cases ran in Chromium (web build), the same set as in Node', { skip }, () => {
  assert.match(results.ua, /HeadlessChrome|Chrome/)
  assert.deepEqual(results.cases.map((c) => c.name), names)
  assert.deepEqual(pageErrors, [])
  const failed = results.cases.filter((c) => !c.ok).map((c) => c.name)
  assert.deepEqual(failed, [], `failed in Chromium: ${failed.join('; ')}`)
})

for (const name of names) {
  test(`Chromium: ${name}`, { skip }, () => {
    const r = results.cases.find((c) => c.name === name)
    assert.ok(r, `case not run in the page: ${name}`)
    assert.ok(r.ok, `${name} failed in Chromium: ${r.error}`)
  })
}
