//! Property tests over random OpenAI-chat and Anthropic transcripts (default profile):
//! the job never panics and returns Ok; a committed rewrite keeps pairing valid (F-2,
//! S-4), never splits a tool exchange, partitions the source (W-1), keeps the system
//! rows and the newest user request (S-1, S-9) and shrinks the transcript (W-2);
//! injected context stays glued to its request (S-7), a stage-2 fold keeps the run's
//! newest round and names the folded calls (S-6, Y-5), and memory never indexes
//! injected context or summaries (M-1).

mod common;
use common::fake_summary;
use context_compactor::config::{Config, Profile};
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, encode, validate_pairing, Format, View};
use context_compactor::state::SessionState;
use context_compactor::transcript::{Block, Role};
use context_compactor::trigger::Signals;
use proptest::prelude::*;
use serde_json::{json, Value};

const PIECES: &[&str] = &["hello ", "数据库连接 ", "😀", "🇺🇸 ", "é", "עברית ", "👨‍👩‍👧", "scan port 443. ", "x", "artifact#7 "];

/// Pieces of quoted text (Y-9): every line break, engine line starts, fence tags, bytes
/// that look like a break's (U+00C5 `C3 85`, U+2026 `E2 80 A6`), a bidi control.
const QUOTE_PIECES: &[&str] = &["\n", "\r\n", "\r", "\x0B", "\x0C", "\u{85}", "\u{2028}", "\u{2029}", "-> call ", "<- result of ", "-- engine record", "[#2 user]", "  ", "\u{200B}", "<", "/transcript>", "<summaries>", "\u{C5}", "\u{2026}", "\u{202E}", "ok ", "é"];

fn text(max_reps: usize) -> impl Strategy<Value = String> {
    (prop::sample::select(PIECES), 1..max_reps).prop_map(|(p, n)| p.repeat(n))
}

/// A tool-result body: mostly small, sometimes up to 20 KB.
fn body() -> impl Strategy<Value = String> {
    let big = (prop::sample::select(PIECES), 0usize..20_000).prop_map(|(p, n)| {
        let mut s = String::with_capacity(n + 32);
        while s.len() < n {
            s.push_str(p);
        }
        s
    });
    prop_oneof![3 => text(40), 1 => big]
}

#[derive(Debug, Clone)]
enum Seg {
    User(String),
    Asst(String),
    /// Parallel calls: (arguments text, result body, is_error, stamped artifact).
    Tools(Vec<(String, String, bool, bool)>),
    /// Host-injected context (T-2, S-7).
    Injected(String),
}

fn seg() -> impl Strategy<Value = Seg> {
    prop_oneof![
        3 => text(60).prop_map(Seg::User),
        3 => text(60).prop_map(Seg::Asst),
        3 => prop::collection::vec((text(20), body(), any::<bool>(), any::<bool>()), 1..=3).prop_map(Seg::Tools),
        1 => text(30).prop_map(Seg::Injected),
    ]
}

#[derive(Debug, Clone)]
struct Input {
    anthropic: bool,
    system: String,
    summaries: Vec<(String, u8)>,
    segs: Vec<Seg>,
    window: u64,
    turns: usize,
    bytes: usize,
    summarizer: bool,
}

fn input() -> impl Strategy<Value = Input> {
    (
        any::<bool>(),
        text(30),
        prop::collection::vec((text(40), 1u8..=2), 0..6),
        prop::collection::vec(seg(), 1..24),
        2_000u64..300_000,
        0usize..10,
        0usize..100_000,
        prop::bool::weighted(0.8),
    )
        .prop_map(|(anthropic, system, summaries, segs, window, turns, bytes, summarizer)| Input { anthropic, system, summaries, segs, window, turns, bytes, summarizer })
}

