// Entry for Node: the wasm-bindgen `--target nodejs` output, instantiated on import.
// `init` / `initSync` are no-ops so code written for the web entry runs unchanged.
export * from '../pkg/node/context_compactor.js'
export default async function init() {}
export { init }
export function initSync() {}
