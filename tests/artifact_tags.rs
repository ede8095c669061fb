//! Issue 14 ("never propose the same handle"), M-2, M-4, J-5: artifact handle tags follow
//! the session id a call runs under, a fork gets its own tag, and the handles issued
//! under older tags (or the legacy `artifact#N`) are still the session's.

use context_compactor::capacity::{note_transcript_edit, EditKind};
use context_compactor::config::Config;
use context_compactor::engine::{run_sync_full, Job, JobOptions, Outcome, Reply};
use context_compactor::formats::{self, Format};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use context_compactor::trust::{handle_parts, KnownHandles};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn config() -> Config {
    Config::from_options(&json!({ "profile": "default", "contextWindow": 3000, "preserveRecentTurns": 2 })).expect("config")
}

fn call(id: &str, body: &str) -> [Value; 2] {
    [
        json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": id, "type": "function", "function": { "name": "read", "arguments": "{}" } }] }),
        json!({ "role": "tool", "tool_call_id": id, "content": body }),
    ]
}

/// The same template opening for every chat (the case the finding hit: rows alike).
fn opening() -> Vec<Value> {
    let mut rows = vec![json!({ "role": "system", "content": "You are the support bot." }), json!({ "role": "user", "content": "Show me my invoices." })];
    rows.extend(call("c1", &"INVOICE LIST ".repeat(200)));
    rows.extend([json!({ "role": "assistant", "content": "Here they are." }), json!({ "role": "user", "content": "ok" }), json!({ "role": "assistant", "content": "anything else?" })]);
    rows
}

fn tail(who: &str) -> Vec<Value> {
    let mut rows = vec![json!({ "role": "user", "content": "my card" })];
    rows.extend(call("c2", &format!("{who} CARD ").repeat(200)));
    rows.extend([json!({ "role": "assistant", "content": "done" }), json!({ "role": "user", "content": "thanks" }), json!({ "role": "assistant", "content": "bye" })]);
    rows
}

/// One forced compaction with an artifact store that records every proposed handle.
fn compact(state: &SessionState, rows: &[Value], session: &str, store: &mut BTreeMap<String, (String, String)>, collisions: &mut Vec<String>) -> Outcome {
    let t = formats::decode(Format::OpenaiChat, Value::Array(rows.to_vec())).expect("decode");
    let mut job = Job::start(config(), state.clone(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true })
        .with_artifact_store(true)
        .with_memory(session, false);
    let out = run_sync_full(
        &mut job,
        |_| Reply::Summary { text: "S.".into(), usage: None },
        |item| {
            if let Some((who, body)) = store.insert(item.handle.clone(), (session.to_string(), item.body.clone())) {
                if body != item.body {
                    collisions.push(format!("{} (was {who}'s, now {session}'s)", item.handle));
                }
            }
            Some(item.handle.clone())
        },
        |_| Reply::Accepted,
    )
    .expect("compact");
    assert_eq!(out.status, "compacted", "{}", out.reason);
    out
}

fn transcript_rows(out: &Outcome) -> Vec<Value> {
    formats::encode(&out.transcript, formats::View::Stored)
        .as_array()
        .cloned()
        .expect("openai-chat rows")
}

#[test]
fn i14_m4_two_sessions_with_identical_rows_never_propose_the_same_handle() {
    // alike states and rows: only the session id differs; before the fix the second
    // call's handles were only told apart when the tag was derived under that id
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let mut tags = Vec::new();
    let mut states = BTreeMap::new();
    for who in ["chat-alice", "chat-bob"] {
        let first = compact(&SessionState::default(), &opening(), who, &mut store, &mut collisions);
        let mut rows = transcript_rows(&first);
        rows.extend(tail(who));
        let second = compact(&first.state, &rows, who, &mut store, &mut collisions);
        tags.push(second.state.artifact_tag.clone());
        states.insert(who, second.state);
    }
    assert!(collisions.is_empty(), "{collisions:?}");
    assert_ne!(tags[0], tags[1]);
    assert!(store.len() >= 4, "{store:?}");
}

