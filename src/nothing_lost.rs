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

use crate::error::{Error, ErrorCode, Result};
use crate::evict::floor_boundary;
use crate::memory::{MemoryBatch, RecordKind};
use crate::transcript::Message;

/// Prefix of the marker of a clipped user text block (the floor writes it,
/// [`crate::summarize::floor::clipped_marker`]).
pub use crate::summarize::floor::CLIPPED_PREFIX;

/// The constraint sentences of a text (N-1), verbatim, in order: one rule for the
/// summary's floor and for this check ([`crate::summarize::facts::constraint_sentences`]).
pub use crate::summarize::facts::constraint_sentences;

/// The first task and the newest request of a transcript: the first and the last row
/// holding user text ([`Message::has_user_text`]), as offsets.
pub fn first_and_newest(messages: &[Message]) -> (Option<usize>, Option<usize>) {
    (messages.iter().position(Message::has_user_text), messages.iter().rposition(Message::has_user_text))
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
    let mut clipped = Vec::new();
    for (o, m) in source.iter().enumerate() {
        if kept.get(o).copied().unwrap_or(true) {
            continue;
        }
        for t in m.user_texts() {
            if summary.contains(t) {
                continue;
            }
            if Some(o) == first {
                return Err(lost(o, "the first task is neither kept nor quoted verbatim in the summary"));
            }
            if Some(o) == newest {
                return Err(lost(o, "the newest request is neither kept nor quoted verbatim in the summary"));
            }
            let marker = format!("{CLIPPED_PREFIX}{}, offset {o}): ", m.id);
            let Some(at) = summary.find(&marker) else {
                return Err(lost(o, "a user text block is neither kept, quoted verbatim nor clipped with a marker in the summary"));
            };
            let head = summary.get(at + marker.len()..).unwrap_or("");
            let head = head.split(" [+").next().unwrap_or("");
            if !t.starts_with(head) {
                return Err(lost(o, "the clipped quote of a user text block is not its head"));
            }
            if let Some(s) = constraint_sentences(t).into_iter().find(|s| !summary.contains(s)) {
                let n = s.len().min(60);
                return Err(lost(o, &format!("the user constraint sentence {:?} is not quoted verbatim", s.get(..floor_boundary(s, n)).unwrap_or(""))));
            }
            let joined = m.text();
            let Some(at) = joined.find(t) else {
                return Err(lost(o, "a clipped user text block is not in its message's text"));
            };
            let solid = t.char_indices().filter(|(_, c)| !c.is_whitespace()).map(|(i, _)| i).collect();
            clipped.push(Clipped { offset: o, message_id: m.id.clone(), range: [at, at + t.len()], solid });
        }
    }
    Ok(clipped)
}

/// Checks that the memory batch holds every clipped block whole (N-1): every
/// non-whitespace byte of the block lies in a narrative record of its message (the
/// records' `byteRange` index the message's joined text). Errors: `invalid_rewrite`
/// whose message starts `user_text_lost:` and names the source offset.
pub fn check_memory(clipped: &[Clipped], batch: &MemoryBatch) -> Result<()> {
    for c in clipped {
        let ranges: Vec<[usize; 2]> = batch.records.iter().filter(|r| r.kind == RecordKind::Narrative && r.message_id == c.message_id).map(|r| r.byte_range).collect();
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
    fn n1_constraint_sentences_found_on_word_boundaries() {
        let t = "Fix the parser. You must keep the API stable! Mustard is fine.\nNever push to main? ok";
        assert_eq!(constraint_sentences(t), vec!["You must keep the API stable!", "Never push to main?"]);
        assert_eq!(constraint_sentences("Please don't touch tests"), vec!["Please don't touch tests"]);
        assert!(constraint_sentences("nothing here").is_empty());
    }

}
