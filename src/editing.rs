//! Context-editing decisions (K-1..K-3): the extra triggers (K-2), what the clearing
//! tier can reach (K-1, with the floor of C-8), the prompt-cache cost of the rewrite a
//! check would make and the opt-in `pays` policy (K-3), and the recent user messages
//! kept verbatim by a token budget (K-2).
//!
//! [`extend`] runs at the end of every decision ([`crate::trigger::decide_from`]) and
//! does nothing unless `trigger` clauses, `clearToolUses`, `clearThinking` or
//! `promptCache` are configured.

use crate::cache::{assess, CachePolicy, RewriteShape};
use crate::clear::{plan, Clearing};
use crate::config::{Config, TriggerMode};
use crate::error::{Error, ErrorCode, Result};
use crate::measure::{message_tokens, text_tokens};
use crate::select::{select, Selection};
use crate::state::SessionState;
use crate::transcript::{Block, Message, Transcript};
use crate::trigger::{Decision, SignalValue, Signals, Totals};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One trigger clause (K-2, LangChain `SummarizationMiddleware` `trigger` style): it
/// fires when every threshold it sets is reached. Several clauses: any one fires.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TriggerClause {
    /// Messages (rows) in the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// Estimated tokens of the transcript (C-7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Estimated tokens as a fraction of `contextWindow`, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Tool calls in the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_uses: Option<u64>,
}

/// The K options as the host wrote them, taken out of the options object before the
/// rest is deserialized (read by hand from JSON: no serde visitors for them, which keeps
/// the wasm module small). See [`take_editing`].
#[derive(Debug, Clone, Default)]
pub struct EditingInput {
    /// `trigger`: a mode string, a clause object or a list of clauses.
    pub trigger: Option<Value>,
    /// `clearToolUses` (alias `clear_tool_uses`).
    pub clear_tool_uses: Option<Value>,
    /// `clearThinking` (alias `clear_thinking`).
    pub clear_thinking: Option<Value>,
    /// `promptCache` (alias `prompt_cache`).
    pub prompt_cache: Option<Value>,
}

/// Removes the K options from an options object (K-1..K-3).
pub fn take_editing(opts: &mut Value) -> EditingInput {
    let Some(map) = opts.as_object_mut() else { return EditingInput::default() };
    let mut take = |names: &[&str]| names.iter().filter_map(|n| map.remove(*n)).find(|v| !v.is_null());
    EditingInput {
        trigger: take(&["trigger"]),
        clear_tool_uses: take(&["clearToolUses", "clear_tool_uses"]),
        clear_thinking: take(&["clearThinking", "clear_thinking"]),
        prompt_cache: take(&["promptCache", "prompt_cache"]),
    }
}

/// `v` as an object whose keys are all in `allowed`. Errors: `invalid_config` naming
/// `what` and the unknown key.
pub(crate) fn object<'a>(v: &'a Value, what: &str, allowed: &[&str]) -> Result<&'a serde_json::Map<String, Value>> {
    let m = v.as_object().ok_or_else(|| Error::new(ErrorCode::InvalidConfig, format!("options: {what} must be an object")))?;
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(Error::new(ErrorCode::InvalidConfig, format!("options: {what}: unknown field `{k}`, expected one of {allowed:?}")));
    }
    Ok(m)
}

/// The first of `names` present (and not null) in `m`.
pub(crate) fn field<'a>(m: &'a serde_json::Map<String, Value>, names: &[&str]) -> Option<&'a Value> {
    names.iter().filter_map(|n| m.get(*n)).find(|v| !v.is_null())
}

/// An optional non-negative integer field. Errors: `invalid_config` naming it.
pub(crate) fn u64_field(m: &serde_json::Map<String, Value>, names: &[&str], what: &str) -> Result<Option<u64>> {
    field(m, names).map(|v| v.as_u64().ok_or_else(|| Error::new(ErrorCode::InvalidConfig, format!("options: {what} must be a non-negative integer")))).transpose()
}

