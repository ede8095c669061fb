//! Issue 13, Y-5: calls the provider runs itself (Anthropic `server_tool_use` with its
//! `*_tool_result`, `mcp_tool_use` / `mcp_tool_result`; OpenAI Responses `mcp_call`,
//! `web_search_call`, `file_search_call`, `code_interpreter_call`,
//! `image_generation_call`) are opaque items, not tool-call blocks. The handoff's §4
//! names each with its outcome, a failed one as failed, and the in-run ledger names
//! them as run (or ran and failed); the rewrite keeps the pairing valid.

mod common;
use common::*;
use context_compactor::config::{Config, Profile};
use context_compactor::formats::{self, validate_pairing, Format};
use context_compactor::select::Stage;
use context_compactor::state::SessionState;
use context_compactor::summarize::facts::Facts;
use context_compactor::summarize::{self, handoff_summary};
use context_compactor::transcript::Message;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

/// The section of a handoff summary by its number (up to the next section header).
fn section(text: &str, n: usize) -> String {
    let h = summarize::section_header(n);
    let start = text.find(&h).unwrap_or_else(|| panic!("section {n} in\n{text}")) + h.len();
    let end = text[start..].find("\n[§").map(|e| start + e).unwrap_or(text.len());
    text[start..end].to_string()
}

/// Asserts that `text` holds each of `lines`.
fn has_lines(text: &str, lines: &[&str]) {
    for l in lines {
        assert!(text.contains(l), "{l} in\n{text}");
    }
}

/// The facts of `doc`'s rows and the handoff summary written from them.
fn handoff_of(format: Format, doc: Value) -> (Facts, String) {
    let t = formats::decode(format, doc).expect("decode");
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    let f = Facts::read(&rows, &|_, _, _| None);
    let s = handoff_summary(&f, 16_384);
    (f, s)
}

/// One Anthropic assistant turn that ran a web search (ok), a second one the provider
/// refused (`max_uses_exceeded`), a fetch, a code run that exited 1 and an MCP tool
/// whose result is an error, each with its result block in the same message.
fn anthropic_server_turn() -> Value {
    json!({ "role": "assistant", "content": [
        { "type": "text", "text": "I'll search first." },
        { "type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": { "query": "tokio 1.40 release notes" } },
        { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            { "type": "web_search_result", "url": "https://tokio.rs/blog/2024-08-tokio-1-40", "title": "Tokio 1.40", "encrypted_content": "Eo8BCioIAhgB", "page_age": "August 30, 2024" }
        ] },
        { "type": "server_tool_use", "id": "srvtoolu_02", "name": "web_search", "input": { "query": "tokio 1.41 release notes" } },
        { "type": "web_search_tool_result", "tool_use_id": "srvtoolu_02", "content": { "type": "web_search_tool_result_error", "error_code": "max_uses_exceeded" } },
        { "type": "server_tool_use", "id": "srvtoolu_03", "name": "web_fetch", "input": { "url": "https://tokio.rs/blog/2024-08-tokio-1-40" } },
        { "type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_03", "content": { "type": "web_fetch_result", "url": "https://tokio.rs/blog/2024-08-tokio-1-40", "content": { "type": "document", "source": { "type": "text", "media_type": "text/plain", "data": "Tokio 1.40 adds a new JoinSet API." } } } },
        { "type": "server_tool_use", "id": "srvtoolu_04", "name": "code_execution", "input": { "code": "import tokio_stats; print(tokio_stats.count())" } },
        { "type": "code_execution_tool_result", "tool_use_id": "srvtoolu_04", "content": { "type": "code_execution_result", "stdout": "", "stderr": "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'tokio_stats'", "return_code": 1 } },
        { "type": "mcp_tool_use", "id": "mcptoolu_05", "name": "create_issue", "server_name": "github", "input": { "title": "JoinSet docs" } },
        { "type": "mcp_tool_result", "tool_use_id": "mcptoolu_05", "is_error": true, "content": [{ "type": "text", "text": "403 Forbidden: token lacks repo scope" }] },
        { "type": "text", "text": "Tokio 1.40 added JoinSet." }
    ] })
}

#[test]
fn y5_anthropic_server_and_mcp_calls_are_named_in_the_handoff_with_their_outcomes() {
    let doc = json!({ "system": "s", "messages": [
        { "role": "user", "content": "What changed in tokio 1.40? File an issue about the docs." },
        anthropic_server_turn(),
        { "role": "user", "content": "thanks" }
    ] });
    let (f, s) = handoff_of(Format::Anthropic, doc);
    let ids: Vec<&str> = f.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["srvtoolu_01", "srvtoolu_02", "srvtoolu_03", "srvtoolu_04", "mcptoolu_05"]);
    let failed: Vec<&str> = f.calls.iter().filter(|c| c.outcome.failed()).map(|c| c.id.as_str()).collect();
    assert_eq!(failed, ["srvtoolu_02", "srvtoolu_04", "mcptoolu_05"]);
    let c = section(&s, 4);
    has_lines(&c, &[
        "- web_search({\"query\":\"tokio 1.40 release notes\"}) -> ok",
        "- web_search({\"query\":\"tokio 1.41 release notes\"}) -> failed: max_uses_exceeded",
        "- web_fetch({\"url\":\"https://tokio.rs/blog/2024-08-tokio-1-40\"}) -> ok",
        "- code_execution({\"code\":\"import tokio_stats; print(tokio_stats.count())\"}) -> failed (exit 1): Traceback",
        "- github.create_issue({\"title\":\"JoinSet docs\"}) -> failed: 403 Forbidden: token lacks repo scope",
    ]);
    // §5: the failed run's root cause is the exception its traceback ends with
    let e = section(&s, 5);
    assert!(e.contains("ModuleNotFoundError: No module named 'tokio_stats'"), "{e}");
    assert!(e.contains("max_uses_exceeded"), "{e}");
}

