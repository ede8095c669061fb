//! Memory that finds things (M-1, M-3): tool-call arguments projected with what they
//! mention, user text beside tool results, BM25 over an inverted index fused with the
//! embedded vectors, whole and per-segment matching of paths and identifiers, and the
//! versioned snapshot that carries the index.

use context_compactor::error::ErrorCode;
use context_compactor::memory::{
    mentions, project, recall, render_arguments, Index, MemoryRecord, Ranking, RecallOptions, RecordKind, CONTEXT_BYTES, CONTEXT_PART_BYTES, CONTEXT_WEIGHT, SNAPSHOT_VERSION, SYNONYM_WEIGHT, VECTOR_WEIGHT,
};
use context_compactor::transcript::{Block, Message, Role};
use serde_json::{json, Value};

mod memory_common;
use memory_common::{call, ids, msg, rec, result, text};

fn edit_session() -> Vec<Message> {
    vec![
        msg("u0", Role::User, vec![text("Raise the HTTP timeout, it keeps failing.")]),
        msg(
            "a1",
            Role::Assistant,
            vec![
                text("I'll change the timeout."),
                call("toolu_1", "Edit", r#"{"file_path":"src/net/http_client.py","old_string":"TIMEOUT = 30","new_string":"TIMEOUT = 90"}"#),
                call("toolu_2", "Bash", r#"{"command":"pytest tests/test_client.py -q","timeout":120000}"#),
                call("toolu_3", "submit", "{}"),
            ],
        ),
        msg("u2", Role::User, vec![result("toolu_1", "The file src/net/http_client.py has been updated."), result("toolu_2", "3 passed"), text("Also: never push to main directly.")]),
        msg("a3", Role::Assistant, vec![text("Done.")]),
    ]
}

#[test]
fn m1_tool_call_arguments_are_projected_with_tool_call_id_role_and_mentions() {
    let batch = project("s", &edit_session(), &[0, 1, 2], &[]);
    let inputs: Vec<&MemoryRecord> = batch.records.iter().filter(|r| r.kind == RecordKind::ToolInput).collect();
    assert_eq!(inputs.len(), 2, "one record per call with arguments; `{{}}` gives none: {inputs:?}");
    let edit = inputs[0];
    assert_eq!(edit.tool_name.as_deref(), Some("Edit"));
    assert_eq!(edit.call_id.as_deref(), Some("toolu_1"));
    assert_eq!(edit.role, Role::Assistant);
    assert_eq!(edit.message_id, "a1");
    assert_eq!(edit.source_range, [1, 1]);
    assert_eq!(edit.content, "file_path: src/net/http_client.py\nold_string: TIMEOUT = 30\nnew_string: TIMEOUT = 90");
    assert!(edit.mentions.iter().any(|m| m == "src/net/http_client.py"), "{:?}", edit.mentions);
    let bash = inputs[1];
    assert_eq!(bash.tool_name.as_deref(), Some("Bash"));
    assert_eq!(bash.content, "command: pytest tests/test_client.py -q\ntimeout: 120000");
    assert!(bash.mentions.iter().any(|m| m == "tests/test_client.py"));
    // JSON: snake_case kind, mentions listed
    let v = serde_json::to_value(edit).unwrap_or(Value::Null);
    assert_eq!(v["kind"], json!("tool_input"));
    assert!(v["mentions"].as_array().is_some_and(|a| !a.is_empty()));
    // a record without mentions leaves the key out
    let plain = batch.records.iter().find(|r| r.message_id == "a1" && r.kind == RecordKind::Narrative);
    let pv = plain.map(|r| serde_json::to_value(r).unwrap_or(Value::Null)).unwrap_or(Value::Null);
    assert!(pv.get("mentions").is_none(), "{pv}");
}

#[test]
fn m1_user_text_beside_tool_results_is_projected_as_user_text() {
    let batch = project("s", &edit_session(), &[2], &[]);
    let narrative: Vec<&MemoryRecord> = batch.records.iter().filter(|r| r.kind == RecordKind::Narrative).collect();
    assert_eq!(narrative.len(), 1);
    assert_eq!(narrative[0].role, Role::User);
    assert_eq!(narrative[0].content, "Also: never push to main directly.");
    let outputs: Vec<&str> = batch.records.iter().filter(|r| r.kind == RecordKind::ToolOutput).map(|r| r.content.as_str()).collect();
    assert_eq!(outputs, vec!["The file src/net/http_client.py has been updated.", "3 passed"]);
    // a tool output also lists what its call named (after what it names itself)
    let passed = batch.records.iter().find(|r| r.content == "3 passed");
    assert_eq!(passed.map(|r| r.mentions.clone()), Some(vec!["tests/test_client.py".to_string()]));
    let mut index = Index::new();
    assert!(index.add(batch.records.clone()).is_ok());
    let hit = recall(&index, "s", "did test_client.py pass?", Some(1)).hits.into_iter().next();
    assert_eq!(hit.map(|h| h.content), Some("3 passed".to_string()), "found through its call's path");
    assert!(batch.records.iter().all(|r| !r.content.contains("never push") || r.kind == RecordKind::Narrative));
}

#[test]
fn m1_arguments_render_one_line_per_key_and_keep_non_objects_as_written() {
    assert_eq!(render_arguments(r#"{"a":"x\ny","b":[1,2],"c":{"d":true}}"#), "a: x\ny\nb: [1,2]\nc: {\"d\":true}");
    assert_eq!(render_arguments("{}"), "");
    assert_eq!(render_arguments("not json at all"), "not json at all");
    assert_eq!(render_arguments("[1,2]"), "[1,2]");
}

#[test]
fn m1_mentions_are_paths_urls_and_identifiers() {
    let m = mentions("see https://api.crossref.org/works/10.1038/x and /root/answer.json; call get_user_details or TimeDelta.serialize, not 3.5");
    assert_eq!(m, vec!["https://api.crossref.org/works/10.1038/x", "/root/answer.json", "get_user_details", "TimeDelta.serialize"]);
}

#[test]
fn m3_tool_inputs_are_recalled_by_what_they_touched() {
    let mut index = Index::new();
    let batch = project("s", &edit_session(), &[0, 1, 2], &[]);
    assert!(index.add(batch.records).is_ok());
    let top = |q: &str| recall(&index, "s", q, Some(1)).hits.first().map(|h| (h.content.clone(), h.tool_name.clone(), h.call_id.clone()));
    let (content, tool, call) = top("what did we set TIMEOUT to, 90?").unwrap_or_default();
    assert!(content.starts_with("file_path: src/net/http_client.py"), "{content}");
    assert_eq!((tool.as_deref(), call.as_deref()), (Some("Edit"), Some("toolu_1")));
    let two: Vec<Option<String>> = recall(&index, "s", "http_client.py", Some(2)).hits.into_iter().map(|h| h.call_id).collect();
    assert!(two.contains(&Some("toolu_1".to_string())), "the edit and its result name the file: {two:?}");
    let top3 = recall(&index, "s", "which file did we change the timeout in?", Some(3));
    assert!(top3.hits.iter().any(|h| h.call_id.as_deref() == Some("toolu_1") && h.tool_name.as_deref() == Some("Edit")), "{top3:?}");
    let (content, ..) = top("what test command did we run").unwrap_or_default();
    assert!(content.contains("pytest"), "{content}");
}

fn segments_index() -> Index {
    let mut index = Index::new();
    let records = vec![
        rec("s", 0, "opened src/foo/bar_baz.py to look at the parser"),
        rec("s", 1, "the bar is closed and baz is a word; nothing else here"),
        rec("s", 2, "wrote docs/guide.md about the release"),
        rec("s", 3, "called getUserDetails for mia_li_3668"),
        rec("s", 4, "fetched https://api.example.org/v2/items?page=3"),
        rec("s", 5, "foo fighters concert notes"),
    ];
    assert!(index.add(records).is_ok());
    index
}

#[test]
fn m3_paths_and_identifiers_match_whole_and_by_segment() {
    let index = segments_index();
    let first = |q: &str| index.search("s", q, 3).first().map(|h| h.record.id.clone()).unwrap_or_default();
    assert_eq!(first("bar_baz.py"), "s-0", "file name whole");
    assert_eq!(first("src/foo/bar_baz.py"), "s-0", "path whole");
    assert_eq!(first("bar_baz"), "s-0", "file stem");
    assert_eq!(first("bar baz py"), "s-0", "segments as words");
    assert!(ids(&index.search("s", "foo", 6)).contains(&"s-0".to_string()), "a directory segment");
    assert_eq!(first("user details"), "s-3", "camelCase parts");
    assert_eq!(first("getUserDetails"), "s-3", "camelCase whole");
    assert_eq!(first("mia_li_3668"), "s-3", "snake_case whole");
    assert_eq!(first("api.example.org items"), "s-4", "URL host and path segment");
    assert!(index.search("s", "zzzz quux", 5).is_empty(), "no shared term, no hit");
}

#[test]
fn m3_fused_ranking_is_reciprocal_rank_fusion_of_bm25_and_the_vectors() {
    let mut index = Index::new();
    let mut records = Vec::new();
    // BM25 prefers short records; the cosine of the IDF-weighted vectors prefers records
    // whose other words are common (they weigh little in the norm). Records with a few
    // rare words and records with many common ones disagree.
    let common = "c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12 c13 c14 c15 c16 c17 c18 c19 c20";
    let mut texts: Vec<String> = Vec::new();
    // enough records that a weak vector weight still moves one past a neighbour
    for i in 0..14 {
        let rare: Vec<String> = (0..i + 1).map(|k| format!("rare{i}x{k}")).collect();
        texts.push(format!("alpha {}", rare.join(" ")));
        texts.push(format!("alpha {}", common.split(' ').take(4 + i).collect::<Vec<_>>().join(" ")));
    }
    for _ in 0..14 {
        texts.push(common.to_string());
    }
    texts.push("unrelated words only".to_string());
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    for (i, t) in texts.iter().enumerate() {
        records.push(rec("s", i, t));
    }
    assert!(index.add(records).is_ok());
    let q = "alpha";
    let lexical = ids(&index.search_with("s", q, 50, &RecallOptions { ranking: Ranking::Lexical, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")));
    let vector = ids(&index.search_with("s", q, 50, &RecallOptions { ranking: Ranking::Vector, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")));
    let fused = index.search_with("s", q, 50, &RecallOptions { ranking: Ranking::Fused, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lexical.len(), 28, "every record holding alpha");
    assert_ne!(lexical, vector, "the two rankings disagree on this corpus (else the test proves nothing)");
    let rank = |list: &[String], id: &str| list.iter().position(|x| x == id).map(|p| 1.0 / (60.0 + p as f64 + 1.0)).unwrap_or(0.0);
    let mut expected: Vec<(f64, usize, String)> =
        lexical.iter().enumerate().map(|(i, id)| (rank(&lexical, id) + VECTOR_WEIGHT * rank(&vector, id), i, id.clone())).collect();
    expected.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let expected_ids: Vec<String> = expected.iter().map(|e| e.2.clone()).collect();
    assert_eq!(ids(&fused), expected_ids);
    assert_ne!(ids(&fused), lexical, "the vector rank changes the order here (else fusion is not tested)");
    for (h, e) in fused.iter().zip(&expected) {
        let want = (e.0 / ((1.0 + VECTOR_WEIGHT) / 61.0)) as f32;
        assert!((h.score - want).abs() < 1e-5, "score {} vs {want}", h.score);
        assert!(h.score > 0.0 && h.score <= 1.0);
    }
    // default search is the fused ranking
    assert_eq!(ids(&index.search("s", q, 50)), expected_ids);
}

#[test]
fn m3_function_words_do_not_decide_the_ranking() {
    let mut index = Index::new();
    let records = vec![
        rec("s", 0, "what did we do with the the the the what did we"),
        rec("s", 1, "the casadi solver converged"),
    ];
    assert!(index.add(records).is_ok());
    assert_eq!(ids(&index.search("s", "what did we do with the solver?", 1)), vec!["s-1"]);
    // a query of only function words still finds something
    assert_eq!(ids(&index.search("s", "what did we", 1)), vec!["s-0"]);
}

#[test]
fn m3_replacing_and_dropping_keep_the_postings_exact() {
    let mut index = segments_index();
    let mut changed = rec("s", 5, "now about quokkas instead");
    changed.id = "s-5".into();
    let report = index.add(vec![changed]);
    assert_eq!(report.map(|r| (r.added, r.replaced)).ok(), Some((0, 1)));
    assert_eq!(index.len("s"), 6);
    assert!(!ids(&index.search("s", "fighters concert", 5)).contains(&"s-5".to_string()), "old terms gone");
    assert_eq!(ids(&index.search("s", "quokkas", 5)), vec!["s-5"]);
    // the snapshot of an index with a replaced record equals that of one built fresh
    let mut fresh = Index::new();
    let restored = Index::restore(&index.snapshot()).unwrap_or_default();
    let page = index.enumerate("s", None, 100).map(|p| p.records).unwrap_or_default();
    assert!(fresh.add(page).is_ok());
    assert_eq!(fresh.snapshot(), index.snapshot());
    assert_eq!(restored.snapshot(), index.snapshot());
}

#[test]
fn m3_snapshot_v3_carries_the_inverted_index() {
    let index = segments_index();
    let bytes = index.snapshot();
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_eq!(v["version"], json!(SNAPSHOT_VERSION));
    assert_eq!(SNAPSHOT_VERSION, 4);
    let lexical = &v["lexical"][0];
    assert_eq!(lexical["session"], json!("s"));
    let terms = lexical["terms"].as_array().cloned().unwrap_or_default();
    let bar_baz = terms.iter().find(|t| t[0] == json!("bar_baz.py")).cloned().unwrap_or(Value::Null);
    assert_eq!(bar_baz[1], json!([0, 4]), "position 0 (first record in scope order), count 1 (4 quarters)");
    let words: Vec<&str> = terms.iter().filter_map(|t| t[0].as_str()).collect();
    let mut sorted = words.clone();
    sorted.sort_unstable();
    assert_eq!(words, sorted, "terms in byte order");

    // loaded as written: a restored index answers the same
    let restored = Index::restore(&bytes).unwrap_or_default();
    for q in ["bar_baz.py", "user details", "release guide", "foo"] {
        assert_eq!(restored.search("s", q, 5), index.search("s", q, 5), "{q}");
    }
    // a malformed inverted index is refused with a typed error
    let mut broken = v.clone();
    broken["lexical"][0]["terms"][0][1] = json!([99, 1]);
    let err = Index::restore(&serde_json::to_vec(&broken).unwrap_or_default()).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(err.is_some_and(|e| e.message.contains("bad posting")));
    let mut stray = v.clone();
    stray["lexical"][0]["session"] = json!("nobody");
    assert_eq!(Index::restore(&serde_json::to_vec(&stray).unwrap_or_default()).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    // without its lexical part the records are indexed again, to the same index
    let mut bare = v.clone();
    if let Some(o) = bare.as_object_mut() {
        o.remove("lexical");
    }
    let rebuilt = Index::restore(&serde_json::to_vec(&bare).unwrap_or_default()).unwrap_or_default();
    assert_eq!(rebuilt.snapshot(), bytes);
}

#[test]
fn m3_version_1_snapshots_still_restore() {
    // The shape version 1 wrote: records only, embedded vectors recomputed on restore.
    let records: Vec<Value> = ["opened src/foo/bar_baz.py to look at the parser", "wrote docs/guide.md about the release"]
        .iter()
        .enumerate()
        .map(|(i, t)| json!({ "record": serde_json::to_value(rec("s", i, t)).unwrap_or(Value::Null) }))
        .collect();
    let v1 = json!({ "format": "context-compactor/memory-index", "version": 1, "embedder": "hash-idf-v1", "dimension": 512, "records": records });
    let index = Index::restore(&serde_json::to_vec(&v1).unwrap_or_default()).unwrap_or_else(|e| panic!("v1 restore: {e}"));
    assert_eq!(index.len("s"), 2);
    assert_eq!(ids(&index.search("s", "bar_baz.py", 1)), vec!["s-0"]);
    let again: Value = serde_json::from_slice(&index.snapshot()).unwrap_or(Value::Null);
    assert_eq!(again["version"], json!(4), "a migrated index writes the current version");
    // a version this build does not know is a typed error naming it
    let mut v9 = v1.clone();
    v9["version"] = json!(9);
    let err = Index::restore(&serde_json::to_vec(&v9).unwrap_or_default()).err();
    assert_eq!(err.as_ref().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(err.is_some_and(|e| e.message.contains("version 9") && e.message.contains("1 to 4")));
}

#[test]
fn m2_a_passage_stored_twice_is_recalled_once() {
    let mut index = Index::new();
    let records = vec![
        rec("s", 0, "user_id: omar_davis_3817"),
        rec("s", 1, "user_id: omar_davis_3817"),
        rec("s", 2, "user_id: omar_davis_3817"),
        rec("s", 3, "Omar Davis lives at 281 Spruce Street"),
    ];
    assert!(index.add(records).is_ok());
    for ranking in [Ranking::Fused, Ranking::Lexical, Ranking::Vector] {
        let got = ids(&index.search_with("s", "omar davis", 5, &RecallOptions { ranking, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(got.len(), 2, "{ranking:?}: {got:?}");
        assert!(got.contains(&"s-3".to_string()) && got.contains(&"s-0".to_string()), "{ranking:?}: the first copy stands for all: {got:?}");
    }
}

#[test]
fn m1_media_of_a_folded_user_row_are_named_in_memory() {
    // issue 12 item 6: an image folded with its row is named in its record, beside the text
    let image = Block::Media { kind: context_compactor::transcript::MediaKind::Image, bytes: 5120, inline: true, name: None };
    let pdf = Block::Media { kind: context_compactor::transcript::MediaKind::Document, bytes: 40, inline: false, name: None };
    let rows = vec![
        msg("u0", Role::User, vec![text("Here is the failing screen."), image, pdf]),
        msg("a1", Role::Assistant, vec![text("I see the error dialog.")]),
    ];
    let batch = project("s", &rows, &[0, 1], &[]);
    let user = batch.records.iter().find(|r| r.message_id == "u0").expect("a record for the user row");
    assert_eq!(user.content, "Here is the failing screen.\n[image attached: 5120 bytes inline]\n[document attached: 40 bytes, by reference]");
    // a row with nothing but an image still leaves a record naming it
    let only = vec![msg("u0", Role::User, vec![Block::Media { kind: context_compactor::transcript::MediaKind::Image, bytes: 9, inline: false, name: None }])];
    let batch = project("s", &only, &[0], &[]);
    assert_eq!(batch.records.len(), 1);
    assert_eq!(batch.records[0].content, "[image attached: 9 bytes, by reference]");
}

#[test]
fn m3_version_2_snapshots_restore_by_indexing_their_records_again() {
    // Version 2 counted every term once (no quarters, no context terms). Its postings
    // are not loaded as written: the records are indexed again, to the index this build
    // makes of them.
    let index = segments_index();
    let v3: Value = serde_json::from_slice(&index.snapshot()).unwrap_or(Value::Null);
    let mut v2 = v3.clone();
    v2["version"] = json!(2);
    if let Some(terms) = v2["lexical"][0]["terms"].as_array_mut() {
        for t in terms.iter_mut() {
            let flat: Vec<Value> = t[1]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .chunks(2)
                .flat_map(|p| [p[0].clone(), json!((p[1].as_u64().unwrap_or(4) / 4).max(1))])
                .collect();
            t[1] = Value::Array(flat);
        }
    }
    let restored = Index::restore(&serde_json::to_vec(&v2).unwrap_or_default()).unwrap_or_else(|e| panic!("v2 restore: {e}"));
    assert_eq!(restored.snapshot(), index.snapshot(), "a v2 snapshot becomes this build's index of the same records");
    for q in ["bar_baz.py", "user details", "release guide"] {
        assert_eq!(ids(&restored.search("s", q, 5)), ids(&index.search("s", q, 5)), "{q}");
    }
}

#[test]
fn m1_records_carry_what_led_to_them_as_context() {
    let long_request = format!("Please fix the flaky upload test {}", "and keep the retry logic ".repeat(30));
    let messages = vec![
        msg("u0", Role::User, vec![text(&long_request)]),
        msg("a1", Role::Assistant, vec![text("Looking at the uploader."), call("toolu_9", "Bash", r#"{"command":"pytest tests/test_upload.py","description":"Run the upload tests"}"#)]),
        msg("t2", Role::Tool, vec![result("toolu_9", "1 failed, 12 passed")]),
    ];
    let batch = project("s", &messages, &[0, 1, 2], &[]);
    let of = |kind: RecordKind, role: Role| batch.records.iter().find(|r| r.kind == kind && r.role == role).cloned();
    let user = of(RecordKind::Narrative, Role::User).unwrap_or_else(|| rec("x", 0, ""));
    assert_eq!(user.context, None, "the person's own text has no context");
    let output = of(RecordKind::ToolOutput, Role::Tool).unwrap_or_else(|| rec("x", 0, ""));
    assert_eq!(
        output.context.as_deref(),
        Some("Looking at the uploader.\npytest tests/test_upload.py\nRun the upload tests"),
        "a result: what the agent said on the call's row, then the call's argument values"
    );
    let input = of(RecordKind::ToolInput, Role::Assistant).unwrap_or_else(|| rec("x", 0, ""));
    let asked = input.context.clone().unwrap_or_default();
    assert!(asked.starts_with("Looking at the uploader.\nPlease fix the flaky upload test"), "a call: its row's text, then the request before it: {asked}");
    let request_part = asked.split_once('\n').map_or("", |(_, r)| r);
    assert!(request_part.len() <= CONTEXT_PART_BYTES && long_request.len() > CONTEXT_PART_BYTES, "each part clipped to {CONTEXT_PART_BYTES} bytes");
    assert!(asked.len() <= CONTEXT_BYTES);
    let answer = of(RecordKind::Narrative, Role::Assistant).unwrap_or_else(|| rec("x", 0, ""));
    assert_eq!(answer.context.as_deref(), Some(request_part), "assistant text: the request it answers");
    // the JSON shape names it `context` and omits it when absent
    let json = serde_json::to_value(&output).unwrap_or(Value::Null);
    assert!(json["context"].as_str().is_some_and(|c| c.contains("Run the upload tests")));
    assert!(serde_json::to_value(&user).unwrap_or(Value::Null).get("context").is_none());
}

#[test]
fn m3_context_terms_are_found_at_a_quarter_weight() {
    assert!((CONTEXT_WEIGHT - 0.25).abs() < 1e-12);
    let mut answered = rec("s", 0, "Exit code 1 externally managed environment");
    answered.context = Some("command: pip install casadi".to_string());
    let named = rec("s", 1, "casadi is a solver for nonlinear optimisation problems in python");
    let other = rec("s", 2, "wrote the report to disk");
    let mut index = Index::new();
    index.add(vec![answered, named, other]).unwrap_or_default();
    // the result is found by what its call said, below a record holding the word itself
    assert_eq!(ids(&index.search_with("s", "casadi", 5, &RecallOptions { ranking: Ranking::Lexical, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))), vec!["s-1", "s-0"]);
    // context is indexed, never returned as the passage
    let hits = index.search("s", "pip install", 5);
    assert_eq!(ids(&hits), vec!["s-0"]);
    assert_eq!(hits.first().map(|h| h.record.content.as_str()), Some("Exit code 1 externally managed environment"));
}

#[test]
fn m3_query_synonyms_bridge_general_words_at_half_weight() {
    assert!((SYNONYM_WEIGHT - 0.5).abs() < 1e-12);
    let mut index = Index::new();
    index
        .add(vec![
            rec("s", 0, "command: mkdir -p /root/workspace"),
            rec("s", 1, "listed the folder contents"),
            rec("s", 2, "the dob field reads 1950-06-24"),
            rec("s", 3, "unrelated note about the weather"),
        ])
        .unwrap_or_default();
    // "folder" also looks for directory / dir / mkdir, below the word itself
    assert_eq!(ids(&index.search_with("s", "which folder did we make?", 5, &RecallOptions { ranking: Ranking::Lexical, ..Default::default() }).unwrap_or_else(|e| panic!("{e}"))), vec!["s-1", "s-0"]);
    assert_eq!(ids(&index.search("s", "when was she born?", 5)), vec!["s-2"]);
    // the vector ranking alone takes the query as written (no synonyms)
    assert!(index.search_with("s", "born", 5, &RecallOptions { ranking: Ranking::Vector, ..Default::default() }).unwrap_or_else(|e| panic!("{e}")).is_empty());
}
