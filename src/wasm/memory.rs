//! Semantic memory at the JS boundary (M-1..M-4): the `MemoryIndex` class over the
//! embedded index, `recallToolDefinition`, the memory hooks of `compact`, and the
//! host-store path (`recallFromStore`, `enumerateStore`, `dropStoreScope`) for hosts
//! that keep records in their own store (IndexedDB, a Durable Object, a vector DB).
//!
//! Records and results cross as plain JSON (camelCase, see [`crate::memory`]); a
//! snapshot crosses as a `Uint8Array`. The `lite` build leaves `MemoryIndex` out
//! (`super::lite` has a stand-in that throws `not_in_lite`); the hooks and the host-store
//! path stay.
#![cfg_attr(feature = "lite", allow(dead_code, unused_imports))]

use super::{to_js, call_hook, from_json, get, js_error, js_type, json_text, str_arg};
use crate::error::{Error, ErrorCode};
#[cfg(not(feature = "lite"))]
use crate::memory::Index;
use crate::memory::{self, MemoryBatch, MemoryRecord, MAX_DIMENSION, MAX_LIMIT};
use js_sys::{Array, Function, Promise, JSON};
use serde_json::Value;
use wasm_bindgen::prelude::*;

fn fail(message: impl Into<String>) -> JsValue {
    js_error(&Error::new(ErrorCode::MemoryFailed, message))
}

fn bad_config(message: impl Into<String>) -> JsValue {
    js_error(&Error::new(ErrorCode::InvalidConfig, message))
}

/// A session name from JS: a string that is well-formed UTF-16. A lone surrogate is
/// refused (`code`), since the UTF-8 the index keeps would turn it into U+FFFD and two
/// different names (`"t\uD800"`, `"t\uFFFD"`) would share one scope (M-4).
fn session_name(v: &JsValue, what: &str, code: ErrorCode) -> Result<String, JsValue> {
    let s = v
        .dyn_ref::<js_sys::JsString>()
        .ok_or_else(|| js_error(&Error::new(code, format!("{what} must be a string, got {}", js_type(v)))))?;
    if !super::well_formed(s) {
        return Err(js_error(&Error::new(code, format!("{what} holds a lone surrogate (not well-formed UTF-16)"))));
    }
    Ok(s.as_string().unwrap_or_default())
}

/// A `session` argument of a `MemoryIndex` method: a well-formed string, else
/// `memory_failed`.
fn session_arg(v: &JsValue, method: &str) -> Result<String, JsValue> {
    session_name(v, &format!("MemoryIndex.{method}: session"), ErrorCode::MemoryFailed)
}

/// Records from JS: an array of records, or a batch `{ session, records }`. Anything
/// that is not valid records (not JSON-serializable, wrong shape, a lone surrogate in
/// a string) fails with `memory_failed`, naming what is wrong.
fn parse_records(v: &JsValue) -> Result<Vec<MemoryRecord>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Err(fail(format!("records: expected an array of memory records or {{ session, records }}, got {}", js_type(v))));
    }
    let text = json_text(v, "records", ErrorCode::MemoryFailed)?;
    let mut j: Value = serde_json::from_str(&text).map_err(|e| fail(format!("records: invalid JSON: {e}")))?;
    if let Value::Object(map) = &mut j {
        j = map.remove("records").unwrap_or(Value::Null);
    }
    serde_json::from_value(j).map_err(|e| fail(format!("records: {e}")))
}

/// Vectors from JS; `what` names the source, `dim` the components of one vector (for a
/// flat `Float32Array`).
///
/// Accepted shapes: an array whose rows are `Float32Array` / `Float64Array` (each copied
/// out of JS memory in one go) or `number[]` (read number by number, every element
/// checked to be a number); or, with `dim`, one `Float32Array` holding the vectors one
/// after another (`n * dim` components, copied in one go). Anything else, or a flat
/// array whose length is not a multiple of `dim`, fails with `memory_failed` naming
/// `what` (and the row and element).
fn parse_vectors(v: &JsValue, what: &str, dim: Option<usize>) -> Result<Vec<Vec<f32>>, JsValue> {
    if let (Some(flat), Some(d)) = (v.dyn_ref::<js_sys::Float32Array>(), dim) {
        let all = flat.to_vec();
        if d == 0 || all.len() % d != 0 {
            return Err(fail(format!("{what}: a Float32Array of {} components is not a whole number of {d}-component vectors", all.len())));
        }
        return Ok(all.chunks_exact(d).map(<[f32]>::to_vec).collect());
    }
    if !Array::is_array(v) {
        let also = if dim.is_some() { " or one Float32Array" } else { "" };
        return Err(fail(format!("{what}: expected an array of vectors{also}")));
    }
    let outer = Array::from(v);
    let mut out = Vec::with_capacity(outer.length() as usize);
    for (i, row) in outer.iter().enumerate() {
        if let Some(f) = row.dyn_ref::<js_sys::Float32Array>() {
            out.push(f.to_vec());
            continue;
        }
        if let Some(f) = row.dyn_ref::<js_sys::Float64Array>() {
            out.push(f.to_vec().into_iter().map(|x| x as f32).collect());
            continue;
        }
        if !row.is_object() {
            return Err(fail(format!("{what}[{i}]: expected an array of numbers")));
        }
        let inner = Array::from(&row);
        let mut vec = Vec::with_capacity(inner.length() as usize);
        for (k, x) in inner.iter().enumerate() {
            let Some(f) = x.as_f64() else {
                return Err(fail(format!("{what}[{i}][{k}]: not a number")));
            };
            vec.push(f as f32);
        }
        out.push(vec);
    }
    Ok(out)
}