fn build(inp: &Input) -> (Format, Value) {
    let mut rows: Vec<Value> = Vec::new();
    if !inp.anthropic {
        rows.push(json!({ "role": "system", "content": inp.system }));
    }
    for (t, l) in &inp.summaries {
        rows.push(json!({ "role": "user", "content": format!("[summary] {t}"), "summary_level": l }));
    }
    let mut art = 0;
    for (k, s) in inp.segs.iter().enumerate() {
        match s {
            Seg::User(t) => rows.push(json!({ "role": "user", "content": t })),
            Seg::Injected(t) => rows.push(json!({ "role": "user", "content": format!("[context] {t}"), "transcript_role": "injected_context" })),
            Seg::Asst(t) if inp.anthropic => rows.push(json!({ "role": "assistant", "content": [{ "type": "text", "text": t }] })),
            Seg::Asst(t) => rows.push(json!({ "role": "assistant", "content": t })),
            Seg::Tools(cs) => {
                let id = |j: usize| format!("call_{k}_{j}");
                if inp.anthropic {
                    let uses: Vec<Value> = cs.iter().enumerate().map(|(j, (a, ..))| json!({ "type": "tool_use", "id": id(j), "name": format!("tool{j}"), "input": { "q": a } })).collect();
                    rows.push(json!({ "role": "assistant", "content": uses }));
                    let res: Vec<Value> = cs.iter().enumerate().map(|(j, (_, b, e, _))| json!({ "type": "tool_result", "tool_use_id": id(j), "is_error": e, "content": [{ "type": "text", "text": b }] })).collect();
                    let mut m = json!({ "role": "user", "content": res });
                    if cs.iter().any(|c| c.3) {
                        art += 1;
                        m["artifact_ref"] = json!(format!("artifact#{art}"));
                    }
                    rows.push(m);
                } else {
                    let calls: Vec<Value> = cs.iter().enumerate().map(|(j, (a, ..))| json!({ "id": id(j), "type": "function", "function": { "name": format!("tool{j}"), "arguments": json!({ "q": a }).to_string() } })).collect();
                    rows.push(json!({ "role": "assistant", "content": null, "tool_calls": calls }));
                    for (j, (_, b, _, stamped)) in cs.iter().enumerate() {
                        let mut m = json!({ "role": "tool", "tool_call_id": id(j), "content": b });
                        if *stamped {
                            art += 1;
                            m["artifact_ref"] = json!(format!("artifact#{art}"));
                        }
                        rows.push(m);
                    }
                }
            }
        }
    }
    if inp.anthropic {
        (Format::Anthropic, json!({ "system": inp.system, "messages": rows }))
    } else {
        (Format::OpenaiChat, Value::Array(rows))
    }
}

