//! Synchronous drivers of a [`Job`] (native hosts and tests).

use super::{ArtifactItem, Job, JobOptions, Outcome, Reply, Step};
use crate::config::Config;
use crate::error::Result;
use crate::formats::{self, Format};
use crate::memory::MemoryBatch;
use crate::state::SessionState;
use crate::summarize::SummarizeRequest;
use crate::trigger::Signals;
use serde_json::Value;


/// Drives a job to completion with a synchronous summarize function (native hosts and
/// tests). `summarize` returns the reply for each request (kinds `summary`, `rollup`,
/// `curate`); a [`Step::Project`] is accepted as is; an artifact-store step is answered
/// "not stored" (bodies are clipped).
pub fn run_sync(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply) -> Result<Outcome> {
    run_sync_full(job, summarize, |_| None, |_| Reply::Accepted)
}

/// Like [`run_sync`], with a synchronous memory store: `store` answers each
/// [`Step::Project`] with [`Reply::Accepted`] or [`Reply::Failed`] (M-1, W-3).
pub fn run_sync_with_memory(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply, store: impl FnMut(&MemoryBatch) -> Reply) -> Result<Outcome> {
    run_sync_full(job, summarize, |_| None, store)
}

/// Like [`run_sync`], with a synchronous artifact store (E-6): `store` keeps one body
/// and returns its handle (the item's proposed `handle` or its own), or `None` on failure.
pub fn run_sync_with_store(job: &mut Job, summarize: impl FnMut(&SummarizeRequest) -> Reply, store: impl FnMut(&ArtifactItem) -> Option<String>) -> Result<Outcome> {
    run_sync_full(job, summarize, store, |_| Reply::Accepted)
}

/// Drives a job with every host step answered synchronously: summaries, the artifact
/// store (E-6) and the memory store (M-1).
pub fn run_sync_full(
    job: &mut Job,
    mut summarize: impl FnMut(&SummarizeRequest) -> Reply,
    mut artifacts: impl FnMut(&ArtifactItem) -> Option<String>,
    mut memory: impl FnMut(&MemoryBatch) -> Reply,
) -> Result<Outcome> {
    let mut step = job.resume(None)?;
    loop {
        match step {
            Step::Done(o) => return Ok(*o),
            Step::Summarize(req) => {
                let reply = summarize(&req);
                drop(req);
                step = job.resume(Some(reply))?;
            }
            Step::Project(batch) => {
                let reply = memory(&batch);
                drop(batch);
                step = job.resume(Some(reply))?;
            }
            Step::StoreArtifacts(items) => {
                let handles = items.iter().map(&mut artifacts).collect();
                step = job.resume(Some(Reply::Artifacts { handles }))?;
            }
        }
    }
}

/// Convenience: decode, compact with `summarize` (None = mechanical), return the outcome.
pub fn compact_document(format: Format, doc: Value, config: Config, state: SessionState, signals: Signals, summarize: Option<&mut dyn FnMut(&SummarizeRequest) -> Reply>) -> Result<Outcome> {
    let t = formats::decode(format, doc)?;
    let has = summarize.is_some();
    let mut job = Job::start(config, state, t, JobOptions { signals, has_summarizer: has });
    match summarize {
        Some(f) => run_sync(&mut job, f),
        None => run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }),
    }
}
