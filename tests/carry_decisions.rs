//! What the agent decided and found survives a long loop of compactions (issue 13,
//! adversarial finding 5; Y-3, Y-6, N-5): a real transcript from `../shared/transcripts`
//! is fed to the engine a few rows at a time and compacted after each step (forced,
//! deterministic summary, no summarizer, no memory hook, no embed), so its summaries are
//! folded and rolled up again and again. Measured over the decision and finding
//! sentences of the agent's rows ([`Facts::read`] over the whole transcript): how many
//! are still verbatim in the transcript after the last compaction.
//!
//! Skips (with a notice) only when `../shared` is absent and `CI` is not `true`.

mod common;
use context_compactor::config::{Config, Profile};
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::decode;
use context_compactor::state::SessionState;
use context_compactor::summarize::Facts;
use context_compactor::transcript::Transcript;
use context_compactor::trigger::Signals;

/// The figures of one loop.
#[derive(Debug, Default)]
struct Survival {
    compactions: usize,
    rollups: usize,
    decisions: usize,
    /// verbatim in the final transcript
    kept: usize,
    /// not verbatim, but in the memory records the compactions returned
    in_memory: usize,
    /// the summaries' markers count this many decision sentences dropped
    counted: usize,
}

fn load(which: &str) -> Option<Transcript> {
    common::load_shared(which)
}

/// The numbers of `[... N more decision ...]`-style markers in `text` that count dropped
/// decision sentences.
fn counted_decisions(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("decision sentences") && (l.contains("not shown") || l.contains("not carried") || l.contains("dropped")))
        .filter_map(|l| l.split(|c: char| !c.is_ascii_digit()).find(|w| !w.is_empty()).and_then(|n| n.parse::<usize>().ok()))
        .sum()
}

/// The loop: the first `head` rows, then `step` more rows at a time, each step compacted
/// (forced) with the state of the last; `window` tokens.
fn fold_loop(full: &Transcript, head: usize, step: usize, window: u64, project_memory: bool) -> Survival {
    let mut config = Config::preset(Profile::Default);
    config.context_window = window;
    config.project_memory = project_memory;
    let mut s = Survival::default();
    let mut records = String::new();
    let cur = common::forced_fold_loop(full, head, step, &config, |o| {
        s.compactions += 1;
        s.rollups += o.rewrite.as_ref().map_or(0, |r| r.rollups.len());
        for r in o.memory.iter().flat_map(|b| b.records.iter()) {
            records.push_str(&r.content);
            records.push('\n');
        }
    });
    let rows: Vec<(usize, &context_compactor::transcript::Message)> = full.messages.iter().enumerate().collect();
    let facts = Facts::read(&rows, &|_, _, _| None);
    let text: String = cur.messages.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    s.decisions = facts.decisions.len();
    for d in &facts.decisions {
        if text.contains(d.as_str()) {
            s.kept += 1;
        } else if records.contains(d.as_str()) {
            s.in_memory += 1;
        }
    }
    s.counted = counted_decisions(&text);
    s
}

const LOOPS: [(&str, usize, usize); 3] = [
    ("swe-agent/katy.traj", 4, 3),
    ("claude-code/energy-ac-optimal-power-flow.jsonl", 4, 6),
    ("swe-agent/replay__marshmallow-code__marshmallow-1867__function_calling__install-1/marshmallow-code__marshmallow-1867.traj", 4, 4),
];

fn long_session() -> Option<Transcript> {
    common::six_claude_code_logs()
}

