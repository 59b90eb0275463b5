//! Ranking: how well a row answers a query, from how often it holds each
//! term and how rare those terms are.
//!
//! The rules, in the spirit of Meilisearch's ranking that degrades
//! gracefully:
//! - BM25 over the terms a row holds, each weighted by its rarity;
//! - rows with every term come first, then rows with most of the query's
//!   weight; the rest follow, scaled by the share of the query's weight the
//!   row holds within a sentence or two (a long row that has the words far
//!   apart merely contains them);
//! - a term found inside a longer word (`test` in `latest`) counts less than
//!   one found as a word of its own, and a form with an inflection (`tests`)
//!   in between;
//! - rows that state something (an answer, a summary, an error) are not
//!   outweighed by long tool rows that merely contain the words, nor by a
//!   prompt that repeats the query's words: a question is not its answer;
//! - newer first when all else is equal.

use memchr::memmem::Finder;

use super::query::{Needle, Shape};

/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// How much an occurrence counts, by where it is found.
const WHOLE_WORD: f64 = 1.0;
const INFLECTED: f64 = 0.8;
const WORD_START: f64 = 0.4;
const INSIDE_WORD: f64 = 0.2;
/// An identifier or path found inside a longer one (`open_store` in `reopen_store`).
const INSIDE_IDENTIFIER: f64 = 0.5;

/// The share of the query's weight a row holds is raised to this power: a
/// row missing a rare term falls well behind one that has it.
const COVERAGE_POWER: f64 = 2.0;

/// A tool row's score is scaled by this, beside rows that state something.
const TOOL_ROW: f64 = 0.8;

/// A question's score is scaled by this, and having every term does not
/// put it first: asking "how did we fix the crash?" with the query's own
/// words says nothing of the fix. A row that states something and holds
/// this share of the query's weight ranks above any question.
const QUESTION: f64 = 0.3;
const MOST_OF_THE_QUERY: f64 = 0.5;

/// Endings that make a word another form of its stem.
const INFLECTIONS: &[&[u8]] = &[
    b"s", b"es", b"ed", b"d", b"ing", b"er", b"ers", b"ion", b"ions", b"ation", b"ations", b"ly", b"ment", b"ments",
    b"ness", b"y", b"ies", b"ied", b"e", b"al", b"ity", b"ive", b"ure", b"ures", b"or", b"ors", b"able",
];

/// How one row holds one term.
#[derive(Debug, Clone, PartialEq)]
pub struct Count {
    /// Occurrences of the term's best form, each counted by where it is
    /// found and weighted by the form; 0 when absent.
    pub tf: f64,
    /// Which of the term's forms that was.
    pub found: Option<usize>,
    /// Where its forms occur (byte offsets, the first `MAX_POSITIONS`).
    pub positions: Vec<u32>,
}

/// Terms count as said together when they fall within this many bytes: a
/// sentence or two. A long row that holds the words far apart merely
/// contains them; a statement says them together.
const WINDOW: u32 = 240;

/// Occurrences of a term kept for finding the window, per row.
const MAX_POSITIONS: usize = 64;

/// A row to rank.
#[derive(Debug, Clone)]
pub struct Document {
    /// The caller's name for the row, handed back by `rank`.
    pub key: usize,
    /// Bytes of text.
    pub length: usize,
    /// Unix milliseconds.
    pub ts: i64,
    pub voice: Voice,
    /// One per query term.
    pub counts: Vec<Count>,
}

/// What a row does with its words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Voice {
    /// An answer, a decision, a note, an error, a summary.
    States,
    /// A tool call and its output, which may merely contain the words.
    Tool,
    /// A prompt, or the summary of a session that only asked memory.
    Asks,
}

/// A row's place in the ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub key: usize,
    pub score: f64,
    /// The share of the query's weight the row holds, from 0 to 1.
    pub coverage: f64,
}

