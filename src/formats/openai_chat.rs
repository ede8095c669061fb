//! OpenAI Chat Completions `messages` (F-1).
//!
//! Roles `system`/`developer` -> System, `user`, `assistant` (with `tool_calls`),
//! `tool` (with `tool_call_id`) and legacy `function` -> Tool. Content is a string,
//! `null`, or an array of parts (`text`, `image_url`, `input_audio`, `file`,
//! `refusal`; and, on rows of the langchain integration, LangChain's standard `file` /
//! `text-plain` blocks, whose text files are read as text: [`langchain_text`]). Pairing (OpenAI docs, "function calling"): every `tool_calls[].id` of an
//! assistant message is answered by one `role: "tool"` message right after it, before
//! any other message.

use super::failure::CallNames;
use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Role};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

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
                // N-1: a text file the person attached is their text (a Chat `file` part,
                // or a LangChain standard block on a row of the langchain integration)
                let attached = match ty {
                    "file" => file_text(p.get("file")).or_else(|| langchain_text(p)),
                    "text-plain" => langchain_text(p),
                    _ => None,
                };
                if let Some(text) = attached {
                    out.push(Block::Text { text });
                    continue;
                }
                match ty {
                    "text" => out.push(Block::Text { text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string() }),
                    "refusal" => out.push(Block::Text { text: p.get("refusal").and_then(Value::as_str).unwrap_or("").to_string() }),
                    "image_url" => {
                        let url = p.pointer("/image_url/url").and_then(Value::as_str).unwrap_or("");
                        let name = super::text_media::media_name(p, &["/image_url/url"]);
                        out.push(Block::Media { kind: MediaKind::Image, bytes: url.len(), inline: url.starts_with("data:"), name });
                    }
                    "input_audio" => {
                        let data = p.pointer("/input_audio/data").and_then(Value::as_str).unwrap_or("");
                        out.push(Block::Media { kind: MediaKind::Audio, bytes: data.len(), inline: true, name: None });
                    }
                    "file" | "text-plain" => {
                        let data = p.pointer("/file/file_data").or_else(|| p.get("data")).or_else(|| p.get("base64")).and_then(Value::as_str);
                        let bytes = data.map(str::len).unwrap_or_else(|| json_len(p));
                        out.push(Block::Media { kind: MediaKind::Document, bytes, inline: data.is_some(), name: file_name(p) });
                    }
                    _ => out.push(Block::Opaque { kind: ty.to_string(), bytes: json_len(p) }),
                }
            }
        }
        _ => {}
    }
}

/// The text of a file (`{ file_data, filename }` of a Chat `file` part or a Responses
/// `input_file` part) whose `file_data` is a `data:` URL of a text type, or bare base64
/// with a text file name (`.txt`, `.md`, `.csv`, `.json`, ...): what the person attached,
/// read as their text (N-1).
pub(crate) fn file_text(f: Option<&Value>) -> Option<String> {
    let f = f?;
    let data = f.get("file_data").and_then(Value::as_str)?;
    let by_name = f.get("filename").and_then(Value::as_str).and_then(super::text_media::text_mime_of_name);
    super::text_media::text_of_data(data, by_name)
}

/// The name of a Chat `file` part or a LangChain file block ([`super::text_media::media_name`]:
/// its file id / URL, then its file name), M-1. A LangChain block whose media type is
/// text but whose data is not UTF-8 text ([`langchain_text`] gave `None`) says so in its
/// name (`... (text/plain, not UTF-8 text: kept as an attachment)`), so the person's file
/// is named wherever the fold leaves it, never lost without a word (N-1).
fn file_name(p: &Value) -> Option<String> {
    const AT: [&str; 9] = ["/file/file_id", "/file/filename", "/file_id", "/id", "/url", "/filename", "/metadata/filename", "/extras/filename", "/metadata/name"];
    let name = super::text_media::media_name(p, &AT);
    let ty = p.get("type").and_then(Value::as_str);
    let mime = p.get("mimeType").or_else(|| p.get("mime_type")).and_then(Value::as_str).or((ty == Some("text-plain")).then_some("text/plain"));
    let has_data = p.get("data").is_some() || p.get("base64").is_some();
    match mime.filter(|m| p.get("file").is_none() && has_data && super::text_media::is_text_mime(m)) {
        Some(m) => Some(format!("{} ({m}, not UTF-8 text: kept as an attachment)", name.as_deref().unwrap_or(ty.unwrap_or("file")))),
        None => name,
    }
}

/// Does `role` need `content`? OpenAI Chat requires it for `system`, `developer`,
/// `user` and `tool` messages (a string or an array of parts); an `assistant` message
/// may leave it out or give `null` (when it carries `tool_calls`, a legacy
/// `function_call` or a `refusal`), and so may the legacy `function` message.
fn content_required(role: &str) -> bool {
    matches!(role, "system" | "developer" | "user" | "tool")
}

