// Reading a wasm module's binary format (the few pieces the size tools need): an unsigned
// LEB128 number, and the top-level sections (id, and the bytes of its body).
// Used by scripts/bench-size.mjs and bench/size-breakdown.mjs.

/** The unsigned LEB128 number at `bytes[at]`: `[value, offset just past it]`. */
export function readLeb(bytes, at) {
  let r = 0
  let s = 0
  let b
  do {
    b = bytes[at++]
    r += (b & 0x7f) * 2 ** s
    s += 7
  } while (b & 0x80)
  return [r, at]
}

/** The module's sections in order: `[{ id, body }]` (`body` a view into `bytes`). */
export function sections(bytes) {
  const out = []
  let p = 8 // magic and version
  while (p < bytes.length) {
    const id = bytes[p++]
    const [size, start] = readLeb(bytes, p)
    out.push({ id, body: bytes.subarray(start, start + size) })
    p = start + size
  }
  return out
}
