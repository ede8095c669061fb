//! Reading a tool result as a failed call (Y-5: the handoff names every call, a failed
//! one as ran and failed, in "errors and how they were resolved"; N-5: the line a failed
//! call is named by). The format decoders decide it (OpenAI Chat's typed and `Value`
//! paths alike, Responses), with the tool's name looked up from its call (E-2 keeps the
//! rows themselves unchanged).

mod common;
use context_compactor::formats::failure::{json_error, result_reports_failure, text_reports_failure};
use context_compactor::formats::import::{import, sniff};
use context_compactor::formats::{decode, decode_text, Format};
use context_compactor::live::LiveTranscript;
use context_compactor::summarize::facts::{error_line, Facts};
use context_compactor::summarize::{handoff_summary, section_header};
use context_compactor::transcript::{Block, Message, Transcript};
use serde_json::{json, Value};

/// `(call id, is_error)` of every tool result of a transcript, in order.
fn results(t: &Transcript) -> Vec<(String, bool)> {
    t.messages.iter().flat_map(|m| m.blocks.iter()).filter_map(|b| if let Block::ToolResult { call_id, is_error, .. } = b { Some((call_id.clone(), *is_error)) } else { None }).collect()
}

fn facts(t: &Transcript) -> Facts {
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    Facts::read(&rows, &|_, _, _| None)
}

fn section(text: &str, n: usize) -> String {
    let h = section_header(n);
    let start = text.find(&h).unwrap_or_else(|| panic!("section {n} in\n{text}")) + h.len();
    let end = text[start..].find("\n[§").map(|e| start + e).unwrap_or(text.len());
    text[start..end].to_string()
}

const NPM_404: &str = "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found\nnpm ERR! 404\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/x-debug-0.log";
const RUSTC: &str = "error[E0425]: cannot find value `tok` in this scope\n --> src/lexer.rs:12:9\n   |\n12 |         tok\n   |         ^^^ not found in this scope\n\nerror: could not compile `lexer` (lib) due to 1 previous error";
const TRACEBACK: &str = "Traceback (most recent call last):\n  File \"/repo/load.py\", line 3, in <module>\n    parse(x)\n  File \"/repo/load.py\", line 1, in parse\n    raise ValueError('bad input')\nValueError: bad input";

/// Y-5: the openings of git, npm, Go, Rust, Java, rustc and pytest failures, and the JSON
/// bodies that report one, are failed calls (of a tool that is no reader).
#[test]
fn y5_failure_openings_of_git_npm_go_rust_java_rustc_pytest_are_failures() {
    for t in [
        "fatal: not a git repository (or any of the parent directories): .git",
        "\n  fatal: pathspec 'x' did not match any files",
        NPM_404,
        "npm error code ENOENT\nnpm error syscall open\nnpm error path /r/package.json",
        "npm ERR! Missing script: \"test\"",
        "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:",
        "thread 'main' panicked at src/main.rs:2:5:\nexplicit panic\nnote: run with `RUST_BACKTRACE=1`",
        "thread 'tokio-runtime-worker' panicked at 'called `Option::unwrap()` on a `None` value', src/x.rs:9:5",
        "Exception in thread \"main\" java.lang.IllegalStateException: boom\n\tat Main.main(Main.java:3)",
        RUSTC,
        "FAILED tests/test_x.py::test_parse - assert 1 == 2",
        "FAILED (failures=2)",
        "ERROR: file or directory not found: tests/nope.py",
        "./run.sh: line 3: foo: command not found",
        "sh: 1: foo: not found",
        "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- E999 IndentationError: unexpected indent",
    ] {
        assert!(text_reports_failure(t), "{t:?} opens as a failure");
        assert!(result_reports_failure(Some("Bash"), t), "{t:?} from Bash");
    }
}

