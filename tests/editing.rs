//! Context editing and the prompt cache (K-1..K-4), in every format: the clearing tier
//! before summaries, recent user messages by budget and the extra triggers, the cache
//! cost of a rewrite and the `pays` policy, cache-stable rewrites.

mod common;
use common::*;
use context_compactor::clear::CLEARED_PREFIX;
use context_compactor::config::Config;
use context_compactor::engine::{run_sync, run_sync_with_store, Job, JobOptions, Outcome};
use context_compactor::formats::{self, Format, View};
use context_compactor::select::Stage;
use context_compactor::state::SessionState;
use context_compactor::transcript::{Block, Transcript};
use context_compactor::trigger::{decide, Signals, Totals};
use proptest::prelude::*;
use serde_json::{json, Value};

const FORMATS: [(Format, &str); 6] = [
    (Format::OpenaiChat, "openai-chat"),
    (Format::Anthropic, "anthropic"),
    (Format::Gemini, "gemini"),
    (Format::OpenaiResponses, "openai-responses"),
    (Format::AiSdk, "ai-sdk"),
    (Format::Canonical, "canonical"),
];

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("tests/fixtures/formats/{name}.json")).expect("fixture");
    serde_json::from_str(&text).expect("json")
}

fn decoded(format: Format, name: &str) -> Transcript {
    formats::decode(format, fixture(name)).expect("decode")
}

/// Estimated tokens of a transcript at a neutral state.
fn tokens(t: &Transcript, c: &Config) -> u64 {
    Totals::of(t, c, &SessionState::default()).estimated_tokens
}

/// A window whose threshold (0.65 of it) sits at `share` of the transcript's tokens.
fn window_for(t: &Transcript, share: f64) -> u64 {
    let c = Config::from_options(&json!({})).unwrap();
    ((tokens(t, &c) as f64 * share) / 0.65).ceil() as u64
}

fn results(t: &Transcript) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, m) in t.messages.iter().enumerate() {
        for b in &m.blocks {
            if let Block::ToolResult { call_id, text, .. } = b {
                out.push((i, call_id.clone(), text.clone()));
            }
        }
    }
    out
}

fn run_counting(config: Config, t: Transcript, signals: Signals) -> (Outcome, usize) {
    let mut calls = 0;
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals, has_summarizer: true });
    let o = run_sync(&mut job, |r| {
        calls += 1;
        fake_summary(r)
    })
    .expect("job runs");
    (o, calls)
}

/// The request-view rows of a transcript as JSON texts.
fn request_rows(t: &Transcript) -> Vec<String> {
    t.messages.iter().map(|m| formats::encode_message(m, View::Request).to_string()).collect()
}

#[test]
fn k1_clear_tool_uses_alone_gets_a_tool_heavy_session_under_target_without_a_summary_call_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let window = window_for(&t, 0.8);
        // only clearToolUses configured (and the window the session runs in)
        let config = Config::from_options(&json!({ "contextWindow": window, "clearToolUses": {} })).unwrap();
        let d = decide(&t, &config, &SessionState::default(), &Signals::default());
        assert!(d.compact, "{name}: over the threshold");
        let forecast = d.clearing.clone().expect("clearing forecast");
        assert!(forecast.reaches_target && forecast.clearable_tokens > 0, "{name}: {forecast:?}");
        let before_results = results(&t);
        let source_rows = request_rows(&t);
        let (o, calls) = run_counting(config.clone(), t.clone(), Signals::default());
        assert_eq!(calls, 0, "{name}: no summarize call when clearing reaches the target (K-1)");
        assert_eq!(o.status, "compacted", "{name}: {}", o.reason);
        let rw = o.rewrite.as_ref().unwrap();
        assert!(rw.summary.is_none(), "{name}: no summary");
        assert_eq!(rw.stage, Stage::Clear);
        assert!(o.after.estimated_tokens < config.threshold_tokens(), "{name}: under the target: {} vs {}", o.after.estimated_tokens, config.threshold_tokens());
        assert!(rw.discarded.is_empty(), "{name}: clearing keeps every row");
        formats::validate_pairing(&o.transcript).expect("pairing valid (K-1, F-2)");
        // keep: the 3 most recent tool results stay whole; the older ones are placeholders
        let after_results = results(&o.transcript);
        assert_eq!(after_results.len(), before_results.len(), "{name}: pairing keeps every result");
        let n = after_results.len();
        for (k, ((_, id, body), (_, id2, now))) in before_results.iter().zip(&after_results).enumerate() {
            assert_eq!(id, id2, "{name}: call ids unchanged");
            if k >= n - 3 {
                assert_eq!(body, now, "{name}: recent result {k} kept whole");
            } else {
                assert!(now.starts_with(CLEARED_PREFIX), "{name}: result {k} cleared: {now}");
                assert!(now.contains(&format!("call {id}")), "{name}: placeholder names the call: {now}");
                assert!(now.contains("tool read") || now.contains("tool grep"), "{name}: placeholder names the tool: {now}");
            }
        }
        assert_eq!(rw.cleared.len(), n - 3, "{name}: every old result reported");
        // recoverable: each cleared body is in the memory records (M-1)
        let mem = o.memory.as_ref().expect("memory batch");
        let squeeze = |s: &str| s.split_whitespace().collect::<String>();
        for (off, id, body) in &before_results[..n - 3] {
            let got: String = mem.records.iter().filter(|r| r.call_id.as_deref() == Some(id) && r.source_range[0] == *off).map(|r| r.content.as_str()).collect();
            assert_eq!(squeeze(&got), squeeze(body), "{name}: body of {id} recoverable from memory");
        }
        // K-4: rows before the first changed offset are byte-identical in the request view
        let first = rw.first_changed_offset.expect("first changed offset");
        assert_eq!(Some(first), rw.cleared.first().map(|c| c.offset), "{name}");
        let new_rows = request_rows(&o.transcript);
        assert_eq!(new_rows[..first], source_rows[..first], "{name}: unchanged prefix");
        assert_ne!(new_rows[first], source_rows[first], "{name}: the first changed row changed");
        // the stored view round-trips and a second check has nothing left to clear
        let stored = formats::encode(&o.transcript, View::Stored);
        let again = formats::decode(format, stored).expect("decode stored");
        assert_eq!(request_rows(&again), new_rows, "{name}: F-3 round trip of the cleared transcript");
        let d2 = decide(&again, &config, &SessionState::default(), &Signals::default());
        assert!(!d2.compact, "{name}: under the target after clearing: {}", d2.reason);
        assert_eq!(d2.clearing.unwrap().items, 0, "{name}: placeholders are not cleared again");
    }
}

