// Entry for browsers, Deno, workerd and bundlers: the wasm-bindgen `--target web` output.
// Call `await init()` (or `initSync({ module })`) once before using the API; a call
// before that throws an Error with `code: "not_initialized"` saying so (J-2).
import * as raw from '../pkg/web/context_compactor.js'
import rawInit, { initSync as rawInitSync } from '../pkg/web/context_compactor.js'

export * from '../pkg/web/context_compactor.js'

let ready = false

function notInitialized(name) {
  const err = new Error(`${name} was called before the WebAssembly module was loaded: call \`await init()\` once first (or \`initSync({ module })\` with the .wasm bytes or a WebAssembly.Module, e.g. from 'context-compactor/wasm')`)
  err.name = 'ContextCompactorError'
  err.code = 'not_initialized'
  return err
}

/** Guards a wasm-bindgen class: `new` and its static methods throw `not_initialized` before init. */
function guardClass(Class) {
  return new Proxy(Class, {
    construct(target, args, newTarget) {
      if (!ready) throw notInitialized(`new ${target.name}`)
      return Reflect.construct(target, args, newTarget === guarded.get(target) ? target : newTarget)
    },
    get(target, key, receiver) {
      const v = Reflect.get(target, key, target)
      if (typeof v === 'function' && key !== 'prototype' && Object.prototype.hasOwnProperty.call(target, key)) {
        return (...args) => {
          if (!ready) throw notInitialized(`${target.name}.${String(key)}`)
          return v.apply(target, args)
        }
      }
      return v
    },
  })
}
const guarded = new Map()
function guard(Class) {
  const p = guardClass(Class)
  guarded.set(Class, p)
  return p
}

function guardFn(fn, name) {
  return function (...args) {
    if (!ready) throw notInitialized(`${name}()`)
    return fn.apply(this, args)
  }
}

/** Instantiates the wasm; idempotent. */
export async function init(input) {
  const out = await rawInit(input)
  ready = true
  return out
}
export default init

/** Instantiates the wasm synchronously from bytes or a `WebAssembly.Module`; idempotent. */
export function initSync(input) {
  const out = rawInitSync(input)
  ready = true
  return out
}

export const ContextCompactor = guard(raw.ContextCompactor)
export const LiveTranscript = guard(raw.LiveTranscript)
export const MemoryIndex = guard(raw.MemoryIndex)
export const Session = guard(raw.Session)
export const detectFormat = guardFn(raw.detectFormat, 'detectFormat')
export const dropStoreScope = guardFn(raw.dropStoreScope, 'dropStoreScope')
export const enumerateStore = guardFn(raw.enumerateStore, 'enumerateStore')
export const importTranscript = guardFn(raw.importTranscript, 'importTranscript')
export const recallFromStore = guardFn(raw.recallFromStore, 'recallFromStore')
export const recallToolDefinition = guardFn(raw.recallToolDefinition, 'recallToolDefinition')
export const recordFinding = guardFn(raw.recordFinding, 'recordFinding')
export const version = guardFn(raw.version, 'version')
