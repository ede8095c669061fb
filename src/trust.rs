//! The provenance trust boundary (issue 14 finding 3; T-2, Y-2, Y-10).
//!
//! Transcript rows are host input and may carry text or keys an attacker wrote (a tool's
//! output, a pasted message). The engine honours what it can check:
//! - **Artifact handles** ([`KnownHandles`]): a handle is listed in a summary's artifact
//!   index only when the engine can vouch for it: stamped on a row (`artifact_ref`), stored
//!   through the host's `storeArtifact` in this job, listed in the engine record of an
//!   earlier summary, or issued by this session's numbering (`artifact#<tag>-N` with the
//!   state's `artifactTag`, or a legacy `artifact#N`, with `1 <= N < state.nextArtifact`). `artifact#7` typed by a user or printed by a tool is
//!   text, not a handle.
//! - **Summaries** ([`apply`]): `summary_level` / `transcript_role: compaction_summary`
//!   make a row a summary only when the state lists it (`state.summaries`: id and text
//!   hash of every summary the engine wrote, recorded at each commit by [`record`]). A
//!   stateless load (state `null`) vouches for none: such a row is read as an ordinary
//!   row (its text quoted as data, folded, indexed in memory).
//! - **Pinned rows** ([`apply`], [`pin`]): `pinned: true` protects a row only when the
//!   host confirmed it (`pin(state, messageId)` lists the id in `state.pins`), and only up
//!   to `maxPinnedBytes` of pinned text (oldest pins kept; a `pins_over_cap` warning
//!   names the rest), so no row can make every compaction `cannot_fit`.
//! - **Message ids**: a new summary's id never equals an id already in the transcript.

use crate::state::{SessionState, SummaryMark, TwinIds};
use crate::transcript::{Message, Transcript, TranscriptRole};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Is `tag` a valid artifact tag (1 to 16 lowercase ASCII letters, issue 14)?
pub fn valid_tag(tag: &str) -> bool {
    (1..=16).contains(&tag.len()) && tag.bytes().all(|b| b.is_ascii_lowercase())
}

/// The length of the handle written after an `artifact#` in text (issue 14): the
/// digits of a legacy `artifact#N`, or the `<tag>-N` of a tagged one (1 to 16
/// lowercase letters, `-`, digits); 0 when what follows is neither.
pub fn handle_body_len(after: &str) -> usize {
    let b = after.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits > 0 {
        return digits;
    }
    let letters = b.iter().take_while(|c| c.is_ascii_lowercase()).count();
    if (1..=16).contains(&letters) && b.get(letters) == Some(&b'-') {
        let n = b.iter().skip(letters + 1).take_while(|c| c.is_ascii_digit()).count();
        if n > 0 {
            return letters + 1 + n;
        }
    }
    0
}

/// The (tag, number) of an engine handle: `artifact#N` (tag `""`) or `artifact#<tag>-N`.
pub fn handle_parts(handle: &str) -> Option<(&str, u64)> {
    let body = handle.strip_prefix("artifact#")?;
    if handle_body_len(body) != body.len() {
        return None;
    }
    match body.split_once('-') {
        Some((tag, n)) => Some((tag, n.parse().ok()?)),
        None => Some(("", body.parse().ok()?)),
    }
}

/// A new artifact tag (issue 14): 8 lowercase letters from the FNV-1a hash of the
/// session id, the tag it replaces (`prior`, `""` for none) and the content ids of the
/// transcript, so two sessions (or two stateless calls) over one store differ, and a
/// state re-tagged under another session id never gets back the tag it had.
/// Deterministic (J-5): the same inputs give the same tag.
pub fn derive_tag(session: &str, prior: &str, t: &Transcript) -> String {
    let mut h = crate::transcript::fnv1a(session.as_bytes());
    h = (h ^ crate::transcript::fnv1a(prior.as_bytes())).wrapping_mul(0x0000_0100_0000_01b3);
    for m in &t.messages {
        h = (h ^ crate::transcript::fnv1a(m.id.as_bytes())).wrapping_mul(0x0000_0100_0000_01b3);
    }
    letters(h)
}

/// 8 lowercase letters spelling `h` in base 26.
fn letters(mut h: u64) -> String {
    let mut out = String::with_capacity(8);
    for _ in 0..8 {
        out.push(char::from(b'a' + u8::try_from(h % 26).unwrap_or(0)));
        h /= 26;
    }
    out
}

/// The key `state.artifactTagSession` records for a session id: FNV-1a 64 of its UTF-8
/// bytes, 16 lowercase hex digits.
pub fn session_key(session: &str) -> String {
    format!("{:016x}", crate::transcript::fnv1a(session.as_bytes()))
}

