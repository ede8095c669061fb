//! Gemini, OpenAI Responses and AI SDK adapters: round trip (F-3), canonical view
//! (F-1), pairing rules (F-2, F-5), provenance views (F-4), opaque reasoning (T-3).

use context_compactor::formats::{self, View};
use context_compactor::transcript::{Block, ExchangeIndex, MediaKind, ToolExchange};
use context_compactor::{ErrorCode, Format, Role, Transcript};
use serde_json::{json, Value};

// ---------------------------------------------------------------- helpers

fn decode(format: Format, doc: &Value) -> Transcript {
    match formats::decode(format, doc.clone()) {
        Ok(t) => t,
        Err(e) => panic!("decode failed: {e}"),
    }
}

/// F-3: decode then encode (stored view) gives the input back, deep equal; every
/// message keeps its exact key order, and the other envelope fields keep theirs (the
/// message list itself is written last).
fn assert_round_trip(format: Format, doc: &Value) -> Transcript {
    let t = decode(format, doc);
    let back = formats::encode(&t, View::Stored);
    assert_eq!(&back, doc, "round trip changed the document");
    let (msgs_in, msgs_out) = match (doc, &back) {
        (Value::Object(a), Value::Object(b)) => {
            let key = t.envelope.messages_key.clone().unwrap();
            let others = |m: &serde_json::Map<String, Value>| m.keys().filter(|k| **k != key).cloned().collect::<Vec<_>>();
            assert_eq!(others(a), others(b), "envelope field order changed");
            (a[&key].clone(), b[&key].clone())
        }
        _ => (doc.clone(), back.clone()),
    };
    for (x, y) in msgs_in.as_array().unwrap().iter().zip(msgs_out.as_array().unwrap()) {
        assert_eq!(serde_json::to_string(x).unwrap(), serde_json::to_string(y).unwrap(), "message key order changed");
    }
    t
}

fn pairing_code(format: Format, doc: &Value) -> Option<ErrorCode> {
    formats::validate_pairing(&decode(format, doc)).err().map(|e| e.code)
}

fn calls(t: &Transcript, i: usize) -> Vec<(String, String)> {
    t.messages[i]
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolCall { id, name, .. } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

fn results(t: &Transcript, i: usize) -> Vec<String> {
    t.messages[i].result_ids().map(str::to_string).collect()
}

fn result_text(t: &Transcript, i: usize, nth: usize) -> String {
    t.messages[i]
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { text, .. } => Some(text.clone()),
            _ => None,
        })
        .nth(nth)
        .unwrap_or_default()
}

fn roles(t: &Transcript) -> Vec<Role> {
    t.messages.iter().map(|m| m.role).collect()
}

/// F-4: provenance keys of stored messages decode into provenance, round-trip in the
/// stored view and are absent from the request view.
fn assert_provenance_views(format: Format, doc: &Value, msgs_key: &str) {
    let t = assert_round_trip(format, doc);
    let tagged: Vec<usize> = doc[msgs_key]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m.get("summary_level").is_some() || m.get("artifact_ref").is_some())
        .map(|(i, _)| i)
        .collect();
    assert!(!tagged.is_empty(), "fixture must carry provenance");
    for &i in &tagged {
        let m = &t.messages[i];
        assert!(m.provenance.summary_level.is_some() || m.provenance.artifact_ref.is_some());
        for key in ["summary_level", "artifact_ref", "transcript_role", "message_id"] {
            assert!(m.raw.value().get(key).is_none(), "provenance key {key} leaked into raw");
        }
    }
    let req = formats::encode(&t, View::Request);
    for (i, m) in req[msgs_key].as_array().unwrap().iter().enumerate() {
        for key in context_compactor::transcript::PROVENANCE_KEYS {
            assert!(m.get(key).is_none(), "request view message {i} carries {key}");
        }
    }
    // the request view is the stored view minus the provenance keys
    let mut stripped = doc.clone();
    for m in stripped[msgs_key].as_array_mut().unwrap() {
        for key in context_compactor::transcript::PROVENANCE_KEYS {
            m.as_object_mut().unwrap().remove(key);
        }
    }
    assert_eq!(req, stripped);
}

