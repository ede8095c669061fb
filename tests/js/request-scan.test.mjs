// Issue 15 item 2 (F-4, F-2): `toRequest` of a compact OpenAI Chat text that is its own
// request view (src/formats/request_scan.rs) parses the host's string; its answer and its
// pairing errors are those of the key filter, which the same rows spaced out still take.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = join(root, 'pkg', 'web')
const mod = await import(pathToFileURL(join(dir, 'context_compactor.js')).href)
mod.initSync({ module: readFileSync(join(dir, 'context_compactor_bg.wasm')) })
const c = new mod.ContextCompactor({ format: 'openai-chat' })

const rows = [
  { role: 'system', content: 'be brief "quoted" \\ \n\t é 中 🦀' },
  { role: 'user', content: [{ type: 'text', text: 'look' }], extra: { k: [1, -2, true, null] } },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'one' },
  { role: 'assistant', content: 'done' },
]

test('issue 15 F-4: a compact text, its object and its spaced form give one request view', () => {
  for (const doc of [rows, { model: 'm', messages: rows }, { messages: [] }, []]) {
    const compact = JSON.stringify(doc)
    const spaced = JSON.stringify(doc, null, 1) // declined by the scan: the key filter's way
    const want = c.toRequest(spaced)
    assert.deepEqual(c.toRequest(compact), want)
    assert.deepEqual(c.toRequest(doc), want)
    assert.equal(JSON.stringify(c.toRequest(compact)), compact)
  }
})

test('issue 15 F-4: the answer for an object is a copy, not the host object', () => {
  const doc = structuredClone(rows)
  const out = c.toRequest(doc)
  out[0].content = 'changed'
  assert.equal(doc[0].content, rows[0].content)
})

test('issue 15 F-2: a compact text that breaks pairing gets the error of its spaced form', () => {
  const bad = [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'c9', content: 'x' }]
  const err = (text) => {
    try {
      c.toRequest(text)
    } catch (e) {
      return { code: e.code, message: e.message }
    }
    assert.fail('no error')
  }
  const want = err(JSON.stringify(bad, null, 1))
  assert.equal(want.code, 'unpaired_tool_result')
  assert.deepEqual(err(JSON.stringify(bad)), want)
  assert.deepEqual(err(bad), want)
})
