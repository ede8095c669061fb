//! Priorities of the deterministic handoff under a tight budget (issue 13 item 1; Y-2,
//! Y-5, N-1, N-5): a fold whose calls touch many paths keeps its next step, errors,
//! decisions and commands; the file list is capped and its marker names the calls whose
//! arguments hold the rest; no marker claims a copy memory does not keep.

mod common;
use common::*;
use context_compactor::engine::Outcome;
use context_compactor::summarize::{self, mechanical_merge_in};
use serde_json::{json, Value};

/// A Codex-style `apply_patch` touching `n` files, one hunk each.
fn wide_patch(n: usize) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for k in 0..n {
        p.push_str(&format!("*** Update File: crates/engine/src/module_{k:03}/mod.rs\n@@\n-use log::info;\n+use tracing::info;\n"));
    }
    p.push_str("*** End Patch");
    p
}

/// A session: the request, a decision, a failed test run, a listing, `touch` (the wide
/// edit: one patch of 150 files, or 150 reads), then the current work with its next step.
fn session(touch: Vec<Value>) -> Vec<Value> {
    let mut d = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        user("Move the engine crate from log to tracing."),
        asst("I'll switch every module at once because the macros have the same names."),
    ];
    d.extend(touch);
    d.extend([
        call("t1", "shell", json!({"command": "cargo test -p engine"})),
        result("t1", "Exit code 101\nerror[E0432]: unresolved import `tracing`"),
        call("l1", "shell", json!({"command": "git status --short"})),
        result("l1", " M Cargo.toml"),
        asst("The cause is a missing dependency line in Cargo.toml. Let me add tracing to Cargo.toml and rerun the tests."),
    ]);
    d
}

fn patch_session() -> Vec<Value> {
    session(vec![call("p1", "apply_patch", json!({"input": wide_patch(150)})), result("p1", "Success. Updated 150 files.")])
}

fn read_session() -> Vec<Value> {
    let mut touch = Vec::new();
    for k in 0..150 {
        touch.push(call(&format!("r{k}"), "Read", json!({"file_path": format!("/repo/crates/engine/src/module_{k:03}/mod.rs")})));
        touch.push(result(&format!("r{k}"), "use log::info;"));
    }
    session(touch)
}

/// Of the 150 paths of a handoff's §3: how many it lists, how many its marker counts
/// (together all of them) and the marker.
fn files_of(s: &str) -> (usize, usize, String) {
    let s3 = section(s, 3);
    let listed = (0..150).filter(|k| s3.contains(&format!("module_{k:03}/mod.rs"))).count();
    let (count, marker) = files_marker(&s3);
    assert_eq!(listed + count, 150, "{s3}");
    (listed, count, marker)
}

/// The `[clipped: N more files ...]` marker of a section and its count.
fn files_marker(s3: &str) -> (usize, String) {
    let l = s3.lines().find(|l| l.starts_with("[clipped: ") && l.contains(" more files ")).unwrap_or_else(|| panic!("files marker in\n{s3}"));
    let n = l.trim_start_matches("[clipped: ").split_whitespace().next().unwrap().parse().unwrap();
    (n, l.to_string())
}

/// Issue 13, Y-5, N-5: one patch touching 150 files does not push the next step, the
/// failed command, the decision or the other command out of a tight handoff; the file
/// list keeps about a third of the room and its marker names the call holding the rest.
#[test]
fn issue13_y5_n5_wide_patch_keeps_next_step_errors_decisions_and_commands() {
    let budget = 2_048;
    let s = handoff(&patch_session(), budget);
    assert!(s.len() <= budget, "{}", s.len());
    assert!(section(&s, 9).contains("Let me add tracing to Cargo.toml and rerun the tests."), "{s}");
    assert!(section(&s, 5).contains("shell `cargo test -p engine` [t1] failed (exit 101): error[E0432]: unresolved import `tracing`; not resolved in the folded rows"), "{s}");
    assert!(section(&s, 7).contains("- I'll switch every module at once because the macros have the same names."), "{s}");
    assert!(section(&s, 4).contains("- shell `git status --short` -> ok"), "{s}");
    let (listed, _, marker) = files_of(&s);
    assert!(listed > 0, "{s}");
    assert!(marker.contains("their paths are in the arguments of apply_patch p1;"), "{marker}");
    assert!(marker.ends_with("the folded rows are in memory]"), "{marker}");
}

