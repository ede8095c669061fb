//! Sans-IO orchestration of one compaction (ARCHITECTURE "Sans-IO core").
//!
//! [`Job::start`] checks and selects; [`Job::resume`] returns a [`Step`]: either a
//! [`SummarizeRequest`] the host must answer (then call `resume` again with the
//! [`Reply`]) or `Done` with the [`Outcome`]. The engine never awaits anything, so
//! native tests drive every path with fakes.
//!
//! Order of one compaction (E-1): evict large tool results, summarize, roll up.
//! Failure atomicity (W-3): until `Done`, nothing is written; a failed summary or an
//! invalid rewrite returns the original transcript untouched with a typed reason.

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::evict::{evict_sparse, tool_names, Evicted, EvictedBody};
use crate::memory::{try_project, try_project_consuming, MemoryBatch};
use crate::formats::{self, message_from_raw, Format, View};
use crate::measure::{transcript_size, Size};
use crate::rewrite::{provenance, validate, Expectations, Origin, Retained, Splice};
use crate::select::{select, Selection, Stage};
use crate::state::{FoldedCall, SessionState};
use crate::summarize::{
    collect_artifact_refs, curate_request_for, deterministic_sections, mechanical_merge, mechanical_summary, narrative_part, rollup_request,
    summary_request_for, SummarizeRequest, SECTIONS_MARKER,
};
use crate::transcript::{Block, Message, Provenance, Transcript, TranscriptRole};
use crate::trigger::{decide, Decision, Signals};
use serde::Serialize;
use serde_json::{json, Value};

/// The host's answer to a [`SummarizeRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The summary text, and the provider usage of the call if known (W-7).
    Summary {
        /// The summary (or merged rollup, or curated) text; surrounding whitespace is trimmed.
        text: String,
        /// The call's provider usage object in any provider's shape (read by
        /// [`formats::normalize_usage`]), recorded as side spend (W-7).
        usage: Option<Value>,
    },
    /// The callback failed. `context_exceeded`: the error was recognised as a context /
    /// request-size error (Y-6). Also the answer to a refused [`Step::Project`]
    /// (`context_exceeded` is ignored there).
    Failed {
        /// The callback's error message, reported in the failure reason.
        message: String,
        /// The error is a context-window / request-size error (Y-6).
        context_exceeded: bool,
    },
    /// The host stored the memory batch of a [`Step::Project`] (M-1).
    Accepted,
    /// The answer to [`Step::StoreArtifacts`] (E-6): one entry per item, in order:
    /// `Some(handle)` = stored under that handle (the proposed one or the host's own),
    /// `None` = storing that body failed (its eviction falls back to a clip). A shorter
    /// list counts the missing entries as failed.
    Artifacts {
        /// One entry per [`ArtifactItem`], in order.
        handles: Vec<Option<String>>,
    },
}

/// One tool result the host's artifact store is asked to keep before eviction (E-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactItem {
    /// The handle the engine proposes (`artifact#N`, from `state.nextArtifact`). The host
    /// may answer with its own handle instead.
    pub handle: String,
    /// Source offset of the message carrying the result.
    pub offset: usize,
    /// Stable id (T-4) of the message carrying the result.
    pub message_id: String,
    /// The id of the call the result answers.
    pub call_id: String,
    /// The tool's name, when known (from the result or its call).
    pub tool_name: Option<String>,
    /// The whole result body (text; media inside it are not included).
    pub body: String,
    /// The session scope (`hooks.sessionId`, default `"default"`; JSON `sessionId`): a
    /// store shared by several sessions keys its items by (`sessionId`, `handle`), since
    /// every session numbers its handles from `artifact#1` (issue 14).
    pub session_id: String,
}

/// What the engine needs next.
#[derive(Debug, Clone)]
pub enum Step {
    /// Ask the host's summarizer (kind `summary` / `rollup`) or curator (kind `curate`).
    Summarize(SummarizeRequest),
    /// The rewrite is valid and ready; the host must store (embed, put) this memory
    /// batch and answer [`Reply::Accepted`] or [`Reply::Failed`]. Nothing is committed
    /// until it accepts; a failure fails the compaction with `memory_failed` (M-1, W-3).
    /// Asked only when [`Job::with_memory`] was called with `confirm: true`. The batch
    /// is shared with the job, not copied: drop it before resuming and the outcome takes
    /// it over without a copy.
    Project(std::sync::Arc<MemoryBatch>),
    /// Ask the host's artifact store to keep these bodies (E-6); answer with
    /// [`Reply::Artifacts`]. Only asked after [`Job::with_artifact_store`].
    StoreArtifacts(Vec<ArtifactItem>),
    /// The job is finished: the [`Outcome`] (compacted, skipped, cannot fit or failed).
    Done(Box<Outcome>),
}

/// Who wrote the summary and how much of the history its source carried (Y-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarySource {
    /// `provider` (the host's summarize callback), `curator` (the host's curator, Y-1),
    /// `mechanical` (the deterministic handoff summary).
    pub writer: String,
    /// `whole`, `trimmed`, `requests_only`.
    pub coverage: String,
}

/// The summary of a committed rewrite.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryInfo {
    /// The summary text as committed (narrative plus the deterministic sections, Y-2, Y-5).
    pub text: String,
    /// Summary level of the new summary message: `1` (rollups are reported in [`Rewrite::rollups`]).
    pub level: u8,
    /// Who wrote it and how much history its source carried (Y-7).
    pub source: SummarySource,
    /// Stable id (T-4) of the summary message.
    pub message_id: String,
    /// Offset in the new transcript.
    pub offset: usize,
}

/// One rollup pass (Y-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollup {
    /// `level1_to_level2` or `level2_merge`.
    pub pass: String,
    /// How many summaries the pass merged into one.
    pub merged: usize,
    /// `provider` (the summarize callback) or `mechanical` (the deterministic merge).
    pub writer: String,
}

/// A committed rewrite (W-1, W-4).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rewrite {
    /// The session revision the rewrite was computed from; a store compares it to reject a
    /// stale rewrite (W-5).
    pub base_revision: u64,
    /// The revision after this rewrite (`base_revision + 1`).
    pub revision: u64,
    /// Which fold ran: `before_run` or `in_run` (S-6).
    pub stage: Stage,
    /// The new summary message.
    pub summary: SummaryInfo,
    /// Every kept source row with its new offset and id; sources strictly increase (W-1).
    pub retained: Vec<Retained>,
    /// Source offsets dropped from the transcript, ascending; with `retained` they partition
    /// the source (W-1).
    pub discarded: Vec<usize>,
    /// Splice operations turning the stored source rows into the new ones (W-4).
    pub patch: Vec<Splice>,
    /// Tool results evicted from the folded rows before summarizing (E-1..E-4).
    pub evicted: Vec<Evicted>,
    /// Rollup passes run after the summary was inserted (Y-3), in order.
    pub rollups: Vec<Rollup>,
}

