//! The context given back to the agent at session start: the brief
//! summaries of this project's latest sessions, newest first, and how to
//! search for more. The MCP server's `trae_mem_inject` uses the same code,
//! optionally focused by a query whose best hits come first.

use anyhow::Result;

use crate::config::ContextSettings;
use crate::store::{Filters, SearchRequest, Store};
use crate::text::clip;
use crate::timefmt;

/// The line that tells the agent how to recall more.
pub const HOW_TO_SEARCH: &str = "Search this memory with `trae-mem search \"<words>\" --project .` and see what happened around a hit with `trae-mem timeline <id>`.";

/// How many search hits a focused context shows.
const FOCUS_HITS: usize = 5;

/// Builds the context block for `project`, or `None` when there is no memory yet.
pub fn build(store: &Store, project: &str, settings: &ContextSettings) -> Result<Option<String>> {
    build_focused(store, project, settings, None)
}

/// Builds the context block, putting the project's best hits for `query`
/// (when given) before the session summaries, all within the one budget.
pub fn build_focused(
    store: &Store,
    project: &str,
    settings: &ContextSettings,
    query: Option<&str>,
) -> Result<Option<String>> {
    let mut sections = Vec::new();
    if let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) {
        sections.extend(focus_section(store, project, query)?);
    }
    for (session, brief) in store.recent_briefs(project, settings.sessions)? {
        let when = timefmt::local_minute(session.ended_at.unwrap_or(session.started_at));
        sections.push(format!("\n## {when} (session {})\n{brief}\n", &session.id[..8]));
    }
    if sections.is_empty() {
        return Ok(None);
    }
    let header = "# Memory from earlier sessions in this project (trae-mem)\n";
    let footer = format!("\n{HOW_TO_SEARCH}");
    let budget = settings.budget_chars.saturating_sub(header.chars().count() + footer.chars().count());
    let mut body = String::new();
    for section in sections {
        let room = budget.saturating_sub(body.chars().count());
        if room < 80 {
            break;
        }
        body.push_str(&clip(&section, room));
    }
    Ok(Some(clip(&format!("{header}{body}{footer}"), settings.budget_chars)))
}

/// The project's best search hits for `query`, one line each, or `None`
/// when nothing matches.
fn focus_section(store: &Store, project: &str, query: &str) -> Result<Option<String>> {
    let hits = store.search(&SearchRequest {
        text: query.to_owned(),
        filters: Filters { project: Some(project.to_owned()), ..Filters::default() },
        limit: FOCUS_HITS,
        offset: 0,
    })?;
    if hits.is_empty() {
        return Ok(None);
    }
    let mut section = format!("\n## Related to {query:?}\n");
    for hit in hits {
        let tool = hit.tool.map(|t| format!(" {t}")).unwrap_or_default();
        let snippet: Vec<&str> = hit.snippet.split_whitespace().collect();
        section.push_str(&format!(
            "- #{} {} {}{tool}: {}\n",
            hit.id,
            timefmt::local_minute(hit.ts),
            hit.kind,
            snippet.join(" ")
        ));
    }
    Ok(Some(section))
}
