//! Printing for people: aligned columns, colour only on a terminal, and
//! stable JSON for programs.

use std::io::{IsTerminal, Write};

use anyhow::Result;
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

/// Whether stdout gets colour: a terminal (or `CLICOLOR_FORCE`), and `NO_COLOR` unset.
pub fn colour() -> bool {
    std::env::var_os("NO_COLOR").is_none()
        && (std::io::stdout().is_terminal() || std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0"))
}

/// An observation id as people write it: `42`, or `#42` as `search` prints it.
pub fn observation_id(text: &str) -> Result<i64, String> {
    text.strip_prefix('#')
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("{text:?} is not an observation id (a number, such as 42 or #42)"))
}

/// A count that must be at least one, such as `--limit`.
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse() {
        Ok(0) => Err("it must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?} is not a whole number")),
    }
}

/// "1 session", "2 sessions": a count with its noun, in the right number.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {many}") }
}

/// A text style for one span.
#[derive(Clone, Copy)]
pub enum Style {
    Bold,
    Dim,
    Cyan,
    Yellow,
    Red,
    Green,
}

/// Wraps `text` in ANSI codes when `on`.
pub fn paint(text: &str, style: Style, on: bool) -> String {
    if !on {
        return text.to_owned();
    }
    let code = match style {
        Style::Bold => "1",
        Style::Dim => "2",
        Style::Cyan => "36",
        Style::Yellow => "33",
        Style::Red => "31",
        Style::Green => "32",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// Shows snippet marks as bold on a terminal, as « » elsewhere.
pub fn marks(snippet: &str, on: bool) -> String {
    if on { snippet.replace('«', "\x1b[1;33m").replace('»', "\x1b[0m") } else { snippet.to_owned() }
}

/// Prints `value` as pretty JSON and a newline.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Columns padded to the widest cell (by display width, so Chinese aligns).
/// The last column is never padded.
pub struct Table {
    rows: Vec<Vec<(String, Option<Style>)>>,
}

impl Table {
    pub fn new() -> Self {
        Self { rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<(String, Option<Style>)>) {
        self.rows.push(cells);
    }

    pub fn print(&self, colour: bool) -> Result<()> {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| self.rows.iter().filter_map(|r| r.get(c)).map(|(s, _)| s.width()).max().unwrap_or(0))
            .collect();
        let mut out = std::io::stdout().lock();
        for row in &self.rows {
            let mut line = String::new();
            for (c, (text, style)) in row.iter().enumerate() {
                let shown = style.map_or_else(|| text.clone(), |s| paint(text, s, colour));
                line.push_str(&shown);
                if c + 1 < row.len() {
                    line.push_str(&" ".repeat(widths[c] - text.width() + 2));
                }
            }
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// A cell without style.
pub fn plain(text: impl Into<String>) -> (String, Option<Style>) {
    (text.into(), None)
}

/// A cell with a style.
pub fn styled(text: impl Into<String>, style: Style) -> (String, Option<Style>) {
    (text.into(), Some(style))
}

/// The first line of `text`, cut to `max` characters with "…".
pub fn one_line(text: &str, max: usize) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() <= max {
        folded
    } else {
        let mut cut: String = folded.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// Asks on the terminal whether to `verb` (forget, drop) `what` for good.
/// Without a terminal to ask, nothing is done: the caller's `--yes` is the
/// way to go on.
pub fn confirm(verb: &str, what: &str) -> anyhow::Result<()> {
    use std::io::{BufRead, IsTerminal, Write};
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        anyhow::bail!("not going to {verb} {what} without --yes: there is no terminal to ask (nothing was deleted)");
    }
    eprint!("{verb} {what}, for good? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        anyhow::bail!("nothing was deleted");
    }
    Ok(())
}
