//! Usage objects of every provider SDK (I-3) and host token counts (I-4). Test names
//! cite the rule they pin.

use context_compactor::capacity::{observe_usage, Observation};
use context_compactor::config::Config;
use context_compactor::formats::{self, normalize_usage, usage_warning, Format, Usage};
use context_compactor::state::SessionState;
use context_compactor::trigger::{count_texts, decide, Signals, TokenCounts};
use serde_json::{json, Value};

fn read(v: Value) -> Usage {
    normalize_usage(&v).unwrap_or_else(|| panic!("not read: {v}"))
}

fn usage(input: u64, output: u64, total: u64, cached: u64, reasoning: u64) -> Usage {
    Usage { input_tokens: input, output_tokens: output, total_tokens: total, cached_input_tokens: cached, reasoning_tokens: reasoning }
}

#[test]
fn i3_openai_chat_usage_with_cached_and_reasoning_details() {
    let u = read(json!({ "prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500,
        "prompt_tokens_details": { "cached_tokens": 1024, "audio_tokens": 0 },
        "completion_tokens_details": { "reasoning_tokens": 128 } }));
    assert_eq!(u, usage(1200, 300, 1500, 1024, 128));
}

#[test]
fn i3_openai_responses_usage_with_input_details() {
    let u = read(json!({ "input_tokens": 900, "input_tokens_details": { "cached_tokens": 512 },
        "output_tokens": 100, "output_tokens_details": { "reasoning_tokens": 40 }, "total_tokens": 1000 }));
    assert_eq!(u, usage(900, 100, 1000, 512, 40));
}

#[test]
fn i3_anthropic_usage_adds_cache_read_and_creation_to_input() {
    let u = read(json!({ "input_tokens": 50, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 30000, "output_tokens": 700,
        "server_tool_use": null, "service_tier": "standard" }));
    assert_eq!(u, usage(32050, 700, 32750, 30000, 0));
}

#[test]
fn i3_gemini_usage_metadata_counts_tool_prompt_and_thoughts() {
    let u = read(json!({ "promptTokenCount": 4000, "cachedContentTokenCount": 3000, "candidatesTokenCount": 200,
        "thoughtsTokenCount": 50, "toolUsePromptTokenCount": 10, "totalTokenCount": 4260 }));
    assert_eq!(u, usage(4010, 250, 4260, 3000, 50));
    // a whole GenerateContentResponse: its usageMetadata is read
    let r = read(json!({ "candidates": [], "usageMetadata": { "promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10 } }));
    assert_eq!(r, usage(7, 3, 10, 0, 0));
}

#[test]
fn i3_ai_sdk_language_model_usage_7x_and_5x_shapes() {
    // ai 6/7 LanguageModelUsage
    let u = read(json!({ "inputTokens": 5000, "inputTokenDetails": { "noCacheTokens": 1000, "cacheReadTokens": 4000, "cacheWriteTokens": 0 },
        "outputTokens": 300, "outputTokenDetails": { "textTokens": 200, "reasoningTokens": 100 }, "totalTokens": 5300 }));
    assert_eq!(u, usage(5000, 300, 5300, 4000, 100));
    // ai 5 (deprecated fields) and undefined counts (null after JSON)
    let v5 = read(json!({ "inputTokens": 10, "outputTokens": null, "totalTokens": null, "cachedInputTokens": 4, "reasoningTokens": 2 }));
    assert_eq!(v5, usage(10, 0, 10, 4, 2));
    // the provider-level LanguageModelV3Usage a middleware sees
    let v3 = read(json!({ "inputTokens": { "total": 800, "noCache": 300, "cacheRead": 500, "cacheWrite": 0 }, "outputTokens": { "total": 60, "text": 50, "reasoning": 10 } }));
    assert_eq!(v3, usage(800, 60, 860, 500, 10));
}

#[test]
fn i3_langchain_usage_metadata_does_not_add_its_cache_details() {
    // LangChain's input_tokens already include the cache (input_token_details break it down)
    let u = read(json!({ "input_tokens": 350, "output_tokens": 240, "total_tokens": 590,
        "input_token_details": { "audio": 10, "cache_creation": 200, "cache_read": 100 }, "output_token_details": { "audio": 10, "reasoning": 200 } }));
    assert_eq!(u, usage(350, 240, 590, 100, 200));
    // an AIMessage-like object: usage_metadata read from it
    let m = read(json!({ "content": "hi", "usage_metadata": { "input_tokens": 3, "output_tokens": 1, "total_tokens": 4 } }));
    assert_eq!(m.total_tokens, 4);
}

#[test]
fn i3_bedrock_converse_usage_adds_cache_fields() {
    let u = read(json!({ "inputTokens": 100, "cacheReadInputTokens": 900, "cacheWriteInputTokens": 0, "outputTokens": 20, "totalTokens": 1020 }));
    assert_eq!(u, usage(1000, 20, 1020, 900, 0));
}

#[test]
fn i3_unreadable_usage_warns_naming_its_keys() {
    let w = usage_warning(&json!({ "promptTokens": 10, "completion": 2 })).expect("a warning");
    assert_eq!(w.code, "usage_unreadable");
    assert!(w.message.contains("\"promptTokens\"") && w.message.contains("\"completion\""), "{}", w.message);
    assert!(usage_warning(&json!("12 tokens")).expect("a warning").message.contains("a string"));
    assert!(usage_warning(&json!({})).expect("a warning").message.contains("empty object"));
    assert!(usage_warning(&Value::Null).is_none());
    assert!(usage_warning(&json!({ "inputTokens": 1 })).is_none());
    // negative counts are not counts
    assert!(normalize_usage(&json!({ "total_tokens": -5 })).is_none());
}

fn doc() -> Value {
    json!([
        { "role": "system", "content": "be brief" },
        { "role": "user", "content": "hello there" },
        { "role": "assistant", "content": "hi" },
    ])
}

#[test]
fn i3_check_with_unreadable_usage_carries_the_warning() {
    let t = formats::decode(Format::OpenaiChat, doc()).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 1000 })).unwrap();
    let signals: Signals = serde_json::from_value(json!({ "usage": { "tokens_in": 5 } })).unwrap();
    let d = decide(&t, &config, &SessionState::default(), &signals);
    let w = d.warnings.iter().find(|w| w.code == "usage_unreadable").expect("usage_unreadable warning");
    assert!(w.message.contains("\"tokens_in\""));
    // an AI SDK usage over the threshold now decides (it was dropped before I-3)
    let signals: Signals = serde_json::from_value(json!({ "usage": { "inputTokens": 900, "outputTokens": 10, "totalTokens": 910 } })).unwrap();
    let d = decide(&t, &config, &SessionState::default(), &signals);
    assert!(d.compact);
    assert_eq!(d.decided_by, Some("provider_total_tokens"));
    assert!(d.warnings.iter().all(|w| w.code != "usage_unreadable"));
}

#[test]
fn i3_observe_usage_anchors_from_ai_sdk_usage() {
    let t = formats::decode(Format::OpenaiChat, doc()).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 1000 })).unwrap();
    let obs: Observation = serde_json::from_value(json!({ "usage": { "inputTokens": 321, "outputTokens": 5, "totalTokens": 326 } })).unwrap();
    let s = observe_usage(&SessionState::default(), &t, &config, &obs);
    assert_eq!(s.cadence.anchor.as_ref().map(|a| a.input_tokens), Some(321));
}

