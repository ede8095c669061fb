//! Format auto-detection from a document's shape (F-1, N-3).

use super::decode::dispatch_view;
use super::Format;
use crate::error::{Error, ErrorCode, Result};
use serde_json::Value;

/// The formats in a fixed order (index = position in the fit masks).
const ALL: [Format; 6] = [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];

/// OpenAI Responses item types (a top-level `type` outside this list is not a
/// Responses item, N-3).
fn is_responses_type(t: &str) -> bool {
    matches!(t, "message" | "reasoning" | "item_reference" | "compaction" | "function_call_result")
        || t.ends_with("_call")
        || t.ends_with("_call_output")
        || t.starts_with("mcp_")
}

/// The likely source of a shape no format accounts for (N-3), as a hint for the
/// `unknown_format` message; `None` when the item looks like a provider message.
pub(crate) fn foreign_hint(item: &Value) -> Option<&'static str> {
    let ty = item.get("type").and_then(Value::as_str);
    if item.get("lc").and_then(Value::as_u64) == Some(1) && item.get("id").is_some_and(Value::is_array) {
        return Some("this looks like LangChain messages serialized with dumpd/dumps ({lc: 1, type: \"constructor\", ...}): load them with langchain_core.load and convert them (e.g. convert_to_openai_messages), or use the langchain integration, then import as openai-chat");
    }
    if item.get("data").is_some_and(Value::is_object) && ty.is_some_and(|t| matches!(t, "human" | "ai" | "system" | "tool" | "function" | "chat" | "remove") || t.ends_with("MessageChunk")) {
        return Some("this looks like a LangChain message dump (messages_to_dict: [{type: \"human\", data: {...}}]): convert it with messages_from_dict + convert_to_openai_messages, or use the langchain integration, then import as openai-chat");
    }
    if item.get("payload").is_some() && ty.is_some_and(|t| matches!(t, "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")) {
        return Some("this looks like Codex CLI rollout lines wrapped in a JSON array: import the rollout file itself (JSON Lines) with kind codex-rollout");
    }
    if matches!(item.get("object").and_then(Value::as_str), Some("trace" | "trace.span")) {
        return Some("this looks like an OpenAI Agents SDK trace export (a span tree, not a transcript): import the run's result.to_input_list() as openai-responses instead");
    }
    if item.get("conversations").is_some_and(Value::is_array) {
        return Some("this looks like a Glaive / ShareGPT dataset: import it with kind glaive");
    }
    if item.get("traj").is_some_and(Value::is_array) {
        return Some("this looks like a tau-bench results file: import it with kind tau-bench");
    }
    if item.get("history").is_some_and(Value::is_array) && item.get("trajectory").is_some() {
        return Some("this looks like a SWE-agent trajectory: import it with kind swe-agent-traj");
    }
    if ui_message(item) {
        return Some(UI_MESSAGES_HINT);
    }
    if matches!(ty, Some("user" | "assistant" | "system" | "attachment")) && item.get("message").is_some_and(Value::is_object) && item.get("role").is_none() {
        return Some("this looks like Claude Code log rows: import the .jsonl log with kind claude-code-jsonl");
    }
    None
}

/// What to do with AI SDK UI messages (N-3): they are the chat state of `useChat`, not
/// a model transcript.
pub(crate) const UI_MESSAGES_HINT: &str = "this looks like AI SDK UI messages (useChat's UIMessage[]: {id, role, parts}): convert them with convertToModelMessages from 'ai', then import as ai-sdk";

/// An AI SDK `UIMessage`: a `role`, no `content` and a non-empty `parts` array whose
/// every part has a string `type` (Gemini's `parts` have none).
pub(crate) fn ui_message(item: &Value) -> bool {
    item.get("content").is_none()
        && matches!(item.get("role").and_then(Value::as_str), Some("user" | "assistant" | "system"))
        && item
            .get("parts")
            .and_then(Value::as_array)
            .is_some_and(|p| !p.is_empty() && p.iter().all(|x| x.get("type").is_some_and(Value::is_string)))
}

fn hint_error(hint: &str) -> Error {
    Error::new(ErrorCode::UnknownFormat, format!("unknown format: {hint}"))
}

