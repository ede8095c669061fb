//! Breaker findings (issue 13, branch brk2) over the newest changes: failure reading
//! (Y-5), quoting across line breaks (Y-9) and errors resolved by a later success
//! (Y-3 / Y-5). Each test is `#[ignore]`d: it fails on today's tree; its doc comment
//! states the finding, what is expected and what happens.

mod common;
use common::*;
use context_compactor::formats::failure::text_reports_failure;
use context_compactor::quote::{content, content_len};
use serde_json::json;

/// The §5 line of a handoff naming call `id` (`[id]`), or an empty string.
fn error_line(h: &str, id: &str) -> String {
    let tag = format!("[{id}]");
    section(h, 5).lines().find(|l| l.contains(&tag)).unwrap_or("").to_string()
}

/// Y-5 (brk2 finding 1, errors resolved by an unrelated success): an editor tool whose
/// arguments hold a subcommand in `command` (SWE-agent's `str_replace_editor`,
/// Anthropic's text editor tool: `{"command": "str_replace", "path": ...}`) has that
/// word taken as its shell command, so a failed edit of `/repo/a.py` is "resolved" by a
/// later successful edit of another file. Expected: c1's §5 line says it is not
/// resolved (no later call touched `/repo/a.py`). Actual: `- str_replace_editor
/// `str_replace` [c1] failed: ...; resolved: a later str_replace_editor call (c2)
/// succeeded` (`summarize::facts::arg_paths` keeps `command` as the call's command;
/// the same head match, `handoff::head_names`, resolves carried lines across folds).
#[test]
fn y5_brk2_1_an_edit_of_another_file_does_not_resolve_a_failed_edit() {
    let doc = session(
        "fix the bug in a.py and b.py",
        &[
            ("c1", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/a.py", "old_str": "x = 1", "new_str": "x = 2"}), "Error: No replacement was performed, old_str `x = 1` did not appear verbatim in /repo/a.py."),
            ("c2", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/b.py", "old_str": "y = 1", "new_str": "y = 2"}), "The file /repo/b.py has been edited. Here's the result of running `cat -n` on a snippet of /repo/b.py:\n     1\ty = 2\nReview the changes and make sure they are as expected."),
        ],
        "b.py is done; a.py still needs the edit.",
        "go on",
    );
    let h = handoff(&doc, 6_000);
    let line = error_line(&h, "c1");
    assert!(line.contains("failed"), "c1 is a failed call:\n{h}");
    assert!(!line.contains("resolved: a later str_replace_editor call (c2)"), "an edit of /repo/b.py does not fix the failed edit of /repo/a.py:\n{line}");
    assert!(line.ends_with("not resolved in the folded rows"), "{line}");
}

/// Y-5 (brk2 finding 2, errors resolved by an unrelated success): `core_command` drops a
/// leading `cd DIR &&`, so a test run that failed in `/repo` is "resolved" by the same
/// test command succeeding in another directory (a monorepo's other package).
/// Expected: c3 not resolved. Actual: `...; resolved: a later bash call (c4) succeeded`.
#[test]
fn y5_brk2_2_the_same_command_in_another_directory_does_not_resolve() {
    let doc = session(
        "run the tests of both packages",
        &[
            ("c3", "bash", json!({"command": "cd packages/api && npm test"}), "> api@1.0.0 test\n> node test.js\n\nnpm ERR! Test failed.  See above for more details."),
            ("c4", "bash", json!({"command": "cd packages/web && npm test"}), "> web@1.0.0 test\n> node test.js\n\nall 12 checks passed"),
        ],
        "web passes, api fails.",
        "fix api",
    );
    let h = handoff(&doc, 6_000);
    let line = error_line(&h, "c3");
    assert!(line.contains("failed"), "{h}");
    assert!(line.ends_with("not resolved in the folded rows"), "packages/web passing does not fix packages/api:\n{line}");
}

/// Y-5 (brk2 finding 3, a failed run read as success): Jest with one suite that failed
/// to run (a missing module) prints its ` FAIL  path` badge and `Test Suites: 1 failed`,
/// but `Tests: 3 passed, 3 total` (the broken suite ran no test); that passing verdict
/// in the last lines outweighs the badge. Expected: a failure (Jest exits 1). Actual:
/// `text_reports_failure` is false.
#[test]
fn y5_brk2_3_jest_suite_that_failed_to_run_is_a_failure() {
    let out = "> app@1.0.0 test\n> jest\n\n PASS  src/b.test.js\n FAIL  src/a.test.js\n  \u{25cf} Test suite failed to run\n\n    Cannot find module './x' from 'src/a.test.js'\n\nTest Suites: 1 failed, 1 passed, 2 total\nTests:       3 passed, 3 total\nSnapshots:   0 total\nTime:        0.512 s\nRan all test suites.";
    assert!(text_reports_failure(out), "{out}");
}

/// Y-5 (brk2 finding 4, a failed run read as success): `cargo test --no-fail-fast` with
/// a failing integration test, then the doc tests (over 40 lines, all `ok`). Only
/// passing verdicts are in the last 40 lines, so everything before the last one (the
/// panic, `test result: FAILED.`) is skipped, and cargo's closing `error: 1 target
/// failed:` is no signature. Expected: a failure. Actual: false.
#[test]
fn y5_brk2_4_cargo_no_fail_fast_with_a_failed_target_is_a_failure() {
    let mut out = String::from("     Running tests/it.rs (target/debug/deps/it-0123)\n\nrunning 1 test\ntest c ... FAILED\n\nfailures:\n\n---- c stdout ----\nthread 'c' panicked at tests/it.rs:3:5:\nboom\n\nfailures:\n    c\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   Doc-tests foo\n\nrunning 45 tests\n");
    for k in 0..45 {
        out.push_str(&format!("test src/lib.rs - f{k} (line {}) ... ok\n", 10 + k));
    }
    out.push_str("\ntest result: ok. 45 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.20s\n");
    // the failing verdict alone, without cargo's closing line
    assert!(text_reports_failure(&out), "{out}");
    // cargo's closing lines alone are signatures
    for close in ["error: 1 target failed:\n    `--test it`\n", "error: 2 targets failed:\n", "error: test failed, to rerun pass `--test it`\n"] {
        assert!(context_compactor::formats::failure::window_signature(&format!("running 1 test\n{close}")), "{close}");
    }
    out.push_str("\nerror: 1 target failed:\n    `--test it`\n");
    assert!(text_reports_failure(&out), "{out}");
}

/// Y-5 (brk2 finding 5, a failed run read as success): pytest's own failing verdict is
/// no signature: a collection error (`1 error in 0.10s`, exit 2) and a fixture error
/// beside passing tests (`1 passed, 1 error in 0.02s`, exit 1) have no `FAILED a::b`
/// line. `runner_verdict` reads both as `Some(false)`, yet only uses that to keep a
/// passing verdict from winning. Expected: failures. Actual: false.
#[test]
fn y5_brk2_5_pytest_errors_verdict_is_a_failure() {
    for out in [
        "==================================== ERRORS ====================================\n_________________ ERROR collecting tests/test_a.py _________________\nImportError while importing test module '/app/tests/test_a.py'.\nE   ModuleNotFoundError: No module named 'foo'\n=========================== short test summary info ============================\nERROR tests/test_a.py\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n=============================== 1 error in 0.10s ===============================",
        "tests/test_a.py .E                                                      [100%]\n\n==================================== ERRORS ====================================\n_______________________ ERROR at setup of test_db _______________________\nfile /app/tests/test_a.py, line 4\n  def test_db(db):\nE       fixture 'db' not found\n=========================== short test summary info ============================\nERROR tests/test_a.py::test_db\n========================= 1 passed, 1 error in 0.02s ==========================",
    ] {
        assert!(text_reports_failure(out), "{out}");
    }
}

/// Y-5 (brk2 finding 6, a crash read as success): node's uncaught error is recognised
/// only as an `XxxError: ` name directly followed by a `    at ` frame, so the two
/// commonest uncaught crashes are missed: `assert`'s `AssertionError [ERR_ASSERTION]:`
/// (its message and a blank line before the frames) and a plain `throw new Error(...)`
/// (`Error: boom`), both under node's `file:line` / caret block and `Node.js v20`
/// trailer. Expected: failures. Actual: false.
#[test]
#[ignore = "brk2 finding 6: node's coded and plain uncaught errors"]
fn y5_brk2_6_node_uncaught_assertion_and_plain_errors_are_failures() {
    for out in [
        "> app@1.0.0 test\n> node test.js\n\n/app/test.js:2\nassert.strictEqual(1, 2);\n       ^\n\nAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n1 !== 2\n\n    at Object.<anonymous> (/app/test.js:2:8)\n    at Module._compile (node:internal/modules/cjs/loader:1376:14) {\n  generatedMessage: true,\n  code: 'ERR_ASSERTION'\n}\n\nNode.js v20.11.1",
        "/app/x.js:1\nthrow new Error('boom');\n^\n\nError: boom\n    at Object.<anonymous> (/app/x.js:1:7)\n    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n\nNode.js v20.11.1",
    ] {
        assert!(text_reports_failure(out), "{out}");
    }
}

/// Y-5 (brk2 finding 7, a run that went on read as failed): a traceback logged between
/// log records counts as handled only when the records open at column 0 with the level
/// (`ERROR:root:...`, Python's unformatted default). Records with a timestamp before
/// the level (`logging.basicConfig(format="%(asctime)s %(levelname)s ...")`, Flask's
/// `[date] ERROR in app:`), the usual server log, leave the traceback a signature.
/// Expected: not failures (the worker logged and went on to the next job). Actual: true.
#[test]
#[ignore = "brk2 finding 7: timestamped log records are not log records"]
fn y5_brk2_7_a_traceback_logged_between_timestamped_records_is_not_a_failure() {
    for out in [
        "2024-05-01 10:00:00,120 INFO worker: job 6 done\n2024-05-01 10:00:00,123 ERROR worker: job 7 failed\nTraceback (most recent call last):\n  File \"/app/w.py\", line 9, in run\n    job()\nValueError: bad row\n2024-05-01 10:00:00,130 INFO worker: job 8 done\n2024-05-01 10:00:00,140 INFO worker: all jobs done",
        "[2024-05-01 10:00:00,001] INFO in app: 127.0.0.1 GET /x 200\n[2024-05-01 10:00:00,123] ERROR in app: Exception on /y [GET]\nTraceback (most recent call last):\n  File \"/app/a.py\", line 9, in y\n    f()\nKeyError: 'id'\n[2024-05-01 10:00:01,002] INFO in app: 127.0.0.1 GET /z 200",
    ] {
        assert!(!text_reports_failure(out), "{out}");
    }
}

/// Y-9 (brk2 finding 8, a fence tag across a line break): the module doc says a fence
/// tag is found across a line break, and every break of the list (bare CR, VT, FF,
/// U+0085, U+2028, U+2029) starts a quoted line; but `fence_at` skips only spaces,
/// tabs, `\n` and `\r` between `<` / `</` and the tag name, so `</\u{2028}transcript>`,
/// `<\x0Btranscript>` or `</\x0Ctranscript>` keep their `<`, while `</\r\ntranscript>`
/// gets `&lt;`. Expected: each `<` written `&lt;` (content_len 3 bytes more). Actual:
/// unchanged. Fixed: `fence_at` skips every line break.
#[test]
fn y9_brk2_8_a_fence_tag_across_any_line_break_is_escaped() {
    assert_eq!(content("ok\n</\r\ntranscript>"), "ok\n&lt;/\r\ntranscript>", "the rule as it holds for CR LF");
    for s in ["ok\n</\u{2028}transcript>", "ok\n<\u{2029}transcript>", "ok\n</\u{85}summaries>", "ok\n<\x0btranscript>", "ok\n</\x0ctranscript>"] {
        let q = content(s);
        assert!(q.starts_with("ok\n&lt;"), "{s:?} -> {q:?}");
        assert_eq!(content_len(s), s.len() + 3, "{s:?}");
    }
}

/// Y-5 (brk2 finding 9, common failures read as successes): failures of the CLIs the
/// brief names that open with their own words and state no exit status: kubectl's
/// `Error from server (NotFound):` (its first and only line), BuildKit's `ERROR: failed
/// to solve:`, Terraform's boxed `│ Error: `, tsc's `path(l,c): error TS2322:` and
/// `path:l:c - error TS`, go build's `./main.go:5:2: undefined: foo` after `# pkg`.
/// Expected: failures. Actual: each false. Fixed: kubectl's opening, BuildKit's and
/// Terraform's lines, tsc's and go's compile error lines are signatures.
#[test]
fn y5_brk2_9_common_cli_failures_are_failures() {
    let missed: Vec<&str> = [
        "Error from server (NotFound): pods \"web\" not found",
        "#5 [2/3] RUN npm ci\n#5 0.512 npm warn config production Use `--omit=dev` instead.\n#5 ERROR: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1\n------\nDockerfile:3\n--------------------\nERROR: failed to solve: process \"/bin/sh -c npm ci\" did not complete successfully: exit code: 1",
        "Planning failed. Terraform encountered an error while generating this plan.\n\n\u{2577}\n\u{2502} Error: Unsupported argument\n\u{2502}\n\u{2502}   on main.tf line 12, in resource \"aws_instance\" \"web\":\n\u{2575}",
        "> app@1.0.0 build\n> tsc\n\nsrc/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/index.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'.\n\n3 const x: number = 'a';\n        ~\n\nFound 1 error in src/index.ts:3",
        "# example.com/m\n./main.go:5:2: undefined: foo",
    ]
    .into_iter()
    .filter(|t| !text_reports_failure(t))
    .collect();
    assert!(missed.is_empty(), "read as successes: {missed:#?}");
}

/// Y-5 (brk2 finding 10, a run that went on read as failed): a program that prints an
/// error it caught with its stack (`console.error(err)`: `TypeError: ...` then `    at `)
/// and goes on to finish matches node's uncaught-error signature; only an uncaught one
/// ends the process (node's `Node.js v20` trailer, nothing of the program after it).
/// Expected: not a failure. Actual: true.
#[test]
#[ignore = "brk2 finding 10: a caught and logged node error"]
fn y5_brk2_10_a_caught_node_error_printed_with_its_stack_is_not_a_failure() {
    let out = "processing item 1\nTypeError: Cannot read properties of undefined (reading 'x')\n    at handle (/app/a.js:3:9)\n    at main (/app/a.js:9:5)\nskipping item 1\nprocessing item 2\ndone: 1 ok, 1 skipped";
    assert!(!text_reports_failure(out), "{out}");
}

/// A forced fold by the engine's own writer (no summarizer) of an OpenAI Chat `doc`
/// (16k window, one recent turn kept): the text of its summary row.
fn mechanical_summary_text(doc: Vec<serde_json::Value>) -> String {
    let o = mechanical(doc, json!({"profile": "default", "contextWindow": 16000, "preserveRecentTurns": 1}));
    assert_eq!(o.status, "compacted", "{}", o.reason);
    o.transcript.messages.iter().filter(|m| m.is_summary()).map(|m| m.text()).collect::<Vec<_>>().join("\n")
}

/// Y-6 / Y-5 (brk2 finding 11, a short fold's handoff drops its failed call): a short
/// fold (one request, one failed `make` call of ~650 bytes of output, one answer) gets
/// the handoff bounded to three quarters of the folded rows' bytes
/// (`engine::build`, `fold_bytes / 4 * 3`) before the issue-13 cut-handoff check runs,
/// and that check (which keeps every failed call's §5 line) runs only when the result
/// outgrows the rows. The summary written is every section as a `[clipped: ...]`
/// marker, cut mid-header (`[§8 Current work (the last as`), with no §5 line for c0.
/// Expected: the failed call c0 is named as failed in the summary (its §5 line, as the
/// floor-only summary would carry it). Actual: `[clipped: 1 more errors not shown here
/// (summary budget); ...]` and nothing names c0. Fixed: a handoff that lost a failed
/// call's §5 line gives way to the floor with those lines while that still shrinks the
/// transcript (`engine::build`).
#[test]
fn y5_y6_brk2_11_a_short_folds_summary_names_its_failed_call() {
    let mut doc = session(
        "fix the build; do not touch vendor/ and keep the API stable",
        &[("c0", "bash", json!({"command": "cd /repo && make target0"}), &format!("make: *** [Makefile:3: target0] Error 1\n{}", "cc: fatal error: no input files\n".repeat(20)))],
        "The build fails at target0: the compiler gets no input files.",
        "next: ship it",
    );
    doc.push(asst("ok"));
    let s = mechanical_summary_text(doc);
    assert!(s.lines().any(|l| l.contains("[c0]") && l.contains("failed")), "the failed make call is named:\n{s}");
}

/// A session over many folds: a failed `str_replace_editor` edit of `/repo/a.py` (s1)
/// and a failed long one-line pytest command (L1) early; reads; later a successful edit
/// of another file, `/repo/b.py` (s2), and the same long command passing (L2); more
/// reads after.
fn many_folds_session(long: &str) -> Vec<serde_json::Value> {
    let reads = |rows: &mut Vec<serde_json::Value>, from: usize, to: usize| {
        for k in from..to {
            rows.push(call(&format!("r{k}"), "Read", json!({"file_path": format!("/repo/src/part{k}.py")})));
            rows.push(result(&format!("r{k}"), &(0..30).map(|i| format!("line {i} of part {k}")).collect::<Vec<_>>().join("\n")));
            rows.push(asst(&format!("Finding {k}: part {k} looks fine.")));
        }
    };
    let mut rows = vec![sys(), user("Make the test suite pass.")];
    rows.push(call("s1", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/a.py", "old_str": "x = 1", "new_str": "x = 2"})));
    rows.push(result("s1", "Error: No replacement was performed, old_str `x = 1` did not appear verbatim in /repo/a.py."));
    rows.push(call("L1", "bash", json!({"command": long})));
    rows.push(result("L1", "FAILED tests/test_module_3.py::test_x - assert 1 == 2\n1 failed, 40 passed in 1.2s"));
    reads(&mut rows, 0, 6);
    rows.push(user("keep going"));
    reads(&mut rows, 6, 10);
    rows.push(call("s2", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/b.py", "old_str": "y = 1", "new_str": "y = 2"})));
    rows.push(result("s2", "The file /repo/b.py has been edited."));
    rows.push(call("L2", "bash", json!({"command": long})));
    rows.push(result("L2", "41 passed in 1.2s"));
    rows.push(user("Good."));
    reads(&mut rows, 10, 18);
    rows.push(asst("done"));
    rows
}

/// A one-line pytest command naming 12 test files (323 bytes: over a §5 line's clip).
fn long_pytest() -> String {
    format!("cd /repo && python -m pytest {} -x -q --tb=short", (0..12).map(|k| format!("tests/test_module_{k}.py")).collect::<Vec<_>>().join(" "))
}

/// The last §5 line naming call `id` in the summaries of `t`.
fn carried_line(t: &context_compactor::transcript::Transcript, id: &str) -> String {
    let tag = format!("[{id}] ");
    t.messages.iter().filter(|m| m.is_summary()).flat_map(|m| context_compactor::summarize::narrative_part(&m.text()).lines().filter(|l| l.starts_with("- ") && l.contains(&tag)).map(str::to_string).collect::<Vec<_>>()).last().unwrap_or_default()
}

/// The transcript after [`many_folds_session`] is fed 4 rows at a time, each step a
/// forced deterministic fold (16k window), and how many folds ran.
fn fold_many(long: &str) -> (context_compactor::transcript::Transcript, usize) {
    fold_rows(many_folds_session(long))
}

/// [`fold_many`] over OpenAI Chat rows `rows`.
fn fold_rows(rows: Vec<serde_json::Value>) -> (context_compactor::transcript::Transcript, usize) {
    let full = context_compactor::formats::decode(context_compactor::formats::Format::OpenaiChat, serde_json::Value::Array(rows)).unwrap();
    let config = context_compactor::config::Config::from_options(&json!({ "contextWindow": 16000 })).unwrap();
    let mut folds = 0;
    let cur = forced_fold_loop(&full, 4, 4, &config, |_| folds += 1);
    (cur, folds)
}

/// Y-3 / Y-5 (brk2 finding 1 across folds): the carried §5 line `- str_replace_editor
/// `str_replace` [s1] failed: ...` (an edit of `/repo/a.py`) is resolved several folds
/// later by the successful edit of `/repo/b.py` (`handoff::head_names` matches the line's
/// "command" `str_replace`, the editor's subcommand). Expected: s1 still `not resolved
/// in the folded rows`. Actual: `...; resolved: a later str_replace_editor call (s2)
/// succeeded` from the seventh fold on.
#[test]
fn y3_brk2_1b_an_edit_of_another_file_does_not_resolve_a_carried_failed_edit() {
    let (cur, folds) = fold_many("cd /repo && python -m pytest tests -x -q");
    assert!(folds >= 5, "{folds}");
    let s1 = carried_line(&cur, "s1");
    assert!(s1.starts_with("- str_replace_editor") && s1.contains("failed"), "{s1}");
    assert!(s1.ends_with("not resolved in the folded rows"), "an edit of /repo/b.py does not fix /repo/a.py: {s1}");
}

/// Y-3 / Y-5 (brk2 finding 12, a fixed error never resolved across folds): a one-line
/// command over the §5 line's clip (a pytest run naming 12 test files, 323 bytes) is
/// written `` `cd /repo && python -m pytest tests/test_module_0.py ... tests/test_modul…` ``,
/// and a carried line whose command ends with `…` is resolved by no later call
/// (`handoff::head_names`: the rule meant for heredocs sharing their first line). The
/// very same command passing (L2) folds later leaves L1 `not resolved in the folded
/// rows` in every summary to the end (13 folds). Expected: `resolved: a later bash call
/// (L2) succeeded`.
#[test]
#[ignore = "brk2 finding 12: the fold that carries the resolution is refused (no_reduction)"]
fn y3_brk2_12_a_long_command_fixed_folds_later_is_resolved() {
    let long = long_pytest();
    let (cur, folds) = fold_many(&long);
    assert!(folds >= 5, "{folds}");
    let l1 = carried_line(&cur, "L1");
    assert!(l1.starts_with("- bash `cd /repo && python -m pytest") && l1.contains("failed"), "{l1}");
    assert!(l1.contains("resolved: a later bash call (L2) succeeded"), "the same command passed later: {l1}");
}

/// Y-5 (brk2 finding 13, harness exit statuses not read): two agent harnesses' own
/// footers state a failed command's status in words [`exit_status`] does not read:
/// OpenHands' `[The command completed with exit code 1.]` (the status after other
/// words in the bracket) and mini-swe-agent's `<returncode>1</returncode>` (a tag, not
/// `[` / `(`, before the word). With no signature in the output (a test script's own
/// summary), the call is an ordinary success. Expected: each call is a failed call of
/// §5 (`[o1] failed (exit 1)`, `[m1] failed (exit 1)`). Actual: no §5, the calls are
/// successes in §4.
#[test]
fn y5_brk2_13_harness_exit_status_footers_are_read() {
    let doc = session(
        "run the checks",
        &[
            ("o1", "execute_bash", json!({"command": "./check.sh"}), "checked 12 files, 2 problems\n[The command completed with exit code 1.]"),
            ("m1", "bash", json!({"command": "./lint.sh"}), "<returncode>1</returncode>\n<output>\nlint: 3 problems in src/a.py\n</output>"),
        ],
        "Both checks report problems.",
        "fix them",
    );
    let h = handoff(&doc, 6_000);
    assert!(h.contains("[o1] failed (exit 1)"), "{h}");
    assert!(h.contains("[m1] failed (exit 1)"), "{h}");
}

/// Y-5 (brk2 finding 14, a retried run that passed read as failed; low): `npx jest ||
/// npx jest` (a retry of a flaky suite) prints the first run's ` FAIL  path` and
/// `Tests: 1 failed, 4 passed`, then the retry's `Tests: 5 passed`; with a failing
/// verdict anywhere in the last 40 lines the passing verdict after it does not
/// outweigh the badge. The retry is the command's outcome (exit 0). Expected: not a
/// failure. Actual: true.
#[test]
fn y5_brk2_14_a_retry_that_passed_is_not_a_failure() {
    let out = " FAIL  src/net.test.js\n  \u{25cf} fetches \u{203a} retries\n\n    thrown: \"Exceeded timeout of 5000 ms for a test.\"\n\nTest Suites: 1 failed, 1 total\nTests:       1 failed, 4 passed, 5 total\nTime:        6.1 s\n PASS  src/net.test.js\n\nTest Suites: 1 passed, 1 total\nTests:       5 passed, 5 total\nTime:        1.2 s\nRan all test suites.";
    assert!(!text_reports_failure(out), "{out}");
}

/// Y-3 / Y-5 (brk2 finding 12, the rule alone): [`many_folds_session`] with the long
/// one-line command and more reads in the round of its passing run (L2), so the fold
/// that holds L2 folds more than L2's rows and is taken. L1's carried §5 line names the
/// command clipped (`…`); the very same command, clipped the same way, resolves it.
#[test]
fn y3_brk2_12b_a_clipped_one_line_command_is_resolved_by_the_same_command() {
    let long = long_pytest();
    let mut rows = many_folds_session(&long);
    let at = rows.iter().position(|r| r["content"] == "Good.").unwrap();
    let extra: Vec<serde_json::Value> = (30..34)
        .flat_map(|k| {
            vec![
                call(&format!("r{k}"), "Read", json!({"file_path": format!("/repo/src/part{k}.py")})),
                result(&format!("r{k}"), &(0..30).map(|i| format!("line {i} of part {k}")).collect::<Vec<_>>().join("\n")),
                asst(&format!("Finding {k}: part {k} looks fine.")),
            ]
        })
        .collect();
    rows.splice(at..at, extra);
    let (cur, folds) = fold_rows(rows);
    assert!(folds >= 5, "{folds}");
    let l1 = carried_line(&cur, "L1");
    assert!(l1.starts_with("- bash `cd /repo && python -m pytest tests/test_module_0.py") && l1.contains("tests/test_modul…` [L1] failed"), "the line names the command clipped: {l1}");
    assert!(l1.ends_with("resolved: a later bash call (L2) succeeded"), "the same command passed later: {l1}");
}

/// Y-5 (brk2 finding 1, the editor's subcommands): with the editor's `command` no longer
/// its command, a failed edit of `/repo/a.py` is resolved on its path; a `view` of that
/// file edits nothing, so it neither resolves the failed edit nor counts as an edit
/// before the later successful one (c3). Expected: `resolved: a later
/// str_replace_editor call (c3) succeeded`, no `after edits`, c2 named nowhere in it.
#[test]
fn y5_brk2_1c_a_view_of_the_file_does_not_resolve_a_failed_edit() {
    let doc = session(
        "fix the bug in a.py",
        &[
            ("c1", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/a.py", "old_str": "x = 1", "new_str": "x = 2"}), "Error: No replacement was performed, old_str `x = 1` did not appear verbatim in /repo/a.py."),
            ("c2", "str_replace_editor", json!({"command": "view", "path": "/repo/a.py"}), "Here's the result of running `cat -n` on /repo/a.py:\n     1\tx  =  1"),
            ("c3", "str_replace_editor", json!({"command": "str_replace", "path": "/repo/a.py", "old_str": "x  =  1", "new_str": "x = 2"}), "The file /repo/a.py has been edited."),
        ],
        "a.py is fixed.",
        "go on",
    );
    let h = handoff(&doc, 6_000);
    let line = error_line(&h, "c1");
    assert!(line.starts_with("- str_replace_editor on /repo/a.py [c1] failed"), "{h}");
    assert!(line.ends_with("; resolved: a later str_replace_editor call (c3) succeeded"), "the view c2 is no fix and no edit:\n{line}");
}
