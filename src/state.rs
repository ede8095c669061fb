//! Persisted per-session engine state (W-6): revision, cadence, refusal, projection
//! anchor, folded-call ledger, artifact counter, side spend. It round-trips through
//! JSON (camelCase keys) so a resumed session behaves exactly like a live one.

use serde::{Deserialize, Serialize};

/// Everything the engine remembers between calls. Every field has a default, so `{}`
/// and `null` are valid states for a new session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionState {
    /// Revision of the stored transcript this state belongs to; +1 per committed rewrite (W-5).
    pub revision: u64,
    /// Number of the next artifact handle the engine stamps (E-6): handles are
    /// `artifact#<tag>-N` (issue 14), `artifact#N` in states written before the tag.
    pub next_artifact: u64,
    /// The session's tag in its artifact handles (issue 14: `artifact#<tag>-N`, 8
    /// lowercase letters), so sessions sharing one artifact store never propose the same
    /// handle. Set at the first handle the engine proposes, from the session id and the
    /// transcript's content ids (deterministic given the inputs); a host may set its own
    /// (1 to 16 lowercase ASCII letters, e.g. derived from its own session key). Omitted
    /// when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub artifact_tag: String,
    /// Whose tag `artifactTag` is (issue 14): the 16 lowercase hex digits of the FNV-1a
    /// hash of the session id the tag was derived under (`sessionId`, `"default"` when
    /// none is given). A call running under another session id derives a new tag from
    /// that id, the old tag and the transcript ([`crate::trust::derive_tag`]) before it
    /// proposes a handle, so two sessions whose states or rows are alike never propose
    /// the same handle. Empty in states written before it (and for a tag the host set):
    /// the tag is then kept for `"default"` and re-derived under any other session id.
    /// Omitted when empty.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub artifact_tag_session: String,
    /// The session's earlier artifact tags, oldest first (newest 64 kept; issue 14):
    /// handles `artifact#<tag>-N` under any of them (N below `nextArtifact`) are still
    /// the session's, after a fork ([`crate::capacity::note_transcript_edit`]) or a new
    /// session id gave the state a new tag. Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier_artifact_tags: Vec<String>,
    /// The tag came from a fork (`noteTranscriptEdit(state, "fork")`, J-5 / issue 14) and
    /// is derived again, before the fork's first handle, from it, the session id and the
    /// fork's own transcript ([`crate::trust::adopt_tag`]): two forks of one state are
    /// the same state, and only what each goes on to hold tells them apart. Omitted when
    /// false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub artifact_tag_fork: bool,
    /// Cadence (C-4, C-5, C-6): boundaries, last attempt, refusal, projection anchor.
    pub cadence: Cadence,
    /// Calls folded by stage-2 compactions of the open run (Y-5), oldest first.
    pub ledger: Vec<FoldedCall>,
    /// Id of the run request the ledger belongs to; a new run starts a new ledger.
    pub ledger_run: Option<String>,
    /// Summarizer spend, recorded as side spend (W-7).
    pub spend: Spend,
    /// Provider-reported / estimated tokens, when observed (C-7); 0 = unknown.
    pub calibration: f64,
    /// A selection failure was already warned about (S-5: a single warning).
    pub selection_warned: bool,
    /// Findings ledger (Y-10): load-bearing facts the host or the agent recorded, oldest
    /// first. They ride outside the transcript, are never folded or summarized, are
    /// counted in the floor (C-8) and are rendered into every request view (see
    /// [`crate::session::request_view`]).
    pub findings: Vec<String>,
    /// The summaries the engine wrote that are still in the transcript (issue 14 trust
    /// boundary, [`crate::trust`]): a row's `summary_level` / `compaction_summary` keys
    /// are honoured only when its id and text hash are listed here. Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub summaries: Vec<SummaryMark>,
    /// Message ids of rows the host pinned through `pin(state, messageId)` (Y-10); a
    /// row's `pinned: true` is honoured only when listed here. Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<String>,
    /// Handles the host's `storeArtifact` named itself (not `artifact#N`), newest 512
    /// kept: stamped refs naming them count as the session's (issue 14). Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<String>,
    /// Content ids of repeated rows (T-4, issue 14): a row with no stored `message_id`
    /// gets the id `m<hash>` / `m<hash>-<n>` from its content and the count `n` of
    /// earlier rows with the same content. When a rewrite folds an earlier twin, the
    /// retained one keeps its id through this table instead of a `message_id` key added
    /// to its row (retained rows stay byte for byte as the host gave them). Written at
    /// every commit, read by the trust pass ([`crate::trust::apply`]). Omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub twins: Vec<TwinIds>,
    /// The last appends `Session.append` saved (W-5, I-6), oldest first, newest
    /// [`MAX_APPEND_MARKS`] kept: a retry of an append whose `save` timed out (the save
    /// may have landed) finds its own mark here and writes nothing twice. Omitted when
    /// empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub appends: Vec<AppendMark>,
}

/// How many [`AppendMark`]s a state keeps (the newest).
pub const MAX_APPEND_MARKS: usize = 16;