/// Which formats one message fits: the format's own adapter reads it (and for OpenAI
/// Responses its `type` is a Responses item type). Bit `k` = [`ALL`]`[k]`.
fn fits(m: &Value, mask: u8) -> u8 {
    if !m.is_object() {
        return 0;
    }
    let mut out = 0u8;
    for (k, f) in ALL.iter().enumerate() {
        if mask & (1 << k) == 0 {
            continue;
        }
        if *f == Format::OpenaiResponses {
            match m.get("type") {
                Some(Value::String(t)) if is_responses_type(t) => {}
                None if m.get("role").is_some() => {}
                _ => continue,
            }
        }
        if dispatch_view(*f, m, 0).is_ok() {
            out |= 1 << k;
        }
    }
    out
}

fn bit(f: Format) -> u8 {
    1 << ALL.iter().position(|x| *x == f).unwrap_or(0)
}

/// `format` when every message fitted it, else `unknown_format` naming the first
/// message that did not.
fn checked(format: Format, mask: u8, first_misfit: &[(Format, usize)]) -> Result<Format> {
    if mask & bit(format) != 0 {
        return Ok(format);
    }
    let at = first_misfit.iter().find(|(f, _)| *f == format).map(|(_, k)| *k).unwrap_or(0);
    Err(Error::new(ErrorCode::UnknownFormat, format!("unknown format: the messages vote {} but message {at} does not fit it; pass the format explicitly or fix that message", format.name())))
}

/// Accumulates the fit mask over messages, remembering where each format first failed.
#[derive(Default)]
struct Fit {
    mask: u8,
    started: bool,
    misfit: Vec<(Format, usize)>,
}

impl Fit {
    fn add(&mut self, m: &Value, at: usize) -> Result<()> {
        if let Some(h) = foreign_hint(m) {
            return Err(hint_error(h));
        }
        if !self.started {
            self.mask = 0b11_1111;
            self.started = true;
        }
        let f = fits(m, self.mask);
        for (k, fmt) in ALL.iter().enumerate() {
            if self.mask & (1 << k) != 0 && f & (1 << k) == 0 {
                self.misfit.push((*fmt, at));
            }
        }
        self.mask &= f;
        Ok(())
    }
    fn check(&self, format: Format) -> Result<Format> {
        if !self.started {
            return Ok(format);
        }
        checked(format, self.mask, &self.misfit)
    }
}

/// Guesses the format of a host document from its shape (F-1, issue "format
/// auto-detection").
///
/// Envelopes: `contents`/`systemInstruction` -> Gemini, `input`/`instructions` ->
/// OpenAI Responses. Messages vote: `parts` or role `model` -> Gemini; top-level item
/// `type` (`message`, `function_call`, `reasoning`, ...) -> Responses; `tool_calls`,
/// `tool_call_id`, roles `system`/`developer`/`tool` with string content -> OpenAI chat;
/// `tool_use`/`tool_result`/`thinking` blocks -> Anthropic; `tool-call`/`tool-result`
/// parts -> AI SDK. Errors: `unknown_format` when the votes disagree or nothing decides
/// (plain text messages fit several formats: pass the format explicitly).
pub fn detect(doc: &Value) -> Result<Format> {
    match doc {
        Value::Array(items) => detect_items(items.iter().map(Ok)),
        Value::Object(m) => {
            if let Some(h) = foreign_hint(doc) {
                return Err(hint_error(h));
            }
            let has = |k: &str| m.contains_key(k);
            let array = |k: &str| m.get(k).and_then(Value::as_array);
            match detect_envelope(has, |k| array(k).is_some())? {
                Some(f) => {
                    let key = if f == Format::Gemini { "contents" } else { "input" };
                    check_items(f, array(key).map(Vec::as_slice).unwrap_or_default().iter().map(Ok))
                }
                None => {
                    let items = array("messages").map(Vec::as_slice).unwrap_or_default();
                    detect_messages(has("system"), items.iter().map(Ok))
                }
            }
        }
        _ => Err(Error::new(ErrorCode::UnknownFormat, "cannot detect the format of a non-array, non-object document")),
    }
}

