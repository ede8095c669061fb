//! What is safe to compact (S-1..S-9).
//!
//! Protected: the system rows at the head (S-1), the summary block after them (S-1),
//! pinned rows (Y-10), the recent window by count *and* bytes (S-2), the newest user
//! request with the injected context glued to it (S-6, S-7, S-9), and every tool
//! exchange is kept whole (S-3, S-4).
//!
//! Stage 1 folds rows before the open run. When nothing there holds a turn and the
//! config allows it, stage 2 folds the run's completed rounds together with the earlier
//! summaries, keeping the run's request and newest round verbatim (S-6).

use crate::config::Config;
use crate::transcript::{ExchangeIndex, Message, Role, TranscriptRole};
use serde::Serialize;

/// Which kind of fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Rows before the open run (Kerkov's whole range; Meerkat stage 1).
    BeforeRun,
    /// The open run's completed rounds with the earlier summaries (Meerkat stage 2).
    InRun,
    /// No fold: the clearing tier alone reached the target (K-1; a rewrite's stage only).
    Clear,
}

/// A selection: the source offsets to fold, sorted ascending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    /// Which fold: `before_run` (stage 1 / Kerkov) or `in_run` (stage 2, S-6).
    pub stage: Stage,
    /// Source offsets to fold into the summary, ascending; never splits a tool exchange (S-4).
    pub fold: Vec<usize>,
    /// Offsets of the system rows at the head.
    pub head_end: usize,
    /// End of the summary block (exclusive) in the source.
    pub summary_end: usize,
    /// First row of the newest request (injected context glued to it), if any.
    pub run_start: Option<usize>,
    /// First row of the recent window.
    pub recent_start: usize,
}

/// Why nothing could be selected (S-5: a typed reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoSelection {
    /// `nothing_eligible`, `single_round_run`, `tool_exchange_at_end`.
    pub reason: &'static str,
    /// A human-readable explanation naming the offsets involved (logged and warned once, S-5).
    pub detail: String,
}

/// First offset after the system rows at the head.
pub fn head_end(messages: &[Message]) -> usize {
    messages.iter().take_while(|m| m.role == Role::System).count()
}

/// End (exclusive) of the summary block that starts at `from`: its summaries and the
/// newest provider compaction item among them ([`Message::in_summary_block`], Y-4).
pub fn summary_end(messages: &[Message], from: usize) -> usize {
    from + messages.iter().skip(from).take_while(|m| m.in_summary_block()).count()
}

/// The newest request's first row (injected context before it glued on, S-7). A run
/// started by a notice alone (S-6: a peer, flow or external input, as injected context
/// right after a final answer, one with no tool call open, and no user request after
/// it) starts at that notice: the notice is its request.
pub fn run_start(messages: &[Message], from: usize) -> Option<usize> {
    let injected = |i: usize| messages.get(i).is_some_and(|m| m.provenance.transcript_role == TranscriptRole::InjectedContext);
    let request = messages.iter().rposition(|m| m.starts_turn());
    // S-6: the newest notice block after an answer to the newest request (or with no request)
    let after = request.map_or(0, |r| r + 1);
    // the run before it ended: the row before the notice is an answer with no call open
    let answered = |b: usize| b >= after && (b == 0 || messages.get(b - 1).is_some_and(|m| m.role == Role::Assistant && !m.has_calls()));
    let notice = (after..messages.len()).rev().find(|&i| injected(i) && (i == 0 || !injected(i - 1)) && answered(i));
    let r = match notice {
        Some(b) => return (b >= from).then_some(b),
        None => request?,
    };
    if r < from {
        return None;
    }
    let mut s = r;
    while s > from && injected(s - 1) {
        s -= 1;
    }
    Some(s)
}

/// End (exclusive) of the open run's request starting at `run_start`: its injected
/// context, then the user request it is glued to, if any (S-6: a notice alone is the
/// whole request).
pub fn request_end(messages: &[Message], run_start: usize) -> usize {
    let mut e = run_start;
    while messages.get(e).is_some_and(|m| m.provenance.transcript_role == TranscriptRole::InjectedContext) {
        e += 1;
    }
    if messages.get(e).is_some_and(Message::starts_turn) {
        e += 1;
    }
    e
}

