//! Compaction in every format (F-1, F-2, F-3): the same abstract agent session rendered
//! into each provider's shape compacts at a forcing window into a rewrite that passes
//! that format's pairing validator, round-trips, and keeps the newest request; plus a
//! property test generating sessions in each format.

mod common;
use common::*;
use context_compactor::config::Config;
use context_compactor::formats::{self, Format, View};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use proptest::prelude::*;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
struct Round {
    calls: Vec<(String, String, String)>, // id, name, args json
    results: Vec<String>,
}
#[derive(Debug, Clone)]
struct Turn {
    user: String,
    rounds: Vec<Round>,
    answer: String,
}

fn session(turns: usize, calls_per_round: usize, result_bytes: usize) -> Vec<Turn> {
    (0..turns)
        .map(|t| Turn {
            user: format!("request {t}: check module m{t} ✓ 检查"),
            rounds: (0..2)
                .map(|r| Round {
                    calls: (0..calls_per_round).map(|c| (format!("call_{t}_{r}_{c}"), if c % 2 == 0 { "read".into() } else { "grep".into() }, format!("{{\"arg\":\"m{t}-{r}-{c}\"}}"))).collect(),
                    results: (0..calls_per_round).map(|c| format!("out {t}.{r}.{c} 😀 ").repeat(result_bytes / 16 + 1)).collect(),
                })
                .collect(),
            answer: format!("module m{t} is fine"),
        })
        .collect()
}

const SYSTEM: &str = "You are a careful agent.";

fn render(format: Format, s: &[Turn], last: &str) -> Value {
    let mut msgs = Vec::new();
    for t in s {
        match format {
            Format::OpenaiChat => {
                msgs.push(json!({"role": "user", "content": t.user}));
                for r in &t.rounds {
                    msgs.push(json!({"role": "assistant", "content": null, "tool_calls": r.calls.iter().map(|(id, n, a)| json!({"id": id, "type": "function", "function": {"name": n, "arguments": a}})).collect::<Vec<_>>()}));
                    for ((id, _, _), out) in r.calls.iter().zip(&r.results) {
                        msgs.push(json!({"role": "tool", "tool_call_id": id, "content": out}));
                    }
                }
                msgs.push(json!({"role": "assistant", "content": t.answer}));
            }
            Format::Anthropic => {
                msgs.push(json!({"role": "user", "content": t.user}));
                for r in &t.rounds {
                    msgs.push(json!({"role": "assistant", "content": r.calls.iter().map(|(id, n, a)| json!({"type": "tool_use", "id": id, "name": n, "input": serde_json::from_str::<Value>(a).unwrap()})).collect::<Vec<_>>()}));
                    msgs.push(json!({"role": "user", "content": r.calls.iter().zip(&r.results).map(|((id, _, _), out)| json!({"type": "tool_result", "tool_use_id": id, "content": out})).collect::<Vec<_>>()}));
                }
                msgs.push(json!({"role": "assistant", "content": [{"type": "text", "text": t.answer}]}));
            }
            Format::Gemini => {
                msgs.push(json!({"role": "user", "parts": [{"text": t.user}]}));
                for r in &t.rounds {
                    msgs.push(json!({"role": "model", "parts": r.calls.iter().map(|(_, n, a)| json!({"functionCall": {"name": n, "args": serde_json::from_str::<Value>(a).unwrap()}})).collect::<Vec<_>>()}));
                    msgs.push(json!({"role": "user", "parts": r.calls.iter().zip(&r.results).map(|((_, n, _), out)| json!({"functionResponse": {"name": n, "response": {"output": out}}})).collect::<Vec<_>>()}));
                }
                msgs.push(json!({"role": "model", "parts": [{"text": t.answer}]}));
            }
            Format::OpenaiResponses => {
                msgs.push(json!({"role": "user", "content": t.user}));
                for r in &t.rounds {
                    for (id, n, a) in &r.calls {
                        msgs.push(json!({"type": "function_call", "call_id": id, "name": n, "arguments": a}));
                    }
                    for ((id, _, _), out) in r.calls.iter().zip(&r.results) {
                        msgs.push(json!({"type": "function_call_output", "call_id": id, "output": out}));
                    }
                }
                msgs.push(json!({"role": "assistant", "content": t.answer}));
            }
            Format::AiSdk => {
                msgs.push(json!({"role": "user", "content": t.user}));
                for r in &t.rounds {
                    msgs.push(json!({"role": "assistant", "content": r.calls.iter().map(|(id, n, a)| json!({"type": "tool-call", "toolCallId": id, "toolName": n, "input": serde_json::from_str::<Value>(a).unwrap()})).collect::<Vec<_>>()}));
                    msgs.push(json!({"role": "tool", "content": r.calls.iter().zip(&r.results).map(|((id, n, _), out)| json!({"type": "tool-result", "toolCallId": id, "toolName": n, "output": {"type": "text", "value": out}})).collect::<Vec<_>>()}));
                }
                msgs.push(json!({"role": "assistant", "content": t.answer}));
            }
            Format::Canonical => {
                msgs.push(json!({"role": "user", "content": [{"type": "text", "text": t.user}]}));
                for r in &t.rounds {
                    msgs.push(json!({"role": "assistant", "content": r.calls.iter().map(|(id, n, a)| json!({"type": "tool_call", "id": id, "name": n, "arguments": a})).collect::<Vec<_>>()}));
                    for ((id, _, _), out) in r.calls.iter().zip(&r.results) {
                        msgs.push(json!({"role": "tool", "content": [{"type": "tool_result", "call_id": id, "text": out}]}));
                    }
                }
                msgs.push(json!({"role": "assistant", "content": [{"type": "text", "text": t.answer}]}));
            }
        }
    }
    let last_msg = match format {
        Format::Gemini => json!({"role": "user", "parts": [{"text": last}]}),
        Format::Canonical => json!({"role": "user", "content": [{"type": "text", "text": last}]}),
        _ => json!({"role": "user", "content": last}),
    };
    msgs.push(last_msg);
    match format {
        Format::OpenaiChat => {
            msgs.insert(0, json!({"role": "system", "content": SYSTEM}));
            Value::Array(msgs)
        }
        Format::Anthropic => json!({"system": SYSTEM, "messages": msgs}),
        Format::Gemini => json!({"systemInstruction": {"parts": [{"text": SYSTEM}]}, "contents": msgs}),
        Format::OpenaiResponses => json!({"instructions": SYSTEM, "input": msgs}),
        Format::AiSdk => json!({"system": SYSTEM, "messages": msgs}),
        Format::Canonical => {
            msgs.insert(0, json!({"role": "system", "content": [{"type": "text", "text": SYSTEM}]}));
            json!({"messages": msgs})
        }
    }
}

