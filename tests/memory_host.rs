//! A host-vector index ranks by BM25 and the host's vectors, fused (M-3, issue 13 item 5):
//! relative score fusion weighted by `alpha` (HOST_VECTOR_ALPHA by default), BM25 over the
//! same inverted index as the embedded index, cosines min-max scaled, a degenerate vector
//! list ignored; the vectors alone and BM25 alone on request.

use context_compactor::error::ErrorCode;
use context_compactor::memory::{recall_with_vector, Index, Ranking, HOST_VECTOR_ALPHA};

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
    ids(&index.search_with_vector("s", query, vector, 5, ranking, alpha).unwrap_or_else(|e| panic!("{e}")))
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
    let r = recall_with_vector(&index, "s", "where is the deploy key kept", &NEAR_LUNCH, Some(5)).unwrap_or_else(|e| panic!("{e}"));
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
        let e = index.search_with_vector("s", "deploy key", &NEAR_LUNCH, 5, Ranking::Fused, Some(bad));
        assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "alpha {bad}");
    }
    let e = index.search_with_vector("s", "deploy key", &[1.0, 0.0], 5, Ranking::Fused, None);
    assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "wrong dimension");
    let e = Index::new().search_with_vector("s", "deploy key", &NEAR_LUNCH, 5, Ranking::Fused, None);
    assert_eq!(e.err().map(|e| e.code), Some(ErrorCode::MemoryFailed), "embedded index");
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
            back.search_with_vector("s", q, &NEAR_LUNCH, 5, Ranking::Fused, None).ok(),
            index.search_with_vector("s", q, &NEAR_LUNCH, 5, Ranking::Fused, None).ok(),
            "{q}"
        );
    }
    assert_eq!(back.snapshot(), index.snapshot());
}
