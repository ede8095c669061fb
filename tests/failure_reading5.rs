//! Y-5 (issue 13, failure reading 5): failed calls whose output says so past its first
//! line, behind an HTTP status line, in an AI SDK `text` / `json` output or an Anthropic
//! `tool_result` without `is_error`, or in a JSON body keyed `Error` / `ERROR`; string
//! booleans of `ok` / `success` settled.

use context_compactor::formats::failure::{json_error, opens_as_error, result_reports_failure, text_reports_failure};
use context_compactor::formats::{decode, decode_text, Format};
use context_compactor::transcript::{Block, Transcript};
use serde_json::{json, Value};

/// `(call id, is_error)` of every tool result of a transcript, in order.
fn results(t: &Transcript) -> Vec<(String, bool)> {
    t.messages.iter().flat_map(|m| m.blocks.iter()).filter_map(|b| if let Block::ToolResult { call_id, is_error, .. } = b { Some((call_id.clone(), *is_error)) } else { None }).collect()
}

fn pairs(v: &[(&str, bool)]) -> Vec<(String, bool)> {
    v.iter().map(|(id, e)| (id.to_string(), *e)).collect()
}

const CARGO_PANIC: &str = "   Compiling foo v0.1.0 (/work/foo)\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 0.41s\n     Running `target/debug/foo`\nthread 'main' panicked at src/main.rs:3:5:\nindex out of bounds: the len is 0 but the index is 0\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
const NODE_MISSING: &str = "node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\nError: Cannot find module 'x'\nRequire stack:\n- /work/app/index.js\n    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {\n  code: 'MODULE_NOT_FOUND',\n  requireStack: [ '/work/app/index.js' ]\n}\n\nNode.js v20.11.1";

/// Y-5 item 1: with no exit status in the output, a specific failure signature past the
/// first line (a Rust panic after cargo's progress lines, node's missing module after its
/// loader lines, a traceback, npm's log, rustc's error) is a failed call.
#[test]
fn y5_signature_past_the_first_line_without_exit_status_is_a_failure() {
    for t in [
        CARGO_PANIC,
        NODE_MISSING,
        "Collecting data...\nTraceback (most recent call last):\n  File \"/r/x.py\", line 1, in <module>\nKeyError: 'a'",
        "> app@1.0.0 build\n> tsc\n\nnpm ERR! code ELIFECYCLE\nnpm ERR! errno 2",
        "   Compiling lexer v0.1.0 (/repo)\nerror[E0425]: cannot find value `tok` in this scope\n --> src/lexer.rs:12:9",
        "Cloning into 'dep'...\nfatal: repository 'https://example.com/dep.git/' not found",
        "total 8\nls: cannot access 'x': No such file or directory",
    ] {
        assert!(text_reports_failure(t), "{t:?} is a failure");
        assert!(result_reports_failure(Some("Bash"), t), "{t:?} from Bash");
    }
    // the signature in the last lines of a long output (past the first 40 lines)
    let long = format!("{}thread 'main' panicked at src/lib.rs:9:1:\nboom\n", "   Compiling dep v1.0.0\n".repeat(200));
    assert!(text_reports_failure(&long), "a panic in the last 40 lines");
}

/// Y-5 item 1: a command's own errno message opening the output is a failure
/// (`ls`, `cat`, `curl`), by [`opens_as_error`].
#[test]
fn y5_a_commands_errno_message_opens_as_error() {
    for l in [
        "ls: cannot access 'x': No such file or directory",
        "cat: x: No such file or directory",
        "curl: (6) Could not resolve host: x",
        "rm: cannot remove '/etc/hosts': Permission denied",
        "python3: can't open file '/r/x.py': [Errno 2] No such file or directory",
    ] {
        assert!(opens_as_error(l), "{l:?}");
        assert!(text_reports_failure(l), "{l:?}");
    }
    for l in [
        "note: x: No such file or directory",
        "warning: cache: Permission denied",
        "src/x.rs: No such file or directory",
        "Docs: No such file or directory",
        "cat: the file was found",
        "curl: see the manual",
        "mv: renamed 'a' -> 'b'",
    ] {
        assert!(!opens_as_error(l), "{l:?} is no command's errno message");
    }
}