/// [`detect`] from JSON text, parsing one message at a time (never the whole document
/// as a `Value` tree). Errors: `invalid_transcript` for text that is not JSON, then as
/// [`detect`].
pub fn detect_text(text: &str) -> Result<Format> {
    let invalid = |e: serde_json::Error| Error::invalid(format!("transcript: invalid JSON: {e}"));
    // a row read on its own: nested past the limit, the typed depth error naming the
    // message and the input's own depth (`base`: the document's levels around it)
    let row = |k: usize, r: &serde_json::value::RawValue, base: usize| {
        serde_json::from_str::<Value>(r.get()).map_err(|e| {
            crate::error::too_deep_error(&format!("message {k}"), r.get(), base, &e, ErrorCode::InvalidTranscript).unwrap_or_else(|| invalid(e))
        })
    };
    let parse = |(k, r): (usize, &serde_json::value::RawValue)| row(k, r, 1);
    let in_envelope = |(k, r): (usize, &serde_json::value::RawValue)| row(k, r, 2);
    match crate::raw::split_top(text).map_err(|e| crate::error::too_deep_error("transcript", text, 0, &e, ErrorCode::InvalidTranscript).unwrap_or_else(|| invalid(e)))? {
        crate::raw::RawTop::Array(items) => detect_items(items.into_iter().enumerate().map(parse)),
        crate::raw::RawTop::Object(members) => {
            let get = |k: &str| members.iter().rev().find(|(key, _)| key == k).map(|(_, v)| *v);
            // the top-level keys a foreign shape is known by (values parsed only for those)
            let mut probe = serde_json::Map::new();
            for k in ["lc", "id", "type", "data", "payload", "object", "conversations", "traj", "history", "trajectory", "message", "role"] {
                if let Some(v) = get(k) {
                    let v: Value = if matches!(k, "history" | "conversations" | "traj" | "trajectory" | "message" | "data" | "payload") { match v.get().as_bytes().first() {
                        Some(b'[') => Value::Array(Vec::new()),
                        Some(b'{') => Value::Object(serde_json::Map::new()),
                        _ => Value::Null,
                    } } else { serde_json::from_str(v.get()).map_err(invalid)? };
                    probe.insert(k.to_string(), v);
                }
            }
            if let Some(h) = foreign_hint(&Value::Object(probe)) {
                return Err(hint_error(h));
            }
            let has = |k: &str| get(k).is_some();
            let is_array = |k: &str| get(k).is_some_and(|v| v.get().starts_with('['));
            match detect_envelope(has, is_array)? {
                Some(f) => {
                    let key = if f == Format::Gemini { "contents" } else { "input" };
                    let items: Vec<&serde_json::value::RawValue> = match get(key) {
                        Some(list) => serde_json::from_str(list.get()).map_err(invalid)?,
                        None => Vec::new(),
                    };
                    check_items(f, items.into_iter().enumerate().map(in_envelope))
                }
                None => {
                    let items: Vec<&serde_json::value::RawValue> = match get("messages") {
                        Some(list) => serde_json::from_str(list.get()).map_err(invalid)?,
                        None => Vec::new(),
                    };
                    detect_messages(has("system"), items.into_iter().enumerate().map(in_envelope))
                }
            }
        }
        crate::raw::RawTop::Other => Err(Error::new(ErrorCode::UnknownFormat, "cannot detect the format of a non-array, non-object document")),
    }
}

/// The envelope keys of an object document: `Some(format)` when they decide it, `None`
/// when the `messages` array must be read. `has(key)`: the key is present;
/// `is_array(key)`: its value is an array.
fn detect_envelope(has: impl Fn(&str) -> bool, is_array: impl Fn(&str) -> bool) -> Result<Option<Format>> {
    if is_array("contents") {
        return Ok(Some(Format::Gemini));
    }
    if has("contents") {
        return Err(Error::new(ErrorCode::UnknownFormat, "cannot detect the format: `contents` is not an array (a Gemini document holds its turns in a `contents` array)"));
    }
    if is_array("input") {
        return Ok(Some(Format::OpenaiResponses));
    }
    if !is_array("messages") {
        return Err(Error::new(ErrorCode::UnknownFormat, "cannot detect the format: expected an array of messages or an object with `messages`, `contents` or `input`"));
    }
    Ok(None)
}

/// `{system?, messages}`: with a top-level `system`, Anthropic unless a message has an AI
/// SDK part (`toolCallId`) or a `system` role; without one, the messages vote.
fn detect_messages<V: std::borrow::Borrow<Value>>(system: bool, items: impl Iterator<Item = Result<V>>) -> Result<Format> {
    if !system {
        return detect_items(items);
    }
    let mut ai = false;
    let mut fit = Fit::default();
    for (at, x) in items.enumerate() {
        let x = x?;
        let x = x.borrow();
        fit.add(x, at)?;
        ai = ai
            || x.get("content").and_then(Value::as_array).is_some_and(|p| p.iter().any(|b| b.get("toolCallId").is_some()))
            || x.get("role").and_then(Value::as_str) == Some("system");
    }
    fit.check(if ai { Format::AiSdk } else { Format::Anthropic })
}

