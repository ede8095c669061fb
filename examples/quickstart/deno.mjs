// Quick start, Deno: `deno run --allow-read deno.mjs` (with the package in node_modules,
// or `npm:context-compactor` once it is published). Deno gets the web build: call
// `await init()` once; it reads the .wasm next to the module, hence --allow-read.
import init, { ContextCompactor } from 'context-compactor'
import { transcript } from './transcript.mjs'

await init()
const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4_000 })
const out = await compactor.compact(null, transcript())
console.log(JSON.stringify({ runtime: 'deno', status: out.status, before: out.before.messages, after: out.after.messages }))