/// Y-5 item 1 (no false positives): the window is read for specific signatures only,
/// at a line's start: prose mentioning a panic, an indented or diffed panic line, the bare
/// word error past the first line, a signature in the middle of a long output, and a
/// reader's file content are not failures; a stated exit status 0 wins over any signature.
#[test]
fn y5_window_reads_specific_signatures_only_and_exit_zero_wins() {
    let middle = format!("{}thread 'main' panicked at src/lib.rs:9:1:\n{}", "ok line\n".repeat(100), "ok line\n".repeat(100));
    for t in [
        "2026-01-01 INFO the worker recovered after thread 'main' panicked at startup\nall green",
        "Summary of the incident:\n    thread 'main' panicked at src/main.rs:3:5:\nwas fixed in 1.2",
        "diff --git a/log b/log\n+thread 'main' panicked at src/main.rs:3:5:\n-old",
        "Build log\nerror: this is the word error in prose\nError: (later line)\nfinished",
        "step 1\nsee Error: Cannot find module in the FAQ",
        middle.as_str(),
        // an explicit exit status 0 wins over every signature
        "Exit code 0\n   Compiling foo v0.1.0\nthread 'main' panicked at src/main.rs:3:5:\nexpected in this test",
        "node loader\nError: Cannot find module 'x'\nexit status 0",
        "Exit code: 0\nWall time: 0.2 seconds\nOutput:\nHTTP/1.1 500 Internal Server Error",
    ] {
        assert!(!text_reports_failure(t), "{t:?} is not a failure");
    }
    // an output that opens as an error is one, whatever exit status its words name
    for t in ["Error: expected exit code 0, got 1", "FAILED tests/a.py::t - exit status 0 expected"] {
        assert!(text_reports_failure(t), "{t:?} is a failure");
    }
    // a reader's output is the file's content, whatever signature it holds
    for name in ["Read", "read_file", "cat", "view"] {
        assert!(!result_reports_failure(Some(name), CARGO_PANIC), "{name}");
        assert!(!result_reports_failure(Some(name), "# notes\nTraceback (most recent call last):\n  (example)"), "{name}");
    }
}

/// Y-5 item 2: an HTTP response whose final status is 4xx / 5xx is a failed call; 1xx,
/// 2xx and 3xx are not (the status of a redirect chain's last response decides).
#[test]
fn y5_http_status_line_before_a_json_body() {
    for t in [
        "HTTP/1.1 404 Not Found\nContent-Type: application/json\n\n{\"message\": \"no such user\"}",
        "HTTP/2 500\r\ncontent-type: text/html\r\n\r\n<h1>oops</h1>",
        "HTTP/1.1 301 Moved Permanently\nLocation: /b\n\nHTTP/1.1 403 Forbidden\n\n{}",
        "HTTP/1.1 100 Continue\n\nHTTP/1.1 422 Unprocessable Entity\n\n{\"ok\": true}",
    ] {
        assert!(text_reports_failure(t), "{t:?}");
    }
    for t in [
        "HTTP/1.1 200 OK\nContent-Type: application/json\n\n{\"message\": \"hi\"}",
        "HTTP/1.1 302 Found\nLocation: /x\n\n",
        "HTTP/1.1 301 Moved\nLocation: /b\n\nHTTP/1.1 200 OK\n\nbody mentions HTTP/1.1 500",
        "HTTP/1.1 204 No Content",
        "HTTP/1.1 is the protocol version; 404 is not found",
        "the server said HTTP/1.1 404 Not Found",
    ] {
        assert!(!text_reports_failure(t), "{t:?}");
    }
}

