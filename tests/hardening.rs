//! Hardening (J-2): hostile input through the core API must give a result or a typed
//! error, never a panic. Native tests run with overflow checks on, so arithmetic on
//! input-derived sizes that would wrap in the release wasm build panics here.
//! Regression tests for the bugs the hostile suite (tests/js/hostile.test.mjs) found.

use context_compactor::bound::{bound_request, BoundOptions};
use context_compactor::capacity::{note_transcript_edit, observe_usage, record_refusal, EditKind, Observation};
use context_compactor::config::Config;
use context_compactor::engine::{run_sync_full, Job, JobOptions, Reply};
use context_compactor::evict::{clip, evict_clip};
use context_compactor::formats::{self, import::import_any, Format};
use context_compactor::live::LiveTranscript;
use context_compactor::state::SessionState;
use context_compactor::trigger::{decide, Signals};
use serde_json::{json, Value};

fn session(turns: usize) -> Value {
    let mut msgs = vec![json!({ "role": "system", "content": "You are a coding agent." })];
    for i in 0..turns {
        msgs.push(json!({ "role": "user", "content": format!("step {i}: inspect m{i} ✓ 检查") }));
        msgs.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "read", "arguments": "{}" } }] }));
        msgs.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": format!("fn m{i}() {{}} ✓\n").repeat(120) }));
        msgs.push(json!({ "role": "assistant", "content": format!("m{i} ok") }));
    }
    msgs.push(json!({ "role": "user", "content": "write the report" }));
    Value::Array(msgs)
}

/// Runs every core entry point over `doc` with `config` and `state`; only checks that
/// nothing panics and that errors are typed (they always are: `Result<_, Error>`).
fn exercise(config: &Config, state: &SessionState, doc: &Value, summary: &str) {
    let Ok(t) = formats::decode(Format::OpenaiChat, doc.clone()) else { return };
    let huge = Signals { usage: Some(json!({ "total_tokens": u64::MAX, "prompt_tokens": u64::MAX })), tools_bytes: Some(u64::MAX), request_bytes: Some(u64::MAX), ..Signals::default() };
    for signals in [Signals::default(), huge.clone(), Signals { force: true, ..huge.clone() }, Signals { force: true, ..Signals::default() }] {
        let d = decide(&t, config, state, &signals);
        let _ = serde_json::to_value(&d);
        let mut job = Job::start(config.clone(), state.clone(), t.clone(), JobOptions { signals: signals.clone(), has_summarizer: true }).with_artifact_store(true).with_memory("s", true);
        let out = run_sync_full(
            &mut job,
            |_| Reply::Summary { text: summary.to_string(), usage: Some(json!({ "input_tokens": u64::MAX, "output_tokens": u64::MAX })) },
            |item| Some(item.handle.clone()),
            |_| Reply::Accepted,
        );
        if let Ok(o) = out {
            let _ = o.to_json();
        }
    }
    for opts in [BoundOptions::default(), BoundOptions { max_request_bytes: Some(0), input_budget_tokens: Some(0), tools_bytes: Some(u64::MAX), ..BoundOptions::default() },
        BoundOptions { max_request_bytes: Some(u64::MAX), input_budget_tokens: Some(u64::MAX), request_bytes: Some(u64::MAX), ..BoundOptions::default() }] {
        if let Ok(b) = bound_request(&t, config, state, &opts) {
            let _ = b.to_json();
        }
    }
    for usage in [json!({ "prompt_tokens": u64::MAX }), json!({ "input_tokens": 0 }), json!({ "input_tokens": 1, "cache_read_input_tokens": u64::MAX, "cache_creation_input_tokens": u64::MAX })] {
        let s = observe_usage(state, &t, config, &Observation { usage: Some(usage), tools_bytes: Some(u64::MAX), ..Observation::default() });
        let _ = decide(&t, config, &s, &Signals::default());
        let mut longer = doc.as_array().cloned().unwrap_or_default();
        longer.push(json!({ "role": "assistant", "content": "more" }));
        if let Ok(t2) = formats::decode(Format::OpenaiChat, Value::Array(longer)) {
            let _ = decide(&t2, config, &s, &Signals::default());
        }
    }
    let _ = record_refusal(state);
    let _ = note_transcript_edit(state, EditKind::Fork);
    if let Ok(mut live) = LiveTranscript::open(config.clone(), Format::OpenaiChat, doc.clone()) {
        let _ = live.check(state, &huge);
        let _ = live.append(vec![json!({ "role": "user", "content": "more" })]);
        let _ = live.check(state, &Signals::default());
    }
}

