//! When to compact: the signals, the threshold each is held to, and the decision
//! (C-1, C-2, C-6, C-8, C-9). Pure: a check has no side effects (C-9 dry run).

use crate::config::{Config, TriggerMode};
use crate::formats::{normalize_usage, Usage};
use crate::measure::{message_tokens, text_tokens};
use crate::state::SessionState;
use crate::transcript::{json_len, Role, Transcript};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the host knows about the next request, all optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Signals {
    /// Provider usage of the last completion, in the provider's own field names.
    pub usage: Option<Value>,
    /// Tool definitions sent with each request (any JSON); counted in the forecast and floor.
    pub tools: Option<Value>,
    /// Or just their serialized size, UTF-8 bytes.
    pub tools_bytes: Option<u64>,
    /// Exact provider-lowered request body size, UTF-8 bytes (C-2).
    pub request_bytes: Option<u64>,
    /// Compact regardless of the measures (a host's explicit request).
    pub force: bool,
    /// Provider the next request goes to (the host's name for it). A projection anchor
    /// counted by another provider is not used (C-3).
    pub provider: Option<String>,
    /// Model the next request goes to. An anchor counted by another model is not used (C-3).
    pub model: Option<String>,
    /// The check runs inside an open run (after its first response): it does not see a
    /// recorded refusal, since a compaction there keeps the run's request and newest
    /// round (C-6). `false` (default): the check's compaction covers the whole
    /// transcript (a run's first check).
    pub in_run: bool,
    /// Token counts from the host's `countTokens` hook (I-4), when it gave one: they
    /// replace the byte estimate in the estimate signals. Never read from JSON.
    #[serde(skip)]
    pub counted: Option<TokenCounts>,
}

/// What a host tokenizer counted (I-4), tokens. The wasm layer hands the hook the
/// texts [`count_texts`] lists and stores the answers here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenCounts {
    /// The document-level fields (system prompt, tools stored in the document).
    pub envelope: u64,
    /// One count per message, in transcript order.
    pub messages: Vec<u64>,
    /// The tool definitions of the signals (`tools`), 0 without them.
    pub tools: u64,
}

impl TokenCounts {
    /// Envelope plus every message, tokens (saturating).
    pub fn transcript(&self) -> u64 {
        self.messages.iter().fold(self.envelope, |a, &b| a.saturating_add(b))
    }
}

/// The texts a `countTokens` hook is asked to count (I-4), in this order: the
/// document-level fields as one JSON object text (`""` when there are none), then each
/// message's request-view JSON (provenance keys removed, F-4), then the signals'
/// `tools` as JSON text when given. Counting JSON over-counts a provider's own count
/// by the punctuation and keys, a few tokens a message: the safe direction.
pub fn count_texts(t: &Transcript, tools: Option<&Value>) -> Vec<String> {
    let mut out = Vec::with_capacity(t.messages.len() + 2);
    out.push(if t.envelope.fields.is_empty() { String::new() } else { serde_json::to_string(&t.envelope.fields).unwrap_or_default() });
    for m in &t.messages {
        out.push(m.raw.get().to_string());
    }
    if let Some(tools) = tools {
        out.push(serde_json::to_string(tools).unwrap_or_default());
    }
    out
}

impl TokenCounts {
    /// Reads a hook's answer for [`count_texts`] of `t`: one non-negative number a text
    /// (fractions rounded up). Errors (`invalid_config`): wrong length, a value that is
    /// not a finite non-negative number.
    pub fn from_answer(t: &Transcript, with_tools: bool, answer: &[f64]) -> crate::error::Result<TokenCounts> {
        let want = t.messages.len() + 1 + usize::from(with_tools);
        if answer.len() != want {
            return Err(crate::error::Error::new(crate::error::ErrorCode::InvalidConfig, format!("countTokens returned {} counts for {want} texts", answer.len())));
        }
        let mut nums = Vec::with_capacity(want);
        for (i, &v) in answer.iter().enumerate() {
            if !v.is_finite() || v < 0.0 {
                return Err(crate::error::Error::new(crate::error::ErrorCode::InvalidConfig, format!("countTokens: count {i} is {v}, not a non-negative number")));
            }
            nums.push(v.ceil() as u64);
        }
        let envelope = nums.first().copied().unwrap_or(0);
        let tools = if with_tools { nums.last().copied().unwrap_or(0) } else { 0 };
        let messages = nums.get(1..1 + t.messages.len()).map(<[u64]>::to_vec).unwrap_or_default();
        Ok(TokenCounts { envelope, messages, tools })
    }
}

