//! One error type with stable string codes (ARCHITECTURE "One error type").
//!
//! Every fallible public function returns [`Error`]. The `code` is stable and is what
//! the JavaScript layer puts on `Error.code`; the message says what is wrong and where
//! (a message offset, a field path).

use serde::Serialize;

/// Stable error codes. Serialized in `snake_case` (e.g. `invalid_transcript`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The input is not a transcript of the named format (bad JSON, wrong shape).
    InvalidTranscript,
    /// A tool result whose call is not in the transcript (F-5).
    UnpairedToolResult,
    /// A tool call with no result while later messages follow it (F-5).
    UnansweredToolCall,
    /// A tool-call id used by two calls in one transcript (F-5).
    DuplicateToolCallId,
    /// The options/config object is invalid.
    InvalidConfig,
    /// The session state JSON is invalid.
    InvalidState,
    /// A rewrite failed validation before it was returned (W-2).
    InvalidRewrite,
    /// The summary callback failed or returned nothing usable (Y-1, W-3).
    SummaryFailed,
    /// The job was resumed with an answer it did not ask for.
    ProtocolError,
    /// A save named a revision that is no longer current (W-5).
    StaleRevision,
    /// The format name is unknown or could not be detected.
    UnknownFormat,
    /// A memory projection failed (M-1, W-3).
    MemoryFailed,
    /// The host's `save` refused a record for a reason other than a stale revision (W-3, W-8).
    SaveFailed,
    /// A host callback did not settle within its `timeoutMs` (I-6); nothing was committed.
    Timeout,
    /// The host's `AbortSignal` fired while a call awaited a callback (I-6); nothing was committed.
    Aborted,
    /// The transcript is over `maxTranscriptBytes` UTF-8 bytes, or a result would be over
    /// what one JS string can hold (issue 15: a typed error, never a crash).
    TooLarge,
    /// The call needs a part the `lite` build leaves out (the log importers, the embedded
    /// memory index); the message names the part and the entry that has it (issue 15).
    NotInLite,
}

impl ErrorCode {
    /// The stable string form, e.g. `"invalid_transcript"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidTranscript => "invalid_transcript",
            ErrorCode::UnpairedToolResult => "unpaired_tool_result",
            ErrorCode::UnansweredToolCall => "unanswered_tool_call",
            ErrorCode::DuplicateToolCallId => "duplicate_tool_call_id",
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::InvalidState => "invalid_state",
            ErrorCode::InvalidRewrite => "invalid_rewrite",
            ErrorCode::SummaryFailed => "summary_failed",
            ErrorCode::ProtocolError => "protocol_error",
            ErrorCode::StaleRevision => "stale_revision",
            ErrorCode::UnknownFormat => "unknown_format",
            ErrorCode::MemoryFailed => "memory_failed",
            ErrorCode::SaveFailed => "save_failed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Aborted => "aborted",
            ErrorCode::TooLarge => "too_large",
            ErrorCode::NotInLite => "not_in_lite",
        }
    }

    /// The code named by its stable string (`"save_failed"` -> `SaveFailed`); `None` for
    /// any other string.
    pub fn parse(code: &str) -> Option<ErrorCode> {
        Some(match code {
            "invalid_transcript" => ErrorCode::InvalidTranscript,
            "unpaired_tool_result" => ErrorCode::UnpairedToolResult,
            "unanswered_tool_call" => ErrorCode::UnansweredToolCall,
            "duplicate_tool_call_id" => ErrorCode::DuplicateToolCallId,
            "invalid_config" => ErrorCode::InvalidConfig,
            "invalid_state" => ErrorCode::InvalidState,
            "invalid_rewrite" => ErrorCode::InvalidRewrite,
            "summary_failed" => ErrorCode::SummaryFailed,
            "protocol_error" => ErrorCode::ProtocolError,
            "stale_revision" => ErrorCode::StaleRevision,
            "unknown_format" => ErrorCode::UnknownFormat,
            "memory_failed" => ErrorCode::MemoryFailed,
            "save_failed" => ErrorCode::SaveFailed,
            "timeout" => ErrorCode::Timeout,
            "aborted" => ErrorCode::Aborted,
            "too_large" => ErrorCode::TooLarge,
            _ => return None,
        })
    }
}

/// An engine error: a stable [`ErrorCode`] and a human message naming the place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}: {message}", code.as_str())]
pub struct Error {
    /// The stable code (JSON `code`, snake_case; the JS `Error.code`, J-2).
    pub code: ErrorCode,
    /// What is wrong and where (a message offset, a field path).
    pub message: String,
}

impl Error {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into() }
    }
    /// An `invalid_transcript` error (the input does not fit its format).
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidTranscript, message)
    }
}