/// F-5 / N-1: a message's `content` as OpenAI Chat allows it: a string or an array of
/// parts, and for the roles of [`content_required`] present and not `null`. A user row
/// without content is not an empty request to carry on with: no real log writes one
/// (spec/LOG-FORMATS.md), and the API refuses it. Errors: `invalid_transcript` naming
/// the message.
fn check_content(content: Option<&Value>, role: &str, at: usize) -> Result<()> {
    let what = match content {
        Some(Value::String(_) | Value::Array(_)) => return Ok(()),
        None | Some(Value::Null) if !content_required(role) => return Ok(()),
        None => "has no `content`".to_string(),
        Some(Value::Null) => "has `content: null`".to_string(),
        Some(Value::Bool(_)) => "has a boolean `content`".to_string(),
        Some(Value::Number(_)) => "has a number as `content`".to_string(),
        Some(Value::Object(_)) => "has an object as `content` (content parts go in an array)".to_string(),
    };
    let need = if content_required(role) { format!("OpenAI Chat requires the content of a {role} message") } else { format!("the content of an {role} message is null or") };
    Err(Error::invalid(format!("message {at}: {role} message {what}; {need}: a string or an array of content parts")))
}

/// The text of a LangChain standard content block that carries a text file (N-1, I-2:
/// rows of `context-compactor/langchain` keep the message's blocks as given):
/// - v1 `text-plain` (`text`, or base64 in `data` (JS; a `Uint8Array` there, as JSON
///   writes it, is read as its bytes) / `base64` (Python), or a
///   `data:` URL in `url`; its media type is text/plain unless `mimeType` /
///   `mime_type` says otherwise);
/// - v1 `file` with a text `mimeType` / `mime_type` and base64 `data` / `base64` or a
///   `data:` URL in `url` (the type may also come from a `filename`, `metadata.filename`
///   or `extras.filename` with a text extension);
/// - the older data blocks: `{type: "file", source_type: "text", text}` and
///   `{type: "file", source_type: "base64", mime_type, data}`.
///
/// `None` for other media, references (a file id, an http URL), or data that is not
/// base64 of UTF-8: those stay a document placeholder.
pub(crate) fn langchain_text(p: &Value) -> Option<String> {
    let ty = p.get("type").and_then(Value::as_str)?;
    if p.get("file").is_some() {
        return None;
    }
    let source_type = p.get("source_type").and_then(Value::as_str);
    if ty == "text-plain" || source_type == Some("text") {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            return Some(t.to_string());
        }
    }
    let named = || {
        ["/filename", "/metadata/filename", "/extras/filename", "/metadata/name"]
            .iter()
            .find_map(|k| p.pointer(k).and_then(Value::as_str).and_then(super::text_media::text_mime_of_name))
    };
    let mime = p.get("mimeType").or_else(|| p.get("mime_type")).and_then(Value::as_str).or_else(named).or((ty == "text-plain").then_some("text/plain"));
    // LangChain.js takes `data` as a Uint8Array too, which JSON writes as {"0": b0, ...}
    if let Some(bytes) = p.get("data").and_then(byte_object) {
        return mime.filter(|m| super::text_media::is_text_mime(m)).and_then(|_| String::from_utf8(bytes).ok());
    }
    let url = || p.get("url").and_then(Value::as_str).filter(|u| u.starts_with("data:"));
    let data = p.get("data").or_else(|| p.get("base64")).and_then(Value::as_str).or_else(url)?;
    super::text_media::text_of_data(data, mime)
}

/// The bytes of a JS `Uint8Array` as `JSON.stringify` writes it (`{"0": 72, "1": 105}`):
/// keys `0..n` in any order, each value an integer 0..=255; `None` for anything else.
fn byte_object(v: &Value) -> Option<Vec<u8>> {
    let map = v.as_object().filter(|m| !m.is_empty())?;
    (0..map.len()).map(|i| map.get(&i.to_string()).and_then(Value::as_u64).and_then(|b| u8::try_from(b).ok())).collect()
}

