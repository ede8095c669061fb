// context-compactor/lite for Cloudflare workerd / Workers: the `lite` build's web output,
// instantiated synchronously on import from the compiled module the runtime hands in (as
// js/workerd.mjs does for the full build).
import wasm from '../pkg/lite/web/context_compactor_bg.wasm'
import { initSync } from '../pkg/lite/web/context_compactor.js'

initSync({ module: wasm })

export * from '../pkg/lite/web/context_compactor.js'
export { default, default as init } from '../pkg/lite/web/context_compactor.js'
