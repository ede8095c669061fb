//! The deterministic floor under any summary (N-5, Y-2 generalised) and rehydration
//! after a compaction (N-6).
//!
//! After the summarizer (model, curator or the engine's own handoff) answers, the engine
//! checks that the newest request, the first task, every user constraint sentence, every
//! file path of the folded calls and the open plan items are in the text, and appends the
//! missing ones verbatim as length-prefixed items ([`super::ledger::item`]) in its
//! deterministic section. Artifact handles are carried by the index (Y-2). Then the
//! instruction documents the session loaded and the latest plan state are re-attached
//! verbatim, newest first, within `rehydrateBytes`; what does not fit is named with its
//! handle (the message id).

use super::facts::Facts;
use super::ledger::item;

/// Item kinds the floor writes (N-5).
pub const FLOOR_KINDS: [&str; 9] = [
    "carried newest request",
    "carried first task",
    "carried user text",
    "carried constraint",
    "carried constraints",
    "carried file paths",
    "carried open plan items",
    ITEM_REFERENCES_KIND,
    ATTACHMENTS_KIND,
];

/// Kind of the floor item naming the ids of folded OpenAI Responses `item_reference`
/// items (stored items the provider fills in, which no summarizer sees), one a line.
pub const ITEM_REFERENCES_KIND: &str = "carried item references";

/// Kind of the floor item naming the files and images folded user rows attached by
/// reference (a Files API id, a URI, an http(s) URL), one a line: `message <id>
/// (offset <n>): <kind> <key> <reference>[, <media type>][, "<name>"]`, so the model or
/// the host can attach them again. Inline (base64) media stay placeholders.
pub const ATTACHMENTS_KIND: &str = "carried user attachments";

/// Most UTF-8 bytes of one reference line (a longer reference is named by its size).
const REFERENCE_LINE_BYTES: usize = 2_048;

/// The reference a message part gives a file or image by (N-1, F-1): `(key, value,
/// media type, name)`. Read from the part and the objects it nests the file in
/// (`source`, `file`, `image_url`, `fileData` / `file_data`): a Gemini `fileUri`, an
/// Anthropic `source` of type `file` (`file_id`) or `url`, a Responses `input_file`
/// `file_id` / `file_url` or `input_image` `image_url` / `file_id`, an OpenAI Chat
/// `image_url.url` or `file.file_id`, an AI SDK `image` / `data` URL. `data:` URLs and
/// base64 are inline, not references.
fn part_reference(p: &serde_json::Map<String, serde_json::Value>) -> Option<(String, String, Option<String>, Option<String>)> {
    use serde_json::Value;
    let web = |s: &str| s.starts_with("https://") || s.starts_with("http://") || s.starts_with("gs://");
    let mut objs: Vec<&serde_json::Map<String, Value>> = vec![p];
    for k in ["source", "file", "image_url", "fileData", "file_data"] {
        if let Some(Value::Object(o)) = p.get(k) {
            objs.push(o);
        }
    }
    let mut found: Option<(String, String)> = None;
    'find: for o in &objs {
        for k in ["fileUri", "file_uri", "file_id", "fileId", "file_url", "fileUrl"] {
            if let Some(s) = o.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty() && !s.starts_with("data:")) {
                found = Some((k.to_string(), s.to_string()));
                break 'find;
            }
        }
        for k in ["url", "image_url", "image", "data"] {
            if let Some(s) = o.get(k).and_then(Value::as_str).filter(|s| web(s)) {
                found = Some((k.to_string(), s.to_string()));
                break 'find;
            }
        }
    }
    let (key, value) = found?;
    let field = |keys: &[&str]| objs.iter().find_map(|o| keys.iter().find_map(|k| o.get(*k).and_then(Value::as_str))).map(str::to_string);
    let media = field(&["mimeType", "mime_type", "media_type", "mediaType"]);
    let name = field(&["filename", "displayName", "display_name", "title"]);
    Some((key, value, media, name))
}

