//! The provider format names (F-1). Below the transcript model: knows no adapter, only
//! the names; [`crate::formats`] re-exports [`Format`] and adds the per-format rules.

use crate::error::{Error, ErrorCode, Result};
use serde::{Deserialize, Serialize};

/// Supported formats. Serialized in kebab-case (`openai-chat`, `anthropic`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// OpenAI Chat Completions `messages`.
    OpenaiChat,
    /// Anthropic Messages API `messages` (+ top-level `system`).
    Anthropic,
    /// Gemini `generateContent` `contents` (+ top-level `systemInstruction`).
    Gemini,
    /// OpenAI Responses API `input` items (+ top-level `instructions`).
    OpenaiResponses,
    /// Vercel AI SDK `ModelMessage[]` (+ top-level `system`).
    AiSdk,
    /// The engine's canonical JSON (see [`crate::formats::canonical`]).
    Canonical,
}

impl Format {
    /// The format of a name: `openai-chat`, `openai-responses`, `anthropic`, `gemini`,
    /// `ai-sdk`, `canonical` (snake_case spellings accepted too). Errors: `unknown_format`
    /// listing the accepted names.
    pub fn parse(name: &str) -> Result<Format> {
        match name {
            "openai-chat" | "openai_chat" => Ok(Format::OpenaiChat),
            "anthropic" => Ok(Format::Anthropic),
            "gemini" => Ok(Format::Gemini),
            "openai-responses" | "openai_responses" => Ok(Format::OpenaiResponses),
            "ai-sdk" | "ai_sdk" => Ok(Format::AiSdk),
            "canonical" => Ok(Format::Canonical),
            other => Err(Error::new(ErrorCode::UnknownFormat, format!("unknown format {other:?}; expected one of openai-chat, openai-responses, anthropic, gemini, ai-sdk, canonical"))),
        }
    }
    /// The format's kebab-case name (as [`Format::parse`] reads it and serde writes it).
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenaiChat => "openai-chat",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::OpenaiResponses => "openai-responses",
            Format::AiSdk => "ai-sdk",
            Format::Canonical => "canonical",
        }
    }
}
