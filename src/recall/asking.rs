//! Telling a question from a statement. A question to memory ("how did we
//! fix the crash?") is stored, and found when searched for as such, but it
//! repeats the query's words without saying anything of the answer: in
//! every ranking it comes after what states something, and a session that
//! only asked memory is not told as work.
//!
//! Search asks this of every user row it reads, so the English words are
//! matched case-insensitively in ASCII, with ASCII word boundaries
//! (`(?i-u:…)`): a Unicode `\b` sends the regex engine to its slowest
//! matcher on any text holding a character outside ASCII, and that was a
//! fifth of a question's time on a store with Chinese in it.

/// The prompt asks about earlier work ("what did we do last time?", "how
/// did we fix…", "上次我们…"): its answer is memory told again.
pub fn asks_memory(prompt: &str) -> bool {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN
        .get_or_init(|| {
            regex::Regex::new(concat!(
                r"(?i-u:\b(?:(?:what|how|why|when|where|which)\s+did\s+(?:we|you|i)|did\s+we|have\s+we",
                r"|last\s+(?:time|session)|(?:previous|earlier|last)\s+sessions?|do\s+you\s+remember|trae-mem)\b)",
                r"|上次|上一次|之前|以前|昨天|记得|我们(?:做|修|改|讨论)了",
            ))
            .expect("the pattern compiles")
        })
        .is_match(prompt)
}

/// The prompt only asks: it asks memory, or each of its sentences is a
/// question. A prompt that states something, a fact, a constraint, a
/// decision or the task at hand ("the staging database listens on 6543",
/// "never push to main", "fix the crash when the config is missing"),
/// ranks as what it states, even beside a question.
pub fn only_asks(prompt: &str) -> bool {
    asks_memory(prompt) || sentences(prompt).all(is_question)
}

/// The sentences of `text`, each with its closing mark.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['.', '!', '?', '\n', ';', '。', '！', '？', '；'])
        .map(str::trim)
        .filter(|s| s.chars().any(char::is_alphanumeric))
}

/// The sentence asks: it ends with a question mark, opens with a question
/// word, or (in Chinese) ends with a question particle or holds a question
/// word.
fn is_question(sentence: &str) -> bool {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN
        .get_or_init(|| {
            regex::Regex::new(concat!(
                r"[?？]\s*$",
                r"|(?i-u:^(?:what|how|why|when|where|which|who|whose|whom)\b",
                // An auxiliary then its subject: "do you…", not "do not…".
                r"|^(?:is|are|was|were|am|do|does|did|can|could|would|should|will|shall|may|might|have|has|had)",
                r"\s+(?:you|we|i|it|they|he|she|there|the|this|that|these|those|a|an|my|our|your|its|their)\b)",
                r"|[吗呢么嘛][。.！!]?\s*$|什么|怎么|怎样|为什么|为何|如何|哪|是否|能否|可否|多少|几个|几种",
            ))
            .expect("the pattern compiles")
        })
        .is_match(sentence)
}

/// The words of `prompt` that only ask memory ("what did we end up doing
/// about", "remind me", "last time", "上次…是怎么处理的") taken out: what is
/// left says what the memory is about, and is what a prompt's memories are
/// sought by. Asking words are near every question to memory, whatever it
/// is about, so they would make every earlier question look alike.
pub fn without_asking(prompt: &str) -> String {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex::Regex::new(concat!(
            r"(?i)\b(?:what|how|why|when|where|which)\s+(?:did|do|have|had)\s+(?:we|you|i)",
            r"(?:\s+(?:end\s+up|finally|eventually|ever))?",
            r"(?:\s+(?:doing|do|done|decide|decided|choose|chose|pick|picked|use|used|fix|fixed|handle|handled|solve|solved|settle|settled)",
            r"(?:\s+(?:about|with|on|for|to))?)?\b",
            r"|\b(?:did|have)\s+we(?:\s+(?:ever|already))?\b",
            r"|\b(?:do|can|could)\s+you\s+(?:still\s+)?(?:remember|recall)\b|\bremind\s+me(?:\s+(?:of|about|what|how))?\b",
            r"|\b(?:(?:the|that)\s+)?last\s+(?:time|session)\b|\b(?:in\s+)?(?:the\s+|an\s+)?(?:previous|earlier|last)\s+sessions?\b",
            r"|(?:我们)?(?:最后|当时)?是?(?:怎么|如何)(?:处理|解决|修复|修|做|弄|搞|改)的|(?:你)?还?记得|上一次|上次|之前|以前",
        ))
        .expect("the pattern compiles")
    });
    let left = pattern.replace_all(prompt, " ");
    left.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Of a session that ran no tool and met no error, what it asked
/// (`Facts::asked`, as the JSON read beside its summary) all asks memory:
/// the session only asked memory.
pub fn all_ask_memory(asked: &str) -> bool {
    serde_json::from_str::<Vec<String>>(asked)
        .is_ok_and(|asked| !asked.is_empty() && asked.iter().all(|a| asks_memory(a)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_earlier_work_ask_memory_and_others_do_not() {
        for asked in [
            "what did we do last time?",
            "How did we fix the crash when the config file was missing?",
            "Why did we pick SQLite?",
            "上次我们做了什么？",
            "之前的部署问题是怎么解决的",
            "trae-mem search deploy",
        ] {
            assert!(asks_memory(asked), "{asked}");
        }
        for asked in
            ["what time is it?", "fix the memory leak in the parser", "Add a --json flag", "修复配置文件缺失时的崩溃"]
        {
            assert!(!asks_memory(asked), "{asked}");
        }
    }

    #[test]
    fn a_prompt_only_asks_when_every_sentence_is_a_question() {
        for asked in [
            "what time is it",
            "How do I run the tests? Which flags matter?",
            "Is the cache shared between workers",
            "do we retry failed uploads",
            "how did we fix the crash last time",
            "库存查询的缓存过期时间是多少？",
            "这个接口支持分页吗",
        ] {
            assert!(only_asks(asked), "{asked}");
        }
        for stated in [
            "The staging database listens on port 6543, not the default.",
            "Never push to main directly. Why? CI deploys from it.",
            "Do not log tokens",
            "fix the memory leak in the parser",
            "We decided to keep SQLite; can you update the docs?",
            "以后所有接口都返回 JSON。",
        ] {
            assert!(!only_asks(stated), "{stated}");
        }
    }

    #[test]
    fn asking_words_leave_what_the_memory_is_about() {
        let cases = [
            (
                "What did we end up doing about the program dying at launch when the user's preferences are absent?",
                "the program dying at launch when the user's preferences are absent?",
            ),
            ("how did we fix the crash last time?", "the crash ?"),
            ("remind me what the staging port is", "the staging port is"),
            (
                "上次程序一启动就挂掉、因为找不到用户设置的那个问题，我们是怎么处理的？",
                "程序一启动就挂掉、因为找不到用户设置的那个问题， ？",
            ),
            ("add a --json flag to search", "add a --json flag to search"),
        ];
        for (prompt, left) in cases {
            assert_eq!(without_asking(prompt), left, "{prompt}");
        }
    }

    #[test]
    fn a_session_that_asked_only_questions_to_memory_only_asks_memory() {
        let asking = ["how did we fix the crash when the config file was missing", "上次我们做了什么？"];
        assert!(all_ask_memory(&serde_json::to_string(&asking).unwrap()));
        assert!(!all_ask_memory(r#"["how did we fix it?", "now fix the parser"]"#));
        assert!(!all_ask_memory(r#"["The app crashes when the config file is missing"]"#));
        assert!(!all_ask_memory("[]"));
    }
}
