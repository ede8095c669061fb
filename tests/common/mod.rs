//! Shared helpers for the native integration tests.
#![allow(dead_code)]

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use context_compactor::formats::import::ImportKind;
use context_compactor::formats::{self, Format};
use context_compactor::state::SessionState;
use context_compactor::summarize::SummarizeRequest;
use context_compactor::trigger::Signals;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// `../shared` beside the crate, or None (a failure under `CI=true`).
pub fn shared_dir() -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if p.is_dir() {
        return Some(p);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("../shared is required under CI=true but is missing at {}", p.display());
    }
    eprintln!("note: ../shared not found; skipping suites over it");
    None
}

/// Every file under `../shared/transcripts` but the `.md` notes, sorted, and that folder;
/// `None` where [`shared_dir`] gives none (`../shared` absent outside CI).
pub fn shared_transcript_files() -> Option<(PathBuf, Vec<PathBuf>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display())) {
            let path = entry.unwrap_or_else(|e| panic!("read {}: {e}", dir.display())).path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().and_then(|e| e.to_str()) != Some("md") {
                out.push(path);
            }
        }
    }
    let dir = shared_dir()?.join("transcripts");
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    Some((dir, files))
}

/// The log kind of a file of [`shared_transcript_files`] by its folder under `root` (the
/// transcripts folder): `claude-code`, `swe-agent`, `tau-bench`, `glaive`; `None` elsewhere.
pub fn shared_transcript_kind(root: &Path, path: &Path) -> Option<ImportKind> {
    match path.strip_prefix(root).ok()?.iter().next()?.to_str()? {
        "claude-code" => Some(ImportKind::ClaudeCodeJsonl),
        "swe-agent" => Some(ImportKind::SweAgentTraj),
        "tau-bench" => Some(ImportKind::TauBench),
        "glaive" => Some(ImportKind::Glaive),
        _ => None,
    }
}

/// A regression case from ../shared/cases.
pub struct Case {
    pub raw: Value,
    pub format: Format,
    pub doc: Value,
    pub config: Config,
    pub signals: Signals,
}

pub fn load_case(name: &str) -> Option<Case> {
    let dir = shared_dir()?;
    let text = std::fs::read_to_string(dir.join("cases").join(format!("{name}.json"))).expect("case file");
    let raw: Value = serde_json::from_str(&text).expect("case json");
    let format = Format::parse(raw["format"].as_str().unwrap()).expect("format");
    let transcript = raw["transcript"].clone();
    let doc = match format {
        Format::Anthropic if raw.get("system").is_some() => json!({ "system": raw["system"], "messages": transcript }),
        _ => transcript,
    };
    let mut opts = raw["settings"].clone();
    opts["profile"] = json!("default");
    let config = Config::from_options(&opts).expect("settings map to options");
    let mut signals = Signals { usage: raw.get("usage").cloned(), ..Signals::default() };
    if let Some(tb) = raw.get("tools_bytes").and_then(Value::as_u64) {
        signals.tools_bytes = Some(tb);
    }
    Some(Case { raw, format, doc, config, signals })
}

/// A deterministic summarizer: names the request kind and its size.
pub fn fake_summary(req: &SummarizeRequest) -> Reply {
    let input: usize = req.messages.iter().map(|m| m.content.len()).sum();
    Reply::Summary { text: format!("SUMMARY({}, {} bytes of input)", req.kind, input), usage: Some(json!({"input_tokens": 100, "output_tokens": 10})) }
}

/// Runs a compaction with a recording summarizer; returns the outcome and the requests seen.
/// The transcripts of these tests stand for the host's own stored transcripts: the host
/// vouches for their provenance (summary marks, pins, artifact refs) through the state
/// (`context_compactor::trust::vouch`, issue 14), as a host resuming a stored session does.
pub fn compact_with(format: Format, doc: Value, config: Config, state: SessionState, signals: Signals, reply: impl FnMut(&SummarizeRequest) -> Reply) -> (Outcome, Vec<SummarizeRequest>) {
    let t = formats::decode(format, doc).expect("decode");
    let state = context_compactor::trust::vouch(&state, &t);
    run_recording(Job::start(config, state, t, JobOptions { signals, has_summarizer: true }), reply)
}

/// Runs `job` to its outcome with the summarizer `reply`; returns the outcome and the
/// requests it was asked, in order.
pub fn run_recording(mut job: Job, mut reply: impl FnMut(&SummarizeRequest) -> Reply) -> (Outcome, Vec<SummarizeRequest>) {
    let mut seen = Vec::new();
    let out = run_sync(&mut job, |r| {
        seen.push(r.clone());
        reply(r)
    })
    .expect("job runs");
    (out, seen)
}

/// Stored-view messages of an outcome's transcript.
pub fn out_messages(o: &Outcome) -> Vec<Value> {
    let v = formats::encode(&o.transcript, formats::View::Stored);
    match v {
        Value::Array(a) => a,
        Value::Object(m) => m.get("messages").and_then(Value::as_array).cloned().unwrap_or_default(),
        _ => vec![],
    }
}

