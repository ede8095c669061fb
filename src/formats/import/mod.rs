//! Importers for real agent logs (F-1, N-2): turn a Claude Code log (stream-json or
//! session log), a Codex CLI rollout, a SWE-agent `.traj`, a tau-bench trajectory file
//! or a Glaive / ShareGPT tool-use dataset into a provider document that
//! [`super::decode`] accepts and whose tool calls pair (F-5).
//!
//! Real logs are taken as they are (N-2): a bad line (torn JSON, an object without
//! `type`, `content: null`, a misspelled content key, a repeated row) is skipped or
//! repaired and reported in [`Imported::warnings`] with its 1-based line number and a
//! stable code. The document an importer returns always passes its format's own
//! pairing validation ([`super::validate_pairing`]): the pairing repairs of
//! [`repair`] (an orphan result dropped, an unanswered call answered by a synthetic
//! error result, a repeated call id renamed or dropped) are listed in the warnings
//! too. The import fails (typed error) only when nothing valid remains.
//!
//! Every importer is deterministic and keeps message text untouched. No importer
//! panics on bad input.

use super::{Format, Usage};
use crate::error::{Error, ErrorCode, Result};
use serde::Serialize;
use serde_json::Value;

mod claude_code;
mod codex;
mod glaive;
mod openai_like;
pub mod repair;
mod swe_agent;
mod tau_bench;