/// Issue 13: when the other sections need the whole room, the file list keeps about a
/// third of it (the first pass's share), not all of it.
#[test]
fn issue13_n5_file_list_takes_about_a_third_of_a_full_room() {
    let mut d = patch_session();
    let at = d.len() - 1;
    for k in 0..40 {
        d.insert(at, asst(&format!("Found that module {k} still imports log::warn because its macro is re-exported.")));
    }
    let budget = 4_096;
    let s = handoff(&d, budget);
    assert!(s.len() <= budget, "{}", s.len());
    let s3 = section(&s, 3);
    let listed_bytes: usize = s3.lines().filter(|l| l.starts_with("- ")).map(|l| l.len() + 1).sum();
    assert!(listed_bytes > 0 && listed_bytes <= budget / 3, "{listed_bytes} bytes of paths\n{s}");
    let s7 = section(&s, 7);
    assert!(s7.lines().filter(|l| l.starts_with("- Found that module")).count() >= 10, "{s}");
    assert!(s7.contains(" more decision sentences not shown here"), "{s}");
}

/// Issue 13, N-5: 150 reads, one path each: the same priorities; the marker names the
/// first calls holding the paths it leaves out and counts the others.
#[test]
fn issue13_n5_many_reads_keep_next_step_and_errors_and_name_their_calls() {
    let s = handoff(&read_session(), 2_048);
    assert!(s.len() <= 2_048, "{}", s.len());
    assert!(section(&s, 9).contains("rerun the tests"), "{s}");
    assert!(section(&s, 5).contains("[t1] failed (exit 101)"), "{s}");
    assert!(section(&s, 7).contains("I'll switch every module"), "{s}");
    let (listed, count, marker) = files_of(&s);
    // the oldest paths are listed; the marker names the reads of the first left out
    let first_out = listed;
    assert!(marker.contains(&format!("their paths are in the arguments of Read r{first_out}, Read r{}", first_out + 1)), "{marker}");
    assert!(marker.contains(&format!("and {} other calls", count - 3)), "{marker}");
}

/// A room a tight budget leaves after the other sections still goes to the files
/// (second pass): a generous budget lists every path.
#[test]
fn issue13_n5_files_take_the_room_left_on_a_second_pass() {
    let s = handoff(&patch_session(), 16_384);
    let s3 = section(&s, 3);
    assert!((0..150).all(|k| s3.contains(&format!("module_{k:03}/mod.rs"))), "{s3}");
    assert!(!s3.contains("[clipped:"), "{s3}");
}

fn summary_text(o: &Outcome) -> String {
    o.rewrite.as_ref().unwrap().summary.as_ref().unwrap().text.clone()
}

fn later_turns(mut d: Vec<Value>) -> Vec<Value> {
    for k in 0..4 {
        d.push(user(&format!("Follow-up {k}: also check the benches.")));
        d.push(asst(&format!("Checked the benches, round {k}.")));
    }
    d
}

/// N-1: with memory projection off no marker of the summary (the handoff's or the
/// floor's) says the file paths it leaves out are in memory; it names the call whose
/// arguments held them. With it on, the floor's marker says the rows are in memory.
#[test]
fn n1_path_markers_claim_memory_only_when_it_is_projected() {
    for memory in [false, true] {
        let o = mechanical(later_turns(patch_session()), json!({"profile": "default", "preserveRecentTurns": 2, "summaryMaxOutputTokens": 512, "projectMemory": memory}));
        assert_eq!(o.status, "compacted", "{}", o.reason);
        let text = summary_text(&o);
        let markers: Vec<&str> = text.lines().filter(|l| (l.starts_with("[clipped: ") || l.starts_with("[floor: ")) && l.contains("file")).collect();
        assert!(!markers.is_empty(), "a 150-path fold over a 2 KB summary budget leaves paths out\n{text}");
        let floor = markers.iter().find(|l| l.starts_with("[floor: ") && l.contains(" more file paths ")).unwrap_or_else(|| panic!("{text}"));
        assert!(floor.contains("apply_patch p1"), "{floor}");
        for m in &markers {
            assert_eq!(m.contains("are in memory"), memory, "memory {memory}: {m}");
        }
    }
}

