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
//!
//! Layout: this module holds the job's state machine (start, resume, the trigger and
//! selection, the artifact store step); [`outcome`] the types it exchanges; `summary`
//! the summarize / curate steps; `build` the new rows with the summary in place;
//! `rollup` the rollup passes (Y-3); `finish` validation, memory projection and the
//! commit; `sync` the synchronous drivers ([`run_sync`] and friends).

mod build;
mod clearing;
mod finish;
pub mod outcome;
mod rollup;
mod summary;
mod sync;

pub use crate::events::Event;
pub use outcome::{ArtifactItem, Outcome, OverWindow, Reply, Rewrite, Rollup, Step, SummaryInfo, SummarySource};
pub use sync::{compact_document, run_sync, run_sync_full, run_sync_with_memory, run_sync_with_store};

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::events::event;
use crate::evict::{tool_names, Evicted, EvictedBody};
use crate::formats::{self, Format};
use crate::measure::transcript_size;
use crate::memory::MemoryBatch;
use crate::rewrite::Origin;
use crate::select::{select, Selection};
use crate::state::SessionState;
use crate::transcript::{Block, Message, Transcript};
use crate::trigger::{decide, Decision, Signals};
use serde_json::json;

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
    /// The items and the (offset, nth result) each one is.
    AwaitArtifacts { items: Vec<ArtifactItem>, keys: Vec<(usize, usize)> },
    /// Waiting for the artifact store to keep the bodies the clearing tier replaces
    /// (K-1, E-6): the items and the (offset, nth result) each one is.
    AwaitClearArtifacts { items: Vec<ArtifactItem>, keys: Vec<(usize, usize)> },
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
    /// See [`Job::with_user_text_only_memory`].
    user_text_only_memory: bool,
    /// Source offsets of the folded injected-context rows whose instruction document the
    /// summary does not re-attach whole (N-6): projected into memory as `instruction`
    /// records so the handle the summary names resolves.
    unattached_docs: Vec<usize>,
    /// The projected batch, once built; `memory_accepted` once the host took it.
    memory: Option<std::sync::Arc<MemoryBatch>>,
    memory_accepted: bool,
    /// Handles the artifact store issued, by (source offset, nth result of the message).
    stored: std::collections::HashMap<(usize, usize), String>,
    /// See [`Job::with_curator`].
    curator: bool,
    /// See [`Job::with_artifact_store`].
    artifact_store: bool,
    /// The clearing tier's edits (K-1), once planned.
    clearing: Option<crate::clear::Clearing>,
    /// The clearing alone reached the target: commit it without a summary (K-1).
    clear_only: bool,
    /// The user text the new summary must carry verbatim (N-1, S-9, N-5;
    /// [`crate::nothing_lost::required_bytes`]): UTF-8 bytes, constraint sentences and
    /// their UTF-8 bytes.
    summary_floor: (usize, usize, usize),
    /// Why the open run was not folded when stage 1 could not reach the target (S-6,
    /// issue 13): appended to a `no_reduction` reason.
    open_run_note: Option<String>,
    /// What building a provider-written summary changed in the job, saved before it is
    /// built, so a summary that leaves no reduction is rebuilt once as the deterministic
    /// handoff (Y-6, issue 13; [`Job::no_reduction_fallback`]). `None` once used.
    retry_point: Option<RetryPoint>,
}

/// The job's state before a provider-written summary is built (see `Job::retry_point`):
/// the folded-call ledger and its run (Y-5, appended to by the build) and the new-id
/// counter.
struct RetryPoint {
    ledger: Vec<crate::state::FoldedCall>,
    ledger_run: Option<String>,
    new_ids: u32,
}

