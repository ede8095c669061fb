//! The embedded index (M-3, M-4): session-scoped records with an inverted index ranked
//! by BM25 and by the embedded vectors, fused; deterministic paging, atomic scope
//! removal and a versioned snapshot.
//!
//! Each session is its own scope with its own vocabulary, postings and document
//! frequencies, so scores in one session never depend on another session's records,
//! and no operation but [`Index::snapshot`] ever reads across scopes.
//!
//! A record's terms are its content's, its mentions' and its tool name's (whole
//! weight) and its `context`'s ([`CONTEXT_WEIGHT`]: what led to it, e.g. the call a
//! tool output answers).
//!
//! Ranking ([`Ranking::Fused`], the default): the query's terms ([`index_terms`], with
//! English and Chinese function words dropped while other terms remain, plus the
//! synonyms of a small general table at [`SYNONYM_WEIGHT`]) are looked up in the
//! scope's postings and every record holding one is scored by BM25 (k1 1.2, b 0.75,
//! each term's part scaled by its query weight). The best [`CANDIDATES`] of them are ranked a second time by the cosine of
//! their embedded vectors (the hashed, IDF-weighted bag of words of [`super::embed`])
//! with the query's, and the two ranks are fused by weighted reciprocal rank fusion
//! (k 60; `1 / (k + bm25 rank) + VECTOR_WEIGHT / (k + vector rank)`). A
//! record that shares no term with the query is not a candidate: the work is bounded by
//! the postings of the query's terms, not by the size of the scope.
//!
//! A host-vector index ([`Index::with_dimension`]) keeps the same inverted index, and
//! its fused ranking ([`Index::search_with`]) is relative score fusion of BM25 and
//! the host vectors' cosine, weighted by `alpha` ([`HOST_VECTOR_ALPHA`]): there a record
//! sharing no term with the query is found by its vector. From [`ivf::MIN_RECORDS`]
//! records a session keeps an inverted-file partition of its vectors ([`super::ivf`]): a
//! query computes the cosines of the lists nearest to it (about
//! [`ivf::PROBE_CANDIDATES`] records) and of the BM25 candidates only, not of every
//! record.

use super::embed::{self, DEFAULT_DIMENSION, EMBEDDER_ID};
use super::ivf::{self, Ivf};
use super::mentions::{index_terms, index_terms_counted};
use super::MemoryRecord;
use crate::error::{Error, ErrorCode, Result};
use crate::sorted::SortedMap;
use crate::transcript::fnv1a;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Largest dimension an index accepts (host vectors and snapshots).
pub const MAX_DIMENSION: usize = 65_536;

/// Scores at or below this are not hits (unrelated texts, hash-collision noise).
const MIN_SCORE: f32 = 1e-6;

/// BM25 term-frequency saturation.
const K1: f64 = 1.2;
/// BM25 length normalisation.
const B: f64 = 0.75;
/// Reciprocal-rank-fusion constant.
const RRF_K: f64 = 60.0;
/// Weight of the vector rank against the BM25 rank (1) in the fusion. Chosen on the
/// tuning half of the memory benchmark's probes (docs/memory.md): BM25 alone found more
/// than the vectors alone; with context terms and synonyms, 0.1 did better there than
/// 0.25 (the earlier choice), 0.5 or an equal weight.
pub const VECTOR_WEIGHT: f64 = 0.1;
/// How many of the best BM25 records the vector ranking re-ranks (fused ranking), and
/// how many of the best records by host-vector cosine a host-vector index fuses.
pub const CANDIDATES: usize = 100;
/// Default weight of the host vectors in a host-vector index's fused ranking
/// ([`Index::search_with`], relative score fusion: `alpha * cosine' + (1 - alpha)
/// * bm25'`, the cosines min-max scaled over their candidates, BM25 over its best).
/// Chosen on the tuning half
/// of the memory benchmark's probes with an averaged word-vector embedder
/// (docs/memory.md): 0.2 did as well as BM25 alone there at 5 and better than 0.3 to
/// 0.75; a stronger embedder may want more (the `alpha` option).
pub const HOST_VECTOR_ALPHA: f64 = 0.2;

/// Snapshot `format` tag.
const SNAPSHOT_FORMAT: &str = "context-compactor/memory-index";
/// Version [`Index::snapshot`] writes (4: a host-vector index's partitions, `ivf`;
/// 3: posting counts in [`TF_UNIT`]ths, records with `context`). Versions 1 (records
/// only) and 2 (postings of whole counts, made before context terms) are still read;
/// they are migrated by indexing their records again, so their rankings are this
/// version's. A version-3 embedded snapshot's postings are loaded as written; a
/// host-vector snapshot without partitions (version 3 or earlier) has them trained
/// again from its vectors.
pub const SNAPSHOT_VERSION: u32 = 4;
const HOST_EMBEDDER_ID: &str = "host";

/// Who embeds the records of an index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmbedderKind {
    /// The embedded hashed bag-of-words embedder: [`Index::add`] and [`Index::search`].
    Embedded,
    /// Vectors supplied by the host: [`Index::add_with_vectors`] and
    /// [`Index::search_by_vector`].
    Host,
}

/// How [`Index::search_with`] orders the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ranking {
    /// BM25 over the inverted index, its best [`CANDIDATES`] re-ranked by the embedded
    /// vectors, both ranks fused by weighted reciprocal rank fusion ([`VECTOR_WEIGHT`]).
    /// Score: the fused score over the best possible one (first in both), in `(0, 1]`.
    #[default]
    Fused,
    /// BM25 alone. Score: BM25 over the best hit's BM25, in `(0, 1]`.
    Lexical,
    /// Cosine of the embedded vectors alone, over every record sharing a term with the
    /// query (the engine's ranking before the inverted index; for comparison). Score:
    /// the cosine, in `(0, 1]`.
    Vector,
}

impl Ranking {
    /// `"fused"`, `"lexical"`, `"vector"` -> the ranking; anything else `None`.
    pub fn parse(name: &str) -> Option<Ranking> {
        match name {
            "fused" => Some(Ranking::Fused),
            "lexical" | "bm25" => Some(Ranking::Lexical),
            "vector" => Some(Ranking::Vector),
            _ => None,
        }
    }
}

/// How one search ranks and reads a session: the options of [`Index::search_with`] and
/// [`super::recall_with`] (M-2, M-3). `RecallOptions::default()`: the fused ranking, no
/// host vector, the default `alpha`, through the partition.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecallOptions<'a> {
    /// Which ranking orders the records ([`Ranking::Fused`] by default).
    pub ranking: Ranking,
    /// The host's embedding of the query ([`Index::dimension`] components): needed by a
    /// host-vector index, refused by an embedded one.
    pub vector: Option<&'a [f32]>,
    /// Weight of the host vectors in a host-vector index's fused ranking, in `[0, 1]`;
    /// `None` -> [`HOST_VECTOR_ALPHA`]. Ignored by an embedded index.
    pub alpha: Option<f64>,
    /// True: compute every record's host-vector cosine (an exact scan) instead of the
    /// partition's nearest lists. Ignored by an embedded index.
    pub exact: bool,
}

/// One search hit: the record and its score (see [`Ranking`]), in `(0, 1]`.
///
/// JSON shape: `{ record: MemoryRecord, score }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The matching record.
    pub record: MemoryRecord,
    /// Relevance (unitless), `> 0`, higher is better.
    pub score: f32,
}

/// One page of [`Index::enumerate`].
///
/// JSON shape: `{ records: [MemoryRecord...], next: string | null }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Page {
    /// Records in scope order: source offset range, byte offset, then id.
    pub records: Vec<MemoryRecord>,
    /// Opaque token of the next page; `None` on the last page.
    pub next: Option<String>,
}