/// Which log kind [`import`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// Claude Code logs, both `claude -p --output-format stream-json` output and the
    /// session logs under `~/.claude/projects/` (JSON Lines) -> [`Format::Anthropic`],
    /// document `{ "system"?: <string>, "messages": [...] }` (`system` only when the log
    /// has an `init` line). Rules (N-2, LOG-FORMATS 1a/1b):
    /// - Rows of a subagent (`parent_tool_use_id` non-null, or `isSidechain: true`)
    ///   never enter the main thread: each run becomes its own Anthropic document in
    ///   [`Imported::subagents`], attached to the `Task`/`Agent` call it answers, or is
    ///   dropped with a counted warning ([`SubagentMode`]).
    /// - `isMeta` / `isSynthetic` rows, and user text that is only harness tags
    ///   (`<system-reminder>`, `<command-name>`, `<local-command-stdout>`, ...) become
    ///   user messages typed `transcript_role: "injected_context"` (S-7).
    /// - A `compact_boundary` system row starts the transcript again: the rows before it
    ///   are not imported (warning `compact_boundary` with their count) and the
    ///   `isCompactSummary` row after it becomes a summary row (`summary_level: 1`,
    ///   `transcript_role: "compaction_summary"`).
    /// - Assistant rows sharing `message.id` merge into one message, blocks in order.
    ///   The user rows between two assistant messages become one user message holding
    ///   every `tool_result` first, then the person's text; injected rows follow it as
    ///   their own messages (order kept when there are no results).
    /// - `attachment` rows: `hook_additional_context` and `hook_blocking_error` become
    ///   injected context, `queued_command` (text the person typed while the agent ran)
    ///   becomes user text; other attachment types are reported (warning
    ///   `attachment_not_imported`, counted per type).
    /// - Session logs: rows on a branch abandoned by a rewind (off the `parentUuid` chain
    ///   of the newest row) are skipped (warning `rewound_branch`).
    /// - Exactly repeated rows (same `uuid`, same JSON) are dropped (warning
    ///   `duplicate_row`); a row reusing a `uuid` with other content is kept (warning
    ///   `reused_uuid`); `result`,
    ///   `progress`, title and bookkeeping rows are not conversation and are skipped.
    /// - [`Imported::usage`]: the `message.usage` of the last assistant message (counted
    ///   once per `message.id`, largest `output_tokens`), input including cache reads
    ///   and writes.
    ClaudeCodeJsonl,
    /// Codex CLI rollout (`rollout-*.jsonl`) -> [`Format::OpenaiResponses`], document
    /// `{ "instructions"?: <string>, "input": [...] }`. `response_item` payloads are the
    /// items; `session_meta` instructions become `instructions`; `event_msg` lines are
    /// UI mirrors and are not imported (no duplicates), except that the last
    /// `token_count` gives [`Imported::usage`] (`last_token_usage`); user items holding
    /// `<environment_context>`, `<user_instructions>`, `<turn_aborted>` or
    /// `<subagent_notification>`, and developer / system items, are typed
    /// `injected_context`; a `compacted` line starts the transcript again from its
    /// `replacement_history` (else from its `message` as a summary row), earlier items
    /// not imported (warning `compact_boundary`); `ghost_snapshot` items (never sent to
    /// the model) are skipped; legacy files (bare header object, unwrapped items) are
    /// read; unknown line types are skipped with a warning `unknown_line_type`.
    CodexRollout,
    /// SWE-agent `.traj` JSON -> [`Format::OpenaiChat`], document `{ "messages": [...] }`
    /// built from `history`. Observations are environment output, never a user request
    /// (N-2): the first user message before any action is the task (the user request);
    /// a `tool` observation with `tool_call_ids` answers its call; in thought/action
    /// trajectories (no native tool calls) each assistant `action` becomes one tool
    /// call (id `swe_<index>`, name the action's first word, arguments
    /// `{"action": <action>}`) and the next observation its `tool` result; any other
    /// observation, and every `is_demo` entry, is a user message typed
    /// `injected_context`. Only `role`, `content`, `tool_calls`, `tool_call_id`, `name`
    /// are kept; reused call ids are made unique (see [`ImportKind::TauBench`]).
    SweAgentTraj,
    /// tau-bench trajectory file (JSON array of episodes with `traj`) ->
    /// [`Format::OpenaiChat`], document `{ "messages": [...] }`: all episodes'
    /// messages concatenated. Repairs: the first system message is kept; a later system
    /// message identical to it is dropped, a different one becomes a `user` message
    /// typed `injected_context`;
    /// reused tool-call ids are rewritten so each call id is unique: the k-th reuse of
    /// `X` becomes `X~k` (the next free `k` if that id already exists), and a `tool`
    /// message takes the rewritten id of the nearest earlier unanswered call with its id.
    TauBench,
    /// Glaive / ShareGPT tool-use conversations, as a JSON array (or one object) of
    /// `{conversations: [{from, value}], system?, tools?}` or as JSON Lines (one
    /// conversation a line) -> [`Format::OpenaiChat`], document `{ "messages": [...] }`:
    /// all conversations concatenated. Roles: `human`/`user` -> user, `gpt`/`assistant`
    /// -> assistant, `system` (a turn, or the conversation's `system` field) -> system,
    /// `function_call` (JSON `{name, arguments}`) -> assistant `tool_calls` with the
    /// synthetic id `glaive_<conversation>_<turn>` (a run of calls forms one message),
    /// `observation`/`tool` -> `tool` message answering the oldest unanswered call of
    /// its conversation. An observation with no call to answer becomes a user message
    /// typed `injected_context` (warning `orphan_observation`); a turn of an unknown
    /// speaker or without a string `value` is skipped with a warning. `tools` is not
    /// carried.
    Glaive,
}

impl ImportKind {
    /// Parses a kind name: `claude-code-jsonl`, `codex-rollout`, `swe-agent-traj`,
    /// `tau-bench`, `glaive` (also `glaive-jsonl`, `sharegpt`).
    ///
    /// Errors: `unknown_format` for any other name.
    pub fn parse(name: &str) -> Result<ImportKind> {
        match name {
            "claude-code-jsonl" | "claude-code" => Ok(ImportKind::ClaudeCodeJsonl),
            "codex-rollout" | "codex" => Ok(ImportKind::CodexRollout),
            "swe-agent-traj" | "swe-agent" => Ok(ImportKind::SweAgentTraj),
            "tau-bench" => Ok(ImportKind::TauBench),
            "glaive" | "glaive-jsonl" | "sharegpt" => Ok(ImportKind::Glaive),
            other => Err(Error::new(
                ErrorCode::UnknownFormat,
                format!("unknown import kind {other:?}; expected one of claude-code-jsonl, codex-rollout, swe-agent-traj, tau-bench, glaive"),
            )),
        }
    }

