//! Importers that take real logs as they are (N-2) and detection that refuses what it
//! cannot account for (N-3), on synthetic minimal reproductions (issue 12) and on the
//! real transcripts in `../shared/transcripts`. Also S-7 (injected context is typed),
//! Y-4 (a log's own summary is a level-1 summary row), F-5 (what an importer returns
//! pairs), T-4 (imports are deterministic).

mod common;

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions};
use context_compactor::formats::import::{import_any_with, import_with, sniff, ImportKind, ImportOptions, Imported, SubagentMode};
use context_compactor::formats::{self, decode, detect, detect_text, validate_pairing, Format};
use context_compactor::state::SessionState;
use context_compactor::transcript::{Role, TranscriptRole};
use context_compactor::trigger::Signals;
use context_compactor::ErrorCode;
use serde_json::{json, Value};

// ------------------------------------------------------------------ helpers

fn imp(kind: ImportKind, text: &str) -> Imported {
    imp_opts(kind, text, ImportOptions::default())
}

fn imp_opts(kind: ImportKind, text: &str, o: ImportOptions) -> Imported {
    let r = import_with(kind, text, &o).unwrap_or_else(|e| panic!("import {}: {e}", kind.name()));
    assert_valid(r.format, &r.document, kind.name());
    for s in &r.subagents {
        assert_valid(s.format, &s.document, "subagent");
    }
    r
}

fn assert_valid(format: Format, doc: &Value, what: &str) {
    let t = decode(format, doc.clone()).unwrap_or_else(|e| panic!("{what}: decode: {e}"));
    validate_pairing(&t).unwrap_or_else(|e| panic!("{what}: F-5 pairing: {e}"));
}

fn msgs(doc: &Value) -> Vec<Value> {
    doc.get("messages").or_else(|| doc.get("input")).and_then(Value::as_array).cloned().unwrap_or_default()
}

fn codes(r: &Imported) -> Vec<&'static str> {
    r.warnings.iter().map(|w| w.code).collect()
}

fn jsonl(rows: &[Value]) -> String {
    rows.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

/// All text of a message (string content or text blocks / parts).
fn text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(b) => b.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Forced compaction at an 8,000-token window in `profile`; panics unless the engine
/// finishes without a failure.
fn compact_ok(format: Format, doc: &Value, profile: &str, what: &str) -> &'static str {
    let t = decode(format, doc.clone()).unwrap_or_else(|e| panic!("{what}: decode: {e}"));
    let config = Config::from_options(&json!({ "profile": profile, "contextWindow": 8000 })).expect("config");
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true });
    let out = run_sync(&mut job, common::fake_summary).unwrap_or_else(|e| panic!("{what}: compact: {e}"));
    assert_ne!(out.status, "failed", "{what}: compaction failed: {}", out.reason);
    out.status
}

fn user(content: Value) -> Value {
    json!({ "type": "user", "session_id": "s", "parent_tool_use_id": null, "message": { "role": "user", "content": content } })
}

fn assistant(id: &str, content: Value) -> Value {
    json!({ "type": "assistant", "session_id": "s", "parent_tool_use_id": null, "message": { "id": id, "role": "assistant", "content": content } })
}

fn sub(mut row: Value, parent: &str) -> Value {
    row["parent_tool_use_id"] = json!(parent);
    row
}

fn tool_use(id: &str, name: &str) -> Value {
    json!({ "type": "tool_use", "id": id, "name": name, "input": { "prompt": "count tests" } })
}

fn tool_result(id: &str, body: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": body })
}

// ------------------------------------------------------------------ Claude Code: subagents

/// The issue's reproduction: a `Task` call, subagent rows with `parent_tool_use_id`,
/// then the main thread's result. Before N-2 compaction failed `unanswered_tool_call`.
fn task_log(subagent_rows: usize) -> String {
    let mut rows = vec![
        json!({ "type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": ["Task"] }),
        user(json!("Count the tests")),
        assistant("m1", json!([tool_use("task1", "Task")])),
    ];
    for k in 0..subagent_rows {
        rows.push(sub(user(json!(format!("sub prompt {k}"))), "task1"));
        rows.push(sub(assistant(&format!("s{k}"), json!([{ "type": "text", "text": format!("sub answer {k}") }])), "task1"));
    }
    rows.push(user(json!([tool_result("task1", "3 tests")])));
    rows.push(assistant("m2", json!([{ "type": "text", "text": "There are 3 tests." }])));
    jsonl(&rows)
}

#[test]
fn n2_stream_json_subagent_rows_never_enter_the_main_thread() {
    for n in [1, 3, 12] {
        let log = task_log(n);
        let r = imp(ImportKind::ClaudeCodeJsonl, &log);
        let main = msgs(&r.document);
        assert_eq!(main.len(), 4, "n={n}: user, Task call, result, answer");
        assert!(main.iter().all(|m| !text(m).contains("sub ")), "n={n}: no subagent text in the main thread");
        assert_eq!(r.subagents.len(), 1);
        let s = &r.subagents[0];
        assert_eq!(s.call_id.as_deref(), Some("task1"));
        assert_eq!(msgs(&s.document).len(), 2 * n, "n={n}: the run keeps its rows");
        assert_eq!(text(&msgs(&s.document)[0]), "sub prompt 0");
        for profile in ["kerkov", "meerkat", "default"] {
            compact_ok(Format::Anthropic, &r.document, profile, "task log");
        }
    }
}

#[test]
fn n2_subagents_drop_mode_counts_rows_in_one_warning() {
    let r = imp_opts(ImportKind::ClaudeCodeJsonl, &task_log(4), ImportOptions { subagents: SubagentMode::Drop });
    assert!(r.subagents.is_empty());
    let w: Vec<_> = r.warnings.iter().filter(|w| w.code == "subagent_dropped").collect();
    assert_eq!(w.len(), 1);
    assert!(w[0].message.contains("1 subagent run(s), 8 row(s)"), "{}", w[0].message);
    assert_eq!(w[0].line, Some(4));
    assert_eq!(ImportOptions::from_json(&json!({ "subagents": "drop" })).unwrap().subagents, SubagentMode::Drop);
    assert_eq!(ImportOptions::from_json(&json!({ "subagents": "keep" })).unwrap_err().code, ErrorCode::InvalidConfig);
    assert_eq!(ImportOptions::from_json(&json!({ "subagnets": "drop" })).unwrap_err().code, ErrorCode::InvalidConfig);
}

