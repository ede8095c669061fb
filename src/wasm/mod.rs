//! The only code that touches wasm-bindgen / js-sys: a thin layer over the core.
//!
//! Transcripts cross the boundary as JSON text: a JS value is `JSON.stringify`-ed once
//! (or taken as is when the host passes a string) and parsed once in Rust; results are
//! serialized once and `JSON.parse`-d. That keeps the bytes identical in every runtime
//! (J-5) and avoids walking JS objects field by field.
//!
//! Callbacks may be sync or return Promises: every result goes through
//! `Promise.resolve` before it is awaited (J-2). A callback's throw or rejection leaves
//! the transcript untouched and reaches the caller unchanged.

use crate::config::{Config, ConfigInput};
use crate::engine::{Job, JobOptions, Outcome, Reply, Step};
use crate::error::{Error, ErrorCode};
use crate::formats::{self, Format};
use crate::state::SessionState;
use crate::trigger::{count_texts, decide, Signals, TokenCounts};
use js_sys::{Function, Promise, Reflect, JSON};
use serde_json::Value;
use crate::output::{MemoryRecords, ResultJson};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// Every async export's Promise, from one boxed future type: the promise driver
/// (`future_to_promise`'s poll loop) is compiled once instead of once per export
/// (issue 15, size: about 7 KB of brotli).
pub(crate) fn promise(f: impl std::future::Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let f: std::pin::Pin<Box<dyn std::future::Future<Output = Result<JsValue, JsValue>>>> = Box::pin(f);
    wasm_bindgen_futures::future_to_promise(f)
}

mod bounded;
mod capacity;
mod live;
#[cfg(feature = "lite")]
mod lite;
mod memory;
mod session;
mod utf8;

/// The package version (Cargo.toml `version`).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// A JS `Error` with a stable `code` property (J-2).
pub(crate) fn js_error(e: &Error) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    let _ = Reflect::set(&err, &"code".into(), &e.code.as_str().into());
    let _ = Reflect::set(&err, &"name".into(), &"ContextCompactorError".into());
    err.into()
}

/// The rejection of an aborted call (I-6), as `fetch` gives one (and the AI SDK's
/// `isAbortError` reads): a `DOMException` named `AbortError` (`TimeoutError` when the
/// signal's `reason` is one, as `AbortSignal.timeout()` gives) with the engine's `code:
/// "aborted"` as an own property (over DOMException's legacy numeric code) and `cause`
/// the signal's `reason`; an `Error` with that name where `DOMException` is missing. The
/// integrations build the same shape (js/stored-view.mjs `abortError`).
pub(crate) fn abort_error(message: &str, reason: &JsValue) -> JsValue {
    let timeout = Reflect::get(reason, &"name".into()).ok().and_then(|n| n.as_string()).as_deref() == Some("TimeoutError");
    let name = if timeout { "TimeoutError" } else { "AbortError" };
    let ctor = Reflect::get(&js_sys::global(), &"DOMException".into()).ok().and_then(|c| c.dyn_into::<js_sys::Function>().ok());
    let err: JsValue = match ctor.and_then(|c| Reflect::construct(&c, &js_sys::Array::of2(&message.into(), &name.into())).ok()) {
        Some(e) => e,
        None => {
            let e = js_sys::Error::new(message);
            let _ = Reflect::set(&e, &"name".into(), &name.into());
            e.into()
        }
    };
    if let Some(obj) = err.dyn_ref::<js_sys::Object>() {
        let own = |value: &JsValue, enumerable: bool| {
            let d = js_sys::Object::new();
            let _ = Reflect::set(&d, &"value".into(), value);
            let _ = Reflect::set(&d, &"writable".into(), &JsValue::TRUE);
            let _ = Reflect::set(&d, &"enumerable".into(), &JsValue::from_bool(enumerable));
            let _ = Reflect::set(&d, &"configurable".into(), &JsValue::TRUE);
            d
        };
        let _ = Reflect::define_property(obj, &"code".into(), &own(&ErrorCode::Aborted.as_str().into(), true));
        let _ = Reflect::define_property(obj, &"cause".into(), &own(reason, false));
    }
    err
}

/// [`js_error`] with `cause` set to the host value that caused it.
pub(crate) fn with_cause(e: &Error, cause: &JsValue) -> JsValue {
    let err = js_error(e);
    let _ = Reflect::set(&err, &"cause".into(), cause);
    err
}

/// JS value (object or JSON text) -> serde_json::Value. Errors carry the code of what
/// was being read: `invalid_state` for `state`, `invalid_config` for options, signals
/// and hooks, `invalid_transcript` otherwise.
pub(crate) fn to_json(v: &JsValue, what: &str) -> Result<Value, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Value::Null);
    }
    let code = match what {
        "state" => ErrorCode::InvalidState,
        "options" | "signals" | "hooks" | "usage" | "observation" => ErrorCode::InvalidConfig,
        _ => ErrorCode::InvalidTranscript,
    };
    let text = json_text(v, what, code)?;
    // a lone surrogate is said as such, with the value's path (crate::error::json_text_error)
    serde_json::from_str(&text).map_err(|e| js_error(&crate::error::json_text_error(what, &text, &e, code)))
}

/// The JSON text of a host value: the string itself, or `JSON.stringify` of anything
/// else (`null` for undefined / null). Errors: `code` when it cannot be stringified.
pub(crate) fn json_text(v: &JsValue, what: &str, code: ErrorCode) -> Result<String, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok("null".into());
    }
    json_text_and_host(v, what, code).map(|(text, _)| text)
}

/// [`json_text`] of a value that is not `undefined` / `null`, with the JS string it was
/// copied from (the value itself, or its `JSON.stringify`), so a caller whose answer is
/// that text can parse the host's string instead of a copy (issue 15 item 2).
fn json_text_and_host(v: &JsValue, what: &str, code: ErrorCode) -> Result<(String, js_sys::JsString), JsValue> {
    let host = match v.dyn_ref::<js_sys::JsString>() {
        Some(s) => {
            // issue 15: copied into wasm memory at its UTF-8 size (wasm-bindgen's glue
            // grows its buffer to 3 bytes a unit on the first non-ASCII character)
            let text = utf8::exact(s);
            // issue 14: a lone surrogate in JSON text is refused as in an object (whose
            // `JSON.stringify` escape serde refuses), never turned into U+FFFD. The
            // encoder writes U+FFFD for each lone surrogate, so a text without one is
            // well formed (issue 15: the string is scanned again only when it has one)
            if has_replacement_char(&text) && !well_formed(s) {
                return Err(js_error(&Error::new(code, format!("{what}: the JSON text holds a lone surrogate (unpaired UTF-16 code unit); it cannot be kept byte for byte"))));
            }
            return Ok((text, s.clone()));
        }
        None => JSON::stringify(v).map_err(|_| js_error(&Error::new(code, format!("{what}: not JSON-serializable"))))?,
    };
    // issue 15: copied into wasm memory at its UTF-8 size
    Ok((utf8::exact(&host), host))
}

