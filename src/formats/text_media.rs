//! Text carried as media (N-1): a file or inline-data part whose media type is text
//! (`text/*`, JSON, XML, YAML, CSV, JavaScript) and whose data is base64 of UTF-8, or a
//! `data:` URL of it. In a user message that is the person's text (what they attached),
//! so the adapters read it as a text block instead of opaque media. Shared by the
//! Gemini (`inlineData`), AI SDK (`file`), OpenAI Chat (`file.file_data`) and OpenAI
//! Responses (`input_file.file_data`) adapters.

/// True for a media type whose bytes are text: `text/*`, `application/json`,
/// `application/xml`, `application/yaml`, `application/x-yaml`, `application/javascript`,
/// `application/csv` and any `+json` / `+xml` suffix. Parameters (`; charset=...`) and
/// case are ignored.
pub(crate) fn is_text_mime(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m.starts_with("text/")
        || matches!(m.as_str(), "application/json" | "application/xml" | "application/yaml" | "application/x-yaml" | "application/javascript" | "application/csv")
        || m.ends_with("+json")
        || m.ends_with("+xml")
}

/// The media type a file name's extension names, for text files only (`.txt`, `.md`,
/// `.csv`, `.json`, `.xml`, `.yaml`, `.yml`, `.log`, `.html`): what an OpenAI file part with
/// a bare base64 `file_data` and a `filename` carries.
pub(crate) fn text_mime_of_name(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "txt" | "log" => "text/plain",
        "md" | "markdown" => "text/markdown",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        _ => return None,
    })
}

/// The text of `data` when `mime` is a text type ([`is_text_mime`]): `data` is base64
/// (standard or URL-safe, padding optional) or a `data:<mime>;base64,<data>` URL, whose own
/// media type then decides (and `mime` may be `None`). `None` for other media, URLs,
/// data that is not base64, or bytes that are not UTF-8.
pub(crate) fn text_of_data(data: &str, mime: Option<&str>) -> Option<String> {
    let (mime, b64) = match data.strip_prefix("data:") {
        Some(rest) => {
            let (head, body) = rest.split_once(',')?;
            let head_mime = head.split(';').next().unwrap_or("");
            if !head.split(';').any(|p| p.trim().eq_ignore_ascii_case("base64")) {
                return None;
            }
            (if head_mime.is_empty() { mime? } else { head_mime }, body)
        }
        None => (mime?, data),
    };
    if !is_text_mime(mime) {
        return None;
    }
    String::from_utf8(base64_decode(b64)?).ok()
}

/// Decodes base64 (standard or URL-safe alphabet, padding optional, ASCII whitespace
/// skipped); `None` on any other byte (after the padding too) or a dangling 6 bits.
pub(crate) fn base64_decode(data: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut padded = false;
    for c in data.bytes() {
        // after the padding only more padding or white space: `b2s=%%%` is not base64
        if padded {
            if c == b'=' || c.is_ascii_whitespace() {
                continue;
            }
            return None;
        }
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => {
                padded = true;
                continue;
            }
            c if c.is_ascii_whitespace() => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (bits < 6).then_some(out)
}

/// Most UTF-8 bytes of one value [`media_name`] keeps (a long `context` is clipped at a
/// char boundary; a reference longer than this is kept whole: it is what names it).
const NAME_PART_BYTES: usize = 600;

/// What names a media part (M-1, N-1: a folded attachment must be found again in memory
/// by it): the distinct non-empty strings at `pointers` (JSON pointers into the part,
/// in order: a URL, a file id, a file name, a title), joined by `"; "`. `data:` URLs and
/// inline data are left out (they are content, not a name). `context` (a pointer whose
/// last segment is `context`, as Anthropic documents carry) is written `context: <text>`
/// and clipped to 600 bytes. `None` when none is there.
pub(crate) fn media_name(p: &serde_json::Value, pointers: &[&str]) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for ptr in pointers {
        let Some(v) = p.pointer(ptr).and_then(serde_json::Value::as_str).map(str::trim) else { continue };
        if v.is_empty() || v.starts_with("data:") {
            continue;
        }
        let part = if ptr.ends_with("/context") {
            let mut end = v.len().min(NAME_PART_BYTES);
            while !v.is_char_boundary(end) {
                end -= 1;
            }
            format!("context: {}", v.get(..end).unwrap_or(""))
        } else {
            v.to_string()
        };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n1_text_media_reads_base64_and_data_urls_of_text_types_only() {
        // "Hi!" is SGkh
        assert_eq!(text_of_data("SGkh", Some("text/plain")).as_deref(), Some("Hi!"));
        assert_eq!(text_of_data("SGkh", Some("Application/JSON; charset=utf-8")).as_deref(), Some("Hi!"));
        assert_eq!(text_of_data("data:text/markdown;base64,SGkh", None).as_deref(), Some("Hi!"));
        assert_eq!(text_of_data("data:;base64,SGkh", Some("text/csv")).as_deref(), Some("Hi!"));
        assert_eq!(text_of_data("data:application/pdf;base64,SGkh", Some("text/plain")), None, "the URL's own type decides");
        assert_eq!(text_of_data("SGkh", Some("image/png")), None);
        assert_eq!(text_of_data("SGkh", None), None);
        assert_eq!(text_of_data("https://example.com/a.txt", Some("text/plain")), None);
        assert_eq!(text_of_data("data:text/plain,Hi", None), None, "not base64");
        assert_eq!(text_of_data("/w==", Some("text/plain")), None, "not UTF-8");
        assert_eq!(text_of_data("b2s=%%%", Some("text/plain")), None, "bytes after the padding");
        assert_eq!(text_of_data("b2s= \n", Some("text/plain")).as_deref(), Some("ok"));
        assert_eq!(text_mime_of_name("notes.MD"), Some("text/markdown"));
        assert_eq!(text_mime_of_name("report.pdf"), None);
        assert!(is_text_mime("application/ld+json") && !is_text_mime("application/octet-stream"));
    }
}
