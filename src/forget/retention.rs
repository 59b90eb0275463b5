//! Retention: the limits of `[retention]`, applied by `trae-mem gc`, and a
//! bounded slice at a time by SessionEnd hooks, at most once a day.
//!
//! Retention drops detail, not memory: with `keep_summaries`, a session
//! whose observations all age out keeps its summaries. It leaves no
//! tombstones (see `store::forget`). Deletes go oldest first, in the same
//! short transactions as `forget`, so a gc killed at any point leaves a
//! sound store and the next one finishes the work.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde::Serialize;

use crate::config::Retention;
use crate::store::{Store, now_ms};
use crate::summarize;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// How long the ids of stored events are kept (see `Store::prune_ingested`):
/// far longer than an event waits in the spool.
const INGESTED_KEEP_DAYS: i64 = 30;

/// The store fact that says when a gc last finished, in unix milliseconds.
pub const FINISHED_KEY: &str = "gc_finished_at";

/// Observations deleted per round: a command's rounds are large; a hook's
/// are small enough to stop within its slice.
const ROUND: usize = 2000;
const HOOK_ROUND: usize = 200;

/// What a gc did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Collected {
    /// Observations older than `max_age_days`, deleted.
    pub aged_out: u64,
    /// Observations deleted to bring the store under `max_db_mb`.
    pub over_size: u64,
    /// Sessions removed once empty (without summaries to keep).
    pub sessions_removed: u64,
    /// Ids of long-stored events forgotten.
    pub events_pruned: u64,
    /// Sessions summarized before their facts were kept (or pulled or
    /// imported with their summaries) that got them.
    pub facts_written: u64,
    /// The database file's size before and after, in bytes.
    pub bytes_before: u64,
    pub bytes_after: u64,
    /// False when the time budget ran out first; the next gc goes on.
    pub finished: bool,
}

/// Applies `retention` and gives the space back. With a `budget`, stops
/// when it is spent (what is left waits for the next gc), and never starts
/// the whole-file rewrite that converts a store from before auto-vacuum.
/// `progress` hears the observations deleted so far.
pub fn gc(
    store: &mut Store,
    retention: &Retention,
    budget: Option<Duration>,
    progress: &mut dyn FnMut(u64),
) -> Result<Collected> {
    let started = Instant::now();
    let out_of_time = || budget.is_some_and(|b| started.elapsed() >= b);
    let round = if budget.is_some() { HOOK_ROUND } else { ROUND };
    let mut report = Collected { bytes_before: store.stats_file_bytes(), ..Collected::default() };
    let mut done = 0;

    // Facts are taken from rows, so the sessions without them get them
    // before retention takes the rows.
    let (written, all_have_facts) = summarize::fill_facts(store, budget)?;
    report.facts_written = written as u64;
    if !all_have_facts {
        report.bytes_after = store.stats_file_bytes();
        return Ok(report);
    }

    if let Some(days) = retention.max_age_days {
        let cutoff = now_ms() - i64::from(days) * DAY_MS;
        loop {
            let ids = store.oldest_observations(Some(cutoff), round)?;
            if ids.is_empty() || out_of_time() {
                break;
            }
            report.aged_out += delete(store, &ids, retention, &mut report.sessions_removed)?;
            done += ids.len() as u64;
            progress(done);
        }
    }
    if let Some(mb) = retention.max_db_mb {
        let cap = mb.saturating_mul(1 << 20);
        loop {
            let used = store.used_bytes()?;
            let rows = store.observation_total()?;
            if used <= cap || rows == 0 || out_of_time() {
                break;
            }
            // Delete about as many rows as the excess holds, at the average
            // row's size, and look again: index pages shrink less evenly.
            let excess = (used - cap) as f64 / (used as f64 / rows as f64);
            let ids = store.oldest_observations(None, (excess.ceil() as usize).clamp(1, round))?;
            report.over_size += delete(store, &ids, retention, &mut report.sessions_removed)?;
            done += ids.len() as u64;
            progress(done);
        }
    }
    report.events_pruned = store.prune_ingested(now_ms() - INGESTED_KEEP_DAYS * DAY_MS)?;
    let remaining = || budget.map(|b| b.saturating_sub(started.elapsed()));
    let compacted = !out_of_time() && store.compact_index(remaining())?;
    if compacted && budget.is_none() {
        // Hooks' inserts leave the index in many small segments, which
        // every search then looks each term up in; a hook's slice leaves
        // the merging to the command, as it does the compaction.
        store.tidy_index()?;
    }
    report.finished = compacted && store.reclaim(remaining())?;
    if report.finished {
        store.set_meta(FINISHED_KEY, &now_ms().to_string())?;
    }
    report.bytes_after = store.stats_file_bytes();
    Ok(report)
}

/// Deletes `ids`, then the sessions they leave empty, unless their
/// summaries are to be kept. Returns how many observations went.
fn delete(store: &mut Store, ids: &[i64], retention: &Retention, sessions_removed: &mut u64) -> Result<u64> {
    // Plain deletes: retention is about space, and `compact_index` purges
    // the index of them at the end.
    let removed = store.delete_observations(ids, false, false, &mut |_| {})?;
    let touched: BTreeSet<String> = removed.sessions;
    for session in touched {
        if store.observation_count(&session)? > 0 {
            continue;
        }
        if retention.keep_summaries && !store.summaries(&session)?.is_empty() {
            continue;
        }
        *sessions_removed += u64::from(store.delete_session(&session, false)?);
    }
    Ok(removed.observations)
}

/// When gc last finished, if ever.
pub fn last_finished(store: &Store) -> Result<Option<i64>> {
    time_of(store, FINISHED_KEY)
}

/// The time (unix milliseconds) a store fact records.
fn time_of(store: &Store, key: &str) -> Result<Option<i64>> {
    Ok(store.meta(key)?.and_then(|v| v.parse().ok()))
}

/// The store fact that says when a SessionEnd hook last ran its slice.
const SLICE_KEY: &str = "gc_slice_at";

/// A SessionEnd hook's share of retention: a slice of at most `budget`,
/// when limits are set and neither a gc nor a slice ran in the last day.
/// A slice never merges the index whole (see `Store::compact_index`): the
/// next `trae-mem gc` does. Returns whether it ran.
pub fn daily(store: &mut Store, retention: &Retention, budget: Duration) -> Result<bool> {
    let recent = |key: &str| -> Result<bool> { Ok(time_of(store, key)?.is_some_and(|at| now_ms() - at < DAY_MS)) };
    if !retention.is_set() || recent(FINISHED_KEY)? || recent(SLICE_KEY)? {
        return Ok(false);
    }
    gc(store, retention, Some(budget), &mut |_| {})?;
    store.set_meta(SLICE_KEY, &now_ms().to_string())?;
    Ok(true)
}
