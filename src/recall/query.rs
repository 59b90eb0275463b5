//! Query understanding: turns what a person or agent typed into weighted
//! terms, each with the ways it may be written in memory.
//!
//! - English words are stemmed (`fixed` finds `fix`, `fixes`, `fixing`),
//!   and stop and question words are dropped while anything else is left.
//! - Identifiers and paths are kept whole, stripped of what pasting adds:
//!   `parse_config()`, `` `open_store` ``, `src/store/mod.rs:120`.
//! - Chinese is cut into overlapping two-character pieces, after its
//!   question and function words are taken out. A dictionary segmenter
//!   was measured: jieba-rs takes 90 ms to load its dictionary (5 ms with
//!   a tenth of it), which a hook that must answer within about 2 ms cannot
//!   pay; two-character pieces, ranked by rarity, find the same rows.
//! - "Quoted text" must match as written.
//! - A term may be written other ways (`crash`, `panic`, `崩溃`): see
//!   `thesaurus`.
//!
//! Every input gives a query; none is a syntax error.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::{gloss, thesaurus};

/// What the query asks for: terms, the rarer the weightier when ranked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    pub terms: Vec<Term>,
}

/// One thing to find, in any of its forms.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The term as it was asked, reported in a hit's `matched`.
    pub label: String,
    /// The forms to look for: first the term's own, then its synonyms.
    pub needles: Vec<Needle>,
    /// Quoted text: a hit must contain it.
    pub required: bool,
}

/// One form of a term, lower case, as it is looked for in text.
#[derive(Debug, Clone, PartialEq)]
pub struct Needle {
    pub text: String,
    pub shape: Shape,
    /// 1 for the term's own form, less for a synonym.
    pub weight: f64,
}

/// How a needle is found in text, which decides how much an occurrence counts.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A stemmed English word, best at the start of a word. `whole` is the
    /// word as asked: finding it, or the stem, as a whole word counts most.
    Word { whole: String },
    /// Kept as written: an identifier, a path, a quoted phrase.
    Exact,
    /// Chinese (or another script without spaces): every occurrence counts.
    Cjk,
}

/// How much a synonym's occurrence counts beside the term's own form.
pub const SYNONYM_WEIGHT: f64 = 0.6;

impl Needle {
    /// The form as a person would write it: the word, not its stem.
    pub fn display(&self) -> &str {
        match &self.shape {
            Shape::Word { whole } => whole,
            Shape::Exact | Shape::Cjk => &self.text,
        }
    }
}

/// Understands raw query text. Empty (or blank) text gives no terms.
pub fn understand(raw: &str) -> Query {
    build(raw, Builder { glosses: true, ..Builder::default() })
}

/// [`understand`], without the English glosses of Chinese terms: for a
/// match that must rest on what was said, not on a dictionary's senses.
pub fn understand_as_said(raw: &str) -> Query {
    build(raw, Builder::default())
}

fn build(raw: &str, mut builder: Builder) -> Query {
    let mut rest = raw;
    while let Some(quote) = rest.find('"') {
        builder.loose(&rest[..quote]);
        let after = &rest[quote + 1..];
        // An unbalanced quote runs to the end.
        let close = after.find('"').unwrap_or(after.len());
        builder.phrase(&after[..close]);
        rest = after.get(close + 1..).unwrap_or("");
    }
    builder.loose(rest);
    builder.finish()
}

/// Collects terms, keeping stop words aside in case nothing else is asked.
#[derive(Default)]
struct Builder {
    terms: Vec<Term>,
    stop_words: Vec<Term>,
    /// Tokens that gave no term (`(`, `*`): looked for as written when
    /// nothing else is asked.
    leftovers: Vec<Term>,
    /// Chinese terms are also found by their English glosses.
    glosses: bool,
}

