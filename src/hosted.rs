//! Tool calls the provider runs itself (issue 13, Y-5, M-1), read from a row's provider
//! JSON. The format adapters keep these items opaque ([`Block::Opaque`]: the provider
//! needs them back whole), so no [`Block::ToolCall`] names them; this module reads what
//! the summary's call list, the in-run ledger and memory say of them:
//!
//! - Anthropic, in one assistant message: `server_tool_use` (`web_search`, `web_fetch`,
//!   `code_execution`, `bash_code_execution`, `text_editor_code_execution`, ...) with
//!   its `*_tool_result` block, and the MCP connector's `mcp_tool_use` with its
//!   `mcp_tool_result`;
//! - OpenAI Responses, one item each (the call and its outcome together): `mcp_call`,
//!   `web_search_call`, `file_search_call`, `code_interpreter_call`,
//!   `image_generation_call`, and the Agents SDK's `hosted_tool_call`. (A
//!   `computer_call` is a client call there: the adapter makes it a
//!   [`Block::ToolCall`].)
//! - Gemini, in one model turn: `executableCode` with the `codeExecutionResult` after it
//!   (server-side code execution; snake_case spellings read too);
//! - the AI SDK, in one assistant message: a `tool-call` part with `providerExecuted:
//!   true` and its `tool-result` part (also `providerExecuted`).
//!
//! Each stays opaque in the view, so pairing is as before and the rewrite writes the
//! row's JSON back unchanged; the summarizer's copy of a folded row
//! ([`crate::summarize::render_message`]) renders each call with its outcome.
//!
//! It sits beside [`crate::transcript`] and below both [`crate::formats`] and
//! [`crate::summarize`] / [`crate::memory`], so neither reaches the other for it. The
//! JSON is untrusted transcript data: nothing here indexes or panics, and nothing read
//! is an instruction.

use crate::transcript::{Block, Message, Role};
use serde_json::Value;

/// How a provider-run call ended, as its own item says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostedOutcome {
    /// It ran; `exit` is the return code a code run states (`return_code`), if any.
    Ok {
        /// The run's return code (0 here), when the result states one.
        exit: Option<i64>,
    },
    /// It ran and failed: an error result (`web_search_tool_result_error`, an
    /// `error_code`, an `mcp_tool_result` with `is_error`), an `error` field (a Responses
    /// `mcp_call`), a `status` of `failed` / `incomplete`, or a non-zero return code.
    Failed {
        /// The non-zero return code, when the failure is one.
        exit: Option<i64>,
        /// What the item says went wrong, as given (`max_uses_exceeded`, `Jira 401: token
        /// expired`, `status failed`); never empty.
        error: String,
    },
    /// No outcome in the row: an Anthropic server call whose result block is not in
    /// its message, or a Responses item still `in_progress` / `searching`.
    NoResult,
}

/// One provider-run call (issue 13, Y-5) with its outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedCall {
    /// The call's id (`server_tool_use.id`, `mcp_tool_use.id`, the Responses item's
    /// `id`); empty when the item names none.
    pub call_id: String,
    /// The tool's name: the `server_tool_use` name (`web_search`; the result's kind less
    /// `_tool_result` when the call block is missing), `<server>.<tool>` for an MCP call
    /// (`server_name` / `server_label` and `name`), or the Responses item's tool
    /// (`web_search`, `file_search`, `code_interpreter`, `image_generation`),
    /// `code_execution` for a Gemini code run, the `toolName` of an AI SDK part.
    pub tool: String,
    /// The call's arguments as JSON text: the `input` object, an `mcp_call`'s
    /// `arguments` string as given, a Responses `action` / `{"queries": [...]}` /
    /// `{"code": ...}`; `{}` when it has none.
    pub arguments: String,
    /// The one line a reader would search it by: the query, URL, code or command of its
    /// input, or an MCP call's arguments.
    pub query: Option<String>,
    /// Its result as text, as memory records it (M-1): one `<title> (<url>)` line per web
    /// search result (`, page age <age>` when given), a fetched URL and its text, a run's
    /// stdout / stderr / return code, an MCP call's output; for a failure
    /// `<tool> failed: <error>` (`web search failed: ...`, `mcp call failed: ...`). Empty
    /// when the row holds no result text.
    pub text: String,
    /// How it ended.
    pub outcome: HostedOutcome,
}