/// The Responses hosted-tool items, each one item holding the call and its outcome.
fn responses_hosted_items() -> Vec<Value> {
    vec![
        json!({ "type": "mcp_call", "id": "mcp_1", "server_label": "jira", "name": "search_issues", "arguments": "{\"jql\":\"status=open\"}", "output": "OPS-1: Prod outage in billing" }),
        json!({ "type": "mcp_call", "id": "mcp_2", "server_label": "jira", "name": "get_issue", "arguments": "{\"key\":\"OPS-2\"}", "error": "Jira 401: token expired" }),
        json!({ "type": "web_search_call", "id": "ws_1", "status": "completed", "action": { "type": "search", "query": "billing outage status page" } }),
        json!({ "type": "web_search_call", "id": "ws_2", "status": "failed", "action": { "type": "search", "query": "billing vendor sla" } }),
        json!({ "type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["runbook billing"], "results": [{ "file_id": "file-1", "filename": "runbook.md", "score": 0.9, "text": "Restart the billing worker." }] }),
        json!({ "type": "code_interpreter_call", "id": "ci_1", "status": "incomplete", "code": "df = load('billing.csv')", "container_id": "cntr_1", "outputs": null }),
        json!({ "type": "image_generation_call", "id": "ig_1", "status": "completed", "revised_prompt": "a chart of billing errors", "result": "iVBORw0KGgo=" }),
    ]
}

#[test]
fn y5_responses_hosted_items_are_named_in_the_handoff_with_their_outcomes() {
    let mut items = vec![json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Triage the billing outage." }] })];
    items.extend(responses_hosted_items());
    items.push(json!({ "type": "message", "role": "assistant", "content": [{ "type": "output_text", "text": "Billing worker restart is the runbook fix." }] }));
    let (f, s) = handoff_of(Format::OpenaiResponses, Value::Array(items));
    let named: Vec<(&str, &str, bool)> = f.calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.outcome.failed())).collect();
    assert_eq!(
        named,
        [
            ("mcp_1", "jira.search_issues", false),
            ("mcp_2", "jira.get_issue", true),
            ("ws_1", "web_search", false),
            ("ws_2", "web_search", true),
            ("fs_1", "file_search", false),
            ("ci_1", "code_interpreter", true),
            ("ig_1", "image_generation", false)
        ]
    );
    let c = section(&s, 4);
    has_lines(&c, &[
        "- jira.search_issues({\"jql\":\"status=open\"}) -> ok",
        "- jira.get_issue({\"key\":\"OPS-2\"}) -> failed: Jira 401: token expired",
        "- web_search({\"type\":\"search\",\"query\":\"billing outage status page\"}) -> ok",
        "- web_search({\"type\":\"search\",\"query\":\"billing vendor sla\"}) -> failed: status failed",
        "- file_search({\"queries\":[\"runbook billing\"]}) -> ok",
        "- code_interpreter({\"code\":\"df = load('billing.csv')\"}) -> failed: status incomplete",
        "- image_generation({\"revised_prompt\":\"a chart of billing errors\"}) -> ok",
    ]);
}

/// A call still running when its row was written has no outcome yet: not named ok.
#[test]
fn y5_a_hosted_call_without_its_result_is_no_result_not_ok() {
    let items = vec![
        json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "search it" }] }),
        json!({ "type": "web_search_call", "id": "ws_9", "status": "in_progress", "action": { "type": "search", "query": "x" } }),
    ];
    let (f, _) = handoff_of(Format::OpenaiResponses, Value::Array(items));
    assert_eq!(f.calls.len(), 1);
    assert_eq!(f.calls[0].outcome.describe(), "no result in the folded rows");
    let doc = json!({ "messages": [
        { "role": "user", "content": "search it" },
        { "role": "assistant", "content": [{ "type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": { "query": "x" } }] }
    ] });
    let (f, _) = handoff_of(Format::Anthropic, doc);
    assert_eq!(f.calls.iter().map(|c| (c.id.as_str(), c.outcome.describe())).collect::<Vec<_>>(), [("srvtoolu_9", "no result in the folded rows".to_string())]);
}

fn meerkat() -> Config {
    Config::preset(Profile::Meerkat)
}

fn forced() -> Signals {
    Signals { force: true, ..Signals::default() }
}

