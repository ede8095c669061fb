//! The deterministic handoff summary (Y-6; also the built-in default summarizer): nine
//! sections filled from the folded rows by rules ([`Facts`]), within the summary budget,
//! filled by priority, every clip marked (issue 13).

use super::facts::{describe_uses, Call, Facts};
use super::ledger::narrative_part;
use crate::evict::{ceil_boundary, floor_boundary, truncate};
use crate::transcript::Message;

/// Section titles of the handoff summary, in the order they are written.
pub const HANDOFF_SECTIONS: [&str; 9] = [
    "Primary request and intent",
    "User constraints and preferences (verbatim)",
    "Files and artifacts",
    "Commands and tool calls, with outcomes",
    "Errors and how they were resolved",
    "Plan / todo state (latest, whole)",
    "Decisions and findings",
    "Current work (the last assistant message before the cut)",
    "Next step",
];

/// The header of section `n` (1-based): `[§n Title]`, built from engine data only.
pub fn section_header(n: usize) -> String {
    format!("[§{n} {}]", HANDOFF_SECTIONS.get(n.wrapping_sub(1)).copied().unwrap_or("Notes"))
}

/// Clips `text` to about `cap` UTF-8 bytes, head three quarters and tail a quarter, with
/// a marker naming the bytes left out (the whole text stays in memory, M-1). Text not over
/// `cap` is returned whole.
pub fn clip_marked(text: &str, cap: usize) -> String {
    clip_marked_in(text, cap, true)
}

/// [`clip_marked`], whose marker says the whole text is in memory only when
/// `in_memory` (the folded rows are projected whole, M-1); otherwise it says the text
/// is not kept (N-1: a marker never claims a copy that does not exist).
pub fn clip_marked_in(text: &str, cap: usize, in_memory: bool) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    if !in_memory {
        let h = floor_boundary(text, cap / 4 * 3);
        let t = ceil_boundary(text, text.len().saturating_sub(cap / 4)).max(h);
        return format!("{}\n[... {} bytes clipped from this quote; not kept in memory ...]\n{}", text.get(..h).unwrap_or(""), t - h, text.get(t..).unwrap_or(""));
    }
    let h = floor_boundary(text, cap / 4 * 3);
    let t = ceil_boundary(text, text.len().saturating_sub(cap / 4)).max(h);
    format!(
        "{}\n[... {} bytes clipped from this quote; the whole text is in memory ...]\n{}",
        text.get(..h).unwrap_or(""),
        t - h,
        text.get(t..).unwrap_or("")
    )
}

/// UTF-8 bytes a §3 count marker may take beyond the others' 90: it names the calls
/// holding the paths it leaves out ([`path_holders`]).
const FILES_MARKER_EXTRA: usize = 200;

/// Calls [`path_holders`] names before it counts the rest.
const HOLDERS_NAMED: usize = 3;

/// Where file paths a bound leaves out can be found (issue 13, N-1): `their paths are in
/// the arguments of <tool> <call id>[, ...][ and <n> other calls]`, the folded calls of
/// `f` whose paths hold one of `paths`, in call order, the first [`HOLDERS_NAMED`] named
/// (each id clipped to 64 UTF-8 bytes). Where those calls hold them: `the arguments of`
/// when each holder's arguments (JSON text) name one of its left-out paths, `the results
/// of` when none do (a SWE-agent `edit`'s path is in its `[File: ...]` result, brk
/// finding 7), `the arguments or results of` for a mix. `None` when no folded call names
/// one of them. Linear in the calls' paths.
pub fn path_holders(f: &Facts, paths: &std::collections::HashSet<&str>) -> Option<String> {
    if paths.is_empty() {
        return None;
    }
    let holders: Vec<&super::facts::Call> = f.calls.iter().filter(|c| c.paths.iter().any(|p| paths.contains(p.as_str()))).collect();
    if holders.is_empty() {
        return None;
    }
    // a path as its arguments' JSON text writes it (`"` and `\` escaped)
    let in_arguments = |c: &super::facts::Call| {
        c.paths.iter().filter(|p| paths.contains(p.as_str())).any(|p| {
            let json = serde_json::to_string(p).unwrap_or_default();
            c.arguments.contains(json.get(1..json.len().saturating_sub(1)).unwrap_or(p))
        })
    };
    let by_arguments = holders.iter().filter(|c| in_arguments(c)).count();
    let place = match by_arguments {
        0 => "results",
        n if n == holders.len() => "arguments",
        _ => "arguments or results",
    };
    let named: Vec<String> = holders.iter().take(HOLDERS_NAMED).map(|c| format!("{} {}", truncate(&c.name, 64), truncate(&c.id, 64))).collect();
    let more = holders.len().saturating_sub(HOLDERS_NAMED);
    let rest = if more > 0 { format!(" and {more} other calls") } else { String::new() };
    Some(format!("their paths are in the {place} of {}{rest}", named.join(", ")))
}

