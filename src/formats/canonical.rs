//! The engine's own canonical JSON (F-1): each message is
//! `{ "role": "system" | "user" | "assistant" | "tool", "content": [block, ...] }` with
//! blocks exactly as [`Block`] serializes them (`{"type": "text", "text"}`,
//! `{"type": "tool_call", "id", "name", "arguments"}`, `{"type": "tool_result",
//! "call_id", "name", "text", "is_error", "media", "media_bytes"}`, `{"type": "media",
//! "kind", "bytes", "inline", "name"?}`, `{"type": "reasoning", ...}`, `{"type": "opaque", ...}`).
//! Any other key of a message or block rides through untouched. Pairing: results sit
//! in the messages right after their call (like OpenAI chat).

use super::{Adapter, PairingRules};
use crate::error::{Error, Result};
use crate::transcript::{Block, Role};
use serde::de::{Error as _, Unexpected};
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
                .map(|(k, b)| block(b).map_err(|e| Error::invalid(format!("message {at}: content[{k}]: {e}"))))
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

type DeResult<T> = std::result::Result<T, serde_json::Error>;

/// The block types, in [`Block`]'s declaration order (its serde variant names).
const BLOCK_TYPES: &[&str] = &["text", "media", "tool_call", "tool_result", "reasoning", "opaque"];

/// One canonical block from its JSON, exactly as `serde_json::from_value::<Block>` reads
/// it (same values, same error texts), without serde's buffering of internally tagged
/// enums, which is a large share of the wasm module. The object form
/// `{"type": "...", ...fields}` and serde's sequence form `["type", field, ...]` (fields
/// in declaration order) are both accepted; unknown keys are ignored.
/// `tests/canonical_blocks.rs` checks it against the derived `Deserialize` of [`Block`].
pub fn block(v: &Value) -> DeResult<Block> {
    let (kind, fields) = match v {
        Value::Object(map) => {
            let Some(tag) = map.get("type") else {
                return Err(serde_json::Error::missing_field("type"));
            };
            (block_type(tag)?, Fields::Map(map))
        }
        Value::Array(items) => {
            let Some(tag) = items.first() else {
                return Err(serde_json::Error::missing_field("type"));
            };
            (block_type(tag)?, Fields::Seq(items.get(1..).unwrap_or_default()))
        }
        other => return Err(serde_json::Error::invalid_type(unexpected(other), &"internally tagged enum Block")),
    };
    let names = FIELDS.get(kind).copied().unwrap_or_default();
    let mut f = FieldReader { fields, names, expecting: EXPECTING.get(kind).copied().unwrap_or_default(), at: 0, bad: None, missing: None };
    Ok(match kind {
        0 => {
            let text = f.get(false);
            f.finish()?;
            Block::Text { text: req(text)? }
        }
        1 => {
            let (kind, bytes, inline, name) = (f.get(false), f.get(false), f.get(false), f.get(true));
            f.finish()?;
            Block::Media { kind: req(kind)?, bytes: req(bytes)?, inline: req(inline)?, name: name.unwrap_or_default() }
        }
        2 => {
            let (id, name, arguments) = (f.get(false), f.get(false), f.get(false));
            f.finish()?;
            Block::ToolCall { id: req(id)?, name: req(name)?, arguments: req(arguments)? }
        }
        3 => {
            let (call_id, name, text) = (f.get(false), f.get(true), f.get(false));
            let (is_error, media, media_bytes) = (f.get(true), f.get(true), f.get(true));
            f.finish()?;
            Block::ToolResult {
                call_id: req(call_id)?,
                name: name.unwrap_or_default(),
                text: req(text)?,
                is_error: is_error.unwrap_or_default(),
                media: media.unwrap_or_default(),
                media_bytes: media_bytes.unwrap_or_default(),
            }
        }
        4 => {
            let (text, bytes, signed) = (f.get(true), f.get(true), f.get(true));
            f.finish()?;
            Block::Reasoning { text: text.unwrap_or_default(), bytes: bytes.unwrap_or_default(), signed: signed.unwrap_or_default() }
        }
        _ => {
            let (kind, bytes) = (f.get(false), f.get(true));
            f.finish()?;
            Block::Opaque { kind: req(kind)?, bytes: bytes.unwrap_or_default() }
        }
    })
}

