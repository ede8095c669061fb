//! What a job asks of the host and what it gives back: [`Reply`], [`Step`],
//! [`ArtifactItem`] and the [`Outcome`] with its committed [`Rewrite`].

use crate::error::Error;
use crate::evict::{Evicted, EvictedBody};
use crate::events::Event;
use crate::measure::Size;
use crate::memory::MemoryBatch;
use crate::rewrite::{Retained, Splice};
use crate::select::Stage;
use crate::state::SessionState;
use crate::transcript::Transcript;
use crate::trigger::Decision;
use serde::Serialize;
use serde_json::Value;
#[allow(unused_imports)] // named by the docs
use crate::summarize::SummarizeRequest;

/// The host's answer to a [`SummarizeRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The summary text, and the provider usage of the call if known (W-7).
    Summary {
        /// The summary (or merged rollup, or curated) text; surrounding whitespace is trimmed.
        text: String,
        /// The call's provider usage object in any provider's shape (read by
        /// [`formats::normalize_usage`]), recorded as side spend (W-7).
        usage: Option<Value>,
    },
    /// The callback failed. `context_exceeded`: the error was recognised as a context /
    /// request-size error (Y-6). Also the answer to a refused [`Step::Project`]
    /// (`context_exceeded` is ignored there).
    Failed {
        /// The callback's error message, reported in the failure reason.
        message: String,
        /// The error is a context-window / request-size error (Y-6).
        context_exceeded: bool,
    },
    /// The host stored the memory batch of a [`Step::Project`] (M-1).
    Accepted,
    /// The answer to [`Step::StoreArtifacts`] (E-6): one entry per item, in order:
    /// `Some(handle)` = stored under that handle (the proposed one or the host's own),
    /// `None` = storing that body failed (its eviction falls back to a clip). A shorter
    /// list counts the missing entries as failed.
    Artifacts {
        /// One entry per [`ArtifactItem`], in order.
        handles: Vec<Option<String>>,
    },
}

/// One tool result the host's artifact store is asked to keep before eviction (E-6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactItem {
    /// The handle the engine proposes (`artifact#<tag>-N`: the session's
    /// `state.artifactTag`, N from `state.nextArtifact`; issue 14: unique across the
    /// sessions of one store). The host may answer with its own handle instead.
    pub handle: String,
    /// Source offset of the message carrying the result.
    pub offset: usize,
    /// Stable id (T-4) of the message carrying the result.
    pub message_id: String,
    /// The id of the call the result answers.
    pub call_id: String,
    /// The tool's name, when known (from the result or its call).
    pub tool_name: Option<String>,
    /// The whole result body (text; media inside it are not included).
    pub body: String,
    /// The session scope (`hooks.sessionId`, default `"default"`; JSON `sessionId`): a
    /// store shared by several sessions may key its items by handle alone (the tag tells
    /// sessions apart) or by (`sessionId`, `handle`).
    pub session_id: String,
}

/// What the engine needs next.
#[derive(Debug, Clone)]
pub enum Step {
    /// Ask the host's summarizer (kind `summary` / `rollup`) or curator (kind `curate`).
    Summarize(SummarizeRequest),
    /// The rewrite is valid and ready; the host must store (embed, put) this memory
    /// batch and answer [`Reply::Accepted`] or [`Reply::Failed`]. Nothing is committed
    /// until it accepts; a failure fails the compaction with `memory_failed` (M-1, W-3).
    /// Asked only when [`Job::with_memory`] was called with `confirm: true`. The batch
    /// is shared with the job, not copied: drop it before resuming and the outcome takes
    /// it over without a copy.
    Project(std::sync::Arc<MemoryBatch>),
    /// Ask the host's artifact store to keep these bodies (E-6); answer with
    /// [`Reply::Artifacts`]. Only asked after [`Job::with_artifact_store`].
    StoreArtifacts(Vec<ArtifactItem>),
    /// The job is finished: the [`Outcome`] (compacted, skipped, cannot fit or failed).
    Done(Box<Outcome>),
}

/// Who wrote the summary and how much of the history its source carried (Y-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarySource {
    /// `provider` (the host's summarize callback), `curator` (the host's curator, Y-1),
    /// `mechanical` (the deterministic handoff summary).
    pub writer: String,
    /// `whole`, `trimmed`, `requests_only`.
    pub coverage: String,
}

/// The summary of a committed rewrite.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryInfo {
    /// The summary text as committed (narrative plus the deterministic sections, Y-2, Y-5).
    pub text: String,
    /// Summary level of the new summary message: `1` (rollups are reported in [`Rewrite::rollups`]).
    pub level: u8,
    /// Who wrote it and how much history its source carried (Y-7).
    pub source: SummarySource,
    /// Stable id (T-4) of the summary message.
    pub message_id: String,
    /// Offset in the new transcript.
    pub offset: usize,
}

/// One rollup pass (Y-3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollup {
    /// `level1_to_level2` or `level2_merge`.
    pub pass: String,
    /// How many summaries the pass merged into one.
    pub merged: usize,
    /// `provider` (the summarize callback) or `mechanical` (the deterministic merge).
    pub writer: String,
}

