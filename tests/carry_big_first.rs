//! A first user message too big for any summary (adversarial finding 8; S-9, N-5, N-1):
//! ~2,500 "must ..." lines, 120 KB, in a 16,000-token window.

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, Format};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

/// The head, the marker line and the tail of an over-budget quote (head, blank line,
/// marker, blank line, tail).
fn split_quote(v: &str) -> (&str, &str, &str) {
    let at = v.find(&format!("\n\n{}", context_compactor::nothing_lost::OVER_BUDGET_PREFIX)).unwrap_or_else(|| panic!("a marker in the quote: {v:.300}"));
    let (head, rest) = (&v[..at], &v[at + 2..]);
    let (marker, tail) = rest.split_once("\n\n").expect("a tail after the marker");
    (head, marker, tail)
}

fn big_first() -> String {
    (0..2_500).map(|i| format!("You must keep rule {i:04} of the style guide.\n")).collect()
}

fn run(project: bool, user_only: bool) -> context_compactor::engine::Outcome {
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "sys" }), json!({ "role": "user", "content": big_first() })];
    for i in 0..6 {
        rows.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "w".repeat(3000)) }));
        rows.push(json!({ "role": "user", "content": format!("Request {i}: go on.") }));
    }
    let config = Config::from_options(&json!({ "contextWindow": 16000, "projectMemory": project })).unwrap();
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows)).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(user_only);
    run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap()
}

#[test]
#[ignore]
fn print_big_first() {
    for (p, u) in [(true, true), (true, false), (false, false)] {
        let o = run(p, u);
        println!("project {p} user_only {u}: {} {} after {}", o.status, o.reason, o.after.estimated_tokens);
    }
}

/// Finding 8, S-9, N-5, N-1: a first message of ~2,500 "must" lines (120 KB) no longer
/// makes every compaction `cannot_fit`: its head is the first-task item verbatim, one
/// marker counts the constraint sentences and bytes past it and names the message, the
/// whole message is in the result's memory records (no memory hook), and the session
/// goes on over later folds and rollups within the window. A first task of a few
/// constraint lines stays whole with every sentence verbatim (today's rule).
#[test]
fn s9_n5_n1_a_first_message_over_the_summary_budget_is_clipped_with_a_marker_not_cannot_fit() {
    let first = big_first();
    let config = Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "sys" }), json!({ "role": "user", "content": first.clone() })];
    let mut state = SessionState::default();
    let mut records = String::new();
    let (mut compactions, mut rollups) = (0, 0);
    for turn in 0..40 {
        rows.push(json!({ "role": "assistant", "content": format!("answer {turn} {}", "w".repeat(3000)) }));
        rows.push(json!({ "role": "user", "content": format!("Request {turn}: go on with part {turn}.") }));
        let t = formats::decode(Format::OpenaiChat, Value::Array(rows.clone())).unwrap();
        let mut job = Job::start(config.clone(), state.clone(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(true);
        let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
        assert!(o.status == "compacted" || o.status == "skipped", "turn {turn}: {} {}", o.status, o.reason);
        if o.status != "compacted" {
            continue;
        }
        compactions += 1;
        rollups += o.rewrite.as_ref().map_or(0, |r| r.rollups.len());
        assert!(o.after.estimated_tokens < 16_000, "turn {turn}: {} tokens", o.after.estimated_tokens);
        for r in o.memory.iter().flat_map(|b| b.records.iter()) {
            records.push_str(&r.content);
        }
        // one summary row a line (their texts glued would join a last line to the next)
        let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect::<Vec<_>>().join("\n");
        let items: Vec<(String, String)> = o.transcript.messages.iter().filter(|m| m.is_summary()).flat_map(|m| context_compactor::summarize::carried_items(&m.text())).collect();
        let quoted = items.iter().find(|(k, _)| k == "carried first task").map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("turn {turn}: no first-task item:\n{summary}"));
        // the quote is the head, one marker, the tail (before, the head and a marker line)
        let (head, marker_line, tail) = split_quote(&quoted);
        assert!(head.len() >= 2_000 && first.starts_with(head), "turn {turn}: the head is the message's start, verbatim ({} bytes)", head.len());
        assert!(!tail.is_empty() && first.trim_end().ends_with(tail) && tail.starts_with("You must keep rule "), "turn {turn}: the tail is the message's end, verbatim: {tail:.200}");
        let between = first.trim_end().len() - tail.len() - head.len();
        let marker = format!("the first {} bytes and the last {} bytes quoted verbatim; the {between} bytes between them are whole in memory, ", head.len(), tail.len());
        assert!(marker_line.contains(&marker), "turn {turn}: the marker counts what it left out: {marker_line}");
        // of the 2,500 sentences those between head and tail are carried or counted
        let (c, d) = marker_line.split_once(&marker).map(|(_, r)| r).and_then(|r| {
            let (c, r) = r.split_once(" of their constraint sentences carried in the constraints and ")?;
            let (d, _) = r.split_once(" more constraint sentences not quoted here")?;
            Some((c.parse::<usize>().ok()?, d.parse::<usize>().ok()?))
        }).unwrap_or_else(|| panic!("turn {turn}: counts in {marker_line}"));
        assert_eq!(c + d, 2_500 - head.lines().count() - tail.lines().count(), "turn {turn}: {marker_line}");
        assert!(c > 10 && d > 0, "turn {turn}: some carried ({c}), the rest counted ({d})");
        let middle = &first[head.len()..first.trim_end().len() - tail.len()];
        let lines: std::collections::HashSet<&str> = summary.lines().collect();
        let found: Vec<&str> = middle.lines().filter(|l| !l.is_empty() && lines.contains(l)).collect();
        assert_eq!(found.len(), c, "turn {turn}: the carried ones are lines of the summary: {:?} .. {:?}\n{summary}", found.first(), found.last());
        state = o.state.clone();
        rows = match formats::encode(&o.transcript, formats::View::Stored) {
            Value::Array(a) => a,
            other => panic!("{other}"),
        };
    }
    assert!(compactions >= 10 && rollups > 0, "{compactions} compactions, {rollups} rollups");
    // the whole message in the records the first fold returned
    assert!(first.lines().all(|l| records.contains(l)), "the whole first message is in memory");
}

