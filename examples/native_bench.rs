//! Native profiling harness (not a test; issue "Performance"): times one full compaction
//! of a session file built by `node bench/build-sessions.mjs` — decode, compact with the
//! mechanical summary, `Outcome::to_json_string` — and prints per-phase milliseconds and
//! the ratio to a `serde_json` parse + serialize round trip of the same text.
//!
//! Usage: `cargo run --release --no-default-features --example native_bench -- FILE [runs]`
//! (profile it with `valgrind --tool=callgrind` on a build with
//! `CARGO_PROFILE_RELEASE_DEBUG=true`; `runs` = 1 there).
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::state::SessionState;
use context_compactor::{formats, Config, Format, Profile};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

/// Counts live heap bytes and their peak, to see which phase holds what.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        COUNT.fetch_add(1, Relaxed);
        let live = LIVE.fetch_add(l.size(), Relaxed) + l.size();
        PEAK.fetch_max(live, Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        unsafe { System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

/// Live and peak heap in MB since the last reset, then resets the peak to the live figure.
fn heap() -> String {
    let (live, peak) = (LIVE.load(Relaxed), PEAK.load(Relaxed));
    PEAK.store(live, Relaxed);
    let n = COUNT.swap(0, Relaxed);
    format!("live {:.1} peak {:.1} MB, {n} allocations", live as f64 / 1e6, peak as f64 / 1e6)
}

/// The value, or the error printed and exit status 1.
fn or_exit<T>(what: &str, r: context_compactor::Result<T>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("{what}: {e:?}");
        std::process::exit(1)
    })
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: native_bench FILE [runs]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(3);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    for _ in 0..runs {
        let t0 = Instant::now();
        // NO_ROUND_TRIP set: skipped (so a heap profiler's peak is the compaction's)
        let skip = std::env::var("NO_ROUND_TRIP").is_ok();
        let v: serde_json::Value = if skip { serde_json::Value::Null } else { serde_json::from_str(&text).unwrap_or_default() };
        let round = serde_json::to_string(&v).unwrap_or_default();
        let rt = t0.elapsed().as_secs_f64() * 1e3;
        drop((v, round));

        let base = heap();
        let t0 = Instant::now();
        let t = or_exit("decode", formats::decode_owned(Format::OpenaiChat, text.clone()));
        let t_decode = t0.elapsed().as_secs_f64() * 1e3;
        let after_decode = heap();
        let mut config = Config::preset(Profile::Default);
        // as the wasm layer runs it with no memory hook: nothing takes the records
        // DEFAULT set: as the wasm layer runs a call with no memory hook (the folded user
        // text projected, its records returned: N-1)
        let default = std::env::var("DEFAULT").is_ok();
        config.project_memory = default || std::env::var("PROJECT_MEMORY").is_ok();
        // SUMMARIZE set: a summarize callback that answers at once (as bench/run.mjs)
        let summarizer = std::env::var("SUMMARIZE").is_ok();
        let mut job = Job::start(config, SessionState::default(), t, JobOptions { has_summarizer: summarizer, ..JobOptions::default() }).with_user_text_only_memory(default);
        let outcome = or_exit(
            "compact",
            run_sync(&mut job, |_| match summarizer {
                true => {
                    println!("heap at summarize: {}", heap());
                    Reply::Summary { text: "The user and the agent worked through earlier tasks.".into(), usage: None }
                }
                false => Reply::Failed { message: "no summarizer".into(), context_exceeded: false },
            }),
        );
        let t_compact = t0.elapsed().as_secs_f64() * 1e3;
        let after_compact = heap();
        let out = outcome.to_json_string();
        let after_output = heap();
        println!("heap (input text {:.1} MB held throughout): start {base} | decode {after_decode} | compact {after_compact} | output {after_output}", text.len() as f64 / 1e6);
        let t_total = t0.elapsed().as_secs_f64() * 1e3;
        println!(
            "round trip {rt:.1} ms | decode {t_decode:.1} compact {:.1} output {:.1} total {t_total:.1} ms = {:.2}x | status {} out {} bytes, fnv {:016x}",
            t_compact - t_decode,
            t_total - t_compact,
            t_total / rt,
            outcome.status,
            out.len(),
            context_compactor::transcript::fnv1a(out.as_bytes())
        );
    }
}
