//! One or more tests per rule of the Kerkov seed (`../shared/seeds/000_*.txt`), named
//! with the requirement ID they pin. Profile `kerkov` unless a rule is
//! profile-independent. Transcripts are small and hand-built.

mod common;
use common::*;
use context_compactor::config::{Config, Profile};
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use context_compactor::evict::{clip, evict};
use context_compactor::formats::{self, encode, validate_pairing, Format, View};
use context_compactor::rewrite::apply_patch;
use context_compactor::select::select;
use context_compactor::state::SessionState;
use context_compactor::summarize::{SummarizeRequest, ROLLUP_PROMPT, SUMMARY_PROMPT};
use context_compactor::transcript::{Block, PROVENANCE_KEYS};
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

// ---------------------------------------------------------------- helpers

fn kerkov() -> Config {
    Config::preset(Profile::Kerkov)
}

/// OpenAI usage with the given total.
fn usage_total(total: u64) -> Signals {
    Signals { usage: Some(json!({ "prompt_tokens": total - 100, "completion_tokens": 100, "total_tokens": total })), ..Signals::default() }
}

/// Usage well over the Kerkov threshold of the default 200,000-token window.
fn over() -> Signals {
    usage_total(150_000)
}

fn sys(t: &str) -> Value {
    json!({ "role": "system", "content": t })
}
fn user(t: &str) -> Value {
    json!({ "role": "user", "content": t })
}
fn asst(t: &str) -> Value {
    json!({ "role": "assistant", "content": t })
}
fn summary(t: &str, level: u8) -> Value {
    json!({ "role": "user", "content": t, "summary_level": level })
}
/// OpenAI assistant message with parallel tool calls: (id, name, arguments JSON text).
fn calls(cs: &[(&str, &str, &str)]) -> Value {
    let tc: Vec<Value> = cs.iter().map(|(id, name, args)| json!({ "id": id, "type": "function", "function": { "name": name, "arguments": args } })).collect();
    json!({ "role": "assistant", "content": null, "tool_calls": tc })
}
fn tool(id: &str, body: &str) -> Value {
    json!({ "role": "tool", "tool_call_id": id, "content": body })
}
fn tool_ref(id: &str, body: &str, artifact: &str) -> Value {
    json!({ "role": "tool", "tool_call_id": id, "content": body, "artifact_ref": artifact })
}

// Anthropic
fn a_user(t: &str) -> Value {
    json!({ "role": "user", "content": t })
}
fn a_asst(t: &str) -> Value {
    json!({ "role": "assistant", "content": [{ "type": "text", "text": t }] })
}
fn a_uses(cs: &[(&str, &str)]) -> Value {
    let b: Vec<Value> = cs.iter().map(|(id, name)| json!({ "type": "tool_use", "id": id, "name": name, "input": { "target": "10.0.0.1" } })).collect();
    json!({ "role": "assistant", "content": b })
}
fn a_results(rs: &[(&str, &str, bool)]) -> Value {
    let b: Vec<Value> = rs.iter().map(|(id, body, err)| json!({ "type": "tool_result", "tool_use_id": id, "is_error": err, "content": [{ "type": "text", "text": body }] })).collect();
    json!({ "role": "user", "content": b })
}

/// `n` alternating user/assistant text messages.
fn chatter(n: usize, tag: &str) -> Vec<Value> {
    (0..n).map(|i| if i % 2 == 0 { user(&format!("{tag} question {i}: what does host {i} expose on its ports?")) } else { asst(&format!("{tag} answer {i}: host {i} exposes ssh and http, nothing else of note.")) }).collect()
}

/// A message text long enough that folding it shrinks the transcript.
fn long(t: &str) -> String {
    format!("{t}: {}", "we looked at the service banners and the http headers again. ".repeat(8))
}

fn doc(rows: Vec<Value>) -> Value {
    Value::Array(rows)
}

fn run(format: Format, d: Value, cfg: Config, signals: Signals) -> (Outcome, Vec<SummarizeRequest>) {
    compact_with(format, d, cfg, SessionState::default(), signals, fake_summary)
}

fn req_text(r: &SummarizeRequest) -> String {
    r.messages.iter().map(|m| m.content.clone()).collect::<Vec<_>>().join("\n")
}

fn retained_sources(o: &Outcome) -> Vec<usize> {
    o.rewrite.as_ref().expect("rewrite").retained.iter().map(|r| r.source).collect()
}

fn content_text(v: &Value) -> String {
    match v.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn warnings(o: &Outcome, code: &str) -> usize {
    o.events.iter().filter(|e| e.kind == "warning" && e.data["code"] == code).count()
}

fn all_keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                all_keys(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| all_keys(x, out)),
        _ => {}
    }
}

// ---------------------------------------------------------------- C-1

#[test]
fn c1_threshold_is_ceil_of_065_window_exactly() {
    let mut cfg = kerkov();
    cfg.context_window = 100_001; // 0.65 x 100,001 = 65,000.65 -> 65,001
    assert_eq!(cfg.threshold_tokens(), 65_001);
    let mut rows = vec![sys("You are Kerkov.")];
    rows.extend(chatter(14, "c1"));
    let (at, _) = run(Format::OpenaiChat, doc(rows.clone()), cfg.clone(), usage_total(65_001));
    assert_eq!(at.status, "compacted", "{}", at.reason);
    assert_eq!(at.reason, "provider_usage_over_threshold");
    assert_eq!(at.decision.threshold_tokens, 65_001);
    let (below, reqs) = run(Format::OpenaiChat, doc(rows), cfg, usage_total(65_000));
    assert_eq!(below.status, "skipped");
    assert_eq!(below.reason, "under_threshold");
    assert!(reqs.is_empty());
}

#[test]
fn c1_threshold_default_window_and_anthropic_usage() {
    let cfg = kerkov();
    assert_eq!(cfg.threshold_tokens(), 130_000);
    let mut rows = vec![a_user("scan the subnet")];
    for i in 0..7 {
        rows.push(a_asst(&format!("working on step {i} of the scan, found nothing yet")));
        rows.push(a_user(&format!("continue with step {}", i + 1)));
    }
    let d = json!({ "system": "You are Kerkov.", "messages": rows });
    // Anthropic: input + cache reads + output = the provider total.
    let at = Signals { usage: Some(json!({ "input_tokens": 100_000, "cache_read_input_tokens": 29_000, "output_tokens": 1_000 })), ..Signals::default() };
    let (o, _) = run(Format::Anthropic, d.clone(), cfg.clone(), at);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let below = Signals { usage: Some(json!({ "input_tokens": 100_000, "cache_read_input_tokens": 29_000, "output_tokens": 999 })), ..Signals::default() };
    let (o2, _) = run(Format::Anthropic, d, cfg, below);
    assert_eq!(o2.status, "skipped");
    assert_eq!(o2.reason, "under_threshold");
    let s = o2.decision.signals.iter().find(|s| s.name == "provider_total_tokens").unwrap();
    assert_eq!((s.value, s.threshold, s.crossed), (129_999, 130_000, false));
}