/// Opaque block kinds that start or answer a provider-run call ([`hosted_calls`]): a row
/// without one holds none, so its JSON need not be parsed. Besides the Anthropic and
/// Responses kinds: Gemini's `executableCode` / `codeExecutionResult` parts (either
/// spelling) and the AI SDK's `tool-call` / `tool-result` parts, which an assistant
/// message keeps opaque only when `providerExecuted` (a client call there is a
/// [`Block::ToolCall`]).
pub fn is_hosted_kind(kind: &str) -> bool {
    matches!(
        kind,
        "server_tool_use"
            | "mcp_tool_use"
            | "mcp_tool_result"
            | "mcp_call"
            | "web_search_call"
            | "file_search_call"
            | "code_interpreter_call"
            | "image_generation_call"
            | "hosted_tool_call"
            | "executableCode"
            | "executable_code"
            | "codeExecutionResult"
            | "code_execution_result"
            | "tool-call"
            | "tool-result"
    ) || kind.ends_with("_tool_result")
}

/// Whether `m` is an assistant row holding a provider-run call or result
/// ([`is_hosted_kind`]): a row [`hosted_calls`] may read something from.
pub fn has_hosted(m: &Message) -> bool {
    m.role == Role::Assistant && m.blocks.iter().any(|b| matches!(b, Block::Opaque { kind, .. } if is_hosted_kind(kind)))
}

/// The provider-run calls of an assistant row, in the order their call blocks appear (a
/// result whose call block is missing, at its own place). Empty for other rows, for a
/// row with no [`is_hosted_kind`] opaque block, and for JSON that does not parse.
pub fn hosted_calls(m: &Message) -> Vec<HostedCall> {
    if !has_hosted(m) {
        return Vec::new();
    }
    let Ok(v) = serde_json::from_str::<Value>(m.raw.get()) else { return Vec::new() };
    if v.get("content").is_some_and(Value::is_array) {
        return anthropic_calls(&v);
    }
    if let Some(Value::Array(parts)) = v.get("parts") {
        return gemini_calls(parts);
    }
    responses_call(&v).into_iter().collect()
}

/// A non-blank string field.
fn str_of(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_string)
}

/// The `<what> failed: <error>` text of a failure ([`HostedCall::text`]).
fn failed_text(what: &str, error: &str) -> String {
    format!("{what} failed: {error}")
}

/// The calls of an Anthropic message's content ([`hosted_calls`]).
fn anthropic_calls(raw: &Value) -> Vec<HostedCall> {
    let blocks = raw.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut calls: Vec<HostedCall> = Vec::new();
    for b in blocks {
        let Some(ty) = b.get("type").and_then(Value::as_str) else { continue };
        match ty {
            "server_tool_use" | "mcp_tool_use" => {
                let name = str_of(b, "name").unwrap_or_else(|| ty.trim_end_matches("_use").to_string());
                let tool = match str_of(b, "server_name") {
                    Some(server) if ty == "mcp_tool_use" => format!("{server}.{name}"),
                    _ => name,
                };
                let input = b.get("input");
                // an MCP tool's input names no query key: its arguments are what it was asked
                let query = input.and_then(query_of).or_else(|| input.filter(|_| ty == "mcp_tool_use").map(Value::to_string));
                let arguments = input.map_or_else(|| "{}".to_string(), Value::to_string);
                calls.push(HostedCall { call_id: str_of(b, "id").unwrap_or_default(), tool, arguments, query, text: String::new(), outcome: HostedOutcome::NoResult });
            }
            _ if ty == "mcp_tool_result" || (ty.ends_with("_tool_result") && ty != "tool_result") => {
                // the result without its call block: named by its kind
                let missing = if ty == "mcp_tool_result" { "mcp_tool" } else { ty.trim_end_matches("_tool_result") };
                let c = answered(&mut calls, str_of(b, "tool_use_id").unwrap_or_default(), false, missing);
                let (text, outcome) = anthropic_result(ty, &c.tool, b);
                c.text = text;
                c.outcome = outcome;
            }
            // AI SDK: a provider-executed tool's call and its result, both in this message
            "tool-call" if provider_executed(b) => {
                let input = b.get("input").or_else(|| b.get("args"));
                let arguments = match input {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) if !v.is_null() => v.to_string(),
                    _ => "{}".to_string(),
                };
                let query = input.and_then(query_of);
                let tool = str_of(b, "toolName").unwrap_or_else(|| "provider_tool".to_string());
                calls.push(HostedCall { call_id: str_of(b, "toolCallId").unwrap_or_default(), tool, arguments, query, text: String::new(), outcome: HostedOutcome::NoResult });
            }
            "tool-result" if provider_executed(b) => {
                let tool = str_of(b, "toolName").unwrap_or_else(|| "provider_tool".to_string());
                let c = answered(&mut calls, str_of(b, "toolCallId").unwrap_or_default(), false, &tool);
                let (text, outcome) = ai_sdk_result(&c.tool, b);
                c.text = text;
                c.outcome = outcome;
            }
            _ => {}
        }
    }
    calls
}