impl Job {
    /// A new job over the transcript. Nothing runs until [`Job::resume`].
    pub fn start(config: Config, state: SessionState, mut source: Transcript, opts: JobOptions) -> Job {
        // issue 14: provenance keys the state cannot vouch for are not honoured (crate::trust);
        // the clearing tier, the summary and the memory projection all read the marked rows
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
            user_text_only_memory: false,
            unattached_docs: Vec::new(),
            memory: None,
            memory_accepted: false,
            stored: std::collections::HashMap::new(),
            curator: false,
            artifact_store: false,
            clearing: None,
            clear_only: false,
            summary_floor: (0, 0, 0),
            open_run_note: None,
            retry_point: None,
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

    /// Projects only the folded user text (N-1), for a host with no memory to take the
    /// records (no `memory` / `store` / `embed` hook): the result's records are then the
    /// one whole copy of what the summary clips now or a later rollup clips, and an event
    /// says so (`memory_in_result`). Tool results, tool calls and assistant text are not
    /// projected (nothing would read them), and the clearing tier projects nothing.
    /// Without it every discarded row is projected (M-1).
    pub fn with_user_text_only_memory(mut self, on: bool) -> Job {
        self.user_text_only_memory = on;
        self
    }

    /// The context window of the model that answers this job's summarize requests, tokens
    /// (Y-1: after a model fallback it may differ from the configured
    /// [`Config::summarizer_context_window`]). Overrides it for this job only; `None` or
    /// 0 keeps the configured one. The summarize request is sized to it (Y-8).
    pub fn with_summarizer_window(mut self, window: Option<u64>) -> Job {
        if let Some(w) = window.filter(|w| *w > 0) {
            self.config.summarizer_context_window = Some(w);
        }
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

    pub(super) fn format(&self) -> Format {
        self.source.format
    }

    pub(super) fn take_source(&mut self) -> Transcript {
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
            (Phase::AwaitArtifacts { items, keys }, Some(Reply::Artifacts { handles })) => self.on_artifacts(items, keys, handles),
            (Phase::AwaitClearArtifacts { items, keys }, Some(Reply::Artifacts { handles })) => self.on_clear_artifacts(items, keys, handles),
            (Phase::AwaitSummary { kind, coverage }, Some(r)) => self.on_summary(&kind, coverage, r),
            (Phase::AwaitRollup { pass, members }, Some(r)) => self.on_rollup(pass, members, r),
            (Phase::AwaitProject, Some(r)) => self.on_project(r),
            (Phase::Finished, _) => Err(Error::new(ErrorCode::ProtocolError, "the job is finished")),
            (_, _) => Err(Error::new(ErrorCode::ProtocolError, "reply does not match the step the job asked for")),
        }
    }

    pub(super) fn done(&mut self, status: &'static str, reason: String, error: Option<Error>) -> Result<Step> {
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
            over_window: None,
        })))
    }

    pub(super) fn begin(&mut self) -> Result<Step> {
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
            // break finding 17: the findings ledger (Y-10) is part of the floor; named, and
            // how to shrink it when it is what does not fit
            let ledger_note = if fl.findings_tokens > 0 && fl.findings_tokens.saturating_mul(2) >= fl.total_tokens {
                format!("; the findings ledger ({} findings) is most of it: drop or merge findings in state.findings", self.state.findings.len())
            } else {
                String::new()
            };
            // N-1 with projectMemory off: the user text every summary must quote whole
            let user_note = if fl.user_text_tokens > 0 { format!(", user text quoted whole as projectMemory is off {}", fl.user_text_tokens) } else { String::new() };
            let reason = format!(
                "cannot_fit: the floor ({} tokens: system {}, tools {}, protected request {}, findings ledger {}{user_note}, output reserve {}) is over the budget of {} tokens{pinned_note}{ledger_note}",
                fl.total_tokens, fl.system_tokens, fl.tools_tokens, fl.protected_tokens, fl.findings_tokens, fl.output_reserve_tokens, fl.budget_tokens
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
        // K-1: the clearing tier first (E-1 order: clear, then summarize, then roll up)
        if let Some(step) = self.begin_clearing()? {
            return Ok(step);
        }
        self.select_and_summarize()
    }

    /// Selects the fold (S-1..S-9, K-2), offers its results to the artifact store (E-6),
    /// then summarizes.
    pub(super) fn select_and_summarize(&mut self) -> Result<Step> {
        let Some(decision) = self.decision.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no decision"));
        };
        let cap = crate::editing::recent_cap(&self.config, &decision);
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
        let selection = self.stage_fallback(selection, cap);
        // K-2: the newest user messages stay verbatim within their token budget
        let selection = crate::editing::preserve_recent_users(selection, &self.source.messages, &self.config, self.state.calibration());
        if let Some(reason) = self.fold_cannot_shrink(&selection) {
            // C-5: an attempt, not retried on these rows, as a no_reduction after the call
            self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
            self.state.cadence.last_failure = Some("no_reduction".into());
            self.state.cadence.failed_on = Some(crate::state::RowsMark::of(&self.source));
            return self.done("skipped", reason, None);
        }
        self.events.push(event("compaction_started", json!({ "stage": selection.stage, "fold": selection.fold.len(), "reason": decision.reason })));
        self.selection = Some(selection);
        if self.artifact_store {
            let (items, keys) = self.artifact_items();
            if !items.is_empty() {
                self.phase = Phase::AwaitArtifacts { items: items.clone(), keys };
                return Ok(Step::StoreArtifacts(items));
            }
        }
        self.summarize_fold()
    }

    /// S-6, issue 13: a stage-1 fold (rows before the open run) that cannot bring the
    /// request under the target even if its rows vanished whole falls back to stage 2
    /// in this job (the run's completed rounds with the earlier rows; the request and
    /// newest round stay verbatim) when `inRunStage2` is on. With it off the fold stays
    /// stage 1 and an `open_run_not_folded` warning names the run; a `no_reduction`
    /// outcome then carries the same note (and [`Job::fold_cannot_shrink`] skips the
    /// summarizer when that fold cannot shrink the transcript).
    fn stage_fallback(&mut self, selection: Selection, cap: Option<usize>) -> Selection {
        let Some(run) = selection.run_start.filter(|_| selection.stage == crate::select::Stage::BeforeRun && self.config.protect_run_request) else {
            return selection;
        };
        let Some(decision) = self.decision.as_ref() else { return selection };
        let cal = self.state.calibration();
        let cleared = self.clearing.as_ref().map_or(0, |c| c.tokens);
        let measured = crate::editing::measured_tokens(decision).saturating_sub(cleared);
        let target = self.config.threshold_tokens();
        let folded: u64 = selection.fold.iter().filter_map(|&o| self.source.messages.get(o)).map(|m| crate::measure::message_tokens(m, &self.config, cal)).sum();
        // a lower bound: the stage-1 rows gone with no summary in their place
        let best = measured.saturating_sub(folded);
        if best < target {
            return selection;
        }
        let msgs = &self.source.messages;
        let run_id = msgs.get(run).map(|m| m.id.clone()).unwrap_or_default();
        let run_tokens: u64 = msgs.iter().skip(run).map(|m| crate::measure::message_tokens(m, &self.config, cal)).sum();
        let run_rows = msgs.len().saturating_sub(run);
        if self.config.in_run_stage2 {
            if let Ok(s2) = crate::select::select_in_run(msgs, &self.config, cap) {
                self.events.push(event(
                    "warning",
                    json!({ "code": "stage1_insufficient", "message": format!("folding the {} rows before the open run (offset {run}, id {run_id}) leaves at least {best} tokens, over the target of {target}: the run's completed rounds are folded too (stage 2)", selection.fold.len()), "runStart": run, "runId": run_id, "runRows": run_rows, "runTokens": run_tokens, "targetTokens": target }),
                ));
                return s2;
            }
        }
        let why = if self.config.in_run_stage2 { "the open run has no completed round that can be folded" } else { "inRunStage2 is off, so its rounds are never folded" };
        let note = format!("the open run (offset {run}, id {run_id}, {run_rows} rows, ~{run_tokens} tokens) holds the history and {why}; folding the rows before it leaves at least {best} tokens, over the target of {target}");
        self.events.push(event("warning", json!({ "code": "open_run_not_folded", "message": note, "runStart": run, "runId": run_id, "runRows": run_rows, "runTokens": run_tokens, "targetTokens": target })));
        self.open_run_note = Some(note);
        selection
    }

    /// The breaker of a stuck run (S-6, issue 13): when the stage-1 fold cannot bring the
    /// request under the target and no stage 2 takes its place ([`Job::stage_fallback`]
    /// left an `open_run_not_folded` note), a fold that holds only earlier summaries, or
    /// whose rows (UTF-8 bytes) are no more than the fewest bytes a summary of them
    /// carries ([`Job::summary_min_bytes`]), is not sent to the summarizer: its rewrite
    /// could not shrink the transcript (W-2 would answer `no_reduction`), and each turn
    /// of the run would pay for one more such call. The `no_reduction` reason naming the
    /// open run; `None` (summarize) otherwise, or when the clearing tier edited rows in
    /// this job (their saving is the rewrite's too).
    fn fold_cannot_shrink(&self, selection: &Selection) -> Option<String> {
        let note = self.open_run_note.as_deref()?;
        if self.clearing.is_some() {
            return None;
        }
        let msgs = &self.source.messages;
        let rows = selection.fold.len();
        let fold_bytes: usize = selection.fold.iter().filter_map(|&o| msgs.get(o)).map(|m| m.bytes).sum();
        let why = if selection.fold.iter().all(|&o| msgs.get(o).is_some_and(crate::Message::is_summary)) {
            format!("the fold holds only earlier summaries ({rows} rows, {fold_bytes} bytes), which a new summary would only replace")
        } else {
            let least = self.summary_min_bytes(selection);
            if least < fold_bytes {
                return None;
            }
            format!("the {rows} folded rows ({fold_bytes} bytes) are no larger than the least a summary of them carries ({least} bytes)")
        };
        Some(format!("no_reduction: {why}, so no summarizer call was made; open_run_not_folded: {note}"))
    }

    /// E-6: every tool result in the folded range whose message has no trusted `artifact_ref` (issue 14),
    /// with a proposed handle each ([`next_handle`]: `artifact#<tag>-N`),
    /// and the (offset, nth result) of each; a result the clearing tier already stored
    /// (K-1) is not offered again.
    pub(super) fn artifact_items(&mut self) -> (Vec<ArtifactItem>, Vec<(usize, usize)>) {
        self.ensure_artifact_tag();
        let fold = self.selection.as_ref().map(|s| s.fold.clone()).unwrap_or_default();
        let names = tool_names(&self.source.messages);
        let mut items = Vec::new();
        let mut keys = Vec::new();
        for off in fold {
            let Some(m) = self.source.messages.get(off) else { continue };
            if m.provenance.trusted_ref().is_some() || m.is_summary() {
                continue;
            }
            let results = m.blocks.iter().filter_map(|b| match b {
                Block::ToolResult { call_id, name, text, .. } => Some((call_id, name, text)),
                _ => None,
            });
            for (nth, (call_id, name, text)) in results.enumerate() {
                if self.stored.contains_key(&(off, nth)) {
                    continue;
                }
                keys.push((off, nth));
                let handle = next_handle(&mut self.state);
                items.push(ArtifactItem {
                    handle,
                    offset: off,
                    message_id: m.id.clone(),
                    call_id: call_id.clone(),
                    tool_name: name.clone().or_else(|| names.get(call_id).cloned()),
                    body: text.clone(),
                    session_id: self.session.clone(),
                });
            }
        }
        (items, keys)
    }

    /// Makes `state.artifactTag` the tag of the session id this job runs under before a
    /// handle is proposed (issue 14, [`crate::trust::adopt_tag`]): set when the state has
    /// none, replaced when it was derived under another session id; see [`next_handle`].
    pub(super) fn ensure_artifact_tag(&mut self) {
        crate::trust::adopt_tag(&mut self.state, &self.session, &self.source);
    }

    /// Records the handles the artifact store answered for `items` (keyed by `keys`);
    /// returns the call ids of the items it did not store (an empty or missing handle).
    pub(super) fn record_stored(&mut self, items: &[ArtifactItem], keys: Vec<(usize, usize)>, handles: Vec<Option<String>>) -> Vec<String> {
        let mut failed = Vec::new();
        for (k, (item, key)) in items.iter().zip(keys).enumerate() {
            match handles.get(k).cloned().flatten().filter(|h| !h.trim().is_empty()) {
                Some(h) => {
                    self.stored.insert(key, h);
                }
                None => failed.push(item.call_id.clone()),
            }
        }
        failed
    }

    pub(super) fn on_artifacts(&mut self, items: Vec<ArtifactItem>, keys: Vec<(usize, usize)>, handles: Vec<Option<String>>) -> Result<Step> {
        let failed = self.record_stored(&items, keys, handles);
        if !failed.is_empty() {
            self.events.push(event("warning", json!({ "code": "artifact_store_failed", "message": "some tool results could not be stored; their eviction clips them", "callIds": failed })));
        }
        self.summarize_fold()
    }
}

/// The next handle the engine proposes (E-6, issue 14): `artifact#<tag>-N`, N from
/// `state.nextArtifact` (from 1), the tag `state.artifactTag` (set first by
/// [`Job::ensure_artifact_tag`]); a legacy `artifact#N` if the tag is still empty.
pub(crate) fn next_handle(state: &mut SessionState) -> String {
    let n = state.next_artifact.max(1);
    state.next_artifact = n.saturating_add(1);
    if state.artifact_tag.is_empty() {
        format!("artifact#{n}")
    } else {
        format!("artifact#{}-{n}", state.artifact_tag)
    }
}
