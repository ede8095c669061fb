//! Streaming serialization of results (issue "Performance": no whole-result `Value` tree).
//!
//! [`OutcomeJson`] serializes an [`Outcome`] straight to JSON text with the same keys,
//! order and values as building the result `Value` first (stored transcript, request
//! view, rewrite, sizes, state, events, memory) and serializing that; it borrows every
//! message's `raw` instead of deep-cloning it twice (once per view), so the result costs
//! one pass over the retained rows and no second copy of them in memory.

use crate::engine::Outcome;
use crate::error::ErrorCode;
use crate::formats::{self, View};
use crate::transcript::{Message, Provenance, Transcript, PROVENANCE_KEYS};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::Value;

/// The whole outcome as JSON, memory records included ([`MemoryRecords::Result`]): the
/// native [`Outcome::to_json`] form. JSON keys, in order: `status, reason, decision,
/// transcript, request, rewrite, before, after, validation, overWindow, state, spend, events, error,
/// memory`.
pub struct OutcomeJson<'a>(pub &'a Outcome);

impl Serialize for OutcomeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        ResultJson { outcome: self.0, records: MemoryRecords::Result }.serialize(s)
    }
}

/// What the JS result's `memory` key carries (issue 15; the `memoryRecords` option of
/// `compact`). The projected records are used inside the call (the `memory` index, the
/// `store` / `embed` hooks, M-1); copying them into the result is what a 10 MB
/// compaction spent most of its output time on (97.9% of the result's bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MemoryRecords {
    /// Default: `memory` is `{ session, projected, ids }` — the session scope, how many
    /// records were projected (and accepted, W-3) and their ids, in projection order.
    #[default]
    Ids,
    /// `memoryRecords: "result"`: `memory` is `{ session, projected, ids, records }`
    /// with every record as data (camelCase, [`crate::memory::MemoryRecord`]).
    Result,
}

impl MemoryRecords {
    /// Reads the `memoryRecords` option: absent / `null` / `"ids"` -> [`MemoryRecords::Ids`],
    /// `"result"` -> [`MemoryRecords::Result`]. Errors: `invalid_config` for any other value.
    pub fn from_option(v: Option<&str>) -> crate::error::Result<MemoryRecords> {
        match v {
            None | Some("ids") => Ok(MemoryRecords::Ids),
            Some("result") => Ok(MemoryRecords::Result),
            Some(other) => Err(crate::error::Error::new(ErrorCode::InvalidConfig, format!("memoryRecords: expected \"ids\" or \"result\", got {other:?}"))),
        }
    }
}

/// The `memory` key of a result: the batch's session, count and ids; with
/// [`MemoryRecords::Result`], the records too.
struct MemoryJson<'a> {
    batch: &'a crate::memory::MemoryBatch,
    records: MemoryRecords,
}

impl Serialize for MemoryJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Ids<'b>(&'b [crate::memory::MemoryRecord]);
        impl Serialize for Ids<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.iter().map(|r| r.id.as_str()))
            }
        }
        let with = self.records == MemoryRecords::Result;
        let mut map = s.serialize_map(Some(3 + usize::from(with)))?;
        map.serialize_entry("session", &self.batch.session)?;
        map.serialize_entry("projected", &self.batch.records.len())?;
        map.serialize_entry("ids", &Ids(&self.batch.records))?;
        if with {
            map.serialize_entry("records", &self.batch.records)?;
        }
        map.end()
    }
}

/// The JS `compact()` result of an outcome, as a borrowed serializable view, with the
/// memory key as `records` says. Keys as [`OutcomeJson`].
pub struct ResultJson<'a> {
    /// The outcome.
    pub outcome: &'a Outcome,
    /// Whether `memory` carries the records or only their count and ids.
    pub records: MemoryRecords,
}

impl ResultJson<'_> {
    /// The result's JSON text in pieces of about `piece_bytes` UTF-8 bytes (see
    /// [`Outcome::to_json_pieces`]); empty if serialization failed.
    pub fn to_pieces(&self, piece_bytes: usize) -> Vec<String> {
        let mut w = Pieces::new(piece_bytes);
        if serde_json::to_writer(&mut w, self).is_err() {
            return Vec::new();
        }
        w.finish()
    }
}

