//! Damaged real-shaped logs (N-2, F-5; issue 12 item "importers"): every importer gives
//! a valid document of its format (the repairs listed in `warnings`) or a typed error,
//! never a pairing error. Property-tested over Claude Code (stream-json and session
//! logs, subagents), Codex rollouts, SWE-agent trajectories (native tool calls and
//! thought/action) and Glaive / ShareGPT (JSON Lines and turns), with lines or entries
//! dropped, repeated, swapped, moved, torn, and call ids duplicated; and over slices of
//! the real logs in `../shared/transcripts` when present.

mod common;

use context_compactor::formats::import::{import_with, ImportKind, ImportOptions, SubagentMode};
use context_compactor::formats::{decode, validate_pairing};
use context_compactor::ErrorCode;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Warning codes an importer documents ([`context_compactor::formats::import::ImportWarning::code`]).
const DOCUMENTED: [&str; 28] = [
    "not_json",
    "torn_line",
    "nested_too_deep",
    "fused_line",
    "not_object",
    "missing_type",
    "bad_content",
    "bad_block",
    "duplicate_row",
    "reused_uuid",
    "unknown_line_type",
    "compact_boundary",
    "attachment_not_imported",
    "subagent_dropped",
    "subagent_unattached",
    "subagent_file",
    "rewound_branch",
    "orphan_result",
    "unanswered_call",
    "duplicate_call_id",
    "empty_message",
    "orphan_observation",
    "bad_turn",
    "bad_entry",
    "normalised_item",
    "compact_boundary_without_summary",
    "other_session",
    "missing_parent",
];

/// How the units of a seed are put back together into the importer's input.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// One unit a line (JSON Lines).
    Lines,
    /// A SWE-agent `.traj`: the units are the `history` entries.
    Traj,
    /// One Glaive conversation: the units are its turns.
    Turns,
    /// A tau-bench file: the units are its episodes.
    Episodes,
    /// A tau-bench file of one episode: the units are its messages.
    Traj1,
}

struct Seed {
    name: String,
    kind: ImportKind,
    shape: Shape,
    units: Vec<String>,
}

fn render(shape: Shape, units: &[String]) -> String {
    match shape {
        Shape::Lines => units.join("\n"),
        Shape::Traj => format!("{{\"history\":[{}]}}", units.join(",")),
        Shape::Turns => format!("[{{\"system\":\"You are a helper.\",\"conversations\":[{}]}}]", units.join(",")),
        Shape::Episodes => format!("[{}]", units.join(",")),
        Shape::Traj1 => format!("[{{\"traj\":[{}]}}]", units.join(",")),
    }
}

fn cc_user(content: Value, parent: Option<&str>) -> Value {
    json!({ "type": "user", "session_id": "s", "parent_tool_use_id": parent, "message": { "role": "user", "content": content } })
}

fn cc_asst(id: &str, content: Value, parent: Option<&str>) -> Value {
    json!({ "type": "assistant", "session_id": "s", "parent_tool_use_id": parent, "message": { "id": id, "role": "assistant", "content": content } })
}

fn tool_use(id: &str, name: &str) -> Value {
    json!({ "type": "tool_use", "id": id, "name": name, "input": { "command": format!("run {id}") } })
}

fn tool_result(id: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": format!("output of {id}") })
}

/// Claude Code stream-json: parallel calls, a split assistant message, a `Task` call
/// with subagent rows interleaved, person text beside results.
fn claude_stream() -> Vec<String> {
    let mut rows = vec![json!({ "type": "system", "subtype": "init", "session_id": "s", "model": "m", "tools": ["Bash", "Task"] }), cc_user(json!("Fix the build. You must keep the API stable."), None)];
    rows.push(cc_asst("m1", json!([{ "type": "text", "text": "Looking." }]), None));
    rows.push(cc_asst("m1", json!([tool_use("t1", "Bash"), tool_use("t2", "Bash")]), None));
    rows.push(cc_user(json!([tool_result("t1"), tool_result("t2"), { "type": "text", "text": "Also add a test." }]), None));
    rows.push(cc_asst("m2", json!([tool_use("task1", "Task")]), None));
    rows.push(cc_user(json!("sub prompt"), Some("task1")));
    rows.push(cc_asst("s1", json!([tool_use("st1", "Bash")]), Some("task1")));
    rows.push(cc_user(json!([tool_result("st1")]), Some("task1")));
    rows.push(cc_asst("s2", json!([{ "type": "text", "text": "sub done" }]), Some("task1")));
    rows.push(cc_user(json!([tool_result("task1")]), None));
    rows.push(cc_asst("m3", json!([tool_use("t3", "Bash")]), None));
    rows.push(cc_user(json!([tool_result("t3")]), None));
    rows.push(cc_asst("m4", json!([{ "type": "text", "text": "Done." }]), None));
    rows.push(json!({ "type": "result", "subtype": "success", "session_id": "s" }));
    rows.iter().map(Value::to_string).collect()
}

