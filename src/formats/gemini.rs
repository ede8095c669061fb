//! Gemini `generateContent` `contents` (F-1), with the system prompt in the envelope's
//! top-level `systemInstruction` field.
//!
//! A `Content` has a `role` (`user` or `model`; the API lets a single-turn request
//! leave it out, read here as `user`; the legacy `function` role of older SDKs is read
//! as a result-carrying turn) and `parts`. Parts (Gemini docs, "Content"/"Part"):
//! `text`; `inlineData {mimeType, data}` and `fileData {mimeType, fileUri}` (media; an
//! `inlineData` of `text/*` whose data is base64 of UTF-8 reads as text, N-1);
//! `functionCall {name, args, id?}`; `functionResponse {name, response, id?, parts?}`;
//! `thought: true` text parts (thought summaries) and `thoughtSignature` on any part
//! (opaque signed reasoning, never edited, T-3); `executableCode` and
//! `codeExecutionResult` (server-side code execution, kept whole as opaque items).
//!
//! Pairing (Gemini docs, "function calling"): a model turn with N `functionCall` parts
//! is followed immediately by one user turn with N `functionResponse` parts. A
//! response names its function and, when the call carried an `id`, echoes it. Calls
//! without ids are linked by name and position: the view gives the k-th call of a
//! name in a turn the id `gemini-pos:NAME:k`, and the k-th response of that name the
//! same id, and [`link_results`] (run by `decode`) re-links the responses of an
//! answer turn to the calls of the model turn before it (by `id` when both sides have
//! one, else by name in order). These ids live in the view only; `raw` is unchanged.

use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{json_len, Block, MediaKind, Message, Role};
use serde_json::{json, Map, Value};

/// Gemini pairing: all responses in the single next turn, exactly one per call.
pub const RULES: PairingRules =
    PairingRules { results_in_one_message: true, results_first: false, exact_result_count: true, results_anywhere_after: false };

/// The Gemini `contents` adapter.
pub struct Gemini;

/// Prefix of the view-only ids given to calls and responses without an `id`.
pub const POSITIONAL_ID_PREFIX: &str = "gemini-pos:";

fn positional_id(name: &str, k: usize) -> String {
    format!("{POSITIONAL_ID_PREFIX}{name}:{k}")
}


/// A Gemini field under its proto JSON name (`camel`, e.g. `inlineData`) or, when that
/// is absent, its proto field name (`snake`, `inline_data`): the REST API accepts both
/// spellings (F-1), so an SDK or a hand-written request in snake_case reads the same.
pub(crate) fn field<'a>(v: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    v.get(camel).or_else(|| v.get(snake))
}

/// Which spelling of a field `v` uses (`camel` when both or neither), for messages.
fn spelled<'a>(v: &Value, camel: &'a str, snake: &'a str) -> &'a str {
    if v.get(camel).is_none() && v.get(snake).is_some() {
        snake
    } else {
        camel
    }
}

/// [`field`], mutable: the key the input used is the one written.
pub(crate) fn field_mut<'a>(v: &'a mut Value, camel: &str, snake: &str) -> Option<&'a mut Value> {
    let key = spelled(v, camel, snake);
    v.get_mut(key)
}

/// The text of an `inlineData` part whose `mimeType` is a text type (`text/*`, JSON, ...; base64 of UTF-8
/// text): in a user turn that is the person's text (N-1), read as a text block. `None`
/// for other media, or data that is not base64 of UTF-8.
fn inline_text(p: &Value) -> Option<String> {
    let d = field(p, "inlineData", "inline_data")?;
    let mime = field(d, "mimeType", "mime_type").and_then(Value::as_str)?;
    super::text_media::text_of_data(d.get("data").and_then(Value::as_str)?, Some(mime))
}

