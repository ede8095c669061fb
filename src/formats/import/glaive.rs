//! Glaive / ShareGPT tool-use conversations (JSON array, one object, or JSON Lines)
//! -> OpenAI chat (F-1, N-2). The rules are listed on [`super::ImportKind::Glaive`].

use super::repair::{self, Row};
use super::{read_jsonl, Output, Warnings};
use crate::error::{Error, Result};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// The conversations of the file and the line each starts on (JSON Lines only).
fn conversations(text: &str, w: &mut Warnings) -> Result<Vec<(Value, Option<usize>)>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items.into_iter().map(|c| (c, None)).collect()),
        Ok(v @ Value::Object(_)) => Ok(vec![(v, None)]),
        Ok(_) => Err(Error::invalid("Glaive file must be a JSON array of conversations, one conversation object, or JSON Lines")),
        Err(_) => {
            let lines = read_jsonl(text, w);
            if lines.is_empty() {
                return Err(Error::invalid("Glaive file: neither JSON nor JSON Lines with conversation objects"));
            }
            Ok(lines.into_iter().map(|l| (l.value, Some(l.no))).collect())
        }
    }
}

pub(super) fn import(text: &str, w: &mut Warnings) -> Result<Output> {
    let convs = conversations(text, w)?;
    let mut rows: Vec<Row> = Vec::new();
    for (c, (conv, line)) in convs.iter().enumerate() {
        let at_conv = match line {
            Some(l) => format!("line {l} (conversation {c})"),
            None => format!("conversation {c}"),
        };
        let Some(turns) = conv.get("conversations").and_then(Value::as_array) else {
            w.push(*line, "bad_entry", format!("{at_conv}: no `conversations` array, skipped"));
            continue;
        };
        if let Some(system) = conv.get("system").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            rows.push((json!({ "role": "system", "content": system }), *line));
        }
        let mut pending: VecDeque<String> = VecDeque::new(); // unanswered call ids, oldest first
        for (t, turn) in turns.iter().enumerate() {
            let at = format!("{at_conv} turn {t}");
            let Some(from) = turn.get("from").and_then(Value::as_str) else {
                w.push(*line, "bad_turn", format!("{at}: no string `from`, skipped"));
                continue;
            };
            let Some(value) = turn.get("value").and_then(Value::as_str) else {
                w.push(*line, "bad_turn", format!("{at}: no string `value`, skipped"));
                continue;
            };
            match from {
                "human" | "user" => rows.push((json!({ "role": "user", "content": value }), *line)),
                "gpt" | "assistant" => rows.push((json!({ "role": "assistant", "content": value }), *line)),
                "system" => rows.push((json!({ "role": "system", "content": value }), *line)),
                "function_call" => {
                    let call: Value = match serde_json::from_str(value) {
                        Ok(v) => v,
                        Err(e) => {
                            w.push(*line, "bad_turn", format!("{at}: function_call value is not JSON ({e}), skipped"));
                            continue;
                        }
                    };
                    let Some(name) = call.get("name").and_then(Value::as_str) else {
                        w.push(*line, "bad_turn", format!("{at}: function_call without a string `name`, skipped"));
                        continue;
                    };
                    let arguments = match call.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                        None => "{}".to_string(),
                    };
                    let id = format!("glaive_{c}_{t}");
                    let tc = json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } });
                    pending.push_back(id);
                    let prev = rows.last_mut().and_then(|(m, _)| m.get_mut("tool_calls")).and_then(Value::as_array_mut);
                    match prev {
                        Some(calls) => calls.push(tc),
                        None => rows.push((json!({ "role": "assistant", "content": null, "tool_calls": [tc] }), *line)),
                    }
                }
                "observation" | "tool" | "function_response" => match pending.pop_front() {
                    Some(id) => rows.push((json!({ "role": "tool", "tool_call_id": id, "content": value }), *line)),
                    None => {
                        w.push(*line, "orphan_observation", format!("{at}: an observation with no call to answer, typed injected_context"));
                        rows.push((json!({ "role": "user", "content": value, "transcript_role": "injected_context" }), *line));
                    }
                },
                other => w.push(*line, "bad_turn", format!("{at}: unknown speaker {other:?}, skipped")),
            }
        }
    }
    if rows.is_empty() {
        return Err(Error::invalid("Glaive file: no valid conversation turns"));
    }
    Ok(Output::doc(json!({ "messages": repair::openai_chat(rows, w) })))
}
