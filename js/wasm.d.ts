// `context-compactor/wasm`: the raw module. Runtimes that import .wasm as a module
// (workerd, wrangler, some bundlers) give a compiled `WebAssembly.Module`; pass it to
// `initSync({ module })` or `init({ module_or_path })` of the main entry.
/** A compiled `WebAssembly.Module` (typed as `object` so no DOM lib is needed). */
declare const module: object
export default module
