//! Privacy, applied to every text of a payload before anything else sees it:
//! `<private>…</private>` is removed, and secrets are redacted.
//!
//! Each secret pattern keeps a sample it must match beside it, tested both
//! bare and inside other text. Patterns are compiled only when a cheap
//! literal scan says they could match, which keeps a hook's start-up fast.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use anyhow::{Context, Result};
use regex::Regex;
use serde_json::Value;

use crate::store::PRIVATE_PLACEHOLDER;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// A built-in secret pattern: a literal that any match contains (lowercase),
/// the expression, and a sample it must match.
struct Pattern {
    hint: &'static str,
    regex: &'static str,
    /// Capture groups kept around the secret, such as `password=`.
    keep: &'static str,
    #[cfg_attr(not(test), allow(dead_code))]
    sample: &'static str,
}

const PATTERNS: &[Pattern] = &[
    Pattern { hint: "akia", regex: r"\bAKIA[0-9A-Z]{16}\b", keep: "", sample: "AKIAIOSFODNN7EXAMPLE" },
    Pattern { hint: "asia", regex: r"\bASIA[0-9A-Z]{16}\b", keep: "", sample: "ASIAIOSFODNN7EXAMPLE" },
    Pattern {
        hint: "gh",
        regex: r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        keep: "",
        sample: "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    },
    Pattern {
        hint: "github_pat_",
        regex: r"\bgithub_pat_[A-Za-z0-9_]{22,}\b",
        keep: "",
        sample: "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    },
    Pattern {
        hint: "xox",
        regex: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        keep: "",
        sample: "xoxb-123456789012-abcdefghijkl",
    },
    Pattern {
        hint: "hooks.slack.com",
        regex: r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+",
        keep: "",
        sample: "https://hooks.slack.com/services/T000/B000/XXXXXXXX",
    },
    Pattern {
        hint: "private key",
        regex: r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        keep: "",
        sample: "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    },
    Pattern {
        hint: "bearer",
        regex: r"(?i)(bearer\s+)[A-Za-z0-9\-._~+/]{8,}=*",
        keep: "$1",
        sample: "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
    },
    Pattern {
        hint: "",
        regex: r#"(?i)((?:api[_-]?key|apikey|secret|token|password|passwd|pwd)["']?\s*[:=]\s*["']?)[^\s"'&,;]{3,}"#,
        keep: "$1",
        sample: "api_key=sk-live-1234567890",
    },
];

/// Hints of the assignment pattern: any of these words may be followed by `=` or `:`.
const ASSIGNMENT_HINTS: &[&str] = &["key", "secret", "token", "password", "passwd", "pwd"];

/// The privacy filter for one process: built-in patterns plus the user's.
pub struct Privacy {
    redact: bool,
    extra: Vec<Regex>,
}

impl Privacy {
    /// `extra` are the config's `secret_patterns`.
    pub fn new(redact: bool, extra: &[String]) -> Result<Self> {
        let extra = extra
            .iter()
            .map(|p| {
                Regex::new(p)
                    .with_context(|| format!("[privacy] secret_patterns: {p:?} is not a valid regular expression"))
            })
            .collect::<Result<_>>()?;
        Ok(Self { redact, extra })
    }

    /// Scrubs every string in a JSON value, in place. Returns whether any
    /// string was wholly private (and so became `[PRIVATE]`).
    pub fn scrub_value(&self, value: &mut Value) -> bool {
        match value {
            Value::String(s) => {
                let (clean, private) = self.scrub(s);
                *s = clean;
                private
            }
            Value::Array(items) => items.iter_mut().fold(false, |any, v| self.scrub_value(v) | any),
            Value::Object(map) => map.values_mut().fold(false, |any, v| self.scrub_value(v) | any),
            _ => false,
        }
    }

    /// Removes private spans and redacts secrets. A text that had private
    /// spans and nothing else becomes `[PRIVATE]`, and `true` says so.
    pub fn scrub(&self, text: &str) -> (String, bool) {
        let (mut out, had_private) = strip_private(text);
        if had_private && out.trim().is_empty() {
            return (PRIVATE_PLACEHOLDER.to_owned(), true);
        }
        if self.redact {
            out = redact_builtin(&out);
            for regex in &self.extra {
                if let std::borrow::Cow::Owned(replaced) = regex.replace_all(&out, REDACTED) {
                    out = replaced;
                }
            }
        }
        (out, false)
    }
}

/// Removes `<private>…</private>` spans (any case, across lines). An
/// unclosed `<private>` hides everything after it: better too much than a leak.
fn strip_private(text: &str) -> (String, bool) {
    const OPEN: &str = "<private>";
    const CLOSE: &str = "</private>";
    let lower = text.to_ascii_lowercase();
    if !lower.contains(OPEN) {
        return (text.to_owned(), false);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(start) = lower[at..].find(OPEN).map(|i| at + i) {
        out.push_str(&text[at..start]);
        match lower[start..].find(CLOSE) {
            Some(end) => at = start + end + CLOSE.len(),
            None => {
                at = text.len();
                break;
            }
        }
    }
    out.push_str(&text[at..]);
    (out, true)
}

fn compiled() -> &'static Vec<OnceLock<Regex>> {
    static REGEXES: OnceLock<Vec<OnceLock<Regex>>> = OnceLock::new();
    REGEXES.get_or_init(|| PATTERNS.iter().map(|_| OnceLock::new()).collect())
}

/// The literal hints of every pattern, found in one pass over a text.
struct Hints {
    matcher: AhoCorasick,
    words: Vec<&'static str>,
}

fn hints() -> &'static Hints {
    static HINTS: OnceLock<Hints> = OnceLock::new();
    HINTS.get_or_init(|| {
        let words: Vec<&'static str> =
            PATTERNS.iter().map(|p| p.hint).filter(|h| !h.is_empty()).chain(ASSIGNMENT_HINTS.iter().copied()).collect();
        let matcher = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            // A hook builds this once and scans a few kilobytes: building a DFA
            // would cost more than it saves.
            .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
            .build(&words)
            .expect("literal hints build");
        Hints { matcher, words }
    })
}

fn redact_builtin(text: &str) -> String {
    let hints = hints();
    let found: Vec<&str> =
        hints.matcher.find_overlapping_iter(text).map(|m| hints.words[m.pattern().as_usize()]).collect();
    if found.is_empty() {
        return text.to_owned();
    }
    let mut out = text.to_owned();
    for (i, pattern) in PATTERNS.iter().enumerate() {
        let relevant = if pattern.hint.is_empty() {
            found.iter().any(|f| ASSIGNMENT_HINTS.contains(f))
        } else {
            found.contains(&pattern.hint)
        };
        if !relevant {
            continue;
        }
        let regex = compiled()[i].get_or_init(|| Regex::new(pattern.regex).expect("built-in pattern compiles"));
        let replacement = format!("{}{REDACTED}", pattern.keep);
        if let std::borrow::Cow::Owned(replaced) = regex.replace_all(&out, replacement.as_str()) {
            out = replaced;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn privacy() -> Privacy {
        Privacy::new(true, &[]).unwrap()
    }

    #[test]
    fn every_pattern_redacts_its_sample_bare_and_embedded() {
        for pattern in PATTERNS {
            let (bare, _) = privacy().scrub(pattern.sample);
            assert!(bare.contains(REDACTED), "{} not redacted: {bare}", pattern.regex);
            let embedded = format!("before {} after", pattern.sample);
            let (out, _) = privacy().scrub(&embedded);
            assert!(out.starts_with("before ") && out.ends_with(" after"), "{out}");
            assert!(out.contains(REDACTED), "{out}");
        }
    }

    #[test]
    fn keeps_the_name_of_what_was_redacted() {
        assert_eq!(privacy().scrub("export PASSWORD=hunter22 now").0, "export PASSWORD=[REDACTED] now");
        assert_eq!(privacy().scrub(r#"{"api_key": "abcdef123"}"#).0, r#"{"api_key": "[REDACTED]"}"#);
        assert_eq!(privacy().scrub("Authorization: Bearer abcdefgh12345").0, "Authorization: Bearer [REDACTED]");
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for text in ["the tokenizer is trigram", "monkey business", "数据缓存", "password reset flow works"] {
            assert_eq!(privacy().scrub(text).0, text);
        }
    }

    #[test]
    fn strips_private_spans() {
        assert_eq!(privacy().scrub("a <private>secret</private> b"), ("a  b".to_owned(), false));
        assert_eq!(privacy().scrub("a <PRIVATE>x\ny</Private>b"), ("a b".to_owned(), false));
        assert_eq!(privacy().scrub("keep <private>unclosed tail"), ("keep ".to_owned(), false));
        assert_eq!(privacy().scrub("<private>all of it</private>"), ("[PRIVATE]".to_owned(), true));
    }

    #[test]
    fn user_patterns_are_redacted_and_bad_ones_named() {
        let p = Privacy::new(true, &["acme_[0-9a-f]{8}".to_owned()]).unwrap();
        assert_eq!(p.scrub("id acme_deadbeef ok").0, "id [REDACTED] ok");
        let err = Privacy::new(true, &["(".to_owned()]).err().unwrap();
        assert!(format!("{err:#}").contains("secret_patterns"));
    }

    #[test]
    fn scrubs_nested_json_strings() {
        let mut v = serde_json::json!({"a": ["<private>x</private>", {"b": "token=abcdef"}]});
        assert!(privacy().scrub_value(&mut v));
        assert_eq!(v, serde_json::json!({"a": ["[PRIVATE]", {"b": "token=[REDACTED]"}]}));
    }
}
