//! Issue 15 item 2: decoded rows borrow the host's input instead of copying it
//! (`formats::decode_owned`, `RawJson::from_canonical_in`). A borrowed row is the row
//! the `Value` decode gives (same view, id, bytes and written text, T-1, T-4, F-3) on odd
//! spellings too; only canonical slices are borrowed; a committed compaction gives the
//! kept rows their own text so the input can be freed.

mod common;
use common::fake_summary;
use context_compactor::config::Config;
use context_compactor::formats::{self, Format, View};
use context_compactor::live::LiveTranscript;
use context_compactor::output::encoded_len;
use context_compactor::raw::RawJson;
use context_compactor::state::SessionState;
use context_compactor::summarize::SummarizeRequest;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};
use std::sync::Arc;

/// Documents whose text mixes rows a decode can keep verbatim with rows it must
/// normalise: escapes serde_json writes (`\n`, `\"`, `\\`, control characters) and
/// ones it does not (`\u00e9`, `\/`), pretty-printing inside one row, a repeated key,
/// non-BMP and combining characters, floats, provenance keys.
fn odd_documents() -> Vec<(&'static str, String)> {
    vec![
        (
            "escapes serde_json writes",
            r#"[{"role":"user","content":"line one\nline \"two\"\\ tab\t bell\u0007 end"},{"role":"assistant","content":"ok"}]"#.to_string(),
        ),
        (
            "escapes serde_json does not write",
            r#"[{"role":"user","content":"caf\u00e9 a\/b"},{"role":"assistant","content":"ok"}]"#.to_string(),
        ),
        (
            "whitespace inside one row",
            "[{\"role\":\"user\",\"content\":\"compact\"},\n  { \"role\" : \"assistant\",\n    \"content\" : \"spaced\" }\n]".to_string(),
        ),
        (
            "a repeated key",
            r#"[{"role":"user","content":"first","content":"second"},{"role":"assistant","content":"ok"}]"#.to_string(),
        ),
        (
            "unicode",
            "[{\"role\":\"user\",\"content\":\"émoji 🦀 e\u{301} 中文 \u{2028}\"},{\"role\":\"assistant\",\"content\":\"ok 🦀\"}]".to_string(),
        ),
        (
            "tool exchange with a float and a provenance key",
            r#"{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\":1.50}"}}]},{"role":"tool","tool_call_id":"c1","content":"r","score":1.50},{"role":"assistant","content":"done","message_id":"a1"}]}"#.to_string(),
        ),
    ]
}

#[test]
fn i15_2_t4_borrowed_rows_equal_the_value_decode_on_odd_spellings() {
    for (what, text) in odd_documents() {
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        let want = formats::decode(Format::OpenaiChat, doc.clone()).expect("Value decode");
        let got = formats::decode_owned(Format::OpenaiChat, text.clone()).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert_eq!(got, want, "{what}: same rows (views, ids, bytes, provenance)");
        assert_eq!(formats::encode(&got, View::Stored), doc, "{what}: round trip (F-3)");
        assert_eq!(encoded_len(&got, View::Request), serde_json::to_string(&formats::encode(&want, View::Request)).unwrap().len(), "{what}");
        for (m, w) in got.messages.iter().zip(&want.messages) {
            assert_eq!(m.raw.get(), w.raw.get(), "{what}: row text");
            assert_eq!(m.bytes, m.raw.len(), "{what}: bytes read off the borrowed text");
        }
    }
}

#[test]
fn i15_2_only_canonical_slices_are_borrowed() {
    for (what, text) in odd_documents() {
        let t = formats::decode_owned(Format::OpenaiChat, text.clone()).expect("decodes");
        let split: Value = serde_json::from_str(&text).unwrap();
        let rows = split.get("messages").unwrap_or(&split).as_array().unwrap().clone();
        for (k, m) in t.messages.iter().enumerate() {
            // a row is borrowed exactly when its own slice of the input is the text the
            // `Value` decode writes for it (no provenance key, canonical spelling)
            let canonical = RawJson::from_value(&rows[k]).get() == m.raw.get() && text.contains(m.raw.get());
            assert_eq!(m.raw.is_shared(), canonical, "{what}: row {k} {}", m.raw.get());
        }
    }
    // the bench's shape (JSON.stringify output): every row borrows the input
    let text = serde_json::to_string(&json!([{"role":"user","content":"a\nb"},{"role":"assistant","content":"ok"}])).unwrap();
    let t = formats::decode_owned(Format::OpenaiChat, text).unwrap();
    assert!(t.messages.iter().all(|m| m.raw.is_shared()));
}

