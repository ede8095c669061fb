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
