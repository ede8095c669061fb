//! A JS string's UTF-8 text in wasm memory with no over-allocation (issue 15 item 6:
//! peak wasm memory).
//!
//! wasm-bindgen's own string glue (`JsValue::as_string`) allocates the UTF-16 length,
//! and at the first non-ASCII character grows that buffer to three bytes for every
//! unit left before it shrinks it to what was written: for a 10 MB transcript with one
//! `é` near its start that is a 30 MB buffer, which set the peak of every call (the
//! memory of a fresh instance after `check` alone was 4.12x the transcript). Here the
//! text is written by `TextEncoder.encodeInto` straight into the spare capacity of one
//! buffer sized at the UTF-16 length plus 1/64, grown (rarely) by the rest's estimate at
//! the bytes-per-unit ratio seen so far.

use js_sys::{JsString, Reflect, Uint8Array, WebAssembly};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The host's `TextEncoder` (every runtime the package supports has one; so does
    /// wasm-bindgen's glue, which uses it).
    #[wasm_bindgen(js_name = TextEncoder)]
    type Utf8Encoder;

    #[wasm_bindgen(constructor, js_class = "TextEncoder")]
    fn new() -> Utf8Encoder;

    /// `encoder.encodeInto(source, dest)` -> `{ read, written }` (UTF-16 units read,
    /// bytes written; never splits a surrogate pair).
    #[wasm_bindgen(method, js_class = "TextEncoder", js_name = encodeInto)]
    fn encode_into(this: &Utf8Encoder, source: &JsString, dest: &Uint8Array) -> JsValue;
}

fn field(v: &JsValue, key: &str) -> usize {
    Reflect::get(v, &JsValue::from_str(key)).ok().and_then(|n| n.as_f64()).map_or(0, |n| n as usize)
}

/// The UTF-8 text of `s` (lone surrogates become U+FFFD, as `JsValue::as_string` makes
/// them; callers that must refuse them check first). Holds at most the text plus 1/64
/// (plus one estimate of the rest when the text has more multi-byte characters than
/// that) at any time.
///
/// Anything but a string (`JSON.stringify` of a function or `undefined` answers
/// `undefined`, typed as a `JsString` by js-sys) gives `""`, as `as_string` gave, so the
/// caller's JSON parse reports it with its typed error.
pub(crate) fn exact(s: &JsString) -> String {
    if !s.is_string() {
        return String::new();
    }
    let units = s.length() as usize;
    let mut out: Vec<u8> = Vec::with_capacity(units + units / 64 + 16);
    let encoder = Utf8Encoder::new();
    let mut read = 0usize;
    let mut rest = s.clone();
    while read < units {
        let spare = out.capacity() - out.len();
        // the view is made after the buffer is reserved (an allocation may grow the
        // memory, which detaches older views)
        let Ok(memory) = wasm_bindgen::memory().dyn_into::<WebAssembly::Memory>() else {
            return JsValue::from(s).as_string().unwrap_or_default();
        };
        let at = out.as_ptr() as usize + out.len();
        let view = Uint8Array::new_with_byte_offset_and_length(&memory.buffer(), at as u32, spare as u32);
        let done = encoder.encode_into(&rest, &view);
        let (n_read, n_written) = (field(&done, "read"), field(&done, "written").min(spare));
        // SAFETY: `encodeInto` wrote `n_written` bytes (capped at the spare capacity it
        // was given) into the spare capacity right after `out.len()`; they are UTF-8
        // (checked again by `String::from_utf8` below).
        unsafe { out.set_len(out.len() + n_written) };
        read += n_read;
        if read >= units {
            break;
        }
        rest = s.slice(read as u32, units as u32);
        // grow by the rest's estimate at the bytes-per-unit ratio so far (2% over)
        let ratio = out.len() as f64 / read.max(1) as f64;
        let estimate = ((units - read) as f64 * ratio.max(1.0) * 1.02) as usize;
        out.reserve_exact(estimate.max(16));
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
