// The `npm pack` tarball installs into an empty project (offline, from the tarball only)
// and works there from ESM, CJS and the ./wasm subpath; it ships only the allow-listed files.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const root = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const expected = JSON.parse(await readFile(join(root, 'tests/fixtures/golden.expected.json'), 'utf8'))

test('npm pack output installs offline into an empty project and works (ESM, CJS, ./wasm)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cc-pack-'))
  try {
    const { stdout } = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: root, maxBuffer: 1 << 24 })
    const [info] = JSON.parse(stdout)
    const files = info.files.map((f) => f.path).sort()
    for (const f of ['package.json', 'README.md', 'LICENSE-MIT', 'LICENSE-APACHE', 'js/index.d.ts', 'js/index.d.cts', 'js/web.d.ts',
      'js/ai-sdk.mjs', 'js/ai-sdk.d.ts', 'js/langchain.mjs', 'js/langchain.d.ts', 'js/stored-view.mjs', 'js/formats.d.ts', 'js/node.mjs', 'js/web.mjs', 'js/workerd.mjs', 'js/wasm.d.ts',
      'pkg/node/context_compactor.js', 'pkg/node/context_compactor_bg.wasm', 'pkg/web/context_compactor.js',
      'pkg/web/context_compactor_bg.wasm', 'bin/context-compactor.mjs']) {
      assert.ok(files.includes(f), `tarball has ${f}`)
    }
    assert.ok(!files.some((f) => /^(src|tests|target|scripts|www|node_modules)\//.test(f)), `only allow-listed files: ${files}`)

    const app = join(dir, 'app')
    await run('mkdir', ['-p', app])
    await writeFile(join(app, 'package.json'), '{ "name": "app", "version": "1.0.0", "private": true }\n')
    await run(npm, ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', join(dir, info.filename)], { cwd: app })
    await writeFile(join(app, 'golden.json'), await readFile(join(root, 'tests/fixtures/golden.json')))
    await writeFile(join(app, 'golden.mjs'), await readFile(join(root, 'tests/runtime/golden.mjs')))
    await writeFile(join(app, 'esm.mjs'), `
import { readFileSync } from 'node:fs'
import * as api from 'context-compactor'
import { runGolden } from './golden.mjs'
const r = await runGolden(api, JSON.parse(readFileSync('golden.json', 'utf8')))
const wasm = import.meta.resolve('context-compactor/wasm')
console.log(JSON.stringify({ status: r.status, sha256: r.sha256, version: api.version(), wasm }))
`)
    await writeFile(join(app, 'cjs.cjs'), "const { version, ContextCompactor } = require('context-compactor')\nconsole.log(JSON.stringify({ version: version(), ctor: typeof ContextCompactor }))\n")
    const esm = JSON.parse((await run(process.execPath, ['esm.mjs'], { cwd: app })).stdout)
    assert.equal(esm.status, 'compacted')
    assert.equal(esm.sha256, expected.sha256)
    assert.equal(esm.version, expected.engine)
    assert.match(esm.wasm, /node_modules\/context-compactor\/pkg\/web\/context_compactor_bg\.wasm$/)
    const cjs = JSON.parse((await run(process.execPath, ['cjs.cjs'], { cwd: app })).stdout)
    assert.deepEqual(cjs, { version: expected.engine, ctor: 'function' })

    // Issue 16 "done when": each integration works from the tarball in a fresh project.
    // The peers come from this checkout's node_modules (linked: no registry needed).
    for (const peer of ['ai', '@langchain/core', 'langchain', '@langchain/langgraph', 'better-sqlite3']) {
      await mkdir(join(app, 'node_modules', ...peer.split('/').slice(0, -1)), { recursive: true })
      await symlink(join(root, 'node_modules', peer), join(app, 'node_modules', peer))
    }
    await writeFile(join(app, 'ai-sdk.mjs'), `
import { generateText, tool, jsonSchema, stepCountIs, wrapLanguageModel } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { compactionMiddleware, prepareStepCompaction } from 'context-compactor/ai-sdk'
import { sqliteStore } from 'context-compactor/stores'
import Database from 'better-sqlite3'
function model(prompts) {
  return new MockLanguageModelV4({ doGenerate: async ({ prompt }) => {
    prompts.push(JSON.stringify(prompt).length)
    const n = prompts.length, more = n < 12
    return { content: more ? [{ type: 'tool-call', toolCallId: 'c' + n, toolName: 'read', input: '{"path":"f' + n + '"}' }] : [{ type: 'text', text: 'done' }],
      finishReason: { unified: more ? 'tool-calls' : 'stop', raw: undefined }, usage: { inputTokens: { total: 10 }, outputTokens: { total: 1 } }, warnings: [] }
  } })
}
const tools = { read: tool({ description: 'read', inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }), execute: async ({ path }) => path + ' '.padEnd(6000, 'x') }) }
const opts = { contextWindow: 6000, preserveRecentTurns: 2, preserveRecentBytes: 6000, outputReserveTokens: 256 }
const a = [], b = []
const prepareStep = prepareStepCompaction({ ...opts, tools })
await generateText({ model: model(a), prompt: 'read them all', tools, stopWhen: stepCountIs(12), prepareStep })
const middleware = compactionMiddleware(opts)
await generateText({ model: wrapLanguageModel({ model: model(b), middleware }), prompt: 'read them all', tools, stopWhen: stepCountIs(12) })
// over a session store (W-5): the engine's Session on SQLite
const db = new Database(':memory:')
const c = []
const overSession = prepareStepCompaction({ ...opts, tools, session: sqliteStore(db, 'chat-1') })
await generateText({ model: model(c), prompt: 'read them all', tools, stopWhen: stepCountIs(12), prepareStep: overSession })
const rec = await sqliteStore(db, 'chat-1').load()
console.log(JSON.stringify({ steps: [a.length, b.length, c.length], worst: [Math.max(...a), Math.max(...b), Math.max(...c)],
  compactions: [prepareStep.view.compactions.length, middleware.view.compactions.length, overSession.view.compactions.length],
  stored: { revision: rec.revision, summary: rec.transcript.some((m) => m.transcript_role === 'compaction_summary') } }))
`)
    const ai = JSON.parse((await run(process.execPath, ['ai-sdk.mjs'], { cwd: app })).stdout)
    assert.deepEqual(ai.steps, [12, 12, 12])
    assert.ok(ai.compactions.every((n) => n >= 2), JSON.stringify(ai))
    assert.ok(ai.worst.every((w) => w < 6000 * 4), JSON.stringify(ai))
    assert.ok(ai.stored.summary && ai.stored.revision >= 12, JSON.stringify(ai))

    await writeFile(join(app, 'langchain.mjs'), `
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'
import { fakeModel } from '@langchain/core/testing'
import { tool } from '@langchain/core/tools'
import { createAgent } from 'langchain'
import { compactionMiddleware, fromLangChainMessages, toLangChainMessages } from 'context-compactor/langchain'
const msgs = [new HumanMessage({ content: 'hi', id: 'h' }), new AIMessage({ content: '', id: 'a', tool_calls: [{ id: 't', name: 'f', args: { x: 1 } }], usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }), new ToolMessage({ content: 'r', tool_call_id: 't', artifact: { k: 1 } })]
const back = toLangChainMessages(JSON.parse(JSON.stringify(fromLangChainMessages(msgs))))
const model = fakeModel()
for (let i = 1; i < 10; i++) model.respondWithTools([{ name: 'read', args: { path: 'f' + i }, id: 'c' + i }])
model.respond(new AIMessage('done'))
const read = tool(async ({ path }) => path + ' '.padEnd(6000, 'y'), { name: 'read', description: 'read', schema: { type: 'object', properties: { path: { type: 'string' } } } })
const mw = compactionMiddleware({ contextWindow: 6000, preserveRecentTurns: 2, preserveRecentBytes: 6000, outputReserveTokens: 256 })
const r = await createAgent({ model, tools: [read], middleware: [mw] }).invoke({ messages: [new HumanMessage('read them all')] }, { recursionLimit: 60 })
console.log(JSON.stringify({ artifact: back[2].artifact, args: back[1].tool_calls[0].args, last: r.messages.at(-1).content, compactions: mw.stats().compactions.length }))
`)
    const lc = JSON.parse((await run(process.execPath, ['langchain.mjs'], { cwd: app })).stdout)
    assert.deepEqual(lc.artifact, { k: 1 })
    assert.deepEqual(lc.args, { x: 1 })
    assert.equal(lc.last, 'done')
    assert.ok(lc.compactions >= 2, JSON.stringify(lc))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
