//! Importers for real agent logs (F-1): turn a Claude Code stream-json log, a SWE-agent
//! `.traj`, a tau-bench trajectory file or a Glaive (ShareGPT-style) tool-use dataset
//! into a provider document that [`super::decode`] accepts and whose tool calls pair
//! (F-5).
//!
//! Every importer is deterministic and keeps message text untouched. The repairs it
//! makes so the result is a valid provider transcript are listed on each kind of
//! [`ImportKind`]. No importer panics on bad input: malformed input yields
//! `invalid_transcript` naming the line, episode, conversation or history index.

use super::Format;
use crate::error::{Error, ErrorCode, Result};
use serde_json::{json, Map, Value};
use std::collections::VecDeque;

/// Which log kind [`import`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// Claude Code `--output-format stream-json` (JSON Lines) -> [`Format::Anthropic`],
    /// document `{ "system": <string>, "messages": [...] }` (`system` only when the log
    /// has an `init` line). Repairs: non-JSON lines (shell warnings) are skipped; lines
    /// sharing one `message.id` merge into one assistant message, blocks in order;
    /// consecutive `user` lines merge into one user message with its `tool_result`
    /// blocks moved first (stable order otherwise), as Anthropic requires; `result`
    /// and other `system` lines are dropped; only `role`/`content` are kept.
    ClaudeCodeJsonl,
    /// SWE-agent `.traj` JSON -> [`Format::OpenaiChat`], document `{ "messages": [...] }`
    /// built from `history`. Repairs: only `role`, `content`, `tool_calls`,
    /// `tool_call_id`, `name` are kept; a one-element `tool_call_ids` becomes
    /// `tool_call_id`; reused call ids are made unique (see [`ImportKind::TauBench`]).
    SweAgentTraj,
    /// tau-bench trajectory file (JSON array of episodes with `traj`) ->
    /// [`Format::OpenaiChat`], document `{ "messages": [...] }`: all episodes'
    /// messages concatenated. Repairs: the first system message is kept; a later system
    /// message identical to it is dropped, a different one becomes a `user` message;
    /// reused tool-call ids are rewritten so each call id is unique: the k-th reuse of
    /// `X` becomes `X~k` (the next free `k` if that id already exists), and a `tool`
    /// message takes the rewritten id of the nearest earlier unanswered call with its id.
    TauBench,
    /// Glaive / ShareGPT tool-use JSON (array of `{conversations: [{from, value}],
    /// tools}`) -> [`Format::OpenaiChat`], document `{ "messages": [...] }`: all
    /// conversations concatenated. Roles: `human`/`user` -> user, `gpt`/`assistant` ->
    /// assistant, `system` -> system, `function_call` (JSON `{name, arguments}`) ->
    /// assistant `tool_calls` with the synthetic id `glaive_<conversation>_<turn>`
    /// (a run of calls forms one message), `observation`/`tool` -> `tool` message
    /// answering the oldest unanswered call of its conversation. Repair: an observation
    /// with no call to answer becomes a `user` message (text unchanged). `tools` is
    /// not carried.
    Glaive,
}

impl ImportKind {
    /// Parses a kind name: `claude-code-jsonl`, `swe-agent-traj`, `tau-bench`, `glaive`.
    ///
    /// Errors: `unknown_format` for any other name.
    pub fn parse(name: &str) -> Result<ImportKind> {
        match name {
            "claude-code-jsonl" => Ok(ImportKind::ClaudeCodeJsonl),
            "swe-agent-traj" => Ok(ImportKind::SweAgentTraj),
            "tau-bench" => Ok(ImportKind::TauBench),
            "glaive" => Ok(ImportKind::Glaive),
            other => Err(Error::new(
                ErrorCode::UnknownFormat,
                format!("unknown import kind {other:?}; expected one of claude-code-jsonl, swe-agent-traj, tau-bench, glaive"),
            )),
        }
    }

    /// The kind's name, as accepted by [`ImportKind::parse`].
    pub fn name(self) -> &'static str {
        match self {
            ImportKind::ClaudeCodeJsonl => "claude-code-jsonl",
            ImportKind::SweAgentTraj => "swe-agent-traj",
            ImportKind::TauBench => "tau-bench",
            ImportKind::Glaive => "glaive",
        }
    }

    /// The provider format [`import`] produces for this kind.
    pub fn format(self) -> Format {
        match self {
            ImportKind::ClaudeCodeJsonl => Format::Anthropic,
            _ => Format::OpenaiChat,
        }
    }
}

