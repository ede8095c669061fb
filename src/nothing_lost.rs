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

/// The user-text lines of a summary's deterministic tail (S-9, N-1) for the folded rows
/// `rows` (source offset, message), in transcript order.
///
/// Blocks are placed newest first, in tiers:
/// 1. the first task (`first_task`) and the newest request (`newest`): quoted whole
///    (`User request (verbatim): <text>`), always, outside any budget;
/// 2. others quoted whole while the quotes stay within `budget_bytes` UTF-8 bytes;
/// 3. then clipped while the clipped lines stay within another `budget_bytes`:
///    `User text (clipped; whole in memory, message <id>, offset <n>): <head> [+<k>
///    bytes in memory]`, each followed by its constraint sentences verbatim
///    (`User constraint (verbatim): <sentence>`);
/// 4. the rest (only when a long history folds at once) named by one line per run of
///    messages: `User texts not quoted (whole in memory): messages <first id> to <last
///    id> (<k> blocks)`.
///
/// Blocks of tiers 3 and 4 must be whole in the memory records ([`check_memory`]).
/// A text already quoted (the same block twice) is quoted once. Each media block of a
/// folded user message becomes a placeholder line (`User attachment (placeholder;
/// message <id>, offset <n>): image, <k> bytes`; the newest 20, the rest counted).
/// Pass `usize::MAX` as the budget when no memory keeps clipped text whole (then
/// everything is quoted whole).
pub fn user_text_floor(rows: &[(usize, &Message)], first_task: Option<usize>, newest: Option<usize>, budget_bytes: usize) -> Vec<String> {
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
        let clip_cost = CLIPPED_PREFIX.len() + b.1.len() + CLIP_HEAD_BYTES + 48 + constraint_sentences(b.2).iter().map(|s| s.len() + CONSTRAINT_PREFIX.len() + 1).sum::<usize>();
        if protected {
            b.3 = 1;
        } else if whole_used.saturating_add(b.2.len()) <= budget_bytes {
            whole_used = whole_used.saturating_add(b.2.len());
            b.3 = 2;
        } else if clip_used.saturating_add(clip_cost) <= budget_bytes {
            clip_used = clip_used.saturating_add(clip_cost);
            b.3 = 3;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut quoted: crate::sorted::SortedSet<&str> = crate::sorted::SortedSet::new();
    // tier-4 runs: (first id, last id, blocks), flushed when another tier interrupts
    let mut run: Option<(&str, &str, usize)> = None;
    let flush = |lines: &mut Vec<String>, run: &mut Option<(&str, &str, usize)>| {
        if let Some((a, b, k)) = run.take() {
            lines.push(format!("{UNQUOTED_PREFIX}messages {} to {} ({k} blocks)", quote::content(a), quote::content(b)));
        }
    };
    for (o, id, text, tier) in blocks {
        if tier == 4 {
            run = Some(match run {
                Some((a, _, k)) => (a, id, k + 1),
                None => (id, id, 1),
            });
            continue;
        }
        flush(&mut lines, &mut run);
        // a text already quoted whole covers its twins; a clipped one names each message
        if quoted.contains(&text) {
            continue;
        }
        if tier <= 2 {
            quoted.insert(text);
            lines.push(format!("{VERBATIM_PREFIX}{}", quote::content(text)));
            continue;
        }
        let marker = crate::summarize::floor::clipped_marker(&quote::content(id), o, &quote::content(text));
        lines.push(marker.trim_start_matches('\n').to_string());
        for s in constraint_sentences(text) {
            let line = format!("{CONSTRAINT_PREFIX}{}", quote::content(s));
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    flush(&mut lines, &mut run);
    // media of folded user rows become placeholders (a summary is text)
    let mut attachments: Vec<String> = Vec::new();
    for (o, m) in rows {
        if m.role != crate::Role::User || m.is_summary() {
            continue;
        }
        for b in &m.blocks {
            if let crate::transcript::Block::Media { kind, bytes, .. } = b {
                let kind = match kind {
                    crate::transcript::MediaKind::Image => "image",
                    crate::transcript::MediaKind::Video => "video",
                    crate::transcript::MediaKind::Audio => "audio",
                    crate::transcript::MediaKind::Document => "document",
                };
                attachments.push(format!("{ATTACHMENT_PREFIX}{}, offset {o}): {kind}, {bytes} bytes", quote::content(&m.id)));
            }
        }
    }
    let skip = attachments.len().saturating_sub(MAX_ATTACHMENT_LINES);
    if skip > 0 {
        lines.push(format!("{ATTACHMENT_PREFIX}earlier ones): {skip} more attachments, named in memory"));
    }
    lines.extend(attachments.into_iter().skip(skip));
    lines
}

/// Placeholders named one by one; older ones are counted (see [`user_text_floor`]).
const MAX_ATTACHMENT_LINES: usize = 20;

/// Starts of the plain one-line user-text lines [`user_text_floor`] writes (a whole quote
/// is written as a length-prefixed item instead), carried by later summaries.
pub const FLOOR_LINE_PREFIXES: [&str; 4] = [CLIPPED_PREFIX, CONSTRAINT_PREFIX, ATTACHMENT_PREFIX, UNQUOTED_PREFIX];

/// Where the next line of the deterministic tail starts, for every prefix the tail
/// writes (user lines, the ledger, the artifact index).
const TAIL_PREFIXES: [&str; 7] = [VERBATIM_PREFIX, CLIPPED_PREFIX, CONSTRAINT_PREFIX, ATTACHMENT_PREFIX, UNQUOTED_PREFIX, "Calls already run", "Artifacts: "];

/// The user-text lines of an existing summary's deterministic tail (those written by
/// [`user_text_floor`], carried by later summaries and rollups), in order. `marker` is
/// the tail's start marker; a summary without it has none.
pub fn floor_lines_of(summary: &str, marker: &str) -> Vec<String> {
    let Some(p) = summary.find(marker) else { return Vec::new() };
    let tail = summary.get(p + marker.len()..).unwrap_or("");
    // cut before every "\n<prefix>"
    let mut cuts: Vec<usize> = Vec::new();
    for (i, _) in tail.match_indices('\n') {
        let rest = tail.get(i + 1..).unwrap_or("");
        if TAIL_PREFIXES.iter().any(|x| rest.starts_with(x)) {
            cuts.push(i);
        }
    }
    let mut out = Vec::new();
    for (k, &c) in cuts.iter().enumerate() {
        let end = cuts.get(k + 1).copied().unwrap_or(tail.len());
        let line = tail.get(c + 1..end).unwrap_or("");
        if [VERBATIM_PREFIX, CLIPPED_PREFIX, CONSTRAINT_PREFIX, ATTACHMENT_PREFIX, UNQUOTED_PREFIX].iter().any(|x| line.starts_with(x)) {
            out.push(line.to_string());
        }
    }
    out
}

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
    /// Byte offsets (relative to `range[0]`) of the block's non-whitespace chars.
    pub solid: Vec<usize>,
}

fn lost(offset: usize, what: &str) -> Error {
    Error::new(ErrorCode::InvalidRewrite, format!("user_text_lost: {what} (source offset {offset})"))
}

/// Checks N-1 on one rewrite: `source` the rows the rewrite was computed from, `kept`
/// which of them it retains (by source offset), `summary` the text of every summary
/// row the rewrite writes, joined. Returns the blocks the summary clipped (for
/// [`check_memory`]), or `invalid_rewrite` whose message starts `user_text_lost:` and
/// names the source offset and what is missing.
pub fn check(source: &[Message], kept: &[bool], summary: &str) -> Result<Vec<Clipped>> {
    let (first, newest) = first_and_newest(source);
    let mut hay = Haystack::new(summary);
    let mut clipped = Vec::new();
    // tier-4 runs named by their first and last message ids (ids of this source only:
    // a line carried from an older summary names ids no longer here)
    let mut unquoted: Vec<(usize, usize)> = Vec::new();
    for line in summary.lines().filter_map(|l| l.strip_prefix(UNQUOTED_PREFIX)) {
        let Some(rest) = line.strip_prefix("messages ") else { continue };
        let Some((a, rest)) = rest.split_once(" to ") else { continue };
        let b = rest.rsplit_once(" (").map_or(rest, |(b, _)| b);
        let named = |id: &str| source.iter().position(|m| quote::content(&m.id) == id);
        if let (Some(x), Some(y)) = (named(a), named(b)) {
            unquoted.push((x.min(y), x.max(y)));
        }
    }
    for (o, m) in source.iter().enumerate() {
        if kept.get(o).copied().unwrap_or(true) {
            continue;
        }
        for t in m.user_texts() {
            // quoted verbatim: as the floor writes it (quoted as data), or as is
            let qt = quote::content(t);
            if hay.contains(&qt) || hay.contains(t) {
                continue;
            }
            if Some(o) == first {
                return Err(lost(o, "the first task is neither kept nor quoted verbatim in the summary"));
            }
            if Some(o) == newest {
                return Err(lost(o, "the newest request is neither kept nor quoted verbatim in the summary"));
            }
            let marker = format!("{CLIPPED_PREFIX}{}, offset {o}): ", quote::content(&m.id));
            let Some(at) = hay.find(&marker) else {
                if unquoted.iter().any(|&(x, y)| x <= o && o <= y) {
                    clipped.push(clipped_of(o, m, t)?);
                    continue;
                }
                return Err(lost(o, "a user text block is neither kept, quoted verbatim nor clipped with a marker in the summary"));
            };
            let head = summary.get(at + marker.len()..).unwrap_or("");
            let head = head.split(" [+").next().unwrap_or("");
            if !qt.starts_with(head) {
                return Err(lost(o, "the clipped quote of a user text block is not its head"));
            }
            if let Some(s) = constraint_sentences(t).into_iter().find(|s| !hay.contains(&quote::content(s)) && !hay.contains(s)) {
                let n = s.len().min(60);
                return Err(lost(o, &format!("the user constraint sentence {:?} is not quoted verbatim", s.get(..floor_boundary(s, n)).unwrap_or(""))));
            }
            clipped.push(clipped_of(o, m, t)?);
        }
    }
    Ok(clipped)
}

/// Substring search in one summary text, answering exactly as `str::contains` /
/// `str::find` do, at a cost that stays linear over the many needles of one check
/// (issue 15: with one full scan per needle, and three for a text the summary only
/// names, the N-1 check was a quarter of a 10 MB compaction):
/// - a needle absent from the text is usually told so without a scan: a bitset holds a
///   hash of every 4-byte window of the text, and a needle with a window whose bit is
///   clear cannot occur in it;
/// - the floor quotes texts in source order, the order they are checked in, so a search
///   starts where the previous hit ended, and scans the whole text only on a miss there.
struct Haystack<'s> {
    text: &'s str,
    /// Bit `h(w)` set for every 4-byte window `w` of `text`; empty for a short text.
    bits: Vec<u64>,
    /// log2 of the number of bits.
    order: u32,
    /// Where the last hit ended.
    cursor: usize,
}

impl<'s> Haystack<'s> {
    fn new(text: &'s str) -> Haystack<'s> {
        let n = text.len();
        if n < 4096 {
            return Haystack { text, bits: Vec::new(), order: 0, cursor: 0 };
        }
        // about 8 bits per window: few collisions, so most absent needles are caught
        let order = (n.saturating_mul(8)).next_power_of_two().trailing_zeros().clamp(16, 27);
        let mut bits = vec![0u64; 1usize << (order - 6)];
        for w in text.as_bytes().windows(4) {
            let h = Self::hash(w, order);
            if let Some(word) = bits.get_mut(h >> 6) {
                *word |= 1 << (h & 63);
            }
        }
        Haystack { text, bits, order, cursor: 0 }
    }

    fn hash(w: &[u8], order: u32) -> usize {
        let x = w.iter().take(4).fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
        (u64::from(x).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - order)) as usize
    }

    /// False only when `needle` cannot occur in the text (one of its windows is absent).
    fn may_contain(&self, needle: &str) -> bool {
        let b = needle.as_bytes();
        if b.len() > self.text.len() {
            return false;
        }
        if self.bits.is_empty() || b.len() < 4 {
            return true;
        }
        let last = b.len() - 4;
        // up to 16 windows spread over the needle
        let step = (last / 15).max(1);
        (0..=last).step_by(step).chain(std::iter::once(last)).all(|i| {
            let h = Self::hash(b.get(i..i + 4).unwrap_or(&[]), self.order);
            self.bits.get(h >> 6).is_some_and(|word| word & (1 << (h & 63)) != 0)
        })
    }

    /// `self.text.find(needle)` (the first occurrence: the whole text is searched).
    fn find(&self, needle: &str) -> Option<usize> {
        if !self.may_contain(needle) {
            return None;
        }
        self.text.find(needle)
    }

    /// `self.text.contains(needle)`.
    fn contains(&mut self, needle: &str) -> bool {
        if !self.may_contain(needle) {
            return false;
        }
        let from = self.cursor.min(self.text.len());
        match self.text.get(from..).and_then(|tail| tail.find(needle)) {
            Some(p) => {
                self.cursor = from + p + needle.len();
                true
            }
            None => self.text.contains(needle),
        }
    }
}

fn clipped_of(o: usize, m: &Message, t: &str) -> Result<Clipped> {
    let joined = m.text();
    let Some(at) = joined.find(t) else {
        return Err(lost(o, "a clipped user text block is not in its message's text"));
    };
    let solid = t.char_indices().filter(|(_, c)| !c.is_whitespace()).map(|(i, _)| i).collect();
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
    for c in clipped {
        let ranges = by_id.get(c.message_id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let covered = c.solid.iter().all(|&i| ranges.iter().any(|r| r[0] <= c.range[0] + i && c.range[0] + i < r[1]));
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
    fn n1_haystack_answers_as_str_contains_and_find() {
        // a text long enough for the window filter, with quotes in order and repeats
        let mut text = String::new();
        for i in 0..400 {
            text.push_str(&format!("User request (verbatim): row {i} asks for the report é{i}\n"));
        }
        let needles: Vec<String> = (0..400)
            .flat_map(|i| [format!("row {i} asks"), format!("row {} asks", 399 - i), format!("absent {i}"), format!("é{i}\n"), "ab".into(), String::new()])
            .collect();
        let mut hay = Haystack::new(&text);
        assert!(!hay.bits.is_empty());
        for n in &needles {
            assert_eq!(hay.contains(n), text.contains(n.as_str()), "{n:?}");
            assert_eq!(hay.find(n), text.find(n.as_str()), "{n:?}");
        }
        let short = Haystack::new("tiny");
        assert_eq!(short.find("in"), Some(1));
    }

    #[test]
    fn n1_constraint_sentences_found_on_word_boundaries() {
        let t = "Fix the parser. You must keep the API stable! Mustard is fine.\nNever push to main? ok";
        assert_eq!(constraint_sentences(t), vec!["You must keep the API stable!", "Never push to main?"]);
        assert_eq!(constraint_sentences("Please don't touch tests"), vec!["Please don't touch tests"]);
        assert!(constraint_sentences("nothing here").is_empty());
    }

}
