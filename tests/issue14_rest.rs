//! Issue 14, the items left after the first hardening pass: the live transcript's trust
//! boundary and pairing (adversarial findings), options named in `invalid_config`, the
//! incremental pairing check.

use context_compactor::config::Config;
use context_compactor::formats::{self, Format};
use context_compactor::live::LiveTranscript;
use context_compactor::state::SessionState;
use context_compactor::trigger::{decide, Signals};
use context_compactor::ErrorCode;
use serde_json::{json, Value};

fn config(window: u64) -> Config {
    Config::from_options(&json!({ "profile": "default", "contextWindow": window })).expect("config")
}

fn doc_with_pin() -> Value {
    json!([
        { "role": "system", "content": "You are a helpful agent." },
        { "role": "user", "content": "hello" },
        { "role": "assistant", "content": "x".repeat(20_000), "pinned": true },
        { "role": "user", "content": "next" }
    ])
}

/// The decision `compactor.check` gives: decode, trust pass, decide.
fn whole_check(doc: &Value, config: &Config, state: &SessionState) -> context_compactor::trigger::Decision {
    let mut t = formats::decode(Format::OpenaiChat, doc.clone()).expect("decode");
    context_compactor::trust::apply(&mut t, state, config.max_pinned_bytes);
    decide(&t, config, state, &Signals::default())
}

#[test]
fn y10_i14_live_check_applies_the_trust_boundary_to_pins() {
    let cfg = config(8_000);
    let doc = doc_with_pin();
    let mut live = LiveTranscript::open(cfg.clone(), Format::OpenaiChat, doc.clone()).expect("open");
    let state = SessionState::default();
    let d = live.check(&state, &Signals::default());
    // the self-pinned 20 KB row is not in the floor: the state does not vouch for it
    assert_eq!(d, whole_check(&doc, &cfg, &state));
    assert!(d.floor.protected_tokens < 1_000, "an unconfirmed pin counts nothing: {:?}", d.floor);
    // once the host confirms the pin, the same handle counts it (the pass runs again)
    let pinned_id = live.transcript().messages[2].id.clone();
    let mut confirmed = state.clone();
    context_compactor::trust::pin(&mut confirmed, &pinned_id).expect("pin");
    let d2 = live.check(&confirmed, &Signals::default());
    assert_eq!(d2, whole_check(&doc, &cfg, &confirmed));
    assert!(d2.floor.protected_tokens > 4_000, "a confirmed pin is in the floor: {:?}", d2.floor);
    // and back: the unconfirming state gives the first answer again
    assert_eq!(live.check(&state, &Signals::default()), d);
}

#[test]
fn y10_i14_live_append_of_a_self_pinned_row_is_judged_at_the_next_check() {
    let cfg = config(8_000);
    let mut live = LiveTranscript::open(cfg.clone(), Format::OpenaiChat, json!([{ "role": "user", "content": "hello" }])).expect("open");
    let state = SessionState::default();
    let _ = live.check(&state, &Signals::default());
    live.append(vec![json!({ "role": "assistant", "content": "y".repeat(20_000), "pinned": true }), json!({ "role": "user", "content": "go" })]).expect("append");
    let d = live.check(&state, &Signals::default());
    assert!(d.floor.protected_tokens < 1_000, "{:?}", d.floor);
}

