//! Provider usage objects normalised to token counts (C-4, W-7).

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
}

/// Normalises a provider usage object (any of the known field spellings) to tokens.
/// Accepts OpenAI (`prompt_tokens`, `completion_tokens`, `total_tokens`, or Responses
/// `input_tokens`/`output_tokens`), Anthropic (`input_tokens` + cache fields,
/// `output_tokens`) and Gemini (`promptTokenCount`, `candidatesTokenCount`,
/// `totalTokenCount`). Returns `None` when no count is present.
pub fn normalize_usage(usage: &Value) -> Option<Usage> {
    let get = |k: &str| usage.get(k).and_then(Value::as_u64);
    let input = get("prompt_tokens").or_else(|| get("promptTokenCount")).or_else(|| {
        get("input_tokens").map(|i| {
            i.saturating_add(get("cache_creation_input_tokens").unwrap_or(0)).saturating_add(get("cache_read_input_tokens").unwrap_or(0))
        })
    });
    let output = get("completion_tokens").or_else(|| get("candidatesTokenCount")).or_else(|| get("output_tokens"));
    let total = get("total_tokens").or_else(|| get("totalTokenCount"));
    if input.is_none() && output.is_none() && total.is_none() {
        return None;
    }
    let input_tokens = input.unwrap_or(0);
    let output_tokens = output.unwrap_or(0);
    let total_tokens = total.unwrap_or(input_tokens.saturating_add(output_tokens));
    Some(Usage { input_tokens: input.unwrap_or(total_tokens.saturating_sub(output_tokens)), output_tokens, total_tokens })
}