fn extreme_configs() -> Vec<Config> {
    let max = u64::MAX;
    let umax = usize::MAX as u64;
    let sets = [
        json!({ "contextWindow": 1 }),
        json!({ "contextWindow": 1, "thresholdPct": 1 }),
        json!({ "contextWindow": max, "thresholdPct": 1 }),
        json!({ "contextWindow": max, "outputReserveTokens": max, "imageTokens": max, "summaryMaxOutputTokens": max, "bytesPerToken": max, "summarizerContextWindow": max, "maxRequestBytes": max, "minBoundariesBetween": max }),
        json!({ "preserveRecentTurns": 0, "preserveRecentBytes": 0 }),
        json!({ "preserveRecentTurns": umax, "preserveRecentBytes": umax }),
        json!({ "clipHeadBytes": umax, "clipTailBytes": umax, "evictToolResultMinBytes": 0 }),
        json!({ "clipHeadBytes": 0, "clipTailBytes": 0, "evictToolResultMinBytes": 0, "maxIndexedArtifacts": 0 }),
        json!({ "maxSummariesBeforeRollup": 0, "maxRolledUpSummaries": 0 }),
        json!({ "summaryMaxOutputTokens": max, "bytesPerToken": 4 }),
        json!({ "summaryMaxOutputTokens": 0, "summarizerContextWindow": 1, "summaryInputShare": 1e-300 }),
        json!({ "bytesPerToken": max, "contextWindow": 1000 }),
        json!({ "imageTokens": max, "contextWindow": 1000 }),
        json!({ "outputReserveTokens": max }),
        json!({ "maxRequestBytes": 0 }),
        json!({ "profile": "kerkov", "contextWindow": 1 }),
        json!({ "profile": "meerkat", "contextWindow": max, "preserveRecentTurns": 0, "preserveRecentBytes": 0 }),
    ];
    sets.iter().map(|o| Config::from_options(o).unwrap_or_else(|e| panic!("{o}: {e}"))).collect()
}

fn extreme_states() -> Vec<SessionState> {
    let max = u64::MAX;
    [
        json!(null),
        json!({ "revision": context_compactor::state::MAX_REVISION, "nextArtifact": max }),
        json!({ "cadence": { "boundary": max, "lastAttemptBoundary": max, "lastCheckBoundary": max } }),
        json!({ "cadence": { "boundary": 0, "lastAttemptBoundary": max } }),
        json!({ "cadence": { "boundary": max, "lastAttemptBoundary": 0, "lastRewriteTokens": max, "refusal": true } }),
        json!({ "cadence": { "anchor": { "inputTokens": max, "rows": 3, "lastRowId": null } } }),
        json!({ "cadence": { "anchor": { "inputTokens": max, "rows": usize::MAX, "lastRowId": "x" } } }),
        json!({ "cadence": { "failedOn": { "rows": usize::MAX, "lastRowId": "q" } } }),
        json!({ "spend": { "summarizeCalls": max, "inputTokens": max, "outputTokens": max } }),
        json!({ "calibration": 1e300 }),
        json!({ "calibration": 1e-300 }),
        json!({ "findings": ["x"] }),
    ]
    .iter()
    .map(|s| SessionState::from_json(s).unwrap_or_else(|e| panic!("{s}: {e}")))
    .collect()
}

#[test]
fn j2_extreme_configs_and_states_never_panic() {
    // Collect every distinct panic site, so one run reports them all.
    let sites = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeSet::new()));
    let hook_sites = sites.clone();
    std::panic::set_hook(Box::new(move |info| {
        let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
        let msg = info.payload().downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| info.payload().downcast_ref::<String>().cloned()).unwrap_or_default();
        if let Ok(mut s) = hook_sites.lock() {
            s.insert(format!("{at}: {msg}"));
        }
    }));
    let docs = [session(6), json!([]), json!([{ "role": "system", "content": "s" }]), json!([{ "role": "user", "content": "x".repeat(60_000) }, { "role": "assistant", "content": "ok" }, { "role": "user", "content": "go" }])];
    for config in extreme_configs() {
        for state in extreme_states() {
            for doc in &docs {
                for summary in ["", "summary ✓ 检查 ".repeat(500).as_str()] {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exercise(&config, &state, doc, summary)));
                }
            }
        }
    }
    let _ = std::panic::take_hook();
    let sites = sites.lock().map(|s| s.clone()).unwrap_or_default();
    assert!(sites.is_empty(), "panics on hostile input:\n{}", sites.into_iter().collect::<Vec<_>>().join("\n"));
}

