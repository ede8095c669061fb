//! The live handle (issue "Performance", O(appended) per turn): after appends, and
//! after a compaction, its check gives the same decision as a fresh `decide` over the
//! whole transcript (C-9), and the held transcript is what a fresh decode of its stored
//! view gives (T-4 ids included).

mod common;

use common::{fake_summary, shared_dir};
use context_compactor::config::Config;
use context_compactor::engine::Reply;
use context_compactor::formats::import::{import, ImportKind};
use context_compactor::formats::{decode, encode, Format, View};
use context_compactor::live::LiveTranscript;
use context_compactor::state::SessionState;
use context_compactor::summarize::SummarizeRequest;
use context_compactor::trigger::{decide, Signals};
use context_compactor::ErrorCode;
use serde_json::{json, Value};

fn config(window: u64) -> Config {
    Config::from_options(&json!({ "profile": "default", "contextWindow": window })).expect("config")
}

/// Fresh decision over the stored view of what the handle holds.
fn fresh(live: &LiveTranscript, state: &SessionState, signals: &Signals) -> context_compactor::trigger::Decision {
    let mut t = decode(live.transcript().format, live.encode(View::Stored)).expect("stored view decodes");
    assert_eq!(&t, live.transcript(), "T-4: the held transcript equals a fresh decode of its stored view");
    // what `compactor.check` does: the trust pass before the decision (issue 14)
    context_compactor::trust::apply(&mut t, state, live.config().max_pinned_bytes);
    decide(&t, live.config(), state, signals)
}

fn rows(n: usize, start: usize) -> Vec<Vec<Value>> {
    (0..n)
        .map(|k| {
            let i = start + k;
            vec![
                json!({ "role": "user", "content": format!("question {i}: what is the status of order {i}?") }),
                json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("live_{i}"), "type": "function", "function": { "name": "lookup", "arguments": format!("{{\"order\":{i}}}") } }] }),
                json!({ "role": "tool", "tool_call_id": format!("live_{i}"), "content": "x".repeat(300 + i * 37) }),
                json!({ "role": "assistant", "content": format!("Order {i} has shipped.") }),
            ]
        })
        .collect()
}

fn base_doc() -> Value {
    json!({ "messages": [
        { "role": "system", "content": "You are a helpful agent." },
        { "role": "user", "content": "hello" },
        { "role": "assistant", "content": "hi" },
        { "role": "user", "content": "hello" },
        { "role": "assistant", "content": "hi" }
    ]})
}

#[test]
fn c9_live_check_matches_fresh_decide_after_appends() {
    let mut live = LiveTranscript::open(config(3_000), Format::OpenaiChat, base_doc()).expect("open");
    let state = SessionState::default();
    let signals = Signals::default();
    assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
    let mut crossed = false;
    for batch in rows(12, 0) {
        // one row at a time and a whole round at once
        let (first, rest) = batch.split_at(1);
        live.append(first.to_vec()).expect("append one row");
        assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
        live.append(rest.to_vec()).expect("append a round");
        let d = live.check(&state, &signals);
        assert_eq!(d, fresh(&live, &state, &signals));
        crossed |= d.compact;
    }
    assert!(crossed, "the appends grow the transcript over the threshold");
    // signals of every kind give the same decision too
    let loud = Signals { usage: Some(json!({ "prompt_tokens": 2_500, "completion_tokens": 10 })), tools: Some(json!([{ "name": "lookup" }])), request_bytes: None, tools_bytes: None, force: false, ..Signals::default() };
    assert_eq!(live.check(&state, &loud), fresh(&live, &state, &loud));
}

#[test]
fn c7_live_check_follows_the_state_calibration() {
    let mut live = LiveTranscript::open(config(3_000), Format::OpenaiChat, base_doc()).expect("open");
    for batch in rows(6, 0) {
        live.append(batch).expect("append");
    }
    let signals = Signals::default();
    for cal in [1.0, 1.7, 0.6, 1.0] {
        let state = SessionState { calibration: cal, ..SessionState::default() };
        assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals), "calibration {cal}");
    }
}