impl Builder {
    fn phrase(&mut self, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            let shape = if text.chars().any(is_cjk) { Shape::Cjk } else { Shape::Exact };
            self.push(Term { label: text.to_owned(), needles: vec![needle(text, shape)], required: true });
        }
    }

    /// Text outside quotes: words, identifiers and Chinese runs.
    fn loose(&mut self, text: &str) {
        for raw in text.split_whitespace() {
            // Nothing but decoration is looked for as it is.
            let token = Some(strip_decoration(raw)).filter(|t| !t.is_empty()).unwrap_or(raw);
            if !token.chars().any(char::is_alphanumeric) {
                self.leftovers.push(Term {
                    label: raw.to_owned(),
                    needles: vec![needle(raw, Shape::Exact)],
                    required: false,
                });
                continue;
            }
            for (cjk, run) in script_runs(token) {
                // Chinese punctuation (，？) ends a run and is no term of its own.
                let run = run.trim_matches(|c: char| !c.is_ascii() && !c.is_alphanumeric());
                if !run.chars().any(char::is_alphanumeric) {
                    continue;
                }
                if cjk {
                    self.chinese(run);
                } else if is_identifier(run) {
                    self.push(Term {
                        label: run.to_owned(),
                        needles: vec![needle(run, Shape::Exact)],
                        required: false,
                    });
                    if let Some(line) = line_number(raw, run) {
                        self.push(Term {
                            label: line.clone(),
                            needles: vec![needle(&line, Shape::Exact)],
                            required: false,
                        });
                    }
                } else {
                    for word in run.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
                        self.word(word);
                    }
                }
            }
        }
    }

    fn word(&mut self, word: &str) {
        let lower = word.to_lowercase();
        let term = Term { label: lower.clone(), needles: vec![word_needle(&lower)], required: false };
        if STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
            self.stop_words.push(term);
        } else {
            self.push(term);
        }
    }

    /// A run of Chinese: its question and function words out, the rest in
    /// two-character pieces (a lone character stays one). A piece within a
    /// dictionary word is also found in English, by the word's glosses.
    fn chinese(&mut self, run: &str) {
        for segment in without_chinese_stop_words(run) {
            let chars: Vec<char> = segment.chars().collect();
            if chars.len() == 1 {
                self.push(cjk_term(segment));
            }
            let words = if self.glosses { gloss::words(&chars) } else { Vec::new() };
            for (at, pair) in chars.windows(2).enumerate() {
                if pair.iter().any(|c| PARTICLES.contains(*c)) {
                    continue;
                }
                let mut term = cjk_term(&pair.iter().collect::<String>());
                if let Some(word) = words.iter().find(|w| w.holds(at, at + 2)) {
                    for english in word.gloss.split(' ').filter(|w| STOP_WORDS.binary_search(w).is_err()) {
                        let form = word_needle(english);
                        if !term.needles.iter().any(|n| n.text == form.text) {
                            term.needles.push(Needle { weight: SYNONYM_WEIGHT, ..form });
                        }
                    }
                }
                self.push(term);
            }
        }
    }

    fn push(&mut self, term: Term) {
        let first = &term.needles[0].text;
        if !first.is_empty() && !self.terms.iter().any(|t| &t.needles[0].text == first) {
            self.terms.push(term);
        }
    }

    /// The terms, each with its synonyms; stop words only when they are all
    /// there is ("how to" still finds what says it).
    fn finish(mut self) -> Query {
        if self.terms.is_empty() {
            let fallback = if self.stop_words.is_empty() { &mut self.leftovers } else { &mut self.stop_words };
            for term in std::mem::take(fallback) {
                self.push(term);
            }
        }
        for term in &mut self.terms {
            if term.required {
                continue;
            }
            let own = term.needles[0].text.clone();
            if let Some(word) =
                negated_word(&term.label).filter(|_| matches!(term.needles[0].shape, Shape::Word { .. }))
            {
                term.needles.push(Needle { weight: SYNONYM_WEIGHT, ..word_needle(word) });
            }
            let stem = stem(&term.label);
            for synonym in thesaurus::synonyms(&[term.label.as_str(), own.as_str(), stem.as_str()]) {
                let form = if synonym.chars().any(is_cjk) {
                    needle(synonym, Shape::Cjk)
                } else if synonym.contains(' ') || is_identifier(synonym) {
                    needle(synonym, Shape::Exact)
                } else {
                    word_needle(synonym)
                };
                if !term.needles.iter().any(|n| n.text == form.text) {
                    term.needles.push(Needle { weight: SYNONYM_WEIGHT, ..form });
                }
            }
        }
        Query { terms: self.terms }
    }
}