/// Does `text` hold U+FFFD (UTF-8 `EF BF BD`)? A byte search for the lead byte, which is
/// rare in text, instead of a substring searcher (issue 15: 4% of a 10 MB `toRequest`).
fn has_replacement_char(text: &str) -> bool {
    let b = text.as_bytes();
    let mut at = 0;
    while let Some(i) = b[at..].iter().position(|&c| c == 0xEF) {
        at += i + 1;
        if b.get(at..at + 2) == Some(&[0xBF, 0xBD]) {
            return true;
        }
    }
    false
}

/// [`json_text`] of a transcript, refused with `too_large` over
/// `config.max_transcript_bytes`: a JS string on its length before it is copied into
/// wasm memory (UTF-16 units never outnumber UTF-8 bytes), then on its UTF-8 bytes.
/// Also gives the JS string the text was copied from (`None` for `undefined` / `null`,
/// whose text is `null`), see [`json_text_and_host`].
fn sized_json_text_and_host(config: &Config, v: &JsValue) -> Result<(String, Option<js_sys::JsString>), JsValue> {
    if let Some(s) = v.dyn_ref::<js_sys::JsString>() {
        config.check_transcript_bytes(u64::from(s.length())).map_err(|e| js_error(&e))?;
    }
    let (text, host) = if v.is_undefined() || v.is_null() {
        ("null".to_string(), None)
    } else {
        let (text, host) = json_text_and_host(v, "transcript", ErrorCode::InvalidTranscript)?;
        (text, Some(host))
    };
    config.check_transcript_bytes(text.len() as u64).map_err(|e| js_error(&e))?;
    Ok((text, host))
}

/// serde_json::Value -> JS value.
pub(crate) fn from_json(v: &Value) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(v).map_err(|e| js_error(&Error::invalid(e.to_string())))?;
    JSON::parse(&text)
}

/// A serializable engine value -> JS value, through its JSON text (`null` if it cannot
/// be serialized). Written straight to text, without a `serde_json::Value` in between:
/// the same text for every type without `f32` fields (an `f32` goes through `Value` as
/// an `f64` and is spelled differently; those types use `from_json(&to_value(..))`).
pub(crate) fn to_js<T: serde::Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
    JSON::parse(&serde_json::to_string(v).unwrap_or_else(|_| "null".into()))
}

/// A string argument from JS. wasm-bindgen's glue for a `&str` / `String` parameter
/// reads a non-string value out of bounds and traps (poisoning the instance), so every
/// exported string parameter is taken as a `JsValue` and checked here: anything but a
/// string is an error with `code` naming the argument. Lone surrogates become U+FFFD.
pub(crate) fn str_arg(v: &JsValue, what: &str, code: ErrorCode) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| js_error(&Error::new(code, format!("{what} must be a string, got {}", js_type(v)))))
}

/// The JS type of a value, for error messages (`typeof`, with `null` and `array` told apart).
pub(crate) fn js_type(v: &JsValue) -> String {
    if v.is_null() {
        "null".into()
    } else if js_sys::Array::is_array(v) {
        "array".into()
    } else {
        v.js_typeof().as_string().unwrap_or_else(|| "unknown".into())
    }
}

/// The path and value of the first non-finite number (NaN, ±Infinity) in a host value
/// (own enumerable keys, 4 levels deep; functions are skipped), if any.
pub(crate) fn non_finite(v: &JsValue, path: &str, depth: u8) -> Option<(String, String)> {
    if let Some(n) = v.as_f64() {
        return (!n.is_finite()).then(|| (path.to_string(), format!("{n}")));
    }
    if depth >= 4 || !v.is_object() || v.is_function() {
        return None;
    }
    let obj: &js_sys::Object = v.unchecked_ref();
    js_sys::Object::keys(obj).iter().find_map(|k| {
        let key = k.as_string().unwrap_or_default();
        non_finite(&Reflect::get(v, &k).unwrap_or(JsValue::UNDEFINED), &format!("{path}.{key}"), depth + 1)
    })
}

