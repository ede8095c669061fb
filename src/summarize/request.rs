//! The summarize request (Y-1, Y-8): folded rows rendered as summarizer input and
//! bounded to the summarizer's window, clipping tool outputs first.

use crate::config::Config;
use crate::evict::{clip, floor_boundary};
use crate::quote;
use crate::transcript::{Block, Message, Role};
use serde::{Deserialize, Serialize};

/// What the host's summarize (or curator) callback receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarizeRequest {
    /// `summary` (fold new rows), `rollup` (merge summaries) or `curate` (a host curator
    /// writes the summary of the rows before the open run, Y-1 / S-6 stage 1).
    pub kind: String,
    /// System prompt for the summarizer.
    pub system: String,
    /// Chat messages (`role`, `content` text) to send after the system prompt.
    pub messages: Vec<ChatMessage>,
    /// Output budget, tokens.
    pub max_output_tokens: u64,
    /// Estimated input size of this request, tokens (system + messages).
    pub estimated_input_tokens: u64,
    /// How much of the folded history the request carries: `whole`, `trimmed`.
    pub coverage: String,
    /// `curate` only: the rows handed to the curator, in the stored view (provider JSON
    /// with provenance keys), oldest first: only rows before the open run (S-6). Empty
    /// (and omitted from JSON) for the other kinds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<serde_json::Value>,
}

/// A plain chat message of a summarize request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// The chat role; `user` in every request the engine builds (instructions go in `system`).
    pub role: String,
    /// The message text: the rows fenced as data in `<transcript>` (summary, curate) or
    /// the summaries in `<summaries>` (rollup), Y-9.
    pub content: String,
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// Tool names by call id, for rendering results (E-2): the calls made in `rows`.
pub type CallNames = std::collections::HashMap<String, String>;

/// The tool name of every call the rows make, by call id (E-2: a result is rendered with
/// the name of the call it answers).
pub fn call_names(rows: &[(usize, &Message)]) -> CallNames {
    let mut names = CallNames::new();
    for (_, m) in rows {
        for b in &m.blocks {
            if let Block::ToolCall { id, name, .. } = b {
                names.insert(id.clone(), name.clone());
            }
        }
    }
    names
}

/// Renders one (already evicted) message as summarizer input text (Y-8): media become
/// placeholders, reasoning is stripped, opaque items are named only, except the calls the
/// provider ran itself, rendered as calls with their outcomes ([`crate::hosted`]). A tool
/// result is rendered with its header (E-2): the tool name (the result's own, else
/// unknown here; see [`render_message_named`]), its status and, for an error, the
/// error's first line.
pub fn render_message(offset: usize, m: &Message) -> String {
    render_message_named(offset, m, &CallNames::new())
}

/// [`render_message`] with the tool names of the calls by id (`names`, [`call_names`]),
/// so a result whose format does not carry its tool name is rendered with its call's (E-2).
pub fn render_message_named(offset: usize, m: &Message, names: &CallNames) -> String {
    let mut out = String::new();
    render_into(&mut out, offset, m, names);
    out
}

/// UTF-8 bytes of [`render_message`], counted without building the text.
pub fn rendered_len(offset: usize, m: &Message) -> usize {
    rendered_len_named(offset, m, &CallNames::new())
}

/// UTF-8 bytes of [`render_message_named`], counted without building the text.
pub fn rendered_len_named(offset: usize, m: &Message, names: &CallNames) -> usize {
    let mut c = Count(0);
    render_into(&mut c, offset, m, names);
    c.0
}

/// A piece of a rendered row: engine text (headers, placeholders, a call's clipped
/// arguments, already quoted) or a transcript text quoted as data ([`quote::content`]) when
/// written out.
enum Seg<'a> {
    Lit(String),
    Quoted(&'a str),
}

/// Where a rendered row goes: engine text through [`std::fmt::Write`], transcript text
/// through [`RowSink::quoted`] (to be quoted as data).
trait RowSink<'a>: std::fmt::Write {
    fn quoted(&mut self, text: &'a str);
}

/// Builds the rendered text.
impl<'a> RowSink<'a> for String {
    fn quoted(&mut self, text: &'a str) {
        quote::content_into(text, self);
    }
}

/// Counts the rendered row's UTF-8 bytes without building it.
struct Count(usize);

