//! Codex CLI rollouts (`rollout-*.jsonl`) -> OpenAI Responses (F-1, N-2). The rules
//! are listed on [`super::ImportKind::CodexRollout`]; LOG-FORMATS 2 describes the
//! lines.

use super::repair::{self, Row};
use super::{read_jsonl, Output, Warnings};
use crate::error::{Error, Result};
use crate::formats::Usage;
use serde_json::{json, Map, Value};

/// Item types a `response_item` (or a legacy unwrapped line) can hold.
pub(super) fn is_item_type(t: &str) -> bool {
    matches!(
        t,
        "message"
            | "reasoning"
            | "function_call"
            | "function_call_output"
            | "function_call_result"
            | "custom_tool_call"
            | "custom_tool_call_output"
            | "local_shell_call"
            | "local_shell_call_output"
            | "web_search_call"
            | "image_generation_call"
            | "compaction"
            | "ghost_snapshot"
    )
}

/// Tags opening a user item that Codex injects (LOG-FORMATS 2 "Prompt").
const INJECTED_TAGS: [&str; 5] = ["<environment_context>", "<user_instructions>", "<turn_aborted>", "<subagent_notification>", "# AGENTS.md instructions"];

/// Line types that are known and carry nothing for the model.
const IGNORED: [&str; 2] = ["turn_context", "event_msg"];

fn item_text(item: &Value) -> String {
    match item.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn is_injected(item: &Value) -> bool {
    if item.get("type").and_then(Value::as_str).is_some_and(|t| t != "message") {
        return false;
    }
    match item.get("role").and_then(Value::as_str) {
        Some("developer" | "system") => true,
        Some("user") => {
            let text = item_text(item);
            let t = text.trim_start();
            INJECTED_TAGS.iter().any(|tag| t.starts_with(tag))
        }
        _ => false,
    }
}

fn instructions_of(meta: &Value) -> Option<String> {
    let v = meta.get("instructions").or_else(|| meta.get("base_instructions"))?;
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Object(o) => o.get("text").and_then(Value::as_str).map(str::to_string),
        _ => None,
    }
}

fn token_usage(info: &Value) -> Option<Usage> {
    let u = info.get("last_token_usage").filter(|u| u.is_object())?;
    let get = |k: &str| u.get(k).and_then(Value::as_u64);
    let input_tokens = get("input_tokens")?;
    let output_tokens = get("output_tokens").unwrap_or(0);
    let total_tokens = get("total_tokens").unwrap_or(input_tokens.saturating_add(output_tokens));
    // Codex input includes `cached_input_tokens`; output includes `reasoning_output_tokens`
    Some(Usage { input_tokens, output_tokens, total_tokens, cached_input_tokens: get("cached_input_tokens").unwrap_or(0), reasoning_tokens: get("reasoning_output_tokens").unwrap_or(0) })
}

/// A response item checked for the fields the Responses adapter needs; `Err` says why
/// it is skipped.
fn check_item(item: &Value) -> std::result::Result<(), String> {
    let t = item.get("type").and_then(Value::as_str).unwrap_or("message");
    match t {
        "message" => match item.get("content") {
            Some(Value::String(_) | Value::Array(_)) if item.get("role").and_then(Value::as_str).is_some() => Ok(()),
            Some(Value::String(_) | Value::Array(_)) => Err("message item without a string `role`".into()),
            Some(Value::Null) => Err("message item with `content: null`".into()),
            _ => Err("message item without a `content` string or part list".into()),
        },
        "function_call" | "custom_tool_call" => {
            if item.get("call_id").and_then(Value::as_str).is_none() {
                return Err(format!("{t} item without a string `call_id`"));
            }
            if item.get("name").and_then(Value::as_str).is_none() {
                return Err(format!("{t} item without a string `name`"));
            }
            Ok(())
        }
        "function_call_output" | "custom_tool_call_output" if item.get("call_id").and_then(Value::as_str).is_none() => Err(format!("{t} item without a string `call_id`")),
        _ => Ok(()),
    }
}

