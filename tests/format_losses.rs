//! Losses testers found in the format adapters (session 7): N-5 (a Codex `apply_patch`
//! body's paths in the facts and the floor), M-1 (Anthropic web search results and
//! citations projected into memory), Y-4 (a new summary goes after an OpenAI Responses
//! `compaction` item), N-5 §9 (the next-step pointer at a request kept verbatim).

mod common;

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use context_compactor::formats::import::{import_with, ImportKind, ImportOptions};
use context_compactor::formats::{decode, Format};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

fn config(window: u64) -> Config {
    Config::from_options(&json!({ "profile": "default", "contextWindow": window, "preserveRecentTurns": 1 })).expect("config")
}

fn summary_text(o: &Outcome) -> String {
    o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).map(|s| s.text.clone()).unwrap_or_default()
}

/// A forced compaction of `doc` whose summarize hook answers `reply` (a summary that
/// names no path), with session memory on.
fn compact_hooked(format: Format, doc: Value, window: u64, reply: &str) -> Outcome {
    let t = decode(format, doc).expect("decode");
    let mut job = Job::start(config(window), SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true }).with_memory("s", false);
    run_sync(&mut job, |_| Reply::Summary { text: reply.to_string(), usage: None }).expect("job runs")
}

// ------------------------------------------------------------------ 1. Codex apply_patch

fn codex_line(ty: &str, payload: Value) -> Value {
    json!({ "timestamp": "2025-09-01T10:00:00Z", "type": ty, "payload": payload })
}

fn codex_msg(role: &str, text: &str) -> Value {
    let part = if role == "assistant" { "output_text" } else { "input_text" };
    codex_line("response_item", json!({ "type": "message", "role": role, "content": [{ "type": part, "text": text }] }))
}

