//! Semantic memory (M-1..M-4): projection, embedded embedder and index, recall tool.

use context_compactor::error::ErrorCode;
use context_compactor::memory::{
    project, recall, recall_from_arguments, recall_from_hits, recall_tool_definition, try_project, EvictedBody,
    Hit, Index, MemoryRecord, RecordKind, CHUNK_BYTES,
};
use context_compactor::transcript::{Message, Role, TranscriptRole};
use serde_json::{json, Value};
use std::collections::BTreeSet;

mod memory_common;
use memory_common::{call, msg, rec, result, text};

fn long_body() -> String {
    let mut s = String::new();
    for i in 0..120 {
        s.push_str(&format!("line {i:03}: compiler warning in module_{i} unused variable\n"));
    }
    s
}

fn sample() -> (Vec<Message>, Vec<usize>, Vec<EvictedBody>) {
    let mut injected = msg("m2", Role::User, vec![text("RETRIEVED DOC mentions secretword")]);
    injected.provenance.transcript_role = TranscriptRole::InjectedContext;
    let mut typed_summary = msg("m3", Role::Assistant, vec![text("typed summary about zebra")]);
    typed_summary.provenance.transcript_role = TranscriptRole::CompactionSummary;
    let mut leveled = msg("m6", Role::User, vec![text("rolled up summary about walrus")]);
    leveled.provenance.summary_level = Some(2);
    let mut c2_result = msg("m8", Role::Tool, vec![result("c2", "grep found needle in haystack.rs")]);
    c2_result.provenance.artifact_ref = Some("artifact#7".to_string());
    let messages = vec![
        msg("m0", Role::System, vec![text("You are a helpful system prompt")]),
        msg("m1", Role::User, vec![text("Please analyse the quarterly revenue numbers")]),
        injected,
        typed_summary,
        msg("m4", Role::Assistant, vec![text("I will read the build log"), call("c1", "read_file", "{}")]),
        msg("m5", Role::Tool, vec![result("c1", "[evicted: artifact#1]")]),
        leveled,
        msg("m7", Role::Assistant, vec![call("c2", "grep", "{}")]),
        c2_result,
        msg("m9", Role::User, vec![text("Kept message, not discarded")]),
    ];
    let discarded = vec![8, 1, 2, 3, 4, 5, 6, 7, 0];
    let evicted = vec![
        EvictedBody { offset: 5, call_id: "c1".into(), tool_name: None, handle: Some("artifact#1".into()), body: long_body() },
        EvictedBody { offset: 2, call_id: "cx".into(), tool_name: Some("web".into()), handle: None, body: "secretword body".into() },
    ];
    (messages, discarded, evicted)
}

#[test]
fn m1_projection_indexes_narrative_and_chunked_tool_bodies() {
    let (messages, discarded, evicted) = sample();
    let batch = project("s1", &messages, &discarded, &evicted);
    assert_eq!(batch.session, "s1");
    assert!(batch.records.iter().all(|r| r.session == "s1"));

    let narrative: Vec<&MemoryRecord> = batch.records.iter().filter(|r| r.kind == RecordKind::Narrative).collect();
    let narrative_ids: Vec<&str> = narrative.iter().map(|r| r.message_id.as_str()).collect();
    assert_eq!(narrative_ids, vec!["m1", "m4"], "only discarded user/assistant text");
    assert_eq!(narrative[0].content, "Please analyse the quarterly revenue numbers");
    assert_eq!(narrative[0].source_range, [1, 1]);
    assert_eq!(narrative[1].content, "I will read the build log");

    // Evicted body c1: chunked, tool name looked up from the call, handle carried.
    let body = long_body();
    let c1: Vec<&MemoryRecord> = batch.records.iter().filter(|r| r.call_id.as_deref() == Some("c1")).collect();
    assert!(body.len() > 2 * CHUNK_BYTES);
    assert!(c1.len() >= 3, "a {}-byte body makes several chunks, got {}", body.len(), c1.len());
    for r in &c1 {
        assert_eq!(r.kind, RecordKind::ToolOutput);
        assert_eq!(r.tool_name.as_deref(), Some("read_file"));
        assert_eq!(r.handle.as_deref(), Some("artifact#1"));
        assert_eq!(r.message_id, "m5");
        assert_eq!(r.source_range, [5, 5]);
        assert!(r.content.len() <= CHUNK_BYTES);
        assert_eq!(body.get(r.byte_range[0]..r.byte_range[1]), Some(r.content.as_str()));
    }
    // the chunks tile the body: concatenated, they are the body byte for byte (N-1, M-1)
    let joined: String = c1.iter().map(|r| r.content.as_str()).collect();
    assert_eq!(joined, body);
    // The placeholder left in the transcript is not indexed in place of the body.
    assert!(batch.records.iter().all(|r| !r.content.contains("[evicted")));

    // A discarded tool result that was not evicted is projected with the row's handle.
    let c2: Vec<&MemoryRecord> = batch.records.iter().filter(|r| r.call_id.as_deref() == Some("c2")).collect();
    assert_eq!(c2.len(), 1);
    assert_eq!(c2[0].tool_name.as_deref(), Some("grep"));
    assert_eq!(c2[0].handle.as_deref(), Some("artifact#7"));
    assert_eq!(c2[0].content, "grep found needle in haystack.rs");

    // JSON shape for JS: camelCase fields, snake_case kind.
    let v = serde_json::to_value(c1[0]).unwrap_or(Value::Null);
    for key in ["id", "session", "messageId", "sourceRange", "byteRange", "kind", "toolName", "callId", "handle", "content"] {
        assert!(v.get(key).is_some(), "record JSON lacks {key}: {v}");
    }
    assert_eq!(v["kind"], json!("tool_output"));
    assert_eq!(v["sourceRange"], json!([5, 5]));
}

