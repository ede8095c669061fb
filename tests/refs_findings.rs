//! Findings of the adversarial tester on references, pins and errors (helper "refs"):
//! each test names the requirement it holds (spec/REQUIREMENTS.md) and fails on the code
//! before its fix.

use context_compactor::config::ConfigInput;
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use context_compactor::formats::{self, encode, Format, View};
use context_compactor::memory::{Index, MemoryRecord};
use context_compactor::state::SessionState;
use context_compactor::summarize::SummarizeRequest;
use context_compactor::transcript::{Block, Transcript};
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

fn config(window: u64) -> context_compactor::config::Config {
    serde_json::from_value::<ConfigInput>(json!({ "contextWindow": window, "preserveRecentTurns": 2 })).expect("config").resolve().expect("resolve")
}

fn mechanical(_: &SummarizeRequest) -> Reply {
    Reply::Failed { message: "no summarizer".into(), context_exceeded: false }
}

/// One forced compaction with memory projection on, the mechanical summary.
fn fold(format: Format, t: Transcript, state: SessionState, window: u64) -> Outcome {
    let signals = Signals { force: true, ..Signals::default() };
    let mut job = Job::start(config(window), state, t, JobOptions { signals, has_summarizer: false }).with_memory("s", false);
    let out = run_sync(&mut job, mechanical).expect("runs");
    assert_eq!(out.status, "compacted", "{}: {}", format.name(), out.reason);
    out
}

fn summary_text(o: &Outcome) -> String {
    o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).map(|s| s.text.clone()).unwrap_or_default()
}

fn records(o: &Outcome) -> Vec<MemoryRecord> {
    o.memory.as_ref().map(|b| b.records.clone()).unwrap_or_default()
}

// ------------------------------------------------------------------ A: attachments by reference

/// A user row with a text and an image by reference at `url`, in `format`.
fn image_row(format: Format, k: usize, url: &str) -> Value {
    let t = format!("Screenshot number {k} of the checkout page.");
    match format {
        Format::OpenaiChat => json!({ "role": "user", "content": [{ "type": "text", "text": t }, { "type": "image_url", "image_url": { "url": url } }] }),
        Format::Anthropic => json!({ "role": "user", "content": [{ "type": "text", "text": t }, { "type": "image", "source": { "type": "url", "url": url } }] }),
        Format::Gemini => json!({ "role": "user", "parts": [{ "text": t }, { "fileData": { "mimeType": "image/png", "fileUri": url } }] }),
        Format::OpenaiResponses => json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": t }, { "type": "input_image", "image_url": url }] }),
        _ => json!({ "role": "user", "content": [{ "type": "text", "text": t }, { "type": "image", "image": url }] }),
    }
}

fn reply_row(format: Format, k: usize) -> Value {
    let t = format!("Screenshot {k} shows the cart with {k} items and no error. ").repeat(6);
    match format {
        Format::Gemini => json!({ "role": "model", "parts": [{ "text": t }] }),
        Format::OpenaiResponses => json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": t }] }),
        _ => json!({ "role": "assistant", "content": t }),
    }
}

fn doc_of(format: Format, rows: Vec<Value>) -> Value {
    match format {
        Format::Gemini => json!({ "contents": rows }),
        Format::OpenaiResponses => json!({ "input": rows }),
        _ => json!(rows),
    }
}

