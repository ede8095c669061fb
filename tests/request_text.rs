//! `toRequest` as a key filter over the rows (issue 15, F-4): `formats::request_text`
//! writes exactly what decoding the document and writing its request view writes, or
//! declines (`None`) and leaves the document to that full way; its pairing errors are
//! the full way's (F-2).

use context_compactor::formats::{self, Format};
use context_compactor::output::RequestJson;
use serde_json::{json, Value};

/// The full way: decode, check pairing, write the request view (no findings).
fn full(text: &str) -> Result<String, (String, String)> {
    let t = formats::decode_text(Format::OpenaiChat, text).map_err(|e| (e.code.as_str().to_string(), e.message))?;
    formats::validate_pairing(&t).map_err(|e| (e.code.as_str().to_string(), e.message))?;
    Ok(serde_json::to_string(&RequestJson { t: &t, findings: &[] }).unwrap())
}

fn fast(text: &str) -> Option<Result<String, (String, String)>> {
    formats::request_text(Format::OpenaiChat, text).map(|r| r.map_err(|e| (e.code.as_str().to_string(), e.message)))
}

#[test]
fn f4_request_text_is_the_request_view_of_the_decoded_rows() {
    let rows = json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "look \u{e9} <x>"}, {"type": "image_url", "image_url": {"url": "data:x"}}], "extra": {"k": 1}},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}, {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "two"}]},
        {"role": "function", "name": "legacy", "content": "x"},
        {"role": "assistant", "content": "done", "reasoning_content": "because"}
    ]);
    let cases: Vec<Value> = vec![
        rows.clone(),
        json!({"system": "s", "messages": rows.clone(), "tools": [{"type": "function"}], "n": 3}),
        json!({"messages": [], "model": "m"}),
        json!([]),
    ];
    for doc in cases {
        let text = serde_json::to_string(&doc).unwrap();
        let got = fast(&text).expect("taken by the key filter");
        assert_eq!(got, full(&text), "{text}");
    }
}

#[test]
fn f4_request_text_declines_what_the_full_way_must_rewrite() {
    let declined = [
        // a provenance key is dropped from the request view: the full way writes it
        r#"[{"role":"user","content":"hi","message_id":"u1"}]"#,
        r#"[{"role":"user","content":"hi","pinned":false}]"#,
        // spelled in a form the decode normalises
        r#"[{"role": "user","content":"hi"}]"#,
        r#"[{"role":"user","content":"\u00e9"}]"#,
        r#"[{"role":"user","content":"hi","t":1.0}]"#,
        // legacy function_call, an unknown role, a tool row with no id, a bad type
        r#"[{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}]"#,
        r#"[{"role":"robot","content":"hi"}]"#,
        r#"[{"role":"tool","content":"x"}]"#,
        r#"[{"role":"assistant","tool_calls":[{"function":{}}]}]"#,
        // not a document of this shape
        r#"{"input":[]}"#,
        r#"{"messages":[],"messages":[]}"#,
        "not json",
    ];
    for text in declined {
        assert!(fast(text).is_none(), "{text}");
    }
}

#[test]
fn f2_request_text_reports_the_pairing_errors_of_the_full_way() {
    let bad = [
        r#"[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c9","content":"x"}]"#,
        r#"[{"role":"assistant","tool_calls":[{"id":"c1"}]},{"role":"user","content":"next"}]"#,
        r#"[{"role":"assistant","tool_calls":[{"id":"c1"},{"id":"c1"}]},{"role":"tool","tool_call_id":"c1","content":"x"}]"#,
        r#"[{"role":"assistant","tool_calls":[{"id":""}]}]"#,
    ];
    for text in bad {
        let got = fast(text).expect("taken by the key filter");
        assert!(got.is_err(), "{text}");
        assert_eq!(got, full(text), "{text}");
    }
}
