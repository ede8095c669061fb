//! Every regression case in ../shared/cases as a test (default profile), each with
//! variations of its kind.

mod common;
use common::*;
use context_compactor::formats::{self, validate_pairing};
use context_compactor::state::SessionState;
use context_compactor::transcript::Block;
use serde_json::Value;

#[test]
fn case_parallel_batch_split_s4() {
    let Some(c) = load_case("parallel-batch-split") else { return };
    let input = c.doc.as_array().unwrap().clone();
    let (out, _) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, fake_summary);
    assert_eq!(out.status, "compacted", "{}", out.reason);
    validate_pairing(&out.transcript).expect("pairing valid");
    let msgs = out_messages(&out);
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[0], input[0]);
    // every tool_calls id has exactly one following tool message before the next non-tool
    for (i, m) in msgs.iter().enumerate() {
        if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
            let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
            let answered: Vec<&str> = msgs[i + 1..].iter().take_while(|n| n["role"] == "tool").map(|n| n["tool_call_id"].as_str().unwrap()).collect();
            let mut a = answered.clone();
            a.sort();
            let mut b = ids.clone();
            b.sort();
            assert_eq!(a, b, "calls of message {i} answered exactly once");
        }
        if m["role"] == "tool" {
            assert!(i > 0 && (msgs[i - 1]["role"] == "tool" || msgs[i - 1].get("tool_calls").is_some()), "tool message {i} follows its call");
        }
    }
    assert_eq!(msgs.last().unwrap(), input.last().unwrap(), "latest user message verbatim");
}

#[test]
fn case_second_compaction_orphan_s1_s4() {
    let Some(c) = load_case("second-compaction-orphan") else { return };
    let input = c.doc["messages"].as_array().unwrap().clone();
    let (out, reqs) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, fake_summary);
    assert_eq!(out.status, "compacted", "{}", out.reason);
    let msgs = out_messages(&out);
    // the earlier summary stays first in the summary block, untouched
    assert_eq!(msgs[0], input[0]);
    assert_eq!(msgs[1]["summary_level"], 1);
    assert!(!reqs[0].messages[0].content.contains("[summary] Earlier"), "earlier summary not re-summarized");
    validate_pairing(&out.transcript).expect("anthropic pairing");
    for (i, m) in msgs.iter().enumerate() {
        if let Some(blocks) = m["content"].as_array() {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                let prev = &msgs[i - 1];
                assert!(prev["content"].as_array().unwrap().iter().any(|p| p["type"] == "tool_use" && p["id"] == b["tool_use_id"]), "result {i} answers the previous assistant");
            }
        }
    }
}

#[test]
fn case_leading_tool_message_s3() {
    let Some(c) = load_case("leading-tool-message") else { return };
    let (out, _) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, fake_summary);
    assert!(out.status == "compacted" || out.status == "skipped", "{}", out.reason);
    let msgs = out_messages(&out);
    assert_eq!(msgs[0]["role"], "system");
    assert_ne!(msgs[1]["role"], "tool", "first non-system message is not a tool message");
    assert!(msgs.iter().any(|m| m["content"] == "And city B?"));
    validate_pairing(&out.transcript).unwrap();
}

#[test]
fn case_emoji_clip_boundary_e5() {
    let Some(c) = load_case("emoji-clip-boundary") else { return };
    // Vary the head size across the emoji so the cut lands on each of its bytes.
    for head in 1995..2004 {
        let mut cfg = c.config.clone();
        cfg.clip_head_bytes = head;
        // the evicted body is inspected through the summarize request: no share bound
        // (Y-8 `summaryInputShare`) clipping it further
        cfg.summary_input_share = 1.0;
        let (out, reqs) = compact_with(c.format, c.doc.clone(), cfg, SessionState::default(), c.signals.clone(), fake_summary);
        assert_eq!(out.status, "compacted", "{}", out.reason);
        let rw = out.rewrite.as_ref().unwrap();
        let e = rw.evicted.iter().find(|e| e.call_id == "e1").expect("e1 evicted");
        assert!(e.clipped && e.handle.is_none());
        let body = &reqs[0].messages[0].content;
        assert!(body.contains("clipped:") && body.contains("bytes") && body.contains("omitted"));
        // valid Unicode: the emoji whole or absent, never half
        let utf16: Vec<u16> = body.encode_utf16().collect();
        assert!(String::from_utf16(&utf16).is_ok());
        let whole = body.matches('📁').count();
        assert!(whole <= 1);
    }
}