fn big(tag: &str) -> String {
    std::iter::repeat(tag).take(200).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------- format names

#[test]
fn f1_new_format_names_parse_and_print() {
    for (name, f) in [("gemini", Format::Gemini), ("openai-responses", Format::OpenaiResponses), ("ai-sdk", Format::AiSdk)] {
        assert_eq!(Format::parse(name).unwrap(), f);
        assert_eq!(f.name(), name);
        assert_eq!(serde_json::to_value(f).unwrap(), json!(name));
        assert_eq!(serde_json::from_value::<Format>(json!(name)).unwrap(), f);
    }
    assert_eq!(Format::parse("gemeni").unwrap_err().code, ErrorCode::UnknownFormat);
}

// ---------------------------------------------------------------- Gemini

fn gemini_text_media() -> Value {
    json!({
        "systemInstruction": { "parts": [{ "text": "Be brief." }] },
        "contents": [
            { "role": "user", "parts": [
                { "text": "What is in these?" },
                { "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } },
                { "fileData": { "mimeType": "application/pdf", "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc" } }
            ]},
            { "role": "model", "parts": [{ "text": "A cat and a report." }] },
            { "parts": [{ "text": "thanks" }] }
        ],
        "generationConfig": { "temperature": 0.2 },
        "tools": [{ "functionDeclarations": [{ "name": "ls" }] }]
    })
}

fn gemini_parallel_no_ids() -> Value {
    json!({ "contents": [
        { "role": "user", "parts": [{ "text": "List and read." }] },
        { "role": "model", "parts": [
            { "text": "Planning the listing.", "thought": true, "thoughtSignature": "c2lnLTE=" },
            { "functionCall": { "name": "ls", "args": { "dir": "." } }, "thoughtSignature": "c2lnLTI=" },
            { "functionCall": { "name": "cat", "args": { "file": "README" } } },
            { "functionCall": { "name": "ls", "args": { "dir": "src" } } }
        ]},
        { "role": "user", "parts": [
            { "functionResponse": { "name": "ls", "response": { "output": "a b" } } },
            { "functionResponse": { "name": "cat", "response": { "output": "# readme" } } },
            { "functionResponse": { "name": "ls", "response": { "output": "lib.rs" } } }
        ]},
        { "role": "model", "parts": [{ "text": "Done." }] }
    ]})
}

#[test]
fn f3_gemini_round_trip_text_media_envelope() {
    let doc = gemini_text_media();
    let t = assert_round_trip(Format::Gemini, &doc);
    assert_eq!(t.envelope.messages_key.as_deref(), Some("contents"));
    assert!(t.envelope.fields.contains_key("systemInstruction"));
    assert_eq!(roles(&t), vec![Role::User, Role::Assistant, Role::User]);
    assert_eq!(
        t.messages[0].blocks[1],
        Block::Media { kind: MediaKind::Image, bytes: "iVBORw0KGgo=".len(), inline: true, name: None }
    );
    assert!(matches!(t.messages[0].blocks[2], Block::Media { kind: MediaKind::Document, inline: false, .. }));
    assert_eq!(t.messages[1].text(), "A cat and a report.");
    assert!(formats::validate_pairing(&t).is_ok());
    // bare array form
    let bare = doc["contents"].clone();
    let t = assert_round_trip(Format::Gemini, &bare);
    assert_eq!(t.envelope.messages_key, None);
}

#[test]
fn f1_gemini_calls_without_ids_pair_by_name_and_position() {
    let doc = gemini_parallel_no_ids();
    let t = assert_round_trip(Format::Gemini, &doc);
    let c = calls(&t, 1);
    assert_eq!(c.len(), 3);
    assert_eq!(c[0].1, "ls");
    assert_eq!(c[1].1, "cat");
    assert_ne!(c[0].0, c[2].0, "two ls calls need distinct view ids");
    let r = results(&t, 2);
    assert_eq!(r, vec![c[0].0.clone(), c[1].0.clone(), c[2].0.clone()]);
    assert_eq!(result_text(&t, 2, 0), "a b");
    assert_eq!(result_text(&t, 2, 2), "lib.rs");
    assert!(formats::validate_pairing(&t).is_ok());
    // raw untouched: no ids written
    assert!(t.messages[1].raw.value()["parts"][1]["functionCall"].get("id").is_none());
    // exchange spans the call turn and the answer turn
    let idx = ExchangeIndex::build(&t.messages);
    assert_eq!(idx.get(1), Some(ToolExchange { start: 1, end: 2 }));
    assert!(idx.splits(2));
}

#[test]
fn t3_gemini_thoughts_and_signatures_are_reasoning() {
    let t = decode(Format::Gemini, &gemini_parallel_no_ids());
    let b = &t.messages[1].blocks;
    assert!(matches!(&b[0], Block::Reasoning { text, signed: true, .. } if text == "Planning the listing."));
    // the signature riding on the functionCall part comes as reasoning before the call
    assert!(matches!(&b[1], Block::Reasoning { signed: true, .. }));
    assert!(matches!(&b[2], Block::ToolCall { name, .. } if name == "ls"));
    assert_eq!(t.messages[1].text(), "", "thought text is not message text");
}

#[test]
fn f1_gemini_ids_match_by_id_when_present_and_mixed() {
    // ids present, responses in another order
    let doc = json!([
        { "role": "model", "parts": [
            { "functionCall": { "id": "c1", "name": "ls", "args": {} } },
            { "functionCall": { "id": "c2", "name": "ls", "args": { "dir": "x" } } }
        ]},
        { "role": "user", "parts": [
            { "functionResponse": { "id": "c2", "name": "ls", "response": { "output": "x" } } },
            { "functionResponse": { "id": "c1", "name": "ls", "response": { "output": "." } } }
        ]}
    ]);
    let t = assert_round_trip(Format::Gemini, &doc);
    assert_eq!(results(&t, 1), vec!["c2", "c1"]);
    assert!(formats::validate_pairing(&t).is_ok());
    // calls carry ids, responses do not: linked by name in order
    let doc = json!([
        { "role": "model", "parts": [
            { "functionCall": { "id": "c1", "name": "ls", "args": {} } },
            { "functionCall": { "id": "c2", "name": "cat", "args": {} } }
        ]},
        { "role": "user", "parts": [
            { "functionResponse": { "name": "cat", "response": { "output": "text" } } },
            { "functionResponse": { "name": "ls", "response": { "output": "." } } }
        ]},
        { "role": "model", "parts": [{ "text": "ok" }] }
    ]);
    let t = assert_round_trip(Format::Gemini, &doc);
    assert_eq!(results(&t, 1), vec!["c2", "c1"]);
    assert!(formats::validate_pairing(&t).is_ok());
}

#[test]
fn f5_gemini_wrong_response_count_is_rejected() {
    // 2 calls, 1 response, more history after it
    let mut doc = gemini_parallel_no_ids();
    doc["contents"][2]["parts"].as_array_mut().unwrap().remove(1);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnansweredToolCall));
    // 2 calls, 1 response, the answer turn is the last one: still wrong for Gemini
    let doc = json!([
        { "role": "model", "parts": [
            { "functionCall": { "name": "ls", "args": {} } },
            { "functionCall": { "name": "cat", "args": {} } }
        ]},
        { "role": "user", "parts": [{ "functionResponse": { "name": "ls", "response": { "output": "." } } }] }
    ]);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnansweredToolCall));
    // a call turn followed by a model turn
    let doc = json!([
        { "role": "model", "parts": [{ "functionCall": { "name": "ls", "args": {} } }] },
        { "role": "model", "parts": [{ "text": "hm" }] }
    ]);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnansweredToolCall));
    // the newest model turn may still await its responses
    let doc = json!([
        { "role": "user", "parts": [{ "text": "go" }] },
        { "role": "model", "parts": [{ "functionCall": { "name": "ls", "args": {} } }] }
    ]);
    assert_eq!(pairing_code(Format::Gemini, &doc), None);
}

