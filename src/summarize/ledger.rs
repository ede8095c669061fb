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
            let after = rest.get(p + 9..).unwrap_or("");
            // `artifact#N` or `artifact#<tag>-N` (issue 14)
            let len = crate::trust::handle_body_len(after);
            if len > 0 {
                push(format!("artifact#{}", after.get(..len).unwrap_or("")));
            }
            rest = after.get(len..).unwrap_or("");
        }
    }
    out
}

/// The legacy marker that started the engine's deterministic sections (summaries
/// written before the checked marker, [`checked_marker`]); still recognised when a
/// summary carries no checked marker.
pub const SECTIONS_MARKER: &str = "\n\n-- engine record (deterministic) --";

/// Start of the checked marker: `\n\n-- engine record (deterministic, check HHHHHHHHHHHHHHHH) --`.
pub const CHECKED_MARKER_START: &str = "\n\n-- engine record (deterministic, check ";
const CHECKED_MARKER_END: &str = ") --";

/// The marker line that starts the deterministic sections `body`: it carries the FNV-1a
/// hash of `body` (16 hex digits), so text quoted from the transcript (untrusted) that
/// imitates the marker is not taken for it: [`split_summary`] only splits where the hash
/// matches the whole text after the marker.
pub fn checked_marker(body: &str) -> String {
    format!("{CHECKED_MARKER_START}{:016x}{CHECKED_MARKER_END}", crate::transcript::fnv1a(body.as_bytes()))
}

/// A summary split into its narrative and the engine's deterministic sections (the body
/// after the marker, `None` when it has none). The split is at the first checked marker
/// whose hash matches the text after it; a summary without one is split at the legacy
/// [`SECTIONS_MARKER`].
pub fn split_summary(summary: &str) -> (&str, Option<&str>) {
    let mut from = 0;
    while let Some(p) = summary.get(from..).and_then(|s| s.find(CHECKED_MARKER_START)) {
        let at = from + p;
        let hex_at = at + CHECKED_MARKER_START.len();
        let hex = summary.get(hex_at..hex_at + 16);
        let end = summary.get(hex_at + 16..hex_at + 16 + CHECKED_MARKER_END.len());
        if let (Some(hex), Some(CHECKED_MARKER_END)) = (hex, end) {
            let body = summary.get(hex_at + 16 + CHECKED_MARKER_END.len()..).unwrap_or("");
            if u64::from_str_radix(hex, 16).ok() == Some(crate::transcript::fnv1a(body.as_bytes())) {
                return (summary.get(..at).unwrap_or(""), Some(body));
            }
        }
        from = at + 1;
    }
    match summary.find(SECTIONS_MARKER) {
        Some(p) => (summary.get(..p).unwrap_or(summary), summary.get(p + SECTIONS_MARKER.len()..)),
        None => (summary, None),
    }
}

/// One length-prefixed item of the deterministic sections: `[KIND, N bytes]` on its own
/// line, then exactly N bytes of verbatim text. The length makes the item unforgeable
/// by its own content: [`read_items`] skips the N bytes without reading them.
pub fn item(kind: &str, text: &str) -> String {
    format!("\n[{kind}, {} bytes]\n{text}", text.len())
}

/// The length-prefixed items ([`item`]) of a deterministic-sections body: (kind, text),
/// in order. Other lines are skipped.
pub fn read_items(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(p) = rest.find("\n[") {
        let line_start = p + 1;
        let line_end = rest.get(line_start..).and_then(|s| s.find('\n')).map(|e| line_start + e);
        let Some(le) = line_end else { break };
        let line = rest.get(line_start..le).unwrap_or("");
        let parsed = line.strip_prefix('[').and_then(|l| l.strip_suffix(" bytes]")).and_then(|l| l.rsplit_once(", ")).and_then(|(k, n)| n.parse::<usize>().ok().map(|n| (k, n)));
        match parsed {
            Some((kind, n)) => match rest.get(le + 1..le + 1 + n) {
                Some(text) => {
                    out.push((kind.to_string(), text.to_string()));
                    rest = rest.get(le + 1 + n..).unwrap_or("");
                }
                None => rest = rest.get(le..).unwrap_or(""),
            },
            None => rest = rest.get(le..).unwrap_or(""),
        }
    }
    out
}

/// The parts of a deterministic-sections body outside its items' texts ([`read_items`]
/// skips the same N bytes), in order.
fn outside_items(body: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = body;
    let mut from = 0usize;
    while let Some(p) = rest.get(from..).and_then(|r| r.find("\n[")).map(|p| p + from) {
        let line_start = p + 1;
        let Some(le) = rest.get(line_start..).and_then(|s| s.find('\n')).map(|e| line_start + e) else { break };
        let line = rest.get(line_start..le).unwrap_or("");
        let n = line.strip_prefix('[').and_then(|l| l.strip_suffix(" bytes]")).and_then(|l| l.rsplit_once(", ")).and_then(|(_, n)| n.parse::<usize>().ok());
        match n.filter(|n| rest.get(le + 1..le + 1 + n).is_some()) {
            Some(n) => {
                out.push(rest.get(..le).unwrap_or(""));
                rest = rest.get(le + 1 + n..).unwrap_or("");
                from = 0;
            }
            None => from = le,
        }
    }
    out.push(rest);
    out
}