/// Y-5 in a Meerkat run (stage 2): each round of the open run runs a provider web search
/// and a client call; the round of `failed_search` is refused by the provider. The
/// ledger of the folded rounds names every server search, the refused one as ran and
/// failed, and the rewrite pairs.
#[test]
fn y5_in_run_ledger_names_provider_run_calls_as_run_and_failed() {
    let failed_search = 2;
    let mut rows = vec![json!({ "role": "user", "content": "Compare the tokio releases 1.38 to 1.41 and write notes/tokio.md." })];
    for k in 1..=4 {
        let result = if k == failed_search {
            json!({ "type": "web_search_tool_result", "tool_use_id": format!("srvtoolu_{k}"), "content": { "type": "web_search_tool_result_error", "error_code": "too_many_requests" } })
        } else {
            json!({ "type": "web_search_tool_result", "tool_use_id": format!("srvtoolu_{k}"), "content": [{ "type": "web_search_result", "url": format!("https://tokio.rs/blog/1-{}", 37 + k), "title": format!("Tokio 1.{}", 37 + k), "encrypted_content": "Eo8B" }] })
        };
        rows.push(json!({ "role": "assistant", "content": [
            { "type": "server_tool_use", "id": format!("srvtoolu_{k}"), "name": "web_search", "input": { "query": format!("tokio 1.{} release", 37 + k) } },
            result,
            { "type": "tool_use", "id": format!("toolu_{k}"), "name": "append_notes", "input": { "text": format!("release 1.{}", 37 + k) } }
        ] }));
        rows.push(json!({ "role": "user", "content": [{ "type": "tool_result", "tool_use_id": format!("toolu_{k}"), "content": format!("appended {}", "n".repeat(300)) }] }));
    }
    let doc = json!({ "system": "You are a careful agent.", "messages": rows });
    let (o, _) = compact_with(Format::Anthropic, doc, meerkat(), SessionState::default(), forced(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    assert_eq!(o.rewrite.as_ref().map(|r| r.stage), Some(Stage::InRun));
    validate_pairing(&o.transcript).expect("pairing intact");
    let led = &o.state.ledger;
    let servers: Vec<(&str, bool)> = led.iter().filter(|c| c.name == "web_search").map(|c| (c.call_id.as_str(), c.failed)).collect();
    // the folded rounds (all but the newest), each server search with its outcome
    assert_eq!(servers, [("srvtoolu_1", false), ("srvtoolu_2", true), ("srvtoolu_3", false)], "{led:?}");
    assert!(led.iter().any(|c| c.call_id == "toolu_1"), "client calls stay named: {led:?}");
    let s = &o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).expect("summary").text;
    assert!(s.contains("- web_search({\"query\":\"tokio 1.39 release\"}) [srvtoolu_2]: ran and failed (may be made again): too_many_requests"), "{s}");
    assert!(s.contains("- web_search({\"query\":\"tokio 1.38 release\"}) [srvtoolu_1]: already run"), "{s}");
    // the stored rewrite decodes again: each kept server item is still with its result
    let stored = out_messages(&o);
    let again = formats::decode(Format::Anthropic, json!({ "system": "You are a careful agent.", "messages": stored })).expect("decodes");
    validate_pairing(&again).expect("pairing intact after a round trip");
}

/// Y-5 in a Meerkat run over Responses items: a failed `mcp_call` in a folded round is
/// in the ledger as ran and failed, a completed one as run.
#[test]
fn y5_in_run_ledger_names_responses_mcp_calls() {
    let mut items = vec![json!({ "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "Close the resolved Jira issues." }] })];
    for k in 1..=4 {
        let mut call = json!({ "type": "mcp_call", "id": format!("mcp_{k}"), "server_label": "jira", "name": "close_issue", "arguments": format!("{{\"key\":\"OPS-{k}\"}}") });
        if k == 1 {
            call["error"] = json!("Jira 409: issue already closed");
        } else {
            call["output"] = json!(format!("closed OPS-{k}"));
        }
        items.push(call);
        items.push(json!({ "type": "function_call", "call_id": format!("fc_{k}"), "name": "log", "arguments": format!("{{\"line\":{k}}}") }));
        items.push(json!({ "type": "function_call_output", "call_id": format!("fc_{k}"), "output": format!("logged {}", "l".repeat(300)) }));
    }
    let (o, _) = compact_with(Format::OpenaiResponses, Value::Array(items), meerkat(), SessionState::default(), forced(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    validate_pairing(&o.transcript).expect("pairing intact");
    let mcp: Vec<(&str, &str, bool)> = o.state.ledger.iter().filter(|c| c.name.starts_with("jira.")).map(|c| (c.call_id.as_str(), c.name.as_str(), c.failed)).collect();
    assert!(mcp.len() >= 2, "{:?}", o.state.ledger);
    assert_eq!(mcp[0], ("mcp_1", "jira.close_issue", true));
    assert!(mcp[1..].iter().all(|(_, _, failed)| !failed), "{mcp:?}");
    let s = &o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).expect("summary").text;
    assert!(s.contains("[mcp_1]: ran and failed (may be made again): Jira 409: issue already closed"), "{s}");
}

// ---------------------------------------------------------------- E-2: the summarizer's copy

/// A forced default-profile fold of `doc` (the newest turn kept) whose summarize hook
/// records each request it is given: the outcome and the text of the first request.
fn summarizer_input(format: Format, doc: Value) -> (context_compactor::engine::Outcome, String) {
    // a summarizer window and share that take the folded rows whole (no row clipped)
    let config = Config::from_options(&json!({ "profile": "default", "contextWindow": 16_000, "preserveRecentTurns": 1, "summarizerContextWindow": 200_000, "summaryInputShare": 1.0 })).expect("config");
    let (o, seen) = compact_with(format, doc, config, SessionState::default(), forced(), fake_summary);
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let first = seen.first().expect("the summarize hook was called");
    assert_eq!((first.kind.as_str(), first.coverage.as_str()), ("summary", "whole"));
    (o, first.messages.iter().map(|m| m.content.as_str()).collect())
}

/// Ten long question-and-answer rounds after the rows under test, so those fold.
fn filler(user: impl Fn(String) -> Value, assistant: impl Fn(String) -> Value) -> Vec<Value> {
    (0..10).flat_map(|i| [user(format!("next question {i}")), assistant(format!("answer {i} {}", "w".repeat(2_500)))]).collect()
}

/// E-2, Y-5: the copy of the folded rows the host's summarizer gets renders each Anthropic
/// provider-run call as a call (tool, id, arguments) with its result and status: ok with
/// the search results, failed with the error (a code run with its exit code and stderr),
/// never an `[server_tool_use item]` placeholder.
#[test]
fn e2_y5_summarizer_input_renders_anthropic_provider_calls_with_their_outcomes() {
    let mut rows = vec![json!({ "role": "user", "content": "What changed in tokio 1.40? File an issue about the docs." }), anthropic_server_turn()];
    rows.extend(filler(|t| json!({ "role": "user", "content": t }), |t| json!({ "role": "assistant", "content": t })));
    let (_, text) = summarizer_input(Format::Anthropic, json!({ "system": "s", "messages": rows }));
    has_lines(&text, &[
        "[#1 assistant]\nI'll search first.\n-> call web_search (id srvtoolu_01, run by the provider) {\"query\":\"tokio 1.40 release notes\"}\n<- result of web_search srvtoolu_01 ok:\nTokio 1.40 (https://tokio.rs/blog/2024-08-tokio-1-40), page age August 30, 2024\n",
        "-> call web_search (id srvtoolu_02, run by the provider) {\"query\":\"tokio 1.41 release notes\"}\n<- result of web_search srvtoolu_02 ERROR: max_uses_exceeded\n-> call web_fetch",
        "<- result of web_fetch srvtoolu_03 ok:\nfetched https://tokio.rs/blog/2024-08-tokio-1-40\nTokio 1.40 adds a new JoinSet API.\n",
        "<- result of code_execution srvtoolu_04 ERROR (exit 1): Traceback (most recent call last):\nstderr:\nTraceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'tokio_stats'\nreturn code 1\n",
        "-> call github.create_issue (id mcptoolu_05, run by the provider) {\"title\":\"JoinSet docs\"}\n<- result of github.create_issue mcptoolu_05 ERROR: 403 Forbidden: token lacks repo scope\nTokio 1.40 added JoinSet.",
    ]);
    assert!(!text.contains("_tool_use item]") && !text.contains("_tool_result item]"), "{text}");
}

/// E-2: a provider-run call's arguments are bounded as a client call's are (300 bytes of
/// head, 100 of tail), and its result waiting for no block in the row is said to be missing.
#[test]
fn e2_provider_call_arguments_are_clipped_and_a_missing_result_is_named() {
    let code = format!("print('{}')", "x".repeat(3_000));
    let mut rows = vec![
        json!({ "role": "user", "content": "run it" }),
        json!({ "role": "assistant", "content": [{ "type": "server_tool_use", "id": "srvtoolu_7", "name": "code_execution", "input": { "code": code } }] }),
    ];
    rows.extend(filler(|t| json!({ "role": "user", "content": t }), |t| json!({ "role": "assistant", "content": t })));
    let (_, text) = summarizer_input(Format::Anthropic, json!({ "messages": rows }));
    let line = text.lines().find(|l| l.starts_with("-> call code_execution (id srvtoolu_7, run by the provider) {\"code\":\"print('xxx")).expect(&text);
    assert!(line.len() < 400, "the arguments' head only: {} bytes", line.len());
    assert!(text.contains("[... clipped: 2") && text.contains("xxx')\"}\n<- result of code_execution srvtoolu_7: no result in this row"), "{text}");
}

/// E-2, Y-5: the Responses hosted items in the summarizer's copy: each named with its
/// arguments and outcome (an MCP call's output, a failed item's error or status, a file
/// search's results, a search still running as no result).
#[test]
fn e2_y5_summarizer_input_renders_responses_hosted_items_with_their_outcomes() {
    let msg = |role: &str, part: &str, t: String| json!({ "type": "message", "role": role, "content": [{ "type": part, "text": t }] });
    let mut items = vec![msg("user", "input_text", "Triage the billing outage.".into())];
    items.extend(responses_hosted_items());
    items.push(json!({ "type": "web_search_call", "id": "ws_3", "status": "in_progress", "action": { "type": "search", "query": "billing vendor status" } }));
    items.push(msg("assistant", "output_text", "Billing worker restart is the runbook fix.".into()));
    items.extend(filler(|t| msg("user", "input_text", t), |t| msg("assistant", "output_text", t)));
    let (_, text) = summarizer_input(Format::OpenaiResponses, Value::Array(items));
    has_lines(&text, &[
        "-> call jira.search_issues (id mcp_1, run by the provider) {\"jql\":\"status=open\"}\n<- result of jira.search_issues mcp_1 ok:\nOPS-1: Prod outage in billing\n",
        "-> call jira.get_issue (id mcp_2, run by the provider) {\"key\":\"OPS-2\"}\n<- result of jira.get_issue mcp_2 ERROR: Jira 401: token expired\n",
        "-> call web_search (id ws_1, run by the provider) {\"type\":\"search\",\"query\":\"billing outage status page\"}\n<- result of web_search ws_1 ok\n",
        "<- result of web_search ws_2 ERROR: status failed\n",
        "-> call file_search (id fs_1, run by the provider) {\"queries\":[\"runbook billing\"]}\n<- result of file_search fs_1 ok:\nrunbook.md: Restart the billing worker.\n",
        "-> call code_interpreter (id ci_1, run by the provider) {\"code\":\"df = load('billing.csv')\"}\n<- result of code_interpreter ci_1 ERROR: status incomplete\n",
        "<- result of image_generation ig_1 ok\n",
        "<- result of web_search ws_3: no result in this row\n",
    ]);
    assert!(!text.contains("_call item]"), "{text}");
}

// ---------------------------------------------------------------- Gemini and AI SDK

/// A Gemini model turn that ran code three times: ok, failed with a traceback, and over
/// its deadline; the second pair in snake_case and with ids, as the REST API allows.
fn gemini_code_turn() -> Value {
    json!({ "role": "model", "parts": [
        { "text": "Let me compute it." },
        { "executableCode": { "language": "PYTHON", "code": "print(sum(range(10)))" } },
        { "codeExecutionResult": { "outcome": "OUTCOME_OK", "output": "45\n" } },
        { "executable_code": { "id": "ec_2", "language": "PYTHON", "code": "import pandas_ta" } },
        { "code_execution_result": { "id": "ec_2", "outcome": "OUTCOME_FAILED", "output": "Traceback (most recent call last):\nModuleNotFoundError: No module named 'pandas_ta'" } },
        { "executableCode": { "language": "PYTHON", "code": "while True: pass" } },
        { "codeExecutionResult": { "outcome": "OUTCOME_DEADLINE_EXCEEDED" } },
        { "text": "The sum is 45." }
    ] })
}

/// Y-5: Gemini's server-side code runs are calls of the handoff, each with its outcome (a
/// failed run with its error, a run over its deadline as failed); the parts stay opaque.
#[test]
fn y5_gemini_code_execution_parts_are_named_in_the_handoff_with_their_outcomes() {
    let doc = json!({ "contents": [
        { "role": "user", "parts": [{ "text": "Sum 0..9, then try pandas_ta." }] },
        gemini_code_turn(),
        { "role": "user", "parts": [{ "text": "thanks" }] }
    ] });
    let (f, s) = handoff_of(Format::Gemini, doc);
    let named: Vec<(&str, &str, String)> = f.calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.outcome.describe())).collect();
    assert_eq!(named.iter().map(|n| (n.0, n.1)).collect::<Vec<_>>(), [("gemini-pos:code_execution:0", "code_execution"), ("ec_2", "code_execution"), ("gemini-pos:code_execution:2", "code_execution")], "{named:?}");
    let failed: Vec<bool> = f.calls.iter().map(|c| c.outcome.failed()).collect();
    assert_eq!(failed, [false, true, true]);
    has_lines(&section(&s, 4), &[
        "- code_execution({\"language\":\"PYTHON\",\"code\":\"print(sum(range(10)))\"}) -> ok",
        "- code_execution({\"id\":\"ec_2\",\"language\":\"PYTHON\",\"code\":\"import pandas_ta\"}) -> failed: Traceback",
        "- code_execution({\"language\":\"PYTHON\",\"code\":\"while True: pass\"}) -> failed: deadline exceeded",
    ]);
    assert!(section(&s, 5).contains("ModuleNotFoundError: No module named 'pandas_ta'"), "{s}");
}

/// An AI SDK assistant message with provider-executed tools (a web search that returned
/// results, a code run whose result is an error, a fetch still running) beside a client
/// call answered in the next `tool` message.
fn ai_sdk_provider_turn() -> Vec<Value> {
    vec![
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Searching." },
            { "type": "tool-call", "toolCallId": "ws_1", "toolName": "web_search", "input": { "query": "zod 4 release" }, "providerExecuted": true },
            { "type": "tool-result", "toolCallId": "ws_1", "toolName": "web_search", "output": { "type": "json", "value": [{ "url": "https://zod.dev/v4", "title": "Zod 4" }] }, "providerExecuted": true },
            { "type": "tool-call", "toolCallId": "ce_1", "toolName": "code_execution", "input": { "code": "import zod" }, "providerExecuted": true },
            { "type": "tool-result", "toolCallId": "ce_1", "toolName": "code_execution", "output": { "type": "error-text", "value": "ModuleNotFoundError: No module named 'zod'" }, "providerExecuted": true },
            { "type": "tool-call", "toolCallId": "wf_1", "toolName": "web_fetch", "input": { "url": "https://zod.dev/v4/changelog" }, "providerExecuted": true },
            { "type": "tool-call", "toolCallId": "c1", "toolName": "write_file", "input": { "path": "notes/zod.md" } }
        ] }),
        json!({ "role": "tool", "content": [{ "type": "tool-result", "toolCallId": "c1", "toolName": "write_file", "output": { "type": "text", "value": "written" } }] }),
    ]
}

