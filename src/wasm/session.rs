//! `Session`: compaction over host storage callbacks (W-5, W-8), and `recordFinding`
//! (Y-10). The pure parts (record shape, save plan, compare-and-swap rule, request view)
//! live in `crate::session`; this file only awaits the host's callbacks.
//!
//! Store contract: `{ load() -> { transcript, state?, revision? } | Promise,
//! save(record, { expectedRevision, revision, patch }) -> any | Promise }`. `save` must
//! write `record` (`{ transcript, state, revision }`) only when the stored revision is
//! still `expectedRevision`; it refuses a stale one by throwing an error whose `code` is
//! `stale_revision` or by returning `{ ok: false, reason: "stale_revision" }`.

use super::{to_js, drive, finish, from_json, get, js_error, str_arg, to_json, ContextCompactor};
use crate::config::Config;
use crate::error::{Error, ErrorCode};
use crate::formats::{self, Format};
use crate::session::{plan_save, record_finding as core_record_finding, SavePlan, SessionRecord};
use js_sys::{Function, Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// A compacted session kept in host storage.
#[wasm_bindgen]
pub struct Session {
    config: Config,
    format: Option<Format>,
    load: Function,
    save: Function,
}

async fn await_call(f: &Function, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    let r = match args {
        [] => f.call0(&JsValue::NULL)?,
        [a] => f.call1(&JsValue::NULL, a)?,
        [a, b, ..] => f.call2(&JsValue::NULL, a, b)?,
    };
    JsFuture::from(Promise::resolve(&r)).await
}

fn stale(detail: &str) -> JsValue {
    js_error(&Error::new(ErrorCode::StaleRevision, format!("stale_revision: {detail}")))
}

#[derive(Clone)]
struct Store {
    load: Function,
    save: Function,
}

impl Store {
    async fn load(&self) -> Result<SessionRecord, JsValue> {
        let v = await_call(&self.load, &[]).await?;
        SessionRecord::from_json(&to_json(&v, "load()")?).map_err(|e| js_error(&e))
    }

    /// One save call with compare-and-swap (W-5): a refused save rejects with
    /// `stale_revision`; any other throw reaches the caller unchanged.
    async fn save(&self, plan: &SavePlan, patch: &Value) -> Result<(), JsValue> {
        let record = to_js(&plan.record)?;
        let opts = from_json(&json!({ "expectedRevision": plan.expected_revision, "revision": plan.record.revision, "patch": patch }))?;
        match await_call(&self.save, &[&record, &opts]).await {
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
        Ok(Session { config: compactor.config.clone(), format: compactor.format, load: s.load, save: s.save })
    }

    fn store(&self) -> Store {
        Store { load: self.load.clone(), save: self.save.clone() }
    }

    /// `compact(hooks?)` -> Promise of the `ContextCompactor.compact` result plus
    /// `saved: { revision, expectedRevision }`. Loads the record, compacts it with the
    /// same hooks as `ContextCompactor.compact`, then saves the new transcript and the
    /// new state in ONE `save` call expected at the loaded revision (W-5, W-8). A skip
    /// saves the new state at the same revision. Rejects with `stale_revision` when the
    /// store refuses the save (nothing is written); a failed compaction saves nothing
    /// and rejects as `compact` does.
    pub fn compact(&self, hooks: JsValue) -> Promise {
        let (config, format, store) = (self.config.clone(), self.format, self.store());
        wasm_bindgen_futures::future_to_promise(async move {
            let loaded = store.load().await?;
            let format = match format {
                Some(f) => f,
                None => formats::detect(&loaded.transcript).map_err(|e| js_error(&e))?,
            };
            let t = formats::decode(format, loaded.transcript.clone()).map_err(|e| js_error(&e))?;
            let (outcome, callback_error) = drive(config, loaded.state.clone(), t, &hooks).await?;
            let plan = plan_save(&loaded, &outcome);
            if let Some(plan) = &plan {
                let patch = outcome.rewrite.as_ref().map(|r| serde_json::to_value(&r.patch).unwrap_or(Value::Null)).unwrap_or(Value::Array(vec![]));
                store.save(plan, &patch).await?;
            }
            let out = finish(&outcome, callback_error, &hooks).await?;
            if let Some(plan) = plan {
                let saved = from_json(&json!({ "revision": plan.record.revision, "expectedRevision": plan.expected_revision }))?;
                let _ = Reflect::set(&out, &"saved".into(), &saved);
            }
            Ok(out)
        })
    }

    /// `load()` -> Promise of the stored record `{ transcript, state, revision }`
    /// (normalised: `state` complete, `revision` set).
    pub fn load(&self) -> Promise {
        let store = self.store();
        wasm_bindgen_futures::future_to_promise(async move {
            let mut r = store.load().await?;
            r.revision = Some(r.current_revision());
            to_js(&r)
        })
    }

    /// `request()` -> Promise of the request view of the stored transcript with the
    /// findings ledger rendered in (F-4, Y-10).
    pub fn request(&self) -> Promise {
        let (format, store) = (self.format, self.store());
        wasm_bindgen_futures::future_to_promise(async move {
            let r = store.load().await?;
            let format = match format {
                Some(f) => f,
                None => formats::detect(&r.transcript).map_err(|e| js_error(&e))?,
            };
            let t = formats::decode(format, r.transcript.clone()).map_err(|e| js_error(&e))?;
            to_js(&crate::output::RequestJson { t: &t, findings: &r.state.findings })
        })
    }

    /// `recordFinding(text)` -> Promise of the new state: loads, records the finding
    /// (Y-10), saves with compare-and-swap at the same revision. Rejects with
    /// `invalid_state` for a blank finding, `stale_revision` when refused.
    #[wasm_bindgen(js_name = recordFinding)]
    pub fn record_finding(&self, text: JsValue) -> Promise {
        let store = self.store();
        wasm_bindgen_futures::future_to_promise(async move {
            let text = str_arg(&text, "recordFinding: text", ErrorCode::InvalidState)?;
            let loaded = store.load().await?;
            let mut state = loaded.state.clone();
            core_record_finding(&mut state, &text).map_err(|e| js_error(&e))?;
            let rev = loaded.current_revision();
            state.revision = rev;
            let plan = SavePlan { record: SessionRecord { transcript: loaded.transcript.clone(), state: state.clone(), revision: Some(rev) }, expected_revision: rev };
            store.save(&plan, &Value::Array(vec![])).await?;
            to_js(&state)
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