/// An event for the host's `onEvent` (J-4).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// `compaction_started`, `compaction_completed`, `compaction_failed`, `warning`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The event's payload (a JSON object; its keys depend on `kind`, camelCase).
    pub data: Value,
}

/// The result of a job. `status`: `compacted`, `skipped`, `cannot_fit`, `failed`.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `compacted`, `skipped`, `cannot_fit` or `failed`.
    pub status: &'static str,
    /// Why: the decision's reason when compacted, the skip reason (decision or selection,
    /// S-5), the floor when it cannot fit (C-8), or the failure.
    pub reason: String,
    /// The trigger decision with every signal's value (C-9).
    pub decision: Decision,
    /// The new transcript (or the original, untouched, when nothing was committed).
    pub transcript: Transcript,
    /// The committed rewrite; `None` unless `status == "compacted"`.
    pub rewrite: Option<Rewrite>,
    /// Size of the source transcript (messages, UTF-8 bytes, estimated tokens).
    pub before: Size,
    /// Size of the returned transcript (equal to `before` when nothing was committed).
    pub after: Size,
    /// Validation checks that passed (empty when nothing was rewritten).
    pub checks: Vec<&'static str>,
    /// The session state after the job (cadence, revision, ledger, spend), to persist (W-6).
    pub state: SessionState,
    /// Events to deliver to the host's `onEvent`, in order (J-4).
    pub events: Vec<Event>,
    /// Full bodies evicted from the folded rows (for memory projection).
    pub evicted_bodies: Vec<EvictedBody>,
    /// The memory batch projected from what the committed rewrite discarded (M-1);
    /// `None` when nothing was committed.
    pub memory: Option<MemoryBatch>,
    /// The failure, when `status == "failed"`.
    pub error: Option<Error>,
}

impl Outcome {
    /// Plain JSON of the outcome (the JS `compact()` result).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(crate::output::OutcomeJson(self)).unwrap_or(Value::Null)
    }

    /// [`Outcome::to_json`] as compact JSON text (the same bytes as
    /// `serde_json::to_string(&outcome.to_json())`), written in one streaming pass
    /// without building the result `Value` ([`crate::output::OutcomeJson`]).
    pub fn to_json_string(&self) -> String {
        let mut pieces = self.to_json_pieces(usize::MAX);
        // one piece (it never reaches usize::MAX bytes): taken as is, not copied
        match pieces.len() {
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat(),
        }
    }

    /// [`Outcome::to_json_string`] cut into pieces of about `piece_bytes` UTF-8 bytes
    /// each (cuts fall on char boundaries; the concatenation is the whole text). A large
    /// result then never needs one contiguous buffer of its full size, which in wasm
    /// linear memory may not fit any hole the compaction left and would grow memory.
    pub fn to_json_pieces(&self, piece_bytes: usize) -> Vec<String> {
        let mut w = crate::output::Pieces::new(piece_bytes);
        if serde_json::to_writer(&mut w, &crate::output::OutcomeJson(self)).is_err() {
            return Vec::new();
        }
        w.finish()
    }
}

/// Options of one job.
#[derive(Debug, Clone, Default)]
pub struct JobOptions {
    /// Signals the host measured for the trigger (provider usage, request bytes, C-2).
    pub signals: Signals,
    /// The host supplied a summarize callback; otherwise the mechanical summary is used.
    pub has_summarizer: bool,
}

enum Phase {
    Start,
    AwaitArtifacts { items: Vec<ArtifactItem> },
    /// Waiting for a summary or curation: the request's `kind` and `coverage` (the host
    /// holds the request itself; the job keeps no second copy of its rows).
    AwaitSummary { kind: String, coverage: String },
    AwaitRollup { pass: &'static str, members: Vec<usize> },
    AwaitProject,
    Finished,
}

/// One compaction, driven step by step.
pub struct Job {
    config: Config,
    state: SessionState,
    source: Transcript,
    opts: JobOptions,
    phase: Phase,
    decision: Option<Decision>,
    selection: Option<Selection>,
    evicted: Vec<Evicted>,
    bodies: Vec<EvictedBody>,
    events: Vec<Event>,
    /// The new rows under construction: (origin, message).
    rows: Vec<(Origin, Message)>,
    summary: Option<SummaryInfo>,
    rollups: Vec<Rollup>,
    new_ids: u32,
    /// Memory scope of the projection (M-1); "default" unless [`Job::with_memory`].
    session: String,
    /// Ask the host to accept the batch before committing ([`Step::Project`]).
    confirm_memory: bool,
    /// The projected batch, once built; `memory_accepted` once the host took it.
    memory: Option<std::sync::Arc<MemoryBatch>>,
    memory_accepted: bool,
    /// Handles the artifact store issued, by (source offset, nth result of the message).
    stored: std::collections::HashMap<(usize, usize), String>,
    /// Ids of the source rows, gathered at the first summary (new ids avoid them, issue 14).
    taken_ids: std::collections::BTreeSet<String>,
    /// See [`Job::with_curator`].
    curator: bool,
    /// See [`Job::with_artifact_store`].
    artifact_store: bool,
}

fn event(kind: &str, data: Value) -> Event {
    Event { kind: kind.to_string(), data }
}

impl Job {
    /// A new job over the transcript. Nothing runs until [`Job::resume`].
    pub fn start(config: Config, state: SessionState, mut source: Transcript, opts: JobOptions) -> Job {
        // issue 14: provenance keys the state cannot vouch for are not honoured (crate::trust)
        let events = crate::trust::apply(&mut source, &state, config.max_pinned_bytes).into_iter().map(|w| event("warning", w)).collect();
        Job {
            config,
            state,
            source,
            opts,
            phase: Phase::Start,
            decision: None,
            selection: None,
            evicted: Vec::new(),
            bodies: Vec::new(),
            events,
            rows: Vec::new(),
            summary: None,
            rollups: Vec::new(),
            new_ids: 0,
            session: "default".to_string(),
            confirm_memory: false,
            memory: None,
            memory_accepted: false,
            stored: std::collections::HashMap::new(),
            curator: false,
            artifact_store: false,
            taken_ids: std::collections::BTreeSet::new(),
        }
    }

