//! Projection of discarded rows into memory records (M-1).

use super::{MemoryBatch, MemoryRecord, RecordKind};
use crate::error::{Error, ErrorCode, Result};
use crate::transcript::{Block, Fnv1a, Message, Role, TranscriptRole};
use serde::{Deserialize, Serialize};
use crate::sorted::{SortedMap, SortedSet};

/// Target size of one record's content in UTF-8 bytes. Chunks are cut on char
/// boundaries, preferably after a newline or a space in the second half of the window.
pub const CHUNK_BYTES: usize = 1_000;

/// Most UTF-8 bytes of a record's [`MemoryRecord::context`]: two parts of at most
/// [`CONTEXT_PART_BYTES`] each and the newline between them.
pub const CONTEXT_BYTES: usize = 2 * CONTEXT_PART_BYTES + 1;
/// Most UTF-8 bytes of one part of a context (cut on a char boundary).
pub const CONTEXT_PART_BYTES: usize = 300;

/// A tool-output body the compaction evicted (replaced by a handle or a clip).
///
/// JSON shape (camelCase): `{ offset, callId, toolName?, handle?, body }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictedBody {
    /// 0-based offset of the message that carried the result, in `messages`.
    pub offset: usize,
    /// The tool-call id the body answered.
    pub call_id: String,
    /// Tool name; when `None` it is looked up from the matching tool call.
    #[serde(default)]
    pub tool_name: Option<String>,
    /// Artifact handle (`artifact#N`) of the full body in the host store.
    #[serde(default)]
    pub handle: Option<String>,
    /// The full body text that left the transcript.
    pub body: String,
}

/// Projects the discarded rows of a compaction into memory records (M-1).
///
/// - `session`: the owning scope, copied into every record.
/// - `messages`: the transcript the compaction read (offsets index into it).
/// - `discarded`: offsets of the rows the rewrite dropped (any order, duplicates ok).
/// - `evicted_bodies`: tool-output bodies evicted from the folded range.
///
/// Records: the text blocks of discarded user and assistant messages (`narrative`,
/// also when the row carries tool results beside the text: that text keeps the row's
/// role), the arguments of every tool call on a discarded row (`tool_input`, with tool
/// name and call id, rendered by [`render_arguments`]), every evicted body
/// (`tool_output`, with tool name and handle), and the tool-result bodies of discarded
/// messages that no evicted body already covers (`tool_output`, handle = the
/// message's `artifact_ref`); each call the provider ran on an assistant row that has a
/// result gives one `tool_output` record ([`crate::hosted::hosted_calls`]: role tool, the
/// tool's name, `<server>.<tool>` for an MCP call, and its call id; a web search's one
/// `<title> (<url>)` line per result, an MCP call's output or `mcp call failed:
/// <error>`, a code run's output; the query as context), and an Anthropic row's
/// citations are lines of its narrative record (`[cited: "<passage>" from <title> (<url>)]`,
/// [`crate::hosted::server_search`]). Every record lists the paths and identifiers it mentions
/// ([`super::mentions()`]). Messages that are injected context or
/// compaction summaries (typed role, or any `summary_level`) are never projected, nor
/// are evicted bodies sitting on them. Texts are cut into chunks of at most
/// [`CHUNK_BYTES`] bytes; blank chunks are dropped. Offsets outside `messages` are
/// skipped (use [`try_project`] to have them rejected). Output is deterministic.
pub fn project(
    session: &str,
    messages: &[Message],
    discarded: &[usize],
    evicted_bodies: &[EvictedBody],
) -> MemoryBatch {
    build(session, messages, discarded, evicted_bodies)
}

/// Like [`project`], but fails with `memory_failed` when a discarded offset or an
/// evicted body's offset is outside `messages`, or an evicted body's call id is empty,
/// so the caller can fail the compaction (M-1, W-3).
pub fn try_project(
    session: &str,
    messages: &[Message],
    discarded: &[usize],
    evicted_bodies: &[EvictedBody],
) -> Result<MemoryBatch> {
    check_inputs(messages.len(), discarded, evicted_bodies)?;
    Ok(build(session, messages, discarded, evicted_bodies))
}

/// `memory_failed` when a discarded offset or an evicted body's offset is outside a
/// transcript of `n` messages, or an evicted body's call id is empty.
fn check_inputs(n: usize, discarded: &[usize], evicted_bodies: &[EvictedBody]) -> Result<()> {
    if let Some(off) = discarded.iter().find(|&&o| o >= n) {
        return Err(Error::new(
            ErrorCode::MemoryFailed,
            format!("discarded offset {off} is outside the transcript of {n} messages"),
        ));
    }
    for (i, b) in evicted_bodies.iter().enumerate() {
        if b.offset >= n {
            return Err(Error::new(
                ErrorCode::MemoryFailed,
                format!("evictedBodies[{i}].offset {} is outside the transcript of {n} messages", b.offset),
            ));
        }
        if b.call_id.is_empty() {
            return Err(Error::new(ErrorCode::MemoryFailed, format!("evictedBodies[{i}].callId is empty")));
        }
    }
    Ok(())
}