const FORMATS: [Format; 6] = [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];

fn config(window: u64) -> Config {
    Config::from_options(&json!({"profile": "default", "contextWindow": window, "preserveRecentTurns": 4})).unwrap()
}

fn check_outcome(format: Format, doc: &Value, last: &str, window: u64) -> Option<context_compactor::engine::Outcome> {
    let (out, _) = compact_with(format, doc.clone(), config(window), SessionState::default(), Signals { force: true, ..Signals::default() }, fake_summary);
    if out.status != "compacted" {
        assert!(out.status == "skipped" || (out.status == "failed" && out.reason.contains("no reduction")), "{}: {} {}", format.name(), out.status, out.reason);
        assert_eq!(out.transcript, formats::decode(format, doc.clone()).unwrap(), "untouched when not compacted");
        return None;
    }
    formats::validate_pairing(&out.transcript).unwrap_or_else(|e| panic!("{}: {e}", format.name()));
    // the stored view decodes back to the same transcript (F-3 over the rewrite)
    let stored = formats::encode(&out.transcript, View::Stored);
    let again = formats::decode(format, stored.clone()).unwrap();
    assert_eq!(formats::encode(&again, View::Stored), stored);
    // the newest request kept verbatim
    assert!(out.transcript.messages.last().unwrap().text().contains(last), "{}: newest request kept", format.name());
    // the request view has no provenance keys
    let req = serde_json::to_string(&formats::encode(&out.transcript, View::Request)).unwrap();
    assert!(!req.contains("\"summary_level\""));
    Some(out)
}

#[test]
fn f1_f2_every_format_compacts_to_a_valid_rewrite() {
    let s = session(6, 2, 3000);
    for f in FORMATS {
        let doc = render(f, &s, "final request: ship it");
        // the input itself round-trips (F-3)
        assert_eq!(formats::encode(&formats::decode(f, doc.clone()).unwrap(), View::Stored), doc, "{}", f.name());
        let out = check_outcome(f, &doc, "final request: ship it", 8000).unwrap_or_else(|| panic!("{} compacts", f.name()));
        assert!(out.after.bytes < out.before.bytes / 2, "{}: {} -> {}", f.name(), out.before.bytes, out.after.bytes);
        assert!(!out.rewrite.as_ref().unwrap().evicted.is_empty(), "{}: big results evicted", f.name());
        // detection agrees with the format we wrote
        assert_eq!(formats::detect(&doc).unwrap(), f, "detect {}", f.name());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]
    #[test]
    fn f2_property_every_format_rewrite_valid(fi in 0usize..6, turns in 1usize..8, calls in 1usize..4, bytes in 10usize..6000, window in 3000u64..20000) {
        let f = FORMATS[fi];
        let s = session(turns, calls, bytes);
        let doc = render(f, &s, "newest ask");
        check_outcome(f, &doc, "newest ask", window);
    }
}

