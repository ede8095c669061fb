//! Sizes: UTF-8 bytes and token estimates (C-7).
//!
//! The estimate counts 4 bytes of serialized JSON a token (`bytes_per_token`), media
//! high: 1,600 tokens an image (`image_tokens`), inline video a token per 4 bytes of
//! its base64, other inline media (audio, documents) by their base64 bytes at the text
//! rate. A calibration factor (provider-reported / estimated, from the session state)
//! scales the text part so dense scripts are not undercounted.

use crate::config::Config;
use crate::transcript::{Block, MediaKind, Message, Transcript};
use serde::Serialize;

/// Size of a transcript (or part of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Size {
    /// Number of messages.
    pub messages: usize,
    /// UTF-8 bytes of the serialized messages plus document-level fields.
    pub bytes: usize,
    /// Estimated tokens (C-7).
    pub estimated_tokens: u64,
}

/// Token estimate of one message (C-7). `calibration` multiplies the text part
/// (1.0 when unknown).
/// Sums saturate: `imageTokens`, `bytesPerToken` and the calibration come from the host.
pub fn message_tokens(m: &Message, config: &Config, calibration: f64) -> u64 {
    let (text_bytes, media_tokens) = message_parts(m, config);
    let text_tokens = (text_bytes.div_ceil(config.bytes_per_token.max(1)) as f64 * calibration.max(0.01)).ceil() as u64;
    text_tokens.saturating_add(media_tokens)
}

/// The two parts of a message's estimate (C-7): UTF-8 bytes counted as text (the
/// serialized message less its media payloads), and the media tokens (1,600 an image,
/// a token per 4 bytes of inline video base64). Calibration applies to the text part only.
pub fn message_parts(m: &Message, config: &Config) -> (u64, u64) {
    let mut media_bytes = 0usize;
    let mut media_tokens = 0u64;
    for b in &m.blocks {
        let (kind, bytes) = match b {
            Block::Media { kind, bytes, .. } => (Some(*kind), *bytes),
            Block::ToolResult { media, media_bytes: mb, .. } => {
                for k in media {
                    if *k == MediaKind::Image {
                        media_tokens = media_tokens.saturating_add(config.image_tokens);
                    }
                }
                media_bytes = media_bytes.saturating_add(*mb);
                (None, 0)
            }
            _ => (None, 0),
        };
        match kind {
            Some(MediaKind::Image) => {
                media_bytes = media_bytes.saturating_add(bytes);
                media_tokens = media_tokens.saturating_add(config.image_tokens);
            }
            Some(MediaKind::Video) => {
                media_bytes = media_bytes.saturating_add(bytes);
                media_tokens = media_tokens.saturating_add((bytes as u64).div_ceil(4));
            }
            Some(_) => {}
            None => {}
        }
    }
    (m.bytes.saturating_sub(media_bytes) as u64, media_tokens)
}

/// Token estimate of plain text bytes.
pub fn text_tokens(bytes: usize, config: &Config, calibration: f64) -> u64 {
    bytes_tokens(bytes as u64, config, calibration)
}

/// [`text_tokens`] of a host-given size in UTF-8 bytes (`toolsBytes`, ...), which may
/// exceed `usize` on wasm32: counted whole, never truncated to 32 bits.
pub fn bytes_tokens(bytes: u64, config: &Config, calibration: f64) -> u64 {
    (bytes.div_ceil(config.bytes_per_token.max(1)) as f64 * calibration.max(0.01)).ceil() as u64
}

/// Size of a whole transcript, envelope (system prompt, tools) included.
pub fn transcript_size(t: &Transcript, config: &Config, calibration: f64) -> Size {
    let env = t.envelope.bytes();
    let mut s = Size { messages: t.messages.len(), bytes: env, estimated_tokens: text_tokens(env, config, calibration) };
    for m in &t.messages {
        s.bytes = s.bytes.saturating_add(m.bytes);
        s.estimated_tokens = s.estimated_tokens.saturating_add(message_tokens(m, config, calibration));
    }
    s
}
