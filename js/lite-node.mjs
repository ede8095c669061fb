// context-compactor/lite for Node: the `lite` build (no log importers, no embedded memory
// index; `importTranscript` and `new MemoryIndex()` throw `not_in_lite`), the wasm-bindgen
// `nodejs` output, instantiated on import. `init` / `initSync` are no-ops, as in js/node.mjs.
export * from '../pkg/lite/node/context_compactor.js'
export default async function init() {}
export { init }
export function initSync() {}