#[test]
fn c1_no_usage_means_no_compaction_and_no_local_estimate() {
    let mut cfg = kerkov();
    cfg.context_window = 1_000; // threshold 650 tokens; the transcript is ~250,000 estimated
    let big = "x".repeat(50_000);
    let mut rows = vec![sys("You are Kerkov.")];
    for i in 0..10 {
        rows.push(user(&format!("{i} {big}")));
        rows.push(asst(&format!("{i} {big}")));
    }
    let mut called = false;
    let (o, _) = compact_with(Format::OpenaiChat, doc(rows.clone()), cfg, SessionState::default(), Signals::default(), |r| {
        called = true;
        fake_summary(r)
    });
    assert_eq!(o.status, "skipped");
    assert_eq!(o.reason, "no_provider_usage");
    assert!(!o.decision.compact);
    assert!(o.decision.signals.is_empty(), "no local estimate is computed as a signal: {:?}", o.decision.signals);
    assert!(!called);
    assert!(o.rewrite.is_none());
    assert_eq!(encode(&o.transcript, View::Stored), doc(rows));
}

// ---------------------------------------------------------------- S-1, S-2

#[test]
fn s1_system_prompt_and_summary_block_never_folded() {
    let mut rows = vec![sys("SYSTEM-PROMPT-KERKOV"), summary("EARLIER-SUMMARY-ONE", 1), summary("EARLIER-SUMMARY-TWO", 1)];
    rows.extend(chatter(14, "s1"));
    let (o, reqs) = run(Format::OpenaiChat, doc(rows.clone()), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = req_text(&reqs[0]);
    assert!(!text.contains("SYSTEM-PROMPT-KERKOV"));
    assert!(!text.contains("EARLIER-SUMMARY"));
    let rw = o.rewrite.as_ref().unwrap();
    assert!(!rw.discarded.contains(&0) && !rw.discarded.contains(&1) && !rw.discarded.contains(&2));
    assert_eq!(rw.discarded, (3..11).collect::<Vec<_>>());
    let msgs = out_messages(&o);
    assert_eq!(msgs[0], rows[0]);
    assert_eq!(msgs[1], rows[1]);
    assert_eq!(msgs[2], rows[2]);
}

#[test]
fn s2_recent_window_keeps_six_messages() {
    let mut rows = vec![sys("sys")];
    rows.extend(chatter(14, "s2"));
    let (o, _) = run(Format::OpenaiChat, doc(rows.clone()), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![0, 9, 10, 11, 12, 13, 14]);
    let msgs = out_messages(&o);
    assert_eq!(msgs.len(), 1 + 1 + 6);
    assert_eq!(&msgs[2..], &rows[9..]);
}

#[test]
fn s2_recent_window_keeps_fewer_over_65536_bytes() {
    let big = "b".repeat(20_000);
    let mut rows = vec![sys("sys")];
    rows.extend(chatter(6, "old"));
    for i in 0..6 {
        rows.push(if i % 2 == 0 { user(&format!("{i}{big}")) } else { asst(&format!("{i}{big}")) });
    }
    // each of the last rows is ~20,040 bytes: three fit in 65,536, a fourth does not
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![0, 10, 11, 12]);
}

#[test]
fn s2_one_oversized_message_does_not_pin_the_window() {
    let mut rows = vec![sys("sys")];
    rows.extend(chatter(4, "old"));
    rows.push(asst(&"O".repeat(100_000))); // a recall(full=true) expansion
    rows.push(user("and then?"));
    rows.push(asst("then we scan port 443."));
    rows.push(user("go on"));
    let (o, reqs) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    // the window stops at the oversized row; it is folded
    assert_eq!(retained_sources(&o), vec![0, 6, 7, 8]);
    assert!(o.rewrite.as_ref().unwrap().discarded.contains(&5));
    assert!(req_text(&reqs[0]).contains("OOOO"));
    assert!(o.after.bytes < 10_000);
}

#[test]
fn s2_bytes_count_tool_call_arguments_with_empty_content() {
    let args = format!("{{\"script\":\"{}\"}}", "a".repeat(40_000));
    let rows = vec![
        sys("sys"),
        user("u1"),
        asst("a1"),
        user("u2"),
        asst("a2"),
        user("u3"),
        calls(&[("c1", "run", &args)]),
        tool("c1", "ok"),
        calls(&[("c2", "run", &args)]),
        tool("c2", "ok"),
        asst("done"),
        user("next"),
    ];
    // by count alone the window would start at 6; the arguments (80 KB, content null)
    // push it to 7, inside c1's exchange, whose walk-back blows the budget -> forward to 8
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![0, 8, 9, 10, 11]);
    validate_pairing(&o.transcript).unwrap();
}

#[test]
fn s2_bytes_count_anthropic_tool_use_input_with_no_text() {
    let big = "i".repeat(40_000);
    let tu = |id: &str| json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": id, "name": "run", "input": { "script": big } }] });
    let rows = vec![a_user("u1"), a_asst("a1"), a_user("u2"), a_asst("a2"), a_user("u3"), tu("t1"), a_results(&[("t1", "ok", false)]), tu("t2"), a_results(&[("t2", "ok", false)]), a_asst("done"), a_user("next")];
    let (o, _) = run(Format::Anthropic, json!({ "system": "sys", "messages": rows }), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![7, 8, 9, 10]);
    validate_pairing(&o.transcript).unwrap();
}

// ---------------------------------------------------------------- S-3, S-4

#[test]
fn s3_walks_back_out_of_trailing_tool_results() {
    let rows = vec![
        sys("sys"),
        user(&long("u1")),
        asst(&long("a1")),
        user(&long("u2")),
        calls(&[("c1", "nmap", "{}"), ("c2", "whois", "{}")]),
        tool("c1", "22/tcp open"),
        tool("c2", "registrant: example"),
        asst("a3"),
        user("u4"),
        asst("a4"),
        user("u5"),
    ];
    // count window starts at 5 (a result of c1): walk back to 4
    let t = formats::decode(Format::OpenaiChat, doc(rows.clone())).unwrap();
    let sel = select(&t.messages, &kerkov(), None).unwrap();
    assert_eq!(sel.fold, vec![1, 2, 3]);
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(retained_sources(&o), vec![0, 4, 5, 6, 7, 8, 9, 10]);
    validate_pairing(&o.transcript).unwrap();
}

#[test]
fn s3_walks_forward_when_walk_back_would_consume_the_range() {
    let body = "r".repeat(3_000);
    let rows = vec![sys("sys"), calls(&[("c1", "nmap", "{}"), ("c2", "whois", "{}")]), tool("c1", &body), tool("c2", &body), asst("read both results"), user("u"), asst("a"), user("u2"), asst("a2")];
    let (o, reqs) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(o.rewrite.as_ref().unwrap().discarded, vec![1, 2, 3]);
    assert_eq!(retained_sources(&o), vec![0, 4, 5, 6, 7, 8]);
    assert!(req_text(&reqs[0]).contains(" c2 ok:"));
    validate_pairing(&o.transcript).unwrap();
}

#[test]
fn s3_no_forward_walk_without_a_later_reader() {
    // the walk-back would consume the range, and no assistant message follows the
    // results: the group cannot move forward, nothing is eligible
    let rows = vec![sys("sys"), calls(&[("c1", "nmap", "{}")]), tool("c1", "out"), user("u1"), user("u2"), user("u3"), user("u4"), user("u5")];
    let t = formats::decode(Format::OpenaiChat, doc(rows)).unwrap();
    let mut cfg = kerkov();
    cfg.preserve_recent_turns = 6; // window starts at 2, inside the exchange
    let err = select(&t.messages, &cfg, None).unwrap_err();
    assert_eq!(err.reason, "nothing_eligible");
}