fn needle(text: &str, shape: Shape) -> Needle {
    Needle { text: text.to_lowercase(), shape, weight: 1.0 }
}

fn cjk_term(text: &str) -> Term {
    Term { label: text.to_owned(), needles: vec![needle(text, Shape::Cjk)], required: false }
}

/// A lower-case English word as a needle: its stem, cut back to what it
/// shares with the word so that it is still found in it (`happi` → `happ`).
fn word_needle(word: &str) -> Needle {
    let stem = stem(word);
    let shared = word.char_indices().zip(stem.chars()).take_while(|((_, a), b)| a == b).count();
    let mut text: String = word.chars().take(shared.max(3).min(word.chars().count())).collect();
    if text.chars().count() < 3 {
        text = word.to_owned();
    }
    Needle { text, shape: Shape::Word { whole: word.to_owned() }, weight: 1.0 }
}

/// The word an `un-` word negates (`unsupported` → `supported`), which a
/// memory may say as "not supported".
fn negated_word(word: &str) -> Option<&str> {
    word.strip_prefix("un").filter(|rest| rest.len() >= 5 && rest.chars().all(|c| c.is_ascii_lowercase()))
}

/// The English stem of a lower-case word.
pub fn stem(word: &str) -> String {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English)).stem(word).into_owned()
}

/// Takes off what pasting adds around an identifier or path: quotes,
/// backticks, brackets, call parentheses, trailing punctuation and a
/// `:line[:column]` or `#Lline` suffix.
fn strip_decoration(token: &str) -> &str {
    const AROUND: &[char] = &[
        '`', '\'', '"', '(', ')', '[', ']', '{', '}', '<', '>', ',', ';', '!', '?', '，', '。', '？', '！', '、', '：',
        '；', '（', '）', '“', '”', '‘', '’',
    ];
    let mut text = token.trim_matches(AROUND);
    loop {
        let before = text;
        if let Some(call) = text.find('(').filter(|&at| at > 0) {
            text = &text[..call];
        }
        text = text.trim_end_matches(['.', ':']).trim_matches(AROUND);
        if let Some(at) = text.rfind("#L").filter(|&at| at > 0 && text[at + 2..].bytes().all(|b| b.is_ascii_digit())) {
            text = &text[..at];
        }
        // `path:120` or `path:12:5`, but not `Type::method` or `12:30` alone.
        if let Some(at) = text.rfind(':')
            && at > 0
            && !text[..at].ends_with(':')
            && text[at + 1..].bytes().all(|b| b.is_ascii_digit())
            && !text[..at].bytes().all(|b| b.is_ascii_digit() || b == b':')
        {
            text = &text[..at];
        }
        if text == before {
            return text;
        }
    }
}

/// The line number pasted after a path (`src/lib.rs:120:5` → `120`), which
/// a memory of reading those lines may mention.
fn line_number(token: &str, path: &str) -> Option<String> {
    let rest = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '/' && c != ':' && c != '#');
    let rest = rest.strip_prefix(path).filter(|_| path.contains(['/', '.']))?;
    let digits: String = rest.trim_start_matches([':', '#', 'L']).chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

/// Splits text where it changes between Chinese (or Japanese) and other
/// scripts: `ip段` → `ip`, `段`.
fn script_runs(text: &str) -> Vec<(bool, &str)> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut current: Option<bool> = None;
    for (at, c) in text.char_indices() {
        let cjk = is_cjk(c);
        if current.is_some_and(|was| was != cjk) {
            runs.push((!cjk, &text[start..at]));
            start = at;
        }
        current = Some(cjk);
    }
    if let Some(cjk) = current {
        runs.push((cjk, &text[start..]));
    }
    runs.retain(|(_, run)| !run.is_empty());
    runs
}