fn excluded(m: &Message) -> bool {
    // a summary mark the state does not vouch for does not exclude the row (issue 14, crate::trust)
    m.is_summary() || m.provenance.transcript_role == TranscriptRole::InjectedContext
}

struct Source<'a> {
    session: &'a str,
    message: &'a Message,
    offset: usize,
    kind: RecordKind,
    tool_name: Option<String>,
    call_id: Option<String>,
    handle: Option<String>,
    /// Mentions the record inherits from its context: a tool output lists the paths and
    /// identifiers of the call it answers (after its own).
    context_mentions: &'a [String],
    /// What led to the record ([`MemoryRecord::context`]).
    context: Option<String>,
}

/// What a tool call tells the records of its result: the tool name and the mentions of
/// its arguments.
struct CallInfo {
    name: String,
    mentions: Vec<String>,
    /// The argument values, one a line, at most [`CONTEXT_PART_BYTES`] (None when blank).
    arguments: Option<String>,
    /// The text of the row that made the call (what the agent said it was doing), at
    /// most [`CONTEXT_PART_BYTES`] (None when blank).
    intent: Option<String>,
}

/// Call id -> tool name and argument mentions, from the tool calls of the transcript
/// (first wins) whose id is in `wanted`: the calls the records read (those of the
/// discarded rows, of their results and of the evicted bodies). A call no record reads
/// is not rendered (its arguments parsed, its mentions found) at all.
fn tool_names(messages: &[Message], wanted: &SortedSet<&str>) -> SortedMap<String, CallInfo> {
    let mut names: SortedMap<String, CallInfo> = SortedMap::new();
    if wanted.iter().next().is_none() {
        return names;
    }
    for m in messages {
        let mut intent: Option<Option<String>> = None;
        for b in &m.blocks {
            if let Block::ToolCall { id, name, arguments } = b {
                if wanted.contains(id.as_str()) && names.get(id.as_str()).is_none() {
                    let rendered = render_arguments(arguments);
                    let intent = intent.get_or_insert_with(|| clip_context(&m.text())).clone();
                    names.get_or_insert_with(id.clone(), || CallInfo {
                        name: name.clone(),
                        mentions: super::mentions(&rendered),
                        arguments: clip_context(&argument_values(arguments)),
                        intent,
                    });
                }
            }
        }
    }
    names
}

/// What a call's arguments say, for its result's context: the values of a JSON object
/// one a line (strings as written, others as compact JSON; the key names are the
/// tool's vocabulary, not what was asked), anything else as written.
fn argument_values(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => map
            .into_iter()
            .map(|(_, v)| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => arguments.to_string(),
    }
}

/// `text` trimmed and cut to at most [`CONTEXT_PART_BYTES`] on a char boundary; None
/// when blank.
fn clip_context(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let cut = floor_boundary(t, CONTEXT_PART_BYTES);
    t.get(..cut).map(|c| c.trim_end().to_string()).filter(|c| !c.is_empty())
}

/// Two context parts joined by a newline; either alone when the other is absent.
fn join_context(first: Option<&str>, second: Option<&str>) -> Option<String> {
    match (first, second) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (Some(a), None) | (None, Some(a)) => Some(a.to_string()),
        (None, None) => None,
    }
}

/// Offset and clipped text of every user row holding text the person may have written
/// (not injected context, not a summary), in offset order.
fn user_texts(messages: &[Message]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role != Role::User || excluded(m) {
            continue;
        }
        if let Some(t) = clip_context(&m.text()) {
            out.push((i, t));
        }
    }
    out
}