/// The search line of a call's input object: its `query`, `url`, `code`, `command` or
/// `path`, the first given.
fn query_of(input: &Value) -> Option<String> {
    ["query", "url", "code", "command", "path"].iter().find_map(|k| str_of(input, k))
}

/// The `text` of each of `parts` that has one, a line each.
fn parts_text(parts: &[Value]) -> String {
    parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
}

/// An AI SDK part marked `providerExecuted: true`.
fn provider_executed(p: &Value) -> bool {
    p.get("providerExecuted").and_then(Value::as_bool) == Some(true)
}

/// The call in `calls` a result of `call_id` answers: the newest one of that id still
/// without a result (with `by_position`, when either id is empty, the newest one still
/// without a result); else a call named `missing` pushed for the result alone.
fn answered<'c>(calls: &'c mut Vec<HostedCall>, call_id: String, by_position: bool, missing: &str) -> &'c mut HostedCall {
    let matches = |c: &HostedCall| {
        let same = if by_position && (call_id.is_empty() || c.call_id.is_empty()) { true } else { !call_id.is_empty() && c.call_id == call_id };
        same && c.outcome == HostedOutcome::NoResult
    };
    let at = match calls.iter().rposition(matches) {
        Some(i) => i,
        None => {
            calls.push(HostedCall { call_id, tool: missing.to_string(), arguments: "{}".to_string(), query: None, text: String::new(), outcome: HostedOutcome::NoResult });
            calls.len() - 1
        }
    };
    &mut calls[at]
}

/// The text and outcome of an AI SDK provider-executed `tool-result` part answering a
/// call of `tool`: its `output` (`{type, value}`: `text` / `json` ok, `error-text` /
/// `error-json` failed with the value's first line, `execution-denied` failed with its
/// `reason`, `content` the text of its parts) or, AI SDK 4, `result` with `isError`.
fn ai_sdk_result(tool: &str, b: &Value) -> (String, HostedOutcome) {
    let (kind, value) = match b.get("output") {
        Some(o @ Value::Object(_)) => (o.get("type").and_then(Value::as_str).unwrap_or(""), o.get("value").or_else(|| o.get("reason"))),
        Some(other) => ("", Some(other)),
        None if b.get("isError").and_then(Value::as_bool) == Some(true) => ("error-json", b.get("result")),
        None => ("", b.get("result")),
    };
    let text = match value {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) if kind == "content" => parts_text(parts),
        Some(v) if !v.is_null() => v.to_string(),
        _ => String::new(),
    };
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
    let error = match kind {
        "error-text" | "error-json" => first.unwrap_or_else(|| "error result".to_string()),
        "execution-denied" => first.map_or_else(|| "execution denied".to_string(), |r| format!("execution denied: {r}")),
        _ => return (text, HostedOutcome::Ok { exit: None }),
    };
    (failed_text(tool, &error), HostedOutcome::Failed { exit: None, error })
}