impl std::fmt::Write for Count {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0 += s.len();
        Ok(())
    }
}

impl<'a> RowSink<'a> for Count {
    fn quoted(&mut self, text: &'a str) {
        self.0 += quote::content_len(text);
    }
}

/// Collects the pieces (engine text joined into one piece between transcript texts).
struct Segs<'a>(Vec<Seg<'a>>);

impl std::fmt::Write for Segs<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        match self.0.last_mut() {
            Some(Seg::Lit(t)) => t.push_str(s),
            _ => self.0.push(Seg::Lit(s.to_string())),
        }
        Ok(())
    }
}

impl<'a> RowSink<'a> for Segs<'a> {
    fn quoted(&mut self, text: &'a str) {
        self.0.push(Seg::Quoted(text));
    }
}

/// The pieces [`render_message_named`] writes, in order (Y-8, E-2).
fn segments<'a>(offset: usize, m: &'a Message, names: &CallNames) -> Vec<Seg<'a>> {
    let mut out = Segs(Vec::with_capacity(4));
    render_into(&mut out, offset, m, names);
    out.0
}

fn render_into<'a>(out: &mut impl RowSink<'a>, offset: usize, m: &'a Message, names: &CallNames) {
    // writing to a String, a counter or the pieces cannot fail
    let _ = write!(out, "[#{offset} {}]", role_name(m.role));
    if m.is_summary() {
        let _ = out.write_str(" (earlier summary)");
    }
    // the row's provider-run calls, read at its first opaque call item (None: not yet)
    let mut hosted: Option<Vec<crate::hosted::HostedCall>> = None;
    for b in &m.blocks {
        match b {
            // content is data (Y-9): fence tags and engine-looking lines escaped (crate::quote)
            Block::Text { text } => {
                let _ = out.write_str("\n");
                out.quoted(text);
            }
            Block::Media { kind, .. } => {
                let _ = write!(out, "\n[{kind:?} omitted]");
            }
            Block::ToolCall { id, name, arguments } => {
                let _ = write!(out, "\n-> call {} (id {}) {}", quote::content(name), quote::content(id), quote::content(&clip(arguments, 300, 100)));
            }
            Block::ToolResult { call_id, name, text, is_error, media, .. } => {
                // E-2: the header (tool name, status, error) stays readable for the summarizer
                let tool = name.as_deref().or_else(|| names.get(call_id).map(String::as_str)).unwrap_or("?");
                // a result without an error flag that states a non-zero exit status failed
                // too (of a reader's content, its first line only: brk finding 1)
                let failed = *is_error || crate::formats::failure::result_exit_status(tool, text).is_some_and(|c| c != 0);
                let _ = if failed {
                    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
                    write!(out, "\n<- result of {} {} ERROR: {}\n", quote::content(tool), quote::content(call_id), quote::content(&crate::evict::truncate(first, 200)))
                } else {
                    write!(out, "\n<- result of {} {} ok:\n", quote::content(tool), quote::content(call_id))
                };
                out.quoted(text);
                for k in media {
                    let _ = write!(out, "\n[{k:?} omitted]");
                }
            }
            Block::Reasoning { .. } => {}
            // E-2, Y-5: a call the provider ran (an opaque item) is rendered like a client
            // call and its result, all of the row's at its first such item
            Block::Opaque { kind, .. } if crate::hosted::is_hosted_kind(kind) && hosted.as_ref().is_none_or(|c| !c.is_empty()) => {
                if hosted.is_none() {
                    let calls = crate::hosted::hosted_calls(m);
                    for c in &calls {
                        render_hosted(out, c);
                    }
                    if calls.is_empty() {
                        let _ = write!(out, "\n[{kind} item]");
                    }
                    hosted = Some(calls);
                }
            }
            Block::Opaque { kind, .. } => {
                let _ = write!(out, "\n[{kind} item]");
            }
        }
    }
}

