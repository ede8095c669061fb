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
