//! Messages kept as compact JSON text (issue "Performance": parse once, no `Value` tree
//! per held message).
//!
//! A held message's provider JSON is [`RawJson`]: the exact compact text
//! `serde_json::to_string` gives for its value (keys in input order, serde_json's
//! escaping). When the host's text for a message is already in that form (the usual
//! case: `JSON.stringify` output), the engine keeps that slice as is: a slice of the
//! input the rows share (issue 15 item 2, [`RawJson::from_canonical_in`]), so
//! measuring a message (UTF-8 bytes), hashing it for its content id (T-4) and writing it
//! back out (F-3) read the text and never walk a tree. Text in any other form (pretty
//! printed, `\u00e9` escapes, floats, `\/`) is normalised through `serde_json::Value`
//! once, so ids, sizes and output bytes do not depend on how the host spelled the JSON.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// One JSON value as compact text in serde_json's canonical form (see the module docs).
/// Cloning a row that borrows the host's input ([`RawJson::from_canonical_in`]) shares
/// it (no copy); cloning an owned one copies the text; equality compares the text.
#[derive(Clone)]
pub struct RawJson(Repr);

#[derive(Clone)]
enum Repr {
    /// Text of its own: engine-made or edited rows, rows normalised through `Value`.
    Owned(Box<RawValue>),
    /// A slice of the host's input text, held once for every row that borrows it
    /// (issue 15 item 2: no per-row copy of the input). `slice` points into the heap
    /// buffer of `source` (checked when built, [`RawJson::from_canonical_in`]); it is
    /// handed out only for the lifetime of `&self`, while `source` keeps it alive.
    Shared {
        /// Held, not read: it keeps `slice` alive.
        #[allow(dead_code)]
        source: Arc<String>,
        slice: &'static RawValue,
    },
}

impl RawJson {
    /// The compact JSON text of `v`: `serde_json::to_string(v)`, except that floats are
    /// spelled as JavaScript's `JSON.stringify` spells them ([`JsNumbers`]), so a row that
    /// went through a JS host and back has the same text and the same content id (T-4).
    pub fn from_value(v: &Value) -> RawJson {
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, JsNumbers);
        // serializing a `Value` cannot fail (its keys are strings)
        let text = match v.serialize(&mut ser) {
            Ok(()) => String::from_utf8(out).unwrap_or_default(),
            Err(_) => String::new(),
        };
        match RawValue::from_string(text) {
            Ok(raw) => RawJson(Repr::Owned(raw)),
            Err(_) => RawJson::null(),
        }
    }

    /// A copy of `text` when it is already canonical compact JSON ([`is_canonical`]),
    /// else `None`.
    pub fn from_canonical(text: &RawValue) -> Option<RawJson> {
        is_canonical(text.get()).then(|| RawJson(Repr::Owned(text.to_owned())))
    }

    /// `text` without a copy, sharing `source`, when it is canonical compact JSON
    /// ([`is_canonical`]) and a slice of `source` (issue 15 item 2: a decoded row
    /// borrows the host's input); a copy when it is canonical but lies elsewhere; `None`
    /// when it is not canonical. The row keeps `source` alive ([`RawJson::is_shared`],
    /// [`RawJson::unshared`]).
    pub fn from_canonical_in(source: &Arc<String>, text: &RawValue) -> Option<RawJson> {
        if !is_canonical(text.get()) {
            return None;
        }
        let outer = source.as_bytes().as_ptr_range();
        let inner = text.get().as_bytes().as_ptr_range();
        if inner.start < outer.start || inner.end > outer.end {
            return Some(RawJson(Repr::Owned(text.to_owned())));
        }
        // SAFETY: `text` lies inside the heap buffer of the `String` behind `source`
        // (checked just above). That buffer is never written or moved while an `Arc`
        // to it lives (the `Arc` is private to this type and never unwrapped or
        // mutated), and the `Arc` clone stored beside the reference keeps it alive for
        // as long as the reference is held; the reference is only lent out for the
        // lifetime of `&self` ([`RawJson::get`], `Serialize`).
        let slice: &'static RawValue = unsafe { &*(text as *const RawValue) };
        Some(RawJson(Repr::Shared { source: Arc::clone(source), slice }))
    }

    /// `text` itself (no copy) when it is canonical compact JSON ([`is_canonical`]) and
    /// one JSON value, else `None`.
    pub fn from_canonical_string(text: String) -> Option<RawJson> {
        if !is_canonical(&text) {
            return None;
        }
        RawValue::from_string(text).ok().map(|r| RawJson(Repr::Owned(r)))
    }

    /// The JSON `null`.
    pub fn null() -> RawJson {
        RawJson(Repr::Owned(RawValue::NULL.to_owned()))
    }

    fn raw(&self) -> &RawValue {
        match &self.0 {
            Repr::Owned(b) => b,
            Repr::Shared { slice, .. } => slice,
        }
    }

    /// True when the text is a slice of a host input it shares with other rows
    /// ([`RawJson::from_canonical_in`]).
    pub fn is_shared(&self) -> bool {
        matches!(self.0, Repr::Shared { .. })
    }

    /// The same text with a buffer of its own (a copy when it was shared), so the host
    /// input it borrowed can be freed once no row borrows it.
    pub fn unshared(&self) -> RawJson {
        match &self.0 {
            Repr::Owned(_) => self.clone(),
            Repr::Shared { slice, .. } => RawJson(Repr::Owned((*slice).to_owned())),
        }
    }

    /// The JSON text.
    pub fn get(&self) -> &str {
        self.raw().get()
    }

    /// UTF-8 bytes of the text.
    pub fn len(&self) -> usize {
        self.get().len()
    }

    /// True for an empty text (never: a `RawJson` holds one JSON value).
    pub fn is_empty(&self) -> bool {
        self.get().is_empty()
    }

    /// The value, parsed from the text (allocates a tree: for edits and tests, not for
    /// the hot path).
    pub fn value(&self) -> Value {
        serde_json::from_str(self.get()).unwrap_or(Value::Null)
    }

    /// The text with `extra` (`"key":value` pairs, comma-separated, already JSON)
    /// appended as members of this object; the text itself when `extra` is empty or
    /// this is not an object.
    pub fn with_members(&self, extra: &str) -> String {
        let text = self.get();
        match text.strip_suffix('}') {
            Some(body) if !extra.is_empty() => {
                let sep = if body.ends_with('{') { "" } else { "," };
                let mut out = String::with_capacity(text.len() + extra.len() + 1);
                out.push_str(body);
                out.push_str(sep);
                out.push_str(extra);
                out.push('}');
                out
            }
            _ => text.to_string(),
        }
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.get() == other.get()
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl Serialize for RawJson {
    /// Writes the text verbatim (serde_json's raw-value support).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.raw().serialize(s)
    }
}

