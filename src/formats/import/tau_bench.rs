//! tau-bench result files -> OpenAI chat (F-1). The rules are listed on
//! [`super::ImportKind::TauBench`].

use super::openai_like::{openai_message, unique_call_ids};
use super::repair::{self, Row};
use super::{parse_json, role_of, Output, Warnings};
use crate::error::{Error, Result};
use serde_json::{json, Value};

pub(super) fn import(text: &str, w: &mut Warnings) -> Result<Output> {
    let doc = parse_json(text, "tau-bench file")?;
    let episodes = doc.as_array().ok_or_else(|| Error::invalid("tau-bench file must be a JSON array of episodes"))?;
    let mut messages = Vec::new();
    let mut system: Option<Value> = None; // content of the first system message
    for (e, ep) in episodes.iter().enumerate() {
        let Some(traj) = ep.get("traj").and_then(Value::as_array) else {
            w.push(None, "bad_entry", format!("episode {e}: no `traj` array, skipped"));
            continue;
        };
        for (i, entry) in traj.iter().enumerate() {
            let mut m = match openai_message(entry, &format!("episode {e} message {i}")) {
                Ok(m) => m,
                Err(err) => {
                    w.push(None, "bad_entry", format!("episode {e} message {i} skipped: {}", err.message));
                    continue;
                }
            };
            if role_of(&m) == Some("system") {
                match &system {
                    None => system = m.get("content").cloned(),
                    Some(first) if m.get("content") == Some(first) => continue,
                    Some(_) => {
                        if let Some(map) = m.as_object_mut() {
                            map.insert("role".into(), json!("user"));
                            map.insert("transcript_role".into(), json!("injected_context"));
                        }
                    }
                }
            }
            messages.push(m);
        }
    }
    if messages.is_empty() {
        return Err(Error::invalid("tau-bench file: no valid messages"));
    }
    unique_call_ids(&mut messages);
    let rows: Vec<Row> = messages.into_iter().map(|m| (m, None)).collect();
    Ok(Output::doc(json!({ "messages": repair::openai_chat(rows, w) })))
}
