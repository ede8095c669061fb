//! The deterministic handoff summary (Y-6; also the built-in default summarizer).

use crate::evict::{floor_boundary, truncate};
use crate::transcript::{Block, Message, Role};
use super::ledger::narrative_part;

/// The deterministic handoff summary (Y-6; also the built-in default summarizer):
/// extractive, no model, bounded to about `max_bytes` UTF-8 bytes. The first user
/// request and the newest ones verbatim (each clipped to 2,000 bytes; a middle part is
/// counted when over budget), tool calls counted per tool with the newest 20 named
/// with their outcome, and the last assistant note.
pub fn mechanical_summary(rows: &[(usize, &Message)], max_bytes: usize) -> String {
    let mut requests: Vec<String> = Vec::new();
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut outcomes: crate::sorted::SortedMap<String, bool> = crate::sorted::SortedMap::new();
    let mut last_note = String::new();
    let mut earlier = Vec::new();
    for (_, m) in rows {
        if m.is_summary() {
            earlier.push(narrative_part(&m.text()).to_string());
            continue;
        }
        for b in &m.blocks {
            match b {
                Block::ToolCall { id, name, arguments } => calls.push((id.clone(), name.clone(), truncate(arguments, 120))),
                Block::ToolResult { call_id, is_error, .. } => {
                    outcomes.insert(call_id.clone(), *is_error);
                }
                _ => {}
            }
        }
        if m.starts_turn() {
            let t = m.text();
            if !t.trim().is_empty() {
                requests.push(truncate(&t, 2_000));
            }
        } else if m.role == Role::Assistant {
            let t = m.text();
            if !t.trim().is_empty() {
                last_note = truncate(&t, 600);
            }
        }
    }
    let mut out = format!("Handoff summary (mechanical, {} messages folded).", rows.len());
    let budget = max_bytes.max(1_024);
    for e in earlier.iter().rev().take(1) {
        out.push_str("\nEarlier summary:\n");
        out.push_str(&e[..floor_boundary(e, budget / 3)]);
    }
    if !requests.is_empty() {
        out.push_str("\nUser requests (verbatim):");
        // the first request, then the newest ones that fit half the budget
        let req_budget = budget / 2;
        let mut picked: Vec<usize> = vec![0];
        let mut used = requests[0].len();
        for i in (1..requests.len()).rev() {
            if used + requests[i].len() > req_budget {
                break;
            }
            used += requests[i].len();
            picked.push(i);
        }
        picked[1..].reverse();
        let omitted = requests.len() - picked.len();
        for (k, &i) in picked.iter().enumerate() {
            if k == 1 && omitted > 0 {
                out.push_str(&format!("\n- [{omitted} more requests omitted]"));
            }
            out.push_str("\n- ");
            out.push_str(&requests[i]);
        }
        if picked.len() == 1 && omitted > 0 {
            out.push_str(&format!("\n- [{omitted} more requests omitted]"));
        }
    }
    if !calls.is_empty() {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for (_, name, _) in &calls {
            match counts.iter_mut().find(|(n, _)| n == name) {
                Some((_, k)) => *k += 1,
                None => counts.push((name.clone(), 1)),
            }
        }
        out.push_str(&format!("\nTool calls ({}): {}", calls.len(), counts.iter().map(|(n, k)| format!("{n} x{k}")).collect::<Vec<_>>().join(", ")));
        let skip = calls.len().saturating_sub(20);
        for (id, name, args) in &calls[skip..] {
            let outcome = match outcomes.get(id) {
                Some(true) => "error",
                Some(false) => "ok",
                None => "no result",
            };
            out.push_str(&format!("\n- {name}({args}) -> {outcome}"));
        }
    }
    if !last_note.is_empty() {
        out.push_str("\nLast assistant note: ");
        out.push_str(&last_note);
    }
    if out.len() > budget {
        let cut = floor_boundary(&out, budget);
        out.truncate(cut);
        out.push_str("\n[mechanical summary truncated]");
    }
    out
}

/// Mechanical rollup: the merged summaries' narrative parts joined, bounded to
/// `max_bytes` (keeps the newest text when over).
pub fn mechanical_merge(texts: &[String], max_bytes: usize) -> String {
    let joined = texts.iter().map(|t| narrative_part(t).trim().to_string()).collect::<Vec<_>>().join("\n\n");
    if joined.len() <= max_bytes {
        return joined;
    }
    let cut = crate::evict::ceil_boundary(&joined, joined.len() - max_bytes);
    format!("[earlier summary text omitted]\n{}", &joined[cut..])
}
