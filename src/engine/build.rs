//! The new rows: the summary message (the handoff or the host's text, then the
//! deterministic sections: floor N-5 / S-9, ledger Y-5, artifact index Y-2, rehydration
//! N-6) put in place of the folded range.

use super::{Job, Step, SummaryInfo, SummarySource};
use crate::error::{Error, ErrorCode, Result};
use crate::events::event;
use crate::formats::{self, message_from_raw};
use crate::rewrite::Origin;
use crate::select::{Selection, Stage};
use crate::state::FoldedCall;
use crate::nothing_lost::{first_and_newest, session_first_task};
use crate::summarize::handoff::{errors_handoff, handoff_summary_with, HandoffLabels, NewestAt};
use crate::summarize::{collect_artifact_refs, deterministic_tail, Facts};
use crate::summarize::floor::{floor_items_in, rehydration_missed, Kept};
use crate::transcript::{Block, Message, Provenance, TranscriptRole};
use serde_json::json;

impl Job {
    /// A new row id `<prefix>-r<revision>-<n>` that no source row, new row or row of `also`
    /// (the source rows while they are lent out of the job) has as its id or message id
    /// (issue 14). Issue 15: a scan per new id instead of a set of every source id, cloned
    /// and sorted per compaction.
    fn next_id_among(&mut self, prefix: &str, also: &[Message]) -> String {
        // issue 14: never an id a row of the transcript already has (an input row may
        // carry `message_id: "summary-r1-1"`)
        loop {
            self.new_ids = self.new_ids.saturating_add(1);
            let id = format!("{prefix}-r{}-{}", self.state.revision.saturating_add(1), self.new_ids);
            let taken = |m: &Message| m.id == id || m.provenance.message_id.as_deref() == Some(id.as_str());
            if !also.iter().any(taken) && !self.source.messages.iter().any(taken) && !self.rows.iter().any(|(_, m)| taken(m)) {
                return id;
            }
        }
    }

    pub(super) fn summary_message(&mut self, text: &str, level: u8) -> Result<Message> {
        self.summary_message_among(text, level, &[])
    }

    fn summary_message_among(&mut self, text: &str, level: u8, also: &[Message]) -> Result<Message> {
        let raw = formats::text_message(self.format(), text);
        let id = self.next_id_among("summary", also);
        let prov = Provenance { summary_level: Some(level), transcript_role: TranscriptRole::CompactionSummary, message_id: Some(id.clone()), ..Provenance::default() };
        message_from_raw(self.format(), raw, prov, id)
    }

    /// Builds the new rows with the summary in place, then rolls up or finishes.
    pub(super) fn commit_summary(&mut self, narrative: String, source: SummarySource) -> Result<Step> {
        let Some(sel) = self.selection.clone() else {
            return Err(Error::new(ErrorCode::ProtocolError, "no selection"));
        };
        if source.writer == "provider" {
            self.retry_point = Some(super::RetryPoint { ledger: self.state.ledger.clone(), ledger_run: self.state.ledger_run.clone(), new_ids: self.new_ids });
        }
        let msgs = std::mem::take(&mut self.source.messages);
        let built = self.build_rows(&sel, &msgs, narrative, source);
        self.source.messages = msgs;
        built?;
        self.next_rollup()
    }

    /// Y-6 (issue 13): the summarizer's summary left the transcript no smaller
    /// (`why`: the validator's `no reduction: <after> bytes after vs <before> before`),
    /// e.g. a model that echoed its input. Once per job, the rows are rebuilt with the
    /// deterministic handoff summary instead (`writer: mechanical`, any rollup redone
    /// mechanically), after a `summary_discarded` event naming the dropped summary
    /// (`writer`, `messageId`, `reason: "no_reduction"`: its `summary_written` event came
    /// before, and a host counting summaries written subtracts it) and a
    /// `mechanical_fallback` warning with `reason: "no_reduction"`. `None` when there is no provider summary to replace (or it was replaced already):
    /// the caller reports `no_reduction` as before.
    pub(super) fn no_reduction_fallback(&mut self, why: &str) -> Option<Result<Step>> {
        // set only when the stage-1 summary was the summarizer's (Job::commit_summary)
        let point = self.retry_point.take()?;
        self.state.ledger = point.ledger;
        self.state.ledger_run = point.ledger_run;
        self.new_ids = point.new_ids;
        self.rollups.clear();
        // the summary_written event of the summary dropped here may be with the host
        // already (events reach onEvent before each host call, J-4): it is not changed,
        // a summary_discarded event names that summary as not written to the transcript
        let dropped = self.summary.take();
        self.opts.has_summarizer = false;
        let message = format!("the summarizer's summary left the transcript no smaller ({why}): the deterministic handoff summary was written instead");
        if let Some(d) = dropped {
            self.events.push(event("summary_discarded", json!({ "writer": d.source.writer, "messageId": d.message_id, "reason": "no_reduction" })));
        }
        self.events.push(event("warning", json!({ "code": "mechanical_fallback", "reason": "no_reduction", "message": message })));
        Some(self.commit_summary(String::new(), SummarySource { writer: "mechanical".into(), coverage: "whole".into() }))
    }