#[test]
fn f5_gemini_orphan_and_extra_responses_are_rejected() {
    // response turn after a model text turn (the split in the regression case)
    let doc = json!([
        { "role": "model", "parts": [{ "text": "Listed." }] },
        { "role": "user", "parts": [{ "functionResponse": { "name": "ls", "response": { "output": "." } } }] }
    ]);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnpairedToolResult));
    // history starting with the response turn
    let doc = json!([{ "role": "user", "parts": [{ "functionResponse": { "name": "ls", "response": {} } }] }]);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnpairedToolResult));
    // a response naming a function that was not called
    let doc = json!([
        { "role": "model", "parts": [{ "functionCall": { "name": "ls", "args": {} } }] },
        { "role": "user", "parts": [
            { "functionResponse": { "name": "ls", "response": { "output": "." } } },
            { "functionResponse": { "name": "rm", "response": { "output": "gone" } } }
        ]}
    ]);
    assert_eq!(pairing_code(Format::Gemini, &doc), Some(ErrorCode::UnpairedToolResult));
}

#[test]
fn f2_gemini_set_result_body_keeps_header() {
    let doc = json!([
        { "role": "model", "parts": [
            { "functionCall": { "id": "c1", "name": "ls", "args": {} } },
            { "functionCall": { "name": "cat", "args": {} } }
        ]},
        { "role": "user", "parts": [
            { "functionResponse": { "id": "c1", "name": "ls", "response": { "out": "long" }, "willContinue": false } },
            { "functionResponse": { "name": "cat", "response": { "output": "x" },
                "parts": [{ "inlineData": { "mimeType": "image/png", "data": "AAAA" } }] } }
        ]}
    ]);
    let mut t = decode(Format::Gemini, &doc);
    assert!(matches!(&t.messages[1].blocks[1], Block::ToolResult { media, .. } if media == &vec![MediaKind::Image]));
    let before = results(&t, 1);
    formats::set_result_body(Format::Gemini, &mut t.messages[1], 0, "[cleared]").unwrap();
    formats::set_result_body(Format::Gemini, &mut t.messages[1], 1, "[image dropped]").unwrap();
    let raw = &t.messages[1].raw.value();
    assert_eq!(raw["parts"][0]["functionResponse"], json!({ "id": "c1", "name": "ls", "response": { "output": "[cleared]" }, "willContinue": false }));
    assert_eq!(raw["parts"][1]["functionResponse"], json!({ "name": "cat", "response": { "output": "[image dropped]" } }));
    assert_eq!(results(&t, 1), before, "result ids survive an edit");
    assert_eq!(result_text(&t, 1, 0), "[cleared]");
    assert_eq!(t.messages[1].bytes, context_compactor::transcript::json_len(raw));
    assert!(formats::validate_pairing(&t).is_ok());
    assert!(formats::set_result_body(Format::Gemini, &mut t.messages[1], 2, "x").is_err());
    assert!(formats::set_result_body(Format::Gemini, &mut t.messages[0], 0, "x").is_err());
}

#[test]
fn f1_gemini_opaque_parts_and_text_message() {
    let doc = json!([
        { "role": "model", "parts": [
            { "executableCode": { "language": "PYTHON", "code": "print(1)" } },
            { "codeExecutionResult": { "outcome": "OUTCOME_OK", "output": "1\n" } }
        ]}
    ]);
    let t = assert_round_trip(Format::Gemini, &doc);
    assert!(matches!(&t.messages[0].blocks[0], Block::Opaque { kind, .. } if kind == "executableCode"));
    assert!(matches!(&t.messages[0].blocks[1], Block::Opaque { kind, .. } if kind == "codeExecutionResult"));
    assert!(!t.messages[0].has_calls());
    let m = formats::text_message(Format::Gemini, "Summary so far");
    let t = decode(Format::Gemini, &json!([m]));
    assert_eq!(t.messages[0].role, Role::User);
    assert_eq!(t.messages[0].text(), "Summary so far");
}

