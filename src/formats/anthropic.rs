//! Anthropic Messages API `messages` (F-1), with the system prompt in the envelope's
//! top-level `system` field.
//!
//! Blocks: `text`, `image`, `document` (a text or content source reads as text, N-1), `tool_use`, `tool_result` (string or block
//! content, `is_error`), `thinking` (with `signature`), `redacted_thinking`,
//! `server_tool_use` and its `*_tool_result` (both in the assistant message, so kept
//! whole as opaque items), anything else opaque. Pairing (Anthropic docs, "tool use"):
//! each `tool_use` of an assistant message is answered by a `tool_result` in the very
//! next user message, and the `tool_result` blocks come first in that message.

use super::failure::CallNames;
use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Role};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

/// Anthropic pairing: all results in the very next user message, `tool_result` blocks first.
pub const RULES: PairingRules = PairingRules { results_in_one_message: true, results_first: true, exact_result_count: false, results_anywhere_after: false };

/// The Anthropic Messages adapter.
pub struct Anthropic;

/// Kind, bytes (inline data, else the source's JSON), inline-ness and name of an `image`
/// / `document` block. The name ([`super::text_media::media_name`], M-1) is the source's
/// `url` / `file_id`, then a document's `title` and `context` (what the host said the
/// document is: kept through a fold, in the summary's placeholder and in memory).
fn media_of(b: &Value) -> Option<(MediaKind, usize, bool, Option<String>)> {
    let kind = match b.get("type").and_then(Value::as_str)? {
        "image" => MediaKind::Image,
        "document" => MediaKind::Document,
        // a file uploaded to the code-execution container (Files API): only its id
        // names it, so the id is what a fold keeps (tester finding, session 9)
        "container_upload" => {
            let name = super::text_media::media_name(b, &["/file_id"]).map(|id| format!("container upload {id}"));
            return Some((MediaKind::Document, json_len(b), false, name));
        }
        _ => return None,
    };
    let src = b.get("source");
    let data = src.and_then(|s| s.get("data")).and_then(Value::as_str);
    let name = super::text_media::media_name(b, &["/source/url", "/source/file_id", "/title", "/context"]);
    match data {
        Some(d) => Some((kind, d.len(), true, name)),
        None => Some((kind, src.map(json_len).unwrap_or(0), false, name)),
    }
}

