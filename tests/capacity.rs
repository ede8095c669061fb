//! Capacity: pressure signals, projection anchor, cadence, refusal recovery, floor and
//! per-request bounding (C-2..C-9, B-1..B-3). Test names cite the rule they pin.

mod common;

use common::{compact_with, fake_summary, load_case};
use context_compactor::bound::{bound_request, BoundOptions};
use context_compactor::capacity::{note_transcript_edit, observe_usage, record_refusal, EditKind, Observation};
use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, encode, Format, View};
use context_compactor::state::{Anchor, SessionState};
use context_compactor::transcript::{Block, Transcript};
use context_compactor::trigger::{decide, Signals};
use serde_json::{json, Value};

fn config(opts: Value) -> Config {
    Config::from_options(&opts).expect("valid options")
}

fn decode(doc: &Value) -> Transcript {
    formats::decode(Format::Anthropic, doc.clone()).expect("decode")
}

fn user(text: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "text", "text": text }] })
}
fn assistant(text: &str) -> Value {
    json!({ "role": "assistant", "content": [{ "type": "text", "text": text }] })
}
fn call(id: &str) -> Value {
    json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": id, "name": "read_file", "input": { "path": format!("{id}.txt") } }] })
}
fn result(id: &str, body: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": body }] })
}
fn image_result(id: &str, body: &str, image_b64: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": [
        { "type": "text", "text": body },
        { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": image_b64 } }
    ] }] })
}

/// `turns` completed turns of `bytes`-sized prompt and answer, then a last prompt.
fn history(turns: usize, bytes: usize) -> Value {
    let mut m = Vec::new();
    for i in 0..turns {
        m.push(user(&format!("q{i} {}", "x".repeat(bytes))));
        m.push(assistant(&format!("a{i} {}", "y".repeat(bytes))));
    }
    m.push(user("last question"));
    json!({ "system": "You are terse.", "messages": m })
}

fn summarize_calls(state: &SessionState) -> u64 {
    state.spend.summarize_calls
}

/// Runs one compaction with the fake summarizer.
fn compact(t: &Transcript, cfg: &Config, state: &SessionState, signals: Signals) -> context_compactor::engine::Outcome {
    let mut job = Job::start(cfg.clone(), state.clone(), t.clone(), JobOptions { signals, has_summarizer: true });
    run_sync(&mut job, fake_summary).expect("job runs")
}

fn signal<'a>(d: &'a context_compactor::trigger::Decision, name: &str) -> Option<&'a context_compactor::trigger::SignalValue> {
    d.signals.iter().find(|s| s.name == name)
}

// ---------------------------------------------------------------- C-2, C-9

#[test]
fn c2_c9_byte_crossing_fires_at_the_threshold_and_not_one_byte_below() {
    let cfg = config(json!({ "contextWindow": 100000, "maxRequestBytes": 10000, "thresholdPct": 0.5 }));
    let t = decode(&history(1, 10));
    let limit = 5000;
    let at = decide(&t, &cfg, &SessionState::default(), &Signals { request_bytes: Some(limit), ..Signals::default() });
    assert!(at.compact);
    assert_eq!(at.reason, "request_bytes_over_cap");
    assert_eq!(at.decided_by, Some("request_bytes"));
    let s = signal(&at, "request_bytes").unwrap();
    assert_eq!((s.value, s.threshold, s.crossed, s.unit), (limit, limit, true, "bytes"));
    let below = decide(&t, &cfg, &SessionState::default(), &Signals { request_bytes: Some(limit - 1), ..Signals::default() });
    assert!(!below.compact);
    assert_eq!(below.reason, "under_threshold");
    assert!(!signal(&below, "request_bytes").unwrap().crossed);
}

#[test]
fn c9_check_names_every_signal_with_its_threshold_and_is_pure() {
    let cfg = config(json!({ "contextWindow": 10000, "maxRequestBytes": 1000000 }));
    let t = decode(&history(2, 100));
    let mut state = SessionState::default();
    state.cadence.anchor = Some(Anchor { input_tokens: 100, rows: 3, last_row_id: Some(t.messages[2].id.clone()), provider: None, model: None });
    let before = state.clone();
    let d = decide(&t, &cfg, &state, &Signals { usage: Some(json!({ "input_tokens": 50, "output_tokens": 5 })), ..Signals::default() });
    let names: Vec<&str> = d.signals.iter().map(|s| s.name).collect();
    assert_eq!(names, ["provider_total_tokens", "projected_input_tokens", "estimated_transcript_tokens", "forecast_request_tokens", "request_bytes", "refusal"]);
    for s in &d.signals {
        assert!(s.threshold > 0, "{} has a threshold", s.name);
    }
    assert_eq!(signal(&d, "forecast_request_tokens").unwrap().threshold, 10000);
    assert_eq!(signal(&d, "estimated_transcript_tokens").unwrap().threshold, 6500);
    assert_eq!(state, before, "a check has no side effects");
    let v = serde_json::to_value(&d).unwrap();
    assert!(v["cadence"]["minBoundariesBetween"].is_u64());
    assert!(v["signals"][0]["kind"].is_string());
}

// ---------------------------------------------------------------- C-3

