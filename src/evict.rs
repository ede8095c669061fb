//! Eviction (E-1..E-5): on a *copy* of the folded rows, every tool-result body over
//! `evict_tool_result_min_bytes` (measured on the body alone, E-3) becomes a recall
//! handle `artifact#N` when the message has a stamped `artifact_ref` (recoverable), or
//! a head/tail clip that states what it omitted (unrecoverable, E-4). Only the body is
//! replaced: the tool name, status, error flag and metadata (the header) stay (E-2).
//! No largest-first ordering: the floor is the cutoff.

use crate::config::Config;
use crate::error::Result;
use crate::formats::{set_result_body_of, with_result_body_of, Format};
use crate::transcript::{Block, Message};
use serde::Serialize;
use std::collections::HashMap;

/// What eviction did to one tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evicted {
    /// Source offset of the message carrying the result.
    pub offset: usize,
    /// Stable id (T-4) of that message.
    pub message_id: String,
    /// The id of the call the result answers.
    pub call_id: String,
    /// The tool's name, from the result or its call.
    pub tool_name: Option<String>,
    /// `artifact#N` when recoverable.
    pub handle: Option<String>,
    /// True when the body became a head/tail clip (unrecoverable).
    pub clipped: bool,
    /// Whole body, UTF-8 bytes.
    pub body_bytes: usize,
    /// What the copy keeps, UTF-8 bytes.
    pub kept_bytes: usize,
}

/// A full body that eviction replaced (for memory projection, M-1): the same type the
/// projection reads, so the engine hands its bodies over without a copy.
pub use crate::memory::EvictedBody;

/// Largest index <= `i` on a char boundary of `s` (E-5).
pub fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Smallest index >= `i` on a char boundary of `s` (E-5).
pub fn ceil_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Head/tail clip of `body` keeping about `head` + `tail` UTF-8 bytes, cut on character
/// boundaries (never half a UTF-8 sequence, so never a lone UTF-16 surrogate), with a
/// marker stating the bytes and characters omitted (E-5).
pub fn clip(body: &str, head: usize, tail: usize) -> String {
    if body.len() <= head.saturating_add(tail) {
        return body.to_string();
    }
    clip_exact(body, head, tail)
}

/// Clip for eviction: like [`clip`], but a body not longer than `head + tail` still
/// shrinks (to a quarter head, an eighth tail), so every evicted body gets smaller (E-3).
pub fn evict_clip(body: &str, head: usize, tail: usize) -> String {
    if body.len() <= head.saturating_add(tail) {
        return clip_exact(body, body.len() / 4, body.len() / 8);
    }
    clip_exact(body, head, tail)
}

fn clip_exact(body: &str, head: usize, tail: usize) -> String {
    let h = floor_boundary(body, head);
    let t = ceil_boundary(body, body.len().saturating_sub(tail)).max(h);
    let omitted = &body[h..t];
    format!(
        "{}\n[... clipped: {} bytes ({} characters) omitted; unrecoverable ...]\n{}",
        &body[..h],
        omitted.len(),
        omitted.chars().count(),
        &body[t..]
    )
}

/// The first `max` UTF-8 bytes of `s` cut on a character boundary, with `…` appended
/// when something was cut (for one-line mentions, not for evicted bodies).
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", &s[..floor_boundary(s, max)])
}

/// Tool names by call id, over the whole transcript.
pub fn tool_names(messages: &[Message]) -> HashMap<String, String> {
    let mut names = HashMap::new();
    for m in messages {
        for b in &m.blocks {
            if let Block::ToolCall { id, name, .. } = b {
                names.insert(id.clone(), name.clone());
            }
        }
    }
    names
}

/// Evicts over a copy of the rows at `offsets`. Returns the copies (in `offsets`
/// order), what was done, and the full bodies that were replaced.
pub fn evict(format: Format, messages: &[Message], offsets: &[usize], config: &Config) -> Result<(Vec<Message>, Vec<Evicted>, Vec<EvictedBody>)> {
    evict_with(format, messages, offsets, config, &HashMap::new())
}