    /// The kind's name, as accepted by [`ImportKind::parse`].
    pub fn name(self) -> &'static str {
        match self {
            ImportKind::ClaudeCodeJsonl => "claude-code-jsonl",
            ImportKind::CodexRollout => "codex-rollout",
            ImportKind::SweAgentTraj => "swe-agent-traj",
            ImportKind::TauBench => "tau-bench",
            ImportKind::Glaive => "glaive",
        }
    }

    /// The provider format [`import`] produces for this kind.
    pub fn format(self) -> Format {
        match self {
            ImportKind::ClaudeCodeJsonl => Format::Anthropic,
            ImportKind::CodexRollout => Format::OpenaiResponses,
            _ => Format::OpenaiChat,
        }
    }
}

/// What to do with the rows of Claude Code subagent runs (N-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubagentMode {
    /// Keep each run as its own transcript in [`Imported::subagents`] (the default).
    #[default]
    Attach,
    /// Drop the runs; one warning `subagent_dropped` counts their rows.
    Drop,
}

/// Options of [`import_with`] (JS: `importTranscript(kind, text, { subagents })`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImportOptions {
    /// `"attach"` (default) or `"drop"`.
    pub subagents: SubagentMode,
}

impl ImportOptions {
    /// Reads the JS options object: `{ subagents?: "attach" | "drop" }`; `null` /
    /// absent means the defaults. Errors: `invalid_config` naming the bad field.
    pub fn from_json(v: &Value) -> Result<ImportOptions> {
        let mut o = ImportOptions::default();
        match v {
            Value::Null => return Ok(o),
            Value::Object(map) => {
                for (k, val) in map {
                    match (k.as_str(), val) {
                        ("subagents", Value::String(s)) if s == "attach" => o.subagents = SubagentMode::Attach,
                        ("subagents", Value::String(s)) if s == "drop" => o.subagents = SubagentMode::Drop,
                        ("subagents", Value::Null) => {}
                        ("subagents", other) => {
                            return Err(Error::new(ErrorCode::InvalidConfig, format!("importTranscript options.subagents must be \"attach\" or \"drop\", got {other}")))
                        }
                        (other, _) => return Err(Error::new(ErrorCode::InvalidConfig, format!("importTranscript options: unknown field {other:?} (known: subagents)"))),
                    }
                }
            }
            other => return Err(Error::new(ErrorCode::InvalidConfig, format!("importTranscript options must be an object, got {other}"))),
        }
        Ok(o)
    }
}

/// One thing an importer skipped or repaired (N-2). JSON: `{ line, code, message }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportWarning {
    /// 1-based line of the input it is about (JSON Lines inputs); `null` for whole-JSON
    /// inputs, whose `message` names the index instead.
    pub line: Option<usize>,
    /// Stable code: `not_json`, `torn_line`, `nested_too_deep` (a valid JSON line nested
    /// 128 levels or more: its deep fields kept as JSON text, or the line skipped), `fused_line`, `not_object`, `missing_type`,
    /// `bad_content`, `bad_block`, `duplicate_row`, `reused_uuid`, `unknown_line_type`,
    /// `compact_boundary`, `attachment_not_imported`, `subagent_dropped`,
    /// `subagent_unattached`, `subagent_file`, `rewound_branch`, `orphan_result`, `unanswered_call`, `duplicate_call_id`,
    /// `empty_message`, `orphan_observation`, `bad_turn`, `bad_entry`, `normalised_item`,
    /// `compact_boundary_without_summary`, `other_session` (Claude Code rows of a
    /// session not linked to the log's, skipped), `missing_parent` (a Claude Code row
    /// whose `parentUuid` names a row the log does not hold).
    pub code: &'static str,
    /// What was skipped or repaired, and why.
    pub message: String,
}

/// The warnings of one import, in the order they were found.
#[derive(Debug, Default)]
pub struct Warnings(pub Vec<ImportWarning>);

impl Warnings {
    /// Adds a warning.
    pub fn push(&mut self, line: Option<usize>, code: &'static str, message: impl Into<String>) {
        self.0.push(ImportWarning { line, code, message: message.into() });
    }
}

