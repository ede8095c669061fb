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
use serde_json::Value;

mod claude_code;
mod glaive;
mod openai_like;
mod swe_agent;
mod tau_bench;

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
        ImportKind::ClaudeCodeJsonl => claude_code::import(text)?,
        ImportKind::SweAgentTraj => swe_agent::import(text)?,
        ImportKind::TauBench => tau_bench::import(text)?,
        ImportKind::Glaive => glaive::import(text)?,
    };
    Ok((kind.format(), doc))
}

pub(super) fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::invalid(format!("{what}: not valid JSON: {e}")))
}

pub(super) fn role_of(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
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
