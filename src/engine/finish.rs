//! Validation (W-2), memory projection (M-1) and the commit of a rewrite (W-1, W-3, W-4).

use super::{Job, Outcome, OverWindow, Phase, Reply, Rewrite, Step};
use crate::error::{Error, ErrorCode, Result};
use crate::events::event;
use crate::measure::transcript_size;
use crate::memory::{try_project, try_project_consuming, try_project_user_text, MemoryBatch};
use crate::rewrite::{provenance, validate_clipped, Expectations, Origin};
use crate::transcript::{Message, Transcript};
use crate::trigger::decide;
use serde_json::json;

impl Job {
    pub(super) fn finish(&mut self) -> Result<Step> {
        if self.clear_only {
            return self.finish_cleared();
        }
        let Some(sel) = self.selection.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no selection"));
        };
        let Some(summary) = self.summary.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no summary"));
        };
        // T-4: ids survive storage even when a twin of a kept row was folded. The rows
        // are cloned, not moved: a memory step may come back here (Step::Project).
        let mut kept: Vec<Message> = self.rows.iter().map(|(_, m)| m.clone()).collect();
        crate::trust::pin_edited_ids(&mut kept);
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
        // T-3: the latest assistant message carrying thinking is never folded.
        if let Some(t) = crate::select::latest_thinking_start(msgs) {
            protected.extend((t..msgs.len()).take_while(|&i| msgs.get(i).is_some_and(|m| m.role == crate::Role::Assistant)));
        }
        let refs: Vec<(Origin, &Message)> = origins.into_iter().zip(new_t.messages.iter()).collect();
        let (checks, clipped) = match validate_clipped(&Expectations { source: &self.source, rows: &refs, protected: &protected, summary_at: summary.offset, new_transcript: &new_t }) {
            Ok(c) => c,
            Err(e) if e.message.starts_with("no reduction") => {
                // Y-6 (issue 13): a summarizer's summary as long as the rows it replaces is
                // rebuilt once as the deterministic handoff, in this same call
                if let Some(step) = self.no_reduction_fallback(&e.message) {
                    return step;
                }
                // The fold was too small to shrink the transcript: an expected outcome, not
                // an error. Recorded as an attempt (C-5) and not retried on these rows.
                self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
                self.state.cadence.last_failure = Some("no_reduction".into());
                self.state.cadence.failed_on = Some(crate::state::RowsMark::of(&self.source));
                let reason = match &self.open_run_note {
                    Some(note) => format!("no_reduction: {}; open_run_not_folded: {note}", e.message),
                    None => format!("no_reduction: {}", e.message),
                };
                return self.done("skipped", reason, None);
            }
            Err(e) => {
                let reason = format!("invalid_rewrite: {}", e.message);
                return self.done("failed", reason, Some(e));
            }
        };
        // N-1, S-9 (Y-3): the user text the dropped summaries carried (first task,
        // newest request, constraints, quotes and markers) is carried by the new ones
        {
            let mut kept_src = vec![false; msgs.len()];
            for (o, _) in &refs {
                if let Origin::Source(i) = o {
                    if let Some(k) = kept_src.get_mut(*i) {
                        *k = true;
                    }
                }
            }
            let dropped: Vec<String> = msgs.iter().zip(&kept_src).filter(|(m, k)| !**k && m.is_summary()).map(|(m, _)| m.text()).collect();
            if !dropped.is_empty() {
                let written: Vec<String> = refs.iter().filter(|(o, _)| *o == Origin::New).map(|(_, m)| m.text()).collect();
                let newest_live = refs.iter().any(|(_, m)| m.has_user_text());
                if let Err(e) = crate::summarize::carry::check_rollup(&dropped, &written, newest_live, self.config.project_memory) {
                    return self.done("failed", format!("invalid_rewrite: {}", e.message), Some(e));
                }
            }
        }
        let (retained, discarded, patch) = provenance(&refs, msgs);
        let first_changed_offset = super::clearing::first_changed(&refs, msgs);
        // K-1: the full bodies the clearing replaced in kept rows reach memory too
        self.take_clearing_bodies(&discarded);
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
        // N-1: what the summary clipped (found by `validate_clipped` above, on the same
        // rows and summary) must be whole in memory.
        // N-1 with `projectMemory: false`: no records keep whole what a summary clips or
        // only names, so every folded user text block must be quoted whole (the floor
        // does that, Job::user_floor_budget); a summary that clipped one loses it
        if !self.config.project_memory {
            if let Some(c) = clipped.first() {
                let e = Error::new(
                    ErrorCode::InvalidRewrite,
                    format!("user_text_lost: a user text block is clipped or only named in the summary while projectMemory is off, so it is kept whole nowhere (source offset {})", c.offset),
                );
                return self.done("failed", format!("invalid_rewrite: {}", e.message), Some(e));
            }
        }
        // C-8 with the summary's own floor (N-1, S-9, N-5): the user text every summary of
        // these rows must carry verbatim, with the trigger's floor, over the window: no
        // rewrite of them can fit, and the outcome says so with the figures
        if let Some(reason) = self.summary_floor_over_window(&new_t, cal) {
            self.state.cadence.last_failure = Some("cannot_fit".into());
            self.events.push(event("warning", json!({ "code": "cannot_fit", "message": reason })));
            return self.done("cannot_fit", reason, None);
        }
        if self.memory.is_none() {
            // N-6: the instruction documents the summary names but does not re-attach
            // whole, read before the projection below may take the rows
            let docs_at: Vec<usize> = self.unattached_docs.iter().copied().filter(|o| discarded.contains(o)).collect();
            let docs = crate::memory::instruction_records(&self.session, &self.source.messages, &docs_at);
            // with no memory to take the records, only the folded user text is projected:
            // its records go back in the result, the one whole copy of what the summary
            // clips now or a later rollup clips (N-1)
            let only: Vec<usize>;
            let (discarded, bodies) = if self.user_text_only_memory {
                only = discarded.iter().copied().filter(|&o| self.source.messages.get(o).is_some_and(|m| m.user_texts().next().is_some())).collect();
                if !docs.is_empty() {
                    let n = docs_at.len();
                    let message = format!("{n} folded instruction document(s) not re-attached whole are kept only in the result's memory.records (kind instruction): store them, or pass a memory hook");
                    self.events.push(event("warning", json!({ "code": "memory_in_result", "message": message })));
                }
                if !only.is_empty() {
                    let mut cut: Vec<usize> = clipped.iter().map(|c| c.offset).collect();
                    cut.sort_unstable();
                    cut.dedup();
                    let message = format!(
                        "{} folded user message(s) ({} of them clipped in the summary) are kept whole only in the result's memory.records: store them, or pass a memory hook",
                        only.len(),
                        cut.len()
                    );
                    self.events.push(event("warning", json!({ "code": "memory_in_result", "message": message })));
                }
                (&only[..], &[][..])
            } else {
                (&discarded[..], &self.bodies[..])
            };
            let batch = if self.user_text_only_memory {
                // only the user rows' narrative records are kept: no tool call, result or
                // body is read (the records equal the full projection's user narrative ones)
                try_project_user_text(&self.session, &mut self.source.messages, discarded, !self.confirm_memory)
            } else if self.confirm_memory {
                try_project(&self.session, &self.source.messages, discarded, bodies)
            } else {
                // No host step can fail the commit from here (W-3), so the discarded rows
                // move into the projection and are freed one by one as their records are
                // built: the records never sit beside a second copy of the folded range.
                try_project_consuming(&self.session, &mut self.source.messages, discarded, bodies)
            };
            let batch = batch.map(|mut b| {
                if !docs.is_empty() {
                    b.records.extend(docs);
                    crate::sorted::sort_by(&mut b.records, |x, y| (x.source_range, x.kind, &x.call_id, x.byte_range, &x.id).cmp(&(y.source_range, y.kind, &y.call_id, y.byte_range, &y.id)));
                    b.records.dedup_by(|x, y| x.id == y.id);
                }
                b
            });
            match batch {
                Ok(batch) => self.memory = Some(std::sync::Arc::new(batch)),
                Err(e) => return self.done("failed", format!("memory_failed: {}", e.message), Some(e)),
            }
        }
        if self.config.project_memory {
            if let Err(e) = crate::nothing_lost::check_memory(&clipped, self.memory.as_deref().unwrap_or(&MemoryBatch::default())) {
                self.memory = None;
                return self.done("failed", format!("invalid_rewrite: {}", e.message), Some(e));
            }
        }
        if self.confirm_memory && !self.memory_accepted {
            self.phase = Phase::AwaitProject;
            // shared, not copied: the host reads the batch while the job keeps it
            return Ok(Step::Project(self.memory.clone().unwrap_or_default()));
        }
        let after = transcript_size(&new_t, &self.config, cal);
        let base_revision = self.commit_cadence(after.estimated_tokens, &new_t);
        let over_window = self.report_over_window(after.estimated_tokens, Some(&new_t));
        let rewrite = Rewrite {
            base_revision,
            revision: self.state.revision,
            stage: sel.stage,
            summary: Some(summary.clone()),
            cleared: self.cleared_kept(&discarded),
            retained,
            discarded,
            patch,
            evicted: self.evicted.clone(),
            rollups: self.rollups.clone(),
            first_changed_offset,
        };
        self.events.push(event(
            "compaction_completed",
            json!({ "summarySource": summary.source, "stage": sel.stage, "discarded": rewrite.discarded.len(), "before": before, "after": after, "revision": self.state.revision }),
        ));
        let bodies = std::mem::take(&mut self.bodies);
        self.committed(new_t, rewrite, before, after, checks, bodies, over_window)
    }

    /// The `compacted` outcome of a committed rewrite (a summary fold or a clearing):
    /// the decision, the new state and events, the evicted bodies and the memory batch.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn committed(
        &mut self,
        new_t: Transcript,
        rewrite: Rewrite,
        before: crate::measure::Size,
        after: crate::measure::Size,
        checks: Vec<&'static str>,
        evicted_bodies: Vec<crate::evict::EvictedBody>,
        over_window: Option<OverWindow>,
    ) -> Result<Step> {
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
            evicted_bodies,
            // the host has let go of the step's handle by now: no copy
            memory: self.memory.take().map(|b| std::sync::Arc::try_unwrap(b).unwrap_or_else(|shared| (*shared).clone())),
            error: None,
            over_window,
        })))
    }

    /// Commits the cadence and revision for a rewrite leaving `after_tokens` (C-3, C-4,
    /// C-5), and records in the state what it vouches for in the new transcript `new_t`
    /// (issue 14, [`crate::trust::record`]). Returns the base revision.
    pub(super) fn commit_cadence(&mut self, after_tokens: u64, new_t: &Transcript) -> u64 {
        let base_revision = self.state.revision;
        // `SessionState::from_json` holds revisions to MAX_REVISION; saturate for states built in Rust.
        self.state.revision = self.state.revision.saturating_add(1);
        // issue 14: the state vouches for the summaries (and pins, host-named handles) of the new transcript
        crate::trust::record(&mut self.state, new_t, self.stored.values().cloned());
        self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
        self.state.cadence.last_rewrite_tokens = Some(after_tokens);
        self.state.cadence.last_failure = None;
        self.state.cadence.failed_on = None;
        self.state.selection_warned = false;
        // C-3: a committed rewrite drops the projection anchor until the next answer.
        self.state.cadence.anchor = None;
        // C-4: a rewrite that left history at or above the threshold warns, once until a
        // rewrite gets the history under it again.
        let threshold = self.config.threshold_tokens();
        let over = self.config.trigger == crate::config::TriggerMode::Signals && after_tokens >= threshold;
        if !over {
            self.state.cadence.over_threshold_warned = false;
        } else if !self.state.cadence.over_threshold_warned {
            self.state.cadence.over_threshold_warned = true;
            let message = crate::trigger::history_over_threshold_message(after_tokens, threshold);
            self.events.push(event("warning", json!({ "code": crate::trigger::HISTORY_OVER_THRESHOLD, "message": message })));
        }
        base_revision
    }

    /// N-4: [`Self::over_window`] for a committed rewrite, with its `over_window` warning
    /// event pushed when it is over.
    pub(super) fn report_over_window(&mut self, after_tokens: u64, new_t: Option<&Transcript>) -> Option<OverWindow> {
        let over_window = self.over_window_of(after_tokens, new_t);
        if let Some(ow) = &over_window {
            let message = format!(
                "the rewrite leaves the next request at {} tokens, over the {} ({} tokens) by {}; the floor compaction cannot remove is {} tokens",
                ow.tokens,
                if ow.limit == "threshold" { "compaction threshold" } else { "context window" },
                if ow.limit == "threshold" { ow.threshold_tokens } else { ow.context_window },
                ow.by,
                ow.floor_tokens
            );
            self.events.push(event("warning", json!({ "code": "over_window", "message": message, "overWindow": ow })));
        }
        over_window
    }

    /// The `cannot_fit` reason when the rewrite `new_t` is over the context window and the
    /// floor alone already is: the user text the summary must carry verbatim
    /// ([`Job::summary_floor`]) plus the trigger's floor (C-8: system, tools, protected
    /// request, output reserve). `None` when the rewrite fits, or when only rows a
    /// deeper fold could take push it over (then N-4's `over_window` warning says so).
    fn summary_floor_over_window(&self, new_t: &Transcript, cal: f64) -> Option<String> {
        let window = self.config.context_window;
        let after = transcript_size(new_t, &self.config, cal).estimated_tokens;
        if self.over_window(after).is_none_or(|ow| ow.limit != "context_window") {
            return None;
        }
        let fl = self.decision.as_ref().map(|d| d.floor.clone()).unwrap_or_default();
        let (_, sentences, _) = self.summary_floor;
        let user = self.summary_user_floor_tokens(new_t, cal);
        // the trigger's floor without its own user-text part (projectMemory off): the
        // rewrite's figure above replaces it
        let total = user.saturating_add(fl.total_tokens.saturating_sub(fl.user_text_tokens));
        if total <= window {
            return None;
        }
        let what = if self.config.project_memory {
            format!("the first task and {sentences} user constraint sentences verbatim (N-1, S-9, N-5)")
        } else {
            "every folded user text whole, as projectMemory is off (N-1, S-9)".to_string()
        };
        Some(format!(
            "cannot_fit: the floor ({total} tokens: the summary's user text {user} tokens, {what}; system {}, tools {}, protected request {}, output reserve {}) is over the context window of {window} tokens",
            fl.system_tokens, fl.tools_tokens, fl.protected_tokens, fl.output_reserve_tokens
        ))
    }

    /// Tokens of the user text the summary block of `new_t` must carry verbatim (N-1,
    /// S-9, C-8): the first task, the newest request and every constraint sentence its
    /// summaries carry (with projectMemory off every user text they quote), or the
    /// summary's own floor when larger.
    fn summary_user_floor_tokens(&self, new_t: &Transcript, cal: f64) -> u64 {
        let (bytes, _, _) = self.summary_floor;
        let newest_live = new_t.messages.iter().any(Message::has_user_text);
        let block: Vec<String> = new_t.messages.iter().filter(|m| m.is_summary()).map(Message::text).collect();
        let block_bytes = crate::summarize::carry::MemberUserText::read(&block, newest_live).required_bytes(self.config.project_memory);
        crate::measure::text_tokens(bytes.max(block_bytes), &self.config, cal)
    }

    /// N-4: the next request after a rewrite of `after_tokens`, against the threshold and
    /// the window; `None` when it is under both. `floor_tokens` is the trigger's floor
    /// (C-8); `new_t`, the rewrite, puts the user text its summary block must carry
    /// verbatim in place of the trigger's user-text part (break3 finding 8: carried
    /// constraint sentences count).
    fn over_window(&self, after_tokens: u64) -> Option<OverWindow> {
        self.over_window_of(after_tokens, None)
    }

    fn over_window_of(&self, after_tokens: u64, new_t: Option<&Transcript>) -> Option<OverWindow> {
        let cal = self.state.calibration();
        let tools = crate::measure::bytes_tokens(self.opts.signals.tools_bytes(), &self.config, cal);
        let findings = crate::measure::text_tokens(crate::state::findings_bytes(&self.state.findings), &self.config, cal);
        let tokens = [tools, findings, self.config.output_reserve()].iter().fold(after_tokens, |a, &b| a.saturating_add(b));
        let window = self.config.context_window;
        let threshold = self.config.threshold_tokens();
        let floor_tokens = self.decision.as_ref().map_or(0, |d| match new_t {
            Some(t) => d.floor.total_tokens.saturating_sub(d.floor.user_text_tokens).saturating_add(self.summary_user_floor_tokens(t, cal)),
            None => d.floor.total_tokens,
        });
        let (limit, by) = if tokens > window {
            ("context_window", tokens - window)
        } else if tokens >= threshold {
            ("threshold", tokens - threshold)
        } else {
            return None;
        };
        Some(OverWindow { tokens, context_window: window, threshold_tokens: threshold, floor_tokens, limit, by })
    }

    /// The host's answer to [`Step::Project`]: commit, or fail with `memory_failed`.
    pub(super) fn on_project(&mut self, reply: Reply) -> Result<Step> {
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