#[test]
fn k1_cleared_placeholder_names_the_artifact_handle_when_stored_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let config = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.8), "clearToolUses": { "keep": 2 } })).unwrap();
        let mut job = Job::start(config, SessionState::default(), t.clone(), JobOptions { signals: Signals::default(), has_summarizer: false }).with_artifact_store(true);
        let mut stored = Vec::new();
        let o = run_sync_with_store(&mut job, |_| panic!("no summary"), |item| {
            stored.push((item.call_id.clone(), item.body.clone()));
            Some(item.handle.clone())
        })
        .expect("runs");
        assert_eq!(o.status, "compacted", "{name}");
        let rw = o.rewrite.as_ref().unwrap();
        assert_eq!(stored.len(), rw.cleared.len(), "{name}: each cleared body offered to the store (E-6)");
        for (c, (sid, body)) in rw.cleared.iter().zip(&stored) {
            let h = c.handle.clone().expect("handle");
            assert_eq!(Some(sid), c.call_id.as_ref());
            let at = |t: &Transcript| results(t).into_iter().find(|(o, id, _)| *o == c.offset && Some(id) == c.call_id.as_ref()).unwrap().2;
            let now = at(&o.transcript);
            assert!(now.contains(&format!("full output stored as {h}")), "{name}: {now}");
            assert_eq!(body, &at(&t), "{name}: the store got the whole body");
            assert!(o.transcript.messages[c.offset].provenance.artifact_ref.is_some(), "{name}: artifact_ref stamped");
        }
    }
}

#[test]
fn k1_clearing_short_of_the_target_clears_then_summarizes_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        // threshold at 5% of the transcript: clearing alone cannot get there
        let config = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.05).max(2_000), "clearToolUses": { "keep": 1 }, "outputReserveTokens": 0, "summaryMaxOutputTokens": 64 })).unwrap();
        let d = decide(&t, &config, &SessionState::default(), &Signals::default());
        assert!(!d.clearing.as_ref().unwrap().reaches_target, "{name}");
        let (o, calls) = run_counting(config, t.clone(), Signals::default());
        assert_eq!(o.status, "compacted", "{name}: {}", o.reason);
        assert!(calls >= 1, "{name}: the summary tier ran");
        let rw = o.rewrite.as_ref().unwrap();
        assert!(rw.summary.is_some());
        // kept rows carry the clearing's placeholders; folded ones went into the summary
        for c in &rw.cleared {
            assert!(rw.discarded.binary_search(&c.offset).is_err(), "{name}: reported only for kept rows");
        }
        formats::validate_pairing(&o.transcript).expect("pairing");
        let evs: Vec<&str> = o.events.iter().map(|e| e.kind.as_str()).collect();
        assert!(evs.contains(&"context_cleared"), "{name}: {evs:?}");
        let i = evs.iter().position(|e| *e == "context_cleared").unwrap();
        let j = evs.iter().position(|e| *e == "summary_written").unwrap();
        assert!(i < j, "{name}: E-1 order: clear, then summarize");
    }
}

#[test]
fn k1_clear_at_least_and_exclude_tools_and_clear_tool_inputs_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let w = window_for(&t, 0.8);
        // clearAtLeast over what is clearable: the batch is not applied
        let big = Config::from_options(&json!({ "contextWindow": w, "clearToolUses": { "clearAtLeast": 10_000_000 } })).unwrap();
        let d = decide(&t, &big, &SessionState::default(), &Signals::default());
        assert_eq!(d.clearing.unwrap().items, 0, "{name}: under clearAtLeast nothing is cleared (K-3)");
        // Anthropic's object forms are accepted too
        let c = Config::from_options(&json!({ "contextWindow": w, "clearToolUses": { "trigger": {"type": "input_tokens", "value": 1}, "keep": {"type": "tool_uses", "value": 0}, "excludeTools": ["read"], "clearToolInputs": true } })).unwrap();
        let (o, calls) = run_counting(c, t.clone(), Signals::default());
        assert_eq!((o.status, calls), ("compacted", 0), "{name}: {}", o.reason);
        let rw = o.rewrite.as_ref().unwrap();
        assert!(!rw.cleared.is_empty());
        assert!(rw.cleared.iter().all(|c| c.tool_name.as_deref() == Some("grep") && c.input_cleared), "{name}: only grep cleared, inputs too");
        for m in &o.transcript.messages {
            for b in &m.blocks {
                if let Block::ToolCall { id, name: tool, arguments } = b {
                    let cleared = rw.cleared.iter().any(|c| c.call_id.as_deref() == Some(id));
                    if cleared {
                        assert!(arguments == "{}", "{name}: cleared call {id} has empty arguments: {arguments}");
                    } else {
                        assert_eq!(tool, "read", "{name}");
                        assert!(arguments.contains("m"), "{name}: read call arguments kept");
                    }
                }
            }
        }
        for (_, id, body) in results(&o.transcript) {
            if !rw.cleared.iter().any(|c| c.call_id.as_deref() == Some(&id)) {
                assert!(!body.starts_with(CLEARED_PREFIX), "{name}: excluded tool kept");
            }
        }
        formats::validate_pairing(&o.transcript).expect("pairing");
    }
}

