//! Chinese words glossed in English, so that a Chinese question meets
//! English memory: "缓存过期" finds a row that says "cache expiry". The
//! glosses are CC-CEDICT's (`dictionaries/`, CC BY-SA 4.0, derived by
//! `scripts/gloss/derive.py`), and `query` adds them to a Chinese term as
//! it adds a synonym.

/// `word<TAB>gloss words` lines, sorted by the word's bytes.
const DICTIONARY: &str = include_str!("../../dictionaries/cc-cedict-gloss.tsv");

/// The longest word the dictionary holds, in characters.
const LONGEST: usize = 6;

/// A dictionary word found in a run of Chinese.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word {
    /// Where it starts, in characters of the run.
    pub start: usize,
    /// Its length in characters, 2 or more.
    pub len: usize,
    /// Its English glosses, separated by spaces.
    pub gloss: &'static str,
}

impl Word {
    /// Holds the characters `start..end` of the run.
    pub fn holds(&self, start: usize, end: usize) -> bool {
        self.start <= start && end <= self.start + self.len
    }
}

/// The dictionary's words in `run`, taken longest first from the left (the
/// usual way to cut Chinese without a model); characters in no word of two
/// or more are skipped.
pub fn words(run: &[char]) -> Vec<Word> {
    let mut found = Vec::new();
    let mut key = String::new();
    let mut start = 0;
    while start < run.len() {
        let longest = (2..=LONGEST.min(run.len() - start)).rev().find_map(|len| {
            key.clear();
            key.extend(&run[start..start + len]);
            lookup(&key).map(|gloss| Word { start, len, gloss })
        });
        match longest {
            Some(word) => {
                start += word.len;
                found.push(word);
            }
            None => start += 1,
        }
    }
    found
}

/// The glosses of `word`, by a binary search of the dictionary's text as it
/// is: no table is built, since building one for 81,767 lines cost a
/// search's process 6 ms, more than the search itself.
fn lookup(word: &str) -> Option<&'static str> {
    let text = DICTIONARY.as_bytes();
    let (mut low, mut high) = (0, text.len());
    while low < high {
        let middle = low + (high - low) / 2;
        // The line that holds `middle`.
        let start = memchr::memrchr(b'\n', &text[..middle]).map_or(0, |at| at + 1);
        let end = memchr::memchr(b'\n', &text[middle..]).map_or(text.len(), |at| middle + at);
        let line = &DICTIONARY[start..end];
        let (key, gloss) = line.split_once('\t')?;
        match key.as_bytes().cmp(word.as_bytes()) {
            std::cmp::Ordering::Equal => return Some(gloss),
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dictionary_is_sorted_and_every_line_has_a_gloss() {
        let lines: Vec<&str> = DICTIONARY.lines().collect();
        assert!(lines.len() > 50_000, "{} words", lines.len());
        assert!(lines.windows(2).all(|w| w[0].split('\t').next() < w[1].split('\t').next()));
        for line in lines {
            let (word, gloss) = line.split_once('\t').expect("word<TAB>gloss");
            assert!((2..=LONGEST).contains(&word.chars().count()), "{line}");
            assert!(!gloss.trim().is_empty(), "{line}");
            assert_eq!(lookup(word), Some(gloss), "{line}");
        }
        for absent in ["", "挂掉", "\u{10FFFF}\u{10FFFF}", "一一一一一一一"] {
            assert_eq!(lookup(absent), None, "{absent}");
        }
    }

    #[test]
    fn longest_words_first_with_their_glosses() {
        let run: Vec<char> = "库存查询的缓存过期时间".chars().collect();
        let found: Vec<(String, &str)> =
            words(&run).iter().map(|w| (run[w.start..w.start + w.len].iter().collect(), w.gloss)).collect();
        let names: Vec<&str> = found.iter().map(|(w, _)| w.as_str()).collect();
        assert_eq!(names, ["库存", "查询", "缓存", "过期", "时间"]);
        assert!(found[0].1.contains("inventory"), "{found:?}");
        assert!(found[2].1.contains("cache"), "{found:?}");
        assert!(found[3].1.contains("expire"), "{found:?}");
    }
}
