//! The canonical transcript model (T-1..T-4).
//!
//! A [`Message`] is two things at once:
//! - `raw`: the provider-native JSON of the message as compact text ([`RawJson`]),
//!   as the host gave it (minus the engine's provenance keys). Encoding an untouched message writes `raw`
//!   back, so every field the engine does not understand is carried through untouched
//!   (T-1, F-3).
//! - `blocks`: the canonical view the engine reasons over (text, media, tool calls,
//!   tool results, reasoning, opaque items), derived from `raw` by the format adapter.
//!
//! The engine never edits `raw` itself; it asks the adapter to (replace one tool
//! result's body, build a summary message), so each provider's shape stays the
//! adapter's business.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::raw::RawJson;

/// Provider-level role of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A system message (OpenAI `system` / `developer`, AI SDK `system`). Anthropic and
    /// Gemini keep the system prompt in the envelope instead (S-1).
    System,
    /// A user message (Anthropic and Gemini user turns also carry tool results).
    User,
    /// An assistant message (Gemini `model`), possibly with tool calls and reasoning.
    Assistant,
    /// A message whose job is carrying tool results (OpenAI `tool`, AI SDK `tool`).
    Tool,
}

/// Typed transcript role (T-2, S-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptRole {
    /// An ordinary message of the conversation (the default; not written to the stored view).
    #[default]
    Conversational,
    /// Context the host injected (retrieved docs, notices). Never starts a turn (S-7).
    InjectedContext,
    /// A summary written by a compaction (Y-4).
    CompactionSummary,
}

/// Media kinds, counted high by the estimator (C-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// An image (1,600 tokens each by default, C-7).
    Image,
    /// A video (inline base64 counted at 1 token per 4 bytes, C-7).
    Video,
    /// An audio clip.
    Audio,
    /// A document or any other MIME type (PDF, file parts).
    Document,
}

impl MediaKind {
    /// The kind of a MIME type (`image/*`, `video/*`, `audio/*`, anything else a document).
    pub fn from_mime(mime: &str) -> MediaKind {
        if mime.starts_with("image/") {
            MediaKind::Image
        } else if mime.starts_with("video/") {
            MediaKind::Video
        } else if mime.starts_with("audio/") {
            MediaKind::Audio
        } else {
            MediaKind::Document
        }
    }
}

/// One content block of the canonical view (also the block shape of the `canonical`
/// JSON format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Plain text (`{"type": "text", "text"}` in the canonical JSON).
    Text {
        /// The text, as the provider gave it.
        text: String,
    },
    /// Image, video, audio or document. `bytes`: the length of its inline base64 data
    /// (or of its URL / file reference when not inline).
    Media {
        /// What the media is (C-7 counts images and video differently).
        kind: MediaKind,
        /// UTF-8 bytes of the inline base64 data, or of the URL / file reference.
        bytes: usize,
        /// True when the data is inline (base64 or a `data:` URL), false for a reference.
        inline: bool,
        /// What names the attachment as the host gave it, when anything does: its URL or
        /// file id (a reference), else its file name / title. Memory records carry it, so a
        /// folded attachment is found again by that string (M-1, N-1). Omitted when `None`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A tool call (tool_use, function_call, functionCall, server_tool_use...).
    /// `arguments`: the arguments serialized as JSON text.
    ToolCall {
        /// The provider's call id (`tool_use.id`, `tool_calls[].id`, `call_id`,
        /// `toolCallId`), matched by the results' `call_id` (S-4).
        id: String,
        /// The tool's name.
        name: String,
        /// The call's arguments as JSON text.
        arguments: String,
    },
    /// A tool result. `text`: the body as text (media inside it are listed in `media`).
    /// `is_error`: the provider's error flag. `name`: the tool name when the format
    /// carries it on the result.
    ToolResult {
        /// The id of the call this result answers (`tool_use_id`, `tool_call_id`, `call_id`).
        call_id: String,
        /// The tool's name when the format carries it on the result (Gemini, AI SDK), else `None`.
        #[serde(default)]
        name: Option<String>,
        /// The result body as text; content parts are joined by newlines.
        text: String,
        /// The provider's error flag (Anthropic `is_error`, AI SDK `error-*` /
        /// `execution-denied` outputs, Gemini `error` without `output`); `false` when the
        /// format has none.
        #[serde(default)]
        is_error: bool,
        /// Kinds of the media parts inside the result, in order.
        #[serde(default)]
        media: Vec<MediaKind>,
        /// UTF-8 bytes of those media parts (inline base64 length, or the reference's length).
        #[serde(default)]
        media_bytes: usize,
    },
    /// Reasoning: thinking (with signature), redacted thinking, encrypted reasoning.
    /// Never edited (T-3). `text` is the readable part (may be empty); `bytes` is the
    /// whole serialized size of the block.
    Reasoning {
        /// Readable reasoning text (empty for redacted or encrypted reasoning).
        #[serde(default)]
        text: String,
        /// UTF-8 bytes of the whole serialized block, signature and encrypted data included.
        #[serde(default)]
        bytes: usize,
        /// Carries a provider signature or encrypted payload, so it must be sent back
        /// byte-exact (T-3).
        #[serde(default)]
        signed: bool,
    },
    /// Any other provider item (provider compaction items, unknown blocks), kept whole.
    Opaque {
        /// The provider's item type (its `type`, e.g. `server_tool_use`; for a
        /// Gemini part, its payload key, e.g. `executableCode`).
        kind: String,
        /// UTF-8 bytes of the serialized item.
        #[serde(default)]
        bytes: usize,
    },
}