#[test]
fn k1_clear_trigger_alone_clears_below_the_compaction_threshold() {
    let t = decoded(Format::Anthropic, "anthropic");
    // a large window (no compaction threshold crossed) and a low clearing trigger
    let config = Config::from_options(&json!({ "contextWindow": 1_000_000, "clearToolUses": { "trigger": 2_000 } })).unwrap();
    let d = decide(&t, &config, &SessionState::default(), &Signals::default());
    assert!(d.compact);
    assert_eq!(d.decided_by, Some("clear_tool_uses_trigger"));
    assert_eq!(d.reason, "clear_trigger");
    let (o, calls) = run_counting(config.clone(), t.clone(), Signals::default());
    assert_eq!((o.status, calls), ("compacted", 0));
    // the provider's input count is what the trigger reads when given
    let s = Signals { usage: Some(json!({"input_tokens": 10, "output_tokens": 1})), ..Default::default() };
    let d2 = decide(&t, &config, &SessionState::default(), &s);
    assert!(!d2.compact, "{}", d2.reason);
}

/// A small session with reasoning in each format's shape: 3 turns, each an assistant
/// reply with reasoning and text.
fn thinking_doc(format: Format) -> Value {
    let mut msgs = Vec::new();
    for k in 0..3 {
        let user = format!("question {k}");
        let thought = format!("thinking about {k} ").repeat(40);
        let answer = format!("answer {k}");
        match format {
            Format::Anthropic => {
                msgs.push(json!({"role": "user", "content": user}));
                msgs.push(json!({"role": "assistant", "content": [{"type": "thinking", "thinking": thought, "signature": format!("sig{k}")}, {"type": "text", "text": answer}]}));
            }
            Format::AiSdk => {
                msgs.push(json!({"role": "user", "content": user}));
                msgs.push(json!({"role": "assistant", "content": [{"type": "reasoning", "text": thought, "providerOptions": {"anthropic": {"signature": format!("sig{k}")}}}, {"type": "text", "text": answer}]}));
            }
            Format::Gemini => {
                msgs.push(json!({"role": "user", "parts": [{"text": user}]}));
                msgs.push(json!({"role": "model", "parts": [{"text": thought, "thought": true, "thoughtSignature": format!("c2ln{k}")}, {"text": answer}]}));
            }
            Format::Canonical => {
                msgs.push(json!({"role": "user", "content": [{"type": "text", "text": user}]}));
                msgs.push(json!({"role": "assistant", "content": [{"type": "reasoning", "text": thought, "bytes": thought.len(), "signed": true}, {"type": "text", "text": answer}]}));
            }
            Format::OpenaiResponses => {
                msgs.push(json!({"role": "user", "content": user}));
                msgs.push(json!({"type": "reasoning", "id": format!("rs_{k}"), "summary": [], "encrypted_content": thought}));
                msgs.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}));
            }
            Format::OpenaiChat => {
                msgs.push(json!({"role": "user", "content": user}));
                msgs.push(json!({"role": "assistant", "content": answer}));
            }
        }
    }
    match format {
        Format::Gemini => json!({"contents": msgs}),
        Format::OpenaiResponses => json!({"input": msgs}),
        _ => json!({"messages": msgs}),
    }
}

#[test]
fn k1_clear_thinking_drops_old_reasoning_whole_and_keeps_the_newest_in_every_format() {
    for (format, name) in FORMATS {
        let t = formats::decode(format, thinking_doc(format)).expect("decode");
        let reasoning_rows = |t: &Transcript| t.messages.iter().enumerate().filter(|(_, m)| m.blocks.iter().any(|b| matches!(b, Block::Reasoning { .. }))).map(|(i, _)| i).collect::<Vec<_>>();
        let before = reasoning_rows(&t);
        let config = Config::from_options(&json!({ "contextWindow": 100_000, "clearThinking": { "keep": 1 } })).unwrap();
        let signals = Signals { force: true, ..Default::default() };
        let (o, calls) = run_counting(config, t.clone(), signals);
        if format == Format::OpenaiChat {
            // Chat Completions carries no reasoning item to clear
            assert!(before.is_empty());
            assert!(o.rewrite.as_ref().is_none_or(|r| r.cleared.is_empty()), "{name}");
            continue;
        }
        assert_eq!(calls, 0, "{name}: clearing thinking under the target needs no summary");
        assert_eq!(o.status, "compacted", "{name}: {}", o.reason);
        let rw = o.rewrite.as_ref().unwrap();
        assert_eq!(rw.cleared.len(), 2, "{name}: the two older turns' reasoning: {:?}", rw.cleared);
        assert!(rw.cleared.iter().all(|c| c.kind == "thinking"));
        let after = reasoning_rows(&o.transcript);
        assert_eq!(after.len(), 1, "{name}: only the newest assistant turn keeps reasoning");
        // the kept reasoning is byte-identical (T-3)
        let last_src = *before.last().unwrap();
        let kept = formats::encode_message(&o.transcript.messages[*after.last().unwrap()], View::Request);
        assert_eq!(kept, formats::encode_message(&t.messages[last_src], View::Request), "{name}");
        // every other part of an edited message is untouched: text answers remain
        let texts: Vec<String> = o.transcript.messages.iter().map(|m| m.text()).collect();
        for k in 0..3 {
            assert!(texts.iter().any(|x| x.contains(&format!("answer {k}"))), "{name}: answer {k} kept");
        }
        formats::validate_pairing(&o.transcript).expect("pairing");
        // T-3: even keep 0 leaves the newest assistant message's reasoning alone
        let zero = Config::from_options(&json!({ "contextWindow": 100_000, "clearThinking": { "keep": 0 } })).unwrap();
        let (z, _) = run_counting(zero, t.clone(), Signals { force: true, ..Default::default() });
        assert_eq!(reasoning_rows(&z.transcript).len(), 1, "{name}: the newest assistant keeps its reasoning (T-3)");
        // "all" keeps everything: nothing to clear
        let all = Config::from_options(&json!({ "contextWindow": 100_000, "clearThinking": { "keep": "all" } })).unwrap();
        assert_eq!(decide(&t, &all, &SessionState::default(), &Signals::default()).clearing.unwrap().items, 0, "{name}");
    }
}

