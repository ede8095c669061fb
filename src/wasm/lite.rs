//! Stand-ins of the `lite` build (Cargo feature `lite`, the `context-compactor/lite`
//! entry; issue 15): the parts it leaves out keep their names in the API and throw a
//! `ContextCompactorError` with `code: "not_in_lite"` saying what is missing and which
//! entry has it, so a host finds out at the call instead of from an `undefined`.
//!
//! Left out: the log importers (`importTranscript`, `src/formats/import`, N-3) and the
//! embedded memory index (`MemoryIndex`, M-3). Everything else, including the memory
//! projection to host hooks (`memory` sink objects, `store`, `embed`, M-1) and the
//! host-store recall path (M-2, M-4), is the same as in the full build.

use super::js_error;
use crate::error::{Error, ErrorCode};
use wasm_bindgen::prelude::*;

/// The `not_in_lite` error for `what` (a call) needing `part` (what the build left out).
fn not_in_lite(what: &str, part: &str) -> JsValue {
    js_error(&Error::new(
        ErrorCode::NotInLite,
        format!("{what} is not in context-compactor/lite, which leaves out {part}; import it from 'context-compactor' (the full build)"),
    ))
}

const IMPORTERS: &str = "the log importers (claude-code-jsonl, codex-rollout, swe-agent-traj, tau-bench, glaive); a transcript already in a provider format (openai-chat, openai-responses, anthropic, gemini, ai-sdk) goes to compact() as it is";
const INDEX: &str = "the embedded memory index; hand memory to your own store with the `store` hook (or a `memory` object with add(records)) and read it back with recallFromStore";

/// `importTranscript(kind, text, options)` in the lite build: always throws `not_in_lite`.
#[wasm_bindgen(js_name = importTranscript)]
pub fn import_transcript(_kind: JsValue, _text: JsValue, _options: JsValue) -> Result<JsValue, JsValue> {
    Err(not_in_lite("importTranscript", IMPORTERS))
}

/// `MemoryIndex` in the lite build: `new MemoryIndex()` and `MemoryIndex.restore()`
/// throw `not_in_lite`.
#[wasm_bindgen]
pub struct MemoryIndex {}

#[wasm_bindgen]
impl MemoryIndex {
    /// Throws `not_in_lite`.
    #[wasm_bindgen(constructor)]
    pub fn new(_options: JsValue) -> Result<MemoryIndex, JsValue> {
        Err(not_in_lite("new MemoryIndex()", INDEX))
    }

    /// Throws `not_in_lite`.
    pub fn restore(_bytes: JsValue) -> Result<MemoryIndex, JsValue> {
        Err(not_in_lite("MemoryIndex.restore", INDEX))
    }
}
