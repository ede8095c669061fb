//! Nothing lost (N-1, S-9): what a person wrote survives every rewrite.
//!
//! Every text block of a conversational user message in the discarded range is either
//! retained, quoted verbatim in the summary, or, when the summary budget cannot hold
//! it, clipped there with a marker naming the message and kept whole in the memory
//! records. The first task, the newest request and every user constraint sentence
//! (must / never / don't / always / should / do not / make sure ...) stay verbatim.
//! User text that shares a row with tool results is user text.
//!
//! Two halves, agreed by contract:
//! - [`crate::summarize::floor::floor_items`] writes what the engine appends to every
//!   summary (each missing user text block whole, or a [`CLIPPED_PREFIX`] marker, and
//!   every constraint sentence, N-5).
//! - [`check`] (called by [`crate::rewrite::validate`] on every rewrite) and
//!   [`check_memory`] (after the memory projection) fail a rewrite that breaks the rule
//!   with `invalid_rewrite` and a message starting `user_text_lost:` that names the
//!   source offset.
//!
//! User text is data (Y-9, issue 14): every text, head, sentence and message id a line
//! quotes goes through [`crate::quote::content`] (fence tags and engine-looking lines
//! escaped), and [`check`] compares against that same quoted form, so a person's text
//! can neither forge a line of the engine record nor fail the check by needing escapes.

use crate::error::{Error, ErrorCode, Result};
use crate::evict::floor_boundary;
use crate::memory::{MemoryBatch, RecordKind};
use crate::quote;
use crate::transcript::Message;

/// Prefix of a whole, verbatim quote of one user text block (S-9, N-1).
pub const VERBATIM_PREFIX: &str = "User request (verbatim): ";
/// Prefix of a clipped quote; the line goes on with `message <id>, offset <n>): <head>`.
pub const CLIPPED_PREFIX: &str = "User text (clipped; whole in memory, message ";
/// Prefix of a user constraint sentence quoted verbatim (from a clipped block).
pub const CONSTRAINT_PREFIX: &str = "User constraint (verbatim): ";
/// Prefix of the placeholder naming the media of a folded user message (images,
/// documents): `User attachment (placeholder; message <id>, offset <n>): image, <k> bytes`.
pub const ATTACHMENT_PREFIX: &str = "User attachment (placeholder; message ";
/// Prefix of the line naming who wrote a folded user message when its row says so (an
/// OpenAI Chat user row's `name`, multi-user chats): `User speaker (message <id>, offset
/// <n>): <name>`, so the summary's user lines keep who spoke (the newest 20 rows, the
/// rest counted).
pub const SPEAKER_PREFIX: &str = "User speaker (message ";

/// Prefix of the marker of one user text block whose floor alone is over the summary
/// budget (adversarial finding 8, S-9), written between the block's quoted head and tail:
/// the line goes on with `<message id>, offset <n>): the first <h> bytes and the last <t>
/// bytes quoted verbatim; the <b> bytes between them are whole in memory, <c> of their
/// constraint sentences carried in the constraints and <d> more constraint sentences not
/// quoted here (recall message <id>; ...)` ([`over_budget_marker`]). The block is whole
/// in the memory records ([`check_memory`]).
pub const OVER_BUDGET_PREFIX: &str = "User text (over the summary budget; whole in memory, message ";

/// UTF-8 bytes the floor must carry of one user text block (S-9, N-5): the whole text
/// for the first task or the newest request (`protected`), else its constraint
/// sentences (one line each).
pub fn floor_cost(text: &str, protected: bool) -> usize {
    if protected {
        text.len()
    } else {
        constraint_sentences(text).iter().map(|s| s.len() + 1).sum()
    }
}

/// Whether a block's floor ([`floor_cost`]) is over `cap` bytes. Its constraint
/// sentences are disjoint substrings of the text, each at least one byte long, and each
/// costs one more byte for its line, so their floor is at most twice the text's bytes: a
/// text of at most `cap / 2` bytes is answered without splitting it into sentences
/// (issue 15: the split of every folded user text, four times per compaction, was a sixth
/// of a 1 MB compaction).
pub fn floor_over(text: &str, protected: bool, cap: usize) -> bool {
    if cap == usize::MAX || !protected && text.len() <= cap / 2 {
        return false;
    }
    floor_cost(text, protected) > cap
}

/// The verbatim head kept of a block over the summary budget `cap` (S-9, finding 8): at
/// most `cap / 2` UTF-8 bytes, cut at the last line break in its second half when there
/// is one, else at its last space there (else at a char boundary).
pub fn over_budget_head(text: &str, cap: usize) -> &str {
    let end = floor_boundary(text, (cap / 2).max(1));
    let head = text.get(..end).unwrap_or("");
    match head.rfind('\n').filter(|&n| n >= end / 2).or_else(|| head.rfind(' ').filter(|&n| n >= end / 2)) {
        Some(n) => text.get(..n).unwrap_or(""),
        None => head,
    }
}

/// UTF-8 bytes of the tail quoted of a mid-session block over the budget at most (the
/// first task and the newest request: an eighth of the cap).
pub const OVER_BUDGET_TAIL_BYTES: usize = 2 * CLIP_HEAD_BYTES;

/// The verbatim tail kept of a block over the summary budget (the ask or the rule a
/// person writes after a long paste): the text's end (trailing whitespace left off), at
/// most `max` UTF-8 bytes and starting at or after `from`, cut where the window first
/// holds a paragraph break, else a line break, else a sentence end, else a space (else at
/// a char boundary); leading whitespace left off. Empty when nothing is past `from`.
pub fn over_budget_tail(text: &str, from: usize, max: usize) -> &str {
    let end = text.trim_end().len();
    if end <= from || max == 0 {
        return "";
    }
    let start = crate::evict::ceil_boundary(text, end.saturating_sub(max).max(from));
    let window = text.get(start..end).unwrap_or("");
    let sentence_end = || {
        window.char_indices().find_map(|(i, c)| {
            let after = i + c.len_utf8();
            let next_ws = window.get(after..).and_then(|r| r.chars().next()).is_some_and(char::is_whitespace);
            (matches!(c, '.' | '!' | '?') && next_ws || matches!(c, '。' | '！' | '？')).then_some(after)
        })
    };
    // a cut that leaves something to quote; a window that starts on a boundary keeps it
    let at_boundary = start == from || text.get(..start).is_some_and(|h| h.ends_with('\n'));
    let cut = if at_boundary {
        Some(0)
    } else {
        window.find("\n\n").map(|p| p + 2).or_else(|| window.find('\n').map(|p| p + 1)).or_else(sentence_end).or_else(|| window.find(' ').map(|p| p + 1))
    };
    let t = window.get(cut.unwrap_or(0)..).unwrap_or("").trim_start();
    if t.is_empty() {
        window.trim_start()
    } else {
        t
    }
}

