//! Break-report findings fixed on the `fix-edges` branch (session 6): JSON nested past
//! the reader's limit (finding 12). Cache breakpoints (finding 13) are in tests/editing.rs.

use context_compactor::formats::import::{import_with, ImportKind, ImportOptions};
use context_compactor::formats::{self, Format};
use serde_json::{json, Value};

fn deep_text(d: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(d), "}".repeat(d))
}

/// Finding 12: a Claude Code row whose structured tool output nests 200 levels is valid
/// JSON: it is read (the deep field as its JSON text) with a `nested_too_deep` warning, not
/// skipped as a "torn" line; the person's text on such a row is kept.
#[test]
fn n2_claude_row_nested_deeper_than_the_limit_is_read_not_torn() {
    let rows = [
        json!({"type": "user", "sessionId": "s", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": "Please fix the build."}}).to_string(),
        json!({"type": "assistant", "sessionId": "s", "uuid": "u2", "parentUuid": "u1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}).to_string(),
        json!({"type": "user", "sessionId": "s", "uuid": "u3", "parentUuid": "u2", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok rows"}]}, "toolUseResult": "PLACEHOLDER"}).to_string().replace("\"PLACEHOLDER\"", &deep_text(200)),
        json!({"type": "user", "sessionId": "s", "uuid": "u4", "parentUuid": "u3", "message": {"role": "user", "content": "Now add a test, and never use unwrap."}, "toolUseResult": "PLACEHOLDER"}).to_string().replace("\"PLACEHOLDER\"", &deep_text(5000)),
        json!({"type": "user", "sessionId": "s", "uuid": "u5", "parentUuid": "u4", "message": {"role": "user", "content": "PLACEHOLDER"}}).to_string().replace("\"PLACEHOLDER\"", &deep_text(300)),
    ];
    let r = import_with(ImportKind::ClaudeCodeJsonl, &rows.join("\n"), &ImportOptions::default()).expect("imports");
    let codes: Vec<(Option<usize>, &str)> = r.warnings.iter().map(|w| (w.line, w.code)).collect();
    assert!(!codes.iter().any(|(_, c)| *c == "torn_line"), "{codes:?}");
    assert!(codes.contains(&(Some(3), "nested_too_deep")) && codes.contains(&(Some(4), "nested_too_deep")), "{codes:?}");
    let skipped = r.warnings.iter().find(|w| w.line == Some(5)).expect("line 5 warned");
    assert_eq!(skipped.code, "nested_too_deep");
    assert!(skipped.message.contains("nested 302 levels deep (objects / arrays inside each other) at .message.content.a.a") && skipped.message.contains("at most 127 levels") && skipped.message.contains("skipped"), "{}", skipped.message);
    let kept = r.warnings.iter().find(|w| w.line == Some(3)).unwrap();
    assert!(kept.message.contains("`toolUseResult`") && !kept.message.contains("torn"), "{}", kept.message);
    let doc = r.document.to_string();
    assert!(doc.contains("Now add a test, and never use unwrap."), "the person's text on the deep row is kept");
    assert!(doc.contains("ok rows"), "the tool result is read: {doc}");
    assert!(!codes.iter().any(|(_, c)| *c == "unanswered_call" || *c == "missing_parent"), "{codes:?}");
}

/// Finding 12: a transcript row nested past the limit is refused with a typed error that
/// names the row and says how deep it nests, counted from the document's top, and where
/// (not a bare "recursion limit").
#[test]
fn f1_transcript_row_nested_too_deep_is_a_typed_error_naming_the_row() {
    let deep: Value = serde_json::from_str(&deep_text(100)).unwrap();
    let ok = json!([{"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": [{"text": "ok"}], "x": deep}]);
    assert!(formats::decode_owned(Format::Gemini, ok.to_string()).is_ok());
    let text = format!(
        "[{},{},{{\"role\":\"user\",\"parts\":[{{\"functionResponse\":{{\"name\":\"parse\",\"response\":{}}}}}]}}]",
        json!({"role": "user", "parts": [{"text": "go"}]}),
        json!({"role": "model", "parts": [{"functionCall": {"name": "parse", "args": {}}}]}),
        deep_text(300)
    );
    let e = formats::decode_owned(Format::Gemini, text).expect_err("too deep");
    assert_eq!(e.code.as_str(), "invalid_transcript");
    // the row's object, parts array, part, functionResponse, then 300: 304, +1 the document's array
    assert!(e.message.starts_with("message 2: the JSON value is nested 305 levels deep") && e.message.contains("at .parts[0].functionResponse.response.a.a"), "{}", e.message);
}
