//! The built-in heuristic summarizer: what the user asked, what was
//! concluded or decided, which tools did what, and what went wrong, with
//! duplicates removed and every part clipped to fit. No model, no network:
//! it runs inside SessionEnd's 1.5 s budget with room to spare.

use std::collections::HashSet;

use crate::store::{Kind, Observation, PRIVATE_PLACEHOLDER};
use crate::text::clip;

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

/// Section titles, in the session's language.
struct Labels {
    asked: &'static str,
    concluded: &'static str,
    tools: &'static str,
    errors: &'static str,
    and_more: &'static str,
}

const ENGLISH: Labels =
    Labels { asked: "Asked", concluded: "Concluded", tools: "Tools", errors: "Errors", and_more: "more" };
const CHINESE: Labels =
    Labels {
        asked: "用户请求", concluded: "结论与决定", tools: "工具操作", errors: "错误", and_more: "更多"
    };

/// Summarizes a session's observations (private ones are skipped).
/// Returns `None` when nothing public happened.
pub fn summarize(observations: &[Observation]) -> Option<Summaries> {
    let public: Vec<&Observation> =
        observations.iter().filter(|o| !o.private && o.content != PRIVATE_PLACEHOLDER).collect();
    if public.is_empty() {
        return None;
    }
    let of_kind =
        |kinds: &[Kind]| -> Vec<&Observation> { public.iter().copied().filter(|o| kinds.contains(&o.kind)).collect() };
    let asked = distinct(of_kind(&[Kind::User]).iter().map(|o| one_line(&o.content)));
    // An answer stands for itself in its first line; a `decision` row (the
    // model-response plugin's) is a list under headings, and each item counts.
    let answers = distinct(of_kind(&[Kind::Response]).iter().map(|o| one_line(&o.content)));
    let concluded = distinct(of_kind(&[Kind::Response, Kind::Decision]).iter().flat_map(|o| conclusions(o)));
    let tool_rows = of_kind(&[Kind::Tool]);
    let actions = distinct(tool_rows.iter().map(|o| tool_action(o.tool.as_deref(), &o.content)));
    let errors = distinct(
        of_kind(&[Kind::Error])
            .iter()
            .map(|o| format!("{}: {}", o.tool.as_deref().unwrap_or("error"), failure(&o.content))),
    );

    let labels = if mostly_chinese(&asked) { &CHINESE } else { &ENGLISH };
    let tool_counts = tool_tally(&tool_rows);

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
    if let Some(first) = errors.first() {
        brief.push(format!("{} ({}): {}", labels.errors, errors.len(), clip(first, 160)));
    }
    if brief.is_empty() {
        brief.push(clip(&one_line(&public[public.len() - 1].content), 300));
    }

    let mut detailed = String::new();
    let sections: [(&str, &[String], usize, usize); 4] = [
        (labels.asked, &asked, 8, 300),
        (labels.concluded, &concluded, 6, 500),
        (labels.tools, &actions, 12, 160),
        (labels.errors, &errors, 6, 240),
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

/// The parts of a summary this summarizer wrote, read back: what a
/// prompt's memory tells of a session, and whether it did any work.
#[derive(Debug, Default, PartialEq)]
pub struct Sections {
    pub asked: Vec<String>,
    pub concluded: Vec<String>,
    pub tools: Vec<String>,
    pub errors: Vec<String>,
}

/// Reads a summary back into its sections, brief (`Asked: …` on one line)
/// or detailed (`Asked:` over a list), in either language; `None` when it
/// is not one this summarizer wrote (a plugin's, say).
pub fn sections(summary: &str) -> Option<Sections> {
    let mut sections = Sections::default();
    let mut part: Option<&mut Vec<String>> = None;
    let mut read_any = false;
    for line in summary.lines() {
        if let Some(item) = line.strip_prefix("- ") {
            let more = item.starts_with("(+") && [ENGLISH.and_more, CHINESE.and_more].iter().any(|m| item.contains(m));
            if let Some(items) = part.as_deref_mut().filter(|_| !more) {
                items.push(item.to_owned());
            }
            continue;
        }
        let (title, rest) = line.split_once([':', '：'])?;
        // A brief's errors title carries their count: `Errors (2): …`.
        let title = title.split(" (").next().unwrap_or(title);
        let labels = [&ENGLISH, &CHINESE];
        let items = match title {
            t if labels.iter().any(|l| t == l.asked) => &mut sections.asked,
            t if labels.iter().any(|l| t == l.concluded) => &mut sections.concluded,
            t if labels.iter().any(|l| t == l.tools) => &mut sections.tools,
            t if labels.iter().any(|l| t == l.errors) => &mut sections.errors,
            _ => return None,
        };
        if !rest.trim().is_empty() {
            items.push(rest.trim().to_owned());
        }
        part = Some(items);
        read_any = true;
    }
    read_any.then_some(sections)
}

/// The first line of a text, white space folded.
fn one_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// What a response or decision row concluded: an answer's first line, or
/// each item of a decision's list, its headings ("Conclusions:") left out.
fn conclusions(row: &Observation) -> Vec<String> {
    if row.kind != Kind::Decision {
        return vec![one_line(&row.content)];
    }
    row.content
        .lines()
        .map(|line| line.trim().trim_start_matches(['-', '*']).trim())
        .filter(|line| !line.is_empty() && !line.ends_with([':', '：']))
        .map(str::to_owned)
        .collect()
}

/// A tool call as summaries name it: the tool, then what it was asked to
/// do (`Edit: src/db/pool.rs`, `Bash: cargo test`). The viewer names tool
/// rows so too.
pub fn tool_action(tool: Option<&str>, content: &str) -> String {
    format!("{}: {}", tool.unwrap_or("tool"), action(content))
}

/// What a tool was asked to do, from its recorded input: the command, file,
/// pattern or address when the input names one, else its first line.
fn action(content: &str) -> String {
    let input = content.lines().next().unwrap_or_default();
    if let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(input) {
        for key in ["command", "file_path", "pattern", "path", "url", "query", "description"] {
            if let Some(serde_json::Value::String(value)) = fields.get(key) {
                return one_line(value);
            }
        }
    }
    one_line(input)
}

/// What went wrong, from an error observation: the line after its `✗`
/// mark, and when that is only a status (`Exit code 1`), the first lines of
/// the output that say what failed (secrets were scrubbed at capture).
fn failure(content: &str) -> String {
    let Some((_, error)) = content.split_once("\n✗ ") else { return one_line(content) };
    let mut lines = error.lines().map(one_line).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else { return String::new() };
    let rest: Vec<String> = lines.collect();
    let telling: Vec<&String> = rest.iter().filter(|l| says_what_failed(l)).take(FAILURE_LINES).collect();
    let detail = if telling.is_empty() { rest.iter().take(1).collect() } else { telling };
    std::iter::once(&first).chain(detail).map(String::as_str).collect::<Vec<_>>().join(" — ")
}

/// Lines of a failed call's output quoted beside its status.
const FAILURE_LINES: usize = 2;

/// Whether a line of output says what failed, in the words compilers,
/// shells and test runners use.
fn says_what_failed(line: &str) -> bool {
    const WORDS: &[&str] = &[
        "error",
        "failed",
        "failure",
        "panicked",
        "not found",
        "no such",
        "cannot",
        "can't",
        "denied",
        "fatal",
        "exception",
        "traceback",
        "错误",
        "失败",
    ];
    let lower = line.to_lowercase();
    WORDS.iter().any(|w| lower.contains(w))
}

/// Keeps the first of each distinct item, in order.
fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items.filter(|i| !i.is_empty() && seen.insert(i.clone())).collect()
}

fn more(count: usize, labels: &Labels) -> String {
    if count > 1 { format!(" (+{} {})", count - 1, labels.and_more) } else { String::new() }
}

/// "Bash ×3, Edit ×2", most used first.
fn tool_tally(rows: &[&Observation]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for row in rows {
        let name = row.tool.clone().unwrap_or_else(|| "tool".to_owned());
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts.iter().map(|(n, c)| format!("{n} ×{c}")).collect::<Vec<_>>().join(", ")
}

/// Whether the prompts are mostly Chinese (by letters, not bytes).
fn mostly_chinese(texts: &[String]) -> bool {
    let (mut han, mut letters) = (0usize, 0usize);
    for c in texts.iter().flat_map(|t| t.chars()) {
        if ('\u{4e00}'..='\u{9fff}').contains(&c) {
            han += 1;
            letters += 1;
        } else if c.is_alphabetic() {
            letters += 1;
        }
    }
    letters > 0 && han * 3 >= letters
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
        let s = summarize(&rows).unwrap();
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
        let s = summarize(&rows).unwrap();
        assert!(s.brief.starts_with("用户请求: 请修复数据缓存的超时问题"), "{}", s.brief);
        assert!(s.brief.contains("结论与决定: 已修复：缓存现在有超时和重试。"), "{}", s.brief);
    }

    #[test]
    fn skips_private_rows_and_respects_the_limits() {
        let mut rows = vec![obs("user", None, "[PRIVATE]")];
        rows[0].private = true;
        assert_eq!(summarize(&rows), None);
        let long: Vec<Observation> =
            (0..5000).map(|i| obs("user", None, &format!("prompt {i} {}", "词".repeat(500)))).collect();
        let s = summarize(&long).unwrap();
        assert!(s.brief.chars().count() <= BRIEF_CHARS);
        assert!(s.detailed.chars().count() <= DETAILED_CHARS);
    }
}