/// Han ideographs and kana: scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}')
}

/// Whether a token is code rather than a word: it has `_`, `/`, `::`, a
/// dot between characters, a sign such as `+` or `#` (`C++`), a capital inside it, or digits among
/// letters. Such tokens are looked for as written, never stemmed.
fn is_identifier(token: &str) -> bool {
    let inner = |c: char| token.trim_matches(c).contains(c);
    let letters = token.chars().any(char::is_alphabetic);
    let digits = token.chars().any(|c| c.is_ascii_digit());
    token.contains(['_', '/', '\\'])
        || token.chars().any(|c| !c.is_alphanumeric() && !matches!(c, '-' | '.' | '\'' | '’'))
        || token.contains("::")
        || token.starts_with("--")
        || inner('.')
        || (letters && digits)
        || (!letters && digits)
        || token.chars().skip(1).any(char::is_uppercase) && token.chars().any(char::is_lowercase)
}

/// Chinese question and function words, longest first so that each is taken
/// whole. They say how something is asked, not what it is about.
const CHINESE_STOP_WORDS: &[&str] = &[
    "是不是",
    "有没有",
    "能不能",
    "可不可以",
    "为什么",
    "怎么样",
    "怎么办",
    "还记得",
    "什么",
    "怎么",
    "怎样",
    "如何",
    "哪里",
    "哪儿",
    "哪个",
    "哪些",
    "是否",
    "上次",
    "上回",
    "之前",
    "以前",
    "刚才",
    "我们",
    "你们",
    "他们",
    "咱们",
    "这个",
    "那个",
    "这些",
    "那些",
    "一下",
    "一个",
    "一些",
    "时候",
    "的话",
    "请问",
    "帮我",
    "记得",
    "出现",
    "发生",
    "为啥",
    "咋",
    "了吗",
    "没有",
    "可以",
    "应该",
    "需要",
    "还是",
    "或者",
    "然后",
    "已经",
];

/// Characters that only glue a sentence together: a two-character piece
/// with one in it is not a word worth finding.
const PARTICLES: &str = "的了吗呢吧啊呀哦嘛么着过得我你他她它这那";