/// Two parallel Task calls whose subagent rows interleave: each run is its own
/// transcript, attached to its own call.
#[test]
fn n2_parallel_subagents_interleaved_are_separated() {
    let rows = vec![
        user(json!("Do both")),
        assistant("m1", json!([tool_use("tA", "Task")])),
        assistant("m1", json!([tool_use("tB", "Agent")])),
        sub(assistant("a1", json!([{ "type": "text", "text": "A1" }])), "tA"),
        sub(assistant("b1", json!([{ "type": "text", "text": "B1" }])), "tB"),
        sub(assistant("a2", json!([{ "type": "text", "text": "A2" }])), "tA"),
        user(json!([tool_result("tB", "b done")])),
        user(json!([tool_result("tA", "a done")])),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    assert_eq!(msgs(&r.document).len(), 3);
    let by: Vec<(Option<String>, usize)> = r.subagents.iter().map(|s| (s.call_id.clone(), msgs(&s.document).len())).collect();
    assert_eq!(by, [(Some("tA".into()), 2), (Some("tB".into()), 1)]);
}

/// Session logs: `sessionId`, `isSidechain: true` rows with `agentId`, attached through
/// the main result's `toolUseResult.agentId`; `auto` recognises the log.
#[test]
fn n2_session_log_sidechain_rows_attach_by_agent_id() {
    let row = |ty: &str, uuid: &str, side: bool, content: Value| {
        let mut v = json!({ "type": ty, "uuid": uuid, "sessionId": "s1", "isSidechain": side, "message": { "role": ty, "content": content } });
        if side {
            v["agentId"] = json!("a49cb76");
        }
        v
    };
    let mut call = row("assistant", "a1", false, json!([tool_use("toolu_9", "Task")]));
    call["message"]["id"] = json!("m1");
    let mut result = row("user", "u2", false, json!([tool_result("toolu_9", "found 2")]));
    result["toolUseResult"] = json!({ "status": "completed", "agentId": "a49cb76" });
    let rows = vec![
        json!({ "type": "summary", "summary": "Title", "leafUuid": "u2" }),
        row("user", "u1", false, json!("Find the bugs")),
        call,
        row("user", "x1", true, json!("Find the bugs (subagent prompt)")),
        row("assistant", "x2", true, json!([{ "type": "text", "text": "two bugs" }])),
        result,
    ];
    let text_log = jsonl(&rows);
    assert_eq!(sniff(&text_log), Some(ImportKind::ClaudeCodeJsonl), "sessionId is recognised, a leading summary row too");
    let r = import_any_with("auto", &text_log, &ImportOptions::default()).unwrap();
    assert_eq!(r.format, Format::Anthropic);
    assert_eq!(msgs(&r.document).len(), 3);
    assert_eq!(r.subagents.len(), 1);
    assert_eq!(r.subagents[0].call_id.as_deref(), Some("toolu_9"));
    assert_eq!(r.subagents[0].agent_id.as_deref(), Some("a49cb76"));
    assert!(codes(&r).is_empty(), "{:?}", r.warnings);
}

/// A subagent's own file (`subagents/agent-<id>.jsonl`, every row `isSidechain`) imports
/// as the transcript, with a warning saying so.
#[test]
fn n2_subagent_file_alone_imports_as_the_transcript() {
    let row = |ty: &str, uuid: &str, content: Value| json!({ "type": ty, "uuid": uuid, "sessionId": "s1", "isSidechain": true, "agentId": "a1", "message": { "role": ty, "content": content } });
    let rows = [row("user", "x1", json!("Look for bugs")), row("assistant", "x2", json!([{ "type": "text", "text": "none" }]))];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    assert_eq!(msgs(&r.document).len(), 2);
    assert!(r.subagents.is_empty());
    assert_eq!(codes(&r), ["subagent_file"]);
}

/// Session logs are a tree by `parentUuid`: a rewind leaves the abandoned branch in the
/// file; only the chain of the newest row is imported. Split assistant rows whose
/// parent links skip each other, and off-chain bookkeeping rows, are not treated as dead.
#[test]
fn n2_session_log_rewound_branch_is_skipped() {
    let row = |ty: &str, uuid: &str, parent: Option<&str>, content: Value| json!({ "type": ty, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "message": { "role": ty, "content": content } });
    let mut a1 = row("assistant", "a1", Some("u1"), json!([tool_use("t1", "Read")]));
    a1["message"]["id"] = json!("m1");
    let mut a1b = row("assistant", "a1b", Some("a1"), json!([tool_use("t2", "Read")]));
    a1b["message"]["id"] = json!("m1");
    let rows = vec![
        row("user", "u1", None, json!("Rename foo")),
        a1,
        a1b,
        // both results hang off the first split row (not the chain's a1b)
        row("user", "r1", Some("a1"), json!([tool_result("t1", "x"), tool_result("t2", "y")])),
        json!({ "type": "progress", "uuid": "p1", "parentUuid": "r1", "sessionId": "s1", "data": {} }),
        row("user", "u2", Some("r1"), json!("old prompt (rewound)")),
        row("assistant", "a2", Some("u2"), json!([{ "type": "text", "text": "old answer" }])),
        row("user", "u3", Some("r1"), json!("edited prompt")),
        row("assistant", "a3", Some("u3"), json!([{ "type": "text", "text": "new answer" }])),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let texts: Vec<String> = msgs(&r.document).iter().map(text).collect();
    assert_eq!(texts.len(), 4, "user, both calls, results + the edited prompt, answer: {texts:?}");
    assert!(!texts.iter().any(|t| t.contains("old")), "{texts:?}");
    assert_eq!(texts[2], "edited prompt");
    assert_eq!(msgs(&r.document)[1]["content"].as_array().unwrap().len(), 2, "the split row off the chain is kept");
    let w = r.warnings.iter().find(|w| w.code == "rewound_branch").expect("reported");
    assert_eq!((w.line, w.message.starts_with("2 conversation row(s)")), (Some(6), true), "{}", w.message);
}

/// Inline sidechain rows without `agentId` (headless sessions): the run is known by its
/// own session id, which the main result's `toolUseResult.agentId` names.
#[test]
fn n2_inline_sidechain_without_agent_id_attaches_by_its_session_id() {
    let row = |ty: &str, sid: &str, side: bool, content: Value| json!({ "type": ty, "uuid": format!("{sid}-{}", content.to_string().len()), "sessionId": sid, "isSidechain": side, "message": { "role": ty, "id": format!("{sid}{ty}"), "content": content } });
    let mut result = row("user", "main", false, json!([tool_result("toolu_t", "found")]));
    result["toolUseResult"] = json!({ "status": "completed", "agentId": "sub-7" });
    let rows = vec![
        row("user", "main", false, json!("Explore")),
        row("assistant", "main", false, json!([tool_use("toolu_t", "Task")])),
        row("user", "sub-7", true, json!("Explore the structure")),
        row("assistant", "sub-7", true, json!([{ "type": "text", "text": "src, tests" }])),
        result,
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    assert_eq!(msgs(&r.document).len(), 3);
    assert_eq!(r.subagents.len(), 1);
    assert_eq!((r.subagents[0].call_id.as_deref(), r.subagents[0].agent_id.as_deref()), (Some("toolu_t"), Some("sub-7")));
    assert!(codes(&r).is_empty(), "{:?}", r.warnings);
}

// ------------------------------------------------------------------ Claude Code: typed rows

/// S-7: `isMeta` (session log) and `isSynthetic` (stream-json) rows, and harness tags,
/// are injected context, never a user request; the person's text stays conversational.
#[test]
fn n2_s7_meta_and_synthetic_rows_are_injected_context() {
    let mut meta = user(json!([{ "type": "text", "text": "Base directory for this skill: /skills/x" }]));
    meta["isSynthetic"] = json!(true);
    let mut meta2 = user(json!("<command-message>init is running</command-message>"));
    meta2["isMeta"] = json!(true);
    let rows = vec![
        user(json!("Rename foo")),
        assistant("m1", json!([tool_use("sk", "Skill")])),
        user(json!([tool_result("sk", "Launching skill")])),
        meta,
        assistant("m2", json!([{ "type": "text", "text": "ok" }])),
        meta2,
        user(json!("<system-reminder>Todo list is empty.</system-reminder>")),
        user(json!("and rename baz too")),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    let t = decode(Format::Anthropic, r.document.clone()).unwrap();
    let roles: Vec<(String, TranscriptRole)> = t.messages.iter().zip(&m).map(|(x, v)| (text(v), x.provenance.transcript_role)).collect();
    assert_eq!(roles[0], ("Rename foo".into(), TranscriptRole::Conversational));
    assert_eq!(m[2]["content"][0]["content"], "Launching skill", "the result message");
    assert_eq!(roles[3], ("Base directory for this skill: /skills/x".into(), TranscriptRole::InjectedContext));
    assert_eq!(roles[5].1, TranscriptRole::InjectedContext, "meta row and the reminder merge into one injected message");
    assert!(roles[5].0.contains("<system-reminder>") && roles[5].0.contains("<command-message>"));
    assert_eq!(roles[6], ("and rename baz too".into(), TranscriptRole::Conversational));
    assert_eq!(roles.len(), 7);
}

/// Y-4: a `compact_boundary` row then the `isCompactSummary` row start the transcript
/// from Claude Code's own summary, a level-1 summary row; earlier rows are counted.
#[test]
fn n2_y4_compact_boundary_starts_from_the_logs_summary() {
    for before in [2usize, 9] {
        let mut rows = Vec::new();
        for k in 0..before {
            rows.push(json!({ "type": "user", "uuid": format!("old{k}"), "sessionId": "s1", "message": { "role": "user", "content": format!("old request {k}") } }));
        }
        rows.push(json!({ "type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": null, "sessionId": "s1", "compactMetadata": { "trigger": "auto", "preTokens": 155000 } }));
        rows.push(json!({ "type": "user", "uuid": "u4", "sessionId": "s1", "isCompactSummary": true, "isVisibleInTranscriptOnly": true, "message": { "role": "user", "content": "This session is being continued from a previous conversation... Summary: renaming foo." } }));
        rows.push(json!({ "type": "assistant", "uuid": "a9", "sessionId": "s1", "message": { "id": "m9", "role": "assistant", "content": [{ "type": "text", "text": "Continuing." }] } }));
        let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
        let t = decode(Format::Anthropic, r.document.clone()).unwrap();
        assert_eq!(t.messages.len(), 2, "nothing before the boundary");
        assert_eq!(t.messages[0].provenance.summary_level, Some(1));
        assert!(t.messages[0].is_summary());
        let w = r.warnings.iter().find(|w| w.code == "compact_boundary").expect("boundary warning");
        assert_eq!(w.line, Some(before + 1));
        assert!(w.message.contains(&format!("the {before} earlier")), "{}", w.message);
        compact_ok(Format::Anthropic, &r.document, "default", "compacted log");
    }
    // stream-json: the summary row has no flag, its opening text identifies it
    let rows = vec![
        user(json!("old")),
        json!({ "type": "system", "subtype": "compact_boundary", "session_id": "s", "compact_metadata": { "trigger": "manual", "pre_tokens": 9 } }),
        user(json!("This session is being continued from a previous conversation that ran out of context. Summary: x")),
        user(json!("next request")),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let t = decode(Format::Anthropic, r.document.clone()).unwrap();
    assert_eq!(t.messages.len(), 2);
    assert_eq!(t.messages[0].provenance.summary_level, Some(1));
    assert_eq!(t.messages[1].provenance.summary_level, None);
}

/// Attachments are kept (hook context as injected context, queued commands as the
/// person's text) or reported with a count; never silently dropped.
#[test]
fn n2_attachment_rows_are_kept_or_reported() {
    let att = |a: Value| json!({ "type": "attachment", "sessionId": "s1", "attachment": a });
    let rows = vec![
        json!({ "type": "user", "sessionId": "s1", "message": { "role": "user", "content": "Fix lint" } }),
        att(json!({ "type": "hook_success", "hookEvent": "PostToolUse", "content": "lint ok", "exitCode": 0 })),
        att(json!({ "type": "hook_success", "hookEvent": "PostToolUse", "content": "lint ok", "exitCode": 0 })),
        att(json!({ "type": "hook_additional_context", "hookName": "SessionStart", "content": ["Repo uses tabs"] })),
        att(json!({ "type": "queued_command", "prompt": "also update the docs" })),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let t = decode(Format::Anthropic, r.document.clone()).unwrap();
    let m = msgs(&r.document);
    assert_eq!(m.len(), 3);
    assert_eq!(text(&m[1]), "[hook_additional_context: SessionStart]\nRepo uses tabs");
    assert_eq!(t.messages[1].provenance.transcript_role, TranscriptRole::InjectedContext);
    assert_eq!(text(&m[2]), "also update the docs");
    assert_eq!(t.messages[2].provenance.transcript_role, TranscriptRole::Conversational);
    let w = r.warnings.iter().find(|w| w.code == "attachment_not_imported").expect("reported");
    assert!(w.message.starts_with("2 attachment row(s) of type \"hook_success\""), "{}", w.message);
    assert_eq!(w.line, Some(2));
}

/// Split assistant messages (same `message.id`) merge; usage is read once per id.
#[test]
fn n2_split_assistant_rows_merge_and_usage_counts_once() {
    let with_usage = |mut r: Value, out: u64| {
        r["message"]["usage"] = json!({ "input_tokens": 3, "cache_read_input_tokens": 900, "output_tokens": out });
        r
    };
    let rows = vec![
        user(json!("go")),
        with_usage(assistant("m1", json!([{ "type": "thinking", "thinking": "Read first.", "signature": "c2ln" }])), 1),
        with_usage(assistant("m1", json!([tool_use("t1", "Read")])), 40),
        user(json!([tool_result("t1", "foo = 1")])),
        with_usage(assistant("m2", json!([{ "type": "text", "text": "done" }])), 7),
        with_usage(assistant("m2", json!([{ "type": "text", "text": "really" }])), 5),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    assert_eq!(m.len(), 4);
    assert_eq!(m[1]["content"].as_array().unwrap().len(), 2);
    assert_eq!(m[3]["content"].as_array().unwrap().len(), 2);
    let u = r.usage.expect("usage read");
    assert_eq!((u.input_tokens, u.output_tokens), (903, 7), "last message, largest output_tokens of its id, caches counted in input");
}

/// A shell banner before the JSON, CRLF line ends and U+2028 / U+2029 inside a line.
#[test]
fn n2_banner_crlf_and_unicode_line_separators_do_not_break_the_log() {
    let rows = [user(json!("first\u{2028}line\u{2029}para")), assistant("m1", json!([{ "type": "text", "text": "ok" }]))];
    let log = format!("bash: no job control in this shell\r\n{}\r\n{}\r\n", rows[0], rows[1]);
    assert_eq!(sniff(&log), Some(ImportKind::ClaudeCodeJsonl));
    let r = imp(ImportKind::ClaudeCodeJsonl, &log);
    let m = msgs(&r.document);
    assert_eq!(m.len(), 2);
    assert_eq!(text(&m[0]), "first\u{2028}line\u{2029}para");
    assert_eq!(codes(&r), ["not_json"]);
    assert_eq!(r.warnings[0].line, Some(1));
}

/// Bad lines of every kind the issue names: each skipped or repaired with a warning
/// naming its line; the document still validates and compacts.
#[test]
fn n2_claude_bad_lines_are_skipped_with_their_line_and_reason() {
    let rows = [
        user(json!("Start")).to_string(),
        assistant("m1", json!([tool_use("t1", "Bash")])).to_string(),
        r#"{"session_id":"s","message":{"role":"user","content":"no type"}}"#.to_string(),
        r#"{"type":"user","session_id":"s","message":{"role":"user","content":null}}"#.to_string(),
        r#"{"type":"user","session_id":"s","message":{"role":"user","contnet":"typo"}}"#.to_string(),
        user(json!([tool_result("t1", "out")])).to_string(),
        r#"{"type":"assistant","session_id":"s","message":{"id":"m2","content":[{"type":"text","te"#.to_string(),
        format!("{}{}", assistant("m3", json!([{ "type": "text", "text": "a" }])), assistant("m4", json!([{ "type": "text", "text": "b" }]))),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &rows.join("\n"));
    let got: Vec<(Option<usize>, &str)> = r.warnings.iter().map(|w| (w.line, w.code)).collect();
    assert_eq!(got, [(Some(3), "missing_type"), (Some(4), "bad_content"), (Some(5), "bad_content"), (Some(7), "torn_line"), (Some(8), "fused_line")]);
    assert!(r.warnings[2].message.contains("contnet"), "the message names the keys found: {}", r.warnings[2].message);
    assert_eq!(msgs(&r.document).len(), 5, "user, call, result, and the two fused rows (m3, m4) as two messages");
}

/// F-5 repairs: a repeated result row, a lost result row, a repeated call row.
#[test]
fn n2_f5_pairing_repairs_are_listed() {
    let call = assistant("m1", json!([tool_use("t1", "Bash"), tool_use("t2", "Bash")]));
    let res1 = user(json!([tool_result("t1", "one")]));
    let rows = vec![user(json!("go")), call.clone(), call, res1.clone(), res1, assistant("m2", json!([{ "type": "text", "text": "end" }]))];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let c = codes(&r);
    assert!(c.contains(&"duplicate_call_id"), "{c:?}");
    assert!(c.contains(&"orphan_result") || c.iter().filter(|c| **c == "unanswered_call").count() == 1, "{c:?}");
    assert!(c.contains(&"unanswered_call"), "t2 has no result: {c:?}");
    let m = msgs(&r.document);
    assert_eq!(m[2]["content"].as_array().unwrap().len(), 2, "one result each for t1 and t2");
    assert_eq!(m[2]["content"][1]["is_error"], true);
}

/// F-5, S-7: when a call's result row is lost and an injected row follows, the synthetic
/// result gets its own message; the injected message stays injected and result-free.
#[test]
fn n2_f5_lost_result_before_injected_row_gets_its_own_message() {
    let mut meta = user(json!("<system-reminder>note</system-reminder>"));
    meta["isMeta"] = json!(true);
    let rows = vec![user(json!("go")), assistant("m1", json!([tool_use("t1", "Bash")])), meta, user(json!("next"))];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    assert_eq!(m.len(), 5, "{m:?}");
    assert_eq!(m[2]["content"][0]["tool_use_id"], "t1");
    assert_eq!(m[2]["content"][0]["is_error"], true);
    assert!(m[2].get("transcript_role").is_none());
    assert_eq!(m[3]["transcript_role"], "injected_context");
    assert_eq!(m[3]["content"].as_array().unwrap().len(), 1);
    assert_eq!(codes(&r), ["unanswered_call"]);
    assert_eq!(r.warnings[0].line, Some(2), "the warning names the call's line");
}

// ------------------------------------------------------------------ Codex

fn cx(ty: &str, payload: Value) -> Value {
    json!({ "timestamp": "2025-09-01T10:00:00Z", "type": ty, "payload": payload })
}

fn cx_msg(role: &str, part: &str, text: &str) -> Value {
    cx("response_item", json!({ "type": "message", "role": role, "content": [{ "type": part, "text": text }] }))
}

fn codex_log(turns: usize) -> Vec<Value> {
    let mut rows = vec![
        cx("session_meta", json!({ "id": "t-1", "cwd": "/w", "originator": "codex_cli_rs", "cli_version": "0.40.0", "instructions": "Be careful." })),
        cx_msg("developer", "input_text", "sandbox: workspace-write"),
        cx_msg("user", "input_text", "<environment_context><cwd>/w</cwd></environment_context>"),
        cx("turn_context", json!({ "cwd": "/w", "model": "gpt-5" })),
    ];
    for k in 0..turns {
        rows.push(cx_msg("user", "input_text", &format!("Run the tests {k}")));
        rows.push(cx("event_msg", json!({ "type": "user_message", "message": format!("Run the tests {k}"), "images": [] })));
        rows.push(cx("response_item", json!({ "type": "reasoning", "summary": [{ "type": "summary_text", "text": "Run pytest." }], "content": null, "encrypted_content": "gAAA" })));
        rows.push(cx("response_item", json!({ "type": "function_call", "name": "shell", "arguments": "{\"command\":[\"pytest\"]}", "call_id": format!("call_{k}") })));
        rows.push(cx("response_item", json!({ "type": "function_call_output", "call_id": format!("call_{k}"), "output": "{\"output\":\"2 passed\",\"metadata\":{\"exit_code\":0}}" })));
        rows.push(cx_msg("assistant", "output_text", &format!("Tests pass ({k}).")));
        rows.push(cx("event_msg", json!({ "type": "agent_message", "message": format!("Tests pass ({k}).") })));
        rows.push(cx("event_msg", json!({ "type": "token_count", "info": { "total_token_usage": { "input_tokens": 5000 * (k + 1), "output_tokens": 120 }, "last_token_usage": { "input_tokens": 5000 + k, "cached_input_tokens": 4000, "output_tokens": 120, "total_tokens": 5120 + k }, "model_context_window": 272000 } })));
    }
    rows
}

#[test]
fn n2_codex_rollout_imports_as_responses_without_mirrors() {
    for turns in [1, 4] {
        let log = jsonl(&codex_log(turns));
        assert_eq!(sniff(&log), Some(ImportKind::CodexRollout));
        let r = imp(ImportKind::CodexRollout, &log);
        assert_eq!(r.format, Format::OpenaiResponses);
        assert_eq!(r.document["instructions"], "Be careful.");
        let items = msgs(&r.document);
        assert_eq!(items.len(), 2 + 5 * turns, "event_msg mirrors are not imported");
        let users: Vec<&Value> = items.iter().filter(|i| i["role"] == "user" && i.get("transcript_role").is_none()).collect();
        assert_eq!(users.len(), turns, "one user request per turn, no duplicates");
        assert_eq!(items[0]["transcript_role"], "injected_context");
        assert_eq!(items[1]["transcript_role"], "injected_context", "developer item");
        let u = r.usage.expect("token_count usage");
        assert_eq!((u.input_tokens, u.total_tokens), (5000 + turns as u64 - 1, 5120 + turns as u64 - 1), "the last token_count's last_token_usage");
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        compact_ok(Format::OpenaiResponses, &r.document, "default", "codex");
    }
}

#[test]
fn n2_y4_codex_compacted_line_starts_from_the_summary() {
    let mut rows = codex_log(2);
    rows.push(cx("compacted", json!({ "message": "Summary: tests pass.", "replacement_history": [
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Run the tests 1" }] },
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Summary: tests pass." }] }
    ] })));
    rows.push(cx_msg("user", "input_text", "Now lint"));
    let r = imp(ImportKind::CodexRollout, &jsonl(&rows));
    let items = msgs(&r.document);
    assert_eq!(items.len(), 3);
    assert_eq!(items[1]["summary_level"], 1);
    assert!(codes(&r).contains(&"compact_boundary"));
    // without replacement_history: the summary alone starts the transcript
    let mut rows = codex_log(1);
    rows.push(cx("compacted", json!({ "message": "Summary: ok." })));
    let r = imp(ImportKind::CodexRollout, &jsonl(&rows));
    let items = msgs(&r.document);
    assert_eq!(items.len(), 1);
    let t = decode(Format::OpenaiResponses, r.document.clone()).unwrap();
    assert_eq!(t.messages[0].provenance.summary_level, Some(1));
}

#[test]
fn n2_codex_legacy_lines_unknown_types_and_bad_lines() {
    let rows = [
        json!({ "id": "t-0", "timestamp": "2025-05-01", "instructions": "Old." }).to_string(),
        json!({ "record_type": "state" }).to_string(),
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "hi" }] }).to_string(),
        json!({ "type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1" }).to_string(),
        json!({ "type": "world_state", "payload": {} }).to_string(),
        "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"out".to_string(),
        json!({ "type": "message", "role": "assistant", "content": null }).to_string(),
        json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "done" }] }).to_string(),
    ];
    let log = rows.join("\n");
    assert_eq!(sniff(&log), Some(ImportKind::CodexRollout), "legacy header then bare items");
    let r = imp(ImportKind::CodexRollout, &log);
    assert_eq!(r.document["instructions"], "Old.");
    let got: Vec<(Option<usize>, &str)> = r.warnings.iter().map(|w| (w.line, w.code)).collect();
    assert_eq!(got, [(Some(4), "unanswered_call"), (Some(5), "unknown_line_type"), (Some(6), "torn_line"), (Some(7), "bad_content")], "in line order");
    let items = msgs(&r.document);
    assert_eq!(items.len(), 4, "hi, call, synthetic output, done");
    assert_eq!(items[2]["type"], "function_call_output");
}

