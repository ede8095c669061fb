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

/// break3 finding 6 (W-5, I-6): every append's id and rows hash ride in the saved state,
/// newest 16, so a retry of an append whose save landed late finds it.
#[test]
fn w5_i6_append_marks_ride_in_the_saved_state_and_a_retry_finds_its_own() {
    use context_compactor::formats::Format;
    use context_compactor::session::{plan_append, rows_hash, stored_append};
    let mut loaded = record(json!([{ "role": "user", "content": "hi" }]));
    let rows = vec![json!({ "role": "assistant", "content": "hello" })];
    let hash = rows_hash(&rows);
    assert_eq!(hash.len(), 16);
    assert_ne!(hash, rows_hash(&[json!({ "role": "assistant", "content": "hello!" })]));
    let (plan, _) = plan_append(&loaded, Format::OpenaiChat, rows.clone(), Some(("req-1", &hash))).expect("planned");
    let saved = SessionRecord::from_json(&serde_json::to_value(&plan.record).expect("json")).expect("round trip");
    let mark = stored_append(&saved, "req-1", &hash).expect("same rows").expect("found");
    assert_eq!((mark.revision, mark.rows), (4, 1));
    assert!(stored_append(&saved, "req-2", &hash).expect("other id").is_none());
    let err = stored_append(&saved, "req-1", &rows_hash(&[json!({ "role": "user", "content": "x" })])).expect_err("other rows");
    assert_eq!(err.code.as_str(), "invalid_config");
    // the newest 16 are kept
    for i in 0..20 {
        let (plan, _) = plan_append(&loaded, Format::OpenaiChat, vec![json!({ "role": "user", "content": format!("t{i}") })], Some((&format!("id-{i}"), "0000000000000000"))).expect("planned");
        loaded = plan.record;
    }
    let ids: Vec<&str> = loaded.state.appends.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.len(), 16);
    assert_eq!((ids[0], ids[15]), ("id-4", "id-19"));
}
