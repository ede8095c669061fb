// Entry for browsers, Deno, workerd and bundlers: the wasm-bindgen `--target web` output.
// Call `await init()` (or `initSync({ module })`) once before using the API; a call
// before that throws an Error with `code: "not_initialized"` saying so (J-2).
import * as raw from '../pkg/web/context_compactor.js'
import { guardedApi } from './guard.mjs'
import { typedApi } from './typed.mjs'

export * from '../pkg/web/context_compactor.js'

// typed errors for freed objects and a Session over a non-compactor (issue 16)
const api = guardedApi({ ...raw, ...typedApi(raw) },
  ['ContextCompactor', 'LiveTranscript', 'MemoryIndex', 'Session'],
  ['detectFormat', 'dropStoreScope', 'enumerateStore', 'importTranscript', 'pin', 'recallFromStore', 'recallToolDefinition', 'recordFinding', 'trustProvenance', 'version'])

export const { init, initSync } = api
export default init
export const { ContextCompactor, LiveTranscript, MemoryIndex, Session } = api.classes
export const { detectFormat, dropStoreScope, enumerateStore, importTranscript, pin, recallFromStore, recallToolDefinition, recordFinding, trustProvenance, version } = api.fns
