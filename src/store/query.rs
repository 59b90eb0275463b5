//! Turns the raw text a person or agent typed into an index query that can
//! never be a syntax error.
//!
//! The rules: words separated by spaces must all match, in any order; text in
//! double quotes must match as written. Every term is quoted before it reaches
//! FTS5, so `OR`, `NOT`, `(`, `*`, `:` and `-` are just characters to find.

use anyhow::Result;
use rusqlite::{Connection, params};

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

/// The most vocabulary entries one short term expands to. A single common
/// letter can begin thousands of trigrams; past this the rarest are dropped.
const MAX_EXPANSION: usize = 2048;

/// Builds the FTS5 `MATCH` expression for each of `terms`, or `None` when
/// some term cannot match anything (so no AND of them can). Join them with
/// " AND " to match all.
pub fn fts_expressions(conn: &Connection, mode: IndexMode, terms: &[Term]) -> Result<Option<Vec<String>>> {
    let mut parts = Vec::with_capacity(terms.len());
    for term in terms {
        let part = match mode {
            IndexMode::Trigram if term.text.chars().count() < 3 => {
                let alternatives = short_term_trigrams(conn, &term.text)?;
                if alternatives.is_empty() {
                    return Ok(None);
                }
                let quoted: Vec<String> = alternatives.iter().map(|t| fts_string(t)).collect();
                format!("({})", quoted.join(" OR "))
            }
            IndexMode::Trigram => {
                let trigrams: Vec<String> = trigrams(&term.text).iter().map(|t| fts_string(t)).collect();
                format!("({})", trigrams.join(" AND "))
            }
            IndexMode::Unicode61 => {
                if !term.text.chars().any(char::is_alphanumeric) {
                    // Nothing in it is a word character, so no token can match.
                    return Ok(None);
                }
                if term.phrase { fts_string(&term.text) } else { format!("{} *", fts_string(&term.text)) }
            }
            IndexMode::Like => unreachable!("the LIKE mode builds no FTS expression"),
        };
        parts.push(part);
    }
    Ok(Some(parts))
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

/// The trigram tokenizer cannot match fewer than three characters, but every
/// character of an indexed text begins some trigram (the index appends two
/// spaces). So the trigrams that begin with a short term are exactly the
/// places it occurs; a range scan of the vocabulary finds them.
fn short_term_trigrams(conn: &Connection, term: &str) -> Result<Vec<String>> {
    let low = term.to_lowercase();
    let high = format!("{low}{}", char::MAX);
    let mut stmt = conn.prepare_cached(
        "SELECT term FROM observations_fts_vocab WHERE term >= ?1 AND term < ?2
         ORDER BY doc DESC LIMIT ?3",
    )?;
    let terms = stmt
        .query_map(params![low, high, MAX_EXPANSION as i64], |row| row.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(terms)
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