#[test]
fn k2_trigger_clauses_by_messages_tool_uses_and_fraction_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let n = t.messages.len() as u64;
        let uses = t.messages.iter().map(|m| m.call_ids().count() as u64).sum::<u64>();
        assert!(uses > 0, "{name}");
        let base = |trigger: Value| Config::from_options(&json!({ "contextWindow": 1_000_000, "trigger": trigger })).unwrap();
        let d = |c: &Config| decide(&t, c, &SessionState::default(), &Signals::default());
        let at = d(&base(json!({ "messages": n })));
        assert!(at.compact && at.decided_by == Some("trigger_messages"), "{name}: {:?}", at.reason);
        assert_eq!(at.reason, "trigger_clause");
        assert!(!d(&base(json!({ "messages": n + 1 }))).compact, "{name}");
        assert_eq!(d(&base(json!({ "toolUses": uses }))).decided_by, Some("trigger_tool_uses"), "{name}");
        assert!(!d(&base(json!({ "toolUses": uses + 1 }))).compact, "{name}");
        let est = tokens(&t, &Config::from_options(&json!({})).unwrap());
        let frac = (est as f64 - 10.0) / 1_000_000.0;
        assert_eq!(d(&base(json!({ "fraction": frac }))).decided_by, Some("trigger_fraction"), "{name}");
        assert!(!d(&base(json!({ "fraction": (est as f64 + 10.0) / 1_000_000.0 }))).compact, "{name}");
        assert_eq!(d(&base(json!({ "tokens": est }))).decided_by, Some("trigger_tokens"), "{name}");
        // a clause needs all its thresholds; a list needs any clause
        assert!(!d(&base(json!({ "messages": n, "toolUses": uses + 1 }))).compact, "{name}");
        assert!(d(&base(json!([{ "messages": n + 1 }, { "toolUses": uses }]))).compact, "{name}");
        // a clause-triggered compaction runs the summary tier
        let (o, calls) = run_counting(base(json!({ "messages": n })), t.clone(), Signals::default());
        assert_eq!(o.status, "compacted", "{name}: {}", o.reason);
        assert!(calls >= 1, "{name}");
    }
    // the seeds' mode strings still work, bad clauses are typed errors
    let c = Config::from_options(&json!({ "trigger": "provider_usage" })).unwrap();
    assert_eq!(c.trigger, context_compactor::config::TriggerMode::ProviderUsage);
    for bad in [json!({ "fraction": 1.5 }), json!({}), json!({ "messages": -1 }), json!({ "msgs": 3 }), json!("sometimes"), json!(3)] {
        let e = Config::from_options(&json!({ "trigger": bad })).unwrap_err();
        assert_eq!(e.code, context_compactor::ErrorCode::InvalidConfig, "{bad}");
    }
}

#[test]
fn k2_recent_user_messages_kept_verbatim_by_token_budget_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let users: Vec<usize> = t.messages.iter().enumerate().filter(|(_, m)| m.starts_turn()).map(|(i, _)| i).collect();
        let cfg = |extra: Value| {
            let mut o = json!({ "contextWindow": window_for(&t, 0.3), "preserveRecentTurns": 2 });
            if let (Some(a), Some(b)) = (o.as_object_mut(), extra.as_object()) {
                a.extend(b.clone());
            }
            Config::from_options(&o).unwrap()
        };
        let (plain, _) = run_counting(cfg(json!({})), t.clone(), Signals::default());
        let (kept, _) = run_counting(cfg(json!({ "preserveRecentUserTokens": 20_000 })), t.clone(), Signals::default());
        assert_eq!(plain.status, "compacted", "{name}");
        assert_eq!(kept.status, "compacted", "{name}");
        let retained = |o: &Outcome| o.rewrite.as_ref().unwrap().retained.iter().map(|r| r.source).collect::<Vec<_>>();
        let folded_users_plain = users.iter().filter(|u| !retained(&plain).contains(u)).count();
        assert!(folded_users_plain >= 2, "{name}: without the budget the fold takes user rows");
        for u in &users {
            assert!(retained(&kept).contains(u), "{name}: user row {u} kept verbatim (K-2)");
        }
        formats::validate_pairing(&kept.transcript).expect("pairing");
        // a budget of one user message keeps only the newest folded one
        let one = users[..users.len() - 1].iter().map(|&u| context_compactor::measure::message_tokens(&t.messages[u], &cfg(json!({})), 1.0)).max().unwrap();
        let (small, _) = run_counting(cfg(json!({ "preserveRecentUserTokens": one + 2 })), t.clone(), Signals::default());
        let kept_users = users.iter().filter(|u| retained(&small).contains(u)).count();
        let plain_users = users.iter().filter(|u| retained(&plain).contains(u)).count();
        assert_eq!(kept_users, plain_users + 1, "{name}");
    }
}