/// First row of the latest assistant message when it carries reasoning (T-3: its
/// thinking is never folded): the last assistant row and the assistant rows right
/// before it (OpenAI Responses splits one answer into reasoning, message and call
/// items). `None` when that message has no reasoning block.
pub fn latest_thinking_start(messages: &[Message]) -> Option<usize> {
    let last = messages.iter().rposition(|m| m.role == Role::Assistant)?;
    let mut start = last;
    while start > 0 && messages.get(start - 1).is_some_and(|m| m.role == Role::Assistant) {
        start -= 1;
    }
    let group = messages.get(start..=last)?;
    group.iter().any(|m| m.blocks.iter().any(|b| matches!(b, crate::transcript::Block::Reasoning { .. }))).then_some(start)
}

/// A row a fold may take: not pinned (Y-10), not a system row (a system message in the
/// middle of a conversation stays in place), not the latest assistant message's
/// thinking or anything after it (T-3).
fn foldable(messages: &[Message], i: usize, thinking_from: Option<usize>) -> bool {
    messages.get(i).is_some_and(|m| !m.provenance.is_pinned() && m.role != Role::System) && thinking_from.is_none_or(|t| i < t)
}

/// First row of the recent window (S-2): up to `preserve_recent_turns` rows from the
/// end, while their bytes stay within `preserve_recent_bytes`. Injected context does not
/// count against the row budget (S-7). One oversized row ends the window, so it cannot
/// pin it.
pub fn recent_start(messages: &[Message], from: usize, config: &Config) -> usize {
    let mut count = 0usize;
    let mut bytes = 0usize;
    let mut start = messages.len();
    while start > from {
        let m = &messages[start - 1];
        let injected = m.provenance.transcript_role == TranscriptRole::InjectedContext;
        if !injected && count >= config.preserve_recent_turns {
            break;
        }
        if bytes + m.bytes > config.preserve_recent_bytes {
            break;
        }
        bytes += m.bytes;
        if !injected {
            count += 1;
        }
        start -= 1;
    }
    start
}

/// Removes from `fold` every tool exchange it does not hold whole (S-4).
fn whole_exchanges(mut fold: Vec<usize>, ex: &ExchangeIndex) -> Vec<usize> {
    let set: crate::sorted::SortedSet<usize> = fold.iter().copied().collect();
    fold.retain(|&i| match ex.get(i) {
        Some(x) => (x.start..=x.end).all(|k| set.contains(&k)),
        None => true,
    });
    fold
}

/// Selects what to fold. See the module docs for the rules. `recent_bytes_cap` bounds
/// the recent window's bytes below `preserve_recent_bytes` under byte pressure (S-8).
pub fn select(messages: &[Message], config: &Config, recent_bytes_cap: Option<usize>) -> Result<Selection, NoSelection> {
    select_staged(messages, config, recent_bytes_cap, false)
}

/// Stage 2 straight away (S-6, issue 13): the fold a job falls back to when stage 1
/// cannot bring the request under the target (the rows before the open run are too
/// small). Still needs [`Config::in_run_stage2`]; keeps the run's request and newest
/// round verbatim and every tool exchange whole, like [`select`]'s stage 2.
pub fn select_in_run(messages: &[Message], config: &Config, recent_bytes_cap: Option<usize>) -> Result<Selection, NoSelection> {
    select_staged(messages, config, recent_bytes_cap, true)
}

