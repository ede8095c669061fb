//! The generic pairing validator (F-2, S-4), parameterised by each format's
//! [`PairingRules`].

use super::{ai_sdk, anthropic, canonical, gemini, openai_chat, openai_responses, Format};
use crate::error::{Error, ErrorCode, Result};
use crate::transcript::{Block, Message, Role, Transcript};

/// A format's pairing rules (F-2), checked by [`validate_pairing`].
#[derive(Debug, Clone, Copy)]
pub struct PairingRules {
    /// All results of one assistant message must sit in the single next message
    /// (Anthropic user message, Gemini user turn). Otherwise they sit in consecutive
    /// result-carrier messages right after it (OpenAI `tool` messages).
    pub results_in_one_message: bool,
    /// Results must come first in that message (Anthropic: tool_result blocks first).
    pub results_first: bool,
    /// With `results_in_one_message`: that one message must answer every call of the
    /// calling message, even at the end of history (Gemini: a model turn with N
    /// `functionCall` parts is followed by one user turn with N `functionResponse`
    /// parts; a partial answer turn is rejected).
    pub exact_result_count: bool,
    /// Results are separate items that may sit anywhere after their call, with other
    /// items (reasoning, further calls) in between (OpenAI Responses: every
    /// `function_call_output` needs an earlier `function_call` with its `call_id`, and
    /// every `function_call` needs an output unless it ends the input).
    pub results_anywhere_after: bool,
}

impl Format {
    /// The format's pairing rules (F-2).
    pub fn rules(self) -> PairingRules {
        match self {
            Format::OpenaiChat => openai_chat::RULES,
            Format::Anthropic => anthropic::RULES,
            Format::Gemini => gemini::RULES,
            Format::OpenaiResponses => openai_responses::RULES,
            Format::AiSdk => ai_sdk::RULES,
            Format::Canonical => canonical::RULES,
        }
    }
}

/// Checks the provider's pairing rules (F-2, S-4) over a transcript:
/// every call is answered by results right after its message (per [`PairingRules`]),
/// every result answers a call of the message right before its run, no call id is
/// used twice by open calls. A call at the very end of history (the model's newest
/// turn, awaiting results) is allowed unanswered.
///
/// With `exact_result_count` (Gemini) a partial answer message is an error even at the
/// end of history. With `results_anywhere_after` (OpenAI Responses) results may come
/// any number of items after their call (see [`PairingRules`]). A `tool`-role message
/// without results (AI SDK `tool-approval-response`) does not end a run of result
/// messages.
///
/// Errors: `invalid_transcript` for an empty call id (issue 14), `unpaired_tool_result`, `unanswered_tool_call` or `duplicate_tool_call_id`
/// naming the message offset and the id.
pub fn validate_pairing(t: &Transcript) -> Result<()> {
    validate_rows(t.format.rules(), &t.messages, 0)
}

/// [`validate_pairing`] of a transcript whose rows before `first` were already valid
/// (a live transcript after an append, issue 14): only the rows from the start of the
/// exchange still open at `first` are checked, so the cost is that of the new rows and
/// the open exchange, not of the whole transcript. Same errors, offsets in the whole
/// transcript.
pub fn validate_pairing_from(t: &Transcript, first: usize) -> Result<()> {
    let msgs = &t.messages;
    let first = first.min(msgs.len());
    let rules = t.format.rules();
    let mut s = first;
    if rules.results_anywhere_after {
        // open calls of a valid prefix sit in its trailing run of tool items
        let is_tool_item = |m: &Message| m.has_calls() || m.has_results() || (!m.blocks.is_empty() && m.blocks.iter().all(|b| matches!(b, Block::Reasoning { .. })));
        while s > 0 && msgs.get(s - 1).is_some_and(is_tool_item) {
            s -= 1;
        }
    } else {
        // back over the result rows of the last exchange to the message calling them
        while s > 0 && msgs.get(s - 1).is_some_and(|m| (m.has_results() || (!rules.results_in_one_message && m.role == Role::Tool)) && !m.has_calls()) {
            s -= 1;
        }
        if s > 0 && msgs.get(s - 1).is_some_and(Message::has_calls) {
            s -= 1;
        }
    }
    validate_rows(rules, msgs.get(s..).unwrap_or(&[]), s)
}