#[test]
fn f4_gemini_provenance_round_trips_and_is_absent_in_request_view() {
    let doc = json!({ "contents": [
        { "role": "user", "parts": [{ "text": "summary of earlier work" }], "summary_level": 1, "transcript_role": "compaction_summary", "message_id": "s-1" },
        { "role": "model", "parts": [{ "functionCall": { "name": "ls", "args": {} } }] },
        { "role": "user", "parts": [{ "functionResponse": { "name": "ls", "response": { "output": "[see artifact]" } } }], "artifact_ref": "artifact#3" }
    ]});
    assert_provenance_views(Format::Gemini, &doc, "contents");
    let t = decode(Format::Gemini, &doc);
    assert_eq!(t.messages[0].id, "s-1");
    assert_eq!(t.messages[0].provenance.summary_level, Some(1));
    assert_eq!(t.messages[2].provenance.artifact_ref.as_deref(), Some("artifact#3"));
}

#[test]
fn f5_gemini_malformed_input_is_an_error_not_a_panic() {
    for bad in [
        json!([{ "role": "system", "parts": [] }]),
        json!([{ "role": "user", "parts": "text" }]),
        json!([{ "role": "user", "parts": [3] }]),
        json!([{ "role": 7, "parts": [] }]),
        json!([{ "role": "model", "parts": [{ "functionCall": { "args": {} } }] }]),
        json!([{ "role": "user", "parts": [{ "functionResponse": { "name": 5 } }] }]),
        json!({ "contents": {} }),
        json!({ "messages": [] }),
        json!("text"),
        json!([1]),
    ] {
        let e = formats::decode(Format::Gemini, bad.clone()).expect_err(&bad.to_string());
        assert_eq!(e.code, ErrorCode::InvalidTranscript, "{bad}");
    }
}

#[test]
fn f2_gemini_call_response_count_case_decodes_and_validates() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/cases/gemini-call-response-count.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("case file {} missing in CI: {e}", path.display());
            }
            eprintln!("NOTICE: skipping, case file {} not found ({e})", path.display());
            return;
        }
    };
    let case: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(case["format"], "gemini");
    let doc = json!({ "systemInstruction": case["systemInstruction"].clone(), "contents": case["transcript"].clone() });
    let t = assert_round_trip(Format::Gemini, &doc);
    assert!(formats::validate_pairing(&t).is_ok());
    // every model turn with N calls is answered by the next turn with N responses
    let mut exchanges = 0;
    for (i, m) in t.messages.iter().enumerate() {
        if m.has_calls() {
            exchanges += 1;
            let next = &t.messages[i + 1];
            assert_eq!(m.call_ids().count(), next.result_ids().count());
            assert_eq!(m.call_ids().collect::<Vec<_>>(), next.result_ids().collect::<Vec<_>>());
            assert_eq!(ExchangeIndex::build(&t.messages).get(i), Some(ToolExchange { start: i, end: i + 1 }));
        }
    }
    assert_eq!(exchanges, 5);
    // the split the case is about: history cut so that it starts at a response turn
    let first_answer = t.messages.iter().position(|m| m.has_results()).unwrap();
    let cut = json!({ "contents": doc["contents"].as_array().unwrap()[first_answer..].to_vec() });
    assert_eq!(pairing_code(Format::Gemini, &cut), Some(ErrorCode::UnpairedToolResult));
    // and the variant with one response lost from a batch
    let mut partial = doc.clone();
    partial["contents"][first_answer]["parts"].as_array_mut().unwrap().pop();
    assert_eq!(pairing_code(Format::Gemini, &partial), Some(ErrorCode::UnansweredToolCall));
}

// ---------------------------------------------------------------- OpenAI Responses

