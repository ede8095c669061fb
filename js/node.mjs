// Entry for Node: the wasm-bindgen `--target nodejs` output, instantiated on import.
// `init` / `initSync` are no-ops so code written for the web entry runs unchanged.
export * from '../pkg/node/context_compactor.js'
import * as raw from '../pkg/node/context_compactor.js'
import { typedApi } from './typed.mjs'

// typed errors for freed objects and a Session over a non-compactor (issue 16)
export const { Session } = typedApi(raw)
export default async function init() {}
export { init }
export function initSync() {}
