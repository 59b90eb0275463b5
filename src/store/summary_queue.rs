//! The queue of sessions waiting for a language model's summary, and the
//! tokens spent on them each day (migration 0008). The store keeps them;
//! `summarize::queue` decides what runs, when, and what it may cost.

use anyhow::Result;
use rusqlite::{OptionalExtension, params};

use super::{LEARNING, Store, Writer, forget};

/// A queued session, as the worker takes it.
#[derive(Debug, Clone)]
pub struct Queued {
    pub session_id: String,
    /// The summarizer's declaration, as JSON.
    pub plugin: String,
    /// The `[summarize]` settings, as JSON.
    pub settings: String,
    pub tries: u32,
}

/// What the queue holds, for `stats` and `doctor`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueCounts {
    /// Waiting for the model (for its turn, a retry, or tomorrow's budget).
    pub pending: u64,
    /// Of those, waiting for the day's token budget.
    pub over_budget: u64,
    /// Left alone after too many failures: their built-in summaries stand.
    pub given_up: u64,
    /// Summarized by the model.
    pub done: u64,
    /// The tokens spent today (UTC).
    pub tokens_today: u64,
    /// Of those, charged for requests that failed after a server had them.
    pub failed_tokens_today: u64,
    /// The latest failure, if any is still pending or given up.
    pub last_error: Option<String>,
}

/// The state names the table uses.
const PENDING: &str = "pending";
const DONE: &str = "done";
const GIVEN_UP: &str = "given_up";

