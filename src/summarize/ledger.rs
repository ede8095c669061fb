//! The engine's deterministic sections of a summary: the folded-call ledger (Y-5),
//! the artifact index (Y-2) and the marker that separates them from the narrative.

use crate::config::Config;
use crate::state::FoldedCall;

/// Every `artifact#N` handle in the rows: stamped `artifact_ref` plus any written
/// inline in text (Y-2), in order of first appearance, de-duplicated.
pub fn collect_artifact_refs<'a>(texts: impl IntoIterator<Item = &'a str>, stamped: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |h: String| {
        if !out.contains(&h) {
            out.push(h);
        }
    };
    for s in stamped {
        push(s.to_string());
    }
    for t in texts {
        let mut rest = t;
        while let Some(p) = rest.find("artifact#") {
            let after = &rest[p + 9..];
            let digits: usize = after.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 0 {
                push(format!("artifact#{}", &after[..digits]));
            }
            rest = &after[digits..];
        }
    }
    out
}

/// Marker that starts the engine's deterministic sections inside a summary.
pub const SECTIONS_MARKER: &str = "\n\n-- engine record (deterministic) --";

/// The deterministic tail of a summary: verbatim requests (S-9), the folded-call
/// ledger (Y-5) and the artifact index capped at `max_indexed_artifacts`, newest kept (Y-2).
pub fn deterministic_sections(verbatim: &[String], ledger: &[FoldedCall], artifacts: &[String], config: &Config) -> String {
    let mut out = String::new();
    if verbatim.is_empty() && ledger.is_empty() && artifacts.is_empty() {
        return out;
    }
    out.push_str(SECTIONS_MARKER);
    for v in verbatim {
        out.push_str("\nUser request (verbatim): ");
        out.push_str(v);
    }
    if !ledger.is_empty() {
        out.push_str(&ledger_text(ledger, 40));
    }
    if !artifacts.is_empty() {
        let cap = config.max_indexed_artifacts;
        let skip = artifacts.len().saturating_sub(cap);
        out.push_str("\nArtifacts: ");
        out.push_str(&artifacts[skip..].join(", "));
    }
    out
}

/// Ledger text (Y-5): the newest `limit` calls by name, the rest counted per tool.
pub fn ledger_text(ledger: &[FoldedCall], limit: usize) -> String {
    let mut out = String::from("\nCalls already run in this run's earlier rounds (do not repeat them unless they failed):");
    let skip = ledger.len().saturating_sub(limit);
    if skip > 0 {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for c in &ledger[..skip] {
            match counts.iter_mut().find(|(n, _)| *n == c.name) {
                Some((_, k)) => *k += 1,
                None => counts.push((c.name.clone(), 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(n, k)| format!("{n} x{k}")).collect();
        out.push_str(&format!("\n- earlier: {}", parts.join(", ")));
    }
    for c in &ledger[skip..] {
        let outcome = if c.failed { "ran and failed (may be made again)" } else { "already run" };
        out.push_str(&format!("\n- {}({}) [{}]: {outcome}", c.name, c.arguments, c.call_id));
    }
    out
}

/// The summary text minus the engine's deterministic sections.
pub fn narrative_part(summary: &str) -> &str {
    match summary.find(SECTIONS_MARKER) {
        Some(p) => &summary[..p],
        None => summary,
    }
}