/// Nesting depth above which [`is_canonical`] says no (well under serde_json's recursion
/// limit of 128, which the `Value` path then applies).
pub const MAX_FAST_DEPTH: usize = 64;

/// serde_json's compact formatter with JavaScript's spelling of floats (ECMAScript
/// `Number::toString`: shortest round-trip digits, `1` not `1.0`, `0` for `-0`,
/// `1e+21`, `1e-7`, `0.000001`). Integers are written as serde_json writes them.
pub struct JsNumbers;

impl serde_json::ser::Formatter for JsNumbers {
    fn write_f64<W: ?Sized + std::io::Write>(&mut self, w: &mut W, value: f64) -> std::io::Result<()> {
        w.write_all(js_number(value).as_bytes())
    }
    fn write_f32<W: ?Sized + std::io::Write>(&mut self, w: &mut W, value: f32) -> std::io::Result<()> {
        w.write_all(js_number(f64::from(value)).as_bytes())
    }
}

/// A finite double as JavaScript writes it (`String(x)`); `null` for NaN and infinities,
/// as `JSON.stringify` writes them.
pub fn js_number(x: f64) -> String {
    if !x.is_finite() {
        return "null".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    // shortest round-trip digits and the decimal exponent n (x = 0.DIGITS * 10^n), from
    // zmij (serde_json's own float writer: no second float formatter in the module),
    // which writes "123.45", "0.001" or "1.5e-7" / "1e+21"
    let mut buf = zmij::Buffer::new();
    let text = buf.format_finite(x.abs());
    let (mantissa, exp) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut n = exp.parse::<i64>().unwrap_or(0) + int.len() as i64;
    let all = int.bytes().chain(frac.bytes());
    let mut digits = String::with_capacity(int.len() + frac.len());
    for d in all {
        if d == b'0' && digits.is_empty() {
            n -= 1;
        } else {
            digits.push(char::from(d));
        }
    }
    let digits = digits.trim_end_matches('0');
    let k = digits.len() as i64;
    let mut out = String::with_capacity(digits.len() + 8);
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        // here k > n: the point falls inside the digits
        let (int, frac) = digits.split_at_checked(n as usize).unwrap_or((digits, ""));
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        let (first, rest) = digits.split_at_checked(1).unwrap_or((digits, ""));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

/// True when `text` is exactly what `serde_json::to_string` writes for the value it
/// parses to: no whitespace outside strings, strings escaped the way serde_json escapes
/// them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00xx` for other control
/// characters, everything else literal), and numbers that are integers of at most 18
/// digits (floats and longer integers may be re-spelled, so they go the slow way), nested
/// at most [`MAX_FAST_DEPTH`] deep.
/// `text` must be valid JSON (it comes from the parser).
pub fn is_canonical(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    // nesting depth: deep text goes the `Value` way, whose parser enforces serde_json's
    // recursion limit, so every held text parses back (and every spelling of a document
    // gets the same answer)
    let mut depth = 0usize;
    while let Some(&byte) = b.get(i) {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FAST_DEPTH {
                    return false;
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return false,
                        Some(b'"') => break,
                        Some(b'\\') => {
                            match b.get(i + 1) {
                                Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                                Some(b'u') => {
                                    // serde_json writes `\u00xx` (lowercase hex) only for
                                    // control characters without a short escape
                                    let hex = b.get(i + 2..i + 6);
                                    let ok = match hex {
                                        Some([b'0', b'0', hi, lo]) => {
                                            matches!(hi, b'0' | b'1')
                                                && matches!(lo, b'0'..=b'9' | b'a'..=b'f')
                                                && !matches!((hi, lo), (b'0', b'8' | b'9' | b'a' | b'c' | b'd'))
                                        }
                                        _ => false,
                                    };
                                    if !ok {
                                        return false;
                                    }
                                    i += 6;
                                }
                                _ => return false,
                            }
                        }
                        Some(_) => i += 1,
                    }
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                if b.get(i) == Some(&b'-') {
                    i += 1;
                }
                let digits = i;
                while matches!(b.get(i), Some(b'0'..=b'9')) {
                    i += 1;
                }
                let n = i - digits;
                let leading_zero = b.get(digits) == Some(&b'0');
                if n == 0 || n > 18 || (leading_zero && (n > 1 || digits > start)) {
                    return false;
                }
                if matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
                    return false;
                }
            }
            b' ' | b'\n' | b'\r' | b'\t' => return false,
            _ => i += 1,
        }
    }
    true
}