fn collect_references(v: &serde_json::Value, out: &mut Vec<(String, String, Option<String>, Option<String>)>, depth: usize) {
    use serde_json::Value;
    if depth > 8 {
        return;
    }
    match v {
        Value::Object(o) => match part_reference(o) {
            // an object that is itself a reference is not searched further
            Some(r) if o.contains_key("type") || o.contains_key("fileData") || o.contains_key("file_data") || o.contains_key("fileUri") => out.push(r),
            _ => o.values().for_each(|x| collect_references(x, out, depth + 1)),
        },
        Value::Array(a) => a.iter().for_each(|x| collect_references(x, out, depth + 1)),
        _ => {}
    }
}

/// The floor items naming what folded rows hold only by reference (N-1, F-1): the ids
/// of `item_reference` items ([`ITEM_REFERENCES_KIND`]) and the files and images user
/// rows attached by reference ([`ATTACHMENTS_KIND`]), read from the rows' own JSON (only
/// rows whose blocks hold such a part are read). Empty when there is none.
pub fn reference_items(rows: &[(usize, &crate::transcript::Message)]) -> String {
    use crate::transcript::{Block, MediaKind, Role};
    let mut refs: Vec<String> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let line = |s: String| if s.len() <= REFERENCE_LINE_BYTES { s } else { crate::evict::truncate(&s, REFERENCE_LINE_BYTES) };
    for (o, m) in rows {
        if m.is_summary() {
            continue;
        }
        let has_ref = m.blocks.iter().any(|b| matches!(b, Block::Opaque { kind, .. } if kind == "item_reference"));
        let media: Vec<MediaKind> = m.blocks.iter().filter_map(|b| match b {
            Block::Media { kind, inline: false, .. } => Some(*kind),
            _ => None,
        }).collect();
        if !has_ref && (media.is_empty() || m.role != Role::User) {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(m.raw.get()) else { continue };
        if has_ref {
            if let Some(id) = v.get("id").and_then(serde_json::Value::as_str).filter(|_| v.get("type").and_then(serde_json::Value::as_str) == Some("item_reference")) {
                refs.push(line(crate::quote::content(id).into_owned()));
            }
        }
        if m.role == Role::User && !media.is_empty() {
            let mut found = Vec::new();
            collect_references(&v, &mut found, 0);
            for (k, (key, value, mt, name)) in found.into_iter().enumerate() {
                let kind = match media.get(k).or(media.first()) {
                    Some(MediaKind::Image) => "image",
                    Some(MediaKind::Video) => "video",
                    Some(MediaKind::Audio) => "audio",
                    _ => "document",
                };
                let mut l = format!("message {} (offset {o}): {kind} {key} {value}", m.id);
                if let Some(mt) = mt {
                    l.push_str(&format!(", {mt}"));
                }
                if let Some(n) = name {
                    l.push_str(&format!(", {n:?}"));
                }
                files.push(line(crate::quote::content(&l).into_owned()));
            }
        }
    }
    let mut out = String::new();
    if !refs.is_empty() {
        out.push_str(&item(ITEM_REFERENCES_KIND, &refs.join("\n")));
    }
    if !files.is_empty() {
        out.push_str(&item(ATTACHMENTS_KIND, &files.join("\n")));
    }
    out
}

/// Item kinds that start with this are rehydrated documents (N-6).
pub const REHYDRATED: &str = "rehydrated";

/// Prefix of the marker of a user text block the summary clips (N-1): the line goes on
/// with `<message id>, offset <n>): <head> [+<k> bytes in memory]`; the whole block stays
/// in the memory records (M-1). One constant with the check.
pub use crate::nothing_lost::CLIPPED_PREFIX;

/// UTF-8 bytes of the head a clipped user text marker keeps at most (it also stops at
/// the first line break).
pub const CLIPPED_HEAD_BYTES: usize = 120;

/// The marker line of a clipped user text block (N-1), built from engine data (the row's
/// id and offset, the byte count) around the block's head and tail ([`marker_parts`]):
/// `<head> [+<k> bytes in memory]`, then ` ... <tail>` when the text has a tail to show.
pub fn clipped_marker(id: &str, offset: usize, text: &str) -> String {
    let (head, tail) = marker_parts(text);
    format!("\n{CLIPPED_PREFIX}{id}, offset {offset}): {head} [+{} bytes in memory]{}", text.len() - head.len() - tail.len(), tail_suffix(tail))
}

/// What a one-line clip marker quotes of a text (N-1; the ask or the rule a person
/// writes after a long paste): the head (at most [`CLIPPED_HEAD_BYTES`], up to its first
/// line break) and the tail (the end of its last line, at most [`CLIPPED_HEAD_BYTES`],
/// [`crate::nothing_lost::over_budget_tail`]; empty when nothing is past the head).
pub fn marker_parts(text: &str) -> (&str, &str) {
    let cut = crate::evict::floor_boundary(text, CLIPPED_HEAD_BYTES).min(text.find('\n').unwrap_or(text.len()));
    let head = text.get(..cut).unwrap_or("");
    let tail = crate::nothing_lost::over_budget_tail(text, head.len(), CLIPPED_HEAD_BYTES);
    // one line: the tail's last line only
    let tail = tail.rsplit_once('\n').map_or(tail, |(_, l)| l).trim_start();
    (head, tail)
}

/// What follows a marker's `[+<k> bytes in memory]`: ` ... <tail>`, or nothing.
pub fn tail_suffix(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(" ... {tail}")
    }
}