/// The items a summary's deterministic sections carry ([`read_items`] of the body after
/// its marker). A summary written before the checked marker gives its verbatim requests
/// (`User request (verbatim): ...` lines) as `carried request` items.
pub fn carried_items(summary: &str) -> Vec<(String, String)> {
    let (_, body) = split_summary(summary);
    let Some(body) = body else { return Vec::new() };
    let mut items = read_items(body);
    // N-1 floor lines (clip markers, constraint sentences, not-quoted runs, attachment
    // placeholders) are plain lines: carried as `clipped user text` items. A line inside
    // an item is the item's (the marker between an over-budget text's head and tail is
    // carried with that text)
    for line in outside_items(body).iter().flat_map(|part| part.lines()) {
        if crate::nothing_lost::FLOOR_LINE_PREFIXES.iter().any(|p| line.starts_with(p)) {
            items.push(("clipped user text".to_string(), line.to_string()));
        }
    }
    if !items.is_empty() || !summary.contains(SECTIONS_MARKER) {
        return items;
    }
    body.split("\nUser request (verbatim): ")
        .skip(1)
        .map(|part| part.split("\nCalls already run").next().unwrap_or("").split("\nArtifacts: ").next().unwrap_or("").to_string())
        .map(|v| ("carried request".to_string(), v))
        .collect()
}

/// The deterministic tail of a summary: the marker ([`checked_marker`]) and, in order,
/// `carried` (the floor, N-5: length-prefixed items), the folded-call ledger bounded to
/// `ledger_bytes` UTF-8 bytes (Y-5), the artifact index capped at `max_indexed_artifacts`,
/// newest kept (Y-2), and `rehydrated` (N-6). Empty when all are empty.
pub fn deterministic_tail(carried: &str, ledger: &[FoldedCall], ledger_bytes: usize, artifacts: &[String], rehydrated: &str, config: &Config) -> String {
    let mut body = String::new();
    body.push_str(carried);
    if !ledger.is_empty() {
        body.push_str(&ledger_text(ledger, ledger_bytes));
    }
    if !artifacts.is_empty() {
        let cap = config.max_indexed_artifacts;
        let skip = artifacts.len().saturating_sub(cap);
        body.push_str("\nArtifacts: ");
        body.push_str(&artifacts.get(skip..).unwrap_or(&[]).join(", "));
        if skip > 0 {
            body.push_str(&format!("\n[artifact index: {skip} older handles not listed (maxIndexedArtifacts)]"));
        }
    }
    body.push_str(rehydrated);
    if body.is_empty() {
        return body;
    }
    format!("{}{body}", checked_marker(&body))
}

/// The deterministic tail as before issue 13: verbatim requests (S-9), the ledger (Y-5)
/// and the artifact index (Y-2), under a checked marker. Kept for callers of the old API.
pub fn deterministic_sections(verbatim: &[String], ledger: &[FoldedCall], artifacts: &[String], config: &Config) -> String {
    let carried: String = verbatim.iter().map(|v| item("carried request", v)).collect();
    deterministic_tail(&carried, ledger, usize::MAX, artifacts, "", config)
}

/// Ledger text (Y-5): every folded call of the run, the failed ones first then the
/// successes, each newest first, until `max_bytes` UTF-8 bytes are used, written oldest first; the calls left out are counted per tool, never
/// silently. A failed call is named as ran and failed, with its error's first line. Its
/// name, arguments, id and error are quoted as data ([`crate::quote::content`]).
pub fn ledger_text(ledger: &[FoldedCall], max_bytes: usize) -> String {
    let mut out = String::from("\nCalls already run in this run's earlier rounds (do not repeat them unless they failed):");
    let lines: Vec<String> = ledger
        .iter()
        .map(|c| {
            // the call's name, arguments, id and error are transcript text, quoted as data
            // (Y-9, issue 13: a bidi control escaped visibly)
            let q = crate::quote::content;
            let outcome = match (&c.failed, &c.error) {
                (true, Some(e)) if !e.is_empty() => format!("ran and failed (may be made again): {}", q(e)),
                (true, _) => "ran and failed (may be made again)".to_string(),
                (false, _) => "already run".to_string(),
            };
            format!("\n- {}({}) [{}]: {outcome}", q(&c.name), q(&c.arguments), q(&c.call_id))
        })
        .collect();
    let mut used = out.len() + 120;
    // Y-5 (issue 13): under the byte bound the failed calls are named first (newest
    // first), then the successes newest first; the named ones are written oldest first
    let mut named = vec![false; lines.len()];
    for want_failed in [true, false] {
        for (i, l) in lines.iter().enumerate().rev() {
            if ledger.get(i).is_some_and(|c| c.failed) != want_failed {
                continue;
            }
            if used + l.len() > max_bytes {
                continue;
            }
            used += l.len();
            if let Some(n) = named.get_mut(i) {
                *n = true;
            }
        }
    }
    let omitted: Vec<&FoldedCall> = ledger.iter().zip(&named).filter(|(_, n)| !**n).map(|(c, _)| c).collect();
    if !omitted.is_empty() {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for c in &omitted {
            match counts.iter_mut().find(|(n, _)| *n == c.name) {
                Some((_, k)) => *k += 1,
                None => counts.push((c.name.clone(), 1)),
            }
        }
        let failed = omitted.iter().filter(|c| c.failed).count();
        let parts: Vec<String> = counts.iter().map(|(n, k)| format!("{n} x{k}")).collect();
        out.push_str(&format!("\n- {} earlier calls not named here (ledger byte bound; {failed} of them failed): {}", omitted.len(), parts.join(", ")));
    }
    for (l, _) in lines.iter().zip(&named).filter(|(_, n)| **n) {
        out.push_str(l);
    }
    out
}

/// The summary text minus the engine's deterministic sections ([`split_summary`]).
pub fn narrative_part(summary: &str) -> &str {
    split_summary(summary).0
}

