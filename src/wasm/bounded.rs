//! Bounding host callbacks (I-6): `timeoutMs` and `signal` (an `AbortSignal`) on every
//! call that awaits a host callback.
//!
//! Shape (the `hooks` object of `compact`, or the options of `Session.append` /
//! `Session.recordFinding` / `Session.compact`):
//! - `timeoutMs`: milliseconds any one callback may take to settle (`summarize`,
//!   `curator`, `storeArtifact`, the memory hooks, `onEvent`, the store's `load` / `save`,
//!   `countTokens` in `compact` / `checkAsync` / `live.compact`);
//! - `timeouts: { summarize?, curator?, storeArtifact?, memory?, onEvent?, load?, save?,
//!   countTokens? }`: per hook, overriding `timeoutMs`;
//! - `signal`: an `AbortSignal`; once it fires, the call stops waiting and rejects.
//!
//! A callback that does not settle in time rejects the call with code `timeout`; an abort
//! with code `aborted` (its `cause` is `signal.reason`). Before the commit nothing is
//! written: the transcript, the state and the store are untouched (W-3). A timed-out
//! (or aborted) `save` may still land in the store later (the callback cannot be
//! cancelled): the rejection says so and carries `mayHaveCommitted: true`; a reload shows
//! which revision won, and `Session.append` retried with the same rows finds its own
//! save (`appendId`) instead of writing it twice.

use super::{get, js_error};
use crate::error::{Error, ErrorCode};
use js_sys::{Function, Promise, Reflect};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// The hook names `timeouts` accepts.
pub(crate) const HOOK_NAMES: [&str; 8] = ["summarize", "curator", "storeArtifact", "memory", "onEvent", "load", "save", "countTokens"];

/// The bounds of one call (see the module doc).
#[derive(Clone, Default)]
pub(crate) struct Bounds {
    default_ms: Option<f64>,
    per_hook: Vec<(&'static str, f64)>,
    signal: Option<JsValue>,
}

fn ms_of(v: &JsValue, what: &str) -> Result<Option<f64>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    match v.as_f64() {
        Some(ms) if ms.is_finite() && ms > 0.0 => Ok(Some(ms)),
        _ => Err(js_error(&Error::new(ErrorCode::InvalidConfig, format!("{what} must be a positive number of milliseconds, got {}", super::js_type(v))))),
    }
}

struct Race<A, B> {
    a: Pin<Box<A>>,
    b: Pin<Box<B>>,
}

impl<T, A: Future<Output = T>, B: Future<Output = T>> Future for Race<A, B> {
    type Output = T;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if let Poll::Ready(v) = self.a.as_mut().poll(cx) {
            return Poll::Ready(v);
        }
        self.b.as_mut().poll(cx)
    }
}

/// A promise and the function that settles it.
fn pending() -> (Promise, Function) {
    let mut slot: Option<Function> = None;
    let p = Promise::new(&mut |resolve, _reject| slot = Some(resolve));
    (p, slot.unwrap_or_else(|| Function::from(JsValue::UNDEFINED)))
}

impl Bounds {
    /// Reads `timeoutMs`, `timeouts` and `signal` from `opts` (absent = unbounded).
    /// Errors: `invalid_config` for a bad value or an unknown hook name in `timeouts`.
    pub(crate) fn from_options(opts: &JsValue) -> Result<Bounds, JsValue> {
        let mut b = Bounds { default_ms: ms_of(&get(opts, "timeoutMs"), "timeoutMs")?, ..Bounds::default() };
        let per = get(opts, "timeouts");
        if per.is_object() {
            let keys = js_sys::Object::keys(per.unchecked_ref::<js_sys::Object>());
            for k in keys.iter() {
                let k = k.as_string().unwrap_or_default();
                let Some(name) = HOOK_NAMES.iter().find(|n| **n == k) else {
                    return Err(js_error(&Error::new(ErrorCode::InvalidConfig, format!("timeouts.{k}: unknown hook (expected one of {})", HOOK_NAMES.join(", ")))));
                };
                if let Some(ms) = ms_of(&get(&per, name), &format!("timeouts.{name}"))? {
                    b.per_hook.push((name, ms));
                }
            }
        } else if !per.is_undefined() && !per.is_null() {
            return Err(js_error(&Error::new(ErrorCode::InvalidConfig, "timeouts must be an object of milliseconds per hook")));
        }
        let signal = get(opts, "signal");
        if !signal.is_undefined() && !signal.is_null() {
            if !get(&signal, "addEventListener").is_function() {
                return Err(js_error(&Error::new(ErrorCode::InvalidConfig, "signal must be an AbortSignal")));
            }
            b.signal = Some(signal);
        }
        Ok(b)
    }