/// Guesses the log kind from the text. `None` when it is none of the known logs
/// (e.g. plain provider JSON, which goes straight to [`super::decode`]).
pub fn sniff(text: &str) -> Option<ImportKind> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if is_claude_event(&v) => Some(ImportKind::ClaudeCodeJsonl),
        Ok(v) => {
            if v.get("history").is_some_and(Value::is_array) {
                return Some(ImportKind::SweAgentTraj);
            }
            let first = v.as_array()?.first()?;
            if first.get("traj").is_some() {
                Some(ImportKind::TauBench)
            } else if first.get("conversations").is_some() {
                Some(ImportKind::Glaive)
            } else {
                None
            }
        }
        // JSON Lines: look at the first line that looks like a JSON object.
        Err(_) => {
            let line = text.lines().map(str::trim).find(|l| l.starts_with('{'))?;
            let v = serde_json::from_str::<Value>(line).ok()?;
            is_claude_event(&v).then_some(ImportKind::ClaudeCodeJsonl)
        }
    }
}

fn is_claude_event(v: &Value) -> bool {
    matches!(v.get("type").and_then(Value::as_str), Some("system" | "assistant" | "user" | "result"))
        && v.get("session_id").is_some()
}

/// Imports a log of the given kind. Returns the provider format and the document
/// (a JSON object with `messages`, see [`ImportKind`] for each shape) that
/// `formats::decode(format, document)` accepts.
///
/// Errors: `invalid_transcript` naming the line (Claude Code, 1-based), the history
/// index (SWE-agent), the episode and message (tau-bench) or the conversation and turn
/// (Glaive) that is malformed.
pub fn import(kind: ImportKind, text: &str) -> Result<(Format, Value)> {
    let doc = match kind {
        ImportKind::ClaudeCodeJsonl => claude_code(text)?,
        ImportKind::SweAgentTraj => swe_agent(text)?,
        ImportKind::TauBench => tau_bench(text)?,
        ImportKind::Glaive => glaive(text)?,
    };
    Ok((kind.format(), doc))
}

fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::invalid(format!("{what}: not valid JSON: {e}")))
}

fn role_of(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

// ---------------------------------------------------------------- Claude Code

fn claude_code(text: &str) -> Result<Value> {
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

// ---------------------------------------------------------------- OpenAI-like logs

/// Keeps the standard OpenAI chat keys of one log entry.
fn openai_message(entry: &Value, at: &str) -> Result<Value> {
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
fn content_part(p: &Value, at: &str) -> Result<Value> {
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
fn unique_call_ids(messages: &mut [Value]) {
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

fn swe_agent(text: &str) -> Result<Value> {
    let doc = parse_json(text, "SWE-agent trajectory")?;
    let history = doc.get("history").and_then(Value::as_array).ok_or_else(|| Error::invalid("SWE-agent trajectory has no `history` array"))?;
    let mut messages = history.iter().enumerate().map(|(i, e)| openai_message(e, &format!("history[{i}]"))).collect::<Result<Vec<_>>>()?;
    unique_call_ids(&mut messages);
    Ok(json!({ "messages": messages }))
}

fn tau_bench(text: &str) -> Result<Value> {
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

fn glaive(text: &str) -> Result<Value> {
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

/// Imports `text` as `kind`: `auto` (a sniffed log kind, else JSON with the provider
/// format detected), a log kind, or a provider format name. Returns the format and the
/// provider document. Errors: `invalid_transcript`, `unknown_format`.
pub fn import_any(kind: &str, text: &str) -> Result<(Format, Value)> {
    let log_kind = match kind {
        "auto" => sniff(text),
        other => ImportKind::parse(other).ok(),
    };
    if let Some(k) = log_kind {
        return import(k, text);
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| Error::invalid(format!("not JSON: {e}")))?;
    let format = match kind {
        "auto" => super::detect(&doc)?,
        name => Format::parse(name)?,
    };
    Ok((format, doc))
}
