//! Findings of the breaker session on Codex `apply_patch` calls: N-5 (the file-path floor),
//! T-3 (the files a call touched), and untrusted input that must stay linear.

mod common;
use common::*;
use context_compactor::config::Config;
use context_compactor::engine::{Outcome, Reply};
use context_compactor::formats::Format;
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};

fn user(t: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]})
}
fn asst(t: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]})
}
fn patch(id: &str, body: &str, out: &str) -> [Value; 2] {
    [json!({"type": "custom_tool_call", "call_id": id, "name": "apply_patch", "input": body}), json!({"type": "custom_tool_call_output", "call_id": id, "output": out})]
}

fn compact(items: Vec<Value>, window: u64, host: Option<&str>) -> Outcome {
    let cfg = Config::from_options(&json!({"contextWindow": window, "preserveRecentTurns": 2})).unwrap();
    let host = host.map(str::to_string);
    compact_with(Format::OpenaiResponses, Value::Array(items), cfg, SessionState::default(), Signals { force: true, ..Signals::default() }, move |r| match &host {
        Some(t) => Reply::Summary { text: t.clone(), usage: None },
        None => fake_summary(r),
    })
    .0
}

fn summary(o: &Outcome) -> String {
    assert_eq!(o.status, "compacted", "{}", o.reason);
    o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text.clone()
}

fn many_paths(n: usize, moves: bool) -> Vec<Value> {
    let mut body = String::from("*** Begin Patch\n");
    for i in 0..n {
        body.push_str(&format!("*** Update File: src/m{}/f{i}.rs\n", i % 1000));
        if moves {
            body.push_str(&format!("*** Move to: dst/m{}/g{i}.rs\n", i % 1000));
        }
    }
    body.push_str("*** End Patch");
    let mut items = vec![user("Rename all. Never touch src/keep.rs.")];
    items.extend(patch("p", &body, "Success."));
    items.extend([asst("done"), user("next")]);
    items
}

