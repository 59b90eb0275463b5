//! Telling a question from a statement. A question to memory ("how did we
//! fix the crash?") is stored, and found when searched for as such, but it
//! repeats the query's words without saying anything of the answer: in
//! every ranking it comes after what states something, and a session that
//! only asked memory is not told as work.

use crate::summarize;

/// The prompt asks about earlier work ("what did we do last time?", "how
/// did we fix…", "上次我们…"): its answer is memory told again.
pub fn asks_memory(prompt: &str) -> bool {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN
        .get_or_init(|| {
            regex::Regex::new(concat!(
                r"(?i)\b(?:(?:what|how|why|when|where|which)\s+did\s+(?:we|you|i)|did\s+we|have\s+we",
                r"|last\s+(?:time|session)|(?:previous|earlier|last)\s+sessions?|do\s+you\s+remember|trae-mem)\b",
                r"|上次|上一次|之前|以前|昨天|记得|我们(?:做|修|改|讨论)了",
            ))
            .expect("the pattern compiles")
        })
        .is_match(prompt)
}

/// The summary is of a session that only asked memory: everything it asked
/// asks memory, and it ran no tool and met no error. Only summaries the
/// built-in summarizer wrote can be read this way.
pub fn only_asks_memory(summary: &str) -> bool {
    summarize::builtin::sections(summary).is_some_and(|s| {
        s.tools.is_empty() && s.errors.is_empty() && !s.asked.is_empty() && s.asked.iter().all(|a| asks_memory(a))
    })
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
    fn a_summary_of_questions_to_memory_only_asks_and_one_with_work_does_not() {
        let brief =
            "Asked: how did we fix the crash when the config file was missing\nConcluded: Memory says defaults.";
        assert!(only_asks_memory(brief));
        let detailed = "Asked:\n- how did we fix the crash?\nConcluded:\n- Memory says defaults.";
        assert!(only_asks_memory(detailed));
        let worked = "Asked: how did we fix the crash?\nConcluded: It is back.\nTools: Bash 1";
        assert!(!only_asks_memory(worked));
        let fix = "Asked: The app crashes when the config file is missing\nConcluded: Fixed.";
        assert!(!only_asks_memory(fix));
        assert!(!only_asks_memory("Goal: a plugin's own summary"));
    }
}
