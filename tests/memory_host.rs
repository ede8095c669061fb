//! A host-vector index ranks by BM25 and the host's vectors, fused (M-3, issue 13 item 5):
//! relative score fusion weighted by `alpha` (HOST_VECTOR_ALPHA by default), BM25 over the
//! same inverted index as the embedded index, cosines min-max scaled, a degenerate vector
//! list ignored; the vectors alone and BM25 alone on request.

use context_compactor::error::ErrorCode;
use context_compactor::memory::{recall_with, Index, Ranking, RecallOptions, HOST_VECTOR_ALPHA};

mod memory_common;
use memory_common::{ids, rec};

/// Three records; the host's vectors put "lunch" nearest to the query vector below.
fn index() -> Index {
    let mut index = Index::with_dimension(4).unwrap_or_else(|e| panic!("{e}"));
    let added = index.add_with_vectors(
        vec![
            rec("s", 0, "the deploy key lives in vault path secret/ci"),
            rec("s", 1, "lunch order was falafel"),
            rec("s", 2, "the weather is sunny"),
            rec("t", 0, "deploy key of another session"),
        ],
        vec![vec![1.0, 0.0, 0.0, 0.0], vec![0.0, 1.0, 0.0, 0.0], vec![0.0, 0.0, 1.0, 0.0], vec![1.0, 0.0, 0.0, 0.0]],
    );
    assert_eq!(added.map(|r| r.added).ok(), Some(4));
    index
}

/// A query vector nearest to the lunch record, a little toward the deploy-key one.
const NEAR_LUNCH: [f32; 4] = [0.3, 1.0, 0.2, 0.0];

fn search(index: &Index, query: &str, vector: &[f32], ranking: Ranking, alpha: Option<f64>) -> Vec<String> {
    ids(&index.search_with("s", query, 5, &RecallOptions { ranking, vector: Some(vector), alpha, exact: false }).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn m3_host_index_fuses_bm25_so_the_record_sharing_the_words_comes_first() {
    let index = index();
    // the vectors alone prefer the lunch record
    assert_eq!(search(&index, "where is the deploy key kept", &NEAR_LUNCH, Ranking::Vector, None)[0], "s-1");
    // fused (the default recall): BM25's evidence for s-0 outweighs the vectors at alpha 0.2
    let fused = search(&index, "where is the deploy key kept", &NEAR_LUNCH, Ranking::Fused, None);
    assert_eq!(fused[0], "s-0", "{fused:?}");
    assert!(fused.iter().all(|id| id.starts_with("s-")), "never another session: {fused:?}");
    let r = recall_with(&index, "s", "where is the deploy key kept", Some(5), &RecallOptions { vector: Some(&NEAR_LUNCH), ..Default::default() }).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.hits.first().map(|h| h.id.as_str()), Some("s-0"), "recall on a host index is the fused ranking");
    assert!(r.hits.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
    assert_eq!(r.hits.first().map(|h| h.score), Some(1.0), "scores over the best record's");
    // BM25 alone finds only the record sharing a term
    assert_eq!(search(&index, "where is the deploy key kept", &NEAR_LUNCH, Ranking::Lexical, None), vec!["s-0"]);
}

#[test]
fn m3_host_index_finds_a_record_sharing_no_word_by_its_vector() {
    let index = index();
    // "midday meal" shares no term with any record: only the vector finds lunch
    let fused = search(&index, "midday meal", &NEAR_LUNCH, Ranking::Fused, None);
    assert_eq!(fused.first().map(String::as_str), Some("s-1"), "{fused:?}");
    assert!(search(&index, "midday meal", &NEAR_LUNCH, Ranking::Lexical, None).is_empty());
}

#[test]
fn m3_host_alpha_weighs_the_vectors_against_bm25() {
    let index = index();
    const { assert!(HOST_VECTOR_ALPHA > 0.0 && HOST_VECTOR_ALPHA < 0.5) };
    // alpha 1: the vectors' order; alpha 0: BM25's (only the record sharing a term)
    assert_eq!(search(&index, "where is the deploy key kept", &NEAR_LUNCH, Ranking::Fused, Some(1.0))[0], "s-1");
    assert_eq!(search(&index, "where is the deploy key kept", &NEAR_LUNCH, Ranking::Fused, Some(0.0)), vec!["s-0"]);
    for bad in [-0.1, 1.5, f64::NAN] {
        let e = index.search_with("s", "deploy key", 5, &RecallOptions { vector: Some(&NEAR_LUNCH), alpha: Some(bad), ..Default::default() });
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "alpha {bad}");
    }
    let e = index.search_with("s", "deploy key", 5, &RecallOptions { vector: Some(&[1.0, 0.0]), ..Default::default() });
    assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "wrong dimension");
    let e = Index::new().search_with("s", "deploy key", 5, &RecallOptions { vector: Some(&NEAR_LUNCH), ..Default::default() });
    assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "embedded index");
    let e = index.search_with("s", "deploy key", 5, &RecallOptions::default());
    assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "a host-vector index without a query vector");
}

