//! Summaries by a language model, off the hooks' path. A SessionEnd (or the
//! catch-up of a session that ended without one) queues the session with
//! the summarizer it was configured with; `run`, in `trae-mem summarize
//! --pending` (which hooks start in the background), asks the model for
//! each session that is due, within the day's token budget, and stores its
//! summaries and learnings. The built-in summaries stand meanwhile, and
//! whenever the model fails: a failure is retried after a growing pause,
//! and after `MAX_TRIES` the session is left alone and reported.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{BRIEF_CHARS, DETAILED_CHARS, Summaries, for_model};
use crate::config::{PluginDecl, Summarize};
use crate::plugins::Plugins;
use crate::store::{Observation, QueueCounts, Queued, Store, now_ms};
use crate::text::clip;

/// How long a session must be quiet before the catch-up at a session start
/// queues it for the model: by then it ended without a SessionEnd, and is
/// not summarized again at every start while it is still going on.
pub const IDLE_BEFORE_MODEL_MS: i64 = 60 * 60 * 1000;

/// The tries a session gets before it is left alone.
pub const MAX_TRIES: u32 = 5;

/// The pause after each failed try: 1 minute, 5, 30, then 2 hours.
const BACKOFF_MS: [i64; 4] = [60_000, 5 * 60_000, 30 * 60_000, 120 * 60_000];

/// A day in milliseconds: the budget is per UTC day.
const DAY_MS: i64 = 86_400_000;

/// What the queue keeps of a session's summarizer and settings.
pub fn entry(model: &PluginDecl, settings: &Summarize) -> Result<(String, String)> {
    Ok((serde_json::to_string(model)?, serde_json::to_string(settings)?))
}

/// The file the one running worker holds locked.
pub fn lock_path(home: &Path) -> PathBuf {
    home.join("summarize.lock")
}

/// Starts a background `trae-mem summarize --pending`, unless one is
/// running: that one looks for due sessions again each time it lets go of
/// its lock, so it takes what was queued meanwhile, and a second would
/// only start and stop. The hook never waits for it.
pub fn start_in_background(home: &Path) -> Result<()> {
    if worker_running(home)? {
        return Ok(());
    }
    crate::background::start(home, "summarize", &["summarize", "--pending", "--background"], "summaries by a model")
}

/// Whether a worker holds the lock. Trying it takes it for a moment;
/// closing the file lets it go before the worker is started.
fn worker_running(home: &Path) -> Result<bool> {
    let lock = crate::background::open_lock(&lock_path(home))?;
    match lock.try_lock() {
        Ok(()) => Ok(false),
        Err(std::fs::TryLockError::WouldBlock) => Ok(true),
        Err(std::fs::TryLockError::Error(err)) => Err(err).context("cannot try the summarize lock"),
    }
}

/// What the queue holds, with the tokens spent today (a UTC day).
pub fn counts(store: &Store) -> Result<QueueCounts> {
    store.queue_counts(&utc_day(now_ms())?)
}

/// A queued session is due now.
pub fn any_due(store: &Store) -> Result<bool> {
    Ok(!store.due_summaries(now_ms())?.is_empty())
}

/// Makes every waiting session due now, but those waiting for the day's
/// budget: `summarize --pending --now` skips the pause after a failure.
pub fn all_due_now(store: &Store) -> Result<()> {
    store.summaries_due_now(now_ms())
}

/// What became of one queued session.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The model's summaries are stored.
    Summarized { session_id: String, by: String, tokens: u64, learnings: usize },
    /// It failed; it is tried again at `retry_at`, or never (`None`).
    /// `charged`: the tokens charged for a request a server received.
    Failed { session_id: String, error: String, retry_at: Option<i64>, charged: u64 },
    /// The day's budget is spent: it waits for the next day.
    OverBudget { session_id: String, until: i64 },
}

/// Asks the model for every queued session that is due, until none is
/// left; calls `progress` after each. Returns what became of them.
pub fn run(store: &mut Store, home: &Path, progress: &mut dyn FnMut(&Outcome)) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    loop {
        let due = store.due_summaries(now_ms())?;
        if due.is_empty() {
            return Ok(outcomes);
        }
        for queued in due {
            let outcome = one(store, home, &queued)?;
            progress(&outcome);
            outcomes.push(outcome);
        }
    }
}