impl Signals {
    /// Tool definitions' size, UTF-8 bytes: `toolsBytes`, else the serialized `tools`, else 0.
    pub fn tools_bytes(&self) -> u64 {
        self.tools_bytes.unwrap_or_else(|| self.tools.as_ref().map(|t| json_len(t) as u64).unwrap_or(0))
    }
    /// The usage normalised to tokens, if given and recognised.
    pub fn usage(&self) -> Option<Usage> {
        self.usage.as_ref().and_then(normalize_usage)
    }
}

/// The projection of the next request's input (C-2, C-3): the anchor's provider count
/// plus an estimate of only the rows appended since, tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Projection {
    /// The anchor's provider-reported input tokens.
    pub anchor_tokens: u64,
    /// Estimated tokens (C-7, calibrated) of the rows appended since the anchor.
    pub appended_tokens: u64,
    /// How many rows were appended since the anchor.
    pub appended_rows: usize,
    /// `anchor_tokens + appended_tokens`.
    pub projected_tokens: u64,
}

/// The usable projection, if any (C-3): the state has an anchor, it was counted by the
/// provider and model the signals name (both compared as given; unnamed matches
/// unnamed), and the transcript still holds the anchored rows (its row `rows - 1` has
/// the anchored id). Otherwise `None`.
pub fn projection(t: &Transcript, config: &Config, state: &SessionState, signals: &Signals) -> Option<Projection> {
    let a = state.cadence.anchor.as_ref()?;
    if a.provider != signals.provider || a.model != signals.model || a.rows > t.messages.len() {
        return None;
    }
    if let Some(id) = &a.last_row_id {
        let last = t.messages.get(a.rows.checked_sub(1)?)?;
        if &last.id != id {
            return None;
        }
    }
    let cal = state.calibration();
    let appended = t.messages.get(a.rows..).unwrap_or(&[]);
    let appended_tokens: u64 = match signals.counted.as_ref() {
        // I-4: the host's counts of the appended rows replace the estimate.
        Some(c) => c.messages.get(a.rows..).unwrap_or(&[]).iter().fold(0u64, |acc, &n| acc.saturating_add(n)),
        None => appended.iter().fold(0u64, |acc, m| acc.saturating_add(message_tokens(m, config, cal))),
    };
    Some(Projection { anchor_tokens: a.input_tokens, appended_tokens, appended_rows: appended.len(), projected_tokens: a.input_tokens.saturating_add(appended_tokens) })
}

/// One measured signal: its value, the threshold it is held to, whether it crossed,
/// and how the cadence treats a crossing (C-4, C-9).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignalValue {
    /// `provider_total_tokens`, `projected_input_tokens`, `estimated_transcript_tokens`,
    /// `forecast_request_tokens`, `request_bytes`, `refusal`.
    pub name: &'static str,
    /// `tokens`, `bytes`, or `flag` (0/1).
    pub unit: &'static str,
    /// The measured value, in `unit`.
    pub value: u64,
    /// The value it is held to, in `unit`: the token threshold (`thresholdPct` x window),
    /// the whole window for the forecast, `thresholdPct` x the body cap for request bytes,
    /// 1 for the refusal flag.
    pub threshold: u64,
    /// `value >= threshold`.
    pub crossed: bool,
    /// How a crossing is treated: `high_water` (an ordinary mark: waits for the
    /// cadence), `recovery` (never waits, unless the last attempt failed, C-5),
    /// `history` (recovery when the last rewrite got history under the threshold,
    /// else waits; the request forecast over the window waits neither for the cadence
    /// nor for a failed attempt's back-off, only after a failed attempt on the same
    /// unchanged transcript, and then with a [`FORECAST_OVER_WINDOW_WAITING`] warning,
    /// C-8 over C-4/C-5), `refusal` (forces one compaction on a whole-transcript check).
    pub kind: &'static str,
}