/// What the summary quotes of a block over the summary budget (finding 8; the head and
/// the tail, so an ask or a rule at the end of a long paste is quoted too): the `head`
/// ([`over_budget_head`]: half of `cap` for the first task and the newest request,
/// `protected`, else [`CLIP_HEAD_BYTES`]), the `tail` ([`over_budget_tail`]: an eighth of
/// `cap`, else [`OVER_BUDGET_TAIL_BYTES`]), and of the constraint sentences between them
/// (any that is not whole in the head or the tail) those `carried` verbatim in the
/// constraints, in order, within a quarter of `cap` UTF-8 bytes; `left` counts the rest
/// (whole in memory, counted by the marker, never silent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverBudget<'a> {
    /// The text's start, verbatim.
    pub head: &'a str,
    /// The text's end, verbatim (empty only when nothing is past the head).
    pub tail: &'a str,
    /// Constraint sentences between the head and the tail carried verbatim.
    pub carried: Vec<&'a str>,
    /// Constraint sentences between the head and the tail not carried.
    pub left: usize,
}

/// Byte offset of `part` (a substring of `text`) in `text`.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// The byte range `[start, end)` of the tail [`over_budget_tail`] gives, in `text`.
fn tail_start(text: &str, tail: &str) -> usize {
    if tail.is_empty() {
        text.trim_end().len()
    } else {
        offset_in(text, tail)
    }
}

/// The constraint sentences of `text` between its first `head` bytes and the byte
/// `tail_at` (any sentence not whole in either).
fn middle_constraints(text: &str, head: usize, tail_at: usize) -> impl Iterator<Item = &str> {
    constraint_sentences(text).into_iter().filter(move |s| {
        let a = offset_in(text, s);
        let b = a + s.len();
        b > head && a < tail_at
    })
}

/// [`OverBudget`] of `text` for the budget `cap`.
pub fn over_budget_parts(text: &str, cap: usize, protected: bool) -> OverBudget<'_> {
    let head = if protected { over_budget_head(text, cap) } else { over_budget_head(text, 2 * CLIP_HEAD_BYTES) };
    let tail = over_budget_tail(text, head.len(), if protected { (cap / 8).max(CLIP_HEAD_BYTES) } else { OVER_BUDGET_TAIL_BYTES });
    let room = cap / 4;
    let (mut used, mut carried, mut left) = (0usize, Vec::new(), 0usize);
    for s in middle_constraints(text, head.len(), tail_start(text, tail)) {
        if used.saturating_add(s.len() + 1) <= room {
            used += s.len() + 1;
            carried.push(s);
        } else {
            left += 1;
        }
    }
    OverBudget { head, tail, carried, left }
}

/// The one marker between the head and the tail of a block over the summary budget
/// ([`OVER_BUDGET_PREFIX`]): message id and source offset (quoted as data), the bytes of
/// the verbatim head and tail, the bytes between them (whole in memory), how many of
/// their constraint sentences the constraints carry and how many more are not quoted
/// (counted, never silent), and how recall finds the text (by its message id, or by the
/// words quoted around the marker).
pub fn over_budget_marker(id: &str, offset: usize, text: &str, parts: &OverBudget<'_>) -> String {
    let id = quote::content(id);
    let between = tail_start(text, parts.tail).saturating_sub(parts.head.len());
    format!(
        "{OVER_BUDGET_PREFIX}{id}, offset {offset}): the first {} bytes and the last {} bytes quoted verbatim; the {between} bytes between them are whole in memory, {} of their constraint sentences carried in the constraints and {} more constraint sentences not quoted here (recall message {id}; recall finds it by the words quoted around this line)",
        parts.head.len(),
        parts.tail.len(),
        parts.carried.len(),
        parts.left
    )
}

/// The quote of a block over the summary budget: its head, the marker, its tail, each
/// quoted as data, a blank line between them (so no sentence runs from the head into
/// the marker).
pub fn over_budget_quote(id: &str, offset: usize, text: &str, parts: &OverBudget<'_>) -> String {
    format!("{}\n\n{}\n\n{}", quote::content(parts.head), over_budget_marker(id, offset, text, parts), quote::content(parts.tail))
}

/// The figures a marker line states after `, offset <n>): `: the head's and the tail's
/// bytes and the constraint sentences it says are not quoted.
fn over_budget_figures(rest: &str) -> Option<(usize, usize, usize)> {
    let num = |s: &str| s.get(..s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())).and_then(|n| n.parse::<usize>().ok());
    let h = num(rest.strip_prefix("the first ")?)?;
    let after_h = rest.get("the first ".len() + h.to_string().len()..)?;
    let t = num(after_h.strip_prefix(" bytes and the last ")?)?;
    let d_at = rest.find(" more constraint sentences not quoted here")?;
    let before = rest.get(..d_at)?;
    let d = before.rsplit_once(' ').map_or(before, |(_, n)| n).parse::<usize>().ok()?;
    Some((h, t, d))
}

/// Prefix of the line naming a run of folded user text blocks the summary could not
/// hold even clipped (tier 4 of [`user_text_floor`]); they are whole in memory.
pub const UNQUOTED_PREFIX: &str = "User texts not quoted (whole in memory): ";
/// UTF-8 bytes of the head kept of a clipped block at most (the head also stops at the
/// block's first line break; [`crate::summarize::floor::clipped_marker`]).
pub const CLIP_HEAD_BYTES: usize = crate::summarize::floor::CLIPPED_HEAD_BYTES;

/// The constraint sentences of a text (N-1), verbatim, in order: one rule for the
/// summary's floor and for this check ([`crate::summarize::facts::constraint_sentences`]).
pub use crate::summarize::facts::constraint_sentences;

/// The first task and the newest request of a transcript: the first and the last row
/// holding user text ([`Message::has_user_text`]), as offsets.
pub fn first_and_newest(messages: &[Message]) -> (Option<usize>, Option<usize>) {
    (messages.iter().position(Message::has_user_text), messages.iter().rposition(Message::has_user_text))
}