#[test]
fn c3_projection_is_the_anchor_plus_only_the_appended_rows() {
    let cfg = config(json!({ "contextWindow": 10000 }));
    let doc = history(1, 40);
    let t0 = decode(&doc);
    let s = observe_usage(&SessionState::default(), &t0, &cfg, &Observation { usage: Some(json!({ "input_tokens": 6000, "output_tokens": 10 })), provider: Some("anthropic".into()), model: Some("m1".into()), ..Observation::default() });
    let a = s.cadence.anchor.clone().expect("anchored");
    assert_eq!((a.input_tokens, a.rows), (6000, 3));
    // Append a tool round of ~2 KB: the projection crosses 6,500 through the growth.
    let mut doc2 = doc.clone();
    doc2["messages"].as_array_mut().unwrap().extend([call("c1"), result("c1", &"z".repeat(2400))]);
    let t1 = decode(&doc2);
    let sig = Signals { provider: Some("anthropic".into()), model: Some("m1".into()), ..Signals::default() };
    let d = decide(&t1, &cfg, &s, &sig);
    let p = d.projection.expect("projection used");
    assert_eq!(p.anchor_tokens, 6000);
    assert_eq!(p.appended_rows, 2);
    let appended: u64 = t1.messages[3..].iter().map(|m| context_compactor::measure::message_tokens(m, &cfg, s.calibration())).sum();
    assert_eq!(p.appended_tokens, appended);
    assert!(d.compact);
    assert_eq!(d.decided_by, Some("projected_input_tokens"), "the estimate alone is far under: {:?}", d.signals);
    // C-3: an anchor another provider or model counted is not used.
    for (prov, model) in [("openai", "m1"), ("anthropic", "m2")] {
        let other = Signals { provider: Some(prov.into()), model: Some(model.into()), ..Signals::default() };
        let d = decide(&t1, &cfg, &s, &other);
        assert!(d.projection.is_none(), "{prov}/{model}");
        assert!(signal(&d, "projected_input_tokens").is_none());
        assert!(!d.compact);
    }
}