/// Kind of the floor item that holds the user constraint sentences (N-5, S-9): one
/// sentence a line, verbatim (quoted as data), de-duplicated.
pub const CONSTRAINTS_KIND: &str = "carried constraints";

/// The `- <sentence>` bullets of the handoff's section 2 in `narrative` (the user
/// constraints it lists verbatim), for constant-time "is this constraint sentence already
/// carried" tests. Only these: a later rollup reads a member's constraints from its tail
/// and from that section ([`super::carry::MemberUserText::read`]), so a sentence that is
/// merely a line of a summarizer's prose is carried in the tail too (a rollup's prose may
/// drop it; adversarial finding 7, session 6).
fn line_set(narrative: &str) -> std::collections::HashSet<&str> {
    section2_bullets(narrative).into_iter().collect()
}

/// The `- <sentence>` bullets of the handoff's section 2 in `narrative`, in order, each
/// with the lines that continue it (a hard-wrapped sentence, [`super::facts::sentences`]:
/// a line of the section that opens neither a bullet nor a `[` line), as substrings.
pub(crate) fn section2_bullets(narrative: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let section2 = super::handoff::section_header(2);
    let mut in2 = false;
    // the open bullet: its start, and the end of its last line
    let mut open: Option<(usize, usize)> = None;
    let mut at = 0usize;
    for raw in narrative.split_inclusive('\n') {
        let l = raw.strip_suffix('\n').unwrap_or(raw);
        let here = at;
        at += raw.len();
        if l.starts_with('[') || l.starts_with("- ") || !in2 {
            if let Some((a, b)) = open.take() {
                out.push(narrative.get(a..b).unwrap_or(""));
            }
        }
        if l.starts_with("[§") {
            in2 = l == section2;
        } else if in2 && l.starts_with("- ") {
            open = Some((here + 2, here + l.len()));
        } else if let Some((_, b)) = open.as_mut().filter(|_| in2 && !l.starts_with('[')) {
            *b = here + l.len();
        }
    }
    if let Some((a, b)) = open {
        out.push(narrative.get(a..b).unwrap_or(""));
    }
    out
}

