// Entry for Cloudflare workerd / Workers (conditions "workerd" and "worker"): the runtime
// hands the .wasm in as a compiled WebAssembly.Module (wrangler's CompiledWasm rule, or a
// `wasm = embed` module in a workerd config), so the module is instantiated synchronously
// on import. `init()` / `initSync()` stay callable and return the existing instance.
import wasm from '../pkg/web/context_compactor_bg.wasm'
import { initSync } from '../pkg/web/context_compactor.js'

initSync({ module: wasm })

export * from '../pkg/web/context_compactor.js'
import * as raw from '../pkg/web/context_compactor.js'
import { typedApi } from './typed.mjs'

// typed errors for freed objects and a Session over a non-compactor (issue 16)
export const { Session } = typedApi(raw)
export { default, default as init } from '../pkg/web/context_compactor.js'
