//! Provider formats: decode host JSON into the canonical [`Transcript`], encode it back.
//!
//! Each adapter module exposes the same free functions (see [`Adapter`]); this module
//! dispatches on [`Format`] and owns what is common: the provenance convention of the
//! stored view (F-4), content-derived message ids (T-4), and the generic pairing
//! validator (F-2) parameterised by each format's [`PairingRules`].
//!
//! Provenance convention (F-4): in the *stored* view the engine's provenance rides as
//! top-level keys of each provider message (`summary_level`, `artifact_ref`,
//! `transcript_role`, `message_id`, `observation_source`, `pinned`). The *request*
//! view, meant for the provider, never carries them.

pub mod ai_sdk;
pub mod anthropic;
pub mod canonical;
pub mod gemini;
pub mod import;
pub mod openai_chat;
pub mod openai_responses;

use crate::error::{Error, ErrorCode, Result};
use crate::transcript::{
    fnv1a, Block, Envelope, Message, Provenance, RawJson, Role, Transcript, PROVENANCE_KEYS,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Supported formats. Serialized in kebab-case (`openai-chat`, `anthropic`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenAI Chat Completions `messages`.
    OpenaiChat,
    /// Anthropic Messages API `messages` (+ top-level `system`).
    Anthropic,
    /// Gemini `generateContent` `contents` (+ top-level `systemInstruction`).
    Gemini,
    /// OpenAI Responses API `input` items (+ top-level `instructions`).
    OpenaiResponses,
    /// Vercel AI SDK `ModelMessage[]` (+ top-level `system`).
    AiSdk,
    /// The engine's canonical JSON (see [`canonical`]).
    Canonical,
}

impl Format {
    /// The format of a name: `openai-chat`, `openai-responses`, `anthropic`, `gemini`,
    /// `ai-sdk`, `canonical` (snake_case spellings accepted too). Errors: `unknown_format`
    /// listing the accepted names.
    pub fn parse(name: &str) -> Result<Format> {
        match name {
            "openai-chat" | "openai_chat" => Ok(Format::OpenaiChat),
            "anthropic" => Ok(Format::Anthropic),
            "gemini" => Ok(Format::Gemini),
            "openai-responses" | "openai_responses" => Ok(Format::OpenaiResponses),
            "ai-sdk" | "ai_sdk" => Ok(Format::AiSdk),
            "canonical" => Ok(Format::Canonical),
            other => Err(Error::new(ErrorCode::UnknownFormat, format!("unknown format {other:?}; expected one of openai-chat, openai-responses, anthropic, gemini, ai-sdk, canonical"))),
        }
    }
    /// The format's kebab-case name (as [`Format::parse`] reads it and serde writes it).
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenaiChat => "openai-chat",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::OpenaiResponses => "openai-responses",
            Format::AiSdk => "ai-sdk",
            Format::Canonical => "canonical",
        }
    }
    /// The format's pairing rules (F-2).
    pub fn rules(self) -> PairingRules {
        match self {
            Format::OpenaiChat => openai_chat::RULES,
            Format::Anthropic => anthropic::RULES,
            Format::Gemini => gemini::RULES,
            Format::OpenaiResponses => openai_responses::RULES,
            Format::AiSdk => ai_sdk::RULES,
            Format::Canonical => canonical::RULES,
        }
    }
}

/// Folds a tool result's content parts into its text (parts joined by newlines), the
/// media kinds it carries and their bytes.
pub(crate) fn result_parts(parts: Vec<Block>) -> (String, Vec<crate::transcript::MediaKind>, usize) {
    let mut text = String::new();
    let mut media = Vec::new();
    let mut media_bytes = 0;
    for b in parts {
        match b {
            Block::Text { text: t } => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t);
            }
            Block::Media { kind, bytes, .. } => {
                media.push(kind);
                media_bytes += bytes;
            }
            _ => {}
        }
    }
    (text, media, media_bytes)
}

/// Sets `obj[key] = text` (a result body, E-2: only that field changes). Errors:
/// `invalid_transcript` naming `what` when `obj` is not a JSON object.
pub(crate) fn set_text_field(obj: &mut Value, key: &str, text: &str, what: &str) -> Result<()> {
    match obj {
        Value::Object(map) => {
            map.insert(key.into(), Value::String(text.to_string()));
            Ok(())
        }
        _ => Err(Error::invalid(format!("{what} is not an object"))),
    }
}

