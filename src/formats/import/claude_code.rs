//! Claude Code logs (stream-json and session logs) -> Anthropic (F-1, N-2). The rules
//! are listed on [`super::ImportKind::ClaudeCodeJsonl`]; LOG-FORMATS 1a / 1b describe
//! the rows.

use super::repair::{self, Row};
use super::{read_jsonl, ImportOptions, Output, Subagent, SubagentMode, Warnings};
use crate::error::{Error, Result};
use crate::formats::{normalize_usage, Format, Usage};
use serde_json::{json, Map, Value};

/// Tags whose text is written by the harness, not typed by the person (LOG-FORMATS 1a
/// "Injected").
const INJECTED_TAGS: [&str; 10] = [
    "<system-reminder>",
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<ide_opened_file>",
];

/// Row types that are bookkeeping, not conversation (skipped without a warning).
const BOOKKEEPING: [&str; 11] = [
    "result",
    "summary",
    "progress",
    "file-history-snapshot",
    "queue-operation",
    "custom-title",
    "ai-title",
    "stream_event",
    "tool_progress",
    "auth_status",
    "last-prompt",
];

/// The text a Claude Code compaction summary starts with (stream-json carries no
/// `isCompactSummary` flag).
const SUMMARY_OPENING: &str = "This session is being continued from a previous conversation";

enum Item {
    Results(Vec<Value>),
    Conv(Vec<Value>),
    Injected(Vec<Value>),
}

/// One conversation thread being built: the main thread or one subagent run.
#[derive(Default)]
struct Thread {
    rows: Vec<Row>,
    /// `message.id` of the last message when it is an assistant message.
    last_assistant_id: Option<String>,
    /// user-side items since the last assistant message, and the line of the first
    group: Vec<Item>,
    group_line: Option<usize>,
    /// usage per `message.id` (the one with the largest `output_tokens`) and the id of
    /// the last assistant message that had one
    usage: Vec<(String, Value)>,
    last_usage: Option<String>,
    /// source rows taken into this thread (for the compaction warning)
    taken: usize,
    /// a `compact_boundary` was seen and its summary row not yet
    awaiting_summary: bool,
    /// Task tool results seen here: (`agentId` of toolUseResult, tool_use_id)
    agent_calls: Vec<(String, String)>,
    agent_id: Option<String>,
    /// the thread as it was before a `compact_boundary` whose summary row has not come
    /// yet: (line of the boundary, rows it would drop, the earlier thread)
    before_boundary: Option<(usize, usize, Box<Thread>)>,
}

impl Thread {
    fn flush(&mut self) {
        if self.group.is_empty() {
            return;
        }
        let line = self.group_line.take();
        let group = std::mem::take(&mut self.group);
        let has_results = group.iter().any(|i| matches!(i, Item::Results(r) if !r.is_empty()));
        if has_results {
            let mut results = Vec::new();
            let mut conv = Vec::new();
            let mut injected = Vec::new();
            for item in group {
                match item {
                    Item::Results(r) => results.extend(r),
                    Item::Conv(c) => conv.extend(c),
                    Item::Injected(c) => injected.extend(c),
                }
            }
            results.extend(conv);
            self.rows.push((json!({ "role": "user", "content": results }), line));
            if !injected.is_empty() {
                self.rows.push((injected_message(injected), line));
            }
        } else {
            let mut last: Option<(bool, Vec<Value>)> = None;
            for item in group {
                let (inj, blocks) = match item {
                    Item::Results(_) => continue,
                    Item::Conv(c) => (false, c),
                    Item::Injected(c) => (true, c),
                };
                match &mut last {
                    Some((k, acc)) if *k == inj => acc.extend(blocks),
                    _ => {
                        if let Some((k, acc)) = last.take() {
                            self.rows.push((if k { injected_message(acc) } else { json!({ "role": "user", "content": acc }) }, line));
                        }
                        last = Some((inj, blocks));
                    }
                }
            }
            if let Some((k, acc)) = last {
                self.rows.push((if k { injected_message(acc) } else { json!({ "role": "user", "content": acc }) }, line));
            }
        }
        self.last_assistant_id = None;
    }