/// Y-5: JSON bodies that say the call failed at their top level.
#[test]
fn y5_json_status_error_ok_false_success_false_and_graphql_errors_are_failures() {
    for t in [
        r#"{"status":"error","message":"quota exceeded"}"#,
        r#"{"status": "ERROR"}"#,
        r#"{"ok": false, "error_code": "channel_not_found"}"#,
        r#"{"success": false}"#,
        r#"{"data": null, "errors": [{"message": "Cannot query field \"x\" on type \"Query\".", "locations": [{"line": 1, "column": 3}]}]}"#,
        r#"{"errors": [{"message": "Syntax Error: Unexpected Name \"qurey\""}]}"#,
    ] {
        assert!(json_error(t), "{t} reports a failure");
        assert!(text_reports_failure(t), "{t}");
        // a reader's JSON answer saying it failed is still a failure
        assert!(result_reports_failure(Some("read_file"), t), "{t} from a reader");
    }
}

/// Y-5 (no false positives): an empty `errors` list, a status that is not `error`,
/// partial GraphQL data, a word in content rather than at the opening, a grep hit, prose.
#[test]
fn y5_content_that_only_mentions_a_failure_is_not_one() {
    let panic_on_line_40 = format!("{}    panic: keep this in the log format\n", (1..40).map(|i| format!("line {i} of the design notes\n")).collect::<String>());
    for t in [
        r#"{"errors": []}"#,
        r#"{"data": null, "errors": []}"#,
        r#"{"status":"ok"}"#,
        r#"{"status": "failed", "build": 412}"#,
        r#"{"ok": true, "success": true}"#,
        // `{"ok": "false"}` is a failure since issue 13 (tests/failure_reading5.rs); the
        // serde `Ok` key holding the word stays an answer
        r#"{"Ok": "false"}"#,
        r#"{"data": {"user": null}, "errors": [{"message": "not found", "path": ["user"]}]}"#,
        r#"{"errors": ["lint: 3 warnings"]}"#,
        panic_on_line_40.as_str(),
        "src/x.rs:10: fatal: unreachable state reached",
        "src/run.sh:3: foo: command not found",
        "docs/x.md:12:npm ERR! code E404",
        "npm errors are reported on stderr",
        "FAILEDOVER to the replica in 2s",
        "panics: 0",
        "threads: 4 'main' panicked at nothing",
        "Exception handling is covered in chapter 4",
        "error[E0425] is the code for an unresolved name",
        "2 passed, 0 failed\nfatal: (not the first line)",
    ] {
        assert!(!text_reports_failure(t), "{t:?} is not a failure");
    }
    // the reader exemption: a file's (or page's) text opening `Error:` is its content
    for name in ["Read", "cat", "read_file", "view", "grep"] {
        for t in ["Error: the widget is misconfigured (from docs/faq.md)", "fatal: sample git output kept in the fixture", "FAILED tests/a.py::t (a saved report)"] {
            assert!(!result_reports_failure(Some(name), t), "{name}: {t:?} is content");
        }
    }
}

fn chat_reader_and_runner(name_on_rows: bool) -> Value {
    let mut read = json!({ "role": "tool", "tool_call_id": "c1", "content": "Error: widget misconfigured\nSee the FAQ for the fix." });
    let mut run = json!({ "role": "tool", "tool_call_id": "c2", "content": "Error: 3 failed\n  test_a\n  test_b\n  test_c" });
    if name_on_rows {
        read["name"] = json!("read_file");
        run["name"] = json!("run_tests");
    }
    json!([
        { "role": "system", "content": "sys" },
        { "role": "user", "content": "check the docs then run the tests" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "c1", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"docs/faq.md\"}" } },
            { "id": "c2", "type": "function", "function": { "name": "run_tests", "arguments": "{}" } }
        ] },
        read,
        run,
        { "role": "assistant", "content": "done" }
    ])
}