/// Ranks rows best first. `weights` are the terms' rarities, one per count.
pub fn rank(documents: &[Document], weights: &[f64]) -> Vec<Ranked> {
    let mean_length =
        (documents.iter().map(|d| d.length).sum::<usize>() as f64 / documents.len().max(1) as f64).max(1.0);
    let total: f64 = weights.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let mut ranked: Vec<(Ranked, Tier, i64)> = documents
        .iter()
        .map(|d| {
            let norm = K1 * (1.0 - B + B * d.length as f64 / mean_length);
            let bm25: f64 = d.counts.iter().zip(weights).map(|(c, w)| w * c.tf * (K1 + 1.0) / (c.tf + norm)).sum();
            let kind = match d.voice {
                Voice::States => 1.0,
                Voice::Tool => TOOL_ROW,
                Voice::Asks => QUESTION,
            };
            let coverage = held_together(&d.counts, weights) / total;
            let tier = match d.voice {
                Voice::Asks => Tier::Rest,
                _ if d.counts.iter().all(|c| c.tf > 0.0) => Tier::EveryTerm,
                _ if coverage >= MOST_OF_THE_QUERY => Tier::MostTerms,
                _ => Tier::Rest,
            };
            (Ranked { key: d.key, score: bm25 * coverage.powf(COVERAGE_POWER) * kind, coverage }, tier, d.ts)
        })
        .collect();
    ranked.sort_by(|a, b| a.1.cmp(&b.1).then(b.0.score.total_cmp(&a.0.score)).then(b.2.cmp(&a.2)));
    ranked.into_iter().map(|(ranked, _, _)| ranked).collect()
}

/// Where a row ranks before its score is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    /// It states something, with every term.
    EveryTerm,
    /// It states something, with most of the query's weight held together.
    MostTerms,
    /// The rest, questions among them.
    Rest,
}

/// The most weight of distinct terms found within one `WINDOW` of a row.
fn held_together(counts: &[Count], weights: &[f64]) -> f64 {
    let mut occurrences: Vec<(u32, usize)> =
        counts.iter().enumerate().flat_map(|(term, c)| c.positions.iter().map(move |&at| (at, term))).collect();
    occurrences.sort_unstable();
    let mut inside = vec![0usize; counts.len()];
    let (mut held, mut best, mut start) = (0.0, 0.0_f64, 0);
    for &(at, term) in &occurrences {
        if inside[term] == 0 {
            held += weights[term];
        }
        inside[term] += 1;
        while occurrences[start].0 + WINDOW < at {
            let leaving = occurrences[start].1;
            inside[leaving] -= 1;
            if inside[leaving] == 0 {
                held -= weights[leaving];
            }
            start += 1;
        }
        best = best.max(held);
    }
    best
}

/// Counts each term's forms in texts.
pub struct Counter {
    terms: Vec<Vec<Form>>,
    /// No form has a letter with case outside ASCII (Chinese has none), so
    /// folding ASCII letters is enough to find them.
    ascii_fold: bool,
}

/// One needle, ready to be found.
struct Form {
    finder: Finder<'static>,
    shape: Shape,
    weight: f64,
}

impl Counter {
    /// A counter for terms given as their forms.
    pub fn new(terms: Vec<Vec<&Needle>>) -> Self {
        let ascii_fold =
            terms.iter().flatten().flat_map(|n| n.text.chars()).all(|c| c.is_ascii() || c.to_uppercase().eq([c]));
        let terms = terms
            .into_iter()
            .map(|forms| {
                forms
                    .into_iter()
                    .map(|n| Form {
                        finder: Finder::new(n.text.as_bytes()).into_owned(),
                        shape: n.shape.clone(),
                        weight: n.weight,
                    })
                    .collect()
            })
            .collect();
        Self { terms, ascii_fold }
    }

    /// How `text` holds each term.
    pub fn count(&self, text: &[u8]) -> Vec<Count> {
        let folded = if self.ascii_fold {
            text.to_ascii_lowercase()
        } else {
            String::from_utf8_lossy(text).to_lowercase().into_bytes()
        };
        // As the index does: a JSON key is the tool's word, not the memory's.
        let mut folded = folded;
        crate::text::blank_json_keys(&mut folded);
        self.terms
            .iter()
            .map(|forms| {
                let mut best = Count { tf: 0.0, found: None, positions: Vec::new() };
                for (i, form) in forms.iter().enumerate() {
                    let len = form.finder.needle().len();
                    let mut tf = 0.0;
                    for at in form.finder.find_iter(&folded) {
                        tf += credit(&folded, at, len, &form.shape) * form.weight;
                        if best.positions.len() < MAX_POSITIONS {
                            best.positions.push(at as u32);
                        }
                    }
                    if tf > best.tf {
                        best.tf = tf;
                        best.found = Some(i);
                    }
                }
                best
            })
            .collect()
    }
}

/// How much the occurrence of a `len`-byte form at `at` in `text` counts.
fn credit(text: &[u8], at: usize, len: usize, shape: &Shape) -> f64 {
    let end = at + len;
    match shape {
        Shape::Cjk => WHOLE_WORD,
        Shape::Exact => {
            let part_of_name = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
            let alone = (at == 0 || !part_of_name(&text[at - 1])) && text.get(end).is_none_or(|b| !part_of_name(b));
            if alone { WHOLE_WORD } else { INSIDE_IDENTIFIER }
        }
        Shape::Word { whole } => {
            if at > 0 && text[at - 1].is_ascii_alphanumeric() {
                return INSIDE_WORD;
            }
            let tail_len = text[end..].iter().take_while(|b| b.is_ascii_alphanumeric()).count();
            let word = &text[at..end + tail_len];
            if tail_len == 0 || word == whole.as_bytes() {
                WHOLE_WORD
            } else if is_inflection(&text[end..end + tail_len], text[end - 1]) {
                INFLECTED
            } else {
                WORD_START
            }
        }
    }
}

