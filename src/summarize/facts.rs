//! What a handoff must carry, read from the folded rows by rules (issue 13, N-1, N-5,
//! N-6): the requests, the user's constraint sentences, every file path the folded calls
//! touched, each call with its outcome, the errors and how they were resolved, the latest
//! plan state, the agent's decisions, its current work and the instruction documents the
//! session loaded. Both the deterministic handoff summary ([`super::handoff`]) and the
//! floor under any summary ([`super::floor`]) are built from these facts.
//!
//! Everything here reads untrusted transcript text: no indexing, no panics; JSON
//! arguments that do not parse are read as plain text.

use crate::evict::truncate;
use crate::transcript::{Block, Message, Role, TranscriptRole};
use serde_json::Value;

/// One user request: a non-blank text block of a conversational user row (user text
/// beside tool results included, N-1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Source offset of the row.
    pub offset: usize,
    /// The row's stable id (T-4).
    pub id: String,
    /// The text block, verbatim.
    pub text: String,
}

/// What a call did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileAction {
    /// Read or viewed.
    Read,
    /// Created or overwritten.
    Written,
    /// Edited in place.
    Edited,
    /// Searched or listed.
    Searched,
    /// Named in a shell command's arguments.
    Command,
    /// Named in a tool result (e.g. "File created successfully at: ...").
    Mentioned,
    /// Created by a patch (`*** Add File:`, the target of `*** Move to:`).
    Created,
    /// Deleted by a patch (`*** Delete File:`).
    Deleted,
    /// Named by a patch whose call failed: not known to be changed.
    PatchFailed,
}

impl FileAction {
    fn word(self) -> &'static str {
        match self {
            FileAction::Read => "read",
            FileAction::Written => "written",
            FileAction::Edited => "edited",
            FileAction::Searched => "searched",
            FileAction::Command => "in a command",
            FileAction::Mentioned => "named in a result",
            FileAction::Created => "created",
            FileAction::Deleted => "deleted",
            FileAction::PatchFailed => "patch failed",
        }
    }
}

/// One file path the folded calls touched, with every use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileUse {
    /// The path as written in the call's arguments (or the result).
    pub path: String,
    /// (tool name, action, the call failed) per use, oldest first.
    pub uses: Vec<(String, FileAction, bool)>,
    /// Artifact handles (`artifact#N`) of the results of calls on this path.
    pub handles: Vec<String>,
}

/// The outcome of a folded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The result came back without an error flag; `exit` is the exit status it states, if any.
    Ok {
        /// Exit status named in the result (`Exit code 0`, `exit status 0`...).
        exit: Option<i64>,
    },
    /// The result is an error (flagged, or a non-zero exit status): the line naming it.
    Failed {
        /// Non-zero exit status named in the result, if any.
        exit: Option<i64>,
        /// The line of the error body that says what went wrong ([`error_line`]: its
        /// first line unless a later one names the error, e.g. the exception a traceback
        /// ends with), clipped to 200 UTF-8 bytes; empty when the body was empty.
        first_line: String,
    },
    /// No result in the folded rows.
    NoResult,
}

impl Outcome {
    /// The outcome as words: `ok`, `exit 0`, `failed (exit 2): <first line>`,
    /// `failed: <first line>`, `failed (empty error output)`, `no result in the folded rows`.
    /// Never a bare "error" (issue 13).
    pub fn describe(&self) -> String {
        match self {
            Outcome::Ok { exit: None } => "ok".into(),
            Outcome::Ok { exit: Some(c) } => format!("exit {c}"),
            Outcome::Failed { exit, first_line } => {
                let code = exit.map(|c| format!(" (exit {c})")).unwrap_or_default();
                if first_line.is_empty() {
                    format!("failed{code} (empty error output)")
                } else {
                    format!("failed{code}: {first_line}")
                }
            }
            Outcome::NoResult => "no result in the folded rows".into(),
        }
    }
    /// True for [`Outcome::Failed`].
    pub fn failed(&self) -> bool {
        matches!(self, Outcome::Failed { .. })
    }
}

/// One folded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Source offset of the row making the call.
    pub offset: usize,
    /// The call id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text, whole.
    pub arguments: String,
    /// The shell command it ran (`command` / `cmd` argument), if any.
    pub command: Option<String>,
    /// File paths in its arguments.
    pub paths: Vec<String>,
    /// The files an `apply_patch` body in its arguments names ([`patch_paths`]), with
    /// what the patch does to each; each is in [`Call::paths`] too.
    pub patched: Vec<(String, FileAction)>,
    /// Its outcome.
    pub outcome: Outcome,
    /// The artifact handle of its result, when stored.
    pub handle: Option<String>,
    /// The root-cause line of its output ([`root_cause_line`]), when it has one: a
    /// failing test's assertion, an exception, a compiler error (issue 13, §5).
    pub cause: Option<String>,
}

/// Most UTF-8 bytes of a root-cause line ([`root_cause_line`]).
pub const CAUSE_BYTES: usize = 240;

/// The line of a tool output that names why it failed (issue 13, §5 "errors and how
/// they were resolved"), whatever its exit status says (an agent's harness often reports
/// none): a pytest failure line (`E   assert ...`, `E   ValueError: ...`), else the last
/// exception line of a Python traceback (`<Name>Error: ...` / `<Name>Exception: ...` at a
/// line start, after a `Traceback` line), else the first compiler / runtime error line
/// (`error: ...`, `error[E0308]: ...`, `fatal: ...`, `thread '...' panicked at ...`,
/// `FAILED <test> - ...`, `AssertionError...`), else GNU make's first failure line
/// (`make: *** ...`, `make[1]: *** ...`, [`crate::formats::failure::make_error`]) or,
/// when a compiler diagnostic (`main.c:3:5: error: ...`, `: fatal error:`) comes before
/// it, that diagnostic (the recipe's error make reports). Trimmed, clipped to
/// [`CAUSE_BYTES`]; `None` when no line matches. The line is the tool's output, data: it
/// is only quoted.
pub fn root_cause_line(text: &str) -> Option<String> {
    root_cause_in(text.lines()).map(|l| crate::evict::truncate(l, CAUSE_BYTES))
}

/// The line [`root_cause_line`] names, whole, among `lines` (each trimmed here).
fn root_cause_in<'a>(lines: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let exception = |l: &str| {
        let name_end = l.find(':').unwrap_or(0);
        let name = l.get(..name_end).unwrap_or("");
        let base = name.rsplit('.').next().unwrap_or(name);
        !base.is_empty()
            && (base.ends_with("Error") || base.ends_with("Exception") || base == "KeyboardInterrupt")
            && base.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
    };
    let mut traceback = false;
    let mut last_exception: Option<&str> = None;
    let mut first_error: Option<&str> = None;
    // issue 13: make's `*** ` line, and the last compiler diagnostic before it
    let mut make_failed: Option<&str> = None;
    let mut diagnostic: Option<&str> = None;
    for raw in lines {
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if make_failed.is_none() {
            if crate::formats::failure::make_error(l) {
                make_failed = Some(diagnostic.unwrap_or(l));
            } else if l.contains(": error:") || l.contains(": fatal error:") {
                diagnostic = Some(l);
            }
        }
        if let Some(rest) = l.strip_prefix("E ") {
            let r = rest.trim_start();
            if !r.is_empty() && (r.starts_with("assert") || exception(r) || r.starts_with("Failed:")) {
                return Some(l);
            }
        }
        if l.starts_with("Traceback (most recent call last)") {
            traceback = true;
            continue;
        }
        if traceback && exception(l) {
            last_exception = Some(l);
            continue;
        }
        let lower_start: String = l.chars().take(12).collect::<String>().to_ascii_lowercase();
        if first_error.is_none()
            && (lower_start.starts_with("error:")
                || (lower_start.starts_with("error[") && l.contains("]:"))
                || lower_start.starts_with("fatal:")
                || l.starts_with("FAILED ")
                || l.starts_with("AssertionError")
                || (l.starts_with("thread '") && l.contains("panicked at")))
        {
            first_error = Some(l);
        }
    }
    last_exception.or(first_error).or(make_failed)
}

/// One entry of §5 ([`Facts::errors`]): a call that failed or whose output holds a
/// root-cause line, the later call that ran clean (if one followed) and the file edits
/// made in between (the fix).
#[derive(Debug, Clone, Copy)]
pub struct ErrorFix<'a> {
    /// The failed call.
    pub call: &'a Call,
    /// The later call of the same tool on the same path / command that succeeded with no
    /// root-cause line.
    pub fix: Option<&'a Call>,
    /// Every call made between the two, in order (none without a `fix`); the summary
    /// names those that edited or wrote a file as the fix.
    pub edits: &'a [Call],
}

/// The latest plan / todo state (Claude Code `TodoWrite`, Codex `update_plan`, or any
/// call whose arguments hold a `todos` / `plan` list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The tool that wrote it.
    pub tool: String,
    /// The call id.
    pub call_id: String,
    /// The call's arguments as JSON text, whole (re-attached verbatim, N-6).
    pub arguments: String,
    /// (status, content) per item, in order.
    pub items: Vec<(String, String)>,
    /// The plan's explanation, when the tool carries one (`update_plan`).
    pub explanation: Option<String>,
}

impl Plan {
    /// Items whose status is not completed / done (N-5: open plan items).
    pub fn open_items(&self) -> impl Iterator<Item = &(String, String)> {
        self.items.iter().filter(|(s, _)| !matches!(s.to_ascii_lowercase().as_str(), "completed" | "done" | "complete"))
    }
}

/// An instruction document the session loaded (N-6): an injected-context row (a skill
/// or instruction expansion, CLAUDE.md contents, a slash command's expansion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Source offset of the row.
    pub offset: usize,
    /// The row's stable id (T-4): its handle when it is not re-attached.
    pub id: String,
    /// The document's text, verbatim.
    pub text: String,
    /// The row is a conversational user row (a log that did not type it injected
    /// context): its text is user text for N-1 too.
    pub user_text: bool,
}

/// Everything the handoff carries, read from the folded rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Number of folded rows read.
    pub rows: usize,
    /// User requests, oldest first (the first is the first task, the last the newest request).
    pub requests: Vec<Request>,
    /// User constraint and preference sentences, verbatim, de-duplicated, oldest first.
    pub constraints: Vec<String>,
    /// Every file path the folded calls touched, in order of first use.
    pub files: Vec<FileUse>,
    /// Every folded call, oldest first.
    pub calls: Vec<Call>,
    /// The latest plan state.
    pub plan: Option<Plan>,
    /// Assistant decision / finding sentences, oldest first, de-duplicated.
    pub decisions: Vec<String>,
    /// The last assistant message text before the cut, whole.
    pub current_work: Option<String>,
    /// Instruction documents loaded, oldest first.
    pub instructions: Vec<Instruction>,
    /// Narrative of the newest earlier summary folded with the rows (stage 2).
    pub earlier_summary: Option<String>,
    /// Narratives of every earlier summary folded with the rows, oldest first (the last
    /// is [`Facts::earlier_summary`]): the handoff merges them all (Y-3, N-5: a fold of
    /// two summary rows keeps the older one's paths and errors too).
    pub earlier_summaries: Vec<String>,
    /// Every artifact handle in the rows (stamped, stored or inline), oldest first.
    pub artifacts: Vec<String>,
    /// Length-prefixed items (kind, text) of the deterministic sections of summaries in
    /// the fold: their floor and rehydrated documents, carried on (N-5, N-6).
    pub carried: Vec<(String, String)>,
    /// Decision and finding sentences earlier summaries in the fold had already left
    /// out (the counts of their §7 markers, [`summary_decisions`]): the new §7 marker
    /// counts them too, so a drop is never silent across folds (issue 13, Y-3).
    pub decisions_dropped: usize,
    /// The §5 error lines of the earlier summaries of the session, oldest first
    /// ([`Facts::note_summary_errors`]): a later call of these rows may resolve one an
    /// earlier summary left unresolved (issue 13, Y-3: resolution carries across folds).
    pub carried_errors: Vec<CarriedError>,
}

/// A §5 line of an earlier summary ([`Facts::carried_errors`]), read back from its
/// narrative (data: only compared and quoted, never executed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedError {
    /// Source offset of the summary row: only the calls of later rows resolve it.
    pub after: usize,
    /// The line up to the `; ` before how it was resolved: `- <tool> `<command>` [<call
    /// id>] <outcome>[; root cause: ...]` (or `<tool> on <path>`, `<tool>(<arguments>)`).
    pub head: String,
    /// The line says it was resolved (`; resolved: ...`), not
    /// [`super::handoff::NOT_RESOLVED`].
    pub resolved: bool,
}

/// Start of the §7 marker that counts the decision and finding sentences a summary
/// leaves out: `[clipped: <n> more decision sentences not shown here ...]`.
pub const DECISIONS_MARKER_START: &str = "[clipped: ";
/// What the §7 marker counts ([`DECISIONS_MARKER_START`]).
pub const DECISIONS_MARKER_KIND: &str = " more decision sentences ";

