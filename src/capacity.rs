//! Host-facing capacity operations on the session state (C-3, C-5, C-6, C-7): what the
//! host reports between compaction checks. Each takes a state and returns the new
//! state; none touches the transcript.
//!
//! - [`observe_usage`]: a request was answered (its provider usage): advances the
//!   cadence boundary, anchors the projection, calibrates the estimate, clears a
//!   recorded refusal when the request was sent whole.
//! - [`record_refusal`]: the provider refused a request for not fitting the context.
//! - [`note_transcript_edit`]: the host edited the transcript, restored a revision,
//!   updated the system prompt or forked: the anchor no longer describes it.

use crate::config::Config;
use crate::error::{Error, ErrorCode, Result};
use crate::formats::normalize_usage;
use crate::measure::{message_parts, text_tokens};
use crate::state::{Anchor, SessionState};
use crate::transcript::Transcript;
use serde::Deserialize;
use serde_json::Value;

/// Calibration is only learnt from requests whose text estimate is at least this many
/// tokens (small requests are dominated by per-message overhead).
pub const MIN_CALIBRATION_TOKENS: u64 = 256;
/// Calibration bounds: never below 1.0 (the 4-bytes-a-token estimate is the floor:
/// calibration exists so dense scripts are not undercounted, C-7), at most 8.0.
pub const CALIBRATION_RANGE: (f64, f64) = (1.0, 8.0);

/// What the host reports about one answered request.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Observation {
    /// The provider usage of the answer, in the provider's own field names.
    pub usage: Option<Value>,
    /// The provider that counted (any host name, compared as given).
    pub provider: Option<String>,
    /// The model that counted.
    pub model: Option<String>,
    /// The request carried the open run's results shortened (`boundRequest` returned a
    /// non-empty `bounded`): it presented less than the transcript holds, so its answer
    /// anchors nothing and keeps a recorded refusal (C-3, B-3).
    pub bounded: bool,
    /// Tool definitions sent with the request (any JSON), for calibration.
    pub tools: Option<Value>,
    /// Or their size, UTF-8 bytes.
    pub tools_bytes: Option<u64>,
}

/// Records an answered request (C-3, C-6, C-7). `t` is the transcript exactly as that
/// request carried it (before the answer is appended); its rows are what the anchor
/// covers.
///
/// - The cadence boundary advances by one (an answered request is a boundary).
/// - Sent whole (`bounded: false`) with a recognised input count: the anchor becomes
///   `(input tokens, t's rows, provider, model)`; the calibration becomes provider /
///   estimate over the text part (learnt only from requests of at least
///   [`MIN_CALIBRATION_TOKENS`], clamped to [`CALIBRATION_RANGE`]); a recorded refusal is
///   cleared, since the transcript then fits.
/// - Bounded: nothing is anchored (the anchor stays on the request before) and a
///   recorded refusal stays.
pub fn observe_usage(state: &SessionState, t: &Transcript, config: &Config, obs: &Observation) -> SessionState {
    let mut s = state.clone();
    s.cadence.boundary = s.cadence.boundary.saturating_add(1);
    // W-7: every answered main request is spend, bounded or not
    if let Some(u) = obs.usage.as_ref().and_then(normalize_usage) {
        s.spend.add_main(u.input_tokens, u.output_tokens);
    }
    if obs.bounded {
        return s;
    }
    s.cadence.refusal = false;
    s.cadence.refusal_source = None;
    let input = obs.usage.as_ref().and_then(normalize_usage).map(|u| u.input_tokens).filter(|&i| i > 0);
    let Some(input) = input else { return s };
    s.cadence.anchor = Some(Anchor {
        input_tokens: input,
        rows: t.messages.len(),
        last_row_id: t.messages.last().map(|m| m.id.clone()),
        provider: obs.provider.clone(),
        model: obs.model.clone(),
    });
    // C-7: provider / estimate over the text part (media are counted high on purpose).
    let tools = obs.tools_bytes.unwrap_or_else(|| obs.tools.as_ref().map(|v| crate::transcript::json_len(v) as u64).unwrap_or(0));
    let mut text_tok = text_tokens(t.envelope.bytes(), config, 1.0).saturating_add(crate::measure::bytes_tokens(tools, config, 1.0));
    let mut media_tok = 0u64;
    for m in &t.messages {
        let (bytes, media) = message_parts(m, config);
        text_tok = text_tok.saturating_add(bytes.div_ceil(config.bytes_per_token.max(1)));
        media_tok = media_tok.saturating_add(media);
    }
    if text_tok >= MIN_CALIBRATION_TOKENS {
        let ratio = input.saturating_sub(media_tok) as f64 / text_tok as f64;
        s.calibration = ratio.clamp(CALIBRATION_RANGE.0, CALIBRATION_RANGE.1);
    }
    s
}

/// Records a provider refusal for not fitting the model's context (C-6). A refused
/// request reports no usage, so no measure moves: the flag makes the next
/// whole-transcript check compact once whatever the measures and the cadence say. The
/// refused boundary counts for the cadence. The flag is in the persisted state, so it
/// survives a restart.
pub fn record_refusal(state: &SessionState) -> SessionState {
    let mut s = state.clone();
    s.cadence.boundary = s.cadence.boundary.saturating_add(1);
    s.cadence.refusal = true;
    s.cadence.refusal_source = Some("context_refusal".into());
    s
}

/// A host change to the transcript outside compaction (C-3, C-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// The host edited the transcript: drops the anchor and a recorded refusal.
    Edit,
    /// The host restored an earlier revision: drops the anchor.
    RevisionRestore,
    /// The host updated the system prompt: drops the anchor.
    SystemPrompt,
    /// The session was forked at a point: drops the anchor and a recorded refusal.
    Fork,
}

impl EditKind {
    /// Parses `edit`, `revision_restore`, `system_prompt`, `fork` (kebab-case and
    /// camelCase spellings accepted). Errors: `invalid_config` naming the kind.
    pub fn parse(kind: &str) -> Result<EditKind> {
        match kind {
            "edit" | "transcript_edit" | "transcript-edit" | "transcriptEdit" => Ok(EditKind::Edit),
            "revision_restore" | "revision-restore" | "revisionRestore" => Ok(EditKind::RevisionRestore),
            "system_prompt" | "system-prompt" | "systemPrompt" | "system_prompt_update" => Ok(EditKind::SystemPrompt),
            "fork" => Ok(EditKind::Fork),
            other => Err(Error::new(ErrorCode::InvalidConfig, format!("unknown transcript edit kind {other:?}; expected edit, revision_restore, system_prompt or fork"))),
        }
    }
}

/// Notes a host change to the transcript (C-3): the anchor no longer describes it and is
/// dropped; an edit and a fork also drop a recorded refusal (C-6). A fork also gets its
/// own artifact tag (issue 14, [`crate::trust::fork_tag`]): the returned state is the
/// fork's, and the fork and its parent never propose the same handle.
pub fn note_transcript_edit(state: &SessionState, kind: EditKind) -> SessionState {
    let mut s = state.clone();
    s.cadence.anchor = None;
    if matches!(kind, EditKind::Edit | EditKind::Fork) {
        s.cadence.refusal = false;
        s.cadence.refusal_source = None;
    }
    if kind == EditKind::Fork {
        crate::trust::fork_tag(&mut s);
    }
    s
}