/// Whether `tail`, after a stem ending in `last`, makes another form of
/// the word: `s`, `ing`, `ed`, also after a doubled consonant (`stopped`)
/// or a `k` after `c` (`panicked`).
fn is_inflection(tail: &[u8], last: u8) -> bool {
    let doubled = tail.first().is_some_and(|&b| b == last || (last == b'c' && b == b'k'));
    INFLECTIONS.contains(&tail) || (doubled && INFLECTIONS.contains(&&tail[1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::query::understand;

    fn tf(query: &str, text: &str) -> Vec<f64> {
        let query = understand(query);
        let counter = Counter::new(query.terms.iter().map(|t| t.needles.iter().collect()).collect());
        counter.count(text.as_bytes()).into_iter().map(|c| c.tf).collect()
    }

    #[test]
    fn whole_words_count_more_than_pieces_of_longer_ones() {
        assert_eq!(tf("test", "run the test"), [WHOLE_WORD]);
        assert_eq!(tf("test", "tests/hook.rs"), [INFLECTED]);
        assert_eq!(tf("test", "testament"), [WORD_START]);
        assert_eq!(tf("test", "the latest"), [INSIDE_WORD]);
        assert_eq!(tf("tests", "TESTS pass"), [WHOLE_WORD]);
    }

    #[test]
    fn identifiers_count_most_when_whole() {
        assert_eq!(tf("open_store", "call open_store()"), [WHOLE_WORD]);
        assert_eq!(tf("open_store", "reopen_store"), [INSIDE_IDENTIFIER]);
    }

    #[test]
    fn the_best_form_of_a_term_counts_once() {
        // "crash" is not there; its synonym "panic" is, at a synonym's weight.
        let got = tf("crash", "it panicked, then panicked again");
        assert_eq!(got.len(), 1);
        assert!((got[0] - 2.0 * INFLECTED * crate::recall::query::SYNONYM_WEIGHT).abs() < 1e-9, "{got:?}");
    }

    fn document(key: usize, length: usize, voice: Voice, tfs: &[f64]) -> Document {
        let counts = tfs
            .iter()
            .map(|&tf| Count { tf, found: (tf > 0.0).then_some(0), positions: if tf > 0.0 { vec![0] } else { vec![] } })
            .collect();
        Document { key, length, ts: key as i64, voice, counts }
    }

    #[test]
    fn rows_with_every_term_come_first_then_the_weightiest() {
        let documents = [
            document(0, 100, Voice::States, &[1.0, 0.0, 0.0]),
            document(1, 100, Voice::States, &[1.0, 1.0, 1.0]),
            document(2, 100, Voice::States, &[0.0, 1.0, 1.0]),
        ];
        let order: Vec<usize> = rank(&documents, &[1.0, 3.0, 3.0]).into_iter().map(|r| r.key).collect();
        assert_eq!(order, [1, 2, 0]);
    }

    #[test]
    fn a_short_statement_beats_a_long_tool_row_with_the_same_words() {
        let documents = [document(0, 3000, Voice::Tool, &[2.0, 2.0]), document(1, 120, Voice::States, &[1.0, 1.0])];
        assert_eq!(rank(&documents, &[2.0, 2.0])[0].key, 1);
    }

    #[test]
    fn an_answer_with_most_of_the_words_beats_a_question_with_all_of_them() {
        // "how did we fix the crash when the config file was missing": the
        // question repeats every term; the answer says "absent", not "missing".
        let weights = [1.0, 2.0, 2.0, 1.0, 1.5];
        let documents = [
            document(0, 60, Voice::Asks, &[1.0, 1.0, 1.0, 1.0, 1.0]),
            document(1, 140, Voice::States, &[0.8, 1.0, 1.0, 1.0, 0.0]),
        ];
        assert_eq!(rank(&documents, &weights)[0].key, 1);
    }

    #[test]
    fn ties_go_to_the_newest() {
        let documents = [document(0, 100, Voice::States, &[1.0]), document(1, 100, Voice::States, &[1.0])];
        assert_eq!(rank(&documents, &[1.0])[0].key, 1);
    }
}
