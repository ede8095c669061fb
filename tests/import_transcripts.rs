//! Importers on the real transcripts in `../shared/transcripts` and on small inline
//! logs. Requirement IDs: F-1 (the adapters accept the imported documents), F-3
//! (encode(decode(doc)) in the stored view gives `doc` back), F-5 (tool calls pair and
//! call ids are unique).

mod common;
use context_compactor::formats::import::{import, import_with, sniff, ImportKind, ImportOptions};
use context_compactor::formats::{self, decode, encode, validate_pairing, Format, View};
use context_compactor::transcript::{Block, Role, Transcript};
use context_compactor::ErrorCode;
use serde_json::{json, Value};
use std::collections::HashSet;

// ------------------------------------------------------------------ helpers

/// Imports, decodes, checks pairing (F-5) and the stored-view round trip (F-3).
fn import_checked(kind: ImportKind, text: &str) -> (Value, Transcript) {
    let (format, doc) = import(kind, text).unwrap_or_else(|e| panic!("import {}: {e}", kind.name()));
    assert_eq!(format, kind.format());
    let t = decode(format, doc.clone()).unwrap_or_else(|e| panic!("decode {}: {e}", kind.name()));
    if let Err(e) = validate_pairing(&t) {
        panic!("F-5 pairing failed for {}: {e}", kind.name());
    }
    assert_eq!(encode(&t, View::Stored), doc, "F-3 round trip of the {} document", kind.name());
    (doc, t)
}

fn call_ids(t: &Transcript) -> Vec<String> {
    t.messages.iter().flat_map(|m| m.call_ids().map(str::to_string).collect::<Vec<_>>()).collect()
}

fn assert_unique_call_ids(t: &Transcript, what: &str) {
    let ids = call_ids(t);
    let set: HashSet<&String> = ids.iter().collect();
    assert_eq!(set.len(), ids.len(), "F-5: {what} reuses a tool-call id");
}

fn has_system_prompt(t: &Transcript) -> bool {
    match t.format {
        Format::Anthropic => t.envelope.fields.get("system").and_then(Value::as_str).is_some_and(|s| !s.is_empty()),
        Format::OpenaiChat => t.messages.first().is_some_and(|m| m.role == Role::System),
        other => panic!("importers never produce {other:?}"),
    }
}

/// What the source itself holds, measured without the importer: (has a system
/// prompt, number of tool calls).
fn source_facts(kind: ImportKind, text: &str) -> (bool, usize) {
    let count_calls = |msgs: &[Value]| msgs.iter().filter_map(|m| m.get("tool_calls").and_then(Value::as_array)).map(Vec::len).sum::<usize>();
    match kind {
        ImportKind::ClaudeCodeJsonl => {
            let events: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
            let init = events.iter().any(|e| e["type"] == "system" && e["subtype"] == "init");
            let calls = events
                .iter()
                .filter(|e| e["type"] == "assistant")
                .filter_map(|e| e["message"]["content"].as_array())
                .flatten()
                .filter(|b| b["type"] == "tool_use")
                .count();
            (init, calls)
        }
        ImportKind::SweAgentTraj => {
            let v: Value = serde_json::from_str(text).unwrap();
            let h = v["history"].as_array().unwrap();
            // thought/action steps (no native tool calls) become one call each (N-2)
            let actions = h.iter().filter(|m| m["role"] == "assistant" && m.get("tool_calls").and_then(Value::as_array).is_none_or(|c| c.is_empty()) && m["action"].as_str().is_some_and(|a| !a.trim().is_empty())).count();
            (h.iter().any(|m| m["role"] == "system"), count_calls(h) + actions)
        }
        ImportKind::TauBench => {
            let v: Value = serde_json::from_str(text).unwrap();
            let msgs: Vec<Value> = v.as_array().unwrap().iter().flat_map(|e| e["traj"].as_array().unwrap().clone()).collect();
            (msgs.iter().any(|m| m["role"] == "system"), count_calls(&msgs))
        }
        ImportKind::CodexRollout => panic!("no shared Codex rollouts"),
        ImportKind::Glaive => {
            let v: Value = serde_json::from_str(text).unwrap();
            let turns: Vec<Value> = v.as_array().unwrap().iter().flat_map(|c| c["conversations"].as_array().unwrap().clone()).collect();
            (turns.iter().any(|t| t["from"] == "system"), turns.iter().filter(|t| t["from"] == "function_call").count())
        }
    }
}

// ------------------------------------------------------------------ real transcripts

