//! A rollup of deterministic handoff summaries is ONE handoff whose sections are merged
//! (adversarial report 3, findings 2 and 4; Y-3, Y-9, N-5, issue 13): over long loops of
//! compactions the file paths of the folded calls stay in the live transcript, every
//! summary holds one handoff header and one "Next step" section, starts with its header
//! (not mid-word), nests no "Earlier summary folded with these rows" quote, and names no
//! `message #N` row (those rows are gone from the transcript the summary lives in).

mod common;
use context_compactor::config::{Config, Profile};
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, decode, Format};
use context_compactor::state::SessionState;
use context_compactor::summarize::{narrative_part, Facts};
use context_compactor::transcript::Transcript;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

/// What is wrong with one summary's narrative (empty when it reads as one handoff).
fn readability_faults(text: &str) -> Vec<String> {
    let n = narrative_part(text);
    let mut out = Vec::new();
    let headers = n.matches("Handoff summary (deterministic").count();
    if headers != 1 {
        out.push(format!("{headers} handoff headers"));
    }
    let nexts = n.matches("[§9 Next step]").count();
    if nexts > 1 {
        out.push(format!("{nexts} next-step sections"));
    }
    if !n.starts_with("Handoff summary (deterministic") {
        out.push(format!("starts with {:?}", n.get(..40.min(n.len())).unwrap_or("")));
    }
    if n.contains("Earlier summary folded with these rows") {
        out.push("nests an earlier summary".into());
    }
    if n.contains("message #") {
        out.push("names a message # row".into());
    }
    out
}

#[derive(Debug, Default)]
struct Figures {
    compactions: usize,
    rollups: usize,
    paths: usize,
    paths_kept: usize,
    faults: Vec<String>,
}

/// Report finding 2's loop (repro 01-long-loop): `turns` turns of a request with a
/// constraint sentence, a `read_file` call on `/repo/src/mod_<i>.rs`, its 60-line result
/// and an answer, compacted whenever the trigger says so (window `window`), built-in
/// summary, the folded user text projected into the result's records.
fn long_loop(turns: usize, window: u64) -> Figures {
    let config = Config::from_options(&json!({ "contextWindow": window })).unwrap();
    let mut state = SessionState::default();
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "You are a coding agent." })];
    let body = |i: usize| (0..60).map(|k| format!("line {k} of module {i}: fn f{k}() {{}}")).collect::<Vec<_>>().join("\n");
    let mut f = Figures { paths: turns, ..Figures::default() };
    for i in 1..=turns {
        rows.push(json!({ "role": "user", "content": format!("Turn {i}: my favourite colour today is colour-{i}. You must never edit vendor/lib_{i}.c without asking.") }));
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read_file", "arguments": json!({ "path": format!("/repo/src/mod_{i}.rs") }).to_string() } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": body(i) }));
        rows.push(json!({ "role": "assistant", "content": format!("Finding {i}: the bug is in parse_{i}. Decision {i}: we will use sqlite for cache {i}.") }));
        let t = decode(Format::OpenaiChat, Value::Array(rows.clone())).unwrap();
        let mut job = Job::start(config.clone(), state.clone(), t, JobOptions { signals: Signals::default(), has_summarizer: false }).with_user_text_only_memory(true);
        let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).expect("job runs");
        assert_ne!(o.status, "failed", "turn {i}: {}", o.reason);
        state = o.state.clone();
        if o.status == "compacted" {
            f.compactions += 1;
            f.rollups += o.rewrite.as_ref().map_or(0, |r| r.rollups.len());
            for m in o.transcript.messages.iter().filter(|m| m.is_summary()) {
                for fault in readability_faults(&m.text()) {
                    f.faults.push(format!("turn {i}: {fault}"));
                }
            }
            rows = match formats::encode(&o.transcript, formats::View::Stored) {
                Value::Array(a) => a,
                other => panic!("openai-chat encodes to an array: {other}"),
            };
        }
    }
    let live = serde_json::to_string(&rows).unwrap();
    f.paths_kept = (1..=turns).filter(|i| live.contains(&format!("/repo/src/mod_{i}.rs"))).count();
    f
}

