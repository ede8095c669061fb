//! Priorities of the engine's bounded summary parts (issue 13): what a tight bound keeps
//! first, and that what it leaves out is counted, never dropped silently.

use context_compactor::state::FoldedCall;
use context_compactor::summarize::ledger_text;

fn call(i: usize, failed: bool) -> FoldedCall {
    FoldedCall {
        call_id: format!("call_{i:03}"),
        name: if failed { "shell".into() } else { "read_file".into() },
        arguments: format!("{{\"path\":\"src/file_{i:03}.rs\"}}"),
        failed,
        error: failed.then(|| format!("exit 1: build error number {i}")),
    }
}

/// Y-5: a ledger over its byte bound keeps every failed call (the oldest one too) before
/// the successes, and states how many it left out and how many of those failed.
#[test]
fn y5_bounded_ledger_keeps_failed_calls_before_successes() {
    // the oldest call failed; sixty successes after it
    let mut ledger = vec![call(0, true)];
    ledger.extend((1..=60).map(|i| call(i, false)));
    ledger.push(call(61, true));
    let text = ledger_text(&ledger, 1_200);
    assert!(text.len() <= 1_400, "{}", text.len());
    assert!(text.contains("- shell({\"path\":\"src/file_000.rs\"}) [call_000]: ran and failed (may be made again): exit 1: build error number 0"), "{text}");
    assert!(text.contains("[call_061]: ran and failed"), "{text}");
    // the newest successes fill what is left; the rest are counted, none of them failed
    assert!(text.contains("[call_060]: already run"), "{text}");
    assert!(!text.contains("[call_001]"), "{text}");
    let named = text.lines().filter(|l| l.contains("[call_")).count();
    let line = text.lines().find(|l| l.contains("earlier calls not named here")).expect("count line");
    let omitted: usize = line.trim_start_matches("- ").split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(named + omitted, ledger.len(), "{text}");
    assert!(line.contains("(ledger byte bound; 0 of them failed): read_file x"), "{line}");
    // named oldest first: the failed oldest call comes before the newest success
    assert!(text.find("[call_000]").unwrap() < text.find("[call_060]").unwrap());
}

/// Y-5: failed calls beyond the bound are counted as failed.
#[test]
fn y5_failed_calls_over_the_bound_are_counted_as_failed() {
    let ledger: Vec<FoldedCall> = (0..40).map(|i| call(i, true)).collect();
    let text = ledger_text(&ledger, 1_000);
    let line = text.lines().find(|l| l.contains("earlier calls not named here")).expect("count line");
    let omitted: usize = line.trim_start_matches("- ").split_whitespace().next().unwrap().parse().unwrap();
    assert!(omitted > 0);
    assert!(line.contains(&format!("{omitted} of them failed")), "{line}");
    assert!(text.contains("[call_039]: ran and failed"), "{text}");
}