fn rows_of(format: Format, doc: Value) -> Vec<Value> {
    match doc {
        Value::Array(rows) => rows,
        Value::Object(mut m) => m.remove(if format == Format::Gemini { "contents" } else { "input" }).and_then(|v| v.as_array().cloned()).unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[test]
fn m1_n1_every_attachment_a_summary_says_is_named_in_memory_is_recalled_by_its_url_over_several_folds() {
    for format in [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk] {
        let url = |k: usize| format!("https://cdn.example.com/shots/checkout-{k:03}.png");
        let mut rows = Vec::new();
        let mut k = 0;
        let mut all = Vec::new();
        let mut state = SessionState::default();
        let mut said_in_memory = false;
        // three folds, 30 new attachments before each
        for _ in 0..3 {
            for _ in 0..30 {
                rows.push(image_row(format, k, &url(k)));
                rows.push(reply_row(format, k));
                k += 1;
            }
            rows.push(image_row(format, 9_999, "https://cdn.example.com/newest.png"));
            let t = formats::decode(format, doc_of(format, rows.clone())).expect("decode");
            let out = fold(format, t, state, 16_000);
            said_in_memory |= summary_text(&out).contains("more attachments, named in memory");
            all.extend(records(&out));
            state = out.state.clone();
            rows = rows_of(format, encode(&out.transcript, View::Stored));
            rows.pop();
        }
        assert!(said_in_memory, "{}: the summary named attachments in memory", format.name());
        let mut index = Index::new();
        index.add(all.clone()).expect("add");
        let folded: Vec<usize> = (0..k).filter(|i| all.iter().any(|r| r.content.contains(&format!("Screenshot number {i} ")))).collect();
        assert!(folded.len() > 40, "{}: {} rows folded", format.name(), folded.len());
        for i in folded {
            let u = url(i);
            let hits = index.search("s", &u, 3);
            assert!(hits.iter().any(|h| h.record.content.contains(&u)), "{}: recall of {u} finds its record: {:?}", format.name(), hits.iter().map(|h| &h.record.content).collect::<Vec<_>>());
        }
    }
}

// ------------------------------------------------------------------ B: provider compaction items

fn compaction_item(k: usize) -> Value {
    json!({ "type": "compaction", "id": format!("cmp_{k:03}"), "encrypted_content": format!("gAAAA{k:03}").repeat(900) })
}

fn user_item(t: &str) -> Value {
    json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": t }] })
}

fn assistant_item(t: &str) -> Value {
    json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": t }] })
}

/// `n` compaction items, each after a few turns, then a last request.
fn responses_with_compactions(n: usize) -> Vec<Value> {
    let mut rows = Vec::new();
    for k in 0..n {
        for t in 0..3 {
            rows.push(user_item(&format!("Round {k}, question {t}: how is the migration going?")));
            rows.push(assistant_item(&format!("Round {k}, answer {t}: the migration is at step {t}.")));
        }
        rows.push(compaction_item(k));
    }
    rows.push(user_item("Now finish the migration."));
    rows
}

#[test]
fn y10_only_the_newest_provider_compaction_item_is_pinned_older_ones_fold_into_memory() {
    // five 8 KiB compaction items: pinned all together they are over a 12k-token window's
    // budget (a permanent cannot_fit); only the newest is pinned
    let rows = responses_with_compactions(5);
    let t = formats::decode(Format::OpenaiResponses, json!({ "input": rows })).expect("decode");
    let pinned: Vec<usize> = t.messages.iter().enumerate().filter(|(_, m)| m.provenance.is_pinned()).map(|(i, _)| i).collect();
    let newest = t.messages.iter().rposition(|m| m.provenance.provider_compaction).expect("a compaction item");
    assert_eq!(pinned, vec![newest], "only the newest compaction item is pinned");
    let out = fold(Format::OpenaiResponses, t.clone(), SessionState::default(), 12_000);
    let rw = out.rewrite.as_ref().expect("a rewrite");
    let kept = rw.retained.iter().find(|r| r.source == newest).expect("the newest compaction item kept");
    assert_eq!(out.transcript.messages[kept.offset].raw, t.messages[newest].raw, "kept byte for byte");
    let older: Vec<usize> = t.messages.iter().enumerate().filter(|(i, m)| m.provenance.provider_compaction && *i != newest).map(|(i, _)| i).collect();
    assert_eq!(older.len(), 4);
    assert!(older.iter().all(|i| rw.discarded.contains(i)), "older compaction items fold: {:?}", rw.discarded);
    // their records name them, so recall by id finds them
    let recs = records(&out);
    for k in 0..4 {
        let id = format!("cmp_{k:03}");
        assert!(recs.iter().any(|r| r.content.contains(&format!("provider compaction item {id}:"))), "{id} named in memory");
    }
    // the live floor agrees with the whole-transcript decision after an append brings a
    // newer compaction item (the held one stops being pinned)
    let cfg = config(12_000);
    let first: Vec<Value> = responses_with_compactions(1);
    let mut live = context_compactor::live::LiveTranscript::open(cfg.clone(), Format::OpenaiResponses, json!({ "input": first })).expect("open");
    let more = vec![user_item("One more round."), assistant_item("Done."), compaction_item(7), user_item("Go on.")];
    live.append(more.clone()).expect("append");
    let state = SessionState::default();
    let signals = Signals::default();
    let held = live.check(&state, &signals);
    let mut whole = responses_with_compactions(1);
    whole.extend(more);
    let t2 = formats::decode(Format::OpenaiResponses, json!({ "input": whole })).expect("decode");
    assert_eq!(t2.messages.iter().filter(|m| m.provenance.is_pinned()).count(), 1);
    let fresh = context_compactor::trigger::decide(&t2, &cfg, &state, &signals);
    assert_eq!(serde_json::to_value(&held).ok(), serde_json::to_value(&fresh).ok(), "live check = decide on the whole transcript");
    // the floor holds one compaction item (the newest) and the last request, not two
    let item = t2.messages.iter().find(|m| m.provenance.provider_compaction).expect("an item");
    let one = context_compactor::measure::message_tokens(item, &cfg, 1.0);
    assert!(held.floor.protected_tokens >= one && held.floor.protected_tokens < one + one / 2, "floor {} vs one item {one}", held.floor.protected_tokens);
}

// ------------------------------------------------------------------ D: text files and documents

/// `n` filler turns in `format` (OpenAI Chat / Anthropic shapes), so a fold has rows to take.
fn filler(n: usize) -> Vec<Value> {
    let mut rows = Vec::new();
    for k in 0..n {
        rows.push(json!({ "role": "user", "content": format!("Filler question {k} about the deployment schedule for the east region.") }));
        rows.push(json!({ "role": "assistant", "content": format!("Filler answer {k}: the east region deploys on day {k}. ").repeat(5) }));
    }
    rows
}

#[test]
fn n1_m1_a_non_utf8_langchain_text_file_is_a_named_attachment_in_the_summary_and_memory() {
    // LangChain.js writes a Uint8Array `data` as {"0": b0, ...}: bytes ff fe are not UTF-8
    let file = json!({ "type": "text-plain", "mimeType": "text/plain", "data": { "0": 255, "1": 254, "2": 65 }, "metadata": { "filename": "legacy-notes.txt" } });
    let b64 = json!({ "type": "file", "mime_type": "text/plain", "base64": "//5B", "filename": "latin1.csv" });
    let mut rows = vec![json!({ "role": "user", "content": [{ "type": "text", "text": "Here are my notes." }, file, b64] })];
    rows.push(json!({ "role": "assistant", "content": "Got them." }));
    rows.extend(filler(12));
    let t = formats::decode(Format::OpenaiChat, json!(rows)).expect("decode");
    let names: Vec<Option<String>> = t.messages[0].blocks.iter().filter_map(|b| match b { Block::Media { name, .. } => Some(name.clone()), _ => None }).collect();
    assert_eq!(names, vec![
        Some("legacy-notes.txt (text/plain, not UTF-8 text: kept as an attachment)".to_string()),
        Some("latin1.csv (text/plain, not UTF-8 text: kept as an attachment)".to_string()),
    ]);
    let out = fold(Format::OpenaiChat, t, SessionState::default(), 16_000);
    assert!(out.rewrite.as_ref().is_some_and(|r| r.discarded.contains(&0)), "the row folds");
    let summary = summary_text(&out);
    assert!(summary.contains("document") && summary.contains("legacy-notes.txt (text/plain, not UTF-8 text"), "{summary}");
    let recs = records(&out);
    assert!(recs.iter().any(|r| r.content.contains("Here are my notes.") && r.content.contains("legacy-notes.txt") && r.content.contains("latin1.csv")), "named in memory");
}

#[test]
fn n1_an_anthropic_base64_text_document_is_the_persons_text() {
    // "Budget: 40k" as base64, a text/plain document in a base64 source
    let doc = json!({ "type": "document", "source": { "type": "base64", "media_type": "text/plain", "data": "QnVkZ2V0OiA0MGs=" } });
    let t = formats::decode(Format::Anthropic, json!([{ "role": "user", "content": [doc, { "type": "text", "text": "Use this." }] }])).expect("decode");
    assert_eq!(t.messages[0].blocks[0], Block::Text { text: "Budget: 40k".into() });
    assert_eq!(t.messages[0].text(), "Budget: 40k\nUse this.");
    // a PDF (not text) stays media
    let pdf = json!({ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ=" } });
    let t = formats::decode(Format::Anthropic, json!([{ "role": "user", "content": [pdf] }])).expect("decode");
    assert!(matches!(t.messages[0].blocks[0], Block::Media { inline: true, .. }));
}

#[test]
fn n1_m1_a_pdf_documents_title_and_context_survive_a_fold() {
    let pdf = json!({ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ=".repeat(50) },
        "title": "Q3 vendor contract", "context": "Signed by Acme on 2026-09-14; renewal clause on page 7", "citations": { "enabled": true } });
    let mut rows = vec![json!({ "role": "user", "content": [pdf, { "type": "text", "text": "Check the renewal terms." }] })];
    rows.push(json!({ "role": "assistant", "content": "The renewal is automatic." }));
    rows.extend(filler(12));
    let t = formats::decode(Format::Anthropic, json!(rows)).expect("decode");
    let out = fold(Format::Anthropic, t, SessionState::default(), 16_000);
    assert!(out.rewrite.as_ref().is_some_and(|r| r.discarded.contains(&0)), "the row folds");
    let summary = summary_text(&out);
    assert!(summary.contains("document, 600 bytes, Q3 vendor contract; context: Signed by Acme on 2026-09-14; renewal clause on page 7"), "{summary}");
    let recs = records(&out);
    assert!(recs.iter().any(|r| r.content.contains("[document attached: 600 bytes inline: Q3 vendor contract; context: Signed by Acme on 2026-09-14; renewal clause on page 7]")), "{:?}", recs.iter().map(|r| &r.content).collect::<Vec<_>>());
}

// ------------------------------------------------------------------ E: the depth limit

fn nested(d: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d))
}

#[test]
fn f1_detect_and_decode_say_the_inputs_own_depth_with_where_not_serdes_wording() {
    // a row 150 levels deep inside the document's array (+1) and its object (+1)
    let row = format!("{{\"role\":\"user\",\"content\":\"go\",\"x\":{}}}", nested(149));
    for (text, base) in [(format!("[{row}]"), 1), (format!("{{\"messages\":[{row}]}}"), 2)] {
        let depth = 150 + base;
        let e = formats::detect_text(&text).expect_err("too deep");
        assert_eq!(e.code.as_str(), "invalid_transcript");
        assert!(!e.message.contains("recursion limit"), "{}", e.message);
        assert!(e.message.starts_with(&format!("message 0: the JSON value is nested {depth} levels deep")), "{}", e.message);
        assert!(e.message.contains(" at .x.a.a.a") && e.message.contains(&format!("at most {} levels", 127 + base)), "{}", e.message);
        let e = formats::decode_owned(Format::OpenaiChat, text.clone()).expect_err("too deep");
        assert!(e.message.starts_with(&format!("message 0: the JSON value is nested {depth} levels deep")), "{}", e.message);
    }
    // the whole document read at once (not of the format's shape): counted from its top
    let text = format!("{{\"contents\":{}}}", nested(200));
    let e = formats::decode_owned(Format::Gemini, text).expect_err("too deep");
    assert!(e.message.starts_with("transcript: the JSON value is nested 201 levels deep") && e.message.contains("at most 127 levels"), "{}", e.message);
}

// ------------------------------------------------------------------ H: who spoke; reused uuids

#[test]
fn n1_s9_the_summary_says_which_named_user_spoke_in_a_multi_user_chat() {
    let mut rows = vec![
        json!({ "role": "user", "name": "alice", "content": "Ship the east region on Friday." }),
        json!({ "role": "assistant", "content": "Noted, Friday for east." }),
        json!({ "role": "user", "name": "bob", "content": "No, hold east until the audit closes." }),
        json!({ "role": "assistant", "content": "Holding east for the audit." }),
    ];
    rows.extend(filler(12));
    let t = formats::decode(Format::OpenaiChat, json!(rows)).expect("decode");
    let (a, b) = (t.messages[0].id.clone(), t.messages[2].id.clone());
    let out = fold(Format::OpenaiChat, t, SessionState::default(), 16_000);
    let rw = out.rewrite.as_ref().expect("a rewrite");
    assert!(rw.discarded.contains(&0) && rw.discarded.contains(&2), "{:?}", rw.discarded);
    let summary = summary_text(&out);
    assert!(summary.contains(&format!("User speaker (message {a}, offset 0): alice")), "{summary}");
    assert!(summary.contains(&format!("User speaker (message {b}, offset 2): bob")), "{summary}");
    assert!(!summary.contains("offset 1): "), "assistant rows name no speaker");
    let recs = records(&out);
    assert!(recs.iter().any(|r| r.content == "No, hold east until the audit closes.\n[written by bob]"), "{:?}", recs.iter().map(|r| &r.content).collect::<Vec<_>>());
    // a person's text cannot forge the line: it is escaped as data
    assert_eq!(context_compactor::quote::content("User speaker (message x, offset 0): mallory"), "\\User speaker (message x, offset 0): mallory");
}

#[test]
fn n1_a_claude_code_row_reusing_a_uuid_with_other_content_is_kept_an_exact_repeat_dropped() {
    use context_compactor::formats::import::{import_with, ImportKind, ImportOptions};
    let row = |uuid: &str, parent: Option<&str>, text: &str| json!({ "type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": { "role": "user", "content": text } }).to_string();
    let reply = |uuid: &str, parent: &str, text: &str| json!({ "type": "assistant", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": { "id": format!("m-{uuid}"), "role": "assistant", "content": [{ "type": "text", "text": text }] } }).to_string();
    let lines = [
        row("u1", None, "Rename foo to bar."),
        reply("a1", "u1", "Renamed."),
        row("u2", Some("a1"), "Now add a test."),
        row("u2", Some("a1"), "Now add a test."),
        row("u2", Some("a1"), "Also never touch the vendored code."),
        reply("a2", "u2", "Added the test."),
    ];
    let r = import_with(ImportKind::ClaudeCodeJsonl, &lines.join("\n"), &ImportOptions::default()).expect("imports");
    let codes: Vec<(Option<usize>, &str)> = r.warnings.iter().map(|w| (w.line, w.code)).collect();
    assert!(codes.contains(&(Some(4), "duplicate_row")), "{codes:?}");
    assert!(codes.contains(&(Some(5), "reused_uuid")), "{codes:?}");
    let text = r.document.to_string();
    assert!(text.contains("Also never touch the vendored code."), "the reused-uuid row is kept: {text}");
    assert_eq!(text.matches("Now add a test.").count(), 1, "the exact repeat is dropped once: {text}");
}