pub(crate) fn get(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() {
        Reflect::get(obj, &key.into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// The compactor: options are resolved once; every call is independent.
#[wasm_bindgen]
pub struct ContextCompactor {
    config: Config,
    /// `None` = detect from each transcript.
    format: Option<Format>,
}

/// A host transcript (object or JSON text) decoded in the fixed format, or the detected
/// one. Errors: `invalid_transcript`, `unknown_format`.
///
/// The document crosses the boundary as JSON text (the host's string, or
/// `JSON.stringify` of its object) and is decoded from that text in one pass
/// ([`formats::decode_text`]); with no fixed format it is read once more, one message
/// at a time, to detect it.
pub(crate) fn decode_input(config: &Config, fixed: Option<Format>, transcript: &JsValue) -> Result<crate::Transcript, JsValue> {
    let (format, text) = input_text(config, fixed, transcript)?;
    // issue 15 item 2: the rows borrow the text instead of copying it
    formats::decode_owned(format, text).map_err(|e| js_error(&e))
}

/// A host transcript's JSON text and its format (the fixed one, else detected from the
/// text one message at a time, [`formats::detect_text`]). Errors: `invalid_transcript`,
/// `unknown_format`; `too_large` over `config.max_transcript_bytes` (issue 15), checked
/// on the JS string's length before the text is copied into wasm memory, then on its
/// UTF-8 bytes.
pub(crate) fn input_text(config: &Config, fixed: Option<Format>, transcript: &JsValue) -> Result<(Format, String), JsValue> {
    input_text_and_host(config, fixed, transcript).map(|(format, text, _)| (format, text))
}

/// [`input_text`] with the JS string the text was copied from (see
/// [`sized_json_text_and_host`]).
fn input_text_and_host(config: &Config, fixed: Option<Format>, transcript: &JsValue) -> Result<(Format, String, Option<js_sys::JsString>), JsValue> {
    let (text, host) = sized_json_text_and_host(config, transcript)?;
    let format = match fixed {
        Some(f) => f,
        None => formats::detect_text(&text).map_err(|e| js_error(&e))?,
    };
    Ok((format, text, host))
}

/// A session state (object, JSON text, or null for a new session). Errors: `invalid_state`.
pub(crate) fn state_of(v: &JsValue) -> Result<SessionState, JsValue> {
    SessionState::from_json(&to_json(v, "state")?).map_err(|e| js_error(&e))
}

#[wasm_bindgen]
impl ContextCompactor {
    /// `new ContextCompactor({ format?, profile?, contextWindow?, thresholdPct?, ... })`.
    /// Throws an `Error` with `code: "invalid_config"` naming the bad field.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<ContextCompactor, JsValue> {
        // issue 14: `JSON.stringify` turns NaN / Infinity into null (= the default), so a
        // non-finite number is refused here, naming the option
        if let Some((path, value)) = non_finite(&options, "options", 0) {
            return Err(js_error(&Error::new(ErrorCode::InvalidConfig, format!("{path}: {value} is not a finite number"))));
        }
        let mut opts = to_json(&options, "options")?;
        if opts.is_null() {
            opts = Value::Object(Default::default());
        }
        let input = ConfigInput::from_json(opts).map_err(|e| js_error(&e))?;
        let format = match input.format.as_deref() {
            None | Some("auto") => None,
            Some(name) => Some(Format::parse(name).map_err(|e| js_error(&e))?),
        };
        let config = input.resolve().map_err(|e| js_error(&e))?;
        Ok(ContextCompactor { config, format })
    }

    /// The resolved configuration (plain JSON).
    #[wasm_bindgen(getter)]
    pub fn config(&self) -> Result<JsValue, JsValue> {
        to_js(&self.config)
    }

    /// Pure check (C-9): `check(state | null, transcript, signals?)` ->
    /// `{ compact, reason, decidedBy, signals: [{ name, unit, value, threshold, crossed }], floor, ... }`.
    pub fn check(&self, state: JsValue, transcript: JsValue, signals: JsValue) -> Result<JsValue, JsValue> {
        let state = state_of(&state)?;
        let mut t = decode_input(&self.config, self.format, &transcript)?;
        // F-5: a transcript that breaks its provider's pairing rules is reported here too.
        formats::validate_pairing(&t).map_err(|e| js_error(&e))?;
        // issue 14: the same trust boundary as compact (pins the state does not vouch for are not in the floor)
        crate::trust::apply(&mut t, &state, self.config.max_pinned_bytes);
        let hooks = signals;
        let mut signals = parse_signals(&hooks)?;
        if let Some(answer) = call_count(&hooks, &t, &signals)? {
            if is_thenable(&answer) {
                return Err(js_error(&Error::new(ErrorCode::InvalidConfig, "countTokens returned a Promise: `check` is synchronous; call `await compactor.checkAsync(state, transcript, signals)` for an async counter")));
            }
            signals.counted = Some(read_counts(&answer, &t, signals.tools.is_some())?);
        }
        let d = decide(&t, &self.config, &state, &signals);
        to_js(&d)
    }

    /// `checkAsync(state | null, transcript, signals?)` -> Promise of the decision
    /// `check` returns. The same dry run (C-9), for a `countTokens` hook that returns a
    /// Promise (I-4; a sync hook works too).
    #[wasm_bindgen(js_name = checkAsync)]
    pub fn check_async(&self, state: JsValue, transcript: JsValue, signals: JsValue) -> Promise {
        let config = self.config.clone();
        let fixed = self.format;
        promise(async move {
            let state = state_of(&state)?;
            let mut t = decode_input(&config, fixed, &transcript)?;
            formats::validate_pairing(&t).map_err(|e| js_error(&e))?;
            // issue 14: the same trust boundary as check and compact
            crate::trust::apply(&mut t, &state, config.max_pinned_bytes);
            let mut parsed = parse_signals(&signals)?;
            counted_async(&signals, &t, &mut parsed).await?;
            to_js(&decide(&t, &config, &state, &parsed))
        })
    }

    /// `compact(state | null, transcript, hooks?)` -> Promise of the result JSON
    /// (`{ status, reason, transcript, request, rewrite, before, after, validation, state, spend, events }`).
    /// `hooks`: `{ summarize?(request) -> string | { text, usage } | Promise,
    /// curator?(request) -> same (Y-1: writes stage-1 summaries from the rows before the
    /// run, `request.kind === "curate"`, `request.rows` in the stored view; a throw fails
    /// the attempt with no fallback), storeArtifact?({ handle, callId, toolName, body,
    /// offset, messageId }) -> handle | undefined | Promise (E-6: a string is the handle
    /// to use, undefined/null/true accepts the proposed `handle`, false or a throw means
    /// not stored: that body is clipped), onEvent?(event), summarizerContextWindow? (Y-1:
    /// tokens, the window of the model answering this call's summaries), usage?, tools?, toolsBytes?,
    /// requestBytes?, force?, sessionId?, memory?, embed?, embedDimension?, store? }`.
    /// Without `summarize`, the deterministic handoff summary is used. The result's
    /// `memory` is `{ session, records }` projected from what the rewrite discarded (M-1);
    /// the memory hooks (see `memory::MemoryHooks`) must accept it before the commit, and
    /// their throw rejects the call with nothing committed.
    pub fn compact(&self, state: JsValue, transcript: JsValue, hooks: JsValue) -> Promise {
        let config = self.config.clone();
        let fixed = self.format;
        promise(async move {
            // every rejection carries `err.state` (issue 14): the state given, untouched,
            // unless the failed outcome already set the one to persist
            let state_in = state_of(&state).unwrap_or_default();
            compact_impl(config, fixed, state, transcript, hooks).await.map_err(|e| session::with_state(e, &state_in))
        })
    }

    /// `toRequest(transcript, state?, { cacheBreakpoints? })`: the request view of a stored
    /// transcript: provenance keys removed (F-4); with a `state` holding findings (Y-10),
    /// the findings ledger as one pinned user-role text message right after the system
    /// rows. With `cacheBreakpoints:
    /// true` and an Anthropic transcript, `cache_control` breakpoints on the system
    /// prompt, the end of the summary block and the last message (K-4).
    #[wasm_bindgen(js_name = toRequest)]
    pub fn to_request(&self, transcript: JsValue, state: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let breakpoints = get(&options, "cacheBreakpoints").as_bool() == Some(true);
        let (format, text, host) = input_text_and_host(&self.config, self.format, &transcript)?;
        // issue 15: with no ledger to insert and no breakpoints, a key filter over the rows
        if !breakpoints {
            if let Ok(st) = state_of(&state) {
                if st.findings.is_empty() {
                    // the input is its own request view: the host's string is parsed
                    // (no copy written in wasm and read back by JS)
                    if let (Some(host), Some(verdict)) = (&host, formats::request_is_input(format, &text)) {
                        verdict.map_err(|e| js_error(&e))?;
                        drop(text);
                        return parse_js_string(host);
                    }
                    if let Some(out) = formats::request_text(format, &text) {
                        drop(text);
                        return JSON::parse(&out.map_err(|e| js_error(&e))?);
                    }
                }
            }
        }
        let t = formats::decode_owned(format, text).map_err(|e| js_error(&e))?;
        formats::validate_pairing(&t).map_err(|e| js_error(&e))?;
        let state = state_of(&state)?;
        let request = crate::output::RequestJson { t: &t, findings: &state.findings };
        if breakpoints && t.format == Format::Anthropic {
            let mut v = serde_json::to_value(&request).map_err(|e| js_error(&Error::invalid(e.to_string())))?;
            // issue 14: the summary block ends where the state vouches for it, not where
            // an input row claims a summary mark
            let mut marked = t.clone();
            crate::trust::apply(&mut marked, &state, self.config.max_pinned_bytes);
            crate::cache::place_breakpoints(&mut v, crate::cache::summary_end_in_request(&marked, !state.findings.is_empty()));
            return to_js(&v);
        }
        to_js(&request)
    }
}

/// A summarize request as the JS object its JSON text parses to (same keys, same order),
/// built member by member: its rendered rows (up to a quarter of the folded range) reach
/// JS as one string each, not as JSON text the host's `JSON.parse` reads again (issue 15).
pub(crate) fn request_to_js(req: &crate::summarize::SummarizeRequest) -> Result<JsValue, JsValue> {
    let obj = js_sys::Object::new();
    let set = |o: &js_sys::Object, k: &str, v: &JsValue| Reflect::set(o, &JsValue::from_str(k), v).map(|_| ());
    set(&obj, "kind", &JsValue::from_str(&req.kind))?;
    set(&obj, "system", &JsValue::from_str(&req.system))?;
    let messages = js_sys::Array::new();
    for m in &req.messages {
        let o = js_sys::Object::new();
        set(&o, "role", &JsValue::from_str(&m.role))?;
        set(&o, "content", &JsValue::from_str(&m.content))?;
        messages.push(&o);
    }
    set(&obj, "messages", &messages)?;
    set(&obj, "maxOutputTokens", &JsValue::from_f64(req.max_output_tokens as f64))?;
    set(&obj, "estimatedInputTokens", &JsValue::from_f64(req.estimated_input_tokens as f64))?;
    set(&obj, "coverage", &JsValue::from_str(&req.coverage))?;
    if !req.rows.is_empty() {
        set(&obj, "rows", &to_js(&req.rows)?)?;
    }
    Ok(obj.into())
}

/// Is `v` a Promise or a thenable (an object with a `then` function)?
pub(crate) fn is_thenable(v: &JsValue) -> bool {
    v.is_instance_of::<Promise>() || get(v, "then").is_function()
}

/// I-4: calls the `countTokens` hook of `hooks` (when it is a function) with the texts
/// of [`count_texts`] as a JS array of strings; returns its answer (numbers, or a
/// Promise of them). `None` without a hook. A throw reaches the caller unchanged.
///
/// A synchronous call cannot be interrupted: `signal` (issue 14) is checked before it
/// is made (`aborted` when it already fired); `timeoutMs` bounds only the awaited
/// answer ([`counted_async`]).
pub(crate) fn call_count(hooks: &JsValue, t: &crate::Transcript, signals: &Signals) -> Result<Option<JsValue>, JsValue> {
    let Ok(f) = get(hooks, "countTokens").dyn_into::<Function>() else { return Ok(None) };
    if let Some(e) = bounded::Bounds::from_options(hooks)?.aborted("countTokens") {
        return Err(e);
    }
    f.call1(&JsValue::NULL, &count_array(t, signals)).map(Some)
}

fn count_array(t: &crate::Transcript, signals: &Signals) -> js_sys::Array {
    let texts = js_sys::Array::new();
    for text in count_texts(t, signals.tools.as_ref()) {
        texts.push(&JsValue::from_str(&text));
    }
    texts
}

/// A `countTokens` answer as [`TokenCounts`]: an array with one number per text.
/// Errors: `invalid_config` naming what is wrong.
pub(crate) fn read_counts(answer: &JsValue, t: &crate::Transcript, with_tools: bool) -> Result<TokenCounts, JsValue> {
    if !js_sys::Array::is_array(answer) {
        return Err(js_error(&Error::new(ErrorCode::InvalidConfig, format!("countTokens must return an array of numbers, got {}", js_type(answer)))));
    }
    let arr = js_sys::Array::from(answer);
    let mut nums = Vec::with_capacity(arr.length() as usize);
    for (i, v) in arr.iter().enumerate() {
        nums.push(v.as_f64().ok_or_else(|| js_error(&Error::new(ErrorCode::InvalidConfig, format!("countTokens: count {i} is {}, not a number", js_type(&v)))))?);
    }
    TokenCounts::from_answer(t, with_tools, &nums).map_err(|e| js_error(&e))
}

/// Fills `signals.counted` from the `countTokens` hook of `hooks`, awaiting it (I-4).
pub(crate) async fn counted_async(hooks: &JsValue, t: &crate::Transcript, signals: &mut Signals) -> Result<(), JsValue> {
    let Ok(f) = get(hooks, "countTokens").dyn_into::<Function>() else { return Ok(()) };
    // issue 14: bounded like every other callback (`timeoutMs`, `timeouts.countTokens`, `signal`)
    let bounds = bounded::Bounds::from_options(hooks)?;
    let answer = bounds.call("countTokens", &f, &[&count_array(t, signals).into()]).await?;
    signals.counted = Some(read_counts(&answer, t, signals.tools.is_some())?);
    Ok(())
}

pub(crate) fn parse_signals(v: &JsValue) -> Result<Signals, JsValue> {
    // only the signal keys are read: another option (a bad `sessionId`, a store) is
    // checked, and named, where it is used
    let picked = if v.is_object() {
        let o = js_sys::Object::new();
        for k in ["usage", "tools", "toolsBytes", "requestBytes", "force", "provider", "model", "inRun"] {
            let x = get(v, k);
            if !x.is_undefined() {
                let _ = Reflect::set(&o, &k.into(), &x);
            }
        }
        o.into()
    } else {
        v.clone()
    };
    let mut j = to_json(&picked, "signals")?;
    if let Value::Object(map) = &mut j {
        // hooks objects may carry functions; JSON drops them, and unknown keys are ignored.
        map.retain(|k, _| matches!(k.as_str(), "usage" | "tools" | "toolsBytes" | "requestBytes" | "force" | "provider" | "model" | "inRun"));
    } else {
        j = Value::Object(Default::default());
    }
    serde_json::from_value(j).map_err(|e| js_error(&Error::new(ErrorCode::InvalidConfig, format!("signals: {e}"))))
}

/// Is this callback error a recognised context / request-size error (Y-6)?
pub(crate) fn is_context_error(err: &JsValue) -> bool {
    if get(err, "contextExceeded").as_bool() == Some(true) {
        return true;
    }
    // HTTP 413: `status` (fetch, OpenAI / Anthropic SDKs) or `statusCode` (the AI SDK's
    // `APICallError`, break5 finding 11)
    if get(err, "status").as_f64() == Some(413.0) || get(err, "statusCode").as_f64() == Some(413.0) {
        return true;
    }
    // Lowercased char by char: that differs from `str::to_lowercase` only in a final
    // sigma, which no (ASCII) pattern below can match anyway.
    let mut text = String::new();
    for k in ["code", "type", "message"] {
        if let Some(s) = get(err, k).as_string() {
            text.extend(s.chars().flat_map(char::to_lowercase));
            text.push(' ');
        }
    }
    if let Some(s) = err.as_string() {
        text.extend(s.chars().flat_map(char::to_lowercase));
    }
    ["context_length_exceeded", "context length", "context window", "maximum context", "prompt is too long", "request too large", "request_too_large", "too many tokens", "input is too long"]
        .iter()
        .any(|p| text.contains(p))
        || gemini_context_error(&text)
        || llama_cpp_context_error(&text)
        || tgi_context_error(&text)
}

/// Hugging Face text-generation-inference's context-size error (break5 finding 11): HTTP
/// 422 "Input validation error: `inputs` tokens + `max_new_tokens` must be <= N". `text`
/// is lowercased.
pub(crate) fn tgi_context_error(text: &str) -> bool {
    text.contains("input validation error") && text.contains("tokens") && text.contains("must be <=")
}

/// llama.cpp server's context-size error (break3 finding 10): HTTP 400 with `type:
/// "exceed_context_size_error"` and the message "the request exceeds the available
/// context size, try increasing it" (the CLI's `summarizer_http_error` message carries
/// the body). `text` is lowercased.
pub(crate) fn llama_cpp_context_error(text: &str) -> bool {
    text.contains("exceed_context_size_error") || text.contains("exceeds the available context size")
}

/// Gemini's context-size errors (break finding 10), recognised by their message, never by
/// status 400 alone (`INVALID_ARGUMENT` is also a malformed request): the Gemini API /
/// GenAI SDK `ApiError` ("The input token count (N) exceeds the maximum number of tokens
/// allowed (M).", also inside the JSON error text the SDK puts in `message`) and Vertex AI
/// ("Unable to submit request because the input token count is N but model only supports
/// up to M"). `text` is lowercased.
pub(crate) fn gemini_context_error(text: &str) -> bool {
    text.contains("input token count") && (text.contains("exceeds the maximum number of tokens") || text.contains("only supports up to"))
}

pub(crate) async fn call_hook(f: &Function, arg: &JsValue) -> Result<JsValue, JsValue> {
    let r = f.call1(&JsValue::NULL, arg)?;
    JsFuture::from(Promise::resolve(&r)).await
}

async fn compact_impl(config: Config, fixed: Option<Format>, state: JsValue, transcript: JsValue, hooks: JsValue) -> Result<JsValue, JsValue> {
    let state = state_of(&state)?;
    let t = decode_input(&config, fixed, &transcript)?;
    let state_in = state.clone();
    let mut job = start_job(config, state, t, &hooks).await?;
    // an abort while onEvent is awaited carries the state given (nothing was committed)
    let (mut outcome, side) = drive_job(&mut job, &hooks).await.map_err(|e| session::with_state(e, &state_in))?;
    // the job holds the whole source transcript: free it before the result text is
    // written, so that text can reuse its memory (peak wasm memory); the rows a rewrite
    // kept get their own text first, so the input they borrowed goes with it (issue 15)
    if outcome.rewrite.is_some() {
        outcome.transcript.unshare();
    }
    drop(job);
    finish(&outcome, side, &hooks, false).await.map_err(|e| session::with_state(e, &state_in))
}

/// A job over `t` with the signals of `hooks` and the host steps its hooks answer
/// (summarize, curator, artifact store, memory).
/// With a `countTokens` hook its counts (awaited) replace the estimate (I-4).
pub(crate) async fn start_job(config: Config, state: SessionState, t: crate::Transcript, hooks: &JsValue) -> Result<Job, JsValue> {
    let mut signals = parse_signals(hooks)?;
    counted_async(hooks, &t, &mut signals).await?;
    start_job_with(config, state, t, hooks, signals)
}

/// [`start_job`] with the signals already read (and counted).
pub(crate) fn start_job_with(config: Config, state: SessionState, t: crate::Transcript, hooks: &JsValue, signals: Signals) -> Result<Job, JsValue> {
    // checked before anything runs: a bad option must not throw after the memory hooks committed
    let records = memory_records(hooks)?;
    let has_summarizer = get(hooks, "summarize").is_function();
    let curator = get(hooks, "curator").is_function();
    let store = get(hooks, "storeArtifact").is_function();
    let memory_hooks = memory::MemoryHooks::from_hooks(hooks)?;
    // Y-1: the window of the model answering this call's summaries (after a fallback)
    let window = get(hooks, "summarizerContextWindow").as_f64().filter(|w| w.is_finite() && *w >= 1.0).map(|w| w.min(u64::MAX as f64) as u64);
    // Issue 15: records go where they are used. With no memory hook to take them and no
    // `memoryRecords: "result"` asking for them, only the folded user text is projected
    // (N-1: the result's records are its one whole copy when a summary or a later rollup
    // clips it); projecting every discarded row for nobody was most of a compaction's time.
    let user_text_only = result_records(&memory_hooks, records) != records;
    Ok(Job::start(config, state, t, JobOptions { signals, has_summarizer })
        .with_user_text_only_memory(user_text_only)
        .with_summarizer_window(window)
        .with_curator(curator)
        .with_artifact_store(store)
        .with_memory(memory_hooks.session.clone(), memory_hooks.active()))
}

/// Runs one job over the hooks. Returns the outcome and the callback's own error when a
/// summarize / curator / memory callback threw.
pub(crate) async fn drive(config: Config, state: SessionState, t: crate::Transcript, hooks: &JsValue) -> Result<(Box<Outcome>, Side), JsValue> {
    let mut job = start_job(config, state, t, hooks).await?;
    drive_job(&mut job, hooks).await
}

/// What a drive leaves beside the outcome: the callback's own error when a summarize /
/// curator / memory callback threw (or timed out), how many of the job's events were
/// already delivered to `onEvent` (J-4: as they happen), and the warnings of `onEvent`
/// calls that failed (never a rejection, issue 14).
#[derive(Default)]
pub(crate) struct Side {
    pub error: Option<JsValue>,
    pub delivered: usize,
    pub warnings: Vec<String>,
}

/// Sends `events` to `hooks.onEvent` (bounded, I-6); a throw, rejection or timeout is
/// recorded in `side.warnings`, never propagated. The signal firing while an `onEvent`
/// call is awaited (or before one) is propagated: `Err` with code `aborted` naming the
/// `onEvent` callback and the event it was given (breaker finding 11: the call stops
/// there, so nothing after it commits).
async fn emit(events: &[crate::engine::Event], on_event: Option<&Function>, bounds: &bounded::Bounds, side: &mut Side) -> Result<(), JsValue> {
    let Some(f) = on_event else { return Ok(()) };
    for ev in events {
        let Ok(arg) = to_js(ev) else { continue };
        let hook = format!("onEvent (a {} event)", ev.kind);
        if let Some(e) = bounds.aborted(&hook) {
            return Err(e);
        }
        if let Err(e) = bounds.call("onEvent", f, &[&arg]).await {
            if get(&e, "code").as_string().as_deref() == Some("aborted") && bounded::is_bound_error(&e) {
                return Err(bounds.aborted(&hook).unwrap_or(e));
            }
            let message = get(&e, "message").as_string().or_else(|| e.as_string()).unwrap_or_else(|| "onEvent failed".into());
            side.warnings.push(format!("onEvent failed on a {} event: {message}", ev.kind));
        }
    }
    Ok(())
}

/// Drives a job to its outcome, awaiting the hooks for each step, each bounded by the
/// hooks' `timeoutMs` / `timeouts` / `signal` (I-6). The job's events reach `onEvent`
/// before each host call (J-4). Returns the outcome and the [`Side`]. A job error (e.g.
/// F-5 pairing), a timeout or an abort outside a summarize / memory step is returned as
/// a JS error; the job then still holds its untouched transcript.
pub(crate) async fn drive_job(job: &mut Job, hooks: &JsValue) -> Result<(Box<Outcome>, Side), JsValue> {
    let summarize = get(hooks, "summarize").dyn_into::<Function>().ok();
    let curator = get(hooks, "curator").dyn_into::<Function>().ok();
    let store = get(hooks, "storeArtifact").dyn_into::<Function>().ok();
    let on_event = get(hooks, "onEvent").dyn_into::<Function>().ok();
    let memory_hooks = memory::MemoryHooks::from_hooks(hooks)?;
    let bounds = bounded::Bounds::from_options(hooks)?;
    let mut side = Side::default();
    let mut step = job.resume(None).map_err(|e| js_error(&e))?;
    let outcome = loop {
        if !matches!(step, Step::Done(_)) {
            let n = job.events().len();
            if n > side.delivered {
                let fresh = job.events().get(side.delivered..n).unwrap_or(&[]).to_vec();
                emit(&fresh, on_event.as_ref(), &bounds, &mut side).await?;
                side.delivered = n;
            }
        }
        match step {
            Step::Done(o) => break o,
            Step::Summarize(req) => {
                let hook = if req.kind == "curate" { curator.as_ref() } else { summarize.as_ref() };
                let hook_name = if req.kind == "curate" { "curator" } else { "summarize" };
                let Some(f) = hook else {
                    return Err(js_error(&Error::new(ErrorCode::ProtocolError, "summary requested without a summarize hook")));
                };
                let arg = request_to_js(&req)?;
                let reply = match bounds.call_cancellable(hook_name, f, &arg).await {
                    Ok(v) => {
                        if let Some(s) = v.as_string() {
                            Reply::Summary { text: s, usage: None }
                        } else if !v.is_object() || v.is_function() {
                            // Neither a string nor { text }: a typed failure (with the state), not "empty summary".
                            let message = format!("the {hook_name} callback returned {} instead of a string or {{ text }}", js_type(&v));
                            Reply::Failed { message, context_exceeded: false }
                        } else if js_sys::Array::is_array(&v) {
                            let message = format!("the {hook_name} callback returned an array instead of a string or {{ text }}");
                            Reply::Failed { message, context_exceeded: false }
                        } else {
                            // break finding 16: a `text` getter (or a Proxy) that throws is the
                            // result's failure, named with its cause, never swallowed
                            match Reflect::get(&v, &"text".into()) {
                                Err(cause) => {
                                    let why = get(&cause, "message").as_string().or_else(|| cause.as_string()).unwrap_or_else(|| js_type(&cause));
                                    let message = format!("reading `text` of the {hook_name} callback's result threw: {why}");
                                    side.error = Some(with_cause(&Error::new(ErrorCode::SummaryFailed, message.clone()), &cause));
                                    Reply::Failed { message, context_exceeded: false }
                                }
                                Ok(t) => match t.as_string() {
                                    Some(text) => {
                                        let usage = Reflect::get(&v, &"usage".into()).ok().and_then(|u| to_json(&u, "usage").ok()).filter(|u| !u.is_null());
                                        Reply::Summary { text, usage }
                                    }
                                    None => {
                                        let got = if t.is_undefined() { "no `text`".to_string() } else { format!("`text` of type {}", js_type(&t)) };
                                        let message = format!("the {hook_name} callback returned an object without a string `text` (it has {got})");
                                        Reply::Failed { message, context_exceeded: false }
                                    }
                                },
                            }
                        }
                    }
                    Err(e) if bounded::is_unreadable_result(&e) => {
                        let message = get(&e, "message").as_string().unwrap_or_default();
                        side.error = Some(e);
                        Reply::Failed { message, context_exceeded: false }
                    }
                    // I-6 / C-5: a cancel is no failed attempt: the call rejects with
                    // `aborted` and the state it was given (no cadence back-off)
                    Err(e) if bounded::is_abort(&e) => return Err(e),
                    Err(e) => {
                        // Y-6: never a fallback for a curator, whatever the error says;
                        // nor for a timeout (I-6).
                        let context_exceeded = req.kind != "curate" && !bounded::is_bound_error(&e) && is_context_error(&e);
                        let message = get(&e, "message").as_string().or_else(|| e.as_string()).unwrap_or_else(|| "summarize callback failed".into());
                        side.error = Some(e);
                        Reply::Failed { message, context_exceeded }
                    }
                };
                // the request (up to a quarter of the folded rows) is not needed for the commit
                drop((req, arg));
                step = job.resume(Some(reply)).map_err(|e| js_error(&e))?;
            }
            Step::Project(batch) => {
                // M-1 / W-3: the host's store or embedder must accept before the commit.
                let accepted = bounds.bound("memory", async { memory_hooks.accept(&batch).await.map(|()| JsValue::UNDEFINED) }).await;
                let reply = match accepted {
                    Ok(_) => Reply::Accepted,
                    Err(e) if bounded::is_abort(&e) => return Err(e),
                    Err(e) => {
                        let message = get(&e, "message").as_string().or_else(|| e.as_string()).unwrap_or_else(|| "memory store failed".into());
                        side.error = Some(e);
                        Reply::Failed { message, context_exceeded: false }
                    }
                };
                drop(batch);
                step = job.resume(Some(reply)).map_err(|e| js_error(&e))?;
            }
            Step::StoreArtifacts(items) => {
                let mut handles = Vec::with_capacity(items.len());
                for item in &items {
                    let handle = match store.as_ref() {
                        None => None,
                        Some(f) => {
                            let arg = to_js(item)?;
                            match bounds.call("storeArtifact", f, &[&arg]).await {
                                Ok(v) if v.is_undefined() || v.is_null() || v.as_bool() == Some(true) => Some(item.handle.clone()),
                                Ok(v) => v.as_string().or_else(|| get(&v, "handle").as_string()),
                                // I-6: a timed-out or aborted compaction commits nothing
                                Err(e) if bounded::is_bound_error(&e) => return Err(e),
                                Err(_) => None,
                            }
                        }
                    };
                    handles.push(handle);
                }
                step = job.resume(Some(Reply::Artifacts { handles })).map_err(|e| js_error(&e))?;
            }
        }
    };
    Ok((outcome, side))
}

/// Emits the outcome's events to `onEvent`, then resolves to the result JSON, or throws
/// for a failed outcome (W-3 / J-2: the callback's own error when it threw, else a typed
/// engine error; both carry the new `state`).
/// `committed`: whether the call already committed (a Session's save): an abort while the
/// last events are delivered then no longer rejects.
pub(crate) async fn finish(outcome: &Outcome, side: Side, hooks: &JsValue, committed: bool) -> Result<JsValue, JsValue> {
    let out = result_pieces(outcome, hooks)?;
    deliver(outcome, out, side, hooks, committed).await
}

/// The `memoryRecords` option of `hooks` (issue 15): absent or `"ids"` -> the result's
/// `memory` names the projected records (`{ session, projected, ids }`); `"result"` ->
/// it carries them too (`records`). Errors: `invalid_config` for another value.
pub(crate) fn memory_records(hooks: &JsValue) -> Result<MemoryRecords, JsValue> {
    let v = get(hooks, "memoryRecords");
    if v.is_undefined() || v.is_null() {
        return Ok(MemoryRecords::Ids);
    }
    // a non-string is named by its type, through the same error as a wrong string
    let s = v.as_string().unwrap_or_else(|| js_type(&v));
    MemoryRecords::from_option(Some(&s)).map_err(|e| js_error(&e))
}

/// What the result's `memory` carries: `hooks.memoryRecords`, except that with no memory
/// hook (`memory` / `store`) the records are always in the result: they hold only the
/// folded user text ([`crate::engine::Job::with_user_text_only_memory`]), kept whole
/// nowhere else when a summary clips it (N-1).
fn result_records(memory_hooks: &memory::MemoryHooks, records: MemoryRecords) -> MemoryRecords {
    if memory_hooks.active() {
        records
    } else {
        MemoryRecords::Result
    }
}

/// The result text of `outcome` in pieces, with the memory key as `hooks.memoryRecords` says
/// ([`result_records`]).
pub(crate) fn result_pieces(outcome: &Outcome, hooks: &JsValue) -> Result<Vec<String>, JsValue> {
    let records = result_records(&memory::MemoryHooks::from_hooks(hooks)?, memory_records(hooks)?);
    Ok(ResultJson { outcome, records }.to_pieces(RESULT_PIECE_BYTES))
}

/// Sends the outcome's events not yet delivered to `hooks.onEvent`, then returns the
/// result object `out` (`out`: the outcome's JSON text in pieces,
/// [`Outcome::to_json_pieces`]), or throws for a failed outcome (W-3 / J-2). An `onEvent`
/// that throws, rejects or times out never turns the result into a rejection: it is
/// reported as an `on_event_failed` warning event at the end of the result's `events`
/// (issue 14).
pub(crate) async fn deliver(outcome: &Outcome, out: Vec<String>, mut side: Side, hooks: &JsValue, committed: bool) -> Result<JsValue, JsValue> {
    let on_event = get(hooks, "onEvent").dyn_into::<Function>().ok();
    // bad bounds were refused before the job ran; unbounded here if they could not be read
    let bounds = bounded::Bounds::from_options(hooks).unwrap_or_default();
    let rest = outcome.events.get(side.delivered..).unwrap_or(&[]);
    if let Err(e) = emit(rest, on_event.as_ref(), &bounds, &mut side).await {
        // aborted while onEvent was awaited: a call whose result is its commit rejects
        // (nothing committed); after a commit (a Session's save, a live transcript's
        // settle) the wait just stops and the result says so
        if !committed {
            return Err(e);
        }
        drop(e);
        side.warnings.push("aborted: the signal fired while onEvent was awaited after the commit (the compaction was committed before it fired); the events after that one were not delivered".to_string());
    }
    if outcome.status == "failed" {
        let err = match (side.error, &outcome.error) {
            (Some(e), Some(inner)) if matches!(inner.code, ErrorCode::SummaryFailed | ErrorCode::MemoryFailed) => e,
            (_, Some(inner)) => js_error(inner),
            (_, None) => js_error(&Error::new(ErrorCode::SummaryFailed, outcome.reason.clone())),
        };
        drop(out);
        let state = serde_json::to_string(&outcome.state).map_err(|e| js_error(&Error::invalid(e.to_string())))?;
        // the hook that failed: `memory_failed` for a memory store or embedder, else the summarizer's
        let code = match &outcome.error {
            Some(inner) if inner.code == ErrorCode::MemoryFailed => ErrorCode::MemoryFailed,
            _ => ErrorCode::SummaryFailed,
        };
        let err = if err.is_object() {
            err
        } else {
            // a callback threw a non-object (a string, a number): wrap it so it can carry the state
            let wrapped = js_error(&Error::new(code, format!("{}: {}", code.as_str(), err.as_string().unwrap_or_else(|| js_type(&err)))));
            let _ = Reflect::set(&wrapped, &"cause".into(), &err);
            wrapped
        };
        let _ = Reflect::set(&err, &"state".into(), &JSON::parse(&state)?);
        return Err(err);
    }
    // One JS string cannot pass V8's longest string (2^29 - 24 UTF-16 units): a result
    // that long (memory records asked into it, issue 15) is a typed error, never the
    // uncatchable `RangeError: Invalid string length` of the concatenation. UTF-8 bytes
    // bound the UTF-16 units from above, so a text under the limit in bytes always fits.
    if out.iter().map(String::len).sum::<usize>() > MAX_RESULT_TEXT_BYTES {
        drop(out);
        return Err(js_error(&Error::new(ErrorCode::TooLarge, "result: its JSON text is over 2^29 - 24 bytes, the longest JS string")));
    }
    // issue 14: `resultText: true` also gives the exact JSON texts of `transcript` and
    // `request` (`transcriptText`, `requestText`): integers past 2^53 survive (the CLI)
    // and of the whole result (`resultText`: the CLI's `--json`)
    let exact: Vec<(&str, String)> = if get(hooks, "resultText").as_bool() == Some(true) {
        let whole: String = out.concat();
        let mut exact: Vec<(&str, String)> = match crate::raw::split_top(&whole) {
            Ok(crate::raw::RawTop::Object(members)) => members.iter().filter(|(k, _)| k == "transcript" || k == "request").map(|(k, v)| (if k == "transcript" { "transcriptText" } else { "requestText" }, v.get().to_string())).collect(),
            _ => Vec::new(),
        };
        exact.push(("resultText", whole));
        exact
    } else {
        Vec::new()
    };
    // one JS string from the pieces, each freed in wasm memory once copied out
    let mut text = js_sys::JsString::from("");
    for piece in out {
        text = text.concat(&JsValue::from_str(&piece));
    }
    let result = parse_js_string(&text)?;
    for (k, v) in exact {
        let _ = Reflect::set(&result, &k.into(), &JsValue::from_str(&v));
    }
    if !side.warnings.is_empty() {
        let events = get(&result, "events");
        if let Some(arr) = events.dyn_ref::<js_sys::Array>() {
            for message in side.warnings {
                let ev = from_json(&serde_json::json!({ "type": "warning", "data": { "code": "on_event_failed", "message": message } }))?;
                arr.push(&ev);
            }
        }
    }
    Ok(result)
}

/// Is `s` well-formed UTF-16 (no lone surrogate)? `String.prototype.isWellFormed` where
/// the runtime has it (Node 20, Deno, workerd, current browsers): one native scan. Else
/// js-sys's `is_valid_utf16`, which reads the string one code unit per boundary call
/// (issue 15: that was 2/3 of a 10 MB `check`).
pub(crate) fn well_formed(s: &js_sys::JsString) -> bool {
    match is_well_formed_call(s) {
        Ok(v) => v.as_bool().unwrap_or_else(|| s.is_valid_utf16()),
        Err(_) => s.is_valid_utf16(),
    }
}

#[wasm_bindgen]
extern "C" {
    /// `String.prototype.isWellFormed.call(s)` (ES2024); throws (caught) where the
    /// runtime lacks it.
    #[wasm_bindgen(js_namespace = ["String", "prototype", "isWellFormed"], js_name = call, catch)]
    fn is_well_formed_call(s: &js_sys::JsString) -> Result<JsValue, JsValue>;

    /// `JSON.parse` of a JS string (js-sys's binding takes a Rust `&str`, which would copy
    /// the text back into wasm memory).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn parse_js_string(text: &js_sys::JsString) -> Result<JsValue, JsValue>;
}

/// Size of the pieces a result's JSON text crosses the boundary in, UTF-8 bytes. 4 KiB: small
/// enough to fit the holes the freed transcript leaves in wasm memory (256 KiB pieces grew
/// memory by the result's size once the projection had reused that space), large enough
/// that joining them in JS costs nothing measurable.
pub(crate) const RESULT_PIECE_BYTES: usize = 1 << 12;

/// Longest result text delivered as one JS string, UTF-8 bytes: V8's string length limit
/// on 64-bit hosts (2^29 - 24 UTF-16 units), the smallest among the supported runtimes.
pub(crate) const MAX_RESULT_TEXT_BYTES: usize = (1 << 29) - 24;

/// `pin(state | null, messageId)` -> the new state with `messageId` in `state.pins`
/// (Y-10, issue 14): the host confirms a pin. A row is pinned only when it carries
/// `pinned: true` and the state lists its id; rows that mark themselves are not. Throws
/// `invalid_state` for a blank id.
#[wasm_bindgen]
pub fn pin(state: JsValue, message_id: JsValue) -> Result<JsValue, JsValue> {
    let id = str_arg(&message_id, "pin: messageId", ErrorCode::InvalidState)?;
    let mut s = state_of(&state)?;
    crate::trust::pin(&mut s, &id).map_err(|e| js_error(&e))?;
    to_js(&s)
}

/// `trustProvenance(state | null, transcript, format?)` -> the new state vouching for the
/// provenance of a transcript the host's own store kept (issue 14): its summary rows, pinned
/// rows and artifact refs are listed in the state. For stored transcripts only, never for
/// text a user, a tool or a model wrote. Throws `invalid_state`, `invalid_transcript`,
/// `unknown_format`.
#[wasm_bindgen(js_name = trustProvenance)]
pub fn trust_provenance(state: JsValue, transcript: JsValue, format: JsValue) -> Result<JsValue, JsValue> {
    let fixed = if format.is_undefined() || format.is_null() { None } else { Some(Format::parse(&str_arg(&format, "trustProvenance: format", ErrorCode::UnknownFormat)?).map_err(|e| js_error(&e))?) };
    let s = state_of(&state)?;
    // the default limits (maxTranscriptBytes) apply: trustProvenance takes no options
    let t = decode_input(&Config::preset(crate::config::Profile::default()), fixed, &transcript)?;
    to_js(&crate::trust::vouch(&s, &t))
}

/// `detectFormat(transcript)` -> the format name; throws `unknown_format` when the
/// shape is ambiguous or unknown.
#[wasm_bindgen(js_name = detectFormat)]
pub fn detect_format(transcript: JsValue) -> Result<String, JsValue> {
    let text = json_text(&transcript, "transcript", ErrorCode::InvalidTranscript)?;
    formats::detect_text(&text).map(|f| f.name().to_string()).map_err(|e| js_error(&e))
}

/// `importTranscript(kind, text, options?)` -> `{ format, document, warnings,
/// subagents?, usage? }` (N-2).
///
/// `kind`: `auto` (sniff a log kind, else parse JSON and detect the provider format,
/// N-3), a log kind (`claude-code-jsonl`, `codex-rollout`, `swe-agent-traj`,
/// `tau-bench`, `glaive`), or a provider format name (the text is parsed as that
/// format's JSON). `options`: `{ subagents?: "attach" | "drop" }` (Claude Code
/// subagent runs, default `attach`). `warnings`: `[{ line, code, message }]`, each
/// skipped or repaired input; `subagents`: `[{ callId, agentId?, format, document }]`;
/// `usage`: `{ input_tokens, output_tokens, total_tokens }` of the log's last model call.
/// Errors: `invalid_transcript` when nothing valid remains; `unknown_format` (with a
/// hint naming the likely source); `invalid_config` for bad options.
#[cfg(not(feature = "lite"))]
#[wasm_bindgen(js_name = importTranscript)]
pub fn import_transcript(kind: JsValue, text: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let kind = str_arg(&kind, "importTranscript: kind", ErrorCode::UnknownFormat)?;
    let text = str_arg(&text, "importTranscript: text", ErrorCode::InvalidTranscript)?;
    let options = crate::formats::import::ImportOptions::from_json(&to_json(&options, "options")?).map_err(|e| js_error(&e))?;
    let imported = crate::formats::import::import_any_with(&kind, &text, &options).map_err(|e| js_error(&e))?;
    to_js(&imported)
}