/// F-1, F-3, F-5 on every file under `../shared/transcripts`: sniff finds the folder's
/// kind, the import decodes, pairs, keeps every tool call and the system prompt, and
/// round-trips. Skips (with a notice) only when `../shared` is absent and `CI` is not
/// `true`.
#[test]
fn f1_f3_f5_every_shared_transcript_imports_pairs_and_round_trips() {
    let Some((dir, files)) = common::shared_transcript_files() else { return };
    assert!(!files.is_empty(), "no transcripts under {}", dir.display());
    let mut kinds_seen = HashSet::new();
    for path in &files {
        let rel = path.strip_prefix(&dir).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let kind = sniff(&text).unwrap_or_else(|| panic!("{rel}: sniff found no log kind"));
        if let Some(expected) = common::shared_transcript_kind(&dir, path) {
            assert_eq!(kind, expected, "{rel}: sniffed kind");
        }
        kinds_seen.insert(kind.name());
        let (_, t) = import_checked(kind, &text);
        assert!(!t.messages.is_empty(), "{rel}: no messages");
        assert_unique_call_ids(&t, &rel);
        let (source_system, source_calls) = source_facts(kind, &text);
        assert_eq!(has_system_prompt(&t), source_system, "{rel}: system prompt present in source vs import");
        assert_eq!(call_ids(&t).len(), source_calls, "{rel}: tool calls kept");
        println!("{rel}: {} messages, {} tool calls ({})", t.messages.len(), source_calls, kind.name());
    }
    assert_eq!(kinds_seen.len(), 4, "expected all four log kinds, saw {kinds_seen:?}");
}

// ------------------------------------------------------------------ Claude Code