impl Adapter for OpenaiChat {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        OpenaiChat::view_in(raw, at, &CallNames::default())
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

impl OpenaiChat {
    /// [`Adapter::view`] of a row of a transcript whose earlier rows' calls are in
    /// `names`: a `tool` row without `name` is read as a result of the tool its call
    /// names (Y-5: a reader's output is content, [`super::failure::result_reports_failure`]).
    /// The block keeps the row's own `name` (none).
    pub(crate) fn view_in(raw: &Value, at: usize, names: &CallNames) -> Result<(Role, Vec<Block>)> {
        let role_name = raw.get("role").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: missing string field `role`")))?;
        let role = match role_name {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" | "function" => Role::Tool,
            other => return Err(Error::invalid(format!("message {at}: unknown role {other:?}"))),
        };
        check_content(raw.get("content"), role_name, at)?;
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
                // Y-5: no error flag in the format; a LangChain ToolMessage's `status:
                // "error"` (kept in the row's `lc` key) or an output opening as an error
                // (read with the call's tool name when the row has none)
                let tool = name.as_deref().or_else(|| names.get(&call_id));
                let is_error = raw.pointer("/lc/status").and_then(Value::as_str) == Some("error") || super::failure::result_reports_failure(tool, &text);
                blocks.push(Block::ToolResult { call_id, name, text, is_error, media, media_bytes });
            }
            _ => {
                if let Some(r) = raw.get("reasoning_content").and_then(Value::as_str) {
                    blocks.push(Block::Reasoning { text: r.to_string(), bytes: r.len(), signed: false });
                }
                parts_view(content, &mut blocks);
                let calls = match raw.get("tool_calls") {
                    None | Some(Value::Null) => None,
                    Some(Value::Array(calls)) => Some(calls),
                    // a single call given as an object (or any other shape) is not read as
                    // no calls: its result would be folded unpaired (tester finding, session 9)
                    Some(other) => return Err(Error::invalid(format!("message {at}: `tool_calls` must be an array of calls, found {}", crate::error::json_kind(other)))),
                };
                if let Some(calls) = calls {
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
}

/// The fields of a Chat Completions message the view reads, borrowed from its JSON
/// text (no `Value` tree). Any shape this does not take (content parts, the legacy
/// `function_call`, a provenance key, a duplicate field, a wrong type) fails the parse,
/// and the caller takes the `Value` path, so a view built here is always the one
/// [`OpenaiChat::view`] builds. `Text` reads `content` and `reasoning_content`, `C` a call
/// of `tool_calls`: [`ViewRow`] and [`IdsRow`].
#[derive(serde::Deserialize)]
#[serde(bound(deserialize = "Text: Deserialize<'de>, C: Deserialize<'de>"))]
#[allow(dead_code)] // the `refuse` fields are never read: their presence is the point
struct Row<'a, Text, C> {
    #[serde(borrow)]
    role: Cow<'a, str>,
    #[serde(default)]
    content: Option<Text>,
    #[serde(default)]
    tool_calls: Option<Vec<C>>,
    #[serde(borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    reasoning_content: Option<Text>,
    /// A LangChain row's `lc` key: only its `status` is read (Y-5); another shape of
    /// `lc` fails the parse and takes the `Value` path.
    #[serde(borrow, default)]
    lc: Option<Lc<'a>>,
    #[serde(default, deserialize_with = "refuse")]
    function_call: (),
    #[serde(default, deserialize_with = "refuse")]
    summary_level: (),
    #[serde(default, deserialize_with = "refuse")]
    artifact_ref: (),
    #[serde(default, deserialize_with = "refuse")]
    transcript_role: (),
    #[serde(default, deserialize_with = "refuse")]
    message_id: (),
    #[serde(default, deserialize_with = "refuse")]
    observation_source: (),
    #[serde(default, deserialize_with = "refuse")]
    pinned: (),
}

/// The part of a LangChain row's `lc` key the typed view reads: a ToolMessage's
/// `status` (`"error"` marks a failed call, Y-5); other keys are skipped.
#[derive(serde::Deserialize)]
struct Lc<'a> {
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
}

/// What the view reads ([`view_text_in`]): string texts, calls with their function.
type ViewRow<'a> = Row<'a, Content, Call<'a>>;

impl<Text, C> Row<'_, Text, C> {
    /// The role, `None` for one the typed parse does not take.
    fn role(&self) -> Option<Role> {
        match self.role.as_ref() {
            "system" | "developer" => Some(Role::System),
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            "tool" | "function" => Some(Role::Tool),
            _ => None,
        }
    }

    /// The call id a tool row answers (a legacy `function` row: `function:NAME`); `None`
    /// for a `tool` row with no `tool_call_id`.
    fn result_call_id(&mut self) -> Option<String> {
        match (self.tool_call_id.take(), self.role.as_ref()) {
            (Some(id), _) => Some(id.into_owned()),
            (None, "function") => Some(format!("function:{}", self.name.as_deref().unwrap_or(""))),
            (None, _) => None,
        }
    }
}

#[derive(serde::Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(borrow, default)]
    function: Option<Function<'a>>,
}

#[derive(serde::Deserialize)]
struct Function<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Present-and-null stays `Some("null")`, as the `Value` view reads it.
    #[serde(borrow, default, deserialize_with = "raw_present")]
    arguments: Option<&'a RawValue>,
}

/// String content; anything else (parts) fails the typed parse.
struct Content(String);

impl<'de> serde::Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Content, D::Error> {
        String::deserialize(d).map(Content)
    }
}