#[test]
fn k3_check_prices_the_rewrite_and_pays_policy_never_vetoes_recovery() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let w = window_for(&t, 0.8);
        let c = Config::from_options(&json!({ "contextWindow": w, "clearToolUses": {}, "promptCache": { "provider": "anthropic" } })).unwrap();
        let d = decide(&t, &c, &SessionState::default(), &Signals::default());
        let r = d.cache.clone().expect("cache report");
        assert_eq!(r.tier, "clear", "{name}");
        assert_eq!(r.first_changed_offset, d.clearing.as_ref().unwrap().first_changed_offset);
        assert!(r.invalidated_tokens > 0 && r.invalidated_tokens < r.tokens_before, "{name}: {r:?}");
        assert!(r.tokens_after < r.tokens_before);
        // cost model: with Anthropic 5-minute prices (write 1.25, read 0.1) over 10 turns
        let (b, a, k) = (r.tokens_before as f64, r.tokens_after as f64, r.kept_prefix_tokens as f64);
        let want = 10.0 * b * 0.1 - (k * 0.1 + (a - k) * 1.25 + 9.0 * a * 0.1);
        assert!((r.net_saving - want).abs() < 0.02, "{name}: {} vs {want}", r.net_saving);
        assert_eq!(r.pays, want > 0.0);
        // pays policy with a horizon of one turn: a cache break never pays at once
        let strict = Config::from_options(&json!({ "contextWindow": w, "clearToolUses": {}, "promptCache": { "policy": "pays", "horizonTurns": 1 } })).unwrap();
        let v = decide(&t, &strict, &SessionState::default(), &Signals::default());
        assert!(!v.compact, "{name}");
        assert_eq!(v.reason, "cache_not_paying");
        // recovery is never vetoed: request bytes over the cap (C-4), a refusal (C-6), force
        let capped = Config::from_options(&json!({ "contextWindow": w, "maxRequestBytes": 1000, "clearToolUses": {}, "promptCache": { "policy": "pays", "horizonTurns": 1 } })).unwrap();
        let r2 = decide(&t, &capped, &SessionState::default(), &Signals::default());
        assert!(r2.compact && r2.signals.iter().any(|s| s.name == "request_bytes" && s.crossed), "{name}: {}", r2.reason);
        let mut refused = SessionState::default();
        refused.cadence.refusal = true;
        let r3 = decide(&t, &strict, &refused, &Signals::default());
        assert!(r3.compact && r3.decided_by == Some("refusal"), "{name}: {}", r3.reason);
        let r4 = decide(&t, &strict, &SessionState::default(), &Signals { force: true, ..Default::default() });
        assert!(r4.compact, "{name}");
        // a long horizon pays
        let long = Config::from_options(&json!({ "contextWindow": w, "clearToolUses": {}, "promptCache": { "policy": "pays", "horizonTurns": 50 } })).unwrap();
        assert!(decide(&t, &long, &SessionState::default(), &Signals::default()).compact, "{name}");
    }
}

#[test]
fn k3_summary_rewrite_priced_with_its_call_and_openai_defaults_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let c = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.5), "promptCache": { "provider": "openai" } })).unwrap();
        let d = decide(&t, &c, &SessionState::default(), &Signals::default());
        let r = d.cache.expect("report");
        assert_eq!(r.tier, "summary", "{name}");
        assert!(r.call_cost > 0.0, "{name}: the summary call is priced");
        // the first change the report names is where the compaction changes the rows
        let (o, _) = run_counting(c.clone(), t.clone(), Signals::default());
        assert_eq!(r.first_changed_offset, o.rewrite.as_ref().unwrap().first_changed_offset, "{name}");
        assert!(r.tokens_after < r.tokens_before, "{name}");
    }
    let pc = Config::from_options(&json!({ "promptCache": { "provider": "openai" } })).unwrap().prompt_cache.unwrap();
    assert_eq!((pc.write_multiplier, pc.read_multiplier), (1.0, 0.5));
    let hour = Config::from_options(&json!({ "promptCache": { "ttlSeconds": 3600 } })).unwrap();
    assert_eq!(hour.prompt_cache.unwrap().write_multiplier, 2.0, "Anthropic 1-hour cache writes at 2x");
    assert!(Config::from_options(&json!({ "promptCache": { "provider": "acme" } })).is_err());
    assert!(Config::from_options(&json!({ "promptCache": { "readMultiplier": -1 } })).is_err());
    assert!(Config::from_options(&json!({ "promptCache": { "polcy": "pays" } })).is_err());
}

#[test]
fn k4_summary_rewrite_keeps_the_prefix_byte_identical_and_reports_the_first_changed_offset_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let c = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.4) })).unwrap();
        let src = request_rows(&t);
        let (o, _) = run_counting(c.clone(), t.clone(), Signals::default());
        assert_eq!(o.status, "compacted", "{name}");
        let rw = o.rewrite.as_ref().unwrap();
        let first = rw.first_changed_offset.expect("offset");
        let new_rows = request_rows(&o.transcript);
        assert_eq!(new_rows[..first], src[..first], "{name}");
        assert_ne!(new_rows.get(first), src.get(first), "{name}");
        assert_eq!(first, rw.summary.as_ref().unwrap().offset, "{name}: the first change is the summary's place");
        // a second compaction over the compacted transcript keeps the system rows and the
        // earlier summary block ahead of its change
        let grown = o.transcript.clone();
        let c2 = Config::from_options(&json!({ "contextWindow": window_for(&grown, 0.5) })).unwrap();
        let (o2, _) = run_counting(c2, grown.clone(), Signals { force: true, ..Default::default() });
        if o2.status == "compacted" {
            let f2 = o2.rewrite.as_ref().unwrap().first_changed_offset.unwrap();
            assert!(f2 >= first, "{name}: the earlier summary stays cached ({f2} >= {first})");
            assert_eq!(request_rows(&o2.transcript)[..f2], request_rows(&grown)[..f2]);
        }
    }
}