/// What an add did.
///
/// JSON shape: `{ added, replaced, skipped: [id...] }`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AddReport {
    /// Records newly stored.
    pub added: usize,
    /// Records that replaced a stored record with the same id in the same session.
    pub replaced: usize,
    /// Ids of records not stored because their content has no tokens (no vector).
    pub skipped: Vec<String>,
}

/// Scope order key: `(source start, source end, byte start, id)`.
type Key = (usize, usize, usize, String);

fn key_of(r: &MemoryRecord) -> Key {
    let [s, e] = r.source_range;
    (s, e, r.byte_range[0], r.id.clone())
}

fn key_ref(r: &MemoryRecord) -> (usize, usize, usize, &str) {
    let [s, e] = r.source_range;
    (s, e, r.byte_range[0], r.id.as_str())
}

/// FNV-1a as a `Hasher`: the vocabulary and id maps hash the same way on every run and
/// every target (no random seed), and nothing iterates them in hash order.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

type FnvMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// One stored record.
#[derive(Debug, Clone)]
struct Doc {
    record: MemoryRecord,
    /// `(term index, count)` of the record's index terms (embedded index only).
    terms: Vec<(u32, u32)>,
    /// Unit host vector (host index only).
    vector: Option<Vec<f32>>,
}

/// One vocabulary term of a scope.
#[derive(Debug, Clone)]
struct Term {
    text: String,
    /// `fnv1a(text)`: the term's feature hash in the embedded vectors.
    hash: u64,
    /// `(slot, count)` of every record holding the term.
    postings: Vec<(u32, u32)>,
}

#[derive(Debug, Clone, Default)]
struct Scope {
    /// Scope order -> slot.
    order: SortedMap<Key, u32>,
    /// Record id -> scope order key.
    ids: FnvMap<String, Key>,
    /// Slot -> record (`None`: a freed slot, listed in `free`).
    docs: Vec<Option<Doc>>,
    /// Slot -> number of index terms of its record (BM25 document length).
    lens: Vec<u32>,
    free: Vec<u32>,
    vocab: FnvMap<String, u32>,
    terms: Vec<Term>,
    /// Sum of `lens` over stored records.
    total_len: u64,
    /// The host vectors' coarse quantizer (host index with at least
    /// [`ivf::MIN_RECORDS`] records; `None`: queries scan exactly).
    ivf: Option<Ivf>,
}

/// A term's count in a posting is kept in [`TF_UNIT`]ths: a content term adds
/// [`TF_UNIT`], a context term [`CONTEXT_QUARTERS`].
pub(crate) const TF_UNIT: u32 = 4;
/// Weight of a context term against a content term, in [`TF_UNIT`]ths.
const CONTEXT_QUARTERS: u32 = 1;
/// Weight of a [`super::MemoryRecord::context`] term against a content term (0.25):
/// what led to a record is evidence for it, but less than its own words.
pub const CONTEXT_WEIGHT: f64 = CONTEXT_QUARTERS as f64 / TF_UNIT as f64;

/// The index terms of a record, counted in [`TF_UNIT`]ths: its content's
/// [`index_terms`] plus those of each of its `mentions` its content does not hold and of
/// its tool name (each a whole count), and the terms of its `context` (each
/// [`CONTEXT_WEIGHT`]); and its BM25 length: the number of its content's plain tokens
/// (the whole-name terms of paths and identifiers, the tool name and the context add
/// evidence but do not make a record "longer"). Empty when the content has no tokens
/// (the record is then not stored, whatever its tool name or context).
fn doc_terms(record: &MemoryRecord) -> (Vec<(String, u32)>, u32) {
    let (mut terms, plain) = index_terms_counted(&record.content);
    let len = u32::try_from(plain).unwrap_or(u32::MAX);
    if terms.is_empty() || len == 0 {
        return (Vec::new(), 0);
    }
    // what the record says it mentions beyond its content (a tool output: the paths and
    // identifiers of its call's arguments)
    for m in &record.mentions {
        if !record.content.contains(m.as_str()) {
            terms.extend(index_terms(m));
        }
    }
    if let Some(name) = &record.tool_name {
        terms.extend(index_terms(name));
        let lower = name.to_lowercase();
        if lower.chars().any(|c| !c.is_alphanumeric()) {
            terms.push(lower);
        }
    }
    let mut counted: Vec<(String, u32)> = terms.into_iter().map(|t| (t, TF_UNIT)).collect();
    if let Some(cx) = &record.context {
        counted.extend(index_terms(cx).into_iter().map(|t| (t, CONTEXT_QUARTERS)));
    }
    (count_unordered(counted), len)
}

/// Sums weighted terms in first-seen order (document side: the order is not observable).
fn count_unordered(terms: Vec<(String, u32)>) -> Vec<(String, u32)> {
    let mut at: FnvMap<String, usize> = FnvMap::default();
    let mut out: Vec<(String, u32)> = Vec::with_capacity(terms.len());
    for (t, w) in terms {
        match at.get(&t) {
            Some(&i) => {
                if let Some((_, c)) = out.get_mut(i) {
                    *c = c.saturating_add(w);
                }
            }
            None => {
                at.insert(t.clone(), out.len());
                out.push((t, w));
            }
        }
    }
    out
}

fn count(mut terms: Vec<String>) -> Vec<(String, u32)> {
    crate::sorted::sort_by(&mut terms, |a, b| a.cmp(b));
    let mut out: Vec<(String, u32)> = Vec::with_capacity(terms.len());
    for t in terms {
        match out.last_mut() {
            Some((last, c)) if *last == t => *c = c.saturating_add(1),
            _ => out.push((t, 1)),
        }
    }
    out
}

/// Function words dropped from a query while it has other terms (English, in the
/// tokenizer's lower-cased and stemmed form, and Chinese characters / bigrams).
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "couldn", "d",
    "did", "didn", "do", "does", "doesn", "doing", "don", "down", "during", "each", "earlier", "few", "for", "from",
    "further", "had", "hadn", "has", "hasn", "have", "haven", "having", "he", "her", "here", "hers", "herself", "him",
    "himself", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "ll", "m", "me",
    "might", "more", "most", "must", "my", "myself", "now", "o", "of", "off", "on", "once", "only", "or", "other",
    "our", "ours", "ourselves", "out", "over", "own", "re", "s", "same", "she", "should", "shouldn", "so", "some",
    "such", "t", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they",
    "this", "those", "through", "to", "too", "under", "until", "up", "us", "ve", "very", "was", "wasn", "we", "were",
    "weren", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "won", "would",
    "wouldn", "you", "your", "yours", "yourself", "yourselves", "的", "了", "是", "我", "你", "他", "她", "它", "们",
    "吗", "呢", "吧", "啊", "在", "有", "和", "与", "就", "都", "也", "那", "这", "个", "么", "什么", "多少", "哪",
    "哪个", "怎么", "如何", "之前", "一下", "过", "请",
];

fn is_stop(term: &str) -> bool {
    STOP_WORDS.iter().any(|w| *w == term || embed::stem(w) == term)
}

/// Weight of a query term's synonym ([`SYNONYMS`]) against the term itself.
pub const SYNONYM_WEIGHT: f64 = 0.5;