fn responses_doc() -> Value {
    json!({
        "instructions": "You are a coding agent.",
        "input": [
            { "type": "message", "role": "developer", "content": "Use tools." },
            { "role": "user", "content": [
                { "type": "input_text", "text": "Fix the bug in this screenshot." },
                { "type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto" },
                { "type": "input_file", "file_id": "file-123" }
            ]},
            { "type": "reasoning", "id": "rs_1", "summary": [{ "type": "summary_text", "text": "Need to read two files." }], "encrypted_content": "gAAAAB..." },
            { "type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "read", "arguments": "{\"path\":\"a.rs\"}", "status": "completed" },
            { "type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "read", "arguments": "{\"path\":\"b.rs\"}", "status": "completed" },
            { "type": "function_call_output", "call_id": "call_a", "output": big("a") },
            { "type": "function_call_output", "call_id": "call_b", "output": [{ "type": "input_text", "text": "fn b() {}" }, { "type": "input_image", "image_url": "https://example.com/x.png" }] },
            { "type": "message", "role": "assistant", "id": "msg_1", "status": "completed", "content": [{ "type": "output_text", "text": "Fixed.", "annotations": [] }] }
        ],
        "tools": [{ "type": "function", "name": "read", "parameters": {} }]
    })
}

#[test]
fn f3_responses_round_trip_and_view() {
    let doc = responses_doc();
    let t = assert_round_trip(Format::OpenaiResponses, &doc);
    assert_eq!(t.envelope.messages_key.as_deref(), Some("input"));
    assert!(t.envelope.fields.contains_key("instructions"));
    assert_eq!(
        roles(&t),
        vec![Role::System, Role::User, Role::Assistant, Role::Assistant, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant]
    );
    assert!(matches!(&t.messages[1].blocks[1], Block::Media { kind: MediaKind::Image, inline: true, .. }));
    assert!(matches!(&t.messages[1].blocks[2], Block::Media { kind: MediaKind::Document, inline: false, .. }));
    assert_eq!(calls(&t, 3), vec![("call_a".to_string(), "read".to_string())]);
    assert_eq!(calls(&t, 4), vec![("call_b".to_string(), "read".to_string())]);
    assert_eq!(results(&t, 5), vec!["call_a"]);
    assert_eq!(results(&t, 6), vec!["call_b"]);
    assert_eq!(result_text(&t, 6, 0), "fn b() {}");
    assert!(matches!(&t.messages[6].blocks[0], Block::ToolResult { media, .. } if media == &vec![MediaKind::Image]));
    assert_eq!(t.messages[7].text(), "Fixed.");
    assert!(formats::validate_pairing(&t).is_ok());
    let bare = doc["input"].clone();
    let t = assert_round_trip(Format::OpenaiResponses, &bare);
    assert_eq!(t.envelope.messages_key, None);
}

#[test]
fn t3_responses_reasoning_is_opaque_and_joins_its_call_exchange() {
    let t = decode(Format::OpenaiResponses, &responses_doc());
    assert!(matches!(&t.messages[2].blocks[..], [Block::Reasoning { text, signed: true, .. }] if text == "Need to read two files."));
    assert!(t.messages[2].is_reasoning_only());
    let idx = ExchangeIndex::build(&t.messages);
    // reasoning (2), both calls (3, 4) and both outputs (5, 6) are one exchange
    for i in 2..=6 {
        assert_eq!(idx.get(i), Some(ToolExchange { start: 2, end: 6 }), "message {i}");
    }
    assert_eq!(idx.get(1), None);
    assert_eq!(idx.get(7), None);
    assert!(idx.splits(3), "a cut between reasoning and its call splits the exchange");
    assert!(!idx.splits(2));
    // reasoning before a plain message is not part of any exchange
    let doc = json!([
        { "role": "user", "content": "hi" },
        { "type": "reasoning", "id": "rs_9", "summary": [], "encrypted_content": "x" },
        { "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "hello" }] }
    ]);
    let t = assert_round_trip(Format::OpenaiResponses, &doc);
    assert!(ExchangeIndex::build(&t.messages).exchanges.is_empty());
}

#[test]
fn f1_responses_compaction_and_other_tool_items() {
    let doc = json!([
        { "type": "compaction", "id": "cmp_1", "encrypted_content": "ENC" },
        { "role": "user", "content": "continue" },
        { "type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c", "name": "apply_patch", "input": "*** Begin Patch" },
        { "type": "custom_tool_call_output", "call_id": "call_c", "output": "applied" },
        { "type": "local_shell_call", "id": "lsh_1", "call_id": "call_l", "action": { "type": "exec", "command": ["ls"] }, "status": "completed" },
        { "type": "local_shell_call_output", "id": "call_l", "output": "{\"stdout\":\"a\"}" },
        { "type": "computer_call", "id": "cu_1", "call_id": "call_u", "action": { "type": "click", "x": 1, "y": 2 }, "pending_safety_checks": [], "status": "completed" },
        { "type": "computer_call_output", "call_id": "call_u", "output": { "type": "computer_screenshot", "image_url": "data:image/png;base64,QUJD" } },
        { "type": "mcp_call", "id": "mcp_1", "server_label": "docs", "name": "search", "arguments": "{}", "output": "found" },
        { "type": "web_search_call", "id": "ws_1", "status": "completed", "action": { "type": "search", "query": "x" } },
        { "type": "item_reference", "id": "msg_0" },
        { "type": "brand_new_item", "payload": { "k": 1 } }
    ]);
    let t = assert_round_trip(Format::OpenaiResponses, &doc);
    assert!(matches!(&t.messages[0].blocks[..], [Block::Opaque { kind, .. }] if kind == "compaction"));
    assert_eq!(calls(&t, 2), vec![("call_c".to_string(), "apply_patch".to_string())]);
    assert_eq!(results(&t, 3), vec!["call_c"]);
    assert_eq!(calls(&t, 4), vec![("call_l".to_string(), "local_shell".to_string())]);
    assert_eq!(results(&t, 5), vec!["call_l"]);
    assert_eq!(calls(&t, 6), vec![("call_u".to_string(), "computer".to_string())]);
    assert_eq!(results(&t, 7), vec!["call_u"]);
    assert!(matches!(&t.messages[7].blocks[0], Block::ToolResult { media, .. } if media == &vec![MediaKind::Image]));
    for i in 8..=11 {
        assert!(matches!(&t.messages[i].blocks[..], [Block::Opaque { .. }]), "item {i} opaque");
        assert!(!t.messages[i].has_calls() && !t.messages[i].has_results());
    }
    assert!(formats::validate_pairing(&t).is_ok());
}

#[test]
fn f5_responses_pairing_errors() {
    let call = |id: &str| json!({ "type": "function_call", "call_id": id, "name": "f", "arguments": "{}" });
    let out = |id: &str| json!({ "type": "function_call_output", "call_id": id, "output": "ok" });
    let user = json!({ "role": "user", "content": "next" });
    let reasoning = json!({ "type": "reasoning", "summary": [], "encrypted_content": "e" });
    // outputs need not be adjacent: reasoning and another call in between
    let ok = json!([call("a"), reasoning.clone(), call("b"), out("b"), out("a"), user.clone()]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &ok), None);
    // orphan output
    let bad = json!([user.clone(), out("zz")]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &bad), Some(ErrorCode::UnpairedToolResult));
    // output before its call
    let bad = json!([out("a"), call("a")]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &bad), Some(ErrorCode::UnpairedToolResult));
    // unanswered call followed by a user message
    let bad = json!([call("a"), call("b"), out("a"), user.clone()]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &bad), Some(ErrorCode::UnansweredToolCall));
    // the newest step may await its outputs
    let ok = json!([user.clone(), reasoning, call("a"), call("b"), out("a")]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &ok), None);
    // the same call id used by two open calls
    let bad = json!([call("a"), call("a"), out("a"), out("a")]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &bad), Some(ErrorCode::DuplicateToolCallId));
    // an answered id reused later pairs with its own call
    let ok = json!([call("a"), out("a"), user.clone(), call("a"), out("a")]);
    assert_eq!(pairing_code(Format::OpenaiResponses, &ok), None);
}