/// One line (or block) of a section, with its place in the budget order.
#[derive(Clone)]
struct Item {
    section: usize,
    /// Lower is kept first.
    prio: u8,
    /// Within a priority: lower is kept first.
    rank: usize,
    /// Display order within the section.
    seq: usize,
    text: String,
    /// May be clipped to this many bytes (with a marker) instead of left out.
    clip_cap: Option<usize>,
    /// What is counted when left out (`constraint sentences`, `files`...).
    kind: &'static str,
}

/// The deterministic handoff summary of the facts, bounded to `max_bytes` UTF-8 bytes
/// (never under 512). Sections ([`HANDOFF_SECTIONS`]) are filled in priority order:
/// the newest request, the first task and the plan first, then the constraints and the
/// current work, the next step, the errors, the files (within a third of the room), the
/// decisions, the commands (newest first), the files past that third, and an earlier
/// summary (the other requests are the floor's, quoted once there). What does not fit
/// is counted in a marker in its section (`[clipped: N more files not shown ...]`, which
/// names the calls whose arguments hold the paths, [`path_holders`]); a quote that is
/// cut says how many bytes it lost. Quoted transcript text is never parsed back by the
/// engine.
pub fn handoff_summary(f: &Facts, max_bytes: usize) -> String {
    handoff_summary_with(f, max_bytes, None)
}

/// What the engine knows about the session beyond the folded rows, for
/// [`handoff_summary_with`] (S-9, N-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandoffLabels {
    /// Source offset of the session's first task when it is folded here
    /// ([`crate::nothing_lost::session_first_task`]).
    pub first_task: Option<usize>,
    /// Source offset of the transcript's newest request.
    pub newest: Option<usize>,
    /// The folded rows are projected whole into memory (M-1): clip markers may say so.
    pub rows_in_memory: bool,
    /// Where that newest request is (§9 points at it).
    pub newest_at: NewestAt,
}

/// Where the transcript's newest request is relative to the fold, for §9 (N-5, S-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewestAt {
    /// Folded here (or there is none): the engine record quotes it.
    #[default]
    Folded,
    /// Kept verbatim after the summary, newer than every folded row (a fold before its
    /// run): the next step the folded rows announced came before it.
    After,
    /// Kept verbatim after the summary, with rounds of its own run folded here (S-6).
    InRun,
}

/// §9 when the newest request is kept after the summary ([`NewestAt`]): it points at
/// that request, and names what the folded rows announced as older (`After`) or as the
/// run's own next step (`InRun`).
fn next_step_kept(at: NewestAt, announced: Option<String>) -> Option<String> {
    let pointer = "the newest request, below this summary";
    match (at, announced) {
        (NewestAt::Folded, _) => None,
        (_, None) => Some(format!("Continue {pointer}.")),
        (NewestAt::After, Some(n)) => Some(format!("Continue {pointer}. Before it, the folded work's next step was: {n}")),
        (NewestAt::InRun, Some(n)) => Some(format!("{n} (for {pointer})")),
    }
}

/// [`handoff_summary`] with the session's labels: §1 names only the session's first
/// task and the newest request (by the offsets of `labels`), each by a line pointing
/// at its verbatim item in the engine record (the floor writes them whole, S-9); a
/// folded row that is neither is ordinary user text (the floor quotes it within budget
/// or clips it, N-1). Clip markers claim memory only with `labels.rows_in_memory`.
/// `None` labels the folded rows' own first and last request, as [`handoff_summary`].
pub fn handoff_summary_with(f: &Facts, max_bytes: usize, labels: Option<HandoffLabels>) -> String {
    let in_memory = labels.map_or(true, |l| l.rows_in_memory);
    // Y-3, Y-9: the earlier handoffs folded with the rows (every one, oldest first) are
    // merged section by section into this one ([`super::merge`]), not quoted in §1
    // (nested quotes clipped mid-word)
    let mut members: Vec<&str> = f.earlier_summaries.iter().map(String::as_str).collect();
    if members.is_empty() {
        members.extend(f.earlier_summary.as_deref());
    }
    if !members.is_empty() {
        let own = handoff_sections(f, max_bytes, labels, false);
        let opts = super::merge::MergeOptions { in_memory, constraints_in_record: false };
        members.push(&own);
        if let Some(m) = super::merge::merge_handoffs(&members, max_bytes, opts) {
            return m;
        }
    }
    handoff_sections(f, max_bytes, labels, true)
}