/// The narrative text of a discarded row with each media part named on its own line
/// (issue 12, item 6: an image folded with its row is named in memory, as the summary
/// names it with a placeholder): `[image attached: N bytes inline]` or
/// `[document attached: N bytes, by reference]`, N the UTF-8 bytes of the inline data or
/// of the reference, then `: <name>` when the part is named (its URL, file id, file name,
/// title: [`Block::Media`]'s `name`), so recall by that string finds the row (M-1); a user
/// row naming its author ([`Message::speaker`]) ends `[written by <name>]`.
fn with_media_names(m: &Message) -> String {
    let mut text = m.text();
    for b in &m.blocks {
        if let Block::Media { kind, bytes, inline, name } = b {
            let kind = match kind {
                crate::transcript::MediaKind::Image => "image",
                crate::transcript::MediaKind::Video => "video",
                crate::transcript::MediaKind::Audio => "audio",
                crate::transcript::MediaKind::Document => "document",
            };
            if !text.is_empty() {
                text.push('\n');
            }
            let how = if *inline { " inline" } else { ", by reference" };
            match name {
                Some(n) => text.push_str(&format!("[{kind} attached: {bytes} bytes{how}: {n}]")),
                None => text.push_str(&format!("[{kind} attached: {bytes} bytes{how}]")),
            }
        }
    }
    if m.role == Role::User {
        // who wrote it, when the row names its author (multi-user chats)
        if let Some(n) = m.speaker() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("[written by {n}]"));
        }
    }
    if m.provenance.provider_compaction {
        // Y-10: a superseded provider compaction item folds; its record names it (its
        // content is encrypted for the provider, so its id is what can be recalled)
        let id = serde_json::from_str::<serde_json::Value>(m.raw.get()).ok().and_then(|v| v.get("id").and_then(serde_json::Value::as_str).map(str::to_string));
        if !text.is_empty() {
            text.push('\n');
        }
        match id {
            Some(id) => text.push_str(&format!("[provider compaction item {id}: {} bytes, encrypted; superseded by a newer one]", m.bytes)),
            None => text.push_str(&format!("[provider compaction item: {} bytes, encrypted; superseded by a newer one]", m.bytes)),
        }
    }
    text
}

/// The provider-run tool results and the citation lines of an assistant row (M-1): every
/// provider-run call of the row that has a result text ([`crate::hosted::hosted_calls`]:
/// an Anthropic server tool's or MCP connector's result, `<server>.<tool>` for an MCP
/// call, a Responses hosted item's output, a Gemini code run, an AI SDK
/// provider-executed tool; a failure as `<tool> failed: <error>`), and the citation lines
/// of an Anthropic row's text ([`crate::hosted::server_search`]; its JSON is parsed for
/// them only when it holds a `cited_text`).
fn server_searches(m: &Message) -> (Vec<crate::hosted::ServerSearch>, Vec<String>) {
    let calls = crate::hosted::hosted_calls(m).into_iter().filter(|c| c.outcome != crate::hosted::HostedOutcome::NoResult && !c.text.is_empty());
    let searches = calls.map(crate::hosted::ServerSearch::from).collect();
    if m.role != Role::Assistant || !m.raw.get().contains("\"cited_text\"") {
        return (searches, Vec::new());
    }
    match serde_json::from_str::<serde_json::Value>(m.raw.get()) {
        Ok(v) => (searches, crate::hosted::server_search(&v).1),
        Err(_) => (searches, Vec::new()),
    }
}

/// What every row's records are read against.
struct Context<'a> {
    session: &'a str,
    names: SortedMap<String, CallInfo>,
    evicted_calls: SortedSet<&'a str>,
    /// [`user_texts`] of the transcript.
    users: Vec<(usize, String)>,
}

