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
        "memory": o.memory.as_ref().map(|b| json!({
            "session": b.session,
            "projected": b.records.len(),
            "ids": b.records.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
            "records": b.records,
        })),
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
    for p in common::shared_transcript_files().map(|(_, files)| files).unwrap_or_default() {
        let text = std::fs::read_to_string(&p).unwrap();
        let (format, doc) = formats::import::import_any("auto", &text).expect("import");
        docs.push((p.display().to_string(), format, doc));
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

/// Issue 15 / M-1: by default the result names the projected records (count and ids)
/// and does not copy them; `memoryRecords: "result"` (`MemoryRecords::Result`) carries
/// them as data. Everything else in the text is the same.
#[test]
fn m1_result_names_projected_records_without_copying_them_by_default() {
    use context_compactor::output::{MemoryRecords, ResultJson};
    let mut rows = vec![json!({ "role": "system", "content": "You are a helpful agent." })];
    for i in 0..40 {
        rows.push(json!({ "role": "user", "content": format!("question {i}: what is the status of order {i}? {}", "detail ".repeat(60)) }));
        rows.push(json!({ "role": "assistant", "content": format!("Order {i} has shipped via carrier {i}. {}", "note ".repeat(60)) }));
    }
    let config = Config::from_options(&json!({ "profile": "default", "contextWindow": 4_000 })).expect("config");
    let o = run(formats::Format::OpenaiChat, Value::Array(rows), config, SessionState::default(), true, true);
    let batch = o.memory.as_ref().expect("a committed rewrite projects a batch");
    assert!(batch.records.len() > 5, "records projected: {}", batch.records.len());
    let ids: Vec<String> = batch.records.iter().map(|r| r.id.clone()).collect();

    let lean: Value = serde_json::from_str(&ResultJson { outcome: &o, records: MemoryRecords::Ids }.to_pieces(64).concat()).unwrap();
    assert_eq!(lean["memory"], json!({ "session": batch.session, "projected": ids.len(), "ids": ids }));
    let full: Value = serde_json::from_str(&ResultJson { outcome: &o, records: MemoryRecords::Result }.to_pieces(64).concat()).unwrap();
    assert_eq!(full["memory"]["records"], serde_json::to_value(&batch.records).unwrap());
    assert_eq!(full["memory"]["ids"], lean["memory"]["ids"]);
    // only the memory key differs
    let (mut a, mut b) = (lean.clone(), full.clone());
    a.as_object_mut().unwrap().remove("memory");
    b.as_object_mut().unwrap().remove("memory");
    assert_eq!(a, b);
    assert!(serde_json::to_string(&lean).unwrap().len() < serde_json::to_string(&full).unwrap().len());

    assert_eq!(MemoryRecords::from_option(None).unwrap(), MemoryRecords::Ids);
    assert_eq!(MemoryRecords::from_option(Some("result")).unwrap(), MemoryRecords::Result);
    assert_eq!(MemoryRecords::from_option(Some("all")).unwrap_err().code, ErrorCode::InvalidConfig);
}