    /// Sets the memory scope (`session`, the host's session id; default `"default"`)
    /// and whether the host stores memory: with `confirm`, the job returns
    /// [`Step::Project`] before it commits and commits only on [`Reply::Accepted`]
    /// (M-1, W-3). Without it the batch is only reported in [`Outcome::memory`].
    pub fn with_memory(mut self, session: impl Into<String>, confirm: bool) -> Job {
        self.session = session.into();
        self.confirm_memory = confirm;
        self
    }

    /// The host supplied a curator (Y-1): stage-1 summaries are asked of it with a
    /// `curate` request carrying only the rows before the open run (S-6). Its failure
    /// fails the attempt with history untouched, never falling back (Y-6). Stage 2 stays
    /// the runtime's own rewrite (the summarizer, else the mechanical summary).
    pub fn with_curator(mut self, on: bool) -> Job {
        self.curator = on;
        self
    }

    /// The host supplied an artifact store (E-6): before eviction, every tool result in
    /// the folded range whose message has no `artifact_ref` is offered to it in one
    /// [`Step::StoreArtifacts`] batch, so eviction yields recoverable handles.
    pub fn with_artifact_store(mut self, on: bool) -> Job {
        self.artifact_store = on;
        self
    }

    /// The events emitted so far (J-4), oldest first; the outcome carries them all. A
    /// driver delivers the new ones before each host call, so they arrive as they happen.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    fn format(&self) -> Format {
        self.source.format
    }

    fn take_source(&mut self) -> Transcript {
        let empty = Transcript { format: self.source.format, messages: Vec::new(), envelope: Default::default() };
        std::mem::replace(&mut self.source, empty)
    }

    /// Gives back the transcript the job was started with, untouched, when the job did
    /// not finish (e.g. [`Job::resume`] returned an error). After a `Done` step the
    /// transcript has moved into the [`Outcome`] and this is empty.
    pub fn into_transcript(self) -> Transcript {
        self.source
    }

    /// Advances the job. Pass `None` first, then the [`Reply`] to each `Summarize`.
    ///
    /// Errors: `protocol_error` when a reply is given that was not asked for (or none
    /// when one was). Expected outcomes (skipped, cannot fit, a failed summary) are
    /// `Done` outcomes, not errors.
    pub fn resume(&mut self, reply: Option<Reply>) -> Result<Step> {
        let phase = std::mem::replace(&mut self.phase, Phase::Finished);
        match (phase, reply) {
            (Phase::Start, None) => self.begin(),
            (Phase::AwaitArtifacts { items }, Some(Reply::Artifacts { handles })) => self.on_artifacts(items, handles),
            (Phase::AwaitSummary { kind, coverage }, Some(r)) => self.on_summary(&kind, coverage, r),
            (Phase::AwaitRollup { pass, members }, Some(r)) => self.on_rollup(pass, members, r),
            (Phase::AwaitProject, Some(r)) => self.on_project(r),
            (Phase::Finished, _) => Err(Error::new(ErrorCode::ProtocolError, "the job is finished")),
            (_, _) => Err(Error::new(ErrorCode::ProtocolError, "reply does not match the step the job asked for")),
        }
    }

    fn done(&mut self, status: &'static str, reason: String, error: Option<Error>) -> Result<Step> {
        let cal = self.state.calibration();
        let before = transcript_size(&self.source, &self.config, cal);
        let decision = self.decision.clone().unwrap_or_else(|| decide(&self.source, &self.config, &self.state, &self.opts.signals));
        if status == "failed" {
            self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
            self.state.cadence.last_failure = Some(reason.clone());
            self.events.push(event("compaction_failed", json!({ "reason": reason, "error": error })));
        }
        Ok(Step::Done(Box::new(Outcome {
            status,
            reason,
            decision,
            // The job is finished: the untouched source moves out instead of a copy.
            transcript: self.take_source(),
            rewrite: None,
            before,
            after: before,
            checks: Vec::new(),
            state: self.state.clone(),
            events: std::mem::take(&mut self.events),
            evicted_bodies: Vec::new(),
            memory: None,
            error,
        })))
    }

    fn begin(&mut self) -> Result<Step> {
        // F-5: input that already breaks its provider's pairing rules is reported, never
        // compacted further.
        formats::validate_pairing(&self.source)?;
        let decision = decide(&self.source, &self.config, &self.state, &self.opts.signals);
        // C-4: this call is one boundary unless an answer was observed since the last one.
        let b = crate::trigger::effective_boundary(&self.state);
        self.state.cadence.boundary = b;
        self.state.cadence.last_check_boundary = Some(b);
        for w in &decision.warnings {
            self.events.push(event("warning", json!({ "code": w.code, "message": w.message })));
            if w.code == crate::trigger::HISTORY_OVER_THRESHOLD {
                self.state.cadence.over_threshold_warned = true;
            }
        }
        self.decision = Some(decision.clone());
        if decision.reason == "cannot_fit" {
            let fl = &decision.floor;
            // Y-10 / issue 14: the pinned rows in the floor are named (capped by maxPinnedBytes)
            let pinned: Vec<String> = self.source.messages.iter().filter(|m| m.provenance.is_pinned() && m.role != crate::Role::System).map(|m| m.id.clone()).collect();
            let pinned_note = if pinned.is_empty() { String::new() } else { format!("; pinned rows in it: {} (at most maxPinnedBytes {} bytes)", pinned.join(", "), self.config.max_pinned_bytes) };
            let reason = format!(
                "cannot_fit: the floor ({} tokens: system {}, tools {}, protected request {}, output reserve {}) is over the budget of {} tokens{pinned_note}",
                fl.total_tokens, fl.system_tokens, fl.tools_tokens, fl.protected_tokens, fl.output_reserve_tokens, fl.budget_tokens
            );
            self.state.cadence.last_failure = Some("cannot_fit".into());
            self.events.push(event("warning", json!({ "code": "cannot_fit", "message": reason, "floor": fl, "pinnedRows": pinned })));
            return self.done("cannot_fit", reason, None);
        }
        if !decision.compact {
            return self.done("skipped", decision.reason.clone(), None);
        }
        // C-6: an attempt covering the whole transcript clears a recorded refusal whether
        // or not it commits; an in-run check does not see it, so keeps it.
        if !self.opts.signals.in_run {
            self.state.cadence.refusal = false;
            self.state.cadence.refusal_source = None;
        }
        let cap = self.config.fit_recent_window.then(|| {
            let spare = decision.threshold_tokens.saturating_sub(decision.floor.total_tokens.saturating_add(self.config.summary_max_output_tokens));
            usize::try_from(spare.saturating_mul(self.config.bytes_per_token) / 2).unwrap_or(usize::MAX)
        });
        let selection = match select(&self.source.messages, &self.config, cap) {
            Ok(s) => s,
            Err(none) => {
                // S-5: loud, but a single warning.
                if !self.state.selection_warned {
                    self.state.selection_warned = true;
                    self.events.push(event("warning", json!({ "code": "selection_failed", "reason": none.reason, "message": none.detail })));
                }
                self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
                self.state.cadence.last_failure = Some(none.reason.to_string());
                self.state.cadence.failed_on = Some(crate::state::RowsMark::of(&self.source));
                return self.done("skipped", none.reason.to_string(), None);
            }
        };
        self.events.push(event("compaction_started", json!({ "stage": selection.stage, "fold": selection.fold.len(), "reason": decision.reason })));
        self.selection = Some(selection);
        if self.artifact_store {
            let items = self.artifact_items();
            if !items.is_empty() {
                self.phase = Phase::AwaitArtifacts { items: items.clone() };
                return Ok(Step::StoreArtifacts(items));
            }
        }
        self.summarize_fold()
    }