/// Y-3, issue 13: a rollup under a tight budget keeps the members' unresolved errors
/// (the newest, within a fifth of the room) before their decisions, which take the rest.
#[test]
fn y3_rollup_keeps_errors_before_decisions() {
    let member = |k: usize| {
        let mut d = vec![sys(), user(&format!("Round {k}: fix the flaky suites."))];
        for j in 0..3 {
            d.push(call(&format!("e{k}_{j}"), "shell", json!({"command": format!("make t{k}{j}")})));
            d.push(result(&format!("e{k}_{j}"), "Exit code 2\nboom"));
        }
        for j in 0..15 {
            d.push(asst(&format!("I'll retry suite {k}-{j} because the cause is likely a race in the scheduler {}.", "queue ".repeat(8))));
        }
        d.push(asst("Let me look at the scheduler next."));
        handoff(&d, 8_192)
    };
    let members = vec![member(1), member(2)];
    for m in &members {
        assert_eq!(section(m, 5).matches("not resolved in the folded rows").count(), 3, "{m}");
    }
    let merged = mechanical_merge_in(&members, 3_000, true);
    assert!(merged.len() <= 3_000, "{}", merged.len());
    let s5 = section(&merged, 5);
    let errors = s5.lines().filter(|l| l.ends_with("failed (exit 2): boom; not resolved in the folded rows")).count();
    assert_eq!(errors, 6, "every unresolved error of both members\n{merged}");
    // the decisions take what is left, counted
    let s7 = section(&merged, 7);
    assert!(s7.lines().filter(|l| l.starts_with("- I'll retry suite")).count() >= 10, "{merged}");
    assert!(s7.contains(" more decision sentences not shown here (rollup budget)"), "{merged}");
}

/// A request, a failed `make migrate` (its error line, then `more` output) and the
/// agent's `reply`.
fn migrate(more: &str, reply: &str) -> Vec<Value> {
    vec![
        sys(),
        user("Run the migrations."),
        call("m1", "shell", json!({"command": "make migrate"})),
        result("m1", &format!("Exit code 2\nmake: *** No rule to make target 'migrate'.  Stop.{more}")),
        asst(reply),
    ]
}

/// Y-5, I-4: a small fold whose nine-section handoff would be bigger than the rows it
/// replaces is written as the floor alone; the failed command it held is still named.
#[test]
fn y5_a_floor_only_summary_still_names_the_failed_command() {
    let mut d = migrate(&"\nhint: run `make help` to list the targets".repeat(2), "It failed.");
    d.extend([user("Try the script instead."), asst("Running it."), user("Thanks, then push.")]);
    let o = mechanical(d.clone(), json!({"profile": "default", "preserveRecentTurns": 2}));
    assert_eq!(o.status, "compacted", "{}", o.reason);
    let text = summary_text(&o);
    let rw = o.rewrite.as_ref().unwrap();
    assert!(rw.discarded.len() >= 4, "{:?}", rw.discarded);
    assert!(text.contains("make migrate") && text.contains("m1"), "the failed call is named\n{text}");
    assert!(text.contains("No rule to make target 'migrate'"), "with its error\n{text}");
    // the floor-only form: no nine-section handoff
    assert!(!text.contains(&summarize::section_header(8)), "{text}");
}

