//! The built-in heuristic summarizer: what the user asked, what was
//! concluded or decided, which tools did what, and what went wrong, with
//! duplicates removed and every part clipped to fit. No model, no network:
//! it runs inside SessionEnd's 1.5 s budget with room to spare. What it
//! tells is the session's facts (`facts`), in the session's language.

use super::facts;
use crate::store::{Facts, Kind, Observation};
use crate::text::{Labels, Language, clip};

/// The most characters in a brief summary.
pub const BRIEF_CHARS: usize = 900;
/// The most characters in a detailed summary.
pub const DETAILED_CHARS: usize = 3200;

/// A brief and a detailed summary of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Summaries {
    pub brief: String,
    pub detailed: String,
}

/// Writes a session's summaries from its observations and their facts
/// (`facts::of`). Returns `None` when nothing public happened.
pub fn summarize(observations: &[Observation], facts: &Facts) -> Option<Summaries> {
    let last_public = facts::public(observations).last()?;
    let answers = facts::distinct(
        facts::public(observations).filter(|o| o.kind == Kind::Response).map(|o| facts::one_line(&o.content)),
    );
    let Facts { asked, concluded, failed, tools, .. } = facts;
    let labels = Language::of_prompts(asked).labels();
    let tool_counts = tool_tally(&facts.tool_counts);

    let mut brief = Vec::new();
    if let Some(first) = asked.first() {
        brief.push(format!("{}: {}{}", labels.asked, clip(first, 240), more(asked.len(), labels)));
    }
    if let Some(last) = answers.last().or(concluded.last()) {
        brief.push(format!("{}: {}", labels.concluded, clip(last, 360)));
    }
    if !tool_counts.is_empty() {
        brief.push(format!("{}: {}", labels.tools, tool_counts));
    }
    if let Some(first) = failed.first() {
        brief.push(format!("{} ({}): {}", labels.errors, failed.len(), clip(first, 160)));
    }
    if brief.is_empty() {
        brief.push(clip(&facts::one_line(&last_public.content), 300));
    }

    let mut detailed = String::new();
    let sections: [(&str, &[String], usize, usize); 4] = [
        (labels.asked, asked, 8, 300),
        (labels.concluded, concluded, 6, 500),
        (labels.tools, tools, 12, 160),
        (labels.errors, failed, 6, 240),
    ];
    for (title, items, max_items, max_chars) in sections {
        if items.is_empty() {
            continue;
        }
        // Conclusions matter most at the end of a session; the rest at the start.
        let shown: Vec<&String> = if title == labels.concluded {
            items.iter().rev().take(max_items).rev().collect()
        } else {
            items.iter().take(max_items).collect()
        };
        detailed.push_str(&format!("{title}:\n"));
        for item in &shown {
            detailed.push_str(&format!("- {}\n", clip(item, max_chars)));
        }
        if items.len() > shown.len() {
            detailed.push_str(&format!("- (+{} {})\n", items.len() - shown.len(), labels.and_more));
        }
    }
    if detailed.is_empty() {
        detailed = brief.join("\n");
    }
    Some(Summaries { brief: clip(&brief.join("\n"), BRIEF_CHARS), detailed: clip(detailed.trim_end(), DETAILED_CHARS) })
}

fn more(count: usize, labels: &Labels) -> String {
    if count > 1 { format!(" (+{} {})", count - 1, labels.and_more) } else { String::new() }
}

/// "Bash ×3, Edit ×2", most used first.
fn tool_tally(counts: &[(String, u64)]) -> String {
    counts.iter().map(|(n, c)| format!("{n} ×{c}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(kind: &str, tool: Option<&str>, content: &str) -> Observation {
        Observation {
            id: 0,
            session_id: "s".into(),
            ts: 0,
            kind: kind.into(),
            tool: tool.map(Into::into),
            content: content.into(),
            private: false,
            tags: vec![],
        }
    }

    #[test]
    fn summarizes_an_english_session_by_kind() {
        let rows = vec![
            obs("user", None, "Fix the database is locked error in the importer"),
            obs("tool", Some("Bash"), "cargo test\n→ 1 failed"),
            obs("tool", Some("Bash"), "cargo test\n→ 1 failed"),
            obs("error", Some("Bash"), "cargo test\n✗ Exit code 101"),
            obs("tool", Some("Edit"), "{\"file_path\":\"src/store/mod.rs\",\"old_string\":\"a\"}\n→ ok"),
            obs("response", None, "Fixed: the importer now uses BEGIN IMMEDIATE and a busy timeout."),
        ];
        let s = summarize(&rows, &facts::of(&rows)).unwrap();
        assert!(s.brief.starts_with("Asked: Fix the database is locked error"), "{}", s.brief);
        assert!(s.brief.contains("Concluded: Fixed: the importer now uses BEGIN IMMEDIATE"), "{}", s.brief);
        assert!(s.brief.contains("Tools: Bash ×2, Edit ×1"), "{}", s.brief);
        assert!(s.brief.contains("Errors (1): Bash: Exit code 101"), "{}", s.brief);
        // The repeated tool action appears once; an edit shows its file.
        assert_eq!(s.detailed.matches("Bash: cargo test").count(), 1, "{}", s.detailed);
        assert!(s.detailed.contains("- Edit: src/store/mod.rs\n"), "{}", s.detailed);
    }

    #[test]
    fn summarizes_a_chinese_session_in_chinese() {
        let rows = vec![
            obs("user", None, "请修复数据缓存的超时问题"),
            obs("response", None, "已修复：缓存现在有超时和重试。"),
        ];
        let s = summarize(&rows, &facts::of(&rows)).unwrap();
        assert!(s.brief.starts_with("用户请求: 请修复数据缓存的超时问题"), "{}", s.brief);
        assert!(s.brief.contains("结论与决定: 已修复：缓存现在有超时和重试。"), "{}", s.brief);
    }

    #[test]
    fn skips_private_rows_and_respects_the_limits() {
        let mut rows = vec![obs("user", None, "[PRIVATE]")];
        rows[0].private = true;
        assert_eq!(summarize(&rows, &facts::of(&rows)), None);
        let long: Vec<Observation> =
            (0..5000).map(|i| obs("user", None, &format!("prompt {i} {}", "词".repeat(500)))).collect();
        let s = summarize(&long, &facts::of(&long)).unwrap();
        assert!(s.brief.chars().count() <= BRIEF_CHARS);
        assert!(s.detailed.chars().count() <= DETAILED_CHARS);
    }
}
