//! The rewrite (W-1..W-4): a compaction is a transcript rewrite, not deletion in place.
//! One typed summary message, a proven retained subset, the discarded source offsets,
//! and a minimal patch (splice operations) from the old transcript to the new one.
//! Every rewrite is validated before it is returned (W-2).

use crate::error::{Error, ErrorCode, Result};
use crate::formats::{encode_message, validate_pairing, View};
use crate::transcript::{Message, Role, Transcript};
use serde::Serialize;
use serde_json::Value;

/// Where a row of the new transcript came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Kept from the source at this offset.
    Source(usize),
    /// Made by this compaction (a summary).
    New,
}

/// One retained row: source offset, offset in the new transcript, stable id (T-4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Retained {
    /// Offset of the row in the source transcript.
    pub source: usize,
    /// Offset of the row in the new transcript.
    pub offset: usize,
    /// Stable message id (T-4).
    pub id: String,
}

/// One splice of the patch: at `start` (an offset in the array as patched so far),
/// delete `delete_count` rows and insert `insert` (stored-view messages) (W-4).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Splice {
    /// Offset in the rows as patched by the splices before this one.
    pub start: usize,
    /// How many rows to remove at `start` (JSON `deleteCount`).
    pub delete_count: usize,
    /// Stored-view messages (F-4) to insert at `start`, in order.
    pub insert: Vec<Value>,
}

/// Retained and discarded offsets plus the patch, computed from the new row origins.
/// A retained row whose stored form differs from its source (an id pinned, T-4) is
/// written by the patch as a replacement.
pub fn provenance(new_rows: &[(Origin, &Message)], source: &[Message]) -> (Vec<Retained>, Vec<usize>, Vec<Splice>) {
    let source_len = source.len();
    let mut retained = Vec::new();
    let mut kept = vec![false; source_len];
    for (offset, (origin, m)) in new_rows.iter().enumerate() {
        if let Origin::Source(s) = origin {
            retained.push(Retained { source: *s, offset, id: m.id.clone() });
            if let Some(k) = kept.get_mut(*s) {
                *k = true;
            }
        }
    }
    let discarded: Vec<usize> = (0..source_len).filter(|&i| !kept[i]).collect();
    // Patch: between consecutive retained rows, delete the source rows between them and
    // insert the new rows between them.
    let mut patch = Vec::new();
    let mut prev_source: Option<usize> = None;
    let mut pending_insert: Vec<Value> = Vec::new();
    let mut cursor = 0usize; // offset in the patched array
    let flush = |patch: &mut Vec<Splice>, start: usize, del: usize, ins: &mut Vec<Value>| {
        if del > 0 || !ins.is_empty() {
            patch.push(Splice { start, delete_count: del, insert: std::mem::take(ins) });
        }
    };
    for (origin, m) in new_rows {
        match origin {
            Origin::New => pending_insert.push(encode_message(m, View::Stored)),
            // stored view = raw + provenance, so comparing those compares the views
            Origin::Source(s) if source.get(*s).is_some_and(|src| src.raw != m.raw || src.provenance != m.provenance) => {
                pending_insert.push(encode_message(m, View::Stored))
            }
            Origin::Source(s) => {
                let from = prev_source.map(|p| p + 1).unwrap_or(0);
                let del = s.saturating_sub(from);
                let ins = pending_insert.len();
                flush(&mut patch, cursor, del, &mut pending_insert);
                cursor += ins + 1;
                prev_source = Some(*s);
            }
        }
    }
    let from = prev_source.map(|p| p + 1).unwrap_or(0);
    flush(&mut patch, cursor, source_len.saturating_sub(from), &mut pending_insert);
    (retained, discarded, patch)
}

/// Applies a patch to stored-view rows (what a host does with it).
pub fn apply_patch(rows: &mut Vec<Value>, patch: &[Splice]) -> Result<()> {
    for sp in patch {
        if sp.start + sp.delete_count > rows.len() {
            return Err(Error::new(ErrorCode::InvalidRewrite, format!("splice at {} deletes past the end", sp.start)));
        }
        rows.splice(sp.start..sp.start + sp.delete_count, sp.insert.iter().cloned());
    }
    Ok(())
}

