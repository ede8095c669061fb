// Typed errors where the wasm-bindgen glue would throw a bare Error (issue 16): a call on
// an object whose wasm side is gone (`free()` was called, or it was made with `new` where
// the API hands it out, e.g. `new LiveTranscript()`), and `new Session(compactor, store)`
// with something that is not a ContextCompactor of the same build. Each throws an Error
// with `name: "ContextCompactorError"` and a `code` (`invalid_state`, `invalid_config`)
// whose message says what to do. Not part of the public API: used by the entries.

function typed(code, message) {
  return Object.assign(new Error(message), { name: 'ContextCompactorError', code })
}

const MADE_BY = {
  ContextCompactor: 'new ContextCompactor(options)',
  LiveTranscript: 'compactor.open(transcript)',
  MemoryIndex: 'new MemoryIndex(options)',
  Session: 'new Session(compactor, store)',
}

function gone(name, key) {
  return typed('invalid_state', `${name}.${String(key)}: this ${name} has no WebAssembly side (free() was called on it, or it was not made by ${MADE_BY[name] ?? name}): make a new one with ${MADE_BY[name] ?? name}`)
}

const patched = new WeakSet()

/**
 * Patches the prototypes of `raw`'s classes in place (once) so a method or getter on an
 * object with no wasm pointer throws `invalid_state`, and returns `Session`: a wrapper
 * of `raw.Session` whose constructor throws `invalid_config` for a `compactor` that is
 * not a live `raw.ContextCompactor` (a lite compactor needs the lite `Session`).
 */
export function typedApi(raw) {
  for (const name of Object.keys(MADE_BY)) {
    const C = raw[name]
    if (typeof C !== 'function' || patched.has(C)) continue
    patched.add(C)
    for (const key of Object.getOwnPropertyNames(C.prototype)) {
      if (key === 'constructor') continue
      if (key === 'free') {
        // a second free() names free, not the glue's internal __destroy_into_raw
        const f = C.prototype.free
        Object.defineProperty(C.prototype, 'free', { ...Object.getOwnPropertyDescriptor(C.prototype, 'free'), value: { free(...args) { if (!this?.__wbg_ptr) throw typed('invalid_state', `${name}.free: free() was already called on this ${name} (or it has no WebAssembly side): nothing to free`); return f.apply(this, args) } }.free })
        continue
      }
      const d = Object.getOwnPropertyDescriptor(C.prototype, key)
      if (typeof d.value === 'function') {
        const f = d.value
        d.value = { [key](...args) { if (!this?.__wbg_ptr) throw gone(name, key); return f.apply(this, args) } }[key]
      } else if (typeof d.get === 'function') {
        const g = d.get
        d.get = function () { if (!this?.__wbg_ptr) throw gone(name, key); return g.call(this) }
      } else continue
      Object.defineProperty(C.prototype, key, d)
    }
  }
  const Compactor = raw.ContextCompactor
  const Session = new Proxy(raw.Session, {
    construct(target, args, newTarget) {
      const c = args[0]
      if (!(c instanceof Compactor)) {
        const what = c?.constructor?.name === 'ContextCompactor' ? 'a ContextCompactor of another build (context-compactor and context-compactor/lite each have their own Session: use the Session of the entry the compactor comes from)' : `${c === null ? 'null' : typeof c}`
        throw typed('invalid_config', `new Session(compactor, store): compactor must be a ContextCompactor (new ContextCompactor(options)); got ${what}`)
      }
      if (!c.__wbg_ptr) throw gone('ContextCompactor', 'Session')
      return Reflect.construct(target, args, newTarget === Session ? target : newTarget)
    },
  })
  return { Session }
}