/// The fewest UTF-8 bytes [`floor_items`] writes for `user_lines` (the engine's user-text
/// floor lines, [`crate::nothing_lost::user_text_floor_capped`]) whatever the narrative
/// (issue 13, S-6 breaker): the session's first task and the newest request are items of
/// their own kind always; another quoted user text is its item, or with `memory` on its
/// rollup marker when the narrative quotes it (the shorter counts); a plain floor line
/// (a clip marker) is written as it is, once. Constraint sentences count nothing (the
/// narrative may hold them). A lower bound of what a summary of the fold carries: the
/// engine skips the summarizer when even this is no smaller than the rows it replaces.
pub fn floor_min_bytes(user_lines: &[String], memory: bool) -> usize {
    use crate::nothing_lost::{CONSTRAINT_PREFIX, FIRST_TASK_KIND, FIRST_TASK_PREFIX, NEWEST_KIND, NEWEST_PREFIX, VERBATIM_PREFIX};
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut written: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut total = 0usize;
    for line in user_lines {
        let labelled = [(FIRST_TASK_PREFIX, FIRST_TASK_KIND), (NEWEST_PREFIX, NEWEST_KIND), (VERBATIM_PREFIX, "carried user text")];
        if let Some((kind, text)) = labelled.iter().find_map(|(p, k)| line.strip_prefix(p).map(|t| (*k, t))) {
            if !seen.insert(text) {
                continue;
            }
            let whole = item(kind, text).len();
            let least = if kind == "carried user text" && memory { whole.min(1 + super::carry::rollup_marker(text).len()) } else { whole };
            total = total.saturating_add(least);
        } else if !line.starts_with(CONSTRAINT_PREFIX) && written.insert(line.as_str()) {
            total = total.saturating_add(1 + line.len());
        }
    }
    total
}

/// The floor (N-5, N-1): what `narrative` leaves out of `facts` (and of the `earlier`
/// carried items of folded summaries), appended verbatim:
/// 1. the user-text lines of the folded rows (`user_lines`, from
///    [`crate::nothing_lost::user_text_floor`], with its own budget tiers: whole, clipped,
///    then one line naming the rest, whole in memory): a whole quote as a
///    length-prefixed item (`carried first task`, `carried newest request`, `carried
///    user text`); a `carried user text` the narrative already quotes is named by a
///    rollup clip marker instead ([`super::carry::rollup_marker`]) when `memory` is on
///    (the folded text is whole in memory, M-1) and is an item whole when it is off, so a
///    later rollup carries it whatever its prose says (Y-3, Y-6); every other line as it
///    is (one line each); an instruction document a log left in a person's row at a
///    `protected` offset (the first task or the newest request) stays whole;
/// 2. every user constraint sentence not quoted whole above and not a line of
///    `narrative` (the handoff's section 2 lists them as `- <sentence>`): the
///    `User constraint (verbatim):` lines of `user_lines`, the sentences of `facts`
///    and those earlier summaries carried, de-duplicated, in one
///    [`CONSTRAINTS_KIND`] item, one sentence a line. This is the floor: it is never
///    bounded by `max_bytes` (the engine answers `cannot_fit` when the floor itself
///    cannot fit the window);
/// 3. the open plan items, then the file paths of the folded calls, then earlier carried
///    items.
///
/// Beyond the user text and the constraints everything is bounded by `max_bytes`; what
/// does not fit is counted in a `[floor: ...]` line, never dropped silently: the file
/// paths' line names the folded calls whose arguments hold them
/// ([`super::handoff::path_holders`]), and every such line says the folded rows are in
/// memory only when they are ([`floor_items_in`], N-1). Of a path or
/// plan list only the missing lines are carried.
///
/// Time: linear in the inputs plus the narrative's size per whole quote, path list or
/// earlier item it searches (constraint sentences use a hash set of its lines).
///
/// `memory` stands for both parts of [`Kept`]: see [`floor_items_in`] for a session
/// whose memory keeps the folded user text only.
pub fn floor_items(narrative: &str, facts: &Facts, earlier: &[(String, String)], max_bytes: usize, user_lines: &[String], protected: &[usize], memory: bool) -> String {
    floor_items_in(narrative, facts, earlier, max_bytes, user_lines, protected, Kept { user_text: memory, rows: memory })
}

