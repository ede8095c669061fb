//! Issue 13 follow-up (S-6, C-8, N-4): a small earlier turn before one long open run
//! over the window. Stage 1 (the rows before the run) cannot reach the target, so the
//! job falls back to stage 2 in the same job; with `inRunStage2` off the outcome names
//! the open run instead of a bare `no_reduction`.

mod common;
use common::*;
use context_compactor::config::{Config, Profile};
use context_compactor::formats::{validate_pairing, Format};
use context_compactor::select::Stage;
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

const REQUEST: &str = "Audit every module of the parser for panics and report each one with its path.";

/// [system, short user, short answer, run request, 14 x (call, large result)].
fn repro() -> Vec<Value> {
    let mut d = vec![
        json!({"role":"system","content":"You are a careful agent."}),
        json!({"role":"user","content":"hi, which repo is this?"}),
        json!({"role":"assistant","content":"It is the parser repo."}),
        json!({"role":"user","content":REQUEST}),
    ];
    for k in 1..=14 {
        let id = format!("c{k}");
        d.push(json!({"role":"assistant","content":null,"tool_calls":[{"id":id,"type":"function","function":{"name":"read_file","arguments":format!("{{\"path\":\"src/m{k}.rs\"}}")}}]}));
        d.push(json!({"role":"tool","tool_call_id":id,"content":format!("src/m{k}.rs contents: {}", format!("line {k} of code; ").repeat(500))}));
    }
    d
}

fn config(stage2: bool) -> Config {
    let mut c = Config::preset(Profile::Default);
    c.context_window = 20_000;
    c.in_run_stage2 = stage2;
    c
}

fn text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