    /// E-6: every tool result in the folded range whose message has no `artifact_ref`,
    /// with a proposed handle each (`artifact#N`, N from `state.nextArtifact`, from 1).
    fn artifact_items(&mut self) -> Vec<ArtifactItem> {
        let fold = self.selection.as_ref().map(|s| s.fold.clone()).unwrap_or_default();
        let names = tool_names(&self.source.messages);
        let mut items = Vec::new();
        for off in fold {
            let Some(m) = self.source.messages.get(off) else { continue };
            if m.provenance.trusted_ref().is_some() || m.is_summary() {
                continue;
            }
            let results = m.blocks.iter().filter_map(|b| match b {
                Block::ToolResult { call_id, name, text, .. } => Some((call_id, name, text)),
                _ => None,
            });
            for (call_id, name, text) in results {
                let n = self.state.next_artifact.max(1);
                self.state.next_artifact = n.saturating_add(1);
                items.push(ArtifactItem {
                    handle: format!("artifact#{n}"),
                    offset: off,
                    message_id: m.id.clone(),
                    call_id: call_id.clone(),
                    tool_name: name.clone().or_else(|| names.get(call_id).cloned()),
                    body: text.clone(),
                    session_id: self.session.clone(),
                });
            }
        }
        items
    }

    fn on_artifacts(&mut self, items: Vec<ArtifactItem>, handles: Vec<Option<String>>) -> Result<Step> {
        let mut nth_of: crate::sorted::SortedMap<usize, usize> = crate::sorted::SortedMap::new();
        let mut failed = Vec::new();
        for (k, item) in items.iter().enumerate() {
            let nth = nth_of.get_or_insert_with(item.offset, || 0);
            match handles.get(k).cloned().flatten().filter(|h| !h.trim().is_empty()) {
                Some(h) => {
                    self.stored.insert((item.offset, *nth), h);
                }
                None => failed.push(item.call_id.clone()),
            }
            *nth += 1;
        }
        if !failed.is_empty() {
            self.events.push(event("warning", json!({ "code": "artifact_store_failed", "message": "some tool results could not be stored; their eviction clips them", "callIds": failed })));
        }
        self.summarize_fold()
    }

