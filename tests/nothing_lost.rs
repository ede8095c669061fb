//! Nothing lost (N-1, S-9) and the engine rules of issue 12: user text (also beside tool
//! results) survives every rewrite, system rows anywhere stay (S-1), a rewrite over the
//! window says so (N-4), the floor is true (C-8), the latest thinking is never folded
//! (T-3), media of folded user rows are named, a notice alone starts a run (S-6),
//! SpokenUnmeasured (Y-6), main spend (W-7), warn-once (S-5). Each in the six formats
//! where the rule applies.

mod common;
#[path = "common/flood.rs"]
mod flood;
use common::*;
use flood::constraint_flood;
use context_compactor::capacity::{observe_usage, Observation};
use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use context_compactor::formats::{self, Format};
use context_compactor::memory::MemoryBatch;
use context_compactor::nothing_lost::{self, ATTACHMENT_PREFIX, CLIPPED_PREFIX, UNQUOTED_PREFIX};
use context_compactor::rewrite::{validate, Expectations, Origin};
use context_compactor::state::SessionState;
use context_compactor::transcript::{Message, Role, Transcript};
use context_compactor::trigger::{decide, Signals};
use context_compactor::ErrorCode;
use serde_json::{json, Value};

const FORMATS: [Format; 6] = [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];
/// Formats whose user rows carry tool results, so user text can share the row.
const MIXED: [Format; 3] = [Format::Anthropic, Format::Gemini, Format::Canonical];
/// Formats with system rows in the message list.
const SYSTEM_ROWS: [Format; 4] = [Format::OpenaiChat, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];

/// One abstract row.
#[derive(Clone)]
enum R {
    Sys(String),
    User(String),
    Asst(String),
    /// An assistant call (id, tool name).
    Call(String),
    /// The result of call `id` (body), with optional user text beside it (`MIXED`
    /// formats: the same row; others: a user row right after).
    Result(String, String, Option<String>),
    /// A user row with an image and text.
    UserImage(String),
}

fn text_part(format: Format, t: &str) -> Value {
    match format {
        Format::Gemini => json!({ "text": t }),
        Format::OpenaiResponses => json!({ "type": "input_text", "text": t }),
        _ => json!({ "type": "text", "text": t }),
    }
}

fn render(format: Format, rows: &[R]) -> Value {
    let mut msgs: Vec<Value> = Vec::new();
    let user = |t: &str| match format {
        Format::Gemini => json!({ "role": "user", "parts": [{ "text": t }] }),
        Format::Canonical => json!({ "role": "user", "content": [{ "type": "text", "text": t }] }),
        _ => json!({ "role": "user", "content": t }),
    };
    for r in rows {
        match r {
            R::Sys(t) => msgs.push(match format {
                Format::Canonical => json!({ "role": "system", "content": [{ "type": "text", "text": t }] }),
                _ => json!({ "role": "system", "content": t }),
            }),
            R::User(t) => msgs.push(user(t)),
            R::Asst(t) => msgs.push(match format {
                Format::Gemini => json!({ "role": "model", "parts": [{ "text": t }] }),
                Format::Anthropic | Format::Canonical => json!({ "role": "assistant", "content": [{ "type": "text", "text": t }] }),
                _ => json!({ "role": "assistant", "content": t }),
            }),
            R::Call(id) => msgs.push(match format {
                Format::OpenaiChat => json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": id, "type": "function", "function": { "name": "read", "arguments": "{\"path\":\"src/lib.rs\"}" } }] }),
                Format::Anthropic => json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": id, "name": "read", "input": { "path": "src/lib.rs" } }] }),
                Format::Gemini => json!({ "role": "model", "parts": [{ "functionCall": { "name": "read", "args": { "path": "src/lib.rs" } } }] }),
                Format::OpenaiResponses => json!({ "type": "function_call", "call_id": id, "name": "read", "arguments": "{\"path\":\"src/lib.rs\"}" }),
                Format::AiSdk => json!({ "role": "assistant", "content": [{ "type": "tool-call", "toolCallId": id, "toolName": "read", "input": { "path": "src/lib.rs" } }] }),
                Format::Canonical => json!({ "role": "assistant", "content": [{ "type": "tool_call", "id": id, "name": "read", "arguments": "{\"path\":\"src/lib.rs\"}" }] }),
            }),
            R::Result(id, body, beside) => {
                let mixed = MIXED.contains(&format);
                let mut row = match format {
                    Format::OpenaiChat => json!({ "role": "tool", "tool_call_id": id, "content": body }),
                    Format::Anthropic => json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": id, "content": body }] }),
                    Format::Gemini => json!({ "role": "user", "parts": [{ "functionResponse": { "name": "read", "response": { "output": body } } }] }),
                    Format::OpenaiResponses => json!({ "type": "function_call_output", "call_id": id, "output": body }),
                    Format::AiSdk => json!({ "role": "tool", "content": [{ "type": "tool-result", "toolCallId": id, "toolName": "read", "output": { "type": "text", "value": body } }] }),
                    Format::Canonical => json!({ "role": "user", "content": [{ "type": "tool_result", "call_id": id, "text": body }] }),
                };
                match (beside, mixed) {
                    (Some(t), true) => {
                        let key = if format == Format::Gemini { "parts" } else { "content" };
                        row[key].as_array_mut().unwrap().push(text_part(format, t));
                        msgs.push(row);
                    }
                    (Some(t), false) => {
                        msgs.push(row);
                        msgs.push(user(t));
                    }
                    (None, _) => msgs.push(row),
                }
            }
            R::UserImage(t) => msgs.push(match format {
                Format::Gemini => json!({ "role": "user", "parts": [{ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo".repeat(40) } }, { "text": t }] }),
                Format::OpenaiChat => json!({ "role": "user", "content": [{ "type": "image_url", "image_url": { "url": format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(40)) } }, { "type": "text", "text": t }] }),
                Format::OpenaiResponses => json!({ "role": "user", "content": [{ "type": "input_image", "image_url": format!("data:image/png;base64,{}", "iVBORw0KGgo".repeat(40)) }, { "type": "input_text", "text": t }] }),
                Format::AiSdk => json!({ "role": "user", "content": [{ "type": "image", "image": "iVBORw0KGgo".repeat(40), "mediaType": "image/png" }, { "type": "text", "text": t }] }),
                _ => json!({ "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo".repeat(40) } }, { "type": "text", "text": t }] }),
            }),
        }
    }
    match format {
        Format::Anthropic => json!({ "system": "You are a careful agent.", "messages": msgs }),
        Format::Gemini => json!({ "systemInstruction": { "parts": [{ "text": "You are a careful agent." }] }, "contents": msgs }),
        Format::OpenaiResponses => json!({ "input": msgs }),
        Format::AiSdk => json!({ "messages": msgs }),
        Format::Canonical => json!({ "messages": msgs }),
        Format::OpenaiChat => Value::Array(msgs),
    }
}

fn opts(profile: &str, window: u64) -> Config {
    Config::from_options(&json!({ "profile": profile, "contextWindow": window })).unwrap()
}

fn forced() -> Signals {
    Signals { force: true, ..Signals::default() }
}

/// Runs a forced compaction; `summarizer`: the fake provider summary, else mechanical.
fn run(format: Format, doc: &Value, config: Config, state: SessionState, summarizer: bool) -> Outcome {
    let t = formats::decode(format, doc.clone()).unwrap_or_else(|e| panic!("{}: decode: {e}", format.name()));
    let mut job = Job::start(config, state, t, JobOptions { signals: forced(), has_summarizer: summarizer });
    run_sync(&mut job, fake_summary).expect("job runs")
}

fn source(format: Format, doc: &Value) -> Transcript {
    formats::decode(format, doc.clone()).unwrap()
}