/// Y-5: AI SDK provider-executed tool calls are calls of the handoff with the outcome of
/// their in-message `tool-result` (an `error-text` one failed, a missing one no result),
/// beside the client call; the parts stay opaque and the transcript pairs.
#[test]
fn y5_ai_sdk_provider_executed_calls_are_named_in_the_handoff_with_their_outcomes() {
    let mut rows = vec![json!({ "role": "user", "content": "What is new in zod 4? Note it." })];
    rows.extend(ai_sdk_provider_turn());
    rows.push(json!({ "role": "user", "content": "thanks" }));
    let doc = json!({ "messages": rows });
    let t = formats::decode(Format::AiSdk, doc.clone()).expect("decode");
    validate_pairing(&t).expect("pairing");
    let (f, s) = handoff_of(Format::AiSdk, doc);
    let named: Vec<(&str, &str, String)> = f.calls.iter().map(|c| (c.id.as_str(), c.name.as_str(), c.outcome.describe())).collect();
    assert_eq!(named.iter().map(|n| (n.0, n.1)).collect::<Vec<_>>(), [("ws_1", "web_search"), ("ce_1", "code_execution"), ("wf_1", "web_fetch"), ("c1", "write_file")], "{named:?}");
    assert_eq!(f.calls.iter().map(|c| c.outcome.failed()).collect::<Vec<_>>(), [false, true, false, false]);
    assert_eq!(named[2].2, "no result in the folded rows");
    has_lines(&section(&s, 4), &[
        "- web_search({\"query\":\"zod 4 release\"}) -> ok",
        "- code_execution({\"code\":\"import zod\"}) -> failed: ModuleNotFoundError: No module named 'zod'",
    ]);
}

