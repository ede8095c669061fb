//! Prompt-cache pricing (K-3) and cache-stable request views (K-4).
//!
//! Every rewrite invalidates the provider's prompt cache from its first changed row on.
//! [`assess`] weighs that against what the smaller request saves over the next turns,
//! in input-token equivalents (1.0 = one uncached input token): cache writes at
//! `writeMultiplier`, cache reads at `readMultiplier`, the summary call's output at
//! `outputMultiplier`. Defaults follow the providers' published prices:
//!
//! | provider | write | read | output |
//! |---|---|---|---|
//! | `anthropic` | 1.25 (`ttlSeconds` 300), 2.0 (`ttlSeconds` >= 3600) | 0.1 | 5 |
//! | `openai` | 1.0 (no write surcharge) | 0.5 (GPT-4o; set 0.25 for GPT-4.1, 0.1 for GPT-5) | 4 |
//! | `gemini` | 1.0 (implicit caching) | 0.25 | 8 |
//! | `none` | 1.0 | 1.0 (no cache) | 4 |
//!
//! [`place_breakpoints`] adds Anthropic `cache_control` breakpoints to a request view.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// `promptCache` as the host writes it (every field optional); read from JSON by
/// [`PromptCacheInput::from_json`].
#[derive(Debug, Clone, Default)]
pub struct PromptCacheInput {
    /// `anthropic`, `openai`, `gemini` or `none`; default `anthropic`.
    pub provider: Option<String>,
    /// Cost of writing a token to the cache, as a multiple of the input price.
    pub write_multiplier: Option<f64>,
    /// Cost of reading a cached token, as a multiple of the input price.
    pub read_multiplier: Option<f64>,
    /// Cost of an output token, as a multiple of the input price (the summary call).
    pub output_multiplier: Option<f64>,
    /// Cache lifetime, seconds (Anthropic: 300 or 3600; picks the write multiplier).
    pub ttl_seconds: Option<u64>,
    /// `report` (default: the decision only reports) or `pays` (an ordinary trigger
    /// compacts only when the rewrite pays for its cache break; recovery never waits).
    pub policy: Option<String>,
    /// Turns over which a saving is counted; default 10.
    pub horizon_turns: Option<u64>,
}

/// Whether the cost decides (K-3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CachePolicy {
    /// Report the cost in the decision; never change it.
    Report,
    /// Veto an ordinary trigger whose rewrite costs more than it saves over the horizon.
    /// Never vetoed: request bytes over the cap, a forecast over the window, a recorded
    /// refusal (C-4, C-6), `force`.
    Pays,
}

/// The pricing in force (K-3). Multipliers are of the uncached input-token price.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCache {
    /// The provider the prices come from.
    pub provider: String,
    /// Cache write cost per token.
    pub write_multiplier: f64,
    /// Cache read cost per token.
    pub read_multiplier: f64,
    /// Output cost per token (the summary call's answer).
    pub output_multiplier: f64,
    /// Cache lifetime, seconds.
    pub ttl_seconds: u64,
    /// `report` or `pays`.
    pub policy: CachePolicy,
    /// Turns over which a saving is counted.
    pub horizon_turns: u64,
}

impl PromptCacheInput {
    /// Reads `promptCache` from its JSON (camelCase keys), by hand (wasm size). Errors:
    /// `invalid_config` naming the field, unknown keys included.
    pub fn from_json(v: &Value) -> Result<PromptCacheInput> {
        use crate::editing::{field, object, u64_field};
        let m = object(v, "promptCache", &["provider", "writeMultiplier", "readMultiplier", "outputMultiplier", "ttlSeconds", "policy", "horizonTurns"])?;
        let num = |k: &str| field(m, &[k]).map(|x| x.as_f64().ok_or_else(|| Error::new(ErrorCode::InvalidConfig, format!("options: promptCache.{k} must be a number")))).transpose();
        let text = |k: &str| field(m, &[k]).map(|x| x.as_str().map(str::to_string).ok_or_else(|| Error::new(ErrorCode::InvalidConfig, format!("options: promptCache.{k} must be a string")))).transpose();
        Ok(PromptCacheInput {
            provider: text("provider")?,
            write_multiplier: num("writeMultiplier")?,
            read_multiplier: num("readMultiplier")?,
            output_multiplier: num("outputMultiplier")?,
            ttl_seconds: u64_field(m, &["ttlSeconds"], "promptCache.ttlSeconds")?,
            policy: text("policy")?,
            horizon_turns: u64_field(m, &["horizonTurns"], "promptCache.horizonTurns")?,
        })
    }

