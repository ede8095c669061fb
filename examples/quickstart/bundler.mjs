// Quick start, bundlers (esbuild, Vite, webpack) and browsers: the "browser" condition
// gives the web build. Call init() once: it fetches the .wasm by new URL(..., import.meta.url),
// which Vite and webpack emit as an asset and esbuild does not; with esbuild, copy the .wasm
// yourself or hand its bytes to run(bytes), which passes them to init({ module_or_path }).
import init, { ContextCompactor } from 'context-compactor'
import { transcript } from './transcript.mjs'

export async function run(wasm) {
  await init(wasm === undefined ? undefined : { module_or_path: wasm })
  const compactor = new ContextCompactor({ format: 'openai-chat', contextWindow: 4_000 })
  const out = await compactor.compact(null, transcript())
  return { runtime: 'bundle', status: out.status, before: out.before.messages, after: out.after.messages }
}
