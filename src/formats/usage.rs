//! Provider usage objects normalised to token counts (I-3, C-1, W-7).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Provider usage normalised to token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Input (prompt) tokens including cached ones.
    pub input_tokens: u64,
    /// Output (completion) tokens (`completion_tokens`, `output_tokens`, `candidatesTokenCount`).
    pub output_tokens: u64,
    /// `input + output` unless the provider states a total.
    pub total_tokens: u64,
    /// Input tokens read from the prompt cache (included in `input_tokens`), 0 if not stated.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Reasoning / thinking tokens (included in `output_tokens`), 0 if not stated.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// Normalises a provider usage object to tokens (I-3, C-1). Read shapes, by their
/// field names:
/// - OpenAI Chat Completions: `prompt_tokens` (cached included),
///   `prompt_tokens_details.cached_tokens`, `completion_tokens`,
///   `completion_tokens_details.reasoning_tokens`, `total_tokens`;
/// - OpenAI Responses: `input_tokens`, `input_tokens_details.cached_tokens`,
///   `output_tokens`, `output_tokens_details.reasoning_tokens`, `total_tokens`;
/// - Anthropic: `input_tokens` (uncached only) + `cache_creation_input_tokens` +
///   `cache_read_input_tokens`, `output_tokens`;
/// - Gemini `usageMetadata`: `promptTokenCount` (+ `toolUsePromptTokenCount`),
///   `cachedContentTokenCount`, `candidatesTokenCount` + `thoughtsTokenCount`,
///   `totalTokenCount` (and their snake_case spellings);
/// - AI SDK `LanguageModelUsage`: `inputTokens`, `outputTokens`, `totalTokens`,
///   `cachedInputTokens` / `inputTokenDetails.cacheReadTokens`, `reasoningTokens` /
///   `outputTokenDetails.reasoningTokens`; the provider-level `LanguageModelV3Usage`
///   (`inputTokens: { total, cacheRead }`, `outputTokens: { total, reasoning }`); Bedrock
///   Converse (`inputTokens` + `cacheReadInputTokens` + `cacheWriteInputTokens`);
/// - LangChain `usage_metadata`: `input_tokens`, `output_tokens`, `total_tokens`,
///   `input_token_details.cache_read`, `output_token_details.reasoning`;
/// - a whole response holding one of these under `usage`, `usageMetadata` or
///   `usage_metadata`.
///
/// Counts are non-negative numbers (a fraction is rounded down); `null` fields are
/// absent. Returns `None` when no count is present: [`usage_warning`] then names the keys.
pub fn normalize_usage(usage: &Value) -> Option<Usage> {
    let obj = usage.as_object()?;
    let num = |v: Option<&Value>| -> Option<u64> {
        let v = v?;
        v.as_u64().or_else(|| v.as_f64().filter(|f| f.is_finite() && *f >= 0.0).map(|f| f as u64))
    };
    let get = |k: &str| num(obj.get(k));
    let sub = |k: &str, f: &str| num(obj.get(k).and_then(|o| o.get(f)));
    let first = |keys: &[&str]| keys.iter().find_map(|k| get(k));
    // AI SDK provider-level usage (LanguageModelV3Usage): `inputTokens: { total, .. }`.
    let v3_in = sub("inputTokens", "total");
    let v3_out = sub("outputTokens", "total");
    let input = get("prompt_tokens")
        .or_else(|| first(&["promptTokenCount", "prompt_token_count"]).map(|p| p.saturating_add(first(&["toolUsePromptTokenCount", "tool_use_prompt_token_count"]).unwrap_or(0))))
        .or_else(|| get("input_tokens").map(|i| i.saturating_add(get("cache_creation_input_tokens").unwrap_or(0)).saturating_add(get("cache_read_input_tokens").unwrap_or(0))))
        .or_else(|| get("inputTokens").map(|i| i.saturating_add(get("cacheReadInputTokens").unwrap_or(0)).saturating_add(get("cacheWriteInputTokens").unwrap_or(0))))
        .or(v3_in);
    let output = get("completion_tokens")
        .or_else(|| first(&["candidatesTokenCount", "candidates_token_count"]).map(|c| c.saturating_add(first(&["thoughtsTokenCount", "thoughts_token_count"]).unwrap_or(0))))
        .or_else(|| first(&["output_tokens", "outputTokens"]))
        .or(v3_out);
    let total = first(&["total_tokens", "totalTokenCount", "total_token_count", "totalTokens"]);
    if input.is_none() && output.is_none() && total.is_none() {
        // A whole response: its usage object under the provider's key.
        return ["usage", "usageMetadata", "usage_metadata"].iter().find_map(|k| obj.get(*k).filter(|v| v.is_object()).and_then(normalize_usage));
    }
    let cached = first(&["cache_read_input_tokens", "cachedContentTokenCount", "cached_content_token_count", "cachedInputTokens", "cacheReadInputTokens"])
        .or_else(|| sub("prompt_tokens_details", "cached_tokens"))
        .or_else(|| sub("input_tokens_details", "cached_tokens"))
        .or_else(|| sub("input_token_details", "cache_read"))
        .or_else(|| sub("inputTokenDetails", "cacheReadTokens"))
        .or_else(|| sub("inputTokens", "cacheRead"))
        .unwrap_or(0);
    let reasoning = first(&["reasoningTokens", "thoughtsTokenCount", "thoughts_token_count"])
        .or_else(|| sub("completion_tokens_details", "reasoning_tokens"))
        .or_else(|| sub("output_tokens_details", "reasoning_tokens"))
        .or_else(|| sub("output_token_details", "reasoning"))
        .or_else(|| sub("outputTokenDetails", "reasoningTokens"))
        .or_else(|| sub("outputTokens", "reasoning"))
        .unwrap_or(0);
    let output_tokens = output.unwrap_or(0);
    let total_tokens = total.unwrap_or(input.unwrap_or(0).saturating_add(output_tokens));
    Some(Usage {
        input_tokens: input.unwrap_or(total_tokens.saturating_sub(output_tokens)),
        output_tokens,
        total_tokens,
        cached_input_tokens: cached,
        reasoning_tokens: reasoning,
    })
}

/// The `usage_unreadable` warning (I-3) for a usage object [`normalize_usage`] cannot
/// read: its message names the object's keys (at most 20, as JSON strings) or its JSON
/// type, so a new SDK shape is never dropped silently. `None` for `null` and for a
/// readable object.
pub fn usage_warning(usage: &Value) -> Option<crate::trigger::Warning> {
    if usage.is_null() || normalize_usage(usage).is_some() {
        return None;
    }
    let what = match usage {
        Value::Object(map) if map.is_empty() => "an empty object".to_string(),
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(20).map(|k| serde_json::to_string(k).unwrap_or_default()).collect();
            let more = map.len().saturating_sub(20);
            format!("keys {}{}", keys.join(", "), if more > 0 { format!(" and {more} more") } else { String::new() })
        }
        Value::Array(_) => "an array".into(),
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Null => "null".into(),
    };
    Some(crate::trigger::Warning {
        code: USAGE_UNREADABLE,
        message: format!("usage object not read ({what}): no known token count field (prompt_tokens, input_tokens, inputTokens, promptTokenCount, total_tokens, ...); the provider_total_tokens signal and the projection anchor are not set from it"),
    })
}

/// The code of the I-3 warning for a usage object the engine cannot read.
pub const USAGE_UNREADABLE: &str = "usage_unreadable";
