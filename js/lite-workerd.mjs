// context-compactor/lite for Cloudflare workerd / Workers: the `lite` build's web output,
// instantiated synchronously on import from the compiled module the runtime hands in (as
// js/workerd.mjs does for the full build).
import wasm from '../pkg/lite/web/context_compactor_bg.wasm'
import { initSync } from '../pkg/lite/web/context_compactor.js'

initSync({ module: wasm })

export * from '../pkg/lite/web/context_compactor.js'
import * as raw from '../pkg/lite/web/context_compactor.js'
import { typedApi } from './typed.mjs'

// typed errors for freed objects and a Session over a non-compactor (issue 16)
export const { Session } = typedApi(raw)
export { default, default as init } from '../pkg/lite/web/context_compactor.js'
