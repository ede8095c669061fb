//! Issue 15 (LiveTranscript append O(appended)): a structural test, not a timing one.
//! A counting global allocator measures the bytes one `append` allocates; with a clone
//! of the held content-id map (or of the held rows) per call, that grows with the
//! number of rows held. Here it must not: the median over many one-row appends at
//! 30,000 held rows stays within a small constant of the median at 3,000.

use context_compactor::config::Config;
use context_compactor::formats::Format;
use context_compactor::live::LiveTranscript;
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCATED.fetch_add(l.size(), Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCATED.fetch_add(new, Ordering::Relaxed);
        System.realloc(p, l, new)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn row(i: usize) -> Value {
    // distinct content: every row adds one entry to the content-id map
    json!({ "role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("row {i}: the status of order {i}") })
}

fn live_with(n: usize) -> LiveTranscript {
    let rows: Vec<Value> = (0..n).map(row).collect();
    let config = Config::from_options(&json!({ "profile": "default", "contextWindow": 1_000_000 })).expect("config");
    LiveTranscript::open(config, Format::OpenaiChat, Value::Array(rows)).expect("open")
}

/// Median bytes allocated by one one-row append, over `k` appends.
fn median_append_bytes(live: &mut LiveTranscript, k: usize) -> usize {
    let start = live.len();
    let mut costs = Vec::with_capacity(k);
    for j in 0..k {
        let r = vec![row(start + j)];
        let before = ALLOCATED.load(Ordering::Relaxed);
        live.append(r).expect("append");
        costs.push(ALLOCATED.load(Ordering::Relaxed) - before);
    }
    costs.sort_unstable();
    costs[k / 2]
}

#[test]
fn issue15_live_append_allocates_per_appended_row_not_per_held_row() {
    let mut small = live_with(3_000);
    let mut large = live_with(30_000);
    let a = median_append_bytes(&mut small, 41);
    let b = median_append_bytes(&mut large, 41);
    // A copy of a 30,000-entry map is >= 30,000 * 12 bytes; one row costs a few hundred.
    assert!(a < 4_096, "one-row append at 3k rows allocated {a} bytes");
    assert!(b <= a + 1_024, "append at 30k rows allocated {b} bytes vs {a} at 3k: grows with the held rows");
    assert_eq!(large.len(), 30_041);
}