/// Prefix of the internal line [`user_text_floor`] gives the session's first task (the
/// floor writes it as a [`FIRST_TASK_KIND`] item, S-9).
pub const FIRST_TASK_PREFIX: &str = "User first task (verbatim): ";
/// Prefix of the internal line [`user_text_floor`] gives the newest request (the floor
/// writes it as a [`NEWEST_KIND`] item, S-9).
pub const NEWEST_PREFIX: &str = "User newest request (verbatim): ";
/// Item kind of the session's first task in a summary's deterministic tail (S-9, N-1):
/// written by the fold that folds it and by every rollup of that summary, whole, so a
/// later compaction knows the first task is in the summary block
/// ([`session_first_task`]).
pub const FIRST_TASK_KIND: &str = "carried first task";
/// Item kind of the newest request when a fold (or a rollup) carries it (S-9).
pub const NEWEST_KIND: &str = "carried newest request";

/// Whether a summary's text carries the session's first task (S-9): a
/// [`FIRST_TASK_KIND`] item in its deterministic tail, or, in a summary written before
/// that item, the handoff's `First task (message #` label.
pub fn carries_first_task(summary: &str) -> bool {
    let (narrative, body) = crate::summarize::ledger::split_summary(summary);
    if body.is_some_and(|b| crate::summarize::ledger::read_items(b).iter().any(|(k, _)| k == FIRST_TASK_KIND)) {
        return true;
    }
    narrative.lines().any(|l| l.starts_with("First task (message #") || l.starts_with("First task and newest request (message #"))
}

/// The session's first task (S-9, N-1) as a source offset: the first row holding user
/// text, unless a summary of the transcript already carries the first task
/// ([`carries_first_task`]: it was folded earlier, and the first live user row is an
/// ordinary request); `None` then, or when no row holds user text.
///
/// Time: linear in the summaries' text and the rows.
pub fn session_first_task(messages: &[Message]) -> Option<usize> {
    let first = messages.iter().position(Message::has_user_text)?;
    let folded = messages.iter().any(|m| m.is_summary() && carries_first_task(&m.text()));
    (!folded).then_some(first)
}

/// The user-text lines of a summary's deterministic tail (S-9, N-1) for the folded rows
/// `rows` (source offset, message), in transcript order.
///
/// Blocks are placed newest first, in tiers:
/// 1. the session's first task (`first_task`, [`session_first_task`]) and the newest
///    request (`newest`): quoted whole (`User first task (verbatim): <text>`, `User
///    newest request (verbatim): <text>`), always, outside any budget;
/// 2. others quoted whole while the quotes stay within `budget_bytes` UTF-8 bytes (as
///    quoted, [`quote::content_len`]);
/// 3. then clipped while the clipped lines stay within another `budget_bytes`:
///    `User text (clipped; whole in memory, message <id>, offset <n>): <head> [+<k>
///    bytes in memory]`;
/// 4. the rest (only when a long history folds at once) named by one line per run of
///    messages: `User texts not quoted (whole in memory): messages <first id> to <last
///    id> (<k> blocks)`.
///
/// Every constraint sentence ([`constraint_sentences`]) of a block of tiers 3 and 4 is
/// part of the floor (N-5, S-9), outside any budget: one `User constraint (verbatim):
/// <sentence>` line each, de-duplicated over the whole fold, after the other lines
/// (the floor writes them as one `carried constraints` item, one sentence a line,
/// [`crate::summarize::floor::floor_items`]). A sentence inside a text quoted whole is
/// not repeated.
///
/// Blocks of tiers 3 and 4 must be whole in the memory records ([`check_memory`]).
/// A text already quoted (the same block twice) is quoted once. Each media block of a
/// folded user message becomes a placeholder line (`User attachment (placeholder;
/// message <id>, offset <n>): image, <k> bytes[, <name>]`, the name as
/// `attachment_name` quotes it; the newest 20, the rest counted and named in memory).
/// Pass `usize::MAX` as the budget when no memory keeps clipped text whole (then
/// everything is quoted whole: `projectMemory: false`).
///
/// Time: linear in the folded text (hash sets, no pairwise comparison).
pub fn user_text_floor(rows: &[(usize, &Message)], first_task: Option<usize>, newest: Option<usize>, budget_bytes: usize) -> Vec<String> {
    user_text_floor_capped(rows, first_task, newest, budget_bytes, usize::MAX)
}

