//! Vercel AI SDK `ModelMessage[]` (F-1), with an optional system prompt in the
//! envelope's top-level `system` field.
//!
//! Roles (AI SDK docs, "ModelMessage"): `system` (string content), `user` (string or
//! `text`/`image`/`file` parts), `assistant` (string or `text`, `file`, `reasoning`,
//! `tool-call`, `tool-result`, `tool-approval-request` parts) and `tool`
//! (`tool-result` and `tool-approval-response` parts). Every part and message may carry
//! `providerOptions`, kept as is.
//! - `tool-call {toolCallId, toolName, input}` is a call (`args` of AI SDK 4 read too);
//!   with `providerExecuted: true` it is a provider-executed tool whose `tool-result`
//!   sits in the same assistant message: both are kept whole as opaque items.
//! - `tool-result {toolCallId, toolName, output}` in a `tool` message is a result;
//!   `output` is `{type: "text"|"json"|"error-text"|"error-json", value}`,
//!   `{type: "content", value: [parts]}` or `{type: "execution-denied", reason?}`
//!   (`result` of AI SDK 4 read too).
//! - `reasoning {text, providerOptions}` (signatures ride in `providerOptions`) and
//!   `redacted-reasoning` are reasoning, never edited (T-3).
//! - `tool-approval-request {approvalId, toolCallId}` and `tool-approval-response
//!   {approvalId, approved, reason?}` are opaque.
//!
//! Pairing (AI SDK docs, "tool calling"): each `tool-call` of an assistant message is
//! answered by a `tool-result` part in the `tool` messages right after it. A `tool`
//! message with only an approval response sits inside that run (the approved call's
//! result follows it).

use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Role};
use serde_json::{json, Map, Value};

/// AI SDK pairing: like OpenAI Chat, results in the `tool` messages right after.
pub const RULES: PairingRules =
    PairingRules { results_in_one_message: false, results_first: false, exact_result_count: false, results_anywhere_after: false };

/// The AI SDK `ModelMessage` adapter.
pub struct AiSdk;


/// Size and inline-ness of a data field (base64 string, data URL, URL, byte array).
fn data_size(v: Option<&Value>) -> (usize, bool) {
    match v {
        Some(Value::String(s)) => (s.len(), !(s.starts_with("http://") || s.starts_with("https://"))),
        Some(other) => (json_len(other), true),
        None => (0, false),
    }
}

/// Kind, bytes, inline-ness and name of a media part. The name
/// ([`super::text_media::media_name`], M-1) of a user `image` / `file` part is its URL
/// (when the data is one), then its `filename`.
fn media_of(p: &Value) -> Option<(MediaKind, usize, bool, Option<String>)> {
    let mime = p.get("mediaType").or_else(|| p.get("mimeType")).and_then(Value::as_str);
    let named = |key: &str, inline: bool| {
        let url = if inline { None } else { p.get(key).and_then(Value::as_str) };
        let file = super::text_media::media_name(p, &["/filename"]);
        match (url, file) {
            (Some(u), Some(f)) => Some(format!("{u}; {f}")),
            (Some(u), None) => Some(u.to_string()),
            (None, f) => f,
        }
    };
    match p.get("type").and_then(Value::as_str)? {
        "image" => {
            let (bytes, inline) = data_size(p.get("image"));
            Some((MediaKind::Image, bytes, inline, named("image", inline)))
        }
        "file" => {
            let (bytes, inline) = data_size(p.get("data"));
            Some((MediaKind::from_mime(mime.unwrap_or("")), bytes, inline, named("data", inline)))
        }
        // tool-result content parts
        "media" | "file-data" | "image-data" => {
            let (bytes, _) = data_size(p.get("data"));
            let kind = if p.get("type").and_then(Value::as_str) == Some("image-data") { MediaKind::Image } else { MediaKind::from_mime(mime.unwrap_or("")) };
            Some((kind, bytes, true, None))
        }
        "image-url" | "file-url" => {
            let (bytes, _) = data_size(p.get("url"));
            let kind = if p.get("type").and_then(Value::as_str) == Some("image-url") { MediaKind::Image } else { MediaKind::from_mime(mime.unwrap_or("")) };
            Some((kind, bytes, false, super::text_media::media_name(p, &["/url"])))
        }
        _ => None,
    }
}

/// The text of a `file` part whose `mediaType` is a text type and whose `data` is base64
/// or a `data:` URL of UTF-8 (N-1: a file the person attached reads as their text).
fn file_text(p: &Value) -> Option<String> {
    let mime = p.get("mediaType").or_else(|| p.get("mimeType")).and_then(Value::as_str);
    super::text_media::text_of_data(p.get("data").and_then(Value::as_str)?, mime)
}

fn push_line(text: &mut String, t: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(t);
}

