// Issue 15 (peak wasm memory): the transcript text crosses into wasm memory at its UTF-8
// size (src/wasm/utf8.rs, TextEncoder.encodeInto into one buffer), not through
// wasm-bindgen's string glue, which grows its buffer to three bytes per UTF-16 unit at
// the first non-ASCII character. These tests check the bytes that arrive (every kind of
// character, the grow path of a text with many multi-byte characters) and that a
// mostly-ASCII text with an early non-ASCII character does not take three times its
// size on the way in (a fresh instance, whose memory never shrinks, read after a call
// refused right after the crossing).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { dirname, join } from 'node:path'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
let n = 0
async function fresh() {
  const dir = join(root, 'pkg', 'web')
  const mod = await import(`${pathToFileURL(join(dir, 'context_compactor.js')).href}?input=${n++}`)
  const exports = mod.initSync({ module: readFileSync(join(dir, 'context_compactor_bg.wasm')) })
  return { mod, memory: exports.memory }
}

const doc = (contents) => JSON.stringify({ messages: contents.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content })) })

test('issue 15: every kind of character reaches the engine byte for byte (J-5)', async () => {
  const { mod } = await fresh()
  const c = new mod.ContextCompactor({ format: 'openai-chat' })
  const texts = ['ascii only', 'é at the start, then ascii', '中文 three-byte units', '🦀 astral 🦀 pairs 𝄞', 'e\u0301 combining', 'mixed ÿ 中 🦀 end']
  // many multi-byte characters after a long ASCII run: the buffer sized at the UTF-16
  // length plus 1/64 has to grow, maybe more than once
  texts.push('a'.repeat(5000) + '中'.repeat(20000) + '🦀'.repeat(3000) + 'z')
  const text = doc(texts)
  assert.deepEqual(c.toRequest(text), JSON.parse(text))
  const d = c.check(null, text)
  assert.equal(d.compact, false)
})

test('issue 15: a mostly-ASCII transcript with an early é does not take 3x its size to cross', async () => {
  const { mod, memory } = await fresh()
  const body = 'é' + 'x'.repeat(4 * 1024 * 1024)
  const text = doc([body, 'ok'])
  const bytes = Buffer.byteLength(text)
  const before = memory.buffer.byteLength
  // refused on its UTF-8 size, right after the text crossed
  const c = new mod.ContextCompactor({ format: 'openai-chat', maxTranscriptBytes: bytes - 1 })
  assert.throws(() => c.check(null, text), (e) => e.code === 'too_large')
  const grown = memory.buffer.byteLength - before
  // wasm-bindgen's glue: about 3 bytes per unit; here: the text plus 1/64
  assert.ok(grown < 1.5 * bytes, `memory grew by ${(grown / bytes).toFixed(2)}x the text`)
})
