//! OpenAI Responses API `input` items (F-1), with the system prompt in the envelope's
//! top-level `instructions` field.
//!
//! Every input item is one [`crate::transcript::Message`] (OpenAI docs, "Responses
//! input items"):
//! - `{type: "message", role, content}` and the short form `{role, content}`: role
//!   `system`/`developer`/`user`/`assistant`, content a string or parts
//!   (`input_text`, `output_text`, `refusal`, `input_image`, `input_file`,
//!   `input_audio`; anything else opaque).
//! - `function_call {call_id, name, arguments}` -> assistant tool call (id `call_id`);
//!   `function_call_output {call_id, output}` -> tool result (`output` a string or an
//!   array of `input_text`/`input_image`/`input_file` parts).
//! - Other client-executed tools with a `call_id` work the same way:
//!   `custom_tool_call`/`custom_tool_call_output`, `computer_call`/
//!   `computer_call_output`, `shell_call`/`shell_call_output`,
//!   `apply_patch_call`/`apply_patch_call_output`, `local_shell_call` (`call_id`) with
//!   `local_shell_call_output` (whose `id` is the call's id).
//! - `reasoning {summary, encrypted_content, content?}` -> assistant reasoning, opaque
//!   and never edited (T-3).
//! - `compaction` items (from `/responses/compact`), server-side tool items
//!   (`mcp_call`, `web_search_call`, `file_search_call`, `code_interpreter_call`,
//!   `image_generation_call`: call and output in one item), MCP approval items,
//!   `item_reference` and anything unknown -> opaque, kept whole.
//!
//! Pairing (OpenAI docs, "function calling"): each output item needs an earlier call
//! item with its `call_id`; outputs need not be adjacent to the call (parallel calls
//! are consecutive items, their outputs follow). A `reasoning` item belongs with the
//! call item after it; `ExchangeIndex::build` keeps them in one exchange.

use super::failure::CallNames;
use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Role};
use serde_json::{json, Value};

/// Responses pairing: results are free items anywhere after their call.
pub const RULES: PairingRules =
    PairingRules { results_in_one_message: false, results_first: false, exact_result_count: false, results_anywhere_after: true };

/// The OpenAI Responses `input` adapter.
pub struct OpenaiResponses;

/// Item types that are client-executed calls answered by a `<type>_output` item.
const CALL_TYPES: [&str; 6] =
    ["function_call", "custom_tool_call", "computer_call", "local_shell_call", "shell_call", "apply_patch_call"];

/// Kind, bytes (inline data, else the reference), inline-ness and name
/// ([`super::text_media::media_name`]: URL / file id, then file name) of a media part.
fn part_media(p: &Value) -> Option<(MediaKind, usize, bool, Option<String>)> {
    let ty = p.get("type").and_then(Value::as_str)?;
    let kind = match ty {
        "input_image" | "computer_screenshot" => MediaKind::Image,
        "input_file" => MediaKind::Document,
        "input_audio" => MediaKind::Audio,
        _ => return None,
    };
    let inline_data = p
        .get("file_data")
        .or_else(|| p.pointer("/input_audio/data"))
        .and_then(Value::as_str)
        .or_else(|| p.get("image_url").and_then(Value::as_str).filter(|u| u.starts_with("data:")));
    let name = super::text_media::media_name(p, &["/image_url", "/file_url", "/file_id", "/filename"]);
    match inline_data {
        Some(d) => Some((kind, d.len(), true, name)),
        None => {
            let r = p.get("image_url").or_else(|| p.get("file_url")).or_else(|| p.get("file_id")).and_then(Value::as_str);
            Some((kind, r.map(str::len).unwrap_or_else(|| json_len(p)), false, name))
        }
    }
}

fn parts_view(content: &Value, out: &mut Vec<Block>) {
    match content {
        Value::String(s) => out.push(Block::Text { text: s.clone() }),
        Value::Array(parts) => {
            for p in parts {
                let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
                // N-1: a text file the person attached is their text
                if let Some(text) = (ty == "input_file").then(|| super::openai_chat::file_text(Some(p))).flatten() {
                    out.push(Block::Text { text });
                    continue;
                }
                match ty {
                    "input_text" | "output_text" | "text" => out.push(Block::Text { text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string() }),
                    "refusal" => out.push(Block::Text { text: p.get("refusal").and_then(Value::as_str).unwrap_or("").to_string() }),
                    _ => match part_media(p) {
                        Some((kind, bytes, inline, name)) => out.push(Block::Media { kind, bytes, inline, name }),
                        None => out.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(p) }),
                    },
                }
            }
        }
        _ => {}
    }
}

