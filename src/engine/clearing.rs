//! The clearing tier inside a job (K-1): plan the clearing, offer the bodies it replaces
//! to the artifact store (E-6), then either commit the clearing alone (it reached the
//! target, or its own trigger decided: no summary call) or go on to summarize with the
//! cleared rows kept (E-1 order: clear, then summarize, then roll up).

use super::{ArtifactItem, Job, Phase, Rewrite, Step};
use crate::clear::{apply, candidates, plan, Cleared};
use crate::editing::CLEAR_TRIGGER;
use crate::error::Result;
use crate::events::event;
use crate::formats;
use crate::measure::transcript_size;
use crate::memory::{try_project, MemoryBatch};
use crate::rewrite::{provenance, Origin};
use crate::select::Stage;
use crate::transcript::{Message, Transcript};
use serde_json::json;

/// The first offset where `rows` differ from `source` in the request view (K-4): a row
/// that is new, comes from another offset, or whose provider JSON changed. Provenance
/// keys are not part of the request view, so a row only stamped (an id, a handle) is
/// unchanged there.
pub(super) fn first_changed(rows: &[(Origin, &Message)], source: &[Message]) -> Option<usize> {
    for (i, (origin, m)) in rows.iter().enumerate() {
        let same = matches!(origin, Origin::Source(s) if *s == i && source.get(i).is_some_and(|src| src.raw == m.raw));
        if !same {
            return Some(i);
        }
    }
    (rows.len() != source.len()).then_some(rows.len().min(source.len()))
}

impl Job {
    fn clearing_configured(&self) -> bool {
        self.config.clear_tool_uses.is_some() || self.config.clear_thinking.is_some()
    }

    /// Starts the clearing tier when it is configured: `None` = go straight to the
    /// summary path.
    pub(super) fn begin_clearing(&mut self) -> Result<Option<Step>> {
        if !self.clearing_configured() {
            return Ok(None);
        }
        let cal = self.state.calibration();
        // plan once without handles: only a clearing that will happen asks the store
        let probe = plan(self.format(), &self.source.messages, self.config.clear_tool_uses.as_ref(), self.config.clear_thinking.as_ref(), &self.stored, &self.config, cal, self.config.project_memory && !self.user_text_only_memory)?;
        if self.artifact_store && !probe.is_empty() {
            if let Some(cfg) = self.config.clear_tool_uses.clone() {
                self.ensure_artifact_tag();
                let mut items = Vec::new();
                let mut keys = Vec::new();
                for c in candidates(&self.source.messages, &cfg) {
                    let Some(m) = self.source.messages.get(c.offset) else { continue };
                    // issue 14: an input ref the trust pass did not vouch for is no stored copy
                    if m.provenance.trusted_ref().is_some() || self.stored.contains_key(&(c.offset, c.nth)) {
                        continue;
                    }
                    let body = m
                        .blocks
                        .iter()
                        .filter_map(|b| match b {
                            crate::transcript::Block::ToolResult { text, .. } => Some(text),
                            _ => None,
                        })
                        .nth(c.nth)
                        .cloned()
                        .unwrap_or_default();
                    let handle = super::next_handle(&mut self.state);
                    items.push(ArtifactItem {
                        handle,
                        offset: c.offset,
                        message_id: m.id.clone(),
                        call_id: c.call_id.clone(),
                        tool_name: c.tool_name.clone(),
                        body,
                        session_id: self.session.clone(),
                    });
                    keys.push((c.offset, c.nth));
                }
                if !items.is_empty() {
                    self.phase = Phase::AwaitClearArtifacts { items: items.clone(), keys };
                    return Ok(Some(Step::StoreArtifacts(items)));
                }
            }
        }
        self.apply_clearing().map(Some)
    }

    /// The store's answer for the clearing's bodies (E-6): a body not stored is cleared
    /// all the same, its placeholder saying it is not recoverable (memory keeps it, M-1).
    pub(super) fn on_clear_artifacts(&mut self, items: Vec<ArtifactItem>, keys: Vec<(usize, usize)>, handles: Vec<Option<String>>) -> Result<Step> {
        let failed = self.record_stored(&items, keys, handles);
        if !failed.is_empty() {
            self.events.push(event("warning", json!({ "code": "artifact_store_failed", "message": "some tool results could not be stored; their placeholders say they are not recoverable (memory records keep them)", "callIds": failed })));
        }
        self.apply_clearing()
    }

    /// Plans the clearing with the handles known now and decides: commit it alone, or
    /// clear then summarize.
    fn apply_clearing(&mut self) -> Result<Step> {
        let cal = self.state.calibration();
        let clearing = plan(self.format(), &self.source.messages, self.config.clear_tool_uses.as_ref(), self.config.clear_thinking.as_ref(), &self.stored, &self.config, cal, self.config.project_memory && !self.user_text_only_memory)?;
        let decision = self.decision.clone();
        let by_clear = decision.as_ref().and_then(|d| d.decided_by) == Some(CLEAR_TRIGGER);
        if clearing.is_empty() {
            if by_clear {
                self.state.cadence.last_attempt_boundary = Some(self.state.cadence.boundary);
                self.state.cadence.last_failure = Some("nothing_to_clear".into());
                self.state.cadence.failed_on = Some(crate::state::RowsMark::of(&self.source));
                return self.done("skipped", "nothing_to_clear: no tool result or thinking is eligible, or the batch is under clearAtLeast".into(), None);
            }
            return self.select_and_summarize();
        }
        // what the decision measured (the deciding token signal, else the estimate)
        let before = decision.as_ref().map(crate::editing::measured_tokens).unwrap_or(0);
        let target = self.config.threshold_tokens();
        self.clear_only = by_clear || before.saturating_sub(clearing.tokens) < target;
        self.events.push(event(
            "context_cleared",
            json!({ "items": clearing.cleared.len(), "tokens": clearing.tokens, "firstChangedOffset": clearing.first_offset, "summaryNext": !self.clear_only }),
        ));
        self.clearing = Some(clearing);
        if self.clear_only {
            return self.finish_cleared();
        }
        self.select_and_summarize()
    }