// ------------------------------------------------------------------ Glaive JSONL

#[test]
fn n2_glaive_jsonl_one_conversation_a_line_keeps_system_turns() {
    let conv = |k: usize| {
        json!({ "system": format!("You are helper {k}."), "conversations": [
            { "from": "human", "value": format!("q{k}") },
            { "from": "function_call", "value": "{\"name\":\"f\",\"arguments\":{}}" },
            { "from": "observation", "value": "{\"ok\":true}" },
            { "from": "system", "value": "mid-conversation notice" },
            { "from": "gpt", "value": format!("a{k}") }
        ] })
    };
    for n in [1, 3] {
        let mut lines: Vec<String> = (0..n).map(|k| conv(k).to_string()).collect();
        lines.insert(1, "{\"conversations\": [{\"from\": \"human\", \"val".into());
        let text = lines.join("\n");
        assert_eq!(sniff(&text), Some(ImportKind::Glaive));
        let r = imp(ImportKind::Glaive, &text);
        let m = msgs(&r.document);
        assert_eq!(m.len(), 6 * n);
        assert_eq!(m.iter().filter(|m| m["role"] == "system").count(), 2 * n, "both system turns kept");
        assert_eq!(m[0], json!({ "role": "system", "content": "You are helper 0." }));
        assert_eq!(r.warnings.iter().map(|w| (w.line, w.code)).collect::<Vec<_>>(), [(Some(2), "torn_line")]);
    }
}