/// Which view to encode (F-4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// With provenance keys: what the host stores.
    Stored,
    /// Without provenance keys: what the host sends to the provider.
    Request,
}

/// A format's pairing rules (F-2), checked by [`validate_pairing`].
#[derive(Debug, Clone, Copy)]
pub struct PairingRules {
    /// All results of one assistant message must sit in the single next message
    /// (Anthropic user message, Gemini user turn). Otherwise they sit in consecutive
    /// result-carrier messages right after it (OpenAI `tool` messages).
    pub results_in_one_message: bool,
    /// Results must come first in that message (Anthropic: tool_result blocks first).
    pub results_first: bool,
    /// With `results_in_one_message`: that one message must answer every call of the
    /// calling message, even at the end of history (Gemini: a model turn with N
    /// `functionCall` parts is followed by one user turn with N `functionResponse`
    /// parts; a partial answer turn is rejected).
    pub exact_result_count: bool,
    /// Results are separate items that may sit anywhere after their call, with other
    /// items (reasoning, further calls) in between (OpenAI Responses: every
    /// `function_call_output` needs an earlier `function_call` with its `call_id`, and
    /// every `function_call` needs an output unless it ends the input).
    pub results_anywhere_after: bool,
}

/// Provider usage normalised to token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens including cached ones.
    pub input_tokens: u64,
    /// Output (completion) tokens (`completion_tokens`, `output_tokens`, `candidatesTokenCount`).
    pub output_tokens: u64,
    /// `input + output` unless the provider states a total.
    pub total_tokens: u64,
    /// Input tokens read from the prompt cache (included in `input_tokens`), 0 if not stated.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Reasoning / thinking tokens (included in `output_tokens`), 0 if not stated.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// The functions every adapter module implements.
pub trait Adapter {
    /// Canonical role and blocks for one provider message (provenance keys removed).
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)>;
    /// Replace the body of the `nth` tool result of `raw` with `text` (E-2: only the
    /// output body; every other field, the header, stays).
    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()>;
    /// A new user-role message carrying `text` (a summary, Y-4).
    fn text_message(text: &str) -> Value;
}

fn dispatch_view(format: Format, raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
    match format {
        Format::OpenaiChat => openai_chat::OpenaiChat::view(raw, at),
        Format::Anthropic => anthropic::Anthropic::view(raw, at),
        Format::Gemini => gemini::Gemini::view(raw, at),
        Format::OpenaiResponses => openai_responses::OpenaiResponses::view(raw, at),
        Format::AiSdk => ai_sdk::AiSdk::view(raw, at),
        Format::Canonical => canonical::Canonical::view(raw, at),
    }
}

/// Which key of an envelope object holds the messages: Gemini
/// `{systemInstruction?, contents}`, Responses `{instructions?, input}`, the others
/// `{system?, messages}`.
fn messages_key(format: Format) -> &'static str {
    match format {
        Format::OpenaiChat | Format::Anthropic | Format::AiSdk | Format::Canonical => "messages",
        Format::Gemini => "contents",
        Format::OpenaiResponses => "input",
    }
}

/// Decodes a host document (a JSON array of messages, or an object with the messages
/// under the format's key and other fields kept in the envelope).
///
/// Errors: `invalid_transcript` naming the offset of a malformed message.
pub fn decode(format: Format, doc: Value) -> Result<Transcript> {
    decode_with_ids(format, doc, &mut ContentIds::default())
}

/// [`decode`] from JSON text (UTF-8). Each message is parsed once to derive its view
/// and kept as its own slice of `text` when that slice is already compact canonical JSON
/// ([`crate::raw::is_canonical`]; `JSON.stringify` output is), so the held transcript
/// has no `Value` tree per message and its sizes and content ids come from the text.
///
/// Errors: `invalid_transcript` for text that is not JSON, then as [`decode`].
pub fn decode_text(format: Format, text: &str) -> Result<Transcript> {
    decode_text_with_ids(format, text, &mut ContentIds::default())
}

