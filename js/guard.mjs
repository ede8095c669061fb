// The ES-module entries over a wasm-bindgen `--target web` output (js/web.mjs, the full
// build; js/lite.mjs, the lite build): until `init()` / `initSync()` has run, every class
// constructor, static method and function of the API throws an Error with
// `code: "not_initialized"` saying what to call first (J-2).

function notInitialized(name) {
  const err = new Error(`${name} was called before the WebAssembly module was loaded: call \`await init()\` once first (or \`initSync({ module })\` with the .wasm bytes or a WebAssembly.Module, e.g. from 'context-compactor/wasm')`)
  err.name = 'ContextCompactorError'
  err.code = 'not_initialized'
  return err
}

/**
 * The guarded API of one wasm-bindgen web output `raw` (its module namespace):
 * `{ init, initSync, classes: { Name: GuardedClass }, fns: { name: guardedFn } }`.
 * `classes` / `fns` name what to guard (each must exist on `raw`).
 */
export function guardedApi(raw, classes, fns) {
  let ready = false
  const guarded = new Map()
  /** Guards a wasm-bindgen class: `new` and its static methods throw `not_initialized` before init. */
  function guardClass(Class) {
    const p = new Proxy(Class, {
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
    guarded.set(Class, p)
    return p
  }
  function guardFn(fn, name) {
    return function (...args) {
      if (!ready) throw notInitialized(`${name}()`)
      return fn.apply(this, args)
    }
  }
  return {
    /** Instantiates the wasm; idempotent. */
    async init(input) {
      const out = await raw.default(input)
      ready = true
      return out
    },
    /** Instantiates the wasm synchronously from bytes or a `WebAssembly.Module`; idempotent. */
    initSync(input) {
      const out = raw.initSync(input)
      ready = true
      return out
    },
    classes: Object.fromEntries(classes.map((n) => [n, guardClass(raw[n])])),
    fns: Object.fromEntries(fns.map((n) => [n, guardFn(raw[n], n)])),
  }
}