/// Groups of words that name the same thing in agent sessions (files and shells,
/// errors, people's records, bookings and payments, Chinese paraphrases); a query term
/// in a group also looks for the group's other words at [`SYNONYM_WEIGHT`]. Written from
/// general usage, not from any probe's answer; words are stemmed as the tokenizer does.
const SYNONYMS: &[&[&str]] = &[
    &["folder", "directory", "dir", "mkdir"],
    &["delete", "remove", "rm", "unlink"],
    &["error", "fail", "failure", "exception", "traceback", "crash"],
    &["born", "birth", "birthday", "dob"],
    &["address", "street"],
    &["size", "big", "large", "bytes", "length"],
    &["password", "passwd"],
    &["url", "link", "http", "https"],
    &["run", "execute", "exec", "launch"],
    &["price", "cost", "fare", "amount", "paid", "charge"],
    &["cheap", "cheapest", "lowest"],
    &["leave", "depart", "departure"],
    &["arrive", "arrival"],
    &["booking", "reservation", "reserve"],
    &["change", "modify", "update", "edit", "replace"],
    &["create", "make", "mkdir", "touch"],
    &["print", "output", "echo", "stdout"],
    &["换成", "转换", "兑换"],
    &["距离", "多远"],
    &["评分", "评级"],
    &["时间", "几点"],
];

