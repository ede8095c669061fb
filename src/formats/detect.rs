//! Format auto-detection from a document's shape (F-1, N-3).

use super::Format;
use crate::error::{Error, ErrorCode, Result};
use serde_json::Value;

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
            let has = |k: &str| m.contains_key(k);
            let array = |k: &str| m.get(k).and_then(Value::as_array);
            match detect_envelope(has, |k| array(k).is_some())? {
                Some(f) => Ok(f),
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
    let parse = |r: &serde_json::value::RawValue| serde_json::from_str::<Value>(r.get()).map_err(invalid);
    match crate::raw::split_top(text).map_err(invalid)? {
        crate::raw::RawTop::Array(items) => detect_items(items.into_iter().map(parse)),
        crate::raw::RawTop::Object(members) => {
            let get = |k: &str| members.iter().rev().find(|(key, _)| key == k).map(|(_, v)| *v);
            let has = |k: &str| get(k).is_some();
            let is_array = |k: &str| get(k).is_some_and(|v| v.get().starts_with('['));
            match detect_envelope(has, is_array)? {
                Some(f) => Ok(f),
                None => {
                    let items: Vec<&serde_json::value::RawValue> = match get("messages") {
                        Some(list) => serde_json::from_str(list.get()).map_err(invalid)?,
                        None => Vec::new(),
                    };
                    detect_messages(has("system"), items.into_iter().map(parse))
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
    if has("contents") || has("systemInstruction") {
        return Ok(Some(Format::Gemini));
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
    for x in items {
        let x = x?;
        let x = x.borrow();
        ai = ai
            || x.get("content").and_then(Value::as_array).is_some_and(|p| p.iter().any(|b| b.get("toolCallId").is_some()))
            || x.get("role").and_then(Value::as_str) == Some("system");
    }
    Ok(if ai { Format::AiSdk } else { Format::Anthropic })
}

/// The messages' votes (see [`detect`]).
fn detect_items<V: std::borrow::Borrow<Value>>(items: impl Iterator<Item = Result<V>>) -> Result<Format> {
    let mut votes: Vec<Format> = Vec::new();
    for m in items {
        let m = m?;
        let m = m.borrow();
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
                        Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking" | "image" | "document") if b.get("toolCallId").is_none() => votes.push(Format::Anthropic),
                        Some("image_url" | "input_audio") => votes.push(Format::OpenaiChat),
                        Some("input_text" | "output_text" | "input_image") => votes.push(Format::OpenaiResponses),
                        Some("tool-call" | "tool-result" | "tool-approval-request" | "tool-approval-response" | "reasoning" | "file") => votes.push(Format::AiSdk),
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
    match votes.as_slice() {
        [f] => Ok(*f),
        [] => Err(Error::new(ErrorCode::UnknownFormat, "ambiguous format: plain text messages fit several formats; pass the format explicitly (e.g. openai-chat)")),
        many => Err(Error::new(ErrorCode::UnknownFormat, format!("ambiguous format: the messages mix shapes of {}; pass the format explicitly", many.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")))),
    }
}
