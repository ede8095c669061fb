//! What a rollup carries of the user text its members carried (Y-3, Y-4, N-1, S-9,
//! N-4), and the check of that on every rollup rewrite.
//!
//! A member summary holds user text in its deterministic tail only (the floor writes it
//! there even when the narrative quotes it, [`super::floor::floor_items`]): the
//! session's first task ([`FIRST_TASK_KIND`]), the newest request ([`NEWEST_KIND`]),
//! other folded user text whole (`carried user text`), and one-line markers of text it
//! clipped or only counted (whole in memory, M-1), plus the constraint sentences.
//!
//! A rollup carries:
//! 1. the session's first task whole, always, as a [`FIRST_TASK_KIND`] item (the oldest
//!    member's; a later member's item of that kind, written by an older engine for a
//!    fold's own first row, is ordinary user text);
//! 2. the newest request whole, when no live row holds a newer one (else it is
//!    ordinary user text);
//! 3. every constraint sentence, whole (the floor);
//! 4. other user text: with memory projection on (every folded user text is projected
//!    whole when it is folded, M-1), quoted whole newest first within a budget, then
//!    clipped with a marker ([`ROLLUP_CLIPPED_PREFIX`]) within another, the rest (and
//!    the members' older markers beyond that budget) counted by one line
//!    ([`collapsed_line`]), so a rollup is bounded whatever the session's length; with
//!    projection off every one whole (no copy exists elsewhere: the rollup grows, and
//!    the engine reports `over_window` or `cannot_fit` truly).

use super::ledger::{carried_items, item};
use crate::error::{Error, ErrorCode, Result};
use crate::nothing_lost::{contains_bounded, ATTACHMENT_PREFIX, CONSTRAINT_PREFIX, FIRST_TASK_KIND, NEWEST_KIND, UNQUOTED_PREFIX};

/// Prefix of the marker of a user text a rollup clipped (N-1): the line goes on with
/// `<16 hex digits: FNV-1a of the quoted text>): <head> [+<k> bytes in memory]`. The
/// text is whole in memory (it was projected when it was folded, M-1).
pub const ROLLUP_CLIPPED_PREFIX: &str = "User text (clipped; whole in memory, rollup fnv ";

/// End of the line a rollup writes to count the user texts it neither quotes nor clips
/// ([`collapsed_line`]).
const COLLAPSED_END: &str = " blocks quoted or clipped by earlier summaries";

/// Whether `line` is a rollup's count line ([`collapsed_line`]): `User texts not quoted
/// (whole in memory): <n> blocks quoted or clipped by earlier summaries`.
pub fn is_collapsed_line(line: &str) -> bool {
    line.strip_prefix(crate::nothing_lost::UNQUOTED_PREFIX).and_then(|r| r.strip_suffix(COLLAPSED_END)).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The line counting `n` user text blocks earlier summaries carried that a rollup
/// neither quotes nor clips: `User texts not quoted (whole in memory): <n> blocks quoted
/// or clipped by earlier summaries`.
pub fn collapsed_line(n: usize) -> String {
    format!("{UNQUOTED_PREFIX}{n}{COLLAPSED_END}")
}

/// The count of a [`collapsed_line`], `None` for any other line.
pub fn collapsed_count(line: &str) -> Option<usize> {
    line.strip_prefix(UNQUOTED_PREFIX)?.strip_suffix(COLLAPSED_END)?.parse().ok()
}

/// The blocks a marker line stands for: a not-quoted run line's `(<k> blocks)`, a
/// [`collapsed_line`]'s count, else 1.
fn line_blocks(line: &str) -> usize {
    if let Some(n) = collapsed_count(line) {
        return n;
    }
    line.strip_prefix(UNQUOTED_PREFIX)
        .and_then(|l| l.strip_suffix(" blocks)"))
        .and_then(|l| l.rsplit_once(" (").and_then(|(_, n)| n.parse().ok()))
        .unwrap_or(1)
}

/// What a [`rollup_marker`] says after its hash (M-2, N-1; break3 finding 3): the hash
/// is the engine's check of the quoted text, not a memory handle; recall (a text
/// search) finds the whole text by the words the marker quotes.
pub const ROLLUP_MARKER_RECALL: &str = "; recall finds it by these words";

/// The marker of a user text a rollup clips ([`ROLLUP_CLIPPED_PREFIX`]): one line, the
/// text's head (at most 120 UTF-8 bytes, up to its first line break) and its tail (the
/// end of its last line, [`super::floor::marker_parts`]), saying recall finds the whole
/// text by those words ([`ROLLUP_MARKER_RECALL`]).
pub fn rollup_marker(text: &str) -> String {
    let (head, tail) = super::floor::marker_parts(text);
    format!(
        "{ROLLUP_CLIPPED_PREFIX}{:016x}{ROLLUP_MARKER_RECALL}): {head} [+{} bytes in memory]{}",
        crate::transcript::fnv1a(text.as_bytes()),
        text.len() - head.len() - tail.len(),
        super::floor::tail_suffix(tail)
    )
}

/// Whether `text` is whole on its [`rollup_marker`] (one line within the head bytes):
/// such a text is quoted whole instead (a marker saying `clipped ... [+0 bytes in
/// memory]` would be longer and untrue).
pub fn fits_marker_head(text: &str) -> bool {
    text.len() <= super::floor::CLIPPED_HEAD_BYTES && !text.contains('\n')
}

/// The user text the members of a rollup carry (oldest member first), read from their
/// deterministic tails.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemberUserText {
    /// The session's first task: the [`FIRST_TASK_KIND`] items of the oldest member
    /// that has any (one per text block of the first user message).
    pub first_task: Vec<String>,
    /// The newest request, when no live row holds a newer one.
    pub newest: Option<String>,
    /// Other user text carried whole, oldest first, de-duplicated.
    pub texts: Vec<String>,
    /// Marker lines (clipped, not-quoted runs), oldest first, without counted lines.
    pub lines: Vec<String>,
    /// Blocks the members' counted lines ([`collapsed_line`]) stand for.
    pub collapsed: usize,
    /// Every constraint sentence the members carry (quoted as data), in order, once.
    pub constraints: Vec<String>,
    /// The members' other items (paths, plan, rehydrated documents, attachment lines),
    /// for [`super::floor::floor_items`] and [`super::floor::rehydration`].
    pub rest: Vec<(String, String)>,
}