/// A Claude Code subagent run kept beside the main thread (N-2). JSON:
/// `{ callId, agentId?, format, document }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subagent {
    /// The `tool_use` id of the `Task` / `Agent` call the run answers; `null` when the
    /// log does not say (warning `subagent_unattached`).
    #[serde(rename = "callId")]
    pub call_id: Option<String>,
    /// The subagent's `agentId` (session logs), when the log has it.
    #[serde(rename = "agentId", skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The run's document format (always `anthropic`).
    pub format: Format,
    /// The run as a valid document of `format`.
    pub document: Value,
}

/// What an import gives (JS: `{ format, document, warnings, subagents?, usage? }`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    /// The provider format of `document`.
    pub format: Format,
    /// A document `formats::decode(format, document)` accepts and whose pairing is valid.
    pub document: Value,
    /// Skipped and repaired input, in input order (N-2).
    pub warnings: Vec<ImportWarning>,
    /// Claude Code subagent runs (empty for other kinds, or with `subagents: "drop"`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<Subagent>,
    /// The usage the log recorded for its last model call, when it has one (tokens).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// What one importer hands back before the final check.
pub(super) struct Output {
    pub document: Value,
    pub subagents: Vec<Subagent>,
    pub usage: Option<Usage>,
}

impl Output {
    pub(super) fn doc(document: Value) -> Output {
        Output { document, subagents: Vec::new(), usage: None }
    }
}

/// Guesses the log kind from the text. `None` when it is none of the known logs
/// (e.g. plain provider JSON, which goes straight to [`super::decode`]).
pub fn sniff(text: &str) -> Option<ImportKind> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) if is_claude_event(&v) => Some(ImportKind::ClaudeCodeJsonl),
        Ok(v) if is_codex_line(&v) => Some(ImportKind::CodexRollout),
        Ok(v) => {
            if v.get("history").is_some_and(Value::is_array) {
                return Some(ImportKind::SweAgentTraj);
            }
            if v.get("conversations").is_some_and(Value::is_array) {
                return Some(ImportKind::Glaive);
            }
            let first = v.as_array()?.first()?;
            if first.get("traj").is_some() {
                Some(ImportKind::TauBench)
            } else if first.get("conversations").is_some_and(Value::is_array) {
                Some(ImportKind::Glaive)
            } else {
                None
            }
        }
        // JSON Lines: the first JSON object lines decide (bookkeeping rows of a
        // session log may carry no session id, so several are read).
        Err(_) => {
            let mut objects = text.split('\n').map(|l| l.trim().trim_matches('\0')).filter(|l| l.starts_with('{')).filter_map(|l| serde_json::from_str::<Value>(l).ok()).take(50).peekable();
            let first = objects.peek()?.clone();
            if first.get("conversations").is_some_and(Value::is_array) {
                return Some(ImportKind::Glaive);
            }
            // legacy Codex header: `{id, timestamp, instructions?}` without `type`
            let legacy_codex = first.get("type").is_none() && first.get("id").is_some() && first.get("timestamp").is_some();
            for v in objects {
                if is_claude_event(&v) {
                    return Some(ImportKind::ClaudeCodeJsonl);
                }
                if is_codex_line(&v) || (legacy_codex && v.get("type").and_then(Value::as_str).is_some_and(codex::is_item_type)) {
                    return Some(ImportKind::CodexRollout);
                }
            }
            None
        }
    }
}

fn is_claude_event(v: &Value) -> bool {
    matches!(v.get("type").and_then(Value::as_str), Some("system" | "assistant" | "user" | "result" | "attachment" | "summary"))
        && (v.get("session_id").is_some() || v.get("sessionId").is_some())
}