/// The synonyms of a (stemmed) query term: the other words of its [`SYNONYMS`] groups,
/// stemmed.
fn synonyms_of(term: &str) -> Vec<String> {
    let mut out = Vec::new();
    for group in SYNONYMS {
        if group.iter().any(|w| embed::stem(w) == term) {
            for w in group.iter() {
                let s = embed::stem(w);
                if s != term && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
    }
    out
}

/// The query's terms with their weights: [`index_terms`] of the query, function words
/// dropped unless nothing else is left (`keep_stop` keeps them all), each with its count
/// as weight; then (unless `keep_stop`) the synonyms of each term the query does not
/// already hold, at [`SYNONYM_WEIGHT`]. Sorted by term.
fn query_terms(query: &str, keep_stop: bool) -> Vec<(String, f64)> {
    let all = index_terms(query);
    if keep_stop {
        return count(all).into_iter().map(|(t, c)| (t, f64::from(c))).collect();
    }
    let content: Vec<String> = all.iter().filter(|t| !is_stop(t)).cloned().collect();
    let mut out: Vec<(String, f64)> =
        count(if content.is_empty() { all } else { content }).into_iter().map(|(t, c)| (t, f64::from(c))).collect();
    let mut extra: Vec<(String, f64)> = Vec::new();
    for (t, _) in &out {
        for s in synonyms_of(t) {
            if !out.iter().any(|(o, _)| *o == s) && !extra.iter().any(|(o, _)| *o == s) {
                extra.push((s, SYNONYM_WEIGHT));
            }
        }
    }
    out.extend(extra);
    crate::sorted::sort_by(&mut out, |a, b| a.0.cmp(&b.0));
    out
}

impl Scope {
    fn live(&self) -> u32 {
        u32::try_from(self.ids.len()).unwrap_or(u32::MAX)
    }

    fn doc(&self, slot: u32) -> Option<&Doc> {
        self.docs.get(slot as usize).and_then(Option::as_ref)
    }

    fn df(&self, ix: u32) -> u32 {
        self.terms.get(ix as usize).map_or(0, |t| u32::try_from(t.postings.len()).unwrap_or(u32::MAX))
    }

    fn term_ix(&mut self, text: String) -> u32 {
        if let Some(&ix) = self.vocab.get(&text) {
            return ix;
        }
        let ix = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
        self.terms.push(Term { hash: fnv1a(text.as_bytes()), text: text.clone(), postings: Vec::new() });
        self.vocab.insert(text, ix);
        ix
    }

    fn take_slot(&mut self) -> u32 {
        match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                self.lens.push(0);
                u32::try_from(self.docs.len() - 1).unwrap_or(u32::MAX)
            }
        }
    }

    /// Stores `doc` in a fresh slot; `terms` are its counted index terms and `len` its
    /// BM25 length (empty and 0 for a host vector). Replaces a stored record of the same
    /// id; returns true when it did.
    fn upsert(&mut self, mut doc: Doc, terms: Vec<(String, u32)>, len: u32) -> bool {
        let replaced = self.remove(&doc.record.id);
        let slot = self.take_slot();
        let mut ixs = Vec::with_capacity(terms.len());
        for (text, tf) in terms {
            let ix = self.term_ix(text);
            if let Some(t) = self.terms.get_mut(ix as usize) {
                t.postings.push((slot, tf));
            }
            ixs.push((ix, tf));
        }
        doc.terms = ixs;
        if let (Some(ivf), Some(v)) = (self.ivf.as_mut(), doc.vector.as_ref()) {
            ivf.insert(slot, v);
        }
        let key = key_of(&doc.record);
        self.ids.insert(doc.record.id.clone(), key.clone());
        self.order.insert(key, slot);
        if let Some(l) = self.lens.get_mut(slot as usize) {
            *l = len;
        }
        if let Some(d) = self.docs.get_mut(slot as usize) {
            *d = Some(doc);
        }
        self.total_len = self.total_len.saturating_add(u64::from(len));
        replaced
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(key) = self.ids.remove(id) else { return false };
        let Some(slot) = self.order.remove(&key) else { return true };
        let old = self.docs.get_mut(slot as usize).and_then(Option::take);
        if let Some(old) = old {
            for (ix, _) in old.terms {
                if let Some(t) = self.terms.get_mut(ix as usize) {
                    t.postings.retain(|p| p.0 != slot);
                }
            }
        }
        if let Some(ivf) = self.ivf.as_mut() {
            ivf.remove(slot);
        }
        let len = self.lens.get_mut(slot as usize).map_or(0, |l| std::mem::replace(l, 0));
        self.total_len = self.total_len.saturating_sub(u64::from(len));
        self.free.push(slot);
        true
    }

    /// The embedded vector (sparse) of counted terms `(term index, count)` of this scope.
    fn doc_vector(&self, terms: &[(u32, u32)], dim: usize) -> Option<Vec<(u32, f64)>> {
        let t: Vec<(u64, f64, u32)> =
            terms.iter().filter_map(|&(ix, tf)| self.terms.get(ix as usize).map(|t| (t.hash, f64::from(tf) / f64::from(TF_UNIT), self.df(ix)))).collect();
        embed::sparse_vector(&t, dim, self.live())
    }

    /// The embedded vector (sparse) of a query's counted terms (terms unknown to the
    /// scope count with document frequency 0).
    fn query_vector(&self, terms: &[(String, f64)], dim: usize) -> Option<Vec<(u32, f64)>> {
        let t: Vec<(u64, f64, u32)> = terms
            .iter()
            .map(|(text, tf)| (fnv1a(text.as_bytes()), *tf, self.vocab.get(text).map_or(0, |&ix| self.df(ix))))
            .collect();
        embed::sparse_vector(&t, dim, self.live())
    }

    /// BM25 of every record holding one of `terms`: `(slot, score)`, unordered.
    fn bm25(&self, terms: &[(String, f64)]) -> Vec<(u32, f64)> {
        let n = f64::from(self.live());
        if n == 0.0 {
            return Vec::new();
        }
        let avgdl = (self.total_len as f64 / n).max(1.0);
        let mut acc = vec![0f64; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (text, weight) in terms {
            let qw = weight.min(1.0);
            let Some(&ix) = self.vocab.get(text) else { continue };
            let Some(term) = self.terms.get(ix as usize) else { continue };
            let df = term.postings.len() as f64;
            if df == 0.0 {
                continue;
            }
            let idf = qw * (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(slot, tf) in &term.postings {
                let dl = f64::from(self.lens.get(slot as usize).copied().unwrap_or(0));
                let tf = f64::from(tf) / f64::from(TF_UNIT);
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * dl / avgdl));
                if let Some(a) = acc.get_mut(slot as usize) {
                    if *a == 0.0 {
                        touched.push(slot);
                    }
                    *a += s;
                }
            }
        }
        touched.into_iter().filter_map(|s| acc.get(s as usize).map(|&a| (s, a))).filter(|(_, a)| *a > 0.0).collect()
    }

    /// Orders `(slot, score)` best first (ties in scope order) and keeps the first `n`.
    fn best(&self, mut scored: Vec<(u32, f64)>, n: usize) -> Vec<(u32, f64)> {
        let cmp = |a: &(u32, f64), b: &(u32, f64)| {
            b.1.total_cmp(&a.1).then_with(|| match (self.doc(a.0), self.doc(b.0)) {
                (Some(x), Some(y)) => key_ref(&x.record).cmp(&key_ref(&y.record)),
                _ => a.0.cmp(&b.0),
            })
        };
        if scored.len() > n && n > 0 {
            scored.select_nth_unstable_by(n - 1, cmp);
            scored.truncate(n);
        }
        scored.sort_unstable_by(cmp);
        scored.truncate(n);
        scored
    }

    fn hit(&self, slot: u32, score: f64) -> Option<Hit> {
        self.doc(slot).map(|d| Hit { record: d.record.clone(), score: (score as f32).min(1.0) })
    }

    /// The first `limit` of `ranked` (best first) as hits, one per distinct content: a
    /// passage repeated word for word (the same call made again, the same answer given
    /// twice) is listed once, at its best rank.
    fn distinct(&self, ranked: impl IntoIterator<Item = (u32, f64)>, limit: usize) -> Vec<Hit> {
        let mut out: Vec<Hit> = Vec::with_capacity(limit);
        let mut seen: FnvMap<&str, ()> = FnvMap::default();
        for (slot, score) in ranked {
            if out.len() >= limit {
                break;
            }
            let Some(d) = self.doc(slot) else { continue };
            if seen.insert(d.record.content.as_str(), ()).is_none() {
                out.push(Hit { record: d.record.clone(), score: (score as f32).min(1.0) });
            }
        }
        out
    }

    fn search(&self, query: &str, limit: usize, ranking: Ranking, dim: usize) -> Vec<Hit> {
        match ranking {
            Ranking::Lexical => {
                let top = self.best(self.bm25(&query_terms(query, false)), limit.saturating_mul(4).max(CANDIDATES));
                let max = top.first().map_or(1.0, |t| t.1);
                self.distinct(top.into_iter().map(|(s, x)| (s, x / max)), limit)
            }
            Ranking::Vector => {
                let terms = query_terms(query, true);
                let Some(q) = self.query_vector(&terms, dim) else { return Vec::new() };
                let scored: Vec<(u32, f64)> = self
                    .bm25(&terms)
                    .into_iter()
                    .filter_map(|(s, _)| {
                        let v = self.doc_vector(&self.doc(s)?.terms, dim)?;
                        let c = embed::sparse_dot(&q, &v);
                        (c.is_finite() && c > f64::from(MIN_SCORE)).then_some((s, c))
                    })
                    .collect();
                self.distinct(self.best(scored, limit.saturating_mul(4).max(CANDIDATES)), limit)
            }
            Ranking::Fused => {
                let terms = query_terms(query, false);
                let lexical = self.best(self.bm25(&terms), CANDIDATES);
                let q = self.query_vector(&terms, dim);
                let cosines: Vec<(u32, f64)> = lexical
                    .iter()
                    .filter_map(|&(s, _)| {
                        let q = q.as_ref()?;
                        let v = self.doc_vector(&self.doc(s)?.terms, dim)?;
                        let c = embed::sparse_dot(q, &v);
                        (c.is_finite() && c > f64::from(MIN_SCORE)).then_some((s, c))
                    })
                    .collect();
                let by_vector = self.best(cosines, CANDIDATES);
                let vrank: FnvMap<u32, usize> = by_vector.iter().enumerate().map(|(i, &(s, _))| (s, i + 1)).collect();
                let best_possible = (1.0 + VECTOR_WEIGHT) / (RRF_K + 1.0);
                let fused: Vec<(u32, f64)> = lexical
                    .iter()
                    .enumerate()
                    .map(|(i, &(s, _))| {
                        let mut f = 1.0 / (RRF_K + (i + 1) as f64);
                        if let Some(&r) = vrank.get(&s) {
                            f += VECTOR_WEIGHT / (RRF_K + r as f64);
                        }
                        (s, f / best_possible)
                    })
                    .collect();
                // ties keep the BM25 order: `best` is stable on equal scores by scope
                // order, so break them by the lexical rank first
                let lex_rank: FnvMap<u32, usize> = lexical.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect();
                let mut fused = fused;
                crate::sorted::sort_by(&mut fused, |a, b| {
                    b.1.total_cmp(&a.1).then_with(|| lex_rank.get(&a.0).cmp(&lex_rank.get(&b.0)))
                });
                self.distinct(fused, limit)
            }
        }
    }

    /// Relative score fusion of BM25 and host-vector cosine (see
    /// [`Index::search_with`]).
    fn fuse_host(&self, query: &str, vector: &[f32], limit: usize, alpha: f64, exact: bool) -> Vec<Hit> {
        let lexical = self.best(self.bm25(&query_terms(query, false)), CANDIDATES);
        let extra: Vec<u32> = lexical.iter().map(|x| x.0).collect();
        let by_vector = self.best(self.cosines(vector, &extra, exact), CANDIDATES);
        let mut fused: FnvMap<u32, f64> = FnvMap::default();
        // BM25's zero means "no shared term", so its scores are taken over the best one;
        // a dense embedding's cosines sit far from zero, so theirs are min-max scaled
        for (list, weight, floor) in [(&lexical, 1.0 - alpha, false), (&by_vector, alpha, true)] {
            let max = list.first().map_or(0.0, |x| x.1);
            let min = if floor { list.last().map_or(0.0, |x| x.1) } else { 0.0 };
            if weight <= 0.0 || max - min <= f64::EPSILON * max.abs().max(1.0) {
                continue;
            }
            for &(slot, x) in list.iter() {
                *fused.entry(slot).or_insert(0.0) += weight * (x - min) / (max - min);
            }
        }
        let scored: Vec<(u32, f64)> = fused.into_iter().filter(|&(_, x)| x > 0.0).collect();
        let ranked = self.best(scored, CANDIDATES.saturating_mul(2));
        let top = ranked.first().map_or(1.0, |x| x.1);
        self.distinct(ranked.into_iter().map(|(s, x)| (s, x / top)), limit)
    }

    /// `(slot, cosine)` of the candidate records with a host vector and cosine above
    /// [`MIN_SCORE`], unordered: with a partition (and not `exact`), the records of the
    /// lists nearest to `query` ([`Ivf::nearest_lists`]) and those of `extra` (the BM25
    /// candidates) in none of them, each once; without, every record (an exact scan).
    fn cosines(&self, query: &[f32], extra: &[u32], exact: bool) -> Vec<(u32, f64)> {
        let keep = |(slot, s): (u32, f32)| {
            let s = f64::from(s);
            (s.is_finite() && s > f64::from(MIN_SCORE)).then_some((slot, s))
        };
        let score = |slot: u32| self.doc(slot)?.vector.as_ref().map(|v| (slot, embed::dot(query, v)));
        match self.ivf.as_ref().filter(|_| !exact) {
            Some(ivf) => {
                let lists = ivf.nearest_lists(query);
                let mut out: Vec<(u32, f64)> = ivf.scores(query, &lists).into_iter().filter_map(keep).collect();
                let mut rest: Vec<u32> =
                    extra.iter().copied().filter(|&s| ivf.list_of.get(s as usize).is_none_or(|l| !lists.contains(&(*l as usize)))).collect();
                rest.sort_unstable();
                rest.dedup();
                out.extend(rest.into_iter().filter_map(score).filter_map(keep));
                out
            }
            None => self.order.values().filter_map(|&s| score(s)).filter_map(keep).collect(),
        }
    }

    /// Cosine ranking with a host query vector (host index): through the partition
    /// unless `exact`.
    fn rank_vectors(&self, query: &[f32], limit: usize, exact: bool) -> Vec<Hit> {
        let scored = self.cosines(query, &[], exact);
        self.best(scored, limit).into_iter().filter_map(|(s, c)| self.hit(s, c)).collect()
    }

    /// Trains the partition again when the scope has reached [`ivf::MIN_RECORDS`] host
    /// vectors without one or has grown to twice the size it was trained at; drops it
    /// below [`ivf::MIN_RECORDS`].
    fn refresh_ivf(&mut self, dim: usize) {
        let n = self.ids.len();
        if n < ivf::MIN_RECORDS {
            self.ivf = None;
            return;
        }
        if self.ivf.as_ref().is_some_and(|p| n < p.trained_at.saturating_mul(2)) {
            return;
        }
        let vectors: Vec<(u32, &[f32])> =
            self.order.values().filter_map(|&s| self.doc(s).and_then(|d| d.vector.as_deref()).map(|v| (s, v))).collect();
        let trained = Ivf::train(&vectors, self.docs.len(), dim);
        self.ivf = Some(trained);
    }
}

