//! `Session`: compaction over host storage callbacks (W-5, W-8), and `recordFinding`
//! (Y-10). The pure parts (record shape, save plan, compare-and-swap rule, request view)
//! live in `crate::session`; this file only awaits the host's callbacks.
//!
//! Store contract: `{ load() -> { transcript, state?, revision? } | Promise,
//! save(record, { expectedRevision, revision, patch }) -> any | Promise }`. `save` must
//! write `record` (`{ transcript, state, revision }`) only when the stored revision is
//! still `expectedRevision`; it refuses a stale one by throwing an error whose `code` is
//! `stale_revision` or by returning `{ ok: false, reason: "stale_revision" }`.

use super::bounded::Bounds;
use super::{to_js, drive, finish, from_json, get, js_error, str_arg, to_json, ContextCompactor};
use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::formats::{self, Format};
use crate::session::{plan_append, plan_finding, plan_save, record_finding as core_record_finding, rows_hash, stored_append, unsaved_rows, SavePlan, SessionRecord};
use std::cell::RefCell;
use std::rc::Rc;
use js_sys::{Function, Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

/// A compacted session kept in host storage.
#[wasm_bindgen]
pub struct Session {
    config: Config,
    format: Option<Format>,
    load: Function,
    save: Function,
    /// Appends whose `save` failed without a refusal (timed out, aborted, threw): the
    /// write may have landed. `(rows hash, appendId)`, newest last: a later `append` of
    /// the same rows on this Session reuses the id, so it finds its own save (I-6).
    uncertain: Rc<RefCell<Vec<(String, String)>>>,
}

/// Most uncertain appends a Session remembers.
const MAX_UNCERTAIN: usize = 16;

/// The `appendId` option: a non-empty string of at most 256 bytes, or absent. Errors:
/// `invalid_config`.
fn append_id_of(options: &JsValue) -> Result<Option<String>, JsValue> {
    let v = get(options, "appendId");
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    match v.as_string() {
        Some(id) if !id.is_empty() && id.len() <= 256 => Ok(Some(id)),
        _ => Err(js_error(&Error::new(ErrorCode::InvalidConfig, format!("appendId must be a non-empty string of at most 256 bytes, got {}", super::js_type(&v))))),
    }
}

/// A fresh append id: `append-` and 20 hex digits of the runtime's `Math.random`
/// (unique per call, not a secret).
fn new_append_id() -> String {
    let a = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let b = (js_sys::Math::random() * 1_048_576.0) as u64;
    format!("append-{a:08x}{b:05x}{:07x}", (js_sys::Date::now() as u64) & 0x0fff_ffff)
}

/// Sets `err.appendId` (the id to retry the append with) when `err` is an object.
fn with_append_id(err: JsValue, id: &str) -> JsValue {
    if err.is_object() && get(&err, "appendId").is_undefined() {
        let _ = Reflect::set(&err, &"appendId".into(), &id.into());
    }
    err
}

fn stale(detail: &str) -> JsValue {
    js_error(&Error::new(ErrorCode::StaleRevision, format!("stale_revision: {detail}")))
}

#[derive(Clone)]
struct Store {
    load: Function,
    save: Function,
}

/// How many times `append` / `recordFinding` reload and retry after a `stale_revision`
/// refusal (nothing was written by the refused save, so a retry cannot duplicate rows).
const WRITE_RETRIES: usize = 8;

impl Store {
    /// The stored record; a store with nothing saved yet (`load` gives `null` /
    /// `undefined`) is an empty session at revision 0 (its first write creates it).
    async fn load(&self, bounds: &Bounds) -> Result<SessionRecord, JsValue> {
        let v = bounds.call("load", &self.load, &[]).await?;
        if v.is_null() || v.is_undefined() {
            return Ok(SessionRecord::empty());
        }
        SessionRecord::from_json(&to_json(&v, "load()")?).map_err(|e| js_error(&e))
    }

    /// One save call with compare-and-swap (W-5): a refused save rejects with
    /// `stale_revision`; any other throw reaches the caller unchanged.
    async fn save(&self, plan: &SavePlan, patch: &Value, bounds: &Bounds) -> Result<(), JsValue> {
        let record = to_js(&plan.record)?;
        let opts = from_json(&json!({ "expectedRevision": plan.expected_revision, "revision": plan.record.revision, "patch": patch }))?;
        match bounds.call("save", &self.save, &[&record, &opts]).await {
            Ok(v) => {
                if get(&v, "ok").as_bool() == Some(false) {
                    let reason = get(&v, "reason").as_string().unwrap_or_default();
                    if reason == "stale_revision" {
                        return Err(stale(&format!("the store refused revision {:?} expected at {}", plan.record.revision, plan.expected_revision)));
                    }
                    return Err(js_error(&Error::new(ErrorCode::SaveFailed, format!("save() refused the record: {reason}"))));
                }
                Ok(())
            }
            Err(e) => {
                if get(&e, "code").as_string().as_deref() == Some("stale_revision") || get(&e, "reason").as_string().as_deref() == Some("stale_revision") {
                    let msg = get(&e, "message").as_string().unwrap_or_default();
                    return Err(stale(&msg));
                }
                Err(e)
            }
        }
    }
}

fn is_stale(e: &JsValue) -> bool {
    get(e, "code").as_string().as_deref() == Some("stale_revision")
}

/// Sets `err.state` (when the error is an object without one): every rejection of a
/// session or compaction call carries the state to persist (issue 14).
/// A thrown primitive (`throw "disk full"`, `throw null`) or a frozen object cannot
/// carry a `state`: it is wrapped in an `Error` with the code of `err.code` when that is
/// one of the engine's, else `save_failed` (a host callback failed), its message naming
/// the thrown value, and the original value as `cause`.
pub(crate) fn with_state(err: JsValue, state: &crate::state::SessionState) -> JsValue {
    with_state_js(err, &to_js(state).unwrap_or(JsValue::NULL))
}

/// [`with_state`] with the state already a JS value (`null` when nothing was loaded).
pub(crate) fn with_state_js(err: JsValue, state: &JsValue) -> JsValue {
    if err.is_object() {
        if !get(&err, "state").is_undefined() {
            return err;
        }
        if Reflect::set(&err, &"state".into(), state).unwrap_or(false) && !get(&err, "state").is_undefined() {
            return err;
        }
    }
    let what = if err.is_object() {
        get(&err, "message").as_string().unwrap_or_else(|| "an object that cannot carry a state".into())
    } else {
        js_sys::JSON::stringify(&err).ok().and_then(|s| s.as_string()).unwrap_or_else(|| super::js_type(&err))
    };
    let code = get(&err, "code").as_string().and_then(|c| crate::error::ErrorCode::parse(&c)).unwrap_or(ErrorCode::SaveFailed);
    let wrapped = js_error(&Error::new(code, format!("a host callback failed: {what}")));
    let _ = Reflect::set(&wrapped, &"cause".into(), &err);
    let _ = Reflect::set(&wrapped, &"state".into(), state);
    wrapped
}

fn store_of(v: &JsValue) -> Result<Store, JsValue> {
    let load = get(v, "load").dyn_into::<Function>().map_err(|_| js_error(&Error::new(ErrorCode::InvalidConfig, "store.load must be a function")))?;
    let save = get(v, "save").dyn_into::<Function>().map_err(|_| js_error(&Error::new(ErrorCode::InvalidConfig, "store.save must be a function")))?;
    Ok(Store { load, save })
}

#[wasm_bindgen]
impl Session {
    /// `new Session(compactor, { load, save })`: the compactor's options apply to every
    /// call. Throws `invalid_config` when `load` or `save` is not a function.
    #[wasm_bindgen(constructor)]
    pub fn new(compactor: &ContextCompactor, store: JsValue) -> Result<Session, JsValue> {
        let s = store_of(&store)?;
        Ok(Session { config: compactor.config.clone(), format: compactor.format, load: s.load, save: s.save, uncertain: Rc::new(RefCell::new(Vec::new())) })
    }

    fn store(&self) -> Store {
        Store { load: self.load.clone(), save: self.save.clone() }
    }

    /// `compact(hooks?)` -> Promise of the `ContextCompactor.compact` result plus
    /// `saved: { revision, expectedRevision }`. Loads the record, compacts it with the
    /// same hooks as `ContextCompactor.compact`, then saves the new transcript and the
    /// new state in ONE `save` call at the next revision, expected at the loaded one
    /// (W-5, W-8). A skip saves the new state the same way (every write advances the
    /// revision, so a row appended meanwhile is never overwritten). Rejects with
    /// `stale_revision` when the store refuses the save (nothing is written; load and try
    /// again); a failed compaction saves nothing and rejects as `compact` does. `hooks`
    /// also bound `load` / `save` (`timeoutMs`, `timeouts.load`, `timeouts.save`,
    /// `signal`, I-6). Every rejection carries `err.state`. With no memory hook
    /// (`memory`, `store`, `embed`), the saved record's `memory` keeps the folded user
    /// text records beside the transcript (N-1, [`crate::session::SessionRecord::memory`]).
    pub fn compact(&self, hooks: JsValue) -> Promise {
        let (config, format, store) = (self.config.clone(), self.format, self.store());
        super::promise(async move {
            // every rejection carries `err.state` (issue 14): `null` while nothing is loaded
            let bounds = Bounds::from_options(&hooks).map_err(|e| with_state_js(e, &JsValue::NULL))?;
            let loaded = store.load(&bounds).await.map_err(|e| with_state_js(e, &JsValue::NULL))?;
            let state_in = loaded.state.clone();
            let run = async {
                let format = match format {
                    Some(f) => f,
                    None => formats::detect(&loaded.transcript).map_err(|e| js_error(&e))?,
                };
                let t = formats::decode(format, loaded.transcript.clone()).map_err(|e| js_error(&e))?;
                // N-1: with no memory hook the folded user text records are the one whole
                // copy of what a summary clips: the saved record keeps them (`memory`)
                let keep_memory = !super::memory::MemoryHooks::from_hooks(&hooks)?.active();
                let (outcome, side) = drive(config, loaded.state.clone(), t, &hooks).await?;
                let plan = plan_save(&loaded, &outcome, keep_memory);
                if let Some(plan) = &plan {
                    let patch = outcome.rewrite.as_ref().map(|r| serde_json::to_value(&r.patch).unwrap_or(Value::Null)).unwrap_or(Value::Array(vec![]));
                    store.save(plan, &patch, &bounds).await?;
                }
                let out = finish(&outcome, side, &hooks, plan.is_some()).await?;
                if let Some(plan) = plan {
                    let saved = from_json(&json!({ "revision": plan.record.revision, "expectedRevision": plan.expected_revision }))?;
                    let _ = Reflect::set(&out, &"saved".into(), &saved);
                }
                Ok(out)
            };
            run.await.map_err(|e| with_state(e, &state_in))
        })
    }

    /// `append(rows, options?)` -> Promise of `{ revision, expectedRevision, rows,
    /// appendId, alreadyStored? }`: adds stored-view provider messages (one message, an
    /// array of them, or their JSON text) at the end of the stored transcript in ONE
    /// `save` call at the next revision, expected at the loaded one (W-5, issue 14), with
    /// the patch `[{ start, deleteCount: 0, insert: rows }]`. A refused (stale) save wrote
    /// nothing: the record is loaded again and the rows appended to it (up to 8 tries), so
    /// no row is lost and none is written twice. Idempotent on `message_id` (issue 16): a
    /// row whose `message_id` a stored row already has with the same JSON is not written
    /// again (another writer appended it first), and when every row is held nothing is
    /// saved (`rows: 0`, the loaded revision); `rows` counts the rows written. A store
    /// with nothing saved yet gets its first record.
    ///
    /// Safe to retry after a `save` that timed out, was aborted or threw (I-6: it may
    /// have landed; the rejection carries `appendId` and, for a timeout / abort,
    /// `mayHaveCommitted: true`): every append records its id and the hash of its rows in
    /// the saved state (`state.appends`, newest 16), and an append of the same id finds
    /// that mark and writes nothing (`rows: 0`, `alreadyStored: true`, `revision` the one
    /// it saved). The id is `options.appendId` when given (use it to retry from another
    /// Session or process), else the id of this Session's earlier failed append of the
    /// same rows, else a fresh one. `options`: `{ appendId?, timeoutMs?, timeouts?: {
    /// load?, save? }, signal? }` (I-6). Rejects with `invalid_transcript` (or a pairing
    /// code) when the rows do not fit the format or a stored row has one's `message_id`
    /// with other content, `invalid_config` for a bad `appendId` or one already saved with
    /// other rows, `stale_revision` when every try was refused.
    pub fn append(&self, rows: JsValue, options: JsValue) -> Promise {
        let (format, store, uncertain) = (self.format, self.store(), self.uncertain.clone());
        super::promise(async move {
            let run = async move {
            if rows.is_null() || rows.is_undefined() {
                return Err(js_error(&Error::new(ErrorCode::InvalidTranscript, "append(rows): rows must be a message, an array of messages or their JSON text")));
            }
            let rows = match to_json(&rows, "rows")? {
                Value::Array(a) => a,
                one => vec![one],
            };
            let bounds = Bounds::from_options(&options)?;
            let hash = rows_hash(&rows);
            let given = append_id_of(&options)?;
            let earlier = uncertain.borrow().iter().rev().find(|(h, _)| *h == hash).map(|(_, id)| id.clone());
            let id = given.clone().or(earlier).unwrap_or_else(new_append_id);
            let settle = |id: &str| uncertain.borrow_mut().retain(|(_, i)| i != id);
            let mut last = JsValue::UNDEFINED;
            for _ in 0..WRITE_RETRIES {
                let loaded = store.load(&bounds).await.map_err(|e| with_append_id(e, &id))?;
                // an earlier try of this append landed (its save answered late or failed after the write)
                if let Some(mark) = stored_append(&loaded, &id, &hash).map_err(|e| with_state(js_error(&e), &loaded.state))? {
                    settle(&id);
                    let at = loaded.current_revision();
                    return from_json(&json!({ "revision": mark.revision, "expectedRevision": mark.revision.saturating_sub(1), "rows": 0, "appendId": id, "alreadyStored": true, "storeRevision": at }));
                }
                let format = match format {
                    Some(f) => f,
                    None if loaded.transcript.as_array().is_some_and(Vec::is_empty) => formats::detect(&Value::Array(rows.clone())).map_err(|e| js_error(&e))?,
                    None => formats::detect(&loaded.transcript).map_err(|e| js_error(&e))?,
                };
                // idempotent on message_id: rows another writer (or an earlier try) saved are not written twice
                let fresh = unsaved_rows(&loaded, rows.clone()).map_err(|e| with_state(js_error(&e), &loaded.state))?;
                if fresh.is_empty() && !rows.is_empty() {
                    settle(&id);
                    let at = loaded.current_revision();
                    return from_json(&json!({ "revision": at, "expectedRevision": at, "rows": 0, "appendId": id }));
                }
                let count = fresh.len();
                let (plan, patch) = plan_append(&loaded, format, fresh, Some((&id, &hash))).map_err(|e| with_state(js_error(&e), &loaded.state))?;
                match store.save(&plan, &patch, &bounds).await {
                    Ok(()) => {
                        settle(&id);
                        return from_json(&json!({ "revision": plan.record.revision, "expectedRevision": plan.expected_revision, "rows": count, "appendId": id }));
                    }
                    Err(e) if is_stale(&e) => last = with_state(e, &loaded.state),
                    Err(e) => {
                        // the save may have landed: a retry of these rows on this Session reuses the id
                        let refused = get(&e, "code").as_string().as_deref() == Some("save_failed");
                        if !refused {
                            let mut u = uncertain.borrow_mut();
                            u.retain(|(_, i)| *i != id);
                            u.push((hash.clone(), id.clone()));
                            let over = u.len().saturating_sub(MAX_UNCERTAIN);
                            u.drain(..over);
                        }
                        return Err(with_append_id(with_state(e, &loaded.state), &id));
                    }
                }
            }
            Err(with_append_id(last, &id))
            };
            // every rejection carries `err.state` (issue 14): `null` when nothing was loaded
            run.await.map_err(|e| with_state_js(e, &JsValue::NULL))
        })
    }

    /// `load()` -> Promise of the stored record `{ transcript, state, revision }`
    /// (normalised: `state` complete, `revision` set).
    pub fn load(&self) -> Promise {
        let store = self.store();
        super::promise(async move {
            let mut r = store.load(&Bounds::default()).await?;
            r.revision = Some(r.current_revision());
            to_js(&r)
        })
    }

    /// `request()` -> Promise of the request view of the stored transcript with the
    /// findings ledger rendered in (F-4, Y-10).
    pub fn request(&self) -> Promise {
        let (format, store) = (self.format, self.store());
        super::promise(async move {
            let r = store.load(&Bounds::default()).await?;
            let format = match format {
                Some(f) => f,
                None => formats::detect(&r.transcript).map_err(|e| js_error(&e))?,
            };
            let t = formats::decode(format, r.transcript.clone()).map_err(|e| js_error(&e))?;
            to_js(&crate::output::RequestJson { t: &t, findings: &r.state.findings })
        })
    }

    /// `recordFinding(text, options?)` -> Promise of the new state: loads, records the
    /// finding (Y-10), saves at the next revision expected at the loaded one (every write
    /// advances the revision, W-5); a stale refusal reloads and retries (up to 8 tries),
    /// so a finding recorded during a compaction is never overwritten by it nor
    /// overwrites it. An exact repeat writes nothing. `options`: as `append` (I-6).
    /// Rejects with `invalid_state` for a blank finding, `stale_revision` when every try
    /// was refused.
    #[wasm_bindgen(js_name = recordFinding)]
    pub fn record_finding(&self, text: JsValue, options: JsValue) -> Promise {
        let store = self.store();
        super::promise(async move {
            let run = async move {
            let text = str_arg(&text, "recordFinding: text", ErrorCode::InvalidState)?;
            let bounds = Bounds::from_options(&options)?;
            let mut last = JsValue::UNDEFINED;
            for _ in 0..WRITE_RETRIES {
                let loaded = store.load(&bounds).await?;
                let plan = plan_finding(&loaded, &text).map_err(|e| with_state(js_error(&e), &loaded.state))?;
                let Some(plan) = plan else { return to_js(&loaded.state) };
                match store.save(&plan, &Value::Array(vec![]), &bounds).await {
                    Ok(()) => return to_js(&plan.record.state),
                    Err(e) if is_stale(&e) => last = with_state(e, &loaded.state),
                    Err(e) => return Err(with_state(e, &loaded.state)),
                }
            }
            Err(last)
            };
            run.await.map_err(|e| with_state_js(e, &JsValue::NULL))
        })
    }
}

/// `recordFinding(state | null, text)` -> the new state with `text` in its findings
/// ledger (Y-10; an exact repeat is not added twice). Throws `invalid_state` for blank
/// text or text over 4,096 bytes.
#[wasm_bindgen(js_name = recordFinding)]
pub fn record_finding(state: JsValue, text: JsValue) -> Result<JsValue, JsValue> {
    let text = str_arg(&text, "recordFinding: text", ErrorCode::InvalidState)?;
    let mut s = super::state_of(&state)?;
    core_record_finding(&mut s, &text).map_err(|e| js_error(&e))?;
    to_js(&s)
}
