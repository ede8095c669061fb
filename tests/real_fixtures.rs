//! The real logs kept under `tests/fixtures/real/` (see its SOURCES.md): a Claude Code
//! session with a `Task` subagent and a subagent's own file import as valid documents
//! (N-2, F-5) whose subagent rows never enter the main thread, and compact in every
//! profile at 8,000 and 16,000 tokens to a rewrite that passes validation with nothing
//! lost (W-2, N-1), or to a typed `cannot_fit` (or `skipped: no_reduction` for a log
//! already under the window that no fold shrinks).

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::import::{import_with, sniff, ImportKind, ImportOptions};
use context_compactor::formats::{self, Format};
use context_compactor::state::SessionState;
use context_compactor::transcript::Block;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/real").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn compact_everywhere(format: Format, doc: &Value, what: &str) -> usize {
    let source = formats::decode(format, doc.clone()).unwrap();
    let mut compacted = 0;
    for profile in ["kerkov", "meerkat", "default"] {
        for window in [8_000u64, 16_000] {
            let config = Config::from_options(&json!({ "profile": profile, "contextWindow": window })).unwrap();
            let mut job = Job::start(config, SessionState::default(), source.clone(), JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
            let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap_or_else(|e| panic!("{what} {profile} {window}: {e}"));
            match o.status {
                "compacted" => {
                    compacted += 1;
                    assert!(o.checks.contains(&"user_text_kept") && o.checks.contains(&"provider_pairing"), "{what} {profile} {window}: {:?}", o.checks);
                    formats::validate_pairing(&o.transcript).unwrap_or_else(|e| panic!("{what} {profile} {window}: {e}"));
                }
                // a log already under the window whose fold cannot shrink it (C-5)
                "skipped" if o.reason.starts_with("no_reduction") && o.before.estimated_tokens < window => {}
                "cannot_fit" => assert!(o.reason.starts_with("cannot_fit: the floor ("), "{what} {profile} {window}: {}", o.reason),
                other => panic!("{what} {profile} {window}: {other}: {}", o.reason),
            }
        }
    }
    compacted
}

#[test]
fn n2_f5_real_claude_code_session_with_a_task_subagent_imports_and_compacts() {
    let text = fixture("claude-code-subagent/session.jsonl");
    assert_eq!(sniff(&text), Some(ImportKind::ClaudeCodeJsonl));
    let r = import_with(ImportKind::ClaudeCodeJsonl, &text, &ImportOptions::default()).unwrap();
    assert_eq!(r.format, Format::Anthropic);
    let t = formats::decode(r.format, r.document.clone()).unwrap();
    formats::validate_pairing(&t).unwrap();
    // the Task call is answered in the main thread by its own result
    let task = t.messages.iter().flat_map(|m| &m.blocks).find_map(|b| match b {
        Block::ToolCall { id, name, .. } if name == "Task" || name == "Agent" => Some(id.clone()),
        _ => None,
    });
    let task = task.expect("the log's Task call");
    assert!(t.messages.iter().flat_map(|m| &m.blocks).any(|b| matches!(b, Block::ToolResult { call_id, .. } if *call_id == task)), "answered");
    // the subagent's rows (only in progress rows of this log) are not main-thread rows
    let sub_prompt = "Draft bead content for setting up Credo, Dialyxir, and mix_audit";
    assert!(text.contains(sub_prompt), "the fixture holds the subagent's prompt in a progress row");
    let sub_row = t.messages.iter().any(|m| m.blocks.iter().any(|b| matches!(b, Block::Text { text } if text.starts_with(sub_prompt))));
    assert!(!sub_row, "the subagent's prompt is no row of the main thread");
    assert!(compact_everywhere(r.format, &r.document, "session.jsonl") >= 3);
}

#[test]
fn n2_f5_real_subagent_file_imports_alone_and_compacts() {
    let text = fixture("claude-code-subagent/agent-aac57f5.jsonl");
    let r = import_with(ImportKind::ClaudeCodeJsonl, &text, &ImportOptions::default()).unwrap();
    assert!(r.warnings.iter().any(|w| w.code == "subagent_file"), "{:?}", r.warnings);
    let t = formats::decode(r.format, r.document.clone()).unwrap();
    formats::validate_pairing(&t).unwrap();
    assert!(t.messages.len() >= 6, "{} rows", t.messages.len());
    compact_everywhere(r.format, &r.document, "agent-aac57f5.jsonl");
}