#[test]
fn i14_a_state_moved_to_another_session_id_gets_a_new_tag_and_keeps_the_old_handles() {
    // the finding's AI SDK case: every chat ran as "default" (the same tag for alike
    // chats); once each runs under its own id, their new handles differ
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let a0 = compact(&SessionState::default(), &opening(), "default", &mut store, &mut collisions);
    let b0 = compact(&SessionState::default(), &opening(), "default", &mut store, &mut collisions);
    assert_eq!(a0.state.artifact_tag, b0.state.artifact_tag, "same inputs, same tag (J-5)");
    let old_tag = a0.state.artifact_tag.clone();
    let old_handles: Vec<String> = store.keys().cloned().collect();
    store.clear();
    let mut a_rows = transcript_rows(&a0);
    a_rows.extend(tail("ALICE"));
    let mut b_rows = transcript_rows(&b0);
    b_rows.extend(tail("BOB"));
    let a1 = compact(&a0.state, &a_rows, "chat-alice", &mut store, &mut collisions);
    let b1 = compact(&b0.state, &b_rows, "chat-bob", &mut store, &mut collisions);
    assert!(collisions.is_empty(), "{collisions:?}");
    assert_ne!(a1.state.artifact_tag, b1.state.artifact_tag);
    assert_ne!(a1.state.artifact_tag, old_tag);
    assert_eq!(a1.state.earlier_artifact_tags, vec![old_tag.clone()]);
    assert_eq!(a1.state.artifact_tag_session, context_compactor::trust::session_key("chat-alice"));
    // the handles issued under the old tag are still the session's
    let known = KnownHandles::of(&[], std::iter::empty(), &a1.state);
    for h in &old_handles {
        assert!(handle_parts(h).is_some_and(|(t, _)| t == old_tag), "{h}");
        assert!(known.knows(h), "{h} is still the session's");
    }
    assert!(known.knows("artifact#1"), "legacy handles below nextArtifact too");
    assert!(!known.knows("artifact#zzzz-1"), "another tag is not");
    // and the same session id again keeps the tag (no re-tag at every call)
    let mut rows = transcript_rows(&a1);
    rows.extend(tail("ALICE2"));
    let a2 = compact(&a1.state, &rows, "chat-alice", &mut store, &mut collisions);
    assert_eq!(a2.state.artifact_tag, a1.state.artifact_tag);
}

#[test]
fn i14_a_state_with_a_tag_but_no_session_keeps_it_under_default() {
    // states written before artifactTagSession (and a tag the host set) keep working
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let state = SessionState { artifact_tag: "mine".into(), next_artifact: 4, ..SessionState::default() };
    let out = compact(&state, &opening(), "default", &mut store, &mut collisions);
    assert_eq!(out.state.artifact_tag, "mine");
    assert!(store.keys().all(|h| h.starts_with("artifact#mine-")), "{store:?}");
    let json = serde_json::to_value(&out.state).unwrap();
    let back = SessionState::from_json(&json).expect("round trip");
    assert_eq!(back, out.state);
    assert!(SessionState::from_json(&json!({ "earlierArtifactTags": ["BAD"] })).is_err());
    assert!(SessionState::from_json(&json!({ "artifactTagSession": "xyz" })).is_err());
}

#[test]
fn i14_a_fork_never_proposes_its_parents_handles_even_under_the_same_session_id() {
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let base = compact(&SessionState::default(), &opening(), "main", &mut store, &mut collisions);
    let fork = note_transcript_edit(&base.state, EditKind::Fork);
    assert_ne!(fork.artifact_tag, base.state.artifact_tag, "the fork has its own tag");
    assert_eq!(fork.earlier_artifact_tags, vec![base.state.artifact_tag.clone()]);
    assert_eq!(note_transcript_edit(&base.state, EditKind::Fork), fork, "deterministic (J-5)");
    assert_eq!(note_transcript_edit(&base.state, EditKind::Edit).artifact_tag, base.state.artifact_tag, "an edit keeps the tag");
    let rows = transcript_rows(&base);
    for (session, fork_session) in [("main", "main"), ("main", "fork-1")] {
        let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
        let mut a = rows.clone();
        a.extend(tail("MAIN"));
        let mut b = rows.clone();
        b.extend(tail("FORK"));
        let pa = compact(&base.state, &a, session, &mut store, &mut collisions);
        let pb = compact(&fork, &b, fork_session, &mut store, &mut collisions);
        assert!(collisions.is_empty(), "fork under {fork_session}: {collisions:?}");
        assert_ne!(pa.state.artifact_tag, pb.state.artifact_tag);
        // the parent's earlier handles (in the fork's transcript too) stay the fork's
        let known = KnownHandles::of(&[], std::iter::empty(), &pb.state);
        assert!(known.knows(&format!("artifact#{}-1", base.state.artifact_tag)));
    }
    // a parent with no tag yet: its fork still differs from it
    let fresh = note_transcript_edit(&SessionState::default(), EditKind::Fork);
    assert!(!fresh.artifact_tag.is_empty());
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let p = compact(&SessionState::default(), &opening(), "default", &mut store, &mut collisions);
    let f = compact(&fresh, &opening(), "default", &mut store, &mut collisions);
    assert!(collisions.is_empty() && p.state.artifact_tag != f.state.artifact_tag);
    assert_eq!(store.len(), 2);
}