/// The §7 "Decisions and findings" lines of a deterministic summary's narrative (every
/// `[§7 ...]` section of it: a mechanical rollup joins several), the `- ` dropped, in
/// order, and the sum of the counts its §7 markers give of sentences left out
/// (`[clipped: <n> more decision sentences ...]`). A model's prose (no §7 title) gives
/// none. The lines are the agent's sentences, data: they are only carried on as §7
/// lines (issue 13, Y-3).
pub fn summary_decisions(narrative: &str) -> (Vec<String>, usize) {
    let title = super::handoff::section_header(7);
    let mut out = Vec::new();
    let mut dropped = 0usize;
    let mut in7 = false;
    for l in narrative.lines() {
        if l.starts_with("[§") {
            in7 = l == title;
        } else if !in7 {
            continue;
        } else if let Some(d) = l.strip_prefix("- ") {
            out.push(d.to_string());
        } else if let Some(n) = l.strip_prefix(DECISIONS_MARKER_START).and_then(|r| r.split_once(DECISIONS_MARKER_KIND)).and_then(|(n, _)| n.parse::<usize>().ok()) {
            dropped = dropped.saturating_add(n);
        }
    }
    (out, dropped)
}

/// `narrative` without its §7 sections (their lines are carried as §7 lines instead,
/// [`summary_decisions`]).
pub fn without_decisions(narrative: &str) -> String {
    let title = super::handoff::section_header(7);
    let mut out = String::with_capacity(narrative.len());
    let mut in7 = false;
    for l in narrative.lines() {
        if l.starts_with("[§") {
            in7 = l == title;
        }
        if !in7 {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(l);
        }
    }
    out
}

/// Words that mark a user sentence as a constraint or preference (issue 13), matched
/// case-insensitively on word boundaries.
pub const CONSTRAINT_WORDS: [&str; 15] =
    ["must", "mustn't", "never", "don't", "dont", "do not", "always", "should", "shouldn't", "make sure", "ensure", "need to", "prefer", "avoid", "required"];

/// Constraint words beyond English (break3 finding 9), matched like [`CONSTRAINT_WORDS`]
/// (lowercase, on word edges): German, Spanish, French, and English phrasings without an
/// English modal ("only use", "use only"). French `ne ... pas` is matched apart
/// ([`french_negation`]); Chinese / Japanese / Korean in [`CJK_CONSTRAINT_WORDS`].
pub const MORE_CONSTRAINT_WORDS: [&str; 31] = [
    // German
    "nie", "niemals", "darf nicht", "darfst nicht", "dürfen nicht", "muss", "musst", "müssen", "immer", "keinesfalls", "auf keinen fall",
    // Spanish
    "nunca", "jamás", "no debes", "no debe", "debes", "debe", "siempre", "asegúrate",
    // French
    "jamais", "doit", "dois", "doivent", "toujours", "il faut", "interdit",
    // English without a modal
    "only use", "use only", "under no circumstances", "not allowed", "forbidden",
];

/// Chinese, Japanese and Korean constraint words (break3 finding 9), matched as plain
/// substrings (these scripts put no spaces between words).
pub const CJK_CONSTRAINT_WORDS: [&str; 29] = [
    "不能", "不要", "必须", "必須", "绝对", "絕對", "禁止", "务必", "務必", "不得", "不可以", "一定要", "切勿", "请勿", "請勿", "永远不", "永遠不",
    "必ず", "てはいけない", "ないでください", "絶対に", "반드시", "절대", "하지 마",
    // Japanese without the polite ending: しないで (don't), しないこと / てはならない (must not)
    "しないで", "しないこと", "てはならない", "てはだめ", "ではいけない",
];

/// Phrases that mark an assistant sentence as a decision or finding, matched
/// case-insensitively.
pub const DECISION_WORDS: [&str; 28] = [
    "i'll", "i will", "decided", "decide", "found", "the cause", "root cause", "because", "the issue is", "the problem is", "turns out", "conclude",
    "the fix", "instead of", "suggests", "this means", "looks like", "it seems", "we need to", "we should", "confirmed", "chose", "chosen",
    "going with", "opted", "switched", "we will", "we'll",
];

/// Phrases that mark an assistant sentence as a finding: what a check showed, what ran
/// and how it ended, what exists or is missing (issue 13: "what the agent found"),
/// matched case-insensitively on word edges. A sentence holding one is a finding unless
/// it is a question or a plan ([`PLAN_OPENERS`]).
pub const FINDING_WORDS: [&str; 30] = [
    "successfully", "succeeded", "succeeds", "appears", "is equal to", "equals", "received", "returned", "returns", "shows", "showed",
    "installed", "missing", "not found", "exists", "does not exist", "doesn't exist", "works", "passed", "passes", "failed", "fails",
    "timed out", "means", "contains", "is set to", "the result", "the output", "the value", "mismatch",
];

/// Lowercase starts of an assistant sentence that say what the agent is about to do, not
/// what it found: such a sentence is a finding only through [`DECISION_WORDS`].
pub const PLAN_OPENERS: [&str; 16] = [
    "let me", "let's", "lets ", "now let", "now i'll", "now i will", "now we", "i'll", "i will", "i am going to", "i'm going to", "we will",
    "we'll", "next,", "first,", "time to",
];

/// At most this many sentences of one assistant text are findings by a fact token or a
/// finding word alone (a table of numbers is a handful of findings, not the section).
const FINDINGS_PER_TEXT: usize = 6;

/// Starts of a user row's text that mark it as an instruction document a host injected
/// (slash-command expansions), read as injected context even when a log types the row
/// conversational (N-6). Claude Code skill expansions need no prefix: the importer types
/// those `isMeta` / `isSynthetic` rows injected context.
pub const INSTRUCTION_PREFIXES: [&str; 3] = ["<command-message>", "<command-name>", "Contents of "];

/// Source offsets of the first and the last row that starts a turn ([`Message::starts_turn`])
/// with a non-blank text block: the first task and the newest request, which S-9 / N-1
/// keep verbatim whatever the budget.
pub fn first_and_newest_user_text(messages: &[Message]) -> (Option<usize>, Option<usize>) {
    let has = |m: &Message| m.starts_turn() && m.blocks.iter().any(|b| matches!(b, Block::Text { text } if !text.trim().is_empty()));
    (messages.iter().position(has), messages.iter().rposition(has))
}

/// Whether a row is an instruction document the session loaded (N-6): a text row typed
/// injected context, or a user row whose text starts like a host's skill / command
/// expansion ([`INSTRUCTION_PREFIXES`]).
pub fn is_instruction(m: &Message) -> bool {
    if m.is_summary() || m.has_results() || m.role != Role::User && m.provenance.transcript_role != TranscriptRole::InjectedContext {
        return false;
    }
    let t = m.text();
    if t.trim().is_empty() {
        return false;
    }
    m.provenance.transcript_role == TranscriptRole::InjectedContext || INSTRUCTION_PREFIXES.iter().any(|p| t.trim_start().starts_with(p))
}

/// Markers of an instruction file the person keeps for the project (CLAUDE.md,
/// AGENTS.md and their kin, as Claude Code and Codex inject them), matched
/// case-sensitively in the first 4 KiB of an injected-context text.
pub const INSTRUCTION_FILE_MARKERS: [&str; 10] =
    ["CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENT.md", "GEMINI.md", "# claudeMd", "<user_instructions>", "<INSTRUCTIONS>", "copilot-instructions.md", ".cursorrules"];

/// Whether an injected-context text is an instruction file the person wrote (N-6, N-5):
/// its first 4 KiB name one of [`INSTRUCTION_FILE_MARKERS`]. Such a document holds the
/// person's standing rules: when a fold does not re-attach it whole, its constraint
/// sentences join the floor's constraints. Other injected context (a command's output,
/// a hook's notice, a retrieved document) never gains the person's authority.
pub fn is_instruction_file(text: &str) -> bool {
    let head = text.get(..crate::evict::floor_boundary(text, 4_096)).unwrap_or("");
    INSTRUCTION_FILE_MARKERS.iter().any(|m| head.contains(m))
}

/// One phrase on word edges, by repeated search: the definition [`lower_has_any`] is
/// tested against.
#[cfg(test)]
fn lower_has_word(lower: &str, word: &str) -> bool {
    let mut from = 0;
    while let Some(at) = find_short(lower, word, from) {
        let before = lower.get(..at).and_then(|s| s.chars().next_back());
        let after = lower.get(at + word.len()..).and_then(|s| s.chars().next());
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if edge(before) && edge(after) {
            return true;
        }
        from = at + word.len().max(1);
    }
    false
}

/// For each byte, the bit set of the words in `words` that start with it.
const fn first_bytes<const N: usize>(words: &[&str; N]) -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut k = 0;
    while k < N && k < 32 {
        let b = words[k].as_bytes();
        if !b.is_empty() {
            table[b[0] as usize] |= 1 << k;
        }
        k += 1;
    }
    table
}

const CONSTRAINT_FIRST: [u32; 256] = first_bytes(&CONSTRAINT_WORDS);
const MORE_CONSTRAINT_FIRST: [u32; 256] = first_bytes(&MORE_CONSTRAINT_WORDS);
const DECISION_FIRST: [u32; 256] = first_bytes(&DECISION_WORDS);
const FINDING_FIRST: [u32; 256] = first_bytes(&FINDING_WORDS);

/// `words.iter().any(|w| lower_has_word(lower, w))` in one pass over `lower` (issue
/// 15: one search per phrase per sentence was most of [`Facts::read`]): at each byte
/// that starts a phrase (`first`, from [`first_bytes`]), those phrases are compared in
/// place, on word edges. The same answer as the per-phrase search: that search skips
/// occurrences overlapping an earlier one, and no phrase of these lists can overlap
/// itself after a non-alphanumeric byte, the only way a skipped occurrence could start
/// on a word edge (`t4_phrase_lists_cannot_overlap_themselves_on_an_edge`).
fn lower_has_any(lower: &str, words: &[&str], first: &[u32; 256]) -> bool {
    let b = lower.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let mut set = first[usize::from(c)];
        while set != 0 {
            let k = set.trailing_zeros() as usize;
            set &= set - 1;
            let Some(w) = words.get(k) else { continue };
            if b.get(i..).is_some_and(|t| t.starts_with(w.as_bytes())) {
                let before = lower.get(..i).and_then(|s| s.chars().next_back());
                let after = lower.get(i + w.len()..).and_then(|s| s.chars().next());
                let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
                if edge(before) && edge(after) {
                    return true;
                }
            }
        }
    }
    false
}

/// The first occurrence of `word` in `hay` at or after byte `from` (`str::find` on
/// `hay[from..]`, offset into `hay`): a byte scan for its first byte and a prefix compare,
/// which for the few-byte phrases above costs less than setting up `str::find`'s
/// two-way searcher for every (sentence, phrase) pair (issue 15: that set-up was about a
/// fifth of a 10 MB compaction's profile).
#[cfg(test)]
fn find_short(hay: &str, word: &str, from: usize) -> Option<usize> {
    let (h, w) = (hay.as_bytes(), word.as_bytes());
    let Some(&first) = w.first() else { return (from <= h.len()).then_some(from) };
    let mut i = from;
    while let Some(rest) = h.get(i..) {
        let p = rest.iter().position(|&b| b == first)?;
        let at = i + p;
        if h.get(at..).is_some_and(|t| t.starts_with(w)) {
            return Some(at);
        }
        i = at + 1;
    }
    None
}

/// Whether a line cannot continue the paragraph of the line before it (and, for the
/// line before, whether the next line cannot continue it): blank, a list item (`- `, `* `,
/// `+ `, `• `, `1. `, `1) `), a heading (`#`), a quote (`>`), a table row (`|`), a code
/// fence, or indented code (a tab or four spaces).
fn stands_alone(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    if t.trim().is_empty() || line.starts_with('\t') || line.starts_with("    ") {
        return true;
    }
    if t.starts_with(['#', '>', '|']) || t.starts_with("```") || t.starts_with("~~~") {
        return true;
    }
    is_list_item(t)
}