#[test]
fn m1_injected_context_and_summaries_are_never_indexed() {
    let (messages, discarded, evicted) = sample();
    let batch = project("s1", &messages, &discarded, &evicted);
    for r in &batch.records {
        for forbidden in ["secretword", "zebra", "walrus", "system prompt", "Kept message"] {
            assert!(!r.content.contains(forbidden), "{forbidden} leaked into {r:?}");
        }
        assert!(!["m0", "m2", "m3", "m6", "m9"].contains(&r.message_id.as_str()));
    }
    let mut index = Index::new();
    assert!(index.add(batch.records).is_ok());
    assert!(recall(&index, "s1", "secretword zebra walrus", None).hits.is_empty());
}

#[test]
fn m1_projection_is_deterministic() {
    let (messages, discarded, evicted) = sample();
    let a = serde_json::to_vec(&project("s1", &messages, &discarded, &evicted)).unwrap_or_default();
    let mut shuffled = discarded.clone();
    shuffled.reverse();
    shuffled.push(4); // duplicates are harmless
    let b = serde_json::to_vec(&project("s1", &messages, &shuffled, &evicted)).unwrap_or_default();
    assert!(!a.is_empty());
    assert_eq!(a, b, "same input, same bytes");

    let batch = project("s1", &messages, &discarded, &evicted);
    let ids: BTreeSet<&str> = batch.records.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), batch.records.len(), "ids are unique");
    assert!(batch.records.iter().all(|r| r.id.starts_with("mem-") && r.id.len() == 20));
    let other = project("s2", &messages, &discarded, &evicted);
    assert!(other.records.iter().all(|r| !ids.contains(r.id.as_str())), "ids are per session");
}

