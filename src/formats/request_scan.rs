//! `toRequest` in one pass over the input text (issue 15 item 2, F-4, F-2): for an
//! OpenAI Chat document that is already its own request view, say so without splitting
//! it into rows, parsing each row or writing a copy.
//!
//! The request view of a compact array of rows (no whitespace outside strings) whose
//! rows are canonical ([`crate::raw::is_canonical`]) and carry no provenance key is the
//! input text byte for byte: [`super::request_text`] writes those rows verbatim between
//! `[` and `]` with `,` between them. This module reads such a text once, byte by byte,
//! validating it as JSON in the canonical spelling, and takes from each row only what
//! pairing reads (its role, its calls' ids, its result's call id), with the same
//! refusals as the typed pairing parse (`openai_chat::pairing_view`). Anything outside
//! that subset (an envelope not ending with its `messages`, whitespace, an escaped id, a float, a repeated field, a
//! provenance key, a shape the typed parse would refuse) is declined, and the caller
//! takes [`super::request_text`], then the full decode.

use super::{validate_pairing, Format};
use crate::error::Result;
use crate::raw::MAX_FAST_DEPTH;
use crate::transcript::{Block, Envelope, Message, Provenance, RawJson, Role, Transcript, PROVENANCE_KEYS};

/// Is the request view (F-4) of `text` the text itself? `Some(Ok(()))`: yes, and its
/// rows pair (F-2); `Some(Err(e))`: its rows break pairing, `e` being the error
/// [`super::validate_pairing`] gives for the decoded transcript; `None`: not a text this
/// scan takes (the caller asks [`super::request_text`]). OpenAI Chat only (`None` for
/// any other format).
pub fn request_is_input(format: Format, text: &str) -> Option<Result<()>> {
    if format != Format::OpenaiChat {
        return None;
    }
    let mut s = Scan { b: text.as_bytes(), i: 0 };
    let rows = if s.peek()? == b'{' { s.envelope()? } else { s.rows()? };
    if s.i != s.b.len() {
        return None;
    }
    Some(validate_pairing(&Transcript { format, messages: rows, envelope: Envelope::default() }))
}

/// The bytes a canonical string holds as they are: anything but `"`, `\` and the
/// control characters (which must be escaped).
const PLAIN: [bool; 256] = {
    let mut t = [true; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = false;
        c += 1;
    }
    t[b'"' as usize] = false;
    t[b'\\' as usize] = false;
    t
};

/// What a value was, for the fields whose type the typed parse checks.
enum Kind {
    Str,
    Array,
    Null,
    Other,
}

/// The row fields the typed pairing parse reads (each at most once), by bit.
const ROLE: u8 = 1;
const CONTENT: u8 = 2;
const TOOL_CALLS: u8 = 4;
const TOOL_CALL_ID: u8 = 8;
const NAME: u8 = 16;
const REASONING: u8 = 32;

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

/// Does the 8-byte word `w` hold a byte that ends a run of [`PLAIN`] bytes (`"`, `\`
/// or one below 0x20)? Exact for "any" (the classic zero-byte test on `w ^ c` and the
/// below-n test; either may point at the wrong byte, never miss one).
#[inline(always)]
fn has_stop(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\'))) | (w.wrapping_sub(ONES * 0x20) & !w & HIGH) != 0
}