/// Gemini's server-side code runs of a content's parts ([`hosted_calls`]): each
/// `executableCode` part (`{language, code, id?}`) a `code_execution` call, answered by
/// the `codeExecutionResult` part (`{outcome, output, id?}`) of its `id`, else by the
/// next one after it. `OUTCOME_OK` (or none) is ok, `OUTCOME_FAILED` failed with the
/// output's first line, `OUTCOME_DEADLINE_EXCEEDED` failed as `deadline exceeded`; the
/// text is the output. A part without an `id` gets the view's positional form,
/// `gemini-pos:code_execution:<k>` (k counting the row's code parts from 0).
fn gemini_calls(parts: &[Value]) -> Vec<HostedCall> {
    let mut calls: Vec<HostedCall> = Vec::new();
    let mut k = 0usize;
    for p in parts {
        if let Some(code) = p.get("executableCode").or_else(|| p.get("executable_code")) {
            let call_id = str_of(code, "id").unwrap_or_else(|| format!("gemini-pos:code_execution:{k}"));
            k += 1;
            let arguments = if code.is_object() { code.to_string() } else { "{}".to_string() };
            calls.push(HostedCall { call_id, tool: "code_execution".to_string(), arguments, query: str_of(code, "code"), text: String::new(), outcome: HostedOutcome::NoResult });
        } else if let Some(r) = p.get("codeExecutionResult").or_else(|| p.get("code_execution_result")) {
            let c = answered(&mut calls, str_of(r, "id").unwrap_or_default(), true, "code_execution");
            if c.call_id.is_empty() {
                c.call_id = format!("gemini-pos:code_execution:{k}");
                k += 1;
            }
            let output = str_of(r, "output").unwrap_or_default();
            let first = output.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
            c.outcome = match r.get("outcome").and_then(Value::as_str) {
                None | Some("OUTCOME_OK") => HostedOutcome::Ok { exit: None },
                Some("OUTCOME_DEADLINE_EXCEEDED") => HostedOutcome::Failed { exit: None, error: "deadline exceeded".to_string() },
                Some(other) => HostedOutcome::Failed { exit: None, error: first.unwrap_or_else(|| format!("outcome {other}")) },
            };
            c.text = match (&c.outcome, output.is_empty()) {
                (HostedOutcome::Failed { error, .. }, true) => failed_text("code_execution", error),
                _ => output,
            };
        }
    }
    calls
}

/// The text and outcome of an Anthropic server or MCP result block `b` of kind `ty`
/// answering a call of `tool`.
fn anthropic_result(ty: &str, tool: &str, b: &Value) -> (String, HostedOutcome) {
    let content = b.get("content");
    if ty == "mcp_tool_result" {
        let text = match content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts_text(parts),
            _ => String::new(),
        };
        if b.get("is_error").and_then(Value::as_bool) == Some(true) {
            let error = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("is_error").to_string();
            return (failed_text("mcp call", &error), HostedOutcome::Failed { exit: None, error });
        }
        return (text, HostedOutcome::Ok { exit: None });
    }
    // an error result: `{"type": "<kind>_error", "error_code": ...}`
    let error = content.filter(|c| c.is_object()).and_then(|c| {
        let errored = c.get("type").and_then(Value::as_str).is_some_and(|t| t.ends_with("_error"));
        str_of(c, "error_code").or_else(|| errored.then(|| "unknown error".to_string()))
    });
    if let Some(error) = error {
        let what = if ty == "web_search_tool_result" { "web search" } else { tool };
        return (failed_text(what, &error), HostedOutcome::Failed { exit: None, error });
    }
    if ty == "web_search_tool_result" {
        return (web_search_lines(content), HostedOutcome::Ok { exit: None });
    }
    let text = server_result_text(content);
    match content.and_then(|c| c.get("return_code")).and_then(Value::as_i64) {
        Some(0) => (text, HostedOutcome::Ok { exit: Some(0) }),
        Some(n) => {
            let stderr = content.and_then(|c| str_of(c, "stderr"));
            let error = stderr.as_deref().and_then(|s| s.lines().map(str::trim).find(|l| !l.is_empty())).map_or_else(|| format!("return code {n}"), str::to_string);
            (text, HostedOutcome::Failed { exit: Some(n), error })
        }
        None => (text, HostedOutcome::Ok { exit: None }),
    }
}

