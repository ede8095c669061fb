//! One handoff summary out of several (Y-3, Y-9, N-5, issue 13): a rollup of the
//! deterministic handoff summaries, or a fold of an earlier handoff with new rows, is
//! written as ONE handoff whose sections are merged, not as the earlier blocks pasted
//! together and clipped from the front.
//!
//! The members' narratives are read line by line ([`parse`]): a `[§n ...]` line opens
//! section n, a `Handoff summary (deterministic, ...` line is a (possibly nested) header,
//! clip markers and the lines they cut are left out. The text is data (a host may have
//! edited it): nothing in it is executed, an unknown line is only carried as a line of
//! its section, and a narrative that holds no handoff header is not parsed at all (the
//! caller falls back to joining the narratives, [`super::mechanical_merge_in`]).
//!
//! Merge rules, by section:
//! - §1: the first `First task` line of the oldest member, the `Newest request` line of
//!   the newest; `Earlier summary folded with these rows:` lines are dropped (their
//!   sections are merged instead of nested);
//! - §2 constraints: union, once each (or, for a rollup, one line pointing at the
//!   engine record, which carries them verbatim);
//! - §3 files (N-5: floor): union, each path once with its latest tool use and handle,
//!   order of first use; all the room the fixed sections leave but a fifth kept for §7;
//!   when the lists would not fit beside one line per path, the paths with no handle are
//!   grouped by their use (`- (read by read_file): a, b`); over the share the oldest are
//!   counted. The newest four `instructions loaded` lines are kept, the rest counted
//!   (the engine record re-attaches or names those documents, N-6);
//! - §5 errors: an error one member left unresolved and another's line (same call, same
//!   outcome) says was resolved is written once, resolved (issue 13: a later fold found
//!   the call that fixed it);
//! - §7 decisions and findings, then §5 errors, then §4 commands: union, once each, the
//!   newest kept first (§7 within what the files leave less an eighth kept for §5), the
//!   rest counted with the members' own counts; room the count markers did not use is
//!   given to the lists in a second fill;
//! - §6 plan, §8 current work, §9 next step: the newest only.
//!
//! `message #N` references are dropped: they named rows of the transcript the member
//! was written for, gone after the fold.

use super::handoff::{clip_marked_in, section_header, HANDOFF_SECTIONS, NOT_RESOLVED};

/// Start of a handoff header line.
pub const HEADER_START: &str = "Handoff summary (deterministic, ";

/// The line a rollup writes in §2: the engine record below carries the constraint
/// sentences verbatim (N-1), so the narrative does not repeat them.
pub const CONSTRAINTS_POINTER: &str = "(the user's constraint sentences are carried verbatim in the engine record below: carried constraints)";

/// A parsed handoff narrative.
#[derive(Debug, Default, Clone)]
struct Parsed {
    /// Messages folded, from the first header.
    folded: usize,
    /// Per section (index 1..=9): the blocks in order (a nested summary gives several).
    sections: Vec<Vec<Vec<String>>>,
    /// `[clipped: N more KIND ...]` counts per (section, kind).
    counts: Vec<(usize, String, usize)>,
}

fn is_clip_marker(l: &str) -> bool {
    l.starts_with("[... ") && l.contains(" bytes clipped from this quote")
}

/// `[clipped: N more KIND not shown here ...]` -> (N, KIND).
fn count_marker(l: &str) -> Option<(usize, String)> {
    let r = l.strip_prefix("[clipped: ")?;
    let (n, rest) = r.split_once(" more ")?;
    let (kind, _) = rest.split_once(" not shown")?;
    Some((n.parse().ok()?, kind.to_string()))
}

/// `[§n ...]` -> n.
fn section_of(l: &str) -> Option<usize> {
    let r = l.strip_prefix("[§")?;
    let end = r.find(|c: char| !c.is_ascii_digit())?;
    let n: usize = r.get(..end)?.parse().ok()?;
    (1..=HANDOFF_SECTIONS.len()).contains(&n).then_some(n)
}