fn one(store: &mut Store, home: &Path, queued: &Queued) -> Result<Outcome> {
    let session_id = queued.session_id.clone();
    let day = utc_day(now_ms())?;
    // `charged`: the estimate of a request a server received before it
    // failed (timed out, refused, answered badly): it may have cost tokens.
    let failed = |store: &mut Store, error: String, charged: u64| -> Result<Outcome> {
        let tries = queued.tries + 1;
        let retry_at =
            (tries < MAX_TRIES).then(|| now_ms() + BACKOFF_MS[(tries as usize - 1).min(BACKOFF_MS.len() - 1)]);
        store.write(|w| {
            w.summary_failed(&queued.session_id, &error, retry_at)?;
            w.charge_failure(&day, charged)
        })?;
        crate::plugins::log_line(home, "host", "warn", &format!("session {}: {error}", queued.session_id));
        Ok(Outcome::Failed { session_id: queued.session_id.clone(), error, retry_at, charged })
    };
    let (plugin, settings) = match decode(queued) {
        Ok(decoded) => decoded,
        Err(err) => return failed(store, format!("{err:#}"), 0),
    };
    let observations = store.session_observations(&session_id, false)?;
    let sent = for_model::select(&observations, settings.max_input_chars);
    let estimate = estimate_tokens(&sent);
    let now = now_ms();
    if store.tokens_spent(&day)? + estimate > settings.max_tokens_per_day {
        let until = (now / DAY_MS + 1) * DAY_MS;
        store.write(|w| w.summary_over_budget(&session_id, until))?;
        return Ok(Outcome::OverBudget { session_id, until });
    }
    let told = super::facts_for_plugin(store, &session_id)?;
    let plugins = Plugins::new(std::slice::from_ref(&plugin), &settings, home, true);
    let limit = Duration::from_millis(settings.timeout_ms);
    let summary = match plugins.summarize(&plugin, &told, &sent, Some(limit)) {
        Ok(summary) => summary,
        Err(err) => {
            let charged = if plugins.requests_handed_over() > 0 { estimate } else { 0 };
            return failed(store, format!("{err:#}"), charged);
        }
    };
    // The server's count when the plugin reports it, else our estimate:
    // a plugin cannot spend without being charged.
    let tokens = if summary.tokens_used > 0 { summary.tokens_used } else { estimate };
    let summaries =
        Summaries { brief: clip(&summary.brief, BRIEF_CHARS), detailed: clip(&summary.detailed, DETAILED_CHARS) };
    let at = now_ms();
    store.write(|w| {
        let facts = super::facts::of(&observations);
        super::write(w, &session_id, &summaries, &facts, Some(&summary.learnings), at)?;
        w.summary_done(&session_id, &day, tokens)
    })?;
    Ok(Outcome::Summarized { session_id, by: plugin.name, tokens, learnings: summary.learnings.len() })
}

fn decode(queued: &Queued) -> Result<(PluginDecl, Summarize)> {
    let plugin = serde_json::from_str(&queued.plugin).context("the queued summarizer cannot be read")?;
    let settings = serde_json::from_str(&queued.settings).context("the queued [summarize] settings cannot be read")?;
    Ok((plugin, settings))
}

/// The tokens a request for `sent` may cost, before the server says: about
/// four characters a token in English, one in Chinese, plus the plugin's
/// instructions and the reply.
pub fn estimate_tokens(sent: &[Observation]) -> u64 {
    let (ascii, other) = sent
        .iter()
        .flat_map(|o| o.content.chars())
        .fold((0u64, 0u64), |(a, o), c| if c.is_ascii() { (a + 1, o) } else { (a, o + 1) });
    ascii / 4 + other + REQUEST_OVERHEAD_TOKENS
}

/// The instructions and the reply of one summary request, in tokens.
const REQUEST_OVERHEAD_TOKENS: u64 = 1500;

/// The UTC day of `ms`, as `2026-12-04`: what the budget counts by.
fn utc_day(ms: i64) -> Result<String> {
    Ok(jiff::Timestamp::from_millisecond(ms)?.strftime("%Y-%m-%d").to_string())
}
