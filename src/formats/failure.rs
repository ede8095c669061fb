//! Failed tool results in formats without an error flag (Y-5).
//!
//! OpenAI chat `tool` messages and Responses `function_call_output` items carry no
//! error flag, so whether a call failed is read from its output. The reading is
//! conservative: only an output whose *first non-blank line opens* as an error does, or
//! a JSON object that says so at its top level (an `error` value, `"status": "error"`,
//! `"ok": false`, a GraphQL `errors` list with no data). A result that merely
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
/// - a shell's own message: its name, then `...: command not found`, `command not
///   found: ...` or `...: not found` (`bash: foo: command not found`, `/bin/bash: line 1:
///   python: command not found`, `zsh: command not found: foo`, `sh: 1: foo: not found`);
/// - git's `fatal:`, npm's `npm ERR!` / `npm error`, Go's `panic:`, Rust's `thread
///   '<name>' panicked at`, Java's `Exception in thread "<name>"`, rustc's
///   `error[E0425]:`, or the word `FAILED` alone or before a space, `:` or `(` (pytest's
///   `FAILED tests/x.py::t - ...`);
/// - SWE-agent's `Your proposed edit has introduced new syntax error(s).` (the edit was
///   not applied);
///
/// or when the whole output is a JSON object that says so at its top level ([`json_error`]).
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
/// [`text_reports_failure`], except that the output of a reader, a tool that returns a
/// file's or page's contents ([`is_reader`]: `read_file`, `Read`, `open`, `search_dir`,
/// `readFile`), is its content, so a first line opening `Error:` (a log file, a doc
/// page) is not taken as a failure; a JSON output reporting one ([`json_error`]) still is.
pub fn result_reports_failure(name: Option<&str>, text: &str) -> bool {
    if name.is_some_and(is_reader) {
        json_error(text)
    } else {
        text_reports_failure(text)
    }
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

/// Whether one line (trimmed, the first non-blank one of an output) opens as an error:
/// the openings [`text_reports_failure`] lists.
pub fn opens_as_error(line: &str) -> bool {
    const OPENINGS: [&str; 11] = [
        "Error:",
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
    // npm 7+ writes `npm error code E404`; `npm errors ...` is prose
    if line.strip_prefix("npm error").is_some_and(|r| r.is_empty() || r.starts_with(' ')) {
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
    // Rust: `thread 'main' panicked at src/main.rs:2:5:`
    if line.strip_prefix("thread '").and_then(|r| r.split_once('\'')).is_some_and(|(_, r)| r.starts_with(" panicked at")) {
        return true;
    }
    // rustc: `error[E0425]: cannot find value ...`
    if let Some(rest) = line.strip_prefix("error[E") {
        return rest.split_once("]:").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    }
    if shell_not_found(line) {
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
/// - an `error` key holding a value other than `null`, `false`, `0`, `""`, `{}`, `[]` or
///   a word saying none (`"none"`, `"ok"`, `"false"`, `"null"`, `"0"`, `"no"`, `"n/a"`,
///   `"nil"`): `{"error": "User not found"}`;
/// - `"status": "error"` (any case): `{"status": "error", "message": "..."}`; another
///   status (`"failed"` of a build a tool looked up) is the call's answer, not its failure;
/// - `"ok": false` or `"success": false` (the JSON `false`), or `"success": "false"`
///   (the word, any case; `"ok": "false"` is not read);
/// - `success` and `status` are matched in any ASCII case (`"Status": "Error"`, `"Success": false`);
///   `ok`, `error`, `errors` and `data` exactly (`{"Ok": false}` is serde's `Ok(false)`, a success);
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
    let flagged = |k: &str| get(k) == Some(&Value::Bool(false));
    // `ok` only in lowercase: `{"Ok": false}` is a Rust `Result<bool, _>` serialized, a success
    let ok_false = o.get("ok") == Some(&Value::Bool(false));
    // `"success": "false"` (the word, any case) says the same as the JSON `false`
    let success_word = get("success").and_then(Value::as_str).is_some_and(|s| s.trim().eq_ignore_ascii_case("false"));
    if ok_false || flagged("success") || success_word || get("status").and_then(Value::as_str).is_some_and(|s| s.trim().eq_ignore_ascii_case("error")) {
        return true;
    }
    if let Some(Value::Array(errors)) = o.get("errors") {
        let graphql = !errors.is_empty() && errors.iter().all(|e| e.get("message").is_some_and(Value::is_string));
        if graphql && o.get("data").is_none_or(Value::is_null) {
            return true;
        }
    }
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