#[test]
fn e4_clip_with_huge_head_and_tail_does_not_overflow() {
    // clipHeadBytes + clipTailBytes at usize::MAX used to wrap (release) / panic (debug).
    let body = "héllo wörld ".repeat(100);
    assert_eq!(clip(&body, usize::MAX, usize::MAX), body);
    let e = evict_clip(&body, usize::MAX, usize::MAX);
    assert!(e.len() < body.len() + 120, "evicted body shrinks or stays bounded");
    let _ = evict_clip(&body, 5, usize::MAX);
    let _ = clip(&body, usize::MAX, 5);
}

#[test]
fn c4_boundary_at_u64_max_saturates() {
    let state = SessionState::from_json(&json!({ "cadence": { "boundary": u64::MAX } })).unwrap();
    let s = record_refusal(&state);
    assert_eq!(s.cadence.boundary, u64::MAX);
}

#[test]
fn j2_import_of_every_kind_with_hostile_text_is_typed() {
    let texts = ["", "{", "[", "null", "5", "\"s\"", "[]", "{}", "[{}]", "[{\"traj\":5}]", "[{\"conversations\":[{\"from\":\"function_call\",\"value\":\"{\"}]}]",
        "{\"history\":[{\"role\":5}]}", "{\"type\":\"user\"}\n{\"type\":5}", "{\"type\":\"assistant\",\"message\":{\"content\":5}}"];
    for kind in ["auto", "claude-code-jsonl", "swe-agent-traj", "tau-bench", "glaive", "openai-chat", "anthropic", "gemini", "openai-responses", "ai-sdk", "canonical", "nope"] {
        for text in texts {
            if let Err(e) = import_any(kind, text) {
                assert!(!e.message.is_empty(), "{kind} {text}");
            }
        }
    }
}

#[test]
fn w5_revision_over_2_pow_53_is_invalid_state() {
    let e = SessionState::from_json(&json!({ "revision": u64::MAX })).unwrap_err();
    assert_eq!(e.code, context_compactor::ErrorCode::InvalidState);
    assert!(e.message.contains("state.revision"), "{}", e.message);
    let e = context_compactor::session::SessionRecord::from_json(&json!({ "transcript": [], "revision": u64::MAX })).unwrap_err();
    assert_eq!(e.code, context_compactor::ErrorCode::InvalidState);
    assert!(SessionState::from_json(&json!({ "revision": context_compactor::state::MAX_REVISION })).is_ok());
}

#[test]
fn w7_spend_and_usage_sums_saturate() {
    let u = context_compactor::formats::normalize_usage(&json!({ "input_tokens": u64::MAX, "cache_read_input_tokens": u64::MAX, "output_tokens": u64::MAX })).unwrap();
    assert_eq!(u.input_tokens, u64::MAX);
    assert_eq!(u.total_tokens, u64::MAX);
}