/// A transcript of `../shared/transcripts/<which>`, imported and decoded, or None when
/// `../shared` is absent (see [`shared_dir`]).
pub fn load_shared(which: &str) -> Option<context_compactor::transcript::Transcript> {
    use context_compactor::formats::import::{import, sniff};
    let dir = shared_dir()?.join("transcripts");
    let text = std::fs::read_to_string(dir.join(which)).unwrap();
    let kind = sniff(&text).unwrap();
    let (format, doc) = import(kind, &text).unwrap();
    Some(formats::decode(format, doc).unwrap())
}

/// The six Claude Code logs of `../shared` one after the other (the later ones' system
/// rows left out): a session whose decisions and paths outgrow one summary's budget.
pub fn six_claude_code_logs() -> Option<context_compactor::transcript::Transcript> {
    let names = ["citation-check", "econ-detrending-correlation", "energy-ac-optimal-power-flow", "find-topk-similiar-chemicals", "protein-expression-analysis", "weighted-gdp-calc"];
    let mut out: Option<context_compactor::transcript::Transcript> = None;
    for n in names {
        let t = load_shared(&format!("claude-code/{n}.jsonl"))?;
        match out.as_mut() {
            None => out = Some(t),
            Some(o) => o.messages.extend(t.messages.into_iter().filter(|m| m.role != context_compactor::transcript::Role::System)),
        }
    }
    out
}

/// `full` fed to the engine `step` rows at a time after its first `head` rows, each step
/// compacted (forced, deterministic summary, no summarizer) with the state of the last;
/// `on_compacted` sees each compacted outcome. The transcript after the last step.
pub fn forced_fold_loop(full: &context_compactor::transcript::Transcript, head: usize, step: usize, config: &Config, mut on_compacted: impl FnMut(&Outcome)) -> context_compactor::transcript::Transcript {
    let mut state = SessionState::default();
    let mut cur = full.clone();
    cur.messages.truncate(head);
    let mut next = head.min(full.messages.len());
    while next < full.messages.len() {
        let end = (next + step).min(full.messages.len());
        cur.messages.extend(full.messages[next..end].iter().cloned());
        next = end;
        let mut job = Job::start(config.clone(), state.clone(), cur.clone(), JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
        let o = run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }).expect("job runs");
        assert_ne!(o.status, "failed", "{}", o.reason);
        if o.status == "compacted" {
            on_compacted(&o);
            state = o.state.clone();
            cur = o.transcript;
        }
    }
    cur
}

/// OpenAI Chat rows for the handoff tests: a system row `sys`.
pub fn sys() -> Value {
    json!({"role": "system", "content": "sys"})
}
/// An OpenAI Chat user row.
pub fn user(t: &str) -> Value {
    json!({"role": "user", "content": t})
}
/// An OpenAI Chat assistant text row.
pub fn asst(t: &str) -> Value {
    json!({"role": "assistant", "content": t})
}
/// An OpenAI Chat assistant row making one function call `id` of `name` with `args`.
pub fn call(id: &str, name: &str, args: Value) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
}
/// An OpenAI Chat tool row answering call `id` with `body`.
pub fn result(id: &str, body: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": body})
}

/// An OpenAI Chat session: the system row, the user's `ask`, each `(id, tool, arguments,
/// output)` call with its result, the assistant's `answer` and the user's `next` request.
pub fn session(ask: &str, calls: &[(&str, &str, Value, &str)], answer: &str, next: &str) -> Vec<Value> {
    let mut doc = vec![sys(), user(ask)];
    for (id, tool, args, out) in calls {
        doc.push(call(id, tool, args.clone()));
        doc.push(result(id, out));
    }
    doc.extend([asst(answer), user(next)]);
    doc
}

/// The section `n` of a handoff summary (after its header, up to the next section header).
pub fn section(text: &str, n: usize) -> String {
    let h = context_compactor::summarize::section_header(n);
    let start = text.find(&h).unwrap_or_else(|| panic!("section {n} in\n{text}")) + h.len();
    let end = text[start..].find("\n[§").map(|e| start + e).unwrap_or(text.len());
    text[start..end].to_string()
}

/// Runs the engine's own handoff over an OpenAI Chat `doc` (no summarizer: the
/// mechanical writer), forced.
pub fn mechanical(doc: Vec<Value>, opts: Value) -> Outcome {
    let cfg = Config::from_options(&opts).unwrap();
    let t = formats::decode(Format::OpenaiChat, Value::Array(doc)).unwrap();
    let mut job = Job::start(cfg, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: false });
    run_sync(&mut job, |_| unreachable!()).unwrap()
}

/// The facts of an OpenAI Chat `doc`, every row folded, each row's stamped
/// `artifact_ref` the handle of its results, and the decoded rows.
pub fn facts_of(doc: &[Value]) -> (context_compactor::summarize::facts::Facts, Vec<context_compactor::transcript::Message>) {
    use context_compactor::transcript::Message;
    let t = formats::decode(Format::OpenaiChat, Value::Array(doc.to_vec())).unwrap();
    let rows: Vec<(usize, &Message)> = t.messages.iter().enumerate().collect();
    let f = context_compactor::summarize::facts::Facts::read(&rows, &|_, _, m: &Message| m.provenance.artifact_ref.clone());
    (f, t.messages.clone())
}

/// The deterministic handoff of an OpenAI Chat `doc` ([`facts_of`]) within `bytes`.
pub fn handoff(doc: &[Value], bytes: usize) -> String {
    context_compactor::summarize::handoff_summary(&facts_of(doc).0, bytes)
}