/// Claude Code session log: `uuid` / `parentUuid` chain, a sidechain run with `agentId`.
fn claude_session() -> Vec<String> {
    let mut rows = Vec::new();
    let mut parent: Option<String> = None;
    let mut push = |ty: &str, content: Value, side: bool, msg_id: Option<&str>, rows: &mut Vec<Value>| {
        let uuid = format!("u{}", rows.len());
        let mut v = json!({ "type": ty, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": side, "message": { "role": ty, "content": content } });
        if let Some(id) = msg_id {
            v["message"]["id"] = json!(id);
        }
        if side {
            v["agentId"] = json!("a1");
        }
        parent = Some(uuid);
        rows.push(v);
    };
    push("user", json!("Find the bugs. Never push to main."), false, None, &mut rows);
    push("assistant", json!([tool_use("toolu_1", "Read")]), false, Some("m1"), &mut rows);
    push("user", json!([tool_result("toolu_1")]), false, None, &mut rows);
    push("assistant", json!([tool_use("toolu_9", "Task")]), false, Some("m2"), &mut rows);
    push("user", json!("subagent prompt"), true, None, &mut rows);
    push("assistant", json!([tool_use("toolu_s", "Grep")]), true, Some("x1"), &mut rows);
    push("user", json!([tool_result("toolu_s")]), true, None, &mut rows);
    push("assistant", json!([{ "type": "text", "text": "two bugs" }]), true, Some("x2"), &mut rows);
    push("user", json!([tool_result("toolu_9")]), false, None, &mut rows);
    push("assistant", json!([{ "type": "text", "text": "Fixed both." }]), false, Some("m3"), &mut rows);
    rows.iter().map(Value::to_string).collect()
}

/// Claude Code session log with the harness rows: a compact boundary and its summary,
/// `isMeta` rows, attachments, a queued command while a tool runs.
fn claude_harness() -> Vec<String> {
    let row = |ty: &str, uuid: &str, extra: Value, content: Value| {
        let mut v = json!({ "type": ty, "uuid": uuid, "sessionId": "s1", "message": { "role": ty, "content": content } });
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v
    };
    let mut call = row("assistant", "a2", json!({}), json!([tool_use("toolu_2", "Bash"), tool_use("toolu_3", "Bash")]));
    call["message"]["id"] = json!("m2");
    let mut answer = row("assistant", "a4", json!({}), json!([{ "type": "text", "text": "Done." }]));
    answer["message"]["id"] = json!("m4");
    let rows = vec![
        row("user", "old1", json!({}), json!("old request")),
        json!({ "type": "system", "subtype": "compact_boundary", "uuid": "c1", "sessionId": "s1", "compactMetadata": { "trigger": "auto", "preTokens": 1000 } }),
        row("user", "u1", json!({ "isCompactSummary": true }), json!("This session is being continued from a previous conversation. Summary: x")),
        row("user", "u2", json!({ "isMeta": true }), json!("<command-name>/review</command-name>")),
        row("user", "u3", json!({}), json!("Review the diff. Always keep tabs.")),
        call,
        json!({ "type": "attachment", "sessionId": "s1", "attachment": { "type": "queued_command", "prompt": "also update the docs" } }),
        row("user", "u5", json!({}), json!([tool_result("toolu_2"), tool_result("toolu_3")])),
        json!({ "type": "attachment", "sessionId": "s1", "attachment": { "type": "hook_success", "content": "ok" } }),
        answer,
    ];
    rows.iter().map(Value::to_string).collect()
}

/// A tau-bench file: two episodes reusing call ids.
fn tau() -> Vec<String> {
    let episode = |e: usize| {
        json!({ "task_id": e, "traj": [
            { "role": "system", "content": "policy" },
            { "role": "user", "content": format!("Change my flight {e}. I need to keep the seat.") },
            { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "get", "arguments": "{}" } }] },
            { "role": "tool", "tool_call_id": "call_1", "name": "get", "content": "{}" },
            { "role": "assistant", "content": null, "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "set", "arguments": "{}" } }] },
            { "role": "tool", "tool_call_id": "call_1", "name": "set", "content": "ok" },
            { "role": "assistant", "content": "Done." }
        ] })
        .to_string()
    };
    vec![episode(0), episode(1)]
}

