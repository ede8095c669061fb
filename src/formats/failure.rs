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
/// other than `null`, `false`, `""`, `{}` or `[]` (`{"error": "User not found"}`).
/// Only the first 2,000 bytes are read for the line tests; the JSON test parses
/// outputs up to 64 KiB that start with `{`.
pub fn text_reports_failure(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, 2_000)).unwrap_or("");
    let first = head.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if first.is_empty() {
        return false;
    }
    opens_as_error(first) || json_error(text)
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
        Some(Value::String(s)) => !s.trim().is_empty(),
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
        ] {
            assert!(!text_reports_failure(t), "{t:?} is not a failure");
        }
    }
}