/// Media of an `inlineData` / `fileData` part: kind, bytes, inline.
/// Kind, bytes (inline data, else the URI), inline-ness and name of an `inlineData` /
/// `fileData` part; the name ([`super::text_media::media_name`], M-1) is the `fileUri`,
/// then the `displayName`.
fn media_of(p: &Value) -> Option<(MediaKind, usize, bool, Option<String>)> {
    const NAMES: [&str; 4] = ["/fileUri", "/file_uri", "/displayName", "/display_name"];
    if let Some(d) = field(p, "inlineData", "inline_data") {
        let mime = field(d, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or("");
        let bytes = d.get("data").and_then(Value::as_str).map(str::len).unwrap_or(0);
        return Some((MediaKind::from_mime(mime), bytes, true, super::text_media::media_name(d, &NAMES)));
    }
    if let Some(f) = field(p, "fileData", "file_data") {
        let mime = field(f, "mimeType", "mime_type").and_then(Value::as_str).unwrap_or("");
        let bytes = field(f, "fileUri", "file_uri").and_then(Value::as_str).map(str::len).unwrap_or_else(|| json_len(f));
        return Some((MediaKind::from_mime(mime), bytes, false, super::text_media::media_name(f, &NAMES)));
    }
    None
}

/// Text of a `functionResponse.response`: the `output` (or `error`) string when that
/// is all it says, else the whole object as JSON text.
fn response_text(resp: Option<&Value>) -> (String, bool) {
    let Some(resp) = resp else { return (String::new(), false) };
    let is_error = resp.get("error").is_some() && resp.get("output").is_none();
    if let Value::Object(map) = resp {
        if map.len() == 1 {
            if let Some(Value::String(s)) = map.get("output").or_else(|| map.get("error")) {
                return (s.clone(), is_error);
            }
        }
    }
    (resp.to_string(), is_error)
}

impl Adapter for Gemini {
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
        let role = match raw.get("role") {
            None | Some(Value::Null) => Role::User,
            Some(Value::String(r)) => match r.as_str() {
                "user" => Role::User,
                "model" => Role::Assistant,
                "function" => Role::Tool,
                other => return Err(Error::invalid(format!("message {at}: role {other:?} is not a Gemini content role (user, model); the system prompt goes in the top-level `systemInstruction` field"))),
            },
            Some(_) => return Err(Error::invalid(format!("message {at}: `role` must be a string"))),
        };
        let parts: &[Value] = match raw.get("parts") {
            Some(Value::Array(parts)) => parts,
            None | Some(Value::Null) => &[],
            Some(_) => return Err(Error::invalid(format!("message {at}: `parts` must be an array"))),
        };
        let mut blocks = Vec::new();
        // occurrences of each name so far, for positional ids
        let mut calls_seen: Vec<(&str, usize)> = Vec::new();
        let mut resps_seen: Vec<(&str, usize)> = Vec::new();
        for (k, p) in parts.iter().enumerate() {
            if !p.is_object() {
                return Err(Error::invalid(format!("message {at}: parts[{k}] must be an object")));
            }
            let thought = p.get("thought").and_then(Value::as_bool).unwrap_or(false);
            let signed = field(p, "thoughtSignature", "thought_signature").is_some();
            if thought {
                blocks.push(Block::Reasoning {
                    text: p.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
                    bytes: json_len(p),
                    signed,
                });
                continue;
            }
            if signed {
                // A signature riding on a text or functionCall part: opaque reasoning
                // state that must go back with the part, never edited (T-3).
                let sig = field(p, "thoughtSignature", "thought_signature").map(json_len).unwrap_or(0);
                blocks.push(Block::Reasoning { text: String::new(), bytes: sig, signed: true });
            }
            if let Some(t) = p.get("text") {
                blocks.push(Block::Text { text: t.as_str().unwrap_or("").to_string() });
            } else if let Some(text) = inline_text(p) {
                blocks.push(Block::Text { text });
            } else if let Some((kind, bytes, inline, name)) = media_of(p) {
                blocks.push(Block::Media { kind, bytes, inline, name });
            } else if let Some(fc) = field(p, "functionCall", "function_call") {
                let name = fc.get("name").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: parts[{k}].{} has no string `name`", spelled(p, "functionCall", "function_call"))))?;
                let pos = bump(&mut calls_seen, name);
                let id = match fc.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_string(),
                    None => positional_id(name, pos),
                };
                let arguments = fc.get("args").map(Value::to_string).unwrap_or_default();
                blocks.push(Block::ToolCall { id, name: name.to_string(), arguments });
            } else if let Some(fr) = field(p, "functionResponse", "function_response") {
                let name = fr.get("name").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("message {at}: parts[{k}].{} has no string `name`", spelled(p, "functionResponse", "function_response"))))?;
                let pos = bump(&mut resps_seen, name);
                let call_id = match fr.get("id").and_then(Value::as_str) {
                    Some(id) => id.to_string(),
                    None => positional_id(name, pos),
                };
                let (text, is_error) = response_text(fr.get("response"));
                let mut media = Vec::new();
                let mut media_bytes = 0;
                if let Some(inner) = fr.get("parts").and_then(Value::as_array) {
                    for ip in inner {
                        if let Some((kind, bytes, ..)) = media_of(ip) {
                            media.push(kind);
                            media_bytes += bytes;
                        }
                    }
                }
                blocks.push(Block::ToolResult { call_id, name: Some(name.to_string()), text, is_error, media, media_bytes });
            } else if !signed {
                let kind = p
                    .as_object()
                    .and_then(|m| m.keys().find(|k| !matches!(k.as_str(), "thought" | "thoughtSignature" | "thought_signature" | "partMetadata" | "part_metadata" | "videoMetadata" | "video_metadata")))
                    .cloned()
                    .unwrap_or_else(|| "part".to_string());
                blocks.push(Block::Opaque { kind, bytes: json_len(p) });
            }
        }
        Ok((role, blocks))
    }

    /// Replaces `functionResponse.response` (or `function_response.response`, as the
    /// input spells it) of the `nth` response part with
    /// `{"output": text}` (Gemini docs: `output` holds the function's output) and drops
    /// its multimodal `parts`; `name`, `id` and every other field stay.
    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()> {
        let parts = raw.get_mut("parts").and_then(Value::as_array_mut).ok_or_else(|| Error::invalid("content has no parts"))?;
        let fr = parts
            .iter_mut()
            .filter_map(|p| field_mut(p, "functionResponse", "function_response"))
            .nth(nth)
            .ok_or_else(|| Error::invalid(format!("no functionResponse part number {nth}")))?;
        match fr {
            Value::Object(map) => {
                let mut body = Map::new();
                body.insert("output".into(), Value::String(text.to_string()));
                map.insert("response".into(), Value::Object(body));
                map.remove("parts");
                Ok(())
            }
            _ => Err(Error::invalid("functionResponse is not an object")),
        }
    }

    fn text_message(text: &str) -> Value {
        json!({ "role": "user", "parts": [{ "text": text }] })
    }
}