/// [`user_text_floor`] with the rule for one block over the summary budget (adversarial
/// finding 8, S-9 "never silently dropped"): a block whose own floor ([`floor_cost`]:
/// the whole first task or newest request, else its constraint sentences) is over
/// `single_cap` UTF-8 bytes is quoted by its head and its tail with one marker between
/// them ([`over_budget_parts`], [`over_budget_quote`]: the first task and the newest
/// request keep their labels, another message is quoted as user text with a short head),
/// the marker counting the bytes between them (whole in memory) and the constraint
/// sentences there it does not carry; those it carries (within a quarter of the cap) are
/// `User constraint (verbatim):` lines. The block must be whole in the memory records.
/// `usize::MAX`: no block is over (every one verbatim, as before).
pub fn user_text_floor_capped(rows: &[(usize, &Message)], first_task: Option<usize>, newest: Option<usize>, budget_bytes: usize, single_cap: usize) -> Vec<String> {
    // (offset, id, text, tier): decided newest first, written in order
    let mut blocks: Vec<(usize, &str, &str, u8)> = Vec::new();
    for (o, m) in rows {
        for t in m.user_texts() {
            blocks.push((*o, m.id.as_str(), t, 4));
        }
    }
    let (mut whole_used, mut clip_used) = (0usize, 0usize);
    for b in blocks.iter_mut().rev() {
        let protected = Some(b.0) == first_task || Some(b.0) == newest;
        // the marker's head and tail as written (crate::summarize::floor::marker_parts),
        // at least what a head-only marker reserved (so the tier holds no more markers
        // than before the tails: a tight window stays under it, N-4)
        // bytes as quoted (issue 13: a bidi control's escape is eight bytes for three)
        let clip_cost = || {
            let (h, t) = crate::summarize::floor::marker_parts(b.2);
            let id = quote::content_len(b.1);
            (CLIPPED_PREFIX.len() + id + quote::content_len(h) + quote::content_len(t) + 56).max(CLIPPED_PREFIX.len() + id + CLIP_HEAD_BYTES + 48)
        };
        if floor_over(b.2, protected, single_cap) {
            b.3 = 5;
        } else if protected {
            b.3 = 1;
        } else if let Some(used) = Some(whole_used.saturating_add(quote::content_len(b.2))).filter(|&u| u <= budget_bytes) {
            whole_used = used;
            b.3 = 2;
        } else if clip_used < budget_bytes && clip_used.saturating_add(clip_cost()) <= budget_bytes {
            clip_used = clip_used.saturating_add(clip_cost());
            b.3 = 3;
        }
    }
    // texts quoted whole: their constraint sentences are in the quote already
    let whole: std::collections::HashSet<&str> = blocks.iter().filter(|b| b.3 <= 2).map(|b| b.2).collect();
    let in_whole: std::collections::HashSet<&str> = whole.iter().flat_map(|t| constraint_sentences(t)).collect();
    let mut lines: Vec<String> = Vec::new();
    let mut quoted: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut constraints: Vec<String> = Vec::new();
    let mut constraint_seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    // tier-4 runs: (first id, last id, blocks), flushed when another tier interrupts
    let mut run: Option<(&str, &str, usize)> = None;
    let flush = |lines: &mut Vec<String>, run: &mut Option<(&str, &str, usize)>| {
        if let Some((a, b, k)) = run.take() {
            lines.push(format!("{UNQUOTED_PREFIX}messages {} to {} ({k} blocks)", quote::content(a), quote::content(b)));
        }
    };
    for (o, id, text, tier) in blocks {
        if tier == 5 {
            // finding 8: the head and the tail verbatim, one marker between them, the
            // constraint sentences between them carried within a bound, the rest counted;
            // the block is whole in memory
            flush(&mut lines, &mut run);
            let protected = Some(o) == first_task || Some(o) == newest;
            let parts = over_budget_parts(text, single_cap, protected);
            let prefix = if Some(o) == first_task {
                FIRST_TASK_PREFIX
            } else if Some(o) == newest {
                NEWEST_PREFIX
            } else {
                // another message (break5 finding 2): a short head, quoted as user text
                VERBATIM_PREFIX
            };
            lines.push(format!("{prefix}{}", over_budget_quote(id, o, text, &parts)));
            for s in parts.carried {
                if constraint_seen.insert(s) {
                    constraints.push(format!("{CONSTRAINT_PREFIX}{}", quote::content(s)));
                }
            }
            continue;
        }
        if tier >= 3 && !whole.contains(text) {
            // S-9, N-5: every constraint sentence of a text not quoted whole, once
            for s in constraint_sentences(text) {
                if !in_whole.contains(s) && constraint_seen.insert(s) {
                    constraints.push(format!("{CONSTRAINT_PREFIX}{}", quote::content(s)));
                }
            }
        }
        if tier == 4 {
            run = Some(match run {
                Some((a, _, k)) => (a, id, k + 1),
                None => (id, id, 1),
            });
            continue;
        }
        flush(&mut lines, &mut run);
        // a text already quoted whole covers its twins; a clipped one names each message
        if quoted.contains(text) {
            continue;
        }
        if tier <= 2 {
            quoted.insert(text);
            // S-9: the session's first task and the newest request keep their labels
            let prefix = if tier == 1 && Some(o) == first_task {
                FIRST_TASK_PREFIX
            } else if tier == 1 && Some(o) == newest {
                NEWEST_PREFIX
            } else {
                VERBATIM_PREFIX
            };
            lines.push(format!("{prefix}{}", quote::content(text)));
            continue;
        }
        let marker = crate::summarize::floor::clipped_marker(&quote::content(id), o, &quote::content(text));
        lines.push(marker.trim_start_matches('\n').to_string());
    }
    flush(&mut lines, &mut run);
    lines.extend(constraints);
    // media of folded user rows become placeholders (a summary is text)
    let mut attachments: Vec<String> = Vec::new();
    for (o, m) in rows {
        if m.role != crate::Role::User || m.is_summary() {
            continue;
        }
        for b in &m.blocks {
            if let crate::transcript::Block::Media { kind, bytes, name, .. } = b {
                let kind = match kind {
                    crate::transcript::MediaKind::Image => "image",
                    crate::transcript::MediaKind::Video => "video",
                    crate::transcript::MediaKind::Audio => "audio",
                    crate::transcript::MediaKind::Document => "document",
                };
                let mut line = format!("{ATTACHMENT_PREFIX}{}, offset {o}): {kind}, {bytes} bytes", quote::content(&m.id));
                if let Some(n) = name {
                    line.push_str(", ");
                    line.push_str(&attachment_name(n));
                }
                attachments.push(line);
            }
        }
    }
    let skip = attachments.len().saturating_sub(MAX_ATTACHMENT_LINES);
    if skip > 0 {
        lines.push(format!("{ATTACHMENT_PREFIX}earlier ones): {skip} more attachments, named in memory"));
    }
    lines.extend(attachments.into_iter().skip(skip));
    // who spoke, when a folded user row names its author (multi-user chats)
    let speakers: Vec<String> = rows
        .iter()
        .filter(|(_, m)| m.role == crate::Role::User && !m.is_summary() && m.has_user_text())
        .filter_map(|(o, m)| m.speaker().map(|n| format!("{SPEAKER_PREFIX}{}, offset {o}): {}", quote::content(&m.id), attachment_name(&n))))
        .collect();
    let skip = speakers.len().saturating_sub(MAX_ATTACHMENT_LINES);
    if skip > 0 {
        lines.push(format!("{SPEAKER_PREFIX}earlier ones): {skip} more named speakers' messages, in memory"));
    }
    lines.extend(speakers.into_iter().skip(skip));
    lines
}


/// UTF-8 bytes of user text any summary of the folded rows `rows` must carry verbatim
/// (S-9, N-1, N-5): every constraint sentence of a folded user text block, de-duplicated,
/// plus the first task's text when `first_task` is folded. With `all_text` (no memory
/// keeps clipped text: `projectMemory: false`) every folded user text block counts
/// whole instead (de-duplicated). The newest request is left out: the trigger's floor
/// (C-8) counts it. A lower bound of the summary, used to say `cannot_fit` truly. Also
/// returns the number of constraint sentences counted and their UTF-8 bytes.
///
/// Time: linear in the folded text.
pub fn required_bytes(rows: &[(usize, &Message)], first_task: Option<usize>, newest: Option<usize>, all_text: bool) -> (usize, usize, usize) {
    required_bytes_capped(rows, first_task, newest, all_text, usize::MAX)
}