    fn ms(&self, hook: &str) -> Option<f64> {
        self.per_hook.iter().find(|(n, _)| *n == hook).map(|(_, ms)| *ms).or(self.default_ms)
    }

    /// The `aborted` error when the signal has fired, else `None`.
    pub(crate) fn aborted(&self, hook: &str) -> Option<JsValue> {
        let s = self.signal.as_ref()?;
        (get(s, "aborted").as_bool() == Some(true)).then(|| abort_error(s, hook))
    }

    /// Awaits `fut` (a host callback named `hook`) within the bounds: rejects with
    /// `timeout` / `aborted` when the time runs out or the signal fires first.
    pub(crate) async fn bound<F: Future<Output = Result<JsValue, JsValue>>>(&self, hook: &str, fut: F) -> Result<JsValue, JsValue> {
        if let Some(e) = self.aborted(hook) {
            return Err(e);
        }
        let ms = self.ms(hook);
        if ms.is_none() && self.signal.is_none() {
            return fut.await;
        }
        // the timer: resolves to the "timeout" marker
        let timer = ms.map(|ms| {
            let (p, resolve) = pending();
            let id = set_timeout(&resolve, ms);
            (p, id, ms)
        });
        let listener = self.signal.as_ref().map(|s| {
            let (p, resolve) = pending();
            if let Ok(add) = get(s, "addEventListener").dyn_into::<Function>() {
                let _ = add.call2(s, &"abort".into(), &resolve);
            }
            (s.clone(), p, resolve)
        });
        let hook_name = hook.to_string();
        let stop = {
            let timer_p = timer.as_ref().map(|(p, _, _)| p.clone());
            let abort_p = listener.as_ref().map(|(_, p, _)| p.clone());
            let (timer_ms, signal) = (timer.as_ref().map(|t| t.2), self.signal.clone());
            let hook = hook_name.clone();
            async move {
                let t = timer_p.map(JsFuture::from);
                let a = abort_p.map(JsFuture::from);
                let abort_err = |s: &JsValue| abort_error(s, &hook);
                match (t, a) {
                    (Some(t), Some(a)) => {
                        let which = Race { a: Box::pin(async move { t.await.map(|_| true) }), b: Box::pin(async move { a.await.map(|_| false) }) }.await;
                        if which.unwrap_or(true) {
                            Err(timeout_error(&hook, timer_ms.unwrap_or(0.0)))
                        } else {
                            Err(signal.as_ref().map(abort_err).unwrap_or(JsValue::UNDEFINED))
                        }
                    }
                    (Some(t), None) => {
                        let _ = t.await;
                        Err(timeout_error(&hook, timer_ms.unwrap_or(0.0)))
                    }
                    (None, Some(a)) => {
                        let _ = a.await;
                        Err(signal.as_ref().map(abort_err).unwrap_or(JsValue::UNDEFINED))
                    }
                    (None, None) => std::future::pending().await,
                }
            }
        };
        let out = Race { a: Box::pin(fut), b: Box::pin(stop) }.await;
        if let Some((_, id, _)) = &timer {
            clear_timeout(id);
        }
        if let Some((s, _, resolve)) = &listener {
            if let Ok(remove) = get(s, "removeEventListener").dyn_into::<Function>() {
                let _ = remove.call2(s, &"abort".into(), resolve);
            }
        }
        out
    }

    /// Calls `f(arg)` (sync or async, J-2) within the bounds of `hook`.
    pub(crate) async fn call(&self, hook: &str, f: &Function, args: &[&JsValue]) -> Result<JsValue, JsValue> {
        if let Some(e) = self.aborted(hook) {
            return Err(e);
        }
        let r = match args {
            [] => f.call0(&JsValue::NULL)?,
            [a] => f.call1(&JsValue::NULL, a)?,
            [a, b, ..] => f.call2(&JsValue::NULL, a, b)?,
        };
        self.bound(hook, settle(hook, &r)?).await
    }

    /// Calls `f(arg, { signal })` within the bounds of `hook` (break finding 14): `signal` is
    /// an `AbortSignal` of the engine's own that fires when this call stops waiting, on the
    /// host's `signal` or on the hook's timeout, so the callback can cancel its own work (an
    /// HTTP request). Its `reason` is the `aborted` / `timeout` error the call rejects with.
    /// In a runtime without a global `AbortController` the host's own `signal` (or
    /// `undefined`) is passed instead.
    pub(crate) async fn call_cancellable(&self, hook: &str, f: &Function, arg: &JsValue) -> Result<JsValue, JsValue> {
        if let Some(e) = self.aborted(hook) {
            return Err(e);
        }
        let controller = abort_controller();
        let signal = controller.as_ref().map(|c| get(c, "signal")).or_else(|| self.signal.clone()).unwrap_or(JsValue::UNDEFINED);
        let extra = js_sys::Object::new();
        let _ = Reflect::set(&extra, &"signal".into(), &signal);
        let r = f.call2(&JsValue::NULL, arg, &extra)?;
        let out = self.bound(hook, settle(hook, &r)?).await;
        if let (Err(e), Some(c)) = (&out, &controller) {
            if is_bound_error(e) {
                if let Ok(abort) = get(c, "abort").dyn_into::<Function>() {
                    let _ = abort.call1(c, e);
                }
            }
        }
        out
    }
}

