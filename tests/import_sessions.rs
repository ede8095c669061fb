//! N-2 with LOG-FORMATS "must not get wrong" 3 and 13: a Claude Code log's rows of
//! another session never enter the main thread (anthropics/claude-code#30802: rows
//! written to the wrong file), a resumed session's lineage (several session ids chained
//! by `parentUuid`) stays whole, and a row whose parent was never written is warned.

use context_compactor::formats::import::{import_with, ImportKind, ImportOptions, Imported};
use serde_json::{json, Value};

fn jsonl(rows: &[Value]) -> String {
    rows.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

fn imp(rows: &[Value]) -> Imported {
    import_with(ImportKind::ClaudeCodeJsonl, &jsonl(rows), &ImportOptions::default()).expect("import")
}

fn row(ty: &str, uuid: &str, parent: Option<&str>, session: &str, text: &str) -> Value {
    let message = if ty == "user" {
        json!({ "role": "user", "content": text })
    } else {
        json!({ "id": format!("m-{uuid}"), "role": "assistant", "content": [{ "type": "text", "text": text }] })
    };
    json!({ "type": ty, "uuid": uuid, "parentUuid": parent, "sessionId": session, "message": message })
}

fn texts(r: &Imported) -> String {
    r.document["messages"].to_string()
}

fn codes(r: &Imported) -> Vec<(Option<usize>, &'static str)> {
    r.warnings.iter().map(|w| (w.line, w.code)).collect()
}

#[test]
fn n2_rows_of_another_session_never_enter_the_main_thread() {
    let rows = [
        json!({ "type": "summary", "summary": "Other session title", "leafUuid": "zzz" }),
        row("user", "u1", None, "s1", "hi"),
        row("assistant", "a1", Some("u1"), "s1", "hello"),
        row("user", "x1", None, "OTHER", "secret from another session"),
        row("assistant", "x2", Some("x1"), "OTHER", "other answer"),
    ];
    let r = imp(&rows);
    let all = texts(&r);
    assert!(!all.contains("secret from another session") && !all.contains("other answer"), "{all}");
    assert!(all.contains("hello"));
    let w = r.warnings.iter().find(|w| w.code == "other_session").expect("an other_session warning");
    assert_eq!(w.line, Some(4));
    assert!(w.message.contains("\"OTHER\"") && w.message.contains("line(s) 4, 5"), "{}", w.message);
    // the newest request is this session's (the finding: the other row became it)
    let msgs = r.document["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["role"], "assistant");
}

#[test]
fn n2_rows_written_to_the_wrong_file_chaining_to_their_own_session_are_skipped() {
    // #30802: the other session's rows chain to a parent in its own file (not here)
    let rows = [
        row("user", "u1", None, "s1", "Fix the bug"),
        row("assistant", "a1", Some("u1"), "s1", "Fixed."),
        row("user", "b7", Some("b6"), "s2", "Deploy to prod now"),
        row("user", "u2", Some("a1"), "s1", "Now run the tests"),
    ];
    let r = imp(&rows);
    assert!(!texts(&r).contains("Deploy to prod"));
    assert!(texts(&r).contains("Now run the tests"));
    assert_eq!(codes(&r), vec![(Some(3), "other_session")], "one warning, no missing_parent for a skipped row");
}

#[test]
fn n2_a_resumed_sessions_lineage_under_two_ids_stays_whole() {
    // a resumed session's file: the rows before the resume keep the first session's id,
    // the rows after carry the new one, chained by parentUuid: one conversation
    let rows = [
        row("user", "u1", None, "old", "Task: rename foo to bar"),
        row("assistant", "a1", Some("u1"), "old", "Renamed."),
        row("user", "u2", Some("a1"), "new", "Also update the docs"),
        row("assistant", "a2", Some("u2"), "new", "Docs updated."),
    ];
    let r = imp(&rows);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    for t in ["rename foo to bar", "Renamed.", "Also update the docs", "Docs updated."] {
        assert!(texts(&r).contains(t), "{t}");
    }
    // across a compaction boundary the link is logicalParentUuid
    let rows = [
        row("user", "u1", None, "old", "Task: rename foo to bar"),
        row("assistant", "a1", Some("u1"), "old", "Renamed."),
        json!({ "type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": null, "logicalParentUuid": "a1", "sessionId": "new" }),
        json!({ "type": "user", "uuid": "u4", "parentUuid": "c1", "sessionId": "new", "isCompactSummary": true, "message": { "role": "user", "content": "This session is being continued from a previous conversation... Summary: renaming foo." } }),
        row("user", "u5", Some("u4"), "new", "Continue with the docs"),
    ];
    let r = imp(&rows);
    assert!(!r.warnings.iter().any(|w| w.code == "other_session"), "{:?}", r.warnings);
    assert!(texts(&r).contains("Continue with the docs"));
}

#[test]
fn n2_a_row_whose_parent_was_never_written_is_warned() {
    let rows = [
        row("user", "u1", None, "s1", "Start"),
        row("assistant", "a1", Some("u1"), "s1", "ok"),
        // its parent "lost-9" is not in the file (#22526)
        row("user", "u3", Some("lost-9"), "s1", "Next step"),
        row("assistant", "a3", Some("u3"), "s1", "done"),
    ];
    let r = imp(&rows);
    assert_eq!(codes(&r), vec![(Some(3), "missing_parent")]);
    assert!(r.warnings[0].message.contains("\"lost-9\""), "{}", r.warnings[0].message);
    assert!(texts(&r).contains("Next step"), "the row is kept, as a new root");
    // stream-json (no parentUuid) and rows with a null parent get none
    let r = imp(&[row("user", "u1", None, "s1", "Start"), row("assistant", "a1", Some("u1"), "s1", "ok")]);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}
