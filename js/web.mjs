// Entry for browsers, Deno, workerd and bundlers: the wasm-bindgen `--target web` output.
// Call `await init()` (or `initSync({ module })`) once before using the API.
export * from '../pkg/web/context_compactor.js'
export { default, default as init } from '../pkg/web/context_compactor.js'
