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
}

impl Signals {
    pub fn tools_bytes(&self) -> u64 {
        self.tools_bytes.unwrap_or_else(|| self.tools.as_ref().map(|t| json_len(t) as u64).unwrap_or(0))
    }
    pub fn usage(&self) -> Option<Usage> {
        self.usage.as_ref().and_then(normalize_usage)
    }
}

/// One measured signal: its value, the threshold it is held to, whether it crossed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignalValue {
    pub name: &'static str,
    /// `tokens` or `bytes`.
    pub unit: &'static str,
    pub value: u64,
    pub threshold: u64,
    pub crossed: bool,
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
    /// The output reserve.
    pub output_reserve_tokens: u64,
    pub total_tokens: u64,
    /// What it is held to: the threshold, tokens.
    pub budget_tokens: u64,
}

/// The result of a check (C-9).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub compact: bool,
    /// Stable reason code: `provider_usage_over_threshold`, `estimate_over_threshold`,
    /// `forecast_over_threshold`, `request_bytes_over_cap`, `refusal_recovery`, `forced`,
    /// `under_threshold`, `no_provider_usage`, `cannot_fit`.
    pub reason: String,
    /// The signal that decided, if any.
    pub decided_by: Option<&'static str>,
    pub signals: Vec<SignalValue>,
    pub floor: Floor,
    pub threshold_tokens: u64,
    pub context_window: u64,
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
}

impl Totals {
    /// Measures a whole transcript at the state's calibration.
    pub fn of(t: &Transcript, config: &Config, state: &SessionState) -> Totals {
        let cal = state.calibration();
        let env_tokens = text_tokens(t.envelope.bytes(), config, cal);
        let last_request = t.messages.iter().rposition(|m| m.starts_turn());
        let mut out = Totals { estimated_tokens: env_tokens, bytes: t.envelope.bytes() as u64, system_tokens: env_tokens, protected_tokens: 0 };
        for (i, m) in t.messages.iter().enumerate() {
            let tokens = message_tokens(m, config, cal);
            out.estimated_tokens += tokens;
            out.bytes += m.bytes as u64;
            if m.role == Role::System {
                out.system_tokens += tokens;
            } else if Some(i) == last_request || m.provenance.pinned {
                out.protected_tokens += tokens;
            }
        }
        out
    }
}

/// Computes the floor (C-8): system rows + envelope system prompt + tool definitions +
/// the newest user request and pinned rows + output reserve.
pub fn floor(t: &Transcript, config: &Config, state: &SessionState, signals: &Signals) -> Floor {
    floor_of(&Totals::of(t, config, state), config, state, signals)
}

/// [`floor`] from measured [`Totals`].
pub fn floor_of(totals: &Totals, config: &Config, state: &SessionState, signals: &Signals) -> Floor {
    let cal = state.calibration();
    let tools_tokens = text_tokens(signals.tools_bytes() as usize, config, cal);
    let total = totals.system_tokens + tools_tokens + totals.protected_tokens + config.output_reserve();
    Floor {
        system_tokens: totals.system_tokens,
        tools_tokens,
        protected_tokens: totals.protected_tokens,
        output_reserve_tokens: config.output_reserve(),
        total_tokens: total,
        budget_tokens: config.threshold_tokens(),
    }
}

/// Decides whether to compact now. Pure (C-9).
///
/// - `provider_usage` mode (C-1): compact when the provider-reported total tokens >=
///   `threshold_pct x context_window`; no local estimate.
/// - `signals` mode (C-2): also the estimate of the transcript, the forecast with tool
///   definitions and output reserve, request bytes against `max_request_bytes`, and a
///   recorded refusal (C-6).
///
/// When a compaction is called for but the floor is over budget, the decision is
/// `compact: false, reason: "cannot_fit"` (C-8): no summary call can help.
pub fn decide(t: &Transcript, config: &Config, state: &SessionState, signals: &Signals) -> Decision {
    decide_from(&Totals::of(t, config, state), config, state, signals)
}

/// [`decide`] from measured [`Totals`] (taken at `state`'s calibration): the same
/// decision without a pass over the messages.
pub fn decide_from(totals: &Totals, config: &Config, state: &SessionState, signals: &Signals) -> Decision {
    let threshold = config.threshold_tokens();
    let mut out: Vec<SignalValue> = Vec::new();
    let usage = signals.usage();
    if let Some(u) = usage {
        out.push(SignalValue { name: "provider_total_tokens", unit: "tokens", value: u.total_tokens, threshold, crossed: u.total_tokens >= threshold });
    }
    if config.trigger == TriggerMode::Signals {
        let cal = state.calibration();
        let est = totals.estimated_tokens;
        out.push(SignalValue { name: "estimated_transcript_tokens", unit: "tokens", value: est, threshold, crossed: est >= threshold });
        let forecast = est + text_tokens(signals.tools_bytes() as usize, config, cal) + config.output_reserve();
        let budget = config.context_window;
        out.push(SignalValue { name: "forecast_request_tokens", unit: "tokens", value: forecast, threshold: budget, crossed: forecast >= budget });
        if let Some(cap) = config.max_request_bytes {
            let bytes = signals.request_bytes.unwrap_or_else(|| totals.bytes + signals.tools_bytes());
            let limit = (cap as f64 * config.threshold_pct).ceil() as u64;
            out.push(SignalValue { name: "request_bytes", unit: "bytes", value: bytes, threshold: limit, crossed: bytes >= limit });
        }
    }
    let fl = floor_of(totals, config, state, signals);
    let mut decided_by = out.iter().find(|s| s.crossed).map(|s| s.name);
    let reason: String;
    let mut compact = decided_by.is_some();
    if signals.force {
        compact = true;
        decided_by = decided_by.or(Some("forced"));
    }
    if config.trigger == TriggerMode::Signals && state.cadence.refusal && !compact {
        compact = true;
        decided_by = Some("refusal");
    }
    if compact && fl.total_tokens >= fl.budget_tokens {
        compact = false;
        reason = "cannot_fit".into();
    } else if compact {
        reason = match decided_by {
            Some("provider_total_tokens") => "provider_usage_over_threshold",
            Some("estimated_transcript_tokens") => "estimate_over_threshold",
            Some("forecast_request_tokens") => "forecast_over_window",
            Some("request_bytes") => "request_bytes_over_cap",
            Some("refusal") => "refusal_recovery",
            _ => "forced",
        }
        .into();
    } else if config.trigger == TriggerMode::ProviderUsage && usage.is_none() {
        reason = "no_provider_usage".into();
    } else {
        reason = "under_threshold".into();
    }
    Decision { compact, reason, decided_by, signals: out, floor: fl, threshold_tokens: threshold, context_window: config.context_window }
}
