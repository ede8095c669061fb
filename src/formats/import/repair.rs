//! Pairing repairs for imported documents (N-2, F-5): what makes a damaged log (a line
//! dropped, repeated or torn) a valid document of its format. Each repair is listed in
//! the import's warnings with the line of the message it touched.
//!
//! Rules, per format:
//! - **Anthropic**: a `tool_result` that answers no `tool_use` of the assistant
//!   message right before it is dropped (`orphan_result`), as is a second result for
//!   the same call; a call left unanswered while a later message follows gets a
//!   synthetic error result (`unanswered_call`, `is_error: true`, text
//!   [`SYNTHETIC_RESULT`]) in the next user message when it holds results, else in a
//!   user message of its own inserted before it; a `tool_use` id repeated within one message is
//!   dropped (`duplicate_call_id`); results move before other blocks; a message left
//!   with no content is dropped (`empty_message`).
//! - **OpenAI chat**: a `tool` message that answers no open call of the assistant
//!   message before its run is dropped (`orphan_result`); open calls get a synthetic
//!   `tool` message before the next non-tool message (`unanswered_call`); a call id
//!   repeated within one message is dropped (`duplicate_call_id`).
//! - **OpenAI Responses**: an output item with no earlier open call is dropped
//!   (`orphan_result`); a call item repeating an open call id is dropped when it is
//!   identical (a repeated line), else renamed `<id>~<k>` (`duplicate_call_id`); open
//!   calls get a synthetic `function_call_output` before the next message item
//!   (`unanswered_call`).
//!
//! A call at the very end of the history stays unanswered (the model's newest turn,
//! awaiting results), as every format allows.

use super::Warnings;
use serde_json::{json, Value};

/// The text of a synthetic result answering a call the log has no result for.
pub const SYNTHETIC_RESULT: &str = "[no result recorded in the log for this tool call; added by the importer]";

/// A message and the 1-based input line it came from (`None` when not line-based).
pub type Row = (Value, Option<usize>);

fn blocks_mut(m: &mut Value) -> Option<&mut Vec<Value>> {
    m.get_mut("content").and_then(Value::as_array_mut)
}

fn ty(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

fn str_field<'a>(b: &'a Value, k: &str) -> Option<&'a str> {
    b.get(k).and_then(Value::as_str)
}

fn at(line: Option<usize>) -> String {
    line.map(|l| format!("line {l}: ")).unwrap_or_default()
}

fn anthropic_result(id: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "content": SYNTHETIC_RESULT, "is_error": true })
}

/// Repairs Anthropic `messages` (see the module rules).
pub fn anthropic(rows: Vec<Row>, w: &mut Warnings) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(rows.len());
    // call ids of the last assistant message still waiting for their results
    let mut pending: Vec<String> = Vec::new();
    let mut pending_line: Option<usize> = None;
    for (mut m, line) in rows {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("").to_string();
        if role == "assistant" {
            if !pending.is_empty() {
                for id in &pending {
                    w.push(pending_line, "unanswered_call", format!("{}tool call {id:?} has no result before the next assistant message; answered with a synthetic error result", at(pending_line)));
                }
                let results: Vec<Value> = pending.drain(..).map(|id| anthropic_result(&id)).collect();
                out.push(json!({ "role": "user", "content": results }));
            }
            if let Some(blocks) = blocks_mut(&mut m) {
                let mut seen: Vec<String> = Vec::new();
                blocks.retain(|b| {
                    if ty(b) != Some("tool_use") {
                        return true;
                    }
                    let Some(id) = str_field(b, "id") else { return true };
                    if seen.iter().any(|s| s == id) {
                        w.push(line, "duplicate_call_id", format!("{}tool call id {id:?} appears twice in one message (a repeated row?); the second is dropped", at(line)));
                        return false;
                    }
                    seen.push(id.to_string());
                    true
                });
                if blocks.is_empty() {
                    w.push(line, "empty_message", format!("{}assistant message with no content left, dropped", at(line)));
                    continue;
                }
                pending = seen;
                pending_line = line;
            }
            out.push(m);
            continue;
        }
        if role != "user" {
            out.push(m);
            continue;
        }
        let answered_now = std::mem::take(&mut pending);
        let has_results = m.get("content").and_then(Value::as_array).is_some_and(|c| c.iter().any(|b| ty(b) == Some("tool_result")));
        if !has_results && !answered_now.is_empty() {
            // no result at all (the result row was lost): the synthetic results get a
            // message of their own, so a typed message (injected context, summary) is
            // not mixed with them
            for id in &answered_now {
                w.push(pending_line, "unanswered_call", format!("{}tool call {id:?} has no result before the next user message; answered with a synthetic error result", at(pending_line)));
            }
            out.push(json!({ "role": "user", "content": answered_now.iter().map(|id| anthropic_result(id)).collect::<Vec<_>>() }));
            out.push(m);
            continue;
        }
        if let Some(blocks) = blocks_mut(&mut m) {
            let mut open = answered_now.clone();
            let mut results = Vec::new();
            let mut rest = Vec::new();
            for b in blocks.drain(..) {
                if ty(&b) != Some("tool_result") {
                    rest.push(b);
                    continue;
                }
                let id = str_field(&b, "tool_use_id").unwrap_or("").to_string();
                match open.iter().position(|p| *p == id) {
                    Some(pos) => {
                        open.remove(pos);
                        results.push(b);
                    }
                    None => w.push(line, "orphan_result", format!("{}tool result {id:?} answers no call of the assistant message before it (a dropped or repeated row?); dropped", at(line))),
                }
            }
            for id in open {
                w.push(pending_line, "unanswered_call", format!("{}tool call {id:?} has no result in the next user message; answered with a synthetic error result", at(pending_line)));
                results.push(anthropic_result(&id));
            }
            results.extend(rest);
            *blocks = results;
            if blocks.is_empty() {
                w.push(line, "empty_message", format!("{}user message with no content left, dropped", at(line)));
                continue;
            }
        }
        out.push(m);
    }
    out
}

