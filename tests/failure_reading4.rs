//! Y-5 (tester finding, failure reading 4): JSON bodies that report a failure in the
//! words or the key case a host wrote them in.

use context_compactor::formats::failure::{json_error, text_reports_failure};

/// Y-5: `{"success": "false"}` (the word) and `{"Status": "Error"}` (key and value in
/// any case) are failed calls; `{"status": "failed"}` of a looked-up job stays an answer
/// (`{"ok": "false"}` is a failure too since issue 13: tests/failure_reading5.rs).
#[test]
fn y5_json_success_word_false_and_status_key_in_any_case_are_failures() {
    for t in [r#"{"success": "false"}"#, r#"{"success": "FALSE", "data": 1}"#, r#"{"Status": "Error"}"#, r#"{"STATUS": "error", "msg": "x"}"#, r#"{"Success": false}"#] {
        assert!(json_error(t), "{t}");
        assert!(text_reports_failure(t), "{t}");
    }
    for t in [r#"{"status": "failed", "build": 412}"#, r#"{"Status": "OK"}"#, r#"{"success": "true"}"#, r#"{"ok": "true"}"#] {
        assert!(!json_error(t), "{t} is an answer");
    }
}

#[test]
fn y5_capitalised_ok_false_is_a_serde_result_not_a_failure() {
    // breaker finding (session 10): `{"Ok": false}` is Rust's `Ok(false)` serialized
    use context_compactor::formats::failure::json_error;
    assert!(!json_error(r#"{"Ok": false}"#));
    assert!(!json_error(r#"{"Ok": true, "OK": false}"#));
    assert!(json_error(r#"{"ok": false}"#));
    assert!(json_error(r#"{"Success": false}"#));
}