/// `limit` of a recall: absent -> default 5; a number is floored and clamped to 1..=20.
fn parse_limit(options: &JsValue) -> Result<Option<usize>, JsValue> {
    let l = get(options, "limit");
    if l.is_undefined() || l.is_null() {
        return Ok(None);
    }
    match l.as_f64() {
        Some(n) if n.is_finite() => Ok(Some(n.floor().clamp(0.0, MAX_LIMIT as f64) as usize)),
        _ => Err(fail("recall: limit must be a finite number")),
    }
}

/// `ranking` of a recall: absent -> `None`; `"fused"`, `"lexical"` (or `"bm25"`) or
/// `"vector"` -> the ranking and its name; anything else `memory_failed` (`what` names the call).
fn parse_ranking(options: &JsValue, what: &str) -> Result<Option<(memory::Ranking, String)>, JsValue> {
    let r = get(options, "ranking");
    if r.is_undefined() || r.is_null() {
        return Ok(None);
    }
    r.as_string()
        .and_then(|n| memory::Ranking::parse(&n).map(|k| (k, n)))
        .map(Some)
        .ok_or_else(|| fail(format!("{what}: ranking must be \"fused\", \"lexical\" or \"vector\"")))
}

/// Checks an `embed()` answer: `count` vectors of `dimension` finite components, none
/// all zero. Throws `memory_failed` naming the first bad vector.
fn check_vectors(vectors: &[Vec<f32>], count: usize, dimension: usize) -> Result<(), JsValue> {
    if vectors.len() != count {
        return Err(fail(format!("embed() returned {} vectors for {count} texts", vectors.len())));
    }
    for (i, v) in vectors.iter().enumerate() {
        if v.len() != dimension {
            return Err(fail(format!("embed() vector {i} has {} components; embedDimension is {dimension}", v.len())));
        }
        if v.iter().any(|x| !x.is_finite()) || v.iter().all(|x| *x == 0.0) {
            return Err(fail(format!("embed() vector {i} is zero or not finite")));
        }
    }
    Ok(())
}

/// A recall result -> JS value. Through `serde_json::Value`, as ever: its `score` is an
/// `f32`, which `Value` widens to `f64` (the JSON spelling hosts already see).
fn json_out(v: &memory::RecallResult) -> Result<JsValue, JsValue> {
    from_json(&serde_json::to_value(v).map_err(|e| fail(e.to_string()))?)
}

/// A session-scoped memory index living in wasm (M-3, M-4).
///
/// `new MemoryIndex()` uses the embedded embedder (deterministic hashed, IDF-weighted
/// bag of words, 512 dimensions); `new MemoryIndex({ dimension })` stores host vectors
/// of that many components instead (fill it with `addWithVectors`, query with
/// `recall(session, query, { vector })`). Every read names one session and never
/// sees another session's records.
#[cfg(not(feature = "lite"))]
#[wasm_bindgen]
pub struct MemoryIndex {
    inner: Index,
}