/// [`decode_text`], leaving in `ids` the content-id counters after the last row (as
/// [`decode_with_ids`]).
pub fn decode_text_with_ids(format: Format, text: &str, ids: &mut ContentIds) -> Result<Transcript> {
    let key = messages_key(format);
    let Some(doc) = crate::raw::split_document(text, key) else {
        // not a well-formed document of this format's shape: the `Value` path reports why
        let doc: Value = serde_json::from_str(text).map_err(|e| Error::invalid(format!("transcript: invalid JSON: {e}")))?;
        return decode_with_ids(format, doc, ids);
    };
    let envelope = match doc.fields {
        None => Envelope::default(),
        Some(fields) => Envelope { messages_key: Some(key.to_string()), fields },
    };
    let mut messages = Vec::with_capacity(doc.items.len());
    for (at, item) in doc.items.into_iter().enumerate() {
        if let Some(m) = decode_typed(format, item, ids) {
            messages.push(m);
            continue;
        }
        let value: Value = serde_json::from_str(item.get()).map_err(|e| Error::invalid(format!("message {at}: {e}")))?;
        messages.push(decode_message(format, value, Some(item), at, ids)?);
    }
    if format == Format::Gemini {
        gemini::link_results(&mut messages);
    }
    Ok(Transcript { format, messages, envelope })
}

/// [`decode`], leaving in `ids` the content-id counters after the last row (so rows
/// decoded later with [`decode_rows`] get the ids a decode of the longer list gives).
pub fn decode_with_ids(format: Format, doc: Value, ids: &mut ContentIds) -> Result<Transcript> {
    let (items, envelope) = match doc {
        Value::Array(items) => (items, Envelope::default()),
        Value::Object(mut map) => {
            let key = messages_key(format);
            // shift_remove keeps the other fields in their order (F-3)
            let items = match map.shift_remove(key) {
                Some(Value::Array(items)) => items,
                Some(_) => return Err(Error::invalid(format!("`{key}` must be an array"))),
                None => return Err(Error::invalid(format!("expected a JSON array of messages or an object with `{key}`"))),
            };
            (items, Envelope { messages_key: Some(key.to_string()), fields: map })
        }
        _ => return Err(Error::invalid("expected a JSON array of messages or an object")),
    };
    let messages = decode_rows(format, items, 0, ids)?;
    Ok(Transcript { format, messages, envelope })
}

/// Decodes provider messages that sit at offsets `first_offset..` of a transcript whose
/// earlier rows were decoded with the same `ids` (so content-derived ids continue as in
/// one [`decode`] of the whole list). Gemini results are linked among these rows only;
/// a caller appending to a held transcript links across the seam itself.
///
/// Errors: `invalid_transcript` naming the offset of a malformed message.
pub fn decode_rows(format: Format, items: Vec<Value>, first_offset: usize, ids: &mut ContentIds) -> Result<Vec<Message>> {
    let mut messages = Vec::with_capacity(items.len());
    for (k, item) in items.into_iter().enumerate() {
        messages.push(decode_message(format, item, None, first_offset + k, ids)?);
    }
    if format == Format::Gemini {
        gemini::link_results(&mut messages);
    }
    Ok(messages)
}

/// One message straight from its canonical JSON text, with no `Value` tree, for the
/// formats with a typed view (OpenAI Chat, Anthropic); `None` sends it down the `Value`
/// path.
fn decode_typed(format: Format, item: &serde_json::value::RawValue, ids: &mut ContentIds) -> Option<Message> {
    let (role, mut blocks) = match format {
        Format::OpenaiChat => openai_chat::view_text(item.get())?,
        Format::Anthropic => anthropic::view_text(item.get())?,
        _ => return None,
    };
    let raw = RawJson::from_canonical(item)?;
    blocks.shrink_to_fit();
    let bytes = raw.len();
    let id = ids.next(fnv1a(raw.get().as_bytes()));
    Some(Message { id, role, provenance: Provenance::default(), blocks, raw, bytes })
}