/// Provenance the engine persists on a message (T-2). In the stored view these ride as
/// top-level keys of the provider message; the request view drops them (F-4).
#[derive(Debug, Clone, Eq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// `None` for ordinary messages, `1` for a summary, `2` for a rolled-up one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_level: Option<u8>,
    /// The artifact (`artifact#N`) holding this tool message's full output (E-4, E-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_ref: Option<String>,
    /// Typed transcript role (T-2, S-7); omitted from the stored view when conversational.
    #[serde(default, skip_serializing_if = "is_conversational")]
    pub transcript_role: TranscriptRole,
    /// Stable message id (T-4); written to the stored view only when the engine made or
    /// edited the message, or when the input had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Where an assistant observation came from; `SpokenUnmeasured` blocks the
    /// mechanical fallback (Y-6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_source: Option<String>,
    /// A host-pinned row rides outside compaction (Y-10).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pinned: bool,
    /// Set by the trust pass ([`crate::trust::apply`], issue 14): the row's
    /// `summary_level` / `compaction_summary` keys are not vouched for by the state, so
    /// it is not treated as a summary. Never serialized (the keys stay as given).
    #[serde(skip)]
    pub summary_untrusted: bool,
    /// Set by the trust pass: the row's `pinned: true` is not honoured (not confirmed
    /// by the state, or over `maxPinnedBytes`). Never serialized.
    #[serde(skip)]
    pub pin_untrusted: bool,
    /// Set by the trust pass: the row's `artifact_ref` is not a handle the engine can
    /// vouch for, so it does not count as stored. Never serialized.
    #[serde(skip)]
    pub ref_untrusted: bool,
    /// Set at decode: the row is a provider's own compacted history (an OpenAI Responses
    /// `compaction` item: opaque, encrypted, standing for every earlier row). No summary
    /// can read it, so the newest one rides outside compaction in place, like a pinned
    /// row (N-1: what the person asked before it lives only there). Never serialized.
    #[serde(skip)]
    pub provider_compaction: bool,
    /// Set by [`mark_superseded_compactions`]: a newer compaction item follows this one
    /// (it stands for every earlier row, this one included), so this one is not pinned
    /// and folds / evicts like any row (Y-10). Never serialized.
    #[serde(skip)]
    pub compaction_superseded: bool,
    /// The row's own JSON text as the host gave it (issue 14), kept only when the stored
    /// view would not reproduce it byte for byte (a `null` / `false` provenance key, the
    /// keys in another order): written back as is while the row is unchanged
    /// ([`Provenance::unchanged_source`]). Never serialized.
    #[serde(skip)]
    pub source: Option<std::sync::Arc<SourceText>>,
}

/// A row's original JSON text and what it decoded to (see [`Provenance::source`]).
#[derive(Debug, PartialEq, Eq)]
pub struct SourceText {
    /// The host's JSON text of the row.
    pub text: Box<str>,
    /// The provenance it decoded to.
    pub prov: Provenance,
    /// FNV-1a of the row's `raw` (provenance keys removed) at decode.
    pub raw_hash: u64,
}

