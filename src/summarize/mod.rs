//! Summaries: the one place that chooses who writes them (`choose`). Every
//! path that summarizes (a hook's SessionEnd, `trae-mem summarize`, the MCP
//! tool `trae_mem_end_session`) calls `session`, which asks the configured
//! summarizer plugin and falls back on the built-in summarizer (`builtin`).
//! A summarizer granted HTTP endpoints (a language model) never runs there:
//! `session` writes the built-in summaries and queues the session, and
//! `queue::run` asks the model later, off the hooks' path. Whoever writes
//! the prose, the session's facts (`facts`) are taken from its rows and
//! stored beside it: recall reads those, never the prose.

mod builtin;
mod facts;
mod for_model;
pub mod queue;

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::config::{Loaded, PluginDecl, Summarizer};
use crate::plugins::{Learning, Plugins, SessionFacts};
use crate::store::{Facts, LEARNING, Store, Summary, SummaryLevel, TOLD_CANDIDATES, Writer, now_ms};
use crate::text::clip;
pub use builtin::{BRIEF_CHARS, DETAILED_CHARS, Summaries};
pub use facts::tool_action;

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

/// Who writes a session's summaries, and when.
#[derive(Debug, Clone, Copy)]
pub enum Choice<'p> {
    /// The built-in summarizer, at once.
    BuiltIn,
    /// A summarizer plugin, at once, on the path of the command or hook
    /// that asks.
    Plugin(&'p PluginDecl),
    /// A language model (a summarizer plugin granted HTTP endpoints), off
    /// the hooks' path: the session is queued for `queue::run`, and the
    /// built-in summaries stand until then.
    Model(&'p PluginDecl),
}

impl<'p> Choice<'p> {
    /// The language model, when one summarizes.
    pub fn model(self) -> Option<&'p PluginDecl> {
        match self {
            Choice::Model(model) => Some(model),
            _ => None,
        }
    }
}

/// Who writes summaries under the configuration `plugins` was made from:
/// the one place that decides it. Every path that summarizes, starts the
/// model's worker or checks its keys asks here.
pub fn choose<'p>(plugins: &Plugins<'p>) -> Choice<'p> {
    match plugins.summarizer() {
        None => Choice::BuiltIn,
        Some(plugin) if plugin.uses_network() => Choice::Model(plugin),
        Some(plugin) => Choice::Plugin(plugin),
    }
}

/// Summarizes a session as configured (`choose`), replacing its summaries.
pub fn session(store: &mut Store, plugins: &Plugins<'_>, session_id: &str, at: i64) -> Result<Summarized> {
    session_by(store, plugins, choose(plugins), session_id, at)
}

