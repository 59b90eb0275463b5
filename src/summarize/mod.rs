//! Summaries: the one place that chooses who writes them. Every path that
//! summarizes (a hook's SessionEnd, `trae-mem summarize`, the MCP tool
//! `trae_mem_end_session`) calls `session`, which asks the configured
//! summarizer plugin and falls back on the built-in summarizer (`builtin`).

pub mod builtin;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::config::{Loaded, Summarizer};
use crate::plugins::{Plugins, SessionFacts};
use crate::store::{Store, Summary, SummaryLevel, now_ms};
use crate::text::clip;
pub use builtin::{BRIEF_CHARS, DETAILED_CHARS, Summaries};

/// What summarizing a session did.
#[derive(Debug)]
pub struct Summarized {
    /// False when the session has nothing public to summarize.
    pub written: bool,
    /// Who wrote them: the summarizer's name (`Summarizer::name`).
    pub by: String,
    /// Why the configured plugin did not write them, when it failed.
    pub warning: Option<String>,
}

/// Summarizes a session with the summarizer `plugins` names (or the
/// built-in one), replacing its summaries.
pub fn session(store: &mut Store, plugins: &Plugins<'_>, session_id: &str, at: i64) -> Result<Summarized> {
    let observations = store.session_observations(session_id, false)?;
    // The built-in summary doubles as the test of whether anything public
    // happened, and as the fallback.
    let Some(builtin) = builtin::summarize(&observations) else {
        return Ok(Summarized { written: false, by: Summarizer::Builtin.to_string(), warning: None });
    };
    let mut summarized = Summarized { written: true, by: Summarizer::Builtin.to_string(), warning: None };
    let mut summaries = builtin;
    if let Some(plugin) = plugins.summarizer() {
        let session = store.session(session_id)?;
        let facts = SessionFacts {
            id: session.id,
            project: session.project,
            started_at: session.started_at,
            ended_at: session.ended_at,
        };
        match plugins.summarize(plugin, &facts, &observations) {
            Ok((brief, detailed)) => {
                summaries = Summaries { brief: clip(&brief, BRIEF_CHARS), detailed: clip(&detailed, DETAILED_CHARS) };
                summarized.by = plugin.name.clone();
            }
            Err(err) => summarized.warning = Some(format!("{err:#}; the built-in summaries stand")),
        }
    }
    store.write(|w| {
        w.put_summary(session_id, SummaryLevel::Brief, &summaries.brief, at)?;
        w.put_summary(session_id, SummaryLevel::Detailed, &summaries.detailed, at)
    })?;
    Ok(summarized)
}

/// Summarizes a session again with the summarizer `loaded` configures,
/// replacing its summaries. Returns them (none when nothing public was
/// recorded) and who wrote them.
pub fn again(store: &mut Store, loaded: &Loaded, session_id: &str, at: i64) -> Result<(Vec<Summary>, Summarized)> {
    let plugins = Plugins::of(&loaded.config, &loaded.home, true);
    let summarized = session(store, &plugins, session_id, at)?;
    let summaries = if summarized.written { store.summaries(session_id)? } else { Vec::new() };
    Ok((summaries, summarized))
}

/// Brings up to date the summaries of the project's latest sessions (up to
/// `limit`, leaving out `current`) that have none or went on after theirs:
/// sessions that never sent SessionEnd, or were resumed. Uses the built-in
/// summarizer, which is quick, and stops when `budget` is spent; SessionEnd,
/// when it comes, writes the configured summarizer's. Returns how many it
/// summarized.
pub fn catch_up(
    store: &mut Store,
    home: &Path,
    project: &str,
    current: Option<&str>,
    limit: usize,
    budget: Duration,
) -> Result<usize> {
    let started = Instant::now();
    let builtin = Plugins::new(&[], &Summarizer::Builtin, home, false);
    let mut summarized = 0;
    for told in store.sessions_to_tell(project, current, limit)? {
        if !told.stale {
            continue;
        }
        if started.elapsed() >= budget {
            break;
        }
        summarized += usize::from(session(store, &builtin, &told.session.id, now_ms())?.written);
    }
    Ok(summarized)
}