/// Equal when the persisted keys are: the trust flags are the engine's reading of them
/// for one job, not data (an untouched transcript equals its source).
impl PartialEq for Provenance {
    fn eq(&self, o: &Provenance) -> bool {
        self.summary_level == o.summary_level
            && self.artifact_ref == o.artifact_ref
            && self.transcript_role == o.transcript_role
            && self.message_id == o.message_id
            && self.observation_source == o.observation_source
            && self.pinned == o.pinned
    }
}

impl Provenance {
    /// The row's original JSON text when it was kept and the row is unchanged since
    /// decode (same provenance, same `raw`), else `None` (issue 14: retained rows are
    /// written back byte for byte).
    pub fn unchanged_source(&self, raw: &RawJson) -> Option<&str> {
        self.source.as_ref().filter(|s| s.prov == *self && s.raw_hash == fnv1a(raw.get().as_bytes())).map(|s| &*s.text)
    }
    /// `pinned: true` and honoured by the trust pass (Y-10, issue 14), or the newest of
    /// a transcript's provider compaction items ([`Provenance::provider_compaction`] not
    /// [`Provenance::compaction_superseded`]): never folded. The one rule every floor,
    /// selection and edit reads (trigger, live measures, select, finish, editing).
    pub fn is_pinned(&self) -> bool {
        self.pinned && !self.pin_untrusted || self.provider_compaction && !self.compaction_superseded
    }
    /// The `artifact_ref` when the trust pass vouches for it (E-4, issue 14).
    pub fn trusted_ref(&self) -> Option<&str> {
        self.artifact_ref.as_deref().filter(|_| !self.ref_untrusted)
    }
}

/// Marks every provider compaction item but the newest as superseded (Y-10): only the
/// newest stands for the history before it and is pinned ([`Provenance::is_pinned`]);
/// older ones fold like other rows (their placeholders reach the summary and memory).
/// Idempotent; run by every decode ([`crate::formats::decode_rows`] and the text
/// decodes), the trust pass and a live append. Returns whether any row changed.
///
/// Time: one pass over `messages`.
pub fn mark_superseded_compactions(messages: &mut [Message]) -> bool {
    let newest = messages.iter().rposition(|m| m.provenance.provider_compaction);
    let mut changed = false;
    for (i, m) in messages.iter_mut().enumerate() {
        let superseded = m.provenance.provider_compaction && Some(i) != newest;
        changed |= m.provenance.compaction_superseded != superseded;
        m.provenance.compaction_superseded = superseded;
    }
    changed
}

fn is_conversational(r: &TranscriptRole) -> bool {
    *r == TranscriptRole::Conversational
}

/// The provenance keys, in the order they are written to the stored view.
pub const PROVENANCE_KEYS: [&str; 6] =
    ["summary_level", "artifact_ref", "transcript_role", "message_id", "observation_source", "pinned"];

/// One message (row) of a transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Stable id (T-4): the stored `message_id`, else derived from the content.
    pub id: String,
    /// Provider-level role.
    pub role: Role,
    /// Engine provenance (T-2), written as top-level keys in the stored view (F-4).
    pub provenance: Provenance,
    /// Canonical view of the content, derived from `raw` by the format adapter.
    pub blocks: Vec<Block>,
    /// Provider-native JSON as compact text, without provenance keys.
    pub raw: RawJson,
    /// Serialized size of `raw` in UTF-8 bytes (`raw.len()`).
    pub bytes: usize,
}

