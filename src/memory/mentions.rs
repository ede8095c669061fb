//! What a record mentions (M-1) and the terms the lexical index keeps for it (M-3).
//!
//! [`mentions`] extracts the file paths, URLs and identifiers (snake_case, camelCase /
//! PascalCase, dotted and kebab-case names, file names with an extension) a text names,
//! so a record says what it is about and a query that names a path or identifier can
//! match it whole. [`index_terms`] is the term list one text contributes to the BM25
//! index: the embedder's tokens ([`super::embed::tokenize`]) plus, for every mention,
//! the mention whole, each path segment whole, a file name's stem and the parts of a
//! camelCase name, so `src/foo/bar_baz.py` is found by `bar baz`, `bar_baz.py`,
//! `bar_baz`, `foo` and the whole path.

use super::embed::tokenize;

/// Most mentions kept per record (first seen first).
pub const MAX_MENTIONS: usize = 32;

/// Longest mention kept, in UTF-8 bytes; longer words (data URLs, base64) are skipped.
pub const MAX_MENTION_BYTES: usize = 200;

/// Characters that end a word for mention extraction (besides whitespace).
fn is_break(c: char) -> bool {
    matches!(c, '"' | '\'' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | ';' | '|' | '*' | '\u{2192}')
        || c.is_whitespace()
        || c.is_control()
}

/// The pieces of `text` between [`is_break`] characters, exactly `text.split(is_break)`
/// (empty pieces included), read a byte at a time: an ASCII byte is tested by a table and
/// only a non-ASCII character is decoded.
fn words(text: &str) -> impl Iterator<Item = &str> {
    // ASCII bytes that `is_break` holds: controls, whitespace, the listed punctuation
    const fn table() -> [bool; 128] {
        let mut t = [false; 128];
        let mut i = 0;
        while i < 128 {
            t[i] = i < 0x20 || i == 0x7f || matches!(i as u8, b' ' | b'"' | b'\'' | b'`' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b',' | b';' | b'|' | b'*');
            i += 1;
        }
        t
    }
    const ASCII_BREAK: [bool; 128] = table();
    let bytes = text.as_bytes();
    let mut start = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut i = start;
        while let Some(&b) = bytes.get(i) {
            let width = if b < 0x80 {
                if ASCII_BREAK.get(b as usize).copied().unwrap_or(false) {
                    let piece = text.get(start..i);
                    start = i + 1;
                    return piece;
                }
                1
            } else {
                let c = text.get(i..).and_then(|r| r.chars().next());
                let w = c.map_or(1, char::len_utf8);
                if c.is_some_and(is_break) {
                    let piece = text.get(start..i);
                    start = i + w;
                    return piece;
                }
                w
            };
            i += width;
        }
        done = true;
        text.get(start..)
    })
}

/// Trailing characters trimmed off a word (sentence punctuation after a path).
fn is_trail(c: char) -> bool {
    matches!(c, '.' | ':' | '!' | '?' | '=' | '-' | '/' | '\\' | '#' | '&' | '+' | '%' | '$' | '@' | '~')
}

fn has_letter(s: &str) -> bool {
    s.chars().any(char::is_alphabetic)
}

/// `a_b` with an alphanumeric on both sides of an underscore.
fn is_snake(w: &str) -> bool {
    joined(w, '_', 1)
}

/// A lower-case letter followed by an upper-case one (`getUser`, `TimeDelta`).
fn is_camel(w: &str) -> bool {
    let mut prev_lower = false;
    for c in w.chars() {
        if c.is_uppercase() && prev_lower {
            return true;
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit() && prev_lower;
    }
    false
}

/// True when `sep` joins parts of which at least two hold a letter.
fn inner_joiner(w: &str, sep: char) -> bool {
    joined(w, sep, 2)
}

/// `sep` splits `w` into at least two non-empty parts of alphanumerics (and `_-.`), at
/// least `letters` of them holding a letter.
fn joined(w: &str, sep: char, letters: usize) -> bool {
    let parts: Vec<&str> = w.split(sep).collect();
    parts.len() >= 2
        && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c)))
        && parts.iter().filter(|p| has_letter(p)).count() >= letters
}

/// `a.b` names (`pd.read_excel`, `api.crossref.org`, `fields.py`): dot-separated
/// alphanumeric parts, at least two of them with a letter (not a decimal number).
fn is_dotted(w: &str) -> bool {
    inner_joiner(w, '.')
}

