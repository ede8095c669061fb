//! The embedded index (M-3, M-4): session-scoped records with exact cosine search,
//! deterministic paging, atomic scope removal and a versioned snapshot.
//!
//! Each session is its own scope with its own document-frequency table, so scores in
//! one session never depend on another session's records, and no operation but
//! [`Index::snapshot`] ever reads across scopes.

use super::embed::{self, DEFAULT_DIMENSION, EMBEDDER_ID};
use super::MemoryRecord;
use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use crate::sorted::{SortedMap, SortedSet};

/// Largest dimension an index accepts (host vectors and snapshots).
pub const MAX_DIMENSION: usize = 65_536;

/// Scores at or below this are not hits (unrelated texts, hash-collision noise).
const MIN_SCORE: f32 = 1e-6;

/// Snapshot `format` tag and current `version`.
const SNAPSHOT_FORMAT: &str = "context-compactor/memory-index";
const SNAPSHOT_VERSION: u32 = 1;
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

/// One search hit: the record and its cosine similarity to the query, in `(0, 1]`.
///
/// JSON shape: `{ record: MemoryRecord, score }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The matching record.
    pub record: MemoryRecord,
    /// Cosine similarity (unitless), `> 0`.
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

#[derive(Debug, Clone)]
struct Entry {
    record: MemoryRecord,
    /// Term counts (embedded embedder only).
    terms: Vec<(u64, u32)>,
    /// Unit vector; `None` when the embedded vector came out zero.
    vector: Option<Vector>,
}

/// A stored unit vector: sparse for the embedded embedder (few buckets are non-zero),
/// dense for host vectors.
#[derive(Debug, Clone)]
enum Vector {
    Dense(Vec<f32>),
    /// `(bucket, value)` pairs in bucket order, zeros left out.
    Sparse(Vec<(u32, f32)>),
}

impl Vector {
    fn sparse(dense: &[f32]) -> Vector {
        Vector::Sparse(
            dense
                .iter()
                .enumerate()
                .filter(|(_, x)| **x != 0.0)
                .filter_map(|(i, x)| u32::try_from(i).ok().map(|i| (i, *x)))
                .collect(),
        )
    }

    /// Cosine with a dense unit query of the index's dimension.
    fn dot(&self, query: &[f32]) -> f32 {
        match self {
            Vector::Dense(v) => embed::dot(query, v),
            Vector::Sparse(pairs) => pairs
                .iter()
                .filter_map(|&(i, x)| query.get(i as usize).map(|q| f64::from(*q) * f64::from(x)))
                .sum::<f64>() as f32,
        }
    }