impl MemberUserText {
    /// Reads the members' carried items. `newest_live`: a row after the summary block
    /// holds user text (so a member's newest request is no longer the newest).
    pub fn read(members: &[String], newest_live: bool) -> MemberUserText {
        let mut m = MemberUserText::default();
        let mut seen = std::collections::HashSet::new();
        let mut seen_c = std::collections::HashSet::new();
        let mut push_text = |m: &mut MemberUserText, t: String| {
            if seen.insert(t.clone()) {
                m.texts.push(t);
            }
        };
        for s in members {
            let first_member = m.first_task.is_empty();
            // the handoff's section 2 lists constraint sentences as `- <sentence>` (the
            // floor then leaves them out of the tail): they are carried too, a
            // hard-wrapped one with its lines
            for c in super::floor::section2_bullets(super::ledger::narrative_part(s)) {
                if seen_c.insert(c.to_string()) {
                    m.constraints.push(c.to_string());
                }
            }
            for (kind, text) in carried_items(s) {
                match kind.as_str() {
                    FIRST_TASK_KIND if first_member => m.first_task.push(text),
                    FIRST_TASK_KIND if m.first_task.contains(&text) => {}
                    NEWEST_KIND if !newest_live => {
                        if let Some(old) = m.newest.replace(text) {
                            push_text(&mut m, old);
                        }
                    }
                    FIRST_TASK_KIND | NEWEST_KIND | "carried user text" | "carried request" => push_text(&mut m, text),
                    super::floor::CONSTRAINTS_KIND | "carried constraint" => {
                        for c in text.lines().filter(|l| !l.trim().is_empty()) {
                            if seen_c.insert(c.to_string()) {
                                m.constraints.push(c.to_string());
                            }
                        }
                    }
                    "clipped user text" => {
                        if let Some(c) = text.strip_prefix(CONSTRAINT_PREFIX) {
                            if seen_c.insert(c.to_string()) {
                                m.constraints.push(c.to_string());
                            }
                        } else if text.starts_with(ATTACHMENT_PREFIX) {
                            m.rest.push((kind, text));
                        } else if let Some(n) = collapsed_count(&text) {
                            m.collapsed = m.collapsed.saturating_add(n);
                        } else if !m.lines.contains(&text) {
                            m.lines.push(text);
                        }
                    }
                    _ => m.rest.push((kind, text)),
                }
            }
        }
        // a text that is also the first task or the newest request is quoted once
        let (ft, nw) = (m.first_task.clone(), m.newest.clone());
        m.texts.retain(|t| !ft.contains(t) && Some(t) != nw.as_ref());
        m
    }

