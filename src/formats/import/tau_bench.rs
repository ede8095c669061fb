//! tau-bench result files -> OpenAI chat (F-1).

use super::openai_like::{openai_message, unique_call_ids};
use super::{parse_json, role_of};
use crate::error::{Error, Result};
use serde_json::{json, Value};

pub(super) fn import(text: &str) -> Result<Value> {
    let doc = parse_json(text, "tau-bench file")?;
    let episodes = doc.as_array().ok_or_else(|| Error::invalid("tau-bench file must be a JSON array of episodes"))?;
    let mut messages = Vec::new();
    let mut system: Option<Value> = None; // content of the first system message
    for (e, ep) in episodes.iter().enumerate() {
        let traj = ep.get("traj").and_then(Value::as_array).ok_or_else(|| Error::invalid(format!("episode {e}: no `traj` array")))?;
        for (i, entry) in traj.iter().enumerate() {
            let mut m = openai_message(entry, &format!("episode {e} message {i}"))?;
            if role_of(&m) == Some("system") {
                match &system {
                    None => system = m.get("content").cloned(),
                    Some(first) if m.get("content") == Some(first) => continue,
                    Some(_) => {
                        if let Some(map) = m.as_object_mut() {
                            map.insert("role".into(), json!("user"));
                        }
                    }
                }
            }
            messages.push(m);
        }
    }
    unique_call_ids(&mut messages);
    Ok(json!({ "messages": messages }))
}