#[test]
fn j5_i14_two_forks_of_one_state_under_one_session_id_never_propose_the_same_handle() {
    // adversarial finding (session 5): both forks of a state got the same tag (the tag
    // came from the parent state only), so under one session id they proposed the same
    // handles for different bodies. What tells them apart is what each goes on to hold:
    // the fork's tag is derived again from its own rows before its first handle
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let base = compact(&SessionState::default(), &opening(), "main", &mut store, &mut collisions);
    let f1 = note_transcript_edit(&base.state, EditKind::Fork);
    let f2 = note_transcript_edit(&base.state, EditKind::Fork);
    assert_eq!(f1, f2, "two forks of one state are the same state (J-5)");
    assert!(f1.artifact_tag_fork);
    let rows = transcript_rows(&base);
    let with = |who: &str| {
        let mut r = rows.clone();
        r.extend(tail(who));
        r
    };
    let (mut store, mut collisions) = (BTreeMap::new(), Vec::new());
    let p1 = compact(&f1, &with("ONE"), "main", &mut store, &mut collisions);
    let p2 = compact(&f2, &with("TWO"), "main", &mut store, &mut collisions);
    let pp = compact(&base.state, &with("PARENT"), "main", &mut store, &mut collisions);
    assert!(collisions.is_empty(), "{collisions:?}");
    let tags = [&p1.state.artifact_tag, &p2.state.artifact_tag, &pp.state.artifact_tag];
    for t in tags {
        assert!(store.keys().any(|h| h.starts_with(&format!("artifact#{t}-"))), "bodies stored under {t}: {:?}", store.keys().collect::<Vec<_>>());
    }
    assert!(tags[0] != tags[1] && tags[0] != tags[2] && tags[1] != tags[2], "{tags:?}");
    assert!(!p1.state.artifact_tag_fork && !p2.state.artifact_tag_fork, "the fork's tag is its own now");
    // the tag stays with the fork after that: its next handles use it
    let mut more = transcript_rows(&p1);
    more.extend(tail("ONE AGAIN"));
    let q1 = compact(&p1.state, &more, "main", &mut store, &mut collisions);
    assert_eq!(q1.state.artifact_tag, p1.state.artifact_tag);
    assert!(collisions.is_empty(), "{collisions:?}");
    // the parent's handles (in both forks' rows) stay each fork's
    for s in [&p1.state, &p2.state] {
        assert!(KnownHandles::of(&[], std::iter::empty(), s).knows(&format!("artifact#{}-1", base.state.artifact_tag)));
    }
    // J-5: the same fork and rows give the same bytes; forks with the same rows are the
    // same inputs and give the same handles (for the same bodies)
    let (mut s2, mut c2) = (BTreeMap::new(), Vec::new());
    let again = compact(&f1, &with("ONE"), "main", &mut s2, &mut c2);
    assert_eq!(again.state, p1.state);
    assert_eq!(transcript_rows(&again), transcript_rows(&p1));
    let twin = compact(&f2, &with("ONE"), "main", &mut s2, &mut c2);
    assert_eq!(twin.state.artifact_tag, p1.state.artifact_tag);
    assert!(c2.is_empty());
    // the flag round-trips with the state (W-6) and is omitted once used
    let j = serde_json::to_value(&f1).unwrap();
    assert_eq!(j["artifactTagFork"], json!(true));
    assert_eq!(SessionState::from_json(&j).unwrap(), f1);
    assert!(serde_json::to_value(&p1.state).unwrap().get("artifactTagFork").is_none());
}