/// Where the cadence stands at this check (C-4, C-5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CadenceView {
    /// The boundary this check counts as.
    pub boundary: u64,
    /// The boundary of the last compaction attempt, committed or failed (C-5).
    pub last_attempt_boundary: Option<u64>,
    /// The configured cadence length, boundaries ([`crate::config::Config::min_boundaries_between`]).
    pub min_boundaries_between: u64,
    /// An ordinary high-water mark may compact now.
    pub open: bool,
    /// The last attempt failed (C-5): recovery crossings wait for the cadence too.
    pub last_attempt_failed: bool,
    /// The last committed rewrite left history at or above the threshold: history and
    /// projection crossings wait for the cadence.
    pub last_rewrite_over_threshold: bool,
}

/// A warning attached to a decision (`code`, `message`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// Stable warning code (e.g. [`HISTORY_OVER_THRESHOLD`]).
    pub code: &'static str,
    /// Human-readable text naming the cause and the remedies.
    pub message: String,
}

/// The code of the C-4 warning.
pub const HISTORY_OVER_THRESHOLD: &str = "history_over_threshold_after_rewrite";

/// The code of the C-4/C-8 warning given when the request forecast is over the context
/// window and a failed attempt on the same unchanged transcript holds the compaction back
/// (C-5; the request would fail as sent).
pub const FORECAST_OVER_WINDOW_WAITING: &str = "forecast_over_window_waiting";

/// The [`FORECAST_OVER_WINDOW_WAITING`] text: the forecast and the window (tokens), why it
/// waits and the remedies.
pub fn forecast_over_window_waiting_message(forecast: u64, window: u64) -> String {
    format!(
        "the next request is forecast at {forecast} tokens, over the context window of {window}, and the compaction waits: \
         the last attempt on this same transcript failed and no row changed since (C-5). \
         Sent as is it will be refused. Remedies: raise the context window, shorten the system prompt, send fewer tools, \
         or compact with force"
    )
}

/// The C-4 warning text: names the remedies.
pub fn history_over_threshold_message(history_tokens: u64, threshold: u64) -> String {
    format!(
        "the last compaction left the history at {history_tokens} estimated tokens, at or above the threshold of {threshold}: \
         further compaction cannot recover it, so crossings wait for the cadence. Remedies: raise the context window (or the threshold), \
         shorten the system prompt, or send fewer tools"
    )
}

/// The floor compaction cannot remove (C-8), tokens, by part.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Floor {
    /// System rows and document-level system prompt.
    pub system_tokens: u64,
    /// Tool definitions.
    pub tools_tokens: u64,
    /// The protected newest request (and pinned rows).
    pub protected_tokens: u64,
    /// The findings ledger rendered into every request (Y-10).
    pub findings_tokens: u64,
    /// With `projectMemory: false`, the user text no compaction may clip (N-1): every
    /// conversational user text of the rows but the protected ones, and what the summary
    /// block quotes whole (no memory record keeps it whole elsewhere); 0 (and omitted)
    /// with memory on.
    #[serde(skip_serializing_if = "is_zero")]
    pub user_text_tokens: u64,
    /// The output reserve.
    pub output_reserve_tokens: u64,
    /// The sum of the parts (saturating), tokens.
    pub total_tokens: u64,
    /// What it is held to: the threshold, tokens.
    pub budget_tokens: u64,
}