/// Reads a handoff narrative; `None` when it holds no handoff header line (a model's
/// prose, or text edited past recognition).
fn parse(narrative: &str) -> Option<Parsed> {
    if !narrative.lines().any(|l| l.starts_with(HEADER_START)) {
        return None;
    }
    let mut p = Parsed { sections: vec![Vec::new(); HANDOFF_SECTIONS.len() + 1], ..Parsed::default() };
    let mut cur: Option<usize> = None;
    let mut header_seen = false;
    // the next line is the partial tail of a clipped quote
    let mut partial = false;
    for l in narrative.lines() {
        if let Some(h) = l.strip_prefix(HEADER_START) {
            if !header_seen {
                header_seen = true;
                p.folded = h.split(|c: char| !c.is_ascii_digit()).next().and_then(|d| d.parse().ok()).unwrap_or(0);
            }
            cur = None;
            partial = false;
            continue;
        }
        if let Some(n) = section_of(l) {
            cur = Some(n);
            if let Some(s) = p.sections.get_mut(n) {
                s.push(Vec::new());
            }
            partial = false;
            continue;
        }
        if l == "[earlier summary text omitted]" {
            partial = true;
            cur = None;
            continue;
        }
        if l.starts_with("[handoff summary cut at") || l == "(none in the folded rows)" {
            continue;
        }
        let Some(n) = cur else { continue };
        if is_clip_marker(l) {
            // a quote of the newest-only sections keeps its marker; a list loses the
            // partial line before and after the cut
            if matches!(n, 6 | 8 | 9) {
                push_line(&mut p, n, l);
            } else {
                if let Some(b) = p.sections.get_mut(n).and_then(|s| s.last_mut()) {
                    b.pop();
                }
                partial = true;
            }
            continue;
        }
        if std::mem::take(&mut partial) && !matches!(n, 6 | 8 | 9) {
            continue;
        }
        if let Some((k, kind)) = count_marker(l) {
            match p.counts.iter_mut().find(|(s, kk, _)| *s == n && *kk == kind) {
                Some((_, _, c)) => *c = c.saturating_add(k),
                None => p.counts.push((n, kind, k)),
            }
            continue;
        }
        push_line(&mut p, n, l);
    }
    Some(p)
}

/// What a §5 line that says its error was resolved holds before its resolution.
const RESOLVED_SEP: &str = "; resolved: ";

/// The head of a §5 error line and whether it says the error was resolved: the text
/// before `; ` + [`NOT_RESOLVED`] at its end (`false`), or before its last `; resolved: `
/// (`true`); `None` for a line that is neither (a marker, a line a host edited).
fn error_head(line: &str) -> Option<(&str, bool)> {
    if !line.trim_start_matches('\\').starts_with("- ") {
        return None;
    }
    if let Some(h) = line.strip_suffix(NOT_RESOLVED).and_then(|h| h.strip_suffix("; ")) {
        return Some((h, false));
    }
    line.rfind(RESOLVED_SEP).and_then(|i| line.get(..i)).map(|h| (h, true))
}

/// The §5 error lines of a handoff narrative (every `[§5 ...]` block, nested ones
/// too), in order: each line's head (the line up to the `; ` before how it was
/// resolved, verbatim) and whether it says the error was resolved (issue 13, Y-3: a
/// later fold resolves an earlier summary's unresolved error, [`super::Facts::carried_errors`]).
/// Empty for text with no §5 section. Linear in the narrative.
pub fn error_heads(narrative: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut in5 = false;
    for l in narrative.lines() {
        if let Some(n) = section_of(l) {
            in5 = n == 5;
            continue;
        }
        if l.starts_with(HEADER_START) {
            in5 = false;
            continue;
        }
        if in5 {
            if let Some((h, r)) = error_head(l) {
                out.push((h.to_string(), r));
            }
        }
    }
    out
}