/// N-5, Y-3 (finding 2): before the merge 5 of 60 paths were left in the live transcript
/// after 13 rollups (the rollup clipped its oldest member's §3 from the front); now every
/// path is, and every summary reads as one handoff (finding 4).
#[test]
fn n5_y3_y9_paths_kept_and_one_handoff_per_rollup_over_60_turns() {
    let f = long_loop(60, 6_000);
    eprintln!("60 turns, window 6000: {} compactions, {} rollups, {} of {} paths kept", f.compactions, f.rollups, f.paths_kept, f.paths);
    assert!(f.rollups >= 5, "{f:?}");
    assert_eq!(f.paths_kept, f.paths, "paths lost: {f:?}");
    assert!(f.faults.is_empty(), "{:?}", f.faults);
}

fn load(which: &str) -> Option<Transcript> {
    common::load_shared(which)
}

/// A real transcript fed `step` rows at a time, each step compacted (forced), built-in
/// summary: the paths its calls touched that are in the final transcript, or counted by a
/// `[clipped: N more files ...]` marker.
fn real_loop(full: &Transcript, step: usize, window: u64) -> (Figures, usize) {
    let mut config = Config::preset(Profile::Default);
    config.context_window = window;
    let mut f = Figures::default();
    let cur = common::forced_fold_loop(full, 4, step, &config, |o| {
        f.compactions += 1;
        f.rollups += o.rewrite.as_ref().map_or(0, |r| r.rollups.len());
        for m in o.transcript.messages.iter().filter(|m| m.is_summary()) {
            for fault in readability_faults(&m.text()) {
                f.faults.push(format!("compaction {}: {fault}", f.compactions));
            }
        }
    });
    let rows: Vec<(usize, &context_compactor::transcript::Message)> = full.messages.iter().enumerate().collect();
    let facts = Facts::read(&rows, &|_, _, _| None);
    let text: String = cur.messages.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    f.paths = facts.files.len();
    f.paths_kept = facts.files.iter().filter(|u| text.contains(u.path.as_str())).count();
    let counted: usize = text
        .lines()
        .filter(|l| l.starts_with("[clipped: ") && l.contains(" more files not shown"))
        .filter_map(|l| l.trim_start_matches("[clipped: ").split(' ').next().and_then(|n| n.parse::<usize>().ok()))
        .sum();
    (f, counted)
}

fn long_session() -> Option<Transcript> {
    common::six_claude_code_logs()
}

/// N-5, Y-3, Y-9 over real transcripts: every path a folded call touched is in the live
/// transcript after the loop, and every summary reads as one handoff. Before the merge
/// (the earlier summary quoted in §1 and clipped, rollups pasted) katy kept 1 of its 3
/// paths over 11 folds.
#[test]
fn n5_y3_y9_real_transcripts_keep_their_paths_through_folds_and_rollups() {
    let mut loops: Vec<(String, Transcript, usize, u64)> = Vec::new();
    for (which, step, window) in [("swe-agent/katy.traj", 3usize, 16_000u64), ("claude-code/energy-ac-optimal-power-flow.jsonl", 6, 16_000), ("claude-code/protein-expression-analysis.jsonl", 6, 8_000)] {
        let Some(full) = load(which) else { return };
        loops.push((which.to_string(), full, step, window));
    }
    let Some(long) = long_session() else { return };
    loops.push(("six claude-code logs".into(), long, 6, 16_000));
    for (which, full, step, window) in loops {
        let (f, counted) = real_loop(&full, step, window);
        eprintln!("{which}: {} compactions, {} rollups, {} of {} paths kept, {counted} counted", f.compactions, f.rollups, f.paths_kept, f.paths);
        assert!(f.compactions >= 5, "{which}: {f:?}");
        assert_eq!(f.paths_kept, f.paths, "{which}: paths lost: {f:?} counted {counted}");
        assert!(f.faults.is_empty(), "{which}: {:?}", f.faults);
    }
}

