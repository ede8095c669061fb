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

/// The text memory reads of a web fetch or code execution server result (M-1): the
/// fetched URL and its document text; a run's stdout, stderr and return code; or
/// `<tool> failed: <error_code>`.
fn server_result_text(tool: &str, content: Option<&Value>) -> String {
    let Some(c) = content else { return String::new() };
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string);
    if let Some(code) = str_of(c, "error_code") {
        return format!("{tool} failed: {code}");
    }
    let mut lines = Vec::new();
    if let Some(url) = str_of(c, "url") {
        lines.push(format!("fetched {url}"));
    }
    let doc = c.get("content").unwrap_or(&Value::Null);
    if let Some(title) = str_of(doc, "title") {
        lines.push(title);
    }
    if let Some(data) = doc.get("source").and_then(|s| str_of(s, "data")).filter(|_| doc.get("source").and_then(|s| s.get("type")).and_then(Value::as_str) == Some("text")) {
        lines.push(data);
    }
    for k in ["stdout", "stderr", "content"] {
        if let Some(t) = str_of(c, k) {
            lines.push(format!("{k}:\n{t}"));
        }
    }
    if let Some(n) = c.get("return_code").and_then(Value::as_i64) {
        lines.push(format!("return code {n}"));
    }
    lines.join("\n")
}

/// One provider-run tool result, as memory reads it (M-1): an Anthropic server tool's
/// result block (`web_search_tool_result`, `web_fetch_tool_result`, a
/// `*code_execution_tool_result`) with the `server_tool_use` block of its id, or an
/// OpenAI Responses `mcp_call` item (built in `memory::project`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSearch {
    /// The `server_tool_use` id the result answers (`tool_use_id`).
    pub call_id: String,
    /// The tool's name (`server_tool_use.name`; `web_search` when the call is not in
    /// the message).
    pub tool: String,
    /// The call's `input.query`, when it has one.
    pub query: Option<String>,
    /// One line per `web_search_result`: `<title> (<url>)`, then `, page age <age>`
    /// when given; or `web search failed: <error_code>` for an error result.
    pub text: String,
}

/// The server web searches of an Anthropic message ([`ServerSearch`], one per
/// `web_search_tool_result` block, in order) and one line per citation of its text
/// blocks: `[cited: "<cited_text>" from <title> (<url>)]` (the title, the `url` or
/// `source`, `document_title` of a document citation, as far as given). The view keeps
/// these blocks opaque (the provider needs them whole); this is what memory reads of a
/// folded one. Transcript text: nothing here is an instruction.
pub fn server_search(raw: &Value) -> (Vec<ServerSearch>, Vec<String>) {
    let blocks = raw.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string);
    let mut searches = Vec::new();
    let mut citations = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("web_search_tool_result") => {
                let Some(call_id) = str_of(b, "tool_use_id") else { continue };
                let call = blocks.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("server_tool_use") && c.get("id").and_then(Value::as_str) == Some(call_id.as_str()));
                let tool = call.and_then(|c| str_of(c, "name")).unwrap_or_else(|| "web_search".to_string());
                let query = call.and_then(|c| c.get("input")).and_then(|i| str_of(i, "query"));
                let lines: Vec<String> = match b.get("content") {
                    Some(Value::Array(items)) => items
                        .iter()
                        .filter_map(|r| {
                            let url = str_of(r, "url")?;
                            let mut l = match str_of(r, "title") {
                                Some(t) => format!("{t} ({url})"),
                                None => url,
                            };
                            if let Some(age) = str_of(r, "page_age") {
                                l.push_str(&format!(", page age {age}"));
                            }
                            Some(l)
                        })
                        .collect(),
                    Some(e @ Value::Object(_)) => vec![format!("web search failed: {}", str_of(e, "error_code").unwrap_or_else(|| "unknown error".to_string()))],
                    _ => Vec::new(),
                };
                searches.push(ServerSearch { call_id, tool, query, text: lines.join("\n") });
            }
            Some(ty @ ("web_fetch_tool_result" | "code_execution_tool_result" | "bash_code_execution_tool_result" | "text_editor_code_execution_tool_result")) => {
                let Some(call_id) = str_of(b, "tool_use_id") else { continue };
                let call = blocks.iter().find(|c| c.get("type").and_then(Value::as_str) == Some("server_tool_use") && c.get("id").and_then(Value::as_str) == Some(call_id.as_str()));
                let fallback = ty.trim_end_matches("_tool_result");
                let tool = call.and_then(|c| str_of(c, "name")).unwrap_or_else(|| fallback.to_string());
                let input = call.and_then(|c| c.get("input"));
                let query = input.and_then(|i| str_of(i, "url").or_else(|| str_of(i, "code")).or_else(|| str_of(i, "command")));
                searches.push(ServerSearch { call_id, tool: tool.clone(), query, text: server_result_text(&tool, b.get("content")) });
            }
            Some("text") => {
                for c in b.get("citations").and_then(Value::as_array).into_iter().flatten() {
                    let Some(cited) = str_of(c, "cited_text") else { continue };
                    let title = str_of(c, "title").or_else(|| str_of(c, "document_title"));
                    let at = str_of(c, "url").or_else(|| str_of(c, "source"));
                    let from = match (title, at) {
                        (Some(t), Some(u)) => format!(" from {t} ({u})"),
                        (Some(x), None) | (None, Some(x)) => format!(" from {x}"),
                        (None, None) => String::new(),
                    };
                    citations.push(format!("[cited: \"{}\"{from}]", cited.trim()));
                }
            }
            _ => {}
        }
    }
    (searches, citations)
}

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