fn push_line(p: &mut Parsed, n: usize, l: &str) {
    if let Some(s) = p.sections.get_mut(n) {
        if s.is_empty() {
            s.push(Vec::new());
        }
        if let Some(b) = s.last_mut() {
            b.push(l.to_string());
        }
    }
}

/// `line` without its `message #N` references (they named rows of another transcript):
/// `(message #12, 80 bytes)` -> `(80 bytes)`, ` (message #12)` -> ``, other `message #12`
/// -> `an earlier message`.
pub fn scrub_message_refs(line: &str) -> String {
    const PAT: &str = "message #";
    if !line.contains(PAT) {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(p) = rest.find(PAT) {
        let after = rest.get(p + PAT.len()..).unwrap_or("");
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            out.push_str(rest.get(..p + PAT.len()).unwrap_or(""));
            rest = after;
            continue;
        }
        let before = rest.get(..p).unwrap_or("");
        let tail = after.get(digits..).unwrap_or("");
        if before.ends_with('(') && tail.starts_with(", ") {
            out.push_str(before);
            rest = tail.get(2..).unwrap_or("");
        } else if before.ends_with(" (") && tail.starts_with(')') {
            out.push_str(before.get(..before.len() - 2).unwrap_or(""));
            rest = tail.get(1..).unwrap_or("");
        } else {
            out.push_str(before);
            out.push_str("an earlier message");
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Options of [`merge_handoffs`].
#[derive(Debug, Clone, Copy)]
pub struct MergeOptions {
    /// The folded rows are projected whole into memory (M-1): count markers may say so.
    pub in_memory: bool,
    /// §2 is one pointer line ([`CONSTRAINTS_POINTER`]): the caller carries every
    /// constraint sentence verbatim in the engine record (a rollup does). Otherwise §2 is
    /// the union of the members' lines.
    pub constraints_in_record: bool,
}

/// A file line of §3: (path, use, handles).
fn file_line(l: &str) -> Option<(String, String, String)> {
    let r = l.strip_prefix("- ")?;
    if let Some(g) = r.strip_prefix('(') {
        // a grouped line is split by the caller
        let _ = g;
        return None;
    }
    let (path, rest) = r.split_once(": ")?;
    let (what, handles) = match rest.rfind(" [") {
        Some(i) if rest.ends_with(']') => (rest.get(..i).unwrap_or(""), rest.get(i..).unwrap_or("")),
        _ => (rest, ""),
    };
    Some((path.to_string(), what.to_string(), handles.to_string()))
}

/// A grouped §3 line `- (USE): a, b` -> (USE, paths).
fn grouped_line(l: &str) -> Option<(String, Vec<String>)> {
    let r = l.strip_prefix("- (")?;
    let (what, paths) = r.split_once("): ")?;
    Some((what.to_string(), paths.split(", ").filter(|p| !p.is_empty()).map(str::to_string).collect()))
}

/// Renders the §3 lines of `files` (path, use, handles): one line per path, or, with
/// `grouped`, the paths with no handle one line per use.
fn render_files(files: &[(String, String, String)], grouped: bool) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if !grouped {
        for (p, w, h) in files {
            out.push(format!("- {p}: {w}{h}"));
        }
        return out;
    }
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (p, w, h) in files {
        if h.is_empty() {
            match groups.iter_mut().find(|(g, _)| *g == w.as_str()) {
                Some((_, ps)) => ps.push(p),
                None => groups.push((w, vec![p])),
            }
        } else {
            out.push(format!("- {p}: {w}{h}"));
        }
    }
    for (w, ps) in groups {
        if ps.len() == 1 {
            out.push(format!("- {}: {w}", ps.first().copied().unwrap_or("")));
        } else {
            out.push(format!("- ({w}): {}", ps.join(", ")));
        }
    }
    out
}

/// Adds `c` to the count of (section `s`, kind `k`).
fn add_count(counts: &mut Vec<(usize, String, usize)>, s: usize, k: &str, c: usize) {
    if c == 0 {
        return;
    }
    match counts.iter_mut().find(|(s2, k2, _)| *s2 == s && k2 == k) {
        Some((_, _, x)) => *x = x.saturating_add(c),
        None => counts.push((s, k.to_string(), c)),
    }
}

fn bytes_of(lines: &[String]) -> usize {
    lines.iter().map(|l| l.len() + 1).sum()
}

/// Newest-first selection of `lines` (oldest first) within `room` UTF-8 bytes: the kept
/// lines oldest first and the number left out.
fn newest_within(lines: &[String], room: usize) -> (Vec<String>, usize) {
    let first = newest_fit(lines, room, 1);
    (lines.get(first..).unwrap_or(&[]).to_vec(), first)
}

/// The index of the oldest of `lines` (oldest first) kept when they are taken newest
/// first while their UTF-8 bytes, each plus `per_line` bytes of its own markup (`1` for
/// a line break, `3` for "\n- "), fit in `room`; `lines.len()` when none fits. The lines
/// before that index are the ones left out (Y-8: the budget is kept by bytes).
pub(super) fn newest_fit(lines: &[String], room: usize, per_line: usize) -> usize {
    let mut used = 0usize;
    let mut first = lines.len();
    for (i, l) in lines.iter().enumerate().rev() {
        if used + l.len() + per_line > room {
            break;
        }
        used += l.len() + per_line;
        first = i;
    }
    first
}

fn union_push(out: &mut Vec<String>, seen: &mut std::collections::HashSet<String>, l: String) {
    if seen.insert(l.clone()) {
        out.push(l);
    }
}

/// Merges handoff narratives (oldest first) into one handoff of about `max_bytes` UTF-8
/// bytes (never under 512), by the rules of the module doc. `None` when any non-empty
/// narrative is not a handoff ([`parse`]), or none is left: the caller keeps its own
/// merge. Every line a bound leaves out is counted in its section's marker, with the
/// members' own counts.
pub fn merge_handoffs(narratives: &[&str], max_bytes: usize, opts: MergeOptions) -> Option<String> {
    // a member with no narrative (its summary is all engine record) adds no section
    let parsed: Vec<Parsed> = narratives.iter().filter(|n| !n.trim().is_empty()).map(|n| parse(n)).collect::<Option<Vec<_>>>()?;
    if parsed.is_empty() {
        return None;
    }
    let budget = max_bytes.max(512);
    let n_sec = HANDOFF_SECTIONS.len();
    // every block of every member, in order: oldest member first, inside a member the
    // nested (older) summary first, as the lines came
    let blocks = |n: usize| parsed.iter().flat_map(move |p| p.sections.get(n).into_iter().flatten());
    let mut counts: Vec<(usize, String, usize)> = Vec::new();
    for p in &parsed {
        for (s, k, c) in &p.counts {
            match counts.iter_mut().find(|(s2, k2, _)| s2 == s && k2 == k) {
                Some((_, _, x)) => *x = x.saturating_add(*c),
                None => counts.push((*s, k.clone(), *c)),
            }
        }
    }
    let mut sec: Vec<Vec<String>> = vec![Vec::new(); n_sec + 1];
    // §1: the first task of the oldest, the newest request of the newest
    let lines1: Vec<String> = blocks(1).flatten().map(|l| scrub_message_refs(l)).collect();
    let first = lines1.iter().find(|l| l.starts_with("First task")).cloned();
    let newest = lines1.iter().rev().find(|l| l.starts_with("Newest request") || l.starts_with("First task and newest request")).cloned();
    if let Some(f) = &first {
        sec[1].push(f.clone());
    }
    if let Some(nw) = newest.filter(|nw| Some(nw) != first.as_ref()) {
        sec[1].push(nw);
    }
    // §2
    if opts.constraints_in_record {
        if blocks(2).flatten().next().is_some() {
            sec[2].push(CONSTRAINTS_POINTER.to_string());
        }
    } else {
        let mut seen = std::collections::HashSet::new();
        for l in blocks(2).flatten() {
            union_push(&mut sec[2], &mut seen, l.clone());
        }
    }
    // §6, §8, §9: the newest block only
    for n in [6usize, 8, 9] {
        if let Some(b) = blocks(n).filter(|b| !b.is_empty()).last() {
            sec[n] = b.iter().map(|l| scrub_message_refs(l)).collect();
        }
    }
    // §3 files: each path once, latest use and handle, order of first use
    let mut files: Vec<(String, String, String)> = Vec::new();
    let mut other3: Vec<String> = Vec::new();
    let mut seen3 = std::collections::HashSet::new();
    for l in blocks(3).flatten() {
        let mut put = |p: String, w: String, h: String| match files.iter_mut().find(|(q, _, _)| *q == p) {
            Some(e) => {
                e.1 = w;
                if !h.is_empty() {
                    e.2 = h;
                }
            }
            None => files.push((p, w, h)),
        };
        if let Some((w, ps)) = grouped_line(l) {
            for p in ps {
                put(p, w.clone(), String::new());
            }
        } else if l.starts_with("- artifacts: ") || l.starts_with("- instructions loaded: ") || !l.starts_with("- ") {
            union_push(&mut other3, &mut seen3, l.clone());
        } else if let Some((p, w, h)) = file_line(l) {
            put(p, w, h);
        } else {
            union_push(&mut other3, &mut seen3, l.clone());
        }
    }
    // the artifacts line: the newest only (it lists the handles the engine record indexes)
    if let Some(last_art) = other3.iter().rposition(|l| l.starts_with("- artifacts: ")) {
        let keep = other3.get(last_art).cloned();
        other3.retain(|l| !l.starts_with("- artifacts: "));
        other3.extend(keep);
    }
    // N-6: the instruction documents the session loaded are re-attached or named by
    // their handles in the engine record; the merge names the newest few and counts
    // the rest
    const INSTRUCTIONS_KEPT: usize = 4;
    let n_instr = other3.iter().filter(|l| l.starts_with("- instructions loaded: ")).count();
    if n_instr > INSTRUCTIONS_KEPT {
        let mut seen = 0usize;
        other3.retain(|l| {
            if !l.starts_with("- instructions loaded: ") {
                return true;
            }
            seen += 1;
            seen > n_instr - INSTRUCTIONS_KEPT
        });
        add_count(&mut counts, 3, "instruction documents", n_instr - INSTRUCTIONS_KEPT);
    }
    // lists: union, once each
    let mut lists: Vec<Vec<String>> = vec![Vec::new(); n_sec + 1];
    for n in [4usize, 5, 7] {
        let mut seen = std::collections::HashSet::new();
        for l in blocks(n).flatten() {
            union_push(&mut lists[n], &mut seen, scrub_message_refs(l));
        }
    }
    // issue 13, Y-3: an error a member left unresolved that another member's line says
    // was resolved (a later fold found the call that fixed it) is written once, resolved
    let resolved: std::collections::HashSet<String> = lists[5].iter().filter_map(|l| error_head(l)).filter(|(_, r)| *r).map(|(h, _)| h.to_string()).collect();
    if !resolved.is_empty() {
        lists[5].retain(|l| !matches!(error_head(l), Some((h, false)) if resolved.contains(h)));
    }
    // budget: the fixed sections first (quotes clipped at a quarter), then the shares
    // the plan is kept whole within a quarter; the current work within a quarter too,
    // an eighth in a rollup (the newest member's last assistant text: the live rows
    // after the summary block go on from it)
    let quote_cap = budget / 4;
    let work_cap = if opts.constraints_in_record { budget / 8 } else { quote_cap };
    for (n, cap) in [(6usize, quote_cap), (8, work_cap), (9, 400)] {
        let joined = sec[n].join("\n");
        if joined.len() > cap {
            sec[n] = clip_marked_in(&joined, cap, opts.in_memory).lines().map(str::to_string).collect();
        }
    }
    let total_folded: usize = parsed.iter().map(|p| p.folded).sum();
    let header = format!("{HEADER_START}{total_folded} messages folded, merged from {} summaries; clipped parts are marked).", parsed.len());
    let present = |n: usize, sec: &Vec<Vec<String>>| match n {
        3 => !files.is_empty() || !other3.is_empty(),
        4 | 5 | 7 => !lists[n].is_empty(),
        _ => !sec[n].is_empty(),
    } || counts.iter().any(|(s, _, _)| *s == n);
    // titles, and room for one count marker in each list section
    let titles: usize = (1..=n_sec).filter(|&n| present(n, &sec)).map(|n| section_header(n).len() + 1 + if matches!(n, 3 | 4 | 5 | 7) { 110 } else { 0 }).sum();
    let fixed: usize = [1usize, 2, 6, 8, 9].iter().map(|&n| bytes_of(&sec[n])).sum::<usize>() + bytes_of(&other3);
    let mut room = budget.saturating_sub(header.len() + titles + fixed);
    // everything fits without a new count marker: the room kept for markers is not needed
    let bare: usize = (1..=n_sec).filter(|&n| present(n, &sec)).map(|n| section_header(n).len() + 1 + if counts.iter().any(|(s, _, _)| *s == n) { 110 } else { 0 }).sum();
    let need: usize = bytes_of(&render_files(&files, false)) + [4usize, 5, 7].iter().map(|&n| bytes_of(&lists[n])).sum::<usize>();
    if header.len() + bare + fixed + need <= budget {
        room = need;
    }
    // the markers' room is an estimate: room a first fill leaves unused is given to
    // the lists once more (the second fill is kept when it is within the budget)
    let fill = |room: usize| fill_lists(Fill { room, files: &files, other3: &other3, lists: &lists, sec: &sec, counts: &counts, header: &header, in_memory: opts.in_memory });
    let (mut out, dropped) = fill(room);
    if dropped && out.len() + 32 < budget {
        let (again, _) = fill(room + (budget - out.len() - 16));
        if again.len() <= budget {
            out = again;
        }
    }
    if out.len() > budget {
        let cut = crate::evict::floor_boundary(&out, budget.saturating_sub(48));
        let cut = out.get(..cut).and_then(|s| s.rfind('\n')).unwrap_or(cut);
        out.truncate(cut);
        out.push_str("\n[handoff summary cut at the summary budget]");
    }
    Some(out)
}

/// What [`fill_lists`] fills: the room left for the lists (UTF-8 bytes), the parsed
/// sections and the counts so far.
struct Fill<'a> {
    room: usize,
    files: &'a [(String, String, String)],
    other3: &'a [String],
    lists: &'a [Vec<String>],
    sec: &'a [Vec<String>],
    counts: &'a [(usize, String, usize)],
    header: &'a str,
    in_memory: bool,
}

/// The merged handoff with its lists filled within `room`: the text, and whether a list
/// left lines out.
fn fill_lists(x: Fill<'_>) -> (String, bool) {
    let Fill { mut room, files, other3, header, in_memory, .. } = x;
    let mut lists: Vec<Vec<String>> = x.lists.to_vec();
    let mut sec: Vec<Vec<String>> = x.sec.to_vec();
    let mut counts: Vec<(usize, String, usize)> = x.counts.to_vec();
    let n_sec = HANDOFF_SECTIONS.len();
    let mut any_dropped = false;
    // N-5, Y-3: what is left goes to the lists, files first (every path of the folded
    // calls is floor), with a fifth of the room kept for the decisions (what of it they
    // need); each list takes what it needs within its share, a share not used passes on
    let file_share = room.saturating_sub(bytes_of(&lists[7]).min(room / 5));
    let mut file_lines = render_files(&files, false);
    // one line per path when the lists fit beside them, else grouped by use
    let lists_need: usize = [4usize, 5, 7].iter().map(|&n| bytes_of(&lists[n])).sum();
    if bytes_of(&file_lines) + lists_need > room {
        file_lines = render_files(&files, true);
    }
    if bytes_of(&file_lines) > file_share {
        // the oldest paths are counted: fewest dropped so the grouped lines fit
        let (mut lo, mut hi) = (0usize, files.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if bytes_of(&render_files(files.get(mid..).unwrap_or(&[]), true)) <= file_share {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        file_lines = render_files(files.get(lo..).unwrap_or(&[]), true);
        add_count(&mut counts, 3, "files", lo);
        any_dropped |= lo > 0;
    }
    room = room.saturating_sub(bytes_of(&file_lines));
    sec[3] = file_lines;
    sec[3].extend(other3.iter().cloned());
    // issue 13: the unresolved errors first (what the next engineer needs first), the
    // newest within a fifth of the room (an error a later fold fixed is resolved by then,
    // [`merge_handoffs`]); then the decisions (what a loop of folds loses first), then the
    // other errors, then the calls
    let errors = std::mem::take(&mut lists[5]);
    let open: Vec<String> = errors.iter().filter(|l| l.ends_with(NOT_RESOLVED)).cloned().collect();
    let (open_kept, _) = newest_within(&open, room / 5);
    room = room.saturating_sub(bytes_of(&open_kept));
    let decisions = std::mem::take(&mut lists[7]);
    let (kept7, dropped7) = newest_within(&decisions, room);
    room = room.saturating_sub(bytes_of(&kept7));
    add_count(&mut counts, 7, "decision sentences", dropped7);
    sec[7] = kept7;
    let first: std::collections::HashSet<&String> = open_kept.iter().collect();
    let rest: Vec<String> = errors.iter().filter(|l| !first.contains(l)).cloned().collect();
    let (rest_kept, dropped5) = newest_within(&rest, room);
    room = room.saturating_sub(bytes_of(&rest_kept));
    // §5 in the members' order (the union holds each line once)
    let kept5: std::collections::HashSet<&String> = open_kept.iter().chain(&rest_kept).collect();
    sec[5] = errors.iter().filter(|l| kept5.contains(l)).cloned().collect();
    add_count(&mut counts, 5, "errors", dropped5);
    let calls = std::mem::take(&mut lists[4]);
    let (kept4, dropped4) = newest_within(&calls, room);
    add_count(&mut counts, 4, "calls", dropped4);
    sec[4] = kept4;
    any_dropped |= dropped7 + dropped5 + dropped4 > 0;
    let kept_where = if in_memory { "the folded rows are in memory" } else { "the folded rows are not kept in memory" };
    let mut out = header.to_string();
    for n in 1..=n_sec {
        let marks: Vec<&(usize, String, usize)> = counts.iter().filter(|(s, _, _)| *s == n).collect();
        if sec[n].is_empty() && marks.is_empty() {
            continue;
        }
        out.push('\n');
        out.push_str(&section_header(n));
        for l in &sec[n] {
            out.push('\n');
            out.push_str(l);
        }
        for (_, kind, c) in marks {
            out.push_str(&format!("\n[clipped: {c} more {kind} not shown here (rollup budget); {kept_where}]"));
        }
    }
    (out, any_dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn y9_message_refs_are_scrubbed() {
        assert_eq!(scrub_message_refs("First task (message #1, 84 bytes): verbatim"), "First task (84 bytes): verbatim");
        assert_eq!(scrub_message_refs("continue the newest request (message #36)."), "continue the newest request.");
        assert_eq!(scrub_message_refs("see message #3 and message #x"), "see an earlier message and message #x");
    }

    fn handoff(i: usize, paths: &[usize]) -> String {
        let mut s = format!("{HEADER_START}10 messages folded; clipped parts are marked).\n[§1 Primary request and intent]\nNewest request (message #{i}, 9 bytes): verbatim in the engine record below.\n[§3 Files and artifacts]");
        for p in paths {
            s.push_str(&format!("\n- /repo/src/mod_{p}.rs: read by read_file"));
        }
        s.push_str(&format!("\n[§7 Decisions and findings]\n- Finding {i}.\n[§9 Next step]\ncontinue the newest request (message #{i})."));
        s
    }

    #[test]
    fn y3_n5_merged_handoff_keeps_every_path_once_and_one_next_step() {
        let a = handoff(3, &[1, 2, 3]);
        let b = handoff(9, &[3, 4, 5]);
        let m = merge_handoffs(&[&a, &b], 4_000, MergeOptions { in_memory: true, constraints_in_record: true }).unwrap();
        assert_eq!(m.matches(HEADER_START).count(), 1, "{m}");
        assert_eq!(m.matches("[§9 Next step]").count(), 1, "{m}");
        for p in 1..=5 {
            assert_eq!(m.matches(&format!("/repo/src/mod_{p}.rs")).count(), 1, "{m}");
        }
        assert!(!m.contains("message #"), "{m}");
        assert!(m.contains("- Finding 3.\n- Finding 9."), "{m}");
        assert!(m.contains("20 messages folded, merged from 2 summaries"), "{m}");
        // a prose member: no merge
        assert!(merge_handoffs(&[&a, "Summary: all fine."], 4_000, MergeOptions { in_memory: true, constraints_in_record: true }).is_none());
    }

    #[test]
    fn y3_n5_paths_over_their_share_are_grouped_then_counted() {
        let a = handoff(3, &(0..200).collect::<Vec<_>>());
        let m = merge_handoffs(&[&a, &handoff(4, &[200])], 2_000, MergeOptions { in_memory: true, constraints_in_record: true }).unwrap();
        assert!(m.contains("- (read by read_file): /repo/src/mod_"), "{m}");
        assert!(m.contains("/repo/src/mod_200.rs"), "{m}");
        let c = m.lines().find_map(|l| count_marker(l).filter(|(_, k)| k == "files")).map(|(n, _)| n).unwrap();
        let listed = (0..=200).filter(|p| m.contains(&format!("/repo/src/mod_{p}.rs"))).count();
        assert_eq!(c + listed, 201, "{m}");
        assert!(m.len() <= 2_000);
        // the count is carried on by the next merge
        let m2 = merge_handoffs(&[&m, &handoff(5, &[201])], 2_000, MergeOptions { in_memory: true, constraints_in_record: true }).unwrap();
        let c2 = m2.lines().find_map(|l| count_marker(l).filter(|(_, k)| k == "files")).map(|(n, _)| n).unwrap();
        let listed2 = (0..=201).filter(|p| m2.contains(&format!("/repo/src/mod_{p}.rs"))).count();
        assert_eq!(c2 + listed2, 202, "{m2}");
    }

    #[test]
    fn y9_a_clipped_nested_quote_leaves_no_partial_line() {
        let inner = handoff(2, &[1, 2, 3, 4]);
        let cut = inner.find("mod_2").unwrap() + 2;
        let tail = inner.find("mod_4").unwrap() + 3;
        let outer = format!(
            "{HEADER_START}5 messages folded; clipped parts are marked).\n[§1 Primary request and intent]\nEarlier summary folded with these rows:\n{}\n[... 40 bytes clipped from this quote; the whole text is in memory ...]\n{}\n[§3 Files and artifacts]\n- /repo/src/mod_9.rs: read by read_file",
            &inner[..cut],
            &inner[tail..]
        );
        let m = merge_handoffs(&[&outer], 4_000, MergeOptions { in_memory: true, constraints_in_record: false }).unwrap();
        assert!(!m.contains("Earlier summary folded"), "{m}");
        assert!(m.lines().all(|l| !l.starts_with("_") && !l.starts_with("4.rs") && !l.starts_with("- /repo/src/mo:")), "{m}");
        assert!(m.contains("/repo/src/mod_1.rs") && m.contains("/repo/src/mod_9.rs"), "{m}");
    }
}