/// Is `tag` the state's tag or one of its earlier tags (issue 14)?
pub fn own_tag(state: &SessionState, tag: &str) -> bool {
    !tag.is_empty() && (tag == state.artifact_tag || state.earlier_artifact_tags.iter().any(|t| t == tag))
}

/// The most earlier tags a state keeps.
const EARLIER_TAGS_KEPT: usize = 64;

/// Replaces the state's tag by `fresh` (issue 14): the old one joins
/// `earlierArtifactTags` (newest 64 kept) so the handles it issued stay the session's.
/// A `fresh` tag the state already had is mixed again until it is new.
fn retag(state: &mut SessionState, mut fresh: String) {
    let mut salt = 0u64;
    while own_tag(state, &fresh) {
        salt += 1;
        fresh = letters(crate::transcript::fnv1a(format!("{fresh}:{salt}").as_bytes()));
    }
    let old = std::mem::replace(&mut state.artifact_tag, fresh);
    if !old.is_empty() {
        state.earlier_artifact_tags.retain(|t| *t != old);
        state.earlier_artifact_tags.push(old);
        let skip = state.earlier_artifact_tags.len().saturating_sub(EARLIER_TAGS_KEPT);
        state.earlier_artifact_tags.drain(..skip);
    }
}

/// Makes the state's artifact tag the one of `session` before a handle is proposed
/// (issue 14): a state with no tag gets one ([`derive_tag`]); a tag derived under
/// another session id (`state.artifactTagSession`), or one that names no session while
/// the call runs under a session id other than `"default"`, is replaced by a tag
/// derived from `session`, the old tag and `t`; the old tag is kept in
/// `earlierArtifactTags`. So is a fork's tag (`state.artifactTagFork`, [`fork_tag`]):
/// every fork of one state has the same one, and the fork's own rows (its content ids,
/// which differ after the common prefix) make it its own. A tag naming no session under
/// `"default"` is kept (states written before `artifactTagSession`, a tag the host
/// set). Then `state.artifactTagSession` names `session`.
pub fn adopt_tag(state: &mut SessionState, session: &str, t: &Transcript) {
    let key = session_key(session);
    let keep = if state.artifact_tag.is_empty() || state.artifact_tag_fork {
        // a fork's tag is its parent state's: the fork's own rows tell it from its siblings
        false
    } else if state.artifact_tag_session.is_empty() {
        session == "default"
    } else {
        state.artifact_tag_session == key
    };
    if !keep {
        let fresh = derive_tag(session, &state.artifact_tag, t);
        retag(state, fresh);
    }
    state.artifact_tag_fork = false;
    state.artifact_tag_session = key;
}

/// Gives a forked state its own artifact tag (issue 14): derived from the parent's whole
/// state (its tag and the session it belongs to, revision, artifact counter, summaries),
/// so the fork and its parent never propose the same handle (the parent keeps its tag).
/// The parent's tag stays in the fork's `earlierArtifactTags`: handles the parent issued
/// before the fork are in the fork's transcript too. Two forks of one state get the same
/// tag here (the same inputs, J-5), so the tag is marked (`artifactTagFork`) and derived
/// again before the fork's first handle from the fork's own transcript ([`adopt_tag`]):
/// forks whose rows differ never propose the same handle. Deterministic (J-5).
pub fn fork_tag(state: &mut SessionState) {
    // the whole state (its tag, counters, summaries, content-id table) seeds the fork's
    let seed = serde_json::to_vec(&*state).unwrap_or_default();
    let h = crate::transcript::fnv1a(b"fork\0");
    retag(state, letters((h ^ crate::transcript::fnv1a(&seed)).wrapping_mul(0x0000_0100_0000_01b3)));
    state.artifact_tag_fork = true;
}

/// The artifact handles the engine can vouch for (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct KnownHandles {
    set: BTreeSet<String>,
    /// `artifact#N` and `artifact#<tag>-N` with `1 <= N < issued_below` were issued by
    /// this session.
    issued_below: u64,
    /// The session's artifact tag (`state.artifactTag`).
    tag: String,
    /// Its earlier tags (`state.earlierArtifactTags`).
    earlier: Vec<String>,
}