/// Whether a line (leading spaces taken off) opens a list item: `- `, `* `, `+ `, `• `,
/// `1. `, `1) ` (up to three digits), or a lone `-` / `*`.
fn is_list_item(t: &str) -> bool {
    if ["- ", "* ", "+ ", "\u{2022} "].iter().any(|m| t.starts_with(m)) || t == "-" || t == "*" {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && digits <= 3 && t.get(digits..).is_some_and(|r| r.starts_with(". ") || r.starts_with(") "))
}

/// The paragraphs of a text as substrings of it (a hard-wrapped sentence was cut at its
/// line break): runs of lines where each line after the first continues the one before:
/// the line [`stands_alone`] not (a list item, a heading, a fence or every line of a
/// fenced code block starts its own run), the line before is prose or a list item (an
/// item goes on only on an indented line) and does not end with `:` (it introduces a
/// list or a block). Each run ends before its last line break (`\r\n` or `\n`).
/// Linear in the text.
fn paragraphs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0usize;
    // the line before may be continued; the run opened with a list item
    let (mut joinable, mut run_is_item) = (false, false);
    let mut fence = false;
    let mut at = 0usize;
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').map_or(raw, |l| l.strip_suffix('\r').unwrap_or(l));
        let here = at;
        at += raw.len();
        let t = line.trim_start_matches([' ', '\t']);
        let is_fence = t.starts_with("```") || t.starts_with("~~~");
        let code = fence || is_fence;
        if is_fence {
            fence = !fence;
        }
        let alone = code || stands_alone(line);
        let goes_on = start.is_some() && joinable && !alone && (!run_is_item || line.starts_with(' '));
        if !goes_on {
            if let Some(s) = start {
                out.push(text.get(s..end).unwrap_or(""));
            }
            start = Some(here);
            run_is_item = !code && is_list_item(t);
        }
        end = here + line.len();
        let indented_code = line.starts_with('\t') || line.starts_with("    ");
        let prose = !alone || !code && !indented_code && is_list_item(t);
        joinable = prose && !line.trim_end().ends_with(':');
    }
    if let Some(s) = start {
        out.push(text.get(s..end).unwrap_or(""));
    }
    out
}

/// The sentences of a text: split after `.`, `!`, `?` followed by whitespace, after
/// `。` `！` `？`, and at the line breaks between paragraphs ([`paragraphs`]: a line
/// break inside a paragraph is whitespace, so a hard-wrapped sentence stays whole, with
/// its line break; list items, headings and code lines stay apart); each trimmed, empty
/// ones dropped. Every sentence is a substring of `text`.
///
/// Reads the bytes, decoding a character only where one can end or start a sentence
/// (issue 15: a `char_indices` walk over every folded user and assistant text was a
/// tenth of a 10 MB compaction); the same sentences as the character walk
/// (`sentences_slow`, the test oracle).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in paragraphs(text) {
        let b = line.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while let Some(&c) = b.get(i) {
            match c {
                b'.' | b'!' | b'?' => {
                    // a split after the mark when the next character is whitespace
                    let j = i + 1;
                    let ws = match b.get(j) {
                        Some(&n) if n < 0x80 => (n as char).is_whitespace(),
                        Some(_) => line.get(j..).and_then(|r| r.chars().next()).is_some_and(char::is_whitespace),
                        None => false,
                    };
                    if ws {
                        if let Some(s) = line.get(start..j) {
                            push_sentence(&mut out, s);
                        }
                        start = j;
                    }
                    i = j;
                }
                // the lead bytes of '。' (E3 80 82), '！' (EF BC 81) and '？' (EF BC 9F)
                0xE3 | 0xEF => {
                    let n = line.get(i..).and_then(|r| r.chars().next()).map_or(1, char::len_utf8);
                    if matches!(line.get(i..i + n), Some("。" | "！" | "？")) {
                        if let Some(s) = line.get(start..i + n) {
                            push_sentence(&mut out, s);
                        }
                        start = i + n;
                    }
                    i += n;
                }
                _ => i += 1,
            }
        }
        if let Some(s) = line.get(start..) {
            push_sentence(&mut out, s);
        }
    }
    out
}

/// [`sentences`] by its definition, one character at a time.
#[cfg(test)]
fn sentences_slow(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in paragraphs(text) {
        let mut start = 0;
        let mut prev: Option<char> = None;
        for (i, c) in line.char_indices() {
            if c.is_whitespace() && matches!(prev, Some('.' | '!' | '?')) {
                if let Some(s) = line.get(start..i) {
                    push_sentence(&mut out, s);
                }
                start = i;
            } else if matches!(c, '。' | '！' | '？') {
                let end = i + c.len_utf8();
                if let Some(s) = line.get(start..end) {
                    push_sentence(&mut out, s);
                }
                start = end;
            }
            prev = Some(c);
        }
        if let Some(s) = line.get(start..) {
            push_sentence(&mut out, s);
        }
    }
    out
}

fn push_sentence<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    let s = s.trim();
    // list bullets and numbering stay part of the sentence's text but a lone bullet is not one
    if s.bytes().any(|b| b.is_ascii_alphanumeric()) || !s.is_ascii() && s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
}

/// Whether a sentence holds one of `words` (lowercase phrases, first bytes in `first`)
/// on word edges, compared case-insensitively with U+2019 read as `'`: the sentence
/// lowercased and searched ([`lower_has_any`]). An ASCII sentence is compared in place
/// (its lowercase form has the same bytes up to ASCII case, and an ASCII letter or digit
/// is alphanumeric in either case), so no lowercased copy is made (issue 15).
fn sentence_has_any(s: &str, words: &[&str], first: &[u32; 256]) -> bool {
    if !s.is_ascii() {
        let l = s.to_lowercase().replace('\u{2019}', "'");
        return lower_has_any(&l, words, first);
    }
    let b = s.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        // a phrase starts on a word edge: skip the bytes inside a word first
        if i > 0 && b.get(i - 1).is_some_and(u8::is_ascii_alphanumeric) {
            continue;
        }
        let mut set = first[usize::from(c.to_ascii_lowercase())];
        while set != 0 {
            let k = set.trailing_zeros() as usize;
            set &= set - 1;
            let Some(w) = words.get(k) else { continue };
            if b.get(i..i + w.len()).is_some_and(|t| t.eq_ignore_ascii_case(w.as_bytes())) {
                let before = i.checked_sub(1).and_then(|j| b.get(j));
                let after = b.get(i + w.len());
                let edge = |c: Option<&u8>| c.is_none_or(|c| !c.is_ascii_alphanumeric());
                if edge(before) && edge(after) {
                    return true;
                }
            }
        }
    }
    false
}

/// The constraint and preference sentences of a user text, verbatim, in order (N-1,
/// Y-9): a sentence holding one of [`CONSTRAINT_WORDS`] or [`MORE_CONSTRAINT_WORDS`]
/// (case-insensitive, on word edges), one of [`CJK_CONSTRAINT_WORDS`] (substring), a
/// French negation `ne ... pas` / `n'... pas`, or an English sentence opening with
/// "Only " ("Only edit files under src/").
pub fn constraint_sentences(text: &str) -> Vec<&str> {
    sentences(text).into_iter().filter(|s| is_constraint(s)).collect()
}

/// Whether ASCII bytes hold what the word rules of [`is_constraint`] need, in any case:
/// `pas` (French), `leave` / `keep` (English), `nicht` (German), or `no` between
/// non-alphanumeric bytes (Spanish), in one pass. False means those rules cannot hold,
/// so the sentence is not lowercased and split into words (issue 15: that copy and
/// split of every sentence of every folded user text was a fifth of a 1 MB
/// compaction's instructions).
fn may_need_words(b: &[u8]) -> bool {
    let at = |i: usize, w: &[u8]| b.get(i..i + w.len()).is_some_and(|x| x.eq_ignore_ascii_case(w));
    let edge = |i: Option<usize>| i.and_then(|j| b.get(j)).is_none_or(|c| !c.is_ascii_alphanumeric());
    (0..b.len()).any(|i| match b.get(i).map(u8::to_ascii_lowercase) {
        Some(b'p') => at(i, b"pas"),
        Some(b'l') => at(i, b"leave"),
        Some(b'k') => at(i, b"keep"),
        Some(b'n') => at(i, b"nicht") || at(i, b"no") && edge(i.checked_sub(1)) && edge(Some(i + 2)),
        _ => false,
    })
}

fn is_constraint(s: &str) -> bool {
    constraint_test(s, true)
}

/// [`is_constraint`]; `guard` false runs the word rules on every sentence (the test
/// oracle of [`may_need_words`]).
fn constraint_test(s: &str, guard: bool) -> bool {
    if sentence_has_any(s, &CONSTRAINT_WORDS, &CONSTRAINT_FIRST)
        || sentence_has_any(s, &MORE_CONSTRAINT_WORDS, &MORE_CONSTRAINT_FIRST)
        || s.get(..5).is_some_and(|h| h.eq_ignore_ascii_case("only "))
        || !s.is_ascii() && (CJK_CONSTRAINT_WORDS.iter().any(|w| s.contains(w)) || chinese_bie(s))
    {
        return true;
    }
    if guard && s.is_ascii() && !may_need_words(s.as_bytes()) {
        return false;
    }
    let l = s.to_lowercase().replace('\u{2019}', "'");
    let words: Vec<&str> = l.split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '-').filter(|w| !w.is_empty()).collect();
    french_negation(&words) || english_leave_as_is(&l) || german_imperative_nicht(&l, &words) || spanish_no_imperative(&l, &words)
}

/// Whether a sentence holds a French negation: the word `ne` (or `n'` opening a word)
/// and, later, the word `pas` (`words`: the sentence lowercased, U+2019 read as `'`,
/// split into words).
fn french_negation(words: &[&str]) -> bool {
    let Some(ne) = words.iter().position(|w| *w == "ne" || w.starts_with("n'") && w.len() > 2) else { return false };
    words.get(ne + 1..).is_some_and(|rest| rest.iter().any(|w| *w == "pas"))
}

/// The words of each clause of a lowercased sentence (split at `,` `;` `:` `(` `)` and at
/// `.` `!` `?` before whitespace or the end, so `src/a.rs` stays one word).
fn clauses(l: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = l.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let end = matches!(c, b',' | b';' | b':' | b'(' | b')') || matches!(c, b'.' | b'!' | b'?') && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if end {
            out.push(l.get(start..i).unwrap_or(""));
            start = i + 1;
        }
    }
    out.push(l.get(start..).unwrap_or(""));
    out.into_iter().map(|c| c.split(|ch: char| !ch.is_alphanumeric() && ch != '\'' && ch != '-' && ch != '/' && ch != '.').filter(|w| !w.is_empty()).collect()).collect()
}

/// English without a modal: `leave ... alone`, `keep` / `leave ... as is` (`as-is`,
/// `unchanged`, `intact`, `untouched`), the state word ending the clause ("Leave
/// src/a.rs alone, it is generated.", "Keep the public API as is.").
fn english_leave_as_is(l: &str) -> bool {
    if !(l.contains("leave") || l.contains("keep")) {
        return false;
    }
    clauses(l).iter().any(|w| {
        let Some(verb) = w.iter().position(|x| *x == "leave" || *x == "keep") else { return false };
        let n = w.len();
        let last = w.last().copied().unwrap_or("");
        let ends_as_is = n >= verb + 3 && w.get(n - 2) == Some(&"as") && last == "is";
        n >= verb + 2 && (ends_as_is || matches!(last, "as-is" | "unchanged" | "intact" | "untouched") || last == "alone" && w.get(verb) == Some(&"leave"))
    })
}

/// German subject pronouns, articles, demonstratives, question words and adverbs that
/// open a statement, not an imperative ("Das ist nicht gut", "Heute geht das nicht").
const DE_STATEMENT_OPENERS: [&str; 40] = [
    "ich", "du", "er", "sie", "es", "wir", "ihr", "man", "das", "der", "die", "den", "dem", "ein", "eine", "einen", "dies", "diese", "dieser", "dieses",
    "mein", "meine", "dein", "deine", "sein", "seine", "heute", "gerade", "leider", "jetzt", "hier", "da", "dann", "warum", "wieso", "was", "wie", "wo",
    "wenn", "alle",
];
/// Words that follow a German du- / ihr-imperative verb before `nicht` (its object or an
/// adverb): "Ändere die API nicht", "Lösch das bitte nicht".
const DE_AFTER_IMPERATIVE: [&str; 30] = [
    "die", "der", "das", "den", "dem", "des", "diese", "dieses", "diesen", "diesem", "dieser", "meine", "meinen", "meinem", "ein", "eine", "einen",
    "ihn", "es", "mir", "mich", "uns", "hier", "dort", "daran", "damit", "jetzt", "mehr", "noch", "einfach",
];
/// Bare German du-imperatives (no `-e`) a person gives an agent.
const DE_IMPERATIVE_STEMS: [&str; 20] = [
    "mach", "lass", "lösch", "änder", "schreib", "nimm", "gib", "ruf", "fass", "rühr", "setz", "nutz", "benutz", "füg", "zieh", "push", "pack",
    "schieb", "kopier", "installier",
];
/// German finite auxiliaries and modals: a sentence holding one is a statement ("Die
/// Tests können nicht laufen").
const DE_FINITE: [&str; 22] = [
    "ist", "sind", "war", "waren", "hat", "haben", "hatte", "wird", "werden", "kann", "können", "konnte", "will", "wollen", "soll", "sollen", "darf",
    "geht", "gehen", "möchte", "weiß", "bin",
];