/// What the memory records keep whole of the rows a summary folds (M-1, N-1), for the
/// claims its markers make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// The folded user text: memory projection is on (`projectMemory`), with a memory
    /// hook or without one (then only the folded user text is projected, into the
    /// result's records: README "Semantic memory").
    pub user_text: bool,
    /// Every folded row (tool calls, their arguments and paths, results, assistant
    /// text): memory projection is on and not limited to the user text.
    pub rows: bool,
}

/// [`floor_items`] with what memory keeps split (N-1: a marker never claims a copy that
/// does not exist): a `carried user text` the narrative quotes is named by a rollup clip
/// marker only with `kept.user_text`; a `[floor: N more <kind> not carried ...]` line
/// (file paths, plan items, earlier items: none of them user text) says the folded rows
/// are in memory only with `kept.rows`.
pub fn floor_items_in(narrative: &str, facts: &Facts, earlier: &[(String, String)], max_bytes: usize, user_lines: &[String], protected: &[usize], kept: Kept) -> String {
    let memory = kept.user_text;
    use crate::nothing_lost::{CONSTRAINT_PREFIX, FIRST_TASK_KIND, FIRST_TASK_PREFIX, NEWEST_KIND, NEWEST_PREFIX, VERBATIM_PREFIX};
    use std::collections::HashSet;
    let mut out = String::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut written: HashSet<&str> = HashSet::new();
    let narrative_lines = line_set(narrative);
    let mut remaining = max_bytes.saturating_sub(160);
    let mut left: Vec<(&'static str, usize)> = Vec::new();
    // the constraint sentences (quoted as data) the floor carries, in order, once
    let mut constraints: Vec<String> = Vec::new();
    let mut constraint_seen: HashSet<String> = HashSet::new();
    // 1. user text: one mechanism (N-1), each text quoted once
    // sentences inside a text quoted whole need no second quote
    let mut in_whole: HashSet<&str> = HashSet::new();
    for line in user_lines {
        // S-9: the session's first task and the newest request are items of their own
        // kind even when the narrative quotes them (a later rollup carries them by it)
        let labelled = [(FIRST_TASK_PREFIX, FIRST_TASK_KIND), (NEWEST_PREFIX, NEWEST_KIND), (VERBATIM_PREFIX, "carried user text")];
        if let Some((kind, text)) = labelled.iter().find_map(|(p, k)| line.strip_prefix(p).map(|t| (*k, t))) {
            if seen.contains(text) {
                continue;
            }
            // Y-3, Y-6: a text the narrative quotes is still named in the engine record (a
            // later rollup's prose may drop it): by a rollup clip marker with memory on
            // (the folded text is whole in memory, M-1), else whole
            if kind == "carried user text" && memory && crate::nothing_lost::contains_bounded(narrative, text) {
                out.push('\n');
                out.push_str(&super::carry::rollup_marker(text));
                seen.insert(text.to_string());
                // its constraint sentences go in the constraints item (a marker quotes none)
                for c in crate::nothing_lost::constraint_sentences(text) {
                    if !in_whole.contains(c) && !narrative_lines.contains(c) && constraint_seen.insert(c.to_string()) {
                        constraints.push(c.to_string());
                    }
                }
                continue;
            }
            in_whole.extend(crate::nothing_lost::constraint_sentences(text));
            out.push_str(&item(kind, text));
            seen.insert(text.to_string());
            continue;
        }
        if let Some(c) = line.strip_prefix(CONSTRAINT_PREFIX) {
            // already quoted as data by user_text_floor
            if !in_whole.contains(c) && !narrative_lines.contains(c) && constraint_seen.insert(c.to_string()) {
                constraints.push(c.to_string());
            }
            continue;
        }
        if written.insert(line.as_str()) {
            out.push('\n');
            out.push_str(line);
        }
    }
    // an instruction document a log left in a person's row is user text: as the first
    // task or the newest request it stays whole (N-1)
    for d in facts.instructions.iter().filter(|d| d.user_text && protected.contains(&d.offset)) {
        if !seen.contains(&d.text) && !crate::nothing_lost::contains_bounded(narrative, &d.text) {
            // `protected` is [session's first task, newest request] or [newest request]
            let kind = if protected.len() > 1 && protected.first() == Some(&d.offset) { FIRST_TASK_KIND } else { NEWEST_KIND };
            out.push_str(&item(kind, &d.text));
            in_whole.extend(crate::nothing_lost::constraint_sentences(&d.text));
            seen.insert(d.text.clone());
        }
    }
    // 2. constraints: every one, whole (the floor, S-9 / N-5)
    for c in &facts.constraints {
        if in_whole.contains(c.as_str()) {
            continue;
        }
        let q = crate::quote::content(c);
        if !narrative_lines.contains(&*q) && !narrative_lines.contains(c.as_str()) && constraint_seen.insert(q.to_string()) {
            constraints.push(q.into_owned());
        }
    }
    for (kind, text) in earlier {
        if kind == CONSTRAINTS_KIND || kind == "carried constraint" {
            for c in text.lines().filter(|l| !l.trim().is_empty()) {
                // carried already quoted as data
                if !narrative_lines.contains(c) && constraint_seen.insert(c.to_string()) {
                    constraints.push(c.to_string());
                }
            }
        } else if kind == "clipped user text" {
            if let Some(c) = text.strip_prefix(CONSTRAINT_PREFIX) {
                if !narrative_lines.contains(c) && constraint_seen.insert(c.to_string()) {
                    constraints.push(c.to_string());
                }
            }
        }
    }
    if !constraints.is_empty() {
        out.push_str(&item(CONSTRAINTS_KIND, &constraints.join("\n")));
    }
    // 3. plan, paths, earlier carried items, by the budget
    let mut collapsed = 0usize;
    let mut rest: Vec<(&'static str, String)> = Vec::new();
    if let Some(p) = &facts.plan {
        // transcript text quoted as data (Y-9, issue 13: a bidi control escaped visibly),
        // looked for in the narrative as quoted
        let open: Vec<(String, std::borrow::Cow<'_, str>)> = p.open_items().map(|(s, c)| (crate::quote::content(s).into_owned(), crate::quote::content(c))).filter(|(_, c)| !crate::nothing_lost::contains_bounded(narrative, c)).collect();
        if !open.is_empty() {
            let text = open.iter().map(|(s, c)| format!("- [{s}] {c}")).collect::<Vec<_>>().join("\n");
            rest.push(("carried open plan items", text));
        }
    }
    let paths: Vec<std::borrow::Cow<'_, str>> = facts.paths().map(crate::quote::content).filter(|p| !crate::nothing_lost::contains_path(narrative, p)).collect();
    if !paths.is_empty() {
        rest.push(("carried file paths", paths.join("\n")));
    }
    for (kind, text) in earlier {
        if kind == CONSTRAINTS_KIND || kind == "carried constraint" {
            continue;
        }
        if kind == "clipped user text" {
            if text.starts_with(CONSTRAINT_PREFIX) {
                continue;
            }
            // count lines of several folded summaries: one line with their sum (N-1)
            if let Some(n) = super::carry::collapsed_count(text) {
                collapsed = collapsed.saturating_add(n);
                continue;
            }
            if written.insert(text.as_str()) && !crate::nothing_lost::contains_bounded(narrative, text) {
                out.push('\n');
                out.push_str(text);
            }
            continue;
        }
        if !kind.starts_with("carried ") {
            continue;
        }
        let k: &'static str = FLOOR_KINDS.iter().find(|k| **k == kind.as_str()).copied().unwrap_or("carried user text");
        let missing: Vec<&str> = if k == "carried file paths" {
            text.lines().filter(|l| !crate::nothing_lost::contains_path(narrative, l)).collect()
        } else if k == "carried open plan items" {
            text.lines().filter(|l| !crate::nothing_lost::contains_bounded(narrative, l.trim_start_matches("- ").split_once("] ").map_or(*l, |(_, c)| c))).collect()
        } else if k != FIRST_TASK_KIND && crate::nothing_lost::contains_bounded(narrative, text) {
            // the first task stays an item of its kind (S-9: a later rollup finds it by it)
            Vec::new()
        } else {
            vec![text.as_str()]
        };
        if !missing.is_empty() {
            rest.push((k, missing.join("\n")));
        }
    }
    if collapsed > 0 {
        out.push('\n');
        out.push_str(&super::carry::collapsed_line(collapsed));
    }
    let mut left_paths: Vec<String> = Vec::new();
    for (kind, text) in rest {
        if seen.contains(&text) {
            continue;
        }
        let it = item(kind, &text);
        if it.len() <= remaining || kind == "carried newest request" || kind == "carried first task" || kind == "carried user text" {
            // user text an earlier summary carried stays whole (S-9, N-1)
            remaining = remaining.saturating_sub(it.len());
            out.push_str(&it);
            seen.insert(text);
        } else {
            let n = if kind == "carried file paths" || kind == "carried open plan items" { text.lines().count() } else { 1 };
            if kind == "carried file paths" {
                left_paths.push(text);
            }
            match left.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, c)) => *c += n,
                None => left.push((kind, n)),
            }
        }
    }
    // N-1: the marker says the rows are in memory only when they are; the paths left out
    // are named by the folded calls whose arguments hold them (issue 13)
    let kept = if kept.rows { "the folded rows are in memory" } else { "the folded rows are not kept in memory" };
    let paths: HashSet<&str> = left_paths.iter().flat_map(|t| t.lines()).collect();
    for (kind, n) in left {
        let what = kind.trim_start_matches("carried ");
        let holders = if kind == "carried file paths" { super::handoff::path_holders(facts, &paths).map(|h| format!("; {h}")).unwrap_or_default() } else { String::new() };
        out.push_str(&format!("\n[floor: {n} more {what} not carried (summary budget){holders}; {kept}]"));
    }
    out
}

