//! Y-5 (issue 13, failure reading 6; brk findings 4-6): whose exit status an output
//! states, failures with no stated status that have a signature of their own, and a
//! test runner's passing verdict outweighing an earlier panic or traceback line.

use context_compactor::formats::failure::{exit_status, runner_verdict, text_reports_failure};

/// Y-5 (brk finding 4): a JSON status key is the harness's only at the top level of an
/// output that is a JSON object, or in that object's `metadata` (Codex); deeper, or in
/// an array, it is another process's status the command reports.
#[test]
fn y5_brk4_json_status_keys_are_read_only_at_the_top_level_or_in_metadata() {
    for (t, n) in [
        (r#"{"stdout": "", "returncode": 1}"#, 1),
        ("  {\"output\": \"done\\n\", \"metadata\": {\"exit_code\": 101}}", 101),
        ("{\n  \"metadata\": {\n    \"duration\": 1,\n    \"exitCode\": 3\n  }\n}", 3),
    ] {
        assert_eq!(exit_status(t), Some(n), "{t:?}");
    }
    for t in [
        "[{\"Id\": \"3f2a\", \"State\": {\"Status\": \"exited\", \"ExitCode\": 137}}]",
        r#"{"State": {"ExitCode": 137}}"#,
        r#"{"pods": [{"exitCode": 1}]}"#,
        r#"{"job": {"metadata": {"exit_code": 1}}}"#,
        r#"{"output": "\"exit_code\": 3"}"#,
        "log line\n{\"returncode\": 1}",
    ] {
        assert_eq!(exit_status(t), None, "{t:?}");
    }
}

/// Y-5 (brk finding 4): a line stating an exit status is the harness's when indented by
/// at most 2 blanks; deeper it is a field of the command's output (`kubectl describe`).
#[test]
fn y5_brk4_a_deeply_indented_exit_status_line_is_the_commands_output() {
    for (t, n) in [("Exit code 1", 1), ("  [exit status 3]", 3), ("\tExit code: 2", 2), ("ok\n  exit status 4", 4)] {
        assert_eq!(exit_status(t), Some(n), "{t:?}");
    }
    for t in ["   Exit code: 1", "Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1", "\t\t\tExit status 2"] {
        assert_eq!(exit_status(t), None, "{t:?}");
    }
    // the phrases a process runner writes are read anywhere, as before
    assert_eq!(exit_status("    Process exited with code 2"), Some(2));
}

/// Y-5 (brk finding 5): node's uncaught error, a JS error name at column 0 with a stack
/// frame on the next line; without the frame, or indented, it is prose or content.
#[test]
fn y5_brk5_node_uncaught_error_needs_its_stack_frame() {
    assert!(text_reports_failure("/app/x.js:1\nfoo();\n^\n\nReferenceError: foo is not defined\n    at Object.<anonymous> (/app/x.js:1:1)\n\nNode.js v20.11.1"));
    for t in ["checked the handlers\nTypeError: is raised for a bad input\nall good", "log:\n  TypeError: x is not a function\n    at f (a.js:1:1)", "listing\nMyError: note\n    at: the top"] {
        assert!(!text_reports_failure(t), "{t:?}");
    }
}

/// Y-5 (brk finding 5): Python's `SyntaxError` / `IndentationError` after its `  File
/// "...", line N` line; the name alone is prose.
#[test]
fn y5_brk5_python_syntax_error_needs_its_file_line() {
    for t in ["  File \"a.py\", line 3\n    if x\n        ^\nSyntaxError: expected ':'", "Sorry:\n  File \"b.py\", line 2\n    y = 1\nIndentationError: unexpected indent"] {
        assert!(text_reports_failure(t), "{t:?}");
    }
    for t in ["the parser raises\nSyntaxError: invalid syntax\nfor such input", "  File \"a.py\", line 3\n    if x\nSyntaxWarning: invalid escape sequence"] {
        assert!(!text_reports_failure(t), "{t:?}");
    }
}

/// Y-5 (brk finding 5): git's refused push, a C compiler's `path:line:col: error:`, and
/// Jest's `FAIL` badge (after at most one space) are signatures; warnings, blanks in
/// the path and deeper indents are not.
#[test]
fn y5_brk5_push_compiler_and_jest_signatures() {
    for t in [
        "To github.com:o/r.git\n ! [rejected]  main -> main (non-fast-forward)\nerror: failed to push some refs to 'github.com:o/r.git'",
        "gcc -c a.c\nsrc/a.c:12:7: error: 'y' undeclared (first use in this function)",
        "\n> app@1.0.0 test\n> jest\n\nFAIL src/a.test.js\n  ● works",
        "\n> app@1.0.0 test\n> jest\n\n FAIL  src/a.test.js",
    ] {
        assert!(text_reports_failure(t), "{t:?}");
    }
    for t in [
        "notes\n  error: failed to push some refs (quoted)",
        "gcc -c a.c\nsrc/a.c:12:7: warning: unused variable 'y'",
        "list\nmy dir/a.c:12:7: error: x",
        "list\nsrc/a.c:12: error: x",
        "> app@1.0.0 test\n> jest\n\n  FAIL  indented twice",
        "> app@1.0.0 test\n\nFAIL ",
    ] {
        assert!(!text_reports_failure(t), "{t:?}");
    }
}

/// Y-5 (brk finding 5): a proxy's `200 Connection established` gives way to the
/// server's response after it; a 200 OK's body is still not read for a status.
#[test]
fn y5_brk5_a_proxy_preamble_gives_way_to_the_servers_status() {
    assert!(text_reports_failure("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 503 Service Unavailable\r\n\r\ndown"));
    for t in ["HTTP/1.1 200 Connection established\n\nHTTP/2 200\ncontent-type: text/html\n\nok", "HTTP/1.1 200 OK\n\nHTTP/1.1 404 Not Found\n(a body quoting a response)"] {
        assert!(!text_reports_failure(t), "{t:?}");
    }
}

/// Y-5 (brk finding 6): the verdicts libtest, pytest and Jest print on their run.
#[test]
fn y5_brk6_runner_verdicts() {
    for (l, v) in [
        ("test result: ok. 2 passed; 0 failed; 0 ignored", true),
        ("test result: FAILED. 1 passed; 1 failed; 0 ignored", false),
        ("============ 3 passed, 1 skipped in 0.12s ============", true),
        ("2 passed in 0.01s", true),
        ("===== 1 failed, 2 passed, 1 warning in 1.05s =====", false),
        ("===== 2 passed, 1 error in 1.05s =====", false),
        ("Tests:       3 passed, 3 total", true),
        ("Tests:       1 failed, 2 passed, 3 total", false),
    ] {
        assert_eq!(runner_verdict(l), Some(v), "{l:?}");
    }
    for l in ["2 passed in the hallway", "test result: pending", "Tests: all green", "==== 0 passed in 0.01s ====", "3 passed"] {
        assert_eq!(runner_verdict(l), None, "{l:?}");
    }
}

/// Y-5 (brk finding 6): a passing verdict in the last lines outweighs a signature
/// before it, not one after it, not a failing verdict among those lines, and not a
/// first line that opens as an error.
#[test]
fn y5_brk6_a_passing_verdict_outweighs_only_an_earlier_signature() {
    let panic = "running 1 test\nthread 't' panicked at src/lib.rs:2:5:\nboom\ntest t - should panic ... ok\n\n";
    assert!(!text_reports_failure(&format!("{panic}test result: ok. 1 passed; 0 failed")));
    assert!(!text_reports_failure("collected 2 items\nTraceback (most recent call last):\n  File \"t.py\", line 1\nValueError: x\n\n======= 2 passed in 0.10s ======="));
    assert!(!text_reports_failure("> jest\nconsole.error\nTypeError: x is not a function\n    at f (a.js:1:1)\nTests:       2 passed, 2 total\nTime:        0.5 s"));
    // a signature after the verdict still fails the call
    assert!(text_reports_failure(&format!("{panic}test result: ok. 1 passed; 0 failed\n\nthread 'main' panicked at src/main.rs:1:1:\nx")));
    // a failing verdict among the last lines: the later ok is another test binary's
    assert!(text_reports_failure(&format!("{panic}test result: FAILED. 0 passed; 1 failed\n     Running tests/b.rs\nrunning 0 tests\ntest result: ok. 0 passed; 0 failed")));
    assert!(text_reports_failure(&format!("{panic}test result: FAILED. 0 passed; 1 failed")));
    // a first line opening as an error is not outweighed
    assert!(text_reports_failure("thread 'main' panicked at src/main.rs:1:1:\nx\ntest result: ok. 1 passed; 0 failed"));
}

/// Y-5 (brk finding 6): a traceback a logger printed (a log record at ERROR / WARNING /
/// CRITICAL right before it) while the program went on logging is handled; one with no
/// log record after it, or none before it, is an uncaught exception.
#[test]
fn y5_brk6_a_logged_traceback_the_program_survived_is_not_a_failure() {
    let tb = "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    connect()\nConnectionError: refused\n";
    assert!(!text_reports_failure(&format!("INFO starting\nERROR:root:retrying\n{tb}INFO retry ok\nINFO done")));
    assert!(!text_reports_failure(&format!("starting\nWARNING worker: transient\n{tb}DEBUG: retried")));
    for t in [format!("INFO starting\nERROR:root:giving up\n{tb}"), format!("INFO starting\n{tb}INFO done"), format!("INFO starting\nERROR:root:x\n{tb}done, bye")] {
        assert!(text_reports_failure(&t), "{t:?}");
    }
}