#[cfg(not(feature = "lite"))]
#[wasm_bindgen]
impl MemoryIndex {
    /// `new MemoryIndex(options?)`, `options: { dimension? }`. Throws `memory_failed`
    /// when `dimension` is not an integer in 1..=65536.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<MemoryIndex, JsValue> {
        let d = get(&options, "dimension");
        if d.is_undefined() || d.is_null() {
            return Ok(MemoryIndex { inner: Index::new() });
        }
        let n = d.as_f64().filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_DIMENSION as f64).ok_or_else(|| fail(format!("dimension must be an integer in 1..={MAX_DIMENSION}")))?;
        Index::with_dimension(n as usize).map(|inner| MemoryIndex { inner }).map_err(|e| js_error(&e))
    }

    /// `MemoryIndex.restore(bytes)`: rebuilds an index from `snapshot()` bytes (the
    /// host kept them in its store). Throws `memory_failed` on bytes that are not a
    /// snapshot of a known version.
    pub fn restore(bytes: JsValue) -> Result<MemoryIndex, JsValue> {
        // A `&[u8]` parameter's glue traps on a non-array value; check the type here.
        let bytes = bytes.dyn_into::<js_sys::Uint8Array>().map_err(|v| fail(format!("MemoryIndex.restore: bytes must be a Uint8Array, got {}", js_type(&v))))?.to_vec();
        Index::restore(&bytes).map(|inner| MemoryIndex { inner }).map_err(|e| js_error(&e))
    }

    /// Versioned JSON snapshot of the whole index as a `Uint8Array` (same index, same
    /// bytes).
    pub fn snapshot(&self) -> Vec<u8> {
        self.inner.snapshot()
    }

    /// Vector components (512 for the embedded embedder).
    #[wasm_bindgen(getter)]
    pub fn dimension(&self) -> usize {
        self.inner.dimension()
    }

    /// `"embedded"` or `"host"`.
    #[wasm_bindgen(getter)]
    pub fn embedder(&self) -> String {
        match self.inner.embedder() {
            memory::EmbedderKind::Embedded => "embedded".into(),
            memory::EmbedderKind::Host => "host".into(),
        }
    }

    /// Number of records stored for `session`.
    pub fn size(&self, session: JsValue) -> Result<usize, JsValue> {
        Ok(self.inner.len(&session_arg(&session, "size")?))
    }

    /// Sessions holding records, in byte order.
    pub fn sessions(&self) -> Vec<String> {
        self.inner.sessions()
    }

    /// `add(records | { session, records })` -> `{ added, replaced, skipped: [id] }`.
    /// Each record goes to its own `session`; same id replaces. Embedded index only;
    /// throws `memory_failed` (storing nothing) on malformed records or a host index.
    pub fn add(&mut self, records: JsValue) -> Result<JsValue, JsValue> {
        let records = parse_records(&records)?;
        let report = self.inner.add(records).map_err(|e| js_error(&e))?;
        to_js(&report)
    }

    /// `addWithVectors(records, vectors)`: host vectors (`number[][]`, one per record,
    /// `dimension` components each, not all zero). Host index only; throws
    /// `memory_failed` storing nothing otherwise.
    #[wasm_bindgen(js_name = addWithVectors)]
    pub fn add_with_vectors(&mut self, records: JsValue, vectors: JsValue) -> Result<JsValue, JsValue> {
        let records = parse_records(&records)?;
        let vectors = parse_vectors(&vectors, "vectors", Some(self.inner.dimension()))?;
        let report = self.inner.add_with_vectors(records, vectors).map_err(|e| js_error(&e))?;
        to_js(&report)
    }

    /// `recall(session, query, { limit?, vector?, ranking?, alpha? })` -> `{ query, limit,
    /// hits: [{ id, content, score, messageId, role, sourceRange, kind, toolName?,
    /// callId?, handle?, mentions? }] }` (M-2). `limit`: default 5, clamped to 1..=20.
    /// Only `session`'s records are searched. `ranking`: `"fused"` (default: BM25 over
    /// the inverted index and the vectors, fused), `"lexical"` (BM25 alone) or
    /// `"vector"` (the vectors alone); anything else throws `memory_failed`. A host index
    /// needs `vector` (the host's embedding of `query`); its fused ranking weighs the
    /// host vectors by `alpha` (a number in [0, 1], default 0.2, relative score fusion,
    /// see `Index::search_with`); `alpha` is ignored on an embedded index. A host
    /// index of at least 4,096 records in a session reads the lists of its partition
    /// nearest to `vector` (an IVF index); `exact: true` computes every record's cosine
    /// instead (for comparison).
    pub fn recall(&self, session: JsValue, query: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let session = session_arg(&session, "recall")?;
        let query = str_arg(&query, "recall: query", ErrorCode::MemoryFailed)?;
        let (session, query) = (session.as_str(), query.as_str());
        let limit = parse_limit(&options)?;
        let ranking = parse_ranking(&options, "recall")?.map(|(r, _)| r).unwrap_or(memory::Ranking::Fused);
        let result = match self.inner.embedder() {
            memory::EmbedderKind::Embedded => {
                memory::recall_with(&self.inner, session, query, limit, &memory::RecallOptions { ranking, ..Default::default() }).map_err(|e| js_error(&e))?
            }
            memory::EmbedderKind::Host => {
                let v = get(&options, "vector");
                if v.is_undefined() || v.is_null() {
                    return Err(fail("recall on a host-vector index needs options.vector"));
                }
                let wrapped = Array::of1(&v);
                let vector = parse_vectors(&wrapped.into(), "options.vector", None)?.into_iter().next().unwrap_or_default();
                let a = get(&options, "alpha");
                let alpha = if a.is_undefined() || a.is_null() {
                    None
                } else {
                    Some(a.as_f64().filter(|x| (0.0..=1.0).contains(x)).ok_or_else(|| fail("recall: alpha must be a number in [0, 1]"))?)
                };
                let exact = get(&options, "exact");
                let exact = if exact.is_undefined() || exact.is_null() {
                    false
                } else {
                    exact.as_bool().ok_or_else(|| fail("recall: exact must be a boolean"))?
                };
                let options = memory::RecallOptions { ranking, vector: Some(&vector), alpha, exact };
                memory::recall_with(&self.inner, session, query, limit, &options).map_err(|e| js_error(&e))?
            }
        };
        json_out(&result)
    }

    /// `enumerate(session, { pageToken?, pageSize? })` -> `{ records, next }` (M-4):
    /// records in source order, `pageSize` default 100 (floored, clamped to 1..=1000),
    /// `next` is the token of the following page or null on the last one. Throws
    /// `memory_failed` when `pageToken` is neither a string nor null / undefined, when
    /// `pageSize` is not a finite number, or on a token this index did not issue.
    pub fn enumerate(&self, session: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
        let session = session_arg(&session, "enumerate")?;
        let session = session.as_str();
        let t = get(&options, "pageToken");
        let token = if t.is_undefined() || t.is_null() {
            None
        } else {
            Some(t.as_string().ok_or_else(|| fail(format!("MemoryIndex.enumerate: pageToken must be a string or null, got {}", js_type(&t))))?)
        };
        let s = get(&options, "pageSize");
        let size = if s.is_undefined() || s.is_null() {
            100
        } else {
            s.as_f64()
                .filter(|n| n.is_finite())
                .ok_or_else(|| fail(format!("MemoryIndex.enumerate: pageSize must be a finite number, got {}", js_type(&s))))?
                .floor()
                .clamp(1.0, 1000.0) as usize
        };
        let page = self.inner.enumerate(session, token.as_deref(), size).map_err(|e| js_error(&e))?;
        to_js(&page)
    }

    /// `dropScope(session)` -> how many records were removed, all at once (M-4).
    #[wasm_bindgen(js_name = dropScope)]
    pub fn drop_scope(&mut self, session: JsValue) -> Result<usize, JsValue> {
        Ok(self.inner.drop_scope(&session_arg(&session, "dropScope")?))
    }

    /// `resolveHandle(session, "artifact#N", loadArtifact)` -> Promise of what
    /// `loadArtifact(handle)` returns (M-2). The handle must belong to a record of
    /// `session`; otherwise it rejects with `memory_failed` and the loader is not
    /// called (no cross-session reads, M-4).
    #[wasm_bindgen(js_name = resolveHandle)]
    pub fn resolve_handle(&self, session: JsValue, handle: JsValue, load_artifact: JsValue) -> Result<Promise, JsValue> {
        let session = session_arg(&session, "resolveHandle")?;
        let handle = str_arg(&handle, "resolveHandle: handle", ErrorCode::MemoryFailed)?;
        let (session, handle) = (session.as_str(), handle.as_str());
        let loader = load_artifact.dyn_into::<Function>().map_err(|_| fail("resolveHandle: loadArtifact must be a function"))?;
        if !self.holds_handle(session, handle)? {
            return Err(fail(format!("handle {handle:?} is not in the memory of session {session:?}")));
        }
        let arg = JsValue::from_str(handle);
        Ok(super::promise(async move { call_hook(&loader, &arg).await }))
    }
}

