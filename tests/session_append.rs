//! `Session.append` is idempotent on `message_id` (W-5, issue 16): the rows a racing
//! writer (or an earlier try) already saved are not planned again.

use context_compactor::session::{unsaved_rows, SessionRecord};
use serde_json::{json, Value};

fn record(rows: Value) -> SessionRecord {
    SessionRecord::from_json(&json!({ "transcript": rows, "revision": 3 })).expect("record")
}

#[test]
fn w5_append_skips_rows_whose_message_id_is_held_with_the_same_json() {
    let loaded = record(json!([
        { "role": "user", "content": "hi", "message_id": "ai-sdk:0" },
        { "role": "assistant", "content": "hello", "message_id": "ai-sdk:1" },
    ]));
    let rows = vec![
        json!({ "role": "assistant", "content": "hello", "message_id": "ai-sdk:1" }),
        json!({ "role": "user", "content": "q2", "message_id": "ai-sdk:2" }),
        json!({ "role": "user", "content": "no id" }),
    ];
    let out = unsaved_rows(&loaded, rows).expect("planned");
    assert_eq!(out, vec![json!({ "role": "user", "content": "q2", "message_id": "ai-sdk:2" }), json!({ "role": "user", "content": "no id" })]);
    // an envelope document too
    let env = record(json!({ "system": "s", "messages": [{ "role": "user", "content": "hi", "message_id": "m0" }] }));
    assert!(unsaved_rows(&env, vec![json!({ "role": "user", "content": "hi", "message_id": "m0" })]).expect("planned").is_empty());
}

#[test]
fn w5_append_refuses_a_row_whose_message_id_is_held_with_other_content() {
    let loaded = record(json!([{ "role": "user", "content": "hi", "message_id": "ai-sdk:0" }]));
    let err = unsaved_rows(&loaded, vec![json!({ "role": "user", "content": "edited", "message_id": "ai-sdk:0" })]).expect_err("refused");
    assert_eq!(err.code.as_str(), "invalid_transcript");
    assert!(err.message.contains("\"ai-sdk:0\""), "{}", err.message);
}