impl KnownHandles {
    /// The handles known from `msgs` (stamped refs and earlier summaries' records),
    /// `stored` (handles the host stored in this job) and `state.nextArtifact`.
    pub fn of<'a>(msgs: &[Message], stored: impl IntoIterator<Item = &'a str>, state: &SessionState) -> KnownHandles {
        let mut set: BTreeSet<String> = stored.into_iter().map(str::to_string).collect();
        for m in msgs {
            if let Some(r) = m.provenance.trusted_ref() {
                set.insert(r.to_string());
            }
            if m.is_summary() {
                set.extend(crate::quote::record_artifacts(&m.text()));
            }
        }
        KnownHandles { set, issued_below: state.next_artifact, tag: state.artifact_tag.clone(), earlier: state.earlier_artifact_tags.clone() }
    }

    /// Whether `handle` is one the engine can vouch for.
    pub fn knows(&self, handle: &str) -> bool {
        if self.set.contains(handle) {
            return true;
        }
        handle_parts(handle).is_some_and(|(tag, n)| (tag.is_empty() || tag == self.tag || self.earlier.iter().any(|t| t == tag)) && n >= 1 && n < self.issued_below)
    }
}

/// The hash a [`SummaryMark`] records for a summary's text.
pub fn summary_hash(m: &Message) -> String {
    format!("{:016x}", crate::transcript::fnv1a(m.text().as_bytes()))
}

/// The trust pass (issue 14), run on the source transcript before a job (and before a
/// `check`): marks on each row the provenance the state cannot vouch for, so it is not
/// honoured (the keys stay in the stored row as given):
/// - `summary_level` / `transcript_role: compaction_summary` on a row whose id and text
///   hash are not in `state.summaries`: the row is not a summary ([`Provenance::summary_untrusted`]);
/// - `pinned: true` on a row whose id is not in `state.pins`, or past `max_pinned_bytes`
///   of pinned text (oldest pins kept): not pinned ([`Provenance::pin_untrusted`]);
/// - an `artifact_ref` the state cannot vouch for ([`KnownHandles`] without the stamps):
///   not a stored handle ([`Provenance::ref_untrusted`]).
///
/// Returns the warning payloads to emit (`{ code, message, ... }`): `untrusted_provenance`
/// naming the rows whose keys were not honoured, `pins_over_cap` naming the confirmed pins
/// past the cap.
///
/// [`Provenance::summary_untrusted`]: crate::transcript::Provenance::summary_untrusted
/// [`Provenance::pin_untrusted`]: crate::transcript::Provenance::pin_untrusted
/// [`Provenance::ref_untrusted`]: crate::transcript::Provenance::ref_untrusted
///
/// It first gives repeated rows the ids the state keeps for them ([`remap_twins`], T-4).
pub fn apply(t: &mut Transcript, state: &SessionState, max_pinned_bytes: u64) -> Vec<Value> {
    remap_twins(t, &state.twins);
    // Y-10: only the newest provider compaction item is pinned
    crate::transcript::mark_superseded_compactions(&mut t.messages);
    let issued = KnownHandles { set: state.handles.iter().cloned().collect(), issued_below: state.next_artifact, tag: state.artifact_tag.clone(), earlier: state.earlier_artifact_tags.clone() };
    let mut summaries: Vec<String> = Vec::new();
    let mut pins: Vec<String> = Vec::new();
    let mut refs: Vec<String> = Vec::new();
    let mut over: Vec<String> = Vec::new();
    let mut pinned_bytes: u64 = 0;
    for m in t.messages.iter_mut() {
        // idempotent: a row judged before (a live transcript, a restored one) is judged
        // again with this state alone
        m.provenance.summary_untrusted = false;
        m.provenance.pin_untrusted = false;
        m.provenance.ref_untrusted = false;
        let p = &m.provenance;
        let claims_summary = p.summary_level.is_some() || p.transcript_role == TranscriptRole::CompactionSummary;
        if claims_summary {
            let vouched = state.summaries.iter().any(|s| s.id == m.id) && state.summaries.iter().any(|s| s.id == m.id && s.hash == summary_hash(m));
            m.provenance.summary_untrusted = !vouched;
            if !vouched {
                summaries.push(m.id.clone());
            }
        }
        if m.provenance.pinned {
            if !state.pins.contains(&m.id) {
                m.provenance.pin_untrusted = true;
                pins.push(m.id.clone());
            } else {
                let bytes = u64::try_from(m.text().len()).unwrap_or(u64::MAX);
                if pinned_bytes.saturating_add(bytes) > max_pinned_bytes {
                    m.provenance.pin_untrusted = true;
                    over.push(m.id.clone());
                } else {
                    pinned_bytes = pinned_bytes.saturating_add(bytes);
                }
            }
        }
        if let Some(r) = m.provenance.artifact_ref.as_deref() {
            if !issued.knows(r) {
                m.provenance.ref_untrusted = true;
                refs.push(m.id.clone());
            }
        }
    }
    let mut out = Vec::new();
    if !summaries.is_empty() || !pins.is_empty() || !refs.is_empty() {
        out.push(json!({
            "code": "untrusted_provenance",
            "message": format!(
                "provenance keys the state does not vouch for were not honoured (issue 14): {} summary mark(s), {} pin(s), {} artifact ref(s); pin rows with pin(state, messageId)",
                summaries.len(), pins.len(), refs.len()
            ),
            "summaries": summaries, "pins": pins, "artifactRefs": refs,
        }));
    }
    if !over.is_empty() {
        out.push(json!({
            "code": "pins_over_cap",
            "message": format!("{} pinned row(s) over maxPinnedBytes ({max_pinned_bytes} bytes) are not pinned", over.len()),
            "rows": over, "maxPinnedBytes": max_pinned_bytes,
        }));
    }
    out
}