    fn push_item(&mut self, item: Item, line: usize) {
        if self.group.is_empty() {
            self.group_line = Some(line);
        }
        self.group.push(item);
    }

    fn assistant(&mut self, row: &Value, blocks: Vec<Value>, line: usize) {
        self.flush();
        let id = row.pointer("/message/id").and_then(Value::as_str).map(str::to_string);
        if let (Some(id), Some(u)) = (&id, row.pointer("/message/usage").filter(|u| u.is_object())) {
            let out = |u: &Value| u.get("output_tokens").and_then(Value::as_u64).unwrap_or(0);
            match self.usage.iter_mut().find(|(k, _)| k == id) {
                Some((_, old)) if out(u) > out(old) => *old = u.clone(),
                Some(_) => {}
                None => self.usage.push((id.clone(), u.clone())),
            }
            self.last_usage = Some(id.clone());
        }
        let same = matches!((&id, &self.last_assistant_id), (Some(a), Some(b)) if a == b);
        if same {
            if let Some(content) = self.rows.last_mut().and_then(|(m, _)| m.get_mut("content")).and_then(Value::as_array_mut) {
                content.extend(blocks);
                return;
            }
        }
        self.rows.push((json!({ "role": "assistant", "content": blocks }), Some(line)));
        self.last_assistant_id = id;
    }

    /// A `compact_boundary` at `line`: a new thread starts, awaiting the log's summary;
    /// the earlier one is kept until that summary comes (issue 12 item 3).
    fn boundary(&mut self, line: usize) {
        let dropped = self.taken;
        let agent_id = self.agent_id.clone();
        let mut old = std::mem::take(self);
        // a boundary right after another unsummarised one keeps the oldest rows
        let earlier = old.before_boundary.take();
        *self = Thread { agent_id, awaiting_summary: true, ..Thread::default() };
        self.before_boundary = Some(match earlier {
            Some((_, n, mut first)) => {
                first.rows.extend(std::mem::take(&mut old.rows));
                first.group.extend(std::mem::take(&mut old.group));
                first.taken += old.taken;
                (line, n + dropped, first)
            }
            None => (line, dropped, Box::new(old)),
        });
    }

    /// The log's summary came after the boundary: the earlier rows are dropped.
    fn summarised(&mut self, w: &mut Warnings) {
        if let Some((no, dropped, _)) = self.before_boundary.take() {
            w.push(Some(no), "compact_boundary", format!("line {no}: Claude Code compacted the session here; the {dropped} earlier conversation row(s) are not imported and the transcript starts from its summary"));
        }
        self.awaiting_summary = false;
    }

    /// No summary row followed the boundary (a conversation row or the end of the log
    /// came first): the earlier rows are kept, with a warning (issue 12 item 3).
    fn unsummarised(&mut self, w: &mut Warnings) {
        self.awaiting_summary = false;
        let Some((no, dropped, earlier)) = self.before_boundary.take() else { return };
        w.push(Some(no), "compact_boundary_without_summary", format!("line {no}: Claude Code compact_boundary with no summary row after it; the {dropped} earlier conversation row(s) are kept"));
        let mut cur = std::mem::replace(self, *earlier);
        self.rows.append(&mut cur.rows);
        self.group.append(&mut cur.group);
        self.taken += cur.taken;
        self.usage.append(&mut cur.usage);
        if cur.last_usage.is_some() {
            self.last_usage = cur.last_usage;
        }
        self.agent_calls.append(&mut cur.agent_calls);
        self.awaiting_summary = false;
    }

    fn usage(&self) -> Option<Usage> {
        let id = self.last_usage.as_ref()?;
        let (_, u) = self.usage.iter().find(|(k, _)| k == id)?;
        normalize_usage(u)
    }