/// A new `AbortController` from the global one, if the runtime has it.
fn abort_controller() -> Option<JsValue> {
    let ctor = Reflect::get(&js_sys::global(), &"AbortController".into()).ok()?.dyn_into::<Function>().ok()?;
    Reflect::construct(&ctor, &js_sys::Array::new()).ok()
}

/// The future of a callback's return value `r`. Break finding 16: a result whose `then`
/// cannot be read (a Proxy whose `get` throws) is no error of the callback: it rejects with
/// a typed error (`summary_failed` for summarize / curator, `memory_failed` for memory,
/// else `invalid_config`) naming the hook, with the thrown value as `cause`.
fn settle(hook: &str, r: &JsValue) -> Result<JsFuture, JsValue> {
    if r.is_object() || r.is_function() {
        if let Err(cause) = Reflect::get(r, &"then".into()) {
            let code = match hook {
                "summarize" | "curator" => ErrorCode::SummaryFailed,
                "memory" => ErrorCode::MemoryFailed,
                _ => ErrorCode::InvalidConfig,
            };
            let why = get(&cause, "message").as_string().or_else(|| cause.as_string()).unwrap_or_else(|| super::js_type(&cause));
            let e = super::with_cause(&Error::new(code, format!("the {hook} callback returned a value that cannot be read (reading its `then` threw: {why})")), &cause);
            let _ = Reflect::set(&e, &"unreadableResult".into(), &JsValue::TRUE);
            return Err(e);
        }
    }
    Ok(JsFuture::from(Promise::resolve(r)))
}

/// Is `e` the error [`settle`] gives for a result that cannot be read?
pub(crate) fn is_unreadable_result(e: &JsValue) -> bool {
    get(e, "unreadableResult").as_bool() == Some(true) && get(e, "name").as_string().as_deref() == Some("ContextCompactorError")
}

/// What a call stopped waiting on `hook` left behind: nothing, except for the store's
/// `save`, which was handed the record and cannot be cancelled (W-5, I-6).
fn left_behind(hook: &str) -> &'static str {
    if hook == "save" {
        "the save may still have completed (a callback cannot be cancelled): load the record to see which revision the store holds before writing again (Session.append: retry it with the same rows on this Session, or with the same `appendId`, and a save that landed is not written twice)"
    } else {
        "nothing was committed"
    }
}

/// Marks an error of a timed-out / aborted `save` (`mayHaveCommitted: true`): the write
/// may have landed.
fn mark_uncertain(e: JsValue, hook: &str) -> JsValue {
    if hook == "save" {
        let _ = Reflect::set(&e, &"mayHaveCommitted".into(), &JsValue::TRUE);
    }
    e
}

fn timeout_error(hook: &str, ms: f64) -> JsValue {
    mark_uncertain(js_error(&Error::new(ErrorCode::Timeout, format!("timeout: the {hook} callback did not settle within {ms} ms; {}", left_behind(hook)))), hook)
}

/// The `aborted` rejection ([`super::abort_error`]: an `AbortError` with `code:
/// "aborted"`, its `cause` the signal's reason).
fn abort_error(signal: &JsValue, hook: &str) -> JsValue {
    mark_uncertain(super::abort_error(&format!("aborted: the signal fired while awaiting the {hook} callback; {}", left_behind(hook)), &get(signal, "reason")), hook)
}

/// Is `e` a `timeout` / `aborted` rejection of [`Bounds`]?
pub(crate) fn is_bound_error(e: &JsValue) -> bool {
    get(e, "code").as_string().as_deref() == Some("timeout") && get(e, "name").as_string().as_deref() == Some("ContextCompactorError") || is_abort(e)
}

/// Is `e` the `aborted` rejection of [`Bounds`] (the host's signal fired; named
/// `AbortError` / `TimeoutError`, [`super::abort_error`], or an integration's
/// `ContextCompactorError` of an older build)? A cancel is not a failed attempt (C-5):
/// callers reject with it instead of recording a failure.
pub(crate) fn is_abort(e: &JsValue) -> bool {
    get(e, "code").as_string().as_deref() == Some("aborted") && matches!(get(e, "name").as_string().as_deref(), Some("AbortError" | "TimeoutError" | "ContextCompactorError"))
}
