//! Failed tool results in formats without an error flag, or whose flag is absent (Y-5).
//!
//! OpenAI chat `tool` messages and Responses `function_call_output` items carry no
//! error flag; an Anthropic `tool_result` may leave `is_error` out and an AI SDK
//! `text` / `json` output has none (an explicit flag, true or false, always wins over
//! reading). Whether such a call failed is read from its output, conservatively
//! ([`text_reports_failure`]): an output whose *first non-blank line opens* as an error,
//! an HTTP response whose final status is 4xx / 5xx, a JSON object that says so at its
//! top level ([`json_error`]), or, when the output states no exit status, a specific
//! failure signature at the start of a line in its first or last 40 lines
//! ([`window_signature`]: a Rust panic, node's missing module, a traceback, ...) that
//! no test runner's passing verdict after it outweighs, or a runner's failing verdict
//! ([`runner_verdict`]). A result
//! that merely mentions the word "error" in prose is not a failure, and an output
//! stating exit status 0 is not read for an HTTP status or a later signature. A non-zero
//! exit status ([`exit_status`]: the harness's, at a line's start or the top level of a
//! JSON output, not one the command reports of another process) is read separately
//! (`summarize::facts`), for every format.

use serde_json::Value;

/// POSIX errno names a Node / libc error message opens with (`ENOENT: no such file ...`).
const ERRNO_NAMES: [&str; 16] = [
    "ENOENT", "EACCES", "EPERM", "EISDIR", "ENOTDIR", "EEXIST", "ENOTEMPTY", "EBUSY", "EMFILE", "ENOSPC", "EROFS", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT",
    "EADDRINUSE", "EPIPE",
];

/// Lines [`window_signature`] reads at each end of an output.
const WINDOW_LINES: usize = 40;
/// UTF-8 bytes [`window_signature`] reads at each end of an output (and the HTTP
/// response head [`http_failure`] reads).
const WINDOW_BYTES: usize = 4_096;

/// Whether a tool output reports a failure (Y-5). True when any of these holds; an
/// output stating exit status 0 ([`exit_status`]: a line opening `Exit code 0` or
/// `exit status 0`, a JSON `"exit_code": 0`, ... in its first 2,000 bytes; prose naming
/// a status states none) is read for the first and third only (its opening line
/// and its JSON), since the status outweighs a wrapped HTTP response or a later line:
/// - its first non-blank line (leading whitespace ignored, first 2,000 bytes) opens as
///   an error ([`opens_as_error`]);
/// - it is an HTTP response ([`http_failure`]) whose final status is 4xx or 5xx
///   (`HTTP/1.1 404 Not Found` then headers and a body);
/// - the whole output is a JSON object that says so at its top level ([`json_error`]);
/// - it states no exit status at all and one of the lines of its first and last 40 lines
///   (4 KiB at each end) is a specific failure signature ([`window_signature`]), such as
///   a Rust panic after cargo's `Compiling` lines or node's `Error: Cannot find module`
///   after its loader's lines. The bare word `error` on a later line is not one. A test
///   runner's failing verdict in those lines is a failure ([`runner_verdict`]: libtest's
///   `test result: FAILED.` anywhere, the last of Jest's or pytest's: `Test Suites: 1
///   failed`, `1 passed, 1 error in 0.02s`); when none fails, a final passing verdict
///   (`test result: ok.`) outweighs a signature before it (a `#[should_panic]` test's
///   panic line, the first run of a retry that passed), not one after it.
///
/// The tool's name is not known here: see [`result_reports_failure`] for a result whose
/// call names a reader.
pub fn text_reports_failure(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, 2_000)).unwrap_or("");
    let first = head.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.is_empty() {
        return false;
    }
    // a stated exit status 0 outweighs what a later line or a wrapped HTTP response
    // holds, not an output that opens as an error (`Error: expected exit code 0, got 1`)
    let exit = exit_status(text);
    opens_as_error(first) || json_error(text) || (exit != Some(0) && http_failure(text)) || (exit.is_none() && runner_or_signature(text))
}

/// A test runner's own verdict on its run (Y-5, brk finding 6): libtest's `test result:
/// ok.` / `test result: FAILED.`, pytest's summary (`===== 2 passed, 1 skipped in 0.12s
/// =====`, `-q`'s bare `2 passed in 0.01s`), Jest's `Tests:       3 passed, 3 total` and
/// `Test Suites: 1 failed, 1 passed, 2 total`.
/// `Some(true)` when it says the run passed (pytest and Jest: some passed, none failed
/// and no error), `Some(false)` when it says it failed, `None` for any other line.
pub fn runner_verdict(line: &str) -> Option<bool> {
    let line = line.trim_end();
    if let Some(rest) = line.strip_prefix("test result: ") {
        return if rest.starts_with("ok.") { Some(true) } else if rest.starts_with("FAILED.") { Some(false) } else { None };
    }
    // `N word` parts, comma-separated: pytest's after its `=` rule, Jest's after `Tests:`
    let counts = |parts: &str, words: &[&str]| -> Option<Vec<(u64, String)>> {
        parts.split(", ").map(|p| {
            let (n, w) = p.trim().split_once(' ')?;
            let n: u64 = n.parse().ok()?;
            words.contains(&w).then(|| (n, w.to_string()))
        }).collect()
    };
    let says = |c: Vec<(u64, String)>, bad: &[&str]| {
        let failed = c.iter().any(|(n, w)| *n > 0 && bad.contains(&w.as_str()));
        let passed = c.iter().any(|(n, w)| *n > 0 && w == "passed");
        (failed || passed).then_some(!failed)
    };
    // Jest's `Test Suites: 1 failed, 1 passed, 2 total` (a suite that failed to run) too
    if let Some(rest) = line.strip_prefix("Tests:").or_else(|| line.strip_prefix("Test Suites:")) {
        return says(counts(rest.trim(), &["passed", "failed", "skipped", "todo", "total"])?, &["failed"]);
    }
    const PYTEST: [&str; 11] = ["passed", "failed", "skipped", "xfailed", "xpassed", "error", "errors", "warning", "warnings", "deselected", "rerun"];
    let inner = line.trim_matches(|c| c == '=' || c == ' ');
    let (parts, time) = inner.rsplit_once(" in ")?;
    let secs = time.split(' ').next().unwrap_or("").strip_suffix('s')?;
    if secs.parse::<f64>().is_err() {
        return None;
    }
    says(counts(parts, &PYTEST)?, &["failed", "error", "errors"])
}