impl Context<'_> {
    fn name_of(&self, call_id: &str) -> Option<String> {
        self.names.get(call_id).map(|c| c.name.clone())
    }

    fn call_mentions(&self, call_id: &str) -> &[String] {
        self.names.get(call_id).map_or(&[], |c| c.mentions.as_slice())
    }

    /// A result's context: what the agent said on the row of its call, then the call's
    /// argument values.
    fn result_context(&self, call_id: &str) -> Option<String> {
        let c = self.names.get(call_id)?;
        join_context(c.intent.as_deref(), c.arguments.as_deref())
    }

    /// The newest user text on a row before `offset`.
    fn user_before(&self, offset: usize) -> Option<&str> {
        let i = self.users.partition_point(|(o, _)| *o < offset);
        i.checked_sub(1).and_then(|j| self.users.get(j)).map(|(_, t)| t.as_str())
    }

    /// The records of discarded row `m` at `offset`: its narrative text, and its tool
    /// results that no evicted body covers.
    fn row(&self, out: &mut Vec<MemoryRecord>, m: &Message, offset: usize) {
        if excluded(m) {
            return;
        }
        let (searches, citations) = server_searches(m);
        if matches!(m.role, Role::User | Role::Assistant) {
            let mut text = with_media_names(m);
            // the passages its text cites, with their source (Anthropic citations)
            for c in &citations {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(c);
            }
            // assistant text: the request it answers
            let context = if m.role == Role::Assistant { self.user_before(offset).map(str::to_string) } else { None };
            let src = Source { session: self.session, message: m, offset, kind: RecordKind::Narrative, tool_name: None, call_id: None, handle: None, context_mentions: &[], context };
            push_chunks(out, &src, &text);
        }
        // a server tool's results sit in the assistant row that called it: records of
        // role tool, as a client tool's results would be
        for s in searches {
            let context = join_context(s.query.as_deref().map(|q| format!("{}: {q}", s.tool)).as_deref(), self.user_before(offset));
            let src = Source { session: self.session, message: m, offset, kind: RecordKind::ToolOutput, tool_name: Some(s.tool), call_id: Some(s.call_id), handle: None, context_mentions: &[], context };
            let start = out.len();
            push_chunks(out, &src, &s.text);
            for r in out.get_mut(start..).into_iter().flatten() {
                r.role = Role::Tool;
            }
        }
        for b in &m.blocks {
            if let Block::ToolCall { id, name, arguments } = b {
                let src = Source {
                    session: self.session,
                    message: m,
                    offset,
                    kind: RecordKind::ToolInput,
                    tool_name: Some(name.clone()),
                    call_id: Some(id.clone()),
                    handle: None,
                    context_mentions: &[],
                    // a call: what the agent said on its row, then the request that led to it
                    context: join_context(self.names.get(id.as_str()).and_then(|c| c.intent.as_deref()), self.user_before(offset)),
                };
                push_chunks(out, &src, &render_arguments(arguments));
            }
            if let Block::ToolResult { call_id, name, text, .. } = b {
                if self.evicted_calls.contains(call_id.as_str()) {
                    continue;
                }
                let src = Source {
                    session: self.session,
                    message: m,
                    offset,
                    kind: RecordKind::ToolOutput,
                    tool_name: name.clone().or_else(|| self.name_of(call_id)),
                    call_id: Some(call_id.clone()),
                    // issue 14: only a handle the trust pass vouched for
                    handle: m.provenance.trusted_ref().map(str::to_string),
                    context_mentions: self.call_mentions(call_id),
                    // a result: the call it answers
                    context: self.result_context(call_id),
                };
                push_chunks(out, &src, text);
            }
        }
    }

    /// The records of evicted body `b`, which sat on message `m`.
    fn body(&self, out: &mut Vec<MemoryRecord>, m: &Message, b: &EvictedBody) {
        if excluded(m) {
            return;
        }
        let src = Source {
            session: self.session,
            message: m,
            offset: b.offset,
            kind: RecordKind::ToolOutput,
            tool_name: b.tool_name.clone().or_else(|| self.name_of(&b.call_id)),
            call_id: Some(b.call_id.clone()),
            handle: b.handle.clone(),
            context_mentions: self.call_mentions(&b.call_id),
            context: self.result_context(&b.call_id),
        };
        push_chunks(out, &src, &b.body);
    }

    fn finish(&self, mut records: Vec<MemoryRecord>) -> MemoryBatch {
        crate::sorted::sort_by(&mut records, |a, b| {
            (a.source_range, a.kind, &a.call_id, a.byte_range, &a.id)
                .cmp(&(b.source_range, b.kind, &b.call_id, b.byte_range, &b.id))
        });
        records.dedup_by(|a, b| a.id == b.id);
        MemoryBatch { session: self.session.to_string(), records }
    }
}

fn context<'a>(session: &'a str, messages: &[Message], offsets: &SortedSet<usize>, evicted_bodies: &'a [EvictedBody]) -> Context<'a> {
    // the call ids a record can look up: the calls and results of the discarded rows
    // (`Context::row`) and the calls of the evicted bodies (`Context::body`)
    let named = offsets.iter().filter_map(|&o| messages.get(o)).filter(|m| !excluded(m)).flat_map(|m| m.blocks.iter()).filter_map(|b| match b {
        Block::ToolCall { id, .. } => Some(id.as_str()),
        Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
        _ => None,
    });
    let wanted: SortedSet<&str> = evicted_bodies.iter().map(|b| b.call_id.as_str()).chain(named).collect();
    Context {
        session,
        names: tool_names(messages, &wanted),
        evicted_calls: evicted_bodies.iter().map(|b| b.call_id.as_str()).collect(),
        users: user_texts(messages),
    }
}

fn build(session: &str, messages: &[Message], discarded: &[usize], evicted_bodies: &[EvictedBody]) -> MemoryBatch {
    let offsets: SortedSet<usize> = discarded.iter().copied().collect();
    let cx = context(session, messages, &offsets, evicted_bodies);
    build_in(&cx, messages, &offsets, evicted_bodies)
}