/// [`handoff_summary_with`] itself; `quote_earlier`: the earlier summary is quoted in §1.
fn handoff_sections(f: &Facts, max_bytes: usize, labels: Option<HandoffLabels>, quote_earlier: bool) -> String {
    let in_memory = labels.map_or(true, |l| l.rows_in_memory);
    let budget = max_bytes.max(512);
    let quote_cap = budget / 4;
    let mut items: Vec<Item> = Vec::new();
    let mut seq = 0usize;
    let mut push = |items: &mut Vec<Item>, section: usize, prio: u8, rank: usize, text: String, clip_cap: Option<usize>, kind: &'static str| {
        seq += 1;
        items.push(Item { section, prio, rank, seq, text, clip_cap, kind });
    };
    // §1 primary request and intent
    let n_req = f.requests.len();
    for (i, r) in f.requests.iter().enumerate() {
        if let Some(l) = labels {
            let label = match (Some(r.offset) == l.first_task, Some(r.offset) == l.newest) {
                (true, true) => "First task and newest request",
                (true, false) => "First task",
                (false, true) => "Newest request",
                (false, false) => continue,
            };
            // Y-9: no `message #N`: the row is gone from the transcript the summary lives in
            let text = format!("{label} ({} bytes): verbatim in the engine record below.", r.text.len());
            push(&mut items, 1, 0, n_req - i, text, None, "requests");
            continue;
        }
        let (label, prio, cap) = if i + 1 == n_req && n_req > 1 {
            ("Newest request", 0, None)
        } else if i == 0 {
            // never clipped here: S-9 keeps them whole (the floor quotes one left out)
            (if n_req == 1 { "First task and newest request" } else { "First task" }, if n_req == 1 { 0 } else { 1 }, None)
        } else {
            // the other requests are quoted in one place: the floor's user-text lines
            // (whole, clipped with a marker, or named as whole in memory; N-1)
            continue;
        };
        let text = format!("{label} (message #{}, {} bytes, verbatim):\n{}", r.offset, r.text.len(), r.text);
        push(&mut items, 1, prio, n_req - i, text, cap, "requests");
    }
    if let Some(e) = f.earlier_summary.as_ref().filter(|_| quote_earlier) {
        // every earlier summary folded here, oldest first
        let all = if f.earlier_summaries.len() > 1 { f.earlier_summaries.join("\n\n") } else { e.clone() };
        push(&mut items, 1, 9, 0, format!("Earlier summary folded with these rows:\n{all}"), Some(quote_cap), "earlier summary");
    }
    // §2 constraints
    for (i, c) in f.constraints.iter().enumerate() {
        push(&mut items, 2, 2, i, format!("- {c}"), None, "constraint sentences");
    }
    // §3 files and artifacts
    for (i, u) in f.files.iter().enumerate() {
        let handles = if u.handles.is_empty() { String::new() } else { format!(" [{}]", u.handles.join(", ")) };
        push(&mut items, 3, 5, i, format!("- {}: {}{handles}", u.path, describe_uses(u)), None, "files");
    }
    let mut in_files: Vec<&str> = Vec::new();
    for u in &f.files {
        in_files.extend(u.handles.iter().map(String::as_str));
    }
    let loose: Vec<&str> = f.artifacts.iter().map(String::as_str).filter(|h| !in_files.contains(h)).collect();
    if !loose.is_empty() {
        let holders: Vec<String> = loose
            .iter()
            .map(|h| match f.calls.iter().find(|c| c.handle.as_deref() == Some(*h)) {
                Some(c) => format!("{h} (result of {} {})", c.name, c.id),
                None => (*h).to_string(),
            })
            .collect();
        push(&mut items, 3, 5, usize::MAX / 2, format!("- artifacts: {}", holders.join(", ")), Some(600), "artifacts");
    }
    for (i, d) in f.instructions.iter().enumerate() {
        push(&mut items, 3, 6, i, format!("- instructions loaded: message {} ({} bytes): {}", d.id, d.text.len(), truncate(super::facts::first_line(&d.text, 160).as_str(), 160)), None, "instruction documents");
    }
    // §4 commands and tool calls: newest kept first
    let n_calls = f.calls.len();
    for (i, c) in f.calls.iter().enumerate() {
        let file_op = c.command.is_none() && !c.paths.is_empty();
        if file_op || f.plan.as_ref().is_some_and(|p| p.call_id == c.id) {
            continue;
        }
        let what = match &c.command {
            Some(cmd) => format!("{} `{}`", c.name, truncate(cmd.lines().next().unwrap_or(""), 200)),
            None => format!("{}({})", c.name, truncate(&c.arguments, 120)),
        };
        let handle = c.handle.as_ref().map(|h| format!(" [{h}]")).unwrap_or_default();
        push(&mut items, 4, 7, n_calls - i, format!("- {what} -> {}{handle}", c.outcome.describe()), None, "calls");
    }
    // §5 errors and how they were resolved: an earlier summary's error these rows
    // resolve first (the oldest), kept after the decisions (the summary that left it
    // unresolved is still in the transcript, or merged here); then the rows' own
    let carried = carried_resolutions(f);
    let n_carried = carried.len();
    for (i, e) in carried.into_iter().enumerate() {
        push(&mut items, 5, 7, n_carried - i, e, None, "errors");
    }
    let errors = own_error_lines(f);
    let n_err = errors.len();
    for (i, e) in errors.into_iter().enumerate() {
        push(&mut items, 5, 4, n_err - i, e, None, "errors");
    }
    // §6 plan / todo state, whole
    if let Some(p) = &f.plan {
        let mut t = format!("Latest {} call ({}):", p.tool, p.call_id);
        if let Some(e) = &p.explanation {
            t.push_str("\n");
            t.push_str(e);
        }
        for (s, c) in &p.items {
            t.push_str(&format!("\n- [{s}] {c}"));
        }
        push(&mut items, 6, 1, 0, t, Some(quote_cap), "plan");
    }
    // §7 decisions and findings: newest kept first
    let n_dec = f.decisions.len();
    for (i, d) in f.decisions.iter().enumerate() {
        push(&mut items, 7, 6, n_dec - i, format!("- {d}"), None, "decision sentences");
    }
    // §8 current work, whole
    if let Some(w) = &f.current_work {
        push(&mut items, 8, 2, 0, w.clone(), Some(quote_cap), "current work");
    }
    // §9 next step: a newest request kept after the summary is pointed at, never named
    // as one of the folded rows
    if let Some(n) = next_step_kept(labels.map_or(NewestAt::Folded, |l| l.newest_at), f.next_step()) {
        push(&mut items, 9, 3, 0, n, Some(400), "next step");
    } else if let Some(n) = f.next_step() {
        push(&mut items, 9, 3, 0, n, Some(400), "next step");
    } else if let Some(r) = f.newest_request() {
        let text = if labels.is_some() { "continue the newest request.".to_string() } else { format!("continue the newest request (message #{}).", r.offset) };
        push(&mut items, 9, 3, 0, text, None, "next step");
    }

    let header = handoff_header(f);
    let titles: usize = (1..=HANDOFF_SECTIONS.len()).filter(|n| items.iter().any(|it| it.section == *n)).map(|n| section_header(n).len() + 1).sum();
    // issue 13: on the first pass the file list takes at most a third of the room (a
    // patch of 150 files must not push out the next step, errors, decisions and
    // commands); the paths past it get what the other sections leave, on a second pass
    let fill = |room: usize| fill_sections(f, items.clone(), Room { room, file_share: room / 3, in_memory }, &header);
    // the count markers' bytes are known once the sections are filled: a first fill
    // takes the whole room, and each one over the budget is made again with the room
    // less its excess (a tight budget keeps the lines it can, not 90 bytes of reserve
    // per section)
    let mut room = budget.saturating_sub(header.len() + titles + 32);
    let (mut out, _) = fill(room);
    for _ in 0..3 {
        if out.len() <= budget {
            break;
        }
        room = room.saturating_sub(out.len() - budget);
        out = fill(room).0;
    }
    if out.len() > budget {
        // room for one omission marker per section that has something to omit
        let markers = (1..=HANDOFF_SECTIONS.len()).filter(|n| items.iter().any(|it| it.section == *n)).count() * 90;
        let file_bytes: usize = items.iter().filter(|it| it.kind == "files").map(|it| it.text.len() + 1).sum();
        let room = budget.saturating_sub(header.len() + titles + markers + 32);
        // the files marker names the calls holding the paths it leaves out: a longer line
        let room = if file_bytes > room / 3 { room.saturating_sub(FILES_MARKER_EXTRA) } else { room };
        let (first, dropped) = fill(room);
        out = first;
        // room the reserve leaves unused is given to the sections once more (the second
        // fill is kept when it is within the budget)
        if dropped && out.len() + 64 < budget {
            let (again, _) = fill(room + (budget - out.len() - 32));
            if again.len() <= budget {
                out = again;
            }
        }
    }
    if out.len() > budget {
        // the section markers are estimates; a hard cut keeps the budget
        let cut = floor_boundary(&out, budget.saturating_sub(48));
        out.truncate(cut);
        out.push_str("\n[handoff summary cut at the summary budget]");
    }
    out
}

