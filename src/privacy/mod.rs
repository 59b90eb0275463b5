//! Privacy, applied to every text of a payload before anything else sees it:
//! `<private>…</private>` is removed, and secrets are redacted.
//!
//! The secret formats are in `rules`, each beside a sample it must redact
//! and one it must spare. A rule is compiled only when a cheap literal scan
//! says it could match, which keeps a hook's start-up fast.

mod rules;

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use anyhow::{Context, Result};
use regex::{Captures, Regex};
use serde_json::Value;

use self::rules::RULES;
use crate::store::PRIVATE_PLACEHOLDER;

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

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
                if let Cow::Owned(replaced) = regex.replace_all(&out, REDACTED) {
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

/// The rules' regexes, each compiled the first time a text holds one of its hints.
fn compiled(rule: usize) -> &'static Regex {
    static REGEXES: OnceLock<Vec<OnceLock<Regex>>> = OnceLock::new();
    let regexes = REGEXES.get_or_init(|| RULES.iter().map(|_| OnceLock::new()).collect());
    regexes[rule].get_or_init(|| Regex::new(RULES[rule].regex).expect("built-in rule compiles"))
}

/// The literal hints of every rule, found in one pass over a text.
struct Hints {
    matcher: AhoCorasick,
    /// For each hint, the rules it makes worth running.
    rules: Vec<Vec<usize>>,
}

fn hints() -> &'static Hints {
    static HINTS: OnceLock<Hints> = OnceLock::new();
    HINTS.get_or_init(|| {
        let mut words: Vec<&'static str> = Vec::new();
        let mut rules: Vec<Vec<usize>> = Vec::new();
        for (i, rule) in RULES.iter().enumerate() {
            for hint in rule.hints {
                match words.iter().position(|w| w == hint) {
                    Some(at) => rules[at].push(i),
                    None => {
                        words.push(hint);
                        rules.push(vec![i]);
                    }
                }
            }
        }
        let matcher = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            // A hook builds this once and scans a few kilobytes: building a DFA
            // would cost more than it saves.
            .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
            .build(&words)
            .expect("literal hints build");
        Hints { matcher, rules }
    })
}

fn redact_builtin(text: &str) -> String {
    let hints = hints();
    let mut relevant = vec![false; RULES.len()];
    for found in hints.matcher.find_overlapping_iter(text) {
        for &rule in &hints.rules[found.pattern().as_usize()] {
            relevant[rule] = true;
        }
    }
    let mut out = Cow::Borrowed(text);
    for (i, rule) in RULES.iter().enumerate().filter(|(i, _)| relevant[*i]) {
        let regex = compiled(i);
        let replaced = match rule.accept {
            None => regex.replace_all(&out, rule.replacement),
            Some(accept) => regex.replace_all(&out, |caps: &Captures<'_>| {
                let mut kept = String::new();
                match caps.name("secret").is_some_and(|secret| accept(secret.as_str())) {
                    true => caps.expand(rule.replacement, &mut kept),
                    false => kept.push_str(&caps[0]),
                }
                kept
            }),
        };
        if let Cow::Owned(replaced) = replaced {
            out = Cow::Owned(replaced);
        }
    }
    out.into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn privacy() -> Privacy {
        Privacy::new(true, &[]).unwrap()
    }

    #[test]
    fn every_rule_redacts_its_sample_and_spares_its_look_alike_bare_and_embedded() {
        for rule in RULES {
            for text in [rule.redacts.to_owned(), format!("use the key {} please", rule.redacts)] {
                let (out, _) = privacy().scrub(&text);
                assert!(out.contains(REDACTED), "{}: not redacted: {out}", rule.name);
            }
            for text in [rule.spares.to_owned(), format!("before {} after", rule.spares)] {
                assert_eq!(privacy().scrub(&text).0, text, "{}: redacted a look-alike", rule.name);
            }
            assert!(rule.replacement.contains(REDACTED), "{}", rule.name);
            assert!(rule.hints.iter().any(|h| rule.redacts.to_lowercase().contains(h)), "{}", rule.name);
        }
    }

    #[test]
    fn redacting_again_changes_nothing() {
        for rule in RULES {
            let once = privacy().scrub(&format!("a {} b", rule.redacts)).0;
            assert_eq!(privacy().scrub(&once).0, once, "{}", rule.name);
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
        let mut v = serde_json::json!({"a": ["<private>x</private>", {"b": "token=abcdef12"}]});
        assert!(privacy().scrub_value(&mut v));
        assert_eq!(v, serde_json::json!({"a": ["[PRIVATE]", {"b": "token=[REDACTED]"}]}));
    }

    /// The recall fixtures are real third-party changelogs, docs and code,
    /// and hold no secret: whatever a rule redacts there is a false positive.
    #[test]
    fn no_rule_redacts_the_recall_fixtures_real_text() {
        let corpus = include_str!("../../tests/fixtures/recall/corpus.jsonl");
        let mut redacted = Vec::new();
        for line in corpus.lines() {
            let row: Value = serde_json::from_str(line).unwrap();
            let text = row["text"].as_str().unwrap();
            let (out, _) = privacy().scrub(text);
            if out != text {
                redacted.push(format!("{}: {out}", row["id"]));
            }
        }
        assert!(corpus.lines().count() > 8000);
        assert!(redacted.is_empty(), "{} false positive(s):\n{}", redacted.len(), redacted.join("\n"));
    }
}
