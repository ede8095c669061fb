//! The streamed result text (`Outcome::to_json_string`, issue "Performance") is byte for
//! byte the text of the result `Value` built field by field (J-5: same bytes in every
//! runtime; F-3 / F-4: stored view with provenance keys, request view without).
mod common;

use common::{fake_summary, shared_dir};
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome};
use context_compactor::error::ErrorCode;
use context_compactor::formats::{self, View};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use context_compactor::{Config, Profile};
use serde_json::{json, Value};

/// The result object as it was built before streaming: a `Value` tree from the public
/// encoders.
fn reference(o: &Outcome) -> Value {
    json!({
        "status": o.status,
        "reason": o.reason,
        "decision": o.decision,
        "transcript": formats::encode(&o.transcript, View::Stored),
        "request": context_compactor::session::request_view(&o.transcript, &o.state),
        "rewrite": o.rewrite,
        "before": o.before,
        "after": o.after,
        "validation": { "ok": o.status != "failed" || o.error.as_ref().is_none_or(|e| e.code != ErrorCode::InvalidRewrite), "checks": o.checks },
        "overWindow": o.over_window,
        "state": o.state,
        "spend": o.state.spend,
        "events": o.events,
        "error": o.error,
        "memory": o.memory,
    })
}

fn check(o: &Outcome, what: &str) {
    let want = serde_json::to_string(&reference(o)).unwrap();
    let got = o.to_json_string();
    assert!(got == want, "{what}: streamed result differs (len {} vs {})", got.len(), want.len());
    assert_eq!(o.to_json(), reference(o), "{what}: to_json differs");
}

fn run(format: formats::Format, doc: Value, config: Config, state: SessionState, force: bool, summarizer: bool) -> Outcome {
    let t = formats::decode(format, doc).expect("decode");
    let signals = Signals { force, ..Signals::default() };
    let mut job = Job::start(config, state, t, JobOptions { signals, has_summarizer: summarizer });
    run_sync(&mut job, fake_summary).expect("job runs")
}

#[test]
fn j5_streamed_result_matches_value_tree_on_real_transcripts_and_cases() {
    let Some(dir) = shared_dir() else { return };
    let mut docs: Vec<(String, formats::Format, Value)> = Vec::new();
    for sub in ["swe-agent", "tau-bench", "glaive", "claude-code"] {
        let mut stack = vec![dir.join("transcripts").join(sub)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "traj" || x == "json" || x == "jsonl") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    let (format, doc) = formats::import::import_any("auto", &text).expect("import");
                    docs.push((p.display().to_string(), format, doc));
                }
            }
        }
    }
    for e in std::fs::read_dir(dir.join("cases")).unwrap().flatten() {
        let file = e.file_name().to_string_lossy().to_string();
        let Some(name) = file.strip_suffix(".json") else { continue };
        if let Some(c) = common::load_case(name) {
            docs.push((name.to_string(), c.format, c.doc));
        }
    }
    assert!(docs.len() >= 10, "too few inputs: {}", docs.len());
    for (name, format, doc) in docs {
        for profile in [Profile::Default, Profile::Kerkov, Profile::Meerkat] {
            for summarizer in [false, true] {
                let first = run(format, doc.clone(), Config::preset(profile), SessionState::default(), true, summarizer);
                check(&first, &format!("{name} {profile:?} first"));
                // a second pass over the stored view: provenance keys on the rows, findings in the state
                let stored = formats::encode(&first.transcript, View::Stored);
                let mut state = first.state.clone();
                state.findings.push("F-1: the ledger line".into());
                let second = run(format, stored, Config::preset(profile), state, true, summarizer);
                check(&second, &format!("{name} {profile:?} second"));
            }
        }
    }
}