/// C-8, N-4 (break3 finding 8, repro 26-growth): a rewrite still over the threshold
/// reports a floor that holds the constraint sentences its summary block carries
/// verbatim (N-1). Before, `floorTokens` was the trigger's floor of the source rows
/// (643 tokens while ~2,600 tokens of carried constraints sat in the summary).
#[test]
fn c8_n4_over_window_floor_counts_the_carried_constraint_sentences() {
    let config = Config::from_options(&json!({ "contextWindow": 6_000 })).unwrap();
    let mut state = SessionState::default();
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "You are a coding agent." })];
    let body = |i: usize| (0..60).map(|k| format!("line {k} of module {i}: fn f{k}() {{}}")).collect::<Vec<_>>().join("\n");
    let mut checked = 0usize;
    for i in 1..=140 {
        rows.push(json!({ "role": "user", "content": format!("Turn {i}: the colour is colour-{i}. You must never edit vendor/lib_{i}.c without asking.") }));
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read_file", "arguments": json!({ "path": format!("/repo/src/mod_{i}.rs") }).to_string() } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": body(i) }));
        rows.push(json!({ "role": "assistant", "content": format!("Done {i}.") }));
        let t = decode(Format::OpenaiChat, Value::Array(rows.clone())).unwrap();
        let mut job = Job::start(config.clone(), state.clone(), t, JobOptions { signals: Signals::default(), has_summarizer: false });
        let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).expect("job runs");
        state = o.state.clone();
        if o.status != "compacted" {
            continue;
        }
        if let Some(ow) = &o.over_window {
            let carried: usize = o
                .transcript
                .messages
                .iter()
                .filter(|m| m.is_summary())
                .flat_map(|m| context_compactor::summarize::ledger::read_items(context_compactor::summarize::ledger::split_summary(&m.text()).1.unwrap_or("")))
                .filter(|(k, _)| k == "carried constraints")
                .map(|(_, t)| t.len())
                .sum();
            // bytes per token is 4 by default: the floor holds at least the constraints
            assert!(ow.floor_tokens * 4 >= carried as u64, "turn {i}: floor {} tokens, carried constraints {carried} bytes", ow.floor_tokens);
            checked += 1;
        }
        rows = match formats::encode(&o.transcript, formats::View::Stored) {
            Value::Array(a) => a,
            other => panic!("openai-chat encodes to an array: {other}"),
        };
    }
    assert!(checked > 0, "no rewrite was over the threshold: the case does not test the floor");
}