#[test]
fn s3_tool_exchange_at_the_end_stays_intact() {
    let big = "z".repeat(30_000);
    let rows = vec![sys("sys"), user(&long("u1")), asst(&long("a1")), user(&long("u2")), calls(&[("c1", "a", "{}"), ("c2", "b", "{}"), ("c3", "c", "{}")]), tool("c1", &big), tool("c2", &big), tool("c3", &big)];
    // the byte budget stops the window inside the exchange; there is no forward boundary
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![0, 4, 5, 6, 7]);
    validate_pairing(&o.transcript).unwrap();
}

/// S-3, S-4, W-2: the newest row is a tool call still waiting for its result and is so
/// large (70 KB of arguments, over `preserve_recent_bytes`) that the recent window is
/// empty (S-2). The pending call stays verbatim, so the result that arrives next pairs
/// (a real Claude Code log folded a 21 KB pending Write, then rejected its result).
#[test]
fn s3_s4_w2_pending_call_at_end_is_never_folded_when_the_recent_window_is_empty() {
    let args = json!({ "path": "/root/solve.py", "content": "x".repeat(70_000) }).to_string();
    let rows = vec![sys("sys"), user(&long("u1")), asst(&long("a1")), user(&long("u2")), calls(&[("w1", "write", &args)])];
    let t = formats::decode(Format::OpenaiChat, doc(rows.clone())).unwrap();
    let sel = select(&t.messages, &kerkov(), None).unwrap();
    assert_eq!(sel.fold, vec![1, 2, 3]);
    let (o, _) = run(Format::OpenaiChat, doc(rows.clone()), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![0, 4]);
    // the result arriving next pairs with the kept call
    let mut next = encode(&o.transcript, View::Stored);
    next.as_array_mut().unwrap().push(tool("w1", "written"));
    let t2 = formats::decode(Format::OpenaiChat, next).unwrap();
    validate_pairing(&t2).unwrap();
}

/// S-3: a complete exchange whose result is the newest row (no later row read it) and
/// is over `preserve_recent_bytes` stays intact; only the rows before it fold.
#[test]
fn s3_unread_exchange_at_end_stays_intact_when_the_recent_window_is_empty() {
    let rows = vec![sys("sys"), user(&long("u1")), asst(&long("a1")), user(&long("u2")), calls(&[("c1", "fetch", "{}")]), tool("c1", &"r".repeat(70_000))];
    let t = formats::decode(Format::OpenaiChat, doc(rows)).unwrap();
    let sel = select(&t.messages, &kerkov(), None).unwrap();
    assert_eq!(sel.fold, vec![1, 2, 3]);
}

fn exchange_only() -> Vec<Value> {
    vec![sys("sys"), calls(&[("c1", "a", "{}"), ("c2", "b", "{}"), ("c3", "c", "{}")]), tool("c1", &"1".repeat(30_000)), tool("c2", &"2".repeat(30_000)), tool("c3", &"3".repeat(30_000))]
}

#[test]
fn s3_exchange_at_end_with_nothing_earlier_returns_none_with_reason() {
    let t = formats::decode(Format::OpenaiChat, doc(exchange_only())).unwrap();
    let err = select(&t.messages, &kerkov(), None).unwrap_err();
    assert_eq!(err.reason, "tool_exchange_at_end");
    let mut called = false;
    let (o, _) = compact_with(Format::OpenaiChat, doc(exchange_only()), kerkov(), SessionState::default(), over(), |r| {
        called = true;
        fake_summary(r)
    });
    assert_eq!(o.status, "skipped");
    assert_eq!(o.reason, "tool_exchange_at_end");
    assert!(!called);
    assert_eq!(encode(&o.transcript, View::Stored), doc(exchange_only()));
}

#[test]
fn s4_parallel_calls_never_split_openai() {
    let rows = vec![
        sys("sys"),
        user(&long("u1")),
        asst(&long("a1")),
        user(&long("u2")),
        calls(&[("c1", "a", "{}"), ("c2", "b", "{}"), ("c3", "c", "{}")]),
        tool("c1", "r1"),
        tool("c2", "r2"),
        tool("c3", "r3"),
        asst("a2"),
        user("u3"),
        asst("a3"),
        user("u4"),
    ];
    // 6-message window starts at 6 (between c1's and c2's results)
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(retained_sources(&o), vec![0, 4, 5, 6, 7, 8, 9, 10, 11]);
    validate_pairing(&o.transcript).unwrap();
}