/// A field the typed parse does not take: its presence fails the parse.
pub(super) fn refuse<'de, D: serde::Deserializer<'de>>(_: D) -> std::result::Result<(), D::Error> {
    Err(serde::de::Error::custom("field taken by the Value path"))
}

/// A field read as its raw JSON text, JSON `null` included (`Option`'s own deserialize
/// would turn a present `null` into `None`).
pub(super) fn raw_present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The view of one message straight from its JSON text, in a transcript whose earlier
/// rows' calls are in `names` (as [`OpenaiChat::view_in`] reads it: a `tool` row without
/// `name` is read with its call's); `None` when the message needs the `Value` path (see
/// [`Row`]).
pub(crate) fn view_text_in(text: &str, names: &CallNames) -> Option<(Role, Vec<Block>)> {
    let mut row: ViewRow = serde_json::from_str(text).ok()?;
    let role = row.role()?;
    if row.content.is_none() && content_required(row.role.as_ref()) {
        // no content, or null: the `Value` path says what is wrong
        return None;
    }
    let text = row.content.take().map(|Content(t)| t);
    if role == Role::Tool {
        let call_id = row.result_call_id()?;
        let text = text.unwrap_or_default();
        // Y-5: read as the `Value` path reads it (a LangChain `lc.status` or the output)
        let tool = row.name.as_deref().or_else(|| names.get(&call_id));
        let is_error = row.lc.as_ref().and_then(|l| l.status.as_deref()) == Some("error") || super::failure::result_reports_failure(tool, &text);
        let result = Block::ToolResult {
            call_id,
            name: row.name.map(Cow::into_owned),
            text,
            is_error,
            media: Vec::new(),
            media_bytes: 0,
        };
        return Some((role, vec![result]));
    }
    let calls = row.tool_calls.as_ref().map_or(0, Vec::len);
    let mut blocks = Vec::with_capacity(usize::from(row.reasoning_content.is_some()) + usize::from(text.is_some()) + calls);
    if let Some(Content(r)) = row.reasoning_content {
        let bytes = r.len();
        blocks.push(Block::Reasoning { text: r, bytes, signed: false });
    }
    if let Some(t) = text {
        blocks.push(Block::Text { text: t });
    }
    for c in row.tool_calls.unwrap_or_default() {
        let (name, arguments) = match c.function {
            Some(f) => {
                let arguments = match f.arguments {
                    Some(a) if a.get().starts_with('"') => serde_json::from_str::<String>(a.get()).ok()?,
                    Some(a) => a.get().to_string(),
                    None => String::new(),
                };
                (f.name.map(Cow::into_owned).unwrap_or_default(), arguments)
            }
            None => (String::new(), String::new()),
        };
        blocks.push(Block::ToolCall { id: c.id.into_owned(), name, arguments });
    }
    Some((role, blocks))
}


/// What pairing (F-2) reads of a Chat Completions message, borrowed from its JSON text:
/// role, the calls' ids, the result's call id; the content is skipped, not copied. The
/// same fields and refusals as [`ViewRow`] (a provenance key, the legacy `function_call`,
/// a wrong type: `None`, and the caller takes the full decode), except that content
/// parts are taken (they carry no ids); absent or `null` content is `None` (the full
/// decode says why that is wrong for a role that needs content).
type IdsRow<'a> = Row<'a, SkippedContent, IdsCall<'a>>;

/// A string or an array, skipped unread; any other JSON type fails the parse (the full
/// decode refuses it, [`check_content`]).
struct SkippedContent;

impl<'de> serde::Deserialize<'de> for SkippedContent {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<SkippedContent, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SkippedContent;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or an array of content parts")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> std::result::Result<SkippedContent, E> {
                Ok(SkippedContent)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<SkippedContent, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(SkippedContent)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(serde::Deserialize)]
struct IdsCall<'a> {
    #[serde(borrow)]
    id: Cow<'a, str>,
}

/// The role and the id-carrying blocks of one message (tool calls with empty name and
/// arguments, the tool result with an empty body), as [`view_text_in`] would give them
/// minus the text; `None` when the message needs the full decode (see [`IdsRow`]).
pub(crate) fn pairing_view(text: &str) -> Option<(Role, Vec<Block>)> {
    let mut row: IdsRow = serde_json::from_str(text).ok()?;
    if row.content.is_none() && content_required(row.role.as_ref()) {
        return None;
    }
    let role = row.role()?;
    if role == Role::Tool {
        let call_id = row.result_call_id()?;
        let result = Block::ToolResult { call_id, name: None, text: String::new(), is_error: false, media: Vec::new(), media_bytes: 0 };
        return Some((role, vec![result]));
    }
    let blocks = row
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|c| Block::ToolCall { id: c.id.into_owned(), name: String::new(), arguments: String::new() })
        .collect();
    Some((role, blocks))
}