/// German `nicht` in an imperative (break3 finding 9, continued): not a question, holding
/// the word `nicht`, and one of: `bitte` ("Bitte nicht auf main pushen", "Ändere bitte
/// nicht die API"); `nicht` opening an infinitive order ("Nicht auf main pushen."); a
/// first word that is a verb (ending in `-e`, a bare stem such as `mach`, or an
/// infinitive before `Sie`) and
/// not a statement opener, then an object or adverb ("Ändere die API nicht.", "Ändern Sie
/// die API nicht."); or `nicht` right before a closing infinitive with no finite
/// auxiliary and no subject first ("Die API nicht ändern."). "Das ist nicht gut", "Ich
/// weiß nicht, warum", "Es funktioniert nicht" stay statements.
fn german_imperative_nicht(l: &str, words: &[&str]) -> bool {
    if !words.contains(&"nicht") || l.trim_end().ends_with('?') || words.iter().any(|w| DE_FINITE.contains(w)) {
        return false;
    }
    if words.contains(&"bitte") {
        return true;
    }
    let (Some(first), second) = (words.first().copied(), words.get(1).copied()) else { return false };
    if first == "nicht" {
        return words.get(1..).is_some_and(|r| r.last().is_some_and(|w| (w.ends_with("en") || w.ends_with("ern") || w.ends_with("eln")) && w.len() > 3));
    }
    let n = words.len();
    let infinitive = |w: &&str| (w.ends_with("en") || w.ends_with("ern") || w.ends_with("eln")) && w.len() > 3;
    let subject = ["ich", "du", "er", "sie", "es", "wir", "ihr", "man"].contains(&first);
    if !subject && n >= 3 && words.get(n - 2) == Some(&"nicht") && words.last().is_some_and(infinitive) {
        return true;
    }
    if DE_STATEMENT_OPENERS.contains(&first) {
        return false;
    }
    // "Schade, das geht nicht": a comma after the first word is no imperative
    let comma_after_first = l.trim_start().get(first.len()..).is_some_and(|r| r.starts_with(','));
    if comma_after_first {
        return false;
    }
    // a du-imperative: `-e` ("Ändere", "Lösche") or a common bare stem; not `-t` (a
    // third-person verb: "Klappt das nicht, ...")
    let verb_like = first.len() > 2 && first.ends_with('e') || DE_IMPERATIVE_STEMS.contains(&first);
    if verb_like && second.is_some_and(|w| DE_AFTER_IMPERATIVE.contains(&w)) {
        return true;
    }
    first.ends_with('n') && second == Some("sie")
}

/// Spanish object pronouns between `no` and the verb ("No lo cambies").
const ES_CLITICS: [&str; 11] = ["lo", "la", "los", "las", "le", "les", "me", "te", "se", "nos", "os"];
/// Spanish words that mark a sentence as Spanish (so "No changes here" stays English).
const ES_MARKERS: [&str; 26] = [
    "el", "la", "los", "las", "del", "que", "por", "para", "con", "sin", "una", "nada", "esto", "eso", "este", "esta", "ese", "esa", "archivo",
    "archivos", "código", "favor", "mi", "tu", "su", "ni",
];
/// Second-person present forms after `no` that say what is, not what to do ("No sabes
/// por qué", "No tienes que").
const ES_NOT_ORDERS: [&str; 14] = ["eres", "estás", "estas", "tienes", "sabes", "quieres", "crees", "ves", "vas", "das", "entiendes", "necesitas", "más", "mas"];

/// Spanish negative imperative: the word `no` then (after an object pronoun) a
/// second-person subjunctive-looking verb (`-es` / `-as`: "No edites el archivo", "no
/// cambies nada", "No lo toques"), in a sentence that is Spanish (a Spanish word or an
/// accented letter besides, or the object pronoun) and not a question. "No sé", "No es
/// posible", "No files changed" stay statements.
fn spanish_no_imperative(l: &str, words: &[&str]) -> bool {
    if !words.contains(&"no") || l.trim_end().ends_with('?') || l.trim_start().starts_with('¿') {
        return false;
    }
    let spanish = l.chars().any(|c| "áéíóúñ¡".contains(c)) || words.iter().any(|w| ES_MARKERS.contains(w));
    words.iter().enumerate().filter(|(_, w)| **w == "no").any(|(i, _)| {
        let mut j = i + 1;
        let clitic = words.get(j).is_some_and(|w| ES_CLITICS.contains(w));
        if clitic {
            j += 1;
        }
        let Some(v) = words.get(j) else { return false };
        (spanish || clitic) && v.chars().count() >= 4 && (v.ends_with("es") || v.ends_with("as")) && !ES_NOT_ORDERS.contains(v)
    })
}

/// Chinese 别 as "don't": opening a clause or after 你 / 您 / 请 / 千万 / 也 / 就 / 可, and
/// before a verb (not 别人 "others", 别的 "other", 别处, 别名); elsewhere it is part of a
/// word (区别, 分别, 类别, 特别, 识别, 性别 ...).
fn chinese_bie(s: &str) -> bool {
    let mut prev: Option<char> = None;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '别' {
            let opens = prev.is_none_or(|p| !p.is_alphanumeric() || "你您请請万萬也就可".contains(p));
            let next_ok = it.peek().is_some_and(|n| n.is_alphanumeric() && !"人的处處名墅".contains(*n));
            if opens && next_ok {
                return true;
            }
        }
        prev = Some(c);
    }
    false
}

/// The decision and finding sentences of an assistant text, verbatim, in order (issue
/// 13, §7 of the handoff): a sentence holding one of [`DECISION_WORDS`]; or, at most
/// [`FINDINGS_PER_TEXT`] of them, a statement (no question, no [`PLAN_OPENERS`] start)
/// holding one of [`FINDING_WORDS`] or a fact token ([`has_fact_token`]: a number, a
/// hex value, a `code` span). Lines inside a fenced code block are code, not sentences.
fn decision_sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut in_fence = false;
    let mut findings = 0usize;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        for s in sentences(line) {
            if sentence_has_any(s, &DECISION_WORDS, &DECISION_FIRST) {
                out.push(s);
            } else if findings < FINDINGS_PER_TEXT && is_finding(s) {
                findings += 1;
                out.push(s);
            }
        }
    }
    out
}

/// A statement of what was found: not a question, not a plan, at least 12 bytes, with a
/// finding word or a fact token.
fn is_finding(s: &str) -> bool {
    let s = s.trim();
    if s.len() < 12 || s.ends_with('?') {
        return false;
    }
    let body = s.trim_start_matches(|c: char| matches!(c, '-' | '*' | '#' | '>' | ' '));
    let head: String = body.chars().take(16).collect::<String>().to_lowercase().replace('\u{2019}', "'");
    if PLAN_OPENERS.iter().any(|p| head.starts_with(p)) {
        return false;
    }
    sentence_has_any(s, &FINDING_WORDS, &FINDING_FIRST) || has_fact_token(s)
}

/// Whether a sentence names a value: a run of two or more digits, a `0x` hex value or a
/// `code` span (a pair of backticks).
fn has_fact_token(s: &str) -> bool {
    let b = s.as_bytes();
    if b.iter().filter(|&&c| c == b'`').count() >= 2 {
        return true;
    }
    b.windows(2).any(|w| w.first().is_some_and(u8::is_ascii_digit) && w.get(1).is_some_and(u8::is_ascii_digit) || w == b"0x")
}

/// Argument keys that hold one file path.
const PATH_KEYS: [&str; 12] =
    ["file_path", "path", "filename", "file_name", "notebook_path", "filepath", "file", "target_file", "source", "destination", "dir", "directory"];
/// Argument keys that hold a list of file paths.
const PATHS_KEYS: [&str; 3] = ["paths", "files", "file_paths"];

/// What a tool does to the files it names, by its name (`Edit` -> edited, `Write` ->
/// written, `Grep` -> searched, `Bash` -> a command; read otherwise).
pub fn action_of(tool: &str) -> FileAction {
    let t = tool.to_ascii_lowercase();
    let has = |w: &[&str]| w.iter().any(|x| t.contains(x));
    if has(&["multiedit", "edit", "replace", "patch", "insert", "str_replace"]) {
        FileAction::Edited
    } else if has(&["write", "create", "save"]) {
        FileAction::Written
    } else if has(&["grep", "glob", "search", "find", "list", "ls"]) {
        FileAction::Searched
    } else if has(&["bash", "shell", "exec", "command", "terminal", "run"]) {
        FileAction::Command
    } else {
        FileAction::Read
    }
}

/// Whether a shell word looks like a file path: it has a `/` (and is no URL or option),
/// or ends in a short file extension after a name (`reproduce.py`, `Cargo.toml`).
fn looks_like_path(w: &str) -> bool {
    if w.is_empty() || w.starts_with('-') || w.contains("://") || w.len() > 300 || w.contains('=') || w.contains('$') {
        return false;
    }
    if w.contains('/') {
        return w.chars().any(char::is_alphanumeric) && !w.chars().any(|c| matches!(c, '(' | ')' | '{' | '}' | '<' | '>' | '|' | ';' | '&' | '*'));
    }
    match w.rsplit_once('.') {
        Some((name, ext)) => {
            !name.is_empty()
                && name.chars().any(char::is_alphabetic)
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        }
        None => false,
    }
}

/// The command a shell call runs, for telling two calls apart (§5): a `bash -lc` /
/// `sh -c` wrapper (and the quotes around its script) and leading `cd DIR &&` steps are
/// dropped, and runs of whitespace become one space. `bash -lc "cd /repo && npm test"`
/// and `npm test` give the same text; `npm run build` and `npm run lint` do not. For
/// deciding whether a later call runs the same command, see [`same_command`], which
/// compares the directories too.
pub fn core_command(command: &str) -> String {
    command_parts(command).1
}

/// Y-5 (brk2 finding 2): whether two shell commands run the same command for error
/// resolution (§5): the same [`core_command`], and the same directories of the leading
/// `cd DIR &&` steps it drops when both name some (one naming none ran where the agent
/// stood, which is not known). `cd packages/api && npm test` and `cd packages/web && npm
/// test` differ; `bash -lc "cd /repo &&  npm test"` and `npm test` are the same.
pub fn same_command(a: &str, b: &str) -> bool {
    let ((da, ca), (db, cb)) = (command_parts(a), command_parts(b));
    ca == cb && (da.is_empty() || db.is_empty() || da == db)
}

/// The directories of a command's leading `cd DIR &&` steps (trimmed, in order) and its
/// [`core_command`].
fn command_parts(command: &str) -> (Vec<String>, String) {
    let mut t = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut dirs = Vec::new();
    loop {
        let before = t.len();
        let mut w = t.splitn(3, ' ');
        let (first, flag, rest) = (w.next().unwrap_or(""), w.next().unwrap_or(""), w.next().unwrap_or(""));
        let shell = matches!(first.rsplit('/').next().unwrap_or(""), "bash" | "sh" | "zsh" | "dash");
        if shell && flag.starts_with('-') && flag.ends_with('c') && !rest.is_empty() {
            let r = rest.trim();
            let unq = ['"', '\''].iter().find_map(|q| r.strip_prefix(*q).and_then(|x| x.strip_suffix(*q)).filter(|x| !x.contains(*q)));
            t = unq.unwrap_or(r).trim().to_string();
        }
        if let Some(after) = t.strip_prefix("cd ") {
            if let Some((dir, tail)) = after.split_once("&&") {
                if !dir.trim().is_empty() && !dir.contains([';', '|']) && !tail.trim().is_empty() {
                    dirs.push(dir.trim().to_string());
                    t = tail.trim().to_string();
                }
            }
        }
        if t.len() == before {
            return (dirs, t);
        }
    }
}