    /// Resolves over the provider's published prices. Errors: `invalid_config` for an
    /// unknown provider or policy, or a negative / non-finite multiplier.
    pub fn resolve(self) -> Result<PromptCache> {
        let provider = self.provider.unwrap_or_else(|| "anthropic".into());
        let ttl = self.ttl_seconds.unwrap_or(300);
        let (w, r, o) = match provider.as_str() {
            "anthropic" => (if ttl >= 3600 { 2.0 } else { 1.25 }, 0.1, 5.0),
            "openai" => (1.0, 0.5, 4.0),
            "gemini" => (1.0, 0.25, 8.0),
            "none" => (1.0, 1.0, 4.0),
            other => return Err(Error::new(ErrorCode::InvalidConfig, format!("promptCache.provider must be anthropic, openai, gemini or none, not {other:?}"))),
        };
        let policy = match self.policy.as_deref() {
            None | Some("report") => CachePolicy::Report,
            Some("pays") => CachePolicy::Pays,
            Some(p) => return Err(Error::new(ErrorCode::InvalidConfig, format!("promptCache.policy must be \"report\" or \"pays\", not {p:?}"))),
        };
        let pc = PromptCache {
            provider,
            write_multiplier: self.write_multiplier.unwrap_or(w),
            read_multiplier: self.read_multiplier.unwrap_or(r),
            output_multiplier: self.output_multiplier.unwrap_or(o),
            ttl_seconds: ttl,
            policy,
            horizon_turns: self.horizon_turns.unwrap_or(10).max(1),
        };
        for (name, v) in [("writeMultiplier", pc.write_multiplier), ("readMultiplier", pc.read_multiplier), ("outputMultiplier", pc.output_multiplier)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::new(ErrorCode::InvalidConfig, format!("promptCache.{name} must be a finite number >= 0")));
            }
        }
        Ok(pc)
    }
}

impl Default for PromptCache {
    fn default() -> Self {
        PromptCacheInput::default().resolve().unwrap_or(PromptCache {
            provider: "anthropic".into(),
            write_multiplier: 1.25,
            read_multiplier: 0.1,
            output_multiplier: 5.0,
            ttl_seconds: 300,
            policy: CachePolicy::Report,
            horizon_turns: 10,
        })
    }
}

/// The rewrite a check would make, as the cache sees it (inputs of [`assess`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RewriteShape {
    /// First row the rewrite changes (K-4); `None` = nothing changes.
    pub first_changed_offset: Option<usize>,
    /// Estimated tokens of the request as it is (all of it cached by the last request).
    pub tokens_before: u64,
    /// Estimated tokens of the rows before the first changed one (still cached after).
    pub kept_prefix_tokens: u64,
    /// Estimated tokens of the request after the rewrite.
    pub tokens_after: u64,
    /// Input tokens of the summary call(s) the rewrite needs (0 for a clearing).
    pub call_input_tokens: u64,
    /// Output tokens of those calls.
    pub call_output_tokens: u64,
}

/// What a rewrite costs and saves in the prompt cache (K-3), in input-token
/// equivalents over `horizonTurns` turns.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheReport {
    /// `clear` (a clearing alone) or `summary` (clear if configured, then summarize).
    pub tier: &'static str,
    /// First row the rewrite changes (K-4).
    pub first_changed_offset: Option<usize>,
    /// Tokens of cached prefix the rewrite invalidates (before minus the kept prefix).
    pub invalidated_tokens: u64,
    /// Tokens still read from the cache after the rewrite (the rows before the first change).
    pub kept_prefix_tokens: u64,
    /// Estimated tokens of the request before and after.
    pub tokens_before: u64,
    /// Estimated tokens of the request after the rewrite.
    pub tokens_after: u64,
    /// The summary call's cost (input plus priced output), 0 for a clearing.
    pub call_cost: f64,
    /// Re-billing the invalidated part: writing the new suffix instead of reading.
    pub break_cost: f64,
    /// Saving per later turn: the removed tokens no longer read.
    pub saving_per_turn: f64,
    /// Turns counted.
    pub horizon_turns: u64,
    /// Cost over the horizon without the rewrite.
    pub cost_without: f64,
    /// Cost over the horizon with it (call included).
    pub cost_with: f64,
    /// `cost_without - cost_with`: positive when the rewrite pays.
    pub net_saving: f64,
    /// `net_saving > 0`.
    pub pays: bool,
    /// The prices used.
    pub provider: String,
}