/// The crate's result type: `Ok(T)` or an [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// What kind of JSON value `v` is, for an error message: "an array", "an object", ...
pub fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The error for JSON text that serde refused (`e`), named `what` (e.g. `rows`), with
/// `code`. A string escape of a lone UTF-16 surrogate (`\uD800` with no low half: what
/// `JSON.stringify` writes for an unpaired code unit) is said as such, with the value's
/// path (`[3].content`, array indexes and object keys from the top) and the line and
/// column; any other syntax error keeps serde's text (`invalid JSON: ...`).
pub fn json_text_error(what: &str, text: &str, e: &serde_json::Error, code: ErrorCode) -> Error {
    lone_surrogate_error(what, text, e, code)
        .or_else(|| too_deep_error(what, text, 0, e, code))
        .unwrap_or_else(|| Error::new(code, format!("{what}: invalid JSON: {e}")))
}

/// How many levels a JSON text may nest (objects and arrays inside each other) and still
/// be read: serde_json's recursion limit (128) refuses the 128th level, which keeps the
/// reader within the wasm stack. A row read on its own from a document may nest this
/// many levels below the document's own levels.
pub const MAX_JSON_DEPTH: usize = 127;

/// Break finding 12: the error for a JSON value nested deeper than the reader takes
/// (valid JSON that `JSON.parse` reads), with `what` (the row), or `None` when `e` is
/// another error. `text` is the JSON text serde read; `base`, the levels of the input
/// around it (1 for a row of an array document, 2 for a row of an envelope's array, 0
/// for a whole document), so the depth and limit said are the input's own
/// ([`too_deep_note`]).
pub fn too_deep_error(what: &str, text: &str, base: usize, e: &serde_json::Error, code: ErrorCode) -> Option<Error> {
    too_deep_note(text, base, e).map(|note| Error::new(code, format!("{what}: {note}")))
}

/// UTF-8 bytes of the path [`too_deep_note`] names at most.
const DEEP_PATH_BYTES: usize = 160;

/// `"the JSON value is nested N levels deep at <path> ..."` when `e` is serde_json's
/// recursion-limit error, else `None`. `N` is the deepest nesting of `text` plus `base`
/// (the input's levels around `text`: counted from the input's top), the limit said is
/// [`MAX_JSON_DEPTH`] plus `base`, and `<path>` (from `text`'s top, clipped to 160 bytes)
/// leads to where the limit is first passed.
pub fn too_deep_note(text: &str, base: usize, e: &serde_json::Error) -> Option<String> {
    if !e.to_string().starts_with("recursion limit exceeded") {
        return None;
    }
    let (deepest, over_at) = nesting(text);
    let mut path = json_path_at(text, over_at.unwrap_or(0));
    if path.len() > DEEP_PATH_BYTES {
        let mut end = DEEP_PATH_BYTES;
        while !path.is_char_boundary(end) {
            end -= 1;
        }
        path = format!("{}... ({} more bytes of path)", path.get(..end).unwrap_or(""), path.len() - end);
    }
    let at = if path.is_empty() { "the top level".to_string() } else { path };
    Some(format!(
        "the JSON value is nested {} levels deep (objects / arrays inside each other) at {at}: valid JSON, but the reader takes at most {} levels here; flatten the value or send it as a JSON string",
        deepest.saturating_add(base),
        MAX_JSON_DEPTH.saturating_add(base)
    ))
}

/// The deepest nesting of a JSON text (objects and arrays, strings skipped) and the byte
/// offset of the first bracket past [`MAX_JSON_DEPTH`] levels, if any.
fn nesting(text: &str) -> (usize, Option<usize>) {
    let (mut depth, mut deepest, mut over) = (0usize, 0usize, None);
    let (mut in_string, mut escaped) = (false, false);
    for (i, c) in text.bytes().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
                if depth > MAX_JSON_DEPTH && over.is_none() {
                    over = Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (deepest, over)
}

/// [`json_text_error`]'s lone-surrogate error, or `None` when `e` is another error.
pub fn lone_surrogate_error(what: &str, text: &str, e: &serde_json::Error, code: ErrorCode) -> Option<Error> {
    let said = e.to_string();
    if !(said.contains("surrogate") || said.contains("hex escape")) {
        return None;
    }
    let at = byte_offset(text, e.line(), e.column());
    // the escape that failed: the last `\u` at or before the error position
    let head = text.get(..at.min(text.len())).unwrap_or(text);
    let unit = head.rfind("\\u").and_then(|i| text.get(i + 2..i + 6)).unwrap_or("????").to_ascii_uppercase();
    let path = json_path_at(text, head.rfind("\\u").unwrap_or(at));
    Some(Error::new(
        code,
        format!(
            "{what}: the string at {} holds a lone surrogate (\\u{unit}, an unpaired UTF-16 code unit) at line {} column {}: it is not text and cannot be kept byte for byte; send well-formed text (String.prototype.toWellFormed() replaces it with U+FFFD)",
            if path.is_empty() { "the top level".to_string() } else { path },
            e.line(),
            e.column()
        ),
    ))
}

/// The byte offset of a 1-based (line, column) in `text` (serde_json counts columns in bytes).
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    start.saturating_add(column.saturating_sub(1)).min(text.len())
}

