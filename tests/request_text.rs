//! `toRequest` as a key filter over the rows (issue 15, F-4): `formats::request_text`
//! writes exactly what decoding the document and writing its request view writes, or
//! declines (`None`) and leaves the document to that full way; its pairing errors are
//! the full way's (F-2).

mod common;
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

/// Issue 15 item 2: `formats::request_is_input` says "the request view is the input
/// text" only where the key filter and the full way write exactly that text, and reports
/// the full way's pairing error where the rows break pairing; otherwise it declines. Over
/// `text`: `Some(true)` taken as the input, `Some(false)` a pairing error, `None` declined.
fn scan_agrees(text: &str) -> Option<bool> {
    let err = |e: context_compactor::error::Error| (e.code.as_str().to_string(), e.message);
    match formats::request_is_input(Format::OpenaiChat, text)? {
        Ok(()) => {
            assert_eq!(fast(text), Some(Ok(text.to_string())), "key filter: {text}");
            assert_eq!(full(text), Ok(text.to_string()), "full way: {text}");
            Some(true)
        }
        Err(e) => {
            let e = err(e);
            assert_eq!(fast(text), Some(Err(e.clone())), "key filter: {text}");
            assert_eq!(full(text), Err(e), "full way: {text}");
            Some(false)
        }
    }
}