#[test]
fn m1_try_project_rejects_offsets_outside_the_transcript() {
    let (messages, _, evicted) = sample();
    let err = try_project("s1", &messages, &[1, 99], &evicted).err();
    assert_eq!(err.map(|e| e.code), Some(ErrorCode::MemoryFailed));
    let bad = vec![EvictedBody { offset: 42, call_id: "c1".into(), tool_name: None, handle: None, body: "x".into() }];
    assert_eq!(try_project("s1", &messages, &[1], &bad).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    // project() skips what it cannot place instead of panicking.
    let batch = project("s1", &messages, &[1, 99], &bad);
    assert_eq!(batch.records.len(), 1);
    assert!(try_project("s1", &messages, &[1], &evicted).is_ok());
}

#[test]
fn m3_chinese_query_finds_chinese_record() {
    let mut index = Index::new();
    let report = index.add(vec![
        rec("s", 0, "今天的天气很好，我们去公园散步。"),
        rec("s", 1, "数据库连接失败，需要检查配置文件里的端口。"),
        rec("s", 2, "The deployment finished without errors."),
        rec("s", 3, "東京の天気は晴れです。"),
    ]);
    assert_eq!(report.map(|r| r.added).ok(), Some(4));
    let hits = index.search("s", "数据库配置", 5);
    assert_eq!(hits.first().map(|h| h.record.id.as_str()), Some("s-1"));
    let hits = index.search("s", "公园散步", 5);
    assert_eq!(hits.first().map(|h| h.record.id.as_str()), Some("s-0"));
    assert!(index.search("s", "数据库配置", 5).iter().all(|h| h.record.id != "s-2"));
}

#[test]
fn m3_rare_terms_outweigh_common_ones() {
    let mut records = Vec::new();
    for n in 0..10 {
        records.push(rec("s", n, &format!("build output common line {n}")));
    }
    records.push(rec("s", 10, "common common common report"));
    records.push(rec("s", 11, "zygote analysis report"));
    let mut index = Index::new();
    assert!(index.add(records).is_ok());
    let hits = index.search("s", "common zygote", 3);
    assert_eq!(hits.first().map(|h| h.record.id.as_str()), Some("s-11"), "{hits:?}");
    let common_score = hits.iter().find(|h| h.record.id == "s-10").map(|h| h.score).unwrap_or(0.0);
    assert!(hits[0].score > common_score);
}

#[test]
fn m3_stemming_matches_inflections() {
    let mut index = Index::new();
    assert!(index.add(vec![rec("s", 0, "We indexed the files yesterday"), rec("s", 1, "Lunch menu and coffee")]).is_ok());
    let hits = index.search("s", "indexing file", 5);
    assert_eq!(hits.iter().map(|h| h.record.id.as_str()).collect::<Vec<_>>(), vec!["s-0"]);
}

#[test]
fn m3_text_without_tokens_is_never_indexed_nor_matched() {
    let mut index = Index::new();
    let report = index.add(vec![rec("s", 0, "?!... --- ;;"), rec("s", 1, "real words here")]);
    let report = report.unwrap_or_default();
    assert_eq!(report.added, 1);
    assert_eq!(report.skipped, vec!["s-0".to_string()]);
    assert_eq!(index.len("s"), 1);
    assert!(index.search("s", "?!... --- ;;", 5).is_empty(), "a query without tokens matches nothing");
    assert!(index.search("s", "", 5).is_empty());
    let page = index.enumerate("s", None, 10).unwrap_or_else(|_| panic!("enumerate"));
    assert!(page.records.iter().all(|r| r.id != "s-0"));
    for h in index.search("s", "real words", 5) {
        assert!(h.score > 0.0 && h.score <= 1.0);
        assert_ne!(h.record.id, "s-0");
    }
}

fn corpus() -> Index {
    let mut index = Index::new();
    let a = vec![
        rec("A", 0, "The payment service returns HTTP 502 when the upstream gateway times out."),
        rec("A", 1, "Database migration 0042 adds an index on orders.customer_id."),
        rec("A", 2, "User asked to rename the project to Bluebird before the release."),
        rec("A", 3, "缓存命中率下降到百分之四十"),
    ];
    let b = vec![
        rec("B", 0, "The weather service uses a gateway in front of the radar feed."),
        rec("B", 1, "Release notes draft for version two."),
    ];
    assert!(index.add(a).is_ok());
    assert!(index.add(b).is_ok());
    index
}

#[test]
fn m3_snapshot_round_trip_gives_identical_search_results() {
    let index = corpus();
    let bytes = index.snapshot();
    let restored = Index::restore(&bytes).unwrap_or_else(|e| panic!("restore: {e}"));
    assert_eq!(restored.snapshot(), bytes, "snapshot is stable across a round trip");
    for (session, q) in [("A", "gateway timeout 502"), ("A", "rename project"), ("A", "缓存命中率"), ("B", "gateway release")] {
        let before = index.search(session, q, 10);
        assert!(!before.is_empty(), "{q}");
        assert_eq!(before, restored.search(session, q, 10), "{q}");
    }
    let head: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_eq!(head["version"], json!(4));
    assert_eq!(head["format"], json!("context-compactor/memory-index"));

    assert_eq!(Index::restore(b"not json").err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    let mut future = head.clone();
    future["version"] = json!(5);
    let future = serde_json::to_vec(&future).unwrap_or_default();
    let err = Index::restore(&future).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(err.is_some_and(|e| e.message.contains("version 5")), "the error names the version");
}

#[test]
fn m4_recall_never_crosses_sessions() {
    let index = corpus();
    let a_ids: Vec<String> = index.enumerate("A", None, 100).map(|p| p.records).unwrap_or_default().into_iter().map(|r| r.id).collect();
    assert_eq!(a_ids.len(), 4);
    for q in [
        a_ids.join(" "),
        "A-1 Database migration 0042 orders customer_id".to_string(),
        "payment service HTTP 502 upstream gateway".to_string(),
        "缓存命中率下降".to_string(),
        "session A Bluebird".to_string(),
    ] {
        for h in index.search("B", &q, 20) {
            assert_eq!(h.record.session, "B", "query {q:?} leaked {h:?}");
        }
        for h in recall(&index, "B", &q, Some(20)).hits {
            assert!(h.id.starts_with("B-"), "recall {q:?} leaked {h:?}");
        }
    }
    assert!(index.search("nobody", "gateway", 5).is_empty());
}

#[test]
fn m4_enumerate_pages_deterministically_and_covers_every_record_once() {
    let mut index = Index::new();
    let records: Vec<MemoryRecord> = (0..23).map(|n| rec("s", 22 - n, &format!("record number {n} alpha"))).collect();
    assert!(index.add(records).is_ok());
    assert!(index.add(vec![rec("t", 0, "other scope alpha")]).is_ok());

    let walk = |size: usize| {
        let mut seen = Vec::new();
        let mut token: Option<String> = None;
        let mut pages = 0;
        loop {
            let page = index.enumerate("s", token.as_deref(), size).unwrap_or_else(|e| panic!("{e}"));
            assert!(page.records.len() <= size);
            seen.extend(page.records.into_iter().map(|r| r.id));
            pages += 1;
            match page.next {
                Some(t) => token = Some(t),
                None => break,
            }
            assert!(pages < 100);
        }
        (seen, pages)
    };
    let (first, pages) = walk(5);
    assert_eq!(pages, 5);
    assert_eq!(first.len(), 23);
    assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), 23, "each record once");
    assert!(first.iter().all(|id| id.starts_with("s-")));
    let (again, _) = walk(5);
    assert_eq!(first, again, "same order every time");
    let (whole, pages) = walk(1000);
    assert_eq!((whole, pages), (first.clone(), 1));
    // Scope order follows the source offsets.
    let expected: Vec<String> = (0..23).map(|n| format!("s-{n}")).collect();
    assert_eq!(first, expected);

    assert_eq!(index.enumerate("s", Some("garbage"), 5).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    let empty = index.enumerate("nobody", None, 5).unwrap_or_else(|e| panic!("{e}"));
    assert!(empty.records.is_empty() && empty.next.is_none());
}

#[test]
fn m4_drop_scope_removes_one_whole_session_only() {
    let mut index = corpus();
    assert_eq!(index.drop_scope("A"), 4);
    assert_eq!(index.len("A"), 0);
    assert!(index.search("A", "gateway", 10).is_empty());
    assert!(index.enumerate("A", None, 10).map(|p| p.records.is_empty()).unwrap_or(false));
    assert_eq!(index.len("B"), 2);
    assert!(!index.search("B", "gateway", 10).is_empty());
    assert_eq!(index.sessions(), vec!["B".to_string()]);
    assert_eq!(index.drop_scope("A"), 0);
}

#[test]
fn m2_recall_limit_defaults_to_5_and_clamps_to_20() {
    let mut index = Index::new();
    let records: Vec<MemoryRecord> = (0..30).map(|n| rec("s", n, &format!("alpha note {n}"))).collect();
    assert!(index.add(records).is_ok());
    let r = recall(&index, "s", "alpha", None);
    assert_eq!((r.limit, r.hits.len()), (5, 5));
    let r = recall(&index, "s", "alpha", Some(100));
    assert_eq!((r.limit, r.hits.len()), (20, 20));
    let r = recall(&index, "s", "alpha", Some(0));
    assert_eq!((r.limit, r.hits.len()), (1, 1));
    let r = recall_from_arguments(&index, "s", &json!({"query": "alpha", "limit": 50})).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.hits.len(), 20);
    let r = recall_from_arguments(&index, "s", &json!({"query": "alpha note 7"})).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.hits.len(), 5);
    assert_eq!(r.hits[0].id, "s-7");
    assert!(r.hits.windows(2).all(|w| w[0].score >= w[1].score), "best first");
    assert_eq!(r.hits[0].message_id, "msg-7");
    assert_eq!(r.hits[0].source_range, [7, 7]);
    let v = serde_json::to_value(&r.hits[0]).unwrap_or(Value::Null);
    for key in ["id", "content", "score", "messageId", "sourceRange", "kind"] {
        assert!(v.get(key).is_some(), "hit JSON lacks {key}: {v}");
    }
    for bad in [json!("alpha"), json!({"limit": 3}), json!({"query": 5}), json!({"query": "a", "limit": "x"})] {
        assert_eq!(recall_from_arguments(&index, "s", &bad).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    }
}