/// The text of a JSON object with its top-level member `key` set to `value` (JSON
/// text), written without a `Value` tree: the member's value is replaced in place, or
/// `"key":value` is appended when the object has none (where `serde_json::Map::insert`
/// puts it). `None` (the caller takes the `Value` path) unless the result is exactly what
/// editing the parsed value and writing it back ([`RawJson::from_value`]) gives: `text`
/// must be canonical ([`is_canonical`]), an object with no repeated top-level key, and
/// every member other than `key` must be a scalar or a string (a nested object could
/// repeat a key, which the `Value` path would collapse). Used by eviction and clearing
/// (E-2) on OpenAI Chat tool messages (issue 15: no `Value` round trip per evicted row).
pub(crate) fn with_member(text: &str, key: &str, value: &str) -> Option<String> {
    if !is_canonical(text) {
        return None;
    }
    let members = top_members(text)?;
    let mut at = None;
    for (k, (name, range)) in members.iter().enumerate() {
        if members.iter().take(k).any(|(n, _)| n == name) {
            return None;
        }
        if name == key {
            at = Some(range.clone());
        } else if matches!(text.as_bytes().get(range.start), Some(b'{' | b'[')) {
            return None;
        }
    }
    let mut out = String::with_capacity(text.len() + value.len() + key.len() + 4);
    match at {
        Some(r) => {
            out.push_str(text.get(..r.start)?);
            out.push_str(value);
            out.push_str(text.get(r.end..)?);
        }
        None => {
            let body = text.strip_suffix('}')?;
            out.push_str(body);
            if !members.is_empty() {
                out.push(',');
            }
            out.push_str(&serde_json::to_string(key).ok()?);
            out.push(':');
            out.push_str(value);
            out.push('}');
        }
    }
    Some(out)
}

