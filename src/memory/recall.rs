//! The agent-facing `recall` tool (M-2): its definition per provider format, and the
//! call that answers it from one session's memory.

use super::index::{Hit, Index, RecallOptions};
#[cfg(doc)]
use super::index::Ranking;
use super::RecordKind;
use crate::error::{Error, ErrorCode, Result};
use serde::Serialize;
use serde_json::{json, Value};

/// Name of the tool the agent calls.
pub const RECALL_TOOL_NAME: &str = "recall";
/// Hits returned when the call gives no `limit`.
pub const DEFAULT_LIMIT: usize = 5;
/// Most hits one call returns; larger limits are clamped to it.
pub const MAX_LIMIT: usize = 20;

const DESCRIPTION: &str = "Search memory of this conversation's earlier context that was compacted away \
(discarded messages and evicted tool outputs). Returns the most relevant passages with a score, the \
source message id and offsets, and an artifact handle (artifact#N) when the full tool output is stored.";

fn json_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What to look for, in natural language or keywords."
            },
            "limit": {
                "type": "integer",
                "description": "Maximum number of passages to return (1-20, default 5).",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "default": DEFAULT_LIMIT
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// Gemini's OpenAPI-subset schema (upper-case types, no `additionalProperties`).
fn gemini_schema() -> Value {
    json!({
        "type": "OBJECT",
        "properties": {
            "query": {
                "type": "STRING",
                "description": "What to look for, in natural language or keywords."
            },
            "limit": {
                "type": "INTEGER",
                "description": "Maximum number of passages to return (1-20, default 5).",
                "minimum": 1,
                "maximum": MAX_LIMIT
            }
        },
        "required": ["query"]
    })
}

/// The `recall` tool definition in a provider's tool shape (M-2). Params: `query`
/// (string, required) and `limit` (integer 1..=20, default 5).
///
/// - `openai-chat`: `{ type: "function", function: { name, description, parameters } }`
///   (an entry of `tools[]`).
/// - `openai-responses`: `{ type: "function", name, description, parameters, strict: false }`.
/// - `anthropic`: `{ name, description, input_schema }`.
/// - `gemini`: `{ name, description, parameters }` (an entry of
///   `tools[].functionDeclarations`, OpenAPI-subset schema with upper-case types).
/// - `ai-sdk`: `{ name, description, inputSchema }` (JSON schema).
///
/// Underscore spellings (`openai_chat`, ...) are accepted. Any other name gives
/// `Value::Null`.
pub fn recall_tool_definition(format: &str) -> Value {
    match format {
        "openai-chat" | "openai_chat" | "openai" => json!({
            "type": "function",
            "function": {
                "name": RECALL_TOOL_NAME,
                "description": DESCRIPTION,
                "parameters": json_schema()
            }
        }),
        "openai-responses" | "openai_responses" => json!({
            "type": "function",
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "parameters": json_schema(),
            "strict": false
        }),
        "anthropic" => json!({
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "input_schema": json_schema()
        }),
        "gemini" => json!({
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "parameters": gemini_schema()
        }),
        "ai-sdk" | "ai_sdk" => json!({
            "name": RECALL_TOOL_NAME,
            "description": DESCRIPTION,
            "inputSchema": json_schema()
        }),
        _ => Value::Null,
    }
}

/// One recalled passage.
///
/// JSON shape (camelCase): `{ id, content, score, messageId, role, sourceRange: [start,
/// end], kind, toolName?, callId?, handle?, mentions? }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallHit {
    /// Memory record id.
    pub id: String,
    /// The passage text.
    pub content: String,
    /// Relevance in `(0, 1]`, higher is better (the index's [`Ranking`] score, or a
    /// host store's own score).
    pub score: f32,
    /// Stable id of the source message (T-4).
    pub message_id: String,
    /// Provider role of the source message (`user`, `assistant`, `tool`, `system`).
    pub role: crate::transcript::Role,
    /// Inclusive source message offsets `[start, end]`.
    pub source_range: [usize; 2],
    /// `narrative` or `tool_output`.
    pub kind: RecordKind,
    /// The tool's name, for `tool_output` records when known (JSON `toolName`, omitted
    /// when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// The tool call's id, for `tool_output` and `tool_input` records (JSON `callId`,
    /// omitted when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// Artifact handle (`artifact#N`); the host resolves it through its store (M-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    /// Paths and identifiers the passage mentions (omitted when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
}

