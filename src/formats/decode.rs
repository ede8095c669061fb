//! Decoding host documents into the canonical [`Transcript`] (F-1, F-3) with
//! content-derived message ids (T-4).

use super::failure::CallNames;
use super::{ai_sdk, anthropic, canonical, gemini, openai_chat, openai_responses, Adapter, Format, View};
use crate::error::{Error, Result};
use crate::transcript::{fnv1a, Block, Envelope, Message, Provenance, RawJson, Role, Transcript, PROVENANCE_KEYS};
use serde_json::{Map, Value};
use std::sync::Arc;

pub(crate) fn dispatch_view(format: Format, raw: &Value, at: usize) -> Result<(Role, Vec<Block>)> {
    dispatch_view_in(format, raw, at, &CallNames::default())
}

/// [`dispatch_view`] of a row whose transcript's earlier calls are in `names` (Y-5: a
/// result row naming no tool is read as its call's tool's, in the formats whose
/// results do not name it).
pub(crate) fn dispatch_view_in(format: Format, raw: &Value, at: usize, names: &CallNames) -> Result<(Role, Vec<Block>)> {
    match format {
        Format::OpenaiChat => openai_chat::OpenaiChat::view_in(raw, at, names),
        Format::OpenaiResponses => openai_responses::OpenaiResponses::view_in(raw, at, names),
        Format::Anthropic => anthropic::Anthropic::view_in(raw, at, names),
        Format::Gemini => gemini::Gemini::view(raw, at),
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
/// [`decode_with_ids`]). The text is copied once and the rows borrow that copy
/// ([`decode_owned_with_ids`]).
pub fn decode_text_with_ids(format: Format, text: &str, ids: &mut ContentIds) -> Result<Transcript> {
    decode_owned_with_ids(format, text.to_owned(), ids)
}

/// [`decode_text`] of a text the caller gives away (issue 15 item 2): every row whose
/// slice of `text` is canonical compact JSON borrows it instead of copying it
/// ([`RawJson::from_canonical_in`]), so the input is held once, shared by those rows,
/// and freed when the last of them goes (or is [`Transcript::unshare`]d). Rows in any
/// other form are normalised into text of their own, as [`decode_text`] does; the
/// transcript is the same either way (equal rows, ids and bytes).
///
/// Errors: as [`decode_text`].
pub fn decode_owned(format: Format, text: String) -> Result<Transcript> {
    decode_owned_with_ids(format, text, &mut ContentIds::default())
}

/// [`decode_owned`], leaving in `ids` the content-id counters after the last row (as
/// [`decode_with_ids`]).
pub fn decode_owned_with_ids(format: Format, text: String, ids: &mut ContentIds) -> Result<Transcript> {
    let source = Arc::new(text);
    let key = messages_key(format);
    let Some(doc) = crate::raw::split_document(&source, key) else {
        // not a well-formed document of this format's shape: the `Value` path reports why
        let doc: Value = serde_json::from_str(&source).map_err(|e| crate::error::too_deep_error("transcript", &source, 0, &e, crate::ErrorCode::InvalidTranscript).unwrap_or_else(|| Error::invalid(format!("transcript: invalid JSON: {e}"))))?;
        return decode_with_ids(format, doc, ids);
    };
    let envelope = match doc.fields {
        None => Envelope::default(),
        Some(fields) => Envelope { messages_key: Some(key.to_string()), fields },
    };
    // the levels of the document around each row: its array, and the envelope object
    let base = if envelope.messages_key.is_some() { 2 } else { 1 };
    let mut messages = Vec::with_capacity(doc.items.len());
    let mut names = CallNames::default();
    let named = names_results(format);
    for (at, item) in doc.items.into_iter().enumerate() {
        if let Some(m) = decode_typed(format, &source, item, ids, &names) {
            if named {
                names.note(&m.blocks);
            }
            messages.push(m);
            continue;
        }
        let value: Value = serde_json::from_str(item.get())
            .map_err(|e| {
                let what = format!("message {at}");
                crate::error::lone_surrogate_error(&what, item.get(), &e, crate::ErrorCode::InvalidTranscript)
                    .or_else(|| crate::error::too_deep_error(&what, item.get(), base, &e, crate::ErrorCode::InvalidTranscript))
                    .unwrap_or_else(|| Error::invalid(format!("message {at}: {e}")))
            })?;
        let m = decode_message(format, value, Some((&source, item)), at, ids, &names)?;
        if named {
            names.note(&m.blocks);
        }
        messages.push(m);
    }
    if format == Format::Gemini {
        gemini::link_results(&mut messages);
    }
    crate::transcript::mark_superseded_compactions(&mut messages);
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
    decode_rows_after(format, items, first_offset, ids, &[])
}

/// [`decode_rows`] of rows appended after `before` (the rows held so far): a result
/// among them answering a call of `before`'s trailing exchange is read with that call's
/// tool name (Y-5, [`CallNames::of_open_exchange`]: only that exchange is walked).
pub fn decode_rows_after(format: Format, items: Vec<Value>, first_offset: usize, ids: &mut ContentIds, before: &[Message]) -> Result<Vec<Message>> {
    let named = names_results(format);
    let mut names = if named { CallNames::of_open_exchange(before) } else { CallNames::default() };
    let mut messages = Vec::with_capacity(items.len());
    for (k, item) in items.into_iter().enumerate() {
        let m = decode_message(format, item, None, first_offset + k, ids, &names)?;
        if named {
            names.note(&m.blocks);
        }
        messages.push(m);
    }
    if format == Format::Gemini {
        gemini::link_results(&mut messages);
    }
    crate::transcript::mark_superseded_compactions(&mut messages);
    Ok(messages)
}

/// Whether a format's result rows may name no tool, so that a decode notes the calls'
/// names to read them with ([`CallNames`]): OpenAI Chat, Responses and Anthropic (whose
/// `tool_result` names no tool, and is read when it has no `is_error`).
fn names_results(format: Format) -> bool {
    matches!(format, Format::OpenaiChat | Format::OpenaiResponses | Format::Anthropic)
}

/// One message straight from its canonical JSON text, with no `Value` tree, for the
/// formats with a typed view (OpenAI Chat, Anthropic); `None` sends it down the `Value`
/// path.
fn decode_typed(format: Format, source: &Arc<String>, item: &serde_json::value::RawValue, ids: &mut ContentIds, names: &CallNames) -> Option<Message> {
    let (role, mut blocks) = match format {
        Format::OpenaiChat => openai_chat::view_text_in(item.get(), names)?,
        Format::Anthropic => anthropic::view_text_in(item.get(), names)?,
        _ => return None,
    };
    let raw = RawJson::from_canonical_in(source, item)?;
    blocks.shrink_to_fit();
    let bytes = raw.len();
    let id = ids.next(fnv1a(raw.get().as_bytes()));
    let provenance = Provenance { provider_compaction: is_provider_compaction(&blocks), ..Provenance::default() };
    Some(Message { id, role, provenance, blocks, raw, bytes })
}

/// Whether a row's blocks are a provider's compacted history (an opaque `compaction`
/// item): see [`Provenance::provider_compaction`].
fn is_provider_compaction(blocks: &[crate::transcript::Block]) -> bool {
    blocks.iter().any(|b| matches!(b, crate::transcript::Block::Opaque { kind, .. } if kind == "compaction"))
}

/// One message. `text`: the host's own JSON text of `item` and the input it is a slice
/// of, borrowed as the message's `raw` when it is canonical and carries no provenance
/// keys.
fn decode_message(format: Format, item: Value, text: Option<(&Arc<String>, &serde_json::value::RawValue)>, at: usize, ids: &mut ContentIds, names: &CallNames) -> Result<Message> {
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
    let (role, mut blocks) = dispatch_view_in(format, &value, at, names)?;
    // held for the transcript's life: no spare capacity (a pushed-to Vec keeps room for 4)
    blocks.shrink_to_fit();
    // a repeated key is canonical text but not what the value writes (the last one
    // wins in the value): such a row is normalised, as the `Value` decode normalises it
    let same_text = |item: &serde_json::value::RawValue| crate::transcript::serialized_len(&value) == item.get().len();
    let raw = match text.filter(|(_, item)| !had_provenance && same_text(item)).and_then(|(source, item)| RawJson::from_canonical_in(source, item)) {
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
    m.provenance.provider_compaction = is_provider_compaction(&m.blocks);
    // issue 14: a row the stored view would not write back byte for byte keeps its text
    if had_provenance {
        if let Some((_, text)) = text {
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
    let provenance = Provenance { provider_compaction: is_provider_compaction(&blocks), ..provenance };
    Ok(Message { id, role, provenance, blocks, raw, bytes })
}

/// The request view (F-4) of an OpenAI Chat document given as JSON text, written as a
/// key filter over its rows (issue 15: no decode into the canonical view, no copy of a
/// row): every row is its own slice of `text`, read only for what pairing (F-2) needs —
/// its role, its calls' ids, its result's call id ([`openai_chat::pairing_view`]). A row
/// carrying a provenance key or in a form the typed decode would not keep verbatim
/// ([`crate::raw::is_canonical`]) sends the whole document the full way: `None`, and the
/// caller decodes it ([`decode_text`]) and writes the request view of the transcript.
/// The text returned is byte for byte what that full way writes when it has no findings
/// ledger to insert: the rows as given, an envelope's other members (read as values,
/// written compact) before the messages key.
///
/// Errors: pairing errors as [`super::validate_pairing`] reports them for the decoded
/// transcript.
pub fn request_text(format: Format, text: &str) -> Option<Result<String>> {
    if format != Format::OpenaiChat {
        return None;
    }
    let key = messages_key(format);
    let doc = crate::raw::split_document(text, key)?;
    let mut lite = Vec::with_capacity(doc.items.len());
    for item in &doc.items {
        if !crate::raw::is_canonical(item.get()) {
            return None;
        }
        let (role, blocks) = openai_chat::pairing_view(item.get())?;
        lite.push(Message { id: String::new(), role, provenance: Provenance::default(), blocks, raw: RawJson::null(), bytes: 0 });
    }
    let t = Transcript { format, messages: lite, envelope: Envelope::default() };
    if let Err(e) = super::validate_pairing(&t) {
        return Some(Err(e));
    }
    drop(t);
    struct Doc<'a> {
        items: &'a [&'a serde_json::value::RawValue],
        fields: Option<&'a Map<String, Value>>,
        key: &'a str,
    }
    impl serde::Serialize for Doc<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            match self.fields {
                None => s.collect_seq(self.items),
                Some(fields) => {
                    let mut map = s.serialize_map(Some(fields.len() + 1))?;
                    for (k, v) in fields {
                        map.serialize_entry(k, v)?;
                    }
                    map.serialize_entry(self.key, self.items)?;
                    map.end()
                }
            }
        }
    }
    let out = Doc { items: &doc.items, fields: doc.fields.as_ref(), key };
    // presized: the rows are written verbatim, so the request is about the input's size
    // (a doubling buffer held up to twice that at its peak, issue 15)
    let mut buf = Vec::with_capacity(text.len());
    if let Err(e) = serde_json::to_writer(&mut buf, &out) {
        return Some(Err(Error::invalid(e.to_string())));
    }
    Some(String::from_utf8(buf).map_err(|e| Error::invalid(e.to_string())))
}