impl<'a> Scan<'a> {
    /// Skips the [`PLAIN`] bytes at `self.i`, eight at a time while none stops the run.
    #[inline(always)]
    fn skip_plain(&mut self) {
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let w = u64::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7]]);
            if has_stop(w) {
                break;
            }
            self.i += 8;
        }
        while self.b.get(self.i).is_some_and(|&c| PLAIN[c as usize]) {
            self.i += 1;
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline(always)]
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.i += usize::from(hit);
        hit
    }

    #[inline(always)]
    fn expect(&mut self, c: u8) -> Option<()> {
        self.eat(c).then_some(())
    }

    /// A string in serde_json's spelling: its raw content and whether it has escapes.
    fn string(&mut self) -> Option<(&'a [u8], bool)> {
        self.expect(b'"')?;
        let start = self.i;
        let mut escaped = false;
        loop {
            self.skip_plain();
            match self.peek()? {
                b'"' => {
                    let s = &self.b[start..self.i];
                    self.i += 1;
                    return Some((s, escaped));
                }
                b'\\' => {
                    escaped = true;
                    match self.b.get(self.i + 1)? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                        // `\u00xx` (lowercase hex) only for a control character without
                        // a short escape, as raw::is_canonical
                        b'u' => match self.b.get(self.i + 2..self.i + 6)? {
                            [b'0', b'0', hi @ (b'0' | b'1'), lo @ (b'0'..=b'9' | b'a'..=b'f')]
                                if !matches!((hi, lo), (b'0', b'8' | b'9' | b'a' | b'c' | b'd')) =>
                            {
                                self.i += 6
                            }
                            _ => return None,
                        },
                        _ => return None,
                    }
                }
                _ => return None, // a raw control character: not JSON
            }
        }
    }

    /// An integer of at most 18 digits, as raw::is_canonical takes them (no fraction,
    /// no exponent, no `-0`, no leading zero).
    fn number(&mut self) -> Option<()> {
        let neg = self.eat(b'-');
        let digits = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        let n = self.i - digits;
        let leading_zero = self.b.get(digits) == Some(&b'0');
        (n > 0 && n <= 18 && !(leading_zero && (n > 1 || neg))).then_some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// Any canonical value; `depth` is the nesting it is at inside its row (the row's
    /// own members are at 1; a container there opens level 2).
    fn value(&mut self, depth: usize) -> Option<Kind> {
        match self.peek()? {
            b'"' => self.string().map(|_| Kind::Str),
            b'{' => {
                self.enter(depth)?;
                if !self.eat(b'}') {
                    loop {
                        self.string()?;
                        self.expect(b':')?;
                        self.value(depth + 1)?;
                        if !self.eat(b',') {
                            self.expect(b'}')?;
                            break;
                        }
                    }
                }
                Some(Kind::Other)
            }
            b'[' => {
                self.enter(depth)?;
                self.items(|s| s.value(depth + 1).map(drop))?;
                Some(Kind::Array)
            }
            b'n' => self.literal(b"null").map(|_| Kind::Null),
            b't' => self.literal(b"true").map(|_| Kind::Other),
            b'f' => self.literal(b"false").map(|_| Kind::Other),
            _ => self.number().map(|_| Kind::Other),
        }
    }

    /// Opens the container at `self.i` (row depth `depth + 1`), within raw::MAX_FAST_DEPTH.
    fn enter(&mut self, depth: usize) -> Option<()> {
        (depth < MAX_FAST_DEPTH).then(|| self.i += 1)
    }

    /// The items of an array whose `[` was consumed, each read by `item`.
    fn items(&mut self, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        if self.eat(b']') {
            return Some(());
        }
        loop {
            item(self)?;
            if !self.eat(b',') {
                return self.expect(b']');
            }
        }
    }

    /// A string with no escapes (an id or name as the typed parse borrows it), or `null`.
    fn plain_or_null(&mut self) -> Option<Option<&'a str>> {
        if self.peek()? == b'n' {
            return self.literal(b"null").map(|_| None);
        }
        match self.string()? {
            (s, false) => std::str::from_utf8(s).ok().map(Some),
            (_, true) => None,
        }
    }

    /// One call of `tool_calls`: an object with exactly one `id` string (other members
    /// unread); its id.
    fn call(&mut self) -> Option<String> {
        self.expect(b'{')?;
        let mut id = None;
        if !self.eat(b'}') {
            loop {
                let (key, escaped) = self.string()?;
                self.expect(b':')?;
                if !escaped && key == b"id" {
                    if id.is_some() || self.peek()? != b'"' {
                        return None;
                    }
                    id = Some(self.plain_or_null()??.to_string());
                } else {
                    self.value(3)?;
                }
                if !self.eat(b',') {
                    self.expect(b'}')?;
                    break;
                }
            }
        }
        id
    }

    /// The array of rows at `self.i`.
    fn rows(&mut self) -> Option<Vec<Message>> {
        self.expect(b'[')?;
        let mut rows = Vec::new();
        self.items(|s| s.row().map(|m| rows.push(m)))?;
        Some(rows)
    }

    /// An envelope object whose last member is `messages`: its rows. The key filter
    /// writes the other members as values (`serde_json::Value`, compact, in their order)
    /// before `messages`, so each must be written back as it stands: no repeated key (the
    /// map keeps one), and each value its own `Value` spelling (a nested object with a
    /// repeated key, for one, is not).
    fn envelope(&mut self) -> Option<Vec<Message>> {
        self.expect(b'{')?;
        let mut keys: Vec<&[u8]> = Vec::new();
        loop {
            let (key, escaped) = self.string()?;
            self.expect(b':')?;
            if !escaped && key == b"messages" {
                let rows = self.rows()?;
                self.expect(b'}')?;
                return Some(rows);
            }
            if keys.contains(&key) {
                return None;
            }
            keys.push(key);
            let start = self.i;
            self.value(1)?;
            let value = std::str::from_utf8(&self.b[start..self.i]).ok()?;
            let parsed: serde_json::Value = serde_json::from_str(value).ok()?;
            if serde_json::to_string(&parsed).ok()? != value {
                return None;
            }
            self.expect(b',')?;
        }
    }

    /// One row, as `openai_chat::pairing_view` reads it: `None` where that parse
    /// declines (or where this scan cannot tell).
    fn row(&mut self) -> Option<Message> {
        self.expect(b'{')?;
        let mut seen = 0u8;
        let (mut role, mut content, mut call_id, mut name) = (None, false, None, None);
        let mut calls: Option<Vec<String>> = None;
        if !self.eat(b'}') {
            loop {
                let (key, escaped) = self.string()?;
                self.expect(b':')?;
                // an escaped key decodes to text with a quote, a backslash or a control
                // character: never a field name
                let field = match key {
                    _ if escaped => 0,
                    b"role" => ROLE,
                    b"content" => CONTENT,
                    b"tool_calls" => TOOL_CALLS,
                    b"tool_call_id" => TOOL_CALL_ID,
                    b"name" => NAME,
                    b"reasoning_content" => REASONING,
                    b"function_call" => return None,
                    k if PROVENANCE_KEYS.iter().any(|p| p.as_bytes() == k) => return None,
                    _ => 0,
                };
                if seen & field != 0 {
                    return None; // a repeated field
                }
                seen |= field;
                match field {
                    ROLE => role = Some(self.plain_or_null()??),
                    CONTENT | REASONING => match self.value(1)? {
                        Kind::Str | Kind::Array => content |= field == CONTENT,
                        Kind::Null => {}
                        Kind::Other => return None,
                    },
                    TOOL_CALLS => {
                        if self.peek()? == b'n' {
                            self.literal(b"null")?;
                        } else {
                            self.expect(b'[')?;
                            let mut ids = Vec::new();
                            self.items(|s| s.call().map(|id| ids.push(id)))?;
                            calls = Some(ids);
                        }
                    }
                    TOOL_CALL_ID => call_id = self.plain_or_null()?,
                    NAME => name = self.plain_or_null()?,
                    _ => {
                        self.value(1)?;
                    }
                }
                if !self.eat(b',') {
                    self.expect(b'}')?;
                    break;
                }
            }
        }
        let role_name = role?;
        if !content && matches!(role_name, "system" | "developer" | "user" | "tool") {
            return None;
        }
        let (role, blocks) = match role_name {
            "system" | "developer" => (Role::System, calls_of(calls)),
            "user" => (Role::User, calls_of(calls)),
            "assistant" => (Role::Assistant, calls_of(calls)),
            "tool" | "function" => {
                let call_id = match (call_id, role_name) {
                    (Some(id), _) => id.to_string(),
                    (None, "function") => format!("function:{}", name.unwrap_or("")),
                    (None, _) => return None,
                };
                let result = Block::ToolResult { call_id, name: None, text: String::new(), is_error: false, media: Vec::new(), media_bytes: 0 };
                (Role::Tool, vec![result])
            }
            _ => return None,
        };
        Some(Message { id: String::new(), role, provenance: Provenance::default(), blocks, raw: RawJson::null(), bytes: 0 })
    }
}

fn calls_of(calls: Option<Vec<String>>) -> Vec<Block> {
    calls.unwrap_or_default().into_iter().map(|id| Block::ToolCall { id, name: String::new(), arguments: String::new() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word test stops exactly where a byte of the word is not [`PLAIN`]: every byte
    /// value at every position, among plain bytes of each kind (ASCII, 0x7f, UTF-8 bytes).
    #[test]
    fn issue15_f4_word_stop_test_equals_the_byte_table() {
        for fill in [b'a', 0x7f, 0x80, 0xbf, 0xff, b' '] {
            for b in 0..=255u8 {
                for p in 0..8 {
                    let mut w = [fill; 8];
                    w[p] = b;
                    assert_eq!(has_stop(u64::from_le_bytes(w)), !PLAIN[b as usize], "byte {b:#x} at {p} among {fill:#x}");
                }
            }
        }
    }
}
