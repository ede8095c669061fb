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