    fn finish(mut self, system: Option<&str>, w: &mut Warnings) -> Value {
        self.unsummarised(w);
        self.flush();
        let messages = repair::anthropic(self.rows, w);
        let mut doc = Map::new();
        if let Some(s) = system {
            doc.insert("system".into(), Value::String(s.to_string()));
        }
        doc.insert("messages".into(), Value::Array(messages));
        Value::Object(doc)
    }
}

fn injected_message(content: Vec<Value>) -> Value {
    json!({ "role": "user", "content": content, "transcript_role": "injected_context" })
}

fn is_injected_text(b: &Value) -> bool {
    b.get("type").and_then(Value::as_str) == Some("text")
        && b.get("text").and_then(Value::as_str).is_some_and(|t| {
            let t = t.trim_start();
            INJECTED_TAGS.iter().any(|tag| t.starts_with(tag))
        })
}

/// Splits a text that opens with harness tags (N-1/N-2, issue 12): the leading
/// `<tag>...</tag>` segments are injected context, and what the person typed stays
/// conversational: the text after the last leading segment, and the inner text of a
/// `<command-args>` segment (the arguments of a slash command). Returns
/// `(injected, typed)`; `None` when the text does not open with a tag or a leading tag
/// is not closed (then the whole text is typed as before).
fn split_injected(text: &str) -> Option<(String, Vec<String>)> {
    let mut rest = text.trim_start();
    INJECTED_TAGS.iter().find(|tag| rest.starts_with(**tag))?;
    let mut injected = String::new();
    let mut typed = Vec::new();
    while let Some(tag) = INJECTED_TAGS.iter().find(|tag| rest.starts_with(**tag)) {
        let name = tag.trim_start_matches('<').trim_end_matches('>');
        let close = format!("</{name}>");
        let end = rest.find(&close)?;
        let whole = rest.get(..end + close.len())?;
        if *tag == "<command-args>" {
            let args = rest.get(tag.len()..end).unwrap_or("").trim();
            if !args.is_empty() {
                typed.push(args.to_string());
            }
        }
        if !injected.is_empty() {
            injected.push('\n');
        }
        injected.push_str(whole);
        rest = rest.get(end + close.len()..).unwrap_or("").trim_start();
    }
    if !rest.trim().is_empty() {
        typed.push(rest.trim_end().to_string());
    }
    Some((injected, typed))
}

/// Which thread a row belongs to: `None` = main thread, else the subagent key.
fn subagent_key(row: &Value) -> Option<String> {
    if let Some(p) = row.get("parent_tool_use_id").and_then(Value::as_str) {
        return Some(format!("call:{p}"));
    }
    if row.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        return Some(format!("agent:{}", sidechain_agent(row).unwrap_or_default()));
    }
    None
}

/// The id a sidechain row's run is known by: its `agentId`, else (inline runs of
/// headless sessions) its own session id, which the main thread's
/// `toolUseResult.agentId` names.
fn sidechain_agent(row: &Value) -> Option<String> {
    row.get("agentId").or_else(|| row.get("sessionId")).or_else(|| row.get("session_id")).and_then(Value::as_str).map(str::to_string)
}

/// `message.content` of a user/assistant row as a list of blocks, or why not.
fn row_blocks(row: &Value, no: usize, w: &mut Warnings) -> std::result::Result<Vec<Value>, String> {
    let Some(message) = row.get("message").filter(|m| m.is_object()) else {
        return Err("no `message` object".into());
    };
    match message.get("content") {
        Some(Value::String(s)) => Ok(vec![json!({ "type": "text", "text": s })]),
        Some(Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (k, b) in items.iter().enumerate() {
                if b.get("type").and_then(Value::as_str).is_some() {
                    out.push(b.clone());
                } else {
                    w.push(Some(no), "bad_block", format!("line {no}: content block {k} has no string `type`, dropped"));
                }
            }
            if out.is_empty() {
                return Err("`message.content` holds no valid block".into());
            }
            Ok(out)
        }
        Some(Value::Null) => Err("`message.content` is null".into()),
        Some(_) => Err("`message.content` is neither a string nor a block list".into()),
        None => {
            let keys: Vec<&str> = message.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
            Err(format!("`message` has no `content` (keys: {})", keys.join(", ")))
        }
    }
}