/// A run of Chinese with its stop words taken out: the pieces between them.
fn without_chinese_stop_words(run: &str) -> Vec<&str> {
    let mut segments = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < run.len() {
        match CHINESE_STOP_WORDS.iter().filter(|w| run[at..].starts_with(**w)).max_by_key(|w| w.len()) {
            Some(word) => {
                segments.push(&run[start..at]);
                at += word.len();
                start = at;
            }
            None => at += run[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    segments.push(&run[start..]);
    segments.retain(|s| !s.is_empty());
    segments
}

/// English words that say how something is asked rather than what it is
/// about, sorted for binary search.
const STOP_WORDS: &[&str] = &[
    "a",
    "able",
    "about",
    "after",
    "again",
    "ago",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "anything",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "done",
    "during",
    "each",
    "earlier",
    "even",
    "ever",
    "for",
    "from",
    "gave",
    "get",
    "give",
    "given",
    "go",
    "goes",
    "going",
    "got",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "kept",
    "known",
    "last",
    "let",
    "lets",
    "like",
    "look",
    "looked",
    "made",
    "make",
    "many",
    "me",
    "much",
    "my",
    "non",
    "of",
    "on",
    "once",
    "one",
    "ones",
    "or",
    "our",
    "ours",
    "out",
    "please",
    "previous",
    "previously",
    "really",
    "recall",
    "remember",
    "s",
    "said",
    "say",
    "see",
    "seen",
    "she",
    "should",
    "so",
    "some",
    "something",
    "still",
    "stuff",
    "t",
    "tell",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "things",
    "this",
    "those",
    "time",
    "to",
    "told",
    "too",
    "up",
    "us",
    "via",
    "was",
    "way",
    "ways",
    "we",
    "went",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "yet",
    "you",
    "your",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each term's own needle, and whether it is required.
    fn needles(raw: &str) -> Vec<(String, bool)> {
        understand(raw).terms.into_iter().map(|t| (t.needles[0].text.clone(), t.required)).collect()
    }

    fn own(raw: &str) -> Vec<String> {
        needles(raw).into_iter().map(|(text, _)| text).collect()
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]), "STOP_WORDS must stay sorted");
    }

    #[test]
    fn questions_keep_their_content_words_stemmed() {
        assert_eq!(
            own("how did we fix the crashes when the config file was missing?"),
            ["fix", "crash", "config", "file", "miss"]
        );
        assert_eq!(own("Happy"), ["happ"]);
    }

    #[test]
    fn only_stop_words_are_kept_when_nothing_else_is_asked() {
        assert_eq!(own("how to"), ["how", "to"]);
    }

    #[test]
    fn identifiers_and_paths_lose_their_decoration_only() {
        assert_eq!(own("parse_config()"), ["parse_config"]);
        assert_eq!(own("`open_store`"), ["open_store"]);
        // The line number stays, as a term of its own.
        assert_eq!(own("src/store/mod.rs:120"), ["src/store/mod.rs", "120"]);
        assert_eq!(own("src/lib.rs:12:5,"), ["src/lib.rs", "12"]);
        assert_eq!(own("'with_capacity'"), ["with_capacity"]);
        assert_eq!(own("Store::open"), ["store::open"]);
        assert_eq!(own("HashMap"), ["hashmap"]);
        assert_eq!(own("main.rs#L40"), ["main.rs", "40"]);
        assert_eq!(own("utf8"), ["utf8"]);
        assert_eq!(own("C++ C#"), ["c++", "c#"]);
        // Hyphenated words are words: "half-read" is asked as "half read".
        assert_eq!(own("half-read"), ["half", "read"]);
    }

    #[test]
    fn quotes_keep_text_exact_and_required() {
        assert_eq!(
            needles(r#"write "Database is locked" now"#),
            [("write".to_owned(), false), ("database is locked".to_owned(), true), ("now".to_owned(), false)]
        );
        assert_eq!(needles(r#"foo "bar baz"#), [("foo".to_owned(), false), ("bar baz".to_owned(), true)]);
        assert!(understand(r#"""#).terms.is_empty());
    }

    #[test]
    fn chinese_is_cut_into_pieces_without_its_question_words() {
        assert_eq!(own("上次批量导入为什么会超时"), ["批量", "量导", "导入", "会超", "超时"]);
        assert_eq!(own("登录失败了吗"), ["登录", "录失", "失败"]);
        assert_eq!(own("ip段"), ["ip", "段"]);
        assert_eq!(own("redis连接超时怎么办"), ["redi", "连接", "接超", "超时"]);
        assert_eq!(own("启动就退出，怎么修的？"), ["启动", "动就", "就退", "退出"]);
        assert_eq!(own("改了load()，对吗"), ["load"]);
    }

    #[test]
    fn blank_and_repeated_input() {
        assert!(understand("   \t ").terms.is_empty());
        assert_eq!(own("db db DB"), ["db"]);
        assert_eq!(own("(((  `` ::"), ["(((", "``", "::"]);
        assert_eq!(own("( fix"), ["fix"]);
    }

    #[test]
    fn synonyms_follow_the_terms_own_form() {
        let query = understand("crash");
        let texts: Vec<&str> = query.terms[0].needles.iter().map(|n| n.text.as_str()).collect();
        assert_eq!(texts[0], "crash");
        assert!(texts.contains(&"panic") && texts.contains(&"崩溃"), "{texts:?}");
        assert!(query.terms[0].needles[1..].iter().all(|n| n.weight == SYNONYM_WEIGHT));
    }
}
