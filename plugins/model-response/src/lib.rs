//! ModelResponse becomes a `decision` observation: the conclusions,
//! decisions and next steps pulled out of the model's final answer.

wit_bindgen::generate!({ world: "event-handler", path: "../../wit/since_v0.1.0" });

use trae_mem::plugin::host::{Level, log};

struct ModelResponse;

/// Words that mark each kind of sentence, in English and Chinese.
const DECISION: &[&str] =
    &["decided", "decision", "chose", "we will", "instead of", "switched to", "going with", "决定", "选择", "采用"];
const NEXT: &[&str] = &["next step", "next:", "todo", "follow-up", "later", "remaining", "下一步", "后续", "待办"];
const CONCLUSION: &[&str] = &[
    "fixed",
    "cause",
    "because",
    "root cause",
    "found",
    "works",
    "done",
    "concluded",
    "已完成",
    "原因",
    "修复",
    "结论",
];

impl Guest for ModelResponse {
    fn handle(_event: String, payload: String) -> Result<Vec<Observation>, String> {
        let payload: serde_json::Value = serde_json::from_str(&payload).map_err(|e| format!("bad payload: {e}"))?;
        let Some(answer) = payload["last_assistant_message"].as_str().or(payload["text"].as_str()) else {
            log(Level::Warn, "no last_assistant_message in the payload");
            return Ok(Vec::new());
        };
        let (mut decisions, mut next, mut conclusions) = (Vec::new(), Vec::new(), Vec::new());
        for sentence in sentences(answer) {
            let lower = sentence.to_lowercase();
            let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
            if has(NEXT) {
                next.push(sentence);
            } else if has(DECISION) {
                decisions.push(sentence);
            } else if has(CONCLUSION) {
                conclusions.push(sentence);
            }
        }
        if decisions.is_empty() && next.is_empty() && conclusions.is_empty() {
            return Ok(Vec::new());
        }
        let mut content = String::new();
        // Headings in the answer's language, so that a Chinese session's
        // summary reads as Chinese throughout.
        let titles = if mostly_chinese(answer) {
            ["结论", "决定", "下一步"]
        } else {
            ["Conclusions", "Decisions", "Next steps"]
        };
        for (title, items) in titles.into_iter().zip([&conclusions, &decisions, &next]) {
            if !items.is_empty() {
                content.push_str(&format!("{title}:\n"));
                items.iter().for_each(|i| content.push_str(&format!("- {i}\n")));
            }
        }
        Ok(vec![Observation {
            kind: "decision".into(),
            content: content.trim_end().to_owned(),
            tool: None,
            tags: vec!["from:model-response".into()],
        }])
    }
}

/// Sentences and list items, trimmed, in order. A full stop ends a
/// sentence only before white space or the end, so that a file name
/// (`src/api/stock.rs`) or a figure (`4.9 ms`) stays whole.
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\n' {
            current.push(c);
        }
        let ends = match c {
            '\n' | '。' | '！' | '？' | '；' => true,
            '.' | '!' | '?' => chars.peek().is_none_or(|next| next.is_whitespace()),
            _ => false,
        };
        if ends {
            push(&mut out, &mut current);
        }
    }
    push(&mut out, &mut current);
    out
}

fn push(out: &mut Vec<String>, current: &mut String) {
    let sentence = current.trim().trim_start_matches(['-', '*', ' ']).trim();
    // A list number ("1.") is not a sentence.
    if sentence.chars().count() > 3 {
        out.push(sentence.to_owned());
    }
    current.clear();
}

/// Whether the answer is mostly Chinese, by letters.
fn mostly_chinese(text: &str) -> bool {
    let letters = text.chars().filter(|c| c.is_alphabetic());
    let (han, all) = letters.fold((0, 0), |(h, a), c| (h + usize::from(('\u{4e00}'..='\u{9fff}').contains(&c)), a + 1));
    all > 0 && han * 3 >= all
}

export!(ModelResponse);