/// The session of the resolution tests: `npm test` fails (t1) and an edit of
/// /repo/src/sum.js fails (e0) early; turns of reads follow; the edit is made (e1), and
/// `npm test` passes (t2) turns later; a heredoc run fails (h1) and a different heredoc
/// with the same first line passes (h2).
fn fixed_later_session() -> Vec<Value> {
    use common::{asst, call, result, sys, user};
    let reads = |rows: &mut Vec<Value>, from: usize, to: usize| {
        for k in from..to {
            rows.push(call(&format!("r{k}"), "Read", json!({"file_path": format!("/repo/src/part{k}.js")})));
            rows.push(result(&format!("r{k}"), &(0..30).map(|i| format!("line {i} of part {k}")).collect::<Vec<_>>().join("\n")));
            rows.push(asst(&format!("Finding {k}: part {k} looks fine, the cause is elsewhere.")));
        }
    };
    let mut rows = vec![sys(), user("Make the test suite pass.")];
    rows.push(call("t1", "Bash", json!({"command": "npm test"})));
    rows.push(result("t1", "FAIL src/sum.test.js\n  expected 3, received 4\nTests: 1 failed, 4 passed\nExit code 1"));
    rows.push(call("e0", "Edit", json!({"file_path": "/repo/src/sum.js", "old_string": "a + b + 2", "new_string": "a + b"})));
    rows.push(result("e0", "Error: String to replace not found in file."));
    rows.push(call("h1", "Bash", json!({"command": "python3 << 'EOF'\nimport sum_check\nsum_check.run(strict=True)\nEOF"})));
    rows.push(result("h1", "Traceback (most recent call last):\n  File \"<stdin>\", line 2, in <module>\nValueError: strict mode needs a seed\nExit code 1"));
    reads(&mut rows, 0, 4);
    rows.push(user("Keep going, check the other parts too."));
    reads(&mut rows, 4, 8);
    rows.push(call("e1", "Edit", json!({"file_path": "/repo/src/sum.js", "old_string": "a + b + 1", "new_string": "a + b"})));
    rows.push(result("e1", "The file /repo/src/sum.js has been updated."));
    rows.push(user("Now run the tests again."));
    reads(&mut rows, 8, 10);
    rows.push(call("t2", "Bash", json!({"command": "npm test"})));
    rows.push(result("t2", "PASS src/sum.test.js\nTests: 5 passed\nExit code 0"));
    rows.push(call("h2", "Bash", json!({"command": "python3 << 'EOF'\nprint('hello')\nEOF"})));
    rows.push(result("h2", "hello\nExit code 0"));
    rows.push(user("Good. Tidy up the rest."));
    reads(&mut rows, 10, 16);
    rows.push(user("Last: one more pass over the parts."));
    reads(&mut rows, 16, 20);
    rows.push(asst("All tests pass now."));
    rows
}

/// The §5 line of call `id` in the summaries of `t`.
fn error_line_of(t: &Transcript, id: &str) -> Option<String> {
    let tag = format!("[{id}] ");
    t.messages.iter().filter(|m| m.is_summary()).flat_map(|m| narrative_part(&m.text()).lines().filter(|l| l.starts_with("- ") && l.contains(&tag)).map(str::to_string).collect::<Vec<_>>()).last()
}

/// Issue 13, Y-3, Y-5 (resolution carries across folds): over 11 forced compactions,
/// the early failed `npm test` (t1) and failed edit (e0), carried in earlier summaries
/// as not resolved, are resolved in the final summary by the later `npm test` (t2) and
/// the later edit of the same file (e1), each named, once each; the heredoc run (h1) is
/// not resolved by another heredoc with the same first line (h2). Before, t1 and e0 stayed
/// "not resolved" in every summary (and a fold of two summary rows lost the older one's
/// §3 and §5 whole: t1 and /repo/src/part0.js were gone after the fourth fold).
#[test]
fn issue13_y3_an_error_fixed_folds_later_is_resolved_in_the_final_summary() {
    let full = decode(Format::OpenaiChat, Value::Array(fixed_later_session())).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let mut compactions = 0;
    let mut carried_unresolved = false;
    let cur = common::forced_fold_loop(&full, 4, 4, &config, |o| {
        compactions += 1;
        // t1 reaches a later fold as a carried, unresolved line before t2 comes
        carried_unresolved |= error_line_of(&o.transcript, "t1").is_some_and(|l| l.ends_with("not resolved in the folded rows")) && !o.transcript.messages.iter().any(|m| m.blocks.iter().any(|b| matches!(b, context_compactor::transcript::Block::ToolCall { id, .. } if id == "t1")));
    });
    assert!(compactions >= 3, "{compactions}");
    assert!(carried_unresolved, "t1 was carried unresolved by an earlier summary");
    let all: String = cur.messages.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    let t1 = error_line_of(&cur, "t1").unwrap_or_else(|| panic!("t1 in §5:\n{all}"));
    assert!(t1.starts_with("- Bash `npm test` [t1] failed (exit 1): FAIL src/sum.test.js; resolved: a later Bash call (t2) succeeded"), "{t1}");
    let e0 = error_line_of(&cur, "e0").unwrap_or_else(|| panic!("e0 in §5:\n{all}"));
    assert!(e0.starts_with("- Edit on /repo/src/sum.js [e0] failed: Error: String to replace not found in file.; resolved: a later Edit call (e1) succeeded"), "{e0}");
    let h1 = error_line_of(&cur, "h1").unwrap_or_else(|| panic!("h1 in §5:\n{all}"));
    assert!(h1.starts_with("- Bash `python3 << 'EOF'…` [h1]") && h1.ends_with("; not resolved in the folded rows"), "{h1}");
    for id in ["[t1] ", "[e0] ", "[h1] "] {
        assert_eq!(all.lines().filter(|l| l.starts_with("- ") && l.contains(id) && l.contains("resolved")).count(), 1, "{id} once:\n{all}");
    }
    // N-5: the paths of the oldest folds are still there
    assert!((0..20).all(|k| all.contains(&format!("/repo/src/part{k}.js"))), "{all}");
}

