//! Per-request bounding of the open run's own tool results (B-1..B-3).
//!
//! A compaction inside a run keeps the run's request and newest round, so a round whose
//! own results are larger than the provider or the model takes cannot be folded while
//! the run lasts. After the compaction check, when the composed request is still over
//! the provider's body cap or its input forecast is over the model's input budget (the
//! window less the output reserve, or a host-given input ceiling), each of the run's
//! results over its share is shortened *for that request only*: the head of its text
//! (cut on a character boundary), media as placeholders, and a marker naming the call,
//! saying it already ran and how much was omitted. The stored transcript is not touched.
//!
//! Share (B-2): what the rest of the request leaves the run's results, split so every
//! result under the share stays whole and the others get the same share (water
//! filling). On the byte axis sizes are body bytes; on the token axis every result is
//! sized at two bytes a token (its estimated tokens x 2), so the kept head of dense
//! text still fits the tokens it was given.

use crate::config::Config;
use crate::events::Event;
use crate::error::Result;
use crate::evict::{floor_boundary, tool_names};
use crate::formats::{encode, set_result_body_of, View};
use crate::measure::{message_tokens, text_tokens};
use crate::select::{head_end, run_start};
use crate::state::SessionState;
use crate::transcript::{json_len, Block, MediaKind, Transcript};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Bytes per token on the token axis of the share (B-2).
pub const SHARE_BYTES_PER_TOKEN: u64 = 2;

/// Options of one [`bound_request`] call.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BoundOptions {
    /// Provider request-body cap, UTF-8 bytes; default the config's `max_request_bytes`.
    pub max_request_bytes: Option<u64>,
    /// The model's input budget, tokens; default `context_window - output reserve`.
    pub input_budget_tokens: Option<u64>,
    /// Tool definitions sent with the request (any JSON).
    pub tools: Option<Value>,
    /// Or their size, UTF-8 bytes.
    pub tools_bytes: Option<u64>,
    /// The exact provider-lowered body size of the composed (unbounded) request, UTF-8
    /// bytes. Default: the request view's JSON plus the tool definitions.
    pub request_bytes: Option<u64>,
    /// Compaction is on for this session (default true). Off: the request is still
    /// bounded, and nothing is recorded in the state (B-3).
    pub compaction: bool,
}

impl Default for BoundOptions {
    fn default() -> Self {
        BoundOptions { max_request_bytes: None, input_budget_tokens: None, tools: None, tools_bytes: None, request_bytes: None, compaction: true }
    }
}

/// One result shortened for the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundedCall {
    /// The id of the call whose result was shortened.
    pub call_id: String,
    /// The tool's name when known.
    pub name: Option<String>,
    /// Offset of the message carrying the result.
    pub offset: usize,
    /// UTF-8 bytes of the result's text the request keeps (the head).
    pub kept_bytes: u64,
    /// The whole result's size: text bytes plus media payload bytes.
    pub whole_bytes: u64,
    /// Media items replaced by placeholders.
    pub media_omitted: usize,
}

/// The limit the request was held to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestLimit {
    /// Body cap, UTF-8 bytes, if any.
    pub max_request_bytes: Option<u64>,
    /// Input budget, tokens.
    pub input_budget_tokens: u64,
    /// The composed request was over the body cap.
    pub over_bytes: bool,
    /// The composed request's input forecast was over the input budget.
    pub over_tokens: bool,
    /// The share each shortened result got, bytes (the smaller of the two axes'
    /// shares); `None` when nothing was shortened.
    pub share_bytes: Option<u64>,
}

/// Request size: body bytes and input forecast tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestSize {
    /// UTF-8 bytes of the request body: the request view plus tool definitions, raised to the
    /// host's exact body size (`requestBytes`) when it gave one (C-2).
    pub bytes: u64,
    /// Estimated input tokens: messages, document-level fields and tool definitions (C-7).
    pub forecast_tokens: u64,
}