/// The result view of a `tool-result` part. Its failure flag (Y-5): an `error-text`,
/// `error-json` or `execution-denied` output is a failure by its type; otherwise an
/// explicit `isError` (true or false) says; otherwise a `text` output (or AI SDK 4's
/// string `result`) is read as [`super::failure::result_reports_failure`] reads a text
/// (with the part's `toolName`: a reader's output is content) and a `json` output (or a
/// non-string `result`) by [`super::failure::json_error`] on its value. A `content`
/// output is not read.
fn result_block(p: &Value, call_id: String) -> Block {
    let name = p.get("toolName").and_then(Value::as_str).map(str::to_string);
    let mut text = String::new();
    let mut by_type = false;
    // how the output's text is read when no flag says: as a text, as a JSON value, or not
    let mut read: Option<bool> = None;
    let mut media = Vec::new();
    let mut media_bytes = 0;
    match p.get("output") {
        Some(out) => {
            let ty = out.get("type").and_then(Value::as_str).unwrap_or("");
            by_type = matches!(ty, "error-text" | "error-json" | "execution-denied");
            read = match ty {
                "text" => Some(true),
                "json" => Some(false),
                _ => None,
            };
            match (ty, out.get("value")) {
                ("content", Some(Value::Array(parts))) => {
                    for cp in parts {
                        if let Some(t) = cp.get("text").and_then(Value::as_str) {
                            push_line(&mut text, t);
                        } else if let Some((kind, bytes, ..)) = media_of(cp) {
                            media.push(kind);
                            media_bytes += bytes;
                        }
                    }
                }
                (_, Some(Value::String(s))) => text.push_str(s),
                (_, Some(v)) => text.push_str(&v.to_string()),
                ("execution-denied", None) => text.push_str(out.get("reason").and_then(Value::as_str).unwrap_or("")),
                (_, None) => text.push_str(&out.to_string()),
            }
        }
        None => match p.get("result") {
            Some(Value::String(s)) => {
                text.push_str(s);
                read = Some(true);
            }
            Some(v) => {
                text.push_str(&v.to_string());
                read = Some(false);
            }
            None => {}
        },
    }
    let is_error = by_type
        || match p.get("isError").and_then(Value::as_bool) {
            Some(flag) => flag,
            None => match read {
                Some(true) => super::failure::result_reports_failure(name.as_deref(), &text),
                Some(false) => super::failure::json_error(&text),
                None => false,
            },
        };
    Block::ToolResult { call_id, name, text, is_error, media, media_bytes }
}

impl Adapter for AiSdk {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        let role = match raw.get("role").and_then(Value::as_str) {
            Some("system") => Role::System,
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("tool") => Role::Tool,
            Some(other) => return Err(Error::invalid(format!("message {at}: unknown role {other:?} (expected system, user, assistant, tool)"))),
            None => return Err(Error::invalid(format!("message {at}: missing string field `role`"))),
        };
        let mut blocks = Vec::new();
        let parts = match raw.get("content") {
            Some(Value::String(s)) => {
                if role == Role::Tool {
                    return Err(Error::invalid(format!("message {at}: a tool message's `content` must be an array of parts")));
                }
                blocks.push(Block::Text { text: s.clone() });
                return Ok((role, blocks));
            }
            Some(Value::Array(parts)) => parts,
            _ if super::detect::ui_message(raw) => {
                return Err(Error::invalid(format!("message {at}: no `content` but `parts`: {}", super::detect::UI_MESSAGES_HINT)))
            }
            _ => return Err(Error::invalid(format!("message {at}: `content` must be a string or an array of parts"))),
        };
        for (k, p) in parts.iter().enumerate() {
            let ty = p.get("type").and_then(Value::as_str).unwrap_or("");
            if let Some(text) = (ty == "file").then(|| file_text(p)).flatten() {
                blocks.push(Block::Text { text });
                continue;
            }
            match ty {
                "text" => blocks.push(Block::Text { text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string() }),
                "image" | "file" => match media_of(p) {
                    Some((kind, bytes, inline, name)) => blocks.push(Block::Media { kind, bytes, inline, name }),
                    None => blocks.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(p) }),
                },
                "reasoning" => blocks.push(Block::Reasoning {
                    text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
                    bytes: json_len(p),
                    signed: p.get("providerOptions").is_some() || p.get("signature").is_some(),
                }),
                "redacted-reasoning" => blocks.push(Block::Reasoning { text: String::new(), bytes: json_len(p), signed: true }),
                "tool-call" if role == Role::Assistant && p.get("providerExecuted").and_then(Value::as_bool) != Some(true) => {
                    let id = p.get("toolCallId").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: content[{k}] tool-call has no string `toolCallId`")))?;
                    let name = p.get("toolName").and_then(Value::as_str).unwrap_or("");
                    let arguments = match p.get("input").or_else(|| p.get("args")) {
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                        None => String::new(),
                    };
                    blocks.push(Block::ToolCall { id: id.to_string(), name: name.to_string(), arguments });
                }
                "tool-result" if role == Role::Tool => {
                    let id = p.get("toolCallId").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: content[{k}] tool-result has no string `toolCallId`")))?;
                    blocks.push(result_block(p, id.to_string()));
                }
                // provider-executed calls and results, approvals, unknown parts
                _ => blocks.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(p) }),
            }
        }
        Ok((role, blocks))
    }

    /// Sets the `output` of the `nth` `tool-result` part of a tool message to
    /// `{type: "text", value: text}` (`result` for an AI SDK 4 part that has no
    /// `output`); `toolCallId`, `toolName`, `providerOptions` and every other field stay.
    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        if raw.get("role").and_then(Value::as_str) != Some("tool") {
            return Err(Error::invalid("only tool messages carry tool results"));
        }
        let parts = raw.get_mut("content").and_then(Value::as_array_mut).ok_or_else(|| Error::invalid("message has no content parts"))?;
        let part = parts
            .iter_mut()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("tool-result"))
            .nth(nth)
            .ok_or_else(|| Error::invalid(format!("no tool-result number {nth}")))?;
        match part {
            Value::Object(map) => {
                if !map.contains_key("output") && map.contains_key("result") {
                    map.insert("result".into(), Value::String(text.to_string()));
                } else {
                    let mut out = Map::new();
                    out.insert("type".into(), Value::String("text".into()));
                    out.insert("value".into(), Value::String(text.to_string()));
                    map.insert("output".into(), Value::Object(out));
                }
                Ok(())
            }
            _ => Err(Error::invalid("tool-result is not an object")),
        }
    }

    fn text_message(text: &str) -> Value {
        json!({ "role": "user", "content": [{ "type": "text", "text": text }] })
    }
}