/// The result of a check (C-9).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// Whether to compact now.
    pub compact: bool,
    /// Stable reason code: `provider_usage_over_threshold`, `projection_over_threshold`,
    /// `estimate_over_threshold`, `forecast_over_window`, `request_bytes_over_cap`,
    /// `refusal_recovery`, `forced`, `under_threshold`, `waiting_for_cadence`,
    /// `unchanged_since_failed_attempt` (C-5: a selection found nothing to fold in this
    /// very transcript),
    /// `no_provider_usage`, `cannot_fit`.
    pub reason: String,
    /// The signal that decided, if any (`forced` for `force`).
    pub decided_by: Option<&'static str>,
    /// Every signal measured at this check, with value and threshold (C-2, C-9).
    pub signals: Vec<SignalValue>,
    /// Signals that crossed but wait for the cadence (C-4, C-5).
    pub suppressed: Vec<&'static str>,
    /// Where the cadence stands (C-4, C-5).
    pub cadence: CadenceView,
    /// The projection when an anchor is usable (C-3).
    pub projection: Option<Projection>,
    /// The check was an in-run check (it does not see a refusal, C-6).
    pub in_run: bool,
    /// Warnings (C-4 `history_over_threshold_after_rewrite`, not yet given; I-3
    /// `usage_unreadable`, a usage object with no count the engine reads).
    pub warnings: Vec<Warning>,
    /// The floor compaction cannot remove, tokens (C-8).
    pub floor: Floor,
    /// `thresholdPct` x `contextWindow`, rounded up, tokens (C-1).
    pub threshold_tokens: u64,
    /// The model's context window, tokens.
    pub context_window: u64,
    /// What the clearing tier would do now (K-1), when `clearToolUses` or
    /// `clearThinking` is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clearing: Option<crate::editing::ClearingForecast>,
    /// The prompt-cache cost of the rewrite this check would make (K-3, K-4), when
    /// `promptCache` or a clearing is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<crate::cache::CacheReport>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// UTF-8 bytes of the user text a row holds for the floor with `projectMemory: false`
/// ([`Floor::user_text_tokens`]): its conversational user text blocks.
pub(crate) fn row_user_bytes(m: &crate::transcript::Message) -> u64 {
    m.user_texts().map(|t| t.len() as u64).fold(0, u64::saturating_add)
}

/// UTF-8 bytes the summary block of `messages` carries verbatim with memory off (its
/// members' first task, constraints, whole quotes and marker lines, read as a rollup
/// reads them, [`crate::summarize::carry::MemberUserText::required_bytes`]).
pub(crate) fn summary_user_bytes(messages: &[crate::transcript::Message]) -> u64 {
    let block: Vec<String> = messages.iter().filter(|m| m.is_summary()).map(crate::transcript::Message::text).collect();
    if block.is_empty() {
        return 0;
    }
    let newest_live = messages.iter().any(crate::transcript::Message::has_user_text);
    crate::summarize::carry::MemberUserText::read(&block, newest_live).required_bytes(false) as u64
}

/// The transcript measures a decision reads, tokens at one calibration and bytes.
/// [`Totals::of`] measures a whole transcript; a live handle keeps them up to date as
/// rows are appended (see [`crate::live`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Estimated tokens of every message plus the document-level fields (C-7).
    pub estimated_tokens: u64,
    /// UTF-8 bytes of every message plus the document-level fields.
    pub bytes: u64,
    /// System rows plus the document-level system prompt, tokens (C-8).
    pub system_tokens: u64,
    /// The newest user request and the pinned non-system rows, tokens (C-8).
    pub protected_tokens: u64,
    /// With `projectMemory: false`, the user text bytes of [`Floor::user_text_tokens`]
    /// (0 with memory on).
    pub user_text_bytes: u64,
}

