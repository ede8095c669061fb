//! Memory projection wired into compaction (M-1, W-3): the committed outcome carries
//! the batch; a host that refuses the batch fails the compaction atomically.

use context_compactor::config::ConfigInput;
use context_compactor::engine::{run_sync, run_sync_with_memory, Job, JobOptions, Reply, Step};
use context_compactor::error::ErrorCode;
use context_compactor::formats::{self, encode, Format, View};
use context_compactor::memory::RecordKind;
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

/// An OpenAI-chat transcript with a prior summary, injected context, a large tool
/// output and narrative rows old enough to be folded.
fn transcript() -> Value {
    let mut body = String::new();
    for i in 0..80 {
        body.push_str(&format!("flux-{i:02}.log: capacitor voltage 1.21 gigawatts, reading {i}\n"));
    }
    body.push_str("needle: the calibration constant is 7734\n");
    let mut msgs = vec![
        json!({ "role": "system", "content": "You are a careful lab assistant." }),
        json!({ "role": "assistant", "content": "Earlier we looked at the walrus dataset.", "summary_level": 1, "transcript_role": "compaction_summary" }),
        json!({ "role": "user", "content": "Please inspect the flux capacitor logs in /srv/lab/flux and report anomalies." }),
        json!({ "role": "user", "content": "RETRIEVED DOCUMENT: secretword zebra handbook", "transcript_role": "injected_context" }),
        json!({ "role": "assistant", "content": "I will read the logs first.", "tool_calls": [{ "id": "call_1", "type": "function", "function": { "name": "read_logs", "arguments": "{\"dir\":\"/srv/lab/flux\"}" } }] }),
        json!({ "role": "tool", "tool_call_id": "call_1", "content": body }),
        json!({ "role": "assistant", "content": "The logs show the calibration constant drifted on Tuesday." }),
    ];
    for i in 0..8 {
        msgs.push(json!({ "role": "user", "content": format!("Follow-up question number {i} about the oscilloscope traces.") }));
        msgs.push(json!({ "role": "assistant", "content": format!("Answer {i}: the oscilloscope trace looks nominal.") }));
    }
    msgs.push(json!({ "role": "user", "content": "Now write the final report." }));
    json!(msgs)
}

fn job(session: &str, confirm: bool) -> Job {
    let config = serde_json::from_value::<ConfigInput>(json!({ "contextWindow": 4000, "preserveRecentTurns": 2, "maxSummariesBeforeRollup": 1 }))
        .expect("config")
        .resolve()
        .expect("resolve");
    let t = formats::decode(Format::OpenaiChat, transcript()).expect("decode");
    let signals = Signals { force: true, ..Signals::default() };
    // the transcript stands for the host's stored one: its state vouches for the stored
    // summary and artifact ref (issue 14 trust boundary)
    let state = context_compactor::trust::vouch(&SessionState::default(), &t);
    Job::start(config, state, t, JobOptions { signals, has_summarizer: false }).with_memory(session, confirm)
}

fn no_summary(_: &context_compactor::summarize::SummarizeRequest) -> Reply {
    Reply::Failed { message: "unused".into(), context_exceeded: false }
}

#[test]
fn m1_committed_compaction_reports_its_memory_batch() {
    let mut j = job("sess-a", false);
    let out = run_sync(&mut j, no_summary).expect("runs");
    assert_eq!(out.status, "compacted", "{}", out.reason);
    let batch = out.memory.clone().expect("a memory batch");
    assert_eq!(batch.session, "sess-a");
    assert!(!batch.records.is_empty());
    let all: String = batch.records.iter().map(|r| r.content.as_str()).collect::<Vec<_>>().join("\n");
    // Narrative and the evicted tool body are there, with tool name and source.
    assert!(all.contains("Please inspect the flux capacitor logs"), "{all}");
    assert!(all.contains("calibration constant drifted"));
    let tool: Vec<_> = batch.records.iter().filter(|r| r.kind == RecordKind::ToolOutput).collect();
    assert!(tool.iter().any(|r| r.content.contains("the calibration constant is 7734")));
    assert!(tool.iter().all(|r| r.tool_name.as_deref() == Some("read_logs") && r.call_id.as_deref() == Some("call_1")));
    // Injected context and the earlier summary (rolled up, so discarded) are never
    // indexed although both left the transcript.
    let discarded = out.rewrite.as_ref().map(|r| r.discarded.clone()).unwrap_or_default();
    assert!(discarded.contains(&1) && discarded.contains(&3), "{discarded:?}");
    assert!(!all.contains("secretword"));
    assert!(!all.contains("walrus"));
    // Every record points at a row the rewrite discarded.
    assert!(batch.records.iter().all(|r| discarded.contains(&r.source_range[0])));
    let j = out.to_json();
    assert_eq!(j["memory"]["session"], "sess-a");
    assert_eq!(j["memory"]["records"].as_array().map(Vec::len), Some(batch.records.len()));
}