/// A Codex rollout editing files three ways: the freeform `apply_patch` custom tool, the
/// `shell` tool running `apply_patch` with the patch as its second word, and `shell`
/// running a `bash -lc` heredoc; then a long tail so the edits fold.
fn codex_patch_rollout() -> String {
    let mut lines = vec![
        codex_line("session_meta", json!({ "id": "t", "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.40.0", "source": "cli" })),
        codex_msg("user", "Rename the parser entry point and drop the old shim."),
    ];
    let custom = "*** Begin Patch\n*** Update File: src/parser/entry.rs\n@@ fn parse\n-pub fn parse_old(s: &str) {}\n+pub fn parse(s: &str) {}\n*** Add File: src/parser/NOTES.md\n+moved from parse_old\n*** End Patch\n";
    lines.push(codex_line("response_item", json!({ "type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": custom })));
    lines.push(codex_line("response_item", json!({ "type": "custom_tool_call_output", "call_id": "p1", "output": "Success. Updated the following files:\nM src/parser/entry.rs\nA src/parser/NOTES.md" })));
    let shell = "*** Begin Patch\n*** Delete File: legacy_shim.py\n*** Update File: lib/old_name.rs\n*** Move to: lib/new_name.rs\n@@\n-old\n+new\n*** End Patch";
    lines.push(codex_line("response_item", json!({ "type": "function_call", "name": "shell", "call_id": "p2", "arguments": json!({ "command": ["apply_patch", shell], "workdir": "/w" }).to_string() })));
    lines.push(codex_line("response_item", json!({ "type": "function_call_output", "call_id": "p2", "output": json!({ "output": "Done!", "metadata": { "exit_code": 0 } }).to_string() })));
    let heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: Cargo.toml\n@@\n-version = \"0.1.0\"\n+version = \"0.2.0\"\n*** End Patch\nEOF";
    lines.push(codex_line("response_item", json!({ "type": "function_call", "name": "shell", "call_id": "p3", "arguments": json!({ "command": ["bash", "-lc", heredoc] }).to_string() })));
    lines.push(codex_line("response_item", json!({ "type": "function_call_output", "call_id": "p3", "output": "Exit code: 0\nOutput:\nDone!" })));
    for i in 0..10 {
        lines.push(codex_msg("assistant", &format!("step {i} {}", "z".repeat(2_500))));
        lines.push(codex_msg("user", &format!("go on {i}")));
    }
    lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

const PATCHED: [&str; 6] = ["src/parser/entry.rs", "src/parser/NOTES.md", "legacy_shim.py", "lib/old_name.rs", "lib/new_name.rs", "Cargo.toml"];

#[test]
fn n5_codex_apply_patch_paths_are_in_the_floor_under_a_summary_naming_none() {
    let doc = import_with(ImportKind::CodexRollout, &codex_patch_rollout(), &ImportOptions::default()).expect("import").document;
    let o = compact_hooked(Format::OpenaiResponses, doc, 16_000, "The agent renamed the entry point and cleaned up; tests pass.");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = summary_text(&o);
    for p in PATCHED {
        assert!(text.contains(p), "patched path {p} missing from the committed summary:\n{text}");
    }
    // the patch body's code lines are not paths
    assert!(!text.contains("parse_old(s"), "{text}");
}

#[test]
fn n5_codex_apply_patch_files_are_in_the_handoff_files_section_as_edited_created_deleted() {
    let doc = import_with(ImportKind::CodexRollout, &codex_patch_rollout(), &ImportOptions::default()).expect("import").document;
    let t = decode(Format::OpenaiResponses, doc).expect("decode");
    let mut job = Job::start(config(16_000), SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
    let o = run_sync(&mut job, |_| panic!("no summarizer")).expect("job runs");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = summary_text(&o);
    for line in [
        "- src/parser/entry.rs: edited by apply_patch",
        "- src/parser/NOTES.md: created by apply_patch",
        "- legacy_shim.py: deleted by shell",
        "- lib/old_name.rs: edited by shell",
        "- lib/new_name.rs: created by shell",
        "- Cargo.toml: edited by shell",
    ] {
        assert!(text.lines().any(|l| l.starts_with(line)), "no line {line:?} in the handoff:\n{text}");
    }
    // a patch body's code words are no file of the Files section
    assert!(!text.lines().any(|l| l.starts_with("- EOF") || l.starts_with("- version")), "{text}");
}

// ------------------------------------------------------------------ 2. Anthropic web search

/// An Anthropic conversation whose second turn ran the server web search: the
/// `server_tool_use`, its `web_search_tool_result` and a text citing a result, then a
/// long tail so that turn folds.
fn web_search_conversation() -> Value {
    let mut rows = vec![
        json!({ "role": "user", "content": "When did the Rust 2024 edition ship?" }),
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "I'll look that up." },
            { "type": "server_tool_use", "id": "srvtoolu_01A", "name": "web_search", "input": { "query": "Rust 2024 edition release" } },
            { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_01A", "content": [
                { "type": "web_search_result", "url": "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html", "title": "Announcing Rust 1.85.0 and Rust 2024", "encrypted_content": "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5", "page_age": "February 20, 2025" },
                { "type": "web_search_result", "url": "https://doc.rust-lang.org/edition-guide/rust-2024/index.html", "title": "Rust 2024 - The Rust Edition Guide", "encrypted_content": "EpMBCioIARgBIiQ4ZDg3", "page_age": null }
            ] },
            { "type": "text", "text": "It shipped with Rust 1.85.", "citations": [
                { "type": "web_search_result_location", "url": "https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html", "title": "Announcing Rust 1.85.0 and Rust 2024", "encrypted_index": "Eo8BCioIAhgB", "cited_text": "The Rust team is happy to announce a new version of Rust, 1.85.0. This stabilizes the 2024 edition as well." }
            ] }
        ] }),
    ];
    for i in 0..10 {
        rows.push(json!({ "role": "user", "content": format!("next question {i}") }));
        rows.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "w".repeat(2_500)) }));
    }
    json!({ "system": "You answer questions.", "messages": rows })
}

