//! Rollup passes over the summary block (Y-3).

use super::{Job, Phase, Reply, Rollup, Step};
use crate::error::{Error, ErrorCode, Result};
use crate::rewrite::Origin;
use crate::summarize::carry::MemberUserText;
use crate::summarize::floor::{floor_items_in, CONSTRAINTS_KIND, REHYDRATED};
use crate::summarize::{collect_artifact_refs, deterministic_tail, mechanical_merge, mechanical_merge_in, narrative_part, rehydration, rollup_request, Facts};

impl Job {
    /// The summaries of the summary block of the new rows (past a provider compaction
    /// item in it, [`crate::Message::in_summary_block`]): (offset, level).
    pub(super) fn block(&self) -> Vec<(usize, u8)> {
        let head = self.rows.iter().take_while(|(_, m)| m.role == crate::Role::System).count();
        let block = self.rows.iter().enumerate().skip(head).take_while(|(_, (_, m))| m.in_summary_block());
        block.filter(|(_, (_, m))| m.is_summary()).map(|(i, (_, m))| (i, m.provenance.summary_level.unwrap_or(1))).collect()
    }

    /// Y-3: level-1 run -> one level-2 when the block exceeds the cap and holds >= 2
    /// level-1s; then level-2s merge among themselves past their cap.
    pub(super) fn next_rollup(&mut self) -> Result<Step> {
        let block = self.block();
        let ones: Vec<usize> = block.iter().filter(|(_, l)| *l == 1).map(|(i, _)| *i).collect();
        let twos: Vec<usize> = block.iter().filter(|(_, l)| *l >= 2).map(|(i, _)| *i).collect();
        // N-4, Y-3: a block over a quarter of the window rolls up too (its summaries are
        // in every request: by the counts alone a block of eight grows past a small window)
        let block_bytes: usize = block.iter().filter_map(|(i, _)| self.rows.get(*i)).map(|(_, m)| m.bytes).sum();
        let oversized = block_bytes > self.block_bytes();
        let pass_members = if (block.len() > self.config.max_summaries_before_rollup || oversized) && ones.len() >= 2 && !self.rollups.iter().any(|r| r.pass == "level1_to_level2") {
            Some(("level1_to_level2", ones))
        } else if (twos.len() > self.config.max_rolled_up_summaries || (oversized && twos.len() >= 2)) && !self.rollups.iter().any(|r| r.pass == "level2_merge") {
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
            let mut request = rollup_request(&narratives, &self.config, self.config.rollup_instructions());
            // Y-8 (issue 14): held to the summarizer's window; the mechanical merge when it leaves no room
            if self.fit_request(&mut request) {
                self.phase = Phase::AwaitRollup { pass, members };
                return Ok(Step::Summarize(request));
            }
        }
        let merged = mechanical_merge(&texts, self.rollup_bytes());
        self.apply_rollup(pass, members, merged, "mechanical")
    }

    /// UTF-8 bytes the summary block may hold before it rolls up by size (N-4, Y-3): a
    /// quarter of the context window (`contextWindow x bytesPerToken / 4`), at least
    /// 4,096.
    pub(super) fn block_bytes(&self) -> usize {
        usize::try_from(self.config.context_window.saturating_mul(self.config.bytes_per_token) / 4).unwrap_or(usize::MAX).max(4_096)
    }

    /// UTF-8 bytes of a mechanical rollup's merged narrative (Y-3): the summary budget
    /// of a fold (the output budget, at most a sixth of the window), at least 1,024.
    pub(super) fn rollup_bytes(&self) -> usize {
        let window = usize::try_from(self.config.context_window.saturating_mul(self.config.bytes_per_token) / 6).unwrap_or(usize::MAX);
        self.summary_bytes().min(window).max(1_024)
    }

    pub(super) fn on_rollup(&mut self, pass: &'static str, members: Vec<usize>, reply: Reply) -> Result<Step> {
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

    pub(super) fn apply_rollup(&mut self, pass: &'static str, members: Vec<usize>, merged: String, writer: &str) -> Result<Step> {
        // Carry the deterministic sections of the merged summaries (Y-2: rollup does the same).
        let texts: Vec<String> = members.iter().filter_map(|&i| self.rows.get(i)).map(|(_, m)| m.text()).collect();
        // N-1, S-9 (Y-3): the user text the members carry (the session's first task
        // whole, the newest request while it is the newest, every constraint sentence,
        // other text within the budgets or counted; crate::summarize::carry); N-5 / N-6:
        // their other floor items carried on where the merge left them out, their
        // rehydrated documents re-attached, the newest member's first.
        let newest_live = self.rows.iter().any(|(_, m)| m.has_user_text());
        let users = MemberUserText::read(&texts, newest_live);
        let mut floor_in: Vec<(String, String)> = Vec::new();
        let mut rehydrated_in: Vec<(String, String)> = Vec::new();
        for it in users.rest.iter().rev() {
            let list = if it.0.starts_with(REHYDRATED) { &mut rehydrated_in } else { &mut floor_in };
            if !list.contains(it) {
                list.push(it.clone());
            }
        }
        floor_in.reverse();
        let (mut user_part, constraints) = users.floor(self.user_floor_budget(), self.config.project_memory);
        // the constraint sentences whole, always in the tail (a later rollup reads them there)
        if !constraints.is_empty() {
            user_part.push_str(&crate::summarize::ledger::item(CONSTRAINTS_KIND, &constraints.join("\n")));
        }
        // N-4: the engine's own merge shares the rollup budget with the user text it carries
        let in_memory = self.kept().rows;
        let merged = if writer == "mechanical" { mechanical_merge_in(&texts, self.rollup_bytes().saturating_sub(user_part.len()).max(self.rollup_bytes() * 5 / 8), in_memory) } else { merged };
        let mut all: Vec<&str> = texts.iter().map(String::as_str).collect();
        all.push(&merged);
        // Y-2: only the handles the engine can vouch for (crate::trust::KnownHandles)
        let known = crate::trust::KnownHandles::of(&self.source.messages, self.stored.values().map(String::as_str), &self.state);
        let artifacts: Vec<String> = collect_artifact_refs(all, std::iter::empty()).into_iter().filter(|h| known.knows(h)).collect();
        // the merge is the summarizer's text (untrusted): quoted so it cannot forge the engine
        // record; a provider's merge is kept whole (issue 13: a marker line in it is escaped,
        // not cut at), the engine's own is its narrative
        let narrative = if writer == "mechanical" { narrative_part(&merged) } else { merged.as_str() };
        let narrative = crate::quote::content(narrative.trim_end()).into_owned();
        let budget = self.summary_bytes().max(1_024);
        let carried = format!("{user_part}{}", floor_items_in(&narrative, &Facts::default(), &floor_in, budget.saturating_sub(narrative.len()).max(budget / 4), &[], &[], self.kept()));
        let rehydrated = rehydration(&Facts::default(), &rehydrated_in, self.config.rehydrate_bytes);
        let text = format!("{narrative}{}", deterministic_tail(&carried, &[], 0, &artifacts, &rehydrated, &self.config));
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
        let newest = self.block().last().map_or(0, |(i, _)| *i);
        if let Some(s) = self.summary.as_mut() {
            s.offset = newest;
            if let Some((_, m)) = self.rows.get(s.offset) {
                s.message_id = m.id.clone();
                s.level = m.provenance.summary_level.unwrap_or(1);
                s.text = m.text();
            }
        }
        self.next_rollup()
    }
}
