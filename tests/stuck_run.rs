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