#[test]
fn m1_anthropic_web_search_results_and_citations_reach_memory_when_folded() {
    use context_compactor::memory::{recall, Index, RecordKind};
    use context_compactor::transcript::Role;
    let o = compact_hooked(Format::Anthropic, web_search_conversation(), 16_000, "Answered questions.");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let records = o.memory.as_ref().expect("memory batch").records.clone();
    // each search's results: one record, role tool, tool web_search, the call id
    let search: Vec<_> = records.iter().filter(|r| r.call_id.as_deref() == Some("srvtoolu_01A") && r.kind == RecordKind::ToolOutput).collect();
    assert_eq!(search.len(), 1, "{records:#?}");
    let s = search[0];
    assert_eq!((s.role, s.tool_name.as_deref()), (Role::Tool, Some("web_search")));
    assert_eq!(
        s.content,
        "Announcing Rust 1.85.0 and Rust 2024 (https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html), page age February 20, 2025\nRust 2024 - The Rust Edition Guide (https://doc.rust-lang.org/edition-guide/rust-2024/index.html)"
    );
    assert!(s.context.as_deref().is_some_and(|c| c.starts_with("web_search: Rust 2024 edition release")), "{:?}", s.context);
    assert!(!s.content.contains("EqgfCioI"), "encrypted content is no text");
    // the citation's passage and source go with the assistant text
    let narrative = records.iter().find(|r| r.kind == RecordKind::Narrative && r.content.contains("It shipped with Rust 1.85.")).expect("assistant text record");
    assert!(
        narrative.content.contains("[cited: \"The Rust team is happy to announce a new version of Rust, 1.85.0. This stabilizes the 2024 edition as well.\" from Announcing Rust 1.85.0 and Rust 2024 (https://blog.rust-lang.org/2025/02/20/Rust-1.85.0.html)]"),
        "{}",
        narrative.content
    );
    // recall, as a model asking about it would
    let mut index = Index::new();
    index.add(records).expect("index");
    let hits = recall(&index, "s", "what did the web search say about the Rust 2024 edition guide?", Some(3)).hits;
    assert!(hits.iter().any(|h| h.call_id.as_deref() == Some("srvtoolu_01A")), "{hits:#?}");
    let hits = recall(&index, "s", "what did the Rust team announce, per the cited source?", Some(3)).hits;
    assert!(hits.iter().any(|h| h.content.contains("This stabilizes the 2024 edition")), "{hits:#?}");
}