/// One message. `text`: the host's own JSON text of `item`, kept as the message's `raw`
/// when it is canonical and carries no provenance keys.
fn decode_message(format: Format, item: Value, text: Option<&serde_json::value::RawValue>, at: usize, ids: &mut ContentIds) -> Result<Message> {
    let Value::Object(mut map) = item else {
        return Err(Error::invalid(format!("message {at}: expected a JSON object")));
    };
    let mut prov = Map::new();
    let had_provenance = PROVENANCE_KEYS.iter().any(|k| map.contains_key(*k));
    for key in PROVENANCE_KEYS {
        if let Some(v) = map.remove(key) {
            prov.insert(key.to_string(), v);
        }
    }
    let provenance: Provenance = if prov.is_empty() {
        Provenance::default()
    } else {
        serde_json::from_value(Value::Object(prov)).map_err(|e| Error::invalid(format!("message {at}: bad provenance field: {e}")))?
    };
    let value = Value::Object(map);
    let (role, mut blocks) = dispatch_view(format, &value, at)?;
    // held for the transcript's life: no spare capacity (a pushed-to Vec keeps room for 4)
    blocks.shrink_to_fit();
    let raw = match text.filter(|_| !had_provenance).and_then(RawJson::from_canonical) {
        Some(raw) => raw,
        None => RawJson::from_value(&value),
    };
    drop(value);
    let bytes = raw.len();
    let id = match &provenance.message_id {
        Some(id) => id.clone(),
        None => ids.next(fnv1a(raw.get().as_bytes())),
    };
    let mut m = Message { id, role, provenance, blocks, raw, bytes };
    // issue 14: a row the stored view would not write back byte for byte keeps its text
    if had_provenance {
        if let Some(text) = text {
            let normal = serde_json::to_string(&crate::output::MessageJson { m: &m, view: View::Stored }).unwrap_or_default();
            if normal != text.get() {
                let prov = m.provenance.clone();
                m.provenance.source = Some(std::sync::Arc::new(crate::transcript::SourceText { text: text.get().into(), prov, raw_hash: fnv1a(m.raw.get().as_bytes()) }));
            }
        }
    }
    Ok(m)
}

/// Content-derived ids (T-4): the [`crate::transcript::fnv1a`] hash of the message's compact JSON plus an
/// occurrence counter, so identical messages get distinct ids (`m<hash>`, then
/// `m<hash>-2`, ...) and the same transcript always gets the same ids.
#[derive(Debug, Clone, Default)]
pub struct ContentIds {
    seen: std::collections::HashMap<u64, u32>,
}

impl ContentIds {
    /// The id of the next message whose content hashes to `hash`.
    pub fn next(&mut self, hash: u64) -> String {
        let n = self.seen.entry(hash).or_insert(0);
        *n += 1;
        if *n == 1 {
            format!("m{hash:016x}")
        } else {
            format!("m{hash:016x}-{}", *n)
        }
    }
    /// The id a fresh [`decode`] gives `m` at this point: its stored `message_id`, else
    /// the next content-derived id of its `raw`.
    pub fn id_of(&mut self, m: &Message) -> String {
        match &m.provenance.message_id {
            Some(id) => id.clone(),
            None => self.next(fnv1a(m.raw.get().as_bytes())),
        }
    }
}

/// T-4: a row without a stored `message_id` gets a content id on every decode, whose
/// occurrence counter shifts when an identical twin before it is dropped. Writes the
/// id as `message_id` on exactly those rows whose id would change on re-decode.
pub fn pin_unstable_ids(messages: &mut [Message]) {
    let mut ids = ContentIds::default();
    for m in messages.iter_mut() {
        if m.provenance.message_id.is_some() {
            continue;
        }
        let mut trial = ids.clone();
        if trial.id_of(m) == m.id {
            ids = trial;
        } else {
            m.provenance.message_id = Some(m.id.clone());
        }
    }
}

/// Builds a [`Message`] from a provider value the engine created or edited.
pub fn message_from_raw(format: Format, raw: Value, provenance: Provenance, id: String) -> Result<Message> {
    let (role, blocks) = dispatch_view(format, &raw, 0)?;
    let raw = RawJson::from_value(&raw);
    let bytes = raw.len();
    Ok(Message { id, role, provenance, blocks, raw, bytes })
}