/// The file paths named in a shell command's words (quotes stripped).
pub fn command_paths(command: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // seen words in a set: a command of many distinct paths stays linear
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for w in command.split(|c: char| c.is_whitespace() || c == ';' || c == '|' || c == '&' || c == '>' || c == '<') {
        let w = w.trim_matches(|c| matches!(c, '"' | '\'' | '`' | ',' | '(' | ')'));
        let w = w.trim_end_matches(':');
        if looks_like_path(w) && seen.insert(w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The header lines of an `apply_patch` body (Codex, LOG-FORMATS 2) and what each does
/// to the file it names.
const PATCH_HEADERS: [(&str, FileAction); 4] =
    [("*** Update File:", FileAction::Edited), ("*** Add File:", FileAction::Created), ("*** Delete File:", FileAction::Deleted), ("*** Move to:", FileAction::Created)];

/// The files an `apply_patch` body names, once each, in order, with what the patch does
/// to each: a line at the patch's column `*** Update File: <path>` (edited), `*** Add
/// File: <path>` (created), `*** Delete File: <path>` (deleted), `*** Move to: <path>`
/// (created: the new name of the file updated above it). The body's other lines are code,
/// never read as paths. Empty when `text` holds no such line.
pub fn patch_paths(text: &str) -> Vec<(String, FileAction)> {
    let mut out: Vec<(String, FileAction)> = Vec::new();
    if !text.contains("*** ") {
        return out;
    }
    // seen paths in a set: a patch of many header lines stays linear (untrusted input)
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    // a header starts at the patch's own column: column 0, or the indent of its `*** Begin
    // Patch` line (an indented heredoc); a line with one more leading blank is a context
    // line of a hunk (` *** Update File: x` is code, not a header)
    // (the column is set by a `*** Begin Patch` outside a patch, so a context line
    // ` *** Begin Patch` inside a hunk does not move it)
    let (mut indent, mut open) = ("", false);
    for l in text.lines() {
        if !open && l.trim_start().starts_with("*** Begin Patch") {
            (indent, open) = (&l[..l.len() - l.trim_start().len()], true);
        }
        let Some(l) = l.strip_prefix(indent).filter(|l| l.starts_with("*** ")) else { continue };
        if l.starts_with("*** End Patch") {
            open = false;
        }
        let Some((p, a)) = PATCH_HEADERS.iter().find_map(|(h, a)| l.strip_prefix(h).map(|p| (p.trim(), *a))) else { continue };
        if !p.is_empty() && p.len() <= 1_000 && seen.insert(p) {
            out.push((p.to_string(), a));
        }
    }
    out
}

/// The `apply_patch` files of a call ([`patch_paths`]): read from the arguments' string
/// values (and string lists, one item a line) when they are a JSON object (Codex `shell`
/// `command: ["apply_patch", <body>]`, a `bash -lc` heredoc, an `input` field), else from
/// the arguments text itself (the freeform input of a Codex `custom_tool_call`). An OpenAI
/// Responses `apply_patch_call` operation (`{type: create_file | update_file |
/// delete_file, path}`) names its one file.
fn call_patch(arguments: &str, v: &Value) -> Vec<(String, FileAction)> {
    let operation = match v.get("type").and_then(Value::as_str) {
        Some("create_file") => Some(FileAction::Created),
        Some("update_file") => Some(FileAction::Edited),
        Some("delete_file") => Some(FileAction::Deleted),
        _ => None,
    };
    if let (Some(a), Some(p)) = (operation, v.get("path").and_then(Value::as_str).map(str::trim).filter(|p| !p.is_empty())) {
        return vec![(p.to_string(), a)];
    }
    if !arguments.contains("*** ") {
        return Vec::new();
    }
    let Value::Object(map) = v else { return patch_paths(arguments) };
    let mut out: Vec<(String, FileAction)> = Vec::new();
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    for val in map.values() {
        let found = match val {
            Value::String(s) => patch_paths(s),
            Value::Array(items) => patch_paths(&items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n")),
            _ => Vec::new(),
        };
        for (p, a) in found {
            if seen.insert(p.clone()) {
                out.push((p, a));
            }
        }
    }
    out
}

/// The subcommands of an editor tool (SWE-agent's `str_replace_editor`, Anthropic's
/// `str_replace_based_edit_tool` / `text_editor_*`), which it takes in its `command`
/// argument next to a `path`.
const EDITOR_SUBCOMMANDS: [&str; 5] = ["view", "create", "str_replace", "insert", "undo_edit"];

/// Y-5 (brk2 finding 1): the editor subcommand an arguments object holds: its `command`
/// (any ASCII case) is one of [`EDITOR_SUBCOMMANDS`] and it names a path (a string under
/// one of the path keys). Such a `command` is no shell command: the call is a file
/// operation on its path. `None` otherwise.
fn editor_subcommand(map: &serde_json::Map<String, Value>) -> Option<&str> {
    let sub = map.iter().find(|(k, _)| k.eq_ignore_ascii_case("command")).and_then(|(_, v)| v.as_str()).map(str::trim).filter(|s| EDITOR_SUBCOMMANDS.contains(s))?;
    map.iter().any(|(k, v)| v.is_string() && PATH_KEYS.contains(&k.to_ascii_lowercase().as_str())).then_some(sub)
}

/// Whether call `c` is an editor tool's `view` (Y-5, brk2 finding 1): its arguments hold
/// the editor subcommand `view` ([`editor_subcommand`]). A view reads the file; it edits
/// nothing, whatever the tool's name says.
pub fn is_editor_view(c: &Call) -> bool {
    c.command.is_none()
        && c.arguments.contains("view")
        && matches!(serde_json::from_str::<Value>(&c.arguments), Ok(Value::Object(m)) if editor_subcommand(&m) == Some("view"))
}

fn arg_paths(v: &Value, out: &mut Vec<String>, command: &mut Option<String>) {
    let Value::Object(map) = v else { return };
    // an editor's subcommand (`{"command": "str_replace", "path": ...}`) is no command
    let editor = editor_subcommand(map).is_some();
    // seen paths in a set: a `paths` list or a command of many distinct paths stays linear
    let mut seen: std::collections::HashSet<String> = out.iter().cloned().collect();
    let mut push = |p: &str| {
        let p = p.trim();
        if !p.is_empty() && p.len() <= 1_000 && !p.contains('\n') && !seen.contains(p) {
            seen.insert(p.to_string());
            out.push(p.to_string());
        }
    };
    for (k, val) in map {
        let key = k.to_ascii_lowercase();
        if PATH_KEYS.contains(&key.as_str()) {
            if let Value::String(s) = val {
                push(s);
            }
        } else if PATHS_KEYS.contains(&key.as_str()) {
            if let Value::Array(items) = val {
                for it in items {
                    if let Value::String(s) = it {
                        push(s);
                    }
                }
            }
        } else if (key == "command" && !editor) || key == "cmd" {
            let text = match val {
                Value::String(s) => Some(s.clone()),
                Value::Array(items) => Some(items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ")),
                _ => None,
            };
            if let Some(t) = text {
                // a command running `apply_patch` names its files in the patch's header
                // lines ([`call_patch`]); the body's words are code, not paths
                if patch_paths(&t).is_empty() {
                    for p in command_paths(&t) {
                        push(&p);
                    }
                }
                if command.is_none() {
                    *command = Some(t);
                }
            }
        }
    }
}

/// Parts of every argument key [`arg_paths`] and [`plan_of`] read (lowercase): a key
/// they read, in any ASCII case, holds one of these.
const FACT_KEY_PARTS: [&str; 10] = ["path", "file", "source", "destination", "dir", "cmd", "command", "todos", "plan", "tasks"];

/// False only when the arguments text cannot hold a key [`arg_paths`] or [`plan_of`]
/// reads: no [`FACT_KEY_PARTS`] in any ASCII case and no backslash (a key spelled with an
/// escape). Then parsing it gives no path, command or plan, so the parse is skipped
/// (issue 15: the argument parse of every folded call was a third of [`Facts::read`] on
/// tau-bench rows, whose arguments name ids).
fn may_name_fact_keys(arguments: &str) -> bool {
    let b = arguments.as_bytes();
    if b.contains(&b'\\') {
        return true;
    }
    b.iter().enumerate().any(|(i, &c)| {
        let c = c | 0x20;
        matches!(c, b'p' | b'f' | b's' | b'd' | b'c' | b't') && FACT_KEY_PARTS.iter().any(|k| k.as_bytes().first() == Some(&c) && b.get(i..i + k.len()).is_some_and(|w| w.eq_ignore_ascii_case(k.as_bytes())))
    })
}

/// Paths a tool result names: `[File: PATH (N lines total)]`, `... successfully at: PATH`,
/// `The file PATH has been ...`, `(Open file: PATH)`.
fn result_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let head = text.get(..crate::evict::floor_boundary(text, 4_000)).unwrap_or("");
    for line in head.lines().take(40) {
        let line = line.trim();
        let mut pick = |s: &str| {
            let p = s.trim().trim_matches(|c| matches!(c, '"' | '\'' | '`'));
            if looks_like_path(p) && p.contains('/') && !out.iter().any(|x: &String| x == p) {
                out.push(p.to_string());
            }
        };
        if let Some(rest) = line.strip_prefix("[File: ") {
            pick(rest.split(" (").next().unwrap_or(""));
        } else if let Some(p) = line.find("successfully at: ") {
            pick(line.get(p + 17..).unwrap_or("").split_whitespace().next().unwrap_or(""));
        } else if let Some(rest) = line.strip_prefix("The file ") {
            if let Some((p, _)) = rest.split_once(" has been") {
                pick(p);
            }
        }
    }
    out
}

pub use crate::formats::failure::exit_status;

/// [`exit_status`] by its definition, on lowercased text: line by line, a line opening
/// with a status word, else the earliest phrase or JSON key on it that states one.
#[cfg(test)]
fn exit_status_slow(text: &str) -> Option<i64> {
    use crate::formats::failure::{EXIT_IN_LINE, EXIT_JSON_KEYS, EXIT_LINE_STARTS};
    // the integer a separator then digits make, as a string: `: "12"` -> 12
    fn integer(rest: &str, words: bool) -> Option<i64> {
        let rest = rest.trim_start_matches([' ', '\t']);
        let rest = match rest.strip_prefix(':') {
            Some(r) => r,
            None if words => rest.strip_prefix('=').unwrap_or(rest),
            None => return None,
        };
        let rest = rest.trim_start_matches([' ', '\t']);
        let rest = rest.strip_prefix('"').unwrap_or(rest);
        let sign = usize::from(rest.starts_with('-'));
        let len = sign + rest[sign..].chars().take_while(char::is_ascii_digit).count();
        let after: Vec<char> = rest[len..].chars().take(2).collect();
        let goes_on = match after.as_slice() {
            [c, ..] if c.is_ascii_alphanumeric() || *c == '_' || *c == '-' => true,
            ['.', d, ..] => d.is_ascii_digit(),
            _ => false,
        };
        if goes_on { None } else { rest[..len].parse().ok() }
    }
    // whether a quote at byte `pos` of the head opens a string in the top-level object
    // or its `metadata` object: the containers open before it, each with its key
    fn key_read(head: &str, pos: usize) -> bool {
        if !head.trim_start_matches(|c: char| c.is_ascii_whitespace()).starts_with('{') {
            return false;
        }
        let (mut open, mut key, mut string, mut escaped): (Vec<(char, String)>, String, Option<String>, bool) = (Vec::new(), String::new(), None, false);
        for c in head[..pos].chars() {
            match string.as_mut() {
                Some(s) if escaped => {
                    s.push(c);
                    escaped = false;
                }
                Some(s) if c == '\\' => {
                    s.push(c);
                    escaped = true;
                }
                // the key a container after it is the value of: a string of the top object
                Some(_) if c == '"' && open.len() == 1 => key = string.take().unwrap_or_default(),
                Some(_) if c == '"' => string = None,
                Some(s) => s.push(c),
                None if c == '"' => string = Some(String::new()),
                None if c == '{' || c == '[' => open.push((c, key.clone())),
                None if c == '}' || c == ']' => {
                    open.pop();
                    if open.is_empty() {
                        return false;
                    }
                }
                None => {}
            }
        }
        string.is_none() && (open.len() == 1 || (open.len() == 2 && open[1] == ('{', "metadata".to_string())))
    }
    let head = text.get(..crate::evict::floor_boundary(text, 2_000)).unwrap_or("");
    let mut line_at = 0;
    for line in head.to_ascii_lowercase().split('\n') {
        let from = line_at;
        line_at += line.len() + 1;
        let opening = line.trim_start_matches([' ', '\t', '\r', '[', '(']);
        let lead = &line[..line.len() - opening.len()];
        let opening = opening.strip_prefix("error: ").unwrap_or(opening);
        let indent = lead.chars().filter(|c| c.is_ascii_whitespace()).count();
        if indent <= crate::formats::failure::EXIT_INDENT {
            if let Some(n) = EXIT_LINE_STARTS.iter().find_map(|p| integer(opening.strip_prefix(p)?, true)) {
                return Some(n);
            }
        }
        let mut found: Vec<(usize, Option<i64>)> = Vec::new();
        for (pats, words) in [(&EXIT_IN_LINE[..], true), (&EXIT_JSON_KEYS[..], false)] {
            for p in pats {
                let read = |at: usize| words || key_read(head, from + at);
                found.extend(line.match_indices(p).filter(|(at, _)| read(*at)).map(|(at, _)| (at, integer(&line[at + p.len()..], words))));
            }
        }
        found.sort_by_key(|(at, _)| *at);
        if let Some(n) = found.into_iter().find_map(|(_, n)| n) {
            return Some(n);
        }
    }
    None
}

/// The first non-empty line of a text, trimmed, clipped to `max` UTF-8 bytes.
pub fn first_line(text: &str, max: usize) -> String {
    truncate(text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or(""), max)
}

/// The outcome of a result `text` of a call to tool `name` with the error flag its
/// decode gave (`is_error`, which already read a flagless output, Y-5): failed when
/// flagged or when the text states a non-zero exit status
/// ([`crate::formats::failure::result_exit_status`]: of a reader's content, its first
/// line only; brk finding 1).
fn outcome_of(name: &str, text: &str, is_error: bool) -> Outcome {
    let exit = crate::formats::failure::result_exit_status(name, text);
    if is_error || exit.is_some_and(|c| c != 0) {
        Outcome::Failed { exit: exit.filter(|c| *c != 0), first_line: truncate(&error_line(text), 200) }
    } else {
        Outcome::Ok { exit }
    }
}

/// The line a failed result's error is named by (N-5, Y-5): past the shell wrapper a
/// harness puts around the output, the line that says what went wrong. Codex writes the
/// output of newer shells as `Exit code: N` / `Wall time: ...` / `Output:` lines then
/// the output, and of older ones as JSON `{"output": "...", "metadata": {...}}`
/// (LOG-FORMATS 2): the error is in the output, never `Wall time: ...` or the raw JSON.
/// A leading `Exit code N` line says less than the lines after it. Of the output's
/// lines, the first that applies:
/// - npm's log (`npm ERR!` / `npm error` lines) opening it: its first message line
///   (`npm ERR! Missing script: "test"`, `npm ERR! 404 Not Found - GET ...`), past the
///   `code` / `errno` / `syscall` / `path` lines and bare `npm ERR!` spacers (the `code`
///   line when there is nothing else);
/// - the [`root_cause_line`]: a pytest `E   ...` line, the exception a Python traceback
///   ends with (`ValueError: bad input`, not `Traceback (most recent call last):`), the
///   first `error:` / `error[E0425]: ...` / `fatal: ...` / `FAILED ...` / Rust panic line
///   (a panic whose message is on the next line, as Rust writes it since 1.73, is given
///   with it: `thread 'main' panicked at src/main.rs:2:5: boom`), else make's `make: ***
///   ...` line (or the compiler diagnostic before it);
/// - SWE-agent's refused edit: its first sentence and the first item of its `ERRORS:`
///   list (`Your proposed edit has introduced new syntax error(s): E999 IndentationError: ...`);
/// - a compiler diagnostic (`main.c:3:5: error: ...`, `: fatal error:`), else Maven's
///   `[ERROR] ...` line;
/// - npm's message line further down (`npm run` prints the script's own lines first);
/// - the first line that is not a `# pkg` header (Go), else the first line.
///
/// A JSON object body is named by its message first (`json_error_message`). ANSI
/// escape sequences and Terraform's `│ ╷ ╵` frame marks are dropped from the lines.
pub fn error_line(text: &str) -> String {
    let head = text.trim_start();
    if head.starts_with("{\"output\"") || head.starts_with("{ \"output\"") {
        if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(head) {
            if let Some(out) = o.get("output").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
                return error_line(out);
            }
        }
    }
    if let Some(m) = json_error_message(head) {
        return m;
    }
    let plain = strip_ansi(text);
    // Terraform frames its diagnostics with box-drawing marks at line starts
    let body: Vec<&str> = plain.lines().map(|l| l.trim_matches(|c: char| c.is_whitespace() || matches!(c, '│' | '╷' | '╵'))).filter(|l| !l.is_empty()).collect();
    let wrapper = |l: &str| {
        let l = l.to_ascii_lowercase();
        l.starts_with("exit code") || l.starts_with("wall time") || l.starts_with("total output lines") || l == "output:"
    };
    // the wrapper lines lead; the output starts after `Output:` (an empty output: "")
    let lead = body.iter().take_while(|l| wrapper(l)).count();
    match body.get(lead..).filter(|rest| !rest.is_empty()) {
        Some(rest) => informative_line(rest),
        None if body.iter().any(|l| l.eq_ignore_ascii_case("output:")) => String::new(),
        None => body.first().copied().unwrap_or("").to_string(),
    }
}

/// The message of a failed JSON object body ([`error_line`]), as `key: value` (the
/// value clipped to 160 bytes): the first of `error` (a string, or its `message`),
/// `message`, `errors[0].message` (GraphQL), `detail`, `reason`, keys in any ASCII case.
/// `None` when the text is not one JSON object (of at most 1 MB) or holds none of them:
/// a pretty-printed body's first line is `{`, a compact one's message may lie past 200
/// bytes of other fields.
fn json_error_message(head: &str) -> Option<String> {
    if !head.starts_with('{') || !head.trim_end().ends_with('}') || head.len() > 1 << 20 {
        return None;
    }
    let Ok(obj @ Value::Object(_)) = serde_json::from_str::<Value>(head) else { return None };
    fn get<'v>(v: &'v Value, key: &str) -> Option<(&'v str, &'v Value)> {
        v.as_object()?.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(k, v)| (k.as_str(), v))
    }
    let text = |v: &Value| v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    let said = |key: &str, inner: Option<&str>| {
        let (k, v) = get(&obj, key)?;
        let v = if key == "errors" { v.get(0)? } else { v };
        let m = match inner {
            Some(i) if key == "errors" => get(v, i).and_then(|(_, m)| text(m)),
            Some(i) => text(v).or_else(|| get(v, i).and_then(|(_, m)| text(m))),
            None => text(v),
        }?;
        Some((k.to_string(), m))
    };
    let found = said("error", Some("message"))
        .or_else(|| said("message", None))
        .or_else(|| said("errors", Some("message")))
        .or_else(|| said("detail", None))
        .or_else(|| said("reason", None));
    let (k, m) = found?;
    let line = m.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    Some(format!("{k}: {}", truncate(line, 160)))
}

/// [`error_line`] of an output's non-blank trimmed lines (at least one).
fn informative_line(lines: &[&str]) -> String {
    let first = lines.first().copied().unwrap_or("");
    if npm_message(first).is_some() {
        if let Some(l) = npm_line(lines) {
            return l.to_string();
        }
    }
    if let Some(cause) = root_cause_in(lines.iter().copied()) {
        // Rust 1.73+: `thread 'main' panicked at src/main.rs:2:5:` then the message
        if cause.starts_with("thread '") && cause.contains("panicked at") && cause.ends_with(':') {
            let at = lines.iter().position(|l| l.as_ptr() == cause.as_ptr());
            if let Some(next) = at.and_then(|i| lines.get(i + 1)).filter(|n| !n.starts_with("note:") && !n.starts_with("stack backtrace")) {
                return format!("{cause} {next}");
            }
        }
        return cause.to_string();
    }
    // SWE-agent's refused edit: `ERRORS:` then `- E999 IndentationError: unexpected indent`
    if first.starts_with("Your proposed edit has introduced new syntax error") {
        if let Some(item) = lines.iter().skip_while(|l| **l != "ERRORS:").nth(1).and_then(|l| l.strip_prefix("- ")) {
            let said = first.split_once(". ").map_or(first, |(s, _)| s).trim_end_matches('.');
            return format!("{said}: {item}");
        }
    }
    // a compiler diagnostic (`main.c:3:5: error: ...`, gcc / clang), else Maven's
    // `[ERROR] ...` line, else npm's message, else the first line that is not a `# pkg`
    // header (Go prints the package before its errors)
    let diagnostic = lines.iter().find(|l| l.contains(": error:") || l.contains(": fatal error:"));
    let maven = || lines.iter().find(|l| l.starts_with("[ERROR]"));
    let header = |l: &&&str| l.starts_with("# ");
    diagnostic.or_else(maven).copied().or_else(|| npm_line(lines)).or_else(|| lines.iter().find(|l| !header(l)).copied()).unwrap_or(first).to_string()
}

/// `text` without ANSI escape sequences (`ESC [ params final`, as colouring tools such as
/// Terraform write them; a lone `ESC` is dropped too). Borrowed when there is none.
fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\x1b') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // parameter and intermediate bytes, then one final byte in @..~
            while let Some(&n) = chars.peek() {
                chars.next();
                if ('@'..='~').contains(&n) {
                    break;
                }
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The message of an npm log line (`npm ERR! ...`, `npm error ...`), trimmed; `None`
/// for another line.
fn npm_message(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("npm ERR!").or_else(|| line.strip_prefix("npm error").filter(|r| r.is_empty() || r.starts_with(' ')))?;
    Some(rest.trim())
}

/// The line of an npm log that says what failed ([`error_line`]): the first with a
/// message that is not one of its key lines or its pointer to the full log, else its
/// `code` line; `None` when no line is npm's.
fn npm_line<'a>(lines: &[&'a str]) -> Option<&'a str> {
    const KEYS: [&str; 7] = ["code", "errno", "syscall", "path", "signal", "command", "cwd"];
    let mut code = None;
    for l in lines {
        let Some(m) = npm_message(l) else { continue };
        let word = m.split_whitespace().next().unwrap_or("");
        if m.is_empty() || m.starts_with("A complete log of this run") || m.starts_with("Log files were not written") {
            continue;
        }
        if KEYS.contains(&word) {
            if word == "code" && code.is_none() {
                code = Some(*l);
            }
            continue;
        }
        return Some(l);
    }
    code
}