    /// UTF-8 bytes any rollup of these members must carry verbatim (C-8 with N-1 / S-9):
    /// the first task, the newest request and the constraint sentences, and with
    /// `memory` off every other text and marker line too.
    pub fn required_bytes(&self, memory: bool) -> usize {
        let mut n = self.first_task.iter().map(String::len).sum::<usize>() + self.newest.as_ref().map_or(0, String::len);
        n += self.constraints.iter().map(|c| c.len() + 1).sum::<usize>();
        if !memory {
            n += self.texts.iter().map(String::len).sum::<usize>() + self.lines.iter().map(|l| l.len() + 1).sum::<usize>();
        }
        n
    }

    /// The rollup's user-text floor (see the module doc): the items and lines, and the
    /// constraint sentences to carry (the members' and those of every text it does not
    /// quote whole), in order, once. `budget`: UTF-8 bytes of the whole quotes and,
    /// separately, of the marker lines (`usize::MAX` with `memory` off: all whole).
    pub fn floor(&self, budget: usize, memory: bool) -> (String, Vec<String>) {
        let mut out = String::new();
        for t in &self.first_task {
            out.push_str(&item(FIRST_TASK_KIND, t));
        }
        if let Some(t) = &self.newest {
            out.push_str(&item(NEWEST_KIND, t));
        }
        let mut constraints = self.constraints.clone();
        // (index, whole?) decided newest first
        let mut whole = vec![!memory; self.texts.len()];
        let mut marked: Vec<String> = Vec::new();
        let mut collapsed = self.collapsed;
        let (mut whole_used, mut clip_used) = (0usize, 0usize);
        let mut unquoted: Vec<&str> = Vec::new();
        if memory {
            for (i, t) in self.texts.iter().enumerate().rev() {
                if whole_used.saturating_add(t.len()) <= budget {
                    whole_used = whole_used.saturating_add(t.len());
                    if let Some(w) = whole.get_mut(i) {
                        *w = true;
                    }
                    continue;
                }
                // a short text is quoted whole within the markers' budget (N-1)
                if fits_marker_head(t) && clip_used.saturating_add(t.len()) <= budget {
                    clip_used = clip_used.saturating_add(t.len());
                    if let Some(w) = whole.get_mut(i) {
                        *w = true;
                    }
                    continue;
                }
                unquoted.push(t);
                let mk = rollup_marker(t);
                if clip_used.saturating_add(mk.len()) <= budget {
                    clip_used = clip_used.saturating_add(mk.len());
                    marked.push(mk);
                } else {
                    collapsed = collapsed.saturating_add(1);
                }
            }
            marked.reverse();
        }
        for (t, w) in self.texts.iter().zip(&whole) {
            if *w {
                out.push_str(&item("carried user text", t));
            }
        }
        // the members' markers, newest first within what the clipped texts left
        let mut kept_lines = vec![!memory; self.lines.len()];
        if memory {
            for (i, l) in self.lines.iter().enumerate().rev() {
                if clip_used.saturating_add(l.len()) <= budget {
                    clip_used = clip_used.saturating_add(l.len());
                    if let Some(k) = kept_lines.get_mut(i) {
                        *k = true;
                    }
                } else {
                    collapsed = collapsed.saturating_add(line_blocks(l));
                }
            }
        }
        if collapsed > 0 {
            out.push('\n');
            out.push_str(&collapsed_line(collapsed));
        }
        for (l, k) in self.lines.iter().zip(&kept_lines) {
            if *k {
                out.push('\n');
                out.push_str(l);
            }
        }
        for mk in marked {
            out.push('\n');
            out.push_str(&mk);
        }
        // S-9, N-5: the constraint sentences of a text no longer quoted whole
        let mut seen: std::collections::HashSet<String> = constraints.iter().cloned().collect();
        for t in unquoted.into_iter().rev() {
            for s in crate::nothing_lost::constraint_sentences(t) {
                if seen.insert(s.to_string()) {
                    constraints.push(s.to_string());
                }
            }
        }
        (out, constraints)
    }
}

fn lost(what: &str) -> Error {
    Error::new(ErrorCode::InvalidRewrite, format!("user_text_lost: {what}"))
}