/// One line per `web_search_result` of a web search result's content: `<title> (<url>)`,
/// then `, page age <age>` when given.
fn web_search_lines(content: Option<&Value>) -> String {
    let Some(Value::Array(items)) = content else { return String::new() };
    let lines: Vec<String> = items
        .iter()
        .filter_map(|r| {
            let url = str_of(r, "url")?;
            let mut l = match str_of(r, "title") {
                Some(t) => format!("{t} ({url})"),
                None => url,
            };
            if let Some(age) = str_of(r, "page_age") {
                l.push_str(&format!(", page age {age}"));
            }
            Some(l)
        })
        .collect();
    lines.join("\n")
}

/// The text of a web fetch or code execution server result that is no error: the
/// fetched URL and its document text; a run's stdout, stderr and return code.
fn server_result_text(content: Option<&Value>) -> String {
    let Some(c) = content else { return String::new() };
    let mut lines = Vec::new();
    if let Some(url) = str_of(c, "url") {
        lines.push(format!("fetched {url}"));
    }
    let doc = c.get("content").unwrap_or(&Value::Null);
    if let Some(title) = str_of(doc, "title") {
        lines.push(title);
    }
    if let Some(data) = doc.get("source").and_then(|s| str_of(s, "data")).filter(|_| doc.get("source").and_then(|s| s.get("type")).and_then(Value::as_str) == Some("text")) {
        lines.push(data);
    }
    for k in ["stdout", "stderr", "content"] {
        if let Some(t) = str_of(c, k) {
            lines.push(format!("{k}:\n{t}"));
        }
    }
    if let Some(n) = c.get("return_code").and_then(Value::as_i64) {
        lines.push(format!("return code {n}"));
    }
    lines.join("\n")
}

/// A Responses hosted-tool item ([`hosted_calls`]), `None` for any other item.
fn responses_call(v: &Value) -> Option<HostedCall> {
    let ty = v.get("type").and_then(Value::as_str)?;
    let call_id = str_of(v, "id").or_else(|| str_of(v, "call_id")).unwrap_or_default();
    let (tool, arguments, query, text) = match ty {
        "mcp_call" | "hosted_tool_call" => {
            let name = str_of(v, "name");
            let tool = match (str_of(v, "server_label"), name) {
                (Some(l), Some(n)) => format!("{l}.{n}"),
                (None, Some(n)) => n,
                _ => ty.to_string(),
            };
            let args = match v.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(a) if !a.is_null() => a.to_string(),
                _ => "{}".to_string(),
            };
            let query = str_of(v, "arguments");
            let output = match v.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(o) if !o.is_null() => o.to_string(),
                _ => String::new(),
            };
            (tool, args, query, output)
        }
        "web_search_call" => {
            let action = v.get("action");
            let query = action.and_then(|a| str_of(a, "query").or_else(|| str_of(a, "url")).or_else(|| str_of(a, "pattern")));
            ("web_search".to_string(), action.map_or_else(|| "{}".to_string(), Value::to_string), query, String::new())
        }
        "file_search_call" => {
            let queries: Vec<&str> = v.get("queries").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let results: Vec<String> = v
                .get("results")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|r| match (str_of(r, "filename").or_else(|| str_of(r, "file_id")), str_of(r, "text")) {
                    (Some(f), Some(t)) => Some(format!("{f}: {t}")),
                    (f, t) => f.or(t),
                })
                .collect();
            let query = (!queries.is_empty()).then(|| queries.join("; "));
            ("file_search".to_string(), serde_json::json!({ "queries": queries }).to_string(), query, results.join("\n"))
        }
        "code_interpreter_call" => {
            let code = str_of(v, "code");
            let logs: Vec<&str> = v.get("outputs").and_then(Value::as_array).into_iter().flatten().filter_map(|o| o.get("logs").and_then(Value::as_str)).collect();
            let args = code.as_ref().map_or_else(|| "{}".to_string(), |c| serde_json::json!({ "code": c }).to_string());
            ("code_interpreter".to_string(), args, code, logs.join("\n"))
        }
        "image_generation_call" => {
            let prompt = str_of(v, "revised_prompt");
            let args = prompt.as_ref().map_or_else(|| "{}".to_string(), |p| serde_json::json!({ "revised_prompt": p }).to_string());
            ("image_generation".to_string(), args, prompt, String::new())
        }
        _ => return None,
    };
    let error = match v.get("error") {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(e @ Value::Object(_)) => Some(str_of(e, "message").or_else(|| str_of(e, "code")).unwrap_or_else(|| e.to_string())),
        _ => None,
    };
    let status = v.get("status").and_then(Value::as_str);
    let outcome = match (error, status) {
        (Some(error), _) => HostedOutcome::Failed { exit: None, error },
        (None, Some(s @ ("failed" | "incomplete"))) => HostedOutcome::Failed { exit: None, error: format!("status {s}") },
        // still running when the row was written: no outcome yet
        (None, Some("in_progress" | "searching" | "interpreting" | "generating" | "calling")) if text.is_empty() => HostedOutcome::NoResult,
        _ => HostedOutcome::Ok { exit: None },
    };
    let text = match &outcome {
        HostedOutcome::Failed { error, .. } => failed_text(if ty == "mcp_call" { "mcp call" } else { &tool }, error),
        _ => text,
    };
    Some(HostedCall { call_id, tool, arguments, query, text, outcome })
}