/// The records of the rows at `offsets` and of `evicted_bodies`, read against `cx`.
fn build_in(cx: &Context<'_>, messages: &[Message], offsets: &SortedSet<usize>, evicted_bodies: &[EvictedBody]) -> MemoryBatch {
    // most rows make one record: sized for that, so the list rarely regrows
    let mut records: Vec<MemoryRecord> = Vec::with_capacity(offsets.iter().count() + evicted_bodies.len());
    for &offset in offsets.iter() {
        if let Some(m) = messages.get(offset) {
            cx.row(&mut records, m, offset);
        }
    }
    for b in evicted_bodies {
        if let Some(m) = messages.get(b.offset) {
            cx.body(&mut records, m, b);
        }
    }
    cx.finish(records)
}

/// The `instruction` records (N-6) of the injected-context rows at `offsets` of
/// `messages`: each row's text in chunks of at most [`CHUNK_BYTES`], mentioning the
/// row's message id first (the handle a summary names a document it does not
/// re-attach by), then the paths and identifiers the chunk holds. The engine passes the
/// folded rows whose document the summary does not re-attach whole; other injected
/// context stays unindexed (M-1). Rows that are not injected context, summaries and
/// offsets outside `messages` are skipped. Output is deterministic, in offset order.
pub fn instruction_records(session: &str, messages: &[Message], offsets: &[usize]) -> Vec<MemoryRecord> {
    let offsets: SortedSet<usize> = offsets.iter().copied().collect();
    let mut out = Vec::new();
    for &offset in offsets.iter() {
        let Some(m) = messages.get(offset) else { continue };
        if m.is_summary() || m.provenance.transcript_role != TranscriptRole::InjectedContext {
            continue;
        }
        let id = [m.id.clone()];
        let src = Source { session, message: m, offset, kind: RecordKind::Instruction, tool_name: None, call_id: None, handle: None, context_mentions: &id, context: Some(format!("instruction document, message {}", m.id)) };
        let start = out.len();
        push_chunks(&mut out, &src, &m.text());
        for r in out.get_mut(start..).into_iter().flatten() {
            // the handle first, then what the chunk names
            r.mentions.retain(|x| *x != m.id);
            r.mentions.insert(0, m.id.clone());
            r.mentions.truncate(super::MAX_MENTIONS.max(1));
        }
    }
    out
}

/// [`try_project`] that takes the rows out of `messages` (leaving it empty) and frees each
/// one as soon as its records are built, so the records never sit beside a second full
/// copy of the folded range (peak memory). The batch is the one [`try_project`] builds.
/// For a caller that no longer needs the rows once the batch exists: the engine, when no
/// host step can still fail the commit (W-3). Errors: as [`try_project`], before any row
/// is touched (`messages` is then left as it was).
pub fn try_project_consuming(
    session: &str,
    messages: &mut Vec<Message>,
    discarded: &[usize],
    evicted_bodies: &[EvictedBody],
) -> Result<MemoryBatch> {
    check_inputs(messages.len(), discarded, evicted_bodies)?;
    let offsets: SortedSet<usize> = discarded.iter().copied().collect();
    let cx = context(session, messages, &offsets, evicted_bodies);
    // evicted bodies by the row they sat on, so each row's are built before it is freed
    let mut by_row: Vec<(usize, usize)> = evicted_bodies.iter().enumerate().map(|(i, b)| (b.offset, i)).collect();
    crate::sorted::sort_by(&mut by_row, |a, b| a.cmp(b));
    let mut bodies = by_row.into_iter().peekable();
    let mut records: Vec<MemoryRecord> = Vec::with_capacity(discarded.len() + evicted_bodies.len());
    for (offset, m) in std::mem::take(messages).into_iter().enumerate() {
        if offsets.contains(&offset) {
            cx.row(&mut records, &m, offset);
        }
        while let Some((_, i)) = bodies.next_if(|(o, _)| *o == offset) {
            if let Some(b) = evicted_bodies.get(i) {
                cx.body(&mut records, &m, b);
            }
        }
        // `m` is freed here, before the next row's records are built
    }
    Ok(cx.finish(records))
}