const CLAUDE_LOG: &str = r#"bash: cannot set terminal process group (-1): Inappropriate ioctl for device
bash: no job control in this shell
{"type":"system","subtype":"init","cwd":"/root","session_id":"s","tools":["Bash","Read"],"model":"m1","claude_code_version":"2.1.19"}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Let me look."}]},"session_id":"s"}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"tu_a","name":"Bash","input":{"command":"ls"}}]},"session_id":"s"}
{"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"tu_b","name":"Skill","input":{"skill":"pdf"}}]},"session_id":"s"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_b","content":"Launching skill: pdf"}]},"session_id":"s","tool_use_result":{"success":true}}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Skill text"}]},"session_id":"s"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_a","content":"a.txt"}]},"session_id":"s"}
{"type":"assistant","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"Done."}]},"session_id":"s"}
{"type":"result","subtype":"success","result":"Done.","session_id":"s"}
"#;

/// F-1, F-5: one API message split over three lines (same `message.id`) becomes one
/// assistant message with its blocks in order; the three user lines become one user
/// message with both tool_results first; shell noise and `result` are dropped.
#[test]
fn f1_f5_claude_code_merges_split_message_and_puts_results_first() {
    let (doc, t) = import_checked(ImportKind::ClaudeCodeJsonl, CLAUDE_LOG);
    assert_eq!(t.format, Format::Anthropic);
    assert_eq!(t.messages.len(), 3);
    let types = |v: &Value| v["content"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let msgs = doc["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "assistant");
    assert_eq!(types(&msgs[0]), ["text", "tool_use", "tool_use"]);
    assert_eq!(call_ids(&t), ["tu_a", "tu_b"]);
    assert_eq!(msgs[1]["role"], "user");
    assert_eq!(types(&msgs[1]), ["tool_result", "tool_result", "text"]);
    assert_eq!(msgs[1]["content"][0]["tool_use_id"], "tu_b", "results keep their relative order");
    assert_eq!(msgs[1].as_object().unwrap().len(), 2, "only role and content are kept");
    assert!(doc["system"].as_str().unwrap().contains("model m1"));
    assert_eq!(msgs[2]["content"][0]["text"], "Done.");
}

/// F-5: without the merge/reorder repair the sample would not pair; check the raw
/// split (one user message per line) really fails, so the test above can fail.
#[test]
fn f5_claude_code_unmerged_user_lines_would_break_pairing() {
    let (_, doc) = import(ImportKind::ClaudeCodeJsonl, CLAUDE_LOG).unwrap();
    let mut msgs = doc["messages"].as_array().unwrap().clone();
    let user = msgs.remove(1);
    let parts: Vec<Value> = user["content"].as_array().unwrap().iter().map(|b| json!({"role": "user", "content": [b]})).collect();
    for (k, p) in parts.into_iter().enumerate() {
        msgs.insert(1 + k, p);
    }
    let t = decode(Format::Anthropic, json!({ "messages": msgs })).unwrap();
    assert_eq!(validate_pairing(&t).unwrap_err().code, ErrorCode::UnansweredToolCall);
}

/// N-2: bad lines are skipped with warnings naming the line; the import fails (typed,
/// naming what it found) only when nothing valid remains.
#[test]
fn n2_claude_code_bad_lines_are_warnings_and_nothing_valid_is_an_error() {
    let text = "noise\n{\"type\":\"assistant\",\"message\":{\"content\":[]},\"session_id\":\"s\"}\n{\"type\": broken\n";
    let err = import(ImportKind::ClaudeCodeJsonl, text).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidTranscript);
    assert!(err.message.contains("no valid"), "{}", err.message);
    let err = import(ImportKind::ClaudeCodeJsonl, "{\"type\":\"user\",\"message\":{\"content\":7}}").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidTranscript);
    assert!(import(ImportKind::ClaudeCodeJsonl, "only noise\n").is_err());
    let ok = format!("{text}{{\"type\":\"user\",\"message\":{{\"content\":\"hi\"}},\"session_id\":\"s\"}}\n");
    let r = import_with(ImportKind::ClaudeCodeJsonl, &ok, &ImportOptions::default()).unwrap();
    let codes: Vec<(Option<usize>, &str)> = r.warnings.iter().map(|w| (w.line, w.code)).collect();
    assert!(codes.contains(&(Some(3), "torn_line")), "{codes:?}");
    assert!(codes.contains(&(Some(2), "bad_content")), "{codes:?}");
    assert!(codes.contains(&(Some(1), "not_json")), "{codes:?}");
    assert_eq!(r.document["messages"].as_array().unwrap().len(), 1);
}

// ------------------------------------------------------------------ SWE-agent

/// F-1, F-5: `tool_call_ids` becomes `tool_call_id`, non-standard keys are dropped,
/// text parts are kept, and a call id reused by a later exchange is made unique.
#[test]
fn f1_f5_swe_agent_keeps_standard_keys_and_maps_tool_call_ids() {
    let traj = json!({ "environment": "x", "trajectory": [], "history": [
        { "role": "system", "content": "You are SWE-agent.", "agent": "main", "message_type": "system_prompt" },
        { "role": "user", "content": [{ "type": "text", "text": "Fix the bug", "cache_control": { "type": "ephemeral" } }], "agent": "main" },
        { "role": "assistant", "content": "look", "thought": "look", "action": "ls", "agent": "main",
          "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } }] },
        { "role": "tool", "content": "a.py", "agent": "main", "tool_call_ids": ["call_1"] },
        { "role": "assistant", "content": "again", "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "bash", "arguments": "{}" } }] },
        { "role": "tool", "content": "b.py", "tool_call_ids": ["call_1"] }
    ]});
    let text = traj.to_string();
    assert_eq!(sniff(&text), Some(ImportKind::SweAgentTraj));
    let (doc, t) = import_checked(ImportKind::SweAgentTraj, &text);
    let msgs = doc["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 6);
    assert_eq!(msgs[0], json!({ "role": "system", "content": "You are SWE-agent." }));
    assert_eq!(msgs[1]["content"], json!([{ "type": "text", "text": "Fix the bug" }]));
    assert_eq!(msgs[3], json!({ "role": "tool", "content": "a.py", "tool_call_id": "call_1" }));
    assert_eq!(msgs[5]["tool_call_id"], "call_1~1");
    assert_unique_call_ids(&t, "swe sample");
    assert!(matches!(t.messages[3].blocks[0], Block::ToolResult { ref call_id, .. } if call_id == "call_1"));
}

/// N-2: a bad history entry is skipped with a warning naming its index; nothing valid
/// is an error.
#[test]
fn n2_swe_agent_bad_entries_are_warnings_naming_the_index() {
    let warns = |text: &str| import_with(ImportKind::SweAgentTraj, text, &ImportOptions::default()).unwrap().warnings;
    let w = warns(r#"{"history":[{"role":"user","content":"x"},{"content":"no role"}]}"#);
    assert!(w.iter().any(|w| w.code == "bad_entry" && w.message.contains("history[1]")), "{w:?}");
    let w = warns(r#"{"history":[{"role":"user","content":"x"},{"role":"tool","content":"x","tool_call_ids":["a","b"]}]}"#);
    assert!(w.iter().any(|w| w.message.contains("history[1]")), "{w:?}");
    let err = import(ImportKind::SweAgentTraj, r#"{"history":[{"role":"user","content":[{"type":"weird"}]}]}"#).unwrap_err();
    assert!(err.message.contains("no valid"), "{}", err.message);
    assert!(import(ImportKind::SweAgentTraj, "[]").is_err());
    assert!(import(ImportKind::SweAgentTraj, "not json").is_err());
}

// ------------------------------------------------------------------ tau-bench

fn tau_call(id: &str) -> Value {
    json!({ "id": id, "type": "function", "function": { "name": "get_user", "arguments": "{}" } })
}

/// F-5: tool-call ids reused within one trajectory and across trajectories are
/// rewritten (`X~k`), each result taking the id of the nearest earlier unanswered call;
/// the repeated system prompt is dropped, a different one becomes a user message.
#[test]
fn f5_tau_bench_rewrites_reused_call_ids_consistently() {
    let file = json!([
        { "task_id": 0, "reward": 1.0, "traj": [
            { "role": "system", "content": "policy" },
            { "role": "user", "content": "hi" },
            { "role": "assistant", "content": null, "tool_calls": [tau_call("X")] },
            { "role": "tool", "tool_call_id": "X", "name": "get_user", "content": "r1" },
            { "role": "assistant", "content": null, "tool_calls": [tau_call("X")] },
            { "role": "tool", "tool_call_id": "X", "name": "get_user", "content": "r2" },
            { "role": "assistant", "content": "done" }
        ]},
        { "task_id": 1, "reward": 0.0, "traj": [
            { "role": "system", "content": "policy" },
            { "role": "user", "content": "hello" },
            { "role": "assistant", "content": "", "tool_calls": [tau_call("X"), tau_call("Y")] },
            { "role": "tool", "tool_call_id": "Y", "name": "get_user", "content": "ry" },
            { "role": "tool", "tool_call_id": "X", "name": "get_user", "content": "r3" },
            { "role": "system", "content": "other policy" }
        ]}
    ]);
    let text = file.to_string();
    assert_eq!(sniff(&text), Some(ImportKind::TauBench));
    let (doc, t) = import_checked(ImportKind::TauBench, &text);
    let msgs = doc["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 12, "13 messages minus the repeated system prompt");
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs.iter().filter(|m| m["role"] == "system").count(), 1);
    assert_eq!(msgs[11], json!({ "role": "user", "content": "other policy", "transcript_role": "injected_context" }));
    assert_eq!(call_ids(&t), ["X", "X~1", "X~2", "Y"]);
    assert_eq!(msgs[3]["tool_call_id"], "X");
    assert_eq!(msgs[5]["tool_call_id"], "X~1");
    assert_eq!(msgs[9]["tool_call_id"], "Y");
    assert_eq!(msgs[10]["tool_call_id"], "X~2");
    assert_eq!(msgs[10]["name"], "get_user");
    assert_unique_call_ids(&t, "tau sample");
}

/// F-5: a rewritten id never collides with an id already in the file.
#[test]
fn f5_tau_bench_rewrite_skips_ids_already_taken() {
    let file = json!([{ "traj": [
        { "role": "assistant", "content": null, "tool_calls": [tau_call("X~1")] },
        { "role": "tool", "tool_call_id": "X~1", "content": "a" },
        { "role": "assistant", "content": null, "tool_calls": [tau_call("X")] },
        { "role": "tool", "tool_call_id": "X", "content": "b" },
        { "role": "assistant", "content": null, "tool_calls": [tau_call("X")] },
        { "role": "tool", "tool_call_id": "X", "content": "c" }
    ]}]);
    let (_, t) = import_checked(ImportKind::TauBench, &file.to_string());
    assert_eq!(call_ids(&t), ["X~1", "X", "X~2"]);
}

/// N-2: a bad episode or message is skipped with a warning naming it.
#[test]
fn n2_tau_bench_bad_episode_is_a_warning_naming_it() {
    let r = import_with(ImportKind::TauBench, r#"[{"traj":[{"role":"user","content":"hi"}]},{"no_traj":1}]"#, &ImportOptions::default()).unwrap();
    assert!(r.warnings.iter().any(|w| w.message.contains("episode 1")), "{:?}", r.warnings);
    let r = import_with(ImportKind::TauBench, r#"[{"traj":[{"role":"user","content":{}},{"role":"user","content":"x"}]}]"#, &ImportOptions::default()).unwrap();
    assert!(r.warnings.iter().any(|w| w.message.contains("episode 0 message 0")), "{:?}", r.warnings);
    assert!(import(ImportKind::TauBench, r#"[{"traj":[]},{"no_traj":1}]"#).is_err());
    assert!(import(ImportKind::TauBench, "{}").is_err());
}

// ------------------------------------------------------------------ Glaive

/// F-1, F-5: function_call/observation turns become tool_calls/tool messages with
/// synthetic deterministic ids; conversations are concatenated; an observation with no
/// call becomes a user message.
#[test]
fn f1_f5_glaive_pairs_calls_and_observations_with_synthetic_ids() {
    let file = json!([
        { "conversations": [
            { "from": "human", "value": "帮我生成发票" },
            { "from": "function_call", "value": "{\"name\": \"generate_invoice\", \"arguments\": {\"customer_name\": \"约翰\"}}" },
            { "from": "observation", "value": "{\"invoice_id\": \"INV1\"}" },
            { "from": "gpt", "value": "发票已生成" }
        ], "tools": "[]" },
        { "conversations": [
            { "from": "human", "value": "打折" },
            { "from": "gpt", "value": "AI 计算折扣: {}" },
            { "from": "observation", "value": "{\"discounted_price\": 160}" },
            { "from": "gpt", "value": "160美元" }
        ], "tools": "[]" }
    ]);
    let text = file.to_string();
    assert_eq!(sniff(&text), Some(ImportKind::Glaive));
    let (doc, t) = import_checked(ImportKind::Glaive, &text);
    let msgs = doc["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 8);
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "glaive_0_1");
    assert_eq!(msgs[1]["tool_calls"][0]["function"]["arguments"], "{\"customer_name\":\"约翰\"}");
    assert_eq!(msgs[2], json!({ "role": "tool", "tool_call_id": "glaive_0_1", "content": "{\"invoice_id\": \"INV1\"}" }));
    assert_eq!(msgs[6], json!({ "role": "user", "content": "{\"discounted_price\": 160}", "transcript_role": "injected_context" }), "N-2: environment output is never a user request");
    assert!(!has_system_prompt(&t));
    // deterministic
    assert_eq!(import(ImportKind::Glaive, &text).unwrap().1, doc);
}

/// N-2: a bad turn is skipped with a warning naming conversation and turn.
#[test]
fn n2_glaive_bad_turn_is_a_warning_naming_conversation_and_turn() {
    let bad_call = json!([{ "conversations": [{ "from": "human", "value": "x" }, { "from": "function_call", "value": "not json" }] }]);
    let r = import_with(ImportKind::Glaive, &bad_call.to_string(), &ImportOptions::default()).unwrap();
    assert!(r.warnings.iter().any(|w| w.code == "bad_turn" && w.message.contains("conversation 0 turn 1")), "{:?}", r.warnings);
    let bad_from = json!([{ "conversations": [{ "from": "human", "value": "y" }] }, { "conversations": [{ "from": "robot", "value": "x" }] }]);
    let r = import_with(ImportKind::Glaive, &bad_from.to_string(), &ImportOptions::default()).unwrap();
    assert!(r.warnings.iter().any(|w| w.message.contains("conversation 1 turn 0")), "{:?}", r.warnings);
    let err = import(ImportKind::Glaive, &json!([{ "conversations": [{ "from": "robot", "value": "x" }] }]).to_string()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidTranscript);
}

// ------------------------------------------------------------------ kinds and sniffing

#[test]
fn import_kind_names_round_trip_and_unknown_is_an_error() {
    for kind in [ImportKind::ClaudeCodeJsonl, ImportKind::CodexRollout, ImportKind::SweAgentTraj, ImportKind::TauBench, ImportKind::Glaive] {
        assert_eq!(ImportKind::parse(kind.name()).unwrap(), kind);
    }
    assert_eq!(ImportKind::parse("sharegpt").unwrap(), ImportKind::Glaive);
    assert_eq!(ImportKind::parse("langchain").unwrap_err().code, ErrorCode::UnknownFormat);
}

#[test]
fn sniff_recognises_claude_code_and_leaves_provider_json_alone() {
    assert_eq!(sniff(CLAUDE_LOG), Some(ImportKind::ClaudeCodeJsonl));
    assert_eq!(sniff(r#"[{"role":"user","content":"hi"}]"#), None);
    assert_eq!(sniff(r#"{"system":"s","messages":[]}"#), None);
    assert_eq!(sniff("garbage"), None);
    assert_eq!(sniff(""), None);
}

/// No importer panics on hostile input (errors only).
#[test]
fn importers_never_panic_on_garbage() {
    let inputs = ["", "null", "[]", "{}", "[1,2]", "[{}]", "{\"history\":{}}", "[{\"traj\":[1]}]", "[{\"conversations\":[1]}]", "{\"type\":\"assistant\"}"];
    for kind in [ImportKind::ClaudeCodeJsonl, ImportKind::CodexRollout, ImportKind::SweAgentTraj, ImportKind::TauBench, ImportKind::Glaive] {
        for input in inputs {
            if let Ok((format, doc)) = import(kind, input) {
                let _ = formats::decode(format, doc);
            }
        }
    }
}