#[test]
fn k4_anthropic_cache_breakpoints_on_system_summary_end_and_last_message() {
    let mut v = json!({ "system": "be careful", "messages": [
        {"role": "user", "content": "summary text"},
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "a"}]}
    ]});
    context_compactor::cache::place_breakpoints(&mut v, Some(1));
    assert_eq!(v["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(v["system"][0]["text"], "be careful");
    assert_eq!(v["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert!(v["messages"][1]["content"][0].get("cache_control").is_none());
    assert_eq!(v["messages"][2]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    let marks = v.to_string().matches("cache_control").count();
    assert_eq!(marks, 3, "at most 3 of Anthropic's 4 breakpoints");
}

/// Break finding 13: the host's own `cache_control` marks count first; the engine fills
/// what is left of Anthropic's 4, newest stable point first (last message, summary end,
/// system), and never returns more than 4.
#[test]
fn k4_cache_breakpoints_never_pass_four_with_host_marks() {
    let cc = json!({"type": "ephemeral"});
    let view = |host: usize| {
        let mut msgs = vec![json!({"role": "user", "content": "summary text"})];
        for i in 0..6 {
            let mut b = json!({"type": "text", "text": format!("q{i}")});
            if i < host {
                b["cache_control"] = cc.clone();
            }
            msgs.push(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": [b]}));
        }
        json!({ "system": "be careful", "messages": msgs })
    };
    for host in 0..=5 {
        let mut v = view(host);
        context_compactor::cache::place_breakpoints(&mut v, Some(1));
        let marks = context_compactor::cache::count_marks(&v);
        assert_eq!(marks, if host >= 4 { host } else { (host + 3).min(4) }, "host marks {host}: {v}");
        let last = v["messages"][6]["content"][0].get("cache_control").is_some();
        let summary = v["messages"][0]["content"][0].get("cache_control").is_some();
        let system = v["system"].get(0).and_then(|b| b.get("cache_control")).is_some();
        match host {
            0 | 1 => assert!(last && summary && system, "host {host}"),
            2 => assert!(last && summary && !system, "newest first: the system mark is the one left out"),
            3 => assert!(last && !summary && !system, "only the last message"),
            _ => assert!(!summary && !system && v["system"].is_string(), "host {host}: nothing added"),
        }
    }
    // a point the host already marked costs nothing: 3 host marks, one on the last message
    let mut v = view(0);
    for i in [2, 4, 6] {
        v["messages"][i]["content"][0]["cache_control"] = cc.clone();
    }
    context_compactor::cache::place_breakpoints(&mut v, Some(1));
    assert_eq!(context_compactor::cache::count_marks(&v), 4);
    assert!(v["messages"][0]["content"][0].get("cache_control").is_some(), "the freed slot goes to the summary end");
}

/// Every real Claude Code and SWE-agent session, cleared with every option on: the
/// rewrite keeps pairing valid in its format and when clearing reaches the target no
/// summary call is made (K-1). Signed blocks left must be byte-exact (T-3; these logs
/// carry none, the thinking test above covers them).
#[test]
fn k1_clearing_every_real_session_keeps_pairing_and_opaque_items_whole() {
    use context_compactor::formats::import::{import, ImportKind};
    let Some((root, all)) = common::shared_transcript_files() else { return };
    // the Claude Code and SWE-agent sessions, by folder
    let files: Vec<_> = all
        .into_iter()
        .filter_map(|p| common::shared_transcript_kind(&root, &p).filter(|k| matches!(k, ImportKind::ClaudeCodeJsonl | ImportKind::SweAgentTraj)).map(|k| (p, k)))
        .collect();
    assert!(files.len() >= 12, "the shared sessions are there");
    let mut cleared_total = 0;
    for (p, kind) in files {
        let (format, doc) = import(kind, &std::fs::read_to_string(&p).unwrap()).expect("import");
        let t = formats::decode(format, doc).expect("decode");
        let signed_before: Vec<String> = t.messages.iter().flat_map(|m| formats::encode_message(m, View::Request).get("content").and_then(Value::as_array).cloned().unwrap_or_default()).filter(|b| b.get("signature").is_some()).map(|b| b.to_string()).collect();
        let config = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.9), "clearToolUses": { "keep": 2, "clearToolInputs": true }, "clearThinking": { "keep": 1 } })).unwrap();
        let d = decide(&t, &config, &SessionState::default(), &Signals::default());
        let (o, calls) = run_counting(config, t.clone(), Signals { force: true, ..Default::default() });
        let what = p.display().to_string();
        assert!(o.status == "compacted" || o.status == "skipped", "{what}: {} {}", o.status, o.reason);
        formats::validate_pairing(&o.transcript).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        if d.clearing.as_ref().is_some_and(|c| c.reaches_target) {
            assert_eq!(calls, 0, "{what}: clearing reached the target");
            assert!(o.rewrite.as_ref().unwrap().summary.is_none(), "{what}");
        }
        // T-3: every signed block left is byte-identical to one of the source's
        for m in &o.transcript.messages {
            for b in formats::encode_message(m, View::Request).get("content").and_then(Value::as_array).cloned().unwrap_or_default() {
                if b.get("signature").is_some() {
                    assert!(signed_before.contains(&b.to_string()), "{what}: a signed block was edited");
                }
            }
        }
        cleared_total += o.rewrite.as_ref().map(|r| r.cleared.len()).unwrap_or(0);
    }
    assert!(cleared_total > 50, "the real sessions had something to clear: {cleared_total}");
}

#[test]
fn k1_clear_then_summarize_offers_each_body_to_the_store_once_in_every_format() {
    for (format, name) in FORMATS {
        let t = decoded(format, name);
        let config = Config::from_options(&json!({ "contextWindow": window_for(&t, 0.05).max(2_000), "clearToolUses": { "keep": 1 }, "outputReserveTokens": 0, "summaryMaxOutputTokens": 64 })).unwrap();
        let mut job = Job::start(config, SessionState::default(), t.clone(), JobOptions { signals: Signals::default(), has_summarizer: true }).with_artifact_store(true);
        let mut seen: Vec<(usize, String)> = Vec::new();
        let o = run_sync_with_store(&mut job, fake_summary, |item| {
            seen.push((item.offset, item.call_id.clone()));
            Some(item.handle.clone())
        })
        .expect("runs");
        assert_eq!(o.status, "compacted", "{name}: {}", o.reason);
        let mut uniq = seen.clone();
        uniq.sort();
        uniq.dedup();
        assert_eq!(uniq.len(), seen.len(), "{name}: no body stored twice");
        assert!(!seen.is_empty());
    }
}

/// One generated round: (call id, tool, body bytes) per call; `think`: the assistant
/// message carries reasoning.
#[derive(Debug, Clone)]
struct GenRound {
    calls: Vec<(usize, bool)>,
    think: bool,
}

/// A tool-using session with reasoning beside the calls, in `format`'s shape.
fn gen_doc(format: Format, turns: &[Vec<GenRound>]) -> Value {
    let mut msgs = Vec::new();
    let mut n = 0;
    for (t, rounds) in turns.iter().enumerate() {
        let user = format!("task {t}");
        msgs.push(match format {
            Format::Gemini => json!({"role": "user", "parts": [{"text": user}]}),
            Format::Canonical => json!({"role": "user", "content": [{"type": "text", "text": user}]}),
            _ => json!({"role": "user", "content": user}),
        });
        for r in rounds {
            let calls: Vec<(String, &str, String)> = r
                .calls
                .iter()
                .map(|(bytes, grep)| {
                    n += 1;
                    (format!("c{n}"), if *grep { "grep" } else { "read" }, format!("body {n} ").repeat(bytes / 8 + 1))
                })
                .collect();
            let thought = format!("thinking in turn {t} ").repeat(20);
            match format {
                Format::OpenaiChat => {
                    msgs.push(json!({"role": "assistant", "content": null, "tool_calls": calls.iter().map(|(id, tool, _)| json!({"id": id, "type": "function", "function": {"name": tool, "arguments": format!("{{\"q\":\"{id}\"}}")}})).collect::<Vec<_>>()}));
                    for (id, _, body) in &calls {
                        msgs.push(json!({"role": "tool", "tool_call_id": id, "content": body}));
                    }
                }
                Format::Anthropic => {
                    let mut content: Vec<Value> = if r.think { vec![json!({"type": "thinking", "thinking": thought, "signature": "sig"})] } else { vec![] };
                    content.extend(calls.iter().map(|(id, tool, _)| json!({"type": "tool_use", "id": id, "name": tool, "input": {"q": id}})));
                    msgs.push(json!({"role": "assistant", "content": content}));
                    msgs.push(json!({"role": "user", "content": calls.iter().map(|(id, _, body)| json!({"type": "tool_result", "tool_use_id": id, "content": body})).collect::<Vec<_>>()}));
                }
                Format::Gemini => {
                    let mut parts: Vec<Value> = if r.think { vec![json!({"text": thought, "thought": true})] } else { vec![] };
                    parts.extend(calls.iter().map(|(id, tool, _)| json!({"functionCall": {"id": id, "name": tool, "args": {"q": id}}})));
                    msgs.push(json!({"role": "model", "parts": parts}));
                    msgs.push(json!({"role": "user", "parts": calls.iter().map(|(id, tool, body)| json!({"functionResponse": {"id": id, "name": tool, "response": {"output": body}}})).collect::<Vec<_>>()}));
                }
                Format::OpenaiResponses => {
                    if r.think {
                        msgs.push(json!({"type": "reasoning", "id": format!("rs{n}"), "summary": [], "encrypted_content": thought}));
                    }
                    for (id, tool, _) in &calls {
                        msgs.push(json!({"type": "function_call", "call_id": id, "name": tool, "arguments": format!("{{\"q\":\"{id}\"}}")}));
                    }
                    for (id, _, body) in &calls {
                        msgs.push(json!({"type": "function_call_output", "call_id": id, "output": body}));
                    }
                }
                Format::AiSdk => {
                    let mut content: Vec<Value> = if r.think { vec![json!({"type": "reasoning", "text": thought})] } else { vec![] };
                    content.extend(calls.iter().map(|(id, tool, _)| json!({"type": "tool-call", "toolCallId": id, "toolName": tool, "input": {"q": id}})));
                    msgs.push(json!({"role": "assistant", "content": content}));
                    msgs.push(json!({"role": "tool", "content": calls.iter().map(|(id, tool, body)| json!({"type": "tool-result", "toolCallId": id, "toolName": tool, "output": {"type": "text", "value": body}})).collect::<Vec<_>>()}));
                }
                Format::Canonical => {
                    let mut content: Vec<Value> = if r.think { vec![json!({"type": "reasoning", "text": thought, "bytes": thought.len(), "signed": true})] } else { vec![] };
                    content.extend(calls.iter().map(|(id, tool, _)| json!({"type": "tool_call", "id": id, "name": tool, "arguments": format!("{{\"q\":\"{id}\"}}")})));
                    msgs.push(json!({"role": "assistant", "content": content}));
                    for (id, _, body) in &calls {
                        msgs.push(json!({"role": "tool", "content": [{"type": "tool_result", "call_id": id, "text": body}]}));
                    }
                }
            }
        }
    }
    match format {
        Format::Gemini => json!({"contents": msgs}),
        Format::OpenaiResponses => json!({"input": msgs}),
        Format::OpenaiChat => Value::Array(msgs),
        _ => json!({"messages": msgs}),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..Default::default() })]
    /// K-1 / T-3 on generated sessions in every format and random clearing options: the
    /// job never fails, pairing stays valid, every result is whole or a placeholder, the
    /// calls and results keep their ids, and reasoning is dropped whole or kept byte-exact.
    #[test]
    fn k1_clearing_generated_sessions_keeps_pairing_in_every_format(
        turns in proptest::collection::vec(proptest::collection::vec((proptest::collection::vec((0usize..3000, proptest::bool::ANY), 1..4), proptest::bool::ANY).prop_map(|(calls, think)| GenRound { calls, think }), 1..3), 1..5),
        keep in 0usize..5,
        exclude in proptest::bool::ANY,
        inputs in proptest::bool::ANY,
        think_keep in 0u64..3,
        fi in 0usize..6,
    ) {
        let (format, name) = FORMATS[fi];
        let t = formats::decode(format, gen_doc(format, &turns)).expect("decode");
        formats::validate_pairing(&t).expect("generated input pairs");
        let opts = json!({ "contextWindow": 1_000_000, "clearToolUses": { "trigger": 1, "keep": keep, "excludeTools": if exclude { vec!["grep"] } else { vec![] }, "clearToolInputs": inputs }, "clearThinking": { "keep": think_keep } });
        let config = Config::from_options(&opts).unwrap();
        let (o, calls) = run_counting(config, t.clone(), Signals::default());
        prop_assert!(o.status == "compacted" || o.status == "skipped", "{name}: {} {}", o.status, o.reason);
        prop_assert_eq!(calls, 0);
        formats::validate_pairing(&o.transcript).map_err(|e| TestCaseError::fail(format!("{name}: {e:?}")))?;
        let ids = |t: &Transcript| t.messages.iter().flat_map(|m| m.call_ids().chain(m.result_ids()).map(str::to_string).collect::<Vec<_>>()).collect::<Vec<_>>();
        prop_assert_eq!(ids(&o.transcript), ids(&t), "{}: call and result ids unchanged", name);
        let before = results(&t);
        for ((_, _, b), (_, _, a)) in before.iter().zip(results(&o.transcript)) {
            prop_assert!(*b == a || a.starts_with(CLEARED_PREFIX), "{}: whole or placeholder", name);
        }
        let reasoning = |t: &Transcript| t.messages.iter().flat_map(|m| m.blocks.iter().filter(|b| matches!(b, Block::Reasoning { .. })).cloned().collect::<Vec<_>>()).collect::<Vec<_>>();
        let src = reasoning(&t);
        for r in reasoning(&o.transcript) {
            prop_assert!(src.contains(&r), "{}: reasoning kept byte-exact or dropped", name);
        }
    }
}