impl Totals {
    /// Measures a whole transcript at the state's calibration.
    pub fn of(t: &Transcript, config: &Config, state: &SessionState) -> Totals {
        let cal = state.calibration();
        let env_tokens = text_tokens(t.envelope.bytes(), config, cal);
        let last_request = t.messages.iter().rposition(|m| m.starts_turn());
        let mut out = Totals { estimated_tokens: env_tokens, bytes: t.envelope.bytes() as u64, system_tokens: env_tokens, protected_tokens: 0, user_text_bytes: 0 };
        let user_floor = !config.project_memory;
        for (i, m) in t.messages.iter().enumerate() {
            let tokens = message_tokens(m, config, cal);
            // Saturating: `imageTokens` / `bytesPerToken` may be as large as u64::MAX.
            out.estimated_tokens = out.estimated_tokens.saturating_add(tokens);
            out.bytes = out.bytes.saturating_add(m.bytes as u64);
            if m.role == Role::System {
                out.system_tokens = out.system_tokens.saturating_add(tokens);
            } else if Some(i) == last_request || m.provenance.is_pinned() {
                out.protected_tokens = out.protected_tokens.saturating_add(tokens);
            } else if user_floor {
                out.user_text_bytes = out.user_text_bytes.saturating_add(row_user_bytes(m));
            }
        }
        if user_floor {
            out.user_text_bytes = out.user_text_bytes.saturating_add(summary_user_bytes(&t.messages));
        }
        out
    }
}

/// Computes the floor (C-8): system rows + envelope system prompt + tool definitions +
/// the newest user request and pinned rows + the findings ledger (Y-10) + output reserve,
/// and with `projectMemory: false` the user text every summary must quote whole (N-1,
/// [`Floor::user_text_tokens`]).
pub fn floor(t: &Transcript, config: &Config, state: &SessionState, signals: &Signals) -> Floor {
    floor_of(&Totals::of(t, config, state), config, state, signals)
}

/// [`floor`] from measured [`Totals`].
pub fn floor_of(totals: &Totals, config: &Config, state: &SessionState, signals: &Signals) -> Floor {
    let cal = state.calibration();
    let tools_tokens = crate::measure::bytes_tokens(signals.tools_bytes(), config, cal);
    let findings_tokens = text_tokens(crate::state::findings_bytes(&state.findings), config, cal);
    let user_text_tokens = text_tokens(usize::try_from(totals.user_text_bytes).unwrap_or(usize::MAX), config, cal);
    let total = [tools_tokens, totals.protected_tokens, findings_tokens, user_text_tokens, config.output_reserve()].iter().fold(totals.system_tokens, |a, &b| a.saturating_add(b));
    Floor {
        system_tokens: totals.system_tokens,
        tools_tokens,
        protected_tokens: totals.protected_tokens,
        findings_tokens,
        user_text_tokens,
        output_reserve_tokens: config.output_reserve(),
        total_tokens: total,
        budget_tokens: config.threshold_tokens(),
    }
}

/// The boundary a check at this state counts as: `boundary`, or one more when a
/// `compact` call already ran at `boundary` (no answer observed since, C-4).
pub fn effective_boundary(state: &SessionState) -> u64 {
    let c = &state.cadence;
    if c.last_check_boundary == Some(c.boundary) {
        c.boundary.saturating_add(1)
    } else {
        c.boundary
    }
}

/// Decides whether to compact now. Pure (C-9): every signal with its value, threshold
/// and whether it crossed; which one decided; what waits for the cadence.
///
/// - `provider_usage` mode (C-1): compact when the provider-reported total tokens >=
///   `threshold_pct x context_window`; no local estimate.
/// - `signals` mode (C-2): also the projection (C-3), the estimate of the transcript,
///   the forecast with tool definitions and output reserve against the window, request
///   bytes against `threshold_pct x max_request_bytes`, and a recorded refusal (C-6).
///
/// Cadence (C-4, C-5): see [`Config::min_boundaries_between`] and [`SignalValue::kind`].
/// A recorded refusal compacts once on a whole-transcript check (`in_run: false`)
/// whatever the measures and the cadence say; in-run checks do not see it.
///
/// When a compaction is called for but the floor is over budget, the decision is
/// `compact: false, reason: "cannot_fit"` (C-8): no summary call can help.
pub fn decide(t: &Transcript, config: &Config, state: &SessionState, signals: &Signals) -> Decision {
    decide_from(t, &Totals::of(t, config, state), config, state, signals)
}