impl Writer<'_> {
    /// Queues a session for the model `plugin` (JSON) under `settings`
    /// (JSON), due at once. A session queued again (it went on after its
    /// summary) starts over.
    pub(crate) fn queue_summary(&self, session_id: &str, plugin: &str, settings: &str, at: i64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO summary_queue(session_id, queued_at, plugin, settings, next_try_at)
                 VALUES (?1, ?2, ?3, ?4, ?2)
                 ON CONFLICT(session_id) DO UPDATE SET queued_at = ?2, plugin = ?3, settings = ?4,
                     tries = 0, next_try_at = ?2, state = 'pending', last_error = NULL, waiting = NULL",
            )?
            .execute(params![session_id, at, plugin, settings])?;
        Ok(())
    }

    /// Marks a session summarized by the model, charging `tokens` to `day`.
    pub(crate) fn summary_done(&self, session_id: &str, day: &str, tokens: u64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE summary_queue SET state = ?2, last_error = NULL, waiting = NULL WHERE session_id = ?1",
            )?
            .execute(params![session_id, DONE])?;
        self.spend(day, tokens)
    }

    /// Adds `tokens` to what `day` spent.
    pub(crate) fn spend(&self, day: &str, tokens: u64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO summary_spend(day, tokens) VALUES (?1, ?2)
                 ON CONFLICT(day) DO UPDATE SET tokens = tokens + ?2",
            )?
            .execute(params![day, tokens as i64])?;
        Ok(())
    }

    /// Charges `tokens` to `day` for a request that failed after a server
    /// received it: counted in the budget, and apart, for `stats`.
    pub(crate) fn charge_failure(&self, day: &str, tokens: u64) -> Result<()> {
        if tokens == 0 {
            return Ok(());
        }
        self.conn()
            .prepare_cached(
                "INSERT INTO summary_spend(day, tokens, failed_tokens) VALUES (?1, ?2, ?2)
                 ON CONFLICT(day) DO UPDATE SET tokens = tokens + ?2, failed_tokens = failed_tokens + ?2",
            )?
            .execute(params![day, tokens as i64])?;
        Ok(())
    }

    /// Records a failed try: the next is due at `next_try_at`, or, with
    /// `None`, there is none (given up).
    pub(crate) fn summary_failed(&self, session_id: &str, error: &str, next_try_at: Option<i64>) -> Result<()> {
        let state = if next_try_at.is_some() { PENDING } else { GIVEN_UP };
        self.conn()
            .prepare_cached(
                "UPDATE summary_queue SET tries = tries + 1, next_try_at = coalesce(?3, next_try_at),
                     state = ?2, last_error = ?4, waiting = NULL WHERE session_id = ?1",
            )?
            .execute(params![session_id, state, next_try_at, error])?;
        Ok(())
    }

    /// Puts a session off until `until` without counting a try: the day's
    /// budget is spent.
    pub(crate) fn summary_over_budget(&self, session_id: &str, until: i64) -> Result<()> {
        self.conn()
            .prepare_cached("UPDATE summary_queue SET next_try_at = ?2, waiting = 'budget' WHERE session_id = ?1")?
            .execute(params![session_id, until])?;
        Ok(())
    }

    /// Replaces the session's learnings (observations of kind `learning`) by
    /// `learnings`, each a text and its tags. They are dated at the
    /// session's last row: what a session taught is not new activity in it.
    /// A learning said again is kept as it is; one no longer said is
    /// forgotten with a tombstone, so that a teammate who pulled it drops
    /// it too.
    pub(crate) fn replace_learnings(&self, session_id: &str, learnings: &[(String, Vec<String>)]) -> Result<()> {
        let at: Option<i64> = self
            .conn()
            .prepare_cached("SELECT max(ts) FROM observations WHERE session_id = ?1 AND kind != 'learning'")?
            .query_row(params![session_id], |r| r.get(0))?;
        let old: Vec<(i64, i64, String)> = self
            .conn()
            .prepare_cached("SELECT id, ts, content FROM observations WHERE session_id = ?1 AND kind = 'learning'")?
            .query_map(params![session_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let (kept, gone): (Vec<_>, Vec<_>) = old
            .iter()
            .partition(|(_, ts, content)| Some(*ts) == at && learnings.iter().any(|(said, _)| said == content));
        let now = super::now_ms();
        for (id, ..) in gone {
            forget::delete_observation(self.conn(), self.index(), *id, Some(now))?;
        }
        let Some(at) = at else { return Ok(()) };
        let kind = super::Kind::Other(LEARNING.to_owned());
        for (content, tags) in learnings {
            if kept.iter().any(|(.., stored)| stored == content) {
                continue;
            }
            let observation =
                super::NewObservation { session_id, ts: at, kind: &kind, tool: None, content, private: false, tags };
            self.add_observation(&observation)?;
        }
        Ok(())
    }
}

impl Store {
    /// The ids of a session's learnings.
    pub(crate) fn learnings(&self, session_id: &str) -> Result<Vec<i64>> {
        let mut statement =
            self.conn().prepare_cached("SELECT id FROM observations WHERE session_id = ?1 AND kind = 'learning'")?;
        let ids = statement.query_map(params![session_id], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<_>>()?)
    }

    /// The pending sessions due by `now`, oldest first.
    pub(crate) fn due_summaries(&self, now: i64) -> Result<Vec<Queued>> {
        let mut statement = self.conn().prepare_cached(
            "SELECT session_id, plugin, settings, tries FROM summary_queue
             WHERE state = 'pending' AND next_try_at <= ?1 ORDER BY next_try_at, queued_at",
        )?;
        let rows = statement.query_map(params![now], |r| {
            Ok(Queued { session_id: r.get(0)?, plugin: r.get(1)?, settings: r.get(2)?, tries: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Makes every pending session due now (`summarize --pending --now`),
    /// except those waiting for the day's budget.
    pub(crate) fn summaries_due_now(&self, now: i64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "UPDATE summary_queue SET next_try_at = ?1
                 WHERE state = 'pending' AND next_try_at > ?1 AND waiting IS NULL",
            )?
            .execute(params![now])?;
        Ok(())
    }

    /// The tokens `day` spent on summaries.
    pub(crate) fn tokens_spent(&self, day: &str) -> Result<u64> {
        Ok(self.spending(day)?.0)
    }

    /// The tokens `day` spent on summaries, and the part charged for failures.
    fn spending(&self, day: &str) -> Result<(u64, u64)> {
        let spent: Option<(i64, i64)> = self
            .conn()
            .prepare_cached("SELECT tokens, failed_tokens FROM summary_spend WHERE day = ?1")?
            .query_row(params![day], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (all, failed) = spent.unwrap_or_default();
        Ok((all.max(0) as u64, failed.max(0) as u64))
    }

    /// What the queue holds, with `day`'s spending.
    pub(crate) fn queue_counts(&self, day: &str) -> Result<QueueCounts> {
        let mut counts = self.conn().prepare_cached(
            "SELECT count(*) FILTER (WHERE state = 'pending'),
                    count(*) FILTER (WHERE state = 'pending' AND waiting = 'budget'),
                    count(*) FILTER (WHERE state = 'given_up'),
                    count(*) FILTER (WHERE state = 'done')
             FROM summary_queue",
        )?;
        let (pending, over_budget, given_up, done): (i64, i64, i64, i64) =
            counts.query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        let last_error: Option<String> = self
            .conn()
            .prepare_cached(
                "SELECT last_error FROM summary_queue WHERE last_error IS NOT NULL AND state != 'done'
                 ORDER BY next_try_at DESC LIMIT 1",
            )?
            .query_row([], |r| r.get(0))
            .optional()?;
        let (tokens_today, failed_tokens_today) = self.spending(day)?;
        Ok(QueueCounts {
            pending: pending as u64,
            over_budget: over_budget as u64,
            given_up: given_up as u64,
            done: done as u64,
            tokens_today,
            failed_tokens_today,
            last_error,
        })
    }
}
