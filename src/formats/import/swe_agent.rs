//! SWE-agent `.traj` trajectories -> OpenAI chat (F-1, N-2). The rules are listed on
//! [`super::ImportKind::SweAgentTraj`]; LOG-FORMATS 5 describes the file.

use super::openai_like::{openai_message, unique_call_ids};
use super::repair::{self, Row};
use super::{parse_json, role_of, Output, Warnings};
use crate::error::{Error, Result};
use serde_json::{json, Value};

/// The tool name of a thought/action step: the action's first word.
fn action_name(action: &str) -> String {
    let word: String = action.split_whitespace().next().unwrap_or("").chars().filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-')).collect();
    if word.is_empty() {
        "action".to_string()
    } else {
        word
    }
}

fn set(m: &mut Value, key: &str, v: Value) {
    if let Some(map) = m.as_object_mut() {
        map.insert(key.into(), v);
    }
}

pub(super) fn import(text: &str, w: &mut Warnings) -> Result<Output> {
    let doc = parse_json(text, "SWE-agent trajectory")?;
    let history = doc.get("history").and_then(Value::as_array).ok_or_else(|| Error::invalid("SWE-agent trajectory has no `history` array"))?;
    let mut rows: Vec<Row> = Vec::with_capacity(history.len());
    // the call a thought/action step made, waiting for its observation
    let mut open_action: Option<String> = None;
    let mut seen_action = false;
    let mut task_seen = false;
    for (i, entry) in history.iter().enumerate() {
        let mut m = match openai_message(entry, &format!("history[{i}]")) {
            Ok(m) => m,
            Err(e) => {
                w.push(None, "bad_entry", format!("history[{i}] skipped: {}", e.message));
                continue;
            }
        };
        let role = role_of(&m).unwrap_or("").to_string();
        let demo = entry.get("is_demo").and_then(Value::as_bool) == Some(true);
        if demo {
            if role != "system" {
                set(&mut m, "role", json!("user"));
                if let Some(map) = m.as_object_mut() {
                    map.remove("tool_calls");
                    map.remove("tool_call_id");
                    map.remove("name");
                }
                set(&mut m, "transcript_role", json!("injected_context"));
            }
            rows.push((m, None));
            continue;
        }
        match role.as_str() {
            "assistant" => {
                open_action = None;
                seen_action = true;
                let native = m.get("tool_calls").and_then(Value::as_array).is_some_and(|c| !c.is_empty());
                if !native {
                    if let Some(action) = entry.get("action").and_then(Value::as_str).filter(|a| !a.trim().is_empty()) {
                        let id = format!("swe_{i}");
                        let args = json!({ "action": action }).to_string();
                        set(&mut m, "tool_calls", json!([{ "id": id, "type": "function", "function": { "name": action_name(action), "arguments": args } }]));
                        open_action = Some(id);
                    }
                }
                rows.push((m, None));
            }
            "user" => {
                let observation = entry.get("message_type").and_then(Value::as_str) == Some("observation");
                if !task_seen && !seen_action {
                    // the task statement: the person's request, whatever its message_type
                    task_seen = true;
                    rows.push((m, None));
                } else if let Some(id) = open_action.take() {
                    set(&mut m, "role", json!("tool"));
                    set(&mut m, "tool_call_id", json!(id));
                    rows.push((m, None));
                } else {
                    let why = if observation { "an observation" } else { "environment output" };
                    w.push(None, "orphan_observation", format!("history[{i}]: {why} that answers no action, typed injected_context"));
                    set(&mut m, "transcript_role", json!("injected_context"));
                    rows.push((m, None));
                }
            }
            _ => {
                if role == "tool" {
                    open_action = None;
                }
                rows.push((m, None));
            }
        }
    }
    if rows.is_empty() {
        return Err(Error::invalid("SWE-agent trajectory: no valid `history` entries"));
    }
    let mut messages: Vec<Value> = rows.iter().map(|(m, _)| m.clone()).collect();
    unique_call_ids(&mut messages);
    let rows: Vec<Row> = messages.into_iter().map(|m| (m, None)).collect();
    let messages = repair::openai_chat(rows, w);
    Ok(Output::doc(json!({ "messages": messages })))
}