#[test]
fn i4_count_texts_are_the_envelope_then_each_request_row_then_tools() {
    let mut d = doc();
    d[1]["message_id"] = json!("m-1"); // provenance: not in the request view
    let t = formats::decode(Format::OpenaiChat, d).unwrap();
    let tools = json!([{ "type": "function", "function": { "name": "f" } }]);
    let texts = count_texts(&t, Some(&tools));
    assert_eq!(texts.len(), 5);
    assert_eq!(texts[0], "");
    assert_eq!(texts[2], r#"{"role":"user","content":"hello there"}"#);
    assert_eq!(texts[4], serde_json::to_string(&tools).unwrap());
}

#[test]
fn i4_host_counts_replace_the_estimate_in_the_estimate_signals() {
    let t = formats::decode(Format::OpenaiChat, doc()).unwrap();
    let config = Config::from_options(&json!({ "contextWindow": 1000 })).unwrap();
    let mut signals = Signals::default();
    let est = |d: &context_compactor::trigger::Decision, name: &str| d.signals.iter().find(|s| s.name == name).map(|s| s.value);
    let before = decide(&t, &config, &SessionState::default(), &signals);
    assert!(!before.compact);
    signals.counted = Some(TokenCounts::from_answer(&t, false, &[0.0, 300.0, 400.0, 2.5]).unwrap());
    let after = decide(&t, &config, &SessionState::default(), &signals);
    assert_eq!(est(&after, "estimated_transcript_tokens"), Some(703));
    assert!(after.compact, "703 tokens counted >= 650 threshold");
    assert_eq!(after.decided_by, Some("estimated_transcript_tokens"));
    assert!(TokenCounts::from_answer(&t, false, &[1.0]).is_err());
    assert!(TokenCounts::from_answer(&t, false, &[1.0, -1.0, 1.0, 1.0]).is_err());
    assert!(TokenCounts::from_answer(&t, false, &[1.0, f64::NAN, 1.0, 1.0]).is_err());
}
