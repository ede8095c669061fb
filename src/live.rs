//! A live transcript: the decoded transcript a host keeps between model calls, with
//! its per-message measurements, so the check before each call costs what was
//! appended since, not the whole transcript (issue "Performance": O(appended) per turn).
//!
//! [`LiveTranscript::open`] decodes once and measures every row (UTF-8 bytes, token
//! estimate at the state's calibration) into running totals: the estimate, the bytes,
//! the system rows, the pinned rows and where the newest user request is.
//! [`LiveTranscript::append`] decodes only the new rows (content-derived ids continue as
//! in a decode of the whole list, T-4) and adds their measures.
//! [`LiveTranscript::check`] turns the totals into the same [`Decision`] as
//! [`crate::trigger::decide`] on the whole transcript, in O(1) (O(n) once when the
//! state's calibration changed, C-7). [`LiveTranscript::compact`] runs one compaction
//! over the held transcript and holds the result instead; the held transcript is then
//! exactly what a fresh decode of the stored view would give.

use crate::config::Config;
use crate::engine::{run_sync, Job, JobOptions, Outcome, Reply};
use crate::error::Result;
use crate::formats::{self, ContentIds, Format, View};
use crate::measure::{message_tokens, text_tokens};
use crate::state::SessionState;
use crate::summarize::SummarizeRequest;
use crate::transcript::{Message, Role, Transcript};
use crate::trigger::{decide_from, Decision, Signals, Totals};
use serde_json::Value;

/// Per-message measures and their running totals, at one calibration.
#[derive(Debug, Clone)]
struct Measures {
    /// The calibration the token estimates were taken at (C-7).
    calibration: f64,
    /// Estimated tokens of each message.
    tokens: Vec<u64>,
    /// Tokens of the pinned non-system rows (C-8, Y-10).
    pinned_tokens: u64,
    /// Offset of the newest message that starts a turn (S-7), if any, and whether it is
    /// pinned (then it is already in `pinned_tokens`).
    last_request: Option<(usize, bool)>,
    /// With `projectMemory: false`: the user text bytes of the non-pinned rows
    /// ([`crate::trigger::row_user_bytes`]), and those of the newest request (taken out
    /// again: it is protected), plus the summary block's ([`Totals::user_text_bytes`]).
    user_bytes: u64,
    request_user_bytes: u64,
    summary_user_bytes: u64,
    totals: Totals,
}

impl Measures {
    fn new(t: &Transcript, config: &Config, calibration: f64) -> Measures {
        let env_bytes = t.envelope.bytes();
        let env_tokens = text_tokens(env_bytes, config, calibration);
        let mut m = Measures {
            calibration,
            tokens: Vec::with_capacity(t.messages.len()),
            pinned_tokens: 0,
            last_request: None,
            user_bytes: 0,
            request_user_bytes: 0,
            summary_user_bytes: if config.project_memory { 0 } else { crate::trigger::summary_user_bytes(&t.messages) },
            totals: Totals { estimated_tokens: env_tokens, bytes: env_bytes as u64, system_tokens: env_tokens, protected_tokens: 0, user_text_bytes: 0 },
        };
        m.add(&t.messages, 0, config);
        m
    }

    /// Adds the measures of `rows`, which sit at offsets `first..`.
    fn add(&mut self, rows: &[Message], first: usize, config: &Config) {
        for (k, row) in rows.iter().enumerate() {
            let tokens = message_tokens(row, config, self.calibration);
            self.tokens.push(tokens);
            // Saturating, in the same order as `Totals::of`, so both agree at the limits.
            self.totals.estimated_tokens = self.totals.estimated_tokens.saturating_add(tokens);
            self.totals.bytes = self.totals.bytes.saturating_add(row.bytes as u64);
            if row.role == Role::System {
                self.totals.system_tokens = self.totals.system_tokens.saturating_add(tokens);
            } else if row.provenance.is_pinned() {
                self.pinned_tokens = self.pinned_tokens.saturating_add(tokens);
            }
            let user = if config.project_memory || row.role == Role::System || row.provenance.is_pinned() { 0 } else { crate::trigger::row_user_bytes(row) };
            self.user_bytes = self.user_bytes.saturating_add(user);
            if row.starts_turn() {
                self.last_request = Some((first + k, row.provenance.is_pinned()));
                self.request_user_bytes = user;
            }
        }
        if !config.project_memory {
            self.totals.user_text_bytes = self.user_bytes.saturating_sub(self.request_user_bytes).saturating_add(self.summary_user_bytes);
        }
        // The newest request counts once: not again when it is also pinned (C-8).
        let request = match self.last_request {
            Some((i, false)) => self.tokens.get(i).copied().unwrap_or(0),
            _ => 0,
        };
        self.totals.protected_tokens = self.pinned_tokens.saturating_add(request);
    }
}