#[test]
fn s4_parallel_calls_never_split_anthropic() {
    let rows = vec![
        a_user("u1"),
        a_asst(&long("a1")),
        a_user("u2"),
        a_asst(&long("a2")),
        a_uses(&[("t1", "a"), ("t2", "b"), ("t3", "c")]),
        a_results(&[("t1", "r1", false), ("t2", "r2", false), ("t3", "r3", true)]),
        a_asst("a3"),
        a_user("u4"),
        a_asst("a4"),
        a_user("u5"),
        a_asst("a5"),
    ];
    // window starts at 5 (the results): walk back to 4
    let (o, _) = run(Format::Anthropic, json!({ "system": "sys", "messages": rows }), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(retained_sources(&o), vec![4, 5, 6, 7, 8, 9, 10]);
    validate_pairing(&o.transcript).unwrap();
}

// ---------------------------------------------------------------- S-5

#[test]
fn s5_selection_failure_warns_once() {
    let (o1, _) = compact_with(Format::OpenaiChat, doc(exchange_only()), kerkov(), SessionState::default(), over(), fake_summary);
    assert_eq!(o1.status, "skipped");
    assert_eq!(warnings(&o1, "selection_failed"), 1);
    let w = o1.events.iter().find(|e| e.kind == "warning").unwrap();
    assert_eq!(w.data["reason"], "tool_exchange_at_end");
    assert_eq!(o1.state.cadence.last_failure.as_deref(), Some("tool_exchange_at_end"));
    let (o2, _) = compact_with(Format::OpenaiChat, doc(exchange_only()), kerkov(), o1.state.clone(), over(), fake_summary);
    assert_eq!(o2.status, "skipped");
    // C-5 with S-5: the same transcript is not retried (no new warning either).
    assert!(o2.reason == "tool_exchange_at_end" || o2.reason == "unchanged_since_failed_attempt", "{}", o2.reason);
    assert_eq!(o2.events.iter().filter(|e| e.kind == "warning").count(), 0);
}

// ---------------------------------------------------------------- E-1 .. E-5

#[test]
fn e1_evicted_body_never_reaches_the_summarizer() {
    let stamped = format!("HEAD {} STAMPEDSECRET {}", "s".repeat(3_000), "s".repeat(3_000));
    let clipped = format!("HEAD {} CLIPSECRET {}", "c".repeat(3_000), "c".repeat(3_000));
    let mut rows = vec![sys("sys"), user("scan"), calls(&[("c1", "nmap", "{}"), ("c2", "dirb", "{}")]), tool_ref("c1", &stamped, "artifact#7"), tool("c2", &clipped), asst("read")];
    rows.extend(chatter(6, "tail"));
    let (o, reqs) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(reqs.len(), 1);
    let text = req_text(&reqs[0]);
    assert!(!text.contains("STAMPEDSECRET") && !text.contains("CLIPSECRET"));
    assert!(text.contains("artifact#7"));
    assert!(text.contains("clipped:"));
    assert_eq!(o.rewrite.as_ref().unwrap().evicted.len(), 2);
    // the full bodies went to memory projection, not to the summarizer
    assert_eq!(o.evicted_bodies.len(), 2);
    assert_eq!(o.evicted_bodies[0].body, stamped);
}

#[test]
fn e2_header_kept_on_evicted_copy_anthropic_is_error() {
    let body = "E".repeat(5_000);
    let rows = json!({ "system": "sys", "messages": [
        a_user("scan"),
        a_uses(&[("t1", "nmap")]),
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "is_error": true, "cache_control": { "type": "ephemeral" }, "content": [{ "type": "text", "text": body }] }], "artifact_ref": "artifact#4" },
        a_asst("it failed"), a_user("u"), a_asst("a"), a_user("u"), a_asst("a"), a_user("u"), a_asst("a")
    ]});
    let t = formats::decode(Format::Anthropic, rows.clone()).unwrap();
    let (copies, report, _) = evict(Format::Anthropic, &t.messages, &[0, 1, 2, 3], &kerkov()).unwrap();
    let block = &copies[2].raw.value()["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["tool_use_id"], "t1");
    assert_eq!(block["is_error"], true);
    assert_eq!(block["cache_control"]["type"], "ephemeral");
    assert_eq!(block["content"], "artifact#4");
    assert_eq!(report[0].tool_name.as_deref(), Some("nmap"));
    // and through the engine: the summarizer sees the error status with the handle
    let (o, reqs) = run(Format::Anthropic, rows, kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert!(req_text(&reqs[0]).contains("<- result of nmap t1 ERROR: artifact#4\nartifact#4"));
}

#[test]
fn e2_header_kept_on_evicted_copy_openai_name() {
    let rows = vec![sys("sys"), user("scan"), calls(&[("c1", "nmap", "{}")]), json!({ "role": "tool", "tool_call_id": "c1", "name": "nmap_tool", "content": "N".repeat(5_000) }), asst("ok")];
    let t = formats::decode(Format::OpenaiChat, doc(rows)).unwrap();
    let (copies, report, bodies) = evict(Format::OpenaiChat, &t.messages, &[1, 2, 3, 4], &kerkov()).unwrap();
    let copy = &copies[2].raw.value();
    assert_eq!(copy["name"], "nmap_tool");
    assert_eq!(copy["tool_call_id"], "c1");
    assert_eq!(copy["role"], "tool");
    assert_ne!(copy["content"], t.messages[3].raw.value()["content"]);
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].tool_name.as_deref(), Some("nmap_tool"));
    assert_eq!(report[0].call_id, "c1");
    assert_eq!(bodies[0].body.len(), 5_000);
    // the source is untouched (a copy is rewritten)
    assert_eq!(t.messages[3].raw.value()["content"].as_str().unwrap().len(), 5_000);
}

fn evict_report(rows: Vec<Value>) -> Vec<context_compactor::evict::Evicted> {
    let t = formats::decode(Format::OpenaiChat, doc(rows)).unwrap();
    let all: Vec<usize> = (0..t.messages.len()).collect();
    evict(Format::OpenaiChat, &t.messages, &all, &kerkov()).unwrap().1
}

#[test]
fn e3_floor_is_1024_body_bytes() {
    let r = evict_report(vec![calls(&[("c1", "x", "{}")]), tool("c1", &"a".repeat(1_024))]);
    assert!(r.is_empty(), "exactly 1,024 bytes is not evicted");
    let r = evict_report(vec![calls(&[("c1", "x", "{}")]), tool("c1", &"a".repeat(1_025))]);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].body_bytes, 1_025);
    // bytes, not characters: 341 CJK chars (1,023 bytes) + 1 = 1,024 bytes; +2 = 1,025
    let cjk = "数".repeat(341);
    assert!(evict_report(vec![calls(&[("c1", "x", "{}")]), tool("c1", &format!("{cjk}a"))]).is_empty());
    assert_eq!(evict_report(vec![calls(&[("c1", "x", "{}")]), tool("c1", &format!("{cjk}ab"))]).len(), 1);
}

#[test]
fn e3_metadata_heavy_result_with_short_body_not_evicted() {
    let meta = json!({ "hosts": (0..200).map(|i| format!("10.0.{i}.1")).collect::<Vec<_>>(), "scanner": "nmap 7.94" });
    let r = evict_report(vec![calls(&[("c1", "x", "{}")]), json!({ "role": "tool", "tool_call_id": "c1", "name": "x", "metadata": meta, "content": "3 hosts up" })]);
    assert!(r.is_empty());
    // Anthropic: the same, many small parts under the floor plus a big image do not count as body
    let rows = json!([a_uses(&[("t1", "x")]), { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": [{ "type": "text", "text": "ok" }, { "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "A".repeat(20_000) } }] }] }]);
    let t = formats::decode(Format::Anthropic, rows).unwrap();
    assert!(evict(Format::Anthropic, &t.messages, &[0, 1], &kerkov()).unwrap().1.is_empty());
}

#[test]
fn e3_every_candidate_over_the_floor_is_evicted_in_order() {
    let sizes = [1_025usize, 50_000, 1_100, 1_024, 3_000, 200];
    let ids: Vec<String> = (0..sizes.len()).map(|i| format!("c{i}")).collect();
    let cs: Vec<(&str, &str, &str)> = ids.iter().map(|id| (id.as_str(), "x", "{}")).collect();
    let mut rows = vec![calls(&cs)];
    for (id, s) in ids.iter().zip(sizes) {
        rows.push(tool(id, &"q".repeat(s)));
    }
    let r = evict_report(rows);
    let got: Vec<(&str, usize)> = r.iter().map(|e| (e.call_id.as_str(), e.body_bytes)).collect();
    assert_eq!(got, vec![("c0", 1_025), ("c1", 50_000), ("c2", 1_100), ("c4", 3_000)]);
}

#[test]
fn e4_stamped_ref_becomes_bare_handle_else_clip() {
    let rows = vec![calls(&[("c1", "x", "{}"), ("c2", "y", "{}")]), tool_ref("c1", &"p".repeat(4_000), "artifact#12"), tool("c2", &"q".repeat(4_000))];
    let t = formats::decode(Format::OpenaiChat, doc(rows)).unwrap();
    let (copies, r, _) = evict(Format::OpenaiChat, &t.messages, &[0, 1, 2], &kerkov()).unwrap();
    assert_eq!(copies[1].raw.value()["content"], "artifact#12");
    assert_eq!(r[0].handle.as_deref(), Some("artifact#12"));
    assert!(!r[0].clipped);
    assert_eq!(r[0].kept_bytes, "artifact#12".len());
    let clipped_raw = copies[2].raw.value();
    let clipped = clipped_raw["content"].as_str().unwrap();
    assert!(r[1].handle.is_none());
    assert!(r[1].clipped);
    assert!(clipped.contains("unrecoverable"));
    assert!(clipped.starts_with(&"q".repeat(1_200)));
    assert!(clipped.ends_with(&"q".repeat(400)));
    assert!(clipped.contains("2400 bytes (2400 characters) omitted"));
}