#[test]
fn m1_w3_host_asked_before_commit_and_refusal_leaves_history_intact() {
    // Accepted: exactly one Project step, then the commit.
    let mut j = job("default", true);
    let mut asked = 0;
    let out = run_sync_with_memory(&mut j, no_summary, |b| {
        asked += 1;
        assert_eq!(b.session, "default");
        Reply::Accepted
    })
    .expect("runs");
    assert_eq!(asked, 1);
    assert_eq!(out.status, "compacted");
    assert!(out.memory.is_some());

    // Refused: failed with memory_failed, original transcript, no rewrite, revision kept.
    let mut j = job("default", true);
    let out = run_sync_with_memory(&mut j, no_summary, |_| Reply::Failed { message: "disk full".into(), context_exceeded: false }).expect("runs");
    assert_eq!(out.status, "failed");
    assert_eq!(out.error.as_ref().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(out.reason.contains("disk full"));
    assert!(out.rewrite.is_none() && out.memory.is_none());
    assert_eq!(out.state.revision, 0);
    let original = encode(&formats::decode(Format::OpenaiChat, transcript()).expect("decode"), View::Stored);
    assert_eq!(encode(&out.transcript, View::Stored), original);
}

#[test]
fn m1_project_step_rejects_mismatched_replies() {
    let mut j = job("default", true);
    let step = j.resume(None).expect("first step");
    assert!(matches!(step, Step::Project(_)));
    let err = j.resume(Some(Reply::Summary { text: "x".into(), usage: None })).err().map(|e| e.code);
    assert_eq!(err, Some(ErrorCode::ProtocolError));
}

#[test]
fn m1_project_memory_off_commits_the_same_rewrite_with_no_records_and_no_memory_step() {
    let on = run_sync(&mut job("sess-a", false), no_summary).expect("runs");
    let config = serde_json::from_value::<ConfigInput>(json!({ "contextWindow": 4000, "preserveRecentTurns": 2, "maxSummariesBeforeRollup": 1, "projectMemory": false }))
        .expect("config")
        .resolve()
        .expect("resolve");
    assert!(!config.project_memory);
    let t = formats::decode(Format::OpenaiChat, transcript()).expect("decode");
    let signals = Signals { force: true, ..Signals::default() };
    // confirm = true: a memory step would be asked if there were anything to store
    let mut j = Job::start(config, context_compactor::trust::vouch(&SessionState::default(), &t), t, JobOptions { signals, has_summarizer: false }).with_memory("sess-a", true);
    let mut asked = 0;
    let off = run_sync_with_memory(&mut j, no_summary, |_| {
        asked += 1;
        Reply::Accepted
    })
    .expect("runs");
    assert_eq!(off.status, "compacted", "{}", off.reason);
    assert_eq!(asked, 0, "no memory step when projection is off");
    let batch = off.memory.expect("an empty batch");
    assert_eq!((batch.session.as_str(), batch.records.len()), ("sess-a", 0));
    assert!(!on.memory.expect("batch").records.is_empty(), "projection is on by default");
    assert_eq!(encode(&off.transcript, View::Stored), encode(&on.transcript, View::Stored), "same rewrite either way");
}

#[test]
fn m1_w3_the_batch_is_the_same_whether_the_host_confirms_it_or_not() {
    // without a confirmation step the engine hands the discarded rows to the projection
    // (freeing them as it goes); with one it must keep them for a refusal (W-3)
    let direct = run_sync(&mut job("sess-a", false), no_summary).expect("runs");
    let confirmed = run_sync_with_memory(&mut job("sess-a", true), no_summary, |_| Reply::Accepted).expect("runs");
    assert_eq!(direct.status, "compacted");
    assert_eq!(direct.memory, confirmed.memory);
    assert_eq!(encode(&direct.transcript, View::Stored), encode(&confirmed.transcript, View::Stored));
    assert_eq!(direct.before, confirmed.before);
    assert_eq!(direct.rewrite.as_ref().map(|r| r.discarded.clone()), confirmed.rewrite.as_ref().map(|r| r.discarded.clone()));
}