/// Prices one rewrite (K-3). Model: the request as it is sits in the cache; without the
/// rewrite each of the `horizon` turns reads it; with it, the first turn reads the kept
/// prefix and writes the rest, the later turns read the smaller request; plus the call.
/// Tokens appended each turn cost the same either way and are left out.
pub fn assess(pc: &PromptCache, tier: &'static str, s: RewriteShape) -> CacheReport {
    let h = pc.horizon_turns.max(1) as f64;
    let (r, w) = (pc.read_multiplier, pc.write_multiplier);
    let before = s.tokens_before as f64;
    let after = s.tokens_after as f64;
    let kept = (s.kept_prefix_tokens.min(s.tokens_after)) as f64;
    let call_cost = s.call_input_tokens as f64 + s.call_output_tokens as f64 * pc.output_multiplier;
    let cost_without = h * before * r;
    let first = kept * r + (after - kept) * w;
    let cost_with = first + (h - 1.0) * after * r + call_cost;
    let net = cost_without - cost_with;
    CacheReport {
        tier,
        first_changed_offset: s.first_changed_offset,
        invalidated_tokens: s.tokens_before.saturating_sub(s.kept_prefix_tokens),
        kept_prefix_tokens: s.kept_prefix_tokens,
        tokens_before: s.tokens_before,
        tokens_after: s.tokens_after,
        call_cost: round2(call_cost),
        break_cost: round2((after - kept) * (w - r)),
        saving_per_turn: round2((before - after).max(0.0) * r),
        horizon_turns: pc.horizon_turns,
        cost_without: round2(cost_without),
        cost_with: round2(cost_with),
        net_saving: round2(net),
        pays: net > 0.0,
        provider: pc.provider.clone(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Anthropic's limit on `cache_control` marks in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// Adds Anthropic `cache_control: { type: "ephemeral" }` breakpoints to a request view
/// (K-4), newest stable point first: on the last block of the last message, on the last
/// block of the message at `summary_end` - 1 (the end of the summary block, when there is
/// one) and on the system prompt (the envelope's `system`: a string becomes one text
/// block). String content becomes one text block to carry a mark. Break finding 13: the
/// view never carries more than [`MAX_BREAKPOINTS`] marks: the host's own marks (any
/// `cache_control` already in the view) count first, and the engine's fill what is left
/// in the order above (a point the host already marked costs nothing). When the host
/// already set 4 or more, nothing is added.
/// Other formats: unchanged (OpenAI and Gemini cache prefixes without markers).
pub fn place_breakpoints(view: &mut Value, summary_end: Option<usize>) {
    let mut left = MAX_BREAKPOINTS.saturating_sub(count_marks(view));
    let on_blocks = |content: &mut Value, left: &mut usize| {
        let already = content.as_array().and_then(|a| a.last()).and_then(|b| b.get("cache_control")).is_some();
        if already || *left == 0 {
            return;
        }
        if let Value::String(text) = content {
            *content = json!([{ "type": "text", "text": text.clone() }]);
        }
        if let Some(last) = content.as_array_mut().and_then(|a| a.last_mut()).and_then(Value::as_object_mut) {
            last.insert("cache_control".into(), json!({ "type": "ephemeral" }));
            *left -= 1;
        }
    };
    let list = match &mut *view {
        Value::Array(a) => Some(a),
        Value::Object(o) => o.get_mut("messages").and_then(Value::as_array_mut),
        _ => None,
    };
    if let Some(list) = list {
        let n = list.len();
        let mut at: Vec<usize> = Vec::new();
        if n > 0 {
            at.push(n - 1);
        }
        at.extend(summary_end.filter(|&e| e > 0 && e < n).map(|e| e - 1));
        for i in at {
            if let Some(content) = list.get_mut(i).and_then(|m| m.get_mut("content")) {
                on_blocks(content, &mut left);
            }
        }
    }
    if let Some(system) = view.as_object_mut().and_then(|o| o.get_mut("system")) {
        on_blocks(system, &mut left);
    }
}

/// How many `cache_control` marks `v` carries (keys at any depth, iteratively: a host
/// view may nest deeply).
pub fn count_marks(v: &Value) -> usize {
    let mut n = 0;
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        match x {
            Value::Object(o) => {
                n += usize::from(o.contains_key("cache_control"));
                stack.extend(o.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    n
}

/// End (exclusive) of the summary block in the request view of `t` (K-4): after the
/// system rows and the summaries that follow them (past the newest provider compaction
/// item among them, [`crate::transcript::Message::in_summary_block`]), one further when the findings ledger
/// message (Y-10) sits at the head. `None` when there is no summary.
pub fn summary_end_in_request(t: &crate::transcript::Transcript, findings: bool) -> Option<usize> {
    let head = t.messages.iter().take_while(|m| m.role == crate::transcript::Role::System).count();
    let block = t.messages.iter().skip(head).take_while(|m| m.in_summary_block());
    let (len, summaries) = block.fold((0, 0), |(n, s), m| (n + 1, s + usize::from(m.is_summary())));
    (summaries > 0).then_some(head + len + usize::from(findings))
}