/// Records in `state` what the engine vouches for after a commit (issue 14): the
/// summaries of `t` that are trusted (those it wrote now and those it vouched for
/// before), the pins still present, and the host-named handles stamped on `t`'s rows
/// (newest 512).
///
/// It also writes the twin table of `t` ([`twins_of`], T-4).
pub fn record(state: &mut SessionState, t: &Transcript, stored: impl IntoIterator<Item = String>) {
    state.twins = twins_of(t);
    state.summaries = t.messages.iter().filter(|m| m.is_summary()).map(|m| SummaryMark { id: m.id.clone(), hash: summary_hash(m) }).collect();
    let ids: std::collections::BTreeSet<&str> = t.messages.iter().map(|m| m.id.as_str()).collect();
    state.pins.retain(|p| ids.contains(p.as_str()));
    for h in stored {
        let numbered = handle_parts(&h).is_some_and(|(tag, _)| tag.is_empty() || own_tag(state, tag));
        if !numbered && !state.handles.contains(&h) {
            state.handles.push(h);
        }
    }
    let skip = state.handles.len().saturating_sub(512);
    state.handles.drain(..skip);
}

/// The (hash, count) of a content id `m<16 hex>` (count 1) or `m<16 hex>-<n>`; `None`
/// for any other id (a stored `message_id`, an engine-made one).
pub fn content_id_parts(id: &str) -> Option<(&str, u32)> {
    let rest = id.strip_prefix('m')?;
    let hash = rest.get(..16)?;
    if !hash.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    match rest.get(16..)? {
        "" => Some((hash, 1)),
        n => n.strip_prefix('-')?.parse::<u32>().ok().filter(|n| *n >= 2).map(|n| (hash, n)),
    }
}

/// The content id of the `occurrence`-th row (from 1) with content hash `hash` under
/// `table` ([`SessionState::twins`]).
fn twin_id(hash: &str, occurrence: u32, table: &[TwinIds]) -> String {
    let n = match table.iter().find(|t| t.hash == hash) {
        Some(t) => match t.counters.get(occurrence.saturating_sub(1) as usize) {
            Some(c) => *c,
            None => t.counters.last().copied().unwrap_or(0).saturating_add(occurrence.saturating_sub(u32::try_from(t.counters.len()).unwrap_or(u32::MAX))),
        },
        None => occurrence,
    };
    if n <= 1 {
        format!("m{hash}")
    } else {
        format!("m{hash}-{n}")
    }
}

/// T-4 (issue 14): gives every row without a stored `message_id` the content id the
/// state's twin table keeps for it (see [`SessionState::twins`]). Idempotent: the
/// occurrence of each content is counted afresh. Nothing to do with an empty table.
pub fn remap_twins(t: &mut Transcript, table: &[TwinIds]) {
    if table.is_empty() {
        return;
    }
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for m in t.messages.iter_mut() {
        if m.provenance.message_id.is_some() {
            continue;
        }
        let Some((hash, _)) = content_id_parts(&m.id) else { continue };
        let hash = hash.to_string();
        let j = seen.entry(hash.clone()).or_insert(0);
        *j += 1;
        if table.iter().any(|x| x.hash == hash) {
            m.id = twin_id(&hash, *j, table);
        }
    }
}

/// The id a live append gives a new row (issue 14): its fresh content id (counted as a
/// decode of the whole list counts it) mapped through the twin table.
pub fn remap_fresh_id(id: &str, table: &[TwinIds]) -> Option<String> {
    let (hash, occurrence) = content_id_parts(id)?;
    table.iter().any(|x| x.hash == hash).then(|| twin_id(hash, occurrence, table))
}

