//! `compactor.open(transcript)` -> `LiveTranscript`: a session handle that keeps the
//! decoded transcript and its measurements in the engine between model calls, so
//! `append` + `check` cost what was appended (see [`crate::live`]).

use super::{to_js, deliver, drive_job, from_json, js_error, parse_signals, to_json, ContextCompactor};
use crate::error::{Error, ErrorCode};
use crate::formats::View;
use crate::live::LiveTranscript as Core;
use js_sys::Promise;
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

/// A transcript held by the engine (JS class `LiveTranscript`), made by
/// `compactor.open(transcript)`. Call `free()` when done with it.
#[wasm_bindgen]
pub struct LiveTranscript {
    /// `None` while a `compact` is running on it.
    inner: Rc<RefCell<Option<Core>>>,
}

fn busy() -> JsValue {
    js_error(&Error::new(ErrorCode::ProtocolError, "the live transcript is being compacted; await compact() first"))
}

#[wasm_bindgen]
impl ContextCompactor {
    /// `open(transcript)` -> `LiveTranscript`: decodes the transcript (a JSON string —
    /// the fast path — or an object) once and keeps it with its measures. Throws
    /// `invalid_transcript` / `unknown_format` and the pairing codes like `check` (issue 14).
    pub fn open(&self, transcript: JsValue) -> Result<LiveTranscript, JsValue> {
        let (format, text) = super::input_text(&self.config, self.format, &transcript)?;
        let core = Core::open_text(self.config.clone(), format, &text).map_err(|e| js_error(&e))?;
        Ok(LiveTranscript { inner: Rc::new(RefCell::new(Some(core))) })
    }
}

#[wasm_bindgen]
impl LiveTranscript {
    /// `append(rows)`: adds provider messages (an array of messages, one message
    /// object, or their JSON text); only these rows are decoded and measured. Atomic:
    /// throws `invalid_transcript` (naming the offset), or a pairing code
    /// (`unpaired_tool_result`, ...) when the rows break the format's pairing rules (an
    /// orphan tool result, issue 14), and appends nothing. `null` /
    /// `undefined` (no rows) throws `invalid_transcript` too (issue 14: not a silent no-op).
    pub fn append(&self, rows: JsValue) -> Result<(), JsValue> {
        if rows.is_null() || rows.is_undefined() {
            return Err(js_error(&Error::new(ErrorCode::InvalidTranscript, format!("append(rows): rows must be a message, an array of messages or their JSON text, got {}", super::js_type(&rows)))));
        }
        let rows = match to_json(&rows, "rows")? {
            Value::Array(items) => items,
            Value::Null => return Err(js_error(&Error::new(ErrorCode::InvalidTranscript, "append(rows): rows must not be null"))),
            one => vec![one],
        };
        let mut cell = self.inner.borrow_mut();
        let core = cell.as_mut().ok_or_else(busy)?;
        core.append(rows).map_err(|e| js_error(&e))
    }

    /// `check(state | null, signals?)` -> the same decision object as
    /// `compactor.check(state, transcript, signals)` on the whole held transcript, in
    /// time independent of its length (C-9: nothing is recorded), with the same trust
    /// boundary (issue 14: pins the state does not vouch for are not in the floor).
    pub fn check(&self, state: JsValue, signals: JsValue) -> Result<JsValue, JsValue> {
        let state = super::state_of(&state)?;
        let hooks = signals;
        let mut signals = parse_signals(&hooks)?;
        let mut cell = self.inner.borrow_mut();
        let core = cell.as_mut().ok_or_else(busy)?;
        // I-4: a `countTokens` hook counts the whole held transcript (one pass).
        if let Some(answer) = super::call_count(&hooks, core.transcript(), &signals)? {
            if super::is_thenable(&answer) {
                return Err(js_error(&crate::error::Error::new(crate::error::ErrorCode::InvalidConfig, "countTokens returned a Promise: the live `check` is synchronous; count first, or use `compactor.checkAsync`")));
            }
            signals.counted = Some(super::read_counts(&answer, core.transcript(), signals.tools.is_some())?);
        }
        let d = core.check(&state, &signals);
        to_js(&d)
    }

    /// `compact(state | null, hooks?)` -> Promise of the same result object as
    /// `compactor.compact(state, transcript, hooks)`. A committed rewrite replaces the
    /// held transcript; otherwise it is kept as it was. While it runs, the handle's
    /// other methods throw `protocol_error`.
    pub fn compact(&self, state: JsValue, hooks: JsValue) -> Promise {
        let inner = self.inner.clone();
        wasm_bindgen_futures::future_to_promise(async move {
            let state = super::state_of(&state)?;
            // Validate the hooks before the held transcript moves into the job.
            super::parse_signals(&hooks)?;
            super::memory::MemoryHooks::from_hooks(&hooks)?;
            let mut core = inner.borrow_mut().take().ok_or_else(busy)?;
            let config = core.config().clone();
            // I-4: count before the held transcript moves, so a failing hook keeps it.
            let mut signals = parse_signals(&hooks)?;
            if let Err(e) = super::counted_async(&hooks, core.transcript(), &mut signals).await {
                *inner.borrow_mut() = Some(core);
                return Err(super::session::with_state(e, &state));
            }
            let state_in = state.clone();
            let mut job = super::start_job_with(config, state, core.take(), &hooks, signals)?;
            let (mut outcome, callback_error) = match drive_job(&mut job, &hooks).await {
                Ok(done) => done,
                Err(e) => {
                    core.restore(job.into_transcript());
                    *inner.borrow_mut() = Some(core);
                    return Err(super::session::with_state(e, &state_in));
                }
            };
            let out = match super::result_pieces(&outcome, &hooks) {
                Ok(out) => out,
                Err(e) => {
                    core.settle(&mut outcome);
                    *inner.borrow_mut() = Some(core);
                    return Err(e);
                }
            };
            core.settle(&mut outcome);
            *inner.borrow_mut() = Some(core);
            deliver(&outcome, out, callback_error, &hooks, true).await
        })
    }

    /// `transcript()` -> the held transcript, stored view (provenance keys kept, F-4).
    pub fn transcript(&self) -> Result<JsValue, JsValue> {
        let cell = self.inner.borrow();
        let core = cell.as_ref().ok_or_else(busy)?;
        from_json(&core.encode(View::Stored))
    }

    /// Number of rows held.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> Result<usize, JsValue> {
        let cell = self.inner.borrow();
        Ok(cell.as_ref().ok_or_else(busy)?.len())
    }
}