pub(super) fn import(text: &str, w: &mut Warnings) -> Result<Output> {
    let lines = read_jsonl(text, w);
    if lines.is_empty() {
        return Err(Error::invalid("Codex rollout: no JSON lines found"));
    }
    let mut instructions: Option<String> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut usage: Option<Usage> = None;
    let mut unknown: Vec<(String, usize, usize)> = Vec::new();
    let mut ghost = 0usize;
    let mut taken = 0usize;
    for super::Line { no, value } in lines {
        let (ty, payload) = match (value.get("type").and_then(Value::as_str), value.get("payload")) {
            (Some(t), Some(p)) => (t.to_string(), p.clone()),
            (Some(t), None) if is_item_type(t) => ("response_item".to_string(), value.clone()),
            (Some("session_meta" | "turn_context" | "event_msg" | "compacted"), None) => {
                w.push(Some(no), "bad_content", format!("line {no}: line without a `payload`, skipped"));
                continue;
            }
            (None, _) if value.get("record_type").is_some() => continue, // legacy state lines
            (None, _) if value.get("id").is_some() && value.get("timestamp").is_some() => ("session_meta".to_string(), value.clone()),
            (None, _) => {
                w.push(Some(no), "missing_type", format!("line {no}: object without a string `type`, skipped"));
                continue;
            }
            (Some(t), None) => (t.to_string(), Value::Null),
        };
        match ty.as_str() {
            "session_meta" => {
                let meta = payload.get("meta").unwrap_or(&payload);
                if instructions.is_none() {
                    instructions = instructions_of(meta);
                }
            }
            "response_item" => {
                let t = payload.get("type").and_then(Value::as_str).unwrap_or("message");
                if t == "ghost_snapshot" {
                    ghost += 1;
                    continue;
                }
                if !payload.is_object() {
                    w.push(Some(no), "bad_content", format!("line {no}: response_item payload is not an object, skipped"));
                    continue;
                }
                let payload = if t == "function_call_result" {
                    match normalise_call_result(&payload) {
                        Some(item) => {
                            w.push(Some(no), "normalised_item", format!("line {no}: `function_call_result` (Agents SDK spelling) read as the `function_call_output` of its call"));
                            item
                        }
                        None => {
                            w.push(Some(no), "bad_content", format!("line {no}: function_call_result item without a string `call_id`/`callId`, skipped"));
                            continue;
                        }
                    }
                } else {
                    payload
                };
                if let Err(why) = check_item(&payload) {
                    w.push(Some(no), "bad_content", format!("line {no}: {why}, skipped"));
                    continue;
                }
                let mut item = payload;
                if is_injected(&item) {
                    if let Some(map) = item.as_object_mut() {
                        map.insert("transcript_role".into(), json!("injected_context"));
                    }
                }
                taken += 1;
                rows.push((item, Some(no)));
            }
            "compacted" => {
                let summary = payload.get("message").and_then(Value::as_str).unwrap_or("").to_string();
                let dropped = taken;
                rows.clear();
                taken = 0;
                match payload.get("replacement_history").and_then(Value::as_array) {
                    Some(history) => {
                        let mut marked = summary.is_empty();
                        for item in history {
                            if !item.is_object() || check_item(item).is_err() {
                                w.push(Some(no), "bad_content", format!("line {no}: an item of `replacement_history` is malformed, skipped"));
                                continue;
                            }
                            let mut item = item.clone();
                            if !marked && item_text(&item).contains(summary.as_str()) {
                                marked = true;
                                if let Some(map) = item.as_object_mut() {
                                    map.insert("summary_level".into(), json!(1));
                                    map.insert("transcript_role".into(), json!("compaction_summary"));
                                }
                            } else if is_injected(&item) {
                                if let Some(map) = item.as_object_mut() {
                                    map.insert("transcript_role".into(), json!("injected_context"));
                                }
                            }
                            rows.push((item, Some(no)));
                        }
                        if !marked {
                            rows.insert(0, (summary_item(&summary), Some(no)));
                        }
                    }
                    None => rows.push((summary_item(&summary), Some(no))),
                }
                w.push(Some(no), "compact_boundary", format!("line {no}: Codex compacted the session here; the {dropped} earlier item(s) are not imported and the transcript starts from its summary"));
            }
            "event_msg" => {
                if payload.get("type").and_then(Value::as_str) == Some("token_count") {
                    if let Some(u) = payload.get("info").and_then(token_usage) {
                        usage = Some(u);
                    }
                }
            }
            t if IGNORED.contains(&t) => {}
            t => match unknown.iter_mut().find(|(k, _, _)| k == t) {
                Some((_, _, n)) => *n += 1,
                None => unknown.push((t.to_string(), no, 1)),
            },
        }
    }
    for (t, first, n) in unknown {
        w.push(Some(first), "unknown_line_type", format!("{n} line(s) of unknown type {t:?} skipped (first at line {first})"));
    }
    if ghost > 0 {
        w.push(None, "unknown_line_type", format!("{ghost} ghost_snapshot item(s) skipped (undo snapshots, never sent to the model)"));
    }
    if rows.is_empty() {
        return Err(Error::invalid("Codex rollout: no valid response items"));
    }
    let input = repair::openai_responses(rows, w);
    let mut doc = Map::new();
    if let Some(i) = instructions {
        doc.insert("instructions".into(), Value::String(i));
    }
    doc.insert("input".into(), Value::Array(input));
    Ok(Output { document: Value::Object(doc), subagents: Vec::new(), usage })
}

fn summary_item(summary: &str) -> Value {
    json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": summary }], "summary_level": 1, "transcript_role": "compaction_summary" })
}

/// The Agents SDK spelling of a tool output (LOG-FORMATS 3: `function_call_result`
/// {name, status, output, callId/call_id}) as a Responses `function_call_output`
/// (N-2, issue 12): `output` kept when a string, the text of an `{type:"text", text}`
/// object or a list of such parts, else its JSON text. `None` without a call id.
fn normalise_call_result(item: &Value) -> Option<Value> {
    let id = item.get("call_id").or_else(|| item.get("callId")).and_then(Value::as_str)?;
    let output = match item.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(o @ Value::Object(_)) => o.get("text").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| o.to_string()),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            if texts.len() == parts.len() { texts.join("\n") } else { Value::Array(parts.clone()).to_string() }
        }
        Some(other) => other.to_string(),
    };
    Some(json!({ "type": "function_call_output", "call_id": id, "output": output }))
}
