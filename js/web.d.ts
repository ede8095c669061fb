// Types of the ES-module entries ("." for import / browser / Deno / workerd / bundlers,
// "./web", "./workerd"): the whole API of js/index.d.ts plus `init` / `initSync`.
// CommonJS (`require`) gets js/index.d.cts, which has no `init`: it is undefined there.
export * from './index.js'

/** What `init` / `initSync` accept: a URL or response of the .wasm, its bytes, or a compiled module. */
/** What `init` loads the module from: a URL (string or `URL`), a `Request` / `Response`,
 * the bytes, or a compiled `WebAssembly.Module`. Typed loosely so the types need no DOM lib. */
export type InitInput = string | ArrayBuffer | ArrayBufferView | object
/** The bytes (`ArrayBuffer` / typed array) or a compiled `WebAssembly.Module`. */
export type SyncInitInput = ArrayBuffer | ArrayBufferView | object

/** Instantiates the wasm (web / Deno / bundlers). Without an argument it fetches the .wasm
 * next to the module. A no-op in Node and workerd (instantiated on import). Idempotent. */
export function init(input?: { module_or_path: InitInput | Promise<InitInput> }): Promise<unknown>
/** Instantiates synchronously from bytes or a `WebAssembly.Module` (e.g. `context-compactor/wasm`). Idempotent. */
export function initSync(input: { module: SyncInitInput }): unknown
export default init