/// A session-scoped memory index (M-3, M-4).
///
/// Build with [`Index::new`] (embedded embedder, [`DEFAULT_DIMENSION`] dimensions,
/// inverted index) or [`Index::with_dimension`] (host vectors of a declared dimension,
/// exact cosine scan).
#[derive(Debug, Clone)]
pub struct Index {
    dim: usize,
    embedder: EmbedderKind,
    scopes: SortedMap<String, Scope>,
}

impl Default for Index {
    fn default() -> Self {
        Index::new()
    }
}

fn fail(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::MemoryFailed, message)
}

fn check_dimension(dim: usize) -> Result<()> {
    if dim == 0 || dim > MAX_DIMENSION {
        return Err(fail(format!("vector dimension {dim} is outside 1..={MAX_DIMENSION}")));
    }
    Ok(())
}

impl Index {
    /// An empty index using the embedded embedder with [`DEFAULT_DIMENSION`] (512)
    /// dimensions.
    pub fn new() -> Self {
        Index { dim: DEFAULT_DIMENSION, embedder: EmbedderKind::Embedded, scopes: SortedMap::new() }
    }

    /// An empty index storing host-supplied vectors of exactly `dim` components
    /// (1..=[`MAX_DIMENSION`]). Fails with `memory_failed` otherwise.
    pub fn with_dimension(dim: usize) -> Result<Self> {
        check_dimension(dim)?;
        Ok(Index { dim, embedder: EmbedderKind::Host, scopes: SortedMap::new() })
    }

    /// Number of vector components.
    pub fn dimension(&self) -> usize {
        self.dim
    }

    /// Who embeds this index's records.
    pub fn embedder(&self) -> EmbedderKind {
        self.embedder
    }

    /// Number of records stored for `session` (0 for an unknown session).
    pub fn len(&self, session: &str) -> usize {
        self.scopes.get(session).map_or(0, |s| s.order.len())
    }

    /// True when no session holds any record.
    pub fn is_empty(&self) -> bool {
        self.scopes.values().all(|s| s.order.is_empty())
    }

    /// Sessions holding at least one record, in byte order.
    pub fn sessions(&self) -> Vec<String> {
        self.scopes.iter().filter(|(_, s)| !s.order.is_empty()).map(|(k, _)| k.clone()).collect()
    }

    /// Adds records with the embedded embedder, each into the scope of its own
    /// `session`, indexing their terms (content and tool name, see
    /// [`super::index_terms`]). A record with the id of a stored record of the same
    /// session replaces it (projection is idempotent). Records whose content has no
    /// tokens are not stored (listed in `skipped`). Fails with `memory_failed`, storing
    /// nothing, on a host-vector index.
    pub fn add(&mut self, records: Vec<MemoryRecord>) -> Result<AddReport> {
        if self.embedder != EmbedderKind::Embedded {
            return Err(fail("this index stores host vectors; use add_with_vectors"));
        }
        let mut report = AddReport::default();
        for record in records {
            let (terms, len) = doc_terms(&record);
            if terms.is_empty() {
                report.skipped.push(record.id);
                continue;
            }
            let scope = self.scopes.get_or_insert_with(record.session.clone(), Scope::default);
            if scope.upsert(Doc { record, terms: Vec::new(), vector: None }, terms, len) {
                report.replaced += 1;
            } else {
                report.added += 1;
            }
        }
        Ok(report)
    }

    /// Adds records with host vectors: `vectors[i]` embeds `records[i]`, each of exactly
    /// [`Index::dimension`] finite components, not all zero (stored L2-normalised). Each
    /// record's terms are indexed as [`Index::add`] does, for the BM25 side of
    /// [`Index::search_with`]; a record without tokens is stored all the same
    /// (its vector finds it).
    /// Same-id records replace stored ones. Fails with `memory_failed`, storing nothing,
    /// on an embedded index, a count mismatch, a wrong dimension or a zero vector.
    pub fn add_with_vectors(&mut self, records: Vec<MemoryRecord>, vectors: Vec<Vec<f32>>) -> Result<AddReport> {
        self.add_vectors(records, vectors, true)
    }

    /// [`Index::add_with_vectors`]; `partition` false leaves the partitions as they are
    /// (a restore loads them from the snapshot).
    fn add_vectors(&mut self, records: Vec<MemoryRecord>, vectors: Vec<Vec<f32>>, partition: bool) -> Result<AddReport> {
        if self.embedder != EmbedderKind::Host {
            return Err(fail("this index uses the embedded embedder; use add"));
        }
        if records.len() != vectors.len() {
            return Err(fail(format!("{} records but {} vectors", records.len(), vectors.len())));
        }
        let mut units = Vec::with_capacity(vectors.len());
        for (i, v) in vectors.iter().enumerate() {
            if v.len() != self.dim {
                return Err(fail(format!("vectors[{i}] has {} components; the index declares {}", v.len(), self.dim)));
            }
            match embed::normalize(v) {
                Some(u) => units.push(u),
                None => return Err(fail(format!("vectors[{i}] is zero or not finite"))),
            }
        }
        let mut report = AddReport::default();
        let mut touched: Vec<String> = Vec::new();
        for (record, vector) in records.into_iter().zip(units) {
            // the lexical side of the fused ranking (a record without tokens is still
            // stored: its vector finds it)
            let (terms, len) = doc_terms(&record);
            if touched.last() != Some(&record.session) && !touched.contains(&record.session) {
                touched.push(record.session.clone());
            }
            let scope = self.scopes.get_or_insert_with(record.session.clone(), Scope::default);
            if scope.upsert(Doc { record, terms: Vec::new(), vector: Some(vector) }, terms, len) {
                report.replaced += 1;
            } else {
                report.added += 1;
            }
        }
        if partition {
            let dim = self.dim;
            for session in touched {
                if let Some(scope) = self.scopes.get_mut(&session) {
                    scope.refresh_ivf(dim);
                }
            }
        }
        Ok(report)
    }