#[cfg(not(feature = "lite"))]
impl MemoryIndex {
    fn holds_handle(&self, session: &str, handle: &str) -> Result<bool, JsValue> {
        let mut token: Option<String> = None;
        loop {
            let page = self.inner.enumerate(session, token.as_deref(), 1000).map_err(|e| js_error(&e))?;
            if page.records.iter().any(|r| r.handle.as_deref() == Some(handle)) {
                return Ok(true);
            }
            match page.next {
                Some(t) => token = Some(t),
                None => return Ok(false),
            }
        }
    }
}

/// `recallToolDefinition(format)` -> the `recall` tool in that provider's tool shape
/// (`openai-chat`, `openai-responses`, `anthropic`, `gemini`, `ai-sdk`) (M-2). Throws
/// `unknown_format` for any other name.
#[wasm_bindgen(js_name = recallToolDefinition)]
pub fn recall_tool_definition(format: JsValue) -> Result<JsValue, JsValue> {
    let format = str_arg(&format, "recallToolDefinition: format", ErrorCode::UnknownFormat)?;
    let def = memory::recall_tool_definition(&format);
    if def.is_null() {
        return Err(js_error(&Error::new(ErrorCode::UnknownFormat, format!("no recall tool shape for format {format:?}"))));
    }
    from_json(&def)
}