/// The path of the JSON value holding byte `at` of `text` (`[3].content`, `.a[0]`), by a
/// scan of the text before it: array indexes and object keys (keys quoted when they are
/// not plain identifiers). Text that is not well-formed before `at` gives what was read.
fn json_path_at(text: &str, at: usize) -> String {
    enum Frame {
        Arr(usize),
        Obj(Option<String>),
    }
    let b = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let mut expect_key = false;
    while i < at.min(b.len()) {
        match b.get(i).copied().unwrap_or(b' ') {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && b.get(j) != Some(&b'"') {
                    j += if b.get(j) == Some(&b'\\') { 2 } else { 1 };
                }
                if j >= at {
                    break; // the string holding `at`
                }
                if expect_key {
                    if let Some(Frame::Obj(k)) = stack.last_mut() {
                        *k = Some(text.get(start..j).unwrap_or("").to_string());
                    }
                    expect_key = false;
                }
                i = j + 1;
                continue;
            }
            b'[' => stack.push(Frame::Arr(0)),
            b'{' => {
                stack.push(Frame::Obj(None));
                expect_key = true;
            }
            b']' | b'}' => {
                stack.pop();
            }
            b',' => match stack.last_mut() {
                Some(Frame::Arr(n)) => *n += 1,
                Some(Frame::Obj(k)) => {
                    *k = None;
                    expect_key = true;
                }
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    let mut out = String::new();
    for f in &stack {
        match f {
            Frame::Arr(n) => out.push_str(&format!("[{n}]")),
            Frame::Obj(Some(k)) if !k.is_empty() && k.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') => {
                out.push('.');
                out.push_str(k);
            }
            Frame::Obj(Some(k)) => out.push_str(&format!("[{k:?}]")),
            Frame::Obj(None) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i14_a_lone_surrogate_is_named_with_its_path() {
        let text = r#"[{"role":"user","content":"ok"},{"role":"user","content":"bad \ud800 text"}]"#;
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let err = json_text_error("rows", text, &e, ErrorCode::InvalidTranscript);
        assert!(err.message.starts_with("rows: the string at [1].content holds a lone surrogate (\\uD800"), "{}", err.message);
        assert!(!err.message.contains("hex escape"), "{}", err.message);
        let text = r#"{"a":{"b c":["x","\udc00"]}}"#;
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        let err = json_text_error("state", text, &e, ErrorCode::InvalidState);
        assert!(err.message.contains(r#"at .a["b c"][1] holds a lone surrogate (\uDC00"#), "{}", err.message);
        let e = serde_json::from_str::<serde_json::Value>("[1,").unwrap_err();
        assert!(json_text_error("rows", "[1,", &e, ErrorCode::InvalidTranscript).message.starts_with("rows: invalid JSON: "));
    }

    #[test]
    fn f1_the_depth_error_says_the_inputs_own_depth_and_where() {
        // serde reads 127 levels and refuses the 128th
        let ok = format!("{}{}", "[".repeat(MAX_JSON_DEPTH), "]".repeat(MAX_JSON_DEPTH));
        assert!(serde_json::from_str::<serde_json::Value>(&ok).is_ok());
        let text = format!("{{\"k\":\"[[[\",\"v\":{}1{}}}", "[".repeat(199), "]".repeat(199));
        let e = serde_json::from_str::<serde_json::Value>(&text).unwrap_err();
        let err = json_text_error("doc", &text, &e, ErrorCode::InvalidTranscript);
        assert!(err.message.starts_with("doc: the JSON value is nested 200 levels deep (objects / arrays inside each other) at .v[0][0]"), "{}", err.message);
        assert!(err.message.contains("the reader takes at most 127 levels here"), "{}", err.message);
        assert!(err.message.contains("more bytes of path"), "the path is clipped: {}", err.message);
        // a row read alone: the document's levels around it are counted
        let row = format!("{}{}", "[".repeat(130), "]".repeat(130));
        let e = serde_json::from_str::<serde_json::Value>(&row).unwrap_err();
        let note = too_deep_note(&row, 2, &e).unwrap_or_default();
        assert!(note.starts_with("the JSON value is nested 132 levels deep") && note.contains("at most 129 levels"), "{note}");
    }
}