/// Counts one more occurrence of `name`, returning its 0-based position.
fn bump<'a>(seen: &mut Vec<(&'a str, usize)>, name: &'a str) -> usize {
    match seen.iter_mut().find(|(n, _)| *n == name) {
        Some((_, c)) => {
            let pos = *c;
            *c += 1;
            pos
        }
        None => {
            seen.push((name, 1));
            0
        }
    }
}

/// Links the responses of each answer turn to the calls of the model turn right before
/// it (view only): a response whose id is a call's id keeps it; the others take, in
/// order, the id of the first still-unanswered call with the same name. Responses that
/// match no call keep their own id (and `validate_pairing` reports them).
pub fn link_results(messages: &mut [Message]) {
    for i in 1..messages.len() {
        let (before, rest) = messages.split_at_mut(i);
        let (Some(caller), Some(answer)) = (before.last(), rest.first_mut()) else { continue };
        if !caller.has_calls() || !answer.has_results() {
            continue;
        }
        let calls: Vec<(String, String)> = caller
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
                _ => None,
            })
            .collect();
        let mut claimed = vec![false; calls.len()];
        let mut linked = vec![false; answer.blocks.len()];
        // pass 1: exact ids
        for (bi, b) in answer.blocks.iter().enumerate() {
            if let Block::ToolResult { call_id, .. } = b {
                if let Some(ci) = calls.iter().enumerate().position(|(ci, (id, _))| id == call_id && !claimed.get(ci).copied().unwrap_or(true)) {
                    if let Some(c) = claimed.get_mut(ci) {
                        *c = true;
                    }
                    if let Some(l) = linked.get_mut(bi) {
                        *l = true;
                    }
                }
            }
        }
        // pass 2: by name, in order
        for (bi, b) in answer.blocks.iter_mut().enumerate() {
            if linked.get(bi).copied().unwrap_or(true) {
                continue;
            }
            if let Block::ToolResult { call_id, name: Some(name), .. } = b {
                if let Some(ci) = calls.iter().enumerate().position(|(ci, (_, n))| n == name && !claimed.get(ci).copied().unwrap_or(true)) {
                    if let (Some(c), Some((id, _))) = (claimed.get_mut(ci), calls.get(ci)) {
                        *c = true;
                        *call_id = id.clone();
                    }
                }
            }
        }
    }
}