/// A committed rewrite (W-1, W-4).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rewrite {
    /// The session revision the rewrite was computed from; a store compares it to reject a
    /// stale rewrite (W-5).
    pub base_revision: u64,
    /// The revision after this rewrite (`base_revision + 1`).
    pub revision: u64,
    /// Which fold ran: `before_run` or `in_run` (S-6), or `clear` when the clearing tier
    /// alone reached the target (K-1: no fold, no summary call).
    pub stage: Stage,
    /// The new summary message; `None` (JSON `null`) when the clearing tier alone
    /// reached the target (K-1).
    pub summary: Option<SummaryInfo>,
    /// Every kept source row with its new offset and id; sources strictly increase (W-1).
    pub retained: Vec<Retained>,
    /// Source offsets dropped from the transcript, ascending; with `retained` they partition
    /// the source (W-1).
    pub discarded: Vec<usize>,
    /// Splice operations turning the stored source rows into the new ones (W-4).
    pub patch: Vec<Splice>,
    /// Tool results evicted from the folded rows before summarizing (E-1..E-4).
    pub evicted: Vec<Evicted>,
    /// Rollup passes run after the summary was inserted (Y-3), in order.
    pub rollups: Vec<Rollup>,
    /// What the clearing tier cleared in the rows the rewrite keeps (K-1): each tool
    /// result turned into a placeholder naming tool, call and handle, each reasoning
    /// item dropped whole. Empty when no clearing ran.
    pub cleared: Vec<crate::clear::Cleared>,
    /// Offset of the first row of the new transcript that differs from the source in the
    /// request view (K-4): every row before it is byte-identical, so a provider's prompt
    /// cache over them stays valid. `None` when the rows are the same (never, for a
    /// committed rewrite).
    pub first_changed_offset: Option<usize>,
}

/// A committed rewrite that still leaves the next request over its budget (N-4).
///
/// JSON (camelCase): `{ tokens, contextWindow, thresholdTokens, floorTokens, limit, by }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverWindow {
    /// The next request after the rewrite, tokens: the new transcript's estimate plus
    /// tool definitions, the findings ledger (Y-10) and the output reserve (C-8).
    pub tokens: u64,
    /// The model's context window, tokens.
    pub context_window: u64,
    /// The compaction threshold (`thresholdPct` x `contextWindow`), tokens (C-1).
    pub threshold_tokens: u64,
    /// The floor compaction cannot remove, tokens (C-8), as measured on the source.
    pub floor_tokens: u64,
    /// Which limit is crossed: `context_window` (the request does not fit the model) or
    /// `threshold` (it fits, but the next check compacts again).
    pub limit: &'static str,
    /// Tokens over that limit (`tokens - contextWindow` or `tokens - thresholdTokens`).
    pub by: u64,
}

/// The result of a job. `status`: `compacted`, `skipped`, `cannot_fit`, `failed`.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `compacted`, `skipped`, `cannot_fit` or `failed`.
    pub status: &'static str,
    /// Why: the decision's reason when compacted, the skip reason (decision or selection,
    /// S-5), the floor when it cannot fit (C-8), or the failure.
    pub reason: String,
    /// The trigger decision with every signal's value (C-9).
    pub decision: Decision,
    /// The new transcript (or the original, untouched, when nothing was committed).
    pub transcript: Transcript,
    /// The committed rewrite; `None` unless `status == "compacted"`.
    pub rewrite: Option<Rewrite>,
    /// Size of the source transcript (messages, UTF-8 bytes, estimated tokens).
    pub before: Size,
    /// Size of the returned transcript (equal to `before` when nothing was committed).
    pub after: Size,
    /// Validation checks that passed (empty when nothing was rewritten).
    pub checks: Vec<&'static str>,
    /// The session state after the job (cadence, revision, ledger, spend), to persist (W-6).
    pub state: SessionState,
    /// Events to deliver to the host's `onEvent`, in order (J-4).
    pub events: Vec<Event>,
    /// Full bodies evicted from the folded rows (for memory projection).
    pub evicted_bodies: Vec<EvictedBody>,
    /// The memory batch projected from what the committed rewrite discarded (M-1);
    /// `None` when nothing was committed.
    pub memory: Option<MemoryBatch>,
    /// The failure, when `status == "failed"`.
    pub error: Option<Error>,
    /// Set when a committed rewrite leaves the next request over the threshold or the
    /// context window (N-4); `None` otherwise and when nothing was committed.
    pub over_window: Option<OverWindow>,
}

impl Outcome {
    /// Plain JSON of the outcome (the JS `compact()` result).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(crate::output::OutcomeJson(self)).unwrap_or(Value::Null)
    }

    /// [`Outcome::to_json`] as compact JSON text (the same bytes as
    /// `serde_json::to_string(&outcome.to_json())`), written in one streaming pass
    /// without building the result `Value` ([`crate::output::OutcomeJson`]).
    pub fn to_json_string(&self) -> String {
        let mut pieces = self.to_json_pieces(usize::MAX);
        // one piece (it never reaches usize::MAX bytes): taken as is, not copied
        match pieces.len() {
            1 => pieces.pop().unwrap_or_default(),
            _ => pieces.concat(),
        }
    }

    /// [`Outcome::to_json_string`] cut into pieces of about `piece_bytes` UTF-8 bytes
    /// each (cuts fall on char boundaries; the concatenation is the whole text). A large
    /// result then never needs one contiguous buffer of its full size, which in wasm
    /// linear memory may not fit any hole the compaction left and would grow memory.
    pub fn to_json_pieces(&self, piece_bytes: usize) -> Vec<String> {
        let mut w = crate::output::Pieces::new(piece_bytes);
        if serde_json::to_writer(&mut w, &crate::output::OutcomeJson(self)).is_err() {
            return Vec::new();
        }
        w.finish()
    }
}