/// Every user text block of every discarded row is in the summary, whole or clipped
/// with a marker naming its message (N-1).
fn assert_nothing_lost(o: &Outcome, src: &Transcript, what: &str) {
    assert_eq!(o.status, "compacted", "{what}: {}", o.reason);
    assert!(o.checks.contains(&"user_text_kept"), "{what}: checks {:?}", o.checks);
    let rw = o.rewrite.as_ref().unwrap();
    let summary: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(Message::text).collect::<Vec<_>>().join("\n");
    let memory = o.memory.as_ref().expect("memory batch");
    for &d in &rw.discarded {
        let m = &src.messages[d];
        for t in m.user_texts() {
            let clipped = format!("{CLIPPED_PREFIX}{}, offset {d}): ", m.id);
            // not quoted: named by a run line and whole in the memory records
            let in_memory = || {
                summary.contains(UNQUOTED_PREFIX) && {
                    let at = m.text().find(t).unwrap();
                    t.char_indices().filter(|(_, c)| !c.is_whitespace()).all(|(i, _)| memory.records.iter().any(|r| r.message_id == m.id && r.byte_range[0] <= at + i && at + i < r.byte_range[1]))
                }
            };
            assert!(summary.contains(t) || summary.contains(&clipped) || in_memory(), "{what}: user text of row {d} lost: {t:?}");
            // S-9: every constraint sentence verbatim, whatever tier its text took
            for c in nothing_lost::constraint_sentences(t) {
                assert!(summary.contains(c), "{what}: constraint sentence of row {d} not verbatim: {c:?}");
            }
        }
    }
}

fn chat(turns: usize, beside_every: usize) -> Vec<R> {
    let mut rows = Vec::new();
    for t in 0..turns {
        rows.push(R::User(format!("Task {t}: make the parser accept input {t}. Never change the public API.")));
        rows.push(R::Call(format!("call_{t}")));
        let beside = (beside_every > 0 && t % beside_every == 0).then(|| format!("Also add a test for empty input {t}"));
        rows.push(R::Result(format!("call_{t}"), format!("line {t} of the file\n").repeat(60), beside));
        rows.push(R::Asst(format!("Done with task {t}: {}", "the parser now takes that input. ".repeat(6))));
    }
    rows.push(R::User("Now run the whole suite and report.".into()));
    rows
}

// ---------------------------------------------------------------- N-1 / S-9

#[test]
fn n1_every_folded_user_text_is_quoted_in_every_format_and_profile() {
    for format in FORMATS {
        for (profile, turns) in [("default", 8), ("meerkat", 12), ("kerkov", 10)] {
            for summarizer in [false, true] {
                let doc = render(format, &chat(turns, 2));
                let o = run(format, &doc, opts(profile, 16_000), SessionState::default(), summarizer);
                assert_nothing_lost(&o, &source(format, &doc), &format!("{} {profile} summarizer={summarizer}", format.name()));
            }
        }
    }
}

#[test]
fn n1_user_text_beside_tool_result_is_quoted() {
    // the Claude Code shape: [tool_result (5 KB), {type: text}] folded
    for format in MIXED {
        let mut rows = vec![R::User("Write the CSV exporter.".into()), R::Call("c1".into())];
        rows.push(R::Result("c1".into(), "x".repeat(5_000), Some("Also add a test for empty input".into())));
        rows.push(R::Asst("Added the exporter and the test.".into()));
        rows.extend(chat(6, 0));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        assert!(src.messages[2].has_results() && src.messages[2].has_user_text(), "{}: the mixed row decodes as results + user text", format.name());
        let o = run(format, &doc, opts("default", 16_000), SessionState::default(), true);
        assert!(o.rewrite.as_ref().unwrap().discarded.contains(&2), "{}: the mixed row is folded", format.name());
        assert!(o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text.contains("Also add a test for empty input"), "{}: {}", format.name(), o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text);
        assert_nothing_lost(&o, &src, format.name());
    }
}

#[test]
fn n1_newest_request_beside_tool_result_is_protected_or_quoted() {
    for format in MIXED {
        let mut rows = chat(6, 0);
        rows.pop();
        rows.push(R::Call("c_last".into()));
        rows.push(R::Result("c_last".into(), "y".repeat(3_000), Some("Stop and summarize what you changed so far.".into())));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let last = src.messages.len() - 1;
        // default profile: the newest request is protected (kept verbatim)
        let o = run(format, &doc, opts("default", 16_000), SessionState::default(), true);
        assert_eq!(o.status, "compacted", "{}: {}", format.name(), o.reason);
        let kept = o.rewrite.as_ref().unwrap().retained.iter().find(|r| r.source == last).expect("newest request kept");
        assert_eq!(o.transcript.messages[kept.offset].raw, src.messages[last].raw);
        // with its call: the exchange is not split
        assert!(o.rewrite.as_ref().unwrap().retained.iter().any(|r| r.source == last - 1), "{}: the call of the mixed row is kept", format.name());
        assert_eq!(context_compactor::select::run_start(&src.messages, 0), Some(last), "{}: the mixed row starts the run", format.name());
    }
}

#[test]
fn n1_validation_rejects_a_rewrite_that_loses_user_text_in_every_format() {
    for format in FORMATS {
        let mut rows = vec![R::User("First task: port the tokenizer.".into()), R::Call("c1".into())];
        rows.push(R::Result("c1".into(), "z".repeat(400), Some("Also keep the old tokenizer behind a flag".into())));
        rows.push(R::Asst("Ported.".into()));
        rows.push(R::User("Next: benchmark it.".into()));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let n = src.messages.len();
        let summary_doc = match format {
            Format::Gemini => json!({ "contents": [{ "role": "user", "parts": [{ "text": "S: ported the tokenizer" }], "summary_level": 1 }] }),
            Format::Anthropic => json!({ "messages": [{ "role": "user", "content": "S: ported the tokenizer", "summary_level": 1 }] }),
            Format::OpenaiChat => json!([{ "role": "user", "content": "S: ported the tokenizer", "summary_level": 1 }]),
            Format::OpenaiResponses => json!({ "input": [{ "role": "user", "content": "S: ported the tokenizer", "summary_level": 1 }] }),
            Format::AiSdk => json!({ "messages": [{ "role": "user", "content": "S: ported the tokenizer", "summary_level": 1 }] }),
            Format::Canonical => json!({ "messages": [{ "role": "user", "content": [{ "type": "text", "text": "S: ported the tokenizer" }], "summary_level": 1 }] }),
        };
        let summary = formats::decode(format, summary_doc).unwrap().messages.remove(0);
        // fold everything before the newest request; the summary quotes nothing
        let mut rows_new: Vec<(Origin, &Message)> = vec![(Origin::New, &summary)];
        rows_new.push((Origin::Source(n - 1), &src.messages[n - 1]));
        let new_t = Transcript { format, messages: rows_new.iter().map(|(_, m)| (*m).clone()).collect(), envelope: src.envelope.clone() };
        let e = validate(&Expectations { source: &src, rows: &rows_new, protected: &[], summary_at: 0, new_transcript: &new_t }).expect_err("rejected");
        assert_eq!(e.code, ErrorCode::InvalidRewrite, "{}", format.name());
        assert!(e.message.starts_with("user_text_lost:") && e.message.contains("source offset 0"), "{}: {}", format.name(), e.message);
        // the beside-result text alone missing is named with its own offset
        let kept: Vec<bool> = (0..n).map(|i| i == n - 1).collect();
        let err = nothing_lost::check(&src.messages, &kept, "First task: port the tokenizer.").expect_err("beside text lost");
        let beside_at = src.messages.iter().position(|m| m.user_texts().any(|t| t.starts_with("Also keep"))).unwrap();
        assert!(err.message.contains(&format!("source offset {beside_at}")), "{}: {}", format.name(), err.message);
        assert!(nothing_lost::check(&src.messages, &kept, "First task: port the tokenizer. Also keep the old tokenizer behind a flag").is_ok());
    }
}

