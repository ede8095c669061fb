// The README's AI SDK and LangChain quick starts run as written (a newcomer's finding,
// session 9: they used `openai`, `tools`, `model`, `state` and `out` without defining
// them). Each block is taken from README.md, its model id swapped for the packages' own
// mock model (no network here), and run as a module from the project root, so an
// identifier the block uses but does not define fails the test.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { MockLanguageModelV4 } from 'ai/test'
import { AIMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { root } from './launch.mjs'

const readme = await readFile(join(root, 'README.md'), 'utf8')

/** The first ```js block after `heading` in the README. */
function block(heading) {
  const at = readme.indexOf(heading)
  assert.ok(at >= 0, `README has ${heading}`)
  const open = readme.indexOf('```js\n', at)
  const close = readme.indexOf('\n```', open + 6)
  return readme.slice(open + 6, close + 1)
}

async function runModule(name, code) {
  const file = join(root, 'tests', 'js', `.readme-${name}-${process.pid}.mjs`)
  await writeFile(file, code)
  try {
    return await import(pathToFileURL(file).href)
  } finally {
    await rm(file, { force: true })
  }
}

test('j1_i1_readme_ai_sdk_snippet_runs_as_written', async () => {
  const code = block('### Vercel AI SDK')
  assert.match(code, /gateway\("openai\/gpt-5"\)/, 'the block names its model')
  const prompts = []
  let step = 0
  globalThis.__readmeModel = new MockLanguageModelV4({
    doGenerate: async (o) => {
      prompts.push(o.prompt)
      step++
      const usage = { inputTokens: { total: 50, noCache: 50, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } }
      // every odd call asks for the file, the next one answers
      if (step % 2 === 1) {
        return { content: [{ type: 'tool-call', toolCallId: `c${step}`, toolName: 'read_file', input: JSON.stringify({ path: 'package.json' }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
      }
      return { content: [{ type: 'text', text: `answer ${step}` }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
    },
  })
  const logged = []
  const log = console.log
  console.log = (...a) => logged.push(a.join(' '))
  try {
    await runModule('ai-sdk', code.replace('gateway("openai/gpt-5")', 'globalThis.__readmeModel'))
  } finally {
    console.log = log
    delete globalThis.__readmeModel
  }
  assert.deepEqual(logged, ['answer 2 answer 4'])
  assert.equal(prompts.length, 4, 'two tool loops of two steps each')
  // the tool ran: its result (the real package.json) reached the model's next prompt
  assert.match(JSON.stringify(prompts[1]), /context-compactor/)
})

test('j1_i2_readme_langchain_snippet_runs_as_written', async () => {
  const code = block('### LangChain.js')
  assert.match(code, /const model = "openai:gpt-5";/)
  const model = fakeModel()
  model.respondWithTools([{ name: 'read_file', args: { path: 'package.json' }, id: 'r1' }])
  model.respond(new AIMessage('it declares context-compactor'))
  globalThis.__readmeModel = model
  let mod
  try {
    mod = await runModule('langchain', code.replace('"openai:gpt-5"', 'globalThis.__readmeModel') + '\nexport { state, out, messages };\n')
  } finally {
    delete globalThis.__readmeModel
  }
  assert.equal(mod.state.messages.at(-1).content, 'it declares context-compactor')
  assert.equal(model.calls.length, 2)
  // the hand path: rows read from the agent's messages, force-compacted, and given back as BaseMessages
  assert.equal(mod.out.status, 'compacted')
  assert.equal(mod.messages.length, mod.out.transcript.length)
  assert.ok(mod.messages.every((m) => typeof m.getType === 'function'), 'BaseMessage objects')
  // the user's request survives the fold
  assert.match(JSON.stringify(mod.messages.map((m) => m.content)), /What does package\.json declare\?/)
})
