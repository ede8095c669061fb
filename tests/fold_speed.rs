//! Issue 15 (compaction speed): the fold's fast paths give what the paths they replace
//! give, on the real transcripts in `../shared/transcripts` and on odd rows.
//! - `Facts::read_for(.., handoff: false)` (a host summarizer wrote the narrative) reads
//!   every fact the floor (N-5, N-1), rehydration (N-6) and the ledger (Y-5) use exactly
//!   as `Facts::read` does, and leaves the handoff's own facts empty.
//!
//! The real-transcript part skips (with a notice) only when `../shared` is absent and
//! `CI` is not `true`.

use context_compactor::formats::decode;
use context_compactor::formats::import::{import, sniff};
use context_compactor::summarize::Facts;
use context_compactor::transcript::{Message, Transcript};
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if !p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(".md")) {
            out.push(p);
        }
    }
}

/// Every shared transcript, decoded (empty when `../shared` is absent outside CI).
pub fn shared_transcripts() -> Vec<(String, Transcript)> {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if !shared.exists() && std::env::var("CI").as_deref() != Ok("true") {
        eprintln!("NOTICE: {} not found; skipping the real-transcript part", shared.display());
        return Vec::new();
    }
    let mut files = Vec::new();
    walk(&shared.join("transcripts"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Some(kind) = sniff(&text) else { continue };
        let Ok((format, doc)) = import(kind, &text) else { continue };
        if let Ok(t) = decode(format, doc) {
            out.push((path.file_name().unwrap().to_string_lossy().to_string(), t));
        }
    }
    out
}

fn handle_of(_: usize, nth: usize, m: &Message) -> Option<String> {
    // a handle for some results, so the files' handles are exercised too
    (nth % 2 == 0).then(|| format!("artifact#{}", m.id.len() + nth)).or_else(|| m.provenance.artifact_ref.clone())
}

/// Issue 15, N-5, N-1, N-6, Y-5: with a host summary the facts the floor, rehydration and
/// the ledger read are those of the full read; the handoff's own facts are not read.
#[test]
fn issue15_n5_facts_without_the_handoff_are_the_floor_facts_of_the_full_read() {
    let mut tried = 0;
    for (name, t) in shared_transcripts() {
        let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
        let full = Facts::read(&rows, &handle_of);
        let lean = Facts::read_for(&rows, &handle_of, false);
        assert_eq!(lean.requests, full.requests, "{name}");
        assert_eq!(lean.constraints, full.constraints, "{name}");
        assert_eq!(lean.files, full.files, "{name}");
        assert_eq!(lean.calls, full.calls, "{name}");
        assert_eq!(lean.plan, full.plan, "{name}");
        assert_eq!(lean.instructions, full.instructions, "{name}");
        assert_eq!(lean.carried, full.carried, "{name}");
        assert_eq!(lean.rows, full.rows, "{name}");
        assert!(lean.decisions.is_empty() && lean.current_work.is_none() && lean.earlier_summary.is_none() && lean.artifacts.is_empty(), "{name}");
        assert_eq!(Facts::read_for(&rows, &handle_of, true), full, "{name}");
        tried += usize::from(!full.constraints.is_empty() && !full.calls.is_empty());
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        assert!(tried > 0, "some transcript has constraints and calls");
    }
}