/// The top-level members of a JSON object: each key (unescaped) and the byte range of
/// its value in `text`. `None` when `text` is not an object.
fn top_members(text: &str) -> Option<Vec<(String, std::ops::Range<usize>)>> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(std::borrow::Cow<'de, str>, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(k) = map.next_key::<KeyCow<'de>>()? {
                out.push((k.0, map.next_value::<&'de RawValue>()?));
            }
            Ok(out)
        }
    }
    /// A key borrowed from the text when it has no escapes.
    struct KeyCow<'a>(std::borrow::Cow<'a, str>);
    impl<'de> serde::Deserialize<'de> for KeyCow<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = KeyCow<'de>;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a key")
                }
                fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<KeyCow<'de>, E> {
                    Ok(KeyCow(std::borrow::Cow::Borrowed(v)))
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyCow<'de>, E> {
                    Ok(KeyCow(std::borrow::Cow::Owned(v.to_string())))
                }
            }
            d.deserialize_str(V)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let members = de.deserialize_map(Members).ok()?;
    de.end().ok()?;
    let base = text.as_ptr() as usize;
    members
        .into_iter()
        .map(|(k, v)| {
            let start = (v.get().as_ptr() as usize).checked_sub(base)?;
            Some((k.into_owned(), start..start + v.get().len()))
        })
        .collect()
}

/// A host document split at the top level without parsing the messages: a bare array
/// of messages, or an object whose `key` member is that array (other members parsed).
pub(crate) struct RawDoc<'a> {
    /// The messages, each its own slice of the input text.
    pub items: Vec<&'a RawValue>,
    /// `None` for a bare array; else the envelope's other members, in order (the
    /// messages key itself left out, as `formats::decode` leaves it).
    pub fields: Option<serde_json::Map<String, Value>>,
}

/// Splits `text` for a format whose messages sit under `key` in an envelope. `None`
/// when the text is not a well-formed document of that shape (the caller then takes
/// the `Value` path, which reports the precise error).
pub(crate) fn split_document<'a>(text: &'a str, key: &str) -> Option<RawDoc<'a>> {
    let mut de = serde_json::Deserializer::from_str(text);
    let doc = DocSeed { key }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(doc)
}

struct DocSeed<'k> {
    key: &'k str,
}

impl<'de, 'k> DeserializeSeed<'de> for DocSeed<'k> {
    type Value = RawDoc<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawDoc<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 'k> Visitor<'de> for DocSeed<'k> {
    type Value = RawDoc<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of messages or an envelope object")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawDoc<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            items.push(item);
        }
        Ok(RawDoc { items, fields: None })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDoc<'de>, A::Error> {
        let mut items = None;
        let mut fields = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            if k == self.key {
                if items.is_some() {
                    return Err(de::Error::custom("duplicate messages key"));
                }
                items = Some(map.next_value::<Vec<&'de RawValue>>()?);
            } else {
                let v: Value = map.next_value()?;
                fields.insert(k, v);
            }
        }
        match items {
            Some(items) => Ok(RawDoc { items, fields: Some(fields) }),
            None => Err(de::Error::custom("no messages key")),
        }
    }
}

