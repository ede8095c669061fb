//! Glaive / ShareGPT tool-use conversations -> OpenAI chat (F-1, N-2).

use super::parse_json;
use crate::error::{Error, Result};
use serde_json::{json, Value};

use std::collections::VecDeque;

pub(super) fn import(text: &str) -> Result<Value> {
    let doc = parse_json(text, "Glaive file")?;
    let convs = doc.as_array().ok_or_else(|| Error::invalid("Glaive file must be a JSON array of conversations"))?;
    let mut messages: Vec<Value> = Vec::new();
    for (c, conv) in convs.iter().enumerate() {
        let turns = conv.get("conversations").and_then(Value::as_array).ok_or_else(|| Error::invalid(format!("conversation {c}: no `conversations` array")))?;
        let mut pending: VecDeque<String> = VecDeque::new(); // unanswered call ids, oldest first
        for (t, turn) in turns.iter().enumerate() {
            let at = format!("conversation {c} turn {t}");
            let from = turn.get("from").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("{at}: missing string field `from`")))?;
            let value = turn.get("value").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("{at}: missing string field `value`")))?;
            match from {
                "human" | "user" => messages.push(json!({ "role": "user", "content": value })),
                "gpt" | "assistant" => messages.push(json!({ "role": "assistant", "content": value })),
                "system" => messages.push(json!({ "role": "system", "content": value })),
                "function_call" => {
                    let call = parse_json(value, &format!("{at}: function_call"))?;
                    let name = call.get("name").and_then(Value::as_str).ok_or_else(|| Error::invalid(format!("{at}: function_call without a string `name`")))?;
                    let arguments = match call.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                        None => "{}".to_string(),
                    };
                    let id = format!("glaive_{c}_{t}");
                    let tc = json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } });
                    pending.push_back(id);
                    let prev = messages.last_mut().and_then(|m| m.get_mut("tool_calls")).and_then(Value::as_array_mut);
                    match prev {
                        Some(calls) => calls.push(tc),
                        None => messages.push(json!({ "role": "assistant", "content": null, "tool_calls": [tc] })),
                    }
                }
                "observation" | "tool" => match pending.pop_front() {
                    Some(id) => messages.push(json!({ "role": "tool", "tool_call_id": id, "content": value })),
                    None => messages.push(json!({ "role": "user", "content": value })),
                },
                other => return Err(Error::invalid(format!("{at}: unknown speaker {other:?}"))),
            }
        }
    }
    Ok(json!({ "messages": messages }))
}