/// Issue 13 (finding 5), Y-3, Y-6: over a loop of forced compactions of real
/// transcripts, deterministic summary, no memory hook: every decision and finding
/// sentence of the agent is still verbatim in the transcript after the last fold (the
/// short logs), and in a session whose decisions outgrow the summary budget none is
/// dropped silently (each one verbatim or counted by a §7 marker) and each one dropped is
/// in the memory records (memory projection on). Before the carry (the earlier summary
/// quoted whole, clipped first; a rollup keeping the newest narrative text) katy kept 4
/// of 19 and the marshmallow run 4 of 15.
#[test]
fn issue13_y3_y6_decisions_survive_a_loop_of_folds_and_rollups() {
    for (which, head, step) in LOOPS {
        let Some(full) = load(which) else { return };
        let s = fold_loop(&full, head, step, 16_000, true);
        assert!(s.compactions >= 5, "{which}: {s:?}");
        assert_eq!(s.kept, s.decisions, "{which}: decisions lost over {} folds: {s:?}", s.compactions);
    }
    let Some(long) = long_session() else { return };
    let s = fold_loop(&long, 4, 6, 16_000, true);
    eprintln!("long session: {s:?}");
    assert!(s.rollups > 0, "{s:?}");
    assert!(s.kept + s.counted >= s.decisions, "decisions dropped silently: {s:?}");
    assert_eq!(s.kept + s.in_memory, s.decisions, "a dropped decision is not in memory: {s:?}");
    // Y-3, N-5: the merged handoff of a rollup gives §7 what the files (floor) leave,
    // with an eighth kept for the errors: 58 of 66 kept, as the pasted rollups did.
    // Issue 13 (resolution carried across folds): 57 since a stale unresolved line
    // (`python3 explore_file.py`, run clean after pandas was installed) is resolved; the
    // room it held in the unresolved errors' fifth now holds an older error no call
    // resolved (a Read of a binary .xlsx), one decision fewer (at a 32k window 59 -> 61)
    assert!(s.kept >= 57, "decisions kept over 40 folds and 30 rollups fell: {s:?}");
}

/// Prints the survival figures of the loops (run with `--ignored --nocapture`).
#[test]
#[ignore]
fn print_decision_survival() {
    for (which, head, step) in LOOPS {
        let Some(full) = load(which) else { return };
        for window in [16_000u64, 32_000] {
            let s = fold_loop(&full, head, step, window, true);
            println!("{which} window {window}: {s:?} kept {:.1}%", 100.0 * s.kept as f64 / s.decisions.max(1) as f64);
        }
    }
    let Some(long) = long_session() else { return };
    for window in [16_000u64, 32_000] {
        let s = fold_loop(&long, 4, 6, window, true);
        println!("six claude-code logs window {window}: {s:?} kept {:.1}%", 100.0 * s.kept as f64 / s.decisions.max(1) as f64);
    }
}

#[test]
#[ignore]
fn print_loop_summary() {
    let Some(full) = load(LOOPS[0].0) else { return };
    let mut config = Config::preset(Profile::Default);
    config.context_window = 16_000;
    let mut state = SessionState::default();
    let mut cur = full.clone();
    cur.messages.truncate(4);
    let mut next = 4;
    while next < full.messages.len() {
        let end = (next + 3).min(full.messages.len());
        cur.messages.extend(full.messages[next..end].iter().cloned());
        next = end;
        let mut job = Job::start(config.clone(), state.clone(), cur.clone(), JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
        let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).expect("job runs");
        if o.status == "compacted" {
            state = o.state.clone();
            cur = o.transcript;
        }
    }
    for m in &cur.messages {
        println!("----- {:?} summary={}\n{}", m.role, m.is_summary(), m.text());
    }
}