/// The test runner whose verdict a line is ([`runner_verdict`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Runner {
    /// libtest's `test result: ...`: one per test binary cargo ran, never a retry.
    Libtest,
    /// Jest's `Test Suites:` / `Tests:` lines.
    Jest,
    /// pytest's summary line.
    Pytest,
}

/// One runner verdict in an output's windows: where its line (or Jest's `Test Suites:`
/// and `Tests:` lines together) ends in the output (a byte offset), its runner, and
/// whether it passed.
struct Verdict {
    end: usize,
    runner: Runner,
    passed: bool,
}

/// The runner verdicts ([`runner_verdict`]) among `text`'s first and last
/// [`WINDOW_LINES`] lines (each end within [`WINDOW_BYTES`]; a line in both read once),
/// in order (Y-5, brk2 findings 3 and 4). Jest's `Tests:` line right after its `Test
/// Suites:` line (only blanks between) joins it as one verdict that passed only when
/// both did: a suite that failed to run ran no test, so `Tests:` alone says passed.
fn verdicts(text: &str) -> Vec<Verdict> {
    let head = text.get(..crate::evict::floor_boundary(text, WINDOW_BYTES)).unwrap_or("");
    let offset = |l: &str| l.as_ptr() as usize - text.as_ptr() as usize;
    let head_end = head.lines().take(WINDOW_LINES).last().map_or(0, |l| offset(l) + l.len());
    let tail = tail_window(text);
    let lines = head.lines().take(WINDOW_LINES).chain(tail.into_iter().filter(|l| offset(l) >= head_end));
    let mut out: Vec<Verdict> = Vec::new();
    for line in lines {
        let Some(passed) = runner_verdict(line) else { continue };
        let (start, end) = (offset(line), offset(line) + line.len());
        let runner = if line.starts_with("test result: ") {
            Runner::Libtest
        } else if line.starts_with("Tests:") || line.starts_with("Test Suites:") {
            Runner::Jest
        } else {
            Runner::Pytest
        };
        if let Some(last) = out.last_mut() {
            let joined = runner == Runner::Jest && last.runner == Runner::Jest && line.starts_with("Tests:") && text.get(last.end..start).is_some_and(|gap| gap.trim().is_empty());
            if joined {
                last.end = end;
                last.passed &= passed;
                continue;
            }
        }
        out.push(Verdict { end, runner, passed });
    }
    out
}

/// Whether a test runner's own verdict says the run failed (Y-5, brk2 findings 3-5):
/// libtest's `test result: FAILED.` anywhere in the windows (cargo runs one binary after
/// another, so a later `test result: ok.` is another target's and hides none), or the
/// last verdict of Jest or of pytest failing (`Test Suites: 1 failed`, `1 passed, 1
/// error in 0.02s`); an earlier failing verdict of the same runner a later passing one
/// follows is a retry that passed (`npx jest || npx jest`).
fn verdicts_fail(all: &[Verdict]) -> bool {
    let last_fails = |r: Runner| all.iter().rev().find(|v| v.runner == r).is_some_and(|v| !v.passed);
    all.iter().any(|v| v.runner == Runner::Libtest && !v.passed) || last_fails(Runner::Jest) || last_fails(Runner::Pytest)
}

/// Whether a test runner's verdict ([`verdicts_fail`]) or a failure signature
/// ([`window_signature`]) says an output that states no exit status failed (Y-5). When
/// no verdict fails and the final one passed, only the part after it is read for a
/// signature (brk finding 6): a panic or traceback before it is the runner's report of
/// a test that passed (a `#[should_panic]` test under `--nocapture`) or of a run it
/// retried.
fn runner_or_signature(text: &str) -> bool {
    let all = verdicts(text);
    if verdicts_fail(&all) {
        return true;
    }
    match all.last() {
        Some(v) if v.passed => window_signature(text.get(v.end..).unwrap_or(text)),
        _ => window_signature(text),
    }
}

/// Whether an output is an HTTP response (its first non-blank line an HTTP status line,
/// `HTTP/<version> <3 digits>[ <reason>]`) whose final status is 4xx or 5xx (Y-5). The
/// final status: a 1xx or 3xx response, or a proxy's `200 Connection established`
/// (`proxy_preamble`), followed, after its headers' blank line, by another status line
/// (`100 Continue`, a redirect `curl -L -i` followed, the server's answer through a
/// proxy) gives way to that one. Only the first 4 KiB are read; text after the headers is the body and is
/// not read.
pub fn http_failure(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, WINDOW_BYTES)).unwrap_or("");
    let mut lines = head.lines().map(str::trim).skip_while(|l| l.is_empty());
    let Some(mut line) = lines.next() else { return false };
    let Some(mut status) = http_status(line) else { return false };
    while status < 200 || (300..400).contains(&status) || proxy_preamble(line) {
        // past the headers' blank line, the next response's status line, if any
        let mut rest = lines.by_ref().skip_while(|l| !l.is_empty()).skip_while(|l| l.is_empty());
        match rest.next().and_then(|l| Some((l, http_status(l)?))) {
            Some((l, next)) => (line, status) = (l, next),
            None => break,
        }
    }
    status >= 400
}

/// Whether an HTTP status line is a proxy's answer to `CONNECT` (`HTTP/1.1 200
/// Connection established`, reason in any case; brk finding 5): curl through a proxy
/// prints it before the server's own response, whose status is the final one.
fn proxy_preamble(line: &str) -> bool {
    http_status(line) == Some(200) && line.split_once(" 200 ").is_some_and(|(_, reason)| reason.trim().eq_ignore_ascii_case("connection established"))
}

/// The status of an HTTP status line: `HTTP/1.1 404 Not Found`, `HTTP/2 500`.
fn http_status(line: &str) -> Option<u16> {
    let rest = line.strip_prefix("HTTP/")?;
    let (version, rest) = rest.split_once(' ')?;
    if version.is_empty() || !version.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let code = rest.get(..3).filter(|c| c.bytes().all(|b| b.is_ascii_digit()))?;
    if !(rest.len() == 3 || rest[3..].starts_with(' ')) {
        return None;
    }
    code.parse().ok().filter(|c| (100..600).contains(c))
}