fn is_codex_line(v: &Value) -> bool {
    matches!(v.get("type").and_then(Value::as_str), Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")) && v.get("payload").is_some()
}

/// Imports a log of the given kind with the default options. Returns the provider
/// format and the document (see [`import_with`] for warnings, subagents and usage).
///
/// Errors: as [`import_with`].
pub fn import(kind: ImportKind, text: &str) -> Result<(Format, Value)> {
    let r = import_with(kind, text, &ImportOptions::default())?;
    Ok((r.format, r.document))
}

/// Imports a log of the given kind (N-2): the document (see [`ImportKind`] for each
/// shape), the warnings naming each skipped or repaired line, the subagent runs and
/// the recorded usage. The document passes [`super::validate_pairing`] in its format.
///
/// Errors: `invalid_transcript` when nothing valid remains (no JSON at all, no
/// conversation rows, or no message left in the document), naming what was found; the code of the pairing validator
/// (`unpaired_tool_result`, `unanswered_tool_call`, `duplicate_tool_call_id`) if a
/// repair rule missed a case (a bug, never expected).
pub fn import_with(kind: ImportKind, text: &str, options: &ImportOptions) -> Result<Imported> {
    let mut w = Warnings::default();
    let out = match kind {
        ImportKind::ClaudeCodeJsonl => claude_code::import(text, options, &mut w)?,
        ImportKind::CodexRollout => codex::import(text, &mut w)?,
        ImportKind::SweAgentTraj => swe_agent::import(text, &mut w)?,
        ImportKind::TauBench => tau_bench::import(text, &mut w)?,
        ImportKind::Glaive => glaive::import(text, &mut w)?,
    };
    let format = kind.format();
    let empty = out.document.get("messages").or_else(|| out.document.get("input")).and_then(Value::as_array).is_some_and(|m| m.is_empty());
    if empty {
        return Err(Error::invalid(format!("{} log: the import yields no messages", kind.name())));
    }
    check_valid(format, &out.document, "the imported document")?;
    for s in &out.subagents {
        check_valid(s.format, &s.document, "a subagent document")?;
    }
    let mut warnings = w.0;
    // input order: by line (stable; entries without a line keep their order, last)
    crate::sorted::sort_by(&mut warnings, |a, b| a.line.unwrap_or(usize::MAX).cmp(&b.line.unwrap_or(usize::MAX)));
    Ok(Imported { format, document: out.document, warnings, subagents: out.subagents, usage: out.usage })
}

/// The format's own decode and pairing validation over an importer's output.
fn check_valid(format: Format, doc: &Value, what: &str) -> Result<()> {
    let t = super::decode(format, doc.clone()).map_err(|e| Error::new(e.code, format!("{what} does not decode as {}: {}", format.name(), e.message)))?;
    super::validate_pairing(&t).map_err(|e| Error::new(e.code, format!("{what} breaks {} pairing after the import repairs: {}", format.name(), e.message)))
}

pub(super) fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::invalid(format!("{what}: not valid JSON: {e}")))
}

pub(super) fn role_of(m: &Value) -> Option<&str> {
    m.get("role").and_then(Value::as_str)
}

/// One JSON object of a JSON Lines input and its 1-based line.
pub(super) struct Line {
    pub no: usize,
    pub value: Value,
}