/// One provider-run tool result, as memory reads it (M-1): an Anthropic server tool's
/// result block (`web_search_tool_result`, `web_fetch_tool_result`, a
/// `*code_execution_tool_result`, an `mcp_tool_result`) with the call block of its id,
/// an OpenAI Responses hosted item with an output (`mcp_call`, ...), a Gemini code run,
/// an AI SDK provider-executed result ([`hosted_calls`] gives them all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSearch {
    /// The id of the call the result answers ([`HostedCall::call_id`]).
    pub call_id: String,
    /// The tool's name ([`HostedCall::tool`]: `web_search`, `<server>.<tool>`, ...).
    pub tool: String,
    /// What the call was asked ([`HostedCall::query`]): its query, URL, code, command,
    /// or an MCP call's arguments, when it has one.
    pub query: Option<String>,
    /// The result as text ([`HostedCall::text`]): for a web search one line per
    /// `web_search_result`, `<title> (<url>)`, then `, page age <age>` when given; for a
    /// failure `<tool> failed: <error>` (`web search failed: max_uses_exceeded`).
    pub text: String,
}

impl From<HostedCall> for ServerSearch {
    fn from(c: HostedCall) -> ServerSearch {
        ServerSearch { call_id: c.call_id, tool: c.tool, query: c.query, text: c.text }
    }
}

/// The server web searches, web fetches and code runs of an Anthropic message
/// ([`ServerSearch`], one per result block, in order of their calls) and one line per
/// citation of its text blocks: `[cited: "<cited_text>" from <title> (<url>)]` (the
/// title, the `url` or `source`, `document_title` of a document citation, as far as
/// given). The view keeps these blocks opaque (the provider needs them whole); this is
/// what memory reads of a folded one. Transcript text: nothing here is an instruction.
pub fn server_search(raw: &Value) -> (Vec<ServerSearch>, Vec<String>) {
    let blocks = raw.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let memory_kinds = ["web_search", "web_fetch", "code_execution", "bash_code_execution", "text_editor_code_execution"];
    let answered: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str).is_some_and(|t| memory_kinds.iter().any(|k| t.strip_suffix("_tool_result") == Some(*k))))
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .collect();
    let searches = anthropic_calls(raw).into_iter().filter(|c| c.outcome != HostedOutcome::NoResult && answered.contains(&c.call_id.as_str())).map(ServerSearch::from).collect();
    let mut citations = Vec::new();
    for b in blocks.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("text")) {
        for c in b.get("citations").and_then(Value::as_array).into_iter().flatten() {
            let Some(cited) = str_of(c, "cited_text") else { continue };
            let title = str_of(c, "title").or_else(|| str_of(c, "document_title"));
            let at = str_of(c, "url").or_else(|| str_of(c, "source"));
            let from = match (title, at) {
                (Some(t), Some(u)) => format!(" from {t} ({u})"),
                (Some(x), None) | (None, Some(x)) => format!(" from {x}"),
                (None, None) => String::new(),
            };
            citations.push(format!("[cited: \"{}\"{from}]", cited.trim()));
        }
    }
    (searches, citations)
}
