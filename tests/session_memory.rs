//! A session saved without a memory hook keeps the folded user text (N-1, M-1, W-8;
//! adversarial finding, session 5): the compaction's user-text memory records are the
//! one whole copy of what a summary clips, and `Session.compact`'s save kept only the
//! transcript, the state and the revision, so a restarted host had lost them.

mod common;
use common::*;
use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions};
use context_compactor::formats::{self, Format};
use context_compactor::memory::RecordKind;
use context_compactor::session::{plan_append, plan_finding, plan_save, MemoryStore, SessionRecord};
use context_compactor::trigger::Signals;
use context_compactor::Role;
use serde_json::{json, Value};

fn doc(turns: usize, tag: &str) -> Vec<Value> {
    let mut d = vec![json!({ "role": "system", "content": "You are careful." })];
    for i in 0..turns {
        d.push(json!({ "role": "user", "content": format!("{tag} request {i}: you must keep file {tag}{i}.cfg. {}", "pasted log line\n".repeat(120)) }));
        d.push(json!({ "role": "assistant", "content": format!("answer {i} {}", "detail ".repeat(150)) }));
    }
    d
}

/// A forced compaction of `rec` as `Session.compact` runs it with no memory hook (only
/// the folded user text projected), and its save plan.
fn compact(rec: &SessionRecord, keep_memory: bool) -> (context_compactor::engine::Outcome, context_compactor::session::SavePlan) {
    let config = Config::from_options(&json!({ "contextWindow": 4_000, "preserveRecentTurns": 1 })).unwrap();
    let t = formats::decode(Format::OpenaiChat, rec.transcript.clone()).unwrap();
    let state = context_compactor::trust::vouch(&rec.state, &t);
    let mut job = Job::start(config, state, t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(true);
    let o = run_sync(&mut job, fake_summary).unwrap();
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let plan = plan_save(rec, &o, keep_memory).unwrap();
    (o, plan)
}

#[test]
fn n1_w8_a_session_saved_without_a_memory_hook_keeps_the_folded_user_text_records() {
    let mut store = MemoryStore { record: Some(SessionRecord::from_json(&json!({ "transcript": doc(6, "A"), "revision": 0 })).unwrap()) };
    let loaded = store.load().unwrap();
    let (o, plan) = compact(&loaded, true);
    let result: Vec<_> = o.memory.as_ref().unwrap().records.clone();
    assert!(!result.is_empty(), "the folded user text is projected");
    assert_eq!(plan.record.memory, result, "the saved record keeps the result's user-text records");
    store.save(&plan).unwrap();
    // through JSON, as a store gives it back (W-6)
    let back = store.load().unwrap();
    assert_eq!(back.memory, result);
    let json = serde_json::to_value(&back).unwrap();
    assert!(json["memory"].is_array() && json["memory"][0]["content"].is_string());
    // each folded request is whole in the record, byte for byte (its records in order)
    for (i, m) in loaded.transcript.as_array().unwrap().iter().enumerate() {
        let Some(text) = m["content"].as_str() else { continue };
        if m["role"] != "user" || !o.rewrite.as_ref().unwrap().discarded.contains(&i) {
            continue;
        }
        let mut parts: Vec<_> = back.memory.iter().filter(|r| r.source_range == [i, i]).collect();
        parts.sort_by_key(|r| r.byte_range);
        assert!(parts.iter().all(|r| r.role == Role::User && r.kind == RecordKind::Narrative));
        assert_eq!(parts.iter().map(|r| r.content.as_str()).collect::<String>(), text, "message {i} rebuilt from the saved records");
    }
    // an append and a finding carry them on; the next compaction adds its own
    let mut rows = Vec::new();
    for i in 0..6 {
        rows.push(json!({ "role": "user", "content": format!("B request {i}: you must keep file B{i}.cfg. {}", "more pasted text\n".repeat(120)) }));
        rows.push(json!({ "role": "assistant", "content": format!("answer B{i} {}", "detail ".repeat(150)) }));
    }
    let (append, _) = plan_append(&back, Format::OpenaiChat, rows, None).unwrap();
    assert_eq!(append.record.memory, result);
    store.save(&append).unwrap();
    let finding = plan_finding(&store.load().unwrap(), "port 8080 is the staging server").unwrap().unwrap();
    assert_eq!(finding.record.memory, result);
    store.save(&finding).unwrap();
    let loaded2 = store.load().unwrap();
    let (o2, plan2) = compact(&loaded2, true);
    let new: Vec<_> = o2.memory.as_ref().unwrap().records.iter().filter(|r| r.role == Role::User).cloned().collect();
    assert!(!new.is_empty());
    assert_eq!(plan2.record.memory.len(), result.len() + new.iter().filter(|r| !result.iter().any(|x| x.id == r.id)).count());
    assert_eq!(&plan2.record.memory[..result.len()], &result[..], "oldest first, the earlier records kept");
    assert!(plan2.record.memory.iter().any(|r| r.content.contains("B0.cfg")));
    // the same compaction saved again writes no second copy (ids are deterministic)
    let (_, again) = compact(&SessionRecord { memory: plan2.record.memory.clone(), ..loaded2.clone() }, true);
    assert_eq!(again.record.memory, plan2.record.memory);
    // a memory hook took the records: the saved record does not hold them (nor lose the old)
    let (_, hooked) = compact(&loaded2, false);
    assert_eq!(hooked.record.memory, result);
    // a record with a broken `memory` is refused on load with invalid_state
    let e = SessionRecord::from_json(&json!({ "transcript": [], "memory": [{ "id": 1 }] })).unwrap_err();
    assert_eq!(e.code, context_compactor::ErrorCode::InvalidState);
    assert!(e.message.contains("`memory`"), "{}", e.message);
    // no records: the key is omitted (records written before it stay byte-identical)
    assert!(serde_json::to_value(SessionRecord::empty()).unwrap().get("memory").is_none());
}
