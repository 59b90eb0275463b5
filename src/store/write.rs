//! Writes, through a `Writer` that holds one transaction (`Store::write`),
//! so that callers can put several of them in one commit.

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::Value;

use super::{IndexMode, Kind, Store, SummaryLevel, index};

/// Identifies a client's session: the same triple always maps to the same
/// local session, across processes and restarts.
#[derive(Debug, Clone, Copy)]
pub struct SessionKey<'a> {
    pub client: &'a str,
    pub project: &'a str,
    pub external_id: &'a str,
}

/// An observation to record.
#[derive(Debug, Clone)]
pub struct NewObservation<'a> {
    pub session_id: &'a str,
    pub ts: i64,
    pub kind: &'a Kind,
    pub tool: Option<&'a str>,
    pub content: &'a str,
    pub private: bool,
    pub tags: &'a [String],
}

/// Writes inside one open transaction.
pub struct Writer<'a> {
    conn: &'a Connection,
    index: IndexMode,
}

impl Store {
    /// Runs `f` in one write transaction, taken up front (`BEGIN IMMEDIATE`)
    /// so that a read followed by a write cannot fail with a stale snapshot.
    pub(crate) fn write<T>(&mut self, f: impl FnOnce(&Writer<'_>) -> Result<T>) -> Result<T> {
        let index = self.index;
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&Writer { conn: &tx, index })?;
        tx.commit()?;
        Ok(value)
    }
}

impl<'a> Writer<'a> {
    pub(super) fn new(conn: &'a Connection, index: IndexMode) -> Self {
        Self { conn, index }
    }

    /// The transaction's connection, for reads inside it.
    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// The full-text index the rows go to.
    pub(super) fn index(&self) -> IndexMode {
        self.index
    }