/// Y-5, Y-8: a tight handoff budget (768 bytes) fills its sections with the
/// lines that fit and counts only what is left out: the failed command is named, not
/// only counted (the count markers' bytes are measured, not reserved at 90 a section).
#[test]
fn y5_y8_a_tight_handoff_names_the_failed_command() {
    let d = migrate("", "It failed. Let me try the script next.");
    let s = handoff(&d, 768);
    assert!(s.len() <= 768, "{}", s.len());
    assert!(!s.contains("[clipped: "), "{s}");
    assert!(section(&s, 5).contains("- shell `make migrate` [m1] failed (exit 2): make: *** No rule to make target 'migrate'.  Stop.; not resolved in the folded rows"), "{s}");
    assert!(section(&s, 9).contains("Let me try the script next."), "{s}");
}

/// Issue 13, Y-5: the next step and the errors come before the file list: when they
/// and the list's share do not all fit, the paths are the ones counted.
#[test]
fn issue13_y5_errors_and_next_step_come_before_the_file_list() {
    let mut d = patch_session();
    let at = d.len() - 1;
    for k in 0..5 {
        d.insert(at + 2 * k, call(&format!("f{k}"), "shell", json!({"command": format!("cargo check --features m{k}")})));
        d.insert(at + 2 * k + 1, result(&format!("f{k}"), &format!("Exit code 101\nerror[E0433]: undeclared crate `tracing` in m{k}")));
    }
    let s = handoff(&d, 2_048);
    assert!(s.len() <= 2_048, "{}", s.len());
    let s5 = section(&s, 5);
    let named = (0..5).filter(|k| s5.contains(&format!("[f{k}] failed (exit 101)"))).count();
    assert_eq!(named, 5, "every failed check is named\n{s}");
    assert!(section(&s, 9).contains("rerun the tests"), "{s}");
    let (count, marker) = files_marker(&section(&s, 3));
    assert!(count > 140 && marker.contains("apply_patch p1"), "{marker}");
}

/// N-1, M-1 (issue 13): the floor's and the handoff's path markers say the folded rows
/// are in memory only when the memory records hold them. With projection on and no
/// memory hook limited to the user text (user-text-only memory: the folded user rows
/// alone are projected) the paths of the folded calls are in no record, and every
/// marker says the rows are not kept; with the full projection the records hold the
/// patch (its paths) and the markers say so.
#[test]
fn n1_m1_path_markers_in_user_text_only_memory_claim_no_copy() {
    use context_compactor::config::Config;
    use context_compactor::engine::{run_sync, Job, JobOptions};
    use context_compactor::formats::{decode, Format};
    use context_compactor::state::SessionState;
    use context_compactor::trigger::Signals;
    for user_text_only in [false, true] {
        let cfg = Config::from_options(&json!({"profile": "default", "preserveRecentTurns": 2, "summaryMaxOutputTokens": 512, "projectMemory": true})).unwrap();
        let t = decode(Format::OpenaiChat, Value::Array(later_turns(patch_session()))).unwrap();
        let mut job = Job::start(cfg, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false }).with_user_text_only_memory(user_text_only);
        let o = run_sync(&mut job, |_| unreachable!()).unwrap();
        assert_eq!(o.status, "compacted", "{}", o.reason);
        let text = summary_text(&o);
        let records: String = o.memory.iter().flat_map(|b| b.records.iter()).map(|r| r.content.as_str()).collect::<Vec<_>>().join("\n");
        // the truth the markers must tell: a path of the patch is in a record or not
        assert_eq!(records.contains("crates/engine/src/module_149/mod.rs"), !user_text_only, "user text only {user_text_only}: records\n{records}");
        // the folded user text is in the records either way
        assert!(records.contains("Move the engine crate from log to tracing."), "{records}");
        let markers: Vec<&str> = text.lines().filter(|l| (l.starts_with("[clipped: ") || l.starts_with("[floor: ")) && l.contains("file")).collect();
        let floor = markers.iter().find(|l| l.starts_with("[floor: ") && l.contains(" more file paths ")).unwrap_or_else(|| panic!("{text}"));
        assert!(floor.contains("apply_patch p1"), "{floor}");
        for m in &markers {
            assert_eq!(m.contains("the folded rows are in memory"), !user_text_only, "user text only {user_text_only}: {m}");
            assert_eq!(m.contains("the folded rows are not kept in memory"), user_text_only, "user text only {user_text_only}: {m}");
        }
    }
}