#[test]
fn n1_over_budget_text_is_clipped_with_marker_constraints_verbatim_and_whole_in_memory() {
    for format in [Format::OpenaiChat, Format::Anthropic, Format::Gemini] {
        let mut rows = vec![R::User("First task: migrate the billing service.".into())];
        for t in 0..14 {
            rows.push(R::Asst(format!("ok {t}")));
            rows.push(R::User(format!("Note {t}: {} You must keep invoice ids stable {t}. {}", "Background detail. ".repeat(50), "More context. ".repeat(40))));
        }
        rows.push(R::Asst("ready".into()));
        rows.push(R::User("Go.".into()));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let o = run(format, &doc, opts("default", 8_000), SessionState::default(), true);
        assert_nothing_lost(&o, &src, format.name());
        let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
        assert!(text.contains(CLIPPED_PREFIX), "{}: some notes are clipped", format.name());
        assert!(text.contains("First task: migrate the billing service."), "{}: the first task verbatim", format.name());
        // every clipped note keeps its constraint verbatim
        let mut clipped_notes = 0;
        for t in 0..14 {
            let Some(d) = src.messages.iter().position(|m| m.text().starts_with(&format!("Note {t}:"))) else { continue };
            if text.contains(&format!("{CLIPPED_PREFIX}{}, offset {d}): ", src.messages[d].id)) {
                clipped_notes += 1;
                assert!(text.contains(&format!("You must keep invoice ids stable {t}.")), "{}: constraint {t} verbatim", format.name());
            }
        }
        assert!(clipped_notes >= 2, "{}: {clipped_notes} clipped", format.name());
        // S-9: the notes past both budgets keep their constraint verbatim too, each once,
        // one a line in the floor's constraints item
        let discarded = &o.rewrite.as_ref().unwrap().discarded;
        let mut folded_notes = 0;
        for t in 0..14 {
            let Some(d) = src.messages.iter().position(|m| m.text().starts_with(&format!("Note {t}:"))) else { continue };
            if discarded.contains(&d) {
                folded_notes += 1;
                let c = format!("You must keep invoice ids stable {t}.");
                assert_eq!(text.matches(&c).count(), 1, "{}: constraint {t} verbatim once", format.name());
            }
        }
        assert!(folded_notes >= 8, "{}: {folded_notes} notes folded", format.name());
        assert!(text.contains("[carried constraints, "), "{}", format.name());
        // the oldest notes are past both budgets: named by one run line
        assert!(text.contains(UNQUOTED_PREFIX), "{}: {text}", format.name());
        // the clipped ones are whole in the memory records; an empty batch fails N-1
        let kept: Vec<bool> = (0..src.messages.len()).map(|i| o.rewrite.as_ref().unwrap().retained.iter().any(|r| r.source == i)).collect();
        let clipped = nothing_lost::check(&src.messages, &kept, text).unwrap();
        assert!(!clipped.is_empty());
        nothing_lost::check_memory(&clipped, o.memory.as_ref().unwrap()).expect("whole in memory");
        let e = nothing_lost::check_memory(&clipped, &MemoryBatch::default()).expect_err("not in memory");
        assert!(e.message.starts_with("user_text_lost:"), "{}", e.message);
    }
}

#[test]
fn s9_first_task_and_unprotected_run_request_quoted_verbatim_in_kerkov() {
    // Kerkov does not protect the run request: a long run pushes it out of the recent
    // window, so it folds, and must be quoted whole however long (S-9)
    for format in FORMATS {
        let first = format!("First task: {}", "describe the whole data model carefully. ".repeat(150));
        let request = format!("Run request: {}", "rebuild every index and check the counts. ".repeat(150));
        let mut rows = vec![R::User(first.clone()), R::Asst("Understood.".into()), R::User(request.clone())];
        for k in 0..8 {
            rows.push(R::Call(format!("k{k}")));
            rows.push(R::Result(format!("k{k}"), "index ok\n".repeat(200), None));
        }
        rows.push(R::Asst("All indexes rebuilt.".into()));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let o = run(format, &doc, opts("kerkov", 32_000), SessionState::default(), false);
        assert_nothing_lost(&o, &src, format.name());
        let rw = o.rewrite.as_ref().unwrap();
        let at = src.messages.iter().position(|m| m.text() == request).unwrap();
        assert!(rw.discarded.contains(&at), "{}: the run request folds in kerkov", format.name());
        assert!(rw.summary.as_ref().unwrap().text.contains(&request), "{}: run request verbatim", format.name());
        assert!(rw.summary.as_ref().unwrap().text.contains(&first), "{}: first task verbatim", format.name());
    }
}

#[test]
fn n1_quotes_survive_later_compactions_and_rollups() {
    for format in [Format::OpenaiChat, Format::Anthropic, Format::AiSdk] {
        let mut rows = chat(6, 2);
        let first = "Task 0: make the parser accept input 0. Never change the public API.";
        let mut state = SessionState::default();
        let mut cfg = opts("default", 16_000);
        cfg.max_summaries_before_rollup = 2;
        let mut rolled = false;
        let mut doc = render(format, &rows);
        for round in 0..6 {
            let src = source(format, &doc);
            let o = run(format, &doc, cfg.clone(), state.clone(), true);
            assert_nothing_lost(&o, &src, &format!("{} round {round}", format.name()));
            rolled |= !o.rewrite.as_ref().unwrap().rollups.is_empty();
            let all: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(Message::text).collect();
            assert!(all.contains(first), "{} round {round}: first task carried", format.name());
            state = o.state.clone();
            // append more turns to the stored result
            let mut stored = formats::encode(&o.transcript, formats::View::Stored);
            let more = render(format, &chat(3, 1)[..12].to_vec());
            let list = |v: &mut Value| -> Vec<Value> {
                match v {
                    Value::Array(a) => a.clone(),
                    Value::Object(m) => m.get("messages").or(m.get("contents")).or(m.get("input")).and_then(Value::as_array).cloned().unwrap_or_default(),
                    _ => vec![],
                }
            };
            let mut extra = more.clone();
            let mut extra_rows = list(&mut extra);
            for (k, r) in extra_rows.iter_mut().enumerate() {
                // fresh call ids per round
                let s = serde_json::to_string(r).unwrap().replace(":\"call_", &format!(":\"r{round}_"));
                let _ = k;
                *r = serde_json::from_str(&s).unwrap();
            }
            match &mut stored {
                Value::Array(a) => a.extend(extra_rows),
                Value::Object(m) => {
                    let key = ["messages", "contents", "input"].into_iter().find(|k| m.contains_key(*k)).unwrap();
                    m.get_mut(key).unwrap().as_array_mut().unwrap().extend(extra_rows);
                }
                _ => unreachable!(),
            }
            doc = stored;
            rows.clear();
        }
        assert!(rolled, "{}: a rollup ran", format.name());
    }
}

// ---------------------------------------------------------------- system rows anywhere

