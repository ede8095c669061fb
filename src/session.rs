//! Storage-side helpers (W-5, W-8, Y-10), pure: the session record a host stores, the
//! compare-and-swap rule its `save` applies, the findings ledger, and the request view
//! with the findings rendered in. The wasm `Session` (src/wasm/session.rs) is a thin
//! async shell over these: it calls the host's `load` / `save` callbacks.
//!
//! One record holds everything a session needs to resume exactly like a live one:
//! the stored-view transcript (provenance keys included), the engine state, and the
//! revision the record is at. A compaction saves the new transcript and the new state
//! in ONE `save(record, { expectedRevision })` call; the store refuses it when its
//! current revision is not `expectedRevision` (two workers compacting one session: the
//! second save is stale and nothing of it is written).

use crate::engine::Outcome;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::{self, Format, View};
use crate::state::SessionState;
use crate::transcript::Transcript;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a host stores per session. JSON (camelCase): `{ transcript, state, revision,
/// memory? }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The transcript in the stored view (the host's document shape, provenance keys kept).
    pub transcript: Value,
    /// The engine state (W-6); `null` / missing = a new session.
    #[serde(default)]
    pub state: SessionState,
    /// Revision of this record; +1 per committed rewrite. Missing = `state.revision`.
    #[serde(default)]
    pub revision: Option<u64>,
    /// The folded user text, whole (N-1, M-1): the `narrative` memory records of the user
    /// rows the session's compactions folded while no memory hook (`memory`, `store`,
    /// `embed`) took them, oldest first, a record of the same id replaced in place. With
    /// no hook these records are the one whole copy of what a summary clips (or a later
    /// rollup does), so the saved session keeps them beside its transcript; every save
    /// carries them on. Omitted when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<crate::memory::MemoryRecord>,
}

impl SessionRecord {
    /// Parses a loaded record. Errors: `invalid_state` naming what is wrong.
    pub fn from_json(v: &Value) -> Result<SessionRecord> {
        let Value::Object(map) = v else {
            return Err(Error::new(ErrorCode::InvalidState, "load() must return { transcript, state?, revision? }"));
        };
        let transcript = map.get("transcript").cloned().unwrap_or(Value::Null);
        if transcript.is_null() {
            return Err(Error::new(ErrorCode::InvalidState, "load(): the record has no `transcript`"));
        }
        let state = SessionState::from_json(map.get("state").unwrap_or(&Value::Null))?;
        let revision = match map.get("revision") {
            None | Some(Value::Null) => None,
            Some(r) => Some(
                r.as_u64()
                    .filter(|&r| r <= crate::state::MAX_REVISION)
                    .ok_or_else(|| Error::new(ErrorCode::InvalidState, format!("load(): `revision` must be an integer in 0..={}, got {r}", crate::state::MAX_REVISION)))?,
            ),
        };
        let memory = match map.get("memory") {
            None | Some(Value::Null) => Vec::new(),
            Some(m) => serde_json::from_value(m.clone()).map_err(|e| Error::new(ErrorCode::InvalidState, format!("load(): `memory` must be the array of memory records a save wrote: {e}")))?,
        };
        Ok(SessionRecord { transcript, state, revision, memory })
    }

    /// The revision in force: `revision`, else the state's.
    pub fn current_revision(&self) -> u64 {
        self.revision.unwrap_or(self.state.revision)
    }
}

/// One save: the record to write and the revision the store must still be at (W-5).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SavePlan {
    /// The record to write: the new (or unchanged) transcript and state at the new revision.
    pub record: SessionRecord,
    /// The revision the store must still be at for the save to apply (JSON
    /// `expectedRevision`, W-5).
    pub expected_revision: u64,
}

/// What to save after a job over `loaded` (W-8): the new transcript (when a rewrite was
/// committed) and the new state, together, at the next revision, expected at the loaded
/// one (a skip advances the revision too: every write does, W-5). With `keep_memory`
/// (no memory hook took the outcome's records) the folded user text records of the
/// outcome join the record's `memory` ([`SessionRecord::memory`], N-1). A failed outcome
/// saves nothing (W-3): `None`.
pub fn plan_save(loaded: &SessionRecord, outcome: &Outcome, keep_memory: bool) -> Option<SavePlan> {
    if outcome.status == "failed" {
        return None;
    }
    let base = loaded.current_revision();
    // every write advances the revision (issue 14: a skip's save expected at the same
    // revision as an append would otherwise overwrite the appended rows)
    let revision = base.saturating_add(1);
    let transcript = match &outcome.rewrite {
        Some(_) => formats::encode(&outcome.transcript, View::Stored),
        None => loaded.transcript.clone(),
    };
    let mut state = outcome.state.clone();
    state.revision = revision;
    let mut memory = loaded.memory.clone();
    if let (true, Some(_), Some(batch)) = (keep_memory, &outcome.rewrite, &outcome.memory) {
        keep_user_text(&mut memory, &batch.records);
    }
    Some(SavePlan { record: SessionRecord { transcript, state, revision: Some(revision), memory }, expected_revision: base })
}

/// Adds the user rows' `narrative` records of `new` to `memory` (N-1): a record whose id
/// is already there replaces it in place (ids are deterministic, so a retried
/// compaction of the same rows writes no second copy), the others go at the end.
fn keep_user_text(memory: &mut Vec<crate::memory::MemoryRecord>, new: &[crate::memory::MemoryRecord]) {
    let mut at: std::collections::HashMap<String, usize> = memory.iter().enumerate().map(|(i, r)| (r.id.clone(), i)).collect();
    for r in new.iter().filter(|r| r.role == crate::Role::User && r.kind == crate::memory::RecordKind::Narrative) {
        match at.get(&r.id) {
            Some(&i) => {
                if let Some(slot) = memory.get_mut(i) {
                    *slot = r.clone();
                }
            }
            None => {
                at.insert(r.id.clone(), memory.len());
                memory.push(r.clone());
            }
        }
    }
}

/// The compare-and-swap rule (W-5): a save expected at `expected` is accepted only when
/// the store is at `current`. Errors: `stale_revision`.
pub fn check_revision(current: u64, expected: u64) -> Result<()> {
    if current == expected {
        Ok(())
    } else {
        Err(Error::new(ErrorCode::StaleRevision, format!("stale_revision: the store is at revision {current}, the save expected {expected}")))
    }
}

/// An in-memory store applying [`check_revision`] (native hosts and tests).
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    /// The stored record, `None` until the first save.
    pub record: Option<SessionRecord>,
}

impl MemoryStore {
    /// A copy of the stored record, through JSON (as a real store would give it back).
    pub fn load(&self) -> Result<SessionRecord> {
        let r = self.record.as_ref().ok_or_else(|| Error::new(ErrorCode::InvalidState, "no session stored"))?;
        let v = serde_json::to_value(r).map_err(|e| Error::new(ErrorCode::InvalidState, e.to_string()))?;
        SessionRecord::from_json(&v)
    }
    /// Writes `plan.record` when the store is still at `plan.expected_revision`.
    /// Errors: `stale_revision` (nothing written).
    pub fn save(&mut self, plan: &SavePlan) -> Result<()> {
        let current = self.record.as_ref().map(SessionRecord::current_revision).unwrap_or(0);
        check_revision(current, plan.expected_revision)?;
        self.record = Some(plan.record.clone());
        Ok(())
    }
}

impl SessionRecord {
    /// The record of a session with nothing saved yet (the store's `load` gave `null` /
    /// `undefined`): an empty transcript (a bare array), a new state, revision 0. Its
    /// first write creates it (expected at revision 0).
    pub fn empty() -> SessionRecord {
        SessionRecord { transcript: Value::Array(Vec::new()), state: SessionState::default(), revision: Some(0), memory: Vec::new() }
    }
}

/// The rows of `rows` that `loaded` does not hold yet (W-5, issue 14: an append is
/// idempotent on `message_id`). A row whose string `message_id` is already on a stored row
/// with the same JSON is left out (an append retried after another writer saved the same
/// rows, or a repeat); a row without a `message_id` is always kept. Errors:
/// `invalid_transcript` when a stored row has that `message_id` with other content (two
/// writers appended different rows under one id: nothing is planned then).
pub fn unsaved_rows(loaded: &SessionRecord, rows: Vec<Value>) -> Result<Vec<Value>> {
    let held: &[Value] = match &loaded.transcript {
        Value::Array(a) => a,
        Value::Object(map) => ["messages", "contents", "input"].into_iter().find_map(|k| map.get(k).and_then(Value::as_array)).map(Vec::as_slice).unwrap_or(&[]),
        _ => &[],
    };
    let id_of = |row: &Value| row.get("message_id").and_then(Value::as_str).map(str::to_string);
    let mut by_id: std::collections::HashMap<String, &Value> = std::collections::HashMap::new();
    for row in held {
        if let Some(id) = id_of(row) {
            by_id.entry(id).or_insert(row);
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        match id_of(&row).and_then(|id| by_id.get(&id).map(|held| (id, *held))) {
            Some((_, held)) if *held == row => {}
            Some((id, _)) => {
                return Err(Error::invalid(format!(
                    "append: the store already holds a different row with message_id {id:?} (another writer appended first, or the history was edited): load the record and compare before appending"
                )))
            }
            None => out.push(row),
        }
    }
    Ok(out)
}

/// The save that appends `rows` (stored-view provider messages of the session's format)
/// to `loaded` (W-5, issue 14): the transcript with the rows added at the end, the state
/// unchanged, the next revision, expected at the loaded one; and the patch
/// (`[{ start, deleteCount: 0, insert: rows }]`). The new transcript must decode in
/// `format` and keep its pairing rules (F-2, F-5). Errors: `invalid_transcript` (or a
/// pairing code) naming what is wrong; nothing is planned then.
///
/// `mark`: the append's id and rows hash ([`crate::state::AppendMark`]), recorded in the
/// saved state (newest [`crate::state::MAX_APPEND_MARKS`] kept) so a retry finds it
/// ([`stored_append`]).
pub fn plan_append(loaded: &SessionRecord, format: Format, rows: Vec<Value>, mark: Option<(&str, &str)>) -> Result<(SavePlan, Value)> {
    let mut doc = loaded.transcript.clone();
    let start;
    {
        let list = match &mut doc {
            Value::Array(a) => a,
            Value::Object(map) => {
                let key = ["messages", "contents", "input"].into_iter().find(|k| map.get(*k).is_some_and(Value::is_array));
                match key.and_then(|k| map.get_mut(k)) {
                    Some(Value::Array(a)) => a,
                    _ => return Err(Error::invalid("append: the stored transcript has no message list (messages / contents / input)")),
                }
            }
            _ => return Err(Error::invalid("append: the stored transcript is not a document")),
        };
        start = list.len();
        list.extend(rows.iter().cloned());
    }
    let t = formats::decode(format, doc.clone())?;
    formats::validate_pairing(&t)?;
    let base = loaded.current_revision();
    let revision = base.saturating_add(1);
    let mut state = loaded.state.clone();
    state.revision = revision;
    if let Some((id, hash)) = mark {
        state.appends.retain(|m| m.id != id);
        state.appends.push(crate::state::AppendMark { id: id.to_string(), hash: hash.to_string(), revision, rows: rows.len() });
        let over = state.appends.len().saturating_sub(crate::state::MAX_APPEND_MARKS);
        state.appends.drain(..over);
    }
    let patch = serde_json::json!([{ "start": start, "deleteCount": 0, "insert": rows }]);
    Ok((SavePlan { record: SessionRecord { transcript: doc, state, revision: Some(revision), memory: loaded.memory.clone() }, expected_revision: base }, patch))
}

/// The hash an append's mark keeps of its rows ([`crate::state::AppendMark::hash`]):
/// FNV-1a 64 of their JSON text, 16 lowercase hex digits.
pub fn rows_hash(rows: &[Value]) -> String {
    let text = serde_json::to_string(rows).unwrap_or_default();
    format!("{:016x}", crate::transcript::fnv1a(text.as_bytes()))
}

/// Whether the append `id` (rows hash `hash`) is already saved in `loaded` (W-5, I-6:
/// its save answered late, or not at all, but landed): its mark, or `None`. Errors:
/// `invalid_config` when the mark of `id` has another rows hash (one id given to two
/// different appends).
pub fn stored_append<'a>(loaded: &'a SessionRecord, id: &str, hash: &str) -> Result<Option<&'a crate::state::AppendMark>> {
    match loaded.state.appends.iter().find(|m| m.id == id) {
        Some(m) if m.hash == hash => Ok(Some(m)),
        Some(m) => Err(Error::new(
            ErrorCode::InvalidConfig,
            format!("append: appendId {id:?} was already used for other rows (saved at revision {}); give each append its own id and a retry the same one", m.revision),
        )),
        None => Ok(None),
    }
}

/// The save that records `text` in the findings ledger of `loaded` (Y-10): the same
/// transcript, the new state, the next revision (every write advances it, W-5), expected
/// at the loaded one. `None` when the finding is an exact repeat (nothing to write).
/// Errors: as [`record_finding`].
pub fn plan_finding(loaded: &SessionRecord, text: &str) -> Result<Option<SavePlan>> {
    let mut state = loaded.state.clone();
    if !record_finding(&mut state, text)? {
        return Ok(None);
    }
    let base = loaded.current_revision();
    let revision = base.saturating_add(1);
    state.revision = revision;
    Ok(Some(SavePlan { record: SessionRecord { transcript: loaded.transcript.clone(), state, revision: Some(revision), memory: loaded.memory.clone() }, expected_revision: base }))
}

/// Most bytes one finding may hold, UTF-8 bytes.
pub const MAX_FINDING_BYTES: usize = 4_096;

/// Records a load-bearing fact in the findings ledger (Y-10). An exact repeat is not
/// added again (returns `false`). Errors: `invalid_state` for blank text or text over
/// [`MAX_FINDING_BYTES`].
pub fn record_finding(state: &mut SessionState, text: &str) -> Result<bool> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::new(ErrorCode::InvalidState, "a finding must not be blank"));
    }
    if t.len() > MAX_FINDING_BYTES {
        return Err(Error::new(ErrorCode::InvalidState, format!("a finding holds at most {MAX_FINDING_BYTES} bytes (got {})", t.len())));
    }
    if state.findings.iter().any(|f| f == t) {
        return Ok(false);
    }
    state.findings.push(t.to_string());
    Ok(true)
}

pub use crate::state::{findings_bytes, findings_text};

/// The request view (F-4: provenance keys removed) with the findings ledger rendered in
/// (Y-10): one user-role text message in the transcript's format, placed right after
/// the system rows at the head (for formats whose system prompt lives in the envelope,
/// Anthropic and Gemini, that is the first message). No findings: exactly
/// `encode(t, View::Request)`. The `Value` form of [`crate::output::RequestJson`], which
/// writes the same view as text.
pub fn request_view(t: &Transcript, state: &SessionState) -> Value {
    serde_json::to_value(crate::output::RequestJson { t, findings: &state.findings }).unwrap_or(Value::Null)
}