/// A one-line system prompt from the `init` event (the real prompt is not logged).
fn init_prompt(ev: &Value) -> String {
    let field = |k: &str| ev.get(k).and_then(Value::as_str).unwrap_or("?");
    let tools: Vec<&str> = ev.get("tools").and_then(Value::as_array).map(|t| t.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    format!("Claude Code {} session (model {}, cwd {}). Tools: {}.", field("claude_code_version"), field("model"), field("cwd"), tools.join(", "))
}

fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().filter_map(|i| i.as_str().map(str::to_string).or_else(|| i.get("text").and_then(Value::as_str).map(str::to_string))).collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        _ => None,
    }
}

/// Session logs form a tree by `parentUuid`; a rewind (the person edited an earlier
/// prompt) leaves the abandoned branch in the file (LOG-FORMATS "must not get wrong"
/// 3). Walking back from the newest main-thread conversation row gives the live chain;
/// a child of a chain row that is not on the chain starts a dead branch, and the
/// conversation rows of dead branches are returned (line numbers) to be skipped. Kept
/// conservative: assistant rows sharing a `message.id` with a chain row, and rows whose
/// `tool_result` answers a call on the chain, are never dead; a missing parent ends the
/// walk (what lies before it stays); stream-json (no `parentUuid`) has no dead rows.
fn dead_branches(lines: &[super::Line]) -> Vec<usize> {
    let uuid = |v: &Value| v.get("uuid").and_then(Value::as_str).map(str::to_string);
    let parent = |v: &Value| v.get("parentUuid").and_then(Value::as_str).map(str::to_string);
    let conversation = |v: &Value| matches!(v.get("type").and_then(Value::as_str), Some("user" | "assistant")) && subagent_key(v).is_none();
    let Some(leaf) = lines.iter().rev().find(|l| conversation(&l.value) && uuid(&l.value).is_some() && l.value.get("parentUuid").is_some()) else {
        return Vec::new();
    };
    let mut by_uuid: crate::sorted::SortedMap<String, usize> = crate::sorted::SortedMap::new();
    for (k, l) in lines.iter().enumerate() {
        if let Some(u) = uuid(&l.value) {
            if by_uuid.get(&u).is_none() {
                by_uuid.insert(u, k);
            }
        }
    }
    let mut chain: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    let mut at = Some(&leaf.value);
    while let Some(v) = at {
        let Some(u) = uuid(v) else { break };
        if !chain.insert(u) {
            break; // a cycle
        }
        at = parent(v).and_then(|p| by_uuid.get(&p).copied()).and_then(|k| lines.get(k)).map(|l| &l.value);
    }
    let msg_id = |v: &Value| v.pointer("/message/id").and_then(Value::as_str).map(str::to_string);
    let mut chain_msg_ids: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    let mut chain_calls: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    for l in lines.iter().filter(|l| uuid(&l.value).is_some_and(|u| chain.contains(&u))) {
        if let Some(m) = msg_id(&l.value) {
            chain_msg_ids.insert(m);
        }
        for b in l.value.pointer("/message/content").and_then(Value::as_array).into_iter().flatten() {
            if let Some(id) = b.get("id").and_then(Value::as_str).filter(|_| b.get("type").and_then(Value::as_str) == Some("tool_use")) {
                chain_calls.insert(id.to_string());
            }
        }
    }
    // dead: rows whose nearest ancestor on the chain is reached through a non-chain child
    let mut dead_uuids: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    let mut out = Vec::new();
    for l in lines {
        let v = &l.value;
        let (Some(u), Some(p)) = (uuid(v), parent(v)) else { continue };
        if chain.contains(&u) {
            continue;
        }
        let is_dead = (chain.contains(&p) || dead_uuids.contains(&p)) && subagent_key(v).is_none();
        if !is_dead {
            continue;
        }
        let keeps = msg_id(v).is_some_and(|m| chain_msg_ids.contains(&m))
            || v.pointer("/message/content").and_then(Value::as_array).is_some_and(|c| {
                c.iter().any(|b| b.get("tool_use_id").and_then(Value::as_str).is_some_and(|id| chain_calls.contains(id)))
            });
        if keeps {
            continue;
        }
        dead_uuids.insert(u);
        if conversation(v) {
            out.push(l.no);
        }
    }
    out
}