    /// Text search in one session (embedded embedder) with [`Ranking::Fused`]: at most
    /// `limit` hits, best first (ties in BM25 order, then scope order), one per distinct
    /// content (a passage stored twice word for word is listed once, at its best rank). Empty for an
    /// unknown session, a query without tokens or without a term the session holds,
    /// `limit == 0`, or a host-vector index. Only `session`'s records are ever
    /// considered, whatever the query names. [`Index::search_with`] takes the other
    /// rankings and a host vector.
    pub fn search(&self, session: &str, query: &str, limit: usize) -> Vec<Hit> {
        if self.embedder != EmbedderKind::Embedded || limit == 0 {
            return Vec::new();
        }
        self.scopes.get(session).map(|scope| scope.search(query, limit, Ranking::Fused, self.dim)).unwrap_or_default()
    }

    /// Vector search in one session (host vectors): an exact cosine scan with a host
    /// query vector of [`Index::dimension`] components, at most `limit` hits with cosine
    /// > 0, best first (ties in scope order). Fails with `memory_failed` on an embedded
    /// index, a wrong dimension or a zero / non-finite vector.
    pub fn search_by_vector(&self, session: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>> {
        if self.embedder != EmbedderKind::Host {
            return Err(fail("this index uses the embedded embedder; use search"));
        }
        let q = self.query_unit(vector)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        Ok(self.scopes.get(session).map(|s| s.rank_vectors(&q, limit, true)).unwrap_or_default())
    }

    /// The host query vector, checked (dimension, finite, not zero) and L2-normalised.
    fn query_unit(&self, vector: &[f32]) -> Result<Vec<f32>> {
        if vector.len() != self.dim {
            return Err(fail(format!("query vector has {} components; the index declares {}", vector.len(), self.dim)));
        }
        embed::normalize(vector).ok_or_else(|| fail("query vector is zero or not finite"))
    }

    /// Search in one session with `options` (M-2, M-3): at most `limit` hits, best first,
    /// one per distinct content; only `session`'s records are considered. Empty for an
    /// unknown session or `limit == 0` (after the options are checked).
    ///
    /// An embedded index ([`Index::new`]) ranks by `options.ranking` (see [`Ranking`]);
    /// `alpha` and `exact` are ignored there, and a `vector` is refused.
    ///
    /// A host-vector index ([`Index::with_dimension`]) needs `options.vector`, the host's
    /// embedding of `query` ([`Index::dimension`] components):
    ///
    /// - [`Ranking::Fused`] (what recall uses): relative score fusion of BM25 over the
    ///   records' terms (the same inverted index as the embedded index: content,
    ///   mentions, tool name, context) and the host vectors' cosine. The best
    ///   [`CANDIDATES`] of each ranking are taken; BM25 scores are divided by the best
    ///   one (zero means no shared term), cosines are min-max scaled to `[0, 1]` over
    ///   their candidates (a dense embedding's cosines sit far from zero; when they are
    ///   all equal they add nothing: they do not tell the records apart), and a record
    ///   scores `alpha * vector + (1 - alpha) * bm25` (0 for a list it is not in), over
    ///   the best record's score. `alpha` in `[0, 1]`, `None` ->
    ///   [`HOST_VECTOR_ALPHA`]. A record with a fused score of 0 is not a hit. A record
    ///   sharing no word with the query is found by its vector alone.
    /// - [`Ranking::Lexical`]: BM25 alone (score over the best hit's).
    /// - [`Ranking::Vector`]: the cosine alone.
    ///
    /// The cosines are those of the session's partition's nearest lists (from
    /// [`ivf::MIN_RECORDS`] records) unless `options.exact`, which computes every
    /// record's (an exact scan; the benchmark measures the partition's loss against it).
    ///
    /// Fails with `memory_failed` on an embedded index given a `vector`, a host-vector
    /// index without one, a wrong
    /// dimension, a zero / non-finite vector or an `alpha` outside `[0, 1]`.
    pub fn search_with(&self, session: &str, query: &str, limit: usize, options: &RecallOptions<'_>) -> Result<Vec<Hit>> {
        if self.embedder == EmbedderKind::Embedded {
            if options.vector.is_some() {
                return Err(fail("this index uses the embedded embedder; a query vector needs a host-vector index"));
            }
            if limit == 0 {
                return Ok(Vec::new());
            }
            return Ok(self.scopes.get(session).map(|scope| scope.search(query, limit, options.ranking, self.dim)).unwrap_or_default());
        }
        let vector = options.vector.ok_or_else(|| fail("a search of a host-vector index needs the query's vector"))?;
        let alpha = options.alpha.unwrap_or(HOST_VECTOR_ALPHA);
        if !(0.0..=1.0).contains(&alpha) {
            return Err(fail(format!("alpha {alpha} is outside [0, 1]")));
        }
        let q = self.query_unit(vector)?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let Some(scope) = self.scopes.get(session) else { return Ok(Vec::new()) };
        Ok(match options.ranking {
            Ranking::Vector => scope.rank_vectors(&q, limit, options.exact),
            Ranking::Lexical => scope.search(query, limit, Ranking::Lexical, self.dim),
            Ranking::Fused => scope.fuse_host(query, &q, limit, alpha, options.exact),
        })
    }

    /// Pages through one session's records in scope order (source offset range, byte
    /// offset, id) (M-4). `page_token`: `None` for the first page, else the `next` of
    /// the previous page. `page_size` is clamped to 1..=1000. Records added or dropped
    /// between calls do not make a page repeat or skip a record that stayed. Fails with
    /// `memory_failed` on a malformed token.
    pub fn enumerate(&self, session: &str, page_token: Option<&str>, page_size: usize) -> Result<Page> {
        let size = page_size.clamp(1, 1000);
        let after = match page_token {
            None => None,
            Some(t) => Some(parse_token(t)?),
        };
        let Some(scope) = self.scopes.get(session) else {
            return Ok(Page { records: Vec::new(), next: None });
        };
        let mut iter: Box<dyn Iterator<Item = (&Key, &u32)>> = match &after {
            None => Box::new(scope.order.iter()),
            Some(k) => Box::new(scope.order.iter_after(k)),
        };
        let mut records = Vec::with_capacity(size);
        let mut last: Option<&Key> = None;
        for (k, &slot) in iter.by_ref().take(size) {
            if let Some(d) = scope.doc(slot) {
                records.push(d.record.clone());
            }
            last = Some(k);
        }
        let next = match (iter.next(), last) {
            (Some(_), Some(k)) => Some(format_token(k)),
            _ => None,
        };
        Ok(Page { records, next })
    }

    /// Removes every record of `session` at once (M-4); other sessions are untouched.
    /// Returns how many records were removed.
    pub fn drop_scope(&mut self, session: &str) -> usize {
        self.scopes.remove(session).map_or(0, |s| s.ids.len())
    }

    /// Serializes the whole index as versioned JSON bytes (version
    /// [`SNAPSHOT_VERSION`], 4):
    ///
    /// `{ format: "context-compactor/memory-index", version: 4, embedder: "hash-idf-v1" |
    ///    "host", dimension, records: [{ record, vector? }], lexical?: [{ session,
    ///    lengths: [n...], terms: [[term, [position, count, position, count, ...]], ...] }],
    ///    ivf?: [{ session, trainedAt, centroids: [[u32...]], lists: [n...] }] }`
    ///
    /// Sessions in byte order, each session's records in scope order. `lexical` (the
    /// embedded index only) holds each session's inverted index: every term with the
    /// positions (0-based, among that session's records in `records`) and counts (in
    /// quarters: 4 per content term, 1 per context term) of the records holding it,
    /// terms in byte order, positions ascending, and each record's
    /// BM25 length (its content's plain token count) by position. Host vectors are
    /// stored as the bit patterns of their f32 components. `ivf` (a host-vector index
    /// with partitioned sessions only) holds each partition: the record count it was
    /// trained at, its unit centroids (f32 bit patterns) and each record's list number by
    /// position. Same index, same bytes.
    pub fn snapshot(&self) -> Vec<u8> {
        let mut records = Vec::new();
        let mut lexical = Vec::new();
        let mut parts = Vec::new();
        for (session, scope) in self.scopes.iter() {
            if scope.ids.is_empty() {
                continue;
            }
            if let Some(p) = &scope.ivf {
                parts.push(SnapIvf {
                    session: session.clone(),
                    trained_at: p.trained_at,
                    centroids: p.centroids.iter().map(|c| c.iter().map(|x| x.to_bits()).collect()).collect(),
                    lists: scope.order.values().map(|&s| p.list_of.get(s as usize).copied().unwrap_or(0)).collect(),
                });
            }
            let mut position: FnvMap<u32, u32> = FnvMap::default();
            for (i, &slot) in scope.order.values().enumerate() {
                let Some(d) = scope.doc(slot) else { continue };
                position.insert(slot, u32::try_from(i).unwrap_or(u32::MAX));
                records.push(SnapEntry {
                    record: d.record.clone(),
                    vector: d.vector.as_ref().map(|v| v.iter().map(|x| x.to_bits()).collect()),
                });
            }
            if self.embedder == EmbedderKind::Embedded {
                let mut terms: Vec<(String, Vec<u32>)> = scope
                    .terms
                    .iter()
                    .filter(|t| !t.postings.is_empty())
                    .map(|t| {
                        let mut p: Vec<(u32, u32)> =
                            t.postings.iter().filter_map(|&(s, tf)| position.get(&s).map(|&i| (i, tf))).collect();
                        crate::sorted::sort_by(&mut p, |a, b| a.cmp(b));
                        (t.text.clone(), p.into_iter().flat_map(|(i, tf)| [i, tf]).collect())
                    })
                    .collect();
                crate::sorted::sort_by(&mut terms, |a, b| a.0.cmp(&b.0));
                let lengths = scope.order.values().map(|&slot| scope.lens.get(slot as usize).copied().unwrap_or(0)).collect();
                lexical.push(SnapScope { session: session.clone(), lengths, terms });
            }
        }
        let snap = Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            embedder: match self.embedder {
                EmbedderKind::Embedded => EMBEDDER_ID.to_string(),
                EmbedderKind::Host => HOST_EMBEDDER_ID.to_string(),
            },
            dimension: self.dim,
            records,
            lexical: (self.embedder == EmbedderKind::Embedded).then_some(lexical),
            ivf: (self.embedder == EmbedderKind::Host && !parts.is_empty()).then_some(parts),
        };
        serde_json::to_vec(&snap).unwrap_or_default()
    }