    fn bits(&self, dim: usize) -> Vec<u32> {
        match self {
            Vector::Dense(v) => v.iter().map(|x| x.to_bits()).collect(),
            Vector::Sparse(pairs) => {
                let mut dense = vec![0u32; dim];
                for &(i, x) in pairs {
                    if let Some(slot) = dense.get_mut(i as usize) {
                        *slot = x.to_bits();
                    }
                }
                dense
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Scope {
    entries: SortedMap<Key, Entry>,
    keys: SortedMap<String, Key>,
    /// term -> number of records holding it (embedded embedder only).
    df: SortedMap<u64, u32>,
}

impl Scope {
    fn docs(&self) -> u32 {
        u32::try_from(self.entries.len()).unwrap_or(u32::MAX)
    }

    /// Inserts or replaces by id; returns true when it replaced.
    fn upsert(&mut self, entry: Entry) -> bool {
        let replaced = self.remove(&entry.record.id);
        for &(t, _) in &entry.terms {
            let c = self.df.get_or_insert_with(t, || 0);
            *c = c.saturating_add(1);
        }
        let key = key_of(&entry.record);
        self.keys.insert(entry.record.id.clone(), key.clone());
        self.entries.insert(key, entry);
        replaced
    }

    fn remove(&mut self, id: &str) -> bool {
        let Some(key) = self.keys.remove(id) else { return false };
        if let Some(old) = self.entries.remove(&key) {
            for (t, _) in old.terms {
                if let Some(c) = self.df.get_mut(&t) {
                    *c = c.saturating_sub(1);
                    if *c == 0 {
                        self.df.remove(&t);
                    }
                }
            }
        }
        true
    }

    /// Recomputes every embedded vector against the current document frequencies.
    fn reembed(&mut self, dim: usize) {
        let docs = self.docs();
        let df = &self.df;
        for e in self.entries.values_mut() {
            e.vector = embed::vectorize(&e.terms, dim, docs, |t| df.get(&t).copied().unwrap_or(0))
                .map(|v| Vector::sparse(&v));
        }
    }

    fn rank(&self, query: &[f32], limit: usize) -> Vec<Hit> {
        let mut scored: Vec<(f32, &Key, &Entry)> = self
            .entries
            .iter()
            .filter_map(|(k, e)| {
                let s = e.vector.as_ref()?.dot(query);
                (s.is_finite() && s > MIN_SCORE).then_some((s, k, e))
            })
            .collect();
        crate::sorted::sort_by(&mut scored, |a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored
            .into_iter()
            .take(limit)
            .map(|(score, _, e)| Hit { record: e.record.clone(), score: score.min(1.0) })
            .collect()
    }
}

/// A session-scoped memory index with exact cosine search (M-3, M-4).
///
/// Build with [`Index::new`] (embedded embedder, [`DEFAULT_DIMENSION`] dimensions) or
/// [`Index::with_dimension`] (host vectors of a declared dimension).
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
        self.scopes.get(session).map_or(0, |s| s.entries.len())
    }

    /// True when no session holds any record.
    pub fn is_empty(&self) -> bool {
        self.scopes.values().all(|s| s.entries.is_empty())
    }

    /// Sessions holding at least one record, in byte order.
    pub fn sessions(&self) -> Vec<String> {
        self.scopes.iter().filter(|(_, s)| !s.entries.is_empty()).map(|(k, _)| k.clone()).collect()
    }

    /// Adds records with the embedded embedder, each into the scope of its own
    /// `session`. A record with the id of a stored record of the same session replaces
    /// it (projection is idempotent). Records whose content has no tokens are not
    /// stored (listed in `skipped`). Fails with `memory_failed`, storing nothing, on a
    /// host-vector index.
    pub fn add(&mut self, records: Vec<MemoryRecord>) -> Result<AddReport> {
        if self.embedder != EmbedderKind::Embedded {
            return Err(fail("this index stores host vectors; use add_with_vectors"));
        }
        let mut report = AddReport::default();
        let mut touched: SortedSet<String> = SortedSet::new();
        for record in records {
            let terms = embed::term_counts(&record.content);
            if terms.is_empty() {
                report.skipped.push(record.id);
                continue;
            }
            touched.insert(record.session.clone());
            let scope = self.scopes.get_or_insert_with(record.session.clone(), Scope::default);
            if scope.upsert(Entry { record, terms, vector: None }) {
                report.replaced += 1;
            } else {
                report.added += 1;
            }
        }
        for s in touched.into_vec() {
            if let Some(scope) = self.scopes.get_mut(&s) {
                scope.reembed(self.dim);
            }
        }
        Ok(report)
    }

    /// Adds records with host vectors: `vectors[i]` embeds `records[i]`, each of exactly
    /// [`Index::dimension`] finite components, not all zero (stored L2-normalised).
    /// Same-id records replace stored ones. Fails with `memory_failed`, storing nothing,
    /// on an embedded index, a count mismatch, a wrong dimension or a zero vector.
    pub fn add_with_vectors(&mut self, records: Vec<MemoryRecord>, vectors: Vec<Vec<f32>>) -> Result<AddReport> {
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
        for (record, vector) in records.into_iter().zip(units) {
            let scope = self.scopes.get_or_insert_with(record.session.clone(), Scope::default);
            if scope.upsert(Entry { record, terms: Vec::new(), vector: Some(Vector::Dense(vector)) }) {
                report.replaced += 1;
            } else {
                report.added += 1;
            }
        }
        Ok(report)
    }

    /// The embedded query vector of `query` against `session`'s document frequencies
    /// (`None` when the query has no tokens).
    fn query_vector(&self, scope: &Scope, query: &str) -> Option<Vec<f32>> {
        let terms = embed::term_counts(query);
        embed::vectorize(&terms, self.dim, scope.docs(), |t| scope.df.get(&t).copied().unwrap_or(0))
    }

    /// Text search in one session (embedded embedder): at most `limit` hits with cosine
    /// similarity > 0, best first (ties in scope order). Empty for an unknown session,
    /// a query without tokens, `limit == 0`, or a host-vector index. Only `session`'s
    /// records are ever considered, whatever the query names.
    pub fn search(&self, session: &str, query: &str, limit: usize) -> Vec<Hit> {
        if self.embedder != EmbedderKind::Embedded || limit == 0 {
            return Vec::new();
        }
        let Some(scope) = self.scopes.get(session) else { return Vec::new() };
        match self.query_vector(scope, query) {
            Some(q) => scope.rank(&q, limit),
            None => Vec::new(),
        }
    }

    /// Vector search in one session (host vectors): like [`Index::search`] with a host
    /// query vector of [`Index::dimension`] components. Fails with `memory_failed` on
    /// an embedded index, a wrong dimension or a zero / non-finite vector.
    pub fn search_by_vector(&self, session: &str, vector: &[f32], limit: usize) -> Result<Vec<Hit>> {
        if self.embedder != EmbedderKind::Host {
            return Err(fail("this index uses the embedded embedder; use search"));
        }
        if vector.len() != self.dim {
            return Err(fail(format!("query vector has {} components; the index declares {}", vector.len(), self.dim)));
        }
        let q = embed::normalize(vector).ok_or_else(|| fail("query vector is zero or not finite"))?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        Ok(self.scopes.get(session).map(|s| s.rank(&q, limit)).unwrap_or_default())
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
        let mut iter: Box<dyn Iterator<Item = (&Key, &Entry)>> = match &after {
            None => Box::new(scope.entries.iter()),
            Some(k) => Box::new(
                scope.entries.iter_after(k),
            ),
        };
        let mut records = Vec::with_capacity(size);
        let mut last: Option<&Key> = None;
        for (k, e) in iter.by_ref().take(size) {
            records.push(e.record.clone());
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
        self.scopes.remove(session).map_or(0, |s| s.entries.len())
    }

    /// Serializes the whole index as versioned JSON bytes:
    /// `{ format: "context-compactor/memory-index", version: 1, embedder, dimension,
    ///    records: [{ record, vector? }] }`, sessions and records in order (same index,
    /// same bytes). Embedded vectors are not stored (they are recomputed on restore);
    /// host vectors are stored as the bit patterns of their f32 components.
    pub fn snapshot(&self) -> Vec<u8> {
        let records = self
            .scopes
            .values()
            .flat_map(|s| s.entries.values())
            .map(|e| SnapEntry {
                record: e.record.clone(),
                vector: match self.embedder {
                    EmbedderKind::Host => e.vector.as_ref().map(|v| v.bits(self.dim)),
                    EmbedderKind::Embedded => None,
                },
            })
            .collect();
        let snap = Snapshot {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            embedder: match self.embedder {
                EmbedderKind::Embedded => EMBEDDER_ID.to_string(),
                EmbedderKind::Host => HOST_EMBEDDER_ID.to_string(),
            },
            dimension: self.dim,
            records,
        };
        serde_json::to_vec(&snap).unwrap_or_default()
    }

    /// Rebuilds an index from [`Index::snapshot`] bytes. Fails with `memory_failed` on
    /// bytes that are not a snapshot, an unknown format, version or embedder, a bad
    /// dimension, or a host record without a valid vector.
    pub fn restore(bytes: &[u8]) -> Result<Index> {
        let snap: Snapshot =
            serde_json::from_slice(bytes).map_err(|e| fail(format!("memory snapshot is not valid: {e}")))?;
        if snap.format != SNAPSHOT_FORMAT {
            return Err(fail(format!("memory snapshot format {:?} is not {SNAPSHOT_FORMAT:?}", snap.format)));
        }
        if snap.version != SNAPSHOT_VERSION {
            return Err(fail(format!("memory snapshot version {} is not supported (expected {SNAPSHOT_VERSION})", snap.version)));
        }
        check_dimension(snap.dimension)?;
        if snap.embedder == EMBEDDER_ID {
            let mut index = Index { dim: snap.dimension, embedder: EmbedderKind::Embedded, scopes: SortedMap::new() };
            index.add(snap.records.into_iter().map(|e| e.record).collect())?;
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
            index.add_with_vectors(records, vectors)?;
            Ok(index)
        } else {
            Err(fail(format!("memory snapshot embedder {:?} is unknown", snap.embedder)))
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    format: String,
    version: u32,
    embedder: String,
    dimension: usize,
    records: Vec<SnapEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SnapEntry {
    record: MemoryRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vector: Option<Vec<u32>>,
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