    /// S-9, N-1: the user-text lines of the new summary, every folded user text block
    /// placed by [`crate::nothing_lost::user_text_floor`] (what folded summaries carried comes with their
    /// items, [`Facts::carried`]).
    pub(super) fn user_floor(&self, sel: &Selection, msgs: &[Message], (first_task, newest): (Option<usize>, Option<usize>)) -> Vec<String> {
        let rows: Vec<(usize, &Message)> = sel.fold.iter().filter_map(|&o| msgs.get(o).map(|m| (o, m))).collect();
        crate::nothing_lost::user_text_floor_capped(&rows, first_task, newest, self.user_floor_budget(), self.single_text_cap())
    }

    /// UTF-8 bytes the floor may carry of one folded user text block before its head
    /// alone is quoted (adversarial finding 8, S-9; [`crate::nothing_lost::user_text_floor_capped`]):
    /// the summary budget (`summaryMaxOutputTokens x bytesPerToken`, at most a sixth of
    /// the window, at least 1,024).
    pub(super) fn single_text_cap(&self) -> usize {
        let window_bytes = usize::try_from(self.config.context_window.saturating_mul(self.config.bytes_per_token)).unwrap_or(usize::MAX);
        self.summary_bytes().min(window_bytes / 6).max(1_024)
    }

    /// What the memory records keep whole of the rows this job folds (M-1), for the
    /// claims of the summary's markers (N-1): the folded user text with memory projection
    /// on; every folded row only when that projection is not limited to the user text
    /// ([`Job::with_user_text_only_memory`]: no memory hook).
    pub(super) fn kept(&self) -> Kept {
        Kept { user_text: self.config.project_memory, rows: self.config.project_memory && !self.user_text_only_memory }
    }

    /// S-9: the session's first task ([`session_first_task`]: `None` once a summary
    /// carries it) and the newest request, as source offsets of `msgs`.
    pub(super) fn first_and_newest_of(&self, msgs: &[Message]) -> (Option<usize>, Option<usize>) {
        (session_first_task(msgs), first_and_newest(msgs).1)
    }

    /// UTF-8 bytes of folded user text quoted whole beyond the first task and the newest
    /// request (N-1): half the summary budget, at most a sixteenth of the context window (each of
    /// the whole and the clipped quotes), less what the floor carries anyway
    /// ([`Job::summary_floor`]: the constraint sentences, at most half). With memory projection off (M-1) no records
    /// keep clipped text whole, so every folded user text block is quoted whole
    /// (`usize::MAX`; the engine answers `cannot_fit` when that floor is over the window).
    pub(super) fn user_floor_budget(&self) -> usize {
        if !self.config.project_memory {
            return usize::MAX;
        }
        let window = usize::try_from(self.config.context_window.saturating_mul(self.config.bytes_per_token) / 16).unwrap_or(usize::MAX);
        // less the constraint sentences the floor carries anyway (at most half of it)
        let base = (self.summary_bytes() / 2).min(window);
        base.saturating_sub(self.summary_floor.2.min(base / 2))
    }

    /// The fewest UTF-8 bytes the summary row of `sel` has, whatever its narrative (S-6
    /// breaker, [`Job::fold_cannot_shrink`]): an empty summary message of the format, and
    /// when the user-text floor writes anything ([`crate::summarize::floor::floor_min_bytes`]
    /// of [`Job::user_floor`]), that and the checked marker before it. JSON escaping only
    /// adds to it.
    pub(super) fn summary_min_bytes(&self, sel: &Selection) -> usize {
        let msgs = &self.source.messages;
        let lines = self.user_floor(sel, msgs, self.first_and_newest_of(msgs));
        let floor = crate::summarize::floor::floor_min_bytes(&lines, self.config.project_memory);
        let empty = message_from_raw(self.format(), formats::text_message(self.format(), ""), Provenance::default(), String::new()).map_or(0, |m| m.bytes);
        let marked = if floor > 0 { floor.saturating_add(crate::summarize::ledger::checked_marker("").len()) } else { 0 };
        empty.saturating_add(marked)
    }