fn empty(format: Format) -> Transcript {
    Transcript { format, messages: Vec::new(), envelope: Default::default() }
}

/// A decoded transcript held between calls, with its measures. See the module docs.
#[derive(Debug, Clone)]
pub struct LiveTranscript {
    config: Config,
    transcript: Transcript,
    ids: ContentIds,
    measures: Measures,
    /// The fingerprint of the state the trust pass last ran with ([`trust_key`]), `None`
    /// when a held row claims provenance the pass has not judged yet (issue 14).
    trusted_for: Option<u64>,
    /// The twin table of the state last seen (T-4, issue 14): appended rows get their
    /// ids through it, as the trust pass would give them.
    twins: Vec<crate::state::TwinIds>,
}

/// What the trust pass reads from a state (its summaries, pins, handles and artifact
/// counter), hashed: a check with another state runs the pass again.
fn trust_key(state: &SessionState, config: &Config) -> u64 {
    let mut h = crate::transcript::fnv1a(&config.max_pinned_bytes.to_le_bytes());
    let mut mix = |b: &[u8]| h = (h ^ crate::transcript::fnv1a(b)).wrapping_mul(0x0000_0100_0000_01b3);
    mix(&state.next_artifact.to_le_bytes());
    for s in &state.summaries {
        mix(s.id.as_bytes());
        mix(s.hash.as_bytes());
    }
    mix(b"\0pins");
    for p in &state.pins {
        mix(p.as_bytes());
    }
    mix(b"\0handles");
    for x in &state.handles {
        mix(x.as_bytes());
    }
    mix(b"\0twins");
    for t in &state.twins {
        mix(t.hash.as_bytes());
        for c in &t.counters {
            mix(&c.to_le_bytes());
        }
    }
    h
}

/// Does a row carry provenance keys the trust pass judges (issue 14)?
fn claims(m: &Message) -> bool {
    let p = &m.provenance;
    p.pinned || p.summary_level.is_some() || p.artifact_ref.is_some() || p.transcript_role == crate::transcript::TranscriptRole::CompactionSummary
}

impl LiveTranscript {
    /// Decodes a host document (see [`formats::decode`]) and measures it at the
    /// calibration of a new session (1.0); [`LiveTranscript::check`] re-measures once if
    /// the state it is given has another calibration.
    ///
    /// Errors: `invalid_transcript` as [`formats::decode`]; a pairing code
    /// (`unpaired_tool_result`, ...) as [`formats::validate_pairing`] (F-5, issue 14).
    pub fn open(config: Config, format: Format, doc: Value) -> Result<LiveTranscript> {
        let mut ids = ContentIds::default();
        let transcript = formats::decode_with_ids(format, doc, &mut ids)?;
        formats::validate_pairing(&transcript)?;
        let measures = Measures::new(&transcript, &config, SessionState::default().calibration());
        Ok(LiveTranscript { config, transcript, ids, measures, trusted_for: None, twins: Vec::new() })
    }

    /// [`LiveTranscript::open`] from the document's JSON text ([`formats::decode_owned`]:
    /// no `Value` tree per held row; the rows borrow the text, given away or copied
    /// once, until a committed compaction gives the kept rows their own, issue 15).
    ///
    /// Errors: `invalid_transcript` as [`formats::decode_text`]; a pairing code as
    /// [`LiveTranscript::open`].
    pub fn open_text(config: Config, format: Format, text: impl Into<String>) -> Result<LiveTranscript> {
        let mut ids = ContentIds::default();
        let transcript = formats::decode_owned_with_ids(format, text.into(), &mut ids)?;
        formats::validate_pairing(&transcript)?;
        let measures = Measures::new(&transcript, &config, SessionState::default().calibration());
        Ok(LiveTranscript { config, transcript, ids, measures, trusted_for: None, twins: Vec::new() })
    }