/// Y-5 item 3: AI SDK `text` and `json` outputs are read as the output text is; an
/// `error-text` output is a failure by its type; an explicit `isError` wins over reading.
#[test]
fn y5_ai_sdk_text_and_json_outputs_are_read() {
    let result = |id: &str, name: &str, output: Value| json!({ "type": "tool-result", "toolCallId": id, "toolName": name, "output": output });
    let call = |id: &str, name: &str| json!({ "type": "tool-call", "toolCallId": id, "toolName": name, "input": {} });
    let doc = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": [call("a", "run"), call("b", "api"), call("c", "run"), call("d", "readFile"), call("e", "run"), call("f", "api"), call("g", "run"), call("h", "run"), call("i", "api"), call("j", "api")] },
        { "role": "tool", "content": [
            result("a", "run", json!({ "type": "text", "value": CARGO_PANIC })),
            result("b", "api", json!({ "type": "json", "value": { "error": "quota exceeded" } })),
            result("c", "run", json!({ "type": "text", "value": "built in 2s" })),
            result("d", "readFile", json!({ "type": "text", "value": "Error: a log line of the file" })),
            result("e", "run", json!({ "type": "error-text", "value": "timed out" })),
            result("f", "api", json!({ "type": "json", "value": { "data": { "error": "nested" } } })),
            { "type": "tool-result", "toolCallId": "g", "toolName": "run", "output": { "type": "text", "value": "Error: looked bad" }, "isError": false },
            // AI SDK 4's `result`: a string read as a text, a value as JSON
            { "type": "tool-result", "toolCallId": "h", "toolName": "run", "result": "Traceback (most recent call last):\n  File \"x.py\"" },
            { "type": "tool-result", "toolCallId": "i", "toolName": "api", "result": { "ERROR": "bad key" } },
            { "type": "tool-result", "toolCallId": "j", "toolName": "api", "result": { "rows": 3 } }
        ] }
    ]);
    let expect = pairs(&[("a", true), ("b", true), ("c", false), ("d", false), ("e", true), ("f", false), ("g", false), ("h", true), ("i", true), ("j", false)]);
    assert_eq!(results(&decode(Format::AiSdk, doc.clone()).unwrap()), expect);
    assert_eq!(results(&decode_text(Format::AiSdk, &doc.to_string()).unwrap()), expect);
}

/// Y-5 item 3: an Anthropic `tool_result` without `is_error` is read as its text is
/// (with the name of its `tool_use`: a reader's output is content); an explicit
/// `is_error`, true or false, always wins; the typed and `Value` paths agree.
#[test]
fn y5_anthropic_tool_result_without_is_error_is_read_explicit_flag_wins() {
    let use_ = |id: &str, name: &str| json!({ "type": "tool_use", "id": id, "name": name, "input": {} });
    // the first results row has string contents only (the typed path reads it), the
    // second a block content (the `Value` path)
    let doc = json!([
        { "role": "user", "content": "go" },
        { "role": "assistant", "content": [use_("t1", "Bash"), use_("t2", "Read"), use_("t3", "Bash"), use_("t4", "Bash"), use_("t6", "Bash")] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t1", "content": NODE_MISSING },
            { "type": "tool_result", "tool_use_id": "t2", "content": "Error: the widget (from docs/faq.md)" },
            { "type": "tool_result", "tool_use_id": "t3", "content": "Error: explicit false wins", "is_error": false },
            { "type": "tool_result", "tool_use_id": "t4", "content": "all fine", "is_error": true },
            { "type": "tool_result", "tool_use_id": "t6", "content": "3 files changed" }
        ] },
        { "role": "assistant", "content": [use_("t5", "Bash"), use_("t7", "Read")] },
        { "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "t5", "content": [{ "type": "text", "text": "cat: x: No such file or directory" }] },
            { "type": "tool_result", "tool_use_id": "t7", "content": [{ "type": "text", "text": "fatal: sample output kept in the notes" }] }
        ] }
    ]);
    let expect = pairs(&[("t1", true), ("t2", false), ("t3", false), ("t4", true), ("t6", false), ("t5", true), ("t7", false)]);
    assert_eq!(results(&decode(Format::Anthropic, doc.clone()).unwrap()), expect, "Value path");
    assert_eq!(results(&decode_text(Format::Anthropic, &doc.to_string()).unwrap()), expect, "typed path");
    // a live append of the results row reads the held call's names as a decode does
    let rows = doc.as_array().unwrap();
    let config = context_compactor::config::Config::from_options(&json!({ "profile": "default", "contextWindow": 100000 })).unwrap();
    let mut live = context_compactor::live::LiveTranscript::open(config, Format::Anthropic, Value::Array(rows[..2].to_vec())).unwrap();
    live.append(vec![rows[2].clone(), rows[3].clone()]).unwrap();
    live.append(vec![rows[4].clone()]).unwrap();
    assert_eq!(results(live.transcript()), expect, "live append");
}