/// The handoff the engine writes itself (no host summarizer).
fn compact_handoff(items: Vec<Value>, window: u64) -> Outcome {
    let cfg = Config::from_options(&json!({"contextWindow": window, "preserveRecentTurns": 2})).unwrap();
    let t = context_compactor::formats::decode(Format::OpenaiResponses, Value::Array(items)).expect("decode");
    let job = context_compactor::engine::Job::start(cfg, SessionState::default(), t, context_compactor::engine::JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
    run_recording(job, fake_summary).0
}

/// The number in `[<prefix> N <rest>` of `text` (the floor's or a section's clip count).
fn count_after(text: &str, prefix: &str) -> usize {
    let at = text.find(prefix).unwrap_or_else(|| panic!("{prefix:?} in the summary")) + prefix.len();
    text[at..].split_whitespace().next().unwrap().parse().unwrap()
}

/// N-5, Y-9 (transcript content is untrusted): one Codex `apply_patch` naming 100k distinct
/// files (each with a `*** Move to:`) compacts, with a host summary and with the engine's
/// own handoff, and every one of the 200k paths is listed or counted. The file lookups of
/// the facts were scans per path (quadratic: 40k headers took 31 s); a regression shows as
/// a test that runs for many minutes, not as a timing assertion.
#[test]
fn n5_y9_a_patch_of_100k_distinct_files_compacts_and_counts_every_path() {
    let n = 100_000;
    let o = compact(many_paths(n, true), 100_000, Some("renamed files"));
    let s = summary(&o);
    let carried = s.lines().filter(|l| l.starts_with("src/m") || l.starts_with("dst/m")).count();
    assert_eq!(carried + count_after(&s, "[floor: "), 2 * n, "{}", &s[..s.len().min(2_000)]);

    let o = compact_handoff(many_paths(n, true), 100_000);
    let s = summary(&o);
    let listed = s.lines().filter(|l| l.starts_with("- src/m") || l.starts_with("- dst/m")).count();
    assert!(listed > 0 && s.contains("- src/m0/f0.rs: edited by apply_patch"), "{}", &s[..s.len().min(2_000)]);
    assert_eq!(listed + count_after(&s, "[clipped: "), 2 * n, "{}", &s[..s.len().min(2_000)]);
}

fn edits(paths: &[&str]) -> Vec<Value> {
    let mut items = vec![user("Refactor.")];
    for (i, p) in paths.iter().enumerate() {
        items.extend(patch(&format!("c{i}"), &format!("*** Begin Patch\n*** Update File: {p}\n@@\n-a\n+b\n*** End Patch"), "Success."));
    }
    items.extend([asst("ok"), user("next")]);
    items
}

/// The paths the floor carried (the lines of its `[carried file paths, ...]` item).
fn carried_paths(s: &str) -> Vec<String> {
    let Some(at) = s.find("[carried file paths") else { return Vec::new() };
    s[at..].lines().skip(1).take_while(|l| !l.starts_with('[')).map(str::to_string).collect()
}

/// N-5: a path is present in a host summary only on path edges; a longer path holding it
/// (`src/lib.rs.bak`, `src/app/main.tsx`, `old_config.yaml.j2`, `xa/b/c.py`) does not
/// stand for it, so the floor carries it.
#[test]
fn n5_a_longer_path_in_the_host_summary_does_not_stand_for_a_folded_path() {
    let paths = ["src/lib.rs", "src/app/main.ts", "config.yaml", "a/b/c.py"];
    let o = compact(edits(&paths), 200_000, Some("Edited src/lib.rs.bak, src/app/main.tsx, old_config.yaml.j2 and xa/b/c.py."));
    assert_eq!(carried_paths(&summary(&o)), paths, "{}", summary(&o));
}

/// N-5: a path the host summary names on its edges (in a sentence, backticks, a list,
/// before its full stop) is present and not carried again.
#[test]
fn n5_a_path_named_on_its_edges_is_present_and_not_carried() {
    let paths = ["src/lib.rs", "src/app/main.ts", "config.yaml", "a/b/c.py"];
    let o = compact(edits(&paths), 200_000, Some("Edited `src/lib.rs`, (src/app/main.ts) and config.yaml; then a/b/c.py."));
    assert_eq!(carried_paths(&summary(&o)), Vec::<String>::new(), "{}", summary(&o));
}

fn context_and_failed_patches() -> Vec<Value> {
    let mut items = vec![user("Rename the module and fix lib.rs. Keep the public API stable.")];
    items.extend(patch("p1", "*** Begin Patch\r\n*** Update File: src/old name.rs\r\n*** Move to: src/new_name.rs\r\n@@\r\n-a\r\n+b\r\n*** End Patch", "Success. Updated the following files:\nM src/new_name.rs"));
    items.extend(patch("p2", "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn x\n *** Update File: src/not_a_header.rs\n *** Begin Patch\n  *** Add File: src/nor_this.rs\n-x\n+y\n*** End Patch", "Success."));
    items.extend(patch("p3", "*** Begin Patch\n*** Update File: src/failed_patch.rs\n@@\n-zzz\n+yyy\n*** End Patch", "error: Failed to find expected lines [\"zzz\"] in src/failed_patch.rs"));
    items.extend(patch("p4", "    *** Begin Patch\n    *** Add File: src/indented.rs\n    +x\n    *** End Patch", "Success."));
    items.extend([asst("Build passes."), user("Now update the CHANGELOG.")]);
    items
}

/// The `[§3 Files and artifacts]` lines of a handoff.
fn files_section(s: &str) -> Vec<String> {
    let at = s.find("[§3 Files and artifacts]").unwrap_or_else(|| panic!("§3 in\n{s}"));
    s[at..].lines().skip(1).take_while(|l| !l.starts_with('[')).map(str::to_string).collect()
}

/// N-5, Y-5 (apply_patch headers, LOG-FORMATS 2): only a line at the patch's column that
/// starts `*** ` is a header (column 0, or the indent of an indented heredoc's `*** Begin
/// Patch`); a hunk's context line ` *** Update File: x` (or ` *** Begin Patch`) is code,
/// so its path is not a file of the call. CRLF bodies and `*** Move to:` still count.
#[test]
fn n5_a_context_line_that_reads_like_a_header_is_not_a_file() {
    let o = compact_handoff(context_and_failed_patches(), 200_000);
    let s = summary(&o);
    let files = files_section(&s);
    assert!(!s.contains("not_a_header.rs") && !s.contains("nor_this.rs"), "{s}");
    for want in ["- src/old name.rs: edited by apply_patch", "- src/new_name.rs: created by apply_patch", "- src/lib.rs: edited by apply_patch", "- src/indented.rs: created by apply_patch"] {
        assert!(files.iter().any(|l| l == want), "{want} in {files:?}");
    }
}

/// Y-5, N-5: the files of an `apply_patch` call whose result failed are labelled "patch
/// failed", not "edited" (the patch changed nothing known); the path is still listed.
#[test]
fn y5_a_failed_patch_labels_its_file_patch_failed_not_edited() {
    let o = compact_handoff(context_and_failed_patches(), 200_000);
    let files = files_section(&summary(&o));
    assert!(files.iter().any(|l| l == "- src/failed_patch.rs: patch failed (apply_patch)"), "{files:?}");
    assert!(!files.iter().any(|l| l.starts_with("- src/failed_patch.rs: edited")), "{files:?}");
}

/// Y-9, N-5: an OpenAI Chat call whose arguments list 100k distinct `paths`, and a shell
/// command naming 100k distinct paths, compact and count every path (the argument paths
/// were de-duplicated by a scan per path: quadratic on untrusted input).
#[test]
fn y9_n5_a_call_listing_100k_distinct_paths_compacts_and_counts_every_path() {
    let n = 100_000;
    let paths: Vec<String> = (0..n).map(|i| format!("src/m{}/f{i}.rs", i % 1000)).collect();
    let command = format!("cat {}", paths.iter().map(|p| format!("lib/{p}")).collect::<Vec<_>>().join(" "));
    let call = |id: &str, name: &str, args: Value| json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]});
    let doc = vec![
        json!({"role": "user", "content": "Read them all. Never touch src/keep.rs."}),
        call("a", "read_files", json!({"paths": paths})),
        json!({"role": "tool", "tool_call_id": "a", "content": "ok"}),
        call("b", "shell", json!({"command": command})),
        json!({"role": "tool", "tool_call_id": "b", "content": "ok"}),
        json!({"role": "assistant", "content": "done"}),
        json!({"role": "user", "content": "next"}),
    ];
    let cfg = Config::from_options(&json!({"contextWindow": 100_000, "preserveRecentTurns": 2})).unwrap();
    let o = compact_with(Format::OpenaiChat, Value::Array(doc), cfg, SessionState::default(), Signals { force: true, ..Signals::default() }, |_| Reply::Summary { text: "read files".into(), usage: None }).0;
    let s = summary(&o);
    let carried = s.lines().filter(|l| l.starts_with("src/m") || l.starts_with("lib/src/m")).count();
    assert_eq!(carried + count_after(&s, "[floor: "), 2 * n, "{}", &s[..s.len().min(2_000)]);
}