impl Message {
    /// Tool-call ids this message makes.
    pub fn call_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolCall { id, .. } => Some(id.as_str()),
            _ => None,
        })
    }
    /// Tool-call ids this message answers.
    pub fn result_ids(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
    }
    /// True when the message makes at least one tool call.
    pub fn has_calls(&self) -> bool {
        self.call_ids().next().is_some()
    }
    /// True when the message carries at least one tool result.
    pub fn has_results(&self) -> bool {
        self.result_ids().next().is_some()
    }
    /// An assistant message holding nothing but reasoning (an OpenAI Responses
    /// `reasoning` item).
    pub fn is_reasoning_only(&self) -> bool {
        self.role == Role::Assistant
            && !self.blocks.is_empty()
            && self.blocks.iter().all(|b| matches!(b, Block::Reasoning { .. }))
    }
    /// A message that only carries tool results (and nothing a person wrote).
    pub fn is_result_carrier(&self) -> bool {
        self.has_results()
            && self.blocks.iter().all(|b| matches!(b, Block::ToolResult { .. } | Block::Media { .. }))
    }
    /// The author a row names: its top-level string `name` (OpenAI Chat's participant
    /// name in a multi-user chat), `None` when it has none or it is blank. Reads the row's
    /// JSON only when its text holds a `"name"` key.
    pub fn speaker(&self) -> Option<String> {
        let raw = self.raw.get();
        if !raw.contains("\"name\"") {
            return None;
        }
        #[derive(serde::Deserialize)]
        struct Named {
            #[serde(default)]
            name: Option<serde_json::Value>,
        }
        let n: Named = serde_json::from_str(raw).ok()?;
        n.name.and_then(|v| v.as_str().map(str::to_string)).filter(|s| !s.trim().is_empty())
    }
    /// A compaction summary: has a `summary_level` or the `compaction_summary` role (Y-4).
    pub fn is_summary(&self) -> bool {
        !self.provenance.summary_untrusted
            && (self.provenance.summary_level.is_some() || self.provenance.transcript_role == TranscriptRole::CompactionSummary)
    }
    /// A row of the summary block after the system rows (Y-4): a summary, or the newest
    /// provider compaction item ([`Provenance::provider_compaction`], not superseded),
    /// which stands for every row before it, so the summaries of later rows follow it.
    pub fn in_summary_block(&self) -> bool {
        self.is_summary() || self.provenance.provider_compaction && !self.provenance.compaction_superseded
    }
    /// A conversational user message: starts a turn (S-7). A user message that carries
    /// tool results starts one only when a person wrote text beside them (the
    /// Anthropic / Claude Code shape `[tool_result, {type: text}]`): that text is a
    /// request (S-9, N-1); without text it belongs to the round it answers.
    pub fn starts_turn(&self) -> bool {
        self.role == Role::User
            && !self.is_summary()
            && self.conversational_role()
            && (!self.has_results() || self.has_user_text())
    }
    /// The row's role is conversational: `transcript_role` conversational, or a
    /// `compaction_summary` mark the trust pass did not vouch for (issue 14: such a row
    /// is read as an ordinary row, [`crate::trust`]).
    fn conversational_role(&self) -> bool {
        self.provenance.transcript_role == TranscriptRole::Conversational
            || (self.provenance.summary_untrusted && self.provenance.transcript_role == TranscriptRole::CompactionSummary)
    }
    /// A conversational user message (not a summary, not injected context) with at least
    /// one non-blank text block, whatever else the row carries (tool results beside it
    /// included): what N-1 protects.
    pub fn has_user_text(&self) -> bool {
        self.user_texts().next().is_some()
    }
    /// The non-blank text blocks a person wrote in this message (N-1): empty unless the
    /// message is a conversational user message; tool results beside them do not matter.
    pub fn user_texts(&self) -> impl Iterator<Item = &str> {
        let conversational = self.role == Role::User && !self.is_summary() && self.conversational_role();
        self.blocks.iter().filter(move |_| conversational).filter_map(|b| match b {
            Block::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
            _ => None,
        })
    }
    /// All readable text of the message (text blocks, reasoning text excluded).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            if let Block::Text { text } = b {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
}

/// A whole transcript: the messages plus the document-level fields of the format.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The provider format the transcript was decoded from and is encoded back to.
    pub format: crate::format::Format,
    /// The rows, in order; offsets are indexes into this list (T-4).
    pub messages: Vec<Message>,
    /// How the host's document wrapped the messages.
    pub envelope: Envelope,
}

impl Transcript {
    /// Gives every row that borrows the host's input ([`RawJson::is_shared`], issue 15
    /// item 2) a copy of its own text, so that input is freed once the rows that still
    /// borrow it elsewhere go. For a transcript that outlives its input by much (the
    /// rows kept by a compaction); the text, ids and bytes do not change.
    pub fn unshare(&mut self) {
        for m in &mut self.messages {
            if m.raw.is_shared() {
                m.raw = m.raw.unshared();
            }
        }
    }
}

/// The document around the message list. A bare JSON array has `messages_key: None`;
/// an object keeps every other field (Anthropic `system`, Gemini `systemInstruction`,
/// `tools`...) in `fields`, in order, untouched.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Envelope {
    /// The key holding the message list (`messages`, `contents`, `input`), or `None` for
    /// a bare JSON array.
    pub messages_key: Option<String>,
    /// Every other top-level field of the document, in input order, untouched.
    pub fields: serde_json::Map<String, Value>,
}

impl Envelope {
    /// UTF-8 bytes of the document-level fields (system prompt, tool definitions).
    pub fn bytes(&self) -> usize {
        self.fields.iter().map(|(k, v)| k.len() + json_len(v)).sum()
    }
}