// ------------------------------------------------------------------ SWE-agent

/// Thought/action trajectories (no native tool calls): each observation answers the
/// action before it as a tool result; the first task stays the user request; an
/// observation with no action before it is injected context.
#[test]
fn n2_swe_agent_thought_action_observations_are_tool_results() {
    let traj = json!({ "history": [
        { "role": "system", "content": "SETTING: agent" },
        { "role": "user", "content": "Fix issue 12", "message_type": "observation" },
        { "role": "assistant", "content": "List.\n```\nls\n```", "action": "ls\n", "thought": "List." },
        { "role": "user", "content": "a.py\nb.py", "message_type": "observation" },
        { "role": "user", "content": "(extra environment notice)" },
        { "role": "assistant", "content": "Open.", "action": "open a.py" },
        { "role": "user", "content": "[File: a.py]" },
        { "role": "user", "content": "demo", "is_demo": true }
    ] });
    let r = imp(ImportKind::SweAgentTraj, &traj.to_string());
    let m = msgs(&r.document);
    assert_eq!(m[1], json!({ "role": "user", "content": "Fix issue 12" }));
    assert_eq!(m[2]["tool_calls"][0]["id"], "swe_2");
    assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "ls");
    assert_eq!(m[3]["role"], "tool");
    assert_eq!(m[3]["tool_call_id"], "swe_2");
    assert_eq!(m[4]["transcript_role"], "injected_context");
    assert_eq!(m[5]["tool_calls"][0]["function"]["name"], "open");
    assert_eq!(m[6]["tool_call_id"], "swe_5");
    assert_eq!(m[7]["transcript_role"], "injected_context");
    assert_eq!(codes(&r), ["orphan_observation"]);
}