    /// Holds a decoded transcript: ids as a fresh [`formats::decode`] of its stored view
    /// gives them (stored `message_id`s, else content-derived ids counted from the
    /// start), every row measured at `calibration`.
    fn hold(config: Config, mut transcript: Transcript, calibration: f64) -> LiveTranscript {
        let mut ids = ContentIds::default();
        for m in transcript.messages.iter_mut() {
            m.id = ids.id_of(m);
        }
        let measures = Measures::new(&transcript, &config, calibration);
        LiveTranscript { config, transcript, ids, measures, trusted_for: None, twins: Vec::new() }
    }

    /// The held transcript (what [`formats::decode`] of its stored view gives).
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// The held transcript in the given view (F-4), in the shape the host gave it.
    pub fn encode(&self, view: View) -> Value {
        formats::encode(&self.transcript, view)
    }

    /// The configuration the measures use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Number of rows held.
    pub fn len(&self) -> usize {
        self.transcript.messages.len()
    }

    /// True when no rows are held.
    pub fn is_empty(&self) -> bool {
        self.transcript.messages.is_empty()
    }

    /// Appends provider messages (the host's new rows, in its format). Only these rows
    /// are decoded and measured: O(appended). Atomic: on error nothing is appended.
    ///
    /// The pairing rules (F-2) hold after the append (issue 14: an orphan tool result is
    /// refused here, as `check` refuses it in a whole transcript); only the new rows and
    /// the exchange open before them are checked ([`formats::validate_pairing_from`]).
    ///
    /// Errors: `invalid_transcript` naming the offset (in the whole transcript) of a
    /// malformed row; `unpaired_tool_result`, `unanswered_tool_call` or
    /// `duplicate_tool_call_id` naming the offset when the rows break the pairing rules.
    pub fn append(&mut self, rows: Vec<Value>) -> Result<()> {
        let first = self.transcript.messages.len();
        // Decoded against a map of the new rows only: the held map is not copied (issue
        // 15: O(appended)), and stays untouched when a row is malformed (atomic).
        let mut local = ContentIds::default();
        // Y-5: a result answering a held call is read with its tool's name
        let mut new = formats::decode_rows_after(self.transcript.format, rows, first, &mut local, &self.transcript.messages)?;
        drop(local);
        // Every row decoded: now the content-derived ids continue the held count (T-4),
        // as a decode of the whole list would number them.
        for m in new.iter_mut() {
            if m.provenance.message_id.is_none() {
                m.id = self.ids.id_of(m);
                if let Some(id) = crate::trust::remap_fresh_id(&m.id, &self.twins) {
                    m.id = id;
                }
            }
        }
        self.transcript.messages.extend(new);
        if self.transcript.format == Format::Gemini && first > 0 {
            // Gemini links results to the calls of the row right before them; the first
            // new row's caller is the last old row.
            if let Some(seam) = self.transcript.messages.get_mut(first - 1..) {
                formats::gemini::link_results(seam);
            }
        }
        if let Err(e) = formats::validate_pairing_from(&self.transcript, first) {
            self.transcript.messages.truncate(first);
            return Err(e);
        }
        // Y-10: a new compaction item supersedes the held ones, which stop being pinned:
        // the pinned measures are re-taken (O(n), once per compaction item). Without a
        // new compaction item the newest one is unchanged, and so is every mark: no scan
        // of the held rows (issue 15, O(appended); the scan was most of an append).
        let new_compaction = self.transcript.messages.get(first..).is_some_and(|added| added.iter().any(|m| m.provenance.provider_compaction));
        if new_compaction && crate::transcript::mark_superseded_compactions(&mut self.transcript.messages) {
            self.measures = Measures::new(&self.transcript, &self.config, self.measures.calibration);
        } else if let Some(added) = self.transcript.messages.get(first..) {
            self.measures.add(added, first, &self.config);
        }
        if self.transcript.messages.get(first..).is_some_and(|added| added.iter().any(claims)) {
            self.trusted_for = None;
        }
        Ok(())
    }

