//! After delivery: what a hook does once its event is stored and the
//! client's answer is ready. Each step is optional, bounded by the hook's
//! deadline, and changes nothing the client was told:
//! - events spooled earlier are stored (`Ingest::replay`);
//! - at SessionEnd, the day's slice of retention runs, and a project that
//!   shares its memory starts a background sync it never waits for;
//! - after a turn (Stop) and at SessionEnd, a background `trae-mem embed`
//!   gives the new rows their vectors, for search by meaning;
//! - at SessionEnd and SessionStart, when the summarizer is a language model
//!   (a plugin granted HTTP endpoints), a background `trae-mem summarize
//!   --pending` asks it for the sessions queued for it.
//!
//! It stands above ingest, forget and sync, so that ingest records and
//! answers and nothing else. The hook command and MCP's
//! `trae_mem_hook_event` call it after `Ingest::deliver`.

use std::time::{Duration, Instant};

use crate::config::Loaded;
use crate::event::EventKind;
use crate::forget::retention;
use crate::ingest::{self, Accepted, Ingest, Outcome, Spool, Warning};

/// The most a SessionEnd hook spends on its daily slice of retention: the
/// agent is done by then, but a client may still wait for the hook.
const RETENTION_BUDGET: Duration = Duration::from_millis(300);

/// Runs the steps that follow the delivery of `accepted` by a hook that
/// began at `started`, adding a warning to `outcome` for each that failed.
pub fn run(ingest: &Ingest<'_>, loaded: &Loaded, accepted: &Accepted, started: Instant, outcome: &mut Outcome) {
    if !outcome.stored {
        return;
    }
    let deadline = ingest.deadline(started);
    if accepted.event.kind == EventKind::SessionEnd {
        let limits = &loaded.config.retention;
        let budget = RETENTION_BUDGET.min(ingest::time_left(deadline) / 2);
        // Most homes set no limits: they are spared a second open.
        let sliced = match limits.is_set() {
            true => ingest.open_store(deadline).and_then(|mut store| retention::daily(&mut store, limits, budget)),
            false => Ok(false),
        };
        if let Err(err) = sliced {
            outcome.warnings.push(Warning::Retention(err));
        }
        if crate::sync::after_sessions(loaded)
            && let Err(err) = crate::sync::start_in_background(&loaded.home, &accepted.resolved.project)
        {
            outcome.warnings.push(Warning::Sync(err));
        }
    }
    if matches!(accepted.event.kind, EventKind::Stop | EventKind::SessionEnd)
        && let Err(err) = crate::embed::start_in_background(&loaded.home)
    {
        outcome.warnings.push(Warning::Embed(err));
    }
    let settings = &accepted.resolved.settings;
    let plugins = crate::plugins::Plugins::new(&settings.plugins, &settings.summarize, &loaded.home, false);
    let model = crate::summarize::choose(&plugins).model().is_some();
    if model
        && matches!(accepted.event.kind, EventKind::SessionEnd | EventKind::SessionStart)
        && let Err(err) = crate::summarize::queue::start_in_background(&loaded.home)
    {
        outcome.warnings.push(Warning::Summarize(err));
    }
    let spool = Spool::new(&loaded.home);
    if spool.has_pending()
        && let Err(err) = ingest.replay(&spool, Some(deadline))
    {
        outcome.warnings.push(Warning::Replay(err));
    }
}
