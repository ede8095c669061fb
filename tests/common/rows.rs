//! Transcripts written as JSON text, row by row, in every format: shared by
//! tests/retained_bytes.rs and examples/fuzz.rs (included by path: not a test target of
//! its own).

use context_compactor::formats::Format;

/// Every format, in the order the tests and the fuzzer walk them.
pub const FORMATS: [Format; 6] = [Format::OpenaiChat, Format::Anthropic, Format::Gemini, Format::OpenaiResponses, Format::AiSdk, Format::Canonical];

/// One user-ish text row of `format` with `extra` members before (`first`) or after the body.
pub fn text_row(format: Format, role: &str, text: &str, extra: &[&str], first: bool) -> String {
    let text = serde_json::to_string(text).unwrap();
    let role = if format == Format::Gemini && role == "assistant" { "model" } else { role };
    let body = match format {
        Format::Gemini => format!(r#""role":"{role}","parts":[{{"text":{text}}}]"#),
        Format::Canonical => format!(r#""role":"{role}","content":[{{"type":"text","text":{text}}}]"#),
        _ => format!(r#""role":"{role}","content":{text}"#),
    };
    let extra = extra.join(",");
    match (extra.is_empty(), first) {
        (true, _) => format!("{{{body}}}"),
        (false, true) => format!("{{{extra},{body}}}"),
        (false, false) => format!("{{{body},{extra}}}"),
    }
}

/// The document of `format` holding `rows` (each a JSON object text), with the envelope
/// the format has (a system text where it carries one).
pub fn document(format: Format, rows: &[String]) -> String {
    let list = format!("[{}]", rows.join(","));
    match format {
        Format::OpenaiChat => list,
        Format::Anthropic | Format::AiSdk => format!(r#"{{"system":"Be careful.","messages":{list}}}"#),
        Format::Gemini => format!(r#"{{"contents":{list}}}"#),
        Format::OpenaiResponses => format!(r#"{{"input":{list}}}"#),
        Format::Canonical => format!(r#"{{"messages":{list}}}"#),
    }
}