/// The rows of a Meerkat run of four rounds in `format`, each round a provider-run call
/// (round `failed` failing) beside a client call and its result.
fn provider_rounds(format: Format, failed: usize) -> Value {
    let mut rows = Vec::new();
    match format {
        Format::Gemini => {
            rows.push(json!({ "role": "user", "parts": [{ "text": "Benchmark the four parsers and log each." }] }));
            for k in 1..=4 {
                let result = if k == failed { json!({ "outcome": "OUTCOME_FAILED", "output": format!("Traceback (most recent call last):\nImportError: parser{k}") }) } else { json!({ "outcome": "OUTCOME_OK", "output": format!("parser{k}: 12ms") }) };
                rows.push(json!({ "role": "model", "parts": [
                    { "executableCode": { "language": "PYTHON", "code": format!("bench('parser{k}')") } },
                    { "codeExecutionResult": result },
                    { "functionCall": { "id": format!("log_{k}"), "name": "log", "args": { "line": k } } }
                ] }));
                rows.push(json!({ "role": "user", "parts": [{ "functionResponse": { "id": format!("log_{k}"), "name": "log", "response": { "output": format!("logged {}", "l".repeat(300)) } } }] }));
            }
            json!({ "systemInstruction": { "parts": [{ "text": "You are a careful agent." }] }, "contents": rows })
        }
        _ => {
            rows.push(json!({ "role": "user", "content": "Search the four parsers and log each." }));
            for k in 1..=4 {
                let output = if k == failed { json!({ "type": "error-json", "value": { "message": format!("search quota hit on parser{k}") } }) } else { json!({ "type": "json", "value": [{ "url": format!("https://parsers.dev/{k}") }] }) };
                rows.push(json!({ "role": "assistant", "content": [
                    { "type": "tool-call", "toolCallId": format!("ws_{k}"), "toolName": "web_search", "input": { "query": format!("parser{k} benchmark") }, "providerExecuted": true },
                    { "type": "tool-result", "toolCallId": format!("ws_{k}"), "toolName": "web_search", "output": output, "providerExecuted": true },
                    { "type": "tool-call", "toolCallId": format!("log_{k}"), "toolName": "log", "input": { "line": k } }
                ] }));
                rows.push(json!({ "role": "tool", "content": [{ "type": "tool-result", "toolCallId": format!("log_{k}"), "toolName": "log", "output": { "type": "text", "value": format!("logged {}", "l".repeat(300)) } }] }));
            }
            json!({ "system": "You are a careful agent.", "messages": rows })
        }
    }
}

