//! Summaries: the one place that chooses who writes them. Every path that
//! summarizes (a hook's SessionEnd, `trae-mem summarize`, the MCP tool
//! `trae_mem_end_session`) calls `session`, which asks the configured
//! summarizer plugin and falls back on the built-in summarizer (`builtin`).
//! A summarizer granted HTTP endpoints (a language model) never runs there:
//! `session` writes the built-in summaries and queues the session, and
//! `queue::run` asks the model later, off the hooks' path.

pub mod builtin;
mod for_model;
pub mod queue;

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::config::{Loaded, PluginDecl, Summarizer};
use crate::plugins::{Learning, Plugins, SessionFacts};
use crate::store::{LEARNING, Store, Summary, SummaryLevel, Writer, now_ms};
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
    /// The session waits for a language model's summaries (`queue`); the
    /// built-in ones stand until then.
    pub queued: bool,
}

/// Summarizes a session with the summarizer `plugins` names (or the
/// built-in one), replacing its summaries.
pub fn session(store: &mut Store, plugins: &Plugins<'_>, session_id: &str, at: i64) -> Result<Summarized> {
    let observations = store.session_observations(session_id, false)?;
    // The built-in summary doubles as the test of whether anything public
    // happened, and as the fallback.
    let Some(builtin) = builtin::summarize(&observations) else {
        return Ok(Summarized { written: false, by: Summarizer::Builtin.to_string(), warning: None, queued: false });
    };
    let mut summarized =
        Summarized { written: true, by: Summarizer::Builtin.to_string(), warning: None, queued: false };
    let mut summaries = builtin;
    let mut learnings = None;
    match plugins.summarizer() {
        Some(model) if model.uses_network() => {
            let queued = queue::entry(model, plugins.settings())?;
            store.write(|w| w.queue_summary(session_id, &queued.0, &queued.1, at))?;
            summarized.queued = true;
        }
        Some(plugin) => {
            let facts = facts(store, session_id)?;
            match plugins.summarize(plugin, &facts, &observations, None) {
                Ok(summary) => {
                    summaries = Summaries {
                        brief: clip(&summary.brief, BRIEF_CHARS),
                        detailed: clip(&summary.detailed, DETAILED_CHARS),
                    };
                    learnings = Some(summary.learnings);
                    summarized.by = plugin.name.clone();
                }
                Err(err) => summarized.warning = Some(format!("{err:#}; the built-in summaries stand")),
            }
        }
        None => {}
    }
    store.write(|w| write(w, session_id, &summaries, learnings.as_deref(), at))?;
    Ok(summarized)
}

/// What a summarizer plugin is told of a session.
fn facts(store: &Store, session_id: &str) -> Result<SessionFacts> {
    let session = store.session(session_id)?;
    Ok(SessionFacts {
        id: session.id,
        project: session.project,
        started_at: session.started_at,
        ended_at: session.ended_at,
    })
}

/// Writes a session's summaries and, when a plugin gave them, its learnings.
fn write(
    w: &Writer<'_>,
    session_id: &str,
    summaries: &Summaries,
    learnings: Option<&[Learning]>,
    at: i64,
) -> Result<()> {
    w.put_summary(session_id, SummaryLevel::Brief, &summaries.brief, at)?;
    w.put_summary(session_id, SummaryLevel::Detailed, &summaries.detailed, at)?;
    if let Some(learnings) = learnings {
        let rows: Vec<(String, Vec<String>)> = learnings.iter().filter_map(learning_row).collect();
        w.replace_learnings(session_id, &rows)?;
    }
    Ok(())
}

/// A learning as an observation of kind `learning`: its title, its facts
/// as a list, then the files and concepts, which are also its tags.
fn learning_row(learning: &Learning) -> Option<(String, Vec<String>)> {
    let title = clip(learning.title.trim(), LEARNING_TITLE_CHARS);
    if title.is_empty() {
        return None;
    }
    let clean = |items: &[String]| -> Vec<String> {
        items
            .iter()
            .map(|i| clip(i.trim(), LEARNING_ITEM_CHARS))
            .filter(|i| !i.is_empty())
            .take(LEARNING_ITEMS)
            .collect()
    };
    let (facts, files, concepts) = (clean(&learning.facts), clean(&learning.files), clean(&learning.concepts));
    let mut text = title;
    for fact in &facts {
        text.push_str("\n- ");
        text.push_str(fact);
    }
    for (label, items) in [("files", &files), ("concepts", &concepts)] {
        if !items.is_empty() {
            text.push_str(&format!("\n{label}: {}", items.join(", ")));
        }
    }
    let mut tags = vec![LEARNING.to_owned()];
    tags.extend(files.iter().map(|f| format!("file:{f}")));
    tags.extend(concepts.iter().map(|c| format!("concept:{c}")));
    Some((text, tags))
}

/// Bounds on a plugin's learnings as stored: a learning is a note, not a
/// document.
const LEARNING_TITLE_CHARS: usize = 200;
const LEARNING_ITEM_CHARS: usize = 400;
const LEARNING_ITEMS: usize = 20;

/// Summarizes a session again with the summarizer `loaded` configures,
/// replacing its summaries. Returns them (none when nothing public was
/// recorded) and who wrote them.
pub fn again(store: &mut Store, loaded: &Loaded, session_id: &str, at: i64) -> Result<(Vec<Summary>, Summarized)> {
    let plugins = Plugins::of(&loaded.config, &loaded.home, true);
    let summarized = session(store, &plugins, session_id, at)?;
    let summaries = if summarized.written { store.summaries(session_id)? } else { Vec::new() };
    Ok((summaries, summarized))
}

/// Summarizes a session again after rows of it were forgotten or redacted,
/// with the configured summarizer, except that a language model is not
/// asked: the built-in summarizer writes them at once, with no tokens spent
/// on a deletion and no model writing again what was just removed
/// (`trae-mem summarize SESSION` asks it again).
pub fn after_removal(store: &mut Store, loaded: &Loaded, session_id: &str, at: i64) -> Result<Summarized> {
    let configured = Plugins::of(&loaded.config, &loaded.home, true);
    let builtin_settings = crate::config::Summarize::default();
    let plugins = match configured.summarizer() {
        Some(model) if model.uses_network() => Plugins::new(&[], &builtin_settings, &loaded.home, true),
        _ => configured,
    };
    session(store, &plugins, session_id, at)
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
    model: Option<(&PluginDecl, &crate::config::Summarize)>,
) -> Result<usize> {
    let started = Instant::now();
    let settings = crate::config::Summarize::default();
    let builtin = Plugins::new(&[], &settings, home, false);
    let mut summarized = 0;
    for told in store.sessions_to_tell(project, current, limit)? {
        if !told.stale {
            continue;
        }
        if started.elapsed() >= budget {
            break;
        }
        let written = session(store, &builtin, &told.session.id, now_ms())?.written;
        summarized += usize::from(written);
        // A session quiet this long has ended without saying so: the model
        // may summarize it now without being asked again at every start.
        if let Some((model, settings)) = model
            && written
            && now_ms() - told.last_active >= queue::IDLE_BEFORE_MODEL_MS
        {
            let (plugin, settings) = queue::entry(model, settings)?;
            store.write(|w| w.queue_summary(&told.session.id, &plugin, &settings, now_ms()))?;
        }
    }
    Ok(summarized)
}