#[test]
fn c8_pinned_newest_request_counts_once_in_the_floor() {
    let mut live = LiveTranscript::open(config(3_000), Format::OpenaiChat, base_doc()).expect("open");
    let state = SessionState::default();
    let signals = Signals::default();
    live.append(vec![json!({ "role": "user", "content": "pinned request", "pinned": true })]).expect("append");
    assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
    live.append(vec![json!({ "role": "assistant", "content": "noted", "pinned": true }), json!({ "role": "user", "content": "next" })]).expect("append");
    assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
}

#[test]
fn t4_appended_ids_continue_like_one_decode() {
    // identical rows get occurrence-numbered ids across the seam
    let mut live = LiveTranscript::open(config(200_000), Format::OpenaiChat, base_doc()).expect("open");
    live.append(vec![json!({ "role": "user", "content": "hello" })]).expect("append");
    let ids: Vec<&str> = live.transcript().messages.iter().map(|m| m.id.as_str()).collect();
    assert!(ids[5].ends_with("-3"), "third `hello` row: {ids:?}");
    let whole = decode(Format::OpenaiChat, live.encode(View::Stored)).expect("decode");
    assert_eq!(whole.messages.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ids);
}

#[test]
fn append_is_atomic_and_names_the_offset() {
    let mut live = LiveTranscript::open(config(200_000), Format::OpenaiChat, base_doc()).expect("open");
    let before = live.transcript().clone();
    let err = live.append(vec![json!({ "role": "user", "content": "ok" }), json!({ "content": "no role" })]).expect_err("bad row");
    assert_eq!(err.code, ErrorCode::InvalidTranscript);
    assert!(err.message.contains("message 6"), "{}", err.message);
    assert_eq!(live.transcript(), &before, "nothing appended");
    let state = SessionState::default();
    assert_eq!(live.check(&state, &Signals::default()), fresh(&live, &state, &Signals::default()));
}

#[test]
fn w1_live_compaction_replaces_the_held_transcript_and_checks_stay_exact() {
    let cfg = config(3_000);
    let mut live = LiveTranscript::open(cfg.clone(), Format::OpenaiChat, base_doc()).expect("open");
    for batch in rows(10, 0) {
        live.append(batch).expect("append");
    }
    // the same compaction on a fresh decode, for comparison
    let doc = live.encode(View::Stored);
    let (expected, _) = common::compact_with(Format::OpenaiChat, doc, cfg, SessionState::default(), Signals::default(), fake_summary);
    let mut summarize = |r: &SummarizeRequest| fake_summary(r);
    let out = live.compact(SessionState::default(), Signals::default(), Some(&mut summarize)).expect("compact");
    assert_eq!(out.status, "compacted");
    assert_eq!(out.to_json(), expected.to_json(), "same result as a compaction of the whole document");
    assert_eq!(live.encode(View::Stored), encode(&expected.transcript, View::Stored));
    let state = out.state.clone();
    let signals = Signals::default();
    assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
    for batch in rows(5, 100) {
        live.append(batch).expect("append after compaction");
        assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals));
    }
}

#[test]
fn w3_failed_live_compaction_keeps_the_held_transcript() {
    let mut live = LiveTranscript::open(config(3_000), Format::OpenaiChat, base_doc()).expect("open");
    for batch in rows(10, 0) {
        live.append(batch).expect("append");
    }
    let before = live.transcript().clone();
    let mut fail = |_: &SummarizeRequest| Reply::Failed { message: "down".into(), context_exceeded: false };
    let out = live.compact(SessionState::default(), Signals::default(), Some(&mut fail)).expect("job runs");
    assert_eq!(out.status, "failed");
    assert_eq!(live.transcript(), &before);
    // a pairing error (F-5) is refused at append (issue 14), and the transcript stays held
    let held = live.transcript().clone();
    let err = live.append(vec![json!({ "role": "tool", "tool_call_id": "nobody", "content": "stray" })]).expect_err("unpaired result");
    assert_eq!(err.code, ErrorCode::UnpairedToolResult);
    assert_eq!(live.transcript(), &held);
}

