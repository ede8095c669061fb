//! The embedded default embedder (M-3): a deterministic, Unicode-aware bag of words,
//! feature-hashed into a fixed number of dimensions with a signed hash and weighted by
//! the inverse document frequency of the scope it is searched in.
//!
//! Tokens: lowercase runs of alphanumerics (with a light English stemmer: plural `s`,
//! `ies`, `ing`, `ed`); each CJK ideograph, kana or hangul syllable is a unigram, and
//! each adjacent pair of them a bigram. Everything else separates tokens.
//!
//! A text without tokens has no vector: it is never indexed and never matches.


/// Default number of dimensions of the embedded embedder.
pub const DEFAULT_DIMENSION: usize = 512;

/// Identifier of the embedded embedder, written into snapshots.
pub const EMBEDDER_ID: &str = "hash-idf-v1";

/// Longest word kept, in chars; longer runs (base64, hashes) are cut to this length.
const MAX_WORD_CHARS: usize = 64;

/// True for CJK ideographs, kana and hangul (tokenized per character).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF     // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xF900..=0xFAFF   // compatibility ideographs
        | 0x20000..=0x2FA1F // extensions B..F, compatibility supplement
        | 0x30000..=0x323AF // extensions G, H
        | 0x3040..=0x309F   // hiragana
        | 0x30A0..=0x30FF   // katakana
        | 0x31F0..=0x31FF   // katakana phonetic extensions
        | 0xFF66..=0xFF9F   // halfwidth katakana
        | 0x1100..=0x11FF   // hangul jamo
        | 0x3130..=0x318F   // hangul compatibility jamo
        | 0xAC00..=0xD7AF   // hangul syllables
    )
}

/// Combining marks that continue a word (accents written as separate code points).
fn is_combining(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// Splits `text` into tokens (see the module docs). Deterministic; never panics.
///
/// Example: `"Parsing the files 日本語"` -> `["pars", "the", "file", "日", "本", "日本",
/// "語", "本語"]`.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut word_chars = 0usize;
    let mut prev_cjk: Option<char> = None;
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut word, &mut word_chars, &mut out);
            out.push(c.to_string());
            if let Some(p) = prev_cjk {
                let mut bigram = String::with_capacity(8);
                bigram.push(p);
                bigram.push(c);
                out.push(bigram);
            }
            prev_cjk = Some(c);
        } else if c.is_alphanumeric() || (is_combining(c) && !word.is_empty()) {
            prev_cjk = None;
            if word_chars < MAX_WORD_CHARS {
                word.extend(c.to_lowercase());
                word_chars += 1;
            }
        } else {
            prev_cjk = None;
            flush(&mut word, &mut word_chars, &mut out);
        }
    }
    flush(&mut word, &mut word_chars, &mut out);
    out
}

fn flush(word: &mut String, chars: &mut usize, out: &mut Vec<String>) {
    if !word.is_empty() {
        out.push(stem(word));
        word.clear();
    }
    *chars = 0;
}

/// Light English stemmer for lowercase ASCII words; other words pass through.
/// `files`/`file` -> `file`, `queries` -> `query`, `indexing`/`indexed` -> `index`,
/// `running` -> `run`.
pub(crate) fn stem(w: &str) -> String {
    if w.len() < 4 || !w.bytes().all(|b| b.is_ascii_lowercase()) {
        return w.to_string();
    }
    if let Some(base) = w.strip_suffix("ies") {
        if base.len() >= 2 {
            return format!("{base}y");
        }
    }
    if let Some(base) = w.strip_suffix("sses") {
        return format!("{base}ss");
    }
    if let Some(base) = w.strip_suffix("ing") {
        if base.len() >= 3 && base.bytes().any(is_vowel) {
            return undouble(base);
        }
    }
    if let Some(base) = w.strip_suffix("ed") {
        if base.len() >= 3 && base.bytes().any(is_vowel) {
            return undouble(base);
        }
    }
    if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        if let Some(base) = w.strip_suffix('s') {
            return base.to_string();
        }
    }
    w.to_string()
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u' | b'y')
}

/// `runn` -> `run`, `stopp` -> `stop`; keeps `ll`, `ss`, `zz` (`call`, `pass`).
fn undouble(base: &str) -> String {
    let bytes = base.as_bytes();
    if let [.., a, b] = bytes {
        if a == b && !is_vowel(*b) && !matches!(b, b'l' | b's' | b'z') {
            if let Some(cut) = base.get(..base.len() - 1) {
                return cut.to_string();
            }
        }
    }
    base.to_string()
}

/// Term counts of a text: `(term hash, count)` sorted by hash. Empty when the text has
/// no tokens.
#[cfg(test)]
pub(crate) fn term_counts(text: &str) -> Vec<(u64, u32)> {
    use crate::sorted::SortedMap;
    use crate::transcript::fnv1a;
    let mut counts: SortedMap<u64, u32> = SortedMap::new();
    for t in tokenize(text) {
        let c = counts.get_or_insert_with(fnv1a(t.as_bytes()), || 0);
        *c = c.saturating_add(1);
    }
    counts.into_vec()
}

/// SplitMix64 finaliser: spreads the FNV hash so bucket and sign bits are independent.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Smoothed inverse document frequency: `ln((docs + 1) / (df + 1)) + 1`, always >= 1,
/// larger for rarer terms. `docs`: records in the scope; `df`: records holding the term.
pub(crate) fn idf(docs: u32, df: u32) -> f64 {
    ((f64::from(docs) + 1.0) / (f64::from(df) + 1.0)).ln() + 1.0
}