/// Reads the `trigger` option (K-2): the seeds' mode string (`"signals"`,
/// `"provider_usage"`), one clause object, or a list of clauses. Returns the mode (if a
/// string) and the clauses. Errors: `invalid_config` naming what is wrong.
pub fn parse_trigger(v: &Value) -> Result<(Option<TriggerMode>, Vec<TriggerClause>)> {
    let clause = |c: &Value| -> Result<TriggerClause> {
        let m = object(c, "trigger clause", &["messages", "tokens", "fraction", "toolUses", "tool_uses"])?;
        let fraction = field(m, &["fraction"]).map(|f| f.as_f64().ok_or_else(|| Error::new(ErrorCode::InvalidConfig, "options: trigger.fraction must be a number"))).transpose()?;
        Ok(TriggerClause {
            messages: u64_field(m, &["messages"], "trigger.messages")?,
            tokens: u64_field(m, &["tokens"], "trigger.tokens")?,
            fraction,
            tool_uses: u64_field(m, &["toolUses", "tool_uses"], "trigger.toolUses")?,
        })
    };
    match v {
        Value::String(s) => match s.as_str() {
            "signals" => Ok((Some(TriggerMode::Signals), Vec::new())),
            "provider_usage" => Ok((Some(TriggerMode::ProviderUsage), Vec::new())),
            other => Err(Error::new(ErrorCode::InvalidConfig, format!("options: trigger must be \"signals\", \"provider_usage\", a clause or a list of clauses, not {other:?}"))),
        },
        Value::Array(items) => Ok((None, items.iter().map(clause).collect::<Result<Vec<_>>>()?)),
        Value::Object(_) => Ok((None, vec![clause(v)?])),
        _ => Err(Error::new(ErrorCode::InvalidConfig, "options: trigger must be a mode string, a clause object or a list of clauses")),
    }
}

/// Validates the K options of a config. Errors: `invalid_config` naming the field.
pub fn validate_config(c: &Config) -> Result<()> {
    for (i, cl) in c.trigger_on.iter().enumerate() {
        if cl.messages.is_none() && cl.tokens.is_none() && cl.fraction.is_none() && cl.tool_uses.is_none() {
            return Err(Error::new(ErrorCode::InvalidConfig, format!("trigger clause {i} sets none of messages, tokens, fraction, toolUses")));
        }
        if cl.fraction.is_some_and(|f| !(f > 0.0 && f <= 1.0)) {
            return Err(Error::new(ErrorCode::InvalidConfig, format!("trigger clause {i}: fraction must be in (0, 1]")));
        }
    }
    Ok(())
}

/// What the clearing tier would do at this check (K-1). Tokens are estimates (C-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearingForecast {
    /// Items (tool results, thinking) the clearing would clear.
    pub items: usize,
    /// Tokens it would remove (0 when under `clearAtLeast`).
    pub clearable_tokens: u64,
    /// Estimated transcript tokens now.
    pub tokens_before: u64,
    /// Estimated transcript tokens after clearing alone.
    pub tokens_after: u64,
    /// The compaction target: `thresholdPct` x `contextWindow`.
    pub target_tokens: u64,
    /// Clearing alone gets the transcript under the target: no summary call is made.
    pub reaches_target: bool,
    /// The first row it changes (K-4).
    pub first_changed_offset: Option<usize>,
}

/// Signals that a clearing decides (the engine then clears without summarizing).
pub const CLEAR_TRIGGER: &str = "clear_tool_uses_trigger";

fn clause_names(key: &str) -> &'static str {
    match key {
        "messages" => "trigger_messages",
        "tokens" => "trigger_tokens",
        "fraction" => "trigger_fraction",
        _ => "trigger_tool_uses",
    }
}

/// The clearing the config asks for over `t` now (no artifact handles yet).
pub fn clearing_now(t: &Transcript, config: &Config, state: &SessionState) -> Clearing {
    if config.clear_tool_uses.is_none() && config.clear_thinking.is_none() {
        return Clearing::default();
    }
    plan(t.format, &t.messages, config.clear_tool_uses.as_ref(), config.clear_thinking.as_ref(), &Default::default(), config, state.calibration(), false).unwrap_or_default()
}