    /// The cleared copy of source row `i`: `Some(Some(row))` edited, `Some(None)` dropped
    /// whole, `None` untouched.
    pub(super) fn cleared_row(&self, i: usize) -> Option<Option<&Message>> {
        let c = self.clearing.as_ref()?;
        let k = c.edits.binary_search_by_key(&i, |(o, _)| *o).ok()?;
        c.edits.get(k).map(|(_, row)| row.as_ref())
    }

    /// The clearing's reports for the rows a rewrite keeps.
    pub(super) fn cleared_kept(&self, discarded: &[usize]) -> Vec<Cleared> {
        let Some(c) = self.clearing.as_ref() else { return Vec::new() };
        c.cleared.iter().filter(|r| discarded.binary_search(&r.offset).is_err() || (r.kind == "thinking" && self.cleared_row(r.offset) == Some(None))).cloned().collect()
    }

    /// Moves the clearing's full bodies of kept rows into the job's bodies (memory
    /// records, M-1), once.
    pub(super) fn take_clearing_bodies(&mut self, discarded: &[usize]) {
        if let Some(c) = self.clearing.as_mut() {
            let bodies = std::mem::take(&mut c.bodies);
            self.bodies.extend(bodies.into_iter().filter(|b| discarded.binary_search(&b.offset).is_err()));
        }
    }

    /// Commits the clearing alone (K-1): every row kept (a Responses reasoning item may
    /// be dropped whole), the cleared ones edited; validated for pairing (F-2) and
    /// reduction; the full bodies projected into memory (M-1) before the commit.
    pub(super) fn finish_cleared(&mut self) -> Result<Step> {
        let Some(clearing) = self.clearing.clone() else {
            return Err(crate::error::Error::new(crate::error::ErrorCode::ProtocolError, "no clearing"));
        };
        let rows = apply(&self.source.messages, &clearing);
        let origins: Vec<Origin> = rows.iter().map(|(i, _)| Origin::Source(*i)).collect();
        let mut kept: Vec<Message> = rows.into_iter().map(|(_, m)| m).collect();
        crate::trust::pin_edited_ids(&mut kept);
        let new_t = Transcript { format: self.source.format, messages: kept, envelope: self.source.envelope.clone() };
        if let Err(e) = formats::validate_pairing(&new_t) {
            return self.done("failed", format!("invalid_rewrite: the clearing broke pairing: {}", e.message), Some(e));
        }
        let before_bytes: usize = self.source.messages.iter().map(|m| m.bytes).sum();
        let after_bytes: usize = new_t.messages.iter().map(|m| m.bytes).sum();
        if after_bytes >= before_bytes {
            return self.done("skipped", format!("no_reduction: {after_bytes} bytes after clearing vs {before_bytes} before"), None);
        }
        let refs: Vec<(Origin, &Message)> = origins.into_iter().zip(new_t.messages.iter()).collect();
        let (retained, discarded, patch) = provenance(&refs, &self.source.messages);
        let first_changed_offset = first_changed(&refs, &self.source.messages);
        drop(refs);
        if self.memory.is_none() {
            // nothing of a clearing is user text: with no memory to take the bodies, none is projected
            let batch = if self.config.project_memory && !self.user_text_only_memory {
                try_project(&self.session, &self.source.messages, &discarded, &clearing.bodies)
            } else {
                self.memory_accepted = true;
                Ok(MemoryBatch { session: self.session.clone(), records: Vec::new() })
            };
            match batch {
                Ok(b) => self.memory = Some(std::sync::Arc::new(b)),
                Err(e) => return self.done("failed", format!("memory_failed: {}", e.message), Some(e)),
            }
        }
        if self.confirm_memory && !self.memory_accepted {
            self.phase = Phase::AwaitProject;
            return Ok(Step::Project(self.memory.clone().unwrap_or_default()));
        }
        let cal = self.state.calibration();
        let before = transcript_size(&self.source, &self.config, cal);
        let after = transcript_size(&new_t, &self.config, cal);
        let base_revision = self.commit_cadence(after.estimated_tokens, &new_t);
        let over_window = self.report_over_window(after.estimated_tokens, Some(&new_t));
        let rewrite = Rewrite {
            base_revision,
            revision: self.state.revision,
            stage: Stage::Clear,
            summary: None,
            retained,
            discarded,
            patch,
            evicted: Vec::new(),
            rollups: Vec::new(),
            cleared: clearing.cleared.clone(),
            first_changed_offset,
        };
        self.events.push(event(
            "compaction_completed",
            json!({ "summarySource": null, "stage": Stage::Clear, "cleared": rewrite.cleared.len(), "discarded": rewrite.discarded.len(), "before": before, "after": after, "revision": self.state.revision }),
        ));
        let checks = vec!["retained_in_order", "protected_rows_kept", "system_rows_kept", "provider_pairing", "smaller"];
        self.committed(new_t, rewrite, before, after, checks, clearing.bodies, over_window)
    }
}