/// The generated summaries stand for the host's stored ones: its state vouches for them
/// (issue 14 trust boundary).
fn vouched(t: &context_compactor::Transcript) -> SessionState {
    context_compactor::trust::vouch(&SessionState::default(), t)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    #[test]
    fn compaction_invariants(inp in input()) {
        let (format, doc) = build(&inp);
        let source = formats::decode(format, doc.clone()).expect("decode");
        let mut config = Config::preset(Profile::Default);
        config.context_window = inp.window;
        config.preserve_recent_turns = inp.turns;
        config.preserve_recent_bytes = inp.bytes;
        let signals = Signals { force: true, ..Signals::default() };
        let mut job = Job::start(config, vouched(&source), source.clone(), JobOptions { signals, has_summarizer: inp.summarizer });
        let out = run_sync(&mut job, |r| if inp.summarizer { fake_summary(r) } else { Reply::Failed { message: "none".into(), context_exceeded: false } }).expect("the job returns Ok");
        // A fold too small to shrink the transcript is refused by validation (W-2 "no
        // growth") with the history intact (W-3); any other failure is a bug.
        let no_gain = out.status == "skipped" && out.reason.starts_with("no_reduction");
        prop_assert!(["compacted", "skipped", "cannot_fit"].contains(&out.status) || no_gain, "status {} ({})", out.status, out.reason);
        if out.status != "compacted" {
            prop_assert_eq!(&out.transcript, &source);
            prop_assert!(out.rewrite.is_none());
            return Ok(());
        }
        let t = &out.transcript;
        validate_pairing(t).map_err(|e| TestCaseError::fail(format!("pairing: {e}")))?;
        // no tool exchange split: every result's call is in the result, earlier; every
        // call before the last message is answered
        for (i, m) in t.messages.iter().enumerate() {
            for rid in m.result_ids() {
                prop_assert!(t.messages[..i].iter().any(|p| p.call_ids().any(|c| c == rid)), "result {} at {} has its call", rid, i);
            }
            for cid in m.call_ids() {
                prop_assert!(t.messages[i + 1..].iter().any(|p| p.result_ids().any(|r| r == cid)), "call {} at {} has its result", cid, i);
            }
        }
        // W-1: retained + discarded partition 0..n, each strictly increasing
        let rw = out.rewrite.as_ref().unwrap();
        let ret: Vec<usize> = rw.retained.iter().map(|r| r.source).collect();
        prop_assert!(ret.windows(2).all(|w| w[0] < w[1]));
        prop_assert!(rw.discarded.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = ret.iter().chain(rw.discarded.iter()).copied().collect();
        all.sort();
        prop_assert_eq!(all, (0..source.messages.len()).collect::<Vec<_>>());
        // S-1: system rows kept (and the Anthropic top-level system untouched)
        for (i, m) in source.messages.iter().enumerate() {
            if m.role == Role::System {
                prop_assert!(ret.contains(&i), "system row {} kept", i);
            }
        }
        prop_assert_eq!(&t.envelope, &source.envelope);
        // S-6: a run started by a notice alone (injected context right after a final
        // answer) has that notice as its request: kept verbatim, like a user request
        let run = context_compactor::select::run_start(&source.messages, 0);
        let notice_run = run.is_some_and(|r| source.messages[r].provenance.transcript_role == context_compactor::transcript::TranscriptRole::InjectedContext && source.messages[r..].iter().all(|m| !m.starts_turn()));
        if let Some(r) = run.filter(|_| notice_run) {
            for j in r..context_compactor::select::request_end(&source.messages, r) {
                prop_assert!(ret.contains(&j), "notice {} of the open run kept", j);
            }
        }
        // S-9 (default profile): the newest user request is kept verbatim
        if let Some(last) = source.messages.iter().rposition(|m| m.starts_turn()).filter(|_| !notice_run) {
            let r = rw.retained.iter().find(|r| r.source == last);
            prop_assert!(r.is_some(), "newest request {} kept", last);
            prop_assert_eq!(&t.messages[r.unwrap().offset].raw, &source.messages[last].raw);
        }
        // S-7: injected context right before the newest request stays glued to it
        if let Some(last) = source.messages.iter().rposition(|m| m.starts_turn()).filter(|_| !notice_run) {
            let mut k = last;
            while k > 0 && source.messages[k - 1].provenance.transcript_role == context_compactor::transcript::TranscriptRole::InjectedContext {
                k -= 1;
                prop_assert!(ret.contains(&k), "injected row {} glued to request {} kept", k, last);
            }
            // S-6 stage 2: the run's newest round (from its last assistant row) is kept verbatim
            if rw.stage == context_compactor::select::Stage::InRun {
                if let Some(a) = source.messages.iter().rposition(|m| m.role == Role::Assistant).filter(|&a| a > last) {
                    for j in a..source.messages.len() {
                        prop_assert!(ret.contains(&j), "newest-round row {} kept in stage 2", j);
                    }
                }
                // Y-5: the summary names the calls folded from the run's earlier rounds
                let folded_calls = rw.discarded.iter().filter(|&&d| d > last).any(|&d| source.messages[d].has_calls());
                if folded_calls {
                    prop_assert!(rw.summary.as_ref().unwrap().text.contains("Calls already run"), "ledger in stage-2 summary");
                }
            }
        }
        // N-1: every user text block of a discarded row is in the summary, whole, clipped
        // with a marker naming its message, or (a small window's budget spent) in a run
        // of messages the summary names as whole in memory
        let stext = &rw.summary.as_ref().unwrap().text;
        let named_runs: Vec<(usize, usize)> = stext
            .lines()
            .filter_map(|l| l.strip_prefix(context_compactor::nothing_lost::UNQUOTED_PREFIX)?.strip_prefix("messages "))
            .filter_map(|r| {
                let (a, rest) = r.split_once(" to ")?;
                let b = rest.rsplit_once(" (").map_or(rest, |(b, _)| b);
                let at = |id: &str| source.messages.iter().position(|m| m.id == id);
                Some((at(a)?, at(b)?))
            })
            .collect();
        for &d in &rw.discarded {
            for text in source.messages[d].user_texts() {
                let clipped = format!("{}{}, offset {d}): ", context_compactor::nothing_lost::CLIPPED_PREFIX, source.messages[d].id);
                let in_run = named_runs.iter().any(|&(a, b)| a.min(b) <= d && d <= a.max(b));
                prop_assert!(stext.contains(text) || stext.contains(&clipped) || in_run, "user text of row {} kept in the summary", d);
            }
        }
        // M-1: nothing injected or summarized is projected into memory
        if let Some(batch) = out.memory.as_ref() {
            for r in &batch.records {
                prop_assert!(!r.content.starts_with("[context]") && !r.content.starts_with("[summary]"), "{}", r.content);
            }
        }
        // W-2: smaller
        prop_assert!(out.after.bytes < out.before.bytes, "{} < {}", out.after.bytes, out.before.bytes);
        // the request view carries no provenance; the stored view round-trips
        let stored = encode(t, View::Stored);
        let mut back = formats::decode(format, stored.clone()).expect("stored view decodes");
        prop_assert_eq!(encode(&back, View::Stored), stored);
        // T-4: ids read back with the committed state (repeated rows keep theirs through `state.twins`, issue 14)
        context_compactor::trust::apply(&mut back, &out.state, u64::MAX);
        let ids: Vec<&str> = back.messages.iter().map(|m| m.id.as_str()).collect();
        let want: Vec<&str> = t.messages.iter().map(|m| m.id.as_str()).collect();
        prop_assert_eq!(ids, want);
        let req = encode(t, View::Request).to_string();
        prop_assert!(!req.contains("\"summary_level\"") && !req.contains("\"artifact_ref\""));
        // valid Unicode everywhere (clips cut on character boundaries)
        for m in &t.messages {
            for b in &m.blocks {
                if let Block::ToolResult { text, .. } | Block::Text { text } = b {
                    prop_assert!(String::from_utf16(&text.encode_utf16().collect::<Vec<_>>()).is_ok());
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64), ..ProptestConfig::default() })]

    /// Kerkov profile, provider-usage trigger over the threshold: the same structural
    /// invariants (pairing, partition, system rows, smaller), and J-5 determinism.
    #[test]
    fn kerkov_compaction_invariants_and_determinism(inp in input()) {
        let (format, doc) = build(&inp);
        let source = formats::decode(format, doc).expect("decode");
        let mut config = Config::preset(Profile::Kerkov);
        config.context_window = inp.window.max(50_000);
        config.preserve_recent_turns = inp.turns;
        config.preserve_recent_bytes = inp.bytes;
        let total = config.threshold_tokens();
        let signals = Signals { usage: Some(json!({ "prompt_tokens": total, "completion_tokens": 0 })), ..Signals::default() };
        let go = || {
            let mut job = Job::start(config.clone(), vouched(&source), source.clone(), JobOptions { signals: signals.clone(), has_summarizer: true });
            run_sync(&mut job, fake_summary).expect("the job returns Ok")
        };
        let out = go();
        prop_assert_eq!(out.to_json().to_string(), go().to_json().to_string());
        let no_gain = out.status == "skipped" && out.reason.starts_with("no_reduction");
        prop_assert!(["compacted", "skipped", "cannot_fit"].contains(&out.status) || no_gain, "status {} ({})", out.status, out.reason);
        if out.status != "compacted" {
            prop_assert_eq!(&out.transcript, &source);
            return Ok(());
        }
        validate_pairing(&out.transcript).map_err(|e| TestCaseError::fail(format!("pairing: {e}")))?;
        let rw = out.rewrite.as_ref().unwrap();
        let mut all: Vec<usize> = rw.retained.iter().map(|r| r.source).chain(rw.discarded.iter().copied()).collect();
        all.sort();
        prop_assert_eq!(all, (0..source.messages.len()).collect::<Vec<_>>());
        for (i, m) in source.messages.iter().enumerate() {
            if m.role == Role::System || (m.is_summary() && rw.rollups.is_empty()) {
                prop_assert!(!rw.discarded.contains(&i), "protected row {} kept", i);
            }
        }
        prop_assert!(out.after.bytes < out.before.bytes);
        let mut rows = match encode(&source, View::Stored) { Value::Array(a) => a, Value::Object(m) => m["messages"].as_array().unwrap().clone(), _ => unreachable!() };
        context_compactor::rewrite::apply_patch(&mut rows, &rw.patch).unwrap();
        let want = match encode(&out.transcript, View::Stored) { Value::Array(a) => a, Value::Object(m) => m["messages"].as_array().unwrap().clone(), _ => unreachable!() };
        prop_assert_eq!(rows, want);
    }

    /// E-5: a clip of any text at any cut is valid Unicode and states exactly what it omitted.
    #[test]
    fn clip_is_valid_and_exact(body in prop::collection::vec(prop::sample::select(PIECES), 0..400).prop_map(|v| v.concat()), head in 0usize..600, tail in 0usize..300) {
        let c = context_compactor::evict::clip(&body, head, tail);
        prop_assert!(String::from_utf16(&c.encode_utf16().collect::<Vec<_>>()).is_ok());
        if body.len() <= head + tail {
            prop_assert_eq!(c, body);
        } else {
            let m = c.find("\n[... clipped: ").unwrap();
            let end = c.find(" ...]\n").unwrap() + 6;
            let (h, t) = (&c[..m], &c[end..]);
            prop_assert!(body.starts_with(h) && body.ends_with(t) && h.len() <= head);
            let omitted = &body[h.len()..body.len() - t.len()];
            let stated = format!("clipped: {} bytes ({} characters) omitted", omitted.len(), omitted.chars().count());
            prop_assert!(c.contains(&stated), "{}", stated);
        }
    }

    /// Y-9 (brk finding 3): quoted transcript text of any mix of line breaks (LF, CR LF, a
    /// bare CR, VT, FF, U+0085, U+2028, U+2029), engine line starts and fence tags has no
    /// line, cut at any of those breaks, that opens like an engine line without its `\\`,
    /// and its counted size and every prefix and suffix are the quote's own bytes.
    #[test]
    fn y9_brk3_quoted_text_has_no_unescaped_engine_line_after_any_break(parts in prop::collection::vec(prop::sample::select(QUOTE_PIECES), 0..40), cuts in prop::collection::vec(0usize..400, 4)) {
        use context_compactor::quote::{content, content_len, content_prefix, content_suffix};
        let t = parts.concat();
        let q = content(&t).into_owned();
        let mut line = String::new();
        let mut chars = q.chars().peekable();
        let mut lines = Vec::new();
        while let Some(c) = chars.next() {
            if matches!(c, '\n' | '\x0B' | '\x0C' | '\u{85}' | '\u{2028}' | '\u{2029}') || (c == '\r' && chars.peek() != Some(&'\n')) {
                lines.push(std::mem::take(&mut line));
            } else {
                line.push(c);
            }
        }
        lines.push(line);
        for l in &lines {
            let l = l.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{200B}');
            for start in ["-> call ", "<- result of ", "-- engine record", "[#"] {
                prop_assert!(!l.starts_with(start), "{:?} quoted as {:?}", t, q);
            }
        }
        prop_assert_eq!(content_len(&t), q.len());
        for n in cuts.iter().map(|&c| c.min(q.len() + 1)) {
            let mut p = Vec::new();
            content_prefix(&t, n, &mut p);
            prop_assert_eq!(&p[..], &q.as_bytes()[..n.min(q.len())]);
            prop_assert_eq!(content_suffix(&t, n), q.as_bytes()[q.len() - n.min(q.len())..].to_vec());
        }
    }
}