/// A required field after [`FieldReader::finish`] passed (so it is there).
fn req<T>(v: Option<T>) -> DeResult<T> {
    v.ok_or_else(|| serde_json::Error::custom("missing field"))
}

/// Field names of each block type, in declaration order.
const FIELDS: [&[&str]; 6] = [
    &["text"],
    &["kind", "bytes", "inline", "name"],
    &["id", "name", "arguments"],
    &["call_id", "name", "text", "is_error", "media", "media_bytes"],
    &["text", "bytes", "signed"],
    &["kind", "bytes"],
];

/// serde's "expected" text for a block type's fields given as a sequence.
const EXPECTING: [&str; 6] = [
    "struct variant Block::Text with 1 element",
    "struct variant Block::Media with 4 elements",
    "struct variant Block::ToolCall with 3 elements",
    "struct variant Block::ToolResult with 6 elements",
    "struct variant Block::Reasoning with 3 elements",
    "struct variant Block::Opaque with 2 elements",
];

/// The index in [`BLOCK_TYPES`] of a block's `type` value.
fn block_type(tag: &Value) -> DeResult<usize> {
    match tag {
        Value::String(s) => BLOCK_TYPES.iter().position(|t| t == s).ok_or_else(|| serde_json::Error::unknown_variant(s, BLOCK_TYPES)),
        other => Err(serde_json::Error::invalid_type(unexpected(other), &"variant identifier")),
    }
}

/// How serde names a JSON value in an "invalid type" error.
fn unexpected(v: &Value) -> Unexpected<'_> {
    match v {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// A block's fields: the object (minus `type`) or the elements after the tag.
enum Fields<'a> {
    Map(&'a serde_json::Map<String, Value>),
    Seq(&'a [Value]),
}

/// Reads a block's fields in declaration order and keeps the error serde would report:
/// serde reads the values in the object's key order (or the sequence's order) and stops
/// at the first bad one, so the bad value with the lowest position wins; failing that,
/// the first missing field (declaration order).
struct FieldReader<'a> {
    fields: Fields<'a>,
    names: &'static [&'static str],
    expecting: &'static str,
    /// Next field, in declaration order.
    at: usize,
    /// The bad value seen at the lowest position, with that position.
    bad: Option<(usize, serde_json::Error)>,
    /// The first missing required field.
    missing: Option<serde_json::Error>,
}

impl FieldReader<'_> {
    /// The next field's value; `None` when absent (`default`: the field has
    /// `#[serde(default)]`) or bad (the error is kept for [`FieldReader::finish`]).
    fn get<T: serde::de::DeserializeOwned>(&mut self, default: bool) -> Option<T> {
        let i = self.at;
        self.at += 1;
        let name = self.names.get(i).copied().unwrap_or_default();
        let found = match self.fields {
            Fields::Map(map) => map.iter().enumerate().find(|(_, (k, _))| *k == name).map(|(pos, (_, v))| (pos, v)),
            Fields::Seq(items) => items.get(i).map(|v| (i, v)),
        };
        match found {
            Some((pos, v)) => match serde_json::from_value(v.clone()) {
                Ok(x) => Some(x),
                Err(e) => {
                    if self.bad.as_ref().is_none_or(|(p, _)| pos < *p) {
                        self.bad = Some((pos, e));
                    }
                    None
                }
            },
            None => {
                if !default && self.missing.is_none() {
                    self.missing = Some(match self.fields {
                        Fields::Map(_) => serde_json::Error::missing_field(name),
                        Fields::Seq(_) => serde_json::Error::invalid_length(i, &self.expecting),
                    });
                }
                None
            }
        }
    }

    /// The error serde would report, if any; a sequence must not have more elements
    /// than the block type has fields.
    fn finish(&mut self) -> DeResult<()> {
        if let Some((_, e)) = self.bad.take() {
            return Err(e);
        }
        if let Some(e) = self.missing.take() {
            return Err(e);
        }
        match self.fields {
            Fields::Seq(items) if items.len() > self.names.len() => Err(serde_json::Error::invalid_length(items.len(), &ExpectedInSeq(self.names.len()))),
            _ => Ok(()),
        }
    }
}

/// serde's wording for the number of elements a sequence form takes.
struct ExpectedInSeq(usize);

impl serde::de::Expected for ExpectedInSeq {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        if self.0 == 1 {
            f.write_str("1 element in sequence")
        } else {
            write!(f, "{} elements in sequence", self.0)
        }
    }
}