/// Y-5, E-2 in a Meerkat run (stage 2) over Gemini code runs and AI SDK provider-executed
/// searches: the ledger names each folded provider-run call, the failed one as ran and
/// failed; the summarizer's copy renders them as calls; the rewrite pairs, and every row
/// it keeps is written back as it came in (the opaque parts unchanged).
#[test]
fn y5_e2_gemini_and_ai_sdk_provider_calls_in_the_in_run_ledger_and_rewrite_lossless() {
    for (format, key, tool) in [(Format::Gemini, "contents", "code_execution"), (Format::AiSdk, "messages", "web_search")] {
        let doc = provider_rounds(format, 2);
        let (o, seen) = compact_with(format, doc.clone(), meerkat(), SessionState::default(), forced(), fake_summary);
        assert_eq!(o.status, "compacted", "{format:?}: {}", o.reason);
        assert_eq!(o.rewrite.as_ref().map(|r| r.stage), Some(Stage::InRun), "{format:?}");
        validate_pairing(&o.transcript).expect("pairing intact");
        let led: Vec<(&str, bool)> = o.state.ledger.iter().filter(|c| c.name == tool).map(|c| (c.call_id.as_str(), c.failed)).collect();
        let want: Vec<(String, bool)> = (1..=3).map(|k| (if format == Format::Gemini { "gemini-pos:code_execution:0".to_string() } else { format!("ws_{k}") }, k == 2)).collect();
        assert_eq!(led.iter().map(|(i, f)| (i.to_string(), *f)).collect::<Vec<_>>(), want, "{format:?}: {:?}", o.state.ledger);
        let s = &o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).expect("summary").text;
        assert!(s.contains("ran and failed (may be made again)"), "{s}");
        let input: String = seen.iter().flat_map(|r| r.messages.iter().map(|m| m.content.clone())).collect();
        assert!(input.contains(&format!("-> call {tool} (id ")) && input.contains(", run by the provider) "), "{input}");
        assert!(!input.contains("tool-call item]") && !input.contains("executableCode item]"), "{input}");
        // lossless: every kept row of the input is in the stored rewrite byte for byte
        let stored = formats::encode(&o.transcript, formats::View::Stored);
        let out = stored.get(key).or(Some(&stored)).and_then(Value::as_array).cloned().expect("rows");
        let kept: Vec<&Value> = doc[key].as_array().unwrap().iter().filter(|r| out.contains(r)).collect();
        assert!(kept.len() >= 3, "{format:?}: the newest round and the request are kept whole: {out:#?}");
        assert!(kept.iter().any(|r| r.to_string().contains("providerExecuted") || r.to_string().contains("executableCode")), "{format:?}: a provider-run row kept as is");
        let again = formats::decode(format, stored).expect("decodes");
        validate_pairing(&again).expect("pairing intact after a round trip");
    }
}