// ------------------------------------------------------------------ detection (N-3)

#[test]
fn n3_detection_refuses_foreign_shapes_with_a_hint() {
    let cases: Vec<(Value, &str)> = vec![
        (json!([{ "type": "human", "data": { "content": "Weather?", "type": "human" } }, { "type": "ai", "data": { "content": "", "tool_calls": [] } }]), "LangChain"),
        (json!([{ "lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"], "kwargs": { "content": "x" } }]), "LangChain"),
        (json!(codex_log(1)), "codex-rollout"),
        (json!([{ "object": "trace.span", "id": "span_1", "trace_id": "t", "span_data": { "type": "function" } }]), "Agents SDK"),
        (json!({ "object": "trace", "id": "trace_1", "workflow_name": "w" }), "Agents SDK"),
        (json!({ "contents": 5 }), "contents"),
        (json!([{ "id": "u0", "role": "user", "parts": [{ "type": "text", "text": "never use tabs" }] }, { "id": "a0", "role": "assistant", "parts": [{ "type": "step-start" }, { "type": "text", "text": "ok" }] }]), "convertToModelMessages"),
        (json!([{ "role": "user", "content": "hi" }, { "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}" }, { "type": "banana" }]), "does not fit"),
    ];
    for (doc, hint) in cases {
        let text = doc.to_string();
        for err in [detect(&doc).unwrap_err(), detect_text(&text).unwrap_err()] {
            assert_eq!(err.code, ErrorCode::UnknownFormat, "{text}");
            assert!(err.message.contains(hint), "{hint}: {}", err.message);
        }
        let e = import_any_with("auto", &text, &ImportOptions::default()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownFormat, "auto import of {text}");
    }
    assert!(detect(&json!([{ "type": "human", "data": {} }])).unwrap_err().message.contains("langchain integration"));
    // N-3: UI messages given as ai-sdk say what they are, not only that `content` is missing
    let ui = json!([{ "id": "u0", "role": "user", "parts": [{ "type": "text", "text": "never use tabs" }] }]);
    let e = context_compactor::formats::decode(Format::AiSdk, ui).unwrap_err();
    assert!(e.message.contains("convertToModelMessages") && e.message.contains("message 0"), "{}", e.message);
    assert_eq!(detect(&json!([{ "role": "user", "parts": [{ "text": "hi" }] }])).unwrap(), Format::Gemini);
    // the shapes that are provider documents still detect
    assert_eq!(detect(&json!({ "contents": [{ "role": "user", "parts": [{ "text": "hi" }] }] })).unwrap(), Format::Gemini);
    assert_eq!(detect(&json!([{ "role": "user", "content": "hi" }, { "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}" }])).unwrap(), Format::OpenaiResponses);
}

