//! An alternative summarizer: Goal / Done / Open problems / Next steps, in
//! the language the user wrote in.

wit_bindgen::generate!({ world: "summarizer", path: "../../wit/since_v0.1.0" });

struct Sectioned;

const BRIEF: usize = 900;
const DETAILED: usize = 3200;

/// Section titles, and the word for an empty section.
struct Labels {
    goal: &'static str,
    done: &'static str,
    open: &'static str,
    next: &'static str,
    none: &'static str,
    no_prompt: &'static str,
}

const ENGLISH: Labels = Labels {
    goal: "Goal",
    done: "Done",
    open: "Open problems",
    next: "Next steps",
    none: "none",
    no_prompt: "(no prompt recorded)",
};
const CHINESE: Labels = Labels {
    goal: "目标",
    done: "已完成",
    open: "未解决",
    next: "下一步",
    none: "无",
    no_prompt: "（没有记录到提问）",
};

/// Lead-ins that mark a next step, which the "Next steps" title already says.
const NEXT_MARKERS: &[&str] = &["next steps", "next step", "next", "todo", "follow-up", "下一步", "后续", "待办"];

impl Guest for Sectioned {
    fn summarize(session: SessionFacts, observations: Vec<Recorded>) -> Result<Summary, String> {
        let of = |kind: &'static str| observations.iter().filter(move |o| o.kind == kind);
        let prompts: Vec<&str> = of("user").map(|o| o.content.as_str()).collect();
        let labels = if mostly_chinese(&prompts) { &CHINESE } else { &ENGLISH };
        let goal = prompts.first().map_or_else(|| labels.no_prompt.to_owned(), |p| first_line(p));

        // The model-response plugin's `decision` rows already split an answer
        // into conclusions, decisions and next steps; without them, the
        // answer's first line stands for what was done.
        let mut done = Vec::new();
        let mut next = Vec::new();
        let decisions: Vec<&Recorded> = of("decision").collect();
        if decisions.is_empty() {
            done.extend(of("response").map(|o| first_line(&o.content)));
        }
        for decision in &decisions {
            for (heading, item) in sectioned_items(&decision.content) {
                if is_next_heading(&heading) { next.push(item) } else { done.push(item) }
            }
        }
        next.extend(of("response").flat_map(|o| sentences(&o.content)).filter(|s| starts_with_next_marker(s)));
        let next: Vec<String> = next.iter().map(|s| without_next_marker(s)).collect();
        done.extend(of("tool").map(|o| format!("{}: {}", o.tool.as_deref().unwrap_or("tool"), action(o, &session))));

        // An error counts as open unless the same tool succeeded after it.
        let mut open = Vec::new();
        for (i, o) in observations.iter().enumerate().filter(|(_, o)| o.kind == "error") {
            let fixed = observations[i + 1..].iter().any(|later| later.kind == "tool" && later.tool == o.tool);
            if !fixed {
                let failure = o.content.lines().last().unwrap_or("").trim();
                open.push(format!("{}: {failure}", o.tool.as_deref().unwrap_or("error")));
            }
        }
        let (done, open, next) = (distinct(done), distinct(open), distinct(next));

        let section = |title: &str, items: &[String], max: usize| -> String {
            if items.is_empty() {
                return format!("{title}: {}\n", labels.none);
            }
            let mut s = format!("{title}:\n");
            for item in items.iter().take(max) {
                s.push_str(&format!("- {}\n", clip(without_label(item, title), 300)));
            }
            s
        };
        let detailed = format!(
            "{}: {}\n{}{}{}",
            labels.goal,
            clip(&goal, 400),
            section(labels.done, &done, 10),
            section(labels.open, &open, 6),
            section(labels.next, &next, 6)
        );
        let line = |title: &str, items: &[String], max: usize| {
            if items.is_empty() {
                return format!("{title}: {}", labels.none);
            }
            let mut joined = String::new();
            for item in items {
                let item = without_label(item, title);
                if !joined.is_empty() {
                    joined.push_str(if joined.ends_with(['.', '。', '!', '！', '?', '？']) { " " } else { "; " });
                }
                joined.push_str(item);
            }
            format!("{title}: {}", clip(&joined, max))
        };
        let brief = [
            format!("{}: {}", labels.goal, clip(&goal, 240)),
            line(labels.done, &done, 280),
            line(labels.open, &open, 160),
            line(labels.next, &next, 160),
        ]
        .join("\n");
        Ok(Summary { brief: clip(&brief, BRIEF), detailed: clip(detailed.trim_end(), DETAILED) })
    }
}