#[test]
fn e4_through_the_engine_report() {
    let mut rows = vec![sys("sys"), user("scan"), calls(&[("c1", "x", "{}"), ("c2", "y", "{}")]), tool_ref("c1", &"p".repeat(4_000), "artifact#12"), tool("c2", &"q".repeat(4_000)), asst("read")];
    rows.extend(chatter(6, "t"));
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    let ev = &o.rewrite.as_ref().unwrap().evicted;
    assert_eq!(ev.len(), 2);
    assert_eq!((ev[0].offset, ev[0].handle.as_deref(), ev[0].clipped), (3, Some("artifact#12"), false));
    assert_eq!((ev[1].offset, ev[1].handle.as_deref(), ev[1].clipped), (4, None, true));
}

/// Parses "N bytes (M characters) omitted" out of a clip.
fn omitted(s: &str) -> (usize, usize) {
    let p = s.find("clipped: ").unwrap() + 9;
    let rest = &s[p..];
    let b: usize = rest.split(' ').next().unwrap().parse().unwrap();
    let q = rest.find('(').unwrap() + 1;
    let c: usize = rest[q..].split(' ').next().unwrap().parse().unwrap();
    (b, c)
}

#[test]
fn e5_clips_of_cjk_and_emoji_are_valid_and_state_what_was_omitted() {
    let bodies = ["数据库连接失败。".repeat(300), "😀🇺🇸👨‍👩‍👧".repeat(200), format!("{}é{}", "数".repeat(500), "🎉".repeat(500))];
    for body in &bodies {
        for head in 0..12 {
            for tail in 0..9 {
                let (h, t) = (1_000 + head, 300 + tail);
                let c = clip(body, h, t);
                let utf16: Vec<u16> = c.encode_utf16().collect();
                assert_eq!(String::from_utf16(&utf16).unwrap(), c);
                let m = c.find("\n[... clipped: ").unwrap();
                let end = c.find(" ...]\n").unwrap() + 6;
                let (kept_head, kept_tail) = (&c[..m], &c[end..]);
                assert!(body.starts_with(kept_head) && body.ends_with(kept_tail));
                assert!(kept_head.len() <= h && kept_tail.len() <= t + 4);
                let (ob, oc) = omitted(&c);
                assert_eq!(ob, body.len() - kept_head.len() - kept_tail.len());
                assert_eq!(oc, body[kept_head.len()..body.len() - kept_tail.len()].chars().count());
            }
        }
    }
}

#[test]
fn e5_engine_clip_of_emoji_result_is_valid_utf8_and_utf16() {
    let body = "漏洞 😀 ".repeat(800);
    let mut rows = vec![sys("sys"), user("scan"), calls(&[("c1", "x", "{}")]), tool("c1", &body), asst("read")];
    rows.extend(chatter(6, "t"));
    let (o, reqs) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = req_text(&reqs[0]);
    let utf16: Vec<u16> = text.encode_utf16().collect();
    assert!(String::from_utf16(&utf16).is_ok());
    assert!(text.contains("characters) omitted; unrecoverable"));
    assert!(o.rewrite.unwrap().evicted[0].clipped);
}

// ---------------------------------------------------------------- Y-1 .. Y-4

#[test]
fn y1_summary_text_comes_from_the_callback() {
    let mut rows = vec![sys("sys")];
    rows.extend(chatter(14, "y1"));
    let (o, reqs) = compact_with(Format::OpenaiChat, doc(rows), kerkov(), SessionState::default(), over(), |_| Reply::Summary { text: "  THE-CALLBACK-SUMMARY  ".into(), usage: None });
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].kind, "summary");
    assert_eq!(reqs[0].system, SUMMARY_PROMPT);
    let s = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap();
    assert!(s.text.starts_with("THE-CALLBACK-SUMMARY"));
    assert_eq!(s.source.writer, "provider");
    assert_eq!((s.level, s.offset), (1, 1));
    let msgs = out_messages(&o);
    assert!(content_text(&msgs[1]).starts_with("THE-CALLBACK-SUMMARY"));
    assert_eq!(msgs[1]["summary_level"], 1);
}

#[test]
fn y2_artifact_index_lists_stamped_and_inline_handles() {
    let mut rows = vec![
        sys("sys"),
        user("look at artifact#3 from yesterday"),
        calls(&[("c1", "x", "{}")]),
        tool_ref("c1", "short", "artifact#5"),
        asst("the dump in artifact#9 matters"),
    ];
    rows.extend(chatter(6, "t"));
    // the session issued artifact#1..9 (state.nextArtifact 10): inline mentions of them count
    let issued = SessionState { next_artifact: 10, ..SessionState::default() };
    let (o, _) = compact_with(Format::OpenaiChat, doc(rows.clone()), kerkov(), issued, over(), |_| Reply::Summary { text: "no handles mentioned".into(), usage: None });
    let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
    let idx = text.find("\nArtifacts: ").expect("artifact index");
    let list: Vec<&str> = text[idx + 12..].lines().next().unwrap().split(", ").collect();
    let mut sorted = list.clone();
    sorted.sort();
    assert_eq!(sorted, vec!["artifact#3", "artifact#5", "artifact#9"]);
    // issue 14: a handle the engine never issued nor saw stamped is text, not a handle
    let (o, _) = compact_with(Format::OpenaiChat, doc(rows), kerkov(), SessionState::default(), over(), |_| Reply::Summary { text: "no handles mentioned".into(), usage: None });
    let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
    assert!(text.lines().any(|l| l == "Artifacts: artifact#5"), "only the stamped handle is indexed: {text}");
}

#[test]
fn y2_artifact_index_capped_at_60_newest_kept() {
    // 70 tool results, each stamped artifact#(100+i), oldest first; the first user
    // message mentions artifact#1 inline (the oldest of all)
    let mut rows = vec![sys("sys"), user("start from artifact#1")];
    for i in 0..70 {
        let id = format!("c{i}");
        rows.push(calls(&[(id.as_str(), "x", "{}")]));
        rows.push(tool_ref(&id, "ok", &format!("artifact#{}", 100 + i)));
    }
    rows.push(asst("all read"));
    rows.extend(chatter(6, "t"));
    let (o, _) = compact_with(Format::OpenaiChat, doc(rows), kerkov(), SessionState::default(), over(), |_| Reply::Summary { text: "sum".into(), usage: None });
    let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
    let idx = text.find("\nArtifacts: ").expect("artifact index");
    let list: Vec<String> = text[idx + 12..].lines().next().unwrap().split(", ").map(String::from).collect();
    assert_eq!(list.len(), 60);
    let want: Vec<String> = (110..170).map(|n| format!("artifact#{n}")).collect();
    assert_eq!(list, want, "the 60 newest, oldest of them first");
}

#[test]
fn y2_inline_handle_in_tool_output_is_indexed() {
    let mut rows = vec![sys("sys"), user("recall it"), calls(&[("c1", "recall", "{}")]), tool("c1", "found it: see artifact#42 for the full scan"), asst("ok")];
    rows.extend(chatter(6, "t"));
    // the recall tool names a handle this session issued (state.nextArtifact 43)
    let issued = SessionState { next_artifact: 43, ..SessionState::default() };
    let (o, _) = compact_with(Format::OpenaiChat, doc(rows), kerkov(), issued, over(), |_| Reply::Summary { text: "sum".into(), usage: None });
    let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
    assert!(text.contains("Artifacts: artifact#42"), "{text}");
}