/// The text of a `document` block whose source is text (`{"type": "text",
/// "media_type": "text/plain", "data": "..."}`) or content blocks (`{"type": "content",
/// "content": "..." | [{"type": "text", "text": "..."}]}`): in a user message that is
/// the person's text (N-1), read as a text block; so is a `base64` source whose
/// `media_type` is a text type (`text/plain`, ...) and whose data is base64 of UTF-8
/// ([`super::text_media::text_of_data`]). `None` for other base64, URL and file sources
/// (media).
fn document_text(b: &Value) -> Option<String> {
    if b.get("type").and_then(Value::as_str) != Some("document") {
        return None;
    }
    let src = b.get("source")?;
    match src.get("type").and_then(Value::as_str)? {
        "text" => src.get("data").and_then(Value::as_str).map(str::to_string),
        "base64" => super::text_media::text_of_data(src.get("data").and_then(Value::as_str)?, Some(src.get("media_type").and_then(Value::as_str)?)),
        "content" => match src.get("content")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => {
                let texts: Vec<&str> = items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The text of a `search_result` block (`{"type": "search_result", "source", "title",
/// "content": [{"type": "text", "text"}...]}`, search results a host or a tool hands the
/// model with citations): a first line naming the title and source, then the content
/// texts. Read as text, so a folded one reaches the summary and memory like any other
/// text of its row (N-1, M-1) instead of an opaque byte count.
fn search_result_text(b: &Value) -> String {
    let title = b.get("title").and_then(Value::as_str).unwrap_or("");
    let source = b.get("source").and_then(Value::as_str).unwrap_or("");
    let mut t = match (title.is_empty(), source.is_empty()) {
        (false, false) => format!("[search result: {title} ({source})]"),
        (false, true) => format!("[search result: {title}]"),
        (true, false) => format!("[search result: {source}]"),
        (true, true) => "[search result]".to_string(),
    };
    if let Some(Value::Array(items)) = b.get("content") {
        for i in items {
            if let Some(x) = i.get("text").and_then(Value::as_str) {
                t.push('\n');
                t.push_str(x);
            }
        }
    }
    t
}

pub use crate::hosted::{server_search, ServerSearch};

impl Adapter for Anthropic {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        Anthropic::view_in(raw, at, &CallNames::default())
    }

    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        let items = raw.get_mut("content").and_then(Value::as_array_mut).ok_or_else(|| Error::invalid("message has no content blocks"))?;
        let block = items
            .iter_mut()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .nth(nth)
            .ok_or_else(|| Error::invalid(format!("no tool_result number {nth}")))?;
        super::set_text_field(block, "content", text, "tool_result")
    }

    fn text_message(text: &str) -> Value {
        json!({ "role": "user", "content": [{ "type": "text", "text": text }] })
    }
}

impl Anthropic {
    /// [`Adapter::view`] of a row of a transcript whose earlier rows' calls are in
    /// `names`: a `tool_result` without `is_error` is read as a result of the tool its
    /// `tool_use` names (Y-5, [`super::failure::result_reports_failure`]: a reader's
    /// output is content); an explicit `is_error`, true or false, is the flag.
    pub(crate) fn view_in(raw: &Value, at: usize, names: &CallNames) -> Result<(Role, Vec<Block>)> {
        let role = match raw.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some(other) => return Err(Error::invalid(format!("message {at}: role {other:?} is not an Anthropic message role (user, assistant); the system prompt goes in the top-level `system` field"))),
            None => return Err(Error::invalid(format!("message {at}: missing string field `role`"))),
        };
        let mut blocks = Vec::new();
        match raw.get("content") {
            Some(Value::String(s)) => blocks.push(Block::Text { text: s.clone() }),
            Some(Value::Array(items)) => {
                for (k, b) in items.iter().enumerate() {
                    let ty = b.get("type").and_then(Value::as_str).unwrap_or("");
                    match ty {
                        "text" => blocks.push(Block::Text { text: b.get("text").and_then(Value::as_str).unwrap_or("").to_string() }),
                        "image" | "document" | "container_upload" => {
                            if let Some(text) = document_text(b) {
                                blocks.push(Block::Text { text });
                            } else if let Some((kind, bytes, inline, name)) = media_of(b) {
                                blocks.push(Block::Media { kind, bytes, inline, name });
                            }
                        }
                        "search_result" => blocks.push(Block::Text { text: search_result_text(b) }),
                        "tool_use" => {
                            let id = b.get("id").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: content[{k}] tool_use has no string `id`")))?;
                            let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                            let arguments = b.get("input").map(|v| v.to_string()).unwrap_or_default();
                            blocks.push(Block::ToolCall { id: id.to_string(), name: name.to_string(), arguments });
                        }
                        "tool_result" => {
                            let call_id = b.get("tool_use_id").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: content[{k}] tool_result has no string `tool_use_id`")))?;
                            let flag = b.get("is_error").and_then(Value::as_bool);
                            let mut text = String::new();
                            let mut media = Vec::new();
                            let mut media_bytes = 0;
                            match b.get("content") {
                                Some(Value::String(s)) => text.push_str(s),
                                Some(Value::Array(parts)) => {
                                    for p in parts {
                                        let search = (p.get("type").and_then(Value::as_str) == Some("search_result")).then(|| search_result_text(p));
                                        if let Some(t) = search.as_deref().or_else(|| p.get("text").and_then(Value::as_str)) {
                                            if !text.is_empty() {
                                                text.push('\n');
                                            }
                                            text.push_str(t);
                                        } else if let Some((kind, bytes, ..)) = media_of(p) {
                                            media.push(kind);
                                            media_bytes += bytes;
                                        }
                                    }
                                }
                                _ => {}
                            }
                            let is_error = flag.unwrap_or_else(|| super::failure::result_reports_failure(names.get(call_id), &text));
                            blocks.push(Block::ToolResult { call_id: call_id.to_string(), name: None, text, is_error, media, media_bytes });
                        }
                        "thinking" => blocks.push(Block::Reasoning {
                            text: b.get("thinking").and_then(Value::as_str).unwrap_or("").to_string(),
                            bytes: json_len(b),
                            signed: b.get("signature").is_some(),
                        }),
                        "redacted_thinking" => blocks.push(Block::Reasoning { text: String::new(), bytes: json_len(b), signed: true }),
                        _ => blocks.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(b) }),
                    }
                }
            }
            _ => return Err(Error::invalid(format!("message {at}: `content` must be a string or an array of blocks"))),
        }
        Ok((role, blocks))
    }
}