/// The first non-empty line, trimmed.
fn first_line(text: &str) -> String {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned()
}

/// What a tool did, from its recorded input (`{json input}\n→ output`):
/// the command, file (relative to the project), pattern or address it
/// names, else the input's first line.
fn action(observation: &Recorded, session: &SessionFacts) -> String {
    let input = first_line(&observation.content);
    let Ok(serde_json::Value::Object(fields)) = serde_json::from_str::<serde_json::Value>(&input) else {
        return input;
    };
    let named = ["command", "file_path", "pattern", "path", "url", "query", "description"]
        .iter()
        .find_map(|key| fields.get(*key).and_then(|v| v.as_str()));
    match named {
        Some(value) => {
            let value = first_line(value);
            let project = format!("{}/", session.project.trim_end_matches('/'));
            value.strip_prefix(&project).map_or(value.clone(), str::to_owned)
        }
        None => input,
    }
}

/// The bulleted items of a `decision` row, each with the heading above it
/// ("Conclusions:", "Next steps:", …).
fn sectioned_items(content: &str) -> Vec<(String, String)> {
    let mut heading = String::new();
    let mut items = Vec::new();
    for line in content.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(title) = line.strip_suffix(':').or_else(|| line.strip_suffix('：')) {
            heading = title.to_lowercase();
        } else {
            items.push((heading.clone(), line.trim_start_matches(['-', '*', ' ']).trim().to_owned()));
        }
    }
    items
}

fn is_next_heading(heading: &str) -> bool {
    NEXT_MARKERS.iter().any(|m| heading.starts_with(m))
}

fn starts_with_next_marker(sentence: &str) -> bool {
    let lower = sentence.to_lowercase();
    NEXT_MARKERS.iter().any(|m| lower.starts_with(m))
}

/// "已完成：加了缓存" under the title "已完成" → "加了缓存": the title says it.
fn without_label<'a>(item: &'a str, title: &str) -> &'a str {
    item.strip_prefix(title).and_then(|rest| rest.strip_prefix([':', '：'])).map_or(item, str::trim_start)
}

/// "Next step: add a metric." → "add a metric": the section title says it.
fn without_next_marker(item: &str) -> String {
    let lower = item.to_lowercase();
    let rest = NEXT_MARKERS
        .iter()
        .find(|m| lower.starts_with(*m))
        .map_or(item, |m| item[m.len()..].trim_start_matches([':', '：', ',', '，', ' ']));
    rest.trim_end_matches(['.', '。']).trim().to_owned()
}

/// Sentences and lines. A full stop ends a sentence only before a space,
/// so that `pool.rs` and `4.9 ms` stay whole.
fn sentences(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(['\n', '。', '！', '？', '；'])
        .flat_map(|s| s.split(". ").flat_map(|s| s.split("! ")).flat_map(|s| s.split("? ")))
        .map(|s| s.trim().trim_start_matches(['-', '*', ' ']).trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Whether the prompts are mostly Chinese, by letters.
fn mostly_chinese(texts: &[&str]) -> bool {
    let letters = texts.iter().flat_map(|t| t.chars()).filter(|c| c.is_alphabetic());
    let (han, all) = letters.fold((0, 0), |(h, a), c| (h + usize::from(('\u{4e00}'..='\u{9fff}').contains(&c)), a + 1));
    all > 0 && han * 3 >= all
}

fn distinct(items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().filter(|i| !i.is_empty() && seen.insert(i.clone())).collect()
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max { text.to_owned() } else { text.chars().take(max - 1).collect::<String>() + "…" }
}

export!(Sectioned);
