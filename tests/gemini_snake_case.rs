//! Gemini in snake_case (F-1, F-3, adversarial finding, session 5): the REST API takes
//! every field under its proto JSON name (`inlineData`) or its proto field name
//! (`inline_data`). A document in either spelling reads the same, and what the engine
//! writes goes under the key the input used.

mod common;
use common::*;
use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions};
use context_compactor::formats::{self, Format, View};
use context_compactor::state::SessionState;
use context_compactor::transcript::{Block, Transcript};
use context_compactor::trigger::Signals;
use serde_json::{json, Map, Value};

/// Every camelCase key of `v`, at any depth, in snake_case (`inlineData` -> `inline_data`).
fn snake(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                let mut key = String::new();
                for c in k.chars() {
                    if c.is_ascii_uppercase() {
                        key.push('_');
                        key.push(c.to_ascii_lowercase());
                    } else {
                        key.push(c);
                    }
                }
                out.insert(key, snake(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(snake).collect()),
        other => other.clone(),
    }
}

fn has_camel_key(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => m.iter().find_map(|(k, x)| if k.chars().any(|c| c.is_ascii_uppercase()) { Some(k.clone()) } else { has_camel_key(x) }),
        Value::Array(a) => a.iter().find_map(has_camel_key),
        _ => None,
    }
}

fn views(t: &Transcript) -> Vec<(context_compactor::Role, Vec<Block>)> {
    t.messages.iter().map(|m| (m.role, m.blocks.clone())).collect()
}

fn camel_doc() -> Value {
    // "Keep the header order." in base64
    let b64 = "S2VlcCB0aGUgaGVhZGVyIG9yZGVyLg==";
    json!({
        "systemInstruction": { "parts": [{ "text": "Be brief." }] },
        "contents": [
            { "role": "user", "parts": [
                { "text": "Read the attached spec." },
                { "inlineData": { "mimeType": "text/plain", "data": b64 } },
                { "inlineData": { "mimeType": "image/png", "data": "iVBORw0KGgo=" } },
                { "fileData": { "mimeType": "application/pdf", "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/abc" } }
            ]},
            { "role": "model", "parts": [
                { "text": "Planning.", "thought": true, "thoughtSignature": "c2lnLTE=" },
                { "functionCall": { "name": "ls", "args": { "dir": "." } }, "thoughtSignature": "c2lnLTI=" },
                { "functionCall": { "id": "c2", "name": "cat", "args": { "file": "README" } } }
            ]},
            { "role": "user", "parts": [
                { "functionResponse": { "name": "ls", "response": { "output": "a b" } } },
                { "functionResponse": { "id": "c2", "name": "cat", "response": { "output": "# readme" }, "willContinue": false,
                    "parts": [{ "inlineData": { "mimeType": "image/png", "data": "AAAA" } }] } }
            ]},
            { "role": "model", "parts": [
                { "executableCode": { "language": "PYTHON", "code": "print(1)" } },
                { "codeExecutionResult": { "outcome": "OUTCOME_OK", "output": "1\n" } },
                { "text": "Done." }
            ]}
        ]
    })
}

#[test]
fn f1_gemini_snake_case_fields_read_as_their_camel_case_spelling() {
    let camel = camel_doc();
    let sn = snake(&camel);
    assert!(sn["contents"][0]["parts"][1].get("inline_data").is_some() && sn.get("system_instruction").is_some(), "the test document is snake_case");
    let a = formats::decode(Format::Gemini, camel.clone()).unwrap();
    let b = formats::decode(Format::Gemini, sn.clone()).unwrap();
    // the same canonical view, block for block (byte counts of whole parts grow by the
    // underscores; opaque kinds are the keys as spelled)
    let norm = |t: &Transcript| {
        let mut v = views(t);
        for (_, blocks) in &mut v {
            for blk in blocks {
                match blk {
                    Block::Opaque { kind, bytes } => {
                        *kind = kind.replace("executableCode", "executable_code").replace("codeExecutionResult", "code_execution_result");
                        *bytes = 0;
                    }
                    Block::Reasoning { bytes, .. } => *bytes = 0,
                    _ => {}
                }
            }
        }
        v
    };
    assert_eq!(norm(&b), norm(&a));
    assert!(matches!(&b.messages[3].blocks[0], Block::Opaque { kind, .. } if kind == "executable_code"));
    // the attached text file is the person's text (N-1), the signatures are reasoning (T-3)
    assert!(b.messages[0].user_texts().any(|t| t == "Keep the header order."));
    assert!(matches!(&b.messages[1].blocks[1], Block::Reasoning { signed: true, .. }));
    formats::validate_pairing(&b).expect("function_call / function_response pair");
    // F-3: decode then encode gives the snake_case document back
    assert_eq!(formats::encode(&b, View::Stored), sn);
    // detection takes it as Gemini
    assert_eq!(formats::detect(&sn).unwrap(), Format::Gemini);
}