/// The answer to one `recall` call.
///
/// JSON shape: `{ query, limit, hits: [RecallHit...] }`; `limit` is the effective one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallResult {
    /// The query as given.
    pub query: String,
    /// Effective limit after defaulting and clamping (1..=20).
    pub limit: usize,
    /// Best first; at most `limit`.
    pub hits: Vec<RecallHit>,
}

/// The limit a recall uses: `None` -> [`DEFAULT_LIMIT`] (5); any value is clamped to
/// `1..=`[`MAX_LIMIT`] (20) (M-2).
pub fn effective_limit(limit: Option<usize>) -> usize {
    limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

fn result(query: &str, limit: usize, hits: Vec<Hit>) -> RecallResult {
    RecallResult {
        query: query.to_string(),
        limit,
        hits: hits
            .into_iter()
            .map(|h| RecallHit {
                id: h.record.id,
                content: h.record.content,
                score: h.score,
                message_id: h.record.message_id,
                role: h.record.role,
                source_range: h.record.source_range,
                kind: h.record.kind,
                tool_name: h.record.tool_name,
                call_id: h.record.call_id,
                handle: h.record.handle,
                mentions: h.record.mentions,
            })
            .collect(),
    }
}

/// Answers a `recall` call from `session`'s memory only (M-2, M-4) with the embedded
/// embedder and index ([`Ranking::Fused`]: BM25 and the embedded vectors, fused).
/// `limit`: `None` -> 5; clamped to 1..=20. A host-vector index yields no hits (use
/// [`recall_with`] with the query's vector).
pub fn recall(index: &Index, session: &str, query: &str, limit: Option<usize>) -> RecallResult {
    let limit = effective_limit(limit);
    result(query, limit, index.search(session, query, limit))
}

/// Answers a `recall` call with `options` ([`RecallOptions`]: ranking, the host's query
/// vector, `alpha`, `exact`; see [`Index::search_with`]) from `session`'s memory only
/// (M-2, M-4). Limit as in [`recall`]. Fails with `memory_failed` as
/// [`Index::search_with`] (a host-vector index without a vector, a wrong dimension, a
/// zero vector, `alpha` outside `[0, 1]`).
pub fn recall_with(index: &Index, session: &str, query: &str, limit: Option<usize>, options: &RecallOptions<'_>) -> Result<RecallResult> {
    let limit = effective_limit(limit);
    Ok(result(query, limit, index.search_with(session, query, limit, options)?))
}

/// Answers a `recall` call from hits a host store found (M-2, M-4): keeps only hits
/// whose record belongs to `session` (a store that returns another session's records
/// cannot leak them), keeps the best hit of each record id, orders best first (score
/// descending, then id), and cuts to the effective limit (`None` -> 5, clamped to
/// 1..=20). Scores are the store's own (higher is better) and are passed through.
pub fn recall_from_hits(session: &str, query: &str, limit: Option<usize>, hits: Vec<Hit>) -> RecallResult {
    let limit = effective_limit(limit);
    let mut own: Vec<Hit> = hits.into_iter().filter(|h| h.record.session == session).collect();
    crate::sorted::sort_by(&mut own, |a, b| b.score.total_cmp(&a.score).then_with(|| a.record.id.cmp(&b.record.id)));
    let mut seen = crate::sorted::SortedSet::new();
    let mut kept: Vec<Hit> = own.into_iter().filter(|h| seen.insert(h.record.id.clone())).collect();
    kept.truncate(limit);
    result(query, limit, kept)
}

/// Answers a `recall` tool call from its JSON arguments `{ query, limit? }` (embedded
/// embedder). `limit` may be any number (rounded down, clamped to 1..=20) or null.
/// Fails with `memory_failed` when `arguments` is not an object with a string `query`.
pub fn recall_from_arguments(index: &Index, session: &str, arguments: &Value) -> Result<RecallResult> {
    let bad = |m: &str| Error::new(ErrorCode::MemoryFailed, format!("recall arguments: {m}"));
    let obj = arguments.as_object().ok_or_else(|| bad("expected an object"))?;
    let query = obj.get("query").and_then(Value::as_str).ok_or_else(|| bad("query must be a string"))?;
    let limit = match obj.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let n = v.as_f64().ok_or_else(|| bad("limit must be a number"))?;
            if !n.is_finite() {
                return Err(bad("limit must be finite"));
            }
            // Saturating float -> int cast; negatives become 0 and then clamp to 1.
            Some(n.floor().max(0.0).min(MAX_LIMIT as f64) as usize)
        }
    };
    Ok(recall(index, session, query, limit))
}