#[test]
fn s6_c8_stuck_run_falls_back_to_stage2_under_the_window() {
    let d = repro();
    let (o, reqs) = compact_with(Format::OpenaiChat, Value::Array(d.clone()), config(true), SessionState::default(), Signals::default(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let rw = o.rewrite.as_ref().expect("rewrite");
    assert_eq!(rw.stage, Stage::InRun, "stage 2 in the same job");
    assert_eq!(reqs.len(), 1, "one summary call");
    // under the window (and the threshold)
    assert!(o.after.estimated_tokens < 20_000, "after {:?}", o.after);
    assert!(o.after.estimated_tokens < o.before.estimated_tokens);
    assert!(o.over_window.is_none());
    validate_pairing(&o.transcript).expect("pairing intact");
    let m = out_messages(&o);
    // the run's request verbatim
    assert!(m.iter().any(|v| text(v) == text(&d[3])), "run request verbatim");
    // the newest exchange verbatim, last
    let n = m.len();
    assert_eq!(text(&m[n - 2]), text(&d[d.len() - 2]));
    assert_eq!(text(&m[n - 1]), text(&d[d.len() - 1]));
    // the summary present, carrying the earlier turn, and the ledger of folded calls (Y-5)
    let summary = m.iter().map(text).find(|s| s.contains("SUMMARY(")).expect("summary present");
    assert!(summary.contains("already run"), "folded-call ledger: {summary}");
    assert!(!m.iter().any(|v| text(v) == text(&d[1])), "earlier turn folded");
    assert!(o.events.iter().any(|e| text(&serde_json::to_value(e).unwrap_or_default()).contains("stage1_insufficient")));
}

#[test]
fn s6_stuck_run_with_stage2_off_names_the_open_run() {
    let d = repro();
    let (o, _) = compact_with(Format::OpenaiChat, Value::Array(d), config(false), SessionState::default(), Signals::default(), fake_summary);
    assert_ne!(o.status, "compacted");
    assert!(o.reason.contains("open_run_not_folded"), "{}", o.reason);
    assert!(o.reason.contains("inRunStage2 is off"), "{}", o.reason);
    assert!(o.reason.contains("offset 3"), "{}", o.reason);
    let ev = o.events.iter().map(|e| text(&serde_json::to_value(e).unwrap_or_default())).find(|e| e.contains("open_run_not_folded")).expect("warning");
    assert!(ev.contains("\"runStart\":3"), "{ev}");
}

#[test]
fn s6_stage_one_kept_when_it_reaches_the_target() {
    // a large earlier turn: folding it alone gets under the target, so stage 1 stays
    let mut d = repro();
    d.truncate(4 + 2 * 3);
    d[2] = json!({"role":"assistant","content": format!("It is the parser repo. {}", "detail ".repeat(9000))});
    let (o, _) = compact_with(Format::OpenaiChat, Value::Array(d), config(true), SessionState::default(), Signals::default(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(o.rewrite.as_ref().map(|r| r.stage), Some(Stage::BeforeRun));
}

// ---- the breaker (S-6, issue 13): a fold that cannot shrink the transcript is not paid for

/// Provider usage near the 20,000-token window: every turn of the run is over the target.
fn near_window() -> Signals {
    Signals { usage: Some(json!({"prompt_tokens": 19_000, "completion_tokens": 100, "total_tokens": 19_100})), ..Signals::default() }
}

/// Round `k` of the run: a `read_file` call and its result (`lines` lines of code).
fn read_round(k: usize, lines: usize) -> [Value; 2] {
    let id = format!("c{k}");
    [
        json!({"role":"assistant","content":null,"tool_calls":[{"id":id,"type":"function","function":{"name":"read_file","arguments":format!("{{\"path\":\"src/m{k}.rs\"}}")}}]}),
        json!({"role":"tool","tool_call_id":id,"content":format!("src/m{k}.rs contents: {}", format!("line {k} of code; ").repeat(lines))}),
    ]
}

/// Runs `turns` turns of a growing run from `head` (the rows up to and with the run's
/// request): each turn appends a round (the first one huge) and asks for a compaction
/// under `near_window`, the state carried over, a committed rewrite replacing the
/// transcript. Returns every outcome and the summarizer calls made, counted by the
/// callback.
fn stuck_turns(head: Vec<Value>, config: Config, turns: usize) -> (Vec<context_compactor::engine::Outcome>, usize) {
    let calls = std::cell::Cell::new(0usize);
    let counting = |r: &context_compactor::summarize::SummarizeRequest| {
        calls.set(calls.get() + 1);
        fake_summary(r)
    };
    let mut d = head;
    let mut state = SessionState::default();
    let mut outs = Vec::new();
    for k in 1..=turns {
        d.extend(read_round(k, if k == 1 { 4_000 } else { 100 }));
        let (o, _) = compact_with(Format::OpenaiChat, Value::Array(d.clone()), config.clone(), state, near_window(), counting);
        state = o.state.clone();
        if o.status == "compacted" {
            d = out_messages(&o);
        }
        outs.push(o);
    }
    (outs, calls.get())
}

/// [system, earlier summary, a short exchange, the run's request].
fn stuck_head() -> Vec<Value> {
    vec![
        json!({"role":"system","content":"You are a careful agent."}),
        json!({"role":"user","content":"SUMMARY of the earlier turns: the repo is the parser.","summary_level":1}),
        json!({"role":"user","content":"hi, which repo is this?"}),
        json!({"role":"assistant","content":"It is the parser repo."}),
        json!({"role":"user","content":REQUEST}),
    ]
}

#[test]
fn s6_e2_stuck_run_with_stage2_off_pays_no_summarizer_call_per_turn() {
    // the rows before the run are the earlier summary and one short exchange: a summary
    // of the exchange is bigger than the exchange, so no turn's rewrite can shrink
    let (outs, calls) = stuck_turns(stuck_head(), config(false), 6);
    let attempts: Vec<&context_compactor::engine::Outcome> = outs.iter().filter(|o| o.reason.starts_with("no_reduction")).collect();
    assert!(attempts.len() >= 3, "turns that got as far as the fold: {:?}", outs.iter().map(|o| o.reason.clone()).collect::<Vec<_>>());
    assert_eq!(calls, 0, "no summarizer call for a fold that cannot shrink the transcript");
    for o in &attempts {
        assert_eq!(o.status, "skipped");
        assert!(o.reason.contains("no summarizer call was made"), "{}", o.reason);
        assert!(o.reason.contains("the 2 folded rows"), "{}", o.reason);
        assert!(o.reason.contains("open_run_not_folded: the open run (offset 4"), "{}", o.reason);
        assert!(o.reason.contains("inRunStage2 is off"), "{}", o.reason);
        assert!(o.rewrite.is_none());
        let ev = o.events.iter().map(|e| text(&serde_json::to_value(e).unwrap_or_default())).find(|e| e.contains("open_run_not_folded")).expect("warning");
        assert!(ev.contains("\"runStart\":4"), "{ev}");
        // C-5: recorded as an attempt that found no reduction
        assert_eq!(o.state.cadence.last_failure.as_deref(), Some("no_reduction"));
    }
    assert!(outs.iter().all(|o| o.status != "compacted"), "nothing committed");
}

#[test]
fn s6_e2_one_huge_round_with_stage2_on_pays_nothing_until_a_round_can_fold() {
    // stage 2 on, the run's one (huge) round: stage 2 has nothing to fold, stage 1 only
    // the short exchange; once a second round comes, stage 2 folds the first (that helps)
    let head: Vec<Value> = stuck_head().into_iter().filter(|m| m.get("summary_level").is_none()).collect();
    let (outs, calls) = stuck_turns(head, config(true), 3);
    assert_eq!(outs[0].status, "skipped");
    assert!(outs[0].reason.contains("no summarizer call was made"), "{}", outs[0].reason);
    assert!(outs[0].reason.contains("the open run has no completed round that can be folded"), "{}", outs[0].reason);
    let compacted: Vec<&context_compactor::engine::Outcome> = outs.iter().filter(|o| o.status == "compacted").collect();
    assert_eq!(compacted.len(), 1, "{:?}", outs.iter().map(|o| o.reason.clone()).collect::<Vec<_>>());
    assert_eq!(compacted[0].rewrite.as_ref().map(|r| r.stage), Some(Stage::InRun));
    assert_eq!(calls, 1, "one call: the fold that helps");
    validate_pairing(&compacted[0].transcript).expect("pairing intact");
}

#[test]
fn s6_e2_a_stuck_fold_of_earlier_summaries_only_is_not_summarized() {
    // a pinned row before the earlier summary: the rows before the run that can fold are
    // that summary alone, and a summary of it only replaces it
    let mut head = stuck_head();
    head.drain(2..4);
    head.insert(1, json!({"role":"user","content":"Pinned: the parser lives in src/.","pinned":true}));
    let (outs, calls) = stuck_turns(head, config(false), 4);
    assert_eq!(calls, 0);
    let skipped: Vec<&context_compactor::engine::Outcome> = outs.iter().filter(|o| o.reason.starts_with("no_reduction")).collect();
    assert!(!skipped.is_empty(), "{:?}", outs.iter().map(|o| o.reason.clone()).collect::<Vec<_>>());
    for o in skipped {
        assert!(o.reason.contains("the fold holds only earlier summaries (1 rows"), "{}", o.reason);
        assert!(o.reason.contains("open_run_not_folded"), "{}", o.reason);
    }
}

#[test]
fn s6_e2_a_stuck_fold_that_still_shrinks_the_transcript_is_summarized() {
    // the earlier exchange is bigger than its summary would be, though folding it cannot
    // reach the target: the summarizer is asked and the rewrite commits, as before
    let mut head = stuck_head();
    head[3] = json!({"role":"assistant","content": format!("It is the parser repo. {}", "detail ".repeat(400))});
    let (outs, calls) = stuck_turns(head, config(false), 1);
    assert_eq!(calls, 1);
    assert_eq!(outs[0].status, "compacted", "{}", outs[0].reason);
    assert_eq!(outs[0].rewrite.as_ref().map(|r| r.stage), Some(Stage::BeforeRun));
    assert!(outs[0].events.iter().any(|e| text(&serde_json::to_value(e).unwrap_or_default()).contains("open_run_not_folded")), "the run is still named");
}
