//! SWE-agent `.traj` trajectories -> OpenAI chat (F-1, N-2).

use super::openai_like::{openai_message, unique_call_ids};
use super::parse_json;
use crate::error::{Error, Result};
use serde_json::{json, Value};

pub(super) fn import(text: &str) -> Result<Value> {
    let doc = parse_json(text, "SWE-agent trajectory")?;
    let history = doc.get("history").and_then(Value::as_array).ok_or_else(|| Error::invalid("SWE-agent trajectory has no `history` array"))?;
    let mut messages = history.iter().enumerate().map(|(i, e)| openai_message(e, &format!("history[{i}]"))).collect::<Result<Vec<_>>>()?;
    unique_call_ids(&mut messages);
    Ok(json!({ "messages": messages }))
}