    /// The decision for the held transcript (C-1, C-2, C-8, C-9): the same as
    /// [`crate::trigger::decide`] on the whole transcript. Pure for the session: nothing
    /// is recorded in `state`. O(1) in the transcript's length, except once after the
    /// state's calibration changed (C-7): the measures are then re-taken, O(n).
    ///
    /// The same trust boundary as a compaction (issue 14, [`crate::trust::apply`]): pins,
    /// summary marks and artifact refs the state does not vouch for are not honoured.
    /// The pass runs again (O(n)) only when the state's summaries, pins or handles
    /// changed, or an appended row claims provenance.
    pub fn check(&mut self, state: &SessionState, signals: &Signals) -> Decision {
        let cal = state.calibration();
        let key = trust_key(state, &self.config);
        if self.trusted_for != Some(key) {
            crate::trust::apply(&mut self.transcript, state, self.config.max_pinned_bytes);
            self.trusted_for = Some(key);
            self.twins = state.twins.clone();
            self.measures = Measures::new(&self.transcript, &self.config, cal);
        } else if cal.to_bits() != self.measures.calibration.to_bits() {
            self.measures = Measures::new(&self.transcript, &self.config, cal);
        }
        decide_from(&self.transcript, &self.measures.totals, &self.config, state, signals)
    }

    /// Takes the held transcript out to run a compaction job on it. Hold a transcript
    /// again with [`LiveTranscript::restore`] (the same one, when nothing was
    /// committed) or [`LiveTranscript::replace`] (a committed rewrite's).
    pub fn take(&mut self) -> Transcript {
        let format = self.transcript.format;
        std::mem::replace(&mut self.transcript, empty(format))
    }

    /// Holds back, unchanged, a transcript taken with [`LiveTranscript::take`].
    pub fn restore(&mut self, t: Transcript) {
        self.transcript = t;
        // the job ran its own trust pass over these rows, with its state
        self.trusted_for = None;
    }

    /// Holds a compaction's resulting transcript (as `LiveTranscript::hold` does): O(n)
    /// in the new transcript's rows.
    pub fn replace(&mut self, t: Transcript) {
        *self = LiveTranscript::hold(self.config.clone(), t, self.measures.calibration);
    }

    /// Holds the transcript of a job's outcome: a committed rewrite replaces the held
    /// transcript; otherwise the untouched source comes back as it was. The outcome's
    /// `transcript` is left empty.
    pub fn settle(&mut self, outcome: &mut Outcome) {
        let t = std::mem::replace(&mut outcome.transcript, empty(self.transcript.format));
        if outcome.rewrite.is_some() {
            // the kept rows stop borrowing the opened text, so it is freed (issue 15)
            let mut t = t;
            t.unshare();
            self.replace(t);
            // T-4: retained twins keep their ids through the committed state's table
            crate::trust::remap_twins(&mut self.transcript, &outcome.state.twins);
            self.twins = outcome.state.twins.clone();
        } else {
            self.restore(t);
        }
    }

    /// Compacts the held transcript with a synchronous summarize function (native hosts
    /// and tests; `None` = the mechanical summary) and holds the result. The outcome's
    /// `transcript` is a copy of what is now held.
    ///
    /// Errors: as [`Job::resume`] (e.g. a pairing error, F-5); the held transcript is
    /// then unchanged.
    pub fn compact(&mut self, state: SessionState, signals: Signals, summarize: Option<&mut dyn FnMut(&SummarizeRequest) -> Reply>) -> Result<Outcome> {
        let has = summarize.is_some();
        let mut job = Job::start(self.config.clone(), state, self.take(), JobOptions { signals, has_summarizer: has });
        let result = match summarize {
            Some(f) => run_sync(&mut job, f),
            None => run_sync(&mut job, |_| Reply::Failed { message: "no summarizer".into(), context_exceeded: false }),
        };
        match result {
            Ok(mut outcome) => {
                self.settle(&mut outcome);
                outcome.transcript = self.transcript.clone();
                Ok(outcome)
            }
            Err(e) => {
                self.restore(job.into_transcript());
                Err(e)
            }
        }
    }
}
