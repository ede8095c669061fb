//! Prints the summary that `main` at commit 3e32d10 (before issue 13's handoff summary)
//! wrote for one transcript: the importer's reading of the file, profile `default`, a
//! 16,000-token context window, forced, no summarizer (the engine's own summary), as
//! `cargo test --test handoff_real print_handoff_summaries -- --ignored` does for the
//! current tree. Written against that commit's API; it is not built with this tree.
//!
//! ```sh
//! T="$PWD/../shared/transcripts"   # from the repository's root
//! git worktree add /tmp/cc-3e32d10 3e32d10
//! cp docs/before/before_summary.rs /tmp/cc-3e32d10/examples/
//! (cd /tmp/cc-3e32d10 && cargo run --no-default-features --example before_summary -- \
//!     "$T/claude-code/citation-check.jsonl")
//! git worktree remove --force /tmp/cc-3e32d10
//! ```
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::import::{import, sniff};
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use context_compactor::{formats, Config, Profile};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: before_summary TRANSCRIPT");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let fail = |what: &str, e: context_compactor::Error| -> ! {
        eprintln!("{what}: {e:?}");
        std::process::exit(1)
    };
    let Some(kind) = sniff(&text) else {
        eprintln!("{path}: not a log this commit imports");
        std::process::exit(1)
    };
    let (format, doc) = import(kind, &text).unwrap_or_else(|e| fail("import", e));
    let transcript = formats::decode(format, doc).unwrap_or_else(|e| fail("decode", e));
    let mut config = Config::preset(Profile::Default);
    config.context_window = 16_000;
    let opts = JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false };
    let mut job = Job::start(config, SessionState::default(), transcript, opts);
    let outcome = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false })
        .unwrap_or_else(|e| fail("compact", e));
    println!("{}", outcome.rewrite.map(|r| r.summary.text).unwrap_or_default());
}