/// Rehydration (N-6): the latest plan state (its call's arguments, whole) and the
/// instruction documents of `facts`, then those `earlier` summaries re-attached, newest
/// first, each verbatim as a length-prefixed item, within `max_bytes` UTF-8 bytes (0
/// disables). A document already re-attached (same text) is not repeated. Each one that
/// does not fit is named by its handle (the message id) and size.
pub fn rehydration(facts: &Facts, earlier: &[(String, String)], max_bytes: usize) -> String {
    rehydration_missed(facts, earlier, max_bytes).0
}

/// [`rehydration`], and the positions in `facts.instructions` of the documents of
/// injected-context rows (not `user_text`) it does not re-attach whole (it names each
/// with its handle; with `max_bytes` 0, only the instruction files,
/// [`super::facts::is_instruction_file`]): the engine keeps those whole in memory (kind
/// `instruction`, N-6: the handle resolves) and carries the constraint sentences of the
/// instruction files among them in the floor (N-5).
pub fn rehydration_missed(facts: &Facts, earlier: &[(String, String)], max_bytes: usize) -> (String, Vec<usize>) {
    if max_bytes == 0 {
        // disabled: a document a person's row carried is still clipped with a marker (N-1)
        let out: String = facts.instructions.iter().filter(|d| d.user_text).map(|d| clipped_marker(&d.id, d.offset, &d.text)).collect();
        // none is named by a handle then; the instruction files still reach memory
        let missed = facts.instructions.iter().enumerate().filter(|(_, d)| !d.user_text && super::facts::is_instruction_file(&d.text)).map(|(i, _)| i).collect();
        return (out, missed);
    }
    let mut cands: Vec<(String, String)> = Vec::new();
    if let Some(p) = &facts.plan {
        cands.push((format!("{REHYDRATED} plan state from {} call {}", p.tool, p.call_id), p.arguments.clone()));
    }
    for d in facts.instructions.iter().rev() {
        cands.push((format!("{REHYDRATED} instruction document, message {}", d.id), d.text.clone()));
    }
    // N-1: a document in a conversational user row that does not fit is clipped with a marker
    let user_doc = |text: &str| facts.instructions.iter().find(|d| d.user_text && d.text == text);
    let has_plan = facts.plan.is_some();
    for (k, t) in earlier {
        if k.starts_with(REHYDRATED) && !(has_plan && k.starts_with("rehydrated plan state")) {
            cands.push((k.clone(), t.clone()));
        }
    }
    let mut out = String::new();
    let mut seen: Vec<&str> = Vec::new();
    let mut remaining = max_bytes;
    let mut missed: Vec<String> = Vec::new();
    let mut attached: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (kind, text) in &cands {
        if seen.contains(&text.as_str()) {
            continue;
        }
        seen.push(text);
        let it = item(kind, text);
        if it.len() <= remaining {
            remaining -= it.len();
            out.push_str(&it);
            attached.insert(text.as_str());
        } else {
            let what = kind.trim_start_matches("rehydrated ");
            let first = super::facts::first_line(text, 80).replace(['[', ']'], "");
            missed.push(format!("\n[not re-attached (over rehydrateBytes {max_bytes}): {what} of {} bytes, \"{first}\"; recall it by that handle]", text.len()));
            if let Some(d) = user_doc(text) {
                missed.push(clipped_marker(&d.id, d.offset, &d.text));
            }
        }
    }
    let not_whole: Vec<usize> = facts.instructions.iter().enumerate().filter(|(_, d)| !d.user_text && !attached.contains(d.text.as_str())).map(|(i, _)| i).collect();
    if !out.is_empty() || !missed.is_empty() {
        out.insert_str(0, "\nRe-attached after this summary, verbatim, newest first (N-6):");
    }
    for m in missed {
        out.push_str(&m);
    }
    (out, not_whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nothing_lost::{CONSTRAINT_PREFIX, FIRST_TASK_PREFIX, NEWEST_PREFIX, VERBATIM_PREFIX};

    /// S-6 breaker: [`floor_min_bytes`] is never over what [`floor_items`] writes for the
    /// same lines, whatever the narrative quotes (nothing, each text, all of them), with
    /// memory on and off; and it counts the first task's item whole.
    #[test]
    fn s6_floor_min_bytes_is_a_lower_bound_of_the_floor_written() {
        let long = format!("Please refactor the lexer. {}", "Keep every token kind. ".repeat(20));
        let lines: Vec<String> = vec![
            format!("{FIRST_TASK_PREFIX}hi, which repo is this?"),
            format!("{VERBATIM_PREFIX}thanks, and which branch?"),
            format!("{VERBATIM_PREFIX}{long}"),
            format!("{CONSTRAINT_PREFIX}Never push to main."),
            format!("{NEWEST_PREFIX}hi, which repo is this?"),
            "[clipped user text: 120 bytes in memory]".to_string(),
            "[clipped user text: 120 bytes in memory]".to_string(),
        ];
        let narratives = ["".to_string(), "hi, which repo is this?".to_string(), format!("thanks, and which branch?\n{long}"), format!("hi, which repo is this? thanks, and which branch? {long}\nNever push to main.")];
        for memory in [true, false] {
            for n in &narratives {
                for k in 0..=lines.len() {
                    let some = lines.get(..k).unwrap_or(&[]);
                    let written = floor_items(n, &Facts::default(), &[], 1 << 20, some, &[], memory).len();
                    let least = floor_min_bytes(some, memory);
                    assert!(least <= written, "memory {memory}, narrative {n:?}, {k} lines: {least} > {written}");
                }
            }
        }
        assert_eq!(floor_min_bytes(&lines[..1], true), item(crate::nothing_lost::FIRST_TASK_KIND, "hi, which repo is this?").len());
        assert_eq!(floor_min_bytes(&lines[3..4], true), 0, "a constraint sentence may be the narrative's");
    }
}