/// [`decide`] from measured [`Totals`] (taken at `state`'s calibration): the same
/// decision without a pass over the messages (the projection reads only the rows
/// appended since its anchor).
pub fn decide_from(t: &Transcript, totals: &Totals, config: &Config, state: &SessionState, signals: &Signals) -> Decision {
    let threshold = config.threshold_tokens();
    let c = &state.cadence;
    let boundary = effective_boundary(state);
    let cadence_open = config.min_boundaries_between == 0 || c.last_attempt_boundary.is_none_or(|b| boundary.saturating_sub(b) >= config.min_boundaries_between);
    let last_failed = c.last_failure.as_deref().is_some_and(|f| f != "cannot_fit") && c.last_attempt_boundary.is_some();
    let rewrite_over = c.last_rewrite_tokens.is_some_and(|r| r >= threshold);
    let mut out: Vec<SignalValue> = Vec::new();
    let usage = signals.usage();
    if let Some(u) = usage {
        out.push(SignalValue { name: "provider_total_tokens", unit: "tokens", value: u.total_tokens, threshold, crossed: u.total_tokens >= threshold, kind: "high_water" });
    }
    let mut proj = None;
    if config.trigger == TriggerMode::Signals {
        let cal = state.calibration();
        proj = projection(t, config, state, signals);
        if let Some(p) = proj {
            // An anchor already at or over the threshold waits for the cadence, like the
            // provider's count; a crossing through what was appended is recovery.
            let kind = if p.anchor_tokens >= threshold { "high_water" } else { "history" };
            out.push(SignalValue { name: "projected_input_tokens", unit: "tokens", value: p.projected_tokens, threshold, crossed: p.projected_tokens >= threshold, kind });
        }
        // Y-10: the findings ledger rides in every request, so it counts.
        // I-4: a host tokenizer's counts replace the byte estimate when given.
        let transcript_tokens = signals.counted.as_ref().map_or(totals.estimated_tokens, TokenCounts::transcript);
        let est = transcript_tokens.saturating_add(text_tokens(crate::state::findings_bytes(&state.findings), config, cal));
        out.push(SignalValue { name: "estimated_transcript_tokens", unit: "tokens", value: est, threshold, crossed: est >= threshold, kind: "history" });
        let tools_tokens = match signals.counted.as_ref() {
            Some(c) if signals.tools.is_some() => c.tools,
            _ => crate::measure::bytes_tokens(signals.tools_bytes(), config, cal),
        };
        let forecast = est.saturating_add(tools_tokens).saturating_add(config.output_reserve());
        let budget = config.context_window;
        out.push(SignalValue { name: "forecast_request_tokens", unit: "tokens", value: forecast, threshold: budget, crossed: forecast >= budget, kind: "history" });
        if let Some(cap) = config.max_request_bytes {
            let bytes = signals.request_bytes.unwrap_or_else(|| totals.bytes.saturating_add(signals.tools_bytes()));
            let limit = (cap as f64 * config.threshold_pct).ceil() as u64;
            out.push(SignalValue { name: "request_bytes", unit: "bytes", value: bytes, threshold: limit, crossed: bytes >= limit, kind: "recovery" });
        }
        let seen = c.refusal && !signals.in_run;
        out.push(SignalValue { name: "refusal", unit: "flag", value: u64::from(seen), threshold: 1, crossed: seen, kind: "refusal" });
    }
    // C-5: a selection that found nothing to fold is not retried on the same transcript.
    let unchanged = c.failed_on.as_ref().is_some_and(|f| *f == crate::state::RowsMark::of(t));
    // C-8 over C-4/C-5: a request forecast over the window fails as sent, so neither a
    // failed attempt's back-off nor an over-threshold rewrite holds it (break finding 11:
    // a host that never reports usage never advances the cadence, so a hold there waited
    // forever); only a failed attempt on this same transcript does, with a warning.
    let allowed = |s: &SignalValue| match s.kind {
        "refusal" => true,
        _ if unchanged => false,
        "high_water" => cadence_open,
        "history" if s.name == "forecast_request_tokens" => true,
        "history" if rewrite_over => cadence_open,
        _ => cadence_open || !last_failed,
    };
    let mut decided_by = out.iter().find(|s| s.crossed && s.kind == "refusal").or_else(|| out.iter().find(|s| s.crossed && allowed(s))).map(|s| s.name);
    let suppressed: Vec<&'static str> = out.iter().filter(|s| s.crossed && !allowed(s)).map(|s| s.name).collect();
    let mut warnings = Vec::new();
    // I-3: a usage object given but not read is said, never dropped silently.
    if let Some(w) = signals.usage.as_ref().and_then(crate::formats::usage_warning) {
        warnings.push(w);
    }
    if rewrite_over && !c.over_threshold_warned && out.iter().any(|s| s.crossed && s.kind == "history") {
        warnings.push(Warning { code: HISTORY_OVER_THRESHOLD, message: history_over_threshold_message(c.last_rewrite_tokens.unwrap_or(0), threshold) });
    }
    if let Some(f) = out.iter().find(|s| s.crossed && s.name == "forecast_request_tokens" && !allowed(s)) {
        warnings.push(Warning { code: FORECAST_OVER_WINDOW_WAITING, message: forecast_over_window_waiting_message(f.value, f.threshold) });
    }
    let fl = floor_of(totals, config, state, signals);
    let reason: String;
    let mut compact = decided_by.is_some();
    if signals.force && !compact {
        compact = true;
        decided_by = Some("forced");
    }
    if compact && fl.total_tokens >= fl.budget_tokens {
        compact = false;
        reason = "cannot_fit".into();
    } else if compact {
        reason = match decided_by {
            Some("provider_total_tokens") => "provider_usage_over_threshold",
            Some("projected_input_tokens") => "projection_over_threshold",
            Some("estimated_transcript_tokens") => "estimate_over_threshold",
            Some("forecast_request_tokens") => "forecast_over_window",
            Some("request_bytes") => "request_bytes_over_cap",
            Some("refusal") => "refusal_recovery",
            _ => "forced",
        }
        .into();
    } else if !suppressed.is_empty() && unchanged {
        reason = "unchanged_since_failed_attempt".into();
    } else if !suppressed.is_empty() {
        reason = "waiting_for_cadence".into();
    } else if config.trigger == TriggerMode::ProviderUsage && usage.is_none() {
        reason = "no_provider_usage".into();
    } else {
        reason = "under_threshold".into();
    }
    let cadence = CadenceView {
        boundary,
        last_attempt_boundary: c.last_attempt_boundary,
        min_boundaries_between: config.min_boundaries_between,
        open: cadence_open,
        last_attempt_failed: last_failed,
        last_rewrite_over_threshold: rewrite_over,
    };
    let mut decision = Decision {
        compact,
        reason,
        decided_by,
        signals: out,
        suppressed,
        cadence,
        projection: proj,
        in_run: signals.in_run,
        warnings,
        floor: fl,
        threshold_tokens: threshold,
        context_window: config.context_window,
        clearing: None,
        cache: None,
    };
    // K-1..K-3: extra triggers, the clearing forecast, the cache report and policy
    // (nothing runs unless one of those options is configured).
    crate::editing::extend(t, totals, config, state, signals, &mut decision);
    decision
}