/// Repairs OpenAI chat `messages` (see the module rules).
pub fn openai_chat(rows: Vec<Row>, w: &mut Warnings) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(rows.len());
    let mut open: Vec<String> = Vec::new();
    let mut open_line: Option<usize> = None;
    for (mut m, line) in rows {
        if m.get("role").and_then(Value::as_str) == Some("tool") {
            let id = str_field(&m, "tool_call_id").unwrap_or("").to_string();
            match open.iter().position(|p| *p == id) {
                Some(pos) => {
                    open.remove(pos);
                    out.push(m);
                }
                None => w.push(line, "orphan_result", format!("{}tool message {id:?} answers no open call of the assistant message before it; dropped", at(line))),
            }
            continue;
        }
        for id in open.drain(..) {
            w.push(open_line, "unanswered_call", format!("{}tool call {id:?} has no result; answered with a synthetic result", at(open_line)));
            out.push(json!({ "role": "tool", "tool_call_id": id, "content": SYNTHETIC_RESULT }));
        }
        if let Some(calls) = m.get_mut("tool_calls").and_then(Value::as_array_mut) {
            let mut seen: Vec<String> = Vec::new();
            calls.retain(|c| {
                let Some(id) = str_field(c, "id") else { return true };
                if seen.iter().any(|s| s == id) {
                    w.push(line, "duplicate_call_id", format!("{}tool call id {id:?} appears twice in one message; the second is dropped", at(line)));
                    return false;
                }
                seen.push(id.to_string());
                true
            });
            open = seen;
            open_line = line;
        }
        out.push(m);
    }
    out
}

/// Output item types and the call types they answer (OpenAI Responses).
fn is_output(t: &str) -> bool {
    t.ends_with("_call_output") || t == "function_call_result"
}

fn is_call(t: &str) -> bool {
    matches!(t, "function_call" | "custom_tool_call" | "computer_call" | "local_shell_call" | "shell_call" | "apply_patch_call")
}

fn output_id(item: &Value) -> Option<&str> {
    match ty(item) {
        Some("local_shell_call_output") => str_field(item, "call_id").or_else(|| str_field(item, "id")),
        _ => str_field(item, "call_id"),
    }
}

/// Repairs OpenAI Responses `input` items (see the module rules).
pub fn openai_responses(rows: Vec<Row>, w: &mut Warnings) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(rows.len());
    let mut open: Vec<(String, Value, Option<usize>)> = Vec::new();
    let mut renamed = 0usize;
    for (mut item, line) in rows {
        let t = ty(&item).unwrap_or("").to_string();
        if is_output(&t) {
            let id = output_id(&item).unwrap_or("").to_string();
            match open.iter().position(|(p, _, _)| *p == id) {
                Some(pos) => {
                    open.remove(pos);
                    out.push(item);
                }
                None => w.push(line, "orphan_result", format!("{}{t} {id:?} answers no earlier open call (a dropped or repeated line?); dropped", at(line))),
            }
            continue;
        }
        if is_call(&t) {
            let Some(id) = str_field(&item, "call_id").map(str::to_string) else {
                out.push(item);
                continue;
            };
            if let Some((_, first, _)) = open.iter().find(|(p, _, _)| *p == id) {
                if *first == item {
                    w.push(line, "duplicate_call_id", format!("{}{t} {id:?} repeats an open call (a repeated line); dropped", at(line)));
                    continue;
                }
                renamed += 1;
                let new = format!("{id}~{renamed}");
                w.push(line, "duplicate_call_id", format!("{}{t} reuses the open call id {id:?}; renamed {new:?}", at(line)));
                if let Some(map) = item.as_object_mut() {
                    map.insert("call_id".into(), Value::String(new.clone()));
                }
                open.push((new, item.clone(), line));
            } else {
                open.push((id, item.clone(), line));
            }
            out.push(item);
            continue;
        }
        let tool_item = t == "reasoning";
        if !tool_item {
            for (id, call, l) in open.drain(..) {
                w.push(l, "unanswered_call", format!("{}tool call {id:?} has no output before the next message; answered with a synthetic output", at(l)));
                let out_type = if ty(&call) == Some("custom_tool_call") { "custom_tool_call_output" } else { "function_call_output" };
                out.push(json!({ "type": out_type, "call_id": id, "output": SYNTHETIC_RESULT }));
            }
        }
        out.push(item);
    }
    out
}