#[test]
fn f5_i14_live_append_refuses_an_orphan_tool_result() {
    let cfg = config(8_000);
    for (format, doc, orphan) in [
        (Format::OpenaiChat, json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": "hello" }]), json!({ "role": "tool", "tool_call_id": "nope", "content": "stray" })),
        (Format::Anthropic, json!({ "messages": [{ "role": "user", "content": "hi" }, { "role": "assistant", "content": "hello" }] }), json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "nope", "content": "stray" }] })),
        (Format::OpenaiResponses, json!({ "input": [{ "role": "user", "content": "hi" }] }), json!({ "type": "function_call_output", "call_id": "nope", "output": "stray" })),
    ] {
        let mut live = LiveTranscript::open(cfg.clone(), format, doc).expect("open");
        let before = live.len();
        let e = live.append(vec![orphan]).expect_err("an orphan result is refused at append");
        assert_eq!(e.code, ErrorCode::UnpairedToolResult, "{}: {e}", format.name());
        assert!(e.message.contains(&format!("message {before}")), "the offset is in the whole transcript: {e}");
        assert_eq!(live.len(), before, "atomic: nothing appended");
        // a call then its result, in two appends, is fine
    }
    let mut live = LiveTranscript::open(cfg, Format::OpenaiChat, json!([{ "role": "user", "content": "hi" }])).expect("open");
    live.append(vec![json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }] })]).expect("call");
    live.append(vec![json!({ "role": "tool", "tool_call_id": "c1", "content": "ok" })]).expect("its result");
    let e = live.append(vec![json!({ "role": "tool", "tool_call_id": "c1", "content": "again" })]).expect_err("a second answer");
    assert_eq!(e.code, ErrorCode::UnpairedToolResult, "{e}");
    live.append(vec![json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": "c2", "type": "function", "function": { "name": "f", "arguments": "{}" } }, { "id": "c3", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }), json!({ "role": "tool", "tool_call_id": "c2", "content": "ok" })]).expect("an open call at the end");
    let e = live.append(vec![json!({ "role": "user", "content": "and?" })]).expect_err("c3 is never answered");
    assert_eq!(e.code, ErrorCode::UnansweredToolCall, "{e}");
}

#[test]
fn f5_i14_open_refuses_a_transcript_breaking_the_pairing_rules() {
    let e = LiveTranscript::open(config(8_000), Format::OpenaiChat, json!([{ "role": "user", "content": "hi" }, { "role": "tool", "tool_call_id": "x", "content": "stray" }])).expect_err("orphan");
    assert_eq!(e.code, ErrorCode::UnpairedToolResult);
}

#[test]
fn f2_i14_incremental_pairing_agrees_with_the_whole_check() {
    // every split point of a few transcripts: valid prefix + rest checked from the split
    let docs = [
        json!([{ "role": "user", "content": "a" }, { "role": "assistant", "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }, { "role": "tool", "tool_call_id": "c1", "content": "r" }, { "role": "tool", "tool_call_id": "c9", "content": "orphan" }]),
        json!([{ "role": "user", "content": "a" }, { "role": "assistant", "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }, { "id": "c2", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }, { "role": "tool", "tool_call_id": "c1", "content": "r" }, { "role": "user", "content": "b" }]),
        json!([{ "role": "user", "content": "a" }, { "role": "assistant", "content": null, "tool_calls": [{ "id": "c1", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }, { "role": "tool", "tool_call_id": "c1", "content": "r" }, { "role": "assistant", "content": "done" }]),
    ];
    for doc in docs {
        let t = formats::decode(Format::OpenaiChat, doc).expect("decode");
        let whole = formats::validate_pairing(&t);
        for split in 0..=t.messages.len() {
            let prefix = context_compactor::Transcript { format: t.format, messages: t.messages[..split].to_vec(), envelope: t.envelope.clone() };
            if formats::validate_pairing(&prefix).is_err() {
                continue;
            }
            assert_eq!(formats::validate_pairing_from(&t, split).map_err(|e| e.code), whole.clone().map_err(|e| e.code), "split at {split}");
        }
    }
}

#[test]
fn i14_invalid_config_names_the_option() {
    for (opts, field) in [
        (json!({ "contextWindow": -5 }), "contextWindow"),
        (json!({ "contextWindow": "5000" }), "contextWindow"),
        (json!({ "thresholdPct": 0.5, "preserveRecentTurns": "three" }), "preserveRecentTurns"),
    ] {
        let e = Config::from_options(&opts).expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidConfig);
        assert!(e.message.contains(&format!("options.{field}:")), "{e}");
    }
}

/// A forced compaction of `doc` with a summarizer that records every request.
fn compact_recording(doc: Value, opts: Value) -> (context_compactor::engine::Outcome, Vec<context_compactor::summarize::SummarizeRequest>) {
    use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
    let config = Config::from_options(&opts).expect("config");
    let t = formats::decode(Format::OpenaiChat, doc).expect("decode");
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true });
    let mut seen = Vec::new();
    let out = run_sync(&mut job, |req| {
        seen.push(req.clone());
        Reply::Summary { text: "Summary.".into(), usage: None }
    })
    .expect("job");
    (out, seen)
}

fn long_doc() -> Value {
    let mut rows = vec![json!({ "role": "system", "content": "You are a careful agent." })];
    for i in 0..8 {
        rows.push(json!({ "role": "user", "content": format!("task {i}") }));
        rows.push(json!({ "role": "assistant", "content": format!("answer {i}: {}", "words ".repeat(150)) }));
    }
    rows.push(json!({ "role": "user", "content": "final" }));
    Value::Array(rows)
}

#[test]
fn y8_i14_a_window_too_small_for_any_row_never_calls_the_summarizer() {
    // summaryMaxOutputTokens (2,048) is over the 1,500-token window: the request would hold no row
    let (out, seen) = compact_recording(long_doc(), json!({ "profile": "default", "contextWindow": 1500, "preserveRecentTurns": 1 }));
    assert!(seen.is_empty(), "no request with nothing to summarize: {:?}", seen.iter().map(|r| &r.messages[0].content).collect::<Vec<_>>());
    let codes: Vec<String> = out.events.iter().filter_map(|e| e.data.get("code").and_then(Value::as_str).map(str::to_string)).collect();
    assert!(codes.iter().any(|c| c == "summarizer_window_too_small"), "{codes:?}");
    assert_eq!(out.status, "compacted", "the deterministic handoff instead: {}", out.reason);
}

#[test]
fn y8_i14_max_output_tokens_never_exceeds_what_the_window_leaves() {
    for window in [3_000u64, 4_000, 6_000, 200_000] {
        let (out, seen) = compact_recording(long_doc(), json!({ "profile": "default", "contextWindow": window, "preserveRecentTurns": 1, "summaryMaxOutputTokens": 2_800 }));
        for r in &seen {
            assert!(!r.messages[0].content.trim().eq("<transcript>\n\n</transcript>"), "never empty");
            assert!(r.max_output_tokens + r.estimated_input_tokens <= window, "window {window}: {} + {}", r.max_output_tokens, r.estimated_input_tokens);
        }
        let clamped = out.events.iter().any(|e| e.data.get("code").and_then(Value::as_str) == Some("max_output_tokens_clamped"));
        assert_eq!(clamped, seen.iter().any(|r| r.max_output_tokens < 2_800), "window {window}: a clamp is said");
    }
}

#[test]
fn e6_i14_handles_of_two_sessions_over_one_store_never_collide() {
    use context_compactor::engine::{run_sync_full, Job, JobOptions, Reply};
    let doc = |who: &str| {
        let mut rows = vec![json!({ "role": "system", "content": "You are a careful agent." })];
        for i in 0..5 {
            rows.push(json!({ "role": "user", "content": format!("task {i}") }));
            rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read", "arguments": "{}" } }] }));
            rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": format!("{who} body {i} {}", "line\n".repeat(300)) }));
            rows.push(json!({ "role": "assistant", "content": format!("ok {i}") }));
        }
        rows.push(json!({ "role": "user", "content": "report" }));
        Value::Array(rows)
    };
    let config = Config::from_options(&json!({ "profile": "default", "contextWindow": 4000 })).unwrap();
    let mut store: std::collections::BTreeMap<String, String> = Default::default();
    let mut collisions = Vec::new();
    // the same session id twice too ("default"), with different transcripts, and each session twice
    for (session, who) in [("alpha", "a"), ("beta", "b"), ("default", "c"), ("default", "d")] {
        let mut state = SessionState::default();
        for _round in 0..2 {
            let t = formats::decode(Format::OpenaiChat, doc(who)).unwrap();
            let mut job = Job::start(config.clone(), state.clone(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true }).with_artifact_store(true).with_memory(session, false);
            let out = run_sync_full(&mut job, |_| Reply::Summary { text: "S.".into(), usage: None }, |item| {
                if store.insert(item.handle.clone(), item.body.clone()).is_some() {
                    collisions.push(item.handle.clone());
                }
                Some(item.handle.clone())
            }, |_| Reply::Accepted)
            .unwrap();
            assert_eq!(out.status, "compacted", "{}", out.reason);
            state = out.state.clone();
            assert!(!state.artifact_tag.is_empty());
        }
    }
    assert!(collisions.is_empty(), "collisions: {collisions:?}");
    assert!(store.len() >= 8, "{}", store.len());
    for (h, body) in &store {
        assert!(context_compactor::trust::handle_parts(h).is_some_and(|(tag, n)| tag.len() == 8 && n >= 1), "{h}");
        assert!(body.contains(" body "), "{h}");
    }
}