fn plan_of(name: &str, call_id: &str, arguments: &str, v: &Value) -> Option<Plan> {
    let Value::Object(map) = v else { return None };
    let list = map.get("todos").or_else(|| map.get("plan")).or_else(|| map.get("tasks"))?;
    let Value::Array(items) = list else { return None };
    let mut out = Vec::new();
    for it in items {
        match it {
            Value::Object(o) => {
                let text = ["content", "step", "task", "title", "description", "text"].iter().find_map(|k| o.get(*k).and_then(Value::as_str)).unwrap_or("");
                let status = o.get("status").and_then(Value::as_str).unwrap_or("pending");
                out.push((status.to_string(), text.to_string()));
            }
            Value::String(s) => out.push(("pending".to_string(), s.clone())),
            _ => {}
        }
    }
    let explanation = map.get("explanation").and_then(Value::as_str).map(str::to_string);
    Some(Plan { tool: name.to_string(), call_id: call_id.to_string(), arguments: arguments.to_string(), items: out, explanation })
}

/// Every `artifact#N` handle written inline in a text, in order.
fn inline_handles(text: &str, out: &mut Vec<String>) {
    let mut rest = text;
    while let Some(p) = rest.find("artifact#") {
        let after = rest.get(p + 9..).unwrap_or("");
        // `artifact#N` or `artifact#<tag>-N` (issue 14)
        let digits = crate::trust::handle_body_len(after);
        if digits > 0 {
            let h = format!("artifact#{}", after.get(..digits).unwrap_or(""));
            if !out.contains(&h) {
                out.push(h);
            }
        }
        rest = after.get(digits..).unwrap_or("");
    }
}

/// The [`Call`] a call block makes (its outcome still [`Outcome::NoResult`]): the paths
/// and command its arguments name, the files a patch in them names; and the plan it
/// writes, if it writes one ([`plan_of`]).
fn call_of(offset: usize, id: &str, name: &str, arguments: &str) -> (Call, Option<Plan>) {
    let v: Value = if may_name_fact_keys(arguments) { serde_json::from_str(arguments).unwrap_or(Value::Null) } else { Value::Null };
    let mut paths = Vec::new();
    let mut command = None;
    arg_paths(&v, &mut paths, &mut command);
    let patched = call_patch(arguments, &v);
    if !patched.is_empty() {
        let mut have: std::collections::HashSet<String> = paths.iter().cloned().collect();
        for (p, _) in &patched {
            if have.insert(p.clone()) {
                paths.push(p.clone());
            }
        }
    }
    let plan = plan_of(name, id, arguments, &v);
    let call = Call { offset, id: id.to_string(), name: name.to_string(), arguments: arguments.to_string(), command, paths, patched, outcome: Outcome::NoResult, handle: None, cause: None };
    (call, plan)
}

/// Whether a call's output is searched for a root-cause line ([`root_cause_line`]): a
/// file view shows code, not an error, so only a failed call, a command or a tool that
/// is not a read is.
fn searches_cause(c: &Call) -> bool {
    c.outcome.failed() || c.command.is_some() || !matches!(action_of(&c.name), FileAction::Read | FileAction::Searched)
}

impl Facts {
    /// Reads the facts of the folded rows `(source offset, message)`, oldest first.
    /// `handle_of(offset, nth)` gives the artifact handle the nth tool result of the row
    /// at `offset` is stored under (stamped `artifact_ref` or the host's store), if any.
    pub fn read(rows: &[(usize, &Message)], handle_of: &dyn Fn(usize, usize, &Message) -> Option<String>) -> Facts {
        Facts::read_for(rows, handle_of, true)
    }