#[test]
fn c3_anchor_is_dropped_by_each_of_the_five_events() {
    let cfg = config(json!({ "contextWindow": 4000, "preserveRecentTurns": 2 }));
    let t = decode(&history(6, 600));
    let anchored = observe_usage(&SessionState::default(), &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": 900 })), ..Observation::default() });
    assert!(anchored.cadence.anchor.is_some());
    let mut refused = record_refusal(&anchored);
    refused.cadence.anchor = anchored.cadence.anchor.clone();
    for (kind, drops_refusal) in [(EditKind::Edit, true), (EditKind::RevisionRestore, false), (EditKind::SystemPrompt, false), (EditKind::Fork, true)] {
        let s = note_transcript_edit(&refused, kind);
        assert!(s.cadence.anchor.is_none(), "{kind:?} drops the anchor");
        assert_eq!(s.cadence.refusal, !drops_refusal, "{kind:?}: refusal");
    }
    assert!(EditKind::parse("rename").is_err());
    assert_eq!(EditKind::parse("system_prompt").unwrap(), EditKind::SystemPrompt);
    // The fifth: a committed rewrite.
    let out = compact(&t, &cfg, &anchored, Signals { force: true, ..Signals::default() });
    assert_eq!(out.status, "compacted");
    assert!(out.state.cadence.anchor.is_none(), "a committed rewrite drops the anchor");
}

#[test]
fn c3_anchor_on_rows_the_transcript_no_longer_holds_is_not_used() {
    let cfg = config(json!({ "contextWindow": 10000 }));
    let t = decode(&history(2, 40));
    let s = observe_usage(&SessionState::default(), &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": 7000 })), ..Observation::default() });
    // Fewer rows than the anchor covered.
    let shorter = decode(&history(1, 40));
    assert!(decide(&shorter, &cfg, &s, &Signals::default()).projection.is_none());
    // Another row where the anchor's last row was.
    let mut other = history(2, 40);
    other["messages"][4] = user("a different question");
    assert!(decide(&decode(&other), &cfg, &s, &Signals::default()).projection.is_none());
    assert!(decide(&t, &cfg, &s, &Signals::default()).projection.is_some());
}

#[test]
fn c3_b3_the_answer_to_a_bounded_request_anchors_nothing_and_keeps_the_refusal() {
    let cfg = config(json!({ "contextWindow": 10000 }));
    let t = decode(&history(2, 40));
    let s1 = observe_usage(&SessionState::default(), &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": 300 })), ..Observation::default() });
    let mut longer = history(2, 40);
    longer["messages"].as_array_mut().unwrap().extend([call("c"), result("c", "big")]);
    let t2 = decode(&longer);
    let mut s1b = s1.clone();
    s1b.cadence.refusal = true;
    let s2 = observe_usage(&s1b, &t2, &cfg, &Observation { usage: Some(json!({ "input_tokens": 999 })), bounded: true, ..Observation::default() });
    assert_eq!(s2.cadence.anchor, s1.cadence.anchor, "the anchor stays on the request before");
    assert!(s2.cadence.refusal, "the bounded request's own answer keeps the fact");
    assert_eq!(s2.cadence.boundary, s1.cadence.boundary + 1);
    let s3 = observe_usage(&s2, &t2, &cfg, &Observation { usage: Some(json!({ "input_tokens": 999 })), ..Observation::default() });
    assert!(!s3.cadence.refusal, "an answer to a request sent whole clears it");
    assert_eq!(s3.cadence.anchor.as_ref().map(|a| (a.input_tokens, a.rows)), Some((999, 7)));
}

// ---------------------------------------------------------------- C-4, C-5

/// A state that just attempted a compaction at this boundary.
fn just_attempted(rewrite_tokens: Option<u64>) -> SessionState {
    let mut s = SessionState::default();
    s.cadence.boundary = 10;
    s.cadence.last_attempt_boundary = Some(10);
    s.cadence.last_rewrite_tokens = rewrite_tokens;
    s
}

#[test]
fn c4_cadence_blocks_an_ordinary_high_water_mark_but_not_a_recovery() {
    let cfg = config(json!({ "contextWindow": 10000, "maxRequestBytes": 100000 }));
    assert_eq!(cfg.min_boundaries_between, 2);
    let t = decode(&history(1, 40));
    let state = just_attempted(Some(100));
    let high = Signals { usage: Some(json!({ "input_tokens": 7000, "output_tokens": 10 })), ..Signals::default() };
    let d = decide(&t, &cfg, &state, &high);
    assert!(!d.compact);
    assert_eq!(d.reason, "waiting_for_cadence");
    assert_eq!(d.suppressed, ["provider_total_tokens"]);
    // One boundary later it still waits; two boundaries later it compacts.
    let mut later = state.clone();
    later.cadence.boundary = 11;
    assert!(!decide(&t, &cfg, &later, &high).compact);
    later.cadence.boundary = 12;
    assert_eq!(decide(&t, &cfg, &later, &high).reason, "provider_usage_over_threshold");
    // Recovery: request bytes crossing.
    let bytes = Signals { request_bytes: Some(65000), ..high.clone() };
    let d = decide(&t, &cfg, &state, &bytes);
    assert!(d.compact);
    assert_eq!(d.decided_by, Some("request_bytes"));
    // Recovery: live history crossing when the last rewrite got history under.
    let big = decode(&history(4, 8000));
    let d = decide(&big, &cfg, &state, &Signals::default());
    assert!(d.compact, "{:?}", d);
    assert_eq!(d.decided_by, Some("estimated_transcript_tokens"));
    // Recovery: a projection crossing through what was appended.
    let mut anchored = state.clone();
    anchored.cadence.anchor = Some(Anchor { input_tokens: 6000, rows: 1, last_row_id: Some(t.messages[0].id.clone()), provider: None, model: None });
    let mut grown = history(1, 40);
    grown["messages"].as_array_mut().unwrap().extend([call("c"), result("c", &"r".repeat(4000))]);
    let g = decode(&grown);
    let d = decide(&g, &cfg, &anchored, &Signals::default());
    assert_eq!(d.decided_by, Some("projected_input_tokens"));
    // ...but an anchor already over the threshold waits, like the provider's count.
    anchored.cadence.anchor.as_mut().unwrap().input_tokens = 6600;
    let d = decide(&g, &cfg, &anchored, &Signals::default());
    assert!(!d.compact);
    assert_eq!(d.suppressed, ["projected_input_tokens"]);
}

#[test]
fn c4_kerkov_profile_has_no_cadence() {
    let cfg = config(json!({ "profile": "kerkov", "contextWindow": 10000 }));
    assert_eq!(cfg.min_boundaries_between, 0);
    let t = decode(&history(1, 40));
    let d = decide(&t, &cfg, &just_attempted(None), &Signals { usage: Some(json!({ "total_tokens": 6500 })), ..Signals::default() });
    assert!(d.compact);
    let cfg2 = config(json!({ "minBoundariesBetween": 5, "contextWindow": 10000 }));
    assert_eq!(cfg2.min_boundaries_between, 5);
}

#[test]
fn c5_a_failed_attempt_counts_for_cadence_so_recovery_does_not_retry_every_boundary() {
    // over the threshold (16,000 tokens), under the window with the output reserve
    let cfg = config(json!({ "contextWindow": 20000 }));
    let big = decode(&history(4, 8000));
    let mut job = Job::start(cfg.clone(), SessionState::default(), big.clone(), JobOptions { signals: Signals::default(), has_summarizer: true });
    let out = run_sync(&mut job, |_| Reply::Failed { message: "boom".into(), context_exceeded: false }).unwrap();
    assert_eq!(out.status, "failed");
    let s = out.state;
    assert_eq!(s.cadence.last_attempt_boundary, Some(s.cadence.boundary));
    let d = decide(&big, &cfg, &s, &Signals::default());
    assert!(!d.compact, "the next boundary waits: {:?}", d.reason);
    assert!(d.cadence.last_attempt_failed);
    assert!(d.suppressed.contains(&"estimated_transcript_tokens"));
    // Two compact calls later (no answers observed in between), it retries.
    let mut job = Job::start(cfg.clone(), s.clone(), big.clone(), JobOptions { signals: Signals::default(), has_summarizer: true });
    let skip = run_sync(&mut job, fake_summary).unwrap();
    assert_eq!(skip.status, "skipped");
    assert_eq!(summarize_calls(&skip.state), 1);
    let d = decide(&big, &cfg, &skip.state, &Signals::default());
    assert!(d.compact);
}

#[test]
fn c8_c5_a_failed_attempt_never_holds_a_forecast_over_the_window() {
    // the same failure (a summarizer error or timeout) at a 10,000-token window: the
    // next request (~16,000 tokens + reserve) cannot be sent as is, so the next check
    // compacts instead of `waiting_for_cadence` (C-8 over C-5)
    let cfg = config(json!({ "contextWindow": 10000 }));
    let big = decode(&history(4, 8000));
    let mut job = Job::start(cfg.clone(), SessionState::default(), big.clone(), JobOptions { signals: Signals::default(), has_summarizer: true });
    let out = run_sync(&mut job, |_| Reply::Failed { message: "timeout: the summarize callback did not settle within 100 ms".into(), context_exceeded: false }).unwrap();
    assert_eq!(out.status, "failed");
    let d = decide(&big, &cfg, &out.state, &Signals::default());
    assert!(d.cadence.last_attempt_failed && !d.cadence.open, "{:?}", d.cadence);
    assert!(d.compact, "{}: {:?}", d.reason, d.suppressed);
    assert_eq!((d.reason.as_str(), d.decided_by), ("forecast_over_window", Some("forecast_request_tokens")));
    assert!(d.suppressed.contains(&"estimated_transcript_tokens"), "the threshold crossing alone still backs off");
    // C-4 does not hold it either (break finding 11): after a rewrite that left history
    // over the threshold, an over-window forecast still compacts; the threshold
    // crossing alone waits for the cadence
    let mut over = out.state.clone();
    over.cadence.last_rewrite_tokens = Some(9000);
    let d = decide(&big, &cfg, &over, &Signals::default());
    assert!(d.compact, "{}: {:?}", d.reason, d.suppressed);
    assert_eq!(d.decided_by, Some("forecast_request_tokens"));
    assert_eq!(d.suppressed, ["estimated_transcript_tokens"]);
    assert!(d.warnings.iter().all(|w| w.code != "forecast_over_window_waiting"));
    // only a failed attempt on this same, unchanged transcript holds it (C-5), and a
    // warning says the request is over the window and waits
    let mut same = out.state.clone();
    same.cadence.failed_on = Some(context_compactor::state::RowsMark::of(&big));
    let d = decide(&big, &cfg, &same, &Signals::default());
    assert!(!d.compact);
    assert_eq!(d.reason, "unchanged_since_failed_attempt");
    let w = d.warnings.iter().find(|w| w.code == "forecast_over_window_waiting").expect("an over-window wait is warned");
    let f = signal(&d, "forecast_request_tokens").unwrap();
    assert!(w.message.contains(&f.value.to_string()) && w.message.contains("10000"), "{}", w.message);
}

/// C-4, C-8 (break finding 11): a host that checks before each call, compacts when told
/// and never reports usage never advances the cadence. After a rewrite that left history
/// over the threshold, threshold crossings wait; the request forecast is still never
/// let past the window: every check where it crossed compacts.
#[test]
fn c4_c8_without_usage_reports_the_cadence_never_holds_a_request_over_the_window() {
    let cfg = config(json!({ "contextWindow": 10000, "thresholdPct": 0.5, "fitRecentWindow": false, "preserveRecentTurns": 6 }));
    let t = decode(&history(8, 4000));
    let first = compact(&t, &cfg, &SessionState::default(), Signals::default());
    assert_eq!(first.status, "compacted", "{}", first.reason);
    assert!(first.after.estimated_tokens >= cfg.threshold_tokens(), "the rewrite left history over the threshold");
    let (mut state, mut live) = (first.state.clone(), first.transcript.clone());
    let (mut compactions, mut waited) = (0, 0);
    for i in 0..12 {
        let mut d2 = encode(&live, View::Stored);
        d2["messages"].as_array_mut().unwrap().extend([assistant(&format!("a{i} {}", "y".repeat(4000))), user(&format!("q{i} {}", "x".repeat(4000)))]);
        live = formats::decode(Format::Anthropic, d2).unwrap();
        let d = decide(&live, &cfg, &state, &Signals::default());
        let f = signal(&d, "forecast_request_tokens").unwrap();
        assert!(!f.crossed || d.compact, "row pair {i}: forecast {} over the window {} held back: {} {:?}", f.value, f.threshold, d.reason, d.suppressed);
        if !d.compact {
            waited += usize::from(d.reason == "waiting_for_cadence");
            continue;
        }
        let out = compact(&live, &cfg, &state, Signals::default());
        assert_eq!(out.status, "compacted", "{}", out.reason);
        compactions += 1;
        state = out.state;
        live = out.transcript;
    }
    assert!(compactions >= 2, "{compactions}");
    assert!(waited >= 1, "threshold-only crossings still wait for the cadence (C-4 anti-loop)");
}

#[test]
fn c4_a_rewrite_that_left_history_over_the_threshold_makes_crossings_wait_and_warns_once() {
    // Six recent rows of 4 KB stay verbatim (no fitting of the recent window): the rewrite
    // cannot bring a 5,000-token threshold under.
    let cfg = config(json!({ "contextWindow": 10000, "thresholdPct": 0.5, "fitRecentWindow": false, "preserveRecentTurns": 6 }));
    let mut doc = history(8, 4000);
    let t = decode(&doc);
    let first = compact(&t, &cfg, &SessionState::default(), Signals::default());
    assert_eq!(first.status, "compacted", "{}", first.reason);
    assert!(first.after.estimated_tokens >= cfg.threshold_tokens());
    let warnings: Vec<_> = first.events.iter().filter(|e| e.kind == "warning" && e.data["code"] == "history_over_threshold_after_rewrite").collect();
    assert_eq!(warnings.len(), 1);
    let msg = warnings[0].data["message"].as_str().unwrap();
    for remedy in ["context window", "system prompt", "fewer tools"] {
        assert!(msg.contains(remedy), "names the remedy {remedy}: {msg}");
    }
    // Later crossings wait for the cadence instead of paying for a useless summary.
    let mut state = first.state.clone();
    let mut t2 = first.transcript.clone();
    let mut warned = warnings.len();
    let mut attempts = 1;
    for i in 0..6 {
        let mut d2 = encode(&t2, View::Stored);
        d2["messages"].as_array_mut().unwrap().extend([assistant(&format!("ok {i}")), user(&format!("more {i}"))]);
        t2 = formats::decode(Format::Anthropic, d2).unwrap();
        let d = decide(&t2, &cfg, &state, &Signals::default());
        assert!(d.warnings.is_empty(), "warned once already");
        if i == 0 {
            assert!(!d.compact);
            assert_eq!(d.reason, "waiting_for_cadence");
            assert!(d.cadence.last_rewrite_over_threshold);
        }
        let out = compact(&t2, &cfg, &state, Signals::default());
        if out.status != "skipped" {
            attempts += 1;
        }
        warned += out.events.iter().filter(|e| e.data["code"] == "history_over_threshold_after_rewrite").count();
        state = out.state;
        t2 = out.transcript;
    }
    assert_eq!(warned, 1, "one warning");
    assert!(attempts <= 1 + 6 / 2, "at most one attempt per cadence window: {attempts}");
    doc["messages"].as_array_mut().unwrap().clear();
}

// ---------------------------------------------------------------- C-6

#[test]
fn c6_a_refusal_forces_exactly_one_compaction_on_a_whole_transcript_check() {
    let cfg = config(json!({ "contextWindow": 100000 }));
    let t = decode(&history(4, 200));
    // Under every threshold, and the cadence closed: the refusal still compacts once.
    let mut s = just_attempted(Some(10));
    s = record_refusal(&s);
    assert_eq!(s.cadence.refusal_source.as_deref(), Some("context_refusal"));
    let d = decide(&t, &cfg, &s, &Signals::default());
    assert!(d.compact);
    assert_eq!((d.reason.as_str(), d.decided_by), ("refusal_recovery", Some("refusal")));
    // In-run checks don't see it.
    let inrun = decide(&t, &cfg, &s, &Signals { in_run: true, ..Signals::default() });
    assert!(!inrun.compact);
    assert!(!signal(&inrun, "refusal").unwrap().crossed);
    let out = compact(&t, &cfg, &s, Signals { in_run: true, ..Signals::default() });
    assert!(out.state.cadence.refusal, "an in-run check keeps it");
    // It survives a JSON round trip (a restart).
    let restored = SessionState::from_json(&serde_json::to_value(&s).unwrap()).unwrap();
    assert_eq!(restored, s);
    let out = compact(&t, &cfg, &restored, Signals::default());
    assert_eq!(out.status, "compacted");
    assert!(!out.state.cadence.refusal, "cleared by the attempt");
    let again = decide(&out.transcript, &cfg, &out.state, &Signals::default());
    assert!(!again.compact, "exactly one forced compaction");
}

#[test]
fn c6_the_attempt_clears_the_refusal_even_when_it_does_not_commit() {
    let cfg = config(json!({ "contextWindow": 100000 }));
    let t = decode(&history(4, 200));
    let s = record_refusal(&SessionState::default());
    let mut job = Job::start(cfg.clone(), s.clone(), t.clone(), JobOptions { signals: Signals::default(), has_summarizer: true });
    let out = run_sync(&mut job, |_| Reply::Failed { message: "provider down".into(), context_exceeded: false }).unwrap();
    assert_eq!(out.status, "failed");
    assert!(!out.state.cadence.refusal);
    assert!(!decide(&t, &cfg, &out.state, &Signals::default()).compact, "no loop");
    // Selection failure (nothing to fold) clears it too.
    let single = decode(&json!({ "messages": [user("only")] }));
    let mut job = Job::start(cfg.clone(), s, single, JobOptions { signals: Signals::default(), has_summarizer: true });
    let out = run_sync(&mut job, fake_summary).unwrap();
    assert_eq!(out.status, "skipped");
    assert!(!out.state.cadence.refusal);
    assert_eq!(summarize_calls(&out.state), 0);
}

#[test]
fn c6_an_answered_whole_request_clears_the_refusal() {
    let cfg = config(json!({}));
    let t = decode(&history(1, 10));
    let s = record_refusal(&SessionState::default());
    let s2 = observe_usage(&s, &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": 20 })), ..Observation::default() });
    assert!(!s2.cadence.refusal);
    assert!(s2.cadence.refusal_source.is_none());
}

// ---------------------------------------------------------------- C-7

#[test]
fn c7_estimate_is_calibrated_by_the_provider_ratio_for_dense_text() {
    let cfg = config(json!({ "contextWindow": 100000 }));
    let cjk = "漢字かな交じり文".repeat(300);
    let doc = json!({ "messages": [user(&cjk), assistant(&cjk), user("続けて")] });
    let t = decode(&doc);
    let est = decide(&t, &cfg, &SessionState::default(), &Signals::default());
    let e0 = signal(&est, "estimated_transcript_tokens").unwrap().value;
    // The provider counted one token a character (the estimate reads 3 bytes a
    // character at 4 bytes a token: 0.75).
    let provider = (cjk.chars().count() * 2) as u64;
    let s = observe_usage(&SessionState::default(), &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": provider })), ..Observation::default() });
    assert!(s.calibration > 1.25 && s.calibration < 1.45, "{}", s.calibration);
    let e1 = signal(&decide(&t, &cfg, &s, &Signals::default()), "estimated_transcript_tokens").unwrap().value;
    assert!(e1 >= provider * 9 / 10 && e1 <= provider * 11 / 10, "calibrated {e1} vs provider {provider} (raw {e0})");
    // Never calibrated below the 4-bytes-a-token rule.
    let low = observe_usage(&SessionState::default(), &t, &cfg, &Observation { usage: Some(json!({ "input_tokens": 10 })), ..Observation::default() });
    assert_eq!(low.calibration(), 1.0);
}

#[test]
fn c7_media_count_high() {
    let cfg = config(json!({}));
    let img = "A".repeat(4000);
    let t = decode(&json!({ "messages": [user("see"), call("c"), image_result("c", "ok", &img)] }));
    let m = &t.messages[2];
    let tokens = context_compactor::measure::message_tokens(m, &cfg, 1.0);
    assert!(tokens >= 1600, "an image is 1,600 tokens: {tokens}");
    assert!(tokens < 1600 + 100, "its base64 is not counted again as text: {tokens}");
}

// ---------------------------------------------------------------- C-8

#[test]
fn c8_floor_over_budget_is_cannot_fit_with_zero_summarize_calls_even_with_a_refusal() {
    let cfg = config(json!({ "contextWindow": 2000 }));
    let doc = json!({ "system": "rule ".repeat(2000), "messages": [user("a"), assistant("b"), user("c")] });
    let t = decode(&doc);
    let mut state = record_refusal(&SessionState::default());
    let mut calls = 0;
    for _ in 0..5 {
        let (out, seen) = compact_with(Format::Anthropic, doc.clone(), cfg.clone(), state.clone(), Signals { usage: Some(json!({ "input_tokens": 1900 })), ..Signals::default() }, fake_summary);
        calls += seen.len();
        assert_eq!(out.status, "cannot_fit");
        assert!(out.reason.contains("system") && out.reason.contains("output reserve"), "{}", out.reason);
        assert!(out.rewrite.is_none());
        state = out.state;
    }
    assert_eq!(calls, 0);
    let d = decide(&t, &cfg, &state, &Signals::default());
    assert_eq!(d.reason, "cannot_fit");
    assert!(d.floor.system_tokens > 0 && d.floor.total_tokens >= d.floor.budget_tokens);
}

/// Break finding 17: the findings ledger (Y-10) is a part of the floor: `cannot_fit` names
/// it with its tokens (the parts add up to the total) and says how to shrink it.
#[test]
fn c8_cannot_fit_names_the_findings_ledger_in_its_floor() {
    let cfg = config(json!({ "contextWindow": 4000 }));
    let doc = json!({ "messages": [user("go"), assistant("ok"), user("next")] });
    let mut state = SessionState::default();
    state.findings = (0..100).map(|i| format!("Finding {i}: {}", "f".repeat(400))).collect();
    let (out, _) = compact_with(Format::Anthropic, doc, cfg, state, Signals { force: true, ..Signals::default() }, fake_summary);
    assert_eq!(out.status, "cannot_fit");
    let fl = &out.decision.floor;
    assert!(fl.findings_tokens > 0);
    let named = format!("findings ledger {}", fl.findings_tokens);
    assert!(out.reason.contains(&named), "{}", out.reason);
    assert_eq!(fl.total_tokens, fl.system_tokens + fl.tools_tokens + fl.protected_tokens + fl.findings_tokens + fl.output_reserve_tokens);
    assert!(out.reason.contains("the findings ledger (100 findings) is most of it"), "{}", out.reason);
}

// ---------------------------------------------------------------- B-1..B-3

fn run_with_results(bodies: &[(&str, usize)]) -> Value {
    let mut m = vec![user("earlier"), assistant("done"), user("read these")];
    let ids: Vec<Value> = bodies.iter().map(|(id, _)| json!({ "type": "tool_use", "id": id, "name": "read_file", "input": {} })).collect();
    m.push(json!({ "role": "assistant", "content": ids }));
    let results: Vec<Value> = bodies.iter().map(|(id, n)| json!({ "type": "tool_result", "tool_use_id": id, "content": format!("{id}:{}", "é".repeat(*n / 2)) })).collect();
    m.push(json!({ "role": "user", "content": results }));
    json!({ "system": "sys", "messages": m })
}

fn ids_of(v: &Value) -> (Vec<String>, Vec<String>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for m in v["messages"].as_array().unwrap() {
        for b in m["content"].as_array().into_iter().flatten() {
            match b["type"].as_str() {
                Some("tool_use") => uses.push(b["id"].as_str().unwrap().to_string()),
                Some("tool_result") => results.push(b["tool_use_id"].as_str().unwrap().to_string()),
                _ => {}
            }
        }
    }
    (uses, results)
}

#[test]
fn b1_b3_bounding_keeps_every_id_and_the_stored_transcript_unchanged() {
    let cfg = config(json!({ "contextWindow": 200000, "maxRequestBytes": 20000 }));
    let doc = run_with_results(&[("small", 200), ("big1", 30000), ("big2", 12000)]);
    let t = decode(&doc);
    let stored_before = encode(&t, View::Stored);
    let b = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions::default()).unwrap();
    assert_eq!(encode(&t, View::Stored), stored_before, "the stored transcript keeps every result whole");
    assert!(b.limit.over_bytes && !b.limit.over_tokens);
    assert!(b.fits, "after: {:?}", b.after);
    assert!(b.after.bytes <= 20000);
    let names: Vec<&str> = b.bounded.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(names, ["big1", "big2"], "the small result is under its share and stays whole");
    for c in &b.bounded {
        assert!(c.kept_bytes < c.whole_bytes);
        assert!(c.kept_bytes > 0, "a head is kept");
    }
    let req = b.to_json()["request"].clone();
    assert_eq!(ids_of(&req), ids_of(&doc), "every tool_use / tool_result id kept");
    let text = req.to_string();
    assert!(text.contains("call big1 (read_file) shortened for this request only: the call already ran"));
    assert!(text.contains("bytes omitted") || text.contains("omitted"));
    assert!(!text.contains("\"message_id\""), "request view");
    // B-3: the event names each call with kept and whole bytes and the limit.
    let ev = b.event.clone().expect("event");
    assert_eq!(ev.kind, "tool_results_bounded_for_request");
    assert_eq!(ev.data["calls"][0]["callId"], "big1");
    assert!(ev.data["calls"][0]["keptBytes"].is_u64() && ev.data["calls"][0]["wholeBytes"].is_u64());
    assert_eq!(ev.data["limit"]["maxRequestBytes"], 20000);
    assert!(ev.data["run"].is_string());
    // Recorded like a refusal...
    assert!(b.state.cadence.refusal);
    assert_eq!(b.state.cadence.refusal_source.as_deref(), Some("bounded_request"));
    // ...unless compaction is off: still bounded, nothing recorded.
    let off = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions { compaction: false, ..BoundOptions::default() }).unwrap();
    assert_eq!(off.bounded.len(), 2);
    assert_eq!(off.state, SessionState::default());
}

#[test]
fn b1_a_request_within_limits_is_not_bounded() {
    let cfg = config(json!({ "contextWindow": 200000, "maxRequestBytes": 200000 }));
    let t = decode(&run_with_results(&[("a", 5000)]));
    let b = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions::default()).unwrap();
    assert!(b.bounded.is_empty() && b.event.is_none() && b.fits);
    assert_eq!(b.request, t);
    assert_eq!(b.state, SessionState::default());
}

#[test]
fn b2_token_axis_share_is_sized_at_two_bytes_a_token_and_cuts_on_char_boundaries() {
    // No byte cap: the input budget (window less output reserve) decides.
    let cfg = config(json!({ "contextWindow": 8000, "outputReserveTokens": 1000 }));
    let doc = run_with_results(&[("dense", 60000)]);
    let t = decode(&doc);
    let b = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions::default()).unwrap();
    assert!(b.limit.over_tokens && !b.limit.over_bytes);
    assert_eq!(b.limit.input_budget_tokens, 7000);
    assert!(b.fits && b.after.forecast_tokens <= 7000, "{:?}", b.after);
    let c = &b.bounded[0];
    let rest = b.before.forecast_tokens - 60004 / 4; // what the rest of the request takes, about
    assert!(c.kept_bytes <= (7000 - rest.min(7000) + 16) * 2, "share sized at two bytes a token: kept {}", c.kept_bytes);
    assert!(c.kept_bytes >= 1000, "a useful head is kept: {}", c.kept_bytes);
    // The head of "é"s is cut on a character boundary: valid UTF-8 with whole characters.
    let body = b.request.messages[4].blocks.iter().find_map(|x| if let Block::ToolResult { text, .. } = x { Some(text.clone()) } else { None }).unwrap();
    assert!(body.starts_with("dense:é"));
    assert!(body.contains("characters) omitted"));
}

#[test]
fn b1_media_in_an_oversized_result_become_placeholders() {
    let cfg = config(json!({ "contextWindow": 4000, "outputReserveTokens": 500 }));
    let img = "B".repeat(3000);
    let doc = json!({ "messages": [user("look"), call("shot"), image_result("shot", &"t".repeat(9000), &img)] });
    let t = decode(&doc);
    let b = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions::default()).unwrap();
    assert_eq!(b.bounded.len(), 1);
    assert_eq!(b.bounded[0].media_omitted, 1);
    let req = b.to_json()["request"].to_string();
    assert!(!req.contains(&img), "the image data is not sent");
    assert!(req.contains("[image omitted]"));
    assert!(b.fits);
}