/// Y-5 (reader exemption with the name from the call): OpenAI Chat `tool` rows with no
/// `name`: `read_file`'s file text opening "Error:" is content, `run_tests`' "Error: 3
/// failed" a failure, on the typed path (compact text), the `Value` path (a document
/// value; a tool row whose content is parts), as when the rows name the tool.
#[test]
fn y5_openai_chat_tool_rows_without_name_are_read_with_their_calls_name() {
    let expect = vec![("c1".to_string(), false), ("c2".to_string(), true)];
    let doc = chat_reader_and_runner(false);
    assert_eq!(results(&decode_text(Format::OpenaiChat, &doc.to_string()).unwrap()), expect, "typed path");
    assert_eq!(results(&decode(Format::OpenaiChat, doc.clone()).unwrap()), expect, "Value path");
    assert_eq!(results(&decode(Format::OpenaiChat, chat_reader_and_runner(true)).unwrap()), expect, "rows naming the tool");
    // content as parts: that row takes the Value path inside a text decode
    let mut parts = doc.clone();
    parts[3]["content"] = json!([{ "type": "text", "text": "Error: widget misconfigured" }]);
    parts[4]["content"] = json!([{ "type": "text", "text": "Error: 3 failed" }]);
    assert_eq!(results(&decode_text(Format::OpenaiChat, &parts.to_string()).unwrap()), expect, "Value path rows of a text decode");
    // the facts: one failed call, the runner
    let t = decode(Format::OpenaiChat, doc).unwrap();
    let f = facts(&t);
    let failed: Vec<&str> = f.calls.iter().filter(|c| c.outcome.failed()).map(|c| c.name.as_str()).collect();
    assert_eq!(failed, ["run_tests"]);
    assert_eq!(f.calls[1].outcome.describe(), "failed: Error: 3 failed");
    // a call id reused later names the newer call's tool
    let reuse = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "k", "type": "function", "function": { "name": "read_file", "arguments": "{}" } }] },
        { "role": "tool", "tool_call_id": "k", "content": "Error: in the file" },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "k", "type": "function", "function": { "name": "deploy", "arguments": "{}" } }] },
        { "role": "tool", "tool_call_id": "k", "content": "Error: in the deploy" }
    ]);
    assert_eq!(results(&decode_text(Format::OpenaiChat, &reuse.to_string()).unwrap()), vec![("k".to_string(), false), ("k".to_string(), true)]);
}

/// Y-5: a Responses `function_call_output` is read with the name of the `function_call`
/// of its `call_id` (the item never names the tool).
#[test]
fn y5_responses_output_is_read_with_its_function_calls_name() {
    let doc = json!([
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "go" }] },
        { "type": "function_call", "call_id": "r1", "name": "read_file", "arguments": "{\"path\":\"log.txt\"}" },
        { "type": "function_call", "call_id": "r2", "name": "run_tests", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "r1", "output": "ERROR: 2026-01-01 disk full\nINFO: retried" },
        { "type": "function_call_output", "call_id": "r2", "output": "Error: 3 failed" }
    ]);
    let expect = vec![("r1".to_string(), false), ("r2".to_string(), true)];
    assert_eq!(results(&decode(Format::OpenaiResponses, doc.clone()).unwrap()), expect);
    assert_eq!(results(&decode_text(Format::OpenaiResponses, &doc.to_string()).unwrap()), expect);
}

/// Y-5 / T-4: a live append of the results alone (the call row already held) reads them
/// as a fresh decode of the whole transcript does.
#[test]
fn y5_live_append_of_results_reads_the_held_calls_name() {
    let doc = chat_reader_and_runner(false);
    let rows = doc.as_array().unwrap();
    let config = context_compactor::config::Config::from_options(&json!({ "profile": "default", "contextWindow": 100000 })).unwrap();
    let mut live = LiveTranscript::open(config, Format::OpenaiChat, Value::Array(rows[..3].to_vec())).unwrap();
    live.append(vec![rows[3].clone()]).unwrap();
    live.append(vec![rows[4].clone(), rows[5].clone()]).unwrap();
    assert_eq!(results(live.transcript()), vec![("c1".to_string(), false), ("c2".to_string(), true)]);
    assert_eq!(live.transcript(), &decode(Format::OpenaiChat, doc).unwrap());
}