// ---------------------------------------------------------------- M-1: memory

/// A forced default-profile fold of `doc` with session memory on (session `s`): the
/// outcome and its projected records as `memoryRecords: "result"` writes them.
fn folded_records(format: Format, doc: Value) -> (Vec<context_compactor::memory::MemoryRecord>, Vec<Value>) {
    use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
    use context_compactor::output::{MemoryRecords, ResultJson};
    let config = Config::from_options(&json!({ "profile": "default", "contextWindow": 16_000, "preserveRecentTurns": 1 })).expect("config");
    let t = formats::decode(format, doc).expect("decode");
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: forced(), has_summarizer: true }).with_memory("s", false);
    let o = run_sync(&mut job, |_| Reply::Summary { text: "Answered.".into(), usage: None }).expect("job runs");
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let full: Value = serde_json::from_str(&ResultJson { outcome: &o, records: MemoryRecords::Result }.to_pieces(4_096).concat()).expect("result JSON");
    let json = full["memory"]["records"].as_array().cloned().expect("memoryRecords: result carries the records");
    (o.memory.expect("memory batch").records, json)
}

/// M-1: an Anthropic MCP connector call folded away is a `tool_output` record (role tool,
/// tool `<server>.<tool>`, its call id): its output, or `mcp call failed: <error>`, with
/// its arguments as the context; as a Responses `mcp_call`'s output is. Recall finds it.
#[test]
fn m1_anthropic_mcp_tool_results_become_tool_output_records() {
    use context_compactor::memory::{recall, Index, RecordKind};
    use context_compactor::transcript::Role;
    let mut rows = vec![
        json!({ "role": "user", "content": "Which Linear issues block the release? File one about the docs." }),
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Checking Linear." },
            { "type": "mcp_tool_use", "id": "mcptoolu_01", "name": "list_issues", "server_name": "linear", "input": { "label": "release-blocker" } },
            { "type": "mcp_tool_result", "tool_use_id": "mcptoolu_01", "is_error": false, "content": [{ "type": "text", "text": "LIN-42: Flaky checkout webhook retries" }] },
            { "type": "mcp_tool_use", "id": "mcptoolu_02", "name": "create_issue", "server_name": "linear", "input": { "title": "Docs for retries" } },
            { "type": "mcp_tool_result", "tool_use_id": "mcptoolu_02", "is_error": true, "content": [{ "type": "text", "text": "401 Unauthorized: OAuth token expired" }] },
            { "type": "text", "text": "One blocker is open." }
        ] }),
    ];
    rows.extend(filler(|t| json!({ "role": "user", "content": t }), |t| json!({ "role": "assistant", "content": t })));
    let (records, json) = folded_records(Format::Anthropic, json!({ "system": "s", "messages": rows }));
    let of = |id: &str| records.iter().find(|r| r.call_id.as_deref() == Some(id) && r.kind == RecordKind::ToolOutput).unwrap_or_else(|| panic!("{id} in {records:#?}"));
    let ok = of("mcptoolu_01");
    assert_eq!((ok.role, ok.tool_name.as_deref(), ok.content.as_str()), (Role::Tool, Some("linear.list_issues"), "LIN-42: Flaky checkout webhook retries"));
    assert!(ok.context.as_deref().is_some_and(|c| c.starts_with("linear.list_issues: {\"label\":\"release-blocker\"}")), "{:?}", ok.context);
    let failed = of("mcptoolu_02");
    assert_eq!((failed.tool_name.as_deref(), failed.content.as_str()), (Some("linear.create_issue"), "mcp call failed: 401 Unauthorized: OAuth token expired"));
    // memoryRecords: "result" carries the same records as data
    let j = json.iter().find(|r| r["callId"] == "mcptoolu_01").unwrap_or_else(|| panic!("{json:#?}"));
    assert_eq!((&j["toolName"], &j["content"]), (&json!("linear.list_issues"), &json!("LIN-42: Flaky checkout webhook retries")));
    let mut index = Index::new();
    index.add(records).expect("index");
    let hits = recall(&index, "s", "which Linear issue was the release blocker about checkout webhook retries?", Some(3)).hits;
    assert!(hits.iter().any(|h| h.call_id.as_deref() == Some("mcptoolu_01")), "{hits:#?}");
}

