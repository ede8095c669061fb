//! The provenance trust boundary (issue 14 finding 3; T-2, Y-2, Y-10).
//!
//! Transcript rows are host input and may carry text or keys an attacker wrote (a tool's
//! output, a pasted message). The engine honours what it can check:
//! - **Artifact handles** ([`KnownHandles`]): a handle is listed in a summary's artifact
//!   index only when the engine can vouch for it: stamped on a row (`artifact_ref`), stored
//!   through the host's `storeArtifact` in this job, listed in the engine record of an
//!   earlier summary, or issued by this session's numbering (`artifact#N` with
//!   `1 <= N < state.nextArtifact`). `artifact#7` typed by a user or printed by a tool is
//!   text, not a handle.
//! - **Pinned rows** ([`pinned_cap`]): `pinned: true` on input rows protects them only up
//!   to `maxPinnedBytes` (UTF-8 bytes of the pinned rows' text, oldest pins first); pins
//!   past the cap are not honoured and reported, so one row cannot make every compaction
//!   `cannot_fit`.

use crate::state::SessionState;
use crate::transcript::Message;
use std::collections::BTreeSet;

/// The artifact handles the engine can vouch for (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct KnownHandles {
    set: BTreeSet<String>,
    /// `artifact#N` with `1 <= N < issued_below` were issued by this session.
    issued_below: u64,
}

impl KnownHandles {
    /// The handles known from `msgs` (stamped refs and earlier summaries' records),
    /// `stored` (handles the host stored in this job) and `state.nextArtifact`.
    pub fn of<'a>(msgs: &[Message], stored: impl IntoIterator<Item = &'a str>, state: &SessionState) -> KnownHandles {
        let mut set: BTreeSet<String> = stored.into_iter().map(str::to_string).collect();
        for m in msgs {
            if let Some(r) = m.provenance.artifact_ref.as_deref() {
                set.insert(r.to_string());
            }
            if m.is_summary() {
                set.extend(crate::quote::record_artifacts(&m.text()));
            }
        }
        KnownHandles { set, issued_below: state.next_artifact }
    }

    /// Whether `handle` is one the engine can vouch for.
    pub fn knows(&self, handle: &str) -> bool {
        if self.set.contains(handle) {
            return true;
        }
        handle.strip_prefix("artifact#").and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n >= 1 && n < self.issued_below)
    }
}

/// Pinned rows over the cap (Y-10, issue 14): the offsets of rows marked `pinned` whose
/// pin is honoured, and those whose pin is not because the pinned rows before them
/// (in transcript order) already hold `max_pinned_bytes` UTF-8 bytes of text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinCap {
    /// Offsets whose pin is honoured.
    pub honoured: Vec<usize>,
    /// Offsets whose pin is dropped (over the cap), with each row's id.
    pub dropped: Vec<(usize, String)>,
}

/// Splits the pinned rows of `msgs` at the cap `max_pinned_bytes` (see [`PinCap`]).
pub fn pinned_cap(msgs: &[Message], max_pinned_bytes: u64) -> PinCap {
    let mut used: u64 = 0;
    let mut cap = PinCap::default();
    for (i, m) in msgs.iter().enumerate().filter(|(_, m)| m.provenance.pinned) {
        let bytes = u64::try_from(m.text().len()).unwrap_or(u64::MAX);
        if used.saturating_add(bytes) <= max_pinned_bytes {
            used = used.saturating_add(bytes);
            cap.honoured.push(i);
        } else {
            cap.dropped.push((i, m.id.clone()));
        }
    }
    cap
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
}