/// A provider-run call as summarizer input (E-2, Y-5), as a client call and its result
/// are rendered: `-> call <tool> (id <id>, run by the provider) <arguments>` (the
/// arguments clipped as a client call's are), then `<- result of <tool> <id> ok:` and its
/// text, `<- result of <tool> <id> ERROR: <error>` and its text (unless the text only
/// restates the error), or `<- result of <tool> <id>: no result in this row`; ` (exit N)`
/// after `ok` / `ERROR` when the run states its return code. Every line starts as a line
/// quoted content cannot ([`quote`]); transcript text is quoted as data.
fn render_hosted<'a>(out: &mut impl RowSink<'a>, c: &crate::hosted::HostedCall) {
    use crate::hosted::HostedOutcome;
    let (tool, id) = (quote::content(&c.tool), quote::content(&c.call_id));
    let _ = write!(out, "\n-> call {tool} (id {id}, run by the provider) {}", quote::content(&clip(&c.arguments, 300, 100)));
    let exit = |e: &Option<i64>| e.map(|n| format!(" (exit {n})")).unwrap_or_default();
    let _ = match &c.outcome {
        HostedOutcome::NoResult => write!(out, "\n<- result of {tool} {id}: no result in this row"),
        HostedOutcome::Ok { exit: e } if c.text.is_empty() => write!(out, "\n<- result of {tool} {id} ok{}", exit(e)),
        HostedOutcome::Ok { exit: e } => write!(out, "\n<- result of {tool} {id} ok{}:\n{}", exit(e), quote::content(&c.text)),
        HostedOutcome::Failed { exit: e, error } => {
            let first = error.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
            let _ = write!(out, "\n<- result of {tool} {id} ERROR{}: {}", exit(e), quote::content(&crate::evict::truncate(first, 200)));
            // `<what> failed: <error>` alone says nothing the header does not
            let restated = !c.text.contains('\n') && c.text.ends_with(&format!(" failed: {error}"));
            if c.text.is_empty() || restated {
                Ok(())
            } else {
                write!(out, "\n{}", quote::content(&c.text))
            }
        }
    };
}