fn string_field<'a>(raw: &'a Value, key: &str, at: usize, ty: &str) -> Result<&'a str> {
    raw.get(key).and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: {ty} item has no string `{key}`")))
}

/// The result view of a `shell_call_output`'s `output` (break4 finding 3; F-1, Y-5): an
/// array of `{ stdout, stderr, outcome: { type: "exit", exit_code } | { type: "timeout" } }`,
/// one per command, rendered as the commands' stdout, then their stderr, then one line
/// `Exit code N` (or `Timed out`) each, so the summary, the summarizer's copy, memory and
/// the bound read it as text. A non-zero exit code or a timeout is a failed call. Another
/// shape of `output` is read as [`result_block`] reads it.
fn shell_output_block(call_id: String, output: Option<&Value>, tool: Option<&str>) -> Block {
    let Some(Value::Array(items)) = output else { return result_block(call_id, output, tool) };
    let mut text = String::new();
    let mut failed = false;
    for item in items {
        for key in ["stdout", "stderr"] {
            if let Some(t) = item.get(key).and_then(Value::as_str).filter(|t| !t.is_empty()) {
                text.push_str(t);
                if !t.ends_with('\n') {
                    text.push('\n');
                }
            }
        }
        match item.pointer("/outcome/type").and_then(Value::as_str) {
            Some("exit") => {
                let code = item.pointer("/outcome/exit_code").and_then(Value::as_i64).unwrap_or(0);
                failed |= code != 0;
                text.push_str(&format!("Exit code {code}\n"));
            }
            Some("timeout") => {
                failed = true;
                text.push_str("Timed out\n");
            }
            _ => {}
        }
    }
    let failed = failed || super::failure::result_reports_failure(tool, &text);
    Block::ToolResult { call_id, name: None, text, is_error: failed, media: Vec::new(), media_bytes: 0 }
}

/// The result view of an output item's `output` (string, parts, or an object such as a
/// `computer_screenshot`), a result of a call to `tool` (its name, when the decode has
/// seen the call).
fn result_block(call_id: String, output: Option<&Value>, tool: Option<&str>) -> Block {
    let mut inner = Vec::new();
    match output {
        Some(Value::String(s)) => inner.push(Block::Text { text: s.clone() }),
        Some(v @ Value::Array(_)) => parts_view(v, &mut inner),
        Some(v @ Value::Object(_)) => match part_media(v) {
            Some((kind, bytes, inline, name)) => inner.push(Block::Media { kind, bytes, inline, name }),
            None => inner.push(Block::Text { text: v.to_string() }),
        },
        Some(Value::Null) | None => {}
        Some(other) => inner.push(Block::Text { text: other.to_string() }),
    }
    let (text, media, media_bytes) = super::result_parts(inner);
    // Y-5: no error flag in the format; an output opening as an error is a failed call,
    // unless the call is a reader's (its output is the file's content)
    let is_error = super::failure::result_reports_failure(tool, &text);
    Block::ToolResult { call_id, name: None, text, is_error, media, media_bytes }
}

impl Adapter for OpenaiResponses {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        OpenaiResponses::view_in(raw, at, &CallNames::default())
    }

    /// Replaces the `output` of an output item with `text` (a plain string output, which
    /// `function_call_output`, `custom_tool_call_output` and `local_shell_call_output`
    /// accept; a `shell_call_output` gets one entry whose `stdout` is `text`, with its first
    /// entry's `outcome`); `call_id`, `id`, `status` and every other field stay. A
    /// `computer_call_output` must carry a screenshot, so it is refused.
    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        if nth != 0 {
            return Err(Error::invalid("a Responses output item carries one result"));
        }
        let ty = raw.get("type").and_then(Value::as_str).unwrap_or("");
        if !ty.ends_with("_call_output") {
            return Err(Error::invalid(format!("item of type {ty:?} carries no tool result")));
        }
        if ty == "computer_call_output" {
            return Err(Error::invalid(format!("a {ty} output has a fixed structure; its body cannot be replaced by text")));
        }
        if ty == "shell_call_output" {
            // the bounded text as one command's stdout, with the first command's outcome
            // (break4 finding 3: an oversized shell output could not be bounded)
            let outcome = raw.pointer("/output/0/outcome").cloned().unwrap_or_else(|| json!({ "type": "exit", "exit_code": 0 }));
            let Some(o) = raw.as_object_mut() else { return Err(Error::invalid("output item is not an object")) };
            o.insert("output".into(), json!([{ "stdout": text, "stderr": "", "outcome": outcome }]));
            return Ok(());
        }
        super::set_text_field(raw, "output", text, "output item")
    }

    fn text_message(text: &str) -> Value {
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": text }] })
    }
}

