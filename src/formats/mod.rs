//! Provider formats: decode host JSON into the canonical [`crate::transcript::Transcript`], encode it back.
//!
//! Each adapter module exposes the same free functions (see [`Adapter`]); this module
//! dispatches on [`Format`] and owns what is common: the provenance convention of the
//! stored view (F-4), content-derived message ids (T-4), and the generic pairing
//! validator (F-2) parameterised by each format's [`PairingRules`].
//!
//! Provenance convention (F-4): in the *stored* view the engine's provenance rides as
//! top-level keys of each provider message (`summary_level`, `artifact_ref`,
//! `transcript_role`, `message_id`, `observation_source`, `pinned`). The *request*
//! view, meant for the provider, never carries them.

pub mod ai_sdk;
pub mod anthropic;
pub mod canonical;
mod decode;
mod detect;
pub mod failure;
pub mod gemini;
/// Log importers (N-3); left out of the `lite` build (issue 15).
#[cfg(not(feature = "lite"))]
pub mod import;
pub mod openai_chat;
pub mod openai_responses;
mod pairing;
mod request_scan;
mod text_media;
mod usage;
mod view;

pub use crate::format::Format;
pub use decode::{decode, decode_owned, decode_owned_with_ids, decode_rows, decode_rows_after, decode_text, decode_text_with_ids, decode_with_ids, message_from_raw, pin_unstable_ids, request_text, ContentIds};
pub use detect::{detect, detect_text};
pub use request_scan::request_is_input;
pub use pairing::{validate_pairing, validate_pairing_from, PairingRules};
pub use usage::{normalize_usage, usage_warning, Usage, USAGE_UNREADABLE};
pub use view::{encode, encode_message, set_result_body, set_result_body_of, text_message, with_result_body, with_result_body_of, View};

use crate::error::{Error, Result};
use crate::transcript::{Block, Role};
use serde_json::Value;
/// Folds a tool result's content parts into its text (parts joined by newlines), the
/// media kinds it carries and their bytes.
pub(crate) fn result_parts(parts: Vec<Block>) -> (String, Vec<crate::transcript::MediaKind>, usize) {
    let mut text = String::new();
    let mut media = Vec::new();
    let mut media_bytes = 0;
    for b in parts {
        match b {
            Block::Text { text: t } => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&t);
            }
            Block::Media { kind, bytes, .. } => {
                media.push(kind);
                media_bytes += bytes;
            }
            _ => {}
        }
    }
    (text, media, media_bytes)
}

/// Sets `obj[key] = text` (a result body, E-2: only that field changes). Errors:
/// `invalid_transcript` naming `what` when `obj` is not a JSON object.
pub(crate) fn set_text_field(obj: &mut Value, key: &str, text: &str, what: &str) -> Result<()> {
    match obj {
        Value::Object(map) => {
            map.insert(key.into(), Value::String(text.to_string()));
            Ok(())
        }
        _ => Err(Error::invalid(format!("{what} is not an object"))),
    }
}

/// The functions every adapter module implements.
pub trait Adapter {
    /// Canonical role and blocks for one provider message (provenance keys removed).
    fn view(raw: &Value, at: usize) -> Result<(Role, Vec<Block>)>;
    /// Replace the body of the `nth` tool result of `raw` with `text` (E-2: only the
    /// output body; every other field, the header, stays).
    fn set_result_body(raw: &mut Value, nth: usize, text: &str) -> Result<()>;
    /// A new user-role message carrying `text` (a summary, Y-4).
    fn text_message(text: &str) -> Value;
}

/// A row's role and canonical blocks, as a view function returns them.
#[cfg(test)]
type RowView = (Role, Vec<Block>);

/// Test helper for the typed text views: each `taken` row gets the view the `Value`
/// adapter gives; each `handed_back` row is left to the `Value` path.
#[cfg(test)]
pub(crate) fn check_typed_view(
    typed: fn(&str) -> Option<RowView>,
    view: fn(&Value, usize) -> Result<RowView>,
    taken: &[&str],
    handed_back: &[&str],
) {
    for t in taken {
        let value: Value = serde_json::from_str(t).expect("test row is JSON");
        assert_eq!(typed(t), view(&value, 0).ok(), "{t}");
        assert!(typed(t).is_some(), "{t} is taken");
    }
    for t in handed_back {
        assert!(typed(t).is_none(), "{t} is handed back");
    }
}

#[cfg(test)]
mod typed_view_tests {
    use super::*;

    #[test]
    fn f1_typed_views_take_common_rows_and_hand_back_the_rest() {
        {
            let taken = [
                r#"{"role":"user","content":"hi"}"#,
                r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}"#,
                r#"{"role":"tool","tool_call_id":"c","content":"out"}"#,
            ];
            let handed_back = [
                r#"{"role":"user","content":[{"type":"text","text":"x"}]}"#,
                r#"{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}"#,
                r#"{"role":"user","content":"hi","message_id":"m"}"#,
                r#"{"role":"wizard","content":"hi"}"#,
            ];
            check_typed_view(|t| openai_chat::view_text_in(t, &failure::CallNames::default()), openai_chat::OpenaiChat::view, &taken, &handed_back);
        }
        {
            let taken = [
                r#"{"role":"user","content":"hi"}"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","name":"n","input":{"a":1}}]}"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"out","is_error":false}]}"#,
            ];
            let handed_back = [
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}]}]}"#,
                r#"{"role":"assistant","content":[{"type":"thinking","thinking":"h","signature":"s"}]}"#,
                r#"{"role":"user","content":"hi","pinned":true}"#,
                r#"{"role":"system","content":"hi"}"#,
            ];
            check_typed_view(|t| anthropic::view_text_in(t, &failure::CallNames::default()), anthropic::Anthropic::view, &taken, &handed_back);
        }
    }
}