#[test]
fn c9_live_check_on_real_transcripts_appended_in_chunks() {
    let Some(dir) = shared_dir() else { return };
    let swe = dir.join("transcripts/swe-agent/katy.traj");
    let tau = dir.join("transcripts/tau-bench/gpt-4o-airline.json");
    for (kind, path) in [(ImportKind::SweAgentTraj, swe), (ImportKind::TauBench, tau)] {
        let text = std::fs::read_to_string(&path).expect("transcript");
        let (format, doc) = import(kind, &text).expect("import");
        let msgs = doc["messages"].as_array().cloned().expect("messages");
        let cut = msgs.len() / 3;
        let mut live = LiveTranscript::open(config(32_000), format, json!({ "messages": msgs[..cut].to_vec() })).expect("open");
        let state = SessionState::default();
        let signals = Signals::default();
        let mut at = cut;
        while at < msgs.len() {
            let end = (at + 97).min(msgs.len());
            live.append(msgs[at..end].to_vec()).expect("append");
            at = end;
            assert_eq!(live.check(&state, &signals), fresh(&live, &state, &signals), "{} at {at}", path.display());
        }
        let whole = decode(format, doc).expect("decode whole");
        assert_eq!(live.transcript(), &whole, "appending in chunks holds what one decode gives");
    }
}

#[test]
fn gemini_results_link_across_the_append_seam() {
    let doc = json!({ "contents": [
        { "role": "user", "parts": [{ "text": "weather?" }] },
        { "role": "model", "parts": [{ "functionCall": { "name": "weather", "args": { "city": "Oslo" } } }] }
    ]});
    let mut live = LiveTranscript::open(config(200_000), Format::Gemini, doc).expect("open");
    live.append(vec![json!({ "role": "user", "parts": [{ "functionResponse": { "name": "weather", "response": { "temp": 3 } } }] })]).expect("append");
    let whole = decode(Format::Gemini, live.encode(View::Stored)).expect("decode");
    assert_eq!(live.transcript(), &whole);
}

/// Y-10 (issue 15, O(appended)): the supersede marks are re-taken only when an appended
/// row is a compaction item, and are then the same as a fresh decode's; an ordinary
/// append leaves them as they were.
#[test]
fn y10_live_append_supersedes_held_compaction_items_only_on_a_new_one() {
    let item = |k: usize| json!({ "type": "compaction", "id": format!("cmp_{k}"), "encrypted_content": format!("gAAAA{k}") });
    let msg = |k: usize| json!({ "type": "message", "role": "user", "content": format!("question {k}") });
    let marks = |live: &LiveTranscript| -> Vec<bool> {
        live.transcript().messages.iter().filter(|m| m.provenance.provider_compaction).map(|m| m.provenance.compaction_superseded).collect()
    };
    let mut live = LiveTranscript::open(config(100_000), Format::OpenaiResponses, json!([item(1), msg(1)])).expect("open");
    assert_eq!(marks(&live), [false], "one compaction item: the newest, not superseded");
    live.append(vec![msg(2)]).expect("append");
    assert_eq!(marks(&live), [false], "an ordinary row changes no mark");
    live.append(vec![item(2), msg(3)]).expect("append");
    assert_eq!(marks(&live), [true, false], "the new item supersedes the held one");
    live.append(vec![msg(4), item(3)]).expect("append");
    assert_eq!(marks(&live), [true, true, false]);
    let fresh = decode(Format::OpenaiResponses, live.encode(View::Stored)).expect("decodes");
    let fresh_marks: Vec<bool> = fresh.messages.iter().filter(|m| m.provenance.provider_compaction).map(|m| m.provenance.compaction_superseded).collect();
    assert_eq!(marks(&live), fresh_marks, "the same marks as a fresh decode");
}