#[test]
fn s9_n5_a_small_constraint_set_in_the_first_task_stays_whole() {
    let first: String = (0..20).map(|i| format!("You must keep rule {i:04} of the style guide.\n")).collect();
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "sys" }), json!({ "role": "user", "content": first.clone() })];
    for i in 0..6 {
        rows.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "w".repeat(3000)) }));
        rows.push(json!({ "role": "user", "content": format!("Request {i}: go on.") }));
    }
    let config = Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows)).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(true);
    let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
    assert_eq!(o.status, "compacted");
    let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect();
    assert!(context_compactor::summarize::carried_items(&summary).iter().any(|(k, v)| k == "carried first task" && *v == first));
    assert!(!summary.contains(context_compactor::nothing_lost::OVER_BUDGET_PREFIX));
}

/// S-9, N-1 (merge of the over-budget head with the check): a first task of one long line
/// (no line break to cut at) over a small window's summary budget is quoted by a head
/// that ends at a space, the marker states that head's length, and the check accepts it
/// (before, it looked for the text's whole first line and rejected the rewrite with
/// `user_text_lost`).
#[test]
fn s9_n1_a_one_line_first_task_over_the_budget_is_quoted_by_its_head_and_accepted() {
    let first = format!("task 0 {}", "detail ".repeat(200));
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "sys" }), json!({ "role": "user", "content": first.clone() }), json!({ "role": "assistant", "content": "answer 0" })];
    for i in 1..6 {
        rows.push(json!({ "role": "user", "content": format!("task {i} {}", "detail ".repeat(200)) }));
        rows.push(json!({ "role": "assistant", "content": format!("answer {i}") }));
    }
    let config = Config::from_options(&json!({ "contextWindow": 2000, "preserveRecentTurns": 2 })).unwrap();
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows)).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
    let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect();
    let quoted = context_compactor::summarize::carried_items(&summary).into_iter().find(|(k, _)| k == "carried first task").map(|(_, v)| v).expect("a first-task item");
    let (head, marker, tail) = split_quote(&quoted);
    assert!(head.len() < first.len() && first.starts_with(head) && first[head.len()..].starts_with(' '), "the head ends at a word: {head:?}");
    // and the tail starts at one (the quote was head-only before)
    assert!(first.trim_end().ends_with(tail) && first[..first.trim_end().len() - tail.len()].ends_with(' '), "the tail starts at a word: {tail:?}");
    assert!(marker.contains(&format!("the first {} bytes and the last {} bytes quoted verbatim", head.len(), tail.len())), "{summary}");
}

/// S-9, N-1 (break5 finding 2): a message in the middle of the session (neither the first
/// task nor the newest request) whose constraint sentences alone are over the summary
/// budget is quoted by a clipped line with its head and the over-budget marker; before,
/// the marker claimed a head that no line quoted and every compaction failed with
/// `user_text_lost`.
#[test]
fn s9_n1_a_middle_message_over_the_budget_is_clipped_with_its_head_and_the_marker() {
    let rules: Vec<String> = (0..2_500).map(|i| format!("Rule {i}: you must never touch file src/mod{i}.rs.")).collect();
    let mut rows: Vec<Value> = vec![json!({ "role": "system", "content": "sys" }), json!({ "role": "user", "content": "Fix the flaky test in tests/net.rs." })];
    let mut id = 0;
    let mut round = |rows: &mut Vec<Value>, body: &str| {
        id += 1;
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{id}"), "type": "function", "function": { "name": "read", "arguments": "{\"path\":\"a.rs\"}" } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{id}"), "content": body }));
    };
    for _ in 0..4 {
        round(&mut rows, &"x".repeat(3000));
    }
    rows.push(json!({ "role": "user", "content": format!("Here are the house rules:\n{}", rules.join("\n")) }));
    rows.push(json!({ "role": "assistant", "content": "Understood." }));
    for _ in 0..6 {
        round(&mut rows, &"y".repeat(3000));
    }
    rows.push(json!({ "role": "user", "content": "Now run the tests again." }));
    rows.push(json!({ "role": "assistant", "content": "ok" }));
    let config = Config::from_options(&json!({ "contextWindow": 32000 })).unwrap();
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows)).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(true);
    let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect();
    // quoted as user text: its head, the marker, its tail (before: a clipped line with
    // the head, and the marker)
    let quoted = context_compactor::summarize::carried_items(&summary).into_iter().find(|(k, v)| k == "carried user text" && v.contains(context_compactor::nothing_lost::OVER_BUDGET_PREFIX)).map(|(_, v)| v).unwrap_or_else(|| panic!("a quote with a marker:\n{summary}"));
    let (head, marker, tail) = split_quote(&quoted);
    assert!(head.starts_with("Here are the house rules:\nRule 0: you must never touch file src/mod0.rs."), "{head}");
    assert!(tail.ends_with("Rule 2499: you must never touch file src/mod2499.rs."), "{tail}");
    assert!(marker.contains("offset 10): the first ") && marker.contains("more constraint sentences"), "{marker}");
}