#[test]
fn f2_responses_set_result_body_keeps_header() {
    let mut t = decode(Format::OpenaiResponses, &json!([
        { "type": "function_call", "call_id": "call_a", "name": "f", "arguments": "{}" },
        { "type": "function_call_output", "id": "fco_1", "call_id": "call_a", "output": [{ "type": "input_text", "text": "long" }], "status": "completed" },
        { "type": "computer_call", "call_id": "call_u", "action": {} },
        { "type": "computer_call_output", "call_id": "call_u", "output": { "type": "computer_screenshot", "image_url": "data:," } }
    ]));
    formats::set_result_body(Format::OpenaiResponses, &mut t.messages[1], 0, "[cleared]").unwrap();
    assert_eq!(t.messages[1].raw.value(), json!({ "type": "function_call_output", "id": "fco_1", "call_id": "call_a", "output": "[cleared]", "status": "completed" }));
    assert_eq!(results(&t, 1), vec!["call_a"]);
    assert_eq!(result_text(&t, 1, 0), "[cleared]");
    assert!(formats::set_result_body(Format::OpenaiResponses, &mut t.messages[1], 1, "x").is_err());
    assert!(formats::set_result_body(Format::OpenaiResponses, &mut t.messages[0], 0, "x").is_err());
    let before = t.messages[3].raw.clone();
    assert!(formats::set_result_body(Format::OpenaiResponses, &mut t.messages[3], 0, "x").is_err());
    assert_eq!(t.messages[3].raw, before, "a refused edit leaves the item untouched");
    assert!(formats::validate_pairing(&t).is_ok());
}

#[test]
fn f4_responses_provenance_round_trips_and_is_absent_in_request_view() {
    let doc = json!({ "instructions": "x", "input": [
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "summary" }], "summary_level": 2, "transcript_role": "compaction_summary" },
        { "type": "function_call", "call_id": "c", "name": "f", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "c", "output": "[clipped]", "artifact_ref": "artifact#1", "message_id": "m-7", "pinned": true }
    ]});
    assert_provenance_views(Format::OpenaiResponses, &doc, "input");
    let t = decode(Format::OpenaiResponses, &doc);
    assert!(t.messages[2].provenance.pinned);
    assert_eq!(t.messages[2].id, "m-7");
    let m = formats::text_message(Format::OpenaiResponses, "Summary");
    let t = decode(Format::OpenaiResponses, &json!([m]));
    assert_eq!((t.messages[0].role, t.messages[0].text()), (Role::User, "Summary".to_string()));
}

#[test]
fn f5_responses_malformed_input_is_an_error_not_a_panic() {
    for bad in [
        json!([{ "type": "function_call", "name": "f", "arguments": "{}" }]),
        json!([{ "type": "function_call_output", "output": "x" }]),
        json!([{ "type": "message", "content": "no role" }]),
        json!([{ "role": "tool", "content": "x" }]),
        json!([{ "role": "user", "content": 5 }]),
        json!([{ "type": 3 }]),
        json!({ "input": "text" }),
        json!({ "messages": [] }),
    ] {
        let e = formats::decode(Format::OpenaiResponses, bad.clone()).expect_err(&bad.to_string());
        assert_eq!(e.code, ErrorCode::InvalidTranscript, "{bad}");
    }
}

// ---------------------------------------------------------------- AI SDK

fn ai_sdk_doc() -> Value {
    json!({
        "system": "You are helpful.",
        "messages": [
            { "role": "system", "content": "Extra rules." },
            { "role": "user", "content": [
                { "type": "text", "text": "Describe and check the weather." },
                { "type": "image", "image": "iVBORw0KGgo=", "mediaType": "image/png" },
                { "type": "file", "data": "https://example.com/r.pdf", "mediaType": "application/pdf", "filename": "r.pdf" }
            ]},
            { "role": "assistant", "content": [
                { "type": "reasoning", "text": "Two cities.", "providerOptions": { "anthropic": { "signature": "sig" } } },
                { "type": "text", "text": "Checking." },
                { "type": "tool-call", "toolCallId": "t1", "toolName": "weather", "input": { "city": "Paris" } },
                { "type": "tool-call", "toolCallId": "t2", "toolName": "weather", "input": { "city": "Rome" }, "providerOptions": { "x": { "y": 1 } } }
            ]},
            { "role": "tool", "content": [
                { "type": "tool-result", "toolCallId": "t1", "toolName": "weather", "output": { "type": "json", "value": { "temp": 20 } } }
            ]},
            { "role": "tool", "content": [
                { "type": "tool-result", "toolCallId": "t2", "toolName": "weather", "output": { "type": "content", "value": [
                    { "type": "text", "text": "sunny" }, { "type": "media", "data": "AAAA", "mediaType": "image/png" }
                ]}}
            ], "providerOptions": { "openai": { "k": "v" } } },
            { "role": "assistant", "content": "Paris 20, Rome sunny." }
        ]
    })
}