#[test]
fn m1_a_failed_anthropic_web_search_is_a_record_naming_its_error() {
    let raw = json!({ "role": "assistant", "content": [
        { "type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": { "query": "q" } },
        { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_9", "content": { "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded" } }
    ] });
    let (searches, citations) = context_compactor::formats::anthropic::server_search(&raw);
    assert!(citations.is_empty());
    assert_eq!(searches.len(), 1);
    assert_eq!((searches[0].call_id.as_str(), searches[0].text.as_str()), ("srvtoolu_9", "web search failed: max_uses_exceeded"));
}

// ------------------------------------------------------------------ 3. Responses compaction item, Y-4

const ENCRYPTED: &str = "gAAAAB-opaque-provider-history-0123456789";

fn compaction_item() -> Value {
    json!({ "type": "compaction", "id": "cmp_1", "encrypted_content": ENCRYPTED })
}

/// `turns` rounds of a `lookup` function call after `head`, each round its own user
/// request; then a last request.
fn responses_rounds(head: Vec<Value>, turns: usize) -> Value {
    let mut items = head;
    for i in 0..turns {
        items.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": format!("look up record {i}") }] }));
        items.push(json!({ "type": "function_call", "call_id": format!("fc_{i}"), "name": "lookup", "arguments": json!({ "key": format!("k{i}") }).to_string() }));
        items.push(json!({ "type": "function_call_output", "call_id": format!("fc_{i}"), "output": format!("record {i}: {}", "v".repeat(2_000)) }));
        items.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": format!("record {i} read") }] }));
    }
    items.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Now compare them all." }] }));
    Value::Array(items)
}

fn earlier_summary() -> Value {
    json!({ "type": "message", "role": "user", "summary_level": 1, "transcript_role": "compaction_summary", "content": [{ "type": "input_text", "text": "EARLIER-SUMMARY: the first records were read." }] })
}

/// (position of the compaction item, positions of the summary rows) in the stored view
/// of the outcome, and the request view's compaction item.
fn placed(o: &Outcome) -> (usize, Vec<usize>, Value) {
    let out = common::out_messages(o);
    let at = out.iter().position(|m| m["type"] == "compaction").expect("the compaction item is kept");
    let summaries: Vec<usize> = out.iter().enumerate().filter(|(_, m)| m["transcript_role"] == "compaction_summary").map(|(i, _)| i).collect();
    let request = context_compactor::formats::encode(&o.transcript, context_compactor::formats::View::Request);
    let items = request.as_array().cloned().or_else(|| request.get("input").and_then(Value::as_array).cloned()).unwrap_or_default();
    let cmp = items.into_iter().find(|m| m["type"] == "compaction").expect("the compaction item is in the request");
    (at, summaries, cmp)
}

fn fold_responses(doc: Value, window: u64) -> Outcome {
    let cfg = config(window);
    let (o, _) = common::compact_with(Format::OpenaiResponses, doc, cfg, SessionState::default(), Signals { force: true, ..Signals::default() }, |_| Reply::Summary { text: "Records read; nothing failed.".into(), usage: None });
    assert_eq!(o.status, "compacted", "{}", o.reason);
    o
}

#[test]
fn y4_a_summary_of_rows_after_a_compaction_item_goes_after_it_and_the_item_is_untouched() {
    // the compaction item first (what /responses/compact hands back), then new calls
    let o = fold_responses(responses_rounds(vec![compaction_item()], 8), 12_000);
    let (at, summaries, cmp) = placed(&o);
    assert_eq!((at, summaries), (0, vec![1]), "the compaction item, then the new summary");
    assert_eq!(cmp, compaction_item(), "the request view keeps the item byte for byte");
    // and the summary of these rows stays after it on the next fold (oldest first)
    let mut next = common::out_messages(&o);
    next.pop();
    if let Value::Array(more) = responses_rounds(Vec::new(), 8) {
        next.extend(more);
    }
    let o2 = fold_responses(Value::Array(next), 12_000);
    let (at, summaries, cmp) = placed(&o2);
    assert_eq!(at, 0, "{:#?}", common::out_messages(&o2));
    assert!(summaries.len() >= 1 && summaries.iter().all(|&s| s > at), "{summaries:?}");
    assert_eq!(cmp, compaction_item());
}

#[test]
fn y4_the_new_summary_follows_an_earlier_summary_and_the_newest_compaction_item() {
    // an earlier summary, then the compaction item, then new calls
    let o = fold_responses(responses_rounds(vec![earlier_summary(), compaction_item()], 8), 12_000);
    let out = common::out_messages(&o);
    let (at, summaries, cmp) = placed(&o);
    assert_eq!((at, summaries.clone()), (1, vec![0, 2]), "{out:#?}");
    assert!(out[0]["content"][0]["text"].as_str().is_some_and(|t| t.contains("EARLIER-SUMMARY")), "the earlier summary stays first");
    assert_eq!(cmp, compaction_item());
    // the compaction item first, then an earlier summary: the new one after both
    let o = fold_responses(responses_rounds(vec![compaction_item(), earlier_summary()], 8), 12_000);
    let (at, summaries, _) = placed(&o);
    assert_eq!(at, 0);
    assert_eq!(summaries.len(), 2, "{:#?}", common::out_messages(&o));
    let out = common::out_messages(&o);
    assert!(out[summaries[0]]["content"][0]["text"].as_str().is_some_and(|t| t.contains("EARLIER-SUMMARY")), "oldest first: {out:#?}");
}

#[test]
fn y4_an_in_run_fold_after_a_compaction_item_puts_its_summary_after_it() {
    // one request whose run made many calls after the compaction item: the stage-2 fold
    let mut items = vec![compaction_item(), json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Read every record." }] })];
    for i in 0..10 {
        items.push(json!({ "type": "function_call", "call_id": format!("fc_{i}"), "name": "lookup", "arguments": json!({ "key": format!("k{i}") }).to_string() }));
        items.push(json!({ "type": "function_call_output", "call_id": format!("fc_{i}"), "output": format!("record {i}: {}", "v".repeat(2_000)) }));
    }
    let o = fold_responses(Value::Array(items), 12_000);
    let (at, summaries, cmp) = placed(&o);
    assert_eq!(at, 0, "{:#?}", common::out_messages(&o));
    assert_eq!(summaries, vec![1]);
    assert_eq!(cmp, compaction_item());
}

#[test]
fn y3_y4_summaries_after_a_compaction_item_still_roll_up_and_stay_after_it() {
    // the compaction item, four earlier summaries, new calls: the fifth summary makes the
    // block roll up (Y-3), past the compaction item, which stays first
    let mut head = vec![compaction_item()];
    for k in 0..4 {
        head.push(json!({ "type": "message", "role": "user", "summary_level": 1, "transcript_role": "compaction_summary", "content": [{ "type": "input_text", "text": format!("EARLIER-SUMMARY {k}: records of batch {k} were read.") }] }));
    }
    let o = fold_responses(responses_rounds(head, 8), 12_000);
    let out = common::out_messages(&o);
    let (at, summaries, cmp) = placed(&o);
    assert_eq!(at, 0, "{out:#?}");
    assert_eq!(summaries, vec![1], "one rolled-up summary after the compaction item: {out:#?}");
    assert_eq!(out[1]["summary_level"], json!(2));
    assert_eq!(cmp, compaction_item());
    let rollups = &o.rewrite.as_ref().expect("a rewrite").rollups;
    assert!(rollups.iter().any(|r| r.pass == "level1_to_level2"), "{rollups:?}");
}

#[test]
fn k4_y4_the_request_cache_breakpoint_goes_after_a_summary_block_behind_a_compaction_item() {
    use context_compactor::cache::summary_end_in_request;
    let doc = json!([compaction_item(), earlier_summary(), { "type": "message", "role": "user", "content": "next" }]);
    let t = decode(Format::OpenaiResponses, doc).expect("decode");
    assert_eq!(summary_end_in_request(&t, false), Some(2), "after the compaction item and the summary");
    // no summary yet: no breakpoint of the block
    let t = decode(Format::OpenaiResponses, json!([compaction_item(), { "type": "message", "role": "user", "content": "next" }])).expect("decode");
    assert_eq!(summary_end_in_request(&t, false), None);
}

// ------------------------------------------------------------------ 4. §9 and a live newest request

/// A coding session in OpenAI chat rows: the first task, six read rounds (each assistant
/// text announcing its next step), a closing answer, then `last` (user rows) when given.
fn coding_session(last: &[&str]) -> Vec<Value> {
    let mut rows = vec![json!({ "role": "system", "content": "You are a coder." }), json!({ "role": "user", "content": "Fix the parser crash in src/parser.rs." })];
    for i in 0..6 {
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read_file", "arguments": json!({ "path": format!("src/m{i}.rs") }).to_string() } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": "x".repeat(2_000) }));
        rows.push(json!({ "role": "assistant", "content": format!("Read m{i}. Next I'll read m{}.", i + 1) }));
        rows.push(json!({ "role": "user", "content": format!("ok {i}") }));
    }
    rows.push(json!({ "role": "assistant", "content": "Parser fixed. Next I'll run the whole suite." }));
    rows.extend(last.iter().map(|t| json!({ "role": "user", "content": t })));
    rows
}

