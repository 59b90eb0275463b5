//! Excerpts around the first match, with every match marked.
//!
//! Built here rather than with FTS5's `snippet()` so that all three index
//! modes mark matches the same way, so that a two-character term is marked as
//! itself rather than as the trigram that found it, and because `snippet()`
//! re-tokenizes the text anyway when the index keeps no positions.

use super::query::is_cjk;

/// Marks the start of a match in a snippet.
pub const MARK_START: char = '«';
/// Marks the end of a match in a snippet.
pub const MARK_END: char = '»';

/// Characters of context shown before the first match.
const BEFORE: usize = 48;
/// Characters shown in all.
const WIDTH: usize = 160;

/// A text folded for matching, keeping a one-to-one map to the original.
pub struct Folded {
    chars: Vec<char>,
    folded: Vec<char>,
}

impl Folded {
    pub fn new(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let folded = chars.iter().map(|&c| fold(c)).collect();
        Self { chars, folded }
    }

    /// The start of every non-overlapping occurrence of `needle`.
    fn find_all(&self, needle: &[char]) -> Vec<usize> {
        let mut found = Vec::new();
        if needle.is_empty() {
            return found;
        }
        let mut at = 0;
        while at + needle.len() <= self.folded.len() {
            if self.folded[at] == needle[0] && self.folded[at..at + needle.len()] == needle[..] {
                found.push(at);
                at += needle.len();
            } else {
                at += 1;
            }
        }
        found
    }

    /// An excerpt around the first occurrence of any needle, matches marked
    /// and white space folded. Without a match, the start of the text.
    pub fn snippet(&self, needles: &[Needle]) -> String {
        let mut matched = vec![false; self.chars.len()];
        let mut first: Option<usize> = None;
        for needle in needles {
            for at in self.find_all(&needle.chars) {
                let mut end = at + needle.chars.len();
                if needle.to_word_end {
                    end += self.chars[end..].iter().take_while(|c| c.is_alphanumeric() && !is_cjk(**c)).count();
                }
                matched[at..end].iter_mut().for_each(|m| *m = true);
                first = Some(first.map_or(at, |f| f.min(at)));
            }
        }
        let start = first.map_or(0, |f| f.saturating_sub(BEFORE));
        let end = (start + WIDTH).min(self.chars.len());
        let mut out = String::with_capacity(WIDTH * 3);
        if start > 0 {
            out.push('…');
        }
        let mut in_mark = false;
        let mut last_space = false;
        for (&c, &is_match) in self.chars[start..end].iter().zip(&matched[start..end]) {
            if is_match != in_mark {
                out.push(if is_match { MARK_START } else { MARK_END });
                in_mark = is_match;
            }
            if c.is_whitespace() {
                if !last_space {
                    out.push(' ');
                }
                last_space = true;
            } else {
                out.push(c);
                last_space = false;
            }
        }
        if in_mark {
            out.push(MARK_END);
        }
        if end < self.chars.len() {
            out.push('…');
        }
        out.trim().to_owned()
    }
}

/// What to mark: text folded the way `Folded` folds text.
pub struct Needle {
    chars: Vec<char>,
    /// A stem: the mark runs on to the end of the word (`«fixed»`, not `«fix»ed`).
    to_word_end: bool,
}

/// Folds what to mark, each with whether it is a stem.
pub fn needles<'a>(terms: impl IntoIterator<Item = (&'a str, bool)>) -> Vec<Needle> {
    terms
        .into_iter()
        .map(|(t, to_word_end)| Needle { chars: t.chars().map(fold).collect(), to_word_end })
        .filter(|n| !n.chars.is_empty())
        .collect()
}

/// One-to-one case folding, so folded and original text line up by index.
fn fold(c: char) -> char {
    if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        let mut lower = c.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(l), None) => l,
            _ => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(text: &str, terms: &[&str]) -> String {
        Folded::new(text).snippet(&needles(terms.iter().map(|t| (*t, false))))
    }

    #[test]
    fn marks_every_match_case_insensitively() {
        assert_eq!(make("Database is locked; the database", &["database"]), "«Database» is locked; the «database»");
    }

    #[test]
    fn marks_short_chinese_terms_exactly() {
        assert_eq!(make("启用数据缓存以后", &["缓存"]), "启用数据«缓存»以后");
    }

    #[test]
    fn windows_long_text_around_the_first_match() {
        let text = format!("{}needle{}", "x".repeat(500), "y".repeat(500));
        let snippet = make(&text, &["needle"]);
        assert!(snippet.starts_with('…') && snippet.ends_with('…'));
        assert!(snippet.contains("«needle»"));
        assert_eq!(snippet.chars().count(), WIDTH + 4);
    }

    #[test]
    fn folds_white_space() {
        assert_eq!(make("a\n\n  b", &[]), "a b");
    }
}