/// Reads JSON Lines the way real logs need (LOG-FORMATS "must not get wrong" 1):
/// splits on `\n` only (U+2028 / U+2029 inside a line are text), drops a trailing
/// `\r`, NUL bytes and a byte-order mark; skips blank lines; non-JSON text (shell
/// banners) is skipped with one counted `not_json` warning; a torn line is skipped
/// (`torn_line`); a valid line nested 128 levels or more is read with its deep fields
/// as JSON text, or skipped when its `message` is the deep part (`nested_too_deep`); two
/// objects fused on one line are both read (`fused_line`); a value that is not an object is
/// skipped (`not_object`).
pub(super) fn read_jsonl(text: &str, w: &mut Warnings) -> Vec<Line> {
    let mut out = Vec::new();
    let mut text_lines: Vec<usize> = Vec::new();
    for (n, raw) in text.split('\n').enumerate() {
        let no = n + 1;
        let line = raw.trim_start_matches('\u{feff}').trim_matches(|c: char| c == '\0' || c.is_ascii_whitespace());
        if line.is_empty() {
            continue;
        }
        if !line.starts_with('{') && !line.starts_with('[') {
            text_lines.push(no);
            continue;
        }
        let mut values = Vec::new();
        let mut stream = serde_json::Deserializer::from_str(line).into_iter::<Value>();
        let mut error = None;
        for v in stream.by_ref() {
            match v {
                Ok(v) => values.push(v),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        match (values.len(), error) {
            (0, Some(e)) => match crate::error::too_deep_note(line, 0, &e) {
                // break finding 12: valid JSON over the nesting limit is no torn line; the
                // row is read with its too-deep fields (structured tool output) as their
                // JSON text, unless the deep part is its message
                Some(note) => match shallow_row(line) {
                    Some((value, deep)) => {
                        w.push(Some(no), "nested_too_deep", format!("line {no}: field(s) {} kept as JSON text: {note}", deep.join(", ")));
                        out.push(Line { no, value });
                    }
                    None => w.push(Some(no), "nested_too_deep", format!("line {no}: skipped: {note}")),
                },
                None => w.push(Some(no), "torn_line", format!("line {no}: not valid JSON, skipped (torn or truncated line?): {e}")),
            },
            (0, None) => continue,
            (k, err) => {
                if k > 1 {
                    w.push(Some(no), "fused_line", format!("line {no}: {k} JSON values on one line (fused rows), each read"));
                }
                if let Some(e) = err {
                    w.push(Some(no), "torn_line", format!("line {no}: text after the JSON value is not valid JSON, ignored: {e}"));
                }
                for value in values {
                    if value.is_object() {
                        out.push(Line { no, value });
                    } else {
                        w.push(Some(no), "not_object", format!("line {no}: a JSON value that is not an object, skipped"));
                    }
                }
            }
        }
    }
    if let Some(first) = text_lines.first() {
        w.push(Some(*first), "not_json", format!("{} line(s) of non-JSON text skipped (first at line {first}, e.g. a shell banner)", text_lines.len()));
    }
    out
}

/// A JSON Lines row nested past [`crate::error::MAX_JSON_DEPTH`] (break finding 12), read
/// one level down: each top-level field is parsed on its own, and a field still too deep
/// becomes a string of its JSON text (serde_json skips a raw value without recursing). Returns
/// the row and the names of those fields, or `None` when the line is not a JSON object or
/// the too-deep field is `message` (the row's content: a string there would change it).
fn shallow_row(line: &str) -> Option<(Value, Vec<String>)> {
    let fields: Vec<(String, Box<serde_json::value::RawValue>)> = serde_json::from_str::<std::collections::BTreeMap<String, Box<serde_json::value::RawValue>>>(line).ok()?.into_iter().collect();
    let mut map = serde_json::Map::new();
    let mut deep = Vec::new();
    for (k, raw) in fields {
        let v = match serde_json::from_str::<Value>(raw.get()) {
            Ok(v) => v,
            Err(_) if k == "message" => return None,
            Err(_) => {
                deep.push(format!("`{k}`"));
                Value::String(raw.get().to_string())
            }
        };
        map.insert(k, v);
    }
    Some((Value::Object(map), deep))
}

/// Imports `text` as `kind` with the default options (see [`import_any_with`]).
/// Returns the format and the provider document.
///
/// Errors: as [`import_any_with`].
pub fn import_any(kind: &str, text: &str) -> Result<(Format, Value)> {
    let r = import_any_with(kind, text, &ImportOptions::default())?;
    Ok((r.format, r.document))
}

/// Imports `text` as `kind`: `auto` (a sniffed log kind, else JSON with the provider
/// format detected, N-3), a log kind, or a provider format name (the text is parsed as
/// JSON and returned as it is, no warnings; the engine's decode checks it).
///
/// Errors: `invalid_transcript` (not JSON, nothing valid), `unknown_format` (an
/// unknown kind, or `auto` on a shape no format accounts for: the message names the
/// likely source, e.g. a LangChain dump).
pub fn import_any_with(kind: &str, text: &str, options: &ImportOptions) -> Result<Imported> {
    let log_kind = match kind {
        "auto" => sniff(text),
        other => ImportKind::parse(other).ok(),
    };
    if let Some(k) = log_kind {
        return import_with(k, text, options);
    }
    let format = match kind {
        "auto" => super::detect_text(text)?,
        name => Format::parse(name)?,
    };
    let doc: Value = serde_json::from_str(text).map_err(|e| Error::invalid(format!("not JSON: {e}")))?;
    Ok(Imported { format, document: doc, warnings: Vec::new(), subagents: Vec::new(), usage: None })
}