#[test]
fn f3_ai_sdk_round_trip_and_view() {
    let doc = ai_sdk_doc();
    let t = assert_round_trip(Format::AiSdk, &doc);
    assert_eq!(t.envelope.messages_key.as_deref(), Some("messages"));
    assert!(t.envelope.fields.contains_key("system"));
    assert_eq!(roles(&t), vec![Role::System, Role::User, Role::Assistant, Role::Tool, Role::Tool, Role::Assistant]);
    assert!(matches!(&t.messages[1].blocks[1], Block::Media { kind: MediaKind::Image, inline: true, .. }));
    assert!(matches!(&t.messages[1].blocks[2], Block::Media { kind: MediaKind::Document, inline: false, .. }));
    assert!(matches!(&t.messages[2].blocks[0], Block::Reasoning { signed: true, text, .. } if text == "Two cities."));
    assert_eq!(calls(&t, 2), vec![("t1".to_string(), "weather".to_string()), ("t2".to_string(), "weather".to_string())]);
    assert!(matches!(&t.messages[2].blocks[2], Block::ToolCall { arguments, .. } if arguments == "{\"city\":\"Paris\"}"));
    assert_eq!(results(&t, 3), vec!["t1"]);
    assert_eq!(result_text(&t, 3, 0), "{\"temp\":20}");
    assert!(matches!(&t.messages[4].blocks[0], Block::ToolResult { text, media, name: Some(n), .. }
        if text == "sunny" && media == &vec![MediaKind::Image] && n == "weather"));
    assert!(formats::validate_pairing(&t).is_ok());
    assert_eq!(ExchangeIndex::build(&t.messages).get(3), Some(ToolExchange { start: 2, end: 4 }));
    let t = assert_round_trip(Format::AiSdk, &doc["messages"]);
    assert_eq!(t.envelope.messages_key, None);
}

#[test]
fn f2_ai_sdk_approval_and_provider_executed_parts() {
    let doc = json!([
        { "role": "user", "content": "delete tmp and search" },
        { "role": "assistant", "content": [
            { "type": "tool-call", "toolCallId": "ws", "toolName": "web_search", "input": {}, "providerExecuted": true },
            { "type": "tool-result", "toolCallId": "ws", "toolName": "web_search", "output": { "type": "json", "value": [] }, "providerExecuted": true },
            { "type": "tool-call", "toolCallId": "d1", "toolName": "delete", "input": { "path": "tmp" } },
            { "type": "tool-approval-request", "approvalId": "ap1", "toolCallId": "d1" }
        ]},
        { "role": "tool", "content": [{ "type": "tool-approval-response", "approvalId": "ap1", "approved": true }] },
        { "role": "tool", "content": [{ "type": "tool-result", "toolCallId": "d1", "toolName": "delete", "output": { "type": "text", "value": "deleted" } }] },
        { "role": "assistant", "content": [{ "type": "text", "text": "Done." }] }
    ]);
    let t = assert_round_trip(Format::AiSdk, &doc);
    // provider-executed call and result stay opaque in the assistant message
    assert_eq!(calls(&t, 1), vec![("d1".to_string(), "delete".to_string())]);
    assert!(!t.messages[1].has_results());
    assert!(matches!(&t.messages[1].blocks[0], Block::Opaque { kind, .. } if kind == "tool-call"));
    assert!(matches!(&t.messages[1].blocks[1], Block::Opaque { kind, .. } if kind == "tool-result"));
    assert!(matches!(&t.messages[1].blocks[3], Block::Opaque { kind, .. } if kind == "tool-approval-request"));
    assert!(matches!(&t.messages[2].blocks[..], [Block::Opaque { kind, .. }] if kind == "tool-approval-response"));
    assert!(formats::validate_pairing(&t).is_ok());
    assert_eq!(ExchangeIndex::build(&t.messages).get(2), Some(ToolExchange { start: 1, end: 3 }));
    // awaiting execution after approval, at the end of history: fine
    let pending = json!(doc.as_array().unwrap()[..3].to_vec());
    assert_eq!(pairing_code(Format::AiSdk, &pending), None);
    // but not when the conversation moved on
    let mut moved = pending.clone();
    moved.as_array_mut().unwrap().push(json!({ "role": "user", "content": "and?" }));
    assert_eq!(pairing_code(Format::AiSdk, &moved), Some(ErrorCode::UnansweredToolCall));
}

#[test]
fn f5_ai_sdk_pairing_errors() {
    let mut doc = ai_sdk_doc();
    // orphan result: drop the assistant message with the calls
    doc["messages"].as_array_mut().unwrap().remove(2);
    assert_eq!(pairing_code(Format::AiSdk, &doc), Some(ErrorCode::UnpairedToolResult));
    // unanswered call: drop the second tool message
    let mut doc = ai_sdk_doc();
    doc["messages"].as_array_mut().unwrap().remove(4);
    assert_eq!(pairing_code(Format::AiSdk, &doc), Some(ErrorCode::UnansweredToolCall));
    // a user message between the call and its result
    let mut doc = ai_sdk_doc();
    doc["messages"].as_array_mut().unwrap().insert(3, json!({ "role": "user", "content": "wait" }));
    assert_eq!(pairing_code(Format::AiSdk, &doc), Some(ErrorCode::UnansweredToolCall));
    // duplicate id in one assistant message
    let mut doc = ai_sdk_doc();
    doc["messages"][2]["content"][3]["toolCallId"] = json!("t1");
    assert_eq!(pairing_code(Format::AiSdk, &doc), Some(ErrorCode::DuplicateToolCallId));
}