/// Checks N-1 / S-9 on a rewrite that drops earlier summaries (a rollup, or a fold of a
/// summary row): `members` the dropped summaries' texts (oldest first), `written` the
/// texts of the summaries the rewrite writes, `newest_live` as for
/// [`MemberUserText::read`], `memory` whether memory projection is on. The first task
/// the members carry must be carried again as a [`FIRST_TASK_KIND`] item, verbatim; the
/// newest request and every constraint sentence verbatim; every other user text the
/// members carry whole must be quoted whole, or (memory on) clipped with a rollup
/// marker or counted; every marker line carried again or (memory on) counted.
///
/// Errors: `invalid_rewrite` whose message starts `user_text_lost:` and says what is
/// missing. Time: linear in the texts (the written text is searched once per carried
/// text).
pub fn check_rollup(members: &[String], written: &[String], newest_live: bool, memory: bool) -> Result<()> {
    let m = MemberUserText::read(members, newest_live);
    if m.first_task.is_empty() && m.newest.is_none() && m.texts.is_empty() && m.lines.is_empty() && m.collapsed == 0 && m.constraints.is_empty() {
        return Ok(());
    }
    let joined = written.join("\n\n");
    let items: Vec<(String, String)> = written.iter().flat_map(|w| carried_items(w)).collect();
    for ft in &m.first_task {
        if !items.iter().any(|(k, t)| k == FIRST_TASK_KIND && t == ft) {
            return Err(lost("the session's first task an earlier summary carried is not carried verbatim (as its first-task item) by the rewrite"));
        }
    }
    if let Some(nw) = &m.newest {
        if !contains_bounded(&joined, nw) {
            return Err(lost("the newest request an earlier summary carried is not quoted verbatim by the rewrite"));
        }
    }
    let texts_c = m.texts.iter().flat_map(|t| crate::nothing_lost::constraint_sentences(t));
    for c in m.constraints.iter().map(String::as_str).chain(texts_c) {
        if !joined.contains(c) {
            let n = crate::evict::floor_boundary(c, 60);
            return Err(lost(&format!("the user constraint sentence {:?} an earlier summary carried is not quoted verbatim by the rewrite", c.get(..n).unwrap_or(""))));
        }
    }
    let mut deficit = m.collapsed;
    for t in &m.texts {
        if contains_bounded(&joined, t) {
            continue;
        }
        if !memory {
            return Err(lost("a user text an earlier summary quoted is not quoted whole by the rewrite while projectMemory is off, so it is kept whole nowhere"));
        }
        let mk = rollup_marker(t);
        if !joined.contains(&mk) {
            deficit = deficit.saturating_add(1);
        }
    }
    for l in &m.lines {
        if !joined.contains(l.as_str()) {
            if !memory {
                return Err(lost("a user text marker an earlier summary carried is dropped by the rewrite while projectMemory is off"));
            }
            deficit = deficit.saturating_add(line_blocks(l));
        }
    }
    let counted: usize = items.iter().filter(|(k, _)| k == "clipped user text").filter_map(|(_, l)| collapsed_count(l)).sum();
    if deficit > counted {
        return Err(lost(&format!("{deficit} user text blocks earlier summaries carried are neither quoted, clipped with a marker nor counted by the rewrite (it counts {counted})")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize::ledger::checked_marker;

    fn summary(body: &str) -> String {
        format!("narrative{}{body}", checked_marker(body))
    }

    #[test]
    fn y3_rollup_floor_keeps_first_task_and_bounds_the_rest() {
        let mut members = vec![summary(&item(FIRST_TASK_KIND, "First task: write the report."))];
        for i in 0..40 {
            members.push(summary(&item("carried user text", &format!("Request {i}: {}", "more detail please. ".repeat(20)))));
        }
        let m = MemberUserText::read(&members, true);
        assert_eq!(m.first_task, vec!["First task: write the report.".to_string()]);
        assert_eq!(m.texts.len(), 40);
        let (floor, _) = m.floor(2_000, true);
        assert!(floor.len() < 6_000, "{}", floor.len());
        assert!(floor.contains("Request 39: "));
        assert!(floor.contains(&collapsed_line(40 - 4 - 5)) || floor.contains(UNQUOTED_PREFIX));
        let written = vec![summary(&floor)];
        assert!(check_rollup(&members, &written, true, true).is_ok());
        // without the first-task item the check fails
        let bad = vec![summary(&floor.replace(FIRST_TASK_KIND, "carried user text"))];
        assert!(check_rollup(&members, &bad, true, true).unwrap_err().message.starts_with("user_text_lost: the session's first task"));
        // projection off: every text whole
        let (all, _) = m.floor(usize::MAX, false);
        assert!((0..40).all(|i| all.contains(&format!("Request {i}: "))));
        assert!(check_rollup(&members, &written, true, false).is_err());
    }

    /// M-2, N-1 (break3 finding 3): a short user text past the whole-quote budget is
    /// quoted whole, not "clipped ... [+0 bytes in memory]"; a long one's marker says
    /// recall finds it by the words it quotes (its hash is a check, not a handle).
    #[test]
    fn n1_m2_short_texts_are_whole_and_a_marker_names_how_recall_finds_the_text() {
        let mut members = vec![summary(&item(FIRST_TASK_KIND, "First task: write the report."))];
        for i in 0..30 {
            members.push(summary(&item("carried user text", &format!("Turn {i}: my favourite colour today is colour-{i}."))));
        }
        members.push(summary(&item("carried user text", &format!("Long request: {}", "more detail please. ".repeat(20)))));
        let m = MemberUserText::read(&members, true);
        let (floor, _) = m.floor(600, true);
        assert!(!floor.contains("[+0 bytes in memory]"), "{floor}");
        assert!(floor.lines().filter(|l| l.starts_with(ROLLUP_CLIPPED_PREFIX)).all(|l| l.contains(ROLLUP_MARKER_RECALL)), "{floor}");
        assert!(floor.contains("Turn 29: my favourite colour today is colour-29."), "{floor}");
        // past the whole quotes' budget, short texts still quoted whole (in the markers' room)
        assert!(floor.contains("[carried user text, 48 bytes]\nTurn 20: my favourite colour today is colour-20."), "{floor}");
        assert!(check_rollup(&members, &[summary(&floor)], true, true).is_ok());
        let mk = rollup_marker(&format!("Long request: {}", "more detail please. ".repeat(20)));
        assert!(mk.contains("recall finds it by these words): Long request: more detail please."), "{mk}");
        assert!(!fits_marker_head(&"x".repeat(121)) && fits_marker_head("short") && !fits_marker_head("a\nb"));
    }

    const FIRST_T: &str = "First task: write the report.";
    /// A request longer than the head a clip marker keeps.
    const R1: &str = "Request 1: keep the intro, but tighten its second paragraph and move the history part to an appendix at the end of the document.";
    /// A request whose constraint sentence is past the head a clip marker keeps.
    const R2: &str = "Request 2: rework the second chapter so that it reads well for a newcomer who has never seen the project, with examples. You must never change the title.";


    #[test]
    fn n1_s9_rollup_check_fails_a_rollup_that_drops_the_first_task_or_a_request() {
        let members = vec![
            summary(&format!("{}{}", item(FIRST_TASK_KIND, FIRST_T), item("carried user text", R1))),
            summary(&format!("{}{}", item("carried user text", R2), item("carried constraints", "You must never change the title."))),
        ];
        let good = vec![summary(&format!(
            "{}{}{}",
            item(FIRST_TASK_KIND, FIRST_T),
            item("carried user text", R1),
            item("carried user text", R2)
        ))];
        assert!(check_rollup(&members, &good, true, true).is_ok());
        assert!(check_rollup(&members, &good, true, false).is_ok());
        // the first task only in the narrative (no item): a later compaction could not tell
        let narrative_only = vec![format!("{FIRST_T}\n{}", good[0].replace(FIRST_TASK_KIND, "carried user text"))];
        let e = check_rollup(&members, &narrative_only, true, true).unwrap_err();
        assert!(e.message.starts_with("user_text_lost: the session's first task"), "{}", e.message);
        // a request dropped with no marker and no count
        let dropped = vec![summary(&format!("{}{}", item(FIRST_TASK_KIND, FIRST_T), item("carried user text", R2)))];
        let e = check_rollup(&members, &dropped, true, true).unwrap_err();
        assert!(e.message.contains("neither quoted, clipped with a marker nor counted"), "{}", e.message);
        // clipped with a rollup marker: fine with memory, lost without
        let marked = vec![summary(&format!(
            "{}{}\n{}",
            item(FIRST_TASK_KIND, FIRST_T),
            item("carried user text", R2),
            rollup_marker(R1)
        ))];
        assert!(marked[0].contains(ROLLUP_CLIPPED_PREFIX));
        assert!(check_rollup(&members, &marked, true, true).is_ok());
        let e = check_rollup(&members, &marked, true, false).unwrap_err();
        assert!(e.message.contains("projectMemory is off"), "{}", e.message);
        // the marker quotes the text's tail too (the rule at its end, verbatim)
        assert!(rollup_marker(R2).ends_with(" ... You must never change the title."), "{}", rollup_marker(R2));
        // a constraint sentence dropped (a head-only marker, as before the tail)
        let head_only = rollup_marker(R2).replace(" ... You must never change the title.", "");
        let no_constraint = vec![summary(&format!("{}{}\n{}", item(FIRST_TASK_KIND, FIRST_T), item("carried user text", R1), head_only))];
        let e = check_rollup(&members, &no_constraint, true, true).unwrap_err();
        assert!(e.message.contains("constraint sentence"), "{}", e.message);
    }
}
