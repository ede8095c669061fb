//! The text decode path (issue "Performance") is the `Value` decode path, faster: for
//! any document, `decode_text` of its JSON text (compact, pretty printed, or spelled
//! with escapes serde_json would not write) gives the same transcript (views, ids,
//! sizes, provenance) as `decode` of the parsed value, and writes back the same bytes
//! (T-1, T-4, F-3).

mod common;
use context_compactor::formats::{self, Format, View};
use context_compactor::output::encoded_len;
use proptest::prelude::*;
use serde_json::{json, Value};

const FORMATS: [Format; 6] = [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];

/// Escapes every non-ASCII character and `/` as `\uXXXX` / `\/`, the way Python's
/// `json.dumps` (ensure_ascii) and some loggers spell JSON.
fn ascii_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '/' => out.push_str("\\/"),
            c if (c as u32) < 0x80 => out.push(c),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04X}"));
                }
            }
        }
    }
    out
}

fn assert_same_decode(format: Format, doc: &Value) {
    let want = formats::decode(format, doc.clone()).expect("the Value path decodes");
    let compact = serde_json::to_string(doc).unwrap();
    let pretty = serde_json::to_string_pretty(doc).unwrap();
    for (spelling, text) in [("compact", compact.clone()), ("pretty", pretty), ("ascii-escaped", ascii_escaped(&compact))] {
        let got = formats::decode_text(format, &text).unwrap_or_else(|e| panic!("{} {spelling}: {e:?}", format.name()));
        assert_eq!(got, want, "{} {spelling}: same transcript", format.name());
        assert_eq!(formats::encode(&got, View::Stored), *doc, "{} {spelling}: round trip (F-3)", format.name());
        assert_eq!(encoded_len(&got, View::Request), serde_json::to_string(&formats::encode(&got, View::Request)).unwrap().len());
    }
}

#[test]
fn f3_t4_text_decode_equals_value_decode_on_every_format_fixture() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    for f in FORMATS {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{}.json", f.name()))).unwrap()).unwrap();
        assert_same_decode(f, &doc);
    }
}