/// Whether one of an output's first or last [`WINDOW_LINES`] lines, each end read up to
/// [`WINDOW_BYTES`], is a failure signature (Y-5; [`text_reports_failure`] asks only
/// when the output states no exit status). A signature starts its line at column 0
/// (an indented, quoted or diffed copy is content) and is one of:
/// - Rust's `thread '<name>' panicked at`, rustc's `error[E0425]:`, cargo's `error: could
///   not compile `;
/// - node's `Error: Cannot find module '` or a coded `Error [ERR_...]:`, or its uncaught
///   `TypeError: ...` (a JS error name) followed by a `    at ` stack frame;
/// - `Traceback (most recent call last):` (not one a logger printed while the program
///   went on: a log record at ERROR / WARNING / CRITICAL before it and another after
///   it), Python's `SyntaxError:` / `IndentationError:` after its `  File "...", line N`
///   line, Java's `Exception in thread "<name>"`, Go's `goroutine N [running]:`;
/// - a C compiler's `path:line:col: error: ...`, Jest's `FAIL` badge (` FAIL  path`);
/// - git's `error: failed to push some refs`;
/// - npm's `npm ERR!` / `npm error ...`;
/// - the Docker CLI's `Error response from daemon:` (or `docker: Error response from
///   daemon:`, after `docker run`'s pull lines);
/// - git's `fatal:` when it goes on with one of git's own failures (`not a git
///   repository`, `repository '`, `unable to access '`, `could not read `, `Authentication
///   failed`, `destination path '`, `pathspec '`, `ambiguous argument '`, `couldn't find
///   remote ref`);
/// - pytest's `FAILED <test id with ::>`;
/// - a shell saying it found no command, or a command's errno message (as
///   [`opens_as_error`] reads them: `ls: cannot access 'x': No such file or directory`);
/// - GNU make's own failure line ([`make_error`]: `make: *** [Makefile:3: all] Error 2`,
///   `make[1]: *** No rule to make target 'x'.  Stop.`);
/// - cargo's closing line when a test target failed: `error: 1 target failed:`, `error:
///   test failed, to rerun pass `--test it``.
pub fn window_signature(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, WINDOW_BYTES)).unwrap_or("");
    let head: Vec<&str> = head.lines().take(WINDOW_LINES).collect();
    if (0..head.len()).any(|i| signature_at(&head, i)) {
        return true;
    }
    let tail = tail_window(text);
    (0..tail.len()).any(|i| signature_at(&tail, i))
}

/// The last [`WINDOW_LINES`] lines of `text` within its last [`WINDOW_BYTES`], in order
/// (a line cut by the byte bound is not read).
fn tail_window(text: &str) -> Vec<&str> {
    let from = crate::evict::ceil_boundary(text, text.len().saturating_sub(WINDOW_BYTES));
    let mut tail = text.get(from..).unwrap_or("").lines();
    if from > 0 && text.as_bytes().get(from - 1) != Some(&b'\n') {
        tail.next();
    }
    let mut tail: Vec<&str> = tail.rev().take(WINDOW_LINES).collect();
    tail.reverse();
    tail
}

/// Whether line `i` of a window's `lines` is a failure signature ([`window_signature`]):
/// a one-line signature ([`signature_line`]) or one its neighbours make (node's uncaught
/// error, Python's `SyntaxError`), except a traceback a logger printed while the
/// program went on ([`logged_traceback`]).
fn signature_at(lines: &[&str], i: usize) -> bool {
    let Some(line) = lines.get(i).map(|l| l.trim_end()) else { return false };
    if line.starts_with("Traceback (most recent call last):") {
        return !logged_traceback(lines, i);
    }
    signature_line(line) || js_uncaught(lines, i) || python_syntax_error(lines, i)
}

/// Node's uncaught error (Y-5, brk finding 5): line `i` opens at column 0 with a JS
/// error name, an identifier ending `Error` longer than `Error` (`TypeError: `,
/// `ReferenceError: `), then `: `, and the next line is a stack frame (`    at `).
fn js_uncaught(lines: &[&str], i: usize) -> bool {
    let Some((name, _)) = lines.get(i).and_then(|l| l.split_once(": ")) else { return false };
    let named = name.len() > "Error".len() && name.ends_with("Error") && name.starts_with(|c: char| c.is_ascii_uppercase()) && name.bytes().all(|b| b.is_ascii_alphanumeric());
    named && lines.get(i + 1).is_some_and(|l| l.starts_with("    at "))
}

/// Python's `SyntaxError: ` or `IndentationError: ` at column 0 (Y-5, brk finding 5)
/// with, in the 4 lines before it, the `  File "<path>", line N` line naming where (the
/// code and caret lines between): a compile error Python reports without a traceback.
fn python_syntax_error(lines: &[&str], i: usize) -> bool {
    if !lines.get(i).is_some_and(|l| l.starts_with("SyntaxError: ") || l.starts_with("IndentationError: ")) {
        return false;
    }
    let file_line = |l: &str| {
        l.strip_prefix("  File \"").and_then(|r| r.split_once("\", line ")).is_some_and(|(path, n)| {
            let digits = n.bytes().take_while(u8::is_ascii_digit).count();
            !path.is_empty() && digits > 0 && (n.len() == digits || n[digits..].starts_with(','))
        })
    };
    lines.get(i.saturating_sub(4)..i).is_some_and(|before| before.iter().any(|l| file_line(l.trim_end())))
}

/// Whether the traceback whose header is line `i` of a window was printed by a logger
/// while the program went on (Y-5, brk finding 6): the line before it is a log record
/// at level `ERROR`, `WARNING` or `CRITICAL` ([`log_record`]: `ERROR:root:retrying`,
/// Python's `logger.exception`), and after the traceback's frames (its indented lines)
/// and exception line, a later line is a log record too (`INFO retry ok`). An uncaught
/// exception ends the program: nothing is logged after it.
fn logged_traceback(lines: &[&str], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|j| lines.get(j)).and_then(|l| log_record(l));
    if !before.is_some_and(|level| ["ERROR", "WARNING", "CRITICAL"].contains(&level)) {
        return false;
    }
    let frames = lines.get(i + 1..).unwrap_or(&[]).iter().take_while(|l| l.starts_with(' ')).count();
    // past the frames, the exception line, then the program's own lines
    lines.get(i + 2 + frames..).is_some_and(|rest| rest.iter().any(|l| log_record(l).is_some()))
}

/// The level a log record line opens with at column 0 (`DEBUG`, `INFO`, `WARNING`,
/// `ERROR`, `CRITICAL`), then `:` (Python logging's default `ERROR:root:msg`) or a space
/// (`INFO done`).
fn log_record(line: &str) -> Option<&'static str> {
    const LEVELS: [&str; 5] = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];
    LEVELS.into_iter().find(|l| line.strip_prefix(l).is_some_and(|r| r.starts_with([':', ' '])))
}