/// One saved append ([`SessionState::appends`]): its id (the caller's `appendId`, or
/// one the session made), the FNV-1a hash of its rows' JSON (16 hex digits), the
/// revision its save wrote, and how many rows it added.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppendMark {
    /// The append's id (`appendId`).
    pub id: String,
    /// FNV-1a 64 of the JSON of the rows given, 16 lowercase hex digits.
    pub hash: String,
    /// The revision the append saved.
    pub revision: u64,
    /// Rows the save added.
    pub rows: usize,
}

/// The counts (`n` of `m<hash>-<n>`, the first row `1`) the rows with one content keep
/// (issue 14, [`SessionState::twins`]): the j-th such row (no stored `message_id`, in
/// transcript order) is numbered `counters[j - 1]`; rows past the list continue from
/// its last count.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TwinIds {
    /// The content hash: the 16 lowercase hex digits of the id.
    pub hash: String,
    /// Strictly increasing counts, each >= 1.
    pub counters: Vec<u32>,
}

/// A summary the engine wrote (issue 14): its message id and the FNV-1a hash of its
/// text (16 lowercase hex digits, a string so JSON numbers stay exact).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SummaryMark {
    /// The summary row's message id (`summary-r{revision}-{n}`).
    pub id: String,
    /// FNV-1a 64 of the summary's text, hex.
    pub hash: String,
}

/// Cadence: what rate-limits compaction (C-4, C-5, C-6).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Cadence {
    /// Boundaries (checks) seen so far.
    pub boundary: u64,
    /// Boundary of the last compaction attempt, committed or failed (C-5).
    pub last_attempt_boundary: Option<u64>,
    /// Estimated tokens of the history right after the last committed rewrite.
    pub last_rewrite_tokens: Option<u64>,
    /// A provider refusal for not fitting (or a bounded request) awaits recovery (C-6, B-3).
    pub refusal: bool,
    /// The last selection or floor check could not compact: reason code.
    pub last_failure: Option<String>,
    /// What recorded `refusal`: `context_refusal` (the provider refused the request for
    /// not fitting, C-6) or `bounded_request` (a request carried the open run's results
    /// shortened, B-3). `None` when no refusal is recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal_source: Option<String>,
    /// The projection anchor (C-3): the provider's count for the last answered request
    /// sent whole. `None` after a committed rewrite, host edit, revision restore,
    /// system-prompt update or fork, until the next answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<Anchor>,
    /// `boundary` as it was at the last `compact` call; a compact call that finds no
    /// boundary observed since (no `observeUsage` / `recordRefusal`) counts as one
    /// itself, so cadence advances for hosts that only call `compact` (C-4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_check_boundary: Option<u64>,
    /// The warning that the last rewrite left history at or above the threshold was
    /// given (C-4: one warning per such rewrite).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub over_threshold_warned: bool,
    /// The transcript a selection found nothing to fold in (C-5): while the transcript is
    /// still exactly this (same rows, same last row), crossings do not retry; only a
    /// refusal or `force` does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_on: Option<RowsMark>,
}

/// Identifies a transcript's extent: its number of rows and the id of its last row.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RowsMark {
    /// Number of rows (messages) in the transcript.
    pub rows: usize,
    /// Stable id (T-4) of its last row; `None` for an empty transcript.
    pub last_row_id: Option<String>,
}

impl RowsMark {
    /// The mark of a transcript.
    pub fn of(t: &crate::transcript::Transcript) -> RowsMark {
        RowsMark { rows: t.messages.len(), last_row_id: t.messages.last().map(|m| m.id.clone()) }
    }
}

/// The projection anchor (C-3): the input-token count a provider reported for the last
/// answered request that was sent whole, the transcript rows that request covered, and
/// who counted them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Anchor {
    /// Provider-reported input tokens of that request (cached tokens included).
    pub input_tokens: u64,
    /// Messages of the transcript the request carried (`rows[0..rows]`).
    pub rows: usize,
    /// Stable id (T-4) of the last covered message; a projection is only made when the
    /// transcript still has this message at `rows - 1`.
    pub last_row_id: Option<String>,
    /// Provider that counted (host's name for it, e.g. `anthropic`), if given.
    pub provider: Option<String>,
    /// Model that counted, if given.
    pub model: Option<String>,
}

/// One call folded away by a stage-2 compaction (Y-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldedCall {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// Arguments, JSON text, clipped to 200 bytes.
    pub arguments: String,
    /// The result was an error: the call may be made again.
    pub failed: bool,
    /// The first line of the error (clipped to 200 UTF-8 bytes) when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Spend (W-7), tokens: the side spend of summarize/rollup calls, the main requests the