/// M-1: the other provider-run results of a folded row reach memory too: a Gemini code
/// run's output and an AI SDK provider-executed tool's result, under the tool's name and
/// the call's id; a provider-run call with no result gives no record.
#[test]
fn m1_gemini_and_ai_sdk_provider_run_results_become_tool_output_records() {
    let mut contents = vec![json!({ "role": "user", "parts": [{ "text": "Sum 0..9, then try pandas_ta." }] }), gemini_code_turn()];
    contents.extend(filler(|t| json!({ "role": "user", "parts": [{ "text": t }] }), |t| json!({ "role": "model", "parts": [{ "text": t }] })));
    let (records, _) = folded_records(Format::Gemini, json!({ "contents": contents }));
    let of = |id: &str| records.iter().find(|r| r.call_id.as_deref() == Some(id)).map(|r| (r.tool_name.clone().unwrap_or_default(), r.content.clone()));
    assert_eq!(of("gemini-pos:code_execution:0"), Some(("code_execution".into(), "45\n".into())), "{records:#?}");
    assert_eq!(of("ec_2").map(|x| x.1), Some("Traceback (most recent call last):\nModuleNotFoundError: No module named 'pandas_ta'".into()));
    assert_eq!(of("gemini-pos:code_execution:2").map(|x| x.1), Some("code_execution failed: deadline exceeded".into()));

    let mut rows = vec![json!({ "role": "user", "content": "What is new in zod 4? Note it." })];
    rows.extend(ai_sdk_provider_turn());
    rows.extend(filler(|t| json!({ "role": "user", "content": t }), |t| json!({ "role": "assistant", "content": t })));
    let (records, _) = folded_records(Format::AiSdk, json!({ "messages": rows }));
    let of = |id: &str| records.iter().find(|r| r.call_id.as_deref() == Some(id) && r.role == context_compactor::transcript::Role::Tool).map(|r| (r.tool_name.clone().unwrap_or_default(), r.content.clone()));
    assert_eq!(of("ws_1"), Some(("web_search".into(), "[{\"url\":\"https://zod.dev/v4\",\"title\":\"Zod 4\"}]".into())), "{records:#?}");
    assert_eq!(of("ce_1").map(|x| x.1), Some("code_execution failed: ModuleNotFoundError: No module named 'zod'".into()));
    assert_eq!(of("wf_1"), None, "no result, no record");
}

/// Y-8, E-2: a row holding a provider-run call's output is a tool-output row of the
/// summarize request: over the budget it is clipped first (stage 1), and a long row of
/// plain assistant text stays whole; both ways of building the request agree.
#[test]
fn y8_e2_a_provider_run_output_is_clipped_first_like_a_tool_output() {
    use context_compactor::summarize::{render_rows, summary_request, summary_request_for};
    let report = format!("ticket dump {}", "t".repeat(8_000));
    let doc = json!({ "messages": [
        { "role": "user", "content": "Dump the open tickets." },
        { "role": "assistant", "content": [
            { "type": "mcp_tool_use", "id": "mcptoolu_9", "name": "dump", "server_name": "jira", "input": {} },
            { "type": "mcp_tool_result", "tool_use_id": "mcptoolu_9", "content": [{ "type": "text", "text": report }] }
        ] },
        { "role": "assistant", "content": format!("My reading: {}", "r".repeat(3_000)) }
    ] });
    let t = formats::decode(Format::Anthropic, doc).expect("decode");
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    let mut cfg = meerkat();
    cfg.bytes_per_token = 1;
    cfg.summary_max_output_tokens = 100;
    cfg.summary_input_share = 1.0;
    cfg.summarizer_context_window = Some(6_000 + 100 + 3 + 64);
    let lazy = summary_request_for(&rows, &cfg, "sys");
    assert_eq!(lazy, summary_request(render_rows(&rows), &cfg, "sys"), "rendered first and rendered on demand");
    let body = &lazy.messages[0].content;
    assert_eq!(lazy.coverage, "trimmed");
    let hosted = body.split("\n\n[#2 assistant]").next().expect(body);
    assert!(hosted.contains("<- result of jira.dump mcptoolu_9 ok:\nticket dump ttt") && hosted.contains(" bytes clipped ...]"), "{body}");
    assert!(body.contains(&format!("[#2 assistant]\nMy reading: {}\n</transcript>", "r".repeat(3_000))), "the plain row is whole: {body}");
}
