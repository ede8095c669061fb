// `context-compactor/wasm`: the raw module. Runtimes that import .wasm as a module
// (workerd, wrangler, some bundlers) give a compiled `WebAssembly.Module`; pass it to
// `initSync({ module })` or `init({ module_or_path })` of the main entry.
declare const module: WebAssembly.Module
export default module
