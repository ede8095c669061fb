//! Encoding the stored and request views (F-4) and the adapter-driven edits of a
//! message (E-2 result bodies, Y-4 summary messages).

use super::decode::dispatch_view_in;
use super::failure::CallNames;
use super::{ai_sdk, anthropic, canonical, gemini, openai_chat, openai_responses, Adapter, Format};
use crate::error::Result;
use crate::transcript::{Block, Message, RawJson, Transcript, PROVENANCE_KEYS};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which view to encode (F-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// With provenance keys: what the host stores.
    Stored,
    /// Without provenance keys: what the host sends to the provider.
    Request,
}

/// Encodes one message in the given view.
pub fn encode_message(m: &Message, view: View) -> Value {
    if view == View::Stored {
        // issue 14: an unchanged row is written back as the host gave it (byte for byte)
        if let Some(v) = m.provenance.unchanged_source(&m.raw).and_then(|t| serde_json::from_str(t).ok()) {
            return v;
        }
    }
    let mut raw = m.raw.value();
    if view == View::Stored {
        if let (Value::Object(map), Ok(Value::Object(prov))) = (&mut raw, serde_json::to_value(&m.provenance)) {
            for key in PROVENANCE_KEYS {
                if let Some(v) = prov.get(key) {
                    map.insert(key.to_string(), v.clone());
                }
            }
        }
    }
    raw
}

/// Encodes a whole transcript in the given view, in the shape the host gave it.
pub fn encode(t: &Transcript, view: View) -> Value {
    let items: Vec<Value> = t.messages.iter().map(|m| encode_message(m, view)).collect();
    match &t.envelope.messages_key {
        None => Value::Array(items),
        Some(key) => {
            let mut map = t.envelope.fields.clone();
            map.insert(key.clone(), Value::Array(items));
            Value::Object(map)
        }
    }
}

/// Replaces the body of the `nth` tool result in `m` and refreshes its view and size.
/// The results keep the call ids they had in the view (the ids never change with the
/// body; Gemini's positional links from [`super::decode`] stay).
/// Errors: `invalid_transcript` when the adapter refuses the edit; `m` is then untouched.
pub fn set_result_body(format: Format, m: &mut Message, nth: usize, text: &str) -> Result<()> {
    set_result_body_of(format, m, nth, text, None)
}

/// [`set_result_body`] of a result of a call to `tool` (its name, when the caller knows
/// it and the row does not say it): the edited row is read as a decode of its
/// transcript reads it (Y-5, T-4: a reader's clipped file text opening `Error:` stays
/// content, [`super::failure::result_reports_failure`]).
/// Errors: as [`set_result_body`].
pub fn set_result_body_of(format: Format, m: &mut Message, nth: usize, text: &str, tool: Option<&str>) -> Result<()> {
    let names = names_of(m, nth, tool);
    if let Some((raw, blocks)) = spliced_result_body(format, m, nth, text, &names) {
        m.blocks = keep_result_ids(m, blocks);
        m.bytes = raw.len();
        m.raw = raw;
        return Ok(());
    }
    let mut raw = m.raw.value();
    match format {
        Format::OpenaiChat => openai_chat::OpenaiChat::set_result_body(&mut raw, nth, text)?,
        Format::Anthropic => anthropic::Anthropic::set_result_body(&mut raw, nth, text)?,
        Format::Gemini => gemini::Gemini::set_result_body(&mut raw, nth, text)?,
        Format::OpenaiResponses => openai_responses::OpenaiResponses::set_result_body(&mut raw, nth, text)?,
        Format::AiSdk => ai_sdk::AiSdk::set_result_body(&mut raw, nth, text)?,
        Format::Canonical => canonical::Canonical::set_result_body(&mut raw, nth, text)?,
    }
    let (role, blocks) = dispatch_view_in(format, &raw, 0, &names)?;
    m.blocks = keep_result_ids(m, blocks);
    m.role = role;
    m.raw = RawJson::from_value(&raw);
    m.bytes = m.raw.len();
    Ok(())
}

/// `m` with the body of its `nth` tool result replaced ([`set_result_body`]), built
/// without copying `m`'s old text and blocks first (issue 15: eviction copied each
/// evicted row whole, its body included, then replaced that body).
/// Errors: as [`set_result_body`].
pub fn with_result_body(format: Format, m: &Message, nth: usize, text: &str) -> Result<Message> {
    with_result_body_of(format, m, nth, text, None)
}

/// [`with_result_body`] of a result of a call to `tool`, read as [`set_result_body_of`]
/// reads it. Errors: as [`set_result_body`].
pub fn with_result_body_of(format: Format, m: &Message, nth: usize, text: &str, tool: Option<&str>) -> Result<Message> {
    if let Some((raw, blocks)) = spliced_result_body(format, m, nth, text, &names_of(m, nth, tool)) {
        let blocks = keep_result_ids(m, blocks);
        let bytes = raw.len();
        return Ok(Message { id: m.id.clone(), role: m.role, provenance: m.provenance.clone(), blocks, raw, bytes });
    }
    let mut copy = m.clone();
    set_result_body_of(format, &mut copy, nth, text, tool)?;
    Ok(copy)
}

/// The call name the `nth` result of `m` is read with after an edit: `tool`, under that
/// result's call id.
fn names_of(m: &Message, nth: usize, tool: Option<&str>) -> CallNames {
    match (tool, m.result_ids().nth(nth)) {
        (Some(tool), Some(id)) => CallNames::one(id, tool),
        _ => CallNames::default(),
    }
}

/// The fast path of [`set_result_body`]: an OpenAI Chat message's `content` replaced in
/// its text ([`crate::raw::with_member`]) and its view read by the typed parse, when
/// both give exactly what the `Value` path gives (same role, else `None`).
fn spliced_result_body(format: Format, m: &Message, nth: usize, text: &str, names: &CallNames) -> Option<(RawJson, Vec<Block>)> {
    if format != Format::OpenaiChat || nth != 0 {
        return None;
    }
    let body = serde_json::to_string(text).ok()?;
    let new = crate::raw::with_member(m.raw.get(), "content", &body)?;
    let (role, mut blocks) = openai_chat::view_text_in(&new, names)?;
    if role != m.role {
        return None;
    }
    blocks.shrink_to_fit();
    let raw = RawJson::from_canonical_string(new)?;
    Some((raw, blocks))
}

/// `blocks` (a re-read view of `m` after an edit) with the tool results' call ids `m`
/// had, when the count matches: the ids never change with the body (Gemini's positional
/// links from [`super::decode`] stay).
fn keep_result_ids(m: &Message, mut blocks: Vec<Block>) -> Vec<Block> {
    let old_ids: Vec<&str> = m.result_ids().collect();
    let new_count = blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).count();
    if new_count == old_ids.len() {
        let mut ids = old_ids.into_iter();
        for b in blocks.iter_mut() {
            if let Block::ToolResult { call_id, .. } = b {
                if let Some(id) = ids.next() {
                    if call_id != id {
                        *call_id = id.to_string();
                    }
                }
            }
        }
    }
    blocks
}

/// A new user-role text message in the format (used for summaries).
pub fn text_message(format: Format, text: &str) -> Value {
    match format {
        Format::OpenaiChat => openai_chat::OpenaiChat::text_message(text),
        Format::Anthropic => anthropic::Anthropic::text_message(text),
        Format::Gemini => gemini::Gemini::text_message(text),
        Format::OpenaiResponses => openai_responses::OpenaiResponses::text_message(text),
        Format::AiSdk => ai_sdk::AiSdk::text_message(text),
        Format::Canonical => canonical::Canonical::text_message(text),
    }
}