/// A document's top level with every member left as text (for format detection).
pub(crate) enum RawTop<'a> {
    /// A bare array: its items.
    Array(Vec<&'a RawValue>),
    /// An object: its members in order (a repeated key appears twice).
    Object(Vec<(String, &'a RawValue)>),
    /// Any other JSON value.
    Other,
}

/// Splits `text` at the top level. Errors: the parser's, for text that is not JSON.
pub(crate) fn split_top(text: &str) -> Result<RawTop<'_>, serde_json::Error> {
    struct TopVisitor;
    impl<'de> Visitor<'de> for TopVisitor {
        type Value = RawTop<'de>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON document")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawTop<'de>, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element::<&'de RawValue>()? {
                items.push(item);
            }
            Ok(RawTop::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTop<'de>, A::Error> {
            let mut members = Vec::new();
            while let Some(k) = map.next_key::<String>()? {
                members.push((k, map.next_value::<&'de RawValue>()?));
            }
            Ok(RawTop::Object(members))
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<RawTop<'de>, E> {
            Ok(RawTop::Other)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let top = de.deserialize_any(TopVisitor)?;
    de.end()?;
    Ok(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t4_canonical_text_is_exactly_serde_json_output() {
        let cases = [
            (r#"{"a":"x\ny","b":[1,-2,0,true,null]}"#, true),
            (r#"{"a": 1}"#, false),
            (r#"{"a":"\u00e9"}"#, false),
            (r#"{"a":"\u001f\u0000"}"#, true),
            (r#"{"a":"\u0008"}"#, false),
            (r#"{"a":"\/"}"#, false),
            (r#"{"a":1.5}"#, false),
            (r#"{"a":-0}"#, false),
            (r#"{"a":1e3}"#, false),
            ("{\"a\":\"é 😀 \u{2028}\"}", true),
            (r#"{"a":"\u2028"}"#, false),
            (r#"{"a":123456789012345678}"#, true),
            (r#"{"a":1234567890123456789}"#, false),
        ];
        for (text, want) in cases {
            assert_eq!(is_canonical(text), want, "{text}");
            if want {
                let v: Value = serde_json::from_str(text).unwrap();
                assert_eq!(serde_json::to_string(&v).unwrap(), text);
            }
        }
    }

    #[test]
    fn t4_floats_are_spelled_as_javascript_spells_them() {
        let cases = [
            (1.0, "1"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (100.0, "100"),
            (1e21, "1e+21"),
            (1.5e21, "1.5e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (1.25e-7, "1.25e-7"),
            (0.000001, "0.000001"),
            (0.20752913900651038, "0.20752913900651038"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (123456.789, "123456.789"),
            (12345678901234567890.0, "12345678901234567000"),
        ];
        for (x, js) in cases {
            assert_eq!(js_number(x), js, "{x:e}");
            assert_eq!(js.parse::<f64>().unwrap(), x, "{js} reads back as the same double");
        }
        let v: Value = serde_json::from_str(r#"{"a":1.0,"b":[-0.0,1e3,2.50],"c":7}"#).unwrap();
        assert_eq!(RawJson::from_value(&v).get(), r#"{"a":1,"b":[0,1000,2.5],"c":7}"#);
    }

    /// The digits and exponent `js_number` reads off zmij's output are the shortest
    /// round-trip ones Rust's own `{:e}` gives (the speller used before; it kept a second
    /// float formatter in the wasm module), over random bit patterns, powers of ten and
    /// their neighbours, subnormals and integers, except on an exact tie between two
    /// shortest spellings, where ECMAScript (T-4: ids survive `JSON.stringify`) takes the
    /// even one and Rust's formatter the upper one. (Every spelling of this set was also
    /// compared once with V8's `String(x)`: all equal; docs/performance.md.)
    #[test]
    fn t4_float_spelling_matches_the_shortest_digits_of_rusts_formatter() {
        fn oracle(x: f64) -> (String, i64) {
            let sci = format!("{:e}", x.abs());
            let (m, e) = sci.split_once('e').unwrap();
            (m.chars().filter(char::is_ascii_digit).collect(), e.parse::<i64>().unwrap() + 1)
        }
        fn ours(x: f64) -> (String, i64) {
            // read the digits and exponent back from the spelling
            let s = js_number(x);
            let s = s.trim_start_matches('-');
            let (m, e) = s.split_once('e').unwrap_or((s, "0"));
            let (int, frac) = m.split_once('.').unwrap_or((m, ""));
            let mut n = e.parse::<i64>().unwrap() + int.len() as i64;
            let mut digits = String::new();
            for c in int.chars().chain(frac.chars()) {
                if c == '0' && digits.is_empty() {
                    n -= 1;
                } else {
                    digits.push(c);
                }
            }
            (digits.trim_end_matches('0').to_string(), n)
        }
        let mut xs: Vec<f64> = Vec::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            xs.push(f64::from_bits(state));
        }
        for e in -325..=308 {
            let p: f64 = format!("1e{e}").parse().unwrap();
            xs.extend([p, f64::from_bits(p.to_bits() + 1), f64::from_bits(p.to_bits().saturating_sub(1)), p * 1.5, p * 9.999]);
        }
        xs.extend((1..2000u64).map(|i| f64::from_bits(i)));
        xs.extend((0..2000).map(|i| (i as f64) * 12345.678 - 1e6));
        xs.extend([f64::MAX, f64::MIN_POSITIVE, 2f64.powi(53), 2f64.powi(53) + 2.0, 1e21, 1e-7, 0.1 + 0.2]);
        let mut checked = 0;
        let mut ties = 0;
        for x in xs.into_iter().filter(|x| x.is_finite() && *x != 0.0) {
            let (a, b) = (ours(x), oracle(x));
            if a != b {
                // an exact tie between two shortest spellings: ECMAScript takes the even
                // one (Number::toString step 5), Rust's formatter the upper one
                let (da, db) = (a.0.as_bytes(), b.0.as_bytes());
                let last = |d: &[u8]| d.last().copied().unwrap_or(b'0') - b'0';
                assert!(a.1 == b.1 && da.len() == db.len() && last(da) % 2 == 0 && last(db) == last(da) + 1, "{x:e}: {a:?} against {b:?}");
                ties += 1;
            }
            assert_eq!(js_number(x).parse::<f64>().unwrap(), x, "{x:e} reads back");
            checked += 1;
        }
        assert!(checked > 190_000);
        assert!(ties < checked / 1000, "{ties} ties");
    }

    #[test]
    fn f4_provenance_members_are_appended_to_an_object() {
        let r = RawJson::from_value(&serde_json::json!({"role": "user"}));
        assert_eq!(r.with_members(r#""pinned":true"#), r#"{"role":"user","pinned":true}"#);
        let e = RawJson::from_value(&serde_json::json!({}));
        assert_eq!(e.with_members(r#""pinned":true"#), r#"{"pinned":true}"#);
        assert_eq!(r.with_members(""), r#"{"role":"user"}"#);
    }

    #[test]
    fn e2_with_member_is_the_value_edit_written_back() {
        let cases = [
            (r#"{"role":"tool","tool_call_id":"c1","content":"long body"}"#, Some(r#"{"role":"tool","tool_call_id":"c1","content":"x\"y"}"#)),
            (r#"{"role":"tool","content":[{"type":"text","text":"a"}],"tool_call_id":"c1"}"#, Some(r#"{"role":"tool","content":"x\"y","tool_call_id":"c1"}"#)),
            (r#"{"role":"tool","tool_call_id":"c1"}"#, Some(r#"{"role":"tool","tool_call_id":"c1","content":"x\"y"}"#)),
            (r#"{}"#, Some(r#"{"content":"x\"y"}"#)),
            (r#"{"c\u0001ontent":1,"content":null}"#, Some(r#"{"c\u0001ontent":1,"content":"x\"y"}"#)),
            // the Value path would collapse a repeated key, or re-spell a float / a nested object
            (r#"{"content":"a","content":"b"}"#, None),
            (r#"{"role":"tool","content":"a","x":1.5}"#, None),
            (r#"{"role":"tool","content":"a","x":{"k":1,"k":2}}"#, None),
            (r#"{"role": "tool","content":"a"}"#, None),
            (r#"[1]"#, None),
        ];
        let value = serde_json::to_string("x\"y").unwrap();
        for (text, want) in cases {
            let got = with_member(text, "content", &value);
            assert_eq!(got.as_deref(), want, "{text}");
            if let Some(got) = got {
                let mut v: Value = serde_json::from_str(text).unwrap();
                v.as_object_mut().unwrap().insert("content".into(), Value::String("x\"y".into()));
                assert_eq!(RawJson::from_value(&v).get(), got, "{text}");
            }
        }
    }

    #[test]
    fn f3_documents_split_at_the_top_level() {
        let d = split_document(r#"[{"a":1}, {"b":2}]"#, "messages").unwrap();
        assert_eq!(d.items.iter().map(|r| r.get()).collect::<Vec<_>>(), vec![r#"{"a":1}"#, r#"{"b":2}"#]);
        let d = split_document(r#"{"system":"s","messages":[{"a":1}],"tools":[]}"#, "messages").unwrap();
        assert_eq!(d.items.len(), 1);
        let keys: Vec<&String> = d.fields.as_ref().unwrap().keys().collect();
        assert_eq!(keys, ["system", "tools"]);
        assert!(split_document(r#"{"messages":{}}"#, "messages").is_none());
        assert!(split_document(r#"{"other":[]}"#, "messages").is_none());
        assert!(split_document(r#"[1] x"#, "messages").is_none());
    }
}
