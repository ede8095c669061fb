//! Helpers shared by the memory suites (tests/memory.rs, tests/memory_retrieval.rs):
//! rows, blocks and records built in one place.
#![allow(dead_code)]

use context_compactor::memory::{Hit, MemoryRecord, RecordKind};
use context_compactor::transcript::{Block, Message, Provenance, RawJson, Role};
use serde_json::Value;

/// A row with default provenance and no raw JSON.
pub fn msg(id: &str, role: Role, blocks: Vec<Block>) -> Message {
    Message { id: id.to_string(), role, provenance: Provenance::default(), blocks, raw: RawJson::from_value(&Value::Null), bytes: 0 }
}

pub fn text(t: &str) -> Block {
    Block::Text { text: t.to_string() }
}

/// A tool call with `arguments` as written (JSON text).
pub fn call(id: &str, name: &str, arguments: &str) -> Block {
    Block::ToolCall { id: id.to_string(), name: name.to_string(), arguments: arguments.to_string() }
}

/// A successful, text-only tool result answering `call_id`.
pub fn result(call_id: &str, body: &str) -> Block {
    Block::ToolResult { call_id: call_id.to_string(), name: None, text: body.to_string(), is_error: false, media: Vec::new(), media_bytes: 0 }
}

/// An assistant narrative record with the given content in `session`, id
/// `<session>-<n>`, source offset `n`.
pub fn rec(session: &str, n: usize, content: &str) -> MemoryRecord {
    MemoryRecord {
        id: format!("{session}-{n}"),
        session: session.to_string(),
        message_id: format!("msg-{n}"),
        role: Role::Assistant,
        source_range: [n, n],
        byte_range: [0, content.len()],
        kind: RecordKind::Narrative,
        tool_name: None,
        call_id: None,
        handle: None,
        mentions: Vec::new(),
        context: None,
        content: content.to_string(),
    }
}

/// The record ids of `hits`, best first.
pub fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.record.id.clone()).collect()
}