#[test]
fn m3_host_vectors_that_are_all_alike_add_nothing_to_the_fusion() {
    // an embedder that knows none of the words gives every text the same vector
    let mut index = Index::with_dimension(2).unwrap_or_else(|e| panic!("{e}"));
    let same = vec![0.6, 0.8];
    let recs = vec![rec("s", 0, "alpha record"), rec("s", 1, "beta record"), rec("s", 2, "gamma deploy key")];
    index.add_with_vectors(recs, vec![same.clone(), same.clone(), same.clone()]).unwrap_or_else(|e| panic!("{e}"));
    // only BM25 tells them apart: the one record sharing the words, nothing else
    assert_eq!(search(&index, "deploy key", &same, Ranking::Fused, Some(0.5)), vec!["s-2"]);
}

#[test]
fn m3_host_index_snapshot_restores_the_fused_ranking() {
    let index = index();
    let back = Index::restore(&index.snapshot()).unwrap_or_else(|e| panic!("{e}"));
    for q in ["where is the deploy key kept", "midday meal"] {
        assert_eq!(
            back.search_with("s", q, 5, &RecallOptions { vector: Some(&NEAR_LUNCH), ..Default::default() }).ok(),
            index.search_with("s", q, 5, &RecallOptions { vector: Some(&NEAR_LUNCH), ..Default::default() }).ok(),
            "{q}"
        );
    }
    assert_eq!(back.snapshot(), index.snapshot());
}

// ---------- the partition (M-3, issue 13 item 5: "the index, not a scan") -----------------

use context_compactor::memory::ivf::{MIN_RECORDS, PROBE_CANDIDATES};

const DIM: usize = 16;

/// SplitMix64: deterministic pseudo-random numbers for test vectors.
fn next(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32 - 0.5
}

/// `n` records in session `s` whose vectors lie around 64 random directions (topics),
/// words `topic<t> note<i>`; record `s-target` (lunch, no shared word with "midday
/// meal") sits on a direction of its own, `TARGET`.
fn big(n: usize) -> (Index, Vec<f32>) {
    let mut state = 7u64;
    let topics: Vec<Vec<f32>> = (0..64).map(|_| (0..DIM).map(|_| next(&mut state)).collect()).collect();
    let mut records = Vec::with_capacity(n + 1);
    let mut vectors = Vec::with_capacity(n + 1);
    for i in 0..n {
        let t = i % topics.len();
        records.push(rec("s", i, &format!("topic{t} note{i}")));
        vectors.push(topics[t].iter().map(|x| x + 0.15 * next(&mut state)).collect());
    }
    let target: Vec<f32> = (0..DIM).map(|_| next(&mut state)).collect();
    let mut r = rec("s", n, "lunch order was falafel");
    r.id = "s-target".into();
    records.push(r);
    vectors.push(target.clone());
    let mut index = Index::with_dimension(DIM).unwrap_or_else(|e| panic!("{e}"));
    index.add_with_vectors(records, vectors).unwrap_or_else(|e| panic!("{e}"));
    (index, target)
}

#[test]
fn m3_host_partition_finds_a_record_sharing_no_word_through_the_index() {
    let (index, target) = big(MIN_RECORDS * 2);
    let near: Vec<f32> = target.iter().map(|x| x + 0.02).collect();
    let probe = index.partition_probe("s", &near).unwrap_or_else(|e| panic!("{e}"));
    assert!(probe.is_some(), "a session of {} records is partitioned", MIN_RECORDS * 2);
    // "midday meal" shares no term with any record: BM25 has nothing, the index finds lunch
    assert!(search(&index, "midday meal", &near, Ranking::Lexical, None).is_empty());
    for ranking in [Ranking::Fused, Ranking::Vector] {
        let got = search(&index, "midday meal", &near, ranking, None);
        assert_eq!(got.first().map(String::as_str), Some("s-target"), "{ranking:?}: {got:?}");
    }
    // the index and the exact scan agree on this clear case
    let exact = index.search_with("s", "midday meal", 5, &RecallOptions { vector: Some(&near), exact: true, ..Default::default() });
    assert_eq!(exact.map(|h| ids(&h)).ok(), Some(search(&index, "midday meal", &near, Ranking::Fused, None)));
}