    pub(super) fn build_rows(&mut self, sel: &Selection, msgs: &[Message], narrative: String, source: SummarySource) -> Result<()> {
        // What the handoff must carry, read from the folded rows by rules (issue 13):
        // requests, constraints, paths, calls and outcomes, the plan, instructions loaded.
        let rows: Vec<(usize, &Message)> = sel.fold.iter().filter_map(|&o| msgs.get(o).map(|m| (o, m))).collect();
        let stored = &self.stored;
        let mechanical = source.writer == "mechanical";
        // the handoff's own facts (decisions, current work, ...) only when it is written
        let mut facts = Facts::read_for(&rows, &|off, nth, m: &Message| stored.get(&(off, nth)).cloned().or_else(|| m.provenance.artifact_ref.clone()), mechanical);
        if mechanical {
            // issue 13, Y-3: the §5 lines of the session's summaries left in place (the
            // folded ones are read above): a call of these rows may resolve an error one
            // of them left unresolved, and the new handoff says so
            for (o, m) in msgs.iter().enumerate() {
                if m.is_summary() && sel.fold.binary_search(&o).is_err() {
                    let text = m.text();
                    facts.note_summary_errors(o, crate::summarize::split_summary(&text).0);
                }
            }
        }
        // finding 8: of a block over the summary budget the head and the tail are quoted
        // and the constraint sentences between them carried within a bound; the others
        // are counted by its marker, not listed (they are whole in memory)
        {
            let cap = self.single_text_cap();
            let labels = self.first_and_newest_of(msgs);
            let mut over: std::collections::HashSet<&str> = std::collections::HashSet::new();
            let mut kept: std::collections::HashSet<&str> = std::collections::HashSet::new();
            for (o, m) in &rows {
                for t in m.user_texts() {
                    let protected = Some(*o) == labels.0 || Some(*o) == labels.1;
                    if crate::nothing_lost::floor_over(t, protected, cap) {
                        let parts = crate::nothing_lost::over_budget_parts(t, cap, protected);
                        over.extend(crate::nothing_lost::constraint_sentences(t));
                        kept.extend(crate::nothing_lost::constraint_sentences(parts.head));
                        kept.extend(crate::nothing_lost::constraint_sentences(parts.tail));
                        kept.extend(parts.carried);
                    }
                }
            }
            if !over.is_empty() {
                facts.constraints.retain(|c| !over.contains(c.as_str()) || kept.contains(c.as_str()));
            }
        }
        let facts = facts;
        drop(rows);
        // Y-5: the folded-call ledger, for stage-2 folds of the open run, across folds.
        let mut ledger_now: Vec<FoldedCall> = Vec::new();
        if sel.stage == Stage::InRun && self.config.folded_call_ledger {
            let run_id = sel.run_start.and_then(|r| msgs.get(r)).map(|m| m.id.clone());
            if self.state.ledger_run != run_id {
                self.state.ledger.clear();
                self.state.ledger_run = run_id;
            }
            for c in &facts.calls {
                let error = match &c.outcome {
                    crate::summarize::facts::Outcome::Failed { exit: Some(code), first_line } => Some(format!("exit {code}: {first_line}")),
                    crate::summarize::facts::Outcome::Failed { exit: None, first_line } => Some(if first_line.is_empty() { "empty error output".to_string() } else { first_line.clone() }),
                    _ => None,
                };
                self.state.ledger.push(FoldedCall { call_id: c.id.clone(), name: c.name.clone(), arguments: crate::evict::truncate(&c.arguments, 200), failed: c.outcome.failed(), error });
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
        // The summary budget (summaryMaxOutputTokens x bytesPerToken, at most a sixth of
        // the context window) bounds the handoff, the floor and the ledger together;
        // rehydration has its own (rehydrateBytes, at most an eighth of the window).
        let window_bytes = usize::try_from(self.config.context_window.saturating_mul(self.config.bytes_per_token)).unwrap_or(usize::MAX);
        let budget = self.summary_bytes().min(window_bytes / 6).max(1_024);
        let ledger_bytes = (budget / 3).max(512);
        let fixed = deterministic_tail("", &ledger_now, ledger_bytes, &artifacts, "", &self.config).len();
        // N-1, S-9, N-5: what the summary must carry verbatim whatever the budget; the
        // budgeted parts (the handoff, the whole and clipped quotes) make room for it
        // S-9: the session's first task (if folded here) and the newest request, once
        let labels = self.first_and_newest_of(msgs);
        {
            let (first_task, newest) = labels;
            let rows: Vec<(usize, &Message)> = sel.fold.iter().filter_map(|&o| msgs.get(o).map(|m| (o, m))).collect();
            self.summary_floor = crate::nothing_lost::required_bytes_capped(&rows, first_task, newest, !self.config.project_memory, self.single_text_cap());
        }
        let floor_room = self.summary_floor.0;
        let fold_bytes: usize = sel.fold.iter().filter_map(|&o| msgs.get(o)).map(|m| m.bytes).sum();
        // §9: the newest request kept after the summary, after every folded row or
        // with rounds of its own run folded (S-6)
        let handoff_labels = {
            let (first_task, newest) = labels;
            let newest_at = match newest.filter(|n| sel.fold.binary_search(n).is_err()) {
                None => NewestAt::Folded,
                Some(n) if sel.fold.last().is_some_and(|&l| l > n) => NewestAt::InRun,
                Some(_) => NewestAt::After,
            };
            HandoffLabels { first_task, newest, rows_in_memory: self.kept().rows, newest_at }
        };
        let narrative = if mechanical {
            // Y-6 and the built-in default: the deterministic handoff summary
            // a short fold gets a shorter handoff, so the rewrite still shrinks the transcript
            // transcript text quoted as data (crate::quote): it cannot forge the engine record
            quoted_handoff(&facts, budget.saturating_sub(fixed).saturating_sub(floor_room).min(fold_bytes / 4 * 3), handoff_labels)
        } else {
            // issue 13: the host's reply is kept whole; a marker line in it (a model echoing
            // a record) is quoted as data (`\-- engine record`), not cut at, so no narrative
            // after it is lost and the line is never taken for the engine's record
            crate::quote::content(narrative.trim_end()).into_owned()
        };
        for h in collect_artifact_refs([narrative.as_str()], std::iter::empty()) {
            if !artifacts.contains(&h) && known.knows(&h) {
                artifacts.push(h);
            }
        }
        // S-9: [the session's first task, the newest request] (the floor labels by it)
        let (first, newest) = labels;
        let protected: Vec<usize> = [first, newest].into_iter().flatten().collect();
        // N-6: instruction documents and the latest plan state, re-attached verbatim
        let (rehydrated, missed) = rehydration_missed(&facts, &facts.carried, self.config.rehydrate_bytes.min(window_bytes / 8));
        // N-6: a document not re-attached whole is kept whole in memory (kind
        // `instruction`); N-5: the standing rules of an instruction file among them
        // (CLAUDE.md, AGENTS.md) join the floor's constraints like the person's own
        self.unattached_docs = missed.iter().filter_map(|&i| facts.instructions.get(i)).map(|d| d.offset).collect();
        let mut facts = facts;
        for d in missed.iter().filter_map(|&i| facts.instructions.get(i)).filter(|d| crate::summarize::facts::is_instruction_file(&d.text)).cloned().collect::<Vec<_>>() {
            for c in crate::nothing_lost::constraint_sentences(&d.text) {
                if !facts.constraints.iter().any(|x| x == c) {
                    facts.constraints.push(c.to_string());
                }
            }
        }
        let facts = facts;
        let user_lines = self.user_floor(sel, msgs, labels);
        // N-1 / F-1: what folded rows hold only by reference (item references, files and
        // images attached by id or URL) is named whole, so it can be given again
        let references = {
            let rows: Vec<(usize, &Message)> = sel.fold.iter().filter_map(|&o| msgs.get(o).map(|m| (o, m))).collect();
            crate::summarize::floor::reference_items(&rows)
        };
        // N-5: what must not be lost, appended verbatim where the summary left it out
        let compose = |narrative: &str| {
            let floor_bytes = budget.saturating_sub(narrative.len() + fixed).max(if mechanical { 0 } else { budget / 4 });
            // what the re-attached documents hold is in the summary too
            let present = format!("{narrative}{rehydrated}");
            let carried = format!("{}{references}", floor_items_in(&present, &facts, &facts.carried, floor_bytes, &user_lines, &protected, self.kept()));
            let tail = deterministic_tail(&carried, &ledger_now, ledger_bytes, &artifacts, &rehydrated, &self.config);
            format!("{narrative}{tail}")
        };
        let mut text = compose(&narrative);
        // Y-5: the failed calls' §5 lines, which a summary of the engine's own never drops
        let errors = if mechanical { crate::quote::content(&errors_handoff(&facts)).into_owned() } else { String::new() };
        // only a handoff the fold's own size cut (a short fold), not one the summary budget
        // filled, whose count markers say what they left out: a failed call of the fold it
        // names nowhere (its `[call id]` absent)
        let short_fold = fold_bytes / 4 * 3 < budget.saturating_sub(fixed).saturating_sub(floor_room);
        let drops_an_error = short_fold && facts.calls.iter().any(|c| c.outcome.failed() && !text.contains(&format!("[{}]", c.id)));
        if mechanical && (text.len() >= fold_bytes || drops_an_error) {
            // a summary never bigger than the rows it replaces when a smaller one does:
            // on a short fold the floor alone (every user text, constraint, path) is that,
            // with the failed calls' lines of §5; and the floor with them stands in for a
            // handoff cut so short that it lost one (brk2 finding 11), when it is smaller
            let floor_only = compose(&errors);
            if floor_only.len() < text.len() {
                text = floor_only;
            }
        }
        let summary_msg = self.summary_message_among(&text, 1, msgs)?;
        // New rows: kept rows in order, the summary after the head and remaining summaries.
        let folded: crate::sorted::SortedSet<usize> = sel.fold.iter().copied().collect();
        let mut rows: Vec<(Origin, Message)> = Vec::new();
        let insert_at_source = match sel.stage {
            Stage::BeforeRun => sel.summary_end,
            Stage::InRun | Stage::Clear => sel.head_end,
        };
        // Y-4: the newest provider compaction item stands for every row before it; a fold
        // of rows after it puts its summary after it (and after the summaries there) when
        // only folded rows and the block lie between
        let insert_at_source = match msgs.iter().rposition(|m| m.in_summary_block() && !m.is_summary()) {
            Some(p) if p >= insert_at_source
                && sel.fold.last().is_some_and(|&l| l > p)
                && (insert_at_source..p).all(|i| folded.contains(&i) || msgs.get(i).is_some_and(Message::in_summary_block)) =>
            {
                crate::select::summary_end(msgs, p + 1)
            }
            _ => insert_at_source,
        };
        let mut summary_offset = 0;
        for (i, m) in msgs.iter().enumerate() {
            if i == insert_at_source {
                summary_offset = rows.len();
                rows.push((Origin::New, summary_msg.clone()));
            }
            if !folded.contains(&i) {
                // K-1: a kept row the clearing tier edited goes in cleared (or not at all)
                match self.cleared_row(i) {
                    Some(Some(c)) => rows.push((Origin::Source(i), c.clone())),
                    Some(None) => {}
                    None => rows.push((Origin::Source(i), m.clone())),
                }
            }
        }
        if insert_at_source >= msgs.len() {
            summary_offset = rows.len();
            rows.push((Origin::New, summary_msg.clone()));
        }
        self.rows = rows;
        self.summary = Some(SummaryInfo { text, level: 1, source, message_id: summary_msg.id.clone(), offset: summary_offset });
        self.events.push(event("summary_written", json!({ "writer": self.summary.as_ref().map(|s| s.source.writer.clone()), "messageId": summary_msg.id })));
        Ok(())
    }

}

/// The deterministic handoff (Y-6) quoted as data (Y-9) within `max` UTF-8 bytes as
/// quoted: the escapes count (issue 13: a bidi control's eight bytes for its three), so a
/// handoff whose quoted text is over `max` is built again smaller by the overshoot, at
/// most four times (the handoff's own least, 512 bytes, stays).
fn quoted_handoff(facts: &Facts, max: usize, labels: HandoffLabels) -> String {
    let mut room = max;
    let mut quoted = String::new();
    for _ in 0..4 {
        quoted = crate::quote::content(&handoff_summary_with(facts, room, Some(labels))).into_owned();
        if quoted.len() <= max || room == 0 {
            break;
        }
        room = room.saturating_sub(quoted.len() - max);
    }
    quoted
}