/// The mechanical (no summarizer) fold of `rows` under `profile`: its stored rows and
/// the handoff's §9 text.
fn mechanical_section9(rows: Vec<Value>, profile: &str) -> (Vec<Value>, String) {
    let cfg = Config::from_options(&json!({ "profile": profile, "contextWindow": 8_000, "preserveRecentTurns": 1 })).expect("config");
    let t = decode(Format::OpenaiChat, Value::Array(rows)).expect("decode");
    let mut job = Job::start(cfg, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
    let o = run_sync(&mut job, |_| panic!("no summarizer")).expect("job runs");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = summary_text(&o);
    let narrative = context_compactor::summarize::split_summary(&text).0.to_string();
    let s9 = narrative.split("[§9 Next step]\n").nth(1).unwrap_or("").trim().to_string();
    (common::out_messages(&o), s9)
}

#[test]
fn n5_s9_section9_points_at_a_newest_request_kept_after_the_summary() {
    let (out, s9) = mechanical_section9(coding_session(&["Now add a regression test for the lexer."]), "default");
    // the request is live, right after the summary
    let at = out.iter().position(|m| m["transcript_role"] == "compaction_summary").expect("a summary");
    assert_eq!(out[at + 1]["content"], "Now add a regression test for the lexer.", "{out:#?}");
    assert_eq!(
        s9,
        "Continue the newest request, below this summary. Before it, the folded work's next step was: Next I'll run the whole suite."
    );
    // not the stale pointer that reads as if the newest request were folded
    assert!(!s9.starts_with("Next I'll") && !s9.contains("continue the newest request."), "{s9}");
}

#[test]
fn n5_s6_section9_of_an_in_run_fold_names_the_runs_step_for_the_kept_request() {
    // one request whose run made many calls: the stage-2 fold folds its earlier rounds,
    // which came after the request, so their next step is the run's own
    let mut rows = vec![json!({ "role": "system", "content": "You are a coder." }), json!({ "role": "user", "content": "Read every module and report its size." })];
    for i in 0..8 {
        rows.push(json!({ "role": "assistant", "content": format!("Next I'll read m{i}."), "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read_file", "arguments": json!({ "path": format!("src/m{i}.rs") }).to_string() } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": "x".repeat(2_000) }));
    }
    let (out, s9) = mechanical_section9(rows, "default");
    let at = out.iter().position(|m| m["transcript_role"] == "compaction_summary").expect("a summary");
    assert_eq!(out[at + 1]["content"], "Read every module and report its size.", "the request is kept after the summary: {out:#?}");
    assert!(s9.ends_with("(for the newest request, below this summary)"), "{s9}");
    assert!(s9.starts_with("Next I'll read m"), "{s9}");
}

#[test]
fn n5_s9_section9_of_a_folded_newest_request_is_unchanged() {
    // kerkov folds the newest request too: the engine record quotes it, §9 goes on from it
    let mut rows = coding_session(&["Now add a regression test for the lexer."]);
    rows.push(json!({ "role": "assistant", "content": "On it. Next I'll write the lexer test." }));
    let (out, s9) = mechanical_section9(rows, "kerkov");
    assert!(!out.iter().any(|m| m["content"] == "Now add a regression test for the lexer."), "folded: {out:#?}");
    // the folded rows' own next step, with no pointer past the summary
    assert_eq!(s9, "Next I'll run the whole suite.");
}

#[test]
fn n5_responses_apply_patch_call_operations_name_created_and_deleted_files() {
    use context_compactor::summarize::Facts;
    let items = json!([
        { "type": "message", "role": "user", "content": "Split the config module." },
        { "type": "apply_patch_call", "call_id": "ap1", "status": "completed", "operation": { "type": "create_file", "path": "src/config/env.rs", "diff": "+pub fn env() {}\n" } },
        { "type": "apply_patch_call_output", "call_id": "ap1", "status": "completed", "output": "Created src/config/env.rs" },
        { "type": "apply_patch_call", "call_id": "ap2", "status": "completed", "operation": { "type": "delete_file", "path": "src/config_old.rs" } },
        { "type": "apply_patch_call_output", "call_id": "ap2", "status": "completed", "output": "Deleted" },
        { "type": "apply_patch_call", "call_id": "ap3", "status": "completed", "operation": { "type": "update_file", "path": "src/lib.rs", "diff": "@@\n-mod config_old;\n+mod config;\n" } },
        { "type": "apply_patch_call_output", "call_id": "ap3", "status": "completed", "output": "Updated" }
    ]);
    let t = decode(Format::OpenaiResponses, items).expect("decode");
    let rows: Vec<(usize, &context_compactor::transcript::Message)> = t.messages.iter().enumerate().collect();
    let f = Facts::read(&rows, &|_, _, _| None);
    let files: Vec<String> = f.files.iter().map(|u| format!("{}: {}", u.path, context_compactor::summarize::facts::describe_uses(u))).collect();
    assert_eq!(files, vec!["src/config/env.rs: created by apply_patch", "src/config_old.rs: deleted by apply_patch", "src/lib.rs: edited by apply_patch"]);
}

/// N-5 with untrusted input: a patch body of 60,000 header lines (most of them repeats)
/// names each distinct file once, in order (the dedupe is a set, not a rescan).
#[test]
fn n5_a_patch_of_many_headers_names_each_file_once() {
    let mut body = String::from("*** Begin Patch\n");
    for i in 0..60_000 {
        body.push_str(&format!("*** Update File: src/f{}.rs\n@@\n-a\n+b\n", i % 30_000));
    }
    body.push_str("*** End Patch\n");
    let found = context_compactor::summarize::facts::patch_paths(&body);
    assert_eq!(found.len(), 30_000);
    assert_eq!(found[0].0, "src/f0.rs");
    assert_eq!(found[29_999].0, "src/f29999.rs");
}

/// M-1 (tester finding 8): an Anthropic web fetch and a code execution server result
/// reach memory when folded: the fetched URL and its text, the run's stdout and return
/// code; a failed fetch names its error.
#[test]
fn m1_anthropic_web_fetch_and_code_execution_results_reach_memory_when_folded() {
    use context_compactor::memory::{recall, Index};
    let mut rows = vec![
        json!({ "role": "user", "content": "Read the changelog page and count its releases." }),
        json!({ "role": "assistant", "content": [
            { "type": "server_tool_use", "id": "srvtoolu_F1", "name": "web_fetch", "input": { "url": "https://example.com/changelog" } },
            { "type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_F1", "content": { "type": "web_fetch_result", "url": "https://example.com/changelog", "retrieved_at": "2026-11-30", "content": { "type": "document", "title": "Changelog", "source": { "type": "text", "media_type": "text/plain", "data": "Release 4.2 fixed the flaky uploader. Release 4.1 added dark mode." } } } },
            { "type": "server_tool_use", "id": "srvtoolu_C1", "name": "code_execution", "input": { "code": "print(len(releases))" } },
            { "type": "code_execution_tool_result", "tool_use_id": "srvtoolu_C1", "content": { "type": "code_execution_result", "stdout": "releases counted: 17\n", "stderr": "", "return_code": 0 } },
            { "type": "server_tool_use", "id": "srvtoolu_F2", "name": "web_fetch", "input": { "url": "https://example.com/private" } },
            { "type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_F2", "content": { "type": "web_fetch_tool_result_error", "error_code": "url_not_accessible" } },
            { "type": "text", "text": "The page lists 17 releases." }
        ] }),
    ];
    for i in 0..10 {
        rows.push(json!({ "role": "user", "content": format!("next question {i}") }));
        rows.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "w".repeat(2_500)) }));
    }
    let o = compact_hooked(Format::Anthropic, json!({ "system": "s", "messages": rows }), 16_000, "Answered questions.");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let records = o.memory.as_ref().expect("memory batch").records.clone();
    let of = |id: &str| records.iter().find(|r| r.call_id.as_deref() == Some(id)).map(|r| r.content.clone()).unwrap_or_default();
    assert!(of("srvtoolu_F1").contains("fetched https://example.com/changelog") && of("srvtoolu_F1").contains("Release 4.2 fixed the flaky uploader."), "{records:#?}");
    assert!(of("srvtoolu_C1").contains("releases counted: 17") && of("srvtoolu_C1").contains("return code 0"), "{records:#?}");
    assert_eq!(of("srvtoolu_F2"), "web_fetch failed: url_not_accessible");
    let mut index = Index::new();
    index.add(records).expect("index");
    let hits = recall(&index, "s", "what did the fetched changelog say about the uploader?", Some(3)).hits;
    assert!(hits.iter().any(|h| h.call_id.as_deref() == Some("srvtoolu_F1")), "{hits:#?}");
}

