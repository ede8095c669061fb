// context-compactor/lite for browsers, Deno, workerd and bundlers: the `lite` build (no log
// importers, no embedded memory index; those calls throw `not_in_lite`), wasm-bindgen web output.
// Call `await init()` (or `initSync({ module })`) once before using the API; a call
// before that throws an Error with `code: "not_initialized"` saying so (J-2).
import * as raw from '../pkg/lite/web/context_compactor.js'
import { guardedApi } from './guard.mjs'

export * from '../pkg/lite/web/context_compactor.js'

const api = guardedApi(raw,
  ['ContextCompactor', 'LiveTranscript', 'MemoryIndex', 'Session'],
  ['detectFormat', 'dropStoreScope', 'enumerateStore', 'importTranscript', 'recallFromStore', 'recallToolDefinition', 'recordFinding', 'version'])

export const { init, initSync } = api
export default init
export const { ContextCompactor, LiveTranscript, MemoryIndex, Session } = api.classes
export const { detectFormat, dropStoreScope, enumerateStore, importTranscript, recallFromStore, recallToolDefinition, recordFinding, version } = api.fns
