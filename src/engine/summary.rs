//! The summarize and curate steps (Y-1, Y-6, Y-7): eviction of the folded rows first
//! (E-1), then the request to the host, or the mechanical summary.

use super::{Job, Phase, Reply, Step, SummarySource};
use crate::error::{Error, ErrorCode, Result};
use crate::events::event;
use crate::evict::evict_sparse;
use crate::formats::{self, View};
use crate::select::Stage;
use crate::summarize::{curate_request_for, summary_request_for};
use crate::transcript::Message;
use serde_json::{json, Value};

/// The fewest output tokens a summarize request may leave the summarizer (Y-8).
const MIN_OUTPUT_TOKENS: u64 = 64;

impl Job {
    /// E-1: evict first, on a copy of the folded rows; then ask for the summary.
    pub(super) fn summarize_fold(&mut self) -> Result<Step> {
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
            let mut request = curate_request_for(&rows, stored, &self.config, self.config.summary_instructions());
            drop(rows);
            if !self.fit_request(&mut request) {
                // Y-1: no fallback for a curator
                let why = "summarizer_window_too_small: the summarizer's window holds none of the rows to curate";
                return self.done("failed", format!("summary_failed: {why}"), Some(Error::new(ErrorCode::SummaryFailed, why)));
            }
            self.phase = Phase::AwaitSummary { kind: request.kind.clone(), coverage: request.coverage.clone() };
            return Ok(Step::Summarize(request));
        }
        if self.opts.has_summarizer {
            let mut request = summary_request_for(&rows, &self.config, self.config.summary_instructions());
            drop(rows);
            if self.fit_request(&mut request) {
                self.phase = Phase::AwaitSummary { kind: request.kind.clone(), coverage: request.coverage.clone() };
                return Ok(Step::Summarize(request));
            }
            // Y-8 (issue 14): never a request with nothing to summarize; the deterministic
            // handoff needs no model window (as the Y-6 fallback after a context error)
            self.opts.has_summarizer = false;
            return self.commit_summary(String::new(), SummarySource { writer: "mechanical".into(), coverage: "requests_only".into() });
        }
        drop(rows);
        // Y-6: the deterministic handoff is written in build_rows, from the folded rows' facts
        self.commit_summary(String::new(), SummarySource { writer: "mechanical".into(), coverage: "whole".into() })
    }

    /// Y-8 (issue 14): holds a summarize / curate request to the summarizer's window
    /// (`summarizerContextWindow`, default `contextWindow`). `maxOutputTokens` over what
    /// the window leaves after the request's input is clamped to it, with a
    /// `max_output_tokens_clamped` warning (`requested`, `maxOutputTokens`, `window`,
    /// tokens). Returns `false`, with a `summarizer_window_too_small` warning, when the
    /// request would carry no row at all or leave under 64 output tokens: the request
    /// is then not made.
    pub(super) fn fit_request(&mut self, request: &mut crate::summarize::SummarizeRequest) -> bool {
        let window = self.config.summarizer_window();
        let empty = request.messages.iter().all(|m| m.content.trim() == "<transcript>\n\n</transcript>" || m.content.trim().is_empty());
        let room = window.saturating_sub(request.estimated_input_tokens);
        if empty || room < MIN_OUTPUT_TOKENS {
            let why = if empty { "holds none of the folded rows" } else { "leaves under 64 tokens for the summary" };
            self.events.push(event("warning", json!({
                "code": "summarizer_window_too_small",
                "message": format!("the summarizer's window ({window} tokens) {why}: no {} request was made", request.kind),
                "window": window, "estimatedInputTokens": request.estimated_input_tokens,
            })));
            return false;
        }
        if request.max_output_tokens > room {
            self.events.push(event("warning", json!({
                "code": "max_output_tokens_clamped",
                "message": format!("summaryMaxOutputTokens ({}) is over what the summarizer's window ({window} tokens) leaves after the request's ~{} input tokens: asked for {room}", request.max_output_tokens, request.estimated_input_tokens),
                "requested": request.max_output_tokens, "maxOutputTokens": room, "window": window,
            })));
            request.max_output_tokens = room;
        }
        true
    }

    /// The summary output budget in UTF-8 bytes (tokens x bytes per token), saturated:
    /// both factors come from the host's options and may be as large as u64::MAX.
    pub(super) fn summary_bytes(&self) -> usize {
        usize::try_from(self.config.summary_max_output_tokens.saturating_mul(self.config.bytes_per_token)).unwrap_or(usize::MAX)
    }

    pub(super) fn record_spend(&mut self, usage: &Option<Value>) {
        self.state.spend.summarize_calls = self.state.spend.summarize_calls.saturating_add(1);
        if let Some(u) = usage.as_ref().and_then(formats::normalize_usage) {
            // W-7: side spend; the live-context size is not replaced. Counters saturate
            // (the state and the usage are host input).
            self.state.spend.add_side(u.input_tokens, u.output_tokens);
        }
    }

    pub(super) fn on_summary(&mut self, kind: &str, coverage: String, reply: Reply) -> Result<Step> {
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
                // Y-6: judged on the assistant rows of the current history, the recent
                // window included (a protected observation is one not yet summarized)
                let spoken = self.source.messages.iter().any(|m| m.role == crate::Role::Assistant && !m.is_summary() && m.provenance.observation_source.as_deref() == Some("SpokenUnmeasured"));
                if context_exceeded && !spoken {
                    // Y-6: deterministic handoff summary sheds old rows.
                    self.events.push(event("warning", json!({ "code": "mechanical_fallback", "message": message })));
                    self.opts.has_summarizer = false;
            return self.commit_summary(String::new(), SummarySource { writer: "mechanical".into(), coverage: "requests_only".into() });
                }
                let why = if context_exceeded { "the range holds SpokenUnmeasured observations, so no mechanical fallback" } else { "the summarize callback failed" };
                self.done("failed", format!("summary_failed: {why}: {message}"), Some(Error::new(ErrorCode::SummaryFailed, message)))
            }
            Reply::Artifacts { .. } => Err(Error::new(ErrorCode::ProtocolError, "artifact handles given where a summary was asked for")),
        }
    }

    /// Y-1: a curator's answer. Failure (or empty text) keeps history, no fallback (Y-6).
    pub(super) fn on_curated(&mut self, reply: Reply) -> Result<Step> {
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
}