    /// Rebuilds an index from [`Index::snapshot`] bytes of version 4 or 3, or of version 1
    /// (records only) or 2 (postings counted before context terms): their records are
    /// indexed again, giving the index a version-4 snapshot of the same records.
    /// A host-vector snapshot's partitions (`ivf`, version 4) are loaded as written
    /// (checked for shape: a known session, 1 to 128 centroids of the declared dimension,
    /// one list number below the list count per record); a session of at least
    /// [`ivf::MIN_RECORDS`] records without one (any version 3 or earlier) is
    /// partitioned again from its vectors. A version-3 or 4 embedded snapshot's inverted index is loaded as written (checked for shape: known sessions, positions in
    /// range and ascending, counts >= 1, one length >= 1 per record, every record
    /// holding a term); a session it
    /// lists no terms for is indexed again from its records. Fails with `memory_failed`
    /// on bytes that are not a snapshot, an unknown format, version (naming it and the
    /// versions this build reads) or embedder, a bad dimension, a duplicate record id in
    /// a session, a malformed inverted index, or a host record without a valid vector.
    pub fn restore(bytes: &[u8]) -> Result<Index> {
        // Read as text: serde_json's `str` reader is the one the rest of the crate uses,
        // so the wasm carries one JSON reader instead of two (issue 15, size).
        let text = std::str::from_utf8(bytes).map_err(|e| fail(format!("memory snapshot is not valid: not UTF-8 ({e})")))?;
        let head: SnapshotHead =
            serde_json::from_str(text).map_err(|e| fail(format!("memory snapshot is not valid: {e}")))?;
        if head.format != SNAPSHOT_FORMAT {
            return Err(fail(format!("memory snapshot format {:?} is not {SNAPSHOT_FORMAT:?}", head.format)));
        }
        if !(1..=SNAPSHOT_VERSION).contains(&head.version) {
            return Err(fail(format!(
                "memory snapshot version {} is not supported (this build reads versions 1 to {SNAPSHOT_VERSION})",
                head.version
            )));
        }
        let snap: Snapshot =
            serde_json::from_str(text).map_err(|e| fail(format!("memory snapshot is not valid: {e}")))?;
        check_dimension(snap.dimension)?;
        if snap.embedder == EMBEDDER_ID {
            let mut index = Index { dim: snap.dimension, embedder: EmbedderKind::Embedded, scopes: SortedMap::new() };
            // an older inverted index counts terms another way: index the records again
            let lexical = if snap.version >= 3 { snap.lexical.unwrap_or_default() } else { Vec::new() };
            index.load_embedded(snap.records.into_iter().map(|e| e.record).collect(), lexical)?;
            Ok(index)
        } else if snap.embedder == HOST_EMBEDDER_ID {
            let mut index = Index::with_dimension(snap.dimension)?;
            let mut records = Vec::with_capacity(snap.records.len());
            let mut vectors = Vec::with_capacity(snap.records.len());
            for (i, e) in snap.records.into_iter().enumerate() {
                let Some(bits) = e.vector else {
                    return Err(fail(format!("memory snapshot records[{i}] has no vector")));
                };
                vectors.push(bits.into_iter().map(f32::from_bits).collect());
                records.push(e.record);
            }
            index.add_vectors(records, vectors, false)?;
            index.load_partitions(snap.ivf.unwrap_or_default())?;
            Ok(index)
        } else {
            Err(fail(format!("memory snapshot embedder {:?} is unknown", snap.embedder)))
        }
    }