#[test]
fn b2_bound_request_with_images_and_huge_image_tokens_saturates() {
    // An open run whose tool result carries an image, with imageTokens at u64::MAX:
    // images x imageTokens used to overflow in the bound's token sizes.
    let config = Config::from_options(&json!({ "imageTokens": u64::MAX, "contextWindow": 1000 })).unwrap();
    let doc = json!({ "messages": [
        { "role": "user", "content": "look at the screenshot" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "shot", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": [
            { "type": "text", "text": "x".repeat(5000) },
            { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AAAA".repeat(100) } }] }] },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t2", "name": "shot", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t2", "content": "y".repeat(5000) }] }
    ] });
    let t = formats::decode(Format::Anthropic, doc).unwrap();
    for opts in [BoundOptions { max_request_bytes: Some(2000), ..BoundOptions::default() }, BoundOptions { input_budget_tokens: Some(100), tools_bytes: Some(u64::MAX), ..BoundOptions::default() }] {
        let b = bound_request(&t, &config, &SessionState::default(), &opts).expect("bounds");
        assert!(!b.to_json()["bounded"].as_array().unwrap().is_empty());
    }
    let d = decide(&t, &config, &SessionState::default(), &Signals::default());
    let est = d.signals.iter().find(|s| s.name == "estimated_transcript_tokens").map(|s| s.value);
    assert_eq!(est, Some(u64::MAX), "the estimate saturates");
    assert!(d.compact);
}

#[test]
fn y8_summary_request_with_extreme_bytes_per_token_and_caps() {
    // bytesPerToken 2^32 truncated to 0 on wasm32 (`as usize`) and divided by zero; a
    // saturated user-row cap overflowed `cap * 3` / `cap + marker`.
    for opts in [json!({ "bytesPerToken": 1u64 << 32, "contextWindow": 1000 }), json!({ "bytesPerToken": u64::MAX, "summaryInputShare": 0.01 }), json!({ "summarizerContextWindow": u64::MAX, "summaryInputShare": 0.01 })] {
        let config = Config::from_options(&opts).unwrap();
        let mut job = Job::start(config, SessionState::default(), formats::decode(Format::OpenaiChat, session(8)).unwrap(), JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true });
        let out = run_sync_full(&mut job, |r| { assert!(!r.messages.is_empty()); Reply::Summary { text: "S".into(), usage: None } }, |i| Some(i.handle.clone()), |_| Reply::Accepted).expect("runs");
        assert!(["compacted", "cannot_fit", "skipped"].contains(&out.status), "{opts}: {}", out.status);
    }
}

#[test]
fn w6_a_state_that_is_not_an_object_is_invalid_state_never_a_new_session() {
    // adversarial finding (session 5): serde reads a JSON array as a struct's fields in
    // order, so `compact([], ...)` ran as a new session (its cadence and ledger lost)
    for (v, what) in [(json!([]), "an array"), (json!([0, 1]), "an array"), (json!("x"), "a string"), (json!(3), "a number"), (json!(true), "a boolean")] {
        let e = SessionState::from_json(&v).unwrap_err();
        assert_eq!(e.code, context_compactor::ErrorCode::InvalidState, "{v}");
        assert!(e.message.contains(&format!("got {what}")) && e.message.starts_with("state: "), "{v}: {}", e.message);
    }
    assert_eq!(SessionState::from_json(&Value::Null).unwrap(), SessionState::default());
    assert_eq!(SessionState::from_json(&json!({})).unwrap(), SessionState::default());
}

#[test]
fn f5_n1_openai_chat_rows_without_required_content_are_invalid_transcript_naming_the_row() {
    // adversarial finding (session 5): `{role: "user"}` with no content was read as an
    // empty request. OpenAI Chat requires content for system, developer, user and tool
    // messages; no real log writes them without (spec/LOG-FORMATS.md)
    let ok = |c: Value| json!([{ "role": "user", "content": "first" }, c]);
    for (row, says) in [
        (json!({ "role": "user" }), "message 1: user message has no `content`"),
        (json!({ "role": "user", "content": null }), "message 1: user message has `content: null`"),
        (json!({ "role": "user", "content": 7 }), "message 1: user message has a number as `content`"),
        (json!({ "role": "user", "content": { "type": "text", "text": "x" } }), "message 1: user message has an object as `content`"),
        (json!({ "role": "system", "content": null }), "message 1: system message has `content: null`"),
        (json!({ "role": "developer" }), "message 1: developer message has no `content`"),
        (json!({ "role": "assistant", "content": true }), "message 1: assistant message has a boolean `content`"),
    ] {
        let doc = ok(row.clone());
        for e in [formats::decode(Format::OpenaiChat, doc.clone()).unwrap_err(), formats::decode_text(Format::OpenaiChat, &doc.to_string()).unwrap_err()] {
            assert_eq!(e.code, context_compactor::ErrorCode::InvalidTranscript, "{row}");
            assert!(e.message.contains(says) && e.message.contains("a string or an array of content parts"), "{row}: {}", e.message);
        }
        // the request-view shortcut does not write what the decode refuses
        assert!(!matches!(formats::request_text(Format::OpenaiChat, &doc.to_string()), Some(Ok(_))), "{row}");
    }
    let doc = json!([{ "role": "user", "content": "run" }, { "role": "assistant", "content": null, "tool_calls": [{ "id": "c", "type": "function", "function": { "name": "f", "arguments": "{}" } }] }]);
    let tool = |c: Value| {
        let mut d = doc.clone();
        d.as_array_mut().unwrap().push(c);
        d
    };
    let e = formats::decode(Format::OpenaiChat, tool(json!({ "role": "tool", "tool_call_id": "c" }))).unwrap_err();
    assert!(e.message.contains("message 2: tool message has no `content`"), "{}", e.message);
    // what the format allows stays allowed: an assistant's null or absent content, a
    // legacy function message, empty strings and part lists
    for d in [
        tool(json!({ "role": "tool", "tool_call_id": "c", "content": "" })),
        tool(json!({ "role": "tool", "tool_call_id": "c", "content": [] })),
        json!([{ "role": "user", "content": "" }, { "role": "assistant" }, { "role": "assistant", "content": null, "refusal": "no" }]),
        json!([{ "role": "user", "content": [] }, { "role": "assistant", "content": null, "function_call": { "name": "f", "arguments": "{}" } }, { "role": "function", "name": "f", "content": null }]),
    ] {
        formats::decode(Format::OpenaiChat, d.clone()).unwrap_or_else(|e| panic!("{d}: {e}"));
        formats::decode_text(Format::OpenaiChat, &d.to_string()).unwrap_or_else(|e| panic!("{d}: {e}"));
    }
}