/// Encodes one message in the given view.
pub fn encode_message(m: &Message, view: View) -> Value {
    if view == View::Stored {
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
/// body; Gemini's positional links from [`decode`] stay).
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

/// Normalises a provider usage object to tokens (I-3, C-1). Read shapes, by their
/// field names:
/// - OpenAI Chat Completions: `prompt_tokens` (cached included),
///   `prompt_tokens_details.cached_tokens`, `completion_tokens`,
///   `completion_tokens_details.reasoning_tokens`, `total_tokens`;
/// - OpenAI Responses: `input_tokens`, `input_tokens_details.cached_tokens`,
///   `output_tokens`, `output_tokens_details.reasoning_tokens`, `total_tokens`;
/// - Anthropic: `input_tokens` (uncached only) + `cache_creation_input_tokens` +
///   `cache_read_input_tokens`, `output_tokens`;
/// - Gemini `usageMetadata`: `promptTokenCount` (+ `toolUsePromptTokenCount`),
///   `cachedContentTokenCount`, `candidatesTokenCount` + `thoughtsTokenCount`,
///   `totalTokenCount` (and their snake_case spellings);
/// - AI SDK `LanguageModelUsage`: `inputTokens`, `outputTokens`, `totalTokens`,
///   `cachedInputTokens` / `inputTokenDetails.cacheReadTokens`, `reasoningTokens` /
///   `outputTokenDetails.reasoningTokens`; the provider-level `LanguageModelV3Usage`
///   (`inputTokens: { total, cacheRead }`, `outputTokens: { total, reasoning }`); Bedrock
///   Converse (`inputTokens` + `cacheReadInputTokens` + `cacheWriteInputTokens`);
/// - LangChain `usage_metadata`: `input_tokens`, `output_tokens`, `total_tokens`,
///   `input_token_details.cache_read`, `output_token_details.reasoning`;
/// - a whole response holding one of these under `usage`, `usageMetadata` or
///   `usage_metadata`.
///
/// Counts are non-negative numbers (a fraction is rounded down); `null` fields are
/// absent. Returns `None` when no count is present: [`usage_warning`] then names the keys.
pub fn normalize_usage(usage: &Value) -> Option<Usage> {
    let obj = usage.as_object()?;
    let num = |v: Option<&Value>| -> Option<u64> {
        let v = v?;
        v.as_u64().or_else(|| v.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
    };
    let get = |k: &str| num(obj.get(k));
    let sub = |k: &str, f: &str| num(obj.get(k).and_then(|o| o.get(f)));
    let first = |keys: &[&str]| keys.iter().find_map(|k| get(k));
    // AI SDK provider-level usage (LanguageModelV3Usage): `inputTokens: { total, .. }`.
    let v3_in = sub("inputTokens", "total");
    let v3_out = sub("outputTokens", "total");
    let input = get("prompt_tokens")
        .or_else(|| first(&["promptTokenCount", "prompt_token_count"]).map(|p| p.saturating_add(first(&["toolUsePromptTokenCount", "tool_use_prompt_token_count"]).unwrap_or(0))))
        .or_else(|| get("input_tokens").map(|i| i.saturating_add(get("cache_creation_input_tokens").unwrap_or(0)).saturating_add(get("cache_read_input_tokens").unwrap_or(0))))
        .or_else(|| get("inputTokens").map(|i| i.saturating_add(get("cacheReadInputTokens").unwrap_or(0)).saturating_add(get("cacheWriteInputTokens").unwrap_or(0))))
        .or(v3_in);
    let output = get("completion_tokens")
        .or_else(|| first(&["candidatesTokenCount", "candidates_token_count"]).map(|c| c.saturating_add(first(&["thoughtsTokenCount", "thoughts_token_count"]).unwrap_or(0))))
        .or_else(|| first(&["output_tokens", "outputTokens"]))
        .or(v3_out);
    let total = first(&["total_tokens", "totalTokenCount", "total_token_count", "totalTokens"]);
    if input.is_none() && output.is_none() && total.is_none() {
        // A whole response: its usage object under the provider's key.
        return ["usage", "usageMetadata", "usage_metadata"].iter().find_map(|k| obj.get(*k).filter(|v| v.is_object()).and_then(normalize_usage));
    }
    let cached = first(&["cache_read_input_tokens", "cachedContentTokenCount", "cached_content_token_count", "cachedInputTokens", "cacheReadInputTokens"])
        .or_else(|| sub("prompt_tokens_details", "cached_tokens"))
        .or_else(|| sub("input_tokens_details", "cached_tokens"))
        .or_else(|| sub("input_token_details", "cache_read"))
        .or_else(|| sub("inputTokenDetails", "cacheReadTokens"))
        .or_else(|| sub("inputTokens", "cacheRead"))
        .unwrap_or(0);
    let reasoning = first(&["reasoningTokens", "thoughtsTokenCount", "thoughts_token_count"])
        .or_else(|| sub("completion_tokens_details", "reasoning_tokens"))
        .or_else(|| sub("output_tokens_details", "reasoning_tokens"))
        .or_else(|| sub("output_token_details", "reasoning"))
        .or_else(|| sub("outputTokenDetails", "reasoningTokens"))
        .or_else(|| sub("outputTokens", "reasoning"))
        .unwrap_or(0);
    let output_tokens = output.unwrap_or(0);
    let total_tokens = total.unwrap_or(input.unwrap_or(0).saturating_add(output_tokens));
    Some(Usage {
        input_tokens: input.unwrap_or(total_tokens.saturating_sub(output_tokens)),
        output_tokens,
        total_tokens,
        cached_input_tokens: cached,
        reasoning_tokens: reasoning,
    })
}

/// The `usage_unreadable` warning (I-3) for a usage object [`normalize_usage`] cannot
/// read: its message names the object's keys (at most 20, as JSON strings) or its JSON
/// type, so a new SDK shape is never dropped silently. `None` for `null` and for a
/// readable object.
pub fn usage_warning(usage: &Value) -> Option<crate::trigger::Warning> {
    if usage.is_null() || normalize_usage(usage).is_some() {
        return None;
    }
    let what = match usage {
        Value::Object(map) if map.is_empty() => "an empty object".to_string(),
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(20).map(|k| serde_json::to_string(k).unwrap_or_default()).collect();
            let more = map.len().saturating_sub(20);
            format!("keys {}{}", keys.join(", "), if more > 0 { format!(" and {more} more") } else { String::new() })
        }
        Value::Array(_) => "an array".into(),
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Null => "null".into(),
    };
    Some(crate::trigger::Warning {
        code: USAGE_UNREADABLE,
        message: format!("usage object not read ({what}): no known token count field (prompt_tokens, input_tokens, inputTokens, promptTokenCount, total_tokens, ...); the provider_total_tokens signal and the projection anchor are not set from it"),
    })
}

/// The code of the I-3 warning for a usage object the engine cannot read.
pub const USAGE_UNREADABLE: &str = "usage_unreadable";

/// Checks the provider's pairing rules (F-2, S-4) over a transcript:
/// every call is answered by results right after its message (per [`PairingRules`]),
/// every result answers a call of the message right before its run, no call id is
/// used twice by open calls. A call at the very end of history (the model's newest
/// turn, awaiting results) is allowed unanswered.
///
/// With `exact_result_count` (Gemini) a partial answer message is an error even at the
/// end of history. With `results_anywhere_after` (OpenAI Responses) results may come
/// any number of items after their call (see [`PairingRules`]). A `tool`-role message
/// without results (AI SDK `tool-approval-response`) does not end a run of result
/// messages.
///
/// Errors: `unpaired_tool_result`, `unanswered_tool_call` or `duplicate_tool_call_id`
/// naming the message offset and the id.
pub fn validate_pairing(t: &Transcript) -> Result<()> {
    let rules = t.format.rules();
    let msgs = &t.messages;
    // issue 14: an empty call id pairs with nothing a store or memory record can name;
    // refused here so `check` and `compact` agree in every format
    for (i, m) in msgs.iter().enumerate() {
        for b in &m.blocks {
            let empty = match b {
                Block::ToolCall { id, .. } => id.is_empty(),
                Block::ToolResult { call_id, .. } => call_id.is_empty(),
                _ => false,
            };
            if empty {
                return Err(Error::invalid(format!("message {i}: a tool call or result has an empty call id")));
            }
        }
    }
    if rules.results_anywhere_after {
        return validate_pairing_anywhere(msgs);
    }
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        if m.has_calls() {
            let calls: Vec<&str> = m.call_ids().collect();
            for (k, c) in calls.iter().enumerate() {
                if calls[..k].contains(c) {
                    return Err(Error::new(ErrorCode::DuplicateToolCallId, format!("message {i}: tool call id {c:?} used twice in one message")));
                }
            }
            let mut pending: Vec<&str> = calls.clone();
            let mut j = i + 1;
            let continues_run = |m: &Message| m.has_results() || (!rules.results_in_one_message && m.role == Role::Tool);
            while j < msgs.len() && !pending.is_empty() && continues_run(&msgs[j]) {
                let r = &msgs[j];
                if rules.results_first {
                    let mut seen_other = false;
                    for b in &r.blocks {
                        match b {
                            Block::ToolResult { call_id, .. } if seen_other => {
                                return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {j}: tool result {call_id:?} must come before other content")));
                            }
                            Block::ToolResult { .. } => {}
                            _ => seen_other = true,
                        }
                    }
                }
                for rid in r.result_ids() {
                    match pending.iter().position(|p| *p == rid) {
                        Some(pos) => {
                            pending.remove(pos);
                        }
                        None => {
                            return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {j}: tool result {rid:?} does not answer a call of message {i}")));
                        }
                    }
                }
                j += 1;
                if rules.results_in_one_message {
                    break;
                }
            }
            if let Some(first) = pending.first() {
                if rules.exact_result_count && j > i + 1 {
                    return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {i}: makes {} tool calls but message {} answers {}; tool call {first:?} has no result", calls.len(), i + 1, calls.len() - pending.len())));
                }
                if j < msgs.len() {
                    return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {i}: tool call {first:?} has no result before message {j}")));
                }
            }
            i = j.max(i + 1);
            continue;
        }
        if let Some(rid) = m.result_ids().next() {
            return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {i}: tool result {rid:?} does not follow a message calling it")));
        }
        i += 1;
    }
    Ok(())
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
    // `contents` must be an array (issue 14: `{ contents: 5 }` is no Gemini document)
    if is_array("contents") || (has("systemInstruction") && !has("contents")) {
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

/// [`validate_pairing`] for formats whose results are free-standing items that may sit
/// anywhere after their call (OpenAI Responses). A call left open is allowed only when
/// nothing but tool items (calls, results, reasoning) follows it: the newest step,
/// still awaiting its outputs.
fn validate_pairing_anywhere(msgs: &[Message]) -> Result<()> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        for rid in m.result_ids() {
            match open.iter().position(|(id, _)| *id == rid) {
                Some(pos) => {
                    open.remove(pos);
                }
                None => {
                    return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {i}: tool result {rid:?} answers no earlier call")));
                }
            }
        }
        for cid in m.call_ids() {
            if open.iter().any(|(id, _)| *id == cid) {
                return Err(Error::new(ErrorCode::DuplicateToolCallId, format!("message {i}: tool call id {cid:?} is already used by an unanswered call")));
            }
            open.push((cid, i));
        }
    }
    let is_tool_item = |m: &Message| {
        m.has_calls() || m.has_results() || (!m.blocks.is_empty() && m.blocks.iter().all(|b| matches!(b, Block::Reasoning { .. })))
    };
    for (cid, at) in open {
        if let Some((k, _)) = msgs.iter().enumerate().skip(at + 1).find(|(_, m)| !is_tool_item(m)) {
            return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {at}: tool call {cid:?} has no result before message {k}")));
        }
    }
    Ok(())
}

/// A row's role and canonical blocks, as a view function returns them.
#[cfg(test)]
type RowView = (Role, Vec<Block>);

/// Test helper for the typed text views: each `taken` row gets the view the `Value`
/// adapter gives; each `handed_back` row is left to the `Value` path.
#[cfg(test)]
pub(crate) fn check_typed_view(
    typed: fn(&str) -> Option<RowView>,
    view: fn(&Value, usize) -> Result<RowView>,
    taken: &[&str],
    handed_back: &[&str],
) {
    for t in taken {
        let value: Value = serde_json::from_str(t).expect("test row is JSON");
        assert_eq!(typed(t), view(&value, 0).ok(), "{t}");
        assert!(typed(t).is_some(), "{t} is taken");
    }
    for t in handed_back {
        assert!(typed(t).is_none(), "{t} is handed back");
    }
}

#[cfg(test)]
mod typed_view_tests {
    use super::*;

    #[test]
    fn f1_typed_views_take_common_rows_and_hand_back_the_rest() {
        {
            let taken = [
                r#"{"role":"user","content":"hi"}"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
                r#"{"role":"tool","tool_call_id":"c","content":"out"}"#,
            ];
            let handed_back = [
                r#"{"role":"user","content":[{"type":"text","text":"x"}]}"#,
                r#"{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}"#,
                r#"{"role":"user","content":"hi","message_id":"m"}"#,
                r#"{"role":"wizard","content":"hi"}"#,
            ];
            check_typed_view(openai_chat::view_text, openai_chat::OpenaiChat::view, &taken, &handed_back);
        }
        {
            let taken = [
                r#"{"role":"user","content":"hi"}"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","name":"n","input":{"a":1}}]}"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out","is_error":false}]}"#,
            ];
            let handed_back = [
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}"#,
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"h","signature":"s"}]}"#,
                r#"{"role":"user","content":"hi","pinned":true}"#,
                r#"{"role":"system","content":"hi"}"#,
            ];
            check_typed_view(anthropic::view_text, anthropic::Anthropic::view, &taken, &handed_back);
        }
    }
}