#[test]
fn f2_gemini_snake_case_result_body_is_written_under_function_response() {
    let sn = snake(&camel_doc());
    let mut t = formats::decode(Format::Gemini, sn).unwrap();
    formats::set_result_body(Format::Gemini, &mut t.messages[2], 1, "[cleared]").unwrap();
    let raw = t.messages[2].raw.value();
    assert_eq!(raw["parts"][1], json!({ "function_response": { "id": "c2", "name": "cat", "response": { "output": "[cleared]" }, "will_continue": false } }));
    assert!(has_camel_key(&raw).is_none(), "no camelCase key written: {raw}");
    assert!(matches!(&t.messages[2].blocks[1], Block::ToolResult { text, media, .. } if text == "[cleared]" && media.is_empty()));
    // a malformed snake_case call names the key as the input spells it
    let e = formats::decode(Format::Gemini, json!([{ "role": "model", "parts": [{ "function_call": { "args": {} } }] }])).unwrap_err();
    assert!(e.to_string().contains("parts[0].function_call has no string `name`"), "{e}");
}

#[test]
fn k1_gemini_snake_case_session_clears_as_the_camel_case_one_and_keeps_its_spelling() {
    // the same tool-heavy session in both spellings, cleared with clearToolInputs: the
    // snake_case result is the camelCase result in snake_case
    let text = std::fs::read_to_string("tests/fixtures/formats/gemini.json").expect("fixture");
    let camel: Value = serde_json::from_str(&text).unwrap();
    let sn = snake(&camel);
    let run = |doc: &Value| {
        let config = Config::from_options(&json!({ "contextWindow": 8_000, "clearToolUses": { "keep": 1, "clearToolInputs": true } })).unwrap();
        let t = formats::decode(Format::Gemini, doc.clone()).unwrap();
        let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals::default(), has_summarizer: true });
        run_sync(&mut job, fake_summary).expect("job runs")
    };
    let (a, b) = (run(&camel), run(&sn));
    assert_eq!(a.status, "compacted", "{}", a.reason);
    assert_eq!(b.status, a.status, "{}", b.reason);
    let ra = a.rewrite.as_ref().unwrap();
    let rb = b.rewrite.as_ref().unwrap();
    assert!(!rb.cleared.is_empty(), "results were cleared");
    assert_eq!(rb.cleared.len(), ra.cleared.len());
    assert_eq!(rb.discarded, ra.discarded);
    let out_b = formats::encode(&b.transcript, View::Request);
    assert!(has_camel_key(&out_b).is_none(), "the snake_case session got a camelCase key: {:?}", has_camel_key(&out_b));
    // row for row, the camelCase rows' parts in snake_case (ids and summary text may
    // name content-derived message ids, so the parts are compared, not the text)
    let rows = |v: &Value| v["contents"].as_array().unwrap().iter().map(|m| snake(&m["parts"])).collect::<Vec<_>>();
    let out_a = formats::encode(&a.transcript, View::Request);
    let (pa, pb) = (rows(&out_a), rows(&out_b));
    assert_eq!(pa.len(), pb.len());
    let summaries = b.transcript.messages.iter().filter(|m| m.is_summary()).count();
    for (i, (x, y)) in pa.iter().zip(&pb).enumerate() {
        if b.transcript.messages[i].is_summary() {
            continue;
        }
        assert_eq!(x, y, "row {i} (of {} rows, {summaries} summaries)", pa.len());
    }
}
