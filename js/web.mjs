// Entry for browsers, Deno, workerd and bundlers: the wasm-bindgen `--target web` output.
// Call `await init()` (or `initSync({ module })`) once before using the API; a call
// before that throws an Error with `code: "not_initialized"` saying so (J-2).
import * as raw from '../pkg/web/context_compactor.js'
import { guardedApi } from './guard.mjs'

export * from '../pkg/web/context_compactor.js'

const api = guardedApi(raw,
  ['ContextCompactor', 'LiveTranscript', 'MemoryIndex', 'Session'],
  ['detectFormat', 'dropStoreScope', 'enumerateStore', 'importTranscript', 'recallFromStore', 'recallToolDefinition', 'recordFinding', 'version'])

export const { init, initSync } = api
export default init
export const { ContextCompactor, LiveTranscript, MemoryIndex, Session } = api.classes
export const { detectFormat, dropStoreScope, enumerateStore, importTranscript, recallFromStore, recallToolDefinition, recordFinding, version } = api.fns
