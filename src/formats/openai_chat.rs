//! OpenAI Chat Completions `messages` (F-1).
//!
//! Roles `system`/`developer` -> System, `user`, `assistant` (with `tool_calls`),
//! `tool` (with `tool_call_id`) and legacy `function` -> Tool. Content is a string,
//! `null`, or an array of parts (`text`, `image_url`, `input_audio`, `file`,
//! `refusal`). Pairing (OpenAI docs, "function calling"): every `tool_calls[].id` of an
//! assistant message is answered by one `role: "tool"` message right after it, before
//! any other message.

use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Role};
use serde_json::{json, Value};

/// OpenAI Chat pairing: results in the consecutive `tool` messages right after the call.
pub const RULES: PairingRules = PairingRules { results_in_one_message: false, results_first: false, exact_result_count: false, results_anywhere_after: false };

/// The OpenAI Chat Completions adapter.
pub struct OpenaiChat;

fn parts_view(content: &Value, out: &mut Vec<Block>) {
    match content {
        Value::String(s) => out.push(Block::Text { text: s.clone() }),
        Value::Array(parts) => {
            for p in parts {
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
                match ty {
                    "text" => out.push(Block::Text { text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string() }),
                    "refusal" => out.push(Block::Text { text: p.get("refusal").and_then(Value::as_str).unwrap_or("").to_string() }),
                    "image_url" => {
                        let url = p.pointer("/image_url/url").and_then(Value::as_str).unwrap_or("");
                        out.push(Block::Media { kind: MediaKind::Image, bytes: url.len(), inline: url.starts_with("data:") });
                    }
                    "input_audio" => {
                        let data = p.pointer("/input_audio/data").and_then(Value::as_str).unwrap_or("");
                        out.push(Block::Media { kind: MediaKind::Audio, bytes: data.len(), inline: true });
                    }
                    "file" => {
                        let data = p.pointer("/file/file_data").and_then(Value::as_str);
                        let bytes = data.map(str::len).unwrap_or_else(|| json_len(p));
                        out.push(Block::Media { kind: MediaKind::Document, bytes, inline: data.is_some() });
                    }
                    _ => out.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(p) }),
                }
            }
        }
        _ => {}
    }
}

impl Adapter for OpenaiChat {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        let role_name = raw.get("role").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: missing string field `role`")))?;
        let role = match role_name {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" | "function" => Role::Tool,
            other => return Err(Error::invalid(format!("message {at}: unknown role {other:?}"))),
        };
        let mut blocks = Vec::new();
        let content = raw.get("content").unwrap_or(&Value::Null);
        match role {
            Role::Tool => {
                let call_id = match raw.get("tool_call_id").and_then(Value::as_str) {
                    Some(id) => id.to_string(),
                    None if role_name == "function" => format!("function:{}", raw.get("name").and_then(Value::as_str).unwrap_or("")),
                    None => return Err(Error::invalid(format!("message {at}: tool message without `tool_call_id`"))),
                };
                let mut inner = Vec::new();
                parts_view(content, &mut inner);
                let (text, media, media_bytes) = super::result_parts(inner);
                let name = raw.get("name").and_then(Value::as_str).map(str::to_string);
                blocks.push(Block::ToolResult { call_id, name, text, is_error: false, media, media_bytes });
            }
            _ => {
                if let Some(r) = raw.get("reasoning_content").and_then(Value::as_str) {
                    blocks.push(Block::Reasoning { text: r.to_string(), bytes: r.len(), signed: false });
                }
                parts_view(content, &mut blocks);
                if let Some(calls) = raw.get("tool_calls").and_then(Value::as_array) {
                    for (k, c) in calls.iter().enumerate() {
                        let id = c.get("id").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: tool_calls[{k}] has no string `id`")))?;
                        let name = c.pointer("/function/name").and_then(Value::as_str).unwrap_or("");
                        let arguments = match c.pointer("/function/arguments") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => other.to_string(),
                            None => String::new(),
                        };
                        blocks.push(Block::ToolCall { id: id.to_string(), name: name.to_string(), arguments });
                    }
                }
                if let Some(fc) = raw.get("function_call") {
                    let name = fc.get("name").and_then(Value::as_str).unwrap_or("");
                    let arguments = fc.get("arguments").and_then(Value::as_str).unwrap_or("").to_string();
                    blocks.push(Block::ToolCall { id: format!("function:{name}"), name: name.to_string(), arguments });
                }
            }
        }
        Ok((role, blocks))
    }

    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        if nth != 0 {
            return Err(Error::invalid("an OpenAI tool message carries one result"));
        }
        super::set_text_field(raw, "content", text, "tool message")
    }

    fn text_message(text: &str) -> Value {
        json!({ "role": "user", "content": text })
    }
}