/// The memory hooks of one `compact` call.
///
/// - `sessionId` (string, default `"default"`): the scope of the batch.
/// - `memory`: a `MemoryIndex` (or any object with `add(records)` /
///   `addWithVectors(records, vectors)`): records are added before the commit.
/// - `embed(texts) -> number[][]` (sync or async) with `embedDimension`: the host's
///   embedder; each vector must have `embedDimension` finite components, not all zero.
/// - `store: { put(records, vectors | null), search?, enumerate?, drop? }`: the host's
///   store; `put` (sync or async) must accept the batch before the commit.
///
/// Any throw or rejection fails the compaction, which rejects with that error (the
/// transcript and state are not advanced).
pub(crate) struct MemoryHooks {
    pub session: String,
    memory: Option<JsValue>,
    embed: Option<Function>,
    dimension: usize,
    store: Option<JsValue>,
}

impl MemoryHooks {
    /// Reads and checks the hooks; throws `invalid_config` on a bad combination.
    pub fn from_hooks(hooks: &JsValue) -> Result<MemoryHooks, JsValue> {
        let sid = get(hooks, "sessionId");
        let session = if sid.is_undefined() || sid.is_null() {
            "default".to_string()
        } else {
            nonempty_session(&sid, "sessionId", ErrorCode::InvalidConfig)?
        };
        let some = |v: JsValue| (!v.is_undefined() && !v.is_null()).then_some(v);
        let memory = some(get(hooks, "memory"));
        let store = some(get(hooks, "store"));
        let embed = match some(get(hooks, "embed")) {
            None => None,
            Some(f) => Some(f.dyn_into::<Function>().map_err(|_| bad_config("embed must be a function"))?),
        };
        if memory.is_some() && store.is_some() {
            return Err(bad_config("give either memory (a MemoryIndex) or store, not both"));
        }
        if let Some(s) = &store {
            if !get(s, "put").is_function() {
                return Err(bad_config("store.put must be a function"));
            }
        }
        let mut dimension = 0;
        if embed.is_some() {
            if memory.is_none() && store.is_none() {
                return Err(bad_config("embed needs a store (or a host-vector MemoryIndex as memory) to put the vectors in"));
            }
            dimension = get(hooks, "embedDimension")
                .as_f64()
                .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_DIMENSION as f64)
                .ok_or_else(|| bad_config(format!("embedDimension must be an integer in 1..={MAX_DIMENSION} when embed is given")))? as usize;
        }
        Ok(MemoryHooks { session, memory, embed, dimension, store })
    }

    /// True when the host takes memory, so the engine must ask before committing.
    pub fn active(&self) -> bool {
        self.memory.is_some() || self.store.is_some()
    }

    async fn vectors(&self, f: &Function, batch: &MemoryBatch) -> Result<JsValue, JsValue> {
        let texts: Array = batch.records.iter().map(|r| JsValue::from_str(&r.content)).collect();
        let out = call_hook(f, &texts.into()).await?;
        let vectors = parse_vectors(&out, "embed() result", Some(self.dimension))?;
        check_vectors(&vectors, batch.records.len(), self.dimension)?;
        let rows: Array = vectors.iter().map(|v| JsValue::from(v.iter().map(|x| JsValue::from_f64(f64::from(*x))).collect::<Array>())).collect();
        Ok(rows.into())
    }

    /// Hands the batch to the host (embed, then put / add). `Err` is the host's own
    /// error (or a `memory_failed` one for a malformed answer).
    pub async fn accept(&self, batch: &MemoryBatch) -> Result<(), JsValue> {
        if batch.records.is_empty() {
            return Ok(());
        }
        let records = records_to_js(&batch.records)?;
        let vectors = match &self.embed {
            Some(f) => Some(self.vectors(f, batch).await?),
            None => None,
        };
        if let Some(store) = &self.store {
            let put = get(store, "put").dyn_into::<Function>().map_err(|_| fail("store.put must be a function"))?;
            let r = put.call2(store, &records, &vectors.unwrap_or(JsValue::NULL))?;
            wasm_bindgen_futures::JsFuture::from(Promise::resolve(&r)).await?;
            return Ok(());
        }
        if let Some(mem) = &self.memory {
            let (name, r) = match vectors {
                Some(v) => ("addWithVectors", get(mem, "addWithVectors").dyn_into::<Function>().map(|f| f.call2(mem, &records, &v))),
                None => ("add", get(mem, "add").dyn_into::<Function>().map(|f| f.call1(mem, &records))),
            };
            let r = r.map_err(|_| fail(format!("memory.{name} must be a function")))??;
            wasm_bindgen_futures::JsFuture::from(Promise::resolve(&r)).await?;
        }
        Ok(())
    }
}