    /// [`Facts::read`], reading the facts only the deterministic handoff summary
    /// ([`super::handoff_summary`]) writes when `handoff` is true: the assistant
    /// [`decisions`](Facts::decisions), the [`current_work`](Facts::current_work), the
    /// [`earlier_summary`](Facts::earlier_summary) narrative and the inline
    /// [`artifacts`](Facts::artifacts). With `handoff` false (a host summarizer wrote the
    /// narrative; the floor N-5 / N-1, the rehydration N-6 and the ledger Y-5 read the
    /// rest) those stay empty and every other field is what [`Facts::read`] gives
    /// (issue 15: the decision sentences of every folded assistant text were a sixth of
    /// a 10 MB compaction that did not write a handoff).
    pub fn read_for(rows: &[(usize, &Message)], handle_of: &dyn Fn(usize, usize, &Message) -> Option<String>, handoff: bool) -> Facts {
        let mut f = Facts { rows: rows.len(), ..Facts::default() };
        // de-duplication in constant time per sentence (a fold full of them stays linear)
        let mut constraint_seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut decision_seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (off, m) in rows {
            let off = *off;
            if m.is_summary() {
                let text = m.text();
                let (narrative, body) = super::ledger::split_summary(&text);
                if handoff {
                    // issue 13, Y-3: the earlier summary's decisions and findings are §7
                    // lines of the new summary (older than the rows' own), not a part of
                    // a quote the budget clips first
                    let (ds, dropped) = summary_decisions(narrative);
                    f.decisions_dropped = f.decisions_dropped.saturating_add(dropped);
                    for d in ds {
                        if decision_seen.insert(d.clone()) {
                            f.decisions.push(d);
                        }
                    }
                    let n = without_decisions(narrative).trim().to_string();
                    f.earlier_summaries.push(n.clone());
                    f.earlier_summary = Some(n);
                    f.note_summary_errors(off, narrative);
                    inline_handles(&text, &mut f.artifacts);
                }
                // the items and the plain floor lines (clip markers, rollup markers, the
                // count line): a fold of a summary row carries both on (N-1, S-9)
                if body.is_some() {
                    f.carried.extend(super::ledger::carried_items(&text));
                }
                continue;
            }
            if let Some(h) = m.provenance.artifact_ref.as_ref().filter(|_| handoff) {
                if !f.artifacts.contains(h) {
                    f.artifacts.push(h.clone());
                }
            }
            if is_instruction(m) && !m.has_results() {
                f.instructions.push(Instruction { offset: off, id: m.id.clone(), text: m.text(), user_text: false });
                continue;
            }
            let mut nth = 0;
            // a row's provider-run calls are read once, at its first opaque call item
            let mut hosted_read = false;
            for b in &m.blocks {
                match b {
                    Block::ToolCall { id, name, arguments } => {
                        let (call, plan) = call_of(off, id, name, arguments);
                        if plan.is_some() {
                            f.plan = plan;
                        }
                        f.calls.push(call);
                    }
                    // issue 13, Y-5: a call the provider ran itself (a server web search,
                    // an MCP call) is an opaque item; its row's JSON names it and its outcome
                    Block::Opaque { kind, .. } if !hosted_read && crate::hosted::is_hosted_kind(kind) => {
                        hosted_read = true;
                        for h in crate::hosted::hosted_calls(m) {
                            let (mut call, _) = call_of(off, &h.call_id, &h.tool, &h.arguments);
                            call.outcome = match h.outcome {
                                crate::hosted::HostedOutcome::Ok { exit } => Outcome::Ok { exit },
                                crate::hosted::HostedOutcome::Failed { exit, error } => Outcome::Failed { exit, first_line: truncate(&error_line(&error), 200) },
                                crate::hosted::HostedOutcome::NoResult => Outcome::NoResult,
                            };
                            if searches_cause(&call) {
                                call.cause = root_cause_line(&h.text);
                            }
                            f.calls.push(call);
                        }
                    }
                    Block::ToolResult { call_id, text, is_error, .. } => {
                        let handle = handle_of(off, nth, m);
                        nth += 1;
                        if let Some(h) = handle.as_ref().filter(|_| handoff) {
                            if !f.artifacts.contains(h) {
                                f.artifacts.push(h.clone());
                            }
                        }
                        if handoff {
                            inline_handles(text, &mut f.artifacts);
                        }
                        // a reused id pairs with the newest call still waiting for its result
                        if let Some(c) = f.calls.iter_mut().rev().find(|c| c.id == *call_id && c.outcome == Outcome::NoResult) {
                            c.outcome = outcome_of(&c.name, text, *is_error);
                            if searches_cause(c) {
                                c.cause = root_cause_line(text);
                            }
                            c.handle = handle;
                            let named = result_paths(text);
                            if !named.is_empty() {
                                // a set, not a scan per path: the call may name many
                                let mut have: std::collections::HashSet<String> = c.paths.iter().cloned().collect();
                                for p in named {
                                    if have.insert(p.clone()) {
                                        c.paths.push(p);
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            // a host's skill expansion can share a user row with tool results: that text
            // block is an instruction document, the row's other text is user text
            let conversational_user = m.role == Role::User && m.provenance.transcript_role == TranscriptRole::Conversational;
            let mut text = String::new();
            for b in &m.blocks {
                let Block::Text { text: t } = b else { continue };
                if t.trim().is_empty() {
                    continue;
                }
                if m.role == Role::User && INSTRUCTION_PREFIXES.iter().any(|p| t.trim_start().starts_with(p)) {
                    f.instructions.push(Instruction { offset: off, id: m.id.clone(), text: t.clone(), user_text: conversational_user });
                    continue;
                }
                if conversational_user {
                    // N-1: each text block is user text, beside tool results too
                    f.requests.push(Request { offset: off, id: m.id.clone(), text: t.clone() });
                }
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(t);
            }
            if handoff {
                inline_handles(&text, &mut f.artifacts);
            }
            if text.trim().is_empty() {
                continue;
            }
            match m.role {
                Role::User if conversational_user => {
                    for s in constraint_sentences(&text) {
                        if constraint_seen.insert(s.to_string()) {
                            f.constraints.push(s.to_string());
                        }
                    }
                }
                Role::Assistant if handoff => {
                    for s in decision_sentences(&text) {
                        let s = truncate(s, 400);
                        if decision_seen.insert(s.clone()) {
                            f.decisions.push(s);
                        }
                    }
                    f.current_work = Some(text);
                }
                _ => {}
            }
        }
        // files, in order of first use; the lookups are maps, so a call naming many
        // distinct files (a patch of 100k headers: untrusted input) stays linear
        let mut file_at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for c in &f.calls {
            let action = action_of(&c.name);
            let patched: std::collections::HashMap<&str, FileAction> = c.patched.iter().rev().map(|(q, a)| (q.as_str(), *a)).collect();
            for (k, p) in c.paths.iter().enumerate() {
                // a command's words and a result's mentions are weaker than the argument itself
                // what a patch does to its files is known exactly
                let patched = patched.get(p.as_str()).copied();
                // a failed patch changed nothing it is known of: its files are not "edited"
                let act = if let Some(a) = patched { if c.outcome.failed() { FileAction::PatchFailed } else { a } } else if c.command.is_some() { FileAction::Command } else if k > 0 && action == FileAction::Read { FileAction::Mentioned } else if is_editor_view(c) { FileAction::Read } else { action };
                let at = match file_at.get(p.as_str()) {
                    Some(i) => *i,
                    None => {
                        f.files.push(FileUse { path: p.clone(), uses: Vec::new(), handles: Vec::new() });
                        file_at.insert(p.clone(), f.files.len() - 1);
                        f.files.len() - 1
                    }
                };
                if let Some(u) = f.files.get_mut(at) {
                    u.uses.push((c.name.clone(), act, c.outcome.failed()));
                    if let Some(h) = &c.handle {
                        if !u.handles.contains(h) {
                            u.handles.push(h.clone());
                        }
                    }
                }
            }
        }
        f
    }

    /// Notes the §5 error lines of the narrative of the summary row at source offset
    /// `offset` in [`Facts::carried_errors`] ([`super::merge::error_heads`]): each line's
    /// head and whether it was resolved. The handoff resolves an unresolved one by a
    /// later call of these rows (issue 13, Y-3); [`Facts::read_for`] notes the folded
    /// summaries, the engine those of the session left in place.
    pub fn note_summary_errors(&mut self, offset: usize, narrative: &str) {
        for (head, resolved) in super::merge::error_heads(narrative) {
            self.carried_errors.push(CarriedError { after: offset, head, resolved });
        }
    }

    /// The first task (the oldest request).
    pub fn first_task(&self) -> Option<&Request> {
        self.requests.first()
    }

    /// The newest request.
    pub fn newest_request(&self) -> Option<&Request> {
        self.requests.last()
    }

    /// Every distinct file path, in order of first use.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|u| u.path.as_str())
    }

    /// Errors and how they were resolved (§5): each call that failed or whose output
    /// holds a root-cause line ([`Call::cause`]), with the later call of the same tool
    /// running the same command in the same directory ([`same_command`]; else on the same path; for calls naming
    /// neither, with the same arguments)
    /// that succeeded with no root-cause line, if one followed, and the file edits made in
    /// between.
    pub fn errors(&self) -> Vec<ErrorFix<'_>> {
        let mut out = Vec::new();
        for (i, c) in self.calls.iter().enumerate() {
            if !c.outcome.failed() && c.cause.is_none() {
                continue;
            }
            let same = |d: &Call| {
                d.name == c.name
                    && match (&c.command, &d.command) {
                        // the same command, whole (breaker finding: the first two words made
                        // `ls` resolve a failed `bash -lc "git push origin main"`)
                        // in the same directory (brk2 finding 2: [`same_command`])
                        (Some(a), Some(b)) => same_command(a, b),
                        (Some(_), None) => false,
                        // neither names a path: the same arguments (break5 finding 7: a
                        // later weather call for Paris does not resolve a failed one for Rome)
                        _ if c.paths.is_empty() && d.paths.is_empty() => c.arguments == d.arguments,
                        // an editor's view edits nothing: it resolves only a failed view
                        _ => c.paths.first() == d.paths.first() && (!is_editor_view(d) || is_editor_view(c)),
                    }
            };
            let at = self.calls.iter().enumerate().skip(i + 1).find(|(_, d)| matches!(d.outcome, Outcome::Ok { .. }) && d.cause.is_none() && same(d)).map(|(j, _)| j);
            let fix = at.and_then(|j| self.calls.get(j));
            let edits = at.and_then(|j| self.calls.get(i + 1..j)).unwrap_or(&[]);
            out.push(ErrorFix { call: c, fix, edits });
        }
        out
    }

    /// The next step, by rule: the plan's item in progress (else its first pending one);
    /// else the current work's last sentence that announces one ("Let me", "Next",
    /// "I'll", "Now"...); else `None`.
    pub fn next_step(&self) -> Option<String> {
        if let Some(p) = &self.plan {
            let open: Vec<&(String, String)> = p.open_items().collect();
            if let Some((s, c)) = open.iter().find(|(s, _)| s.eq_ignore_ascii_case("in_progress")).or(open.first()) {
                return Some(format!("continue the plan item {s}: {c}"));
            }
        }
        let w = self.current_work.as_deref()?;
        let announces = |s: &&str| {
            let l = s.to_lowercase();
            ["let me", "let's", "next", "i'll", "i will", "now ", "then "].iter().any(|p| l.starts_with(p) || l.contains(&format!(" {p}")))
        };
        sentences(w).into_iter().rev().find(announces).map(|s| s.to_string())
    }
}

/// The one-line form of a file's uses: `Read, Edit x2 (1 failed)`.
pub fn describe_uses(u: &FileUse) -> String {
    let mut parts: Vec<(String, FileAction, usize, usize)> = Vec::new();
    for (tool, act, failed) in &u.uses {
        match parts.iter_mut().find(|(t, a, _, _)| t == tool && a == act) {
            Some(p) => {
                p.2 += 1;
                p.3 += usize::from(*failed);
            }
            None => parts.push((tool.clone(), *act, 1, usize::from(*failed))),
        }
    }
    parts
        .iter()
        .map(|(t, a, n, k)| {
            let count = if *n > 1 { format!(" x{n}") } else { String::new() };
            if *a == FileAction::PatchFailed {
                return format!("{} ({t}{count})", a.word());
            }
            let fail = if *k > 0 { format!(", {k} failed") } else { String::new() };
            format!("{} by {t}{count}{fail}", a.word())
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {

    /// Issue 15: the pre-filters (`may_hold_constraint` for a text, `may_need_words` for a
    /// sentence) never change the answer: the same sentences as the rules run on every
    /// sentence, over texts mixing constraints, statements and near misses in several
    /// languages, cases and layouts.
    #[test]
    fn n1_constraint_prefilters_change_no_answer() {
        let parts = [
            "You must keep the API stable.", "Never push to main!", "Leave the tests alone.", "Keep src/a.rs as is.", "keep it unchanged",
            "Ne touche pas au fichier.", "N'efface pas la base.", "Ändere die API nicht.", "Bitte nicht löschen.", "No edites el README.",
            "no cambies nada", "Only edit files under src/.", "ONLY run the linter.", "I don't know why it fails.", "We don't have a CI.",
            "Don't touch config.", "The knob is not set.", "Nothing here.", "Another note about nodes.", "No.", "Is it no good?", "pastel colors",
            "passport number 123", "I keep forgetting.", "keepalive on", "nichts zu tun", "Das ist nicht gut.", "No sé.", "Do NOT deploy",
            "under no circumstances delete data", "always run the tests", "should be quick", "piano", "casino night", "non-no-go",
            "leave-one-out", "Please, no emojis.", "别动这个文件", "不要删除", "区别很大", "テストを変更しないで", "résumé only", "ONLY",
        ];
        let mut texts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
        for (i, a) in parts.iter().enumerate() {
            let b = parts[(i * 7 + 3) % parts.len()];
            let c = parts[(i * 11 + 5) % parts.len()];
            texts.push(format!("{a} {b}\n{c}"));
            texts.push(format!("{a}\n\n- {b}\n- {c}"));
            texts.push(format!("({a}) {}", b.to_uppercase()));
        }
        for t in &texts {
            let want: Vec<&str> = sentences(t).into_iter().filter(|s| constraint_test(s, false)).collect();
            assert_eq!(constraint_sentences(t), want, "{t:?}");
        }
    }

    use super::*;

    #[test]
    fn t4_phrase_lists_cannot_overlap_themselves_on_an_edge() {
        for w in CONSTRAINT_WORDS.iter().chain(MORE_CONSTRAINT_WORDS.iter()).chain(DECISION_WORDS.iter()).chain(FINDING_WORDS.iter()) {
            let b = w.as_bytes();
            for shift in 1..b.len() {
                let edge_inside = b.get(shift - 1).is_some_and(|c| !c.is_ascii_alphanumeric());
                let overlaps = b.get(shift..).is_some_and(|tail| b.starts_with(tail));
                assert!(!(edge_inside && overlaps), "{w:?} overlaps itself at {shift}");
            }
        }
        assert!(CONSTRAINT_WORDS.len() <= 32 && MORE_CONSTRAINT_WORDS.len() <= 32 && DECISION_WORDS.len() <= 32 && FINDING_WORDS.len() <= 32);
    }

    #[test]
    fn n1_y9_constraints_beyond_english_trigger_words_are_constraints() {
        for s in [
            "Du darfst vendor/lib_1.c niemals ohne Rückfrage ändern.",
            "Das darf nicht passieren.",
            "Man muss die Tests laufen lassen.",
            "Nie auf main pushen.",
            "Nunca debes editar vendor/lib_1.c sin preguntar.",
            "Siempre usa tabs.",
            "El código debe compilar.",
            "Ne modifie pas le fichier vendor/lib_1.c.",
            "N'utilise pas la branche main.",
            "Tu dois toujours demander.",
            "Il ne faut jamais pousser sur main.",
            "你绝对不能修改 vendor/lib_1.c 文件。",
            "不要删除测试。",
            "必须使用 tabs。",
            "禁止提交到 main 分支。",
            "务必先运行测试。",
            "Only use port 8002 for service 2.",
            "only edit files under src/.",
            "Use only the staging database.",
            "Do not use the vendored copy.",
        ] {
            assert_eq!(constraint_sentences(s), [s], "{s:?} is a constraint");
        }
        for s in [
            "The budget is 12 thousand.",
            "Das Budget ist 12 Tausend.",
            "El presupuesto es 12 mil.",
            "Le budget est de 12 mille.",
            "预算是12万元。",
            "The only file left is a.rs.",
            "Nieve cae en la montaña.",
            "Debería funcionar ahora.",
            "Il est neuf heures, pas encore.",
            "Doing it now.",
        ] {
            assert!(constraint_sentences(s).is_empty(), "{s:?} is not a constraint");
        }
    }

    #[test]
    fn issue13_findings_are_statements_with_a_value_or_a_finding_word_not_plans_questions_or_code() {
        let text = "Let me check the config file at line 42.\nThe port is set to 8080.\nWhy did 3 tests fail?\n\
            ```\nx = 12345 # because\n```\nThe build passes now. I'll use serde instead of a hand parser.\nOK then.";
        assert_eq!(
            decision_sentences(text),
            vec!["The port is set to 8080.", "The build passes now.", "I'll use serde instead of a hand parser."]
        );
        // a table of values gives at most FINDINGS_PER_TEXT findings; decision phrases are not capped
        let rows: String = (0..10).map(|i| format!("| bus {i} | {} MW |\n", 100 + i)).collect();
        let t = format!("{rows}We decided to keep bus 7 because it is the slack bus.");
        let got = decision_sentences(&t);
        assert_eq!(got.len(), FINDINGS_PER_TEXT + 1, "{got:?}");
        assert_eq!(got.last().copied(), Some("We decided to keep bus 7 because it is the slack bus."));
    }

    #[test]
    fn n1_one_pass_phrase_match_answers_as_the_per_phrase_search() {
        let texts = [
            "you must keep it",
            "mustard is fine",
            "i'll do it; we should, because... the fix",
            "never", "nevermind", "xnever", "don't-stop", "do not", "do notx", "make sure!", "makesure",
            "é must é", "émust", "the issue isn't", "the issue is", "we need to", "weneed to", "i will", "confirmedly confirmed",
            "", "m", "ensure\nensured", "a root cause.", "it seems", "itseems", "prefer avoid required",
        ];
        for t in texts {
            for (words, first) in [(&CONSTRAINT_WORDS[..], &CONSTRAINT_FIRST), (&DECISION_WORDS[..], &DECISION_FIRST), (&FINDING_WORDS[..], &FINDING_FIRST)] {
                let want = words.iter().any(|w| lower_has_word(t, w));
                assert_eq!(lower_has_any(t, words, first), want, "{t:?}");
            }
        }
        assert!(lower_has_any("you must", &CONSTRAINT_WORDS, &CONSTRAINT_FIRST));
        assert!(!lower_has_any("mustard", &CONSTRAINT_WORDS, &CONSTRAINT_FIRST));
    }

    /// Odd texts for the fast paths below: case, U+2019, CJK marks, non-ASCII
    /// whitespace, lone marks, CR LF, bullets, multi-byte characters around every split.
    fn odd_texts() -> Vec<String> {
        let mut v: Vec<String> = [
            "", ".", "a. b", "a.b. c! d? e", "You MUST keep it. Never push!", "Don\u{2019}t touch it. OK?",
            "one。two！three？four", "x.\u{a0}y.\u{3000}z.\u{2028}w", "é. É! ü? 中文。", "- . -", "1. 2. 3.", "line\r\nnext.\r\n\r\nlast",
            "\u{85}a.\u{85}b", "Exit Code: 3", "EXIT STATUS=\"7\" then exit code 0", "exit code -", "exit code --1", "exit code 1-2",
            "exited with code 12 but Exit_Code: 4", "returncode=-9", "RETURNCODE 5 exit code x exit status 2", "eexit code 8", "ÉXIT CODE 1 exit code 2",
            "I'LL fix it because THE CAUSE is X. It Seems fine.", "we SHOULD\tnot", "Ensure-it. mustn't! MUSTARD.", "make  sure", "MAKE SURE.",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // a pseudo-random mix of those pieces (fixed seed)
        let pieces = ["must ", "Never", ". ", "! ", "?", "\n", "。", "？", "é", "\u{2019}", "Exit code ", "7", "-", " ", "\u{a0}", "x", "I'll", "\r\n", "DON'T", "return", "code"];
        let mut seed: u64 = 15;
        for _ in 0..400 {
            let mut t = String::new();
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let n = (seed >> 40) % 24;
            for _ in 0..n {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                t.push_str(pieces[((seed >> 33) % pieces.len() as u64) as usize]);
            }
            v.push(t);
        }
        // the 2,000-byte head cut inside a pattern and inside a character
        v.push(format!("{}exit code 9", "a".repeat(1_995)));
        v.push(format!("{}éexit code 9", "a".repeat(1_998)));
        v
    }

    #[test]
    fn issue15_byte_sentence_split_equals_the_character_walk() {
        for t in odd_texts() {
            assert_eq!(sentences(&t), sentences_slow(&t), "{t:?}");
        }
        assert_eq!(sentences("a. b。c"), vec!["a.", "b。", "c"]);
    }

    #[test]
    fn issue15_in_place_phrase_match_equals_the_lowercased_search() {
        for t in odd_texts() {
            for s in sentences_slow(&t).into_iter().chain([t.as_str()]) {
                let l = s.to_lowercase().replace('\u{2019}', "'");
                for (words, first) in [(&CONSTRAINT_WORDS[..], &CONSTRAINT_FIRST), (&DECISION_WORDS[..], &DECISION_FIRST)] {
                    assert_eq!(sentence_has_any(s, words, first), lower_has_any(&l, words, first), "{s:?}");
                }
            }
        }
        assert!(sentence_has_any("You MUST go", &CONSTRAINT_WORDS, &CONSTRAINT_FIRST));
        assert!(!sentence_has_any("MUSTARD", &CONSTRAINT_WORDS, &CONSTRAINT_FIRST));
    }

    #[test]
    fn issue15_one_pass_exit_status_equals_the_lowercased_search() {
        for t in odd_texts() {
            assert_eq!(exit_status(&t), exit_status_slow(&t), "{t:?}");
        }
        // issue 13: the harness forms, mixed with prose and code (fixed seed)
        let pieces = [
            "Exit code", "\nexit status", "\nexit_code", "\n(returncode", "exited with code", "returned non-zero exit status", "\"exitCode\"", "\"exit_code\"", ": ", "=", "==",
            " ", "\"", "-", "1", "0", "7 ", ".", "x", "_", "\n", "\r\n", "\n[", "\nError: ", "proc.", "é", "\t", "2.5",
            // brk finding 4: JSON nesting and indentation
            "{", "}", "[", "]", "\"metadata\": {", "\\\"", ",", "\n   ", "\n  ", "\u{a0}",
        ];
        let texts = crate::quote::tests::mixed_texts(&pieces, 13, 2_000, 12);
        for t in &texts {
            assert_eq!(exit_status(t), exit_status_slow(t), "{t:?}");
            // as the opening of a JSON object, and inside its `metadata` object
            for j in [format!("{{{t}"), format!(" {{\"a\": [1], \"metadata\": {{{t}")] {
                assert_eq!(exit_status(&j), exit_status_slow(&j), "{j:?}");
            }
        }
        let stated = texts.iter().filter(|t| exit_status(t).is_some()).count();
        assert!(stated > 100, "the mix states a status often: {stated}");
        // brk finding 4: keys in and out of the top object and `metadata`, lines indented
        let pieces = ["{", "{", "}", "[", "]", "\"exit_code\": 1", "\"ExitCode\": 2", "\"metadata\": ", ", ", "\n   Exit code 3", "\n  Exit code 4", "\n\tExit code 5", "\"x\\\"", "\"", " ", "\n"];
        let texts = crate::quote::tests::mixed_texts(&pieces, 4, 3_000, 10);
        for t in texts.iter().flat_map(|t| [t.clone(), format!("{{{t}")]) {
            assert_eq!(exit_status(&t), exit_status_slow(&t), "{t:?}");
        }
        let stated = texts.iter().filter(|t| exit_status(&format!("{{{t}")).is_some()).count();
        assert!(stated > 300, "the mix states a status often: {stated}");
        // brk2 finding 13: OpenHands' and mini-swe-agent's footers, whole and broken
        let pieces = ["\n[The command completed with exit code ", "\n<returncode>", "</returncode>", "\n<RETURNCODE>", "The Command Completed", "1", "0", ".]", ".", "x", " ", "\n", "\n   ", "\nError: ", "<", "-"];
        let texts = crate::quote::tests::mixed_texts(&pieces, 1313, 2_000, 10);
        for t in &texts {
            assert_eq!(exit_status(t), exit_status_slow(t), "{t:?}");
        }
        let stated = texts.iter().filter(|t| exit_status(t).is_some()).count();
        assert!(stated > 100, "the footers state a status often: {stated}");
        assert_eq!(exit_status("EXIT STATUS=\"7\" then exit code 0"), Some(7), "issue 13: the line's opening states it, not prose after it");
        assert_eq!(exit_status("exit code x\nexit status 2"), Some(2));
        assert_eq!(exit_status("exit code x exit status 2"), None, "issue 13: a status named mid-line in prose is not read");
        assert_eq!(exit_status(&format!("{}exit code 9", "a".repeat(1_995))), None, "only the 2,000-byte head is read");
    }


    #[test]
    fn issue15_n5_argument_parse_skipped_only_when_no_fact_key_can_be_there() {
        let args = [
            r#"{"user_id":"mia_li_3668"}"#, r#"{"reservation_id":"ABC","cabin":"economy"}"#, r#"{"path":"/a/b.rs"}"#, r#"{"FILE_PATH":"/x.py"}"#, r#"{"Command":"ls src/"}"#,
            r#"{"cmd":["cat","a.txt"]}"#, r#"{"todos":[{"content":"x","status":"pending"}]}"#, r#"{"Plan":["a"]}"#, r#"{"tasks":["t"]}"#, r#"{"\u0070ath":"/esc.rs"}"#,
            r#"{"Directory":"/tmp"}"#, r#"{"Source":"a.rs","destination":"b.rs"}"#, r#"{"files":["a.rs","b.rs"]}"#, "not json", "", r#"{"q":"path"}"#, r#"["path"]"#, r#"{"x":{"path":"/nested"}}"#,
        ];
        for a in args {
            let v: Value = serde_json::from_str(a).unwrap_or(Value::Null);
            let (mut paths, mut command) = (Vec::new(), None);
            arg_paths(&v, &mut paths, &mut command);
            let plan = plan_of("t", "c", a, &v);
            if !may_name_fact_keys(a) {
                assert!(paths.is_empty() && command.is_none() && plan.is_none(), "{a:?}");
            }
            if !paths.is_empty() || command.is_some() || plan.is_some() {
                assert!(may_name_fact_keys(a), "{a:?} names a fact key");
            }
        }
        assert!(!may_name_fact_keys(r#"{"user_id":"mia_li_3668"}"#));
        assert!(may_name_fact_keys(r#"{"\u0070ath":"/esc.rs"}"#));
    }

}