#[test]
fn m3_host_partition_bounds_the_candidates_whatever_the_session_size() {
    let (index, target) = big(MIN_RECORDS * 4);
    let Some((lists, candidates)) = index.partition_probe("s", &target).unwrap_or_else(|e| panic!("{e}")) else {
        panic!("no partition")
    };
    assert!(lists >= 8, "{lists} lists");
    assert!(candidates >= PROBE_CANDIDATES.min(MIN_RECORDS * 4), "{candidates}");
    // the nearest lists until PROBE_CANDIDATES are held: far fewer than the session's
    assert!(candidates < MIN_RECORDS * 4 / 2, "{candidates} of {} records read: a scan, not an index", MIN_RECORDS * 4);
    // a small session has no partition: its exact scan is cheaper
    let small = index_small();
    assert_eq!(small.partition_probe("s", &NEAR_LUNCH).ok(), Some(None));
    // a bad query vector fails as the search does
    assert_eq!(index.partition_probe("s", &[1.0]).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
}

fn index_small() -> Index {
    index()
}

#[test]
fn m3_host_snapshot_v4_keeps_the_partition_and_a_v3_host_snapshot_still_restores() {
    let (index, target) = big(MIN_RECORDS + 100);
    let bytes = index.snapshot();
    let json: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    assert_eq!(json["version"], 4);
    let part = &json["ivf"][0];
    assert_eq!(part["session"], "s");
    assert_eq!(part["lists"].as_array().map(Vec::len), Some(MIN_RECORDS + 101), "one list number per record");
    let back = Index::restore(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.snapshot(), bytes, "the partition is loaded as written");
    let q = ["midday meal", "topic3 note3"];
    for query in q {
        assert_eq!(
            back.search_with("s", query, 5, &RecallOptions { vector: Some(&target), ..Default::default() }).ok(),
            index.search_with("s", query, 5, &RecallOptions { vector: Some(&target), ..Default::default() }).ok(),
            "{query}"
        );
    }
    // the same index as version 3 wrote it (no partitions): restored, partitioned again
    let mut old = json.clone();
    old["version"] = 3.into();
    if let Some(o) = old.as_object_mut() {
        o.remove("ivf");
    }
    let v3 = Index::restore(&serde_json::to_vec(&old).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(v3.partition_probe("s", &target).ok().flatten().is_some());
    assert_eq!(v3.search_with("s", "midday meal", 1, &RecallOptions { vector: Some(&target), ..Default::default() }).map(|h| ids(&h)).ok(), Some(vec!["s-target".to_string()]));
    // a malformed partition is refused with memory_failed, naming it
    let mut bad = json.clone();
    bad["ivf"][0]["lists"][0] = 999.into();
    let e = Index::restore(&serde_json::to_vec(&bad).unwrap_or_default()).err();
    assert_eq!(e.as_ref().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    assert!(e.map(|e| e.message).unwrap_or_default().contains("ivf[0]"));
    let mut bad = json;
    bad["ivf"][0]["centroids"][0] = serde_json::json!([0, 0, 0]);
    assert_eq!(Index::restore(&serde_json::to_vec(&bad).unwrap_or_default()).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
}

#[test]
fn m3_a_version_3_host_snapshot_written_before_the_partition_restores() {
    // bytes as version 3 wrote them for a host index (records and vectors, no lexical, no ivf)
    let one = 1.0f32.to_bits();
    let v3 = format!(
        r#"{{"format":"context-compactor/memory-index","version":3,"embedder":"host","dimension":2,"records":[{{"record":{{"id":"s-0","session":"s","messageId":"m0","role":"assistant","sourceRange":[0,0],"byteRange":[0,23],"kind":"narrative","content":"lunch order was falafel"}},"vector":[0,{one}]}}]}}"#
    );
    let index = Index::restore(v3.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(search(&index, "midday meal", &[0.0, 1.0], Ranking::Vector, None), vec!["s-0"]);
    assert_eq!(search(&index, "falafel", &[1.0, 0.0], Ranking::Lexical, None), vec!["s-0"]);
    let again: serde_json::Value = serde_json::from_slice(&index.snapshot()).unwrap_or_default();
    assert_eq!(again["version"], 4);
}