/// Adds the K signals, forecast, cache report and policy to a decision (see the module doc).
pub fn extend(t: &Transcript, totals: &Totals, config: &Config, state: &SessionState, signals: &Signals, d: &mut Decision) {
    let clearing_on = config.clear_tool_uses.is_some() || config.clear_thinking.is_some();
    if config.trigger_on.is_empty() && !clearing_on && config.prompt_cache.is_none() {
        return;
    }
    let cal = state.calibration();
    let est = d.signals.iter().find(|s| s.name == "estimated_transcript_tokens").map(|s| s.value).unwrap_or(totals.estimated_tokens);
    let unchanged = state.cadence.failed_on.as_ref().is_some_and(|f| *f == crate::state::RowsMark::of(t));
    let allowed = d.cadence.open && !unchanged;
    let mut fired: Option<&'static str> = None;
    // K-2: clauses
    if !config.trigger_on.is_empty() {
        let tool_uses = t.messages.iter().map(|m| m.blocks.iter().filter(|b| matches!(b, Block::ToolCall { .. })).count() as u64).sum::<u64>();
        for cl in &config.trigger_on {
            let mut parts: Vec<(&'static str, &'static str, u64, u64)> = Vec::new();
            if let Some(n) = cl.messages {
                parts.push((clause_names("messages"), "messages", t.messages.len() as u64, n));
            }
            if let Some(n) = cl.tokens {
                parts.push((clause_names("tokens"), "tokens", est, n));
            }
            if let Some(f) = cl.fraction {
                parts.push((clause_names("fraction"), "tokens", est, (f * config.context_window as f64).ceil() as u64));
            }
            if let Some(n) = cl.tool_uses {
                parts.push((clause_names("tool_uses"), "tool_uses", tool_uses, n));
            }
            let all = parts.iter().all(|(_, _, v, th)| v >= th);
            for (name, unit, value, threshold) in &parts {
                d.signals.push(SignalValue { name, unit, value: *value, threshold: *threshold, crossed: value >= threshold, kind: "high_water" });
            }
            if all && fired.is_none() {
                fired = parts.first().map(|p| p.0);
            }
        }
    }
    // K-1: the clearing and its own trigger (provider input tokens when known)
    let clearing = clearing_now(t, config, state);
    if let Some(cfg) = &config.clear_tool_uses {
        let input = signals.usage().map(|u| u.input_tokens).unwrap_or(est);
        let crossed = input >= cfg.trigger;
        d.signals.push(SignalValue { name: CLEAR_TRIGGER, unit: "tokens", value: input, threshold: cfg.trigger, crossed, kind: "high_water" });
        if crossed && !clearing.is_empty() && fired.is_none() {
            fired = Some(CLEAR_TRIGGER);
        }
    }
    if let Some(name) = fired {
        if !d.compact && d.reason != "cannot_fit" {
            if !allowed {
                d.suppressed.push(name);
                if d.reason == "under_threshold" || d.reason == "no_provider_usage" {
                    d.reason = if unchanged { "unchanged_since_failed_attempt".into() } else { "waiting_for_cadence".into() };
                }
            } else if name != CLEAR_TRIGGER && d.floor.total_tokens >= d.floor.budget_tokens {
                d.reason = "cannot_fit".into();
            } else {
                d.compact = true;
                d.decided_by = Some(name);
                d.reason = if name == CLEAR_TRIGGER { "clear_trigger".into() } else { "trigger_clause".into() };
            }
        }
    }
    let threshold = d.threshold_tokens;
    if clearing_on {
        // measured as the engine will: the deciding token signal, else the estimate
        let before = measured_tokens(d);
        let after = before.saturating_sub(clearing.tokens);
        d.clearing = Some(ClearingForecast {
            items: clearing.cleared.len(),
            clearable_tokens: clearing.tokens,
            tokens_before: before,
            tokens_after: after,
            target_tokens: threshold,
            reaches_target: !clearing.is_empty() && (after < threshold || d.decided_by == Some(CLEAR_TRIGGER)),
            first_changed_offset: clearing.first_offset,
        });
    }
    // K-3 / K-4: the rewrite this check would make, priced
    let pc = config.prompt_cache.clone().unwrap_or_default();
    if let Some((tier, shape)) = rewrite_shape(t, config, state, d, &clearing, est) {
        let report = assess(&pc, tier, shape);
        // recovery is never vetoed: any crossed request-bytes (C-4), window forecast or
        // refusal (C-6) signal, or `force`
        let recovery = d.signals.iter().any(|s| s.crossed && matches!(s.name, "request_bytes" | "forecast_request_tokens" | "refusal")) || signals.force;
        let vetoable = !recovery
            && matches!(
                d.decided_by,
                Some("provider_total_tokens" | "projected_input_tokens" | "estimated_transcript_tokens" | CLEAR_TRIGGER | "trigger_messages" | "trigger_tokens" | "trigger_fraction" | "trigger_tool_uses")
            );
        if d.compact && vetoable && pc.policy == CachePolicy::Pays && config.prompt_cache.is_some() && !report.pays {
            d.compact = false;
            d.reason = "cache_not_paying".into();
        }
        d.cache = Some(report);
    }
    let _ = cal;
}

