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