/// The records of [`try_project`] that hold what a person wrote: the `narrative` records
/// of the discarded user rows (N-1: with no memory hook these are the one whole copy of
/// the folded user text, returned in the result). Equal to [`try_project`]'s batch with
/// every record but `role == User && kind == Narrative` removed, without reading any tool
/// call, tool result or evicted body. With `consume`, the rows are taken out of
/// `messages` (leaving it empty) and each is freed once its records exist, as
/// [`try_project_consuming`] does. Errors: `memory_failed` for a discarded offset outside
/// `messages` (then `messages` is left as it was).
pub fn try_project_user_text(session: &str, messages: &mut Vec<Message>, discarded: &[usize], consume: bool) -> Result<MemoryBatch> {
    check_inputs(messages.len(), discarded, &[])?;
    let cx = Context { session, names: SortedMap::new(), evicted_calls: SortedSet::new(), users: Vec::new() };
    let offsets: SortedSet<usize> = discarded.iter().copied().collect();
    let mut records: Vec<MemoryRecord> = Vec::with_capacity(discarded.len());
    let user_row = |records: &mut Vec<MemoryRecord>, m: &Message, offset: usize| {
        if m.role == Role::User && !excluded(m) {
            // what `Context::row` builds for a user row's text: no context, no call
            let src = Source { session, message: m, offset, kind: RecordKind::Narrative, tool_name: None, call_id: None, handle: None, context_mentions: &[], context: None };
            push_chunks(records, &src, &with_media_names(m));
        }
    };
    if consume {
        for (offset, m) in std::mem::take(messages).into_iter().enumerate() {
            if offsets.contains(&offset) {
                user_row(&mut records, &m, offset);
            }
        }
    } else {
        for &offset in offsets.iter() {
            if let Some(m) = messages.get(offset) {
                user_row(&mut records, m, offset);
            }
        }
    }
    Ok(cx.finish(records))
}

/// The text a tool call's arguments are recorded as (M-1): a JSON object gives one line
/// per top-level argument in the order written, `key: value`, a string value as is
/// (unquoted, unescaped) and any other value as compact JSON; anything else (an array,
/// a scalar, text that is not JSON) is kept as written. `{}` and blank text give "".
pub fn render_arguments(arguments: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(serde_json::Value::Object(map)) => {
            let mut out = String::new();
            for (k, v) in map {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&k);
                out.push_str(": ");
                match v {
                    serde_json::Value::String(s) => out.push_str(&s),
                    other => out.push_str(&other.to_string()),
                }
            }
            out
        }
        _ => arguments.to_string(),
    }
}

fn push_chunks(out: &mut Vec<MemoryRecord>, src: &Source<'_>, text: &str) {
    for (start, end) in chunk_ranges(text, CHUNK_BYTES) {
        let Some(content) = text.get(start..end) else { continue };
        let id = record_id(src, start, content);
        out.push(MemoryRecord {
            id,
            session: src.session.to_string(),
            message_id: src.message.id.clone(),
            role: src.message.role,
            source_range: [src.offset, src.offset],
            byte_range: [start, end],
            kind: src.kind,
            tool_name: src.tool_name.clone(),
            call_id: src.call_id.clone(),
            handle: src.handle.clone(),
            mentions: with_context(super::mentions(content), src.context_mentions),
            context: src.context.clone(),
            content: content.to_string(),
        });
    }
}

/// `own` then the context mentions it lacks, at most [`super::MAX_MENTIONS`].
fn with_context(mut own: Vec<String>, context: &[String]) -> Vec<String> {
    for m in context {
        if own.len() >= super::MAX_MENTIONS {
            break;
        }
        if !own.contains(m) {
            own.push(m.clone());
        }
    }
    own
}

fn record_id(src: &Source<'_>, start: usize, content: &str) -> String {
    // the hash of `session \0 kind \0 message id \0 offset \0 call id \0 start \0 content`
    let kind = match src.kind {
        RecordKind::Narrative => "narrative",
        RecordKind::ToolOutput => "tool_output",
        RecordKind::ToolInput => "tool_input",
        RecordKind::Instruction => "instruction",
    };
    let (offset, start) = (src.offset.to_string(), start.to_string());
    let parts = [src.session, kind, &src.message.id, &offset, src.call_id.as_deref().unwrap_or(""), &start];
    let mut h = Fnv1a::new();
    for p in parts {
        h = h.write(p.as_bytes()).write(b"\0");
    }
    format!("mem-{:016x}", h.write(content.as_bytes()).finish())
}

/// Largest char boundary `<= i` in `s` (0 when none).
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Smallest char boundary `> i` in `s` (`s.len()` when none).
fn next_boundary(s: &str, i: usize) -> usize {
    let mut j = i.saturating_add(1);
    while j < s.len() && !s.is_char_boundary(j) {
        j += 1;
    }
    j.min(s.len())
}