/// A memory record's members but its two long texts (`context`, `content`), borrowed, in
/// the record's order and with its JSON names and omissions ([`MemoryRecord`]).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordHead<'a> {
    id: &'a str,
    session: &'a str,
    message_id: &'a str,
    role: &'a crate::transcript::Role,
    source_range: &'a [usize; 2],
    byte_range: &'a [usize; 2],
    kind: &'a crate::memory::RecordKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_name: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    call_id: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    handle: &'a Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    mentions: &'a Vec<String>,
}

/// The records as the JS array of objects `to_js(records)` gives (same members, same
/// order, same values), built as one JSON text of every record's short members, parsed
/// once, with each record's `context` and `content` set on its object as strings (issue
/// 15: escaping the long texts into JSON and parsing them back was most of handing a
/// 10 MB compaction's records to a memory hook). Every member of [`MemoryRecord`] is
/// named below, so a new member does not compile until it is handed over too.
fn records_to_js(records: &[MemoryRecord]) -> Result<JsValue, JsValue> {
    let mut heads = Vec::with_capacity(records.len());
    for r in records {
        let MemoryRecord { id, session, message_id, role, source_range, byte_range, kind, tool_name, call_id, handle, mentions, context: _, content: _ } = r;
        heads.push(RecordHead { id, session, message_id, role, source_range, byte_range, kind, tool_name, call_id, handle, mentions });
    }
    let text = serde_json::to_string(&heads).map_err(|e| fail(format!("memory records: {e}")))?;
    drop(heads);
    let array: Array = JSON::parse(&text)?.dyn_into().map_err(|_| fail("memory records: not an array"))?;
    let (context, content) = (JsValue::from_str("context"), JsValue::from_str("content"));
    for (i, r) in records.iter().enumerate() {
        let obj = array.get(u32::try_from(i).map_err(|_| fail("memory records: too many"))?);
        if let Some(c) = &r.context {
            js_sys::Reflect::set(&obj, &context, &JsValue::from_str(c))?;
        }
        js_sys::Reflect::set(&obj, &content, &JsValue::from_str(&r.content))?;
    }
    Ok(array.into())
}

// ---- The host-store path (M-2, M-4) ------------------------------------------------
//
// A host that keeps memory in its own store (the `store` hook of `compact`) reads it back
// through these functions, which give the same shapes as `MemoryIndex` and enforce the
// same rules whatever the store returns: one session per call, limit 5 by default and 20
// at most, typed `memory_failed` errors for malformed answers.

/// `session` argument of the store functions: a non-empty, well-formed string.
fn store_session(session: &JsValue, what: &str) -> Result<String, JsValue> {
    nonempty_session(session, &format!("{what}: session"), ErrorCode::MemoryFailed)
}

/// [`session_name`] that also refuses the empty string.
fn nonempty_session(v: &JsValue, what: &str, code: ErrorCode) -> Result<String, JsValue> {
    match v.as_string() {
        None => return Err(js_error(&Error::new(code, format!("{what} must be a non-empty string, got {}", js_type(v))))),
        Some(s) if s.is_empty() => return Err(js_error(&Error::new(code, format!("{what} must be a non-empty string, got \"\"")))),
        Some(_) => {}
    }
    session_name(v, what, code)
}

/// `store[name]` as a function (called with `this = store`).
fn store_method(store: &JsValue, name: &str) -> Result<Function, JsValue> {
    if !store.is_object() {
        return Err(fail(format!("store must be an object with a {name} method")));
    }
    get(store, name).dyn_into::<Function>().map_err(|_| fail(format!("store.{name} must be a function")))
}

/// Calls `store[name](request)` and awaits the answer (sync values and promises alike).
/// A throw or rejection is passed through unchanged.
async fn call_store(store: &JsValue, name: &str, request: &JsValue) -> Result<JsValue, JsValue> {
    let f = store_method(store, name)?;
    let r = f.call1(store, request).map_err(|e| coded(e, &format!("store.{name}()")))?;
    wasm_bindgen_futures::JsFuture::from(Promise::resolve(&r)).await.map_err(|e| coded(e, &format!("store.{name}()")))
}

/// Break finding 17: a host throw or rejection that is an `Error` passes through unchanged;
/// anything else (a string, `null`, a number) becomes a `memory_failed` error naming
/// `what` and the value, with the value as `cause`.
fn coded(e: JsValue, what: &str) -> JsValue {
    if e.is_instance_of::<js_sys::Error>() {
        return e;
    }
    let shown = e.as_string().map(|s| format!("{s:?}")).or_else(|| e.as_f64().map(|n| n.to_string())).unwrap_or_else(|| super::js_type(&e));
    super::with_cause(&Error::new(ErrorCode::MemoryFailed, format!("{what} threw a value that is not an Error: {shown}")), &e)
}