impl OpenaiResponses {
    /// [`Adapter::view`] of an item of an `input` whose earlier items' calls are in
    /// `names`: an output item is read as a result of the tool its `call_id`'s call names
    /// (Y-5: a reader's output is content, [`super::failure::result_reports_failure`]).
    /// The block names no tool (the item names none).
    pub(crate) fn view_in(raw: &Value, at: usize, names: &CallNames) -> Result<(Role, Vec<Block>)> {
        if !raw.is_object() {
            return Err(Error::invalid(format!("message {at}: expected a JSON object")));
        }
        let ty = match raw.get("type") {
            Some(Value::String(t)) => t.as_str(),
            None | Some(Value::Null) => "message",
            Some(_) => return Err(Error::invalid(format!("message {at}: `type` must be a string"))),
        };
        let mut blocks = Vec::new();
        if ty == "message" {
            let role = match raw.get("role").and_then(Value::as_str) {
                Some("system" | "developer") => Role::System,
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                Some(other) => return Err(Error::invalid(format!("message {at}: unknown role {other:?}"))),
                None => return Err(Error::invalid(format!("message {at}: message item without string `role`"))),
            };
            match raw.get("content") {
                Some(c @ (Value::String(_) | Value::Array(_))) => parts_view(c, &mut blocks),
                _ => return Err(Error::invalid(format!("message {at}: `content` must be a string or an array of parts"))),
            }
            return Ok((role, blocks));
        }
        if ty == "reasoning" {
            let mut text = String::new();
            for key in ["summary", "content"] {
                if let Some(items) = raw.get(key).and_then(Value::as_array) {
                    for s in items {
                        if let Some(t) = s.get("text").and_then(Value::as_str) {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(t);
                        }
                    }
                }
            }
            let signed = raw.get("encrypted_content").is_some_and(|v| !v.is_null());
            blocks.push(Block::Reasoning { text, bytes: json_len(raw), signed });
            return Ok((Role::Assistant, blocks));
        }
        if CALL_TYPES.contains(&ty) {
            let call_id = string_field(raw, "call_id", at, ty)?;
            let name = match ty {
                "function_call" | "custom_tool_call" => string_field(raw, "name", at, ty)?,
                "computer_call" => "computer",
                "local_shell_call" => "local_shell",
                "shell_call" => "shell",
                _ => "apply_patch",
            };
            let arguments = match raw.get("arguments").or_else(|| raw.get("input")).or_else(|| raw.get("action")).or_else(|| raw.get("operation")) {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            blocks.push(Block::ToolCall { id: call_id.to_string(), name: name.to_string(), arguments });
            return Ok((Role::Assistant, blocks));
        }
        if let Some(call_ty) = ty.strip_suffix("_output") {
            if CALL_TYPES.contains(&call_ty) {
                let key = if ty == "local_shell_call_output" && raw.get("call_id").is_none() { "id" } else { "call_id" };
                let call_id = string_field(raw, key, at, ty)?;
                let block = match ty {
                    "shell_call_output" => shell_output_block(call_id.to_string(), raw.get("output"), names.get(call_id)),
                    _ => result_block(call_id.to_string(), raw.get("output"), names.get(call_id)),
                };
                // Y-5: an `apply_patch_call_output` says `status: "failed"` itself
                let block = match block {
                    Block::ToolResult { call_id, name, text, is_error, media, media_bytes } => {
                        let failed = is_error || (ty == "apply_patch_call_output" && raw.get("status").and_then(Value::as_str) == Some("failed"));
                        Block::ToolResult { call_id, name, text, is_error: failed, media, media_bytes }
                    }
                    other => other,
                };
                blocks.push(block);
                return Ok((Role::Tool, blocks));
            }
        }
        // compaction items, server-side tool items, approvals, references, unknown.
        blocks.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(raw) });
        let role = if ty.ends_with("_output") || ty.ends_with("_response") { Role::Tool } else { Role::Assistant };
        Ok((role, blocks))
    }
}