/// Cuts `text` into half-open byte ranges of at most `max` bytes (a single char wider
/// than `max` still makes one chunk), on char boundaries, preferring a cut after a
/// newline, then after a space, in the second half of the window (the newline or space
/// ends the chunk before the cut). The ranges tile the text: each starts where the one
/// before it ends, the first at 0 and the last at `text.len()`, so the records'
/// contents concatenate back to the text byte for byte, its white space included
/// (adversarial finding, session 5: trimmed chunks lost the white space at their
/// edges). A text of white space only has no ranges.
pub(crate) fn chunk_ranges(text: &str, max: usize) -> Vec<(usize, usize)> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let max = max.max(1);
    let mut out = Vec::new();
    let mut start = 0usize;
    while start < text.len() {
        let remaining = text.len() - start;
        let end = if remaining <= max {
            text.len()
        } else {
            let hard = floor_boundary(text, start.saturating_add(max));
            let hard = if hard <= start { next_boundary(text, start) } else { hard };
            let window = text.get(start..hard).unwrap_or("");
            let half = window.len() / 2;
            let soft = window
                .rfind('\n')
                .filter(|&p| p >= half)
                .or_else(|| window.rfind(' ').filter(|&p| p >= half))
                .map(|p| start + p + 1);
            soft.unwrap_or(hard)
        };
        if end > start {
            out.push((start, end));
        }
        if end <= start {
            break;
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The projection as it was before issue 15's pass: every call of the transcript
    /// rendered into the call table (the test oracle of the table read for what is named).
    fn build_reading_every_call(session: &str, messages: &[Message], discarded: &[usize], evicted_bodies: &[EvictedBody]) -> MemoryBatch {
        let every: SortedSet<&str> = messages.iter().flat_map(|m| m.blocks.iter()).filter_map(|b| if let Block::ToolCall { id, .. } = b { Some(id.as_str()) } else { None }).collect();
        let cx = Context { session, names: tool_names(messages, &every), evicted_calls: evicted_bodies.iter().map(|b| b.call_id.as_str()).collect(), users: user_texts(messages) };
        build_in(&cx, messages, &discarded.iter().copied().collect(), evicted_bodies)
    }

    /// Every shared transcript (`../shared/transcripts`), decoded; empty when absent.
    #[cfg(not(feature = "lite"))]
    fn shared() -> Vec<(String, Vec<Message>)> {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let Ok(rd) = std::fs::read_dir(dir) else { return };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if !p.to_string_lossy().ends_with(".md") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/transcripts"), &mut files);
        files.sort();
        let mut out = Vec::new();
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let Some(kind) = crate::formats::import::sniff(&text) else { continue };
            let Ok((format, doc)) = crate::formats::import::import(kind, &text) else { continue };
            if let Ok(t) = crate::formats::decode(format, doc) {
                out.push((path.to_string_lossy().to_string(), t.messages));
            }
        }
        out
    }

    /// Discarded sets and evicted bodies to project a transcript with: every row, every
    /// third row, the second half, the first row only; bodies for every other tool
    /// result of the discarded rows (their calls then read through the body).
    fn cases(messages: &[Message]) -> Vec<(Vec<usize>, Vec<EvictedBody>)> {
        let n = messages.len();
        let sets: Vec<Vec<usize>> = vec![(0..n).collect(), (0..n).step_by(3).collect(), (n / 2..n).collect(), vec![0]];
        sets.into_iter()
            .map(|d| {
                let mut bodies = Vec::new();
                for (k, &o) in d.iter().enumerate() {
                    for b in messages.get(o).map_or(&[][..], |m| &m.blocks[..]) {
                        if let Block::ToolResult { call_id, text, .. } = b {
                            if k % 2 == 0 {
                                bodies.push(EvictedBody { offset: o, call_id: call_id.clone(), tool_name: None, handle: Some(format!("artifact#{k}")), body: text.clone() });
                            }
                        }
                    }
                }
                (d, bodies)
            })
            .collect()
    }

    /// Issue 15, M-1: the call table read only for the calls a record names gives the
    /// records of the table of every call, on every shared transcript.
    #[cfg(not(feature = "lite"))]
    #[test]
    fn issue15_m1_projection_reading_only_the_named_calls_equals_reading_every_call() {
        let mut tried = 0;
        for (name, messages) in shared() {
            for (discarded, bodies) in cases(&messages) {
                let want = build_reading_every_call("s", &messages, &discarded, &bodies);
                assert_eq!(build("s", &messages, &discarded, &bodies), want, "{name}");
                let mut rows = messages.clone();
                assert_eq!(try_project_consuming("s", &mut rows, &discarded, &bodies).expect("projects"), want, "{name}");
                tried += 1;
            }
        }
        assert!(tried > 0 || std::env::var("CI").as_deref() != Ok("true"), "no shared transcripts in CI");
    }

    /// Issue 15, N-1: the user-text projection (no memory hook) is the full projection's
    /// user narrative records, consuming the rows or not, on every shared transcript and
    /// on rows a user role carries besides text (tool results, media, a summary, injected
    /// context).
    #[cfg(not(feature = "lite"))]
    #[test]
    fn issue15_n1_user_text_projection_equals_the_full_projections_user_narrative() {
        let mut all = shared();
        let odd: serde_json::Value = serde_json::json!({ "messages": [
            { "role": "user", "content": [{ "type": "text", "text": "first part names src/a_b.py" }, { "type": "tool_result", "tool_use_id": "t1", "content": "result text" }, { "type": "text", "text": "second part" }] },
            { "role": "user", "content": [{ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "aGVsbG8=" } }, { "type": "text", "text": "see the picture, getUser" }] },
            { "role": "assistant", "content": [{ "type": "text", "text": "ok" }] },
            { "role": "user", "content": format!("{} end", "long words ".repeat(300)) }
        ]});
        if let Ok(t) = crate::formats::decode(crate::format::Format::Anthropic, odd) {
            all.push(("odd".into(), t.messages));
        }
        assert!(all.iter().any(|(n, _)| n == "odd"), "the odd rows decode");
        for (name, mut messages) in all {
            // a summary or injected context of user role is never projected
            let mut users = messages.iter_mut().filter(|m| m.role == Role::User);
            if let Some(m) = users.next() {
                m.provenance.summary_level = Some(1);
            }
            if let Some(m) = users.next() {
                m.provenance.transcript_role = TranscriptRole::InjectedContext;
            }
            for (discarded, bodies) in cases(&messages) {
                let mut want = build("s", &messages, &discarded, &bodies);
                want.records.retain(|r| r.role == Role::User && r.kind == RecordKind::Narrative);
                let mut rows = messages.clone();
                assert_eq!(try_project_user_text("s", &mut rows, &discarded, false).expect("projects"), want, "{name}");
                assert_eq!(rows, messages, "{name}: not consumed");
                assert_eq!(try_project_user_text("s", &mut rows, &discarded, true).expect("projects"), want, "{name}");
                assert!(rows.is_empty(), "{name}: consumed");
            }
        }
        let mut rows = vec![];
        assert_eq!(try_project_user_text("s", &mut rows, &[3], true).err().map(|e| e.code), Some(ErrorCode::MemoryFailed));
    }

    #[test]
    fn chunks_respect_char_boundaries_and_size() {
        let text = "é".repeat(1_500) + " tail";
        let ranges = chunk_ranges(&text, CHUNK_BYTES);
        assert!(ranges.len() >= 3);
        let mut covered = 0;
        for (s, e) in &ranges {
            assert!(text.is_char_boundary(*s) && text.is_char_boundary(*e));
            assert!(e - s <= CHUNK_BYTES);
            covered += e - s;
        }
        assert_eq!(covered, text.len(), "the chunks tile the text");
    }

    #[test]
    fn n1_m1_chunks_concatenate_back_to_the_exact_text() {
        // adversarial finding (session 5): chunks were trimmed, so a pasted block cut into
        // chunks could not be rebuilt from its records byte for byte
        let para = "The export runs nightly.  Keep the header order.\n\n";
        let texts = [
            para.repeat(60),
            format!("  leading and trailing  {}\n \n", "word ".repeat(400)),
            format!("{}\n{}", "a".repeat(999), "b".repeat(1500)),
            format!("{}{}{}", "x".repeat(500), " ".repeat(2500), "y".repeat(10)),
            "日本語のテキスト、改行あり。\n".repeat(80),
            format!("é{}", "\u{3000}ü ".repeat(700)),
            "\t\tindented\r\n".repeat(120),
        ];
        for text in &texts {
            for max in [CHUNK_BYTES, 7, 3, 1] {
                let ranges = chunk_ranges(text, max);
                let rebuilt: String = ranges.iter().map(|&(s, e)| &text[s..e]).collect();
                assert_eq!(&rebuilt, text, "max {max}");
                assert_eq!(ranges.first().map(|r| r.0), Some(0));
                for w in ranges.windows(2) {
                    assert_eq!(w[0].1, w[1].0, "contiguous");
                }
                for &(s, e) in &ranges {
                    assert!(text.is_char_boundary(s) && text.is_char_boundary(e) && e > s);
                    assert!(e - s <= max || text[s..e].chars().count() == 1, "max {max}: {} bytes", e - s);
                }
            }
        }
    }

    #[test]
    fn chunk_prefers_newline() {
        let text = format!("{}\n{}", "a".repeat(700), "b".repeat(700));
        let ranges = chunk_ranges(&text, CHUNK_BYTES);
        assert_eq!(ranges, vec![(0, 701), (701, 1401)], "the newline ends the first chunk");
    }

    #[test]
    fn tiny_max_still_progresses() {
        assert_eq!(chunk_ranges("日本", 1), vec![(0, 3), (3, 6)]);
        assert!(chunk_ranges("   \n  ", 10).is_empty());
    }
}