/// The session id a row names (`sessionId`, or `session_id` in stream-json), if any.
fn session_of(row: &Value) -> Option<&str> {
    row.get("sessionId").or_else(|| row.get("session_id")).and_then(Value::as_str)
}

/// Rows of another session (LOG-FORMATS "must not get wrong" 13, N-2): the log's session
/// is the one the first main-thread row naming a session names. A resumed session's file holds the
/// rows of its whole lineage under several session ids, chained by `parentUuid`
/// (`logicalParentUuid` across a compaction), so a session whose rows link to the
/// log's session (directly or through another linked session) is the same
/// conversation. The main-thread rows of any other session (rows written to the wrong
/// file, anthropics/claude-code#30802) are removed from `lines`, with one
/// `other_session` warning per such session naming its lines. Sidechain rows (their
/// own run's session id) and rows with no session id are kept.
fn drop_other_sessions(lines: &mut Vec<super::Line>, w: &mut Warnings) {
    let main = |v: &Value| subagent_key(v).is_none();
    let Some(own) = lines.iter().filter(|l| main(&l.value)).find_map(|l| session_of(&l.value)).map(str::to_string) else {
        return;
    };
    if lines.iter().all(|l| !main(&l.value) || session_of(&l.value).is_none_or(|s| s == own)) {
        return;
    }
    let mut session_by_uuid: crate::sorted::SortedMap<String, String> = crate::sorted::SortedMap::new();
    for l in lines.iter() {
        if let (Some(u), Some(s)) = (l.value.get("uuid").and_then(Value::as_str), session_of(&l.value)) {
            if session_by_uuid.get(&u.to_string()).is_none() {
                session_by_uuid.insert(u.to_string(), s.to_string());
            }
        }
    }
    // sessions linked by a parent edge across session ids, grown from the log's own
    let mut edges: Vec<(String, String)> = Vec::new();
    for l in lines.iter() {
        let Some(s) = session_of(&l.value) else { continue };
        for key in ["parentUuid", "logicalParentUuid"] {
            if let Some(ps) = l.value.get(key).and_then(Value::as_str).and_then(|p| session_by_uuid.get(&p.to_string())) {
                if ps != s {
                    edges.push((s.to_string(), ps.clone()));
                }
            }
        }
    }
    let mut linked: Vec<String> = vec![own.clone()];
    loop {
        let before = linked.len();
        for (a, b) in &edges {
            let (ha, hb) = (linked.contains(a), linked.contains(b));
            if ha && !hb {
                linked.push(b.clone());
            } else if hb && !ha {
                linked.push(a.clone());
            }
        }
        if linked.len() == before {
            break;
        }
    }
    let mut foreign: Vec<(String, Vec<usize>)> = Vec::new();
    lines.retain(|l| {
        let Some(s) = session_of(&l.value).filter(|s| main(&l.value) && !linked.iter().any(|k| k == s)) else { return true };
        match foreign.iter_mut().find(|(k, _)| k == s) {
            Some((_, nos)) => nos.push(l.no),
            None => foreign.push((s.to_string(), vec![l.no])),
        }
        false
    });
    for (s, nos) in foreign {
        let shown: Vec<String> = nos.iter().take(10).map(usize::to_string).collect();
        let more = if nos.len() > 10 { format!(" and {} more", nos.len() - 10) } else { String::new() };
        let first = nos.first().copied();
        w.push(
            first,
            "other_session",
            format!(
                "line {}: {} row(s) of another session ({s:?}; this log's session is {own:?}) skipped, not linked to it by parentUuid (rows written to the wrong file?): line(s) {}{more}",
                first.unwrap_or(0),
                nos.len(),
                shown.join(", ")
            ),
        );
    }
}