    /// Records that the event `id` (a UUID) is being stored. Returns false
    /// when it was stored before: the caller then stores nothing.
    pub(crate) fn claim_event(&self, id: &str, received_at: i64) -> Result<bool> {
        let key = uuid::Uuid::parse_str(id).map(|u| u.as_bytes().to_vec()).unwrap_or_else(|_| id.as_bytes().to_vec());
        let inserted = self
            .conn
            .prepare_cached("INSERT INTO ingested(event_id, received_at) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?
            .execute(params![key, received_at])?;
        Ok(inserted == 1)
    }

    /// Claims the content `key` of an event (a hash of what it would store)
    /// at `at`. Returns false when the same key was claimed less than
    /// `window_ms` before or after: the event is then a duplicate (the same
    /// hook configured twice, globally and in the project, or by a plugin
    /// beside an install) and stores nothing. After too: a client runs an
    /// event's hooks at once, and the one that read the clock first may
    /// commit second. The newest claim's time is kept, so that a replay of
    /// an old event does not open the window to the next copy of a new one.
    pub(crate) fn claim_content(&self, key: &[u8], at: i64, window_ms: i64) -> Result<bool> {
        let claimed = self
            .conn
            .prepare_cached(
                "INSERT INTO ingested(event_id, received_at) VALUES (?1, ?2)
                 ON CONFLICT(event_id) DO UPDATE SET received_at = max(ingested.received_at, excluded.received_at)
                 WHERE abs(excluded.received_at - ingested.received_at) >= ?3",
            )?
            .execute(params![key, at, window_ms])?;
        Ok(claimed == 1)
    }

    /// Keeps a PreToolUse note as the one its tool call's result replaces.
    pub(crate) fn hold_tool_note(&self, session_id: &str, tool_use_id: &str, observation_id: i64) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT OR REPLACE INTO pending_tools(session_id, tool_use_id, observation_id) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![session_id, tool_use_id, observation_id])?;
        Ok(())
    }

    /// Removes the PreToolUse note of a tool call whose result has come:
    /// one tool call, one memory. Returns whether there was one.
    pub(crate) fn supersede_tool_note(&self, session_id: &str, tool_use_id: &str) -> Result<bool> {
        let note: Option<i64> = self
            .conn
            .prepare_cached(
                "DELETE FROM pending_tools WHERE session_id = ?1 AND tool_use_id = ?2 RETURNING observation_id",
            )?
            .query_row(params![session_id, tool_use_id], |r| r.get(0))
            .optional()?;
        match note {
            Some(id) => Ok(super::forget::delete_observation(self.conn, self.index, id, None)?.is_some()),
            None => Ok(false),
        }
    }

    /// Creates a session and returns its id.
    pub(crate) fn new_session(&self, project: &str, started_at: i64, meta: &Value) -> Result<String> {
        let id = uuid::Uuid::new_v4().to_string();
        self.conn
            .prepare_cached("INSERT INTO sessions(id, started_at, project_path, meta_json) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![id, started_at, project, meta.to_string()])?;
        Ok(id)
    }

    /// Finds the local session for `key`, creating it on first sight.
    /// Returns the id and whether it was created. The transaction's up-front
    /// lock is what makes racing processes agree.
    pub(crate) fn resolve_session(&self, key: SessionKey<'_>, started_at: i64, meta: &Value) -> Result<(String, bool)> {
        let found: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT session_id FROM session_keys
                 WHERE client = ?1 AND project_path = ?2 AND external_id = ?3",
            )?
            .query_row(params![key.client, key.project, key.external_id], |row| row.get(0))
            .optional()?;
        if let Some(id) = found {
            return Ok((id, false));
        }
        let id = self.new_session(key.project, started_at, meta)?;
        self.conn
            .prepare_cached(
                "INSERT INTO session_keys(client, project_path, external_id, session_id) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![key.client, key.project, key.external_id, id])?;
        Ok((id, true))
    }

    /// Merges `patch` into a session's meta (RFC 7386 merge patch).
    pub(crate) fn merge_session_meta(&self, session_id: &str, patch: &Value) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE sessions SET meta_json = json_patch(meta_json, ?2) WHERE id = ?1")?
            .execute(params![session_id, patch.to_string()])?;
        Ok(())
    }

    /// Marks a session ended. Returns false when there is no such session.
    pub(crate) fn end_session(&self, session_id: &str, ended_at: i64) -> Result<bool> {
        let changed = self
            .conn
            .prepare_cached("UPDATE sessions SET ended_at = ?2 WHERE id = ?1")?
            .execute(params![session_id, ended_at])?;
        Ok(changed == 1)
    }

    /// Marks an ended session live again (a client resumed it).
    pub(crate) fn reopen_session(&self, session_id: &str) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE sessions SET ended_at = NULL WHERE id = ?1 AND ended_at IS NOT NULL")?
            .execute([session_id])?;
        Ok(())
    }

    /// Records an observation, indexing it unless private, and returns its id.
    /// `id` keeps an imported row's id; `None` takes the next one. Returns
    /// `None` when that id is taken.
    pub(crate) fn add_observation_with_id(&self, id: Option<i64>, obs: &NewObservation<'_>) -> Result<Option<i64>> {
        let tags = serde_json::to_string(obs.tags)?;
        let inserted = self
            .conn
            .prepare_cached(
                "INSERT INTO observations(id, session_id, ts, kind, tool_name, content, private, tags_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(id) DO NOTHING",
            )?
            .execute(params![id, obs.session_id, obs.ts, obs.kind, obs.tool, obs.content, obs.private, tags])?;
        if inserted == 0 {
            return Ok(None);
        }
        let id = self.conn.last_insert_rowid();
        if !obs.private {
            index::add(self.conn, self.index, id)?;
        }
        Ok(Some(id))
    }

    /// Records an observation, indexing it unless private, and returns its id.
    pub(crate) fn add_observation(&self, obs: &NewObservation<'_>) -> Result<i64> {
        Ok(self.add_observation_with_id(None, obs)?.expect("a new id is never taken"))
    }

    /// Sets a session's summary at `level`, replacing any earlier one.
    pub(crate) fn put_summary(
        &self,
        session_id: &str,
        level: SummaryLevel,
        content: &str,
        created_at: i64,
    ) -> Result<()> {
        self.upsert_summary(session_id, level, content, created_at, false)?;
        Ok(())
    }

    /// Writes a session's summary at `level` and indexes it. With
    /// `only_if_newer`, an existing summary stays unless this one is newer.
    /// Returns whether it was written.
    pub(crate) fn upsert_summary(
        &self,
        session_id: &str,
        level: SummaryLevel,
        content: &str,
        created_at: i64,
        only_if_newer: bool,
    ) -> Result<bool> {
        let old: Option<(i64, i64)> = self
            .conn
            .prepare_cached("SELECT id, created_at FROM summaries WHERE session_id = ?1 AND level = ?2")?
            .query_row(params![session_id, level.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let id = match old {
            Some((_, at)) if only_if_newer && at >= created_at => return Ok(false),
            Some((id, _)) => {
                index::remove_summary(self.conn, self.index, id)?;
                self.conn
                    .prepare_cached("UPDATE summaries SET created_at = ?2, content = ?3 WHERE id = ?1")?
                    .execute(params![id, created_at, content])?;
                id
            }
            None => {
                self.conn
                    .prepare_cached(
                        "INSERT INTO summaries(session_id, created_at, level, content) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![session_id, created_at, level.as_str(), content])?;
                self.conn.last_insert_rowid()
            }
        };
        index::add_summary(self.conn, self.index, id)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{OpenOptions, Store};

    #[test]
    fn content_claimed_within_the_window_before_or_after_is_a_duplicate() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db"), &OpenOptions::default()).unwrap();
        let window = 10_000;
        let claims = store
            .write(|w| {
                [
                    1_000,   // new
                    999,     // the same, from a hook that read the clock first and committed second
                    11_000,  // a window later: new again
                    1_500,   // within the window before the last claim
                    -60_000, // an old event replayed from the spool: new
                    11_500,  // within the window after the newest claim, not the replayed one
                ]
                .into_iter()
                .map(|at| w.claim_content(b"one content", at, window))
                .collect::<anyhow::Result<Vec<bool>>>()
            })
            .unwrap();
        assert_eq!(claims, [true, false, true, false, true, false]);
    }
}
