//! Capacity operations on `ContextCompactor` (C-3, C-6, C-7, B-1..B-3): what the host
//! reports between checks, and per-request bounding. Each returns plain JSON; none
//! touches the stored transcript.

use super::{to_js, decode_input, from_json, js_error, state_of, str_arg, to_json, ContextCompactor};
use crate::bound::{bound_request, BoundOptions};
use crate::capacity::{note_transcript_edit, observe_usage, record_refusal, EditKind, Observation};
use crate::error::{Error, ErrorCode};
use crate::state::SessionState;
use wasm_bindgen::prelude::*;

fn state_json(s: &SessionState) -> Result<JsValue, JsValue> {
    to_js(s)
}

fn options<T: serde::de::DeserializeOwned + Default>(v: &JsValue, what: &str) -> Result<T, JsValue> {
    let j = to_json(v, what)?;
    if j.is_null() {
        return Ok(T::default());
    }
    serde_json::from_value(j).map_err(|e| js_error(&Error::new(ErrorCode::InvalidConfig, format!("{what}: {e}"))))
}

#[wasm_bindgen]
impl ContextCompactor {
    /// `observeUsage(state, transcript, { usage, provider?, model?, bounded?, tools?, toolsBytes?, onEvent? })`
    /// -> new state. Records an answered request: `transcript` as that request carried it
    /// (before the answer). Sent whole: anchors the projection (count, rows, provider,
    /// model), calibrates the estimate, clears a recorded refusal. `bounded: true`
    /// (the request carried shortened results): anchors nothing, keeps the refusal.
    #[wasm_bindgen(js_name = observeUsage)]
    pub fn observe_usage(&self, state: JsValue, transcript: JsValue, observation: JsValue) -> Result<JsValue, JsValue> {
        let state = state_of(&state)?;
        let t = decode_input(&self.config, self.format, &transcript)?;
        let obs: Observation = options(&observation, "observation")?;
        // I-3: an unreadable usage object is reported to `onEvent` as a `warning` event
        // (`code: "usage_unreadable"`, its keys named), never dropped silently.
        if let Some(w) = obs.usage.as_ref().and_then(crate::formats::usage_warning) {
            if let Ok(f) = super::get(&observation, "onEvent").dyn_into::<js_sys::Function>() {
                let ev = serde_json::json!({ "type": "warning", "data": { "code": w.code, "message": w.message } });
                f.call1(&JsValue::NULL, &from_json(&ev)?)?;
            }
        }
        state_json(&observe_usage(&state, &t, &self.config, &obs))
    }

    /// `recordRefusal(state)` -> new state: the provider refused a request for not
    /// fitting the context; the next whole-transcript check compacts once (C-6).
    #[wasm_bindgen(js_name = recordRefusal)]
    pub fn record_refusal(&self, state: JsValue) -> Result<JsValue, JsValue> {
        state_json(&record_refusal(&state_of(&state)?))
    }

    /// `noteTranscriptEdit(state, kind)` -> new state. `kind`: `edit`, `revision_restore`,
    /// `system_prompt`, `fork`. Drops the projection anchor; `edit` and `fork` also drop
    /// a recorded refusal (C-3, C-6). Throws `invalid_config` for another kind.
    #[wasm_bindgen(js_name = noteTranscriptEdit)]
    pub fn note_transcript_edit(&self, state: JsValue, kind: JsValue) -> Result<JsValue, JsValue> {
        let kind = str_arg(&kind, "noteTranscriptEdit: kind", ErrorCode::InvalidConfig)?;
        let kind = EditKind::parse(&kind).map_err(|e| js_error(&e))?;
        state_json(&note_transcript_edit(&state_of(&state)?, kind))
    }

    /// `boundRequest(state, transcript, { maxRequestBytes?, inputBudgetTokens?, tools?,
    /// toolsBytes?, requestBytes?, compaction?, onEvent? })` -> `{ request, bounded: [{ callId,
    /// name, offset, keptBytes, wholeBytes, mediaOmitted }], limit, before, after, fits,
    /// event, state }` (B-1..B-3). `request` is the request view to send; the stored
    /// transcript is not touched.
    #[wasm_bindgen(js_name = boundRequest)]
    pub fn bound_request(&self, state: JsValue, transcript: JsValue, opts: JsValue) -> Result<JsValue, JsValue> {
        let opts_js = opts.clone();
        let state = state_of(&state)?;
        let t = decode_input(&self.config, self.format, &transcript)?;
        let opts: BoundOptions = options(&opts, "options")?;
        let out = bound_request(&t, &self.config, &state, &opts).map_err(|e| js_error(&e))?;
        // J-4 / B-3: the bounding event reaches `opts.onEvent` (sync; a throw is ignored:
        // the event is in the result too)
        if let (Some(ev), Ok(f)) = (&out.event, super::get(&opts_js, "onEvent").dyn_into::<js_sys::Function>()) {
            if let Ok(arg) = super::to_js(ev) {
                let _ = f.call1(&JsValue::NULL, &arg);
            }
        }
        from_json(&out.to_json())
    }
}