/// Issue 13, Y-3: a rollup of a summary that left an error unresolved and a later one
/// whose fold resolved it ([`Facts::note_summary_errors`]: the later fold reads the
/// summaries left in place) keeps the error once, resolved, naming the call.
#[test]
fn issue13_y3_a_rollup_keeps_the_resolved_line_of_an_error_a_later_member_fixed() {
    use context_compactor::summarize::{handoff_summary, mechanical_merge_in};
    let t = decode(Format::OpenaiChat, Value::Array(fixed_later_session())).unwrap();
    let rows: Vec<(usize, &context_compactor::transcript::Message)> = t.messages.iter().enumerate().collect();
    // member A: the rows up to the first user follow-up (t1, e0, h1 fail there)
    let cut = rows.iter().position(|(_, m)| m.text() == "Keep going, check the other parts too.").unwrap();
    let a = handoff_summary(&Facts::read(&rows[..cut], &|_, _, _| None), 8_192);
    for id in ["t1", "e0", "h1"] {
        assert!(a.lines().any(|l| l.contains(&format!("[{id}] ")) && l.ends_with("; not resolved in the folded rows")), "{id}:\n{a}");
    }
    // member B: the later rows, with A's §5 lines noted as a summary before them
    let mut fb = Facts::read(&rows[cut..], &|_, _, _| None);
    fb.note_summary_errors(cut - 1, &a);
    let b = handoff_summary(&fb, 8_192);
    let s5 = common::section(&b, 5);
    // the edit made between them is named as the fix (the handoff's rule)
    assert!(s5.contains("- Bash `npm test` [t1] failed (exit 1): FAIL src/sum.test.js; resolved: after edits to /repo/src/sum.js (Edit e1), a later Bash call (t2) succeeded"), "{s5}");
    assert!(s5.contains("- Edit on /repo/src/sum.js [e0] failed: Error: String to replace not found in file.; resolved: a later Edit call (e1) succeeded"), "{s5}");
    assert!(!s5.contains("[h1]"), "{s5}");
    // only the calls of rows after the summary resolve its errors
    let mut late = Facts::read(&rows[cut..], &|_, _, _| None);
    late.note_summary_errors(rows.len(), &a);
    assert!(!handoff_summary(&late, 8_192).contains("[t1]"));
    let merged = mechanical_merge_in(&[a, b], 8_192, true);
    let m5 = common::section(&merged, 5);
    for id in ["[t1] ", "[e0] "] {
        let lines: Vec<&str> = m5.lines().filter(|l| l.contains(id)).collect();
        assert_eq!(lines.len(), 1, "{id}:\n{m5}");
        assert!(lines[0].contains("; resolved: ") && lines[0].contains("a later "), "{id}:\n{m5}");
    }
    assert!(m5.lines().any(|l| l.contains("[h1] ") && l.ends_with("; not resolved in the folded rows")), "{m5}");
}
