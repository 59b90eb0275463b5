//! A session's facts, taken from its public rows: what was asked and
//! concluded, what failed, the files touched, the tools run, and how much of
//! each kind of row it has. The built-in summarizer writes its prose from
//! them, and they are stored beside every session's summaries, whoever
//! wrote those, for recall to read (`store::Facts`).

use std::collections::HashSet;

use crate::store::{Facts, Kind, Observation, PRIVATE_PLACEHOLDER};
use crate::text::clip;

/// How many items of each list are stored, and how many characters of
/// each item: as many as the built-in detailed summary shows. Facts are
/// for choosing and telling a session; its summaries and rows hold the
/// rest.
const STORED_ASKED: (usize, usize) = (8, 300);
const STORED_CONCLUDED: (usize, usize) = (6, 500);
const STORED_FAILED: (usize, usize) = (6, 240);
const STORED_TOOLS: (usize, usize) = (12, 160);
const STORED_FILES: (usize, usize) = (30, 200);

/// The facts of a session's rows (private ones are skipped).
pub fn of(observations: &[Observation]) -> Facts {
    let public: Vec<&Observation> = public(observations).collect();
    let of_kind =
        |kinds: &[Kind]| -> Vec<&Observation> { public.iter().copied().filter(|o| kinds.contains(&o.kind)).collect() };
    let tool_rows = of_kind(&[Kind::Tool]);
    Facts {
        asked: distinct(of_kind(&[Kind::User]).iter().map(|o| one_line(&o.content))),
        // An answer stands for itself in its first line; a `decision` row
        // (the model-response plugin's) is a list under headings, and each
        // item counts.
        concluded: distinct(of_kind(&[Kind::Response, Kind::Decision]).into_iter().flat_map(conclusions)),
        failed: distinct(
            of_kind(&[Kind::Error])
                .iter()
                .map(|o| format!("{}: {}", o.tool.as_deref().unwrap_or("error"), failure(&o.content))),
        ),
        files: distinct(of_kind(&[Kind::Tool, Kind::Error]).iter().filter_map(|o| file(&o.content))),
        tools: distinct(tool_rows.iter().map(|o| tool_action(o.tool.as_deref(), &o.content))),
        tool_counts: tool_counts(&tool_rows),
        tool_calls: tool_rows.iter().filter(|o| !runs_trae_mem(&o.content)).count() as u64,
        errors: of_kind(&[Kind::Error]).len() as u64,
        stated: public.iter().filter(|o| matches!(o.kind, Kind::Decision | Kind::Other(_))).count() as u64,
        answers: of_kind(&[Kind::Response]).len() as u64,
        talk_chars: of_kind(&[Kind::User, Kind::Response]).iter().map(|o| o.content.chars().count() as u64).sum(),
    }
}

/// The facts as stored: each list cut to its first items (the
/// conclusions to their last, which a session ends on), each item clipped.
pub fn to_store(facts: &Facts) -> Facts {
    let cut = |items: &[String], (count, chars): (usize, usize)| -> Vec<String> {
        items.iter().take(count).map(|i| clip(i, chars)).collect()
    };
    let last = &facts.concluded[facts.concluded.len().saturating_sub(STORED_CONCLUDED.0)..];
    Facts {
        asked: cut(&facts.asked, STORED_ASKED),
        concluded: cut(last, STORED_CONCLUDED),
        failed: cut(&facts.failed, STORED_FAILED),
        files: cut(&facts.files, STORED_FILES),
        tools: cut(&facts.tools, STORED_TOOLS),
        ..facts.clone()
    }
}

/// The rows a summary may tell: public, and not a placeholder.
pub(super) fn public(observations: &[Observation]) -> impl Iterator<Item = &Observation> {
    observations.iter().filter(|o| !o.private && o.content != PRIVATE_PLACEHOLDER)
}

/// The first line of a text, white space folded.
pub(super) fn one_line(text: &str) -> String {
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

/// A tool row's recorded input, when it is a JSON object.
fn input(content: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(content.lines().next()?) {
        Ok(serde_json::Value::Object(fields)) => Some(fields),
        _ => None,
    }
}

/// The first of `keys` that the input names as a string.
fn named(fields: &serde_json::Map<String, serde_json::Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|key| fields.get(*key)?.as_str().map(one_line))
}

/// What a tool was asked to do, from its recorded input: the command, file,
/// pattern or address when the input names one, else its first line.
fn action(content: &str) -> String {
    input(content)
        .and_then(|fields| named(&fields, &["command", "file_path", "pattern", "path", "url", "query", "description"]))
        .unwrap_or_else(|| one_line(content.lines().next().unwrap_or_default()))
}

/// The file a tool call read or changed, when its input names one.
fn file(content: &str) -> Option<String> {
    named(&input(content)?, &["file_path", "notebook_path"]).filter(|f| !f.is_empty())
}

/// A command that runs trae-mem asks memory; it is not work.
fn runs_trae_mem(content: &str) -> bool {
    content.get(..9).is_some_and(|start| start.eq_ignore_ascii_case("trae-mem "))
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
pub(super) fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items.filter(|i| !i.is_empty() && seen.insert(i.clone())).collect()
}

/// How many calls of each tool, most used first.
fn tool_counts(rows: &[&Observation]) -> Vec<(String, u64)> {
    let mut counts: Vec<(String, u64)> = Vec::new();
    for row in rows {
        let name = row.tool.as_deref().unwrap_or("tool");
        match counts.iter_mut().find(|(n, _)| n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name.to_owned(), 1)),
        }
    }
    counts.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    counts
}