/// [`required_bytes`] with [`user_text_floor_capped`]'s rule: a block whose own floor is
/// over `single_cap` counts its head and its marker only.
pub fn required_bytes_capped(rows: &[(usize, &Message)], first_task: Option<usize>, newest: Option<usize>, all_text: bool, single_cap: usize) -> (usize, usize, usize) {
    let over = |o: usize, t: &str| floor_over(t, Some(o) == first_task || Some(o) == newest, single_cap);
    let mut over_bytes = 0usize;
    for (o, m) in rows {
        for t in m.user_texts() {
            if over(*o, t) {
                let p = over_budget_parts(t, single_cap, Some(*o) == first_task || Some(*o) == newest);
                let carried: usize = p.carried.iter().map(|s| s.len() + 1).sum();
                over_bytes = over_bytes.saturating_add(p.head.len() + p.tail.len() + carried + OVER_BUDGET_PREFIX.len() + 2 * m.id.len() + 320);
            }
        }
    }
    let mut texts: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut sentences: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let (mut bytes, mut sentence_bytes) = (0usize, 0usize);
    for (o, m) in rows {
        if Some(*o) == newest {
            continue;
        }
        for t in m.user_texts() {
            if !over(*o, t) && (all_text || Some(*o) == first_task) && texts.insert(t) {
                bytes = bytes.saturating_add(t.len());
            }
        }
    }
    for (o, m) in rows {
        if Some(*o) == newest {
            continue;
        }
        for t in m.user_texts() {
            if texts.contains(t) || over(*o, t) {
                continue;
            }
            for s in constraint_sentences(t) {
                if sentences.insert(s) {
                    sentence_bytes = sentence_bytes.saturating_add(s.len() + 1);
                }
            }
        }
    }
    (bytes.saturating_add(sentence_bytes).saturating_add(over_bytes), sentences.len(), sentence_bytes)
}

/// Placeholders named one by one; older ones are counted (see [`user_text_floor`]).
const MAX_ATTACHMENT_LINES: usize = 20;

/// UTF-8 bytes of an attachment's name a placeholder line quotes at most.
const ATTACHMENT_NAME_BYTES: usize = 160;

/// An attachment's name (its URL, file id, file name, title: [`crate::transcript::Block::Media`])
/// as a placeholder line quotes it: through [`quote::content`], its first 160 bytes (at a
/// char boundary) and `[+<k> bytes in memory]` when longer (the memory record holds it whole).
fn attachment_name(name: &str) -> String {
    let one_line = name.replace(['\n', '\r'], " ");
    let mut end = one_line.len().min(ATTACHMENT_NAME_BYTES);
    while !one_line.is_char_boundary(end) {
        end -= 1;
    }
    let head = quote::content(one_line.get(..end).unwrap_or(""));
    match one_line.len() - end {
        0 => head.into_owned(),
        rest => format!("{head} [+{rest} bytes in memory]"),
    }
}

/// Starts of the plain one-line user-text lines [`user_text_floor`] writes (a whole quote
/// and the constraint sentences are written as length-prefixed items instead), carried by
/// later summaries and rollups ([`crate::summarize::ledger::carried_items`]).
pub const FLOOR_LINE_PREFIXES: [&str; 7] = [CLIPPED_PREFIX, CONSTRAINT_PREFIX, ATTACHMENT_PREFIX, SPEAKER_PREFIX, UNQUOTED_PREFIX, crate::summarize::carry::ROLLUP_CLIPPED_PREFIX, OVER_BUDGET_PREFIX];

/// A user text block the summary clipped, which the memory records must hold whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clipped {
    /// Source offset of the message.
    pub offset: usize,
    /// Stable id (T-4) of the message.
    pub message_id: String,
    /// UTF-8 byte range `[start, end)` of the block in the message's joined text
    /// ([`Message::text`], what the memory records' `byteRange` index).
    pub range: [usize; 2],
    /// The block's non-whitespace characters, as byte ranges `[start, end)` relative to
    /// `range[0]`, in order: a run of ASCII characters as one range, any other character
    /// as the one-byte range of its first byte. Every byte of these ranges starts a
    /// non-whitespace character and every such start is in one (issue 15: one range per
    /// run instead of one offset per character).
    pub solid: Vec<[usize; 2]>,
}

/// The [`Clipped::solid`] ranges of a text.
fn solid_ranges(t: &str) -> Vec<[usize; 2]> {
    let b = t.as_bytes();
    let mut out: Vec<[usize; 2]> = Vec::new();
    let mut run: Option<usize> = None;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c < 0x80 {
            if (c as char).is_whitespace() {
                if let Some(a) = run.take() {
                    out.push([a, i]);
                }
            } else if run.is_none() {
                run = Some(i);
            }
            i += 1;
            continue;
        }
        if let Some(a) = run.take() {
            out.push([a, i]);
        }
        let ch = t.get(i..).and_then(|r| r.chars().next());
        if ch.is_some_and(|ch| !ch.is_whitespace()) {
            out.push([i, i + 1]);
        }
        i += ch.map_or(1, char::len_utf8);
    }
    if let Some(a) = run {
        out.push([a, b.len()]);
    }
    out
}

fn lost(offset: usize, what: &str) -> Error {
    Error::new(ErrorCode::InvalidRewrite, format!("user_text_lost: {what} (source offset {offset})"))
}

/// What a summary holds, indexed once so that [`check`] is linear in the summary and
/// the folded text: every line (also with a floor line prefix or a `- ` bullet taken
/// off), every length-prefixed item's text, and the clip marker lines by the source
/// offset they name.
struct SummaryIndex<'a> {
    summary: &'a str,
    pieces: std::collections::HashSet<&'a str>,
    markers: std::collections::HashMap<usize, Vec<&'a str>>,
    /// FNV-1a hashes named by rollup clip markers ([`crate::summarize::carry::ROLLUP_CLIPPED_PREFIX`]).
    rollup_marks: std::collections::HashSet<u64>,
    /// Whether a rollup's count line ([`crate::summarize::carry::is_collapsed_line`]) is in the summary.
    rollup_counted: bool,
}