    /// E-1: evict first, on a copy of the folded rows; then ask for the summary.
    fn summarize_fold(&mut self) -> Result<Step> {
        let Some(selection) = self.selection.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no selection"));
        };
        // Only the edited rows are copied; the others render from the source.
        let sparse = evict_sparse(self.format(), &self.source.messages, &selection.fold, &self.config, &self.stored)?;
        self.evicted = sparse.evicted;
        self.bodies = sparse.bodies;
        let mut edited = sparse.copies.iter().peekable();
        // the folded rows as rendered: the evicted copy where there is one, else the source
        // row (rendered one at a time by the request builders, never all at once)
        let mut rows: Vec<(usize, &Message)> = Vec::with_capacity(selection.fold.len());
        for (k, &o) in selection.fold.iter().enumerate() {
            match edited.next_if(|(i, _)| *i == k) {
                Some((_, m)) => rows.push((o, m)),
                None => {
                    if let Some(m) = self.source.messages.get(o) {
                        rows.push((o, m));
                    }
                }
            }
        }
        if self.curator && selection.stage == Stage::BeforeRun {
            // Y-1, S-6: the curator gets only the rows before the run (stage 1 folds
            // nothing else), in the stored view.
            let stored: Vec<Value> = selection.fold.iter().filter_map(|&o| self.source.messages.get(o)).map(|m| formats::encode_message(m, View::Stored)).collect();
            let request = curate_request_for(&rows, stored, &self.config, self.config.summary_instructions());
            self.phase = Phase::AwaitSummary { kind: request.kind.clone(), coverage: request.coverage.clone() };
            return Ok(Step::Summarize(request));
        }
        if self.opts.has_summarizer {
            let request = summary_request_for(&rows, &self.config, self.config.summary_instructions());
            self.phase = Phase::AwaitSummary { kind: request.kind.clone(), coverage: request.coverage.clone() };
            return Ok(Step::Summarize(request));
        }
        drop(rows);
        let text = self.mechanical_text();
        self.commit_summary(text, SummarySource { writer: "mechanical".into(), coverage: "whole".into() })
    }

    fn mechanical_text(&self) -> String {
        let fold = self.selection.as_ref().map(|s| s.fold.clone()).unwrap_or_default();
        let rows: Vec<(usize, &Message)> = fold.iter().filter_map(|&o| self.source.messages.get(o).map(|m| (o, m))).collect();
        mechanical_summary(&rows, self.summary_bytes())
    }

    /// The summary output budget in UTF-8 bytes (tokens x bytes per token), saturated:
    /// both factors come from the host's options and may be as large as u64::MAX.
    fn summary_bytes(&self) -> usize {
        usize::try_from(self.config.summary_max_output_tokens.saturating_mul(self.config.bytes_per_token)).unwrap_or(usize::MAX)
    }

    fn record_spend(&mut self, usage: &Option<Value>) {
        self.state.spend.summarize_calls = self.state.spend.summarize_calls.saturating_add(1);
        if let Some(u) = usage.as_ref().and_then(formats::normalize_usage) {
            // W-7: side spend; the live-context size is not replaced. Counters saturate
            // (the state and the usage are host input).
            self.state.spend.input_tokens = self.state.spend.input_tokens.saturating_add(u.input_tokens);
            self.state.spend.output_tokens = self.state.spend.output_tokens.saturating_add(u.output_tokens);
        }
    }

    fn on_summary(&mut self, kind: &str, coverage: String, reply: Reply) -> Result<Step> {
        if kind == "curate" {
            return self.on_curated(reply);
        }
        match reply {
            Reply::Summary { text, usage } => {
                self.record_spend(&usage);
                if text.trim().is_empty() {
                    return self.done("failed", "summary_failed: the summarize callback returned empty text".into(), Some(Error::new(ErrorCode::SummaryFailed, "empty summary")));
                }
                self.commit_summary(text.trim().to_string(), SummarySource { writer: "provider".into(), coverage })
            }
            Reply::Accepted => Err(Error::new(ErrorCode::ProtocolError, "a summary was asked for, not a memory answer")),
            Reply::Failed { message, context_exceeded } => {
                self.state.spend.summarize_calls += 1;
                let spoken = self.selection.as_ref().is_some_and(|s| {
                    s.fold.iter().any(|&o| self.source.messages.get(o).is_some_and(|m| m.provenance.observation_source.as_deref() == Some("SpokenUnmeasured") && !m.is_summary()))
                });
                if context_exceeded && !spoken {
                    // Y-6: deterministic handoff summary sheds old rows.
                    self.events.push(event("warning", json!({ "code": "mechanical_fallback", "message": message })));
                    let text = self.mechanical_text();
                    return self.commit_summary(text, SummarySource { writer: "mechanical".into(), coverage: "requests_only".into() });
                }
                let why = if context_exceeded { "the range holds SpokenUnmeasured observations, so no mechanical fallback" } else { "the summarize callback failed" };
                self.done("failed", format!("summary_failed: {why}: {message}"), Some(Error::new(ErrorCode::SummaryFailed, message)))
            }
            Reply::Artifacts { .. } => Err(Error::new(ErrorCode::ProtocolError, "artifact handles given where a summary was asked for")),
        }
    }

    /// Y-1: a curator's answer. Failure (or empty text) keeps history, no fallback (Y-6).
    fn on_curated(&mut self, reply: Reply) -> Result<Step> {
        match reply {
            Reply::Summary { text, .. } if !text.trim().is_empty() => {
                self.commit_summary(text.trim().to_string(), SummarySource { writer: "curator".into(), coverage: "whole".into() })
            }
            Reply::Summary { .. } => self.done("failed", "summary_failed: the curator returned empty text".into(), Some(Error::new(ErrorCode::SummaryFailed, "empty curated summary"))),
            Reply::Failed { message, .. } => {
                self.done("failed", format!("summary_failed: the curator failed (no fallback for a curator): {message}"), Some(Error::new(ErrorCode::SummaryFailed, message)))
            }
            Reply::Artifacts { .. } | Reply::Accepted => Err(Error::new(ErrorCode::ProtocolError, "a curated summary was asked for")),
        }
    }

    fn next_id(&mut self, prefix: &str) -> String {
        // issue 14: never an id a row of the transcript already has (an input row may
        // carry `message_id: "summary-r1-1"`)
        loop {
            self.new_ids = self.new_ids.saturating_add(1);
            let id = format!("{prefix}-r{}-{}", self.state.revision.saturating_add(1), self.new_ids);
            let taken = |m: &Message| m.id == id || m.provenance.message_id.as_deref() == Some(id.as_str());
            if !self.taken_ids.contains(&id) && !self.source.messages.iter().any(taken) && !self.rows.iter().any(|(_, m)| taken(m)) {
                return id;
            }
        }
    }

    fn summary_message(&mut self, text: &str, level: u8) -> Result<Message> {
        let raw = formats::text_message(self.format(), text);
        let id = self.next_id("summary");
        let prov = Provenance { summary_level: Some(level), transcript_role: TranscriptRole::CompactionSummary, message_id: Some(id.clone()), ..Provenance::default() };
        message_from_raw(self.format(), raw, prov, id)
    }

    /// Builds the new rows with the summary in place, then rolls up or finishes.
    fn commit_summary(&mut self, narrative: String, source: SummarySource) -> Result<Step> {
        let Some(sel) = self.selection.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no selection"));
        };
        if self.taken_ids.is_empty() {
            self.taken_ids = self.source.messages.iter().flat_map(|m| std::iter::once(m.id.clone()).chain(m.provenance.message_id.clone())).collect();
        }
        let msgs = std::mem::take(&mut self.source.messages);
        let built = self.build_rows(&sel, &msgs, narrative, source);
        self.source.messages = msgs;
        built?;
        self.next_rollup()
    }

    fn build_rows(&mut self, sel: &Selection, msgs: &[Message], narrative: String, source: SummarySource) -> Result<()> {
        // S-9: the newest request and the first task, when folded, are quoted verbatim.
        let mut verbatim = Vec::new();
        let first_task = msgs.iter().position(|m| m.starts_turn());
        let newest = msgs.iter().rposition(|m| m.starts_turn());
        for idx in [first_task, newest].into_iter().flatten() {
            if sel.fold.binary_search(&idx).is_ok() {
                let t = msgs[idx].text();
                if !verbatim.contains(&t) {
                    verbatim.push(t);
                }
            }
        }
        // Y-5: the folded-call ledger, for stage-2 folds of the open run.
        let mut ledger_now: Vec<FoldedCall> = Vec::new();
        if sel.stage == Stage::InRun && self.config.folded_call_ledger {
            let run_id = sel.run_start.and_then(|r| msgs.get(r)).map(|m| m.id.clone());
            if self.state.ledger_run != run_id {
                self.state.ledger.clear();
                self.state.ledger_run = run_id;
            }
            let mut errors: Vec<(String, bool)> = Vec::new();
            for &o in &sel.fold {
                if let Some(m) = msgs.get(o) {
                    for b in &m.blocks {
                        if let Block::ToolResult { call_id, is_error, .. } = b {
                            errors.push((call_id.clone(), *is_error));
                        }
                    }
                }
            }
            for &o in &sel.fold {
                let Some(m) = msgs.get(o) else { continue };
                for b in &m.blocks {
                    if let Block::ToolCall { id, name, arguments } = b {
                        // A reused id pairs with the first unconsumed result after it.
                        let failed = match errors.iter().position(|(c, _)| c == id) {
                            Some(p) => errors.remove(p).1,
                            None => false,
                        };
                        self.state.ledger.push(FoldedCall { call_id: id.clone(), name: name.clone(), arguments: crate::evict::truncate(arguments, 200), failed });
                    }
                }
            }
            ledger_now = self.state.ledger.clone();
        }
        // Y-2: every artifact handle in the folded range, stamped or inline, that the
        // engine can vouch for (issue 14: `artifact#7` typed by a user or printed by a
        // tool is text, not a handle; see crate::trust::KnownHandles). Row by row in
        // transcript order (stamped or stored, then inline in text and tool output), a
        // handle seen again moving to the end, so the cap keeps the newest.
        let known = crate::trust::KnownHandles::of(msgs, self.stored.values().map(String::as_str), &self.state);
        let mut artifacts: Vec<String> = Vec::new();
        for &o in &sel.fold {
            let Some(m) = msgs.get(o) else { continue };
            let mut texts = vec![m.text()];
            texts.extend(m.blocks.iter().filter_map(|b| match b {
                Block::ToolResult { text, .. } => Some(text.clone()),
                _ => None,
            }));
            let mut stored: Vec<(&(usize, usize), &String)> = self.stored.iter().filter(|((off, _), _)| *off == o).collect();
            crate::sorted::sort_by(&mut stored, |a, b| a.cmp(b));
            let stamped = m.provenance.trusted_ref().into_iter().chain(stored.iter().map(|(_, h)| h.as_str()));
            for h in collect_artifact_refs(texts.iter().map(String::as_str), stamped).into_iter().filter(|h| known.knows(h)) {
                artifacts.retain(|x| *x != h);
                artifacts.push(h);
            }
        }
        for h in collect_artifact_refs([narrative.as_str()], std::iter::empty()) {
            if !artifacts.contains(&h) && known.knows(&h) {
                artifacts.push(h);
            }
        }
        let tail = deterministic_sections(&verbatim, &ledger_now, &artifacts, &self.config);
        // the narrative is the summarizer's text (untrusted: it may echo the transcript),
        // quoted so it cannot forge the engine record that follows it
        let text = format!("{}{}", crate::quote::content(narrative_part(&narrative).trim_end()), tail);
        let summary_msg = self.summary_message(&text, 1)?;
        // New rows: kept rows in order, the summary after the head and remaining summaries.
        let folded: crate::sorted::SortedSet<usize> = sel.fold.iter().copied().collect();
        let mut rows: Vec<(Origin, Message)> = Vec::new();
        let insert_at_source = match sel.stage {
            Stage::BeforeRun => sel.summary_end,
            Stage::InRun => sel.head_end,
        };
        let mut summary_offset = 0;
        for (i, m) in msgs.iter().enumerate() {
            if i == insert_at_source {
                summary_offset = rows.len();
                rows.push((Origin::New, summary_msg.clone()));
            }
            if !folded.contains(&i) {
                rows.push((Origin::Source(i), m.clone()));
            }
        }
        if insert_at_source >= msgs.len() {
            summary_offset = rows.len();
            rows.push((Origin::New, summary_msg.clone()));
        }
        self.rows = rows;
        self.summary = Some(SummaryInfo { text, level: 1, source, message_id: summary_msg.id.clone(), offset: summary_offset });
        self.events.push(event("summary_written", json!({ "writer": self.summary.as_ref().map(|s| s.source.writer.clone()) })));
        Ok(())
    }

    /// The summary block of the new rows: (offset, level).
    fn block(&self) -> Vec<(usize, u8)> {
        let head = self.rows.iter().take_while(|(_, m)| m.role == crate::Role::System).count();
        self.rows.iter().enumerate().skip(head).take_while(|(_, (_, m))| m.is_summary()).map(|(i, (_, m))| (i, m.provenance.summary_level.unwrap_or(1))).collect()
    }

    /// Y-3: level-1 run -> one level-2 when the block exceeds the cap and holds >= 2
    /// level-1s; then level-2s merge among themselves past their cap.
    fn next_rollup(&mut self) -> Result<Step> {
        let block = self.block();
        let ones: Vec<usize> = block.iter().filter(|(_, l)| *l == 1).map(|(i, _)| *i).collect();
        let twos: Vec<usize> = block.iter().filter(|(_, l)| *l >= 2).map(|(i, _)| *i).collect();
        let pass_members = if block.len() > self.config.max_summaries_before_rollup && ones.len() >= 2 && !self.rollups.iter().any(|r| r.pass == "level1_to_level2") {
            Some(("level1_to_level2", ones))
        } else if twos.len() > self.config.max_rolled_up_summaries && !self.rollups.iter().any(|r| r.pass == "level2_merge") {
            Some(("level2_merge", twos))
        } else {
            None
        };
        let Some((pass, members)) = pass_members else {
            return self.finish();
        };
        let texts: Vec<String> = members.iter().filter_map(|&i| self.rows.get(i)).map(|(_, m)| m.text()).collect();
        if self.opts.has_summarizer {
            let narratives: Vec<String> = texts.iter().map(|t| narrative_part(t).to_string()).collect();
            let request = rollup_request(&narratives, &self.config, self.config.rollup_instructions());
            self.phase = Phase::AwaitRollup { pass, members };
            return Ok(Step::Summarize(request));
        }
        let merged = mechanical_merge(&texts, self.summary_bytes());
        self.apply_rollup(pass, members, merged, "mechanical")
    }

    fn on_rollup(&mut self, pass: &'static str, members: Vec<usize>, reply: Reply) -> Result<Step> {
        match reply {
            Reply::Summary { text, usage } => {
                self.record_spend(&usage);
                if text.trim().is_empty() {
                    return self.done("failed", "summary_failed: the rollup callback returned empty text".into(), Some(Error::new(ErrorCode::SummaryFailed, "empty rollup")));
                }
                self.apply_rollup(pass, members, text.trim().to_string(), "provider")
            }
            Reply::Accepted => Err(Error::new(ErrorCode::ProtocolError, "a rollup was asked for, not a memory answer")),
            Reply::Failed { message, .. } => {
                self.state.spend.summarize_calls += 1;
                self.done("failed", format!("summary_failed: the rollup call failed: {message}"), Some(Error::new(ErrorCode::SummaryFailed, message)))
            }
            Reply::Artifacts { .. } => Err(Error::new(ErrorCode::ProtocolError, "artifact handles given where a rollup was asked for")),
        }
    }

    fn apply_rollup(&mut self, pass: &'static str, members: Vec<usize>, merged: String, writer: &str) -> Result<Step> {
        // Carry the deterministic sections of the merged summaries (Y-2: rollup does the same).
        let texts: Vec<String> = members.iter().filter_map(|&i| self.rows.get(i)).map(|(_, m)| m.text()).collect();
        let mut verbatim = Vec::new();
        for t in &texts {
            if let Some(p) = t.find(SECTIONS_MARKER) {
                for part in t[p..].split("\nUser request (verbatim): ").skip(1) {
                    let v = part.split("\nCalls already run").next().unwrap_or("").split("\nArtifacts: ").next().unwrap_or("").to_string();
                    if !verbatim.contains(&v) {
                        verbatim.push(v);
                    }
                }
            }
        }
        // Y-2: the handles in the merged summaries and the merge that the engine can
        // vouch for (crate::trust::KnownHandles)
        let known = crate::trust::KnownHandles::of(&self.source.messages, self.stored.values().map(String::as_str), &self.state);
        let mut all: Vec<&str> = texts.iter().map(String::as_str).collect();
        all.push(&merged);
        let artifacts: Vec<String> = collect_artifact_refs(all, std::iter::empty()).into_iter().filter(|h| known.knows(h)).collect();
        let text = format!("{}{}", crate::quote::content(narrative_part(&merged).trim_end()), deterministic_sections(&verbatim, &[], &artifacts, &self.config));
        let msg = self.summary_message(&text, 2)?;
        // At the last member's place, so the merge is the newest of the members even
        // when a stored block is out of order ([1,1,2] + new 1).
        let Some(&last) = members.last() else { return self.finish() };
        let mut rows = Vec::with_capacity(self.rows.len());
        for (i, r) in std::mem::take(&mut self.rows).into_iter().enumerate() {
            if i == last {
                rows.push((Origin::New, msg.clone()));
            } else if !members.contains(&i) {
                rows.push(r);
            }
        }
        self.rows = rows;
        self.rollups.push(Rollup { pass: pass.to_string(), merged: members.len(), writer: writer.to_string() });
        // The newest summary is now the last of the block.
        if let Some(s) = self.summary.as_mut() {
            let block_end = self.rows.iter().take_while(|(_, m)| m.role == crate::Role::System).count()
                + self.rows.iter().skip_while(|(_, m)| m.role == crate::Role::System).take_while(|(_, m)| m.is_summary()).count();
            s.offset = block_end.saturating_sub(1);
            if let Some((_, m)) = self.rows.get(s.offset) {
                s.message_id = m.id.clone();
                s.level = m.provenance.summary_level.unwrap_or(1);
                s.text = m.text();
            }
        }
        self.next_rollup()
    }

    fn finish(&mut self) -> Result<Step> {
        let Some(sel) = self.selection.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no selection"));
        };
        let Some(summary) = self.summary.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no summary"));
        };
        // T-4: ids survive storage even when a twin of a kept row was folded. The rows
        // are cloned, not moved: a memory step may come back here (Step::Project).
        let mut kept: Vec<Message> = self.rows.iter().map(|(_, m)| m.clone()).collect();
        formats::pin_unstable_ids(&mut kept);
        let origins: Vec<Origin> = self.rows.iter().map(|(o, _)| o.clone()).collect();
        let new_t = Transcript { format: self.source.format, messages: kept, envelope: self.source.envelope.clone() };
        let msgs = &self.source.messages;
        // Protected source rows: system head, pinned rows, the newest request and
        // everything after the fold's protected tail.
        let mut protected: Vec<usize> = (0..sel.head_end).collect();
        protected.extend(msgs.iter().enumerate().filter(|(_, m)| m.provenance.is_pinned()).map(|(i, _)| i));
        if let Some(r) = sel.run_start {
            protected.push(r);
        }
        let refs: Vec<(Origin, &Message)> = origins.into_iter().zip(new_t.messages.iter()).collect();
        let checks = match validate(&Expectations { source: &self.source, rows: &refs, protected: &protected, summary_at: summary.offset, new_transcript: &new_t }) {
            Ok(c) => c,
            Err(e) if e.message.starts_with("no reduction") => {
                // The fold was too small to shrink the transcript: an expected outcome, not
                // an error. Recorded as an attempt (C-5) and not retried on these rows.
                self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
                self.state.cadence.last_failure = Some("no_reduction".into());
                self.state.cadence.failed_on = Some(crate::state::RowsMark::of(&self.source));
                let reason = format!("no_reduction: {}", e.message);
                return self.done("skipped", reason, None);
            }
            Err(e) => {
                let reason = format!("invalid_rewrite: {}", e.message);
                return self.done("failed", reason, Some(e));
            }
        };
        let (retained, discarded, patch) = provenance(&refs, msgs);
        // M-1: project what leaves the transcript; a failed projection, or a host that
        // refuses the batch, fails the compaction before anything is committed (W-3).
        if self.memory.is_none() && !self.config.project_memory {
            // projection turned off by the host: nothing to store, nothing to confirm
            self.memory = Some(std::sync::Arc::new(MemoryBatch { session: self.session.clone(), records: Vec::new() }));
            self.memory_accepted = true;
        }
        // measured now: the projection below may hand the discarded rows on
        let cal = self.state.calibration();
        let before = transcript_size(&self.source, &self.config, cal);
        if self.decision.is_none() {
            self.decision = Some(decide(&self.source, &self.config, &self.state, &self.opts.signals));
        }
        if self.memory.is_none() {
            let batch = if self.confirm_memory {
                try_project(&self.session, &self.source.messages, &discarded, &self.bodies)
            } else {
                // No host step can fail the commit from here (W-3), so the discarded rows
                // move into the projection and are freed one by one as their records are
                // built: the records never sit beside a second copy of the folded range.
                try_project_consuming(&self.session, &mut self.source.messages, &discarded, &self.bodies)
            };
            match batch {
                Ok(batch) => self.memory = Some(std::sync::Arc::new(batch)),
                Err(e) => return self.done("failed", format!("memory_failed: {}", e.message), Some(e)),
            }
        }
        if self.confirm_memory && !self.memory_accepted {
            self.phase = Phase::AwaitProject;
            // shared, not copied: the host reads the batch while the job keeps it
            return Ok(Step::Project(self.memory.clone().unwrap_or_default()));
        }
        let after = transcript_size(&new_t, &self.config, cal);
        let base_revision = self.state.revision;
        // `SessionState::from_json` holds revisions to MAX_REVISION; saturate for states built in Rust.
        self.state.revision = self.state.revision.saturating_add(1);
        // issue 14: the state vouches for the summaries (and pins, host-named handles) of the new transcript
        crate::trust::record(&mut self.state, &new_t, self.stored.values().cloned());
        self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
        self.state.cadence.last_rewrite_tokens = Some(after.estimated_tokens);
        self.state.cadence.last_failure = None;
        self.state.cadence.failed_on = None;
        self.state.selection_warned = false;
        // C-3: a committed rewrite drops the projection anchor until the next answer.
        self.state.cadence.anchor = None;
        // C-4: a rewrite that left history at or above the threshold warns, once until a
        // rewrite gets the history under it again.
        let threshold = self.config.threshold_tokens();
        let over = self.config.trigger == crate::config::TriggerMode::Signals && after.estimated_tokens >= threshold;
        if !over {
            self.state.cadence.over_threshold_warned = false;
        } else if !self.state.cadence.over_threshold_warned {
            self.state.cadence.over_threshold_warned = true;
            let message = crate::trigger::history_over_threshold_message(after.estimated_tokens, threshold);
            self.events.push(event("warning", json!({ "code": crate::trigger::HISTORY_OVER_THRESHOLD, "message": message })));
        }
        let rewrite = Rewrite {
            base_revision,
            revision: self.state.revision,
            stage: sel.stage,
            summary: summary.clone(),
            retained,
            discarded,
            patch,
            evicted: self.evicted.clone(),
            rollups: self.rollups.clone(),
        };
        self.events.push(event(
            "compaction_completed",
            json!({ "summarySource": summary.source, "stage": sel.stage, "discarded": rewrite.discarded.len(), "before": before, "after": after, "revision": self.state.revision }),
        ));
        let decision = self.decision.clone().unwrap_or_else(|| decide(&self.source, &self.config, &self.state, &self.opts.signals));
        // committed: the source is spent (its discarded rows may have been handed on)
        drop(self.take_source());
        Ok(Step::Done(Box::new(Outcome {
            status: "compacted",
            reason: decision.reason.clone(),
            decision,
            transcript: new_t,
            rewrite: Some(rewrite),
            before,
            after,
            checks,
            state: self.state.clone(),
            events: std::mem::take(&mut self.events),
            evicted_bodies: std::mem::take(&mut self.bodies),
            // the host has let go of the step's handle by now: no copy
            memory: self.memory.take().map(|b| std::sync::Arc::try_unwrap(b).unwrap_or_else(|shared| (*shared).clone())),
            error: None,
        })))
    }

    /// The host's answer to [`Step::Project`]: commit, or fail with `memory_failed`.
    fn on_project(&mut self, reply: Reply) -> Result<Step> {
        match reply {
            Reply::Accepted => {
                self.memory_accepted = true;
                self.finish()
            }
            Reply::Failed { message, .. } => {
                self.memory = None;
                self.done("failed", format!("memory_failed: the memory store or embedder failed: {message}"), Some(Error::new(ErrorCode::MemoryFailed, message)))
            }
            Reply::Summary { .. } | Reply::Artifacts { .. } => Err(Error::new(ErrorCode::ProtocolError, "a memory answer was asked for")),
        }
    }
}

