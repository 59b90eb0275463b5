//! The context given back to the agent at session start: the brief
//! summaries of this project's latest sessions, newest first, and how to
//! search for more. The MCP server's `trae_mem_inject` uses the same code.

use anyhow::Result;

use crate::config::ContextSettings;
use crate::store::Store;
use crate::text::clip;
use crate::timefmt;

/// The line that tells the agent how to recall more.
pub const HOW_TO_SEARCH: &str = "Search this memory with `trae-mem search \"<words>\" --project .` and see what happened around a hit with `trae-mem timeline <id>`.";

/// Builds the context block for `project`, or `None` when there is no memory yet.
pub fn build(store: &Store, project: &str, settings: &ContextSettings) -> Result<Option<String>> {
    let briefs = store.recent_briefs(project, settings.sessions)?;
    if briefs.is_empty() {
        return Ok(None);
    }
    let header = "# Memory from earlier sessions in this project (trae-mem)\n";
    let footer = format!("\n{HOW_TO_SEARCH}");
    let budget = settings.budget_chars.saturating_sub(header.chars().count() + footer.chars().count());
    let mut body = String::new();
    for (session, brief) in briefs {
        let when = timefmt::local_minute(session.ended_at.unwrap_or(session.started_at));
        let entry = format!("\n## {when} (session {})\n{brief}\n", &session.id[..8]);
        let room = budget.saturating_sub(body.chars().count());
        if room < 80 {
            break;
        }
        body.push_str(&clip(&entry, room));
    }
    Ok(Some(clip(&format!("{header}{body}{footer}"), settings.budget_chars)))
}