fn cx(ty: &str, payload: Value) -> String {
    json!({ "timestamp": "2025-09-01T10:00:00Z", "type": ty, "payload": payload }).to_string()
}

/// Codex rollout: session meta, messages, reasoning, parallel function calls, a custom
/// tool call, UI mirrors.
fn codex() -> Vec<String> {
    let mut rows = vec![cx("session_meta", json!({ "id": "t-1", "cwd": "/w", "instructions": "Be careful." }))];
    for k in 0..3 {
        rows.push(cx("response_item", json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": format!("Run the tests {k}. Always use pytest.") }] })));
        rows.push(cx("event_msg", json!({ "type": "user_message", "message": format!("Run the tests {k}") })));
        rows.push(cx("response_item", json!({ "type": "reasoning", "summary": [], "encrypted_content": "gAAA" })));
        rows.push(cx("response_item", json!({ "type": "function_call", "name": "shell", "arguments": "{\"command\":[\"pytest\"]}", "call_id": format!("call_{k}a") })));
        rows.push(cx("response_item", json!({ "type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": format!("call_{k}b") })));
        rows.push(cx("response_item", json!({ "type": "function_call_output", "call_id": format!("call_{k}a"), "output": "2 passed" })));
        rows.push(cx("response_item", json!({ "type": "function_call_output", "call_id": format!("call_{k}b"), "output": "a.py" })));
        rows.push(cx("response_item", json!({ "type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": format!("cust_{k}") })));
        rows.push(cx("response_item", json!({ "type": "custom_tool_call_output", "call_id": format!("cust_{k}"), "output": "ok" })));
        rows.push(cx("response_item", json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": format!("Pass {k}.") }] })));
    }
    rows
}

/// SWE-agent with native tool calls.
fn swe_native() -> Vec<String> {
    let mut h = vec![json!({ "role": "system", "content": "SETTING" }), json!({ "role": "user", "content": "Fix issue 7. Do not touch tests." })];
    for k in 0..4 {
        h.push(json!({ "role": "assistant", "content": "step", "tool_calls": [{ "id": format!("call_{k}"), "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } }] }));
        h.push(json!({ "role": "tool", "content": format!("out {k}"), "tool_call_ids": [format!("call_{k}")] }));
    }
    h.push(json!({ "role": "assistant", "content": "submit" }));
    h.iter().map(Value::to_string).collect()
}

/// SWE-agent thought / action (no native calls).
fn swe_actions() -> Vec<String> {
    let mut h = vec![json!({ "role": "system", "content": "SETTING" }), json!({ "role": "user", "content": "Fix issue 12", "message_type": "observation" })];
    for k in 0..4 {
        h.push(json!({ "role": "assistant", "content": format!("Think {k}"), "action": format!("ls {k}"), "thought": "t" }));
        h.push(json!({ "role": "user", "content": format!("files {k}"), "message_type": "observation" }));
    }
    h.push(json!({ "role": "user", "content": "demo", "is_demo": true }));
    h.iter().map(Value::to_string).collect()
}

/// Glaive JSON Lines: one conversation a line.
fn glaive_lines() -> Vec<String> {
    (0..5)
        .map(|k| {
            json!({ "system": format!("helper {k}"), "conversations": [
                { "from": "human", "value": format!("q{k}. Make sure to answer in Chinese.") },
                { "from": "function_call", "value": "{\"name\":\"f\",\"arguments\":{}}" },
                { "from": "function_call", "value": "{\"name\":\"g\",\"arguments\":{}}" },
                { "from": "observation", "value": "{\"ok\":true}" },
                { "from": "observation", "value": "{\"ok\":false}" },
                { "from": "system", "value": "notice" },
                { "from": "gpt", "value": format!("a{k}") }
            ] })
            .to_string()
        })
        .collect()
}

/// Glaive turns of one conversation.
fn glaive_turns() -> Vec<String> {
    let mut t = vec![json!({ "from": "human", "value": "q" })];
    for k in 0..4 {
        t.push(json!({ "from": "function_call", "value": format!("{{\"name\":\"f{k}\",\"arguments\":{{}}}}") }));
        t.push(json!({ "from": "observation", "value": format!("{{\"r\":{k}}}") }));
        t.push(json!({ "from": "gpt", "value": format!("a{k}") }));
    }
    t.iter().map(Value::to_string).collect()
}

/// Slices of the real logs: the first 60 lines of each Claude Code log, the first 30
/// history entries of each SWE-agent trajectory.
fn real_seeds() -> Vec<Seed> {
    let Some(shared) = common::shared_dir() else { return Vec::new() };
    let mut out = Vec::new();
    let dir = shared.join("transcripts");
    if let Ok(rd) = std::fs::read_dir(dir.join("claude-code")) {
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
        paths.sort();
        for p in paths.into_iter().take(3) {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            out.push(Seed { name: p.display().to_string(), kind: ImportKind::ClaudeCodeJsonl, shape: Shape::Lines, units: text.lines().take(60).map(str::to_string).collect() });
        }
    }
    for f in ["BabyEncryption.traj", "katy.traj"] {
        let Ok(text) = std::fs::read_to_string(dir.join("swe-agent").join(f)) else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        let h: Vec<String> = v["history"].as_array().map(|a| a.iter().take(30).map(Value::to_string).collect()).unwrap_or_default();
        out.push(Seed { name: f.into(), kind: ImportKind::SweAgentTraj, shape: Shape::Traj, units: h });
    }
    out
}

fn seeds() -> &'static [Seed] {
    static SEEDS: std::sync::OnceLock<Vec<Seed>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(build_seeds)
}

fn build_seeds() -> Vec<Seed> {
    let mut s = vec![
        Seed { name: "claude stream-json".into(), kind: ImportKind::ClaudeCodeJsonl, shape: Shape::Lines, units: claude_stream() },
        Seed { name: "claude session log".into(), kind: ImportKind::ClaudeCodeJsonl, shape: Shape::Lines, units: claude_session() },
        Seed { name: "claude harness rows".into(), kind: ImportKind::ClaudeCodeJsonl, shape: Shape::Lines, units: claude_harness() },
        Seed { name: "tau-bench".into(), kind: ImportKind::TauBench, shape: Shape::Episodes, units: tau() },
        Seed {
            name: "tau-bench messages".into(),
            kind: ImportKind::TauBench,
            shape: Shape::Traj1,
            units: serde_json::from_str::<Value>(&tau()[0]).unwrap()["traj"].as_array().unwrap().iter().map(Value::to_string).collect(),
        },
        Seed { name: "codex rollout".into(), kind: ImportKind::CodexRollout, shape: Shape::Lines, units: codex() },
        Seed { name: "swe-agent native".into(), kind: ImportKind::SweAgentTraj, shape: Shape::Traj, units: swe_native() },
        Seed { name: "swe-agent actions".into(), kind: ImportKind::SweAgentTraj, shape: Shape::Traj, units: swe_actions() },
        Seed { name: "glaive jsonl".into(), kind: ImportKind::Glaive, shape: Shape::Lines, units: glaive_lines() },
        Seed { name: "glaive turns".into(), kind: ImportKind::Glaive, shape: Shape::Turns, units: glaive_turns() },
    ];
    s.extend(real_seeds());
    s
}

/// One damage: indices are taken modulo the number of units.
#[derive(Debug, Clone)]
enum Damage {
    Drop(usize),
    Repeat(usize),
    Swap(usize, usize),
    Move(usize, usize),
    /// Cut the unit at this fraction (per mille) of its length.
    Tear(usize, u16),
    /// The `a`-th id value of the input (message, call or result id) takes the value of
    /// the `b`-th.
    SameId(usize, usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Drop),
        any::<usize>().prop_map(Damage::Repeat),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::Swap(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::Move(a, b)),
        (any::<usize>(), 0u16..1000).prop_map(|(a, f)| Damage::Tear(a, f)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Damage::SameId(a, b)),
    ]
}

/// The byte ranges of every id value in a unit's JSON text (`id`, `call_id`,
/// `tool_use_id`, `tool_call_id`, `tool_call_ids` items).
fn ids(unit: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for key in ["\"tool_use_id\":\"", "\"call_id\":\"", "\"tool_call_id\":\"", "\"tool_call_ids\":[\"", "\"id\":\""] {
        for (p, _) in unit.match_indices(key) {
            let start = p + key.len();
            if let Some(e) = unit[start..].find('"') {
                out.push((start, start + e));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn apply(units: &mut Vec<String>, d: &Damage) {
    let n = units.len();
    if n == 0 {
        return;
    }
    match *d {
        Damage::Drop(i) => {
            units.remove(i % n);
        }
        Damage::Repeat(i) => {
            let u = units[i % n].clone();
            units.insert(i % n, u);
        }
        Damage::Swap(a, b) => units.swap(a % n, b % n),
        Damage::Move(a, b) => {
            let u = units.remove(a % n);
            units.insert(b % n.max(1) % (units.len() + 1), u);
        }
        Damage::Tear(i, f) => {
            let u = &mut units[i % n];
            let mut cut = u.len() * usize::from(f) / 1000;
            while !u.is_char_boundary(cut) {
                cut -= 1;
            }
            u.truncate(cut);
        }
        Damage::SameId(a, b) => {
            // the a-th id occurrence of the whole input takes the value of the b-th
            let all: Vec<(usize, usize, usize)> = units.iter().enumerate().flat_map(|(u, t)| ids(t).into_iter().map(move |(s, e)| (u, s, e))).collect();
            if all.is_empty() {
                return;
            }
            let (ua, sa, ea) = all[a % all.len()];
            let (ub, sb, eb) = all[b % all.len()];
            let to = units[ub][sb..eb].to_string();
            units[ua].replace_range(sa..ea, &to);
        }
    }
}

/// The property: a valid document (and valid subagent documents), warnings only of
/// documented codes; or a typed error that is not a pairing error.
fn check(seed: &Seed, text: &str, what: &str) -> Result<(), TestCaseError> {
    for mode in [SubagentMode::Attach, SubagentMode::Drop] {
        match import_with(seed.kind, text, &ImportOptions { subagents: mode }) {
            Ok(r) => {
                let t = decode(r.format, r.document.clone()).map_err(|e| TestCaseError::fail(format!("{what}: decode: {e}\n{text}")))?;
                validate_pairing(&t).map_err(|e| TestCaseError::fail(format!("{what}: pairing: {e}\n{text}")))?;
                for s in &r.subagents {
                    let t = decode(s.format, s.document.clone()).map_err(|e| TestCaseError::fail(format!("{what}: subagent decode: {e}")))?;
                    validate_pairing(&t).map_err(|e| TestCaseError::fail(format!("{what}: subagent pairing: {e}\n{text}")))?;
                }
                for w in &r.warnings {
                    prop_assert!(DOCUMENTED.contains(&w.code), "{}: undocumented warning code {}", what, w.code);
                }
            }
            Err(e) => {
                let pairing = matches!(e.code, ErrorCode::UnpairedToolResult | ErrorCode::UnansweredToolCall | ErrorCode::DuplicateToolCallId);
                prop_assert!(!pairing, "{}: a pairing error instead of a repair: {}\n{}", what, e, text);
                prop_assert!(matches!(e.code, ErrorCode::InvalidTranscript | ErrorCode::UnknownFormat), "{}: {}", what, e);
            }
        }
    }
    Ok(())
}

#[test]
fn n2_f5_undamaged_seeds_import_valid() {
    for s in seeds() {
        let text = render(s.shape, &s.units);
        let r = import_with(s.kind, &text, &ImportOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", s.name));
        let t = decode(r.format, r.document).unwrap();
        validate_pairing(&t).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("DAMAGE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400), ..ProptestConfig::default() })]

    #[test]
    fn n2_f5_damaged_imports_are_valid_documents_or_typed_errors(pick in any::<usize>(), damages in prop::collection::vec(damage(), 1..5)) {
        let all = seeds();
        let seed = &all[pick % all.len()];
        let mut units = seed.units.clone();
        for d in &damages {
            apply(&mut units, d);
        }
        let text = render(seed.shape, &units);
        check(seed, &text, &format!("{} {:?}", seed.name, damages))?;
    }
}
