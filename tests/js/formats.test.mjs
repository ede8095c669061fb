// The CLI compacts a transcript in each of the five provider formats plus canonical
// JSON, each into a valid rewrite (issue "every provider format"; F-1, F-2).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { detectFormat } from 'context-compactor'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = join(root, 'tests', 'fixtures', 'formats')
const cli = join(root, 'bin', 'context-compactor.mjs')

const files = readdirSync(dir).filter((n) => n.endsWith('.json'))
test('there is a fixture for each of the six formats', () => {
  assert.deepEqual(files.map((f) => f.replace('.json', '')).sort(), ['ai-sdk', 'anthropic', 'canonical', 'gemini', 'openai-chat', 'openai-responses'])
})

for (const name of files) {
  const format = name.replace('.json', '')
  test(`CLI compacts a ${format} transcript (format auto-detected) into a valid rewrite`, () => {
    const file = join(dir, name)
    assert.equal(detectFormat(JSON.parse(readFileSync(file, 'utf8'))), format)
    const out = JSON.parse(execFileSync('node', [cli, 'compact', file, '--json', '--context-window', '6000']))
    assert.equal(out.status, 'compacted', out.reason)
    assert.equal(out.validation.ok, true)
    assert.ok(out.validation.checks.includes('provider_pairing'))
    assert.ok(out.after.bytes < out.before.bytes)
    assert.ok(out.rewrite.evicted.length > 0)
    const text = JSON.stringify(out.request)
    assert.ok(text.includes('final request: ship it'), 'newest request kept')
    assert.ok(!text.includes('summary_level'), 'request view has no provenance')
  })
}