#[test]
fn b1_only_the_open_runs_results_are_bounded() {
    let cfg = config(json!({ "contextWindow": 200000, "maxRequestBytes": 30000 }));
    let mut m = vec![user("first"), call("old"), result("old", &"o".repeat(20000)), assistant("fine"), user("second"), call("new"), result("new", &"n".repeat(20000))];
    m.push(assistant("thinking"));
    let t = decode(&json!({ "messages": m }));
    let b = bound_request(&t, &cfg, &SessionState::default(), &BoundOptions::default()).unwrap();
    assert_eq!(b.bounded.iter().map(|c| c.call_id.as_str()).collect::<Vec<_>>(), ["new"]);
    assert!(b.fits);
}

// ---------------------------------------------------------------- the shared case

#[test]
fn case_oversized_newest_result_b1_c5() {
    let Some(c) = load_case("oversized-newest-result") else { return };
    let t = formats::decode(c.format, c.doc.clone()).unwrap();
    let stored = encode(&t, View::Stored);
    let in_run = Signals { in_run: true, ..c.signals.clone() };
    let mut state = SessionState::default();
    let mut attempts = 0;
    let mut summarize = 0;
    for _ in 0..6 {
        let d = decide(&t, &c.config, &state, &in_run);
        if d.compact {
            let (out, seen) = compact_with(c.format, c.doc.clone(), c.config.clone(), state.clone(), in_run.clone(), fake_summary);
            summarize += seen.len();
            if out.state.cadence.last_attempt_boundary != state.cadence.last_attempt_boundary {
                attempts += 1;
            }
            assert_eq!(out.transcript, t, "nothing to fold in a single-round run");
            state = out.state;
        }
        let b = bound_request(&t, &c.config, &state, &BoundOptions::default()).unwrap();
        assert!(b.fits, "the request sent fits: {:?} / {:?}", b.after, b.limit);
        assert!(b.after.bytes <= 60000);
        assert!(b.after.forecast_tokens <= c.config.context_window - c.config.output_reserve());
        let req = b.to_json()["request"].clone();
        let (uses, results) = ids_of(&req);
        assert_eq!((uses, results), (vec!["toolu_big".to_string()], vec!["toolu_big".to_string()]), "paired");
        let body = req["messages"][2]["content"][0]["content"].as_str().unwrap().to_string();
        assert!(body.contains("omitted") && body.contains("already ran"), "{}", &body[body.len().saturating_sub(300)..]);
        assert!(body.starts_with("const x = 1;"));
        state = observe_usage(&b.state, &t, &c.config, &Observation { usage: Some(json!({ "input_tokens": 9000 })), bounded: true, ..Observation::default() });
    }
    assert_eq!(encode(&t, View::Stored), stored, "the stored result stays whole");
    assert!(attempts <= 1, "no compaction loop: {attempts} attempts");
    assert_eq!(summarize, 0);
}