/// Y-5 item 4: `Error` and `ERROR` keys count as `error` does; other cases do not.
#[test]
fn y5_json_error_key_in_exact_capital_cases() {
    for t in [r#"{"Error": "User not found"}"#, r#"{"ERROR": {"code": 3}}"#, r#"{"Error": "x", "Result": null}"#] {
        assert!(json_error(t), "{t}");
        assert!(text_reports_failure(t), "{t}");
    }
    for t in [r#"{"Error": null}"#, r#"{"ERROR": "none"}"#, r#"{"eRRor": "x"}"#, r#"{"Error": ""}"#] {
        assert!(!json_error(t), "{t} is an answer");
    }
}

/// Y-5 item 5: the word `"false"` for `ok` says what the JSON `false` says, as it does
/// for `success`; `"true"` and the serde `Ok` key stay answers.
#[test]
fn y5_ok_and_success_word_false_are_failures_alike() {
    for t in [r#"{"ok": "false"}"#, r#"{"ok": "FALSE", "data": 1}"#, r#"{"success": "false"}"#, r#"{"ok": false}"#] {
        assert!(json_error(t), "{t}");
    }
    for t in [r#"{"ok": "true"}"#, r#"{"Ok": "false"}"#, r#"{"success": "true"}"#] {
        assert!(!json_error(t), "{t} is an answer");
    }
}