#[test]
fn m2_recall_returns_handles_of_tool_output() {
    let (messages, discarded, evicted) = sample();
    let mut index = Index::new();
    assert!(index.add(project("s1", &messages, &discarded, &evicted).records).is_ok());
    let r = recall(&index, "s1", "compiler warning unused variable module_42", None);
    let top = r.hits.first().cloned().unwrap_or_else(|| panic!("no hit"));
    assert_eq!(top.handle.as_deref(), Some("artifact#1"));
    assert_eq!(top.tool_name.as_deref(), Some("read_file"));
    assert_eq!(top.kind, RecordKind::ToolOutput);
    assert!(top.content.contains("module_42"));
    assert_eq!(top.source_range, [5, 5]);
}

fn check_schema(schema: &Value, lower: bool) {
    let (obj, string, integer) = if lower { ("object", "string", "integer") } else { ("OBJECT", "STRING", "INTEGER") };
    assert_eq!(schema["type"], json!(obj));
    assert_eq!(schema["properties"]["query"]["type"], json!(string));
    assert_eq!(schema["properties"]["limit"]["type"], json!(integer));
    assert_eq!(schema["properties"]["limit"]["minimum"], json!(1));
    assert_eq!(schema["properties"]["limit"]["maximum"], json!(20));
    assert_eq!(schema["required"], json!(["query"]));
}

