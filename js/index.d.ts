// Types for both entries (js/node.mjs and js/web.mjs): the wasm-bindgen declarations,
// plus `init` as a named alias of the default export.
export * from '../pkg/web/context_compactor.js'
export { default, default as init } from '../pkg/web/context_compactor.js'
