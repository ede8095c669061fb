//! Semantic memory (M-1..M-4): projection of discarded rows into session-scoped
//! records, a deterministic embedded embedder and index, and the agent-facing `recall`
//! tool.
//!
//! Flow: a compaction's rewrite names the discarded source offsets and the evicted
//! tool-output bodies; [`project()`] turns them into a [`MemoryBatch`] of
//! [`MemoryRecord`]s (M-1). The host either stores and embeds them itself (its own
//! embedder, [`Index::with_dimension`] + [`Index::add_with_vectors`], ranked by BM25 and
//! its vectors fused, [`Index::search_with`]) or hands them to
//! the embedded [`Index`] (M-3), which keeps an inverted index of each session's terms
//! ([`index_terms`]: tokens plus whole paths and identifiers) and ranks by BM25 fused
//! with [`embed`]'s hashed, IDF-weighted bag-of-words vectors. The agent reads memory back through the [`recall()`] tool (M-2), which is
//! always scoped to one session; administrative code pages a scope with
//! [`Index::enumerate`] and removes it with [`Index::drop_scope`] (M-4).
//!
//! Everything here is pure: no IO, no clocks, no randomness. Same input, same bytes.

pub mod embed;
pub mod index;
pub mod ivf;
pub mod mentions;
pub mod project;
pub mod recall;

pub use embed::{tokenize, DEFAULT_DIMENSION};
pub use index::{AddReport, EmbedderKind, Hit, Index, Page, Ranking, RecallOptions, CANDIDATES, CONTEXT_WEIGHT, HOST_VECTOR_ALPHA, MAX_DIMENSION, SNAPSHOT_VERSION, SYNONYM_WEIGHT, VECTOR_WEIGHT};
pub use mentions::{index_terms, mentions, MAX_MENTIONS};
pub use project::{instruction_records, project, render_arguments, try_project, try_project_consuming, try_project_user_text, EvictedBody, CHUNK_BYTES, CONTEXT_BYTES, CONTEXT_PART_BYTES};
pub use recall::{
    effective_limit, recall, recall_from_arguments, recall_from_hits, recall_tool_definition, recall_with, RecallHit,
    RecallResult, DEFAULT_LIMIT, MAX_LIMIT, RECALL_TOOL_NAME,
};

use crate::transcript::Role;
use serde::{Deserialize, Serialize};

/// What a record was projected from.
///
/// Serialized as `"narrative"`, `"tool_output"`, `"tool_input"` or `"instruction"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordKind {
    /// User or assistant text of a discarded conversational message.
    Narrative,
    /// (A chunk of) a tool result body that was evicted or discarded.
    ToolOutput,
    /// (A chunk of) the arguments of a tool call on a discarded row, rendered one
    /// top-level argument a line (`key: value`, strings unquoted).
    ToolInput,
    /// (A chunk of) an instruction document of a discarded injected-context row
    /// (CLAUDE.md, AGENTS.md, a skill body) that the summary does not re-attach whole
    /// (N-6): its `mentions` start with the row's message id, the handle the summary
    /// names it by, so `recall` with that id finds it.
    Instruction,
}

/// One memory record (M-1): a chunk of discarded context, scoped to one session.
///
/// JSON shape (camelCase):
/// `{ id, session, messageId, role, sourceRange: [start, end], byteRange: [start, end],
///    kind: "narrative" | "tool_output" | "tool_input" | "instruction", toolName?, callId?, handle?,
///    mentions?: [string], content }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryRecord {
    /// Deterministic id, `mem-` + 16 lowercase hex digits (FNV-1a over the session,
    /// kind, source message, call id, chunk position and content).
    pub id: String,
    /// The owning session (scope). Recall never crosses it (M-4).
    pub session: String,
    /// Stable id of the source message (T-4).
    pub message_id: String,
    /// Provider role of the source message.
    pub role: Role,
    /// Inclusive range of source message offsets `[start, end]` (0-based positions in
    /// the transcript the compaction read). Today always one message: `start == end`.
    pub source_range: [usize; 2],
    /// Half-open UTF-8 byte range `[start, end)` of `content` inside the source text
    /// (the message's joined text, or the tool body). Both ends sit on char boundaries.
    pub byte_range: [usize; 2],
    /// What the record was projected from.
    pub kind: RecordKind,
    /// Tool name, for tool output and tool input, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Tool-call id: the call the output answered (tool output) or the call itself
    /// (tool input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Artifact handle (`artifact#N`) holding the full output in the host store (M-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// File paths, URLs and identifiers `content` names ([`mentions()`]), first seen
    /// first, at most [`MAX_MENTIONS`]; omitted from JSON when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
    /// What led to the record, at most [`CONTEXT_BYTES`] UTF-8 bytes, indexed at
    /// [`CONTEXT_WEIGHT`] of a content term (M-3) and never returned as the passage:
    /// for a tool output, the text of the row that made its call (what the agent said
    /// it was doing) and the call's argument values (one a line); for a tool call's
    /// arguments, the text of its row and the newest user text before it; for
    /// assistant text, the newest user text before it. Each part at most
    /// [`project::CONTEXT_PART_BYTES`] bytes, joined by a newline. Omitted from JSON
    /// when absent (records of earlier versions have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The chunk text (at most [`CHUNK_BYTES`] UTF-8 bytes, trimmed of outer
    /// whitespace).
    pub content: String,
}

/// The result of one projection (M-1): every record of one session, in source order
/// (source offset, then narrative before tool output, then call id, then byte offset).
///
/// JSON shape: `{ session, records: [MemoryRecord...] }`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryBatch {
    /// The session every record belongs to.
    pub session: String,
    /// The projected records.
    pub records: Vec<MemoryRecord>,
}