#[test]
fn m2_recall_tool_definition_per_format() {
    let d = recall_tool_definition("openai-chat");
    assert_eq!(d["type"], json!("function"));
    assert_eq!(d["function"]["name"], json!("recall"));
    assert!(d["function"]["description"].is_string());
    check_schema(&d["function"]["parameters"], true);
    assert_eq!(d["function"]["parameters"]["properties"]["limit"]["default"], json!(5));

    let d = recall_tool_definition("openai-responses");
    assert_eq!(d["type"], json!("function"));
    assert_eq!(d["name"], json!("recall"));
    check_schema(&d["parameters"], true);

    let d = recall_tool_definition("anthropic");
    assert_eq!(d["name"], json!("recall"));
    assert!(d["description"].is_string());
    assert!(d.get("type").is_none());
    check_schema(&d["input_schema"], true);

    let d = recall_tool_definition("gemini");
    assert_eq!(d["name"], json!("recall"));
    check_schema(&d["parameters"], false);

    let d = recall_tool_definition("ai-sdk");
    assert_eq!(d["name"], json!("recall"));
    check_schema(&d["inputSchema"], true);

    assert!(recall_tool_definition("cobol").is_null());
}

#[test]
fn m3_host_vectors_of_declared_dimension() {
    assert_eq!(Index::with_dimension(0).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    let mut index = Index::with_dimension(4).unwrap_or_else(|e| panic!("{e}"));
    let wrong = index.add_with_vectors(vec![rec("s", 0, "a"), rec("s", 1, "b")], vec![vec![1.0, 0.0, 0.0, 0.0], vec![1.0, 0.0]]);
    assert_eq!(wrong.err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert_eq!(index.len("s"), 0, "a rejected batch stores nothing");
    let zero = index.add_with_vectors(vec![rec("s", 0, "a")], vec![vec![0.0; 4]]);
    assert_eq!(zero.err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert_eq!(index.add(vec![rec("s", 0, "a")]).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));

    let ok = index.add_with_vectors(
        vec![rec("s", 0, "north"), rec("s", 1, "east"), rec("t", 0, "north too")],
        vec![vec![0.0, 2.0, 0.0, 0.0], vec![3.0, 0.0, 0.0, 0.0], vec![0.0, 1.0, 0.0, 0.0]],
    );
    assert_eq!(ok.map(|r| r.added).ok(), Some(3));
    let hits = index.search_by_vector("s", &[0.1, 1.0, 0.0, 0.0], 5).unwrap_or_default();
    assert_eq!(hits.iter().map(|h| h.record.id.as_str()).collect::<Vec<_>>(), vec!["s-0", "s-1"]);
    assert!((hits[0].score - 0.995).abs() < 0.01);
    assert_eq!(index.search_by_vector("s", &[1.0, 0.0], 5).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert_eq!(index.search_by_vector("s", &[0.0; 4], 5).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(index.search("s", "north", 5).is_empty(), "text search needs the embedded embedder");

    let restored = Index::restore(&index.snapshot()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(restored.dimension(), 4);
    assert_eq!(restored.search_by_vector("s", &[0.1, 1.0, 0.0, 0.0], 5).unwrap_or_default(), hits);
}

#[test]
fn m4_m2_recall_from_store_hits_filters_foreign_sessions_dedupes_orders_and_clamps() {
    let hit = |session: &str, n: usize, score: f32| Hit { record: rec(session, n, &format!("text {n}")), score };
    // A misbehaving store: hits of other sessions, a duplicate, unsorted scores.
    let hits = vec![hit("A", 1, 0.2), hit("B", 1, 0.99), hit("A", 2, 0.9), hit("A", 1, 0.1), hit("A", 3, 0.9), hit("", 4, 1.0)];
    let r = recall_from_hits("A", "q", None, hits.clone());
    assert_eq!(r.limit, 5);
    let got: Vec<(String, f32)> = r.hits.iter().map(|h| (h.id.clone(), h.score)).collect();
    assert_eq!(got, vec![("A-2".to_string(), 0.9), ("A-3".to_string(), 0.9), ("A-1".to_string(), 0.2)]);
    let r = recall_from_hits("A", "q", Some(1), hits.clone());
    assert_eq!((r.limit, r.hits.len()), (1, 1));
    assert_eq!(recall_from_hits("A", "q", Some(0), hits.clone()).limit, 1);
    assert_eq!(recall_from_hits("A", "q", Some(500), hits.clone()).limit, 20);
    assert!(recall_from_hits("C", "q", None, hits).hits.is_empty());
}

#[test]
fn m1_record_ids_hash_scope_source_position_and_content() {
    let (messages, discarded, bodies) = sample();
    let batch = project("sess-x", &messages, &discarded, &bodies);
    assert!(!batch.records.is_empty());
    for r in &batch.records {
        let kind = match r.kind {
            RecordKind::Narrative => "narrative",
            RecordKind::ToolOutput => "tool_output",
            RecordKind::ToolInput => "tool_input",
            RecordKind::Instruction => "instruction",
        };
        let key = format!(
            "{}\0{kind}\0{}\0{}\0{}\0{}\0{}",
            r.session,
            r.message_id,
            r.source_range[0],
            r.call_id.as_deref().unwrap_or(""),
            r.byte_range[0],
            r.content
        );
        let want = format!("mem-{:016x}", context_compactor::transcript::fnv1a(key.as_bytes()));
        assert_eq!(r.id, want, "record {} of message {}", r.byte_range[0], r.message_id);
    }
    let parts = context_compactor::transcript::Fnv1a::new().write(b"ab").write(b"").write(b"c").finish();
    assert_eq!(parts, context_compactor::transcript::fnv1a(b"abc"));
}

#[test]
fn m1_consuming_projection_builds_the_same_batch_and_leaves_no_rows() {
    let (messages, discarded, bodies) = sample();
    let want = project("sess-x", &messages, &discarded, &bodies);
    let mut rows = messages.clone();
    let got = context_compactor::memory::try_project_consuming("sess-x", &mut rows, &discarded, &bodies).expect("projects");
    assert_eq!(got, want);
    assert!(rows.is_empty(), "the rows were handed on");
    // bad input: an error, and the rows stay as they were
    let mut rows = messages.clone();
    let bad = vec![EvictedBody { offset: 42, call_id: "c1".into(), tool_name: None, handle: None, body: "x".into() }];
    let err = context_compactor::memory::try_project_consuming("sess-x", &mut rows, &discarded, &bad).unwrap_err();
    assert_eq!(err.code, ErrorCode::MemoryFailed);
    assert_eq!(rows, messages);
}