/// `a-b` names (`casadi-ipopt-nlp`, `ERP-2025-table10.xls`).
fn is_kebab(w: &str) -> bool {
    inner_joiner(w, '-')
}

fn is_url(w: &str) -> bool {
    let l = w.get(..8).unwrap_or(w).to_ascii_lowercase();
    l.starts_with("http://") || l.starts_with("https://") || l.starts_with("file://")
}

/// A path: a `/` (or `\`) separated name with at least one segment holding a letter
/// and at least two non-empty segments (or one after a leading separator), not a date.
fn is_path(w: &str) -> bool {
    if !(w.contains('/') || w.contains('\\')) {
        return false;
    }
    let segs: Vec<&str> = w.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
    let rooted = w.starts_with('/') || w.starts_with('~') || w.starts_with('.') || w.starts_with('\\');
    (segs.len() >= 2 || (rooted && segs.len() == 1)) && segs.iter().any(|s| has_letter(s))
}

fn classify(w: &str) -> bool {
    has_letter(w) && (is_url(w) || is_path(w) || is_snake(w) || is_camel(w) || is_dotted(w) || is_kebab(w))
}

/// The file paths, URLs and identifiers `text` names, in first-seen order, without
/// duplicates, at most [`MAX_MENTIONS`], each at most [`MAX_MENTION_BYTES`] bytes
/// (M-1). Words are cut at whitespace, quotes, brackets, `,` `;` `|` `*`; trailing
/// sentence punctuation is dropped. Deterministic; never panics.
///
/// Example: `"Edit src/foo/bar_baz.py (see https://x.org/a) and call getUser."` ->
/// `["src/foo/bar_baz.py", "https://x.org/a", "getUser"]`.
pub fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in words(text) {
        if out.len() >= MAX_MENTIONS {
            break;
        }
        if !maybe_name(raw) {
            continue;
        }
        let w = raw.trim_end_matches(is_trail).trim_start_matches(['.', ':', '=', '@', '#']);
        if w.len() < 3 || w.len() > MAX_MENTION_BYTES || !classify(w) {
            continue;
        }
        if !out.iter().any(|m| m == w) {
            out.push(w.to_string());
        }
    }
    out
}

/// The parts of a camelCase / PascalCase word as tokens (lower-cased and stemmed like
/// [`tokenize`]: `getUserDetails` -> `get`, `user`, `detail`); empty when the word has
/// no case change.
fn camel_parts(w: &str) -> Vec<String> {
    let spaced = camel_split(w);
    if spaced.is_empty() {
        return Vec::new();
    }
    tokenize(&spaced.join(" "))
}