/// Summarizes a session by `choice`, whose plugin `plugins` runs.
fn session_by(
    store: &mut Store,
    plugins: &Plugins<'_>,
    choice: Choice<'_>,
    session_id: &str,
    at: i64,
) -> Result<Summarized> {
    let observations = store.session_observations(session_id, false)?;
    let facts = facts::of(&observations);
    // The built-in summary doubles as the test of whether anything public
    // happened, and as the fallback.
    let Some(builtin) = builtin::summarize(&observations, &facts) else {
        return Ok(Summarized { written: false, by: Summarizer::Builtin.to_string(), warning: None, queued: false });
    };
    let mut summarized =
        Summarized { written: true, by: Summarizer::Builtin.to_string(), warning: None, queued: false };
    let mut summaries = builtin;
    let mut learnings = None;
    match choice {
        Choice::Model(model) => {
            let queued = queue::entry(model, plugins.settings())?;
            store.write(|w| w.queue_summary(session_id, &queued.0, &queued.1, at))?;
            summarized.queued = true;
        }
        Choice::Plugin(plugin) => {
            let told = facts_for_plugin(store, session_id)?;
            match plugins.summarize(plugin, &told, &observations, None) {
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
        Choice::BuiltIn => {}
    }
    store.write(|w| write(w, session_id, &summaries, &facts, learnings.as_deref(), at))?;
    Ok(summarized)
}

/// What a summarizer plugin is told of a session.
fn facts_for_plugin(store: &Store, session_id: &str) -> Result<SessionFacts> {
    let session = store.session(session_id)?;
    Ok(SessionFacts {
        id: session.id,
        project: session.project,
        started_at: session.started_at,
        ended_at: session.ended_at,
    })
}

/// Writes a session's summaries and facts and, when a plugin gave them,
/// its learnings.
fn write(
    w: &Writer<'_>,
    session_id: &str,
    summaries: &Summaries,
    facts: &Facts,
    learnings: Option<&[Learning]>,
    at: i64,
) -> Result<()> {
    w.put_summary(session_id, SummaryLevel::Brief, &summaries.brief, at)?;
    w.put_summary(session_id, SummaryLevel::Detailed, &summaries.detailed, at)?;
    w.put_facts(session_id, &facts::to_store(facts), at)?;
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
    let plugins = Plugins::of(&loaded.config, &loaded.home, true);
    let choice = match choose(&plugins) {
        Choice::Model(_) => Choice::BuiltIn,
        choice => choice,
    };
    session_by(store, &plugins, choice, session_id, at)
}

/// A session's built-in summaries and facts as its rows stand now,
/// without writing anything: what session start tells of a session whose
/// summaries are older than its rows, or that has no facts yet. The
/// summaries are `None` when nothing public is left.
pub fn as_it_stands(store: &Store, session_id: &str) -> Result<(Option<Summaries>, Facts)> {
    let observations = store.session_observations(session_id, false)?;
    let facts = facts::of(&observations);
    Ok((builtin::summarize(&observations, &facts), facts))
}

/// Writes a session's facts from its rows, leaving its summaries be.
fn write_facts(store: &mut Store, session_id: &str) -> Result<()> {
    let facts = facts::of(&store.session_observations(session_id, false)?);
    store.write(|w| w.put_facts(session_id, &facts::to_store(&facts), now_ms()))
}

/// Gives facts to the sessions that have summaries but none (a store
/// written before facts were kept, or summaries pulled or imported), until
/// none is left or `budget` is spent. Each session is written on its own,
/// so a stop loses nothing and the next call goes on. Returns how many it
/// wrote and whether it finished.
pub fn fill_facts(store: &mut Store, budget: Option<Duration>) -> Result<(usize, bool)> {
    let started = Instant::now();
    let mut written = 0;
    loop {
        let lacking = store.sessions_lacking_facts(FILL_BATCH)?;
        if lacking.is_empty() {
            return Ok((written, true));
        }
        for session_id in lacking {
            if budget.is_some_and(|b| started.elapsed() >= b) {
                return Ok((written, false));
            }
            write_facts(store, &session_id)?;
            written += 1;
        }
    }
}

/// How many sessions `fill_facts` looks up at a time.
const FILL_BATCH: usize = 100;

/// Brings up to date the summaries of the sessions a session start weighs
/// (`TOLD_CANDIDATES`, leaving out `current`) that have none or went on
/// after theirs:
/// sessions that never sent SessionEnd, or were resumed. Uses the built-in
/// summarizer, which is quick, and stops when `budget` is spent; SessionEnd,
/// when it comes, writes the configured summarizer's, and a language model
/// (`Choice::Model`) is queued for a session quiet long enough. Sessions
/// among them whose summaries stand but that have no facts get their
/// facts. Returns how many it summarized.
pub fn catch_up(
    store: &mut Store,
    plugins: &Plugins<'_>,
    project: &str,
    current: Option<&str>,
    budget: Duration,
) -> Result<usize> {
    let started = Instant::now();
    let model = choose(plugins).model();
    let mut summarized = 0;
    for told in store.sessions_to_tell(project, current, TOLD_CANDIDATES)? {
        if !told.stale && told.facts.is_some() {
            continue;
        }
        if started.elapsed() >= budget {
            break;
        }
        if !told.stale {
            // Summarized before facts were kept, or pulled with its
            // summaries: its summaries stand, whoever wrote them.
            write_facts(store, &told.session.id)?;
            continue;
        }
        let written = session_by(store, plugins, Choice::BuiltIn, &told.session.id, now_ms())?.written;
        summarized += usize::from(written);
        // A session quiet this long has ended without saying so: the model
        // may summarize it now without being asked again at every start.
        if let Some(model) = model
            && written
            && now_ms() - told.last_active >= queue::IDLE_BEFORE_MODEL_MS
        {
            let (plugin, settings) = queue::entry(model, plugins.settings())?;
            store.write(|w| w.queue_summary(&told.session.id, &plugin, &settings, now_ms()))?;
        }
    }
    Ok(summarized)
}