/// N-5 / Y-5: the line a failed call is named by says what went wrong: a traceback's
/// exception, rustc's error, npm's message (not its `code` line, a spacer or the log
/// pointer), a Rust panic with its message, SWE-agent's rejected edit with its lint error.
#[test]
fn n5_y5_error_line_is_the_informative_line() {
    assert_eq!(error_line(TRACEBACK), "ValueError: bad input");
    assert_eq!(error_line(RUSTC), "error[E0425]: cannot find value `tok` in this scope");
    assert_eq!(error_line(&format!("Exit code 101\n   Compiling lexer v0.1.0 (/repo)\n{RUSTC}")), "error[E0425]: cannot find value `tok` in this scope");
    assert_eq!(error_line(NPM_404), "npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd - Not found");
    assert_eq!(error_line("npm ERR!\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 1\nnpm ERR! x@1.0.0 test: `jest`\nnpm ERR! Exit status 1"), "npm ERR! x@1.0.0 test: `jest`");
    assert_eq!(error_line("npm error code E401\nnpm error A complete log of this run can be found in: /r/x.log"), "npm error code E401", "only the code line says anything");
    assert_eq!(error_line("\n> x@1.0.0 test\n> jest\n\nnpm ERR! Lifecycle script `test` failed with error:\nnpm ERR! Error: command failed"), "npm ERR! Lifecycle script `test` failed with error:");
    assert_eq!(error_line("thread 'main' panicked at src/main.rs:2:5:\nexplicit panic\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"), "thread 'main' panicked at src/main.rs:2:5: explicit panic");
    assert_eq!(error_line("panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:"), "panic: runtime error: index out of range [5] with length 3");
    assert_eq!(error_line("Exception in thread \"main\" java.lang.IllegalStateException: boom\n\tat Main.main(Main.java:3)"), "Exception in thread \"main\" java.lang.IllegalStateException: boom");
    assert_eq!(error_line("fatal: not a git repository (or any of the parent directories): .git"), "fatal: not a git repository (or any of the parent directories): .git");
    assert_eq!(
        error_line("Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- E999 IndentationError: unexpected indent\n\nThis is how your edit would have looked"),
        "Your proposed edit has introduced new syntax error(s): E999 IndentationError: unexpected indent"
    );
    // no error line to prefer: the first line, as before
    assert_eq!(error_line("Request failed with status code 404"), "Request failed with status code 404");
}

/// Y-5 §5: the summary's "errors and how they were resolved" names a failed Python run,
/// cargo build and npm install by their error lines, never the traceback's header.
#[test]
fn y5_errors_section_names_the_exception_rustc_error_and_npm_message() {
    let call = |id: &str, cmd: &str| json!({ "role": "assistant", "content": null, "tool_calls": [{ "id": id, "type": "function", "function": { "name": "Bash", "arguments": json!({ "command": cmd }).to_string() } }] });
    let out = |id: &str, text: &str| json!({ "role": "tool", "tool_call_id": id, "content": text });
    let doc = json!([
        { "role": "system", "content": "sys" },
        { "role": "user", "content": "build it" },
        call("p", "python load.py"), out("p", TRACEBACK),
        call("r", "cargo build"), out("r", &format!("Exit code 101\n   Compiling lexer v0.1.0 (/repo)\n{RUSTC}")),
        call("n", "npm install left-padd"), out("n", NPM_404),
        { "role": "assistant", "content": "three failures" }
    ]);
    let t = decode(Format::OpenaiChat, doc).unwrap();
    let s = handoff_summary(&facts(&t), 8192);
    let e = section(&s, 5);
    let line = |id: &str| e.lines().find(|l| l.contains(&format!("[{id}]"))).unwrap_or_else(|| panic!("[{id}] in §5:\n{e}")).to_string();
    assert!(line("p").contains("failed: ValueError: bad input"), "{e}");
    assert!(line("r").contains("failed (exit 101): error[E0425]: cannot find value `tok` in this scope"), "{e}");
    assert!(line("n").contains("failed: npm ERR! 404 Not Found - GET https://registry.npmjs.org/left-padd"), "{e}");
    assert!(!s.contains("Traceback (most recent call last)"), "{s}");
}

