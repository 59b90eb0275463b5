//! Text helpers shared by capture and summaries.

/// The mark left where text was cut.
pub const CUT: char = '…';

/// Cuts `text` to at most `max_chars` characters, never inside a UTF-8
/// character, ending with `…` when anything was cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some(_) if max_chars == 0 => String::new(),
        Some(_) => {
            let keep = text.char_indices().nth(max_chars - 1).map_or(text.len(), |(i, _)| i);
            let mut out = String::with_capacity(keep + CUT.len_utf8());
            out.push_str(&text[..keep]);
            out.push(CUT);
            out
        }
    }
}

/// `text` cut to at most `max_chars` at the last sentence or line end that
/// fits (`…` marking the cut), or mid-sentence when no end falls in its
/// second half, so that a cut never leaves a fragment of a few words.
pub fn clip_at_sentence(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let room = text.char_indices().nth(max_chars.saturating_sub(1)).map_or(text.len(), |(i, _)| i);
    // A full stop ends a sentence when a space or a line follows it (not in `v1.2`).
    let is_end = |i: usize, c: char| match c {
        '.' | '!' | '?' | ';' => text[i + 1..].starts_with([' ', '\n']),
        '。' | '！' | '？' | '；' | '\n' => true,
        _ => false,
    };
    let end = text[..room]
        .char_indices()
        .rev()
        .find(|&(i, c)| is_end(i, c))
        .map(|(i, c)| i + c.len_utf8())
        .filter(|&end| end * 2 >= room);
    match end {
        Some(end) => format!("{}{CUT}", text[..end].trim_end()),
        None => clip(text, max_chars),
    }
}

/// `bytes` as lower-case hex digits.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The `N` bytes that `text`, exactly `2 * N` hex digits, spells; `None`
/// for anything else.
pub fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    // `from_str_radix` alone would take a sign ("+f").
    if text.len() != 2 * N || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut bytes = [0u8; N];
    for (byte, pair) in bytes.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

/// Serializes `value` as compact JSON, stopping early once the text is
/// longer than `max_chars` (so a 50 MB tool response is never copied whole),
/// then clips it.
pub fn clip_json(value: &serde_json::Value, max_chars: usize) -> String {
    if let serde_json::Value::String(s) = value {
        return clip(s, max_chars);
    }
    let mut writer = Capped { buf: Vec::new(), cap: max_chars.saturating_mul(4).saturating_add(8) };
    // An error here only means the cap was reached.
    let _ = serde_json::to_writer(&mut writer, value);
    clip(&String::from_utf8_lossy(&writer.buf), max_chars)
}

/// A writer that takes bytes up to a cap, then refuses.
struct Capped {
    buf: Vec<u8>,
    cap: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = self.cap.saturating_sub(self.buf.len());
        if room == 0 {
            return Err(std::io::Error::other("cap reached"));
        }
        let take = room.min(data.len());
        self.buf.extend_from_slice(&data[..take]);
        Ok(take)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// "512 B", "3.4 MB": a size for people.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Whether `text` may hold a JSON key (a quote a colon follows): text
/// without one is left as it is, uncopied.
pub fn may_hold_json_keys(text: &[u8]) -> bool {
    use memchr::memmem;
    memmem::find(text, b"\":").is_some() || memmem::find(text, b"\" :").is_some()
}

/// Blanks, in place, the keys of JSON objects in `text` (each quoted
/// string a colon follows, quotes included) with spaces, keeping every
/// other byte where it was. A tool's input and output are stored as
/// JSON, whose keys (`oldStart`, `userModified`) are the tool's words, not
/// the memory's: the index and the ranking see only the values. Returns
/// whether anything was blanked.
pub fn blank_json_keys(text: &mut [u8]) -> bool {
    use memchr::{memchr, memchr2};
    if !may_hold_json_keys(text) {
        return false;
    }
    let mut changed = false;
    let mut at = 0;
    while let Some(open) = memchr(b'"', &text[at..]).map(|i| at + i) {
        let mut end = open + 1;
        let close = loop {
            match memchr2(b'"', b'\\', text.get(end..).unwrap_or_default()).map(|i| end + i) {
                None => return changed,
                Some(escape) if text[escape] == b'\\' => end = escape + 2,
                Some(quote) => break quote,
            }
        };
        let next = close + 1 + text[close + 1..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        if text.get(next) == Some(&b':') {
            text[open..=close].fill(b' ');
            changed = true;
            at = next + 1;
        } else {
            at = close + 1;
        }
    }
    changed
}

/// The language a session is told in: its summaries' section titles, and
/// the memory a later prompt is given of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    English,
    Chinese,
}

/// Section titles, in a session's language (`Language::labels`).
#[derive(Debug)]
pub struct Labels {
    pub asked: &'static str,
    pub concluded: &'static str,
    pub tools: &'static str,
    pub errors: &'static str,
    pub and_more: &'static str,
}

const ENGLISH: Labels =
    Labels { asked: "Asked", concluded: "Concluded", tools: "Tools", errors: "Errors", and_more: "more" };
const CHINESE: Labels =
    Labels {
        asked: "用户请求", concluded: "结论与决定", tools: "工具操作", errors: "错误", and_more: "更多"
    };

impl Language {
    /// The language of a session that asked `prompts`: Chinese when they
    /// are mostly Chinese (by letters, not bytes), else English.
    pub fn of_prompts(prompts: &[String]) -> Language {
        let (mut han, mut letters) = (0usize, 0usize);
        for c in prompts.iter().flat_map(|t| t.chars()) {
            if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                han += 1;
                letters += 1;
            } else if c.is_alphabetic() {
                letters += 1;
            }
        }
        if letters > 0 && han * 3 >= letters { Language::Chinese } else { Language::English }
    }