// ---------------------------------------------------------------- Done when: simulation

/// The fake provider's input count: denser than the estimator (3.6 bytes a token for
/// text, 1,200 an image), so calibration has something to learn.
fn provider_count(req: &Value) -> u64 {
    let mut images = 0u64;
    let mut image_bytes = 0u64;
    for m in req["messages"].as_array().unwrap() {
        for b in m["content"].as_array().into_iter().flatten() {
            for p in std::iter::once(b).chain(b["content"].as_array().into_iter().flatten()) {
                if p["type"] == "image" {
                    images += 1;
                    image_bytes += p["source"]["data"].as_str().map(str::len).unwrap_or(0) as u64;
                }
            }
        }
    }
    let bytes = req.to_string().len() as u64 - image_bytes;
    (bytes as f64 / 3.6).ceil() as u64 + images * 1200
}

#[test]
fn done_when_300_turn_agent_session_never_sends_an_oversized_request_and_never_loops() {
    let window = 32_000u64;
    let cap = 120_000u64;
    let cfg = config(json!({ "contextWindow": window, "maxRequestBytes": cap }));
    let budget = window - cfg.output_reserve();
    let tools = json!([{ "name": "read_file", "description": "Read a file", "input_schema": { "type": "object" } }]);
    let image = "iVBORw0KGgo".repeat(800);
    let mut doc = json!({ "system": "You are a coding agent.", "messages": [] });
    let mut state = SessionState::default();
    let mut last_usage: Option<Value> = None;
    let (mut compactions, mut attempts, mut boundaries, mut bounded_requests) = (0, 0, 0, 0);
    let mut attempt_log: Vec<(u64, String)> = Vec::new();

    // One boundary: check, compact when told, bound, send, observe.
    let mut boundary = |doc: &mut Value, state: &mut SessionState, last_usage: &mut Option<Value>, in_run: bool| {
        boundaries += 1;
        let t = formats::decode(Format::Anthropic, doc.clone()).unwrap();
        let sig = Signals { usage: last_usage.clone(), tools: Some(tools.clone()), provider: Some("fake".into()), model: Some("m".into()), in_run, ..Signals::default() };
        let d = decide(&t, &cfg, state, &sig);
        let mut t = t;
        if d.compact {
            let before = state.cadence.last_attempt_boundary;
            let out = compact(&t, &cfg, state, sig.clone());
            if out.state.cadence.last_attempt_boundary != before {
                attempts += 1;
                attempt_log.push((out.state.cadence.boundary, d.decided_by.unwrap_or("-").to_string()));
            }
            if out.status == "compacted" {
                compactions += 1;
                t = out.transcript.clone();
                *doc = encode(&t, View::Stored);
            }
            *state = out.state;
        }
        let b = bound_request(&t, &cfg, state, &BoundOptions { tools: Some(tools.clone()), ..BoundOptions::default() }).unwrap();
        let req = b.to_json()["request"].clone();
        let body_bytes = req.to_string().len() as u64 + context_compactor::transcript::json_len(&tools) as u64;
        assert!(body_bytes <= cap, "request over the byte cap: {body_bytes}");
        let count = provider_count(&req);
        assert!(count <= budget, "request over the window at boundary {boundaries}: {count} tokens");
        let (uses, results) = ids_of(&req);
        let open = uses.len() - results.len();
        assert!(open <= 1 || uses.len() == results.len() + open, "pairing kept");
        if !b.bounded.is_empty() {
            bounded_requests += 1;
        }
        let usage = json!({ "input_tokens": count, "output_tokens": 50 });
        *state = observe_usage(&b.state, &t, &cfg, &Observation { usage: Some(usage.clone()), provider: Some("fake".into()), model: Some("m".into()), bounded: !b.bounded.is_empty(), tools: Some(tools.clone()), ..Observation::default() });
        *last_usage = Some(usage);
    };

    for turn in 0..300usize {
        let msgs = |d: &mut Value| d["messages"].as_array_mut().unwrap().len();
        let _ = msgs(&mut doc);
        doc["messages"].as_array_mut().unwrap().push(user(&format!("Turn {turn}: please inspect module {turn} and report.")));
        boundary(&mut doc, &mut state, &mut last_usage, false);
        let id = format!("call_{turn}");
        doc["messages"].as_array_mut().unwrap().push(call(&id));
        let body = format!("module {turn}: {}", "fn body() { return 42; }\n".repeat(40 + turn % 60));
        let res = if turn == 150 {
            result(&id, &"LARGE OUTPUT LINE\n".repeat(20_000))
        } else if turn % 9 == 0 {
            image_result(&id, &body, &image)
        } else {
            result(&id, &body)
        };
        doc["messages"].as_array_mut().unwrap().push(res);
        boundary(&mut doc, &mut state, &mut last_usage, true);
        doc["messages"].as_array_mut().unwrap().push(assistant(&format!("Module {turn} looks fine. {}", "Details. ".repeat(20))));
    }
    eprintln!("boundaries {boundaries}, attempts {attempts}, compactions {compactions}, bounded {bounded_requests}: {attempt_log:?}");
    assert!(compactions >= 5, "the session needed compaction: {compactions}");
    assert!(bounded_requests >= 1, "the oversized result was bounded");
    // B-3 + C-6: the bound was recorded like a refusal; the next run's first check
    // compacted the whole transcript once.
    assert_eq!(attempt_log.iter().filter(|(_, by)| by == "refusal").count(), 1, "{attempt_log:?}");
    // Cadence: attempts closer than the minimum came only from recovery or refusal.
    for w in attempt_log.windows(2) {
        let gap = w[1].0 - w[0].0;
        if gap < cfg.min_boundaries_between {
            assert!(matches!(w[1].1.as_str(), "request_bytes" | "estimated_transcript_tokens" | "forecast_request_tokens" | "projected_input_tokens" | "refusal"), "{:?}", w);
        }
    }
    // No loop: far fewer attempts than boundaries.
    assert!(attempts * 3 < boundaries, "{attempts} attempts in {boundaries} boundaries");
    // The final transcript is small and intact.
    let t = formats::decode(Format::Anthropic, doc.clone()).unwrap();
    formats::validate_pairing(&t).unwrap();
}

