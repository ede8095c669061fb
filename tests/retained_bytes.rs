//! Issue 14 finding 7 (T-1, T-4, W-1): a retained row comes back byte for byte as the
//! host gave it, in every format: `null` / `false` provenance keys, provenance keys in any
//! position, integers past 2^53. A property test over generated transcripts.

use context_compactor::config::Config;
use context_compactor::engine::{run_sync, Job, JobOptions, Reply};
use context_compactor::formats::{self, Format};
use context_compactor::output::MessageJson;
use context_compactor::state::SessionState;
use context_compactor::trigger::Signals;
use proptest::prelude::*;
#[path = "common/rows.rs"]
mod rows;
use rows::{document as doc, text_row, FORMATS};

/// Extra keys a stored row may carry (JSON member texts), placed first or last.
const EXTRAS: [&str; 8] = [
    r#""pinned":false"#,
    r#""summary_level":null"#,
    r#""artifact_ref":null"#,
    r#""message_id":null"#,
    r#""observation_source":null"#,
    r#""transcript_role":"conversational""#,
    r#""trace_id":1234567890123456789"#,
    r#""big":[18446744073709551615,9007199254740993]"#,
];

#[derive(Debug, Clone)]
struct Row {
    extras: Vec<usize>,
    first: bool,
    repeat: bool,
}

fn rows() -> impl Strategy<Value = Vec<Row>> {
    prop::collection::vec((prop::collection::vec(0usize..EXTRAS.len(), 0..3), any::<bool>(), prop::bool::weighted(0.2)).prop_map(|(extras, first, repeat)| Row { extras, first, repeat }), 8..24)
}

fn check(format: Format, spec: &[Row], must_carry: bool) -> Result<(), TestCaseError> {
    let mut texts = Vec::new();
    for (i, r) in spec.iter().enumerate() {
        let mut ex: Vec<&str> = r.extras.iter().map(|&k| EXTRAS[k]).collect();
        ex.sort();
        ex.dedup_by(|a, b| a.split(':').next() == b.split(':').next());
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        // user text is short: N-1 quotes every folded user text in the summary, so the
        // fold shrinks by the assistant rows
        let text = match (r.repeat, role) {
            (true, _) => "same text again ".repeat(20),
            (false, "user") => format!("row {i}: do the next step"),
            _ => format!("row {i}: {}", "words ".repeat(40)),
        };
        texts.push(text_row(format, role, &text, &ex, r.first));
    }
    texts.push(text_row(format, "user", "final request", &[], false));
    let t = formats::decode_text(format, &doc(format, &texts)).map_err(|e| TestCaseError::fail(format!("{}: {e}", format.name())))?;
    let source = t.clone();
    let config = Config::from_options(&serde_json::json!({ "profile": "default", "contextWindow": 100000, "preserveRecentTurns": 6 })).unwrap();
    let mut job = Job::start(config, SessionState::default(), t, JobOptions { signals: Signals { force: true, ..Signals::default() }, has_summarizer: true });
    let o = run_sync(&mut job, |_| Reply::Summary { text: "S".into(), usage: None }).unwrap();
    prop_assert_eq!(o.status, "compacted", "{}: {}", format.name(), o.reason);
    let rw = o.rewrite.as_ref().unwrap();
    prop_assert!(!must_carry || rw.retained.iter().any(|r| texts[r.source].contains("null") || texts[r.source].contains("false") || texts[r.source].contains("1234567890123456789")), "{}: some retained row carries a case", format.name());
    for r in &rw.retained {
        let m = &o.transcript.messages[r.offset];
        let got = serde_json::to_string(&MessageJson { m, view: formats::View::Stored }).unwrap();
        let want = &texts[r.source];
        // issue 14: no edit at all, not even a `message_id` on a twin whose earlier copy was folded
        prop_assert_eq!(&got, want, "{}: retained row {} changed", format.name(), r.source);
    }
    // T-4: ids do not restart at a rewrite: a fresh decode of the stored view, read with
    // the committed state, gives every retained row the id it had in the source
    let stored = formats::encode(&o.transcript, formats::View::Stored);
    let mut again = formats::decode(format, stored).map_err(|e| TestCaseError::fail(format!("{}: {e}", format.name())))?;
    context_compactor::trust::apply(&mut again, &o.state, u64::MAX);
    for r in &rw.retained {
        prop_assert_eq!(&again.messages[r.offset].id, &source.messages[r.source].id, "{}: retained row {} keeps its id", format.name(), r.source);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48), ..ProptestConfig::default() })]

    #[test]
    fn t1_i14_retained_rows_are_byte_identical_in_every_format(spec in rows()) {
        for f in FORMATS {
            check(f, &spec, false)?;
        }
    }
}

#[test]
fn t1_i14_null_and_false_provenance_keys_and_big_integers_survive() {
    for f in FORMATS {
        let spec: Vec<Row> = (0..12).map(|i| Row { extras: vec![i % EXTRAS.len(), (i + 3) % EXTRAS.len()], first: i % 2 == 0, repeat: false }).collect();
        check(f, &spec, true).unwrap();
    }
}

#[test]
fn t4_i14_retained_twins_keep_their_ids_without_a_message_id_key() {
    for f in FORMATS {
        // every user row and every assistant row repeats the one before: the retained
        // ones are later twins of folded rows
        let spec: Vec<Row> = (0..14).map(|_| Row { extras: vec![], first: false, repeat: true }).collect();
        check(f, &spec, false).unwrap();
    }
}

#[test]
fn t1_i14_a_lone_surrogate_in_json_text_is_refused_never_replaced() {
    // issue 14 finding 7: U+FFFD in its place would change the row; refusing it is the
    // same answer the object form gets
    for f in FORMATS {
        for esc in [r"\ud800", r"\udfff x", r"\ud800\u0041"] {
            let row = text_row(f, "user", "x", &[&format!(r#""note":"{esc}""#)], false);
            let e = formats::decode_text(f, &doc(f, &[row])).expect_err("refused");
            assert_eq!(e.code, context_compactor::ErrorCode::InvalidTranscript, "{}: {e}", f.name());
        }
    }
}
