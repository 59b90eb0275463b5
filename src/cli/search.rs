//! `trae-mem search`: full-text search over memory.

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;

use super::output::{self, Style, plain, styled};
use super::{Env, project_arg};
use trae_mem::recall::fuse::FoundBy;
use trae_mem::recall::{self, SearchHit, SearchRequest};
use trae_mem::store::{Filters, Kind, Store};
use trae_mem::timefmt;

/// Search memory.
///
/// Ask the way you would ask a colleague, in English or Chinese ("how did we fix the crash on
/// an empty config", "上次批量导入为什么会超时"), or paste an identifier, a path or an error.
/// Hits that hold every term come first, then those holding the rarest terms. Words also match
/// their other forms (fixed, fixes) and common synonyms (crash, panic, 崩溃); identifiers and
/// paths match as written, without the `()`, quotes or `:line` pasting adds; "quoted text" must
/// appear as written. Case is ignored, in any language. Session summaries are hits of kind
/// summary. With no query, lists the most recent observations.
///
/// Memories are also found by meaning, with the embedding model inside trae-mem: "the app blows
/// up without its settings" finds "panic when config.toml is missing". Each hit says what found
/// it (`found_by`: words, meaning or both). Rows get their vectors after each turn, in the
/// background; `trae-mem embed` gives an existing store its vectors.
#[derive(Debug, Args)]
pub struct Cmd {
    /// What to find.
    query: Vec<String>,
    #[command(flatten)]
    filters: FilterArgs,
    /// The most results (at least 1).
    #[arg(long, default_value_t = 20, value_parser = output::at_least_one)]
    limit: usize,
    /// Results to skip, for paging.
    #[arg(long, default_value_t = 0)]
    offset: usize,
    /// Print JSON: {"query", "index", "hits": [{id, session_id, project, ts, kind, tool, level, author, snippet, score, matched, found_by}]};
    /// a summary's id is null.
    #[arg(long)]
    json: bool,
}

/// The filters a search or listing takes.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// Only this project: a directory (resolved to its repository) or a stored project path.
    #[arg(long, value_name = "PATH")]
    project: Option<String>,
    /// Only this session (its id).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Only this kind: user, tool, note, response, decision, error, ...
    #[arg(long)]
    kind: Option<String>,
    /// Only this tool, such as Bash or Edit.
    #[arg(long)]
    tool: Option<String>,
    /// Only memories pulled from this teammate (`trae-mem sync`): user@device, or the user alone.
    #[arg(long, value_name = "NAME")]
    author: Option<String>,
    /// Only from this time on: 2026-11-30, "2026-11-30 14:00", RFC 3339, or an age (30m, 12h, 7d).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only before this time (same forms as --since).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
}

impl FilterArgs {
    /// The filters, checked against `store`: a kind that no observation
    /// has is a typo to name, not an empty result.
    pub fn resolve(&self, store: &Store) -> Result<Filters> {
        let kind = self.kind.as_deref().map(Kind::from);
        if let Some(Kind::Other(name)) = &kind {
            let kinds = super::reader(store).kinds()?;
            if !kinds.iter().any(|k| &k.kind == name) {
                let built_in: Vec<&str> = Kind::BUILT_IN.iter().map(Kind::as_str).collect();
                let here = kinds.iter().map(|k| k.kind.as_str()).filter(|k| !built_in.contains(k));
                let known: Vec<&str> = built_in.iter().copied().chain(here).collect();
                bail!("no observation here is of kind {name:?}; the kinds are {}", known.join(", "));
            }
        }
        Ok(Filters {
            project: project_arg(self.project.as_deref())?,
            session: self.session.clone(),
            exclude_session: None,
            kind,
            tool: self.tool.clone(),
            author: self.author.clone(),
            since: self.since.as_deref().map(timefmt::parse).transpose()?,
            until: self.until.as_deref().map(timefmt::parse).transpose()?,
        })
    }
}

#[derive(Serialize)]
struct SearchOutput<'a> {
    query: &'a str,
    index: &'a str,
    /// Memories that have no vector yet: search finds them by words alone.
    waiting_for_vectors: u64,
    hits: &'a [SearchHit],
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, store) = env.open_to_read()?;
        let text = self.query.join(" ");
        let request = SearchRequest {
            text: text.clone(),
            filters: self.filters.resolve(&store)?,
            limit: self.limit,
            offset: self.offset,
        };
        let hits = recall::search(&store, &request)?;
        let waiting = super::reader(&store).vectors_waiting()?;
        if self.json {
            let index = store.index_mode().as_str();
            return output::json(&SearchOutput { query: &text, index, waiting_for_vectors: waiting, hits: &hits });
        }
        if let Some(line) = recall::meaning::waiting_line(waiting) {
            eprintln!("{line}");
        }
        if hits.is_empty() {
            eprintln!("no matches for {text:?}");
            return Ok(());
        }
        let colour = output::colour();
        let mut table = output::Table::new();
        for hit in &hits {
            table.row(vec![
                styled(hit.reference(), Style::Cyan),
                styled(
                    match &hit.author {
                        Some(author) => format!("{} by {author}", timefmt::local_minute(hit.ts)),
                        None => timefmt::local_minute(hit.ts),
                    },
                    Style::Dim,
                ),
                plain(match hit.found_by {
                    Some(FoundBy::Meaning) => format!("{} (by meaning)", hit.kind),
                    _ => hit.kind.to_string(),
                }),
                plain(hit.tool.clone().or(hit.level.map(|l| l.as_str().to_owned())).unwrap_or_default()),
                plain(output::marks(&hit.snippet, colour)),
            ]);
        }
        table.print(colour)
    }
}