/// The pairing rules over `msgs`, whose first row sits at offset `base`.
fn validate_rows(rules: PairingRules, msgs: &[Message], base: usize) -> Result<()> {
    // issue 14: an empty call id pairs with nothing a store or memory record can name;
    // refused here so `check` and `compact` agree in every format
    for (i, m) in msgs.iter().enumerate() {
        for b in &m.blocks {
            let empty = match b {
                Block::ToolCall { id, .. } => id.is_empty(),
                Block::ToolResult { call_id, .. } => call_id.is_empty(),
                _ => false,
            };
            if empty {
                return Err(Error::invalid(format!("message {i}: a tool call or result has an empty call id", i = base + i)));
            }
        }
    }
    if rules.results_anywhere_after {
        return validate_pairing_anywhere(msgs, base);
    }
    let mut i = 0;
    while i < msgs.len() {
        let m = &msgs[i];
        if m.has_calls() {
            let calls: Vec<&str> = m.call_ids().collect();
            for (k, c) in calls.iter().enumerate() {
                if calls[..k].contains(c) {
                    return Err(Error::new(ErrorCode::DuplicateToolCallId, format!("message {i}: tool call id {c:?} used twice in one message", i = base + i)));
                }
            }
            let mut pending: Vec<&str> = calls.clone();
            let mut j = i + 1;
            let continues_run = |m: &Message| m.has_results() || (!rules.results_in_one_message && m.role == Role::Tool);
            while j < msgs.len() && !pending.is_empty() && continues_run(&msgs[j]) {
                let r = &msgs[j];
                if rules.results_first {
                    let mut seen_other = false;
                    for b in &r.blocks {
                        match b {
                            Block::ToolResult { call_id, .. } if seen_other => {
                                return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {j}: tool result {call_id:?} must come before other content", j = base + j)));
                            }
                            Block::ToolResult { .. } => {}
                            _ => seen_other = true,
                        }
                    }
                }
                for rid in r.result_ids() {
                    match pending.iter().position(|p| *p == rid) {
                        Some(pos) => {
                            pending.remove(pos);
                        }
                        None => {
                            return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {j}: tool result {rid:?} does not answer a call of message {i}", j = base + j, i = base + i)));
                        }
                    }
                }
                j += 1;
                if rules.results_in_one_message {
                    break;
                }
            }
            if let Some(first) = pending.first() {
                if rules.exact_result_count && j > i + 1 {
                    return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {i}: makes {} tool calls but message {} answers {}; tool call {first:?} has no result", calls.len(), base + i + 1, calls.len() - pending.len(), i = base + i)));
                }
                if j < msgs.len() {
                    return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {i}: tool call {first:?} has no result before message {j}", i = base + i, j = base + j)));
                }
            }
            i = j.max(i + 1);
            continue;
        }
        if let Some(rid) = m.result_ids().next() {
            return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {i}: tool result {rid:?} does not follow a message calling it", i = base + i)));
        }
        i += 1;
    }
    Ok(())
}

/// [`validate_pairing`] for formats whose results are free-standing items that may sit
/// anywhere after their call (OpenAI Responses). A call left open is allowed only when
/// nothing but tool items (calls, results, reasoning) follows it: the newest step,
/// still awaiting its outputs.
fn validate_pairing_anywhere(msgs: &[Message], base: usize) -> Result<()> {
    let mut open: Vec<(&str, usize)> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        for rid in m.result_ids() {
            match open.iter().position(|(id, _)| *id == rid) {
                Some(pos) => {
                    open.remove(pos);
                }
                None => {
                    return Err(Error::new(ErrorCode::UnpairedToolResult, format!("message {i}: tool result {rid:?} answers no earlier call", i = base + i)));
                }
            }
        }
        for cid in m.call_ids() {
            if open.iter().any(|(id, _)| *id == cid) {
                return Err(Error::new(ErrorCode::DuplicateToolCallId, format!("message {i}: tool call id {cid:?} is already used by an unanswered call", i = base + i)));
            }
            open.push((cid, i));
        }
    }
    let is_tool_item = |m: &Message| {
        m.has_calls() || m.has_results() || (!m.blocks.is_empty() && m.blocks.iter().all(|b| matches!(b, Block::Reasoning { .. })))
    };
    for (cid, at) in open {
        if let Some((k, _)) = msgs.iter().enumerate().skip(at + 1).find(|(_, m)| !is_tool_item(m)) {
            return Err(Error::new(ErrorCode::UnansweredToolCall, format!("message {at}: tool call {cid:?} has no result before message {k}", at = base + at, k = base + k)));
        }
    }
    Ok(())
}
