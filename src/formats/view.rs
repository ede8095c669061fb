//! Encoding the stored and request views (F-4) and the adapter-driven edits of a
//! message (E-2 result bodies, Y-4 summary messages).

use super::decode::dispatch_view;
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
    let mut raw = m.raw.value();
    match format {
        Format::OpenaiChat => openai_chat::OpenaiChat::set_result_body(&mut raw, nth, text)?,
        Format::Anthropic => anthropic::Anthropic::set_result_body(&mut raw, nth, text)?,
        Format::Gemini => gemini::Gemini::set_result_body(&mut raw, nth, text)?,
        Format::OpenaiResponses => openai_responses::OpenaiResponses::set_result_body(&mut raw, nth, text)?,
        Format::AiSdk => ai_sdk::AiSdk::set_result_body(&mut raw, nth, text)?,
        Format::Canonical => canonical::Canonical::set_result_body(&mut raw, nth, text)?,
    }
    let old_ids: Vec<String> = m.result_ids().map(str::to_string).collect();
    let (role, mut blocks) = dispatch_view(format, &raw, 0)?;
    let new_count = blocks.iter().filter(|b| matches!(b, Block::ToolResult { .. })).count();
    if new_count == old_ids.len() {
        let mut ids = old_ids.into_iter();
        for b in blocks.iter_mut() {
            if let Block::ToolResult { call_id, .. } = b {
                if let Some(id) = ids.next() {
                    *call_id = id;
                }
            }
        }
    }
    m.role = role;
    m.blocks = blocks;
    m.raw = RawJson::from_value(&raw);
    m.bytes = m.raw.len();
    Ok(())
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