/// The result of [`bound_request`].
#[derive(Debug, Clone)]
pub struct Bounded {
    /// The transcript to send (a copy; results shortened when needed).
    pub request: Transcript,
    /// One entry per shortened result, in transcript order (B-3).
    pub bounded: Vec<BoundedCall>,
    /// The limit the request was held to (B-1).
    pub limit: RequestLimit,
    /// Size of the request before bounding.
    pub before: RequestSize,
    /// Size of the request after bounding (equal to `before` when nothing was shortened).
    pub after: RequestSize,
    /// The request is within both limits after bounding.
    pub fits: bool,
    /// `tool_results_bounded_for_request` when anything was shortened.
    pub event: Option<Event>,
    /// The state with the bound recorded like a refusal (unchanged when nothing was
    /// bounded or compaction is off).
    pub state: SessionState,
}

impl Bounded {
    /// Plain JSON: `{ request (request view), bounded, limit, before, after, fits, event, state }`.
    pub fn to_json(&self) -> Value {
        json!({
            "request": encode(&self.request, View::Request),
            "bounded": self.bounded,
            "limit": self.limit,
            "before": self.before,
            "after": self.after,
            "fits": self.fits,
            "event": self.event,
            "state": self.state,
        })
    }
}

struct Candidate {
    offset: usize,
    nth: usize,
    call_id: String,
    name: Option<String>,
    text: String,
    media: Vec<MediaKind>,
    whole_bytes: u64,
    /// Token-axis size: estimated tokens x 2.
    token_size: u64,
}

/// Largest share `s` with `sum(min(size, s)) <= available` (water filling); `u64::MAX`
/// when everything fits whole.
fn water_fill(sizes: &[u64], available: u64) -> u64 {
    let total: u64 = sizes.iter().fold(0u64, |a, &s| a.saturating_add(s));
    if total <= available {
        return u64::MAX;
    }
    let mut sorted = sizes.to_vec();
    crate::sorted::sort_by(&mut sorted, |a, b| a.cmp(b));
    let mut left = available;
    let mut n = sorted.len() as u64;
    for s in sorted {
        if s.saturating_mul(n) <= left {
            left -= s;
            n -= 1;
        } else {
            return left / n.max(1);
        }
    }
    u64::MAX
}

fn marker(c: &Candidate, kept: usize) -> String {
    let omitted = c.text.get(kept..).unwrap_or("");
    let name = c.name.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
    let media = match c.media.len() {
        0 => String::new(),
        1 => "; 1 media item replaced by a placeholder".to_string(),
        n => format!("; {n} media items replaced by placeholders"),
    };
    format!(
        "[result of call {}{name} shortened for this request only: the call already ran, do not run it again to see the rest. Kept the first {kept} of {} bytes; {} bytes ({} characters) omitted{media}.]",
        c.call_id,
        c.whole_bytes,
        c.whole_bytes.saturating_sub(kept as u64),
        omitted.chars().count()
    )
}

fn body(c: &Candidate, share: u64) -> (String, usize) {
    let probe = marker(c, c.text.len());
    let placeholders: String = c.media.iter().map(|k| format!("[{} omitted]\n", format!("{k:?}").to_ascii_lowercase())).collect();
    let room = usize::try_from(share.saturating_sub((probe.len() + placeholders.len() + 1) as u64)).unwrap_or(usize::MAX);
    let kept = floor_boundary(&c.text, room.min(c.text.len()));
    let head = c.text.get(..kept).unwrap_or("");
    (format!("{head}\n{placeholders}{}", marker(c, kept)), kept)
}