    /// Installs a host snapshot's partitions (checked: a known session, one list per
    /// centroid, each centroid of [`Index::dimension`] finite components and not zero,
    /// one list number below the list count per record), then trains one for every
    /// session of at least [`ivf::MIN_RECORDS`] records the snapshot gives none.
    fn load_partitions(&mut self, parts: Vec<SnapIvf>) -> Result<()> {
        let dim = self.dim;
        for (i, p) in parts.into_iter().enumerate() {
            let bad = |m: String| fail(format!("memory snapshot ivf[{i}] (session {:?}): {m}", p.session));
            let Some(scope) = self.scopes.get_mut(&p.session) else {
                return Err(bad("names a session that has no records".into()));
            };
            if scope.ivf.is_some() {
                return Err(bad("repeats a session".into()));
            }
            if p.centroids.is_empty() || p.centroids.len() > ivf::MAX_LISTS {
                return Err(bad(format!("has {} centroids (1..={})", p.centroids.len(), ivf::MAX_LISTS)));
            }
            let mut centroids = Vec::with_capacity(p.centroids.len());
            for (c, bits) in p.centroids.iter().enumerate() {
                let v: Vec<f32> = bits.iter().map(|b| f32::from_bits(*b)).collect();
                if v.len() != dim {
                    return Err(bad(format!("centroid {c} has {} components; the index declares {dim}", v.len())));
                }
                centroids.push(embed::normalize(&v).ok_or_else(|| bad(format!("centroid {c} is zero or not finite")))?);
            }
            let slots: Vec<u32> = scope.order.values().copied().collect();
            if p.lists.len() != slots.len() {
                return Err(bad(format!("{} list numbers for {} records", p.lists.len(), slots.len())));
            }
            let k = centroids.len();
            let mut part = Ivf::empty(centroids, scope.docs.len(), dim, p.trained_at);
            for (&slot, &l) in slots.iter().zip(&p.lists) {
                if l as usize >= k {
                    return Err(bad(format!("list number {l} is not below {k}")));
                }
                if let Some(v) = scope.doc(slot).and_then(|d| d.vector.as_deref()) {
                    part.insert_in(slot, v, l);
                }
            }
            scope.ivf = Some(part);
        }
        for scope in self.scopes.values_mut() {
            if scope.ivf.is_none() {
                scope.refresh_ivf(dim);
            }
        }
        Ok(())
    }

    /// How a host-vector query would read `session`: `None` when the session has no
    /// partition (fewer than [`ivf::MIN_RECORDS`] records: an exact scan), else
    /// `Some((lists, candidates))`: the partition's list count and how many records the
    /// lists nearest to `vector` hold, the records whose cosine is computed (the fused
    /// ranking adds its BM25 candidates, at most [`CANDIDATES`]). Fails with
    /// `memory_failed` as [`Index::search_with`].
    pub fn partition_probe(&self, session: &str, vector: &[f32]) -> Result<Option<(usize, usize)>> {
        if self.embedder != EmbedderKind::Host {
            return Err(fail("this index uses the embedded embedder"));
        }
        let q = self.query_unit(vector)?;
        Ok(self.scopes.get(session).and_then(|s| s.ivf.as_ref()).map(|p| (p.centroids.len(), p.probe(&q).len())))
    }

    /// Loads an embedded snapshot's records and inverted index (see [`Index::restore`]).
    fn load_embedded(&mut self, records: Vec<MemoryRecord>, lexical: Vec<SnapScope>) -> Result<()> {
        let mut by_session: SortedMap<String, Vec<MemoryRecord>> = SortedMap::new();
        for r in records {
            by_session.get_or_insert_with(r.session.clone(), Vec::new).push(r);
        }
        let mut postings: SortedMap<String, SnapScope> = SortedMap::new();
        for (i, l) in lexical.into_iter().enumerate() {
            if by_session.get(&l.session).is_none() {
                return Err(fail(format!("memory snapshot lexical[{i}] names session {:?}, which has no records", l.session)));
            }
            let name = l.session.clone();
            if postings.insert(name.clone(), l).is_some() {
                return Err(fail(format!("memory snapshot lexical[{i}] repeats session {name:?}")));
            }
        }
        for (session, recs) in by_session.into_vec() {
            match postings.remove(&session) {
                None => {
                    self.add(recs)?;
                }
                Some(lex) => {
                    let scope = load_scope(&session, recs, lex)?;
                    self.scopes.insert(session, scope);
                }
            }
        }
        Ok(())
    }
}

/// One session's scope from snapshot records (in scope order) and postings.
fn load_scope(session: &str, records: Vec<MemoryRecord>, lex: SnapScope) -> Result<Scope> {
    let SnapScope { terms, lengths, .. } = lex;
    let bad = |m: String| fail(format!("memory snapshot, session {session:?}: {m}"));
    let n = records.len();
    let mut scope = Scope::default();
    for r in records {
        let slot = scope.take_slot();
        let key = key_of(&r);
        if scope.ids.insert(r.id.clone(), key.clone()).is_some() {
            return Err(bad(format!("record id {:?} appears twice", r.id)));
        }
        scope.order.insert(key, slot);
        if let Some(d) = scope.docs.get_mut(slot as usize) {
            *d = Some(Doc { record: r, terms: Vec::new(), vector: None });
        }
    }
    let mut prev_term: Option<String> = None;
    for (text, flat) in terms {
        if prev_term.as_ref().is_some_and(|p| *p >= text) {
            return Err(bad(format!("term {text:?} is out of order or repeated")));
        }
        if flat.is_empty() || flat.len() % 2 != 0 {
            return Err(bad(format!("term {text:?} needs position/count pairs")));
        }
        let ix = scope.term_ix(text.clone());
        let mut last: Option<u32> = None;
        for pair in flat.chunks_exact(2) {
            let (pos, tf) = match pair {
                [p, t] => (*p, *t),
                _ => continue,
            };
            if pos as usize >= n || tf == 0 || last.is_some_and(|l| l >= pos) {
                return Err(bad(format!("term {text:?} has a bad posting ({pos}, {tf}) for {n} records")));
            }
            last = Some(pos);
            if let Some(t) = scope.terms.get_mut(ix as usize) {
                t.postings.push((pos, tf));
            }
            if let Some(Some(d)) = scope.docs.get_mut(pos as usize) {
                d.terms.push((ix, tf));
            }
        }
        prev_term = Some(text);
    }
    if lengths.len() != n {
        return Err(bad(format!("{} lengths for {n} records", lengths.len())));
    }
    for (pos, (&len, slot)) in lengths.iter().zip(scope.lens.iter_mut()).enumerate() {
        let holds = scope.docs.get(pos).and_then(Option::as_ref).is_some_and(|d| !d.terms.is_empty());
        if len == 0 || !holds {
            return Err(bad(format!("record at position {pos} holds no term")));
        }
        *slot = len;
        scope.total_len = scope.total_len.saturating_add(u64::from(len));
    }
    Ok(scope)
}

#[derive(Deserialize)]
struct SnapshotHead {
    format: String,
    version: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    format: String,
    version: u32,
    embedder: String,
    dimension: usize,
    records: Vec<SnapEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    lexical: Option<Vec<SnapScope>>,
    /// Version 4, host-vector index: each partitioned session's centroids and lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ivf: Option<Vec<SnapIvf>>,
}

/// One session's partition in a snapshot: `{ session, trainedAt, centroids: [[u32 bit
/// patterns]], lists: [list number by record position] }`.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapIvf {
    session: String,
    trained_at: usize,
    centroids: Vec<Vec<u32>>,
    lists: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapEntry {
    record: MemoryRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vector: Option<Vec<u32>>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapScope {
    session: String,
    /// BM25 length of each record, by position.
    lengths: Vec<u32>,
    terms: Vec<(String, Vec<u32>)>,
}

/// Page token: `v1:<source start>:<source end>:<byte start>:<id>` of the last record.
fn format_token(k: &Key) -> String {
    format!("v1:{}:{}:{}:{}", k.0, k.1, k.2, k.3)
}

fn parse_token(t: &str) -> Result<Key> {
    let bad = || fail(format!("page token {t:?} is not a token this index issued"));
    let mut parts = t.splitn(5, ':');
    if parts.next() != Some("v1") {
        return Err(bad());
    }
    let mut num = || parts.next().and_then(|p| p.parse::<usize>().ok()).ok_or_else(bad);
    let (a, b, c) = (num()?, num()?, num()?);
    let id = parts.next().ok_or_else(bad)?;
    Ok((a, b, c, id.to_string()))
}