/// An envelope decided `format`: every item under its key must fit it (N-3).
fn check_items<V: std::borrow::Borrow<Value>>(format: Format, items: impl Iterator<Item = Result<V>>) -> Result<Format> {
    let mut fit = Fit::default();
    for (at, x) in items.enumerate() {
        let x = x?;
        fit.add(x.borrow(), at)?;
    }
    fit.check(format)
}

/// The messages' votes (see [`detect`]).
fn detect_items<V: std::borrow::Borrow<Value>>(items: impl Iterator<Item = Result<V>>) -> Result<Format> {
    let mut votes: Vec<Format> = Vec::new();
    let mut unread: Option<String> = None;
    let mut fit = Fit::default();
    for (at, m) in items.enumerate() {
        let m = m?;
        let m = m.borrow();
        fit.add(m, at)?;
        let role = m.get("role").and_then(Value::as_str);
        if m.get("parts").is_some() || role == Some("model") {
            votes.push(Format::Gemini);
            continue;
        }
        if let Some(ty) = m.get("type").and_then(Value::as_str) {
            if ty != "text" {
                votes.push(Format::OpenaiResponses);
                continue;
            }
        }
        if m.get("tool_calls").is_some() || m.get("tool_call_id").is_some() || matches!(role, Some("developer")) {
            votes.push(Format::OpenaiChat);
        }
        match m.get("content") {
            Some(Value::Array(blocks)) => {
                for b in blocks {
                    match b.get("type").and_then(Value::as_str) {
                        Some("tool_call") if b.get("arguments").is_some() => votes.push(Format::Canonical),
                        Some("tool_result") if b.get("call_id").is_some() => votes.push(Format::Canonical),
                        // media parts share type names across formats: their keys tell
                        // them apart (N-3, issue 12): Anthropic `source`, AI SDK
                        // `image` / `data`, OpenAI Chat `file`
                        Some(t @ ("image" | "document" | "file")) => match media_part_format(t, b) {
                            Some(f) => votes.push(f),
                            None => {
                                if unread.is_none() {
                                    let keys: Vec<&str> = b.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
                                    unread = Some(format!("message {at}: a {t:?} content part with keys [{}] matches no format's {t:?} part (Anthropic: `source` object; AI SDK: `image` or `data`; OpenAI Chat file: `file` object); pass the format explicitly", keys.join(", ")));
                                }
                            }
                        },
                        Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking") if b.get("toolCallId").is_none() => votes.push(Format::Anthropic),
                        Some("image_url" | "input_audio") => votes.push(Format::OpenaiChat),
                        Some("input_text" | "output_text" | "input_image") => votes.push(Format::OpenaiResponses),
                        Some("tool-call" | "tool-result" | "tool-approval-request" | "tool-approval-response" | "reasoning") => votes.push(Format::AiSdk),
                        _ => {}
                    }
                }
            }
            Some(Value::String(_)) if role == Some("tool") => votes.push(Format::OpenaiChat),
            _ => {}
        }
    }
    crate::sorted::sort_by(&mut votes, |a, b| a.name().cmp(b.name()));
    votes.dedup();
    if let Some(why) = unread {
        return Err(Error::new(ErrorCode::UnknownFormat, format!("unknown format: {why}")));
    }
    match votes.as_slice() {
        [f] => fit.check(*f),
        [] => Err(Error::new(ErrorCode::UnknownFormat, "ambiguous format: plain text messages fit several formats; pass the format explicitly (e.g. openai-chat)")),
        many => Err(Error::new(ErrorCode::UnknownFormat, format!("ambiguous format: the messages mix shapes of {}; pass the format explicitly", many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")))),
    }
}

/// The format an `image` / `document` / `file` content part belongs to, by its keys
/// (N-3, issue 12): Anthropic image/document blocks carry a `source` object; AI SDK
/// image parts an `image` value and file parts `data`; an OpenAI Chat file part a
/// `file` object. `None` when the keys fit none of them or more than one.
fn media_part_format(ty: &str, b: &Value) -> Option<Format> {
    if b.get("toolCallId").is_some() {
        return None;
    }
    let source = b.get("source").is_some_and(Value::is_object);
    let sdk = match ty {
        "image" => b.get("image").is_some_and(|v| !v.is_null()),
        "file" => b.get("data").is_some_and(|v| !v.is_null()),
        _ => false,
    };
    let chat_file = ty == "file" && b.get("file").is_some_and(Value::is_object);
    match (source && ty != "file", sdk, chat_file) {
        (true, false, false) => Some(Format::Anthropic),
        (false, true, false) => Some(Format::AiSdk),
        (false, false, true) => Some(Format::OpenaiChat),
        _ => None,
    }
}