fn with_block(levels: &[u8]) -> Vec<Value> {
    let mut rows = vec![sys("sys")];
    for (i, l) in levels.iter().enumerate() {
        rows.push(summary(&format!("SUMMARY-{i}-L{l} findings artifact#{}", 500 + i), *l));
    }
    rows.extend(chatter(14, "roll"));
    rows
}

fn block_levels(o: &Outcome) -> Vec<u64> {
    out_messages(o).iter().skip(1).take_while(|m| m.get("summary_level").is_some()).map(|m| m["summary_level"].as_u64().unwrap()).collect()
}

#[test]
fn y3_block_2211_becomes_222_in_one_rollup_call() {
    // the summaries' handles artifact#500.. were issued by this session (state.nextArtifact)
    let issued = SessionState { next_artifact: 600, ..SessionState::default() };
    let (o, reqs) = compact_with(Format::OpenaiChat, doc(with_block(&[2, 2, 1, 1])), kerkov(), issued, over(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(block_levels(&o), vec![2, 2, 2]);
    let kinds: Vec<&str> = reqs.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, vec!["summary", "rollup"]);
    assert_eq!(reqs[1].system, ROLLUP_PROMPT);
    let rt = req_text(&reqs[1]);
    assert!(rt.contains("SUMMARY-2-L1") && rt.contains("SUMMARY-3-L1") && rt.contains("SUMMARY(summary"));
    assert!(!rt.contains("SUMMARY-0-L2") && !rt.contains("SUMMARY-1-L2"));
    let rw = o.rewrite.as_ref().unwrap();
    assert_eq!(rw.rollups.len(), 1);
    assert_eq!((rw.rollups[0].pass.as_str(), rw.rollups[0].merged), ("level1_to_level2", 3));
    let msgs = out_messages(&o);
    assert!(content_text(&msgs[1]).starts_with("SUMMARY-0-L2"));
    assert!(content_text(&msgs[2]).starts_with("SUMMARY-1-L2"));
    let merged = content_text(&msgs[3]);
    assert!(merged.starts_with("SUMMARY(rollup"));
    // handles of the merged summaries survive (Y-2: rollup does the same)
    assert!(merged.contains("artifact#502") && merged.contains("artifact#503"));
    assert_eq!((rw.summary.as_ref().unwrap().level, rw.summary.as_ref().unwrap().offset), (2, 3));
}

#[test]
fn y3_block_2221_1_merges_level1_run_even_below_four() {
    // [2,2,1,1,1] as given in the seed (after this compaction's new level-1: 6 > 4)
    let (o, reqs) = run(Format::OpenaiChat, doc(with_block(&[2, 2, 1, 1, 1])), kerkov(), over());
    assert_eq!(block_levels(&o), vec![2, 2, 2]);
    assert_eq!(reqs.iter().filter(|r| r.kind == "rollup").count(), 1);
}

#[test]
fn y3_no_rollup_at_or_under_four() {
    let (o, reqs) = run(Format::OpenaiChat, doc(with_block(&[2, 1, 1])), kerkov(), over());
    assert_eq!(block_levels(&o), vec![2, 1, 1, 1]);
    assert_eq!(reqs.len(), 1);
}

#[test]
fn y3_level2s_past_four_merge_among_themselves() {
    let (o, reqs) = run(Format::OpenaiChat, doc(with_block(&[2, 2, 2, 2, 2])), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(block_levels(&o), vec![2, 1]);
    let kinds: Vec<&str> = reqs.iter().map(|r| r.kind.as_str()).collect();
    assert_eq!(kinds, vec!["summary", "rollup"]);
    let rt = req_text(&reqs[1]);
    for i in 0..5 {
        assert!(rt.contains(&format!("SUMMARY-{i}-L2")));
    }
    assert!(!rt.contains("SUMMARY(summary"));
    assert_eq!(o.rewrite.as_ref().unwrap().rollups[0].pass, "level2_merge");
}

#[test]
fn y3_both_passes_use_the_merge_prompt() {
    let (o, reqs) = run(Format::OpenaiChat, doc(with_block(&[2, 2, 2, 2, 1, 1])), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let rollups: Vec<&SummarizeRequest> = reqs.iter().filter(|r| r.kind == "rollup").collect();
    assert_eq!(rollups.len(), 2);
    assert!(rollups.iter().all(|r| r.system == ROLLUP_PROMPT));
    let passes: Vec<&str> = o.rewrite.as_ref().unwrap().rollups.iter().map(|r| r.pass.as_str()).collect();
    assert_eq!(passes, vec!["level1_to_level2", "level2_merge"]);
    assert_eq!(block_levels(&o), vec![2]);
    validate_pairing(&o.transcript).unwrap();
}

#[test]
fn y3_out_of_order_stored_block_rolls_up_with_the_merge_newest() {
    // a stored block [1,1,1,2] (host data): + new 1 -> the level-1s merge; the merged
    // summary holds the newest text, so it sits last: [2,2]
    let (o, reqs) = run(Format::OpenaiChat, doc(with_block(&[1, 1, 1, 2])), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(block_levels(&o), vec![2, 2]);
    assert_eq!(reqs.iter().filter(|r| r.kind == "rollup").count(), 1);
    let msgs = out_messages(&o);
    assert!(content_text(&msgs[1]).starts_with("SUMMARY-3-L2"));
    assert!(content_text(&msgs[2]).starts_with("SUMMARY(rollup"));
    assert_eq!(o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().offset, 2);
    check_patch(Format::OpenaiChat, doc(with_block(&[1, 1, 1, 2])));
}

#[test]
fn y4_new_summary_is_placed_after_existing_ones() {
    let (o, _) = run(Format::OpenaiChat, doc(with_block(&[2, 1])), kerkov(), over());
    let msgs = out_messages(&o);
    assert!(content_text(&msgs[1]).starts_with("SUMMARY-0-L2"));
    assert!(content_text(&msgs[2]).starts_with("SUMMARY-1-L1"));
    assert!(content_text(&msgs[3]).starts_with("SUMMARY(summary"));
    assert_eq!(msgs[3]["summary_level"], 1);
    assert_eq!(msgs[3]["transcript_role"], "compaction_summary");
    assert_eq!(o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().offset, 3);
    assert!(msgs[4].get("summary_level").is_none());
}

#[test]
fn y4_anthropic_summary_goes_first_when_block_is_empty() {
    let mut rows = vec![a_user("first task")];
    for i in 0..7 {
        rows.push(a_asst(&format!("a{i}")));
        rows.push(a_user(&format!("u{i}")));
    }
    let (o, _) = run(Format::Anthropic, json!({ "system": "sys", "messages": rows }), kerkov(), over());
    let msgs = out_messages(&o);
    assert_eq!(msgs[0]["summary_level"], 1);
    assert_eq!(o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().offset, 0);
}

// ---------------------------------------------------------------- W-1 .. W-7

fn mixed_rows() -> Vec<Value> {
    let mut rows = vec![sys("sys"), summary("older summary artifact#1", 1), user("scan 10.0.0.0/24")];
    rows.push(calls(&[("c1", "nmap", "{\"t\":1}"), ("c2", "dig", "{}")]));
    rows.push(tool_ref("c1", &"n".repeat(5_000), "artifact#2"));
    rows.push(tool("c2", "A 10.0.0.5"));
    rows.push(asst("two hosts"));
    rows.extend(chatter(4, "mid"));
    rows.push(calls(&[("c3", "curl", "{}")]));
    rows.push(tool("c3", &"h".repeat(2_000)));
    rows.extend(chatter(5, "tail"));
    rows
}

#[test]
fn w1_retained_and_discarded_partition_the_source() {
    let rows = mixed_rows();
    let n = rows.len();
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let rw = o.rewrite.as_ref().unwrap();
    let ret = retained_sources(&o);
    assert!(ret.windows(2).all(|w| w[0] < w[1]));
    assert!(rw.discarded.windows(2).all(|w| w[0] < w[1]));
    let mut all: Vec<usize> = ret.iter().chain(rw.discarded.iter()).copied().collect();
    all.sort();
    assert_eq!(all, (0..n).collect::<Vec<_>>());
    // each retained row is where it says, with its id
    for r in &rw.retained {
        assert_eq!(o.transcript.messages[r.offset].id, r.id);
    }
    assert_eq!(o.transcript.messages.len(), ret.len() + 1);
}

#[test]
fn w2_every_rewrite_is_validated() {
    let (o, _) = run(Format::OpenaiChat, doc(mixed_rows()), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    for c in ["retained_in_order", "protected_rows_kept", "system_rows_kept", "summary_in_place", "provider_pairing", "smaller"] {
        assert!(o.checks.contains(&c), "check {c} ran: {:?}", o.checks);
    }
    validate_pairing(&o.transcript).unwrap();
    assert!(o.after.bytes < o.before.bytes);
    let msgs = out_messages(&o);
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[1]["summary_level"], 1);
    assert_eq!(msgs[2]["summary_level"], 1);
    assert_eq!(o.to_json()["validation"]["ok"], true);
}

#[test]
fn w3_failed_summary_leaves_the_transcript_untouched() {
    let d = doc(mixed_rows());
    let input = formats::decode(Format::OpenaiChat, d.clone()).unwrap();
    let (o, reqs) = compact_with(Format::OpenaiChat, d.clone(), kerkov(), SessionState::default(), over(), |_| Reply::Failed { message: "HTTP 500".into(), context_exceeded: false });
    assert_eq!(reqs.len(), 1);
    assert_eq!(o.status, "failed");
    assert!(o.reason.starts_with("summary_failed"));
    assert_eq!(o.error.as_ref().unwrap().code.as_str(), "summary_failed");
    assert_eq!(o.transcript, input);
    assert_eq!(encode(&o.transcript, View::Stored), d);
    assert!(o.rewrite.is_none());
    assert_eq!(o.state.cadence.last_attempt_boundary, Some(o.state.cadence.boundary), "C-5: the failed attempt is recorded at this boundary");
    assert!(o.state.cadence.last_failure.as_deref().unwrap().starts_with("summary_failed"));
    assert_eq!(o.state.spend.summarize_calls, 1);
    assert_eq!(o.state.revision, 0);
    assert!(o.events.iter().any(|e| e.kind == "compaction_failed"));
}

#[test]
fn w3_failed_rollup_leaves_the_transcript_untouched() {
    let d = doc(with_block(&[2, 2, 1, 1]));
    let input = formats::decode(Format::OpenaiChat, d.clone()).unwrap();
    let (o, reqs) = compact_with(Format::OpenaiChat, d, kerkov(), SessionState::default(), over(), |r| if r.kind == "rollup" { Reply::Failed { message: "boom".into(), context_exceeded: false } } else { fake_summary(r) });
    assert_eq!(reqs.len(), 2);
    assert_eq!(o.status, "failed");
    assert_eq!(o.transcript, input);
    assert!(o.rewrite.is_none());
}

fn stored_rows(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        Value::Object(m) => m["messages"].as_array().unwrap().clone(),
        _ => panic!(),
    }
}

fn check_patch(format: Format, d: Value) {
    let input = formats::decode(format, d.clone()).unwrap();
    let (o, _) = run(format, d, kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let mut rows = stored_rows(encode(&input, View::Stored));
    apply_patch(&mut rows, &o.rewrite.as_ref().unwrap().patch).unwrap();
    assert_eq!(rows, stored_rows(encode(&o.transcript, View::Stored)));
}

#[test]
fn w4_patch_applied_to_input_gives_the_new_transcript() {
    check_patch(Format::OpenaiChat, doc(mixed_rows()));
    check_patch(Format::OpenaiChat, doc(with_block(&[2, 2, 1, 1])));
    check_patch(Format::OpenaiChat, doc(with_block(&[2, 2, 2, 2, 1, 1])));
    check_patch(Format::OpenaiChat, doc(with_block(&[2, 2, 2, 2, 2])));
    let mut rows = vec![a_user("first")];
    for i in 0..7 {
        rows.push(a_asst(&format!("a{i}")));
        rows.push(a_user(&format!("u{i}")));
    }
    check_patch(Format::Anthropic, json!({ "system": "s", "messages": rows }));
}

fn second_round_input(o: &Outcome) -> Value {
    let mut rows = stored_rows(encode(&o.transcript, View::Stored));
    rows.extend(chatter(8, "round2"));
    Value::Array(rows)
}

#[test]
fn w6_state_round_trips_and_resumes_identically() {
    let (o1, _) = run(Format::OpenaiChat, doc(mixed_rows()), kerkov(), over());
    assert_eq!(o1.status, "compacted", "{}", o1.reason);
    let text = serde_json::to_string(&o1.state).unwrap();
    let reloaded: SessionState = serde_json::from_str(&text).unwrap();
    assert_eq!(reloaded, o1.state);
    assert_eq!(SessionState::from_json(&serde_json::to_value(&o1.state).unwrap()).unwrap(), o1.state);
    let next = second_round_input(&o1);
    let (live, _) = compact_with(Format::OpenaiChat, next.clone(), kerkov(), o1.state.clone(), over(), fake_summary);
    let (resumed, _) = compact_with(Format::OpenaiChat, next, kerkov(), reloaded, over(), fake_summary);
    assert_eq!(live.status, "compacted", "{}", live.reason);
    assert_eq!(serde_json::to_string(&live.to_json()).unwrap(), serde_json::to_string(&resumed.to_json()).unwrap());
    assert_eq!(live.state.revision, 2);
}

#[test]
fn w7_summarizer_spend_is_side_spend() {
    let (o, _) = run(Format::OpenaiChat, doc(with_block(&[2, 2, 1, 1])), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    // fake_summary reports 100 in / 10 out per call; summary + one rollup = 2 calls
    assert_eq!(o.state.spend.summarize_calls, 2);
    assert_eq!(o.state.spend.input_tokens, 200);
    assert_eq!(o.state.spend.output_tokens, 20);
    let s = o.decision.signals.iter().find(|s| s.name == "provider_total_tokens").unwrap();
    assert_eq!(s.value, 150_000, "the provider total is not replaced by the summarizer's usage");
    assert_eq!(o.to_json()["spend"]["inputTokens"], 200);
    // a second compaction adds to the spend
    let (o2, _) = compact_with(Format::OpenaiChat, second_round_input(&o), kerkov(), o.state.clone(), over(), fake_summary);
    assert_eq!(o2.state.spend.input_tokens, 200 + 100 * o2.state.spend.summarize_calls.saturating_sub(2));
    assert_eq!(o2.decision.signals[0].value, 150_000);
}

// ---------------------------------------------------------------- T-2, T-4, F-4

#[test]
fn t2_f4_provenance_in_stored_view_not_in_request_view() {
    let mut rows = mixed_rows();
    rows[2]["message_id"] = json!("msg-first");
    let n = rows.len();
    rows[n - 3] = json!({ "role": "tool", "tool_call_id": "c9", "content": "ok", "artifact_ref": "artifact#77", "message_id": "msg-tool" });
    rows[n - 4] = calls(&[("c9", "x", "{}")]);
    let (o, _) = run(Format::OpenaiChat, doc(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let stored = encode(&o.transcript, View::Stored);
    let mut keys = Vec::new();
    all_keys(&stored, &mut keys);
    for k in ["summary_level", "artifact_ref", "message_id"] {
        assert!(keys.iter().any(|x| x == k), "stored view has {k}");
    }
    let tool_row = stored_rows(stored).into_iter().find(|m| m["tool_call_id"] == "c9").unwrap();
    assert_eq!(tool_row["artifact_ref"], "artifact#77");
    assert_eq!(tool_row["message_id"], "msg-tool");
    let request = encode(&o.transcript, View::Request);
    let mut rkeys = Vec::new();
    all_keys(&request, &mut rkeys);
    for k in PROVENANCE_KEYS {
        assert!(!rkeys.iter().any(|x| x == k), "request view has no {k}");
    }
    assert!(o.to_json()["request"].to_string().find("summary_level").is_none());
}

#[test]
fn t4_retained_ids_unchanged_across_two_compactions() {
    let (o1, _) = run(Format::OpenaiChat, doc(mixed_rows()), kerkov(), over());
    assert_eq!(o1.status, "compacted", "{}", o1.reason);
    let next = second_round_input(&o1);
    let reloaded = formats::decode(Format::OpenaiChat, next.clone()).unwrap();
    for (i, m) in o1.transcript.messages.iter().enumerate() {
        assert_eq!(reloaded.messages[i].id, m.id, "id of row {i} stable through storage");
    }
    let (o2, _) = compact_with(Format::OpenaiChat, next, kerkov(), o1.state.clone(), over(), fake_summary);
    assert_eq!(o2.status, "compacted", "{}", o2.reason);
    for r in &o2.rewrite.as_ref().unwrap().retained {
        assert_eq!(r.id, reloaded.messages[r.source].id);
        assert_eq!(o2.transcript.messages[r.offset].id, r.id);
    }
    // the first compaction's summary keeps its id as a retained row of the second
    let sid = &o1.rewrite.as_ref().unwrap().summary.as_ref().unwrap().message_id;
    assert!(o2.rewrite.as_ref().unwrap().retained.iter().any(|r| &r.id == sid));
}

fn rows_dup() -> Vec<Value> {
    // N-1 quotes folded user text whole, so the fold's reduction comes from the answers
    let mut rows = vec![sys("sys"), user("u0"), asst("ok"), user("u1"), asst(&long("x1")), user("u2"), asst(&long("x2"))];
    rows.extend(vec![user("u3"), asst("ok"), user("u4"), asst("x4"), user("u5")]);
    rows
}

#[test]
fn t4_ids_of_duplicate_rows_stable_when_a_twin_is_folded() {
    // two identical "ok" rows: the first is folded, the second retained; its
    // content-derived id must not change when the stored result is read back with the
    // committed state (issue 14: through `state.twins`, the row itself is not edited)
    let (o1, _) = run(Format::OpenaiChat, doc(rows_dup()), kerkov(), over());
    assert_eq!(o1.status, "compacted", "{}", o1.reason);
    let retained_ok = o1.rewrite.as_ref().unwrap().retained.iter().find(|r| r.source == 8).unwrap().clone();
    let mut back = formats::decode(Format::OpenaiChat, encode(&o1.transcript, View::Stored)).unwrap();
    assert!(back.messages[retained_ok.offset].provenance.message_id.is_none(), "no message_id key added");
    context_compactor::trust::apply(&mut back, &o1.state, u64::MAX);
    assert_eq!(back.messages[retained_ok.offset].id, retained_ok.id);
    check_patch(Format::OpenaiChat, doc(rows_dup()));
}

// ---------------------------------------------------------------- J-5

#[test]
fn j5_same_compaction_twice_is_byte_identical() {
    for d in [doc(mixed_rows()), doc(with_block(&[2, 2, 2, 2, 1, 1]))] {
        let (a, _) = run(Format::OpenaiChat, d.clone(), kerkov(), over());
        let (b, _) = run(Format::OpenaiChat, d, kerkov(), over());
        assert_eq!(a.status, "compacted");
        assert_eq!(serde_json::to_string(&a.to_json()).unwrap(), serde_json::to_string(&b.to_json()).unwrap());
    }
}

#[test]
fn j5_step_protocol_matches_run_sync() {
    let t = formats::decode(Format::OpenaiChat, doc(mixed_rows())).unwrap();
    let mut job = Job::start(kerkov(), SessionState::default(), t.clone(), JobOptions { signals: over(), has_summarizer: true });
    let a = run_sync(&mut job, fake_summary).unwrap();
    let mut job2 = Job::start(kerkov(), SessionState::default(), t, JobOptions { signals: over(), has_summarizer: true });
    let mut step = job2.resume(None).unwrap();
    let b = loop {
        match step {
            context_compactor::engine::Step::Done(o) => break *o,
            context_compactor::engine::Step::Summarize(r) => step = job2.resume(Some(fake_summary(&r))).unwrap(),
            context_compactor::engine::Step::Project(_) => step = job2.resume(Some(context_compactor::engine::Reply::Accepted)).unwrap(),
            context_compactor::engine::Step::StoreArtifacts(items) => step = job2.resume(Some(context_compactor::engine::Reply::Artifacts { handles: items.iter().map(|_| None).collect() })).unwrap(),
        }
    };
    assert_eq!(a.to_json(), b.to_json());
    let _ = Block::Text { text: String::new() };
}

/// E-2, Y-5: OpenAI chat has no error flag, so a failed result is read from its body;
/// once evicted to its handle, the summarizer's copy still says it failed.
#[test]
fn e2_y5_evicted_failed_openai_result_keeps_its_error_status() {
    let body = format!("Error: test suite crashed\n{}", "at frame\n".repeat(600));
    let rows = vec![
        sys("sys"), user("run the tests"), calls(&[("c1", "run_tests", "{}")]),
        json!({ "role": "tool", "tool_call_id": "c1", "content": body, "artifact_ref": "artifact#9" }),
        asst("it failed"), user("u"), asst("a"), user("u"), asst("a"), user("u"), asst("a"),
    ];
    let (o, reqs) = run(Format::OpenaiChat, json!(rows), kerkov(), over());
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = req_text(&reqs[0]);
    assert!(text.contains("<- result of run_tests c1 ERROR: artifact#9"), "{text}");
}