/// M-1 (tester finding 9): an OpenAI Responses `mcp_call` item's output and error reach
/// memory when folded, named by its server and tool.
#[test]
fn m1_responses_mcp_call_output_and_error_reach_memory_when_folded() {
    let mut items = vec![
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "What is open in Jira?" }] }),
        json!({ "type": "mcp_call", "id": "mcp_1", "server_label": "jira", "name": "search_issues", "arguments": "{\"jql\":\"status=open\"}", "output": "OPS-1: Prod outage in the billing service" }),
        json!({ "type": "mcp_call", "id": "mcp_2", "server_label": "jira", "name": "get_issue", "arguments": "{\"key\":\"OPS-2\"}", "error": "Jira 401: token expired" }),
        json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "One outage is open." }] }),
    ];
    for i in 0..10 {
        items.push(json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": format!("next {i}") }] }));
        items.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": format!("answer {i} {}", "w".repeat(2_500)) }] }));
    }
    let o = compact_hooked(Format::OpenaiResponses, json!(items), 16_000, "Answered.");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let records = o.memory.as_ref().expect("memory batch").records.clone();
    let of = |id: &str| records.iter().find(|r| r.call_id.as_deref() == Some(id)).map(|r| (r.tool_name.clone(), r.content.clone()));
    assert_eq!(of("mcp_1"), Some((Some("jira.search_issues".to_string()), "OPS-1: Prod outage in the billing service".to_string())), "{records:#?}");
    assert_eq!(of("mcp_2").map(|x| x.1), Some("mcp call failed: Jira 401: token expired".to_string()));
}