/// Issue 13 §5, Y-6: the line of a tool output that says why a run failed (a failing
/// test's assertion, the exception a traceback ends with) is named under "errors and how
/// they were resolved" with the edit that fixed it, whatever the exit status says and
/// with no memory hook; the first line of the output (a banner) is not the cause.
#[test]
fn issue13_y6_root_cause_line_and_its_fix_in_the_errors_section() {
    use context_compactor::config::Config;
    use serde_json::json;
    let pytest_out = "============================= test session starts ==============================\nplatform linux -- Python 3.11\ncollected 3 items\n\ntests/test_dates.py .F.\n\n=================================== FAILURES ===================================\n___________________________ test_parse_iso ___________________________\n\n    def test_parse_iso():\n>       assert parse('2024-01-02').day == 2\nE       AssertionError: assert 1 == 2\n\ntests/test_dates.py:9: AssertionError\n=========================== 1 failed, 2 passed in 0.12s ===========================\nExit code: 1";
    let traceback_out = "Traceback (most recent call last):\n  File \"/repo/reproduce.py\", line 3, in <module>\n    print(load(cfg))\n  File \"/repo/src/loader.py\", line 40, in load\n    return cfg['name']\nKeyError: 'name'";
    let pad: String = (0..60).map(|i| format!("tests/test_dates.py::test_case_{i} PASSED\n")).collect();
    let pytest_out = pytest_out.replacen("collected 3 items\n", &format!("collected 3 items\n{pad}"), 1);
    let mut later: Vec<serde_json::Value> = Vec::new();
    for k in 0..6 {
        later.push(json!({ "role": "assistant", "content": "", "tool_calls": [{ "id": format!("l{k}"), "type": "function", "function": { "name": "Bash", "arguments": format!("{{\"command\":\"ls src/part{k}\"}}") } }] }));
        later.push(json!({ "role": "tool", "tool_call_id": format!("l{k}"), "content": pad.replace("tests/test_dates.py::", "src/") }));
    }
    let mut rows = json!([
        { "role": "system", "content": "sys" },
        { "role": "user", "content": "Fix the date parser so the tests pass." },
        { "role": "assistant", "content": "", "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "Bash", "arguments": "{\"command\":\"pytest tests/test_dates.py\"}" } }] },
        { "role": "tool", "tool_call_id": "c1", "content": pytest_out },
        { "role": "assistant", "content": "", "tool_calls": [{ "id": "c2", "type": "function", "function": { "name": "Edit", "arguments": "{\"file_path\":\"src/dates.py\",\"old_string\":\"day - 1\",\"new_string\":\"day\"}" } }] },
        { "role": "tool", "tool_call_id": "c2", "content": "The file src/dates.py has been updated." },
        { "role": "assistant", "content": "", "tool_calls": [{ "id": "c3", "type": "function", "function": { "name": "Bash", "arguments": "{\"command\":\"pytest tests/test_dates.py\"}" } }] },
        { "role": "tool", "tool_call_id": "c3", "content": "collected 3 items\n\ntests/test_dates.py ...\n\n3 passed in 0.10s" },
        { "role": "assistant", "content": "", "tool_calls": [{ "id": "c4", "type": "function", "function": { "name": "Bash", "arguments": "{\"command\":\"python reproduce.py\"}" } }] },
        { "role": "tool", "tool_call_id": "c4", "content": traceback_out },
    ]);
    rows.as_array_mut().unwrap().extend(later);
    rows.as_array_mut().unwrap().push(json!({ "role": "user", "content": "Thanks. Now also check the loader." }));
    rows.as_array_mut().unwrap().push(json!({ "role": "assistant", "content": "Looking at the loader next." }));
    let t = decode(context_compactor::formats::Format::OpenaiChat, rows).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(true);
    let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let summary = o.rewrite.and_then(|r| r.summary).map(|s| s.text).unwrap_or_default();
    let at = summary.find("[§5 ").unwrap_or_else(|| panic!("a §5 section:\n{summary}"));
    let s5 = &summary[at..summary[at + 4..].find("\n[§").map_or(summary.len(), |e| at + 4 + e)];
    let pytest = s5.lines().find(|l| l.contains("[c1]")).unwrap_or_else(|| panic!("the failed pytest run in §5:\n{summary}"));
    assert!(pytest.contains("E       AssertionError: assert 1 == 2"), "the assertion is the cause:\n{s5}");
    assert!(pytest.contains("after edits to src/dates.py (Edit c2), a later Bash call (c3) succeeded"), "the fix:\n{s5}");
    // exit 0 / no exit status, but a traceback: an error all the same
    let repro = s5.lines().find(|l| l.contains("[c4]")).unwrap_or_else(|| panic!("the traceback run in §5:\n{s5}"));
    // Y-5: the exception names the failed call itself (error_line), not the traceback's header
    assert!(repro.contains("failed: KeyError: 'name'") && !repro.contains("Traceback") && repro.contains("not resolved in the folded rows"), "{repro}");
}