/// A memory record from a store answer; `what` names where it came from.
fn record_from(v: &JsValue, what: &str) -> Result<MemoryRecord, JsValue> {
    if !v.is_object() {
        return Err(fail(format!("{what}: expected a memory record object")));
    }
    let text = JSON::stringify(v).ok().and_then(|t| t.as_string()).ok_or_else(|| fail(format!("{what}: not JSON-serializable")))?;
    serde_json::from_str(&text).map_err(|e| fail(format!("{what}: {e}")))
}

/// `store.search()` answer -> hits: an array (or `{ hits }`) of `{ record, score }`.
fn parse_store_hits(out: &JsValue) -> Result<Vec<memory::Hit>, JsValue> {
    let list = if Array::is_array(out) { out.clone() } else { get(out, "hits") };
    if !Array::is_array(&list) {
        return Err(fail("store.search() must return an array of { record, score } (or { hits: [...] })"));
    }
    let mut hits = Vec::new();
    for (i, h) in Array::from(&list).iter().enumerate() {
        let score = get(&h, "score")
            .as_f64()
            .filter(|s| s.is_finite())
            .ok_or_else(|| fail(format!("store.search() hit {i}: score must be a finite number")))?;
        let record = record_from(&get(&h, "record"), &format!("store.search() hit {i}: record"))?;
        hits.push(memory::Hit { record, score: score as f32 });
    }
    Ok(hits)
}

/// `recallFromStore(store, session, query, { limit?, ranking?, embed?, embedDimension? })` ->
/// Promise of `{ query, limit, hits }`, the same shape as `MemoryIndex.recall` (M-2),
/// answered by the host's store.
///
/// - With `embed` (sync or async `(texts) -> number[][]`) and `embedDimension`, the
///   query is embedded by the host (one vector of `embedDimension` finite components,
///   not all zero, handed to the store as the host returned it) and the store is asked `store.search({ session, query, vector,
///   limit })`. Use the same embedder that filled the store through `compact`.
/// - Without `embed`, the store is asked `store.search({ session, query, limit })` and
///   searches with its own means (full text, its own embedding model). The embedded
///   embedder is not used here: its vectors are weighted by the document frequencies
///   of one in-wasm scope, so they are not comparable across a host store; hosts that
///   want it keep a `MemoryIndex` and store its `snapshot()` bytes instead.
///
/// `store.search` (sync or async) answers an array (or `{ hits }`) of `{ record, score }`
/// (`record` a full memory record, `score` a finite number, higher is better). The
/// result keeps only records of `session` (M-4, even when the store returns others),
/// one hit per record id, best first, at most `limit` (default 5; a number is rounded
/// down and clamped to 1..=20, as `MemoryIndex.recall` does). `ranking` (`"fused"`,
/// `"lexical"`, `"vector"`) is checked as `MemoryIndex.recall` checks it and, when
/// given, handed to the store as `search({ ..., ranking })`.
///
/// Rejects with `memory_failed` on a bad argument (a `ranking` of another name too), a missing `store.search`, a bad
/// embedding or a malformed answer (naming the hit and field); a store or embedder
/// throw or rejection that is an `Error` is passed through unchanged, any other thrown
/// value becomes `memory_failed` naming it (the value as `cause`).
#[wasm_bindgen(js_name = recallFromStore)]
pub fn recall_from_store(store: JsValue, session: JsValue, query: JsValue, options: JsValue) -> Promise {
    super::promise(recall_from_store_impl(store, session, query, options))
}

async fn recall_from_store_impl(store: JsValue, session: JsValue, query: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let session = store_session(&session, "recallFromStore")?;
    let query = query.as_string().ok_or_else(|| fail("recallFromStore: query must be a string"))?;
    let limit = memory::effective_limit(parse_limit(&options)?);
    // validated as MemoryIndex.recall does; the store gets it (it ranks by its own means)
    let ranking = parse_ranking(&options, "recallFromStore")?;
    store_method(&store, "search")?;
    let embed = get(&options, "embed");
    let vector = if embed.is_undefined() || embed.is_null() {
        None
    } else {
        let f = embed.dyn_into::<Function>().map_err(|_| fail("recallFromStore: options.embed must be a function"))?;
        let dimension = get(&options, "embedDimension")
            .as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_DIMENSION as f64)
            .ok_or_else(|| fail(format!("recallFromStore: options.embedDimension must be an integer in 1..={MAX_DIMENSION} when options.embed is given")))?
            as usize;
        let texts = Array::of1(&JsValue::from_str(&query));
        let out = call_hook(&f, &texts.into()).await.map_err(|e| coded(e, "embed()"))?;
        check_vectors(&parse_vectors(&out, "embed() result", None)?, 1, dimension)?;
        // The host's own vector, unchanged (no f32 rounding).
        Some(Array::from(&out).get(0))
    };
    let request = from_json(&serde_json::json!({ "session": session, "query": query, "limit": limit }))?;
    if let Some(v) = vector {
        js_sys::Reflect::set(&request, &"vector".into(), &v)?;
    }
    if let Some((_, name)) = ranking {
        js_sys::Reflect::set(&request, &"ranking".into(), &JsValue::from_str(&name))?;
    }
    let out = call_store(&store, "search", &request).await?;
    let hits = parse_store_hits(&out)?;
    json_out(&memory::recall_from_hits(&session, &query, Some(limit), hits))
}