/// Y-5 on the shared transcripts: the failed calls the facts read (printed as
/// `failed-call <file> <id> <tool> <outcome>` lines). SWE-agent's refused edits are
/// failed calls, and no failed call is named by a traceback's header.
#[test]
fn y5_failed_calls_read_on_the_shared_transcripts() {
    let Some((_, files)) = common::shared_transcript_files() else { return };
    let (mut total, mut calls, mut refused) = (0usize, 0usize, 0usize);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let Some(kind) = sniff(&text) else { continue };
        let (format, doc) = import(kind, &text).unwrap();
        let t = decode(format, doc).unwrap();
        let f = facts(&t);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        calls += f.calls.len();
        for c in f.calls.iter().filter(|c| c.outcome.failed()) {
            total += 1;
            let d = c.outcome.describe();
            eprintln!("failed-call {name} {} {} {d}", c.id, c.name);
            assert!(!d.contains("Traceback (most recent call last)"), "{name} {}: {d}", c.id);
            refused += usize::from(d.contains("Your proposed edit has introduced new syntax error"));
        }
        // every refused SWE-agent edit is a failed call
        for m in &t.messages {
            for b in &m.blocks {
                if let Block::ToolResult { text, is_error, call_id, .. } = b {
                    if text.starts_with("Your proposed edit has introduced new syntax error") {
                        assert!(is_error, "{name} {call_id}");
                    }
                }
            }
        }
    }
    eprintln!("failed calls: {total} of {calls} ({refused} refused edits)");
    assert!(refused >= 4, "the SWE-agent transcripts' refused edits ({refused})");
}

/// Y-5 / E-2 / T-4: evicting (clipping) a reader's result whose file text opens "Error:"
/// replaces only its body; the edited row reads as a fresh decode of it in its
/// transcript reads it (content, not a failure), while a runner's clipped failure stays
/// failed.
#[test]
fn e2_y5_an_evicted_readers_result_stays_content_as_a_fresh_decode_reads_it() {
    let big = |head: &str| format!("{head}\n{}", "line of the file\n".repeat(400));
    let mut doc = chat_reader_and_runner(false);
    doc[3]["content"] = json!(big("Error: widget misconfigured"));
    doc[4]["content"] = json!(big("Error: 3 failed"));
    for t in [decode(Format::OpenaiChat, doc.clone()).unwrap(), decode_text(Format::OpenaiChat, &doc.to_string()).unwrap()] {
        let config = context_compactor::config::Config::from_options(&json!({ "profile": "default", "contextWindow": 100000 })).unwrap();
        let (copies, evicted, _) = context_compactor::evict::evict(Format::OpenaiChat, &t.messages, &[3, 4], &config).unwrap();
        assert_eq!(evicted.len(), 2, "both bodies clipped");
        let mut edited = t.messages.clone();
        edited[3] = copies[0].clone();
        edited[4] = copies[1].clone();
        let after = Transcript { format: t.format, messages: edited, envelope: t.envelope.clone() };
        assert_eq!(results(&after), vec![("c1".to_string(), false), ("c2".to_string(), true)]);
        let rows: Vec<Value> = after.messages.iter().map(|m| serde_json::from_str(m.raw.get()).unwrap()).collect();
        assert_eq!(results(&decode(Format::OpenaiChat, Value::Array(rows)).unwrap()), results(&after), "T-4: as a fresh decode reads the rows");
    }
}