#[test]
fn t2_provenance_keys_in_the_text_are_lifted_out_of_raw() {
    let doc = json!([
        {"role": "user", "content": "hi", "message_id": "u1", "pinned": true},
        {"role": "user", "content": "[summary]", "summary_level": 1, "transcript_role": "compaction_summary"},
        {"role": "assistant", "content": "ok", "observation_source": "spoken_unmeasured"},
    ]);
    assert_same_decode(Format::OpenaiChat, &doc);
    let t = formats::decode_text(Format::OpenaiChat, &doc.to_string()).unwrap();
    assert_eq!(t.messages[0].raw.get(), r#"{"role":"user","content":"hi"}"#);
    assert_eq!(t.messages[0].provenance.message_id.as_deref(), Some("u1"));
    assert!(t.messages[1].is_summary());
}

#[test]
fn f5_bad_documents_get_the_same_typed_errors_from_text() {
    for (format, text) in [
        (Format::OpenaiChat, r#"{"messages": {}}"#),
        (Format::OpenaiChat, r#"{"model": "x"}"#),
        (Format::OpenaiChat, r#"[{"role": "wizard", "content": "x"}]"#),
        (Format::OpenaiChat, r#"[{"role": "tool", "content": "x"}]"#),
        (Format::OpenaiChat, r#"[{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]}]"#),
        (Format::OpenaiChat, r#"[1]"#),
        (Format::Anthropic, r#"[{"role": "user", "content": 5"#),
        (Format::Gemini, r#"{"contents": [{"role": "user", "parts": "x"}]}"#),
    ] {
        let from_text = formats::decode_text(format, text).map(|_| ()).map_err(|e| (e.code, e.message.clone()));
        let from_value = serde_json::from_str::<Value>(text)
            .map_err(|_| ())
            .map(|v| formats::decode(format, v).map(|_| ()).map_err(|e| (e.code, e.message.clone())));
        match from_value {
            Ok(v) => assert_eq!(from_text, v, "{text}"),
            Err(()) => assert!(from_text.is_err(), "{text}: not JSON"),
        }
        assert!(from_text.is_err(), "{text} is rejected");
    }
}

/// Text and `Value` decode agree on `doc`: the same transcript, or the same error.
fn check_doc(format: Format, doc: &Value) -> Result<(), TestCaseError> {
    let got = formats::decode_text(format, &serde_json::to_string(doc).unwrap());
    match formats::decode(format, doc.clone()) {
        Ok(want) => {
            prop_assert_eq!(got.as_ref().ok(), Some(&want));
            assert_same_decode(format, doc);
        }
        Err(e) => prop_assert_eq!(got.err().map(|g| (g.code, g.message)), Some((e.code, e.message))),
    }
    Ok(())
}

/// One OpenAI chat row in any of the shapes the typed text parse takes or hands back
/// to the `Value` path.
fn chat_row() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        Just("plain".to_string()),
        Just("line\nbreak \"quoted\" \\ back \t tab \u{1} ctl".to_string()),
        Just("ünïcødé 😀 检查 \u{2028}".to_string()),
        Just(String::new()),
    ];
    let content = prop_oneof![
        text.clone().prop_map(Value::String),
        Just(Value::Null),
        text.clone().prop_map(|t| json!([{"type": "text", "text": t}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}])),
        Just(json!(42)),
    ];
    let args = prop_oneof![
        Just(json!("{\"path\":\"a/b.rs\"}")),
        Just(json!({"path": "a", "n": 1.5, "big": 12345678901234567890u64})),
        Just(Value::Null),
    ];
    (0usize..6, content, args, text, any::<bool>(), any::<bool>()).prop_map(|(kind, content, args, t, with_extra, with_prov)| {
        let mut row = match kind {
            0 => json!({"role": "user", "content": content}),
            1 => json!({"role": "assistant", "content": content, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": args}}]}),
            2 => json!({"role": "tool", "tool_call_id": "c1", "content": content, "name": t}),
            3 => json!({"role": "assistant", "content": content, "reasoning_content": t}),
            4 => json!({"role": "function", "name": "legacy", "content": content}),
            _ => json!({"role": "developer", "content": content}),
        };
        if with_extra {
            row["refusal"] = Value::Null;
            row["annotations"] = json!([{"type": "url_citation", "score": 0.25}]);
        }
        if with_prov {
            row["message_id"] = json!("m-1");
        }
        row
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]
    #[test]
    fn t4_property_openai_chat_text_decode_equals_value_decode(rows in proptest::collection::vec(chat_row(), 1..6), envelope in any::<bool>()) {
        let doc = if envelope { json!({"model": "m", "messages": rows, "temperature": 0.5}) } else { Value::Array(rows) };
        check_doc(Format::OpenaiChat, &doc)?;
    }
}

/// One Anthropic message in any of the shapes the typed text parse takes or hands back
/// to the `Value` path.
fn anthropic_row() -> impl Strategy<Value = Value> {
    let text = prop_oneof![Just("plain".to_string()), Just("a\n\"b\" \\ ü 😀".to_string()), Just(String::new())];
    let block = prop_oneof![
        text.clone().prop_map(|t| json!({"type": "text", "text": t})),
        Just(json!({"type": "text", "text": null})),
        Just(json!({"type": "tool_use", "id": "tu1", "name": "read", "input": {"path": "a", "n": 2}})),
        Just(json!({"type": "tool_use", "id": "tu2", "name": "read", "input": null})),
        Just(json!({"type": "tool_use", "id": "tu3", "input": {"f": 0.5}})),
        text.clone().prop_map(|t| json!({"type": "tool_result", "tool_use_id": "tu1", "content": t, "is_error": true})),
        Just(json!({"type": "tool_result", "tool_use_id": "tu1"})),
        Just(json!({"type": "tool_result", "tool_use_id": "tu1", "content": [{"type": "text", "text": "x"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]})),
        Just(json!({"type": "thinking", "thinking": "hmm", "signature": "sig"})),
        Just(json!({"type": "redacted_thinking", "data": "xyz"})),
        Just(json!({"type": "image", "source": {"type": "url", "url": "https://x/y.png"}})),
        Just(json!({"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {"q": "x"}})),
        Just(json!({"type": "web_search_tool_result", "tool_use_id": "srv1", "content": [{"type": "web_search_result", "url": "u"}]})),
        Just(json!({"text": "no type"})),
    ];
    (any::<bool>(), prop_oneof![text.prop_map(Value::String), proptest::collection::vec(block, 0..4).prop_map(Value::Array)], any::<bool>())
        .prop_map(|(user, content, with_prov)| {
            let mut row = json!({"role": if user { "user" } else { "assistant" }, "content": content});
            if with_prov {
                row["pinned"] = json!(true);
            }
            row
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]
    #[test]
    fn t4_property_anthropic_text_decode_equals_value_decode(rows in proptest::collection::vec(anthropic_row(), 1..5)) {
        let doc = json!({"system": "s", "messages": rows});
        check_doc(Format::Anthropic, &doc)?;
    }
}

#[test]
fn f1_detect_text_agrees_with_detect_on_every_fixture_and_shape() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/formats");
    let mut docs: Vec<Value> = FORMATS
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{}.json", f.name()))).unwrap()).unwrap())
        .collect();
    docs.extend([
        json!([{"role": "user", "content": "plain"}]),
        json!({"system": "s", "messages": [{"role": "user", "content": "x"}]}),
        json!({"system": "s", "messages": [{"role": "system", "content": "x"}]}),
        json!({"messages": {}}),
        json!({"input": "text"}),
        json!({"contents": []}),
        json!({"messages": [], "messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]}),
        json!(42),
        json!([{"role": "user", "parts": [{"text": "x"}]}, {"role": "assistant", "tool_calls": []}]),
    ]);
    for (k, doc) in docs.iter().enumerate() {
        let want = formats::detect(doc).map_err(|e| (e.code, e.message));
        for text in [serde_json::to_string(doc).unwrap(), serde_json::to_string_pretty(doc).unwrap()] {
            assert_eq!(formats::detect_text(&text).map_err(|e| (e.code, e.message)), want, "doc {k}");
        }
        if k < FORMATS.len() {
            assert_eq!(want, Ok(FORMATS[k]));
        }
    }
    assert_eq!(formats::detect_text("[1,").map_err(|e| e.code), Err(context_compactor::ErrorCode::InvalidTranscript));
}

/// Nesting: a row deeper than the fast path takes goes the `Value` way, which either keeps
/// it whole or rejects it with a typed error, the same for every spelling; a held row
/// always parses back (no row ever turns into `null` in a request).
#[test]
fn f5_deeply_nested_rows_are_kept_whole_or_rejected_alike_in_every_spelling() {
    let nest = |d: usize| (0..d).fold(json!(1), |v, _| json!([v]));
    for depth in [10, 63, 64, 65, 100, 125, 126, 127, 130, 200] {
        for format in [Format::OpenaiChat, Format::Anthropic] {
            let row = match format {
                Format::OpenaiChat => json!({"role": "assistant", "content": "a", "meta": nest(depth)}),
                _ => json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"d": nest(depth)}}]}),
            };
            let doc = json!([{"role": "user", "content": "q"}, row]);
            let compact = serde_json::to_string(&doc).unwrap();
            let pretty = serde_json::to_string_pretty(&doc).unwrap();
            let a = formats::decode_text(format, &compact).map_err(|e| e.code);
            let b = formats::decode_text(format, &pretty).map_err(|e| e.code);
            assert_eq!(a, b, "{} depth {depth}: compact and pretty agree", format.name());
            if let Ok(t) = a {
                for m in &t.messages {
                    assert_ne!(m.raw.value(), Value::Null, "depth {depth}: the held row parses back");
                }
                assert_eq!(formats::encode(&t, View::Request), doc, "depth {depth}: request view keeps the row");
            } else {
                assert!(depth > 120, "{} depth {depth} rejected", format.name());
            }
        }
    }
}

/// T-1, F-3: floats in fields the engine does not read come back as the same double
/// (serde_json's exact float parsing), whichever path the row takes.
#[test]
fn t1_floats_in_unknown_fields_keep_their_exact_value() {
    let floats = [0.20752913900651038, 1.0000000000000002, 5e-324, 1.7976931348623157e308, 0.1, 123456.789e-3, -2.5e-10];
    for (k, f) in floats.iter().enumerate() {
        let doc = json!({"model": "m", "temperature": f, "messages": [{"role": "user", "content": "q", "v": f, "w": [f, {"x": f}]}]});
        for text in [serde_json::to_string(&doc).unwrap(), serde_json::to_string_pretty(&doc).unwrap()] {
            let t = formats::decode_text(Format::OpenaiChat, &text).unwrap();
            let back = formats::encode(&t, View::Stored);
            assert_eq!(back["messages"][0]["v"].as_f64(), Some(*f), "float {k}");
            assert_eq!(back["messages"][0]["w"][1]["x"].as_f64(), Some(*f), "float {k} nested");
            assert_eq!(back["temperature"].as_f64(), Some(*f), "float {k} in the envelope");
        }
    }
}

/// T-4: a row written with Python-style floats (`1.0`, `-0.0`, `2.50`, `1E21`) gets the
/// id of the same row as JavaScript writes it, so a transcript stored by a JS host through
/// `JSON.stringify` and decoded again keeps its ids.
#[test]
fn t4_ids_survive_a_javascript_round_trip_of_float_spellings() {
    let python = r#"[{"role":"user","content":"q","v":1.0,"w":[-0.0,2.50,1E21,1e-7,0.000001]},{"role":"assistant","content":"a"}]"#;
    let javascript = r#"[{"role":"user","content":"q","v":1,"w":[0,2.5,1e+21,1e-7,0.000001]},{"role":"assistant","content":"a"}]"#;
    let a = formats::decode_text(Format::OpenaiChat, python).unwrap();
    let b = formats::decode_text(Format::OpenaiChat, javascript).unwrap();
    let ids = |t: &context_compactor::Transcript| t.messages.iter().map(|m| m.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(a.messages[0].raw.get(), r#"{"role":"user","content":"q","v":1,"w":[0,2.5,1e+21,1e-7,0.000001]}"#);
    assert_eq!(a.messages[0].bytes, b.messages[0].bytes);
}