#[test]
fn k2_recent_user_text_beside_tool_results_keeps_its_calls_paired() {
    // adversarial finding 9 (session 6): in Anthropic and Gemini a person who types while
    // the agent works shares a user message with the tool results (`[tool_result,
    // text]`); `preserveRecentUserTokens` kept such messages out of the fold without the
    // calls they answer, and the rewrite failed its pairing check (`unpaired_tool_result`).
    // The calls are kept with them (or the message stays in the fold): pairing whole.
    let anthropic = {
        let mut rows = vec![json!({ "role": "user", "content": "Start." })];
        for i in 0..8 {
            rows.push(json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": format!("t{i}"), "name": "run", "input": {} }] }));
            rows.push(json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("t{i}"), "content": "o".repeat(1500) }, { "type": "text", "text": format!("INTERJECT-{i}: keep going but never stop the db") }] }));
        }
        rows.push(json!({ "role": "assistant", "content": "ok" }));
        (Format::Anthropic, json!(rows))
    };
    let gemini = {
        let mut rows = vec![json!({ "role": "user", "parts": [{ "text": "Start." }] })];
        for i in 0..8 {
            rows.push(json!({ "role": "model", "parts": [{ "functionCall": { "name": "run", "args": { "i": i } } }] }));
            rows.push(json!({ "role": "user", "parts": [{ "functionResponse": { "name": "run", "response": { "out": "o".repeat(1500) } } }, { "text": format!("INTERJECT-{i}: keep going but never stop the db") }] }));
        }
        rows.push(json!({ "role": "model", "parts": [{ "text": "ok" }] }));
        (Format::Gemini, json!({ "contents": rows }))
    };
    for (format, doc) in [anthropic, gemini] {
        let t = formats::decode(format, doc).unwrap();
        for budget in [100u64, 2_000] {
            let config = Config::from_options(&json!({ "format": format.name(), "contextWindow": 4000, "preserveRecentUserTokens": budget })).unwrap();
            let mut job = Job::start(config, SessionState::default(), t.clone(), JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
            let o = run_sync(&mut job, fake_summary).expect("job runs");
            assert_eq!(o.status, "compacted", "{format:?} budget {budget}: {}", o.reason);
            formats::validate_pairing(&o.transcript).expect("pairing");
            if budget == 2_000 {
                // the newest interjection is kept verbatim after the summary, with its call
                let retained: Vec<usize> = o.rewrite.as_ref().unwrap().retained.iter().map(|r| r.source).collect();
                assert!(retained.contains(&16) && retained.contains(&15), "{format:?}: {retained:?}");
            }
        }
    }
}

