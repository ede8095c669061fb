// Quick start, bundlers (esbuild, Vite, webpack) and browsers: the "browser" condition
// gives the web build. Call init() once: it fetches the .wasm next to the module
// (bundlers copy it as an asset), or pass the bytes / a compiled module to initSync.
import init, { ContextCompactor } from 'context-compactor'
import { transcript } from './transcript.mjs'

export async function run(wasm) {
  await init(wasm === undefined ? undefined : { module_or_path: wasm })
  const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4_000 })
  const out = await compactor.compact(null, transcript())
  return { runtime: 'bundle', status: out.status, before: out.before.messages, after: out.after.messages }
}