fn camel_split(w: &str) -> Vec<String> {
    if !is_camel(w) {
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in w.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            parts.push(std::mem::take(&mut cur));
        }
        cur.extend(c.to_lowercase());
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// Whole-name terms of one mention: the mention lower-cased, every path segment (and
/// URL host) holding punctuation, a file name's stem, and camelCase parts.
fn mention_terms(m: &str, out: &mut Vec<String>) {
    let push = |out: &mut Vec<String>, t: String| {
        if t.chars().any(|c| !c.is_alphanumeric()) && has_letter(&t) {
            out.push(t);
        }
    };
    let lower = m.to_lowercase();
    push(out, lower.clone());
    let body = lower.split_once("://").map_or(lower.as_str(), |(_, rest)| rest);
    let body = body.split(['?', '#']).next().unwrap_or(body);
    for seg in body.split(['/', '\\']).filter(|s| !s.is_empty()) {
        if seg != lower {
            push(out, seg.to_string());
        }
        if let Some((stem, ext)) = seg.rsplit_once('.') {
            if !stem.is_empty() && !ext.is_empty() && ext.len() <= 8 {
                push(out, stem.to_string());
            }
        }
    }
    for seg in m.split(['/', '\\', '.', '_', '-', ':']) {
        out.extend(camel_parts(seg));
    }
}

/// The BM25 terms of `text` (M-3): its [`tokenize`] tokens, then the whole-name terms
/// of every word that [`mentions`] would keep (without its cap): the name lower-cased,
/// each path segment, a file stem, camelCase parts. Order: tokens first, then the extra
/// terms in text order; duplicates kept (they are term counts).
pub fn index_terms(text: &str) -> Vec<String> {
    index_terms_counted(text).0
}

/// [`index_terms`] and how many of them are plain [`tokenize`] tokens (the first ones).
pub(crate) fn index_terms_counted(text: &str) -> (Vec<String>, usize) {
    let mut out = tokenize(text);
    let plain = out.len();
    for raw in words(text) {
        if !maybe_name(raw) {
            continue;
        }
        let w = raw.trim_end_matches(is_trail).trim_start_matches(['.', ':', '=', '@', '#']);
        if w.len() < 3 || w.len() > MAX_MENTION_BYTES {
            continue;
        }
        if classify(w) {
            mention_terms(w, &mut out);
        } else {
            // a plain camelCase word inside other punctuation is still split
            out.extend(camel_parts(w));
        }
    }
    (out, plain)
}

/// Cheap pre-check: a word can only be a mention (or hold a camelCase name) when it has
/// a joiner (`/ \ _ . - :`) or a lower-case letter followed by an upper-case one.
fn maybe_name(w: &str) -> bool {
    let b = w.as_bytes();
    if b.len() < 3 {
        return false;
    }
    if b.iter().any(|c| matches!(c, b'/' | b'\\' | b'_' | b'.' | b'-' | b':')) {
        return true;
    }
    if b.is_ascii() {
        return b.windows(2).any(|p| matches!(p, [x, y] if x.is_ascii_lowercase() && y.is_ascii_uppercase()));
    }
    is_camel(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 15: the byte-wise word split is `str::split(is_break)`, on every ASCII byte
    /// and on non-ASCII breaks (U+2192, U+00A0, U+2028, U+3000, U+0085) and non-breaks.
    #[test]
    fn issue15_m1_word_split_equals_the_character_split() {
        let mut texts: Vec<String> = vec![String::new(), " ".into(), "a".into(), "ab cd".into(), "  lead,trail  ".into()];
        let odd = ['\u{2192}', '\u{a0}', '\u{2028}', '\u{3000}', '\u{85}', '\u{80}', 'é', '日', '😀', '\u{feff}', '\u{200b}'];
        for b in 0u8..128 {
            let c = b as char;
            texts.push(format!("x{c}y"));
            texts.push(format!("{c}{c}src/a_b.py{c}"));
            for o in odd {
                texts.push(format!("{o}{c}w{o}ord{c}{o}"));
            }
        }
        texts.push(odd.iter().collect());
        texts.push("Edit src/foo/bar_baz.py (see https://x.org/a?b=1)\u{2192}getUser;\tok\r\n日本語 café".into());
        for t in &texts {
            assert_eq!(words(t).collect::<Vec<_>>(), t.split(is_break).collect::<Vec<_>>(), "{t:?}");
        }
    }

    #[test]
    fn m1_mentions_paths_urls_identifiers() {
        let got = mentions("Edit src/foo/bar_baz.py (see https://x.org/a?b=1) and call getUser. Then 3.14 and 05/15/2024.");
        assert_eq!(got, vec!["src/foo/bar_baz.py", "https://x.org/a?b=1", "getUser"]);
        let got = mentions("ran pd.read_excel on /root/CPI.xlsx with casadi-ipopt-nlp; user_id mia_li_3668");
        assert_eq!(got, vec!["pd.read_excel", "/root/CPI.xlsx", "casadi-ipopt-nlp", "user_id", "mia_li_3668"]);
        assert!(mentions("plain words only, nothing else 12.5").is_empty());
        let many: String = (0..100).map(|i| format!("name_{i} ")).collect();
        assert_eq!(mentions(&many).len(), MAX_MENTIONS);
    }

    #[test]
    fn m3_index_terms_match_paths_whole_and_by_segment() {
        let t = index_terms("opened src/foo/bar_baz.py");
        for want in ["src", "foo", "bar", "baz", "py", "src/foo/bar_baz.py", "bar_baz.py", "bar_baz"] {
            assert!(t.iter().any(|x| x == want), "{want} in {t:?}");
        }
        let t = index_terms("call getUserDetails now");
        for want in ["getuserdetail", "get", "user", "detail"] {
            assert!(t.iter().any(|x| x == want), "{want} in {t:?}");
        }
    }
}