/// Serialized length of a JSON value in UTF-8 bytes.
pub fn json_len(v: &Value) -> usize {
    serialized_len(v)
}

/// UTF-8 bytes of the compact JSON text of anything serializable, counted while writing
/// it to nowhere (no text is built).
pub fn serialized_len<T: Serialize + ?Sized>(v: &T) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a 64-bit, used for content-derived ids (deterministic across runtimes).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    Fnv1a::new().write(bytes).finish()
}

/// Streaming [`fnv1a`]: hashing parts one after another gives the hash of their
/// concatenation, with no joined copy.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// The hash of no bytes.
    pub fn new() -> Fnv1a {
        Fnv1a(FNV_OFFSET)
    }
    /// Hashes `bytes` after what came before.
    pub fn write(mut self, bytes: &[u8]) -> Fnv1a {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        self
    }
    /// The 64-bit hash.
    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a::new()
    }
}

/// One tool exchange (S-4): the calling assistant message and every message carrying
/// its results, as an inclusive offset span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ToolExchange {
    /// Offset of the first message (the calling assistant message, or reasoning-only
    /// items right before it).
    pub start: usize,
    /// Offset of the last message carrying one of its results (inclusive).
    pub end: usize,
}

/// Index of tool exchanges: for each message, the exchange span it belongs to.
#[derive(Debug, Clone, Default)]
pub struct ExchangeIndex {
    /// The merged exchange spans, sorted by `start`, disjoint.
    pub exchanges: Vec<ToolExchange>,
    /// `of[i]` = index into `exchanges` for message `i`, if it is in one.
    pub of: Vec<Option<usize>>,
}

impl ExchangeIndex {
    /// Builds the index. A call's exchange runs from the calling message to the last
    /// message carrying one of its results. Overlapping spans merge (interleaved
    /// exchanges are indivisible together). Ids are matched to the nearest open call
    /// with that id, so a reused id (tau-bench) pairs with its own call.
    ///
    /// A run of reasoning-only assistant messages right before a calling message joins
    /// its exchange: in OpenAI Responses a `reasoning` item is a separate input item
    /// that must be sent back with the `function_call` item following it, so they are
    /// never split or dropped apart. (Other formats keep reasoning inside the calling
    /// message, where this never applies.)
    pub fn build(messages: &[Message]) -> Self {
        let n = messages.len();
        let mut spans: Vec<ToolExchange> = Vec::new();
        // open calls: id -> message indexes of the unanswered calls with that id, the
        // latest last (a reused id pairs with its nearest open call)
        let mut open: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
        let mut span_of_call_msg: Vec<Option<usize>> = vec![None; n];
        for (i, m) in messages.iter().enumerate() {
            for rid in m.result_ids() {
                if let Some(call_msg) = open.get_mut(rid).and_then(Vec::pop) {
                    if let Some(s) = span_of_call_msg.get(call_msg).copied().flatten() {
                        if let Some(span) = spans.get_mut(s) {
                            span.end = span.end.max(i);
                        }
                    }
                }
            }
            if m.has_calls() {
                let mut start = i;
                while start > 0 && messages.get(start - 1).is_some_and(Message::is_reasoning_only) {
                    start -= 1;
                }
                spans.push(ToolExchange { start, end: i });
                span_of_call_msg[i] = Some(spans.len() - 1);
                for cid in m.call_ids() {
                    open.entry(cid).or_default().push(i);
                }
            }
        }
        // merge overlaps (spans are sorted by start)
        let mut merged: Vec<ToolExchange> = Vec::new();
        for s in spans {
            match merged.last_mut() {
                Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
                _ => merged.push(s),
            }
        }
        let mut of = vec![None; n];
        for (k, s) in merged.iter().enumerate() {
            for slot in of.iter_mut().take(s.end + 1).skip(s.start) {
                *slot = Some(k);
            }
        }
        ExchangeIndex { exchanges: merged, of }
    }

    /// The exchange containing message `i`.
    pub fn get(&self, i: usize) -> Option<ToolExchange> {
        self.of.get(i).copied().flatten().and_then(|k| self.exchanges.get(k).copied())
    }

    /// True when a cut before message `i` (keeping `i..`) splits an exchange.
    pub fn splits(&self, i: usize) -> bool {
        match self.get(i) {
            Some(x) => x.start < i,
            None => false,
        }
    }
}