#[test]
fn i15_2_a_slice_outside_the_given_input_is_copied_not_borrowed() {
    let source = Arc::new(r#"[{"role":"user","content":"inside"}]"#.to_string());
    let elsewhere = String::from(r#"{"role":"user","content":"elsewhere"}"#);
    let raw: &serde_json::value::RawValue = serde_json::from_str(&elsewhere).unwrap();
    let held = RawJson::from_canonical_in(&source, raw).expect("canonical");
    assert!(!held.is_shared(), "a slice that is not part of `source` must not borrow it");
    assert_eq!(held.get(), elsewhere);
    let inside: Vec<&serde_json::value::RawValue> = serde_json::from_str(&source).unwrap();
    let held = RawJson::from_canonical_in(&source, inside[0]).expect("canonical");
    assert!(held.is_shared());
    assert_eq!(held.get(), r#"{"role":"user","content":"inside"}"#);
    // a non-canonical slice is refused either way (the caller normalises it)
    let spaced = Arc::new(r#"[{"role": "user"}]"#.to_string());
    let item: Vec<&serde_json::value::RawValue> = serde_json::from_str(&spaced).unwrap();
    assert!(RawJson::from_canonical_in(&spaced, item[0]).is_none());
}

#[test]
fn i15_2_unshare_keeps_rows_ids_and_bytes() {
    let text = serde_json::to_string(&json!([{"role":"user","content":"é\n🦀"},{"role":"assistant","content":"ok"},{"role":"user","content":"é\n🦀"}])).unwrap();
    let borrowed = formats::decode_owned(Format::OpenaiChat, text).unwrap();
    let mut owned = borrowed.clone();
    owned.unshare();
    assert!(borrowed.messages.iter().all(|m| m.raw.is_shared()));
    assert!(owned.messages.iter().all(|m| !m.raw.is_shared()));
    assert_eq!(owned, borrowed);
    assert_eq!(owned.messages[2].id, borrowed.messages[2].id, "T-4: twin ids unchanged");
}

#[test]
fn i15_2_w1_a_committed_live_compaction_stops_borrowing_the_opened_text() {
    let cfg = Config::from_options(&json!({ "profile": "default", "contextWindow": 3_000 })).unwrap();
    let mut rows = vec![json!({ "role": "system", "content": "You are a helpful agent." })];
    for i in 0..12 {
        rows.push(json!({ "role": "user", "content": format!("question {i}: status of order {i}?") }));
        rows.push(json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": format!("c{i}"), "type": "function", "function": { "name": "lookup", "arguments": "{}" } }] }));
        rows.push(json!({ "role": "tool", "tool_call_id": format!("c{i}"), "content": "x".repeat(400) }));
        rows.push(json!({ "role": "assistant", "content": format!("Order {i} shipped.") }));
    }
    let text = serde_json::to_string(&json!({ "messages": rows })).unwrap();
    let mut live = LiveTranscript::open_text(cfg, Format::OpenaiChat, text).expect("open");
    assert!(live.transcript().messages.iter().all(|m| m.raw.is_shared()), "opened rows borrow the text");
    let mut summarize = |r: &SummarizeRequest| fake_summary(r);
    let out = live.compact(SessionState::default(), Signals::default(), Some(&mut summarize)).expect("compact");
    assert_eq!(out.status, "compacted");
    let kept = &live.transcript().messages;
    assert!(kept.len() < rows.len());
    assert!(kept.iter().all(|m| !m.raw.is_shared()), "kept rows have their own text, so the opened text is freed");
}
