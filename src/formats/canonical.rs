//! The engine's own canonical JSON (F-1): each message is
//! `{ "role": "system" | "user" | "assistant" | "tool", "content": [block, ...] }` with
//! blocks exactly as [`Block`] serializes them (`{"type": "text", "text"}`,
//! `{"type": "tool_call", "id", "name", "arguments"}`, `{"type": "tool_result",
//! "call_id", "name", "text", "is_error", "media", "media_bytes"}`, `{"type": "media",
//! "kind", "bytes", "inline"}`, `{"type": "reasoning", ...}`, `{"type": "opaque", ...}`).
//! Any other key of a message or block rides through untouched. Pairing: results sit
//! in the messages right after their call (like OpenAI chat).

use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{Block, Role};
use serde_json::{json, Value};

/// Canonical pairing: like OpenAI Chat, results in the messages right after their call.
pub const RULES: PairingRules = PairingRules { results_in_one_message: false, results_first: false, exact_result_count: false, results_anywhere_after: false };

/// The canonical JSON adapter.
pub struct Canonical;

impl Adapter for Canonical {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        let role: Role = raw
            .get("role")
            .cloned()
            .ok_or_else(|| Error::invalid(format!("message {at}: missing `role`")))
            .and_then(|r| serde_json::from_value(r).map_err(|e| Error::invalid(format!("message {at}: bad role: {e}"))))?;
        let blocks = match raw.get("content") {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(k, b)| serde_json::from_value::<Block>(b.clone()).map_err(|e| Error::invalid(format!("message {at}: content[{k}]: {e}"))))
                .collect::<Result<Vec<Block>>>()?,
            _ => return Err(Error::invalid(format!("message {at}: `content` must be an array of canonical blocks"))),
        };
        Ok((role, blocks))
    }

    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        let block = raw
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|items| items.iter_mut().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")).nth(nth))
            .ok_or_else(|| Error::invalid(format!("no tool_result number {nth}")))?;
        super::set_text_field(block, "text", text, "tool_result")
    }

    fn text_message(text: &str) -> Value {
        json!({ "role": "user", "content": [{ "type": "text", "text": text }] })
    }
}