/// S-8: under byte pressure the default profile keeps fewer recent rows than
/// `preserve_recent_turns` so the rebuilt request fits under the threshold; Kerkov
/// (`fitRecentWindow: false`) keeps the count-and-bytes window of S-2.
#[test]
fn s8_fewer_recent_rows_under_byte_pressure() {
    // 12 turns of ~3 KB each: six recent rows are ~18 KB, more than a 4k-token window allows.
    let mut rows = vec![json!({"role": "system", "content": "sys"})];
    for k in 0..12 {
        rows.push(user(&format!("q{k} {}", "x".repeat(3000))));
        rows.push(assistant(&format!("a{k} {}", "y".repeat(3000))));
    }
    rows.push(user("last"));
    let doc = Value::Array(rows);
    let run = |fit: bool| {
        let cfg = config(json!({"profile": "default", "contextWindow": 4000, "fitRecentWindow": fit, "preserveRecentTurns": 6}));
        let (o, _) = compact_with(Format::OpenaiChat, doc.clone(), cfg, SessionState::default(), Signals { force: true, ..Signals::default() }, fake_summary);
        assert_eq!(o.status, "compacted", "{}", o.reason);
        o
    };
    let fit = run(true);
    let plain = run(false);
    let kept = |o: &context_compactor::engine::Outcome| o.rewrite.as_ref().unwrap().retained.len();
    assert!(kept(&fit) < kept(&plain), "S-8 keeps fewer rows: {} vs {}", kept(&fit), kept(&plain));
    assert!(fit.after.estimated_tokens < Config::from_options(&json!({"contextWindow": 4000})).unwrap().threshold_tokens(), "the rebuilt request fits under the threshold");
    assert!(plain.after.estimated_tokens > fit.after.estimated_tokens);
}
