//! Helpers shared by the importers whose logs hold OpenAI chat messages.

use super::role_of;
use crate::error::{Error, Result};
use serde_json::{json, Map, Value};

/// Keeps the standard OpenAI chat keys of one log entry.
pub(super) fn openai_message(entry: &Value, at: &str) -> Result<Value> {
    let role = role_of(entry).ok_or_else(|| Error::invalid(format!("{at}: missing string field `role`")))?;
    let mut out = Map::new();
    out.insert("role".into(), json!(role));
    let content = match entry.get("content") {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) => json!(s),
        Some(Value::Array(parts)) => Value::Array(parts.iter().enumerate().map(|(k, p)| content_part(p, &format!("{at}: content[{k}]"))).collect::<Result<_>>()?),
        Some(_) => return Err(Error::invalid(format!("{at}: `content` must be a string, null or an array of parts"))),
    };
    out.insert("content".into(), content);
    if let Some(calls) = entry.get("tool_calls").filter(|c| !c.is_null()) {
        if !calls.is_array() {
            return Err(Error::invalid(format!("{at}: `tool_calls` must be an array")));
        }
        out.insert("tool_calls".into(), calls.clone());
    }
    match (entry.get("tool_call_id"), entry.get("tool_call_ids").and_then(Value::as_array)) {
        (Some(id), _) => {
            out.insert("tool_call_id".into(), id.clone());
        }
        (None, Some(ids)) => match ids.as_slice() {
            [id] => {
                out.insert("tool_call_id".into(), id.clone());
            }
            _ => return Err(Error::invalid(format!("{at}: `tool_call_ids` holds {} ids; one tool message answers one call", ids.len()))),
        },
        (None, None) => {}
    }
    if let Some(name) = entry.get("name") {
        out.insert("name".into(), name.clone());
    }
    Ok(Value::Object(out))
}

/// One OpenAI content part: a text part is reduced to `{type, text}`, the other
/// OpenAI part types are kept as they are.
pub(super) fn content_part(p: &Value, at: &str) -> Result<Value> {
    match p.get("type").and_then(Value::as_str) {
        Some("text") => match p.get("text").and_then(Value::as_str) {
            Some(t) => Ok(json!({ "type": "text", "text": t })),
            None => Err(Error::invalid(format!("{at}: text part without a string `text`"))),
        },
        Some("image_url" | "input_audio" | "file" | "refusal") => Ok(p.clone()),
        other => Err(Error::invalid(format!("{at}: unsupported content part type {other:?}"))),
    }
}

/// Makes every tool-call id unique (the repair described on [`ImportKind::TauBench`]).
pub(super) fn unique_call_ids(messages: &mut [Value]) {
    let mut taken: crate::sorted::SortedSet<String> = messages
        .iter()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut uses: crate::sorted::SortedMap<String, usize> = crate::sorted::SortedMap::new();
    let mut open: Vec<(String, String)> = Vec::new(); // (original id, rewritten id)
    for m in messages.iter_mut() {
        for call in m.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
            let Some(call) = call.as_object_mut() else { continue };
            let Some(id) = call.get("id").and_then(Value::as_str).map(str::to_string) else { continue };
            let n = uses.get_or_insert_with(id.clone(), || 0);
            let new = if *n == 0 {
                id.clone()
            } else {
                let mut k = *n;
                while taken.contains(&format!("{id}~{k}")) {
                    k += 1;
                }
                format!("{id}~{k}")
            };
            *n += 1;
            taken.insert(new.clone());
            call.insert("id".into(), Value::String(new.clone()));
            open.push((id, new));
        }
        let Some(rid) = m.get("tool_call_id").and_then(Value::as_str) else { continue };
        if let Some(pos) = open.iter().rposition(|(orig, _)| orig == rid) {
            let (_, new) = open.remove(pos);
            if let Some(map) = m.as_object_mut() {
                map.insert("tool_call_id".into(), Value::String(new));
            }
        }
    }
}