/// LOG-FORMATS "must not get wrong" 3 (N-2): a main-thread row whose `parentUuid` names
/// a row the file does not hold (never written, or on a lost line) starts a new root;
/// each gets a `missing_parent` warning naming its line. Lines in `skip` are not checked.
fn warn_missing_parents(lines: &[super::Line], skip: &[usize], w: &mut Warnings) {
    let mut uuids: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    for l in lines {
        if let Some(u) = l.value.get("uuid").and_then(Value::as_str) {
            uuids.insert(u.to_string());
        }
    }
    for l in lines {
        if subagent_key(&l.value).is_some() || skip.binary_search(&l.no).is_ok() {
            continue;
        }
        let Some(p) = l.value.get("parentUuid").and_then(Value::as_str) else { continue };
        if !uuids.contains(&p.to_string()) {
            let no = l.no;
            w.push(Some(no), "missing_parent", format!("line {no}: its parent row {p:?} is not in the log (never written, or on a lost line); the row starts a new root of the thread"));
        }
    }
}

pub(super) fn import(text: &str, options: &ImportOptions, w: &mut Warnings) -> Result<Output> {
    let mut lines = read_jsonl(text, w);
    if lines.is_empty() {
        return Err(Error::invalid("Claude Code log: no JSON rows found"));
    }
    drop_other_sessions(&mut lines, w);
    let dead = dead_branches(&lines);
    warn_missing_parents(&lines, &dead, w);
    if let Some(first) = dead.first() {
        w.push(Some(*first), "rewound_branch", format!("{} conversation row(s) on branches abandoned by a rewind skipped (not on the parentUuid chain of the newest row; first at line {first})", dead.len()));
    }
    let mut system: Option<String> = None;
    let mut main = Thread::default();
    // subagent threads in order of first appearance
    let mut subs: Vec<(String, Thread, usize)> = Vec::new();
    let mut seen_uuids: crate::sorted::SortedSet<String> = crate::sorted::SortedSet::new();
    let mut skipped_attachments: Vec<(String, usize, usize)> = Vec::new();
    let mut unknown_types: Vec<(String, usize, usize)> = Vec::new();
    let mut conversation_rows = 0usize;
    for super::Line { no, value: row } in &lines {
        let no = *no;
        if dead.binary_search(&no).is_ok() {
            continue;
        }
        let Some(ty) = row.get("type").and_then(Value::as_str) else {
            w.push(Some(no), "missing_type", format!("line {no}: object without a string `type`, skipped"));
            continue;
        };
        if let Some(uuid) = row.get("uuid").and_then(Value::as_str) {
            if !seen_uuids.insert(uuid.to_string()) {
                w.push(Some(no), "duplicate_row", format!("line {no}: row {uuid:?} repeats an earlier row, skipped"));
                continue;
            }
        }
        let key = subagent_key(row);
        let thread: &mut Thread = match &key {
            None => &mut main,
            Some(k) => {
                let pos = match subs.iter().position(|(s, _, _)| s == k) {
                    Some(p) => p,
                    None => {
                        let agent_id = if key.as_deref().is_some_and(|k| k.starts_with("agent:")) { sidechain_agent(row) } else { None };
                        subs.push((k.clone(), Thread { agent_id, ..Thread::default() }, no));
                        subs.len() - 1
                    }
                };
                match subs.get_mut(pos) {
                    Some((_, t, _)) => t,
                    None => continue,
                }
            }
        };
        match ty {
            "assistant" | "user" => {
                let blocks = match row_blocks(row, no, w) {
                    Ok(b) => b,
                    Err(why) => {
                        w.push(Some(no), "bad_content", format!("line {no}: {ty} row skipped: {why}"));
                        continue;
                    }
                };
                thread.taken += 1;
                if key.is_none() {
                    conversation_rows += 1;
                }
                if ty == "assistant" {
                    if thread.awaiting_summary {
                        thread.unsummarised(w);
                    }
                    thread.assistant(row, blocks, no);
                    continue;
                }
                let compact_summary = row.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
                    || (thread.awaiting_summary && blocks.iter().any(|b| b.get("text").and_then(Value::as_str).is_some_and(|t| t.trim_start().starts_with(SUMMARY_OPENING))));
                if compact_summary {
                    thread.summarised(w);
                    thread.flush();
                    thread.rows.push((json!({ "role": "user", "content": blocks, "summary_level": 1, "transcript_role": "compaction_summary" }), Some(no)));
                    continue;
                }
                let meta = row.get("isMeta").and_then(Value::as_bool) == Some(true) || row.get("isSynthetic").and_then(Value::as_bool) == Some(true);
                // harness rows may sit between the boundary and its summary
                if thread.awaiting_summary && !meta && !blocks.iter().all(is_injected_text) {
                    thread.unsummarised(w);
                }
                if let Some(agent) = row.get("toolUseResult").or_else(|| row.get("tool_use_result")).and_then(|r| r.get("agentId")).and_then(Value::as_str) {
                    if let Some(call) = blocks.iter().find(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")).and_then(|b| b.get("tool_use_id")).and_then(Value::as_str) {
                        thread.agent_calls.push((agent.to_string(), call.to_string()));
                    }
                }
                let mut results = Vec::new();
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("tool_result") {
                        results.push(b);
                    } else if meta {
                        thread.push_item(Item::Injected(vec![b]), no);
                    } else if is_injected_text(&b) {
                        match b.get("text").and_then(Value::as_str).and_then(split_injected) {
                            Some((injected, typed)) if !typed.is_empty() => {
                                thread.push_item(Item::Injected(vec![json!({ "type": "text", "text": injected })]), no);
                                let typed: Vec<Value> = typed.into_iter().map(|t| json!({ "type": "text", "text": t })).collect();
                                thread.push_item(Item::Conv(typed), no);
                            }
                            _ => thread.push_item(Item::Injected(vec![b]), no),
                        }
                    } else {
                        thread.push_item(Item::Conv(vec![b]), no);
                    }
                }
                if !results.is_empty() {
                    thread.push_item(Item::Results(results), no);
                }
            }
            "system" => match row.get("subtype").and_then(Value::as_str) {
                Some("init") if key.is_none() && system.is_none() => system = Some(init_prompt(row)),
                Some("compact_boundary") => thread.boundary(no),
                _ => {}
            },
            "attachment" => {
                let a = row.get("attachment").cloned().unwrap_or(Value::Null);
                let aty = a.get("type").and_then(Value::as_str).unwrap_or("(none)").to_string();
                match aty.as_str() {
                    "hook_additional_context" | "hook_blocking_error" => {
                        let body = a.get("content").and_then(text_of).or_else(|| a.get("blockingError").map(|b| text_of(b).unwrap_or_else(|| b.to_string()))).unwrap_or_else(|| a.to_string());
                        let hook = a.get("hookName").or_else(|| a.get("hookEvent")).and_then(Value::as_str).unwrap_or("hook");
                        thread.taken += 1;
                        thread.push_item(Item::Injected(vec![json!({ "type": "text", "text": format!("[{aty}: {hook}]\n{body}") })]), no);
                    }
                    "queued_command" => match a.get("prompt").and_then(text_of) {
                        Some(p) => {
                            thread.taken += 1;
                            thread.push_item(Item::Conv(vec![json!({ "type": "text", "text": p })]), no);
                        }
                        None => skipped_attachments.push(("queued_command (no prompt text)".into(), no, 1)),
                    },
                    _ => match skipped_attachments.iter_mut().find(|(t, _, _)| *t == aty) {
                        Some((_, _, n)) => *n += 1,
                        None => skipped_attachments.push((aty, no, 1)),
                    },
                }
            }
            t if BOOKKEEPING.contains(&t) => {}
            t => match unknown_types.iter_mut().find(|(k, _, _)| k == t) {
                Some((_, _, n)) => *n += 1,
                None => unknown_types.push((t.to_string(), no, 1)),
            },
        }
    }
    for (t, first, n) in skipped_attachments {
        w.push(Some(first), "attachment_not_imported", format!("{n} attachment row(s) of type {t:?} not imported (not model context; first at line {first})"));
    }
    for (t, first, n) in unknown_types {
        w.push(Some(first), "unknown_line_type", format!("{n} row(s) of unknown type {t:?} skipped (first at line {first})"));
    }
    if conversation_rows == 0 && main.rows.is_empty() && main.group.is_empty() && subs.len() == 1 {
        // a subagent's own file (`subagents/agent-<id>.jsonl`): every row is a sidechain
        // row of one run, which is then the transcript
        if let Some((_, thread, first)) = subs.pop() {
            w.push(Some(first), "subagent_file", format!("every conversation row is a sidechain row of one subagent run ({}); imported as the transcript", thread.agent_id.as_deref().unwrap_or("no agentId")));
            main = thread;
            conversation_rows = main.taken;
        }
    }
    if conversation_rows == 0 && main.rows.is_empty() && main.group.is_empty() {
        return Err(Error::invalid(format!("Claude Code log: no valid `user` or `assistant` rows in the main thread ({} JSON rows read)", lines.len())));
    }
    main.unsummarised(w);
    let usage = main.usage();
    let agent_calls = std::mem::take(&mut main.agent_calls);
    let document = main.finish(system.as_deref(), w);
    let main_calls: Vec<String> = document
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut subagents = Vec::new();
    match options.subagents {
        SubagentMode::Drop => {
            if let Some((_, _, first)) = subs.first() {
                let rows: usize = subs.iter().map(|(_, t, _)| t.taken).sum();
                w.push(Some(*first), "subagent_dropped", format!("{} subagent run(s), {rows} row(s), dropped (subagents: \"drop\"; first at line {first})", subs.len()));
            }
        }
        SubagentMode::Attach => {
            for (key, thread, first) in subs {
                let agent_id = thread.agent_id.clone();
                let call_id = match key.strip_prefix("call:") {
                    Some(c) => Some(c.to_string()),
                    None => agent_id.as_ref().and_then(|a| agent_calls.iter().find(|(ag, _)| ag == a).map(|(_, c)| c.clone())),
                };
                match &call_id {
                    Some(c) if !main_calls.contains(c) => {
                        w.push(Some(first), "subagent_dropped", format!("line {first}: subagent run for call {c:?} dropped: its call is not in the imported main thread (before a compaction boundary, or its row was lost)"));
                        continue;
                    }
                    None => w.push(Some(first), "subagent_unattached", format!("line {first}: subagent run {} names no call it answers; kept with callId null", agent_id.as_deref().unwrap_or("(no agentId)"))),
                    Some(_) => {}
                }
                let document = thread.finish(None, w);
                subagents.push(Subagent { call_id, agent_id, format: Format::Anthropic, document });
            }
        }
    }
    Ok(Output { document, subagents, usage })
}