/// UTF-8 bytes of the row the pieces render to.
#[cfg(test)]
fn segments_len(segs: &[Seg<'_>]) -> usize {
    segs.iter().map(|s| match s {
        Seg::Lit(t) => t.len(),
        Seg::Quoted(t) => quote::content_len(t),
    }).sum()
}

/// The first `n` bytes of the rendered row (all when shorter).
fn segments_prefix(segs: &[Seg<'_>], n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n.min(1 << 16));
    for s in segs {
        let need = n.saturating_sub(out.len());
        if need == 0 {
            break;
        }
        match s {
            Seg::Lit(t) => out.extend_from_slice(t.as_bytes().get(..need.min(t.len())).unwrap_or_default()),
            Seg::Quoted(t) => quote::content_prefix(t, need, &mut out),
        }
    }
    out
}

/// The last `n` bytes of the rendered row (all when shorter).
fn segments_suffix(segs: &[Seg<'_>], n: usize) -> Vec<u8> {
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut have = 0usize;
    for s in segs.iter().rev() {
        let need = n.saturating_sub(have);
        if need == 0 {
            break;
        }
        let piece = match s {
            Seg::Lit(t) => t.as_bytes().get(t.len().saturating_sub(need)..).unwrap_or_default().to_vec(),
            Seg::Quoted(t) => quote::content_suffix(t, need),
        };
        have += piece.len();
        pieces.push(piece);
    }
    let mut out = Vec::with_capacity(have);
    for p in pieces.iter().rev() {
        out.extend_from_slice(p);
    }
    out
}

/// [`clip_row`] of the rendered row of `segs` (`len` its UTF-8 bytes) to `cap`, built from
/// the rendered row's head and tail only (issue 15: the folded rows a summarize request
/// clips or drops are never rendered whole). `None` when the row is not clipped (not over
/// `cap` plus the marker) or the cut is not where [`clip_row`] would make it (then the
/// caller renders the row and clips it).
fn clip_segments(segs: &[Seg<'_>], len: usize, cap: usize) -> Option<String> {
    if len <= cap.saturating_add(CLIP_MARKER_BYTES) {
        return None;
    }
    let x = cap / 4 * 3 + cap % 4 * 3 / 4;
    let y = len - cap / 4;
    if x >= y {
        return None;
    }
    let is_cont = |c: u8| (c & 0xC0) == 0x80;
    // floor_boundary(text, x): the head's bytes up to and with x
    let head = segments_prefix(segs, x + 1);
    let mut h = x;
    while h > 0 && head.get(h).copied().is_some_and(is_cont) {
        h -= 1;
    }
    // ceil_boundary(text, y): the tail from y on
    let tail = segments_suffix(segs, len - y);
    if head.len() != x + 1 || tail.len() != len - y {
        return None;
    }
    let skip = tail.iter().take_while(|c| is_cont(**c)).count();
    let t = y + skip;
    if t < h {
        return None;
    }
    let head = std::str::from_utf8(head.get(..h)?).ok()?;
    let tail = std::str::from_utf8(tail.get(skip..)?).ok()?;
    // as clip_row writes it: the tail quoted again (issue 14)
    Some(format!("{head}\n[... {} bytes clipped ...]\n{}", t - h, quote::content(tail)))
}

/// One folded row rendered for the summarizer (Y-8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedRow {
    /// The text from [`render_message`].
    pub text: String,
    /// The row carries tool output: these rows are clipped first, largest first.
    pub tool_output: bool,
}

/// Whether a row carries tool output, clipped first (Y-8): a client tool's results, or
/// a provider-run call's ([`crate::hosted::has_hosted`], E-2).
fn carries_output(m: &Message) -> bool {
    m.has_results() || crate::hosted::has_hosted(m)
}

/// [`render_message`] plus whether the row carries tool output.
pub fn render_row(offset: usize, m: &Message) -> RenderedRow {
    RenderedRow { text: render_message(offset, m), tool_output: carries_output(m) }
}

/// The folded rows rendered as [`summary_request_for`] renders them: each result with
/// the tool name of its call among `rows` (E-2).
pub fn render_rows(rows: &[(usize, &Message)]) -> Vec<RenderedRow> {
    let names = call_names(rows);
    rows.iter().map(|(o, m)| RenderedRow { text: render_message_named(*o, m, &names), tool_output: carries_output(m) }).collect()
}

/// Rows holding tool output are never clipped below this many UTF-8 bytes (the head of
/// the output keeps its call id and the start of the body).
pub const MIN_CLIPPED_ROW_BYTES: usize = 512;

/// Under the share bound ([`Config::summary_input_share`]) the rows of a summarize
/// request are never bounded under this many UTF-8 bytes (a short fold is sent whole).
pub const MIN_SUMMARY_INPUT_BYTES: usize = 2_048;

/// The common cap of the second clipping stage never goes under this many UTF-8 bytes
/// (the row's header and the start of its text stay readable; user rows get twice it).
pub const MIN_ROW_CAP_BYTES: usize = 96;

/// Room for the marker [`clip_row`] writes, UTF-8 bytes.
const CLIP_MARKER_BYTES: usize = 40;

/// Clips a rendered row to about `cap` UTF-8 bytes: head three quarters, tail a quarter,
/// with a short marker counting the omitted bytes. Rows not over `cap` plus the marker
/// are returned whole.
fn clip_row(text: &str, cap: usize) -> String {
    if text.len() <= cap.saturating_add(CLIP_MARKER_BYTES) {
        return text.to_string();
    }
    // floor(3 cap / 4) without overflowing `cap * 3` (a user row's cap saturates).
    let h = floor_boundary(text, cap / 4 * 3 + cap % 4 * 3 / 4);
    let t = crate::evict::ceil_boundary(text, text.len() - cap / 4).max(h);
    // the tail starts a line mid-content: quoted again so a cut after an escape cannot
    // leave a line that reads as the engine's (issue 14)
    format!("{}\n[... {} bytes clipped ...]\n{}", &text[..h], t - h, quote::content(&text[t..]))
}

/// Whether a rendered row is a user row (its header is `[#N user]`).
fn is_user_row(text: &str) -> bool {
    text.split_once(']').is_some_and(|(head, _)| head.ends_with(" user"))
}

/// Builds the summarize request from rendered rows (Y-8). Media are already
/// placeholders and reasoning is already stripped ([`render_message`]). The rows are
/// bounded to the smaller of the summarizer's window minus the summary budget and the
/// share bound ([`Config::summary_input_share`] of the rows' bytes, less the
/// instructions, never under [`MIN_SUMMARY_INPUT_BYTES`]). When they do not fit:
/// 1. the largest tool outputs are clipped first: every tool-output row longer than a
///    common cap is clipped to it (head three quarters, tail a quarter), with the cap
///    chosen as large as possible but not under [`MIN_CLIPPED_ROW_BYTES`];
/// 2. then every row is clipped to a common cap (user rows to twice it), as large as
///    possible but not under [`MIN_ROW_CAP_BYTES`];
/// 3. then the oldest rows are dropped until it fits; a single remaining row still over
///    the budget is clipped to it.
///
/// Coverage is `whole` when nothing was cut, else `trimmed`.
pub fn summary_request(rows: Vec<RenderedRow>, config: &Config, system: &str) -> SummarizeRequest {
    let lens: Vec<usize> = rows.iter().map(|r| r.text.len()).collect();
    let tool: Vec<bool> = rows.iter().map(|r| r.tool_output).collect();
    let user: Vec<bool> = rows.iter().map(|r| is_user_row(&r.text)).collect();
    // the rows' own texts, moved (no second copy of the folded range)
    let mut texts = Rendered(rows.into_iter().map(|r| Some(r.text)).collect());
    bounded_request(&lens, &tool, &user, &mut texts, config, system)
}

/// [`summary_request`] over folded rows not rendered yet: `(offset, message)` pairs as
/// [`render_row`] takes them. The same request, but a row is rendered only when the
/// request carries it whole, so the folded range is never held rendered in full (peak
/// memory).
///
/// Issue 15: a row the bounds clip is built from its rendered head and tail
/// (`clip_segments`), and a row they drop is never rendered. The bounds are
/// [`summary_request`]'s (one code path); the request equals [`summary_request`] over the
/// rendered rows (tested on odd rows: escapes, multi-byte characters at the cuts, every
/// clipping stage).
pub fn summary_request_for(rows: &[(usize, &Message)], config: &Config, system: &str) -> SummarizeRequest {
    let names = call_names(rows);
    let lens: Vec<usize> = rows.iter().map(|(o, m)| rendered_len_named(*o, m, &names)).collect();
    let tool: Vec<bool> = rows.iter().map(|(_, m)| carries_output(m)).collect();
    let user: Vec<bool> = rows.iter().map(|(_, m)| m.role == Role::User).collect();
    let mut source = Unrendered { rows, names: &names, lens: &lens };
    bounded_request(&lens, &tool, &user, &mut source, config, system)
}

/// Where [`bounded_request`] gets the text of a row it keeps, each row asked for at most
/// once (by one of the two) unless [`RowTexts::reclips`].
trait RowTexts {
    /// Row `i` rendered whole.
    fn text(&mut self, i: usize) -> String;
    /// `clip_row(&text(i), cap)`, for a row longer than `cap` plus the marker.
    fn clipped(&mut self, i: usize, cap: usize) -> String;
    /// Whether a row may be asked for again (rendered from the rows each time), so a clipped
    /// row need not be held until the body is written.
    fn reclips(&self) -> bool {
        false
    }
    /// Appends row `i` rendered whole to `out` (the same bytes as [`RowTexts::text`]).
    fn write_text(&mut self, i: usize, out: &mut String) {
        out.push_str(&self.text(i));
    }
}

/// Rows rendered already ([`summary_request`]), moved out as they are asked for.
struct Rendered(Vec<Option<String>>);

impl RowTexts for Rendered {
    fn text(&mut self, i: usize) -> String {
        self.0.get_mut(i).and_then(Option::take).unwrap_or_default()
    }
    fn clipped(&mut self, i: usize, cap: usize) -> String {
        clip_row(&self.text(i), cap)
    }
}

/// Rows rendered on demand ([`summary_request_for`]): a clipped row from its rendered head
/// and tail, `lens` the rows' rendered lengths.
struct Unrendered<'r, 'm> {
    rows: &'r [(usize, &'m Message)],
    names: &'r CallNames,
    lens: &'r [usize],
}

impl RowTexts for Unrendered<'_, '_> {
    fn text(&mut self, i: usize) -> String {
        self.rows.get(i).map(|(o, m)| render_message_named(*o, m, self.names)).unwrap_or_default()
    }
    fn clipped(&mut self, i: usize, cap: usize) -> String {
        let Some((o, m)) = self.rows.get(i) else { return String::new() };
        let len = self.lens.get(i).copied().unwrap_or(0);
        clip_segments(&segments(*o, m, self.names), len, cap).unwrap_or_else(|| clip_row(&render_message_named(*o, m, self.names), cap))
    }
    fn reclips(&self) -> bool {
        true
    }
    /// Renders the row straight into `out` (no text of its own).
    fn write_text(&mut self, i: usize, out: &mut String) {
        if let Some((o, m)) = self.rows.get(i) {
            render_into(out, *o, m, self.names);
        }
    }
}

/// A row of [`bounded_request`]: its text, or not asked for yet (row index, rendered length),
/// or clipped to `cap` and asked for again when the body is written (its clipped length,
/// whether it is a user row).
enum Kept {
    Text(String),
    Later(usize, usize),
    Clipped { i: usize, cap: usize, len: usize, user: bool },
}

/// Row `i` clipped to `cap`: from a source that [`RowTexts::reclips`], only the clipped
/// text's length and user flag are kept, the text built again when the body is written
/// (issue 15, peak memory: the clipped rows are not held beside the body).
fn clip_later(rows: &mut impl RowTexts, i: usize, cap: usize) -> Kept {
    let text = rows.clipped(i, cap);
    if rows.reclips() {
        Kept::Clipped { i, cap, len: text.len(), user: is_user_row(&text) }
    } else {
        Kept::Text(text)
    }
}

impl Kept {
    fn len(&self) -> usize {
        match self {
            Kept::Text(t) => t.len(),
            Kept::Later(_, l) | Kept::Clipped { len: l, .. } => *l,
        }
    }
}

/// The summarize request over rows of rendered lengths `lens` (tool-output rows flagged in
/// `tool`, user rows in `user`), their texts from `rows`: see [`summary_request`] for the
/// bounds and the clipping order. The bounds are reckoned from the lengths; a row's text
/// is asked for only when the request keeps it (clipped or whole), a dropped row's never.
fn bounded_request(lens: &[usize], tool: &[bool], user: &[bool], rows: &mut impl RowTexts, config: &Config, system: &str) -> SummarizeRequest {
    // `as usize` would truncate on wasm32 (bytesPerToken 2^32 -> 0, a division by zero).
    let bpt = usize::try_from(config.bytes_per_token.max(1)).unwrap_or(usize::MAX);
    let window = config.summarizer_window();
    let budget_tokens = window.saturating_sub(config.summary_max_output_tokens).saturating_sub((system.len() / bpt) as u64 + 64);
    let window_bytes = usize::try_from(budget_tokens).unwrap_or(usize::MAX).saturating_mul(bpt);
    let fence_overhead = 64;
    let rows_bytes: usize = lens.iter().map(|l| l + 2).sum::<usize>() + fence_overhead;
    let share_bytes = if config.summary_input_share >= 1.0 {
        usize::MAX
    } else {
        ((rows_bytes as f64 * config.summary_input_share) as usize).saturating_sub(system.len()).max(MIN_SUMMARY_INPUT_BYTES)
    };
    let budget_bytes = window_bytes.min(share_bytes);
    let size_of = |rows: &[Kept]| rows.iter().map(|r| r.len() + 2).sum::<usize>() + fence_overhead;
    // the largest cap in [lo, hi] whose clipped size fits (lo when none does)
    let search = |lo: usize, hi: usize, size: &dyn Fn(usize) -> usize| -> usize {
        let (mut lo, mut hi) = (lo, hi.max(lo));
        if size(lo) > budget_bytes {
            return lo;
        }
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if size(mid) <= budget_bytes {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    let clipped_len = |len: usize, cap: usize| if len > cap + CLIP_MARKER_BYTES { cap + CLIP_MARKER_BYTES } else { len };
    let trimmed = rows_bytes > budget_bytes;
    let coverage = if trimmed { "trimmed" } else { "whole" };
    // 1. largest tool outputs first: the largest common cap that fits, from the lengths
    // alone; each tool row over it clipped (from its head and tail); the rest later.
    let max_tool = lens.iter().zip(tool).filter(|(_, t)| **t).map(|(l, _)| *l).max().unwrap_or(0);
    let tool_cap = (trimmed && max_tool > MIN_CLIPPED_ROW_BYTES).then(|| {
        let size = |cap: usize| -> usize { lens.iter().zip(tool).map(|(l, t)| if *t { clipped_len(*l, cap) } else { *l } + 2).sum::<usize>() + fence_overhead };
        search(MIN_CLIPPED_ROW_BYTES, max_tool, &size)
    });
    let mut kept: Vec<Kept> = Vec::with_capacity(lens.len());
    for (i, t) in tool.iter().enumerate() {
        let len = lens.get(i).copied().unwrap_or(0);
        kept.push(match tool_cap {
            Some(cap) if *t && len > cap.saturating_add(CLIP_MARKER_BYTES) => clip_later(rows, i, cap),
            _ => Kept::Later(i, len),
        });
    }
    if trimmed {
        // 2. then every row to a common cap, user text to twice it.
        if size_of(&kept) > budget_bytes {
            let users: Vec<bool> = kept
                .iter()
                .map(|k| match k {
                    Kept::Text(t) => is_user_row(t),
                    Kept::Later(i, _) => user.get(*i).copied().unwrap_or(false),
                    Kept::Clipped { user, .. } => *user,
                })
                .collect();
            let cap_of = |user: bool, cap: usize| if user { cap.saturating_mul(2) } else { cap };
            let max_row = kept.iter().map(Kept::len).max().unwrap_or(0);
            let size = |cap: usize| -> usize { kept.iter().zip(&users).map(|(k, u)| clipped_len(k.len(), cap_of(*u, cap)) + 2).sum::<usize>() + fence_overhead };
            let cap = search(MIN_ROW_CAP_BYTES, max_row, &size);
            for (k, u) in kept.iter_mut().zip(&users) {
                let c = cap_of(*u, cap);
                if k.len() > c.saturating_add(CLIP_MARKER_BYTES) {
                    *k = match k {
                        Kept::Text(t) => Kept::Text(clip_row(t, c)),
                        Kept::Later(i, _) => clip_later(rows, *i, c),
                        Kept::Clipped { i, cap, .. } => Kept::Text(clip_row(&rows.clipped(*i, *cap), c)),
                    };
                }
            }
        }
        // 3. then older rows are dropped (never asked for).
        let mut size = size_of(&kept);
        let mut drop = 0;
        while size > budget_bytes && drop + 1 < kept.len() {
            size -= kept.get(drop).map_or(0, Kept::len) + 2;
            drop += 1;
        }
        kept.drain(..drop);
        if size > budget_bytes {
            if let Some(last) = kept.last_mut() {
                let room = budget_bytes.saturating_sub(fence_overhead + CLIP_MARKER_BYTES + 2);
                let text = match last {
                    Kept::Text(t) => std::mem::take(t),
                    Kept::Later(i, _) => rows.text(*i),
                    Kept::Clipped { i, cap, .. } => rows.clipped(*i, *cap),
                };
                *last = Kept::Text(clip_row(&text, room));
            }
            if size_of(&kept) > budget_bytes {
                kept.clear();
            }
        }
    }
    let body = request_body(kept, rows);
    let estimated_input_tokens = ((system.len() + body.len()) / bpt) as u64 + 8;
    SummarizeRequest {
        kind: "summary".into(),
        system: system.to_string(),
        messages: vec![ChatMessage { role: "user".into(), content: body }],
        max_output_tokens: config.summary_max_output_tokens,
        estimated_input_tokens,
        coverage: coverage.into(),
        rows: Vec::new(),
    }
}

/// The fence opening and closing a summarize request's rows (Y-9).
const OPEN_FENCE: &str = "<transcript>\n";
const CLOSE_FENCE: &str = "\n</transcript>";
/// What separates two rows of the body.
const ROW_GAP: &str = "\n\n";

/// The request's body, `<transcript>\n{rows joined by a blank line}\n</transcript>`,
/// written once into one buffer sized from the rows' lengths beforehand (issue 15, peak
/// memory): a row not asked for yet is rendered straight into it, a clipped row is copied
/// in and freed; no row texts, join or formatted copy are held beside it.
fn request_body(kept: Vec<Kept>, rows: &mut impl RowTexts) -> String {
    let gaps = kept.len().saturating_sub(1) * ROW_GAP.len();
    let size = kept.iter().map(Kept::len).sum::<usize>() + gaps + OPEN_FENCE.len() + CLOSE_FENCE.len();
    let mut body = String::with_capacity(size);
    body.push_str(OPEN_FENCE);
    for (k, row) in kept.into_iter().enumerate() {
        if k > 0 {
            body.push_str(ROW_GAP);
        }
        match row {
            Kept::Text(t) => body.push_str(&t),
            Kept::Later(i, _) => rows.write_text(i, &mut body),
            Kept::Clipped { i, cap, .. } => body.push_str(&rows.clipped(i, cap)),
        }
    }
    body.push_str(CLOSE_FENCE);
    body
}

/// The request handed to a host curator (Y-1): like [`summary_request`] over the rows
/// before the open run, with kind `curate` and those rows in the stored view.
pub fn curate_request(rows: Vec<RenderedRow>, stored_rows: Vec<serde_json::Value>, config: &Config, system: &str) -> SummarizeRequest {
    let mut r = summary_request(rows, config, system);
    r.kind = "curate".into();
    r.rows = stored_rows;
    r
}

/// [`curate_request`] over folded rows not rendered yet (see [`summary_request_for`]).
pub fn curate_request_for(rows: &[(usize, &Message)], stored_rows: Vec<serde_json::Value>, config: &Config, system: &str) -> SummarizeRequest {
    let mut r = summary_request_for(rows, config, system);
    r.kind = "curate".into();
    r.rows = stored_rows;
    r
}

/// Builds a rollup request merging the given summary texts (Y-3).
pub fn rollup_request(texts: &[String], config: &Config, system: &str) -> SummarizeRequest {
    // `as usize` would truncate on wasm32 (bytesPerToken 2^32 -> 0, a division by zero).
    let bpt = usize::try_from(config.bytes_per_token.max(1)).unwrap_or(usize::MAX);
    let body = format!("<summaries>\n{}\n</summaries>", texts.iter().enumerate().map(|(i, t)| format!("[summary {}]\n{}", i + 1, quote::content(t))).collect::<Vec<_>>().join("\n\n"));
    SummarizeRequest {
        kind: "rollup".into(),
        system: system.to_string(),
        estimated_input_tokens: ((system.len() + body.len()) / bpt) as u64 + 8,
        messages: vec![ChatMessage { role: "user".into(), content: body }],
        max_output_tokens: config.summary_max_output_tokens,
        coverage: "whole".into(),
        rows: Vec::new(),
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{decode, Format};
    use serde_json::json;

    /// Issue 15, Y-8, Y-9, E-2: a clipped row built from its rendered head and tail is
    /// the row rendered whole and clipped, on odd rows (escapes at the cuts, multi-byte
    /// characters, error results), at every cap.
    #[test]
    fn issue15_y8_clip_from_head_and_tail_equals_clipping_the_rendered_row() {
        let texts = crate::quote::tests::odd_quoted_texts();
        let mut msgs = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let body = t.repeat(1 + i % 7);
            msgs.push(match i % 4 {
                0 => json!({"role": "user", "content": body}),
                1 => json!({"role": "assistant", "content": body, "tool_calls": [{"id": format!("c{i}"), "type": "function", "function": {"name": "read<transcript>", "arguments": format!("{{\"p\":{:?}}}", t)}}]}),
                2 => json!({"role": "tool", "tool_call_id": format!("c{}", i - 1), "content": format!("Exit code {}\n{body}", i % 3)}),
                _ => json!({"role": "assistant", "content": [{"type": "text", "text": body}, {"type": "text", "text": t}]}),
            });
        }
        let tr = decode(Format::OpenaiChat, serde_json::Value::Array(msgs)).unwrap();
        let rows: Vec<(usize, &Message)> = tr.messages.iter().enumerate().collect();
        let names = call_names(&rows);
        let mut fast = 0;
        for (o, m) in &rows {
            let full = render_message_named(*o, m, &names);
            let segs = segments(*o, m, &names);
            assert_eq!(segments_len(&segs), full.len());
            for cap in (0..full.len() + 50).step_by(1 + full.len() / 40) {
                let want = clip_row(&full, cap);
                match clip_segments(&segs, full.len(), cap) {
                    Some(got) => {
                        assert_eq!(got, want, "row {o} cap {cap}");
                        fast += 1;
                    }
                    None => assert_eq!(want, full, "only an unclipped row has no clip: row {o} cap {cap}"),
                }
            }
        }
        assert!(fast > 1_000, "the head-and-tail clip is taken ({fast})");
    }
}