/// Y-5 (issue 13): an exit status is read only where a harness or a shell states one: a
/// line opening (after `[`, `(`, whitespace, `Error: `), `exited with code N`, `returned
/// non-zero exit status N`, or a JSON `exit_code` / `returncode` / `exitCode` key.
#[test]
fn y5_exit_status_read_where_a_harness_states_it() {
    use context_compactor::summarize::facts::exit_status;
    for (t, n) in [
        ("Exit code: 1\nWall time: 0.5 seconds\nOutput:\nboom", 1),
        ("Exit code 101\n   Compiling foo v0.1.0", 101),
        ("Error: Exit code 2\nTraceback (most recent call last):", 2),
        ("  [exit status 3]", 3),
        ("(exit_code=4)", 4),
        ("returncode: -9", -9),
        ("ok\r\nEXIT STATUS \"5\"\r\n", 5),
        ("npm run dev\nProcess exited with code 137", 137),
        ("subprocess.CalledProcessError: Command '['make']' returned non-zero exit status 2.", 2),
        (r#"{"output":"done\n","metadata":{"exit_code":101,"duration_seconds":3.2}}"#, 101),
        (r#"{"stdout": "", "returncode": 1}"#, 1),
        (r#"{"hookEvent":"PostToolUse","exitCode": 0}"#, 0),
    ] {
        assert_eq!(exit_status(t), Some(n), "{t:?}");
    }
    // prose and code that name a status state none
    for t in [
        "Error: expected exit code 0, got 1",
        "FAILED tests/a.py::t - exit status 0 expected",
        "    assert proc.returncode == 0",
        "returncode == 1",
        "self.assertEqual(proc.returncode, 1)",
        "The script must return exit code 0 on success.",
        "Make sure the exit_code is 0 before you merge",
        "exit code 1-2 are reserved",
        "if (exitCode === 0) { done(); }",
        r#"{"exit_code": null}"#,
    ] {
        assert_eq!(exit_status(t), None, "{t:?}");
    }
}

/// Y-5 (issue 13): prose naming `exit code 0` states no status, so a failure signature
/// after it is still read, and prose naming `returncode 1` does not fail an answer.
#[test]
fn y5_exit_status_in_prose_neither_clears_nor_fails_a_result() {
    let panic = "note: the docs say exit code 0 means success\nthread 'main' panicked at src/main.rs:3:5:\nindex out of bounds";
    assert!(text_reports_failure(panic), "a named status 0 in prose does not outweigh the panic");
    let rows = json!([
        { "role": "user", "content": "run it" },
        { "role": "assistant", "content": null, "tool_calls": [
            { "id": "c1", "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"pytest\"}" } },
            { "id": "c2", "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"cargo run\"}" } } ] },
        { "role": "tool", "tool_call_id": "c1", "content": "checked that returncode 1 is mapped to a retry\n3 passed" },
        { "role": "tool", "tool_call_id": "c2", "content": panic },
    ]);
    let t = decode(Format::OpenaiChat, rows).unwrap();
    assert_eq!(results(&t), pairs(&[("c1", false), ("c2", true)]));
    let c1 = "checked that returncode 1 is mapped to a retry\n3 passed";
    assert_eq!(context_compactor::summarize::facts::exit_status(c1), None, "not read as a failed exit 1");
}

/// Y-5 (issue 13): GNU make's own failure line (`make: *** ...`, a sub-make's
/// `make[N]: *** ...`) opens as an error and is a signature in an output's last lines
/// when it states no exit status; make's other lines are not.
#[test]
fn y5_make_failure_lines_are_failures() {
    use context_compactor::formats::failure::make_error;
    for l in ["make: *** No rule to make target 'x'.  Stop.", "make: *** [Makefile:3: all] Error 2", "make[2]: *** [Makefile:12: sub] Error 1"] {
        assert!(make_error(l), "{l:?}");
        assert!(opens_as_error(l), "{l:?}");
        assert!(text_reports_failure(l), "{l:?}");
    }
    for l in ["make: Nothing to be done for 'all'.", "make[1]: Entering directory '/repo/sub'", "make[]: *** x", "make[a]: *** x", "makefile: *** x", "make: ** x"] {
        assert!(!make_error(l), "{l:?}");
        assert!(!text_reports_failure(l), "{l:?}");
    }
    // past the first line, no exit status: make's line in the window is the failure
    let build = "cc -c main.c\ncc -o app main.o\n./app --selftest\nselftest: 2 of 3 checks\nmake: *** [Makefile:3: all] Error 2";
    assert!(text_reports_failure(build), "{build}");
    // an indented copy (a log quoted in a listing) is content
    assert!(!text_reports_failure("build log:\n    make: *** [Makefile:3: all] Error 2"));
}

/// Y-5, issue 13 §5: a failed make run is named by make's `*** ` line (the first one: a
/// sub-make's, nearest the failing recipe), not by the output's first line; a compiler
/// diagnostic before it is the cause make reports, and is named instead.
#[test]
fn y5_the_errors_section_names_makes_failure_line() {
    use context_compactor::summarize::facts::{error_line, root_cause_line, Facts};
    use context_compactor::summarize::handoff_summary;
    let out = "Exit code 2\necho building the docs\nbuilding the docs\n./gen.sh\nmake[1]: *** [docs/Makefile:7: html] Error 1\nmake: *** [Makefile:3: all] Error 2";
    assert_eq!(error_line(out), "make[1]: *** [docs/Makefile:7: html] Error 1");
    assert_eq!(root_cause_line(out).as_deref(), Some("make[1]: *** [docs/Makefile:7: html] Error 1"));
    let rule = "make: Entering directory '/repo'\nmake: *** No rule to make target 'x'.  Stop.";
    assert_eq!(error_line(rule), "make: *** No rule to make target 'x'.  Stop.");
    let gcc = "gcc -o app main.c\nmain.c:3:5: error: use of undeclared identifier 'y'\n1 error generated.\nmake: *** [app] Error 1\nexit code 2";
    assert_eq!(error_line(gcc), "main.c:3:5: error: use of undeclared identifier 'y'");
    assert_eq!(root_cause_line(gcc).as_deref(), Some("main.c:3:5: error: use of undeclared identifier 'y'"));
    // the §5 line of the call
    let rows = json!([
        { "role": "system", "content": "sys" },
        { "role": "user", "content": "Build the docs." },
        { "role": "assistant", "content": null, "tool_calls": [{ "id": "m1", "type": "function", "function": { "name": "Bash", "arguments": "{\"command\":\"make docs\"}" } }] },
        { "role": "tool", "tool_call_id": "m1", "content": "echo building the docs\nbuilding the docs\nmake: *** [Makefile:3: all] Error 2" },
    ]);
    let t = decode(Format::OpenaiChat, rows).unwrap();
    let rows: Vec<(usize, &context_compactor::transcript::Message)> = t.messages.iter().enumerate().collect();
    let f = Facts::read(&rows, &|_, _, _| None);
    let s = handoff_summary(&f, 4_096);
    let line = s.lines().find(|l| l.contains("[m1]")).unwrap_or_else(|| panic!("m1 in §5:\n{s}"));
    assert!(line.contains("failed: make: *** [Makefile:3: all] Error 2") && !line.contains("echo building"), "{line}");
}