/// T-4 (issue 14) before a commit: a kept row whose content no longer matches its
/// content id (an edited row: a cleared result) gets its id written as `message_id`, so
/// a fresh decode gives it the same id. Retained rows are left as they are: their ids
/// are kept through [`twins_of`] in the state.
pub fn pin_edited_ids(messages: &mut [Message]) {
    for m in messages.iter_mut() {
        if m.provenance.message_id.is_some() {
            continue;
        }
        let same = content_id_parts(&m.id).is_some_and(|(hash, _)| hash == format!("{:016x}", crate::transcript::fnv1a(m.raw.get().as_bytes())));
        if !same {
            m.provenance.message_id = Some(m.id.clone());
        }
    }
}

/// The twin table of a transcript about to be committed: for each content whose rows'
/// counts are not `1, 2, 3, ...` (an earlier twin was folded), those counts.
pub fn twins_of(t: &Transcript) -> Vec<TwinIds> {
    let mut order: Vec<TwinIds> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for m in &t.messages {
        if m.provenance.message_id.is_some() {
            continue;
        }
        let Some((hash, n)) = content_id_parts(&m.id) else { continue };
        let k = *at.entry(hash).or_insert_with(|| {
            order.push(TwinIds { hash: hash.to_string(), counters: Vec::new() });
            order.len() - 1
        });
        if let Some(e) = order.get_mut(k) {
            e.counters.push(n);
        }
    }
    order.retain(|e| e.counters.iter().enumerate().any(|(i, c)| u32::try_from(i + 1).ok() != Some(*c)));
    order
}

/// `trustProvenance(state, transcript)` (issue 14): the host vouches for the provenance
/// of a transcript its own store kept (one written before the state recorded
/// summaries, or moved between stores): every summary row (id and text hash), every
/// pinned row and every `artifact_ref` of `t` is listed in the returned state. Never for
/// rows a user, a tool or a model could have written.
pub fn vouch(state: &SessionState, t: &Transcript) -> SessionState {
    let mut s = state.clone();
    for m in &t.messages {
        let p = &m.provenance;
        if (p.summary_level.is_some() || p.transcript_role == TranscriptRole::CompactionSummary) && !s.summaries.iter().any(|x| x.id == m.id) {
            s.summaries.push(SummaryMark { id: m.id.clone(), hash: summary_hash(m) });
        }
        if p.pinned && !s.pins.contains(&m.id) {
            s.pins.push(m.id.clone());
        }
        if let Some(r) = &p.artifact_ref {
            if !s.handles.contains(r) {
                s.handles.push(r.clone());
            }
        }
    }
    s
}

/// `pin(state, messageId)` (Y-10, issue 14): the host confirms a pin. A row is pinned
/// when it carries `pinned: true` and its id is in `state.pins`; rows marked in the input
/// alone are not. Returns `false` when already listed. Errors: `invalid_state` for a
/// blank id.
pub fn pin(state: &mut SessionState, message_id: &str) -> crate::Result<bool> {
    if message_id.trim().is_empty() {
        return Err(crate::Error::new(crate::ErrorCode::InvalidState, "pin: messageId must not be blank"));
    }
    if state.pins.iter().any(|p| p == message_id) {
        return Ok(false);
    }
    state.pins.push(message_id.to_string());
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y2_issued_numbering_and_stamps_are_known_text_is_not() {
        let state = SessionState { next_artifact: 5, ..SessionState::default() };
        let k = KnownHandles::of(&[], ["host-handle-1"], &state);
        assert!(k.knows("artifact#4") && k.knows("artifact#1") && k.knows("host-handle-1"));
        assert!(!k.knows("artifact#5") && !k.knows("artifact#0") && !k.knows("artifact#7x"));
    }

    #[test]
    fn e6_i14_tagged_handles_are_known_only_with_their_tag() {
        let state = SessionState { next_artifact: 3, artifact_tag: "kqzm".into(), ..SessionState::default() };
        let k = KnownHandles::of(&[], [], &state);
        assert!(k.knows("artifact#kqzm-1") && k.knows("artifact#kqzm-2") && k.knows("artifact#1"));
        assert!(!k.knows("artifact#kqzm-3") && !k.knows("artifact#other-1") && !k.knows("artifact#kqzm-"));
        assert_eq!(handle_body_len("kqzm-12 rest"), 7);
        assert_eq!(handle_body_len("12x"), 2);
        assert_eq!(handle_body_len("Kqzm-1"), 0);
        assert_eq!(handle_body_len("kqzm-"), 0);
        assert_eq!(handle_parts("artifact#ab-7"), Some(("ab", 7)));
        assert_eq!(handle_parts("artifact#7"), Some(("", 7)));
    }
}