/// Drives a job to completion with a synchronous summarize function (native hosts and
/// tests). `summarize` returns the reply for each request (kinds `summary`, `rollup`,
/// `curate`); a [`Step::Project`] is accepted as is; an artifact-store step is answered
/// "not stored" (bodies are clipped).
pub fn run_sync(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply) -> Result<Outcome> {
    run_sync_full(job, summarize, |_| None, |_| Reply::Accepted)
}

/// Like [`run_sync`], with a synchronous memory store: `store` answers each
/// [`Step::Project`] with [`Reply::Accepted`] or [`Reply::Failed`] (M-1, W-3).
pub fn run_sync_with_memory(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply, store: impl FnMut(&MemoryBatch) -> Reply) -> Result<Outcome> {
    run_sync_full(job, summarize, |_| None, store)
}

/// Like [`run_sync`], with a synchronous artifact store (E-6): `store` keeps one body
/// and returns its handle (the item's proposed `handle` or its own), or `None` on failure.
pub fn run_sync_with_store(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply, store: impl FnMut(&ArtifactItem) -> Option<String>) -> Result<Outcome> {
    run_sync_full(job, summarize, store, |_| Reply::Accepted)
}

/// Drives a job with every host step answered synchronously: summaries, the artifact
/// store (E-6) and the memory store (M-1).
pub fn run_sync_full(
    job: &mut Job,
    mut summarize: impl FnMut(&SummarizeRequest) -> Reply,
    mut artifacts: impl FnMut(&ArtifactItem) -> Option<String>,
    mut memory: impl FnMut(&MemoryBatch) -> Reply,
) -> Result<Outcome> {
    let mut step = job.resume(None)?;
    loop {
        match step {
            Step::Done(o) => return Ok(*o),
            Step::Summarize(req) => {
                let reply = summarize(&req);
                drop(req);
                step = job.resume(Some(reply))?;
            }
            Step::Project(batch) => {
                let reply = memory(&batch);
                drop(batch);
                step = job.resume(Some(reply))?;
            }
            Step::StoreArtifacts(items) => {
                let handles = items.iter().map(&mut artifacts).collect();
                step = job.resume(Some(Reply::Artifacts { handles }))?;
            }
        }
    }
}

/// Convenience: decode, compact with `summarize` (None = mechanical), return the outcome.
pub fn compact_document(format: Format, doc: Value, config: Config, state: SessionState, signals: Signals, summarize: Option<&mut dyn FnMut(&SummarizeRequest) -> Reply>) -> Result<Outcome> {
    let t = formats::decode(format, doc)?;
    let has = summarize.is_some();
    let mut job = Job::start(config, state, t, JobOptions { signals, has_summarizer: has });
    match summarize {
        Some(f) => run_sync(&mut job, f),
        None => run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }),
    }
}