fn size_of(t: &Transcript, config: &Config, cal: f64, tools_bytes: u64, overhead: u64) -> RequestSize {
    // Sizes from the host (tools, overhead) may be anything up to u64::MAX: saturate.
    let bytes = (crate::output::encoded_len(t, View::Request) as u64).saturating_add(tools_bytes).saturating_add(overhead);
    let tokens: u64 = t
        .messages
        .iter()
        .fold(0u64, |acc, m| acc.saturating_add(message_tokens(m, config, cal)))
        .saturating_add(text_tokens(t.envelope.bytes(), config, cal))
        .saturating_add(crate::measure::bytes_tokens(tools_bytes, config, cal));
    RequestSize { bytes, forecast_tokens: tokens }
}

/// Bounds the open run's own results for one request (B-1..B-3). Call it after the
/// compaction check, with the transcript about to be sent. The input is not modified.
///
/// Returns the request copy, each shortened call (`keptBytes`, `wholeBytes`), the limit,
/// sizes before/after and whether it now fits. When something was shortened, the
/// `tool_results_bounded_for_request` event is set and, unless `compaction` is off, the
/// state records the fact like a refusal (`refusal: true`, `refusalSource:
/// "bounded_request"`), so the next whole-transcript check compacts once. Every tool
/// call and result id is kept.
///
/// Errors: only from the format adapter when a result body cannot be replaced
/// (`invalid_transcript`).
pub fn bound_request(t: &Transcript, config: &Config, state: &SessionState, opts: &BoundOptions) -> Result<Bounded> {
    let cal = state.calibration();
    let tools_bytes = opts.tools_bytes.unwrap_or_else(|| opts.tools.as_ref().map(|v| json_len(v) as u64).unwrap_or(0));
    let base = size_of(t, config, cal, tools_bytes, 0);
    let overhead = opts.request_bytes.map(|r| r.saturating_sub(base.bytes)).unwrap_or(0);
    let before = RequestSize { bytes: base.bytes.saturating_add(overhead), forecast_tokens: base.forecast_tokens };
    let cap = opts.max_request_bytes.or(config.max_request_bytes);
    let budget = opts.input_budget_tokens.unwrap_or_else(|| config.context_window.saturating_sub(config.output_reserve()));
    let over_bytes = cap.is_some_and(|c| before.bytes > c);
    let over_tokens = before.forecast_tokens > budget;
    let mut limit = RequestLimit { max_request_bytes: cap, input_budget_tokens: budget, over_bytes, over_tokens, share_bytes: None };
    let unchanged = |limit: RequestLimit| Bounded {
        request: t.clone(),
        bounded: Vec::new(),
        limit,
        before,
        after: before,
        fits: !over_bytes && !over_tokens,
        event: None,
        state: state.clone(),
    };
    if !over_bytes && !over_tokens {
        return Ok(unchanged(limit));
    }
    // The open run's own results.
    let from = head_end(&t.messages);
    let start = run_start(&t.messages, from).unwrap_or(from);
    let names = tool_names(&t.messages);
    let bpt = config.bytes_per_token.max(1);
    let mut cands: Vec<Candidate> = Vec::new();
    for (offset, m) in t.messages.iter().enumerate().skip(start) {
        let mut nth = 0;
        for b in &m.blocks {
            if let Block::ToolResult { call_id, name, text, media, media_bytes, .. } = b {
                let images = media.iter().filter(|k| **k == MediaKind::Image).count() as u64;
                let other_media = if media.iter().any(|k| *k != MediaKind::Image) { (*media_bytes as u64).div_ceil(4) } else { 0 };
                // `imageTokens` may be as large as u64::MAX: saturate.
                let tokens = (((text.len() as u64).div_ceil(bpt) as f64 * cal).ceil() as u64).saturating_add(images.saturating_mul(config.image_tokens)).saturating_add(other_media);
                cands.push(Candidate {
                    offset,
                    nth,
                    call_id: call_id.clone(),
                    name: name.clone().or_else(|| names.get(call_id).cloned()),
                    text: text.clone(),
                    media: media.clone(),
                    whole_bytes: (text.len() + media_bytes) as u64,
                    token_size: tokens.saturating_mul(SHARE_BYTES_PER_TOKEN),
                });
                nth += 1;
            }
        }
    }
    if cands.is_empty() {
        return Ok(unchanged(limit));
    }
    let byte_sizes: Vec<u64> = cands.iter().map(|c| c.whole_bytes).collect();
    let token_sizes: Vec<u64> = cands.iter().map(|c| c.token_size).collect();
    let results_bytes: u64 = byte_sizes.iter().fold(0u64, |a, &b| a.saturating_add(b));
    let results_tokens: u64 = token_sizes.iter().fold(0u64, |a, &b| a.saturating_add(b)) / SHARE_BYTES_PER_TOKEN;
    // What the rest of the request takes, on each axis.
    let rest_bytes = before.bytes.saturating_sub(results_bytes);
    let rest_tokens = before.forecast_tokens.saturating_sub(results_tokens);
    let mut squeeze_bytes = 0u64;
    let mut squeeze_tokens = 0u64;
    let mut best: Option<(Transcript, Vec<BoundedCall>, RequestSize, u64)> = None;
    for _round in 0..8 {
        let share_b = match cap {
            Some(c) if over_bytes => water_fill(&byte_sizes, c.saturating_sub(rest_bytes).saturating_sub(squeeze_bytes)),
            _ => u64::MAX,
        };
        let share_t = if over_tokens {
            water_fill(&token_sizes, budget.saturating_sub(rest_tokens).saturating_sub(squeeze_tokens).saturating_mul(SHARE_BYTES_PER_TOKEN))
        } else {
            u64::MAX
        };
        let mut req = t.clone();
        let mut out = Vec::new();
        for c in &cands {
            let over_b = c.whole_bytes > share_b;
            let over_t = c.token_size > share_t;
            if !over_b && !over_t {
                continue;
            }
            let share = share_b.min(share_t);
            let (text, kept) = body(c, share);
            if let Some(m) = req.messages.get_mut(c.offset) {
                set_result_body_of(t.format, m, c.nth, &text, c.name.as_deref())?;
            }
            out.push(BoundedCall { call_id: c.call_id.clone(), name: c.name.clone(), offset: c.offset, kept_bytes: kept as u64, whole_bytes: c.whole_bytes, media_omitted: c.media.len() });
        }
        let after = size_of(&req, config, cal, tools_bytes, overhead);
        let share = share_b.min(share_t);
        let fits = cap.is_none_or(|c| after.bytes <= c) && after.forecast_tokens <= budget;
        let all_empty = out.len() == cands.len() && out.iter().all(|b| b.kept_bytes == 0);
        best = Some((req, out, after, share));
        if fits || all_empty {
            break;
        }
        // Escaping and markers cost more than the shares assumed: take the rest off.
        if let Some(c) = cap {
            squeeze_bytes = squeeze_bytes.saturating_add(after.bytes.saturating_sub(c).saturating_add(64));
        }
        squeeze_tokens = squeeze_tokens.saturating_add(after.forecast_tokens.saturating_sub(budget).saturating_add(16));
    }
    let Some((request, bounded, after, share)) = best else { return Ok(unchanged(limit)) };
    limit.share_bytes = (!bounded.is_empty()).then_some(share);
    let fits = cap.is_none_or(|c| after.bytes <= c) && after.forecast_tokens <= budget;
    let mut new_state = state.clone();
    let mut event = None;
    if !bounded.is_empty() {
        let run = t.messages.get(start).map(|m| m.id.clone());
        event = Some(Event {
            kind: "tool_results_bounded_for_request".into(),
            data: json!({ "run": run, "calls": bounded, "limit": limit }),
        });
        if opts.compaction {
            new_state.cadence.refusal = true;
            new_state.cadence.refusal_source = Some("bounded_request".into());
        }
    }
    Ok(Bounded { request, bounded, limit, before, after, fits, event, state: new_state })
}