#[test]
fn s1_system_row_in_the_middle_stays_in_place() {
    // ShareGPT / Glaive conversations carry system turns between the others
    for format in SYSTEM_ROWS {
        let mut rows = vec![R::Sys("You are a helpful assistant with access to functions.".into())];
        for t in 0..10 {
            if t == 3 || t == 6 {
                rows.push(R::Sys(format!("Policy update {t}: answer in Chinese from now on.")));
            }
            rows.push(R::User(format!("问题 {t}: 天气怎么样?")));
            rows.push(R::Call(format!("w{t}")));
            rows.push(R::Result(format!("w{t}"), "{\"temp\": 21}".repeat(30), None));
            rows.push(R::Asst(format!("回答 {t}: {}", "今天天气很好。".repeat(20))));
        }
        rows.push(R::User("谢谢".into()));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        for profile in ["default", "meerkat", "kerkov"] {
            let o = run(format, &doc, opts(profile, 8_000), SessionState::default(), false);
            assert_nothing_lost(&o, &src, &format!("{} {profile}", format.name()));
            assert!(o.checks.contains(&"system_rows_kept"));
            let rw = o.rewrite.as_ref().unwrap();
            for (i, m) in src.messages.iter().enumerate() {
                if m.role == Role::System {
                    let r = rw.retained.iter().find(|r| r.source == i).unwrap_or_else(|| panic!("{} {profile}: system row {i} kept", format.name()));
                    assert_eq!(o.transcript.messages[r.offset].raw, m.raw);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- N-4 / C-8

fn long_chat(turns: usize) -> Vec<R> {
    let mut rows = Vec::new();
    for t in 0..turns {
        rows.push(R::User(format!("Question {t}: what does line {t} do?")));
        rows.push(R::Asst(format!("Answer {t}: {}", "it parses a field and checks it. ".repeat(8))));
    }
    rows
}

/// The window of the N-4 test: small enough that some profile's rewrite is still over it
/// (at 1,500 and 1,000 tokens every profile now fits: the handoff makes room for the floor).
const WINDOW: u64 = 800;

#[test]
fn n4_over_window_after_the_rewrite_is_a_typed_warning_and_a_field_in_every_profile() {
    // issue 12 item 7: a 60-turn chat at a 1,500-token window in Kerkov came back
    // "compacted" at about 3,000 tokens with no word (now at 800 tokens)
    let mut warned = 0;
    for format in FORMATS {
        for profile in ["kerkov", "meerkat", "default"] {
            let doc = render(format, &long_chat(60));
            let o = run(format, &doc, opts(profile, WINDOW), SessionState::default(), false);
            let what = format!("{} {profile}", format.name());
            if o.status == "cannot_fit" {
                // then the floor really is over the budget (the trigger's, or with the
                // summary's user text, over the window)
                assert!(o.decision.floor.total_tokens >= o.decision.floor.budget_tokens || o.reason.contains("the summary's user text"), "{what}: {}", o.reason);
                continue;
            }
            assert_eq!(o.status, "compacted", "{what}: {}", o.reason);
            let Some(ow) = o.over_window.as_ref() else {
                // the rewrite fits: no warning either (a profile whose summary is small
                // enough here, e.g. the handoff's floor alone on a short fold)
                assert!(o.after.estimated_tokens < WINDOW, "{what}: {} tokens after and no overWindow", o.after.estimated_tokens);
                assert!(!o.events.iter().any(|e| e.kind == "warning" && e.data["code"] == "over_window"), "{what}");
                continue;
            };
            warned += 1;
            assert!(ow.tokens >= o.after.estimated_tokens && ow.tokens >= ow.threshold_tokens, "{what}: {ow:?}");
            assert_eq!(ow.context_window, WINDOW);
            let over = if ow.limit == "context_window" { ow.tokens - WINDOW } else { ow.tokens - ow.threshold_tokens };
            assert_eq!(ow.by, over, "{what}");
            let ev = o.events.iter().find(|e| e.kind == "warning" && e.data["code"] == "over_window").unwrap_or_else(|| panic!("{what}: warning event"));
            assert_eq!(ev.data["overWindow"]["tokens"], json!(ow.tokens));
            assert_eq!(o.to_json()["overWindow"]["contextWindow"], json!(WINDOW));
        }
        // under the window: no field, no warning
        let doc = render(format, &long_chat(12));
        let o = run(format, &doc, opts("default", 200_000), SessionState::default(), false);
        assert_eq!(o.status, "compacted", "{}: {}", format.name(), o.reason);
        assert!(o.over_window.is_none() && o.to_json()["overWindow"].is_null());
        assert!(!o.events.iter().any(|e| e.data["code"] == "over_window"));
    }
    assert!(warned > 0, "some profile is still over the window at 1,500 tokens: the warning is exercised");
}

#[test]
fn c8_cannot_fit_reports_the_true_floor_in_every_profile() {
    for format in FORMATS {
        for profile in ["kerkov", "meerkat", "default"] {
            let mut rows = long_chat(6);
            let big = "Please read this whole specification before you start. ".repeat(600);
            rows.push(R::User(big.clone()));
            let doc = render(format, &rows);
            let src = source(format, &doc);
            let cfg = opts(profile, 4_000);
            let o = run(format, &doc, cfg.clone(), SessionState::default(), false);
            assert_eq!(o.status, "cannot_fit", "{} {profile}: {}", format.name(), o.reason);
            let fl = &o.decision.floor;
            let last = src.messages.len() - 1;
            let real = context_compactor::measure::message_tokens(&src.messages[last], &cfg, 1.0);
            assert_eq!(fl.protected_tokens, real, "{} {profile}: the protected request's real size", format.name());
            assert!(real >= (big.len() as u64) / cfg.bytes_per_token);
            assert!(fl.total_tokens >= fl.budget_tokens && fl.total_tokens >= real, "{} {profile}: {fl:?}", format.name());
            assert!(o.reason.contains(&format!("protected request {real}")), "{}", o.reason);
        }
    }
}

// ---------------------------------------------------------------- T-3

#[test]
fn t3_latest_assistant_thinking_is_never_folded_even_over_the_recent_byte_budget() {
    // issue 12 item 8: the latest assistant message is over the recent-window byte
    // budget and a user message follows it
    let thinking = "step ".repeat(4_000);
    let docs: Vec<(Format, Value)> = vec![
        (Format::Anthropic, {
            let mut d = render(Format::Anthropic, &long_chat(8));
            d["messages"].as_array_mut().unwrap().push(json!({ "role": "assistant", "content": [{ "type": "thinking", "thinking": thinking, "signature": "SIG".repeat(30) }, { "type": "text", "text": "Here is the plan." }] }));
            d["messages"].as_array_mut().unwrap().push(json!({ "role": "user", "content": "Go ahead." }));
            d
        }),
        (Format::OpenaiResponses, {
            let mut d = render(Format::OpenaiResponses, &long_chat(8));
            let input = d["input"].as_array_mut().unwrap();
            input.push(json!({ "type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "ENC".repeat(6_000) }));
            input.push(json!({ "role": "assistant", "content": "Here is the plan." }));
            input.push(json!({ "role": "user", "content": "Go ahead." }));
            d
        }),
        (Format::Gemini, {
            let mut d = render(Format::Gemini, &long_chat(8));
            d["contents"].as_array_mut().unwrap().push(json!({ "role": "model", "parts": [{ "text": thinking, "thought": true }, { "text": "Here is the plan.", "thoughtSignature": "c2ln".repeat(40) }] }));
            d["contents"].as_array_mut().unwrap().push(json!({ "role": "user", "parts": [{ "text": "Go ahead." }] }));
            d
        }),
    ];
    for (format, doc) in docs {
        for profile in ["kerkov", "default", "meerkat"] {
            let src = source(format, &doc);
            let mut cfg = opts(profile, 16_000);
            cfg.preserve_recent_bytes = 4_000;
            let o = run(format, &doc, cfg, SessionState::default(), true);
            assert_eq!(o.status, "compacted", "{} {profile}: {}", format.name(), o.reason);
            let latest = context_compactor::select::latest_thinking_start(&src.messages).expect("latest has reasoning");
            for i in latest..src.messages.len() - 1 {
                let r = o.rewrite.as_ref().unwrap().retained.iter().find(|r| r.source == i).unwrap_or_else(|| panic!("{} {profile}: row {i} of the latest assistant message kept", format.name()));
                assert_eq!(o.transcript.messages[r.offset].raw, src.messages[i].raw, "byte-exact");
            }
        }
    }
}

// ---------------------------------------------------------------- media (item 9)

#[test]
fn media_of_folded_user_rows_become_placeholders_and_kerkov_keeps_the_newest_requests_image() {
    for format in [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk] {
        // a folded user row with an image: a placeholder names it in the summary
        let mut rows = vec![R::UserImage("What is in this screenshot?".into()), R::Asst("A login form.".into())];
        rows.extend(chat(6, 0));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let o = run(format, &doc, opts("default", 16_000), SessionState::default(), false);
        assert_nothing_lost(&o, &src, format.name());
        let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
        assert!(text.contains(&format!("{ATTACHMENT_PREFIX}{}, offset 0): image", src.messages[0].id)), "{}: {text}", format.name());
        // Kerkov folds an unprotected run request, but not one carrying an image
        let mut rows = long_chat(2);
        rows.push(R::UserImage("Fix the layout shown here.".into()));
        for k in 0..8 {
            rows.push(R::Call(format!("m{k}")));
            rows.push(R::Result(format!("m{k}"), "css ok\n".repeat(200), None));
        }
        rows.push(R::Asst("Fixed.".into()));
        let doc = render(format, &rows);
        let src = source(format, &doc);
        let at = src.messages.iter().position(|m| m.text() == "Fix the layout shown here.").unwrap();
        let o = run(format, &doc, opts("kerkov", 32_000), SessionState::default(), false);
        assert_eq!(o.status, "compacted", "{}: {}", format.name(), o.reason);
        let r = o.rewrite.as_ref().unwrap().retained.iter().find(|r| r.source == at).unwrap_or_else(|| panic!("{}: the request with its image kept", format.name()));
        assert_eq!(o.transcript.messages[r.offset].raw, src.messages[at].raw);
    }
}

// ---------------------------------------------------------------- S-6, Y-6, W-7, S-5

fn with_injected(mut doc: Value, format: Format, at: usize, text: &str) -> Value {
    let row = match format {
        Format::Gemini => json!({ "role": "user", "parts": [{ "text": text }], "transcript_role": "injected_context" }),
        Format::Canonical => json!({ "role": "user", "content": [{ "type": "text", "text": text }], "transcript_role": "injected_context" }),
        _ => json!({ "role": "user", "content": text, "transcript_role": "injected_context" }),
    };
    let list = match &mut doc {
        Value::Array(a) => a,
        Value::Object(m) => {
            let key = ["messages", "contents", "input"].into_iter().find(|k| m.contains_key(*k)).unwrap();
            m.get_mut(key).unwrap().as_array_mut().unwrap()
        }
        _ => unreachable!(),
    };
    list.insert(at, row);
    doc
}

#[test]
fn s6_a_run_started_by_a_notice_alone_keeps_its_notice() {
    for format in FORMATS {
        // a finished run, then a peer notice starts a new run with three rounds
        let mut rows = vec![R::User("Set up the repository.".into()), R::Call("p0".into()), R::Result("p0".into(), "setup log\n".repeat(300), None), R::Asst("Set up.".into())];
        for k in 0..3 {
            rows.push(R::Call(format!("n{k}")));
            rows.push(R::Result(format!("n{k}"), "build log\n".repeat(150), None));
        }
        let doc = render(format, &rows);
        let doc = with_injected(doc, format, 4, "[peer] CI failed on main: fix the flaky test.");
        let src = source(format, &doc);
        let notice = src.messages.iter().position(|m| m.text().starts_with("[peer]")).unwrap();
        assert_eq!(context_compactor::select::run_start(&src.messages, 0), Some(notice), "{}", format.name());
        let mut cfg = opts("meerkat", 16_000);
        cfg.preserve_recent_turns = 2;
        let o = run(format, &doc, cfg, SessionState::default(), true);
        assert_eq!(o.status, "compacted", "{}: {} {:?}", format.name(), o.reason, o.transcript.messages.iter().map(|m| m.text()).collect::<Vec<_>>());
        let rw = o.rewrite.as_ref().unwrap();
        assert!(rw.retained.iter().any(|r| r.source == notice), "{}: the notice is never folded while its run is open", format.name());
        assert!(rw.discarded.contains(&0), "{}: the previous run's request folds", format.name());
        assert_nothing_lost(&o, &src, format.name());
    }
}

#[test]
fn y6_spoken_unmeasured_is_judged_on_assistant_rows_recent_window_included() {
    let fail = |_: &context_compactor::summarize::SummarizeRequest| Reply::Failed { message: "context_length_exceeded".into(), context_exceeded: true };
    let rows = long_chat(10);
    // an observation in the recent window (never folded) still blocks the fallback
    let mut doc = render(Format::OpenaiChat, &rows);
    let last = doc.as_array().unwrap().len() - 1;
    doc[last]["observation_source"] = json!("SpokenUnmeasured");
    let t = formats::decode(Format::OpenaiChat, doc).unwrap();
    let mut job = Job::start(opts("default", 16_000), SessionState::default(), t.clone(), JobOptions { signals: forced(), has_summarizer: true });
    let o = run_sync(&mut job, fail).unwrap();
    assert_eq!(o.status, "failed", "{}", o.reason);
    assert!(o.reason.contains("SpokenUnmeasured"), "{}", o.reason);
    assert_eq!(o.transcript, t, "history kept");
    // the mark on a user row (not an assistant observation) does not block it
    let mut doc = render(Format::OpenaiChat, &rows);
    doc[0]["observation_source"] = json!("SpokenUnmeasured");
    let t = formats::decode(Format::OpenaiChat, doc).unwrap();
    let mut job = Job::start(opts("default", 16_000), SessionState::default(), t, JobOptions { signals: forced(), has_summarizer: true });
    let o = run_sync(&mut job, fail).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().source.writer, "mechanical");
}

#[test]
fn w7_main_spend_accumulates_and_side_spend_adds_to_the_total() {
    let doc = render(Format::OpenaiChat, &long_chat(10));
    let t = formats::decode(Format::OpenaiChat, doc.clone()).unwrap();
    let cfg = opts("default", 16_000);
    let mut state = SessionState::default();
    for (i, o) in [(1_000u64, 50u64), (1_400, 70)] {
        state = observe_usage(&state, &t, &cfg, &Observation { usage: Some(json!({ "prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o })), ..Observation::default() });
    }
    assert_eq!((state.spend.main_requests, state.spend.main_input_tokens, state.spend.main_output_tokens), (2, 2_400, 120));
    let o = run(Format::OpenaiChat, &doc, cfg, state, true);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let s = o.state.spend;
    // fake_summary reports 100 input / 10 output tokens per call
    assert_eq!((s.input_tokens, s.output_tokens), (100 * s.summarize_calls, 10 * s.summarize_calls));
    assert_eq!(s.total_input_tokens, 2_400 + s.input_tokens);
    assert_eq!(s.total_output_tokens, 120 + s.output_tokens);
    assert_eq!(o.to_json()["spend"]["mainInputTokens"], json!(2_400));
}

#[test]
fn s5_a_selection_failure_warns_once() {
    for format in FORMATS {
        // one turn, all in the recent window: nothing to fold
        let doc = render(format, &[R::User("hi".into()), R::Asst("hello".into()), R::User("bye".into())]);
        let o1 = run(format, &doc, opts("default", 16_000), SessionState::default(), false);
        assert_eq!(o1.status, "skipped", "{}: {}", format.name(), o1.reason);
        let warned = |o: &Outcome| o.events.iter().filter(|e| e.kind == "warning" && e.data["code"] == "selection_failed").count();
        assert_eq!(warned(&o1), 1, "{}: warned with the typed reason", format.name());
        assert!(o1.events.iter().any(|e| e.data["code"] == "selection_failed" && e.data["reason"].as_str().is_some_and(|r| !r.is_empty() && o1.reason == r)), "{}: {:?}", format.name(), o1.events);
        let o2 = run(format, &doc, opts("default", 16_000), o1.state.clone(), false);
        assert_eq!(o2.status, "skipped");
        assert_eq!(warned(&o2), 0, "{}: not warned twice", format.name());
    }
}


#[test]
fn n1_projection_off_quotes_every_folded_user_text_whole_or_cannot_fit_names_the_floor() {
    // 30 long user messages: with memory on the floor clips or only names most of them
    // (they are whole in memory); with projectMemory off no memory keeps them, so each
    // is quoted whole in the summary, never clipped nor only named (N-1)
    let mut doc = vec![json!({ "role": "system", "content": "sys" })];
    for i in 0..30 {
        doc.push(json!({ "role": "user", "content": format!("Message {i} start. {} Tail {i} secret TAILSECRET{i}.", "lorem ipsum dolor ".repeat(20)) }));
        doc.push(json!({ "role": "assistant", "content": "ok" }));
    }
    let doc = Value::Array(doc);
    let src = source(Format::OpenaiChat, &doc);
    let on = run(Format::OpenaiChat, &doc, opts("default", 16_000), SessionState::default(), true);
    assert_eq!(on.status, "compacted", "{}", on.reason);
    let on_text = &on.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
    assert!(on_text.contains(CLIPPED_PREFIX) || on_text.contains(UNQUOTED_PREFIX), "memory on: some texts are only clipped or named");
    let off = Config::from_options(&json!({ "profile": "default", "contextWindow": 16_000, "projectMemory": false })).unwrap();
    let o = run(Format::OpenaiChat, &doc, off, SessionState::default(), true);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let rw = o.rewrite.as_ref().unwrap();
    let text = &rw.summary.as_ref().unwrap().text;
    assert!(!text.contains(CLIPPED_PREFIX) && !text.contains(UNQUOTED_PREFIX), "memory off: nothing clipped or only named");
    let mut folded = 0;
    for &d in &rw.discarded {
        for t in src.messages[d].user_texts() {
            folded += 1;
            assert!(text.contains(t), "row {d}: the whole text is in the summary: {t:?}");
        }
    }
    assert!(folded >= 20, "{folded} user texts folded");
    // where even that floor cannot fit the window, the outcome is cannot_fit and says so
    let mut long = vec![json!({ "role": "system", "content": "sys" })];
    for i in 0..30 {
        long.push(json!({ "role": "user", "content": format!("Message {i} start. {} Tail {i}.", "lorem ipsum dolor ".repeat(80)) }));
        long.push(json!({ "role": "assistant", "content": "ok" }));
    }
    let long = Value::Array(long);
    let small = Config::from_options(&json!({ "profile": "default", "contextWindow": 6_000, "projectMemory": false })).unwrap();
    let o = run(Format::OpenaiChat, &long, small, SessionState::default(), true);
    assert_eq!(o.status, "cannot_fit", "{} {:?} {:?}", o.reason, o.after, o.over_window);
    // the check sees it before any summary is asked for: the floor counts the user text
    assert!(o.reason.contains("user text quoted whole as projectMemory is off"), "{}", o.reason);
    assert!(o.rewrite.is_none());
}

#[test]
fn n1_c8_n4_with_projection_off_the_floor_figures_count_the_user_text_quoted_whole() {
    // adversarial finding (session 5): with projectMemory off every folded user text is
    // quoted whole, yet the floor of the check, of cannot_fit and of the over_window
    // warning counted none of it
    let user = |i: usize| format!("Request {i}: you must keep the API stable. {}", "context of the request ".repeat(40));
    let doc = |n: usize| {
        let mut d = vec![json!({ "role": "system", "content": "sys" })];
        for i in 0..n {
            d.push(json!({ "role": "user", "content": user(i) }));
            d.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "work ".repeat(300)) }));
        }
        d.push(json!({ "role": "user", "content": "now write the report" }));
        Value::Array(d)
    };
    let cfg = |memory: bool| Config::from_options(&json!({ "profile": "default", "contextWindow": 20_000, "outputReserveTokens": 0, "projectMemory": memory })).unwrap();
    let t = source(Format::OpenaiChat, &doc(10));
    let off = decide(&t, &cfg(false), &SessionState::default(), &Signals::default()).floor;
    let on = decide(&t, &cfg(true), &SessionState::default(), &Signals::default()).floor;
    // every user text but the protected newest request, at the estimate's rate
    let bytes: usize = (0..10).map(|i| user(i).len()).sum();
    assert_eq!(off.user_text_tokens, est_tokens(bytes, &cfg(false)));
    assert_eq!(on.user_text_tokens, 0, "memory on: the records keep what a summary clips");
    assert_eq!(off.total_tokens, on.total_tokens + off.user_text_tokens);
    assert!(serde_json::to_value(&on).unwrap().get("userTextTokens").is_none());
    // a summary the engine wrote quotes them: they stay in the floor after the fold
    let o = run(Format::OpenaiChat, &doc(10), cfg(false), SessionState::default(), true);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let after = decide(&o.transcript, &cfg(false), &vouched(&o), &Signals::default()).floor;
    assert!(after.user_text_tokens * 10 >= off.user_text_tokens * 9, "{} of {}", after.user_text_tokens, off.user_text_tokens);
    // over the window: cannot_fit names the figure, and its total holds it
    let small = Config::from_options(&json!({ "profile": "default", "contextWindow": 3_000, "outputReserveTokens": 0, "projectMemory": false })).unwrap();
    assert!(off.total_tokens >= small.threshold_tokens() && on.total_tokens < small.threshold_tokens(), "{} {}", off.total_tokens, small.threshold_tokens());
    let o = run(Format::OpenaiChat, &doc(10), small, SessionState::default(), true);
    assert_eq!(o.status, "cannot_fit", "{}", o.reason);
    assert!(o.reason.contains(&format!("user text quoted whole as projectMemory is off {}", off.user_text_tokens)), "{}", o.reason);
    // over_window (N-4): a rewrite left over the threshold reports the floor with the user text
    let mut found = false;
    for window in (3_000..10_000).step_by(50) {
        let c = Config::from_options(&json!({ "profile": "default", "contextWindow": window, "outputReserveTokens": 0, "projectMemory": false })).unwrap();
        let o = run(Format::OpenaiChat, &doc(10), c.clone(), SessionState::default(), true);
        if let Some(ow) = &o.over_window {
            let fl = decide(&t, &c, &SessionState::default(), &Signals::default()).floor;
            assert_eq!(ow.floor_tokens, fl.total_tokens);
            assert!(ow.floor_tokens >= fl.user_text_tokens + fl.system_tokens + fl.protected_tokens && fl.user_text_tokens > 0);
            found = true;
            break;
        }
    }
    assert!(found, "some window leaves the rewrite over its threshold");
}

fn est_tokens(bytes: usize, c: &Config) -> u64 {
    context_compactor::measure::text_tokens(bytes, c, 1.0)
}

/// The state of `o` vouching for the summaries it wrote (as the next call's would).
fn vouched(o: &Outcome) -> SessionState {
    context_compactor::trust::vouch(&o.state, &o.transcript)
}

#[test]
fn n1_s9_n5_a_flood_of_constraint_sentences_is_quoted_once_each_and_counted_truly() {
    // 1 MB and 2 MB of 50 distinct constraint sentences repeated: each sentence is in the
    // summary exactly once, and the summary is the same size whatever the input's size
    // (de-duplication, no per-row repetition of headers)
    let mut sizes = Vec::new();
    for mb in [1usize, 2] {
        let doc = constraint_flood(mb * 1_000_000, false);
        let o = run(Format::OpenaiChat, &doc, opts("default", 200_000), SessionState::default(), false);
        assert_eq!(o.status, "compacted", "{mb} MB: {}", o.reason);
        let text = &o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text;
        for n in 0..50 {
            let words = ["You must keep", "Never touch", "Always run", "Do not rename", "Make sure to test", "You should document"];
            let s = format!("{} module_{n}/file_{n}.rs as it is.", words[n % words.len()]);
            assert!(text.contains(s.as_str()), "{mb} MB: {s:?} verbatim");
        }
        // the constraints item lists a sentence once, and none a whole quote holds
        let (_, body) = context_compactor::summarize::split_summary(text);
        let items = context_compactor::summarize::ledger::read_items(body.unwrap_or(""));
        let listed: Vec<&str> = items.iter().filter(|(k, _)| k == "carried constraints").flat_map(|(_, t)| t.lines()).collect();
        let unique: std::collections::HashSet<&str> = listed.iter().copied().collect();
        assert_eq!(unique.len(), listed.len(), "{mb} MB: each sentence once in the constraints item");
        assert!(listed.len() < 50, "{mb} MB: {} listed", listed.len());
        for (k, t) in items.iter().filter(|(k, _)| k != "carried constraints") {
            for l in &listed {
                assert!(!t.contains(l), "{mb} MB: {l:?} also in the whole quote {k}");
            }
        }
        sizes.push(text.len());
    }
    assert!(sizes[1].abs_diff(sizes[0]) < 64, "the summary does not grow with the repeats: {sizes:?}");
    // 1 MB of distinct sentences: the floor alone is over a 100,000-token window, and the
    // cannot_fit names exactly how many distinct sentences it had to carry
    let doc = constraint_flood(1_000_000, true);
    let src = source(Format::OpenaiChat, &doc);
    let n_user = src.messages.len() - 2;
    let distinct: std::collections::HashSet<&str> = src.messages[1..n_user].iter().flat_map(|m| m.user_texts()).flat_map(nothing_lost::constraint_sentences).collect();
    let o = run(Format::OpenaiChat, &doc, opts("default", 100_000), SessionState::default(), false);
    assert_eq!(o.status, "cannot_fit", "{}", o.reason);
    // the first task's own sentences are counted in it, the rest one by one: at most
    // every other distinct sentence of the source, at least those of the folded rows
    // (all but the few rows of the recent window)
    let first: std::collections::HashSet<&str> = src.messages[1].user_texts().flat_map(nothing_lost::constraint_sentences).collect();
    let at = o.reason.find("the first task and ").expect("names the floor") + "the first task and ".len();
    let counted: usize = o.reason[at..].split(' ').next().unwrap().parse().unwrap();
    let most = distinct.len() - first.len();
    assert!(counted <= most && counted >= most - most / 100, "{counted} of {most}: {}", o.reason);
    assert!(o.reason.contains("user constraint sentences verbatim") && o.reason.contains("over the context window of 100000 tokens"), "{}", o.reason);
}

#[test]
fn n1_user_text_in_a_text_document_or_a_text_inline_part_is_the_users_text() {
    // Anthropic `document` with a text source, Gemini `inlineData` of text/plain (base64),
    // AI SDK / OpenAI Chat / OpenAI Responses text file parts: the person's text, folded, is quoted in the summary (its constraint verbatim) and
    // whole in the memory records
    let doc_text = "Spec from the customer: the export runs nightly. You must keep the CSV header order. DOCSECRET42 is the batch name.";
    let b64 = {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let bytes = doc_text.as_bytes();
        let mut out = String::new();
        for c in bytes.chunks(3) {
            let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
            for k in 0..4 {
                if k <= c.len() {
                    out.push(A[((n >> (18 - 6 * k)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    };
    for format in [Format::Anthropic, Format::Gemini, Format::AiSdk, Format::OpenaiChat, Format::OpenaiResponses] {
        let mut rows = vec![R::User("First task: build the exporter.".into())];
        let mut msgs: Vec<Value> = Vec::new();
        for t in 0..10 {
            rows.push(R::Asst(format!("step {t} {}", "detail ".repeat(200))));
            rows.push(R::User(format!("next {t}")));
        }
        let doc = render(format, &rows);
        // the document goes in as the second user message
        let key = match format {
            Format::Gemini => "contents",
            Format::OpenaiResponses => "input",
            _ => "messages",
        };
        let list = if format == Format::OpenaiChat { doc.as_array().unwrap().clone() } else { doc[key].as_array().unwrap().clone() };
        let extra = match format {
            Format::Gemini => json!({ "role": "user", "parts": [{ "inlineData": { "mimeType": "text/plain", "data": b64 } }] }),
            // AI SDK `file` part of text/plain (base64); OpenAI Chat `file` with a data URL;
            // OpenAI Responses `input_file` with bare base64 and a .csv file name
            Format::AiSdk => json!({ "role": "user", "content": [{ "type": "file", "mediaType": "text/plain", "data": b64 }] }),
            Format::OpenaiChat => json!({ "role": "user", "content": [{ "type": "file", "file": { "filename": "spec.txt", "file_data": format!("data:text/plain;base64,{b64}") } }] }),
            Format::OpenaiResponses => json!({ "role": "user", "content": [{ "type": "input_file", "filename": "spec.csv", "file_data": b64 }] }),
            _ => json!({ "role": "user", "content": [{ "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": doc_text } }] }),
        };
        let filler = match format {
            Format::Gemini => json!({ "role": "model", "parts": [{ "text": "Read it." }] }),
            _ => json!({ "role": "assistant", "content": "Read it." }),
        };
        msgs.extend(list[..2].iter().cloned());
        msgs.push(extra);
        msgs.push(filler);
        msgs.extend(list[2..].iter().cloned());
        let doc = if format == Format::OpenaiChat {
            Value::Array(msgs)
        } else {
            let mut doc = doc.clone();
            doc[key] = Value::Array(msgs);
            doc
        };
        let src = source(format, &doc);
        let at = src.messages.iter().position(|m| m.user_texts().any(|t| t == doc_text)).unwrap_or_else(|| panic!("{}: the document is read as user text", format.name()));
        let o = run(format, &doc, opts("default", 4_000), SessionState::default(), false);
        assert_nothing_lost(&o, &src, format.name());
        let rw = o.rewrite.as_ref().unwrap();
        assert!(rw.discarded.contains(&at), "{}: the document's row is folded", format.name());
        let text = &rw.summary.as_ref().unwrap().text;
        assert!(text.contains("You must keep the CSV header order."), "{}: constraint verbatim", format.name());
        let memory = o.memory.as_ref().unwrap();
        assert!(memory.records.iter().any(|r| r.content.contains("DOCSECRET42")), "{}: in memory", format.name());
    }
    // other media stay media: an image document source is no text
    let t = source(Format::Anthropic, &json!({ "messages": [{ "role": "user", "content": [{ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0=" } }] }] }));
    assert!(t.messages[0].user_texts().next().is_none());
    let t = source(Format::Gemini, &json!({ "contents": [{ "role": "user", "parts": [{ "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } }] }] }));
    assert!(t.messages[0].user_texts().next().is_none());
    let t = source(Format::AiSdk, &json!({ "messages": [{ "role": "user", "content": [{ "type": "file", "mediaType": "application/pdf", "data": "JVBERi0=" }] }] }));
    assert!(t.messages[0].user_texts().next().is_none());
    let t = source(Format::OpenaiChat, &json!([{ "role": "user", "content": [{ "type": "file", "file": { "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0=" } }] }]));
    assert!(t.messages[0].user_texts().next().is_none());
}

/// Standard base64 of `s` (test helper).
fn b64(s: &str) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in s.as_bytes().chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            out.push(if k <= c.len() { A[((n >> (18 - 6 * k)) & 63) as usize] as char } else { '=' });
        }
    }
    out
}

#[test]
fn n1_i2_langchain_text_file_blocks_are_the_users_text() {
    // adversarial finding (session 5): LangChain standard content blocks carrying a text
    // file (rows of the langchain integration are openai-chat rows keeping the message's
    // blocks as given) were a document placeholder or an opaque part, so a folded
    // attachment was neither quoted nor in memory
    let doc_text = "Spec from the customer: the export runs nightly. You must keep the CSV header order. DOCSECRET42 is the batch name.";
    let enc = b64(doc_text);
    let blocks = [
        // v1 JS: `text-plain` with text; `text-plain` with base64 data; `file` with a text mimeType
        json!({ "type": "text-plain", "text": doc_text, "mimeType": "text/plain", "title": "spec.txt" }),
        json!({ "type": "text-plain", "data": enc, "mimeType": "text/plain" }),
        json!({ "type": "file", "mimeType": "text/csv", "data": enc, "metadata": { "filename": "spec.csv" } }),
        // v1 Python: `base64` and `mime_type`
        json!({ "type": "text-plain", "base64": enc, "mime_type": "text/plain" }),
        json!({ "type": "file", "base64": enc, "mime_type": "text/markdown" }),
        // a data URL; a bare file name telling the type
        json!({ "type": "file", "url": format!("data:text/plain;base64,{enc}") }),
        json!({ "type": "file", "data": enc, "filename": "spec.txt" }),
        // LangChain.js `data` as a Uint8Array, as JSON.stringify writes it
        json!({ "type": "text-plain", "mimeType": "text/plain", "data": doc_text.bytes().enumerate().map(|(i, b)| (i.to_string(), json!(b))).collect::<serde_json::Map<String, Value>>() }),
        // the older data blocks (langchain-core 0.3)
        json!({ "type": "file", "source_type": "text", "text": doc_text, "mime_type": "text/plain" }),
        json!({ "type": "file", "source_type": "base64", "mime_type": "text/plain", "data": enc }),
    ];
    for block in &blocks {
        let mut msgs = vec![json!({ "role": "user", "content": "First task: build the exporter." })];
        msgs.push(json!({ "role": "user", "content": [{ "type": "text", "text": "Here is the spec." }, block], "lc": { "type": "human", "id": "h-spec" } }));
        for t in 0..10 {
            msgs.push(json!({ "role": "assistant", "content": format!("step {t} {}", "detail ".repeat(200)) }));
            msgs.push(json!({ "role": "user", "content": format!("next {t}") }));
        }
        let doc = Value::Array(msgs);
        let src = source(Format::OpenaiChat, &doc);
        assert!(src.messages[1].user_texts().any(|t| t == doc_text), "{block}: read as the user's text");
        let o = run(Format::OpenaiChat, &doc, opts("default", 4_000), SessionState::default(), false);
        assert_nothing_lost(&o, &src, &block.to_string());
        let rw = o.rewrite.as_ref().unwrap();
        assert!(rw.discarded.contains(&1), "{block}: the attachment's row is folded");
        assert!(rw.summary.as_ref().unwrap().text.contains("You must keep the CSV header order."), "{block}: constraint verbatim");
        assert!(o.memory.as_ref().unwrap().records.iter().any(|r| r.content.contains("DOCSECRET42")), "{block}: whole in memory");
    }
    // other files stay documents: a PDF, a file id, an http URL, text that is not base64
    for block in [
        json!({ "type": "file", "mimeType": "application/pdf", "data": "JVBERi0=" }),
        json!({ "type": "file", "fileId": "file-abc", "mimeType": "text/plain" }),
        json!({ "type": "text-plain", "url": "https://example.com/spec.txt" }),
        json!({ "type": "file", "source_type": "base64", "mime_type": "text/plain", "data": "not base64!" }),
        json!({ "type": "file", "mimeType": "application/pdf", "data": { "0": 37, "1": 80 } }),
        json!({ "type": "text-plain", "data": { "0": 72, "2": 105 } }),
    ] {
        let t = source(Format::OpenaiChat, &json!([{ "role": "user", "content": [block.clone()] }]));
        assert!(t.messages[0].user_texts().next().is_none(), "{block}");
        assert!(matches!(t.messages[0].blocks[0], context_compactor::transcript::Block::Media { kind: context_compactor::transcript::MediaKind::Document, .. }), "{block}: a document placeholder");
    }
}

#[test]
fn n1_a_user_message_of_several_text_blocks_is_clipped_block_by_block() {
    // adversarial finding (session 5): a message of two text blocks, both clipped, each
    // with its own marker; the check compared every block with the first marker's head
    let mut msgs = Vec::new();
    for i in 0..10 {
        msgs.push(json!({ "role": "user", "content": [{ "type": "text", "text": format!("Request {i} {}", "a".repeat(500)) }, { "type": "text", "text": format!("second {i} {}", "b".repeat(500)) }] }));
        msgs.push(json!({ "role": "assistant", "content": [{ "type": "text", "text": format!("Answer {i} {}", "blah ".repeat(100)) }] }));
    }
    let doc = json!({ "messages": msgs });
    let src = source(Format::Anthropic, &doc);
    for summarizer in [false, true] {
        let o = run(Format::Anthropic, &doc, opts("default", 4_000), SessionState::default(), summarizer);
        if o.status != "compacted" {
            let s: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(Message::text).collect();
            eprintln!("{s}");
        }
        assert_nothing_lost(&o, &src, "two text blocks");
        let text: String = o.transcript.messages.iter().filter(|m| m.is_summary()).map(Message::text).collect();
        assert!(text.matches(CLIPPED_PREFIX).count() >= 2, "both blocks of a message clipped with their own markers");
    }
}

/// Adversarial finding (session 6): an Anthropic `search_result` block, in a user
/// message or inside a tool result, folded to nothing (an opaque byte count): its text is
/// now read, so a fold keeps it in the summary or memory (N-1, M-1).
#[test]
fn n1_m1_anthropic_search_result_blocks_are_read_as_text() {
    let sr = |title: &str, text: &str| json!({ "type": "search_result", "source": "https://wiki.example/sla", "title": title, "content": [{ "type": "text", "text": text }], "citations": { "enabled": true } });
    let mut msgs = vec![json!({ "role": "user", "content": [sr("SLA page", "SEARCH-RESULT: the SLA is 99.9%."), { "type": "text", "text": "First task: answer from these results." }] })];
    msgs.push(json!({ "role": "assistant", "content": [{ "type": "tool_use", "id": "t1", "name": "search", "input": { "q": "uptime" } }] }));
    msgs.push(json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t1", "content": [sr("Uptime", "TOOL-SEARCH: uptime was 99.95% in May.")] }] }));
    for t in 0..10 {
        msgs.push(json!({ "role": "assistant", "content": format!("step {t} {}", "detail ".repeat(200)) }));
        msgs.push(json!({ "role": "user", "content": format!("next {t}") }));
    }
    let doc = json!({ "messages": msgs });
    let src = source(Format::Anthropic, &doc);
    let first: Vec<&str> = src.messages[0].user_texts().collect();
    assert!(first.iter().any(|t| t.contains("SEARCH-RESULT: the SLA is 99.9%.") && t.contains("SLA page") && t.contains("https://wiki.example/sla")), "{first:?}");
    let result = src.messages[2].blocks.iter().find_map(|b| match b {
        context_compactor::transcript::Block::ToolResult { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert!(result.as_deref().is_some_and(|t| t.contains("TOOL-SEARCH: uptime was 99.95% in May.")), "{result:?}");
    let o = run(Format::Anthropic, &doc, opts("default", 4_000), SessionState::default(), true);
    assert_nothing_lost(&o, &src, "anthropic");
    let rw = o.rewrite.as_ref().unwrap();
    assert!(rw.discarded.contains(&2), "the tool result's row is folded");
    let memory = o.memory.as_ref().unwrap();
    assert!(memory.records.iter().any(|r| r.content.contains("TOOL-SEARCH")), "the tool's search result is in memory");
}