/// Y-5 / T-4: a Responses live append of outputs whose parallel calls (each after its
/// `reasoning` item) are held reads them with the calls' names, as a fresh decode does.
#[test]
fn y5_responses_live_append_reads_the_held_parallel_calls_names() {
    let doc = json!([
        { "type": "message", "role": "user", "content": [{ "type": "input_text", "text": "go" }] },
        { "type": "function_call", "call_id": "old", "name": "run_tests", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "old", "output": "ok" },
        { "type": "reasoning", "summary": [{ "type": "summary_text", "text": "read the log first" }] },
        { "type": "function_call", "call_id": "r1", "name": "read_file", "arguments": "{\"path\":\"log.txt\"}" },
        { "type": "reasoning", "summary": [{ "type": "summary_text", "text": "and run the tests" }] },
        { "type": "function_call", "call_id": "r2", "name": "run_tests", "arguments": "{}" },
        { "type": "function_call_output", "call_id": "r1", "output": "ERROR: 2026-01-01 disk full" },
        { "type": "function_call_output", "call_id": "r2", "output": "Error: 3 failed" }
    ]);
    let rows = doc.as_array().unwrap();
    let config = context_compactor::config::Config::from_options(&json!({ "profile": "default", "contextWindow": 100000 })).unwrap();
    let mut live = LiveTranscript::open(config, Format::OpenaiResponses, Value::Array(rows[..7].to_vec())).unwrap();
    live.append(rows[7..].to_vec()).unwrap();
    let expect = vec![("old".to_string(), false), ("r1".to_string(), false), ("r2".to_string(), true)];
    assert_eq!(results(live.transcript()), expect);
    assert_eq!(results(&decode(Format::OpenaiResponses, doc).unwrap()), expect);
}

/// Y-5: a tool is a reader by one of its name's words, not by a word holding one:
/// `openapi_call` returning "Error: ..." is a failed call, `readFile` returning a log that
/// opens "Error:" is content.
#[test]
fn y5_reader_tools_are_named_by_a_whole_word() {
    use context_compactor::formats::failure::is_reader;
    for n in ["Read", "read_file", "readFile", "ReadFile", "file_search", "search_dir", "view", "open", "grep", "cat", "file_reader", "str-view"] {
        assert!(is_reader(n), "{n} is a reader");
    }
    for n in ["openapi_call", "preview_deploy", "concatenate", "spreadsheet_update", "WebFetch", "run_tests", "XMLReader", "", "_"] {
        assert!(!is_reader(n), "{n} is not a reader");
    }
    assert!(result_reports_failure(Some("openapi_call"), "Error: 401 unauthorized"));
    assert!(!result_reports_failure(Some("readFile"), "Error: disk full at 03:00\nrecovered"));
}

/// Y-5: Go's and Jest's failure openings.
#[test]
fn y5_go_and_jest_failure_openings_are_failures() {
    assert!(text_reports_failure("--- FAIL: TestParse (0.00s)\n    parse_test.go:12: got 1"));
    assert!(text_reports_failure("FAIL src/app.test.ts\n  ● renders"));
    assert!(!text_reports_failure("FAILOVER complete"));
    assert!(!text_reports_failure("PASS src/app.test.ts"));
    assert!(!text_reports_failure("ok  \texample.com/p\t0.01s\n--- FAIL: later line is content"));
}

/// Issue 13 (§7, tester finding 13): an agent's decisions worded as chose / going with /
/// opted / switched / we will are decision lines of the handoff.
#[test]
fn n5_decisions_worded_chose_going_with_opted_switched_are_kept() {
    let said = [
        "We chose Postgres over MySQL for the ledger.",
        "Going with option B for the retry policy.",
        "Switched the queue to SQS.",
        "Opted for gRPC between the services.",
        "We will use Redis 7 for the cache.",
    ];
    let mut rows = vec![json!({ "role": "user", "content": "Design the backend." })];
    for s in said {
        rows.push(json!({ "role": "assistant", "content": s }));
        rows.push(json!({ "role": "user", "content": "ok" }));
    }
    let t = decode(Format::OpenaiChat, Value::Array(rows)).expect("decode");
    let s = handoff_summary(&facts(&t), 8192);
    let decisions = section(&s, 7);
    for d in said {
        assert!(decisions.contains(d), "{d:?} in §7:\n{decisions}");
    }
}