impl Serialize for ResultJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = self.outcome;
        let ok = o.status != "failed" || o.error.as_ref().is_none_or(|e| e.code != ErrorCode::InvalidRewrite);
        let mut map = s.serialize_map(Some(15))?;
        map.serialize_entry("status", o.status)?;
        map.serialize_entry("reason", &o.reason)?;
        map.serialize_entry("decision", &o.decision)?;
        map.serialize_entry("transcript", &TranscriptJson { t: &o.transcript, view: View::Stored, insert: None })?;
        map.serialize_entry("request", &RequestJson { t: &o.transcript, findings: &o.state.findings })?;
        map.serialize_entry("rewrite", &o.rewrite)?;
        map.serialize_entry("before", &o.before)?;
        map.serialize_entry("after", &o.after)?;
        map.serialize_entry("validation", &Validation { ok, checks: &o.checks })?;
        map.serialize_entry("overWindow", &o.over_window)?;
        map.serialize_entry("state", &o.state)?;
        map.serialize_entry("spend", &o.state.spend)?;
        map.serialize_entry("events", &o.events)?;
        map.serialize_entry("error", &o.error)?;
        map.serialize_entry("memory", &o.memory.as_ref().map(|batch| MemoryJson { batch, records: self.records }))?;
        map.end()
    }
}

#[derive(Serialize)]
struct Validation<'a> {
    ok: bool,
    checks: &'a [&'static str],
}

/// The request view of a transcript (F-4: provenance keys dropped) with the findings
/// ledger (Y-10) as one user-role text message right after the system rows at the head
/// (for formats whose system prompt lives in the envelope, Anthropic and Gemini, that is
/// the first message). Serializes straight to JSON text: each row is written from its
/// held text, no `Value` tree ([`crate::session::request_view`] is its `Value` form).
pub struct RequestJson<'a> {
    /// The transcript, in the stored view.
    pub t: &'a Transcript,
    /// The session's findings ledger (`SessionState::findings`); empty: no ledger message.
    pub findings: &'a [String],
}

impl Serialize for RequestJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.t;
        let insert = crate::state::findings_text(self.findings).map(|text| {
            let head = t.messages.iter().take_while(|m| m.role == crate::Role::System).count();
            (head.min(t.messages.len()), formats::text_message(t.format, &text))
        });
        TranscriptJson { t, view: View::Request, insert }.serialize(s)
    }
}

/// UTF-8 bytes of `formats::encode(t, view)` as compact JSON, counted while writing it
/// to nowhere (no text, no `Value` tree).
pub fn encoded_len(t: &Transcript, view: View) -> usize {
    crate::transcript::serialized_len(&TranscriptJson { t, view, insert: None })
}

/// A transcript in one view, shaped as the host gave it (a bare array, or the envelope
/// object with the message list under its key): the text of `formats::encode(t, view)`,
/// with `insert` = (index, message) spliced into the list.
struct TranscriptJson<'a> {
    t: &'a Transcript,
    view: View,
    insert: Option<(usize, Value)>,
}

impl Serialize for TranscriptJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let list = MessagesJson { messages: &self.t.messages, view: self.view, insert: self.insert.as_ref() };
        match &self.t.envelope.messages_key {
            None => list.serialize(s),
            Some(key) => {
                let fields = &self.t.envelope.fields;
                // `Map::insert` keeps an existing key in its place, else appends it.
                let present = fields.contains_key(key);
                let mut map = s.serialize_map(Some(fields.len() + usize::from(!present)))?;
                for (k, v) in fields {
                    if k == key {
                        map.serialize_entry(k, &list)?;
                    } else {
                        map.serialize_entry(k, v)?;
                    }
                }
                if !present {
                    map.serialize_entry(key, &list)?;
                }
                map.end()
            }
        }
    }
}

struct MessagesJson<'a> {
    messages: &'a [Message],
    view: View,
    insert: Option<&'a (usize, Value)>,
}

impl Serialize for MessagesJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let extra = usize::from(self.insert.is_some());
        let mut seq = s.serialize_seq(Some(self.messages.len() + extra))?;
        for (i, m) in self.messages.iter().enumerate() {
            if let Some((at, msg)) = self.insert {
                if *at == i {
                    seq.serialize_element(msg)?;
                }
            }
            seq.serialize_element(&MessageJson { m, view: self.view })?;
        }
        if let Some((at, msg)) = self.insert {
            if *at >= self.messages.len() {
                seq.serialize_element(msg)?;
            }
        }
        seq.end()
    }
}