#[test]
fn case_newest_request_verbatim_s6_s9() {
    let Some(c) = load_case("newest-request-verbatim") else { return };
    let req = "Do X, then Y, then Z; do not touch the file q.cfg under any circumstance.";
    let (out, reqs) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, fake_summary);
    assert_eq!(out.status, "compacted", "{}", out.reason);
    let msgs = out_messages(&out);
    assert!(msgs.iter().any(|m| m["content"] == req), "request kept verbatim");
    for r in &reqs {
        assert!(!r.messages[0].content.contains(req), "newest request not folded");
    }
    let n = msgs.len();
    assert_eq!(msgs[n - 2]["tool_calls"][0]["id"], "b1");
    assert_eq!(msgs[n - 1]["tool_call_id"], "b1");
}

#[test]
fn case_thinking_latest_verbatim_t3() {
    let Some(c) = load_case("thinking-latest-verbatim") else { return };
    let input = c.doc["messages"].as_array().unwrap().clone();
    let (out, _) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, fake_summary);
    assert_eq!(out.status, "compacted", "{}", out.reason);
    let msgs = out_messages(&out);
    let last_asst_in = input.iter().rev().find(|m| m["role"] == "assistant").unwrap();
    let last_asst_out = msgs.iter().rev().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(serde_json::to_string(last_asst_in).unwrap(), serde_json::to_string(last_asst_out).unwrap());
    // no thinking block with edited text under its signature
    let orig: Vec<&Value> = input.iter().flat_map(|m| m["content"].as_array().into_iter().flatten()).filter(|b| b["type"] == "thinking").collect();
    for m in &msgs {
        for b in m["content"].as_array().into_iter().flatten().filter(|b| b["type"] == "thinking") {
            assert!(orig.contains(&b), "thinking block kept byte-exact");
        }
    }
    validate_pairing(&out.transcript).unwrap();
}

#[test]
fn case_summarizer_context_exceeded_y6() {
    let Some(c) = load_case("summarizer-context-exceeded") else { return };
    // first run: a recognised context-size error -> mechanical handoff summary
    let window = c.config.summarizer_window();
    let (out, reqs) = compact_with(c.format, c.doc.clone(), c.config.clone(), SessionState::default(), c.signals.clone(), |_| context_compactor::engine::Reply::Failed { message: "context_length_exceeded".into(), context_exceeded: true });
    assert_eq!(out.status, "compacted", "{}", out.reason);
    assert_eq!(out.rewrite.as_ref().unwrap().summary.as_ref().unwrap().source.writer, "mechanical");
    assert!(reqs.iter().all(|r| r.estimated_input_tokens < window));
    // second run: a generic network error -> no rewrite, transcript unchanged
    let before = formats::decode(c.format, c.doc.clone()).unwrap();
    let (out2, reqs2) = compact_with(c.format, c.doc, c.config, SessionState::default(), c.signals, |_| context_compactor::engine::Reply::Failed { message: "ECONNRESET".into(), context_exceeded: false });
    assert_eq!(out2.status, "failed");
    assert!(out2.reason.starts_with("summary_failed"));
    assert_eq!(out2.transcript, before);
    assert!(out2.rewrite.is_none());
    assert!(reqs2.iter().all(|r| r.estimated_input_tokens < window));
}

#[test]
fn case_floor_over_budget_c8() {
    let Some(c) = load_case("floor-over-budget") else { return };
    let mut calls = 0;
    let (out, _) = compact_with(c.format, c.doc.clone(), c.config.clone(), SessionState::default(), c.signals.clone(), |r| {
        calls += 1;
        fake_summary(r)
    });
    assert_eq!(out.status, "cannot_fit");
    assert!(out.reason.contains("floor"));
    assert!(out.rewrite.is_none());
    let state = out.state.clone();
    let (out2, _) = compact_with(c.format, c.doc, c.config, state, c.signals, |r| {
        calls += 1;
        fake_summary(r)
    });
    assert_eq!(out2.status, "cannot_fit");
    assert_eq!(calls, 0, "no summarize call, ever");
}

#[test]
fn cases_all_have_tests() {
    let Some(dir) = shared_dir() else { return };
    let known = ["emoji-clip-boundary", "floor-over-budget", "gemini-call-response-count", "leading-tool-message", "newest-request-verbatim", "oversized-newest-result", "parallel-batch-split", "second-compaction-orphan", "summarizer-context-exceeded", "thinking-latest-verbatim"];
    for e in std::fs::read_dir(dir.join("cases")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        if let Some(stem) = name.strip_suffix(".json") {
            assert!(known.contains(&stem), "case {stem} has no test yet");
        }
    }
    let _ = Block::Text { text: String::new() };
}