/// Writes `tests/fixtures/formats/<format>.json` (one session per format) for the CLI
/// tests. Run by hand: `cargo test --no-default-features --test formats_compact -- --ignored`.
#[test]
#[ignore]
fn write_cli_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    std::fs::create_dir_all(&dir).unwrap();
    let s = session(5, 2, 1500);
    for f in FORMATS {
        let doc = render(f, &s, "final request: ship it");
        std::fs::write(dir.join(format!("{}.json", f.name())), serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
}

/// F-5: real logs reuse tool-call ids across exchanges (tau-bench). Each result pairs
/// with the nearest open call, so such a transcript compacts without splitting; a
/// duplicate id inside one message is a typed error naming the message.
#[test]
fn f5_reused_ids_across_exchanges_are_handled_and_duplicates_in_one_message_rejected() {
    let mut msgs = vec![json!({"role": "system", "content": SYSTEM})];
    for k in 0..8 {
        msgs.push(json!({"role": "user", "content": format!("question {k}")}));
        msgs.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": format!("{{\"k\":{k}}}")}}]}));
        msgs.push(json!({"role": "tool", "tool_call_id": "call_1", "content": format!("answer {k} ").repeat(300)}));
        msgs.push(json!({"role": "assistant", "content": format!("done {k}")}));
    }
    msgs.push(json!({"role": "user", "content": "last"}));
    let doc = Value::Array(msgs);
    let out = check_outcome(Format::OpenaiChat, &doc, "last", 9000).expect("compacts");
    assert!(out.transcript.messages.iter().filter(|m| m.has_calls()).count() >= 1);

    let bad = json!([
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "dup", "type": "function", "function": {"name": "a", "arguments": "{}"}},
            {"id": "dup", "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "dup", "content": "1"},
        {"role": "tool", "tool_call_id": "dup", "content": "2"},
        {"role": "user", "content": "y"}
    ]);
    let t = formats::decode(Format::OpenaiChat, bad).unwrap();
    let e = formats::validate_pairing(&t).unwrap_err();
    assert_eq!(e.code, context_compactor::ErrorCode::DuplicateToolCallId);
    assert!(e.message.contains("message 1"), "{}", e.message);
}

/// T-1: fields the engine does not model ride through untouched, on messages and on
/// blocks, in retained rows of a compacted transcript.
#[test]
fn t1_unknown_fields_ride_through_compaction() {
    let s = session(6, 2, 3000);
    let mut doc = render(Format::Anthropic, &s, "final request: ship it");
    let msgs = doc["messages"].as_array_mut().unwrap();
    for m in msgs.iter_mut() {
        m["x_vendor"] = json!({"trace": [1, 2, 3]});
        if let Some(blocks) = m["content"].as_array_mut() {
            for b in blocks {
                b["cache_control"] = json!({"type": "ephemeral"});
            }
        }
    }
    let out = check_outcome(Format::Anthropic, &doc, "final request: ship it", 8000).expect("compacts");
    let stored = formats::encode(&out.transcript, View::Stored);
    let kept: Vec<&Value> = stored["messages"].as_array().unwrap().iter().filter(|m| m.get("summary_level").is_none()).collect();
    assert!(!kept.is_empty());
    for m in kept {
        assert_eq!(m["x_vendor"], json!({"trace": [1, 2, 3]}));
        if let Some(blocks) = m["content"].as_array() {
            assert!(blocks.iter().all(|b| b["cache_control"] == json!({"type": "ephemeral"})));
        }
    }
}

/// N-6 in every format: a session that loaded a skill (its first turn's text is the
/// host's skill expansion) and keeps a `TodoWrite` plan compacts into a rewrite that
/// passes the format's pairing validator, with the skill document and the latest plan
/// state re-attached verbatim in the summary.
#[test]
fn n6_rehydration_keeps_every_format_valid() {
    let skill = "Base directory for this skill: /skills/parser\n\n# Parser skill\nAlways run the grammar tests after an edit.";
    let mut s = session(6, 2, 3000);
    s[0].user = skill.to_string();
    s[1].rounds[0].calls[0] = ("plan_1".into(), "TodoWrite".into(), "{\"todos\":[{\"content\":\"port the lexer\",\"status\":\"in_progress\"}]}".into());
    for f in FORMATS {
        let doc = render(f, &s, "final request: ship it");
        let out = check_outcome(f, &doc, "final request: ship it", 8000).unwrap_or_else(|| panic!("{} compacts", f.name()));
        let text = &out.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
        assert!(text.contains(skill), "{}: the skill document verbatim\n{text}", f.name());
        assert!(text.contains("[rehydrated plan state from TodoWrite call"), "{}: the plan re-attached\n{text}", f.name());
        assert!(text.contains("port the lexer"), "{}", f.name());
    }
}
