//! Claude Code logs (stream-json and session logs) -> Anthropic (F-1, N-2).

use super::{parse_json, role_of};
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

pub(super) fn import(text: &str) -> Result<Value> {
    let mut system: Option<String> = None;
    let mut messages: Vec<Value> = Vec::new();
    // `message.id` of the latest assistant message and its index in `messages`.
    let mut last_assistant: Option<(String, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = line.trim();
        if !line.starts_with('{') {
            continue; // blank line or shell noise ("bash: no job control in this shell")
        }
        let ev = parse_json(line, &format!("line {line_no}"))?;
        match ev.get("type").and_then(Value::as_str) {
            Some("system") => {
                if system.is_none() && ev.get("subtype").and_then(Value::as_str) == Some("init") {
                    system = Some(init_prompt(&ev));
                }
            }
            Some("assistant") => {
                let blocks = event_blocks(&ev, line_no)?;
                let id = ev.pointer("/message/id").and_then(Value::as_str);
                let same = matches!((id, &last_assistant), (Some(id), Some((last, _))) if id == last);
                let target = match &last_assistant {
                    Some((_, at)) if same => messages.get_mut(*at),
                    _ => None,
                };
                match target.and_then(|m| m.get_mut("content")).and_then(Value::as_array_mut) {
                    Some(content) => content.extend(blocks),
                    None => {
                        messages.push(json!({ "role": "assistant", "content": blocks }));
                        last_assistant = id.map(|id| (id.to_string(), messages.len() - 1));
                    }
                }
            }
            Some("user") => {
                let blocks = event_blocks(&ev, line_no)?;
                let prev = messages.last_mut().filter(|m| role_of(m) == Some("user"));
                match prev.and_then(|m| m.get_mut("content")).and_then(Value::as_array_mut) {
                    Some(content) => content.extend(blocks),
                    None => messages.push(json!({ "role": "user", "content": blocks })),
                }
            }
            Some(_) => {} // `result` and anything newer: not part of the conversation
            None => return Err(Error::invalid(format!("line {line_no}: event without a string `type`"))),
        }
    }
    if messages.is_empty() {
        return Err(Error::invalid("no `user` or `assistant` events in the log"));
    }
    // Anthropic: tool_result blocks come first in their user message.
    for m in messages.iter_mut().filter(|m| role_of(m) == Some("user")) {
        if let Some(content) = m.get_mut("content").and_then(Value::as_array_mut) {
            let (mut results, rest): (Vec<Value>, Vec<Value>) =
                content.drain(..).partition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
            results.extend(rest);
            *content = results;
        }
    }
    let mut doc = Map::new();
    if let Some(s) = system {
        doc.insert("system".into(), Value::String(s));
    }
    doc.insert("messages".into(), Value::Array(messages));
    Ok(Value::Object(doc))
}

/// `message.content` of a user/assistant event as a list of blocks.
fn event_blocks(ev: &Value, line_no: usize) -> Result<Vec<Value>> {
    match ev.pointer("/message/content") {
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(Value::String(s)) => Ok(vec![json!({ "type": "text", "text": s })]),
        _ => Err(Error::invalid(format!("line {line_no}: `message.content` must be a string or an array of blocks"))),
    }
}

/// A one-line system prompt from the `init` event (the real prompt is not logged).
fn init_prompt(ev: &Value) -> String {
    let field = |k: &str| ev.get(k).and_then(Value::as_str).unwrap_or("?");
    let tools: Vec<&str> = ev.get("tools").and_then(Value::as_array).map(|t| t.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    format!(
        "Claude Code {} session (model {}, cwd {}). Tools: {}.",
        field("claude_code_version"),
        field("model"),
        field("cwd"),
        tools.join(", ")
    )
}