/// The tokens a clearing is held to the target with (K-1): the value of the deciding
/// signal when it counts tokens, else the transcript estimate (Y-10 findings included).
pub fn measured_tokens(d: &Decision) -> u64 {
    let est = d.signals.iter().find(|s| s.name == "estimated_transcript_tokens").map(|s| s.value);
    let by = d.signals.iter().find(|s| Some(s.name) == d.decided_by && s.unit == "tokens").map(|s| s.value);
    by.or(est).unwrap_or(0)
}

/// The tier and the shape of the rewrite the engine would make now: a clearing alone
/// when it reaches the target (or its own trigger decided), else clear-then-summarize
/// over the selection. `None` when there is nothing to rewrite.
pub fn rewrite_shape(t: &Transcript, config: &Config, state: &SessionState, d: &Decision, clearing: &Clearing, est: u64) -> Option<(&'static str, RewriteShape)> {
    let cal = state.calibration();
    let env = text_tokens(t.envelope.bytes(), config, cal);
    let prefix = |upto: usize| -> u64 { t.messages.iter().take(upto).fold(env, |a, m| a.saturating_add(message_tokens(m, config, cal))) };
    let after_clear = est.saturating_sub(clearing.tokens);
    let clear_only = !clearing.is_empty() && (measured_tokens(d).saturating_sub(clearing.tokens) < d.threshold_tokens || d.decided_by == Some(CLEAR_TRIGGER));
    if clear_only {
        let first = clearing.first_offset;
        let kept = prefix(first.unwrap_or(t.messages.len()));
        return Some(("clear", RewriteShape { first_changed_offset: first, tokens_before: est, kept_prefix_tokens: kept, tokens_after: after_clear, call_input_tokens: 0, call_output_tokens: 0 }));
    }
    let sel = select(&t.messages, config, recent_cap(config, d)).ok()?;
    let sel = preserve_recent_users(sel, &t.messages, config, cal);
    let fold_tokens: u64 = sel.fold.iter().filter_map(|&o| t.messages.get(o)).map(|m| message_tokens(m, config, cal)).sum();
    // clearing of rows the fold removes anyway saves nothing more
    let cleared_kept: u64 = clearing
        .edits
        .iter()
        .filter(|(o, _)| sel.fold.binary_search(o).is_err())
        .filter_map(|(o, row)| t.messages.get(*o).map(|src| message_tokens(src, config, cal).saturating_sub(row.as_ref().map(|r| message_tokens(r, config, cal)).unwrap_or(0))))
        .sum();
    let block = sel.summary_end.saturating_sub(sel.head_end);
    let rollup = block + 1 > config.max_summaries_before_rollup && block >= 1;
    let fold_first = sel.fold.first().copied();
    let mut first = [fold_first, clearing.first_offset.filter(|o| sel.fold.binary_search(o).is_err())].into_iter().flatten().min();
    if rollup {
        first = Some(sel.head_end);
    }
    let summary = config.summary_max_output_tokens;
    let after = est.saturating_sub(fold_tokens).saturating_sub(cleared_kept).saturating_add(summary);
    let call_in = ((fold_tokens as f64) * config.summary_input_share).ceil() as u64;
    let kept = prefix(first.unwrap_or(t.messages.len()));
    Some(("summary", RewriteShape { first_changed_offset: first, tokens_before: est, kept_prefix_tokens: kept, tokens_after: after, call_input_tokens: call_in, call_output_tokens: summary }))
}