/// Like [`evict`], with artifact handles the host store just issued (E-6), keyed by
/// (source offset, index of the tool result within that message). A result with a
/// handle there (or a message with a stamped `artifact_ref`) becomes that handle; the
/// copy is stamped with the message's first handle.
pub fn evict_with(
    format: Format,
    messages: &[Message],
    offsets: &[usize],
    config: &Config,
    stored: &HashMap<(usize, usize), String>,
) -> Result<(Vec<Message>, Vec<Evicted>, Vec<EvictedBody>)> {
    let sparse = evict_sparse(format, messages, offsets, config, stored)?;
    let mut edited = sparse.copies.into_iter().peekable();
    let mut copies = Vec::with_capacity(offsets.len());
    for (k, &off) in offsets.iter().enumerate() {
        match edited.next_if(|(i, _)| *i == k) {
            Some((_, m)) => copies.push(m),
            None => {
                if let Some(src) = messages.get(off) {
                    copies.push(src.clone());
                }
            }
        }
    }
    Ok((copies, sparse.evicted, sparse.bodies))
}

/// What [`evict_sparse`] returns.
#[derive(Debug, Clone, Default)]
pub struct SparseEviction {
    /// Edited copies only: (index into `offsets`, the copy), ascending. A folded row
    /// that is not listed was not changed; read it from the source.
    pub copies: Vec<(usize, Message)>,
    /// One report per evicted result, in row order.
    pub evicted: Vec<Evicted>,
    /// The full bodies replaced, in the same order (for memory projection, M-1).
    pub bodies: Vec<EvictedBody>,
}

/// [`evict_with`] without copying the rows it leaves unchanged: the same edits, reports
/// and bodies, in the same order, but only the edited rows are copied.
pub fn evict_sparse(format: Format, messages: &[Message], offsets: &[usize], config: &Config, stored: &HashMap<(usize, usize), String>) -> Result<SparseEviction> {
    // Tool names by call id, built on first need (a result without its own name).
    let mut names: Option<HashMap<String, String>> = None;
    let mut out = SparseEviction::default();
    for (k, &off) in offsets.iter().enumerate() {
        let Some(src) = messages.get(off) else { continue };
        let mut copy: Option<Message> = None;
        let results = src.blocks.iter().filter_map(|b| match b {
            Block::ToolResult { call_id, name, text, is_error, .. } => Some((call_id, name, text, *is_error)),
            _ => None,
        });
        for (nth, (call_id, name, text, was_error)) in results.enumerate() {
            if text.len() <= config.evict_tool_result_min_bytes {
                continue;
            }
            let tool_name = match name {
                Some(n) => Some(n.clone()),
                None => names.get_or_insert_with(|| tool_names(messages)).get(call_id).cloned(),
            };
            let handle = stored.get(&(off, nth)).cloned().or_else(|| src.provenance.trusted_ref().map(str::to_string));
            let replacement = match &handle {
                Some(h) => h.clone(),
                None => evict_clip(text, config.clip_head_bytes, config.clip_tail_bytes),
            };
            // Y-5: the edited row is read with its call's tool name, as a decode reads it
            match copy.as_mut() {
                Some(c) => set_result_body_of(format, c, nth, &replacement, tool_name.as_deref())?,
                None => copy = Some(with_result_body_of(format, src, nth, &replacement, tool_name.as_deref())?),
            }
            // E-2: the header stays. Where the format reads failure from the body (OpenAI
            // chat, Responses), a handle alone reads as success: the copy keeps the
            // original's status (the copy only renders the summarizer's view; it is never
            // stored).
            if was_error {
                if let Some(Block::ToolResult { is_error, .. }) = copy.as_mut().and_then(|c| c.blocks.iter_mut().filter(|b| matches!(b, Block::ToolResult { .. })).nth(nth)) {
                    *is_error = true;
                }
            }
            out.evicted.push(Evicted {
                offset: off,
                message_id: src.id.clone(),
                call_id: call_id.clone(),
                tool_name: tool_name.clone(),
                handle: handle.clone(),
                clipped: handle.is_none(),
                body_bytes: text.len(),
                kept_bytes: replacement.len(),
            });
            out.bodies.push(EvictedBody { offset: off, call_id: call_id.clone(), tool_name, handle, body: text.clone() });
        }
        if let Some(mut c) = copy {
            if c.provenance.trusted_ref().is_none() {
                // an untrusted input ref (issue 14) is replaced by the handle stored now, if any
                if let Some(h) = (0..c.blocks.len()).find_map(|nth| stored.get(&(off, nth)).cloned()) {
                    c.provenance.artifact_ref = Some(h);
                    c.provenance.ref_untrusted = false;
                }
            }
            out.copies.push((k, c));
        }
    }
    Ok(out)
}