#[test]
fn issue15_f4_scan_takes_only_what_is_its_own_request_view() {
    let deep = |n: usize| format!(r#"{{"role":"user","content":"x","d":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
    let taken = [
        r#"{"role":"user","content":"hi"}"#.to_string(),
        r#"{"role":"system","content":"s \" \\ \n \t \b \f \r \u001f \u0000 é ☃ 😀"}"#.into(),
        r#"{"role":"developer","content":[{"type":"text","text":"t"}],"x":{"k":[1,-2,0,true,false,null,123456789012345678]}}"#.into(),
        r#"{"role":"user","content":"a","extra":1,"extra":2}"#.into(),
        r#"{"role":"user","content":"a","a\nb":1,"r\"ole":"robot"}"#.into(),
        r#"{"role":"assistant","content":null}"#.into(),
        r#"{"role":"assistant"}"#.into(),
        r#"{"role":"assistant","content":"c","tool_calls":null,"name":null,"reasoning_content":null,"tool_call_id":null}"#.into(),
        r#"{"role":"assistant","content":"","reasoning_content":[1],"name":"n"}"#.into(),
        deep(62),
    ];
    let declined = [
        // provenance keys and the legacy call are the full way's
        r#"{"role":"user","content":"hi","message_id":"u1"}"#.to_string(),
        r#"{"role":"user","content":"hi","pinned":false}"#.into(),
        r#"{"role":"user","content":"hi","summary_level":1}"#.into(),
        r#"{"role":"user","content":"hi","artifact_ref":"a"}"#.into(),
        r#"{"role":"user","content":"hi","transcript_role":"r"}"#.into(),
        r#"{"role":"user","content":"hi","observation_source":"o"}"#.into(),
        r#"{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}"#.into(),
        // spellings the decode normalises
        r#"{"role": "user","content":"hi"}"#.into(),
        r#"{"role":"user","content":"\u00e9"}"#.into(),
        r#"{"role":"user","content":"\/"}"#.into(),
        r#"{"role":"user","content":"\u0008"}"#.into(),
        r#"{"role":"user","content":"\u001F"}"#.into(),
        r#"{"role":"user","content":"hi","t":1.0}"#.into(),
        r#"{"role":"user","content":"hi","t":1e3}"#.into(),
        r#"{"role":"user","content":"hi","t":-0}"#.into(),
        r#"{"role":"user","content":"hi","t":01}"#.into(),
        r#"{"role":"user","content":"hi","t":1234567890123456789}"#.into(),
        deep(64),
        // what the typed pairing parse refuses or reads unescaped
        r#"{"role":"robot","content":"hi"}"#.into(),
        r#"{"role":null,"content":"hi"}"#.into(),
        r#"{"content":"hi"}"#.into(),
        r#"{"role":"user"}"#.into(),
        r#"{"role":"user","content":null}"#.into(),
        r#"{"role":"tool","tool_call_id":"c1"}"#.into(),
        r#"{"role":"user","content":{"text":"x"}}"#.into(),
        r#"{"role":"user","content":7}"#.into(),
        r#"{"role":"user","content":"a","content":"b"}"#.into(),
        r#"{"role":"user","role":"user","content":"b"}"#.into(),
        r#"{"role":"assistant","content":"a","reasoning_content":{}}"#.into(),
        r#"{"role":"assistant","content":"a","name":3}"#.into(),
        r#"{"role":"tool","content":"x"}"#.into(),
        r#"{"role":"tool","content":"x","tool_call_id":5}"#.into(),
        r#"{"role":"tool","content":"x","tool_call_id":"c\"1"}"#.into(),
        r#"{"role":"us\u0065r","content":"x"}"#.into(),
        r#"{"role":"assistant","tool_calls":[{"function":{}}]}"#.into(),
        r#"{"role":"assistant","tool_calls":[["c1"]]}"#.into(),
        r#"{"role":"assistant","tool_calls":[{"id":null}]}"#.into(),
        r#"{"role":"assistant","tool_calls":[{"id":"c1","id":"c2"}]}"#.into(),
        r#"{"role":"assistant","tool_calls":{"id":"c1"}}"#.into(),
        "[1]".into(),
        "\"row\"".into(),
    ];
    for row in &taken {
        assert_eq!(scan_agrees(&format!("[{row}]")), Some(true), "{row}");
    }
    for row in &declined {
        assert_eq!(scan_agrees(&format!("[{row}]")), None, "{row}");
        assert_eq!(scan_agrees(&format!("[{},{row}]", taken[0])), None, "{row}");
    }
    let pairs = [
        // a call answered; then pairing errors (a legacy function result answers
        // `function:NAME`, which no call here made)
        (r#"[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"one"}]"#, Some(true)),
        (r#"[{"role":"user","content":"q"},{"role":"function","name":"legacy","content":"x"}]"#, Some(false)),
        (r#"[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c9","content":"x"}]"#, Some(false)),
        (r#"[{"role":"assistant","tool_calls":[{"id":"c1"}]},{"role":"user","content":"next"}]"#, Some(false)),
        (r#"[{"role":"assistant","tool_calls":[{"id":"c1"},{"id":"c1"}]},{"role":"tool","tool_call_id":"c1","content":"x"}]"#, Some(false)),
        (r#"[{"role":"assistant","tool_calls":[{"id":""}]}]"#, Some(false)),
        ("[]", Some(true)),
        // an envelope ending with its messages: the other members written back as values
        (r#"{"messages":[{"role":"user","content":"hi"}]}"#, Some(true)),
        (r#"{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"n":3,"x":null,"messages":[]}"#, Some(true)),
        (r#"{"t":1.5,"messages":[]}"#, None),
        (r#"{"system":"s","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c9","content":"x"}]}"#, Some(false)),
        (r#"{"messages":[],"model":"m"}"#, None),
        (r#"{"model":"m","model":"n","messages":[]}"#, None),
        (r#"{"x":{"k":1,"k":2},"messages":[]}"#, None),
        (r#"{"t":1E3,"messages":[]}"#, None),
        (r#"{"t":1e3,"messages":[]}"#, None),
        (r#"{"messages":[],"messages":[]}"#, None),
        (r#"{"model":"m"}"#, None),
        ("{}", None),
        (r#"{"messages":{}}"#, None),
        // not the input's own text: whitespace, trailing bytes, not JSON
        (" []", None),
        ("[] ", None),
        (r#"[{"role":"user","content":"hi"} ]"#, None),
        (r#"{ "messages":[]}"#, None),
        (r#"[{"role":"user","content":"hi"}]x"#, None),
        (r#"[{"role":"user","content":"hi"},]"#, None),
        (r#"[{"role":"user","content":"hi"}"#, None),
        (r#"[{"role":"user","content":"h"#, None),
        ("not json", None),
    ];
    for (text, want) in pairs {
        assert_eq!(scan_agrees(text), want, "{text}");
    }
}

/// Issue 15 item 2: on every shared transcript (as OpenAI Chat JSON text), the scan takes
/// the text or agrees with the key filter and the full way.
#[test]
fn issue15_f4_scan_agrees_with_the_full_way_on_the_shared_transcripts() {
    use context_compactor::formats::import::{import, sniff};
    let Some((_, files)) = common::shared_transcript_files() else { return };
    let mut taken = 0;
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Some(kind) = sniff(&text) else { continue };
        let Ok((format, doc)) = import(kind, &text) else { continue };
        if format != Format::OpenaiChat {
            continue;
        }
        let rows = doc.get("messages").cloned().unwrap_or(doc);
        for doc in [rows.clone(), serde_json::json!({"model": "m", "messages": rows})] {
            taken += usize::from(scan_agrees(&serde_json::to_string(&doc).unwrap()) == Some(true));
        }
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        assert!(taken > 0, "some shared transcript is taken by the scan");
    }
    eprintln!("taken: {taken} of {}", files.len());
}
