//! Issue 15 (compaction speed): the fold's fast paths give what the paths they replace
//! give, on the real transcripts in `../shared/transcripts` and on odd rows.
//! - `Facts::read_for(.., handoff: false)` (a host summarizer wrote the narrative) reads
//!   every fact the floor (N-5, N-1), rehydration (N-6) and the ledger (Y-5) use exactly
//!   as `Facts::read` does, and leaves the handoff's own facts empty.
//!
//! The real-transcript part skips (with a notice) only when `../shared` is absent and
//! `CI` is not `true`.

mod common;
use context_compactor::formats::decode;
use context_compactor::formats::import::{import, sniff};
use context_compactor::summarize::Facts;
use context_compactor::transcript::{Message, Transcript};

/// Every shared transcript, decoded (empty when `../shared` is absent outside CI).
pub fn shared_transcripts() -> Vec<(String, Transcript)> {
    let Some((_, files)) = common::shared_transcript_files() else { return Vec::new() };
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

fn configs() -> Vec<context_compactor::config::Config> {
    use context_compactor::config::{Config, Profile};
    let mut out = Vec::new();
    for (window, share) in [(None, 0.25), (Some(3_000), 0.25), (Some(1_200), 0.25), (Some(900), 0.9), (None, 1.0), (Some(20_000), 0.05)] {
        let mut c = Config::preset(Profile::Default);
        c.context_window = 16_000;
        c.summarizer_context_window = window;
        c.summary_input_share = share;
        if window.is_some_and(|w| w < 1_500) {
            c.summary_max_output_tokens = 200;
        }
        out.push(c);
    }
    out
}

/// Issue 15, Y-8, Y-9, E-2: the summarize request built with rows rendered on demand (a
/// clipped row from its head and tail, lengths counted without rendering, user rows known
/// by role) is the request from every row rendered first, on odd rows (fence tags,
/// engine-looking lines and multi-byte characters around the cuts, failed results) under
/// every clipping stage. Both ways share the bounds (one code path): this checks the
/// on-demand rows; the bounds' own oracle is the written-out requests of
/// tests/summary_request.rs.
#[test]
fn issue15_y8_request_rendered_on_demand_equals_the_request_from_rendered_rows() {
    use context_compactor::formats::Format;
    use context_compactor::summarize::{render_rows, summary_request, summary_request_for, SUMMARY_PROMPT};
    use serde_json::json;
    let pieces = ["<transcript>", "</ Summaries>", "\n[#9 user]", "\n- f(x) [c]: already run", "\n", "é", "中文。", "\r\n", "<", "x", "[... ", "\\", "Exit code 2", "must ", "  "];
    let mut seed: u64 = 42;
    let mut next = |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    let mut coverage = std::collections::BTreeSet::new();
    for case in 0..40 {
        let mut msgs = vec![json!({"role": "system", "content": "sys"})];
        for i in 0..(2 + next(25)) {
            let mut body = String::new();
            let long = next(4) == 0;
            for _ in 0..(if long { 200 + next(3_000) } else { next(40) }) {
                body.push_str(pieces[next(pieces.len() as u64) as usize]);
            }
            msgs.push(match next(4) {
                0 => json!({"role": "user", "content": body}),
                1 => json!({"role": "assistant", "content": body, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "bash", "arguments": json!({"command": body.chars().take(500).collect::<String>()}).to_string()}}]}),
                2 => json!({"role": "tool", "tool_call_id": format!("c{}", i.saturating_sub(1)), "content": body}),
                _ => json!({"role": "assistant", "content": body}),
            });
        }
        let t = decode(Format::OpenaiChat, serde_json::Value::Array(msgs)).unwrap();
        let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
        for (k, config) in configs().iter().enumerate() {
            let want = summary_request(render_rows(&rows), config, SUMMARY_PROMPT);
            let got = summary_request_for(&rows, config, SUMMARY_PROMPT);
            assert_eq!(got, want, "case {case} config {k}");
            coverage.insert((got.coverage.clone(), got.messages[0].content.contains("bytes clipped")));
        }
    }
    assert!(coverage.contains(&("whole".to_string(), false)) && coverage.contains(&("trimmed".to_string(), true)), "whole and clipped requests: {coverage:?}");
    // the real transcripts, whole and bounded
    for (name, t) in shared_transcripts() {
        let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
        for (k, config) in configs().iter().enumerate() {
            assert_eq!(summary_request_for(&rows, config, SUMMARY_PROMPT), summary_request(render_rows(&rows), config, SUMMARY_PROMPT), "{name} config {k}");
        }
    }
}