#[test]
fn f2_ai_sdk_set_result_body_keeps_header() {
    let mut t = decode(Format::AiSdk, &ai_sdk_doc());
    formats::set_result_body(Format::AiSdk, &mut t.messages[4], 0, "[cleared]").unwrap();
    assert_eq!(
        t.messages[4].raw.value(),
        json!({ "role": "tool", "content": [
            { "type": "tool-result", "toolCallId": "t2", "toolName": "weather", "output": { "type": "text", "value": "[cleared]" } }
        ], "providerOptions": { "openai": { "k": "v" } } })
    );
    assert!(matches!(&t.messages[4].blocks[0], Block::ToolResult { text, media, call_id, .. } if text == "[cleared]" && media.is_empty() && call_id == "t2"));
    assert!(formats::set_result_body(Format::AiSdk, &mut t.messages[4], 1, "x").is_err());
    assert!(formats::set_result_body(Format::AiSdk, &mut t.messages[2], 0, "x").is_err());
    assert!(formats::validate_pairing(&t).is_ok());
    // AI SDK 4 parts (`args` / `result`)
    let mut t = decode(Format::AiSdk, &json!([
        { "role": "assistant", "content": [{ "type": "tool-call", "toolCallId": "x", "toolName": "f", "args": { "a": 1 } }] },
        { "role": "tool", "content": [{ "type": "tool-result", "toolCallId": "x", "toolName": "f", "result": { "big": true }, "isError": true }] }
    ]));
    assert!(matches!(&t.messages[1].blocks[0], Block::ToolResult { is_error: true, .. }));
    formats::set_result_body(Format::AiSdk, &mut t.messages[1], 0, "short").unwrap();
    assert_eq!(t.messages[1].raw.value()["content"][0]["result"], json!("short"));
    assert!(t.messages[1].raw.value()["content"][0].get("output").is_none());
}

#[test]
fn f4_ai_sdk_provenance_round_trips_and_is_absent_in_request_view() {
    let doc = json!({ "messages": [
        { "role": "user", "content": "Summary of the first hour.", "summary_level": 1, "transcript_role": "compaction_summary", "message_id": "sum-1" },
        { "role": "assistant", "content": [{ "type": "tool-call", "toolCallId": "a", "toolName": "f", "input": {} }] },
        { "role": "tool", "content": [{ "type": "tool-result", "toolCallId": "a", "toolName": "f", "output": { "type": "text", "value": "[clipped]" } }], "artifact_ref": "artifact#2" }
    ]});
    assert_provenance_views(Format::AiSdk, &doc, "messages");
    let m = formats::text_message(Format::AiSdk, "Summary");
    let t = decode(Format::AiSdk, &json!([m]));
    assert_eq!((t.messages[0].role, t.messages[0].text()), (Role::User, "Summary".to_string()));
}

#[test]
fn f5_ai_sdk_malformed_input_is_an_error_not_a_panic() {
    for bad in [
        json!([{ "role": "model", "content": "x" }]),
        json!([{ "content": "x" }]),
        json!([{ "role": "tool", "content": "x" }]),
        json!([{ "role": "assistant", "content": [{ "type": "tool-call", "toolName": "f" }] }]),
        json!([{ "role": "tool", "content": [{ "type": "tool-result", "toolCallId": 1 }] }]),
        json!([{ "role": "user", "content": null }]),
        json!({ "contents": [] }),
    ] {
        let e = formats::decode(Format::AiSdk, bad.clone()).expect_err(&bad.to_string());
        assert_eq!(e.code, ErrorCode::InvalidTranscript, "{bad}");
    }
}

#[test]
fn f1_openai_chat_tool_calls_not_an_array_is_invalid_transcript_naming_the_row() {
    // tester finding (session 9): one call given as an object was read as no calls, so its
    // tool row became an unpaired result folded away
    let call = json!({ "id": "c1", "type": "function", "function": { "name": "ls", "arguments": "{}" } });
    for bad in [call.clone(), json!("c1"), json!(3)] {
        let doc = json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": null, "tool_calls": bad }, { "role": "tool", "tool_call_id": "c1", "content": "a b" }]);
        let e = formats::decode(Format::OpenaiChat, doc.clone()).expect_err(&doc.to_string());
        assert_eq!(e.code, ErrorCode::InvalidTranscript, "{doc}");
        assert!(e.message.starts_with("message 1: `tool_calls` must be an array"), "{}", e.message);
    }
    // null and an array stay accepted
    for ok in [json!(null), json!([call])] {
        let doc = json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": "x", "tool_calls": ok }]);
        if ok.is_null() {
            formats::decode(Format::OpenaiChat, doc).unwrap();
        } else {
            let doc = json!([{ "role": "user", "content": "hi" }, { "role": "assistant", "content": null, "tool_calls": ok }, { "role": "tool", "tool_call_id": "c1", "content": "a" }]);
            formats::decode(Format::OpenaiChat, doc).unwrap();
        }
    }
}

#[test]
fn m1_anthropic_container_upload_keeps_its_file_id_as_a_named_document() {
    // tester finding (session 9): a `container_upload` block was an opaque byte count, so
    // a fold lost the only thing that names the file
    let doc = json!([{ "role": "user", "content": [{ "type": "text", "text": "Plot the CSV." }, { "type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w" }] }]);
    let t = formats::decode(Format::Anthropic, doc).unwrap();
    let named = t.messages[0].blocks.iter().any(|b| matches!(b, context_compactor::transcript::Block::Media { name: Some(n), .. } if n == "container upload file_011CNha8iCJcU1wXNR6q4V8w"));
    assert!(named, "{:?}", t.messages[0].blocks);
}