/// The L2-normalised embedding of term counts: each term adds
/// `sign(h) * (1 + ln tf) * idf(term)` to bucket `h mod dim`. `df(term)` gives the
/// term's document frequency in a scope of `docs` records. `None` when there are no
/// terms, `dim` is 0, or the vector is zero (signed collisions cancelled out).
#[cfg(test)]
pub(crate) fn vectorize(
    terms: &[(u64, u32)],
    dim: usize,
    docs: u32,
    df: impl Fn(u64) -> u32,
) -> Option<Vec<f32>> {
    if terms.is_empty() || dim == 0 {
        return None;
    }
    let mut v = vec![0f64; dim];
    for &(term, tf) in terms {
        let h = mix(term);
        let bucket = (h % dim as u64) as usize;
        let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
        let w = (1.0 + f64::from(tf.max(1)).ln()) * idf(docs, df(term));
        if let Some(slot) = v.get_mut(bucket) {
            *slot += sign * w;
        }
    }
    normalize64(&v)
}

/// [`vectorize`] in sparse form: `(bucket, value)` pairs in bucket order, zeros left
/// out, L2-normalised; `terms` are `(term hash, count, document frequency)`. The same
/// buckets, signs and weights as [`vectorize`], so the dot product of two of these is
/// the cosine of the dense vectors. `None` when there are no terms, `dim` is 0 or the
/// vector is zero.
pub(crate) fn sparse_vector(terms: &[(u64, f64, u32)], dim: usize, docs: u32) -> Option<Vec<(u32, f64)>> {
    if terms.is_empty() || dim == 0 {
        return None;
    }
    let mut v: Vec<(u32, f64)> = terms
        .iter()
        .map(|&(term, tf, df)| {
            let h = mix(term);
            let bucket = (h % dim as u64) as u32;
            let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
            (bucket, sign * tf_weight(tf) * idf(docs, df))
        })
        .collect();
    crate::sorted::sort_by(&mut v, |a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut merged: Vec<(u32, f64)> = Vec::with_capacity(v.len());
    for (b, x) in v {
        match merged.last_mut() {
            Some((lb, lx)) if *lb == b => *lx += x,
            _ => merged.push((b, x)),
        }
    }
    merged.retain(|(_, x)| *x != 0.0);
    let norm = merged.iter().map(|(_, x)| x * x).sum::<f64>().sqrt();
    if !norm.is_finite() || norm < 1e-12 {
        return None;
    }
    for (_, x) in &mut merged {
        *x /= norm;
    }
    Some(merged)
}

/// Sublinear term-frequency weight: `1 + ln tf` from one occurrence up, `tf` itself
/// below one (a fractional count: a context term, a query synonym).
pub(crate) fn tf_weight(tf: f64) -> f64 {
    if tf >= 1.0 {
        1.0 + tf.ln()
    } else {
        tf.max(0.0)
    }
}

/// Dot product of two sparse vectors in bucket order.
pub(crate) fn sparse_dot(a: &[(u32, f64)], b: &[(u32, f64)]) -> f64 {
    let (mut i, mut j, mut s) = (0, 0, 0.0);
    while let (Some(&(ba, xa)), Some(&(bb, xb))) = (a.get(i), b.get(j)) {
        match ba.cmp(&bb) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                s += xa * xb;
                i += 1;
                j += 1;
            }
        }
    }
    s
}

fn normalize64(v: &[f64]) -> Option<Vec<f32>> {
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !norm.is_finite() || norm < 1e-12 {
        return None;
    }
    Some(v.iter().map(|x| (x / norm) as f32).collect())
}

/// L2-normalises a host vector. `None` when it is zero or holds a non-finite value.
pub(crate) fn normalize(v: &[f32]) -> Option<Vec<f32>> {
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let wide: Vec<f64> = v.iter().map(|&x| f64::from(x)).collect();
    normalize64(&wide)
}

/// Dot product of two equal-length vectors (cosine when both are unit length), summed in
/// f32 over eight interleaved lanes (the host-vector search reads thousands of vectors a
/// query: independent sums keep the adds from waiting on each other, and f32 needs no
/// widening), the lanes added pairwise, then the tail; same inputs, same bits.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for ((l, p), q) in lanes.iter_mut().zip(x).zip(y) {
            *l += *p * *q;
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lanes;
    (((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))) + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_words_and_cjk() {
        assert_eq!(
            tokenize("Parsing the files, 日本語!"),
            vec!["pars", "the", "file", "日", "本", "日本", "語", "本語"]
        );
        assert_eq!(tokenize("stopped running queries"), vec!["stop", "run", "query"]);
        assert_eq!(tokenize("indexed indexing index"), vec!["index", "index", "index"]);
        assert!(tokenize("?!... --- ;;").is_empty());
        assert_eq!(tokenize("Café"), vec!["café"]);
        assert_eq!(tokenize("한국어 text"), vec!["한", "국", "한국", "어", "국어", "text"]);
    }

    #[test]
    fn vectors_are_unit_or_absent() {
        let t = term_counts("alpha beta gamma");
        let v = vectorize(&t, 64, 1, |_| 1).unwrap_or_default();
        let n: f32 = v.iter().map(|x| x * x).sum();
        assert!((n - 1.0).abs() < 1e-5);
        assert!(vectorize(&term_counts("..."), 64, 1, |_| 0).is_none());
        assert!(normalize(&[0.0, 0.0]).is_none());
        assert!(normalize(&[f32::NAN, 1.0]).is_none());
    }
}