/// One line (untrimmed) of [`window_signature`]'s window: whether it is a signature.
fn signature_line(line: &str) -> bool {
    const STARTS: [&str; 13] = [
        "Error: Cannot find module '",
        // BuildKit's closing line, Terraform's boxed diagnostic (brk2 finding 9)
        "ERROR: failed to solve:",
        "\u{2502} Error: ",
        // git refusing a push (brk finding 5)
        "error: failed to push some refs",
        "Error response from daemon:",
        "docker: Error response from daemon:",
        "Traceback (most recent call last):",
        "Exception in thread \"",
        "npm ERR!",
        "error: could not compile `",
        "fatal: ",
        "FAILED ",
        "goroutine ",
    ];
    const GIT_FATAL: [&str; 10] = [
        "not a git repository",
        "repository '",
        "unable to access '",
        "could not read ",
        "Could not read ",
        "Authentication failed",
        "destination path '",
        "pathspec '",
        "ambiguous argument '",
        "couldn't find remote ref",
    ];
    // untrimmed at its start: every signature below opens at column 0
    let line = line.trim_end();
    if let Some(rest) = line.strip_prefix("fatal: ") {
        return GIT_FATAL.iter().any(|g| rest.starts_with(g));
    }
    if let Some(rest) = line.strip_prefix("FAILED ") {
        return rest.split_whitespace().next().is_some_and(|id| id.contains("::"));
    }
    if let Some(rest) = line.strip_prefix("goroutine ") {
        return rest.split_once(" [running]:").is_some_and(|(n, r)| r.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    }
    if let Some(rest) = line.strip_prefix("Error [ERR_") {
        return rest.split_once("]:").is_some_and(|(code, _)| !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'));
    }
    // cargo's closing line when a test target failed (brk2 finding 4): `error: 1 target
    // failed:` (`--no-fail-fast`), `error: test failed, to rerun pass `--test it``
    if let Some(rest) = line.strip_prefix("error: ") {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        if rest.starts_with("test failed, to rerun pass") || (n > 0 && [" target failed:", " targets failed:"].iter().any(|t| rest[n..].starts_with(t))) {
            return true;
        }
    }
    STARTS.iter().any(|s| line.starts_with(s)) || npm_error(line) || rust_panic(line) || rustc_error(line) || shell_not_found(line) || command_errno(line) || make_error(line) || compiler_error(line) || jest_fail(line) || tsc_error(line) || go_compile_error(line)
}

/// TypeScript's compiler error line (Y-5, brk2 finding 9) at column 0: `path(line,col):
/// error TS<digits>:` (tsc's plain reporter) or `path:line:col - error TS<digits>:` (its
/// pretty one), the path holding no blank.
fn tsc_error(line: &str) -> bool {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let code = |r: &str| r.strip_prefix("error TS").is_some_and(|r| r.split_once(':').is_some_and(|(n, _)| digits(n)));
    if let Some((place, rest)) = line.split_once("): ") {
        if let Some((path, at)) = place.rsplit_once('(') {
            if let Some((l, c)) = at.split_once(',') {
                return digits(l) && digits(c) && !path.is_empty() && !path.contains(char::is_whitespace) && code(rest);
            }
        }
    }
    let Some((place, rest)) = line.split_once(" - ") else { return false };
    let mut parts = place.rsplitn(3, ':');
    let (c, l, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    digits(c) && digits(l) && !path.is_empty() && !path.contains(char::is_whitespace) && code(rest)
}

/// Go's compile error line (Y-5, brk2 finding 9) at column 0: `<path>.go:<line>:<col>:
/// <message>` (`./main.go:5:2: undefined: foo`), the path holding no blank.
fn go_compile_error(line: &str) -> bool {
    let mut parts = line.splitn(4, ':');
    let (path, l, c, msg) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next());
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    path.ends_with(".go") && !path.contains(char::is_whitespace) && digits(l) && digits(c) && msg.is_some_and(|m| m.starts_with(' ') && m.trim().len() > 1)
}

/// A C compiler's (gcc, clang) error line (Y-5, brk finding 5): `<path>:<line>:<col>:
/// error: ` at column 0, the path holding no blank, line and column digits (`main.c:3:5:
/// error: expected ';'`). A warning (`: warning: `) is not one.
fn compiler_error(line: &str) -> bool {
    let Some((place, _)) = line.split_once(": error: ") else { return false };
    let mut parts = place.rsplitn(3, ':');
    let digits = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let (col, row, path) = (parts.next(), parts.next(), parts.next());
    digits(col) && digits(row) && path.is_some_and(|p| !p.is_empty() && !p.contains(char::is_whitespace))
}

/// Jest's failed test file (Y-5, brk finding 5): `FAIL` after at most one space (Jest
/// pads its badge: ` FAIL  src/sum.test.js`), then spaces and a path.
fn jest_fail(line: &str) -> bool {
    let line = line.strip_prefix(' ').unwrap_or(line);
    line.strip_prefix("FAIL ").is_some_and(|r| !r.trim().is_empty())
}

/// Whether a line is GNU make's own failure line (Y-5, issue 13): `make: *** ` or, from
/// a sub-make, `make[N]: *** ` (N digits) at the line's start, then make's words (`No
/// rule to make target 'x'.  Stop.`, `[Makefile:3: all] Error 2`, `Waiting for
/// unfinished jobs....`). `make: Nothing to be done for 'all'.` and `make: Entering
/// directory ...` are not (no `*** `).
pub fn make_error(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("make") else { return false };
    let rest = match rest.strip_prefix('[') {
        Some(r) => match r.split_once(']') {
            Some((n, r)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => r,
            _ => return false,
        },
        None => rest,
    };
    rest.starts_with(": *** ")
}

/// Whether the result of a call to tool `name` reports a failure (Y-5): as
/// [`text_reports_failure`], except that the output of a reader, a tool that returns a
/// file's or page's contents ([`is_reader`]: `read_file`, `Read`, `open`, `search_dir`,
/// `readFile`), is its content: no line of it (a first line opening `Error:`, a panic
/// or traceback in its last lines, an HTTP status line) is taken as a failure, and only
/// a JSON output reporting one ([`json_error`]) still is.
pub fn result_reports_failure(name: Option<&str>, text: &str) -> bool {
    if name.is_some_and(is_reader) {
        json_error(text)
    } else {
        text_reports_failure(text)
    }
}

/// Words that state an exit status when they open a line (after optional `[`, `(` and
/// whitespace, and an optional `Error: `), in the order they are tried (lowercase ASCII):
/// `Exit code: 1`, `[exit status 2]`, `(exit_code=3)`, `returncode: 1`, `Error: Exit code 1`,
/// and two agent harnesses' footers (brk2 finding 13): OpenHands' `[The command completed
/// with exit code 1.]` and mini-swe-agent's `<returncode>1</returncode>`.
pub(crate) const EXIT_LINE_STARTS: [&str; 7] =
    ["exit code", "exit status", "exited with code", "exit_code", "returncode", "the command completed with exit code", "<returncode>"];
/// Phrases that state an exit status anywhere in a line (lowercase ASCII): a process
/// runner's `Process exited with code 1`, Python's `returned non-zero exit status 2`.
pub(crate) const EXIT_IN_LINE: [&str; 2] = ["exited with code", "returned non-zero exit status"];
/// JSON keys, quotes included, whose value is an exit status (compared in any ASCII case):
/// `"exit_code": 1`, `"returncode": 2`, `"exitCode": 3`.
pub(crate) const EXIT_JSON_KEYS: [&str; 3] = ["\"exit_code\"", "\"returncode\"", "\"exitcode\""];

/// The exit status a result states (Y-5, issue 13), read from its first 2,000 UTF-8
/// bytes, or `None`. A status is read only where a harness or a shell states one, in any
/// ASCII case:
/// - a line opening (after optional `[`, `(`, at most [`EXIT_INDENT`] blanks and
///   `Error: `) with one of [`EXIT_LINE_STARTS`]: `Exit code: 1`, `Exit code 101`,
///   `  [exit status 2]`; a status indented deeper is a field of what the command
///   printed (`kubectl describe pod`'s `      Exit Code:    1`), not the harness's;
/// - one of [`EXIT_IN_LINE`] anywhere: `Process exited with code 1`, `Command 'x'
///   returned non-zero exit status 2.`;
/// - a JSON key of [`EXIT_JSON_KEYS`] when the output is a JSON object (its first
///   non-blank byte `{`), directly in that object or in its top-level `metadata` object
///   ([`json_status_spots`]): `{"returncode": 1}`, Codex's `{"output": "...",
///   "metadata": {"exit_code": 101}}`. A key nested deeper or inside an array is another
///   process's status the command reports (`docker inspect`'s `[{"State": {"ExitCode":
///   137}}]`, brk finding 4).
///
/// Words followed by optional whitespace, one optional `:` or `=`, optional whitespace,
/// an optional `"`, then an integer (an optional `-` and digits) that no letter, digit,
/// `_`, `-` or `.digit` goes on from (`exit code 1-2` states none); a JSON key by `:`
/// then the integer. Prose or code that names a status (`expected exit code 0, got 1`,
/// `assert proc.returncode == 0`) states none. The first statement in the text wins; on
/// one line, a line opening before the phrases and keys, and those by position.
///
/// One pass over the head, comparing in place (issue 15: no lowercased copy); the same
/// answer as the line-by-line definition on lowercased text
/// (`summarize::facts::exit_status_slow`, the test oracle).
pub fn exit_status(text: &str) -> Option<i64> {
    let head = text.get(..crate::evict::floor_boundary(text, 2_000)).unwrap_or("");
    let spots = json_status_spots(head);
    let mut at = 0;
    head.split('\n').find_map(|line| {
        let from = at;
        at += line.len() + 1;
        line_exit_status(line.as_bytes(), &|i| spots.binary_search(&(from + i)).is_ok())
    })
}

/// Most blanks (spaces, tabs, carriage returns) before a line's exit status words
/// ([`exit_status`]): a harness states the status at the line's start (`Exit code 1`,
/// `  [exit status 2]`); deeper is a field of the command's own output (brk finding 4).
pub const EXIT_INDENT: usize = 2;

/// The byte offsets in `head` of the quotes opening a string where [`exit_status`]
/// reads a JSON status key (Y-5, brk finding 4), ascending: when `head`'s first non-blank
/// byte is `{`, the strings directly in that object (depth 1) and in the object its
/// `metadata` key holds (depth 2); none otherwise. Strings are skipped with their
/// escapes; a head cut mid-JSON is read as far as it goes.
pub fn json_status_spots(head: &str) -> Vec<usize> {
    let b = head.as_bytes();
    let Some(open) = b.iter().position(|c| !c.is_ascii_whitespace()).filter(|&i| b[i] == b'{') else { return Vec::new() };
    let mut spots = Vec::new();
    let (mut depth, mut in_meta, mut i) = (0usize, false, open);
    // the last string closed at depth 1 (a key when a `{` follows its `:`)
    let mut last = (0, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if depth == 1 || (depth == 2 && in_meta) {
                    spots.push(start);
                }
                if depth == 1 {
                    last = (start + 1, i.min(b.len()));
                }
            }
            c @ (b'{' | b'[') => {
                depth += 1;
                if depth == 2 {
                    in_meta = c == b'{' && b.get(last.0..last.1) == Some(b"metadata".as_slice());
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        i += 1;
    }
    spots
}

/// The exit status the result of a call to tool `name` states (Y-5, brk finding 1): as
/// [`exit_status`], except that a reader's output ([`is_reader`]) is a file's or page's
/// content, so only its first non-blank line, where a harness wraps an output (`Exit
/// code 1`), is read: a later line of the content that reads like a status (`exit_code
/// = 1` in a script, `Exit code: 2` in a log) states none.
pub fn result_exit_status(name: &str, text: &str) -> Option<i64> {
    if is_reader(name) {
        let first = text.split('\n').find(|l| !l.trim().is_empty()).unwrap_or("");
        exit_status(first)
    } else {
        exit_status(text)
    }
}

/// Whether `b` holds `pat` (lowercase ASCII) at byte `i`, in any ASCII case.
fn holds_at(b: &[u8], i: usize, pat: &str) -> bool {
    b.get(i..i + pat.len()).is_some_and(|w| w.eq_ignore_ascii_case(pat.as_bytes()))
}

/// The exit status one line of [`exit_status`]'s head states; `key_ok` tells whether a
/// quote at a byte of the line may open a JSON status key ([`json_status_spots`]).
fn line_exit_status(b: &[u8], key_ok: &dyn Fn(usize) -> bool) -> Option<i64> {
    let mut start = b.iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\r' | b'[' | b'(')).count();
    // indented deeper than a harness writes: no line opening (phrases and keys still read)
    if b[..start].iter().filter(|c| matches!(c, b' ' | b'\t' | b'\r')).count() <= EXIT_INDENT {
        if holds_at(b, start, "error: ") {
            start += "error: ".len();
        }
        if let Some(n) = EXIT_LINE_STARTS.iter().filter(|p| holds_at(b, start, p)).find_map(|p| status_after(b, start + p.len(), true)) {
            return Some(n);
        }
    }
    for (i, &c) in b.iter().enumerate() {
        // every phrase starts with "e" or "r", every key with a quote
        let found = match c | 0x20 {
            b'e' | b'r' => EXIT_IN_LINE.iter().filter(|p| holds_at(b, i, p)).find_map(|p| status_after(b, i + p.len(), true)),
            b'"' if key_ok(i) => EXIT_JSON_KEYS.iter().filter(|k| holds_at(b, i, k)).find_map(|k| status_after(b, i + k.len(), false)),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The integer stated at byte `at` of `b`, past optional whitespace and a separator: one
/// optional `:` or `=` (words) or a required `:` (a JSON key), optional whitespace and an
/// optional `"`. None when no integer follows or one goes on (`1-2`, `1x`, `1.5`).
fn status_after(b: &[u8], at: usize, words: bool) -> Option<i64> {
    let blank = |i: &mut usize| {
        while b.get(*i).is_some_and(|c| matches!(c, b' ' | b'\t')) {
            *i += 1;
        }
    };
    let mut i = at;
    blank(&mut i);
    match b.get(i) {
        Some(b':') => i += 1,
        Some(b'=') if words => i += 1,
        _ if words => {}
        _ => return None,
    }
    blank(&mut i);
    if b.get(i) == Some(&b'"') {
        i += 1;
    }
    let from = i;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    let digits = b.get(i..).unwrap_or(&[]).iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let end = i + digits;
    let goes_on = match b.get(end) {
        Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-') => true,
        Some(b'.') => b.get(end + 1).is_some_and(u8::is_ascii_digit),
        _ => false,
    };
    if goes_on {
        return None;
    }
    std::str::from_utf8(b.get(from..end)?).ok()?.parse().ok()
}

/// Whether a tool's name is a reader's: one of its words (split at `_`, `-`, `.`, `/`,
/// spaces and lower-to-upper case changes, compared in any case) is `read`, `cat`,
/// `reader`, `view`, `open`, `grep` or `search` (`read_file`, `readFile`, `Read`,
/// `file_search`, `file_reader`); a word that only holds one is not (`openapi_call`,
/// `preview_deploy`, `concatenate`, `spreadsheet_update`).
pub fn is_reader(name: &str) -> bool {
    const READERS: [&str; 7] = ["read", "reader", "cat", "view", "open", "grep", "search"];
    let mut start = 0;
    let b = name.as_bytes();
    for i in 0..=b.len() {
        let cut = match (b.get(i), i.checked_sub(1).and_then(|j| b.get(j))) {
            (None, _) => true,
            (Some(c), _) if !c.is_ascii_alphanumeric() => true,
            (Some(c), Some(p)) => c.is_ascii_uppercase() && p.is_ascii_lowercase(),
            (Some(_), None) => false,
        };
        if cut {
            if let Some(w) = name.get(start..i) {
                if READERS.iter().any(|r| w.eq_ignore_ascii_case(r)) {
                    return true;
                }
            }
            start = if b.get(i).is_some_and(|c| !c.is_ascii_alphanumeric()) { i + 1 } else { i };
        }
    }
    false
}

/// Whether one line (trimmed, the first non-blank one of an output) opens as an error
/// (Y-5). True when it is:
/// - `Error:` / `error:` / `ERROR:` / `Error -`, or a Python-style exception name
///   ending in `Error:` / `Exception:` (`ValueError: ...`, `FileNotFoundError: ...`);
/// - `Traceback (most recent call last)` (a Python traceback);
/// - an errno name then `:` or a space (`ENOENT: no such file or directory, open 'x'`),
///   or Python's `[Errno N] ...`;
/// - a shell's own message: its name, then `...: command not found`, `command not
///   found: ...` or `...: not found` (`bash: foo: command not found`, `/bin/bash: line 1:
///   python: command not found`, `zsh: command not found: foo`, `sh: 1: foo: not found`);
/// - a command's errno message ([`command_errno`]): `ls: cannot access 'x': No such file
///   or directory`, `cat: x: No such file or directory`, `curl: (6) Could not resolve host: x`;
/// - the Docker CLI's `Error response from daemon:` / `docker: Error response from daemon:`;
/// - git's `fatal:`, npm's `npm ERR!` / `npm error`, Go's `panic:`, Rust's `thread
///   '<name>' panicked at`, Java's `Exception in thread "<name>"`, rustc's
///   `error[E0425]:`, Go's `--- FAIL:`, Jest's `FAIL <file>`, or the word `FAILED` alone
///   or before a space, `:` or `(` (pytest's `FAILED tests/x.py::t - ...`);
/// - GNU make's `make: *** ...` / `make[N]: *** ...` ([`make_error`]);
/// - SWE-agent's `Your proposed edit has introduced new syntax error(s).` (the edit was
///   not applied).
pub fn opens_as_error(line: &str) -> bool {
    const OPENINGS: [&str; 14] = [
        "Error:",
        // kubectl relaying the API server's refusal (brk2 finding 9)
        "Error from server (",
        // the Docker CLI relaying its daemon's refusal (brk finding 5)
        "Error response from daemon:",
        "docker: Error response from daemon:",
        "error:",
        "ERROR:",
        "Error -",
        "Traceback (most recent call last)",
        "command not found:",
        "fatal:",
        "npm ERR!",
        "panic:",
        "Exception in thread \"",
        // SWE-agent refuses an edit its linter rejects and keeps the file as it was
        "Your proposed edit has introduced new syntax error(s)",
    ];
    if OPENINGS.iter().any(|p| line.starts_with(p)) {
        return true;
    }
    if npm_error(line) {
        return true;
    }
    // Go's `--- FAIL: TestX (0.00s)`; Jest / Vitest's `FAIL src/x.test.ts`
    if line.starts_with("--- FAIL:") || line.strip_prefix("FAIL ").is_some_and(|r| r.starts_with(|c: char| !c.is_whitespace())) {
        return true;
    }
    // pytest's `FAILED tests/x.py::t - assert ...`, a runner's `FAILED (failures=1)`
    if line.strip_prefix("FAILED").is_some_and(|r| r.is_empty() || r.starts_with([' ', ':', '('])) {
        return true;
    }
    if rust_panic(line) || rustc_error(line) || shell_not_found(line) || command_errno(line) || make_error(line) {
        return true;
    }
    if let Some(rest) = line.strip_prefix("[Errno ") {
        return rest.split_once(']').is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    }
    if ERRNO_NAMES.iter().any(|e| line.strip_prefix(e).is_some_and(|r| r.starts_with(':') || r.starts_with(' '))) {
        return true;
    }
    // `ValueError: ...`: one identifier word (no spaces, starting uppercase) ending in
    // Error / Exception, then a colon (dotted module paths allowed: `requests.exceptions.HTTPError:`)
    let Some((name, _)) = line.split_once(':') else { return false };
    let last = name.rsplit('.').next().unwrap_or(name);
    (last.ends_with("Error") || last.ends_with("Exception"))
        && last.len() > 5
        && last.starts_with(|c: char| c.is_ascii_uppercase())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// npm 7+'s `npm error code E404` (the words `npm error` alone or before a space;
/// `npm errors ...` is prose).
fn npm_error(line: &str) -> bool {
    line.strip_prefix("npm error").is_some_and(|r| r.is_empty() || r.starts_with(' '))
}

/// Rust's panic line: `thread 'main' panicked at src/main.rs:2:5:`.
fn rust_panic(line: &str) -> bool {
    line.strip_prefix("thread '").and_then(|r| r.split_once('\'')).is_some_and(|(_, r)| r.starts_with(" panicked at"))
}

/// rustc's error line: `error[E0425]: cannot find value ...`.
fn rustc_error(line: &str) -> bool {
    line.strip_prefix("error[E").and_then(|r| r.split_once("]:")).is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The messages libc's `strerror` gives the errors a command most often reports, as
/// coreutils and the shells print them.
const STRERRORS: [&str; 16] = [
    "No such file or directory",
    "Permission denied",
    "Not a directory",
    "Is a directory",
    "File exists",
    "Directory not empty",
    "Operation not permitted",
    "Read-only file system",
    "No space left on device",
    "Too many open files",
    "Connection refused",
    "Connection timed out",
    "Network is unreachable",
    "Device or resource busy",
    "Argument list too long",
    "Cannot allocate memory",
];

/// A command's own errno message (Y-5): the line opens with a command's name (1 to 32
/// bytes of lowercase ASCII letters, digits, `-`, `_`, `.` or `+`, starting with a
/// letter; not a diagnostic's word `note`, `warning`, `warn`, `info`, `hint`, `help`,
/// `debug`, `notice`) then `: `, and either its last `: `-separated part is one of
/// [`STRERRORS`] (Python's `[Errno N] ` before it allowed): `cat: x: No such file or
/// directory`, `ls: cannot access 'x': No such file or directory`; or it is curl's `curl:
/// (N) ...` (`curl: (6) Could not resolve host: x`). A grep hit (`src/x.rs:3: ...`) opens
/// with a path, not a command's name.
pub fn command_errno(line: &str) -> bool {
    const NOT_COMMANDS: [&str; 8] = ["note", "warning", "warn", "info", "hint", "help", "debug", "notice"];
    let Some((cmd, rest)) = line.split_once(": ") else { return false };
    let named = cmd.len() <= 32
        && cmd.starts_with(|c: char| c.is_ascii_lowercase())
        && cmd.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.' | b'+'))
        && !NOT_COMMANDS.contains(&cmd);
    if !named {
        return false;
    }
    if cmd == "curl" {
        return rest.strip_prefix('(').and_then(|r| r.split_once(") ")).is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    }
    let last = rest.rsplit(": ").next().unwrap_or(rest).trim_end();
    let last = last.strip_prefix("[Errno ").and_then(|r| r.split_once("] ")).map_or(last, |(_, m)| m);
    STRERRORS.contains(&last)
}

/// A shell saying it found no command: the line opens with a shell's name (a path to
/// one allowed, `/bin/bash`) and a colon, or with a script's name and `: line N:`, and then says `command not found` (bash, zsh)
/// or ends `: not found` (dash). A grep hit `src/x.sh:3: foo: command not found` opens
/// with a file name, not a shell's, and is content.
fn shell_not_found(line: &str) -> bool {
    let Some((head, rest)) = line.split_once(':') else { return false };
    let shell = head.rsplit('/').next().unwrap_or(head).trim_start_matches('-');
    // a script bash runs names itself and the line: `./run.sh: line 3: foo: command not found`
    let script_line = rest.strip_prefix(" line ").and_then(|r| r.split_once(':')).is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (script_line || ["bash", "sh", "zsh", "dash", "ksh", "ash", "fish"].contains(&shell)) && (rest.contains("command not found") || rest.ends_with(": not found"))
}

/// Whether a whole output is a JSON object (up to 64 KiB) that reports a failure at its
/// top level (Y-5):
/// - an `error` key (or `Error` / `ERROR`, those exact cases: a Rust enum's `Error`
///   variant serialized, a host's capitalised key) holding a value other than `null`,
///   `false`, `0`, `""`, `{}`, `[]` or a word saying none (`"none"`, `"ok"`, `"false"`,
///   `"null"`, `"0"`, `"no"`, `"n/a"`, `"nil"`): `{"error": "User not found"}`,
///   `{"Error": "User not found"}`; the first of the three present is read;
/// - `"status": "error"` (any case): `{"status": "error", "message": "..."}`; another
///   status (`"failed"` of a build a tool looked up) is the call's answer, not its failure;
/// - `"ok": false` or `"success": false`, the JSON `false` or the word `"false"` (any
///   case, spaces around it ignored): `{"ok": "false"}` says what `{"success": "false"}` says;
/// - `success` and `status` are matched in any ASCII case (`"Status": "Error"`, `"Success": false`);
///   `ok`, `errors` and `data` exactly (`{"Ok": false}` is serde's `Ok(false)`, a success);
/// - a GraphQL response with no data: `errors` a non-empty array of objects each with a
///   string `message`, and `data` absent or `null` (`{"data": null, "errors": [...]}`);
///   partial data with errors, or `"errors": []`, is an answer.
pub fn json_error(text: &str) -> bool {
    let t = text.trim();
    if !t.starts_with('{') || t.len() > 65_536 || !names_a_status_key(t) {
        return false;
    }
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) else { return false };
    // keys in any ASCII case (`"Status": "Error"`, `"Success": false`)
    let get = |k: &str| o.get(k).or_else(|| o.iter().find(|(key, _)| key.eq_ignore_ascii_case(k)).map(|(_, v)| v));
    // `false`, or the word (`"false"`, any case) saying the same
    let says_false = |v: Option<&Value>| match v {
        Some(Value::Bool(b)) => !b,
        Some(Value::String(s)) => s.trim().eq_ignore_ascii_case("false"),
        _ => false,
    };
    // `ok` only in lowercase: `{"Ok": false}` is a Rust `Result<bool, _>` serialized, a success
    if says_false(o.get("ok")) || says_false(get("success")) || get("status").and_then(Value::as_str).is_some_and(|s| s.trim().eq_ignore_ascii_case("error")) {
        return true;
    }
    if let Some(Value::Array(errors)) = o.get("errors") {
        let graphql = !errors.is_empty() && errors.iter().all(|e| e.get("message").is_some_and(Value::is_string));
        if graphql && o.get("data").is_none_or(Value::is_null) {
            return true;
        }
    }
    match o.get("error").or_else(|| o.get("Error")).or_else(|| o.get("ERROR")) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        // `"error": 0` is a status code meaning none (`{"error": 0, "msg": "ok"}`)
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        // a word saying there is none (`"none"`, `"ok"`, `"false"`, `"null"`, `"0"`, `"no"`)
        Some(Value::String(s)) => {
            let s = s.trim();
            !s.is_empty() && !["none", "ok", "false", "null", "0", "no", "n/a", "nil"].iter().any(|w| s.eq_ignore_ascii_case(w))
        }
        Some(Value::Object(m)) => !m.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(_) => true,
    }
}

/// Whether a JSON text names, as written, one of the keys [`json_error`] reads (`"error"`,
/// `"errors"`, `"ok"`, `"success"`, `"status"`): a text that names none is no error body,
/// and is not parsed (issue 15: parsing every JSON tool output was half of a 1 MB
/// decode). A key spelled with escapes (`"\u0065rror"`) is not looked for.
fn names_a_status_key(t: &str) -> bool {
    const KEYS: [&[u8]; 4] = [b"\"error", b"\"ok\"", b"\"success\"", b"\"status\""];
    let b = t.as_bytes();
    b.iter().enumerate().filter(|(_, c)| **c == b'"').any(|(i, _)| KEYS.iter().any(|k| b.get(i..i + k.len()).is_some_and(|w| w.eq_ignore_ascii_case(k))))
}

/// The tool names of the calls decoded so far, by call id (Y-5): an OpenAI Chat `tool`
/// row rarely carries `name`, and a Responses `function_call_output` never does, yet
/// [`result_reports_failure`] needs the name to tell a reader's content from a failure.
/// A decode builds one per transcript, noting each row's calls ([`CallNames::note`])
/// before the next row is viewed, so a result is read with the name of its call: one
/// map, one insert per call and one look-up per result (O(rows)).
#[derive(Debug, Default)]
pub struct CallNames {
    by_id: std::collections::HashMap<String, String>,
}

impl CallNames {
    /// The one name `name` of the call `id` (a row read again after an edit).
    pub fn one(id: &str, name: &str) -> CallNames {
        CallNames { by_id: std::iter::once((id.to_string(), name.to_string())).collect() }
    }

    /// The name of the call `id`, when a noted row made it (the newest such call).
    pub fn get(&self, id: &str) -> Option<&str> {
        self.by_id.get(id).map(String::as_str)
    }

    /// Notes the calls among a row's blocks.
    pub fn note(&mut self, blocks: &[crate::transcript::Block]) {
        for b in blocks {
            if let crate::transcript::Block::ToolCall { id, name, .. } = b {
                self.by_id.insert(id.clone(), name.clone());
            }
        }
    }

    /// The names of the calls a result appended after `messages` may answer (a live
    /// append decodes only its new rows): the calls of the trailing exchange, found
    /// walking back past its results to the run of rows making calls before them and
    /// no further (OpenAI Chat answers the calls of the row right before its results;
    /// Responses' parallel calls are consecutive items), so the walk is bounded by that
    /// exchange, not by the transcript.
    pub fn of_open_exchange(messages: &[crate::transcript::Message]) -> CallNames {
        let calls = |m: &crate::transcript::Message| m.blocks.iter().any(|b| matches!(b, crate::transcript::Block::ToolCall { .. }));
        let mut start = messages.len();
        let mut seen_calls = false;
        for m in messages.iter().rev() {
            // a Responses `reasoning` item goes with the call after it
            let reasoning = !m.blocks.is_empty() && m.blocks.iter().all(|b| matches!(b, crate::transcript::Block::Reasoning { .. }));
            if calls(m) {
                seen_calls = true;
            } else if (seen_calls && !reasoning) || (!seen_calls && m.role != crate::transcript::Role::Tool) {
                break;
            }
            start -= 1;
        }
        let mut names = CallNames::default();
        for m in messages.get(start..).unwrap_or(&[]) {
            names.note(&m.blocks);
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::text_reports_failure;

    #[test]
    fn y5_error_openings_are_failures() {
        for t in [
            "Error: reservation not found",
            "error: permission denied",
            "ERROR: bad input",
            "  \n Error: ENOENT",
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nZeroDivisionError: division by zero",
            "ENOENT: no such file or directory, open '/r/x'",
            "EACCES: permission denied, open '/etc/shadow'",
            "[Errno 2] No such file or directory: 'x'",
            "bash: foo: command not found",
            "zsh: command not found: foo",
            "ValueError: invalid literal for int()",
            "requests.exceptions.HTTPError: 404",
            "{\"error\": \"User not found\"}",
            "{\"ok\": false, \"error\": {\"code\": 3}}",
        ] {
            assert!(text_reports_failure(t), "{t:?} is a failure");
        }
    }

    #[test]
    fn y5_prose_mentioning_error_is_not_a_failure() {
        for t in [
            "",
            "ok",
            "The error was fixed in the last commit.",
            "No errors found.",
            "Found 3 error handlers in src/",
            "errors: 0",
            "Error handling is described in docs/errors.md",
            "{\"error\": null, \"result\": 4}",
            "{\"error\": false}",
            "{\"error\": \"\"}",
            "{\"result\": {\"error\": \"nested, not top-level\"}}",
            "ENOENTRY list: 4 items",
            "My Error: a note",
            "src/error.rs: 12 lines",
            "2 passed, 0 failed\nError: (this line is not the first)",
            "{\"error\": 0, \"msg\": \"ok\"}",
            "{\"error\": \"none\"}",
            "{\"error\": \"OK\"}",
        ] {
            assert!(!text_reports_failure(t), "{t:?} is not a failure");
        }
    }

    /// Y-5 (break4 finding 2): a reader's output is the file's content; a log line
    /// opening `Error:` is not the call failing (a JSON error object still is).
    #[test]
    fn y5_a_readers_output_opening_with_error_is_content_not_a_failure() {
        use super::result_reports_failure;
        for name in ["read_file", "Read", "open", "cat", "view_file", "search_dir"] {
            assert!(!result_reports_failure(Some(name), "ERROR: 2026-01-01 disk full\nINFO: retry"), "{name}");
            assert!(result_reports_failure(Some(name), "{\"error\": \"no such file\"}"), "{name}");
        }
        assert!(result_reports_failure(Some("book_flight"), "Error: payment amount does not add up"));
        assert!(result_reports_failure(None, "Error: payment amount does not add up"));
    }
}