/// The fields of an Anthropic message the view reads, borrowed from its JSON text (no
/// `Value` tree). Any shape this does not take (a provenance key, a duplicate field, a
/// wrong type, a block this parse leaves to the `Value` path) fails it, and the caller
/// takes the `Value` path, so a view built here is always the one [`Anthropic::view`]
/// builds. Needs canonical text (the caller checks): block sizes are their text length.
#[derive(serde::Deserialize)]
#[allow(dead_code)] // the `refuse` fields are never read: their presence is the point
struct Row<'a> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(borrow)]
    content: &'a RawValue,
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    summary_level: (),
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    artifact_ref: (),
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    transcript_role: (),
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    message_id: (),
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    observation_source: (),
    #[serde(default, deserialize_with = "super::openai_chat::refuse")]
    pinned: (),
}

/// Every block field any block type reads; which ones count depends on `type`.
#[derive(serde::Deserialize)]
struct RawBlock<'a> {
    #[serde(borrow, rename = "type", default)]
    ty: Option<Cow<'a, str>>,
    #[serde(default)]
    text: Option<String>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Present-and-null stays `Some("null")`, as the `Value` view reads it.
    #[serde(borrow, default, deserialize_with = "super::openai_chat::raw_present")]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(default)]
    content: Option<String>,
}

/// The view of one message straight from its canonical JSON text, its results read
/// with the tool names of the calls in `names` (as [`Anthropic::view_in`] reads them);
/// `None` when the message needs the `Value` path (see [`Row`]).
pub(crate) fn view_text_in(text: &str, names: &CallNames) -> Option<(Role, Vec<Block>)> {
    let row: Row = serde_json::from_str(text).ok()?;
    let role = match row.role.as_ref() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let content = row.content.get();
    if content.starts_with('"') {
        return Some((role, vec![Block::Text { text: serde_json::from_str(content).ok()? }]));
    }
    let items: Vec<&RawValue> = serde_json::from_str(content).ok()?;
    let mut blocks = Vec::with_capacity(items.len());
    for item in items {
        let b: RawBlock = serde_json::from_str(item.get()).ok()?;
        let ty = b.ty.as_deref().unwrap_or("");
        match ty {
            "text" => blocks.push(Block::Text { text: b.text.unwrap_or_default() }),
            "tool_use" => blocks.push(Block::ToolCall {
                id: b.id?.into_owned(),
                name: b.name.map(Cow::into_owned).unwrap_or_default(),
                arguments: b.input.map(|i| i.get().to_string()).unwrap_or_default(),
            }),
            // string or absent content only; block content goes the Value way
            "tool_result" => {
                let call_id = b.tool_use_id?.into_owned();
                let text = b.content.unwrap_or_default();
                let is_error = b.is_error.unwrap_or_else(|| super::failure::result_reports_failure(names.get(&call_id), &text));
                blocks.push(Block::ToolResult { call_id, name: None, text, is_error, media: Vec::new(), media_bytes: 0 });
            }
            "redacted_thinking" => blocks.push(Block::Reasoning { text: String::new(), bytes: item.get().len(), signed: true }),
            "image" | "document" | "container_upload" | "thinking" | "search_result" => return None,
            _ => blocks.push(Block::Opaque { kind: ty.to_string(), bytes: item.get().len() }),
        }
    }
    Some((role, blocks))
}