// ------------------------------------------------------------------ real logs

fn shared_files() -> Vec<(String, String)> {
    let Some((dir, files)) = common::shared_transcript_files() else { return Vec::new() };
    files.into_iter().map(|p| (p.strip_prefix(&dir).unwrap().display().to_string(), std::fs::read_to_string(&p).unwrap())).collect()
}

/// The text of every environment output of a source log (SWE-agent: each history
/// entry after the first user task that answers an action; Glaive: observations).
fn environment_outputs(kind: ImportKind, src: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(src).unwrap_or(Value::Null);
    let str_of = |c: &Value| match c {
        Value::String(s) => s.clone(),
        Value::Array(p) => p.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    };
    match kind {
        ImportKind::SweAgentTraj => {
            let h = v["history"].as_array().cloned().unwrap_or_default();
            let first_user = h.iter().position(|e| e["role"] == "user");
            h.iter().enumerate().filter(|(i, e)| Some(*i) != first_user && (e["role"] == "user" || e["role"] == "tool")).map(|(_, e)| str_of(&e["content"])).collect()
        }
        ImportKind::Glaive => v.as_array().into_iter().flatten().filter_map(|c| c["conversations"].as_array()).flatten().filter(|t| t["from"] == "observation").filter_map(|t| t["value"].as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// N-2 over every shared transcript: the document validates, no user-request row is
/// environment output (no row is a bare tool result typed as a request), no subagent
/// row is in the main thread.
#[test]
fn n2_every_shared_transcript_imports_with_typed_rows() {
    let files = shared_files();
    for (rel, src) in &files {
        let kind = sniff(src).unwrap_or_else(|| panic!("{rel}: sniff"));
        let r = imp(kind, src);
        let t = decode(r.format, r.document.clone()).unwrap();
        let raw = msgs(&r.document);
        let env = environment_outputs(kind, src);
        let mut requests = 0;
        for (m, v) in t.messages.iter().zip(&raw) {
            let request = m.role == Role::User && m.provenance.transcript_role == TranscriptRole::Conversational && !m.is_summary() && !m.has_results();
            if request {
                requests += 1;
                let t = text(v);
                assert!(!env.contains(&t), "{rel}: environment output typed as a user request: {}", &t.chars().take(120).collect::<String>());
            }
        }
        if kind == ImportKind::SweAgentTraj {
            assert_eq!(requests, 1, "{rel}: the task is the only user request");
        }
        if kind == ImportKind::ClaudeCodeJsonl {
            let side: Vec<String> = src
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v["parent_tool_use_id"].is_string() || v["isSidechain"] == true)
                .map(|v| text(&v["message"]))
                .filter(|t| !t.is_empty())
                .collect();
            let main_texts: Vec<String> = raw.iter().map(text).collect();
            assert!(!side.iter().any(|t| main_texts.iter().any(|m| m.contains(t.as_str()))), "{rel}: a sidechain row's text is in the main thread");
            let sub_rows: usize = r.subagents.iter().map(|s| msgs(&s.document).len()).sum();
            assert!(side.is_empty() || sub_rows > 0, "{rel}: sidechain rows went nowhere");
        }
        println!("{rel}: {} rows, {requests} user requests, {} warnings", raw.len(), r.warnings.len());
    }
}

/// A tiny deterministic generator (xorshift) for the line-damage variations.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// N-2, F-5 variation: real JSON Lines logs (the shared Claude Code logs, the synthetic
/// Codex rollout and the Glaive JSONL form) with a random line dropped or repeated:
/// the import succeeds with the document valid, and `compact` succeeds.
#[test]
fn n2_f5_real_logs_with_a_line_dropped_or_repeated_still_import_and_compact() {
    let mut logs: Vec<(String, ImportKind, String)> = shared_files()
        .into_iter()
        .filter(|(rel, _)| rel.starts_with("claude-code/"))
        .map(|(rel, text)| (rel, ImportKind::ClaudeCodeJsonl, text))
        .collect();
    logs.push(("codex synthetic".into(), ImportKind::CodexRollout, jsonl(&codex_log(6))));
    let glaive: Vec<String> = (0..4)
        .map(|k| json!({ "conversations": [{ "from": "human", "value": format!("q{k}") }, { "from": "function_call", "value": "{\"name\":\"f\",\"arguments\":{}}" }, { "from": "observation", "value": "1" }, { "from": "gpt", "value": "a" }] }).to_string())
        .collect();
    logs.push(("glaive jsonl".into(), ImportKind::Glaive, glaive.join("\n")));
    logs.push(("task log".into(), ImportKind::ClaudeCodeJsonl, task_log(3)));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut warned = 0;
    for (rel, kind, text) in &logs {
        let lines: Vec<&str> = text.split('\n').collect();
        for trial in 0..12 {
            let at = rng.next(lines.len());
            let mut damaged: Vec<&str> = lines.clone();
            if trial % 2 == 0 {
                damaged.remove(at);
            } else {
                damaged.insert(at, lines[at]);
            }
            let what = format!("{rel} trial {trial} ({} line {})", if trial % 2 == 0 { "dropped" } else { "repeated" }, at + 1);
            let r = match import_with(*kind, &damaged.join("\n"), &ImportOptions::default()) {
                Ok(r) => r,
                Err(e) => panic!("{what}: import failed: {e}"),
            };
            assert_valid(r.format, &r.document, &what);
            warned += usize::from(!r.warnings.is_empty());
            compact_ok(r.format, &r.document, ["kerkov", "meerkat", "default"][trial % 3], &what);
        }
    }
    assert!(warned > 0, "some damage is reported");
    // SWE-agent (one JSON object): a history entry dropped or repeated
    for (rel, src) in shared_files().into_iter().filter(|(rel, _)| rel.starts_with("swe-agent/")) {
        let v: Value = serde_json::from_str(&src).unwrap();
        let h = v["history"].as_array().unwrap().clone();
        for trial in 0..6 {
            let at = 1 + rng.next(h.len() - 1);
            let mut d = h.clone();
            if trial % 2 == 0 {
                d.remove(at);
            } else {
                d.insert(at, h[at].clone());
            }
            let mut doc = v.clone();
            doc["history"] = Value::Array(d);
            let what = format!("{rel} trial {trial} (entry {at})");
            let r = import_with(ImportKind::SweAgentTraj, &doc.to_string(), &ImportOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_valid(r.format, &r.document, &what);
            compact_ok(r.format, &r.document, ["kerkov", "meerkat", "default"][trial % 3], &what);
        }
    }
}

/// T-4: imports are deterministic (same text, same result and warnings).
#[test]
fn t4_imports_are_deterministic() {
    let log = task_log(2);
    assert_eq!(imp(ImportKind::ClaudeCodeJsonl, &log), imp(ImportKind::ClaudeCodeJsonl, &log));
    let _ = formats::encode; // the module is used by the other tests
}

// ------------------------------------------------------------------ issue 12 fixes

/// N-1/N-2 (issue 12): a string row opening with a `<system-reminder>` then the
/// person's sentence is split: the reminder is injected context, the sentence stays
/// conversational user text (so it is indexed and kept).
#[test]
fn n2_reminder_then_person_text_in_one_string_keeps_the_persons_text() {
    let rows = vec![
        user(json!("Rename foo")),
        assistant("m1", json!([{ "type": "text", "text": "ok" }])),
        user(json!("<system-reminder>The TodoWrite list is empty.</system-reminder>\nAlso: never run migrations against prod-db-7.")),
        assistant("m2", json!([{ "type": "text", "text": "noted" }])),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    let t = decode(Format::Anthropic, r.document.clone()).unwrap();
    let roles: Vec<(String, TranscriptRole)> = t.messages.iter().zip(&m).map(|(x, v)| (text(v), x.provenance.transcript_role)).collect();
    assert_eq!(roles[2], ("<system-reminder>The TodoWrite list is empty.</system-reminder>".into(), TranscriptRole::InjectedContext));
    assert_eq!(roles[3], ("Also: never run migrations against prod-db-7.".into(), TranscriptRole::Conversational));
    assert_eq!(roles.len(), 5);
}

/// N-1/N-2 (issue 12): a slash command's arguments are what the person typed; the
/// command wrapper is injected context.
#[test]
fn n2_slash_command_args_are_the_persons_text() {
    let rows = vec![
        user(json!("<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>Never touch prod</command-args>")),
        assistant("m1", json!([{ "type": "text", "text": "ok" }])),
        user(json!("<command-name>/clear</command-name>")),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    let t = decode(Format::Anthropic, r.document.clone()).unwrap();
    let roles: Vec<(String, TranscriptRole)> = t.messages.iter().zip(&m).map(|(x, v)| (text(v), x.provenance.transcript_role)).collect();
    assert_eq!(roles[0].1, TranscriptRole::InjectedContext);
    assert!(roles[0].0.starts_with("<command-name>/review</command-name>"), "{}", roles[0].0);
    assert_eq!(roles[1], ("Never touch prod".into(), TranscriptRole::Conversational));
    assert_eq!(roles.last().unwrap(), &("<command-name>/clear</command-name>".to_string(), TranscriptRole::InjectedContext), "no args: all injected");
}

/// N-2 (issue 12): the Agents SDK spelling `function_call_result` (`callId`, `output`
/// object or string) is taken as the output of its call, normalised to
/// `function_call_output` with a warning; before, import threw `unanswered_tool_call`.
#[test]
fn n2_codex_function_call_result_spelling_answers_its_call() {
    for output in [json!("2 passed"), json!({ "type": "text", "text": "2 passed" })] {
        let mut rows = codex_log(0);
        rows.push(cx_msg("user", "input_text", "Run the tests"));
        rows.push(cx("response_item", json!({ "type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1" })));
        rows.push(cx("response_item", json!({ "type": "function_call_result", "name": "shell", "status": "completed", "callId": "c1", "output": output })));
        rows.push(cx_msg("assistant", "output_text", "Tests pass."));
        let r = imp(ImportKind::CodexRollout, &jsonl(&rows));
        let items = msgs(&r.document);
        let out = items.iter().find(|i| i["type"] == "function_call_output").expect("normalised output");
        assert_eq!(out["call_id"], "c1");
        assert_eq!(out["output"], "2 passed");
        assert!(!codes(&r).contains(&"unanswered_call"), "{:?}", r.warnings);
        assert!(codes(&r).contains(&"normalised_item"), "{:?}", r.warnings);
    }
}

/// Y-4 / N-2 (issue 12): a log ending at `compact_boundary` before its summary row
/// keeps the rows before the boundary (with a warning) instead of importing
/// `{messages: []}`; a boundary followed by its summary still drops them.
#[test]
fn n2_compact_boundary_without_summary_keeps_the_earlier_rows() {
    let rows = vec![
        user(json!("Migrate the users table, never on prod-db-7")),
        assistant("m1", json!([{ "type": "text", "text": "Working on it." }])),
        json!({ "type": "system", "subtype": "compact_boundary", "session_id": "s", "compact_metadata": { "trigger": "auto", "pre_tokens": 9 } }),
    ];
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&rows));
    let m = msgs(&r.document);
    assert_eq!(m.len(), 2, "{m:?}");
    assert_eq!(text(&m[0]), "Migrate the users table, never on prod-db-7");
    let w = r.warnings.iter().find(|w| w.code == "compact_boundary_without_summary").expect("warning");
    assert_eq!(w.line, Some(3));
    assert!(!codes(&r).contains(&"compact_boundary"));
    // a conversation row after the boundary, still no summary: all rows kept
    let mut more = rows.clone();
    more.push(user(json!("go on")));
    let r = imp(ImportKind::ClaudeCodeJsonl, &jsonl(&more));
    assert_eq!(msgs(&r.document).len(), 3);
}

/// N-2 (issue 12): an import that yields no message (here the only row is an orphan
/// result the repair drops) fails `invalid_transcript`.
#[test]
fn n2_an_import_with_no_messages_is_invalid_transcript() {
    let rows = vec![
        json!({ "type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": [] }),
        user(json!([tool_result("lost", "a result whose call is not in the log")])),
        json!({ "type": "result", "subtype": "success", "session_id": "s" }),
    ];
    let e = import_with(ImportKind::ClaudeCodeJsonl, &jsonl(&rows), &ImportOptions::default()).expect_err("nothing to import");
    assert_eq!(e.code, ErrorCode::InvalidTranscript, "{e}");
}

/// N-3 (issue 12): media parts are told apart by their keys, not their type name: an
/// AI SDK image part (`image`) is not Anthropic, an OpenAI Chat file part (`file`
/// object) is not AI SDK; a part that fits none is `unknown_format` with a hint.
#[test]
fn n3_media_parts_are_detected_by_their_keys() {
    let text = json!({ "type": "text", "text": "hi" });
    let doc = |part: Value| json!([{ "role": "user", "content": [text.clone(), part] }]);
    assert_eq!(detect(&doc(json!({ "type": "image", "image": "AA" }))).unwrap(), Format::AiSdk);
    assert_eq!(detect(&doc(json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AA" } }))).unwrap(), Format::Anthropic);
    assert_eq!(detect(&doc(json!({ "type": "file", "data": "AA", "mediaType": "application/pdf" }))).unwrap(), Format::AiSdk);
    assert_eq!(detect(&doc(json!({ "type": "file", "file": { "file_id": "f" } }))).unwrap(), Format::OpenaiChat);
    for part in [json!({ "type": "image", "url": "x" }), json!({ "type": "file", "name": "x" })] {
        let d = doc(part);
        let e = detect(&d).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownFormat);
        assert!(e.message.contains("matches no format"), "{}", e.message);
        assert_eq!(detect_text(&d.to_string()).unwrap_err().code, ErrorCode::UnknownFormat);
    }
}