/// What validation must hold for one rewrite (W-2).
pub struct Expectations<'a> {
    /// The source transcript the rewrite was computed from.
    pub source: &'a Transcript,
    /// The new rows in order, each with its origin (a source offset or new).
    pub rows: &'a [(Origin, &'a Message)],
    /// Source offsets that must be retained (system rows, pinned rows, protected tail).
    pub protected: &'a [usize],
    /// Offset in the new transcript where the newest summary must sit.
    pub summary_at: usize,
    /// The rewritten transcript, checked against the target format's pairing rules (F-2).
    pub new_transcript: &'a Transcript,
}

/// The text of every new (summary) row of a rewrite, joined by blank lines: what N-1
/// searches for the discarded user text.
pub fn summary_text(rows: &[(Origin, &Message)]) -> String {
    rows.iter().filter(|(o, _)| *o == Origin::New).map(|(_, m)| m.text()).collect::<Vec<_>>().join("\n\n")
}

/// Validates a rewrite (W-1, W-2). Returns the checks that passed, by name, or the
/// first failure as `invalid_rewrite` (pairing failures keep their own codes). A
/// discarded user text block that is neither retained nor quoted (N-1) fails with a
/// message starting `user_text_lost:` naming its source offset.
pub fn validate(x: &Expectations<'_>) -> Result<Vec<&'static str>> {
    validate_clipped(x).map(|(checks, _)| checks)
}

/// [`validate`], also returning what the N-1 check ([`crate::nothing_lost::check`])
/// found the summary clipped, so the engine does not run that check a second time
/// (issue 15: it was two substring passes per discarded user text over the summary).
pub fn validate_clipped(x: &Expectations<'_>) -> Result<(Vec<&'static str>, Vec<crate::nothing_lost::Clipped>)> {
    let fail = |m: String| Err(Error::new(ErrorCode::InvalidRewrite, m));
    let n = x.source.messages.len();
    let mut checks = Vec::new();
    // retained sources strictly increase and are in range (order, no overlap)
    let mut last: Option<usize> = None;
    let mut kept = vec![false; n];
    for (origin, _) in x.rows {
        if let Origin::Source(s) = origin {
            if *s >= n {
                return fail(format!("retained row names source offset {s}, past the end ({n} rows)"));
            }
            if last.is_some_and(|l| l >= *s) {
                return fail(format!("retained source offsets not strictly increasing at {s}"));
            }
            last = Some(*s);
            kept[*s] = true;
        }
    }
    checks.push("retained_in_order");
    if kept.iter().all(|k| *k) {
        return fail("no-op: nothing was discarded".into());
    }
    checks.push("discards_something");
    for &p in x.protected {
        if p < n && !kept[p] {
            return fail(format!("protected source row {p} was dropped"));
        }
    }
    checks.push("protected_rows_kept");
    for (i, m) in x.source.messages.iter().enumerate() {
        if m.role == Role::System && !kept[i] {
            return fail(format!("system row {i} was dropped"));
        }
    }
    checks.push("system_rows_kept");
    match x.rows.get(x.summary_at) {
        Some((Origin::New, m)) if m.is_summary() => {}
        _ => return fail(format!("the summary is not at offset {}", x.summary_at)),
    }
    let sys = x.rows.iter().take_while(|(_, m)| m.role == Role::System).count();
    if x.rows.iter().skip(sys).take(x.summary_at.saturating_sub(sys)).any(|(_, m)| !m.in_summary_block()) {
        return fail("the summary block is not contiguous after the system rows".into());
    }
    checks.push("summary_in_place");
    if x.rows.iter().any(|(o, m)| *o == Origin::New && !m.is_summary()) {
        return fail("a new row is not a summary (unmapped row)".into());
    }
    checks.push("rows_mapped");
    // N-1: every user text block of a discarded row is quoted (or clipped with a marker).
    let clipped = crate::nothing_lost::check(&x.source.messages, &kept, &summary_text(x.rows))?;
    checks.push("user_text_kept");
    validate_pairing(x.new_transcript)?;
    checks.push("provider_pairing");
    let before: usize = x.source.messages.iter().map(|m| m.bytes).sum();
    let after: usize = x.new_transcript.messages.iter().map(|m| m.bytes).sum();
    if after >= before {
        return fail(format!("no reduction: {after} bytes after vs {before} before"));
    }
    checks.push("smaller");
    Ok((checks, clipped))
}