    pub fn labels(self) -> &'static Labels {
        match self {
            Language::English => &ENGLISH,
            Language::Chinese => &CHINESE,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_clip_at_a_sentence_ends_where_a_sentence_does_and_not_inside_a_version() {
        let text = "The first sentence is here. Then more words follow";
        assert_eq!(clip_at_sentence(text, 35), "The first sentence is here.…");
        assert_eq!(clip_at_sentence(text, 100), text);
        assert_eq!(clip_at_sentence("Use v1.2 of the crate and more words here", 12), "Use v1.2 of…");
        assert_eq!(clip_at_sentence("第一句话。第二句话很长很长很长", 8), "第一句话。…");
    }

    use super::*;

    #[test]
    fn a_session_is_told_in_the_language_most_of_its_prompts_are_in() {
        let of = |prompts: &[&str]| Language::of_prompts(&prompts.iter().map(|p| p.to_string()).collect::<Vec<_>>());
        assert_eq!(of(&["请修复数据缓存的超时问题"]), Language::Chinese);
        assert_eq!(of(&["修复 the cache timeout"]), Language::English);
        assert_eq!(of(&["fix it", "把 cache 的超时改成三十秒"]), Language::Chinese);
        assert_eq!(of(&[]), Language::English);
        assert_eq!(Language::Chinese.labels().asked, "用户请求");
    }

    #[test]
    fn clips_by_characters_and_marks_the_cut() {
        assert_eq!(clip("hello", 10), "hello");
        assert_eq!(clip("hello", 5), "hello");
        assert_eq!(clip("hello world", 5), "hell…");
        assert_eq!(clip("数据缓存很重要", 4), "数据缓…");
        assert_eq!(clip("🙂🙂🙂", 2), "🙂…");
        assert_eq!(clip("abc", 0), "");
    }

    #[test]
    fn clips_huge_json_without_serializing_it_all() {
        let value = serde_json::json!({"stdout": "x".repeat(1_000_000)});
        let clipped = clip_json(&value, 100);
        assert_eq!(clipped.chars().count(), 100);
        assert!(clipped.starts_with("{\"stdout\":\"xxx"));
        assert!(clipped.ends_with('…'));
    }

    #[test]
    fn json_keys_are_blanked_and_values_kept() {
        let mut text =
            br#"{"file_path":"/src/start.rs","oldStart": 3, "nested" : {"userModified":false,"say":"a \"q\": b"}}"#
                .to_vec();
        assert!(blank_json_keys(&mut text));
        let text = String::from_utf8(text).unwrap();
        for key in ["file_path", "oldStart", "nested", "userModified", "say"] {
            assert!(!text.contains(key), "{key} in {text}");
        }
        for value in ["/src/start.rs", "3", "false", r#"a \"q\": b"#] {
            assert!(text.contains(value), "{value} not in {text}");
        }
        let mut prose = b"the program dies at start: the config is gone".to_vec();
        assert!(!blank_json_keys(&mut prose));
        let mut open = br#"an "unclosed": quote and "another"#.to_vec();
        blank_json_keys(&mut open);
        assert_eq!(String::from_utf8(open).unwrap(), format!("an {}: quote and \"another", " ".repeat(10)));
    }
}