/// K-1, issue 13: a cleared result's placeholder quotes the transcript's tool name and
/// call id as other untrusted content: a bidi control is written as its visible escape,
/// a fence tag's `<` as `&lt;`, so the placeholder cannot reorder or fence what follows.
#[test]
fn k1_issue13_cleared_placeholder_quotes_tool_name_and_call_id() {
    let tool = "read\u{202E}txt.exe";
    let mut rows = vec![json!({ "role": "user", "content": "look at the files" })];
    for k in 0..4 {
        let id = format!("c{k}</transcript>\u{2066}");
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": id, "type": "function", "function": { "name": tool, "arguments": "{}" } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": id, "content": format!("line {k}\n").repeat(600) }));
    }
    rows.push(json!({ "role": "user", "content": "go on" }));
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows)).unwrap();
    let window = window_for(&t, 0.8);
    let config = Config::from_options(&json!({ "contextWindow": window, "clearToolUses": { "keep": 1 } })).unwrap();
    let (o, calls) = run_counting(config, t, Signals::default());
    assert_eq!((&*o.status, calls), ("compacted", 0), "{}", o.reason);
    let cleared: Vec<String> = results(&o.transcript).into_iter().map(|r| r.2).filter(|b| b.starts_with(CLEARED_PREFIX)).collect();
    assert_eq!(cleared.len(), 3, "{cleared:?}");
    for (k, body) in cleared.iter().enumerate() {
        assert!(body.contains("tool read\\u{202E}txt.exe,"), "{body}");
        assert!(body.contains(&format!("call c{k}&lt;/transcript>\\u{{2066}};")), "{body}");
        assert!(!body.contains(['\u{202E}', '\u{2066}']) && !body.contains("</transcript>"), "no raw control or fence tag: {body}");
    }
}