/// host reported through `observeUsage`, and their sum. Side spend is added to the
/// total; it never replaces the live-context size that drives the next compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Spend {
    /// Summarize and rollup calls answered, failed ones included (curator calls are not counted).
    pub summarize_calls: u64,
    /// Provider-reported input tokens of those calls (side spend).
    pub input_tokens: u64,
    /// Provider-reported output tokens of those calls (side spend).
    pub output_tokens: u64,
    /// Main requests whose usage the host observed (`observeUsage`).
    pub main_requests: u64,
    /// Provider-reported input tokens of the main requests.
    pub main_input_tokens: u64,
    /// Provider-reported output tokens of the main requests.
    pub main_output_tokens: u64,
    /// Input tokens of every call, main and side (`mainInputTokens + inputTokens`).
    pub total_input_tokens: u64,
    /// Output tokens of every call, main and side (`mainOutputTokens + outputTokens`).
    pub total_output_tokens: u64,
}

impl Spend {
    /// Adds a main request's usage (W-7; counters saturate).
    pub fn add_main(&mut self, input: u64, output: u64) {
        self.main_requests = self.main_requests.saturating_add(1);
        self.main_input_tokens = self.main_input_tokens.saturating_add(input);
        self.main_output_tokens = self.main_output_tokens.saturating_add(output);
        self.total_input_tokens = self.total_input_tokens.saturating_add(input);
        self.total_output_tokens = self.total_output_tokens.saturating_add(output);
    }
    /// Adds a summarizer call's usage as side spend (W-7; counters saturate).
    pub fn add_side(&mut self, input: u64, output: u64) {
        self.input_tokens = self.input_tokens.saturating_add(input);
        self.output_tokens = self.output_tokens.saturating_add(output);
        self.total_input_tokens = self.total_input_tokens.saturating_add(input);
        self.total_output_tokens = self.total_output_tokens.saturating_add(output);
    }
}

/// The largest revision a state or session record may carry: 2^53 - 1
/// (`Number.MAX_SAFE_INTEGER`), so that `revision + 1` of a commit (W-5) is exact in
/// JavaScript and never overflows.
pub const MAX_REVISION: u64 = (1 << 53) - 1;

impl SessionState {
    /// Parses a state JSON (`null` = new session). Errors: `invalid_state`.
    pub fn from_json(v: &serde_json::Value) -> crate::Result<SessionState> {
        if v.is_null() {
            return Ok(SessionState::default());
        }
        // serde would read a JSON array as the struct's fields in order (`[]` as a new
        // session): a state is the object a call returned, never anything else
        if !v.is_object() {
            let got = crate::error::json_kind(v);
            return Err(crate::Error::new(crate::ErrorCode::InvalidState, format!("state: expected the state object a previous call returned (or null for a new session), got {got}")));
        }
        let s: SessionState = serde_json::from_value(v.clone()).map_err(|e| crate::Error::new(crate::ErrorCode::InvalidState, format!("state: {e}")))?;
        if !s.artifact_tag.is_empty() && !crate::trust::valid_tag(&s.artifact_tag) {
            return Err(crate::Error::new(crate::ErrorCode::InvalidState, format!("state.artifactTag: {:?} must be 1 to 16 lowercase ASCII letters", s.artifact_tag)));
        }
        if let Some(t) = s.earlier_artifact_tags.iter().find(|t| !crate::trust::valid_tag(t)) {
            return Err(crate::Error::new(crate::ErrorCode::InvalidState, format!("state.earlierArtifactTags: {t:?} must be 1 to 16 lowercase ASCII letters")));
        }
        if !s.artifact_tag_session.is_empty() && (s.artifact_tag_session.len() != 16 || !s.artifact_tag_session.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) {
            return Err(crate::Error::new(crate::ErrorCode::InvalidState, format!("state.artifactTagSession: {:?} must be 16 lowercase hex digits", s.artifact_tag_session)));
        }
        if let Some(t) = s.twins.iter().find(|t| t.hash.len() != 16 || !t.hash.bytes().all(|b| b.is_ascii_hexdigit()) || t.counters.first() == Some(&0) || t.counters.windows(2).any(|w| w[0] >= w[1])) {
            return Err(crate::Error::new(crate::ErrorCode::InvalidState, format!("state.twins: entry {:?} must have a 16-hex-digit hash and strictly increasing counters from 1", t.hash)));
        }
        if s.revision > MAX_REVISION {
            return Err(crate::Error::new(
                crate::ErrorCode::InvalidState,
                format!("state.revision: {} is over {MAX_REVISION} (2^53 - 1), the largest revision a JavaScript number holds exactly; a commit could not give a new one", s.revision),
            ));
        }
        Ok(s)
    }
    /// The calibration factor to use (1.0 when unknown).
    pub fn calibration(&self) -> f64 {
        if self.calibration.is_finite() && self.calibration > 0.0 {
            self.calibration
        } else {
            1.0
        }
    }
}

/// The pinned context text the findings render to, or `None` when there are none.
pub fn findings_text(findings: &[String]) -> Option<String> {
    if findings.is_empty() {
        return None;
    }
    let mut out = String::from("Findings recorded during this session (pinned; kept outside compaction):");
    for f in findings {
        out.push_str("\n- ");
        out.push_str(f);
    }
    Some(out)
}

/// UTF-8 bytes the findings add to every request (counted in the floor, C-8).
pub fn findings_bytes(findings: &[String]) -> usize {
    findings_text(findings).map(|t| t.len() + 32).unwrap_or(0)
}