fn select_staged(messages: &[Message], config: &Config, recent_bytes_cap: Option<usize>, in_run: bool) -> Result<Selection, NoSelection> {
    let n = messages.len();
    let head = head_end(messages);
    let sum_end = summary_end(messages, head);
    // Without run protection (Kerkov) the newest request is still kept when it carries
    // media: its image cannot be quoted into a summary.
    let run = run_start(messages, sum_end).filter(|&r| {
        config.protect_run_request || messages.get(r..request_end(messages, r)).is_some_and(|rows| rows.iter().any(|m| m.blocks.iter().any(|b| matches!(b, crate::transcript::Block::Media { .. }))))
    });
    let thinking_from = latest_thinking_start(messages);
    let mut window = config.clone();
    if let Some(cap) = recent_bytes_cap {
        window.preserve_recent_bytes = window.preserve_recent_bytes.min(cap);
    }
    let config = &window;
    let recent = recent_start(messages, sum_end, config);
    let ex = ExchangeIndex::build(messages);
    let bytes_from = |i: usize| messages.iter().skip(i).map(|m| m.bytes).sum::<usize>();

    // Stage 1: [sum_end, end) with end before the recent window and the newest request,
    // and before a tool exchange that reaches the end of history (S-3): a call still
    // waiting for its result, or results no later row has read, stays intact even when
    // the recent window is empty (one oversized row, S-2/S-8).
    let tail_exchange = n.checked_sub(1).and_then(|last| ex.get(last)).map_or(n, |x| x.start);
    let mut end = recent.min(run.unwrap_or(n)).min(tail_exchange);
    if ex.splits(end) {
        if let Some(x) = ex.get(end) {
            let back = x.start;
            let fwd = x.end + 1;
            let read_later = messages.iter().skip(fwd).any(|m| m.role == Role::Assistant);
            let fwd_ok = fwd < n && read_later && fwd <= run.unwrap_or(n);
            // S-3: walk back, unless that consumes the whole range or blows the byte
            // budget of the window; then walk forward if a later row read the results.
            let back_bad = back <= sum_end || bytes_from(back) > config.preserve_recent_bytes;
            end = if back_bad && fwd_ok { fwd } else { back };
        }
    }
    let stage1: Vec<usize> = whole_exchanges((sum_end..end.max(sum_end)).filter(|&i| foldable(messages, i, thinking_from)).collect(), &ex);
    let holds_turn = stage1.iter().any(|&i| messages[i].starts_turn());
    if !in_run && !stage1.is_empty() && (holds_turn || !config.in_run_stage2 || run.is_none()) {
        return Ok(Selection { stage: Stage::BeforeRun, fold: stage1, head_end: head, summary_end: sum_end, run_start: run, recent_start: recent });
    }

    // Stage 2 (S-6): the open run's completed rounds, with the earlier summaries.
    let Some(run_start) = run.filter(|_| config.in_run_stage2) else {
        let reason = if end <= sum_end && ex.get(sum_end).is_some_and(|x| x.end + 1 >= n) { "tool_exchange_at_end" } else { "nothing_eligible" };
        return Err(NoSelection { reason, detail: format!("no foldable rows between offset {sum_end} and the protected tail starting at {end}") });
    };
    let request_end = request_end(messages, run_start);
    let newest_round = (request_end..n).rev().find(|&i| messages[i].role == Role::Assistant);
    let Some(newest_round) = newest_round else {
        return Err(NoSelection { reason: "single_round_run", detail: "the open run has no completed round to fold".into() });
    };
    // The newest round starts at its assistant message, moved back so no exchange splits.
    let newest_round = match ex.get(newest_round) {
        Some(x) if x.start < newest_round => x.start,
        _ => newest_round,
    };
    let rounds: Vec<usize> = (request_end..newest_round).filter(|&i| foldable(messages, i, thinking_from)).collect();
    if !rounds.iter().any(|&i| messages[i].role == Role::Assistant) {
        return Err(NoSelection { reason: "single_round_run", detail: format!("the open run's newest round (offset {newest_round}) is its only one") });
    }
    let mut fold: Vec<usize> = (head..run_start).filter(|&i| foldable(messages, i, thinking_from) || messages.get(i).is_some_and(Message::is_summary)).collect();
    fold.extend(rounds);
    let fold = whole_exchanges(fold, &ex);
    if !fold.iter().any(|&i| !messages[i].is_summary()) {
        return Err(NoSelection { reason: "nothing_eligible", detail: "the open run's completed rounds cannot be folded without splitting a tool exchange".into() });
    }
    Ok(Selection { stage: Stage::InRun, fold, head_end: head, summary_end: sum_end, run_start: Some(run_start), recent_start: recent })
}