impl<'a> SummaryIndex<'a> {
    fn of(summary: &'a str) -> SummaryIndex<'a> {
        let mut pieces = std::collections::HashSet::new();
        let mut markers: std::collections::HashMap<usize, Vec<&'a str>> = std::collections::HashMap::new();
        let mut rollup_marks = std::collections::HashSet::new();
        let mut rollup_counted = false;
        for line in summary.lines() {
            pieces.insert(line);
            rollup_counted |= crate::summarize::carry::is_collapsed_line(line);
            if let Some(h) = line.strip_prefix(crate::summarize::carry::ROLLUP_CLIPPED_PREFIX).and_then(|r| r.get(..16)).and_then(|h| u64::from_str_radix(h, 16).ok()) {
                rollup_marks.insert(h);
            }
            for p in [VERBATIM_PREFIX, CONSTRAINT_PREFIX, "- "] {
                if let Some(rest) = line.strip_prefix(p) {
                    pieces.insert(rest);
                }
            }
            if line.starts_with(CLIPPED_PREFIX) {
                // every `, offset <n>): ` of the line (an id may hold the words itself)
                for (i, _) in line.match_indices(", offset ") {
                    let rest = line.get(i + 9..).unwrap_or("");
                    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                    if rest.get(digits..).is_some_and(|r| r.starts_with("): ")) {
                        if let Ok(o) = rest.get(..digits).unwrap_or("").parse::<usize>() {
                            markers.entry(o).or_default().push(line);
                        }
                    }
                }
            }
        }
        let mut rest = summary;
        // length-prefixed items (crate::summarize::ledger::item), read without a copy
        while let Some(p) = rest.find("\n[") {
            let head = rest.get(p + 2..).unwrap_or("");
            let Some(le) = head.find('\n') else { break };
            let line = head.get(..le).unwrap_or("");
            let n = line.strip_suffix(" bytes]").and_then(|l| l.rsplit_once(", ")).and_then(|(_, n)| n.parse::<usize>().ok());
            match n.and_then(|n| head.get(le + 1..le + 1 + n).map(|t| (n, t))) {
                Some((n, text)) => {
                    pieces.insert(text);
                    // a constraint sentence inside a whole quote is quoted verbatim too
                    pieces.extend(constraint_sentences(text));
                    rest = head.get(le + 1 + n..).unwrap_or("");
                }
                None => rest = head.get(le..).unwrap_or(""),
            }
        }
        SummaryIndex { summary, pieces, markers, rollup_marks, rollup_counted }
    }

    /// Whether the summary holds `text` verbatim: as a whole line, item or bullet first
    /// (constant time), else anywhere in its text (a model's narrative may quote it).
    fn holds(&self, text: &str) -> bool {
        let q = quote::content(text);
        self.pieces.contains(&*q) || self.pieces.contains(text) || contains_bounded(self.summary, &q) || contains_bounded(self.summary, text)
    }

    /// Whether `text` is a whole line, item or bullet of the summary (no search).
    fn holds_exactly(&self, text: &str) -> bool {
        let q = quote::content(text);
        self.pieces.contains(&*q) || self.pieces.contains(text)
    }
}

/// Whether `needle` occurs in `hay` as a whole: where the needle starts (ends) with a
/// letter or digit, the character before (after) the occurrence is not one, so a short
/// reply ("no", "eu") is not taken as quoted because a longer word ("notable",
/// "europe") holds it (N-1: a user text must be quoted, not merely spelled inside
/// another word). An empty needle is held.
pub(crate) fn contains_bounded(hay: &str, needle: &str) -> bool {
    let (Some(first), Some(last)) = (needle.chars().next(), needle.chars().next_back()) else { return true };
    hay.match_indices(needle).any(|(at, _)| {
        let before_ok = !first.is_alphanumeric() || !hay.get(..at).and_then(|h| h.chars().next_back()).is_some_and(char::is_alphanumeric);
        let after_ok = !last.is_alphanumeric() || !hay.get(at + needle.len()..).and_then(|h| h.chars().next()).is_some_and(char::is_alphanumeric);
        before_ok && after_ok
    })
}

/// `hay` holds the file path `needle` on path edges (N-5): the characters either side
/// of a match are not path characters (letters, digits, `_`, `-`, `.`, `/`), so
/// `src/lib.rs.bak` does not hold `src/lib.rs` and `old_config.yaml.j2` does not hold
/// `config.yaml`. An empty needle is held.
pub(crate) fn contains_path(hay: &str, needle: &str) -> bool {
    let path_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    if needle.is_empty() {
        return true;
    }
    hay.match_indices(needle).any(|(at, _)| {
        let before_ok = !hay[..at].chars().next_back().is_some_and(path_char);
        let after = &hay[at + needle.len()..];
        // a sentence's full stop or a list's comma after the path is not part of it
        let after_ok = match after.chars().next() {
            None => true,
            Some('.') => !after[1..].chars().next().is_some_and(path_char),
            Some(c) => !path_char(c),
        };
        before_ok && after_ok
    })
}

/// Checks N-1 on one rewrite: `source` the rows the rewrite was computed from, `kept`
/// which of them it retains (by source offset), `summary` the text of every summary
/// row the rewrite writes, joined. Every folded user text block must be quoted verbatim,
/// clipped with its marker, or named by a not-quoted run line, and every constraint
/// sentence of a block not quoted whole must be in the summary verbatim (S-9, N-5).
/// Returns the blocks the summary clipped or only named (for [`check_memory`]), or
/// `invalid_rewrite` whose message starts `user_text_lost:` and names the source offset
/// and what is missing.
///
/// Time: linear in the summary and the folded text (the summary is indexed once).
pub fn check(source: &[Message], kept: &[bool], summary: &str) -> Result<Vec<Clipped>> {
    // the first task as the floor placed it: once a summary carries it, the first live
    // user row is an ordinary request (S-9; the carried item is check_rollup's)
    let (first, newest) = (session_first_task(source), first_and_newest(source).1);
    let index = SummaryIndex::of(summary);
    let mut clipped = Vec::new();
    // tier-4 runs named by their first and last message ids (ids of this source only:
    // a line carried from an older summary names ids no longer here)
    let mut by_id: std::collections::HashMap<std::borrow::Cow<'_, str>, usize> = std::collections::HashMap::new();
    let mut unquoted: Vec<(usize, usize)> = Vec::new();
    for line in summary.lines().filter_map(|l| l.strip_prefix(UNQUOTED_PREFIX)) {
        let Some(rest) = line.strip_prefix("messages ") else { continue };
        let Some((a, rest)) = rest.split_once(" to ") else { continue };
        let b = rest.rsplit_once(" (").map_or(rest, |(b, _)| b);
        if by_id.is_empty() {
            for (i, m) in source.iter().enumerate().rev() {
                by_id.insert(quote::content(&m.id), i);
            }
        }
        if let (Some(&x), Some(&y)) = (by_id.get(a), by_id.get(b)) {
            unquoted.push((x.min(y), x.max(y)));
        }
    }
    // merged, sorted intervals: membership by binary search
    crate::sorted::sort_by(&mut unquoted, |a, b| a.cmp(b));
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (x, y) in unquoted {
        match runs.last_mut() {
            Some(last) if x <= last.1.saturating_add(1) => last.1 = last.1.max(y),
            _ => runs.push((x, y)),
        }
    }
    let in_run = |o: usize| {
        let i = runs.partition_point(|r| r.1 < o);
        runs.get(i).is_some_and(|r| r.0 <= o)
    };
    let constraints_kept = |o: usize, t: &str| -> Result<()> {
        match constraint_sentences(t).into_iter().find(|s| !index.holds_exactly(s) && !index.holds(s)) {
            Some(s) => {
                let n = s.len().min(60);
                Err(lost(o, &format!("the user constraint sentence {:?} is not quoted verbatim", s.get(..floor_boundary(s, n)).unwrap_or(""))))
            }
            None => Ok(()),
        }
    };
    let any_over = summary.contains(OVER_BUDGET_PREFIX);
    for (o, m) in source.iter().enumerate() {
        if kept.get(o).copied().unwrap_or(true) {
            continue;
        }
        let mut joined: Option<String> = None;
        for t in m.user_texts() {
            // quoted verbatim as a whole line or item of the floor (quoted as data, or as is)
            if index.holds_exactly(t) {
                continue;
            }
            // finding 8: a block over the summary budget, its head verbatim and the rest
            // counted by its marker, must be whole in memory (its constraint sentences too)
            if any_over {
                let line = format!("{OVER_BUDGET_PREFIX}{}, offset {o}): ", quote::content(&m.id));
                // the head's and the tail's lengths as the marker states them ("the first
                // <h> bytes and the last <t> bytes quoted verbatim"): both must be quoted,
                // and of the constraint sentences between them no more may be missing than
                // the marker counts
                let figures = summary.find(&line).and_then(|at| over_budget_figures(summary.get(at + line.len()..).unwrap_or("")));
                if let Some((h, tl, d)) = figures {
                    let end = t.trim_end().len();
                    let head = (h > 0).then(|| t.get(..h)).flatten();
                    let tail = end.checked_sub(tl).filter(|&a| a >= h).and_then(|a| t.get(a..end));
                    if let (Some(head), Some(tail)) = (head, tail) {
                        if index.holds(head) && index.holds(tail) && over_budget_missing(&index, t, h, end - tl, d) {
                            clipped.push(clipped_of(o, m, t, &mut joined)?);
                            continue;
                        }
                    }
                }
            }
            let marker = format!("{CLIPPED_PREFIX}{}, offset {o}): ", quote::content(&m.id));
            // a message of several text blocks has one marker per clipped block: this
            // block's is the one whose head starts it; a block without one may be named
            // by a run line or quoted elsewhere (below)
            let mut lines = index.markers.get(&o).into_iter().flatten().filter(|l| l.starts_with(&marker)).peekable();
            if lines.peek().is_some() {
                let quoted = quote::content(t);
                // the head ends before the marker's ` [+<k> bytes in memory]` (a tail may
                // follow it, and the head itself may hold ` [+`)
                let is_head = lines.any(|line| {
                    let rest = line.get(marker.len()..).unwrap_or("");
                    rest.match_indices(" [+").any(|(i, _)| quoted.starts_with(rest.get(..i).unwrap_or("\u{0}")))
                });
                if is_head {
                    constraints_kept(o, t)?;
                    clipped.push(clipped_of(o, m, t, &mut joined)?);
                    continue;
                }
                if m.user_texts().nth(1).is_none() {
                    return Err(lost(o, "the clipped quote of a user text block is not its head"));
                }
            }
            // clipped by a rollup of the summary that quoted it in this same call (Y-3)
            if in_run(o) || (!index.rollup_marks.is_empty() && index.rollup_marks.contains(&crate::transcript::fnv1a(quote::content(t).as_bytes()))) {
                constraints_kept(o, t)?;
                clipped.push(clipped_of(o, m, t, &mut joined)?);
                continue;
            }
            // quoted anywhere in the text (a model's narrative)
            if index.holds(t) {
                continue;
            }
            if Some(o) == first {
                return Err(lost(o, "the first task is neither kept nor quoted verbatim in the summary"));
            }
            if Some(o) == newest {
                return Err(lost(o, "the newest request is neither kept nor quoted verbatim in the summary"));
            }
            // counted by a rollup of this same call (Y-3): the rollup's count line names no
            // message, so the block must be whole in the memory records (check_memory) and
            // its constraint sentences verbatim; the first task and the newest request
            // never end here (above)
            if index.rollup_counted {
                constraints_kept(o, t)?;
                clipped.push(clipped_of(o, m, t, &mut joined)?);
                continue;
            }
            return Err(lost(o, "a user text block is neither kept, quoted verbatim nor clipped with a marker in the summary"));
        }
    }
    Ok(clipped)
}

/// Whether at most `allowed` constraint sentences of `t` between its first `head` bytes
/// and byte `tail_at` are missing from the summary (an exact line or item first, then a
/// search only while more than `allowed` remain).
fn over_budget_missing(index: &SummaryIndex<'_>, t: &str, head: usize, tail_at: usize, allowed: usize) -> bool {
    let missing: Vec<&str> = middle_constraints(t, head, tail_at).filter(|s| !index.holds_exactly(s)).collect();
    let mut n = missing.len();
    for s in missing {
        if n <= allowed {
            break;
        }
        if index.holds(s) {
            n -= 1;
        }
    }
    n <= allowed
}

fn clipped_of(o: usize, m: &Message, t: &str, joined: &mut Option<String>) -> Result<Clipped> {
    let joined = joined.get_or_insert_with(|| m.text());
    // the block's own place in the joined text ([`Message::text`] joins text blocks with
    // a line break after the first non-empty output), found without a search
    let mut len = 0usize;
    let mut at = None;
    for b in &m.blocks {
        let crate::transcript::Block::Text { text } = b else { continue };
        if len > 0 {
            len += 1;
        }
        if std::ptr::eq(text.as_str(), t) {
            at = Some(len);
            break;
        }
        len += text.len();
    }
    let Some(at) = at.filter(|&a| joined.get(a..a + t.len()) == Some(t)).or_else(|| joined.find(t)) else {
        return Err(lost(o, "a clipped user text block is not in its message's text"));
    };
    let solid = solid_ranges(t);
    Ok(Clipped { offset: o, message_id: m.id.clone(), range: [at, at + t.len()], solid })
}

/// Checks that the memory batch holds every clipped block whole (N-1): every
/// non-whitespace byte of the block lies in a narrative record of its message (the
/// records' `byteRange` index the message's joined text). Errors: `invalid_rewrite`
/// whose message starts `user_text_lost:` and names the source offset.
pub fn check_memory(clipped: &[Clipped], batch: &MemoryBatch) -> Result<()> {
    let mut by_id: std::collections::HashMap<&str, Vec<[usize; 2]>> = std::collections::HashMap::new();
    for r in batch.records.iter().filter(|r| r.kind == RecordKind::Narrative) {
        by_id.entry(r.message_id.as_str()).or_default().push(r.byte_range);
    }
    // each message's ranges sorted and merged: one walk per block (n log n, no pairs)
    for ranges in by_id.values_mut() {
        crate::sorted::sort_by(ranges, |a, b| a.cmp(b));
        let mut merged: Vec<[usize; 2]> = Vec::with_capacity(ranges.len());
        for r in ranges.iter() {
            match merged.last_mut() {
                Some(last) if r[0] <= last[1] => last[1] = last[1].max(r[1]),
                _ => merged.push(*r),
            }
        }
        *ranges = merged;
    }
    for c in clipped {
        let ranges = by_id.get(c.message_id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let mut k = 0usize;
        // merged ranges leave gaps between them, so a covered run lies in one of them
        let covered = c.solid.iter().all(|&[a, b]| {
            let (a, b) = (c.range[0] + a, c.range[0] + b);
            while ranges.get(k).is_some_and(|r| r[1] <= a) {
                k += 1;
            }
            ranges.get(k).is_some_and(|r| r[0] <= a && b <= r[1])
        });
        if !covered {
            return Err(lost(c.offset, "a user text block clipped in the summary is not kept whole in the memory records"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue15_n1_solid_runs_cover_exactly_the_non_whitespace_characters() {
        let texts = ["", " ", "abc", " a b\tc\n", "é", "aé b", "x\u{a0}y\u{3000}z", "中文 ok。", "\u{2028}a", "  mixed é\u{85}x  "];
        for t in texts {
            let starts: Vec<usize> = t.char_indices().filter(|(_, c)| !c.is_whitespace()).map(|(i, _)| i).collect();
            let from_runs: Vec<usize> = solid_ranges(t).iter().flat_map(|&[a, b]| a..b).collect();
            assert_eq!(from_runs, starts, "{t:?}");
        }
        // one clipped block, records covering all but a gap: the gap inside a run fails it,
        // a gap over whitespace only does not
        let clipped = |t: &str| Clipped { offset: 1, message_id: "m".into(), range: [0, t.len()], solid: solid_ranges(t) };
        let rec = |a: usize, b: usize| crate::memory::MemoryRecord {
            id: format!("r{a}"), session: "s".into(), message_id: "m".into(), role: crate::transcript::Role::User, source_range: [1, 1], byte_range: [a, b],
            kind: RecordKind::Narrative, tool_name: None, call_id: None, handle: None, mentions: Vec::new(), context: None, content: String::new(),
        };
        let batch = |r: Vec<crate::memory::MemoryRecord>| MemoryBatch { session: "s".into(), records: r };
        assert!(check_memory(&[clipped("abc def")], &batch(vec![rec(0, 3), rec(4, 7)])).is_ok());
        assert!(check_memory(&[clipped("abcdef")], &batch(vec![rec(0, 3), rec(4, 6)])).is_err());
        assert!(check_memory(&[clipped("abcdef")], &batch(vec![rec(0, 3), rec(3, 6)])).is_ok());
        // a gap inside a two-byte character leaves every character start covered
        assert!(check_memory(&[clipped("aé")], &batch(vec![rec(0, 2), rec(3, 3)])).is_ok());
        assert!(check_memory(&[clipped("aéb")], &batch(vec![rec(0, 2), rec(3, 4)])).is_ok());
        assert!(check_memory(&[clipped("aéb")], &batch(vec![rec(0, 1), rec(3, 4)])).is_err());
    }

    #[test]
    fn n1_a_short_reply_inside_a_longer_word_is_not_quoted() {
        // adversarial finding F4: "no" inside "notable", "eu" inside "europe"
        assert!(!contains_bounded("Nothing notable: in europe the logs", "no"));
        assert!(!contains_bounded("in europe the logs", "eu"));
        assert!(contains_bounded("the user said: no.", "no"));
        assert!(contains_bounded("use 443 backups", "use 443"));
        assert!(contains_bounded("x (eu) y", "(eu)"));
        assert!(contains_bounded("anything", ""));
        assert!(!contains_path("Edited src/lib.rs.bak today", "src/lib.rs"));
        assert!(!contains_path("see old_config.yaml.j2", "config.yaml"));
        assert!(!contains_path("xa/b/c.py", "a/b/c.py"));
        assert!(contains_path("Edited src/lib.rs.", "src/lib.rs"));
        assert!(contains_path("(src/lib.rs, a.py)", "src/lib.rs"));
        assert!(contains_path("`src/lib.rs`", "src/lib.rs"));
        let idx = SummaryIndex::of("Nothing notable: the user wants to use 443 backups kept; in europe the logs");
        assert!(!idx.holds("no"));
        assert!(!idx.holds("eu"));
        assert!(idx.holds("use 443"));
    }

    #[test]
    fn s9_floor_over_agrees_with_the_floor_cost() {
        let texts = ["Never push.", "a. b. c. d. e. f.", "You must keep it! Don't touch x? Always test.", "plain words only here", "", "Never"];
        for t in texts {
            for protected in [false, true] {
                for cap in [0, 1, 2, 3, 5, 8, 11, 12, 20, 23, 24, 40, 47, 48, 100, usize::MAX] {
                    let want = cap != usize::MAX && floor_cost(t, protected) > cap;
                    assert_eq!(floor_over(t, protected, cap), want, "{t:?} protected {protected} cap {cap}");
                }
            }
        }
    }

    #[test]
    fn n1_constraint_sentences_found_on_word_boundaries() {
        let t = "Fix the parser. You must keep the API stable! Mustard is fine.\nNever push to main? ok";
        assert_eq!(constraint_sentences(t), vec!["You must keep the API stable!", "Never push to main?"]);
        assert_eq!(constraint_sentences("Please don't touch tests"), vec!["Please don't touch tests"]);
        assert!(constraint_sentences("nothing here").is_empty());
    }

}
