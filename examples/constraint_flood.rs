//! Benchmark (not a test; N-1 / S-9 adversarial finding "superlinear time on messages
//! full of constraint sentences"): builds OpenAI-chat transcripts whose user messages are
//! nothing but constraint sentences (`You must ...`, `Never ...`, `Always ...`), at
//! 0.5, 1 and 2 MB (or the sizes given), compacts each once (profile `default`, forced, the built-in
//! deterministic summary) and prints the milliseconds, the summary size and the ratio
//! of each time to the first size's run of the same process (linear: about 2 and 4;
//! quadratic: about 4 and 16).
//!
//! Usage: `cargo run --release --no-default-features --example constraint_flood -- [distinct|repeated] [MB ...]`
//! (`distinct`: every sentence different; `repeated`: 50 distinct sentences repeated).
use context_compactor::engine::compact_document;
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use context_compactor::{Config, Format, Profile};
use serde_json::json;
use std::time::Instant;

/// The transcript (tests/common/flood.rs): user rows of about 1 KB of constraint
/// sentences, each answered by a short assistant row.
#[path = "../tests/common/flood.rs"]
mod flood;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let distinct = args.first().map(String::as_str) != Some("repeated");
    let mut sizes: Vec<f64> = args.iter().skip(1).filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![0.5, 1.0, 2.0];
    }
    let mut base = None;
    for mb in sizes {
        let doc = json!({ "messages": flood::constraint_flood((mb * 1_000_000.0) as usize, distinct) });
        let mut config = Config::preset(Profile::Default);
        config.context_window = 200_000;
        let t = Instant::now();
        let out = compact_document(Format::OpenaiChat, doc, config, SessionState::default(), Signals { force: true, ..Signals::default() }, None);
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let b = *base.get_or_insert(ms);
        match out {
            Ok(o) => {
                let summary = o.rewrite.as_ref().and_then(|r| r.summary.as_ref()).map_or(0, |s| s.text.len());
                println!("{mb} MB {}: {ms:.0} ms (x{:.2} of the first size), status {} ({}), summary {summary} bytes", if distinct { "distinct" } else { "repeated" }, ms / b, o.status, o.reason.chars().take(160).collect::<String>());
            }
            Err(e) => println!("{mb} MB: {ms:.0} ms, error {e}"),
        }
    }
}
