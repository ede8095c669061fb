//! Failed tool results in formats without an error flag (Y-5).
//!
//! OpenAI chat `tool` messages and Responses `function_call_output` items carry no
//! error flag, so whether a call failed is read from its output. The reading is
//! conservative: only an output whose *first non-blank line opens* as an error does, or
//! a JSON object whose top-level `error` key holds a value. A result that merely
//! mentions the word "error" in prose is not a failure. A non-zero exit status is read
//! separately (`summarize::facts::exit_status`), for every format.

use serde_json::Value;

/// POSIX errno names a Node / libc error message opens with (`ENOENT: no such file ...`).
const ERRNO_NAMES: [&str; 16] = [
    "ENOENT", "EACCES", "EPERM", "EISDIR", "ENOTDIR", "EEXIST", "ENOTEMPTY", "EBUSY", "EMFILE", "ENOSPC", "EROFS", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT",
    "EADDRINUSE", "EPIPE",
];

/// Whether a tool output reports a failure by how it opens (Y-5). True when its first
/// non-blank line (leading whitespace ignored) is:
/// - `Error:` / `error:` / `ERROR:` / `Error -`, or a Python-style exception name
///   ending in `Error:` / `Exception:` (`ValueError: ...`, `FileNotFoundError: ...`);
/// - `Traceback (most recent call last):` (a Python traceback);
/// - an errno name then `:` or a space (`ENOENT: no such file or directory, open 'x'`),
///   or Python's `[Errno N] ...`;
/// - a shell's `...: command not found` / `command not found: ...`;
///
/// or when the whole output is a JSON object whose top-level `error` key holds a value
/// other than `null`, `false`, `0`, `""`, `{}`, `[]` or a word saying none (`"none"`,
/// `"ok"`, `"false"`, `"null"`, `"0"`, `"no"`, `"n/a"`, `"nil"`): `{"error": "User not found"}`.
/// Only the first 2,000 bytes are read for the line tests; the JSON test parses
/// outputs up to 64 KiB that start with `{`. The tool's name is not known here: see
/// [`result_reports_failure`] for a result whose call names a reader.
pub fn text_reports_failure(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, 2_000)).unwrap_or("");
    let first = head.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.is_empty() {
        return false;
    }
    opens_as_error(first) || json_error(text)
}

/// Whether the result of a call to tool `name` reports a failure (Y-5): as
/// [`text_reports_failure`], except that the output of a tool that returns a file's or
/// page's contents (a name holding `read`, `cat`, `view`, `open`, `grep` or `search`,
/// any case: `read_file`, `Read`, `open`, `search_dir`) is its content, so a first line
/// opening `Error:` (a log file, a doc page) is not taken as a failure; its JSON `error`
/// object still is.
pub fn result_reports_failure(name: Option<&str>, text: &str) -> bool {
    let reader = name.is_some_and(|n| {
        let n = n.to_ascii_lowercase();
        ["read", "cat", "view", "open", "grep", "search"].iter().any(|k| n.contains(k))
    });
    if reader {
        json_error(text)
    } else {
        text_reports_failure(text)
    }
}

fn opens_as_error(line: &str) -> bool {
    if ["Error:", "error:", "ERROR:", "Error -", "Traceback (most recent call last)", "command not found:"].iter().any(|p| line.starts_with(p)) {
        return true;
    }
    if line.contains(": command not found") {
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

fn json_error(text: &str) -> bool {
    let t = text.trim();
    if !t.starts_with('{') || t.len() > 65_536 {
        return false;
    }
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(t) else { return false };
    match o.get("error") {
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