/// One message as [`formats::encode_message`] writes it: `raw`, plus (stored view) the
/// provenance keys, each replacing a same-named key in place or appended in
/// [`PROVENANCE_KEYS`] order.
pub struct MessageJson<'a> {
    /// The message to write.
    pub m: &'a Message,
    /// Which view: `Stored` keeps the provenance keys, `Request` drops them (F-4).
    pub view: View,
}

impl Serialize for MessageJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.m;
        if self.view == View::Stored {
            // issue 14: an unchanged row keeps its own text (null / false keys, key order)
            if let Some(joined) = m.provenance.unchanged_source(&m.raw).and_then(|t| serde_json::value::RawValue::from_string(t.to_string()).ok()) {
                return joined.serialize(s);
            }
        }
        if self.view == View::Request || m.provenance == Provenance::default() {
            return m.raw.serialize(s);
        }
        let prov = match serde_json::to_value(&m.provenance) {
            Ok(Value::Object(p)) => p,
            _ => return m.raw.serialize(s),
        };
        let text = m.raw.get();
        if PROVENANCE_KEYS.iter().any(|k| text.contains(&format!("\"{k}\""))) {
            // a same-named key may sit in `raw` (the adapter put it there): replace it
            // in place on the parsed object
            return formats::encode_message(m, View::Stored).serialize(s);
        }
        // `raw` has none of the keys: they are appended, in PROVENANCE_KEYS order
        let mut extra = String::new();
        for k in PROVENANCE_KEYS {
            if let Some(v) = prov.get(k) {
                if !extra.is_empty() {
                    extra.push(',');
                }
                extra.push_str(&serde_json::to_string(k).unwrap_or_default());
                extra.push(':');
                extra.push_str(&serde_json::to_string(v).unwrap_or_default());
            }
        }
        match serde_json::value::RawValue::from_string(m.raw.with_members(&extra)) {
            Ok(joined) => joined.serialize(s),
            Err(_) => formats::encode_message(m, View::Stored).serialize(s),
        }
    }
}

/// An `io::Write` that keeps what it is given as a list of UTF-8 pieces of about
/// `piece_bytes` each, cut on char boundaries (see [`Outcome::to_json_pieces`]).
pub struct Pieces {
    done: Vec<String>,
    current: Vec<u8>,
    piece_bytes: usize,
}

impl Pieces {
    /// An empty writer; `piece_bytes` is at least 4 (one char).
    pub fn new(piece_bytes: usize) -> Pieces {
        let piece_bytes = piece_bytes.max(4);
        Pieces { done: Vec::new(), current: Vec::with_capacity(piece_bytes.min(1 << 20)), piece_bytes }
    }

    /// Moves `current` into a piece, keeping back a trailing char that is not complete
    /// yet (its remaining bytes arrive with the next write).
    fn cut(&mut self) {
        let next = Vec::with_capacity(self.piece_bytes.min(1 << 20));
        let full = std::mem::replace(&mut self.current, next);
        match String::from_utf8(full) {
            Ok(piece) => self.done.push(piece),
            Err(e) => {
                let at = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                self.current.extend_from_slice(bytes.get(at..).unwrap_or_default());
                bytes.truncate(at);
                self.done.push(String::from_utf8(bytes).unwrap_or_default());
            }
        }
    }

    /// The pieces, in order.
    pub fn finish(mut self) -> Vec<String> {
        if !self.current.is_empty() {
            self.cut();
        }
        self.done
    }
}

impl std::io::Write for Pieces {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }
    /// serde_json writes through `write_all`, many short fragments each: one append and
    /// one length check per call.
    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.current.extend_from_slice(buf);
        if self.current.len() >= self.piece_bytes {
            self.cut();
        }
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Pieces;
    use std::io::Write;

    #[test]
    fn j5_pieces_cut_on_char_boundaries_and_join_to_the_whole_text() {
        let text = "ab😀cd€é".repeat(50);
        for piece in [4, 5, 7, 64, 1 << 20] {
            // bytes arrive split anywhere, even inside a char
            for step in [1, 3, 5] {
                let mut w = Pieces::new(piece);
                for chunk in text.as_bytes().chunks(step) {
                    w.write_all(chunk).unwrap();
                }
                let pieces = w.finish();
                assert_eq!(pieces.concat(), text, "piece {piece} step {step}");
                assert!(pieces.iter().all(|p| !p.is_empty()));
            }
        }
    }
}