/// `enumerateStore(store, session, { pageToken?, pageSize? })` -> Promise of
/// `{ records, next }`, the same shape as `MemoryIndex.enumerate` (M-4), read from the
/// host's store.
///
/// Asks `store.enumerate({ session, pageToken, pageSize })` (sync or async);
/// `pageToken` is null for the first page, `pageSize` defaults to 100 and is clamped to
/// 1..=1000. The store must answer `{ records, next }`: at most `pageSize` memory
/// records, every one of `session`, and `next` the (new) token of the following page or
/// null on the last one. Anything else rejects with `memory_failed` naming what is
/// wrong (a record of another session is an error here, not skipped: paging a scope
/// must see exactly that scope). A store throw or rejection is passed through when it
/// is an `Error`; another thrown value becomes `memory_failed` (the value as `cause`).
#[wasm_bindgen(js_name = enumerateStore)]
pub fn enumerate_store(store: JsValue, session: JsValue, options: JsValue) -> Promise {
    super::promise(enumerate_store_impl(store, session, options))
}

async fn enumerate_store_impl(store: JsValue, session: JsValue, options: JsValue) -> Result<JsValue, JsValue> {
    let session = store_session(&session, "enumerateStore")?;
    let t = get(&options, "pageToken");
    let token = if t.is_undefined() || t.is_null() {
        None
    } else {
        Some(t.as_string().ok_or_else(|| fail("enumerateStore: pageToken must be a string or null"))?)
    };
    let s = get(&options, "pageSize");
    let page_size = if s.is_undefined() || s.is_null() {
        100
    } else {
        s.as_f64().filter(|n| n.is_finite()).ok_or_else(|| fail("enumerateStore: pageSize must be a finite number"))?.floor().clamp(1.0, 1000.0)
            as usize
    };
    let request = from_json(&serde_json::json!({ "session": session, "pageToken": token, "pageSize": page_size }))?;
    let out = call_store(&store, "enumerate", &request).await?;
    let list = get(&out, "records");
    if !Array::is_array(&list) {
        return Err(fail("store.enumerate() must return { records: [...], next }"));
    }
    let list = Array::from(&list);
    if list.length() as usize > page_size {
        return Err(fail(format!("store.enumerate() returned {} records for pageSize {page_size}", list.length())));
    }
    let mut records = Vec::with_capacity(list.length() as usize);
    for (i, v) in list.iter().enumerate() {
        let r = record_from(&v, &format!("store.enumerate() record {i}"))?;
        if r.session != session {
            return Err(fail(format!("store.enumerate() record {i} ({:?}) belongs to session {:?}, not {session:?}", r.id, r.session)));
        }
        records.push(r);
    }
    let n = get(&out, "next");
    let next = if n.is_undefined() || n.is_null() {
        None
    } else {
        match n.as_string() {
            Some(t) if !t.is_empty() && Some(&t) != token.as_ref() => Some(t),
            Some(_) => return Err(fail("store.enumerate() next must be a new non-empty token (or null on the last page)")),
            None => return Err(fail("store.enumerate() next must be a string or null")),
        }
    };
    to_js(&memory::Page { records, next })
}

/// `dropStoreScope(store, session)` -> Promise of the number of records removed, or
/// null when the store does not say (M-4). Asks `store.drop({ session })` (sync or
/// async), which must remove the whole scope at once. Rejects with `memory_failed` on a
/// bad session, a missing `store.drop`, or an answer that is neither a non-negative
/// integer nor undefined/null; a store throw or rejection is passed through.
#[wasm_bindgen(js_name = dropStoreScope)]
pub fn drop_store_scope(store: JsValue, session: JsValue) -> Promise {
    super::promise(drop_store_scope_impl(store, session))
}

async fn drop_store_scope_impl(store: JsValue, session: JsValue) -> Result<JsValue, JsValue> {
    let session = store_session(&session, "dropStoreScope")?;
    let out = call_store(&store, "drop", &from_json(&serde_json::json!({ "session": session }))?).await?;
    if out.is_undefined() || out.is_null() {
        return Ok(JsValue::NULL);
    }
    match out.as_f64() {
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => Ok(JsValue::from_f64(n)),
        _ => Err(fail("store.drop() must return the number of records removed (a non-negative integer) or nothing")),
    }
}