/// The recent window's byte cap the engine uses under byte pressure (S-8).
pub fn recent_cap(config: &Config, d: &Decision) -> Option<usize> {
    config.fit_recent_window.then(|| {
        // the floor without the user text a projection-off summary quotes (N-1): that
        // text is folded rows' text, not a part of the recent window's room
        let floor = d.floor.total_tokens.saturating_sub(d.floor.user_text_tokens);
        let spare = d.threshold_tokens.saturating_sub(floor.saturating_add(config.summary_max_output_tokens));
        usize::try_from(spare.saturating_mul(config.bytes_per_token) / 2).unwrap_or(usize::MAX)
    })
}

/// K-2 (Codex style): takes the newest conversational user messages out of the fold,
/// newest first, while their estimated tokens stay within `preserveRecentUserTokens`;
/// they stay verbatim after the summary. A message over the remaining budget stops the
/// walk (older ones are not taken past it). Unchanged when the option is off.
///
/// A user message that also holds tool results (Anthropic / Gemini `[tool_result,
/// text]`: the person typed while the agent worked) is kept with the folded rows
/// holding the calls it answers, counted in the budget, so the pairing stays whole
/// (adversarial finding 9, session 6); when such a call row also holds calls answered
/// elsewhere, the message stays in the fold (its text is quoted there, N-1).
pub fn preserve_recent_users(mut sel: Selection, messages: &[Message], config: &Config, calibration: f64) -> Selection {
    let Some(budget) = config.preserve_recent_user_tokens else { return sel };
    let mut left = budget;
    let mut keep: Vec<usize> = Vec::new();
    for &o in sel.fold.iter().rev() {
        let Some(m) = messages.get(o) else { continue };
        if !m.starts_turn() || m.provenance.is_pinned() || keep.contains(&o) {
            continue;
        }
        let Some(calls) = calls_answered(&sel.fold, o, messages, m) else { continue };
        let tokens = message_tokens(m, config, calibration).saturating_add(calls.iter().filter_map(|&c| messages.get(c)).map(|c| message_tokens(c, config, calibration)).sum::<u64>());
        if tokens > left {
            break;
        }
        left -= tokens;
        keep.push(o);
        keep.extend(calls);
    }
    if !keep.is_empty() {
        sel.fold.retain(|o| !keep.contains(o));
    }
    sel
}

/// The folded rows (`fold`, sorted offsets) before `m` (at offset `at`) holding the
/// calls whose results `m` holds (empty when it holds none; a call row not folded stays
/// anyway), or `None` when a folded one also holds a call `m` does not answer, or a
/// result's call is in no row before it.
fn calls_answered(fold: &[usize], at: usize, messages: &[Message], m: &Message) -> Option<Vec<usize>> {
    use crate::transcript::Block;
    let answered: Vec<&str> = m.blocks.iter().filter_map(|b| if let Block::ToolResult { call_id, .. } = b { Some(call_id.as_str()) } else { None }).collect();
    if answered.is_empty() {
        return Some(Vec::new());
    }
    let mut rows: Vec<usize> = Vec::new();
    let mut found = 0usize;
    for c in (0..at).rev() {
        let Some(row) = messages.get(c) else { continue };
        let ids: Vec<&str> = row.blocks.iter().filter_map(|b| if let Block::ToolCall { id, .. } = b { Some(id.as_str()) } else { None }).collect();
        let mine = ids.iter().filter(|i| answered.contains(i)).count();
        if mine == 0 {
            continue;
        }
        if fold.binary_search(&c).is_ok() {
            if mine < ids.len() {
                return None;
            }
            rows.push(c);
        }
        found += mine;
        if found >= answered.len() {
            return Some(rows);
        }
    }
    None
}