/// The bounds of one [`fill_sections`]: the room its items may take (UTF-8 bytes), the
/// share of it the file list takes on the first pass, and whether the folded rows are in
/// memory (M-1: what its markers may say).
#[derive(Clone, Copy)]
struct Room {
    room: usize,
    file_share: usize,
    in_memory: bool,
}

/// The handoff's sections of `items` filled by priority within `room` (the file list
/// within its share on the first pass, the paths over it after the other sections), each
/// section's left-out items counted in its marker: the text after `header`, and whether
/// an item was left out.
fn fill_sections(f: &Facts, mut items: Vec<Item>, bounds: Room, header: &str) -> (String, bool) {
    let Room { room: mut remaining, file_share, in_memory } = bounds;
    let clip_marked = |t: &str, cap: usize| clip_marked_in(t, cap, in_memory);
    let mut order: Vec<usize> = (0..items.len()).collect();
    crate::sorted::sort_by(&mut order, |&a, &b| {
        let key = |i: usize| items.get(i).map(|it| (it.prio, it.rank, it.seq)).unwrap_or((u8::MAX, 0, 0));
        key(a).cmp(&key(b))
    });
    // the second pass: the paths over the share, before the earlier summary's quote
    let later = order.split_off(order.iter().position(|&i| items.get(i).is_some_and(|it| it.prio >= 9)).unwrap_or(order.len()));
    let mut deferred: Vec<usize> = Vec::new();
    let mut file_used = 0usize;
    let mut kept = vec![false; items.len()];
    // a list (section, kind) whose next item did not fit takes no later (older) ones
    let mut closed: Vec<(usize, &'static str)> = Vec::new();
    // a constraint sentence already inside a kept quote is not written twice
    let mut hidden = vec![false; items.len()];
    // the constraint sentences of the kept section-1 quotes, gathered once when the
    // first constraint comes up (section 1 is placed before: priorities 0 and 1)
    let mut quoted_sentences: Option<std::collections::HashSet<String>> = None;
    for pass in 0..2 {
        let list = if pass == 0 { std::mem::take(&mut order) } else { deferred.drain(..).chain(later.iter().copied()).collect() };
        for i in list {
            if items.get(i).is_some_and(|it| it.kind == "constraint sentences") {
                let sentence = items.get(i).map(|it| it.text.trim_start_matches("- ").to_string()).unwrap_or_default();
                let set = quoted_sentences.get_or_insert_with(|| {
                    items
                        .iter()
                        .enumerate()
                        .filter(|(j, o)| o.section == 1 && o.kind == "requests" && kept.get(*j).copied().unwrap_or(false))
                        .flat_map(|(_, o)| super::facts::constraint_sentences(&o.text).into_iter().map(str::to_string).collect::<Vec<_>>())
                        .collect()
                });
                let covered = set.contains(&sentence);
                if covered {
                    if let (Some(k), Some(h)) = (kept.get_mut(i), hidden.get_mut(i)) {
                        *k = true;
                        *h = true;
                    }
                    continue;
                }
            }
            let Some(it) = items.get_mut(i) else { continue };
            if closed.contains(&(it.section, it.kind)) {
                continue;
            }
            let need = it.text.len() + 1;
            if pass == 0 && it.kind == "files" {
                // in order: once one path is over the share, the rest wait too
                if !deferred.is_empty() || file_used + need > file_share {
                    deferred.push(i);
                    continue;
                }
                if need <= remaining {
                    file_used += need;
                }
            }
            if need <= remaining {
                remaining -= need;
                if let Some(k) = kept.get_mut(i) {
                    *k = true;
                }
            } else if let Some(cap) = it.clip_cap {
                let room = cap.min(remaining.saturating_sub(96));
                if room >= 160 {
                    it.text = clip_marked(&it.text, room);
                    remaining = remaining.saturating_sub(it.text.len() + 1);
                    if let Some(k) = kept.get_mut(i) {
                        *k = true;
                    }
                }
            } else {
                closed.push((it.section, it.kind));
            }
            // a quote over its own cap is clipped even when the budget would take it
            if let (Some(cap), Some(true)) = (it.clip_cap, kept.get(i)) {
                if it.text.len() > cap + 200 {
                    let before = it.text.len();
                    it.text = clip_marked(&it.text, cap);
                    remaining += before.saturating_sub(it.text.len());
                }
            }
        }
    }
    let mut out = header.to_string();
    let mut dropped = false;
    for n in 1..=HANDOFF_SECTIONS.len() {
        // a section with nothing in the folded rows is left out
        if !items.iter().any(|it| it.section == n) && !(n == 7 && f.decisions_dropped > 0) {
            continue;
        }
        out.push_str("\n");
        out.push_str(&section_header(n));
        let mut any = false;
        let mut covered = 0usize;
        let mut left: Vec<(&'static str, usize)> = Vec::new();
        for (i, it) in items.iter().enumerate().filter(|(_, it)| it.section == n) {
            if hidden.get(i).copied().unwrap_or(false) {
                covered += 1;
            } else if kept.get(i).copied().unwrap_or(false) {
                out.push_str("\n");
                out.push_str(&it.text);
                any = true;
            } else {
                match left.iter_mut().find(|(k, _)| *k == it.kind) {
                    Some((_, c)) => *c += 1,
                    None => left.push((it.kind, 1)),
                }
            }
        }
        if covered > 0 {
            out.push_str(&format!("\n({covered} more quoted verbatim in the requests above)"));
            any = true;
        }
        // issue 13, Y-3: the decision sentences earlier summaries left out are counted on
        if n == 7 && f.decisions_dropped > 0 {
            match left.iter_mut().find(|(k, _)| *k == "decision sentences") {
                Some((_, c)) => *c += f.decisions_dropped,
                None => left.push(("decision sentences", f.decisions_dropped)),
            }
        }
        for (kind, count) in &left {
            // N-1: a marker never claims a copy that does not exist
            // issue 13: the paths left out are named by the calls whose arguments hold them
            let holders = if *kind == "files" {
                let paths: std::collections::HashSet<&str> = items
                    .iter()
                    .zip(&kept)
                    .filter(|(it, k)| it.kind == "files" && !**k)
                    .filter_map(|(it, _)| f.files.get(it.rank))
                    .map(|u| u.path.as_str())
                    .collect();
                path_holders(f, &paths).map(|h| format!("; {h}")).unwrap_or_default()
            } else {
                String::new()
            };
            let kept = if in_memory { "the folded rows are in memory" } else { "the folded rows are not kept in memory" };
            out.push_str(&format!("\n[clipped: {count} more {kind} not shown here (summary budget){holders}; {kept}]"));
        }
        if !any && left.is_empty() {
            out.push_str("\n(none in the folded rows)");
        }
        dropped |= !left.is_empty();
    }
    (out, dropped)
}

/// How a §5 line of an error no later call resolved ends ([`error_lines`]; a rollup
/// keeps these before the decisions, [`super::merge`]).
pub const NOT_RESOLVED: &str = "not resolved in the folded rows";

/// The §5 lines of `f` (issue 13, Y-5): each failed call (or one whose output names a
/// root cause) with its command or path, its call id, its outcome and root-cause line,
/// and how it was resolved (the later success of the same call and the edits before
/// it) or `not resolved in the folded rows`; oldest first, after the lines of the
/// errors earlier summaries left unresolved that a call of `f` resolves
/// ([`carried_resolutions`]).
fn error_lines(f: &Facts) -> Vec<String> {
    let mut out = carried_resolutions(f);
    out.extend(own_error_lines(f));
    out
}

/// The §5 lines of the errors of `f`'s own calls ([`error_lines`]).
fn own_error_lines(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    for e in f.errors() {
        let c = e.call;
        let outcome = c.outcome.describe();
        // the line that says why (issue 13): a failing test's assertion, an exception
        let cause = c.cause.as_deref().filter(|l| !outcome.contains(*l)).map(|l| format!("; root cause: {l}")).unwrap_or_default();
        let res = match e.fix {
            Some(d) => resolution(d, e.edits),
            None => NOT_RESOLVED.to_string(),
        };
        out.push(format!("- {} [{}] {outcome}{cause}; {res}", error_subject(c), c.id));
    }
    out
}

/// What a §5 line names a failed call by: `<tool> `<command>`` (its first line within
/// 160 bytes, `…` after it when the command goes on: a longer line or more lines),
/// else `<tool> on <first path>`, else `<tool>(<arguments, 120 bytes>)`.
fn error_subject(c: &Call) -> String {
    match (&c.command, c.paths.first()) {
        (Some(cmd), _) => {
            let first = clipped_first_line(cmd);
            let more = if !first.ends_with('…') && cmd.trim_end().lines().nth(1).is_some() { "…" } else { "" };
            format!("{} `{first}{more}`", c.name)
        }
        (None, Some(p)) => format!("{} on {p}", c.name),
        (None, None) => format!("{}({})", c.name, truncate(&c.arguments, 120)),
    }
}

/// The first line of a command as a §5 line names it ([`error_subject`]): clipped to 160
/// UTF-8 bytes, `…` after a clipped one.
fn clipped_first_line(cmd: &str) -> String {
    truncate(cmd.lines().next().unwrap_or(""), 160)
}

/// How a §5 line says its error was resolved by the later call `fix`, with the calls
/// made before it (`edits`): `resolved: [after edits to <path> (<tool> <id>), ..., ]a
/// later <tool> call (<id>) succeeded`, naming the calls among `edits` that edited or
/// wrote a file (not a view).
fn resolution(fix: &Call, edits: &[Call]) -> String {
    let mut edited: Vec<String> = Vec::new();
    for x in edits.iter().filter(|x| !x.patched.is_empty() || matches!(super::facts::action_of(&x.name), super::facts::FileAction::Edited | super::facts::FileAction::Written) && !x.command.as_deref().is_some_and(|c| c.starts_with("view")) && !super::facts::is_editor_view(x)) {
        for p in &x.paths {
            let s = format!("{p} ({} {})", x.name, x.id);
            if !edited.contains(&s) {
                edited.push(s);
            }
        }
    }
    if edited.is_empty() {
        format!("resolved: a later {} call ({}) succeeded", fix.name, fix.id)
    } else {
        format!("resolved: after edits to {}, a later {} call ({}) succeeded", truncate(&edited.join(", "), 300), fix.name, fix.id)
    }
}

/// Whether the §5 line head `head` of an earlier summary ([`super::facts::CarriedError`])
/// names a failed call that `d` resolves by the rule of [`Facts::errors`], read from
/// what the line names ([`error_subject`]): the same tool and the same whole command
/// in the same directory ([`super::facts::same_command`]); a command the
/// line names only in part, `…` at its end, only by a one-line command the line would
/// clip to the same text (brk2 finding 12), never by a command of more lines (two
/// heredocs share their first line), else the
/// same first path (by a call that is no editor view), else the same arguments (as far
/// as the line names them). A leading
/// `\` (the quote escape) is skipped.
fn head_names(head: &str, d: &Call) -> bool {
    let Some(rest) = head.trim_start_matches('\\').strip_prefix("- ").and_then(|r| r.strip_prefix(d.name.as_str())) else { return false };
    match (&d.command, d.paths.first()) {
        (Some(cmd), _) => {
            let Some(r) = rest.strip_prefix(" `") else { return false };
            // a long one-line command: the line names it clipped, as it would name `cmd`
            let clipped = if cmd.trim_end().lines().nth(1).is_none() { Some(clipped_first_line(cmd)).filter(|f| f.ends_with('…')) } else { None };
            // the command ends at a "` [" (the call id follows): any whose text is it whole
            // (or, clipped, the same clipped text)
            r.match_indices("` [").any(|(i, _)| r.get(..i).is_some_and(|c| if c.ends_with('…') { clipped.as_deref() == Some(c) } else { super::facts::same_command(c, cmd) }))
        }
        // an editor's view edits nothing, and the line does not say the failed call was a view
        (None, Some(p)) => rest.strip_prefix(" on ").and_then(|r| r.strip_prefix(p.as_str())).is_some_and(|r| r.starts_with(" [")) && !super::facts::is_editor_view(d),
        // arguments the line clips (over 120 bytes) are not compared
        (None, None) => d.arguments.len() <= 120 && rest.strip_prefix('(').and_then(|r| r.strip_prefix(d.arguments.as_str())).is_some_and(|r| r.starts_with(") [")),
    }
}

/// Issue 13, Y-3 (resolution carries across folds): the §5 lines of the errors earlier
/// summaries left unresolved ([`Facts::carried_errors`]; once each, none another
/// summary already says was resolved) that a call of `f` resolves: the first call of a
/// row after that summary's that succeeded with no root-cause line and that the line
/// names ([`head_names`]). Each is `<head>; resolved: ...` ([`resolution`], the calls of
/// `f` after the summary and before the fix as the edits), oldest first; a rollup keeps
/// the resolved line in place of the unresolved one ([`super::merge`]). Time: the
/// unresolved lines times the calls.
fn carried_resolutions(f: &Facts) -> Vec<String> {
    if f.carried_errors.is_empty() || f.calls.is_empty() {
        return Vec::new();
    }
    let resolved: std::collections::HashSet<&str> = f.carried_errors.iter().filter(|e| e.resolved).map(|e| e.head.as_str()).collect();
    let mut done: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for e in f.carried_errors.iter().filter(|e| !e.resolved) {
        if resolved.contains(e.head.as_str()) || !done.insert(e.head.as_str()) {
            continue;
        }
        let start = f.calls.iter().position(|c| c.offset > e.after).unwrap_or(f.calls.len());
        let later = f.calls.get(start..).unwrap_or(&[]);
        let Some(j) = later.iter().position(|d| matches!(d.outcome, super::facts::Outcome::Ok { .. }) && d.cause.is_none() && head_names(&e.head, d)) else { continue };
        if let Some(d) = later.get(j) {
            out.push(format!("{}; {}", e.head, resolution(d, later.get(..j).unwrap_or(&[]))));
        }
    }
    out
}

/// A handoff of §5 alone (Y-5, I-4): the header and every line of [`error_lines`],
/// whole; empty when the folded calls hold no error. The engine writes it in place of
/// the nine sections when those would be bigger than the rows they replace, so a
/// summary of the floor alone still names the failed calls; it is a handoff a later
/// rollup merges ([`super::merge`]).
pub fn errors_handoff(f: &Facts) -> String {
    let lines = error_lines(f);
    if lines.is_empty() {
        return String::new();
    }
    format!("{}\n{}\n{}", handoff_header(f), section_header(5), lines.join("\n"))
}

/// The first line of a handoff of `f`.
fn handoff_header(f: &Facts) -> String {
    format!("Handoff summary (deterministic, {} messages folded; clipped parts are marked).", f.rows)
}

/// [`handoff_summary`] over folded rows `(source offset, message)`, with each row's
/// stamped `artifact_ref` as the handle of its results (Y-6). Bounded to about
/// `max_bytes` UTF-8 bytes (never under 1,024).
pub fn mechanical_summary(rows: &[(usize, &Message)], max_bytes: usize) -> String {
    let facts = Facts::read(rows, &|_, _, m: &Message| m.provenance.artifact_ref.clone());
    handoff_summary(&facts, max_bytes)
}

/// Mechanical rollup: the merged summaries' narrative parts joined, bounded to
/// `max_bytes` (keeps the newest text when over). Their §7 "Decisions and findings"
/// lines are carried whole in one §7 section at the end ([`mechanical_merge_in`]).
pub fn mechanical_merge(texts: &[String], max_bytes: usize) -> String {
    mechanical_merge_in(texts, max_bytes, true)
}

/// [`mechanical_merge`] (Y-3, issue 13): the members' §7 lines
/// ([`super::facts::summary_decisions`]) are taken out of their narratives and written
/// once, oldest first, in one §7 section after the joined rest, within half of
/// `max_bytes` UTF-8 bytes, the newest kept first; the lines left out and those the
/// members' own §7 markers counted are counted in one marker (`[clipped: <n> more
/// decision sentences not shown here ...]`, saying the folded rows are in memory only
/// with `in_memory`). The rest of the joined narratives keeps its newest text within
/// what the section leaves of `max_bytes`.
pub fn mechanical_merge_in(texts: &[String], max_bytes: usize, in_memory: bool) -> String {
    // Y-3, Y-9: deterministic handoffs merge into one handoff ([`super::merge`]); text
    // that is not one (a model's prose) is joined as below
    let narratives: Vec<&str> = texts.iter().map(|t| narrative_part(t).trim()).collect();
    let opts = super::merge::MergeOptions { in_memory, constraints_in_record: true };
    if let Some(m) = super::merge::merge_handoffs(&narratives, max_bytes, opts) {
        return m;
    }
    let mut decisions: Vec<String> = Vec::new();
    let mut dropped = 0usize;
    let mut seen = std::collections::HashSet::new();
    let mut parts: Vec<String> = Vec::with_capacity(texts.len());
    for t in texts {
        let n = narrative_part(t);
        let (ds, d) = super::facts::summary_decisions(n);
        dropped = dropped.saturating_add(d);
        for x in ds {
            if seen.insert(x.clone()) {
                decisions.push(x);
            }
        }
        parts.push(super::facts::without_decisions(n).trim().to_string());
    }
    let mut section = String::new();
    if !decisions.is_empty() || dropped > 0 {
        let first_kept = super::merge::newest_fit(&decisions, max_bytes / 2, 3);
        dropped = dropped.saturating_add(first_kept);
        section.push_str("\n\n");
        section.push_str(&section_header(7));
        for d in decisions.get(first_kept..).unwrap_or(&[]) {
            section.push_str("\n- ");
            section.push_str(d);
        }
        if dropped > 0 {
            let kept = if in_memory { "the folded rows are in memory" } else { "the folded rows are not kept in memory" };
            section.push_str(&format!("\n[clipped: {dropped} more decision sentences not shown here (rollup budget); {kept}]"));
        }
    }
    let joined = parts.join("\n\n");
    let rest = max_bytes.saturating_sub(section.len());
    let body = if joined.len() <= rest {
        joined
    } else {
        let cut = crate::evict::ceil_boundary(&joined, joined.len() - rest);
        format!("[earlier summary text omitted]\n{}", joined.get(cut..).unwrap_or(""))
    };
    format!("{body}{section}")
}
