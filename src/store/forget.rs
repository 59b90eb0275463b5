//! Forgetting, the one way out of the store: rows leave their tables and
//! the full-text indexes, and their bytes leave the file.
//!
//! - Deletes run in short transactions, as an import's writes do, so that
//!   hooks beside a large forget wait milliseconds. Each transaction is
//!   whole: a process killed between two leaves a consistent store, and the
//!   same forget run again finishes the work.
//! - `PRAGMA secure_delete` zeroes what the deletes free, and the indexes
//!   use FTS5's secure-delete (`index::secure_delete`). `reclaim` then takes
//!   free pages out of the file and empties the write-ahead log, which
//!   holds older copies of changed pages.
//! - What `forget` removes leaves a tombstone, so that importing an older
//!   export does not bring it back. Retention leaves none: it drops detail
//!   by age or size, and an import of old detail is aged out again.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;

use super::batch::{self, Batch};
use super::tombstone::{TombstoneKind, bury, fingerprint};
use super::{BATCH_PAUSE, Filters, Store, index, schema};

/// What to forget. Every part given must hold; an empty selection selects
/// nothing (see `is_empty`).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Observation ids.
    pub ids: Vec<i64>,
    /// Project, session, kind, tool, and `until` for "before".
    pub filters: Filters,
    /// Rows holding every term of this text, matched as search matches.
    pub query: Option<String>,
}

impl Selection {
    /// Whether nothing was asked for: forgetting "everything" is never a default.
    pub fn is_empty(&self) -> bool {
        let Filters { project, session, exclude_session: _, kind, tool, author, since, until } = &self.filters;
        self.ids.is_empty()
            && self.query.is_none()
            && project.is_none()
            && session.is_none()
            && kind.is_none()
            && tool.is_none()
            && author.is_none()
            && since.is_none()
            && until.is_none()
    }
}

/// What a deletion removed.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Removed {
    pub observations: u64,
    /// The sessions that lost observations.
    pub sessions: BTreeSet<String>,
    /// Of those, the sessions that lost a row other than a learning: their
    /// learnings may quote it.
    pub sources_of_learnings: BTreeSet<String>,
}

/// Past this many rows, a forget skips FTS5's secure-delete and merges the
/// index whole afterwards: about 7 ms a row, against a merge that costs
/// about as much as indexing the rest again.
pub const SECURE_DELETE_MAX: usize = 500;

/// The store fact that says plain deletes await `compact_index`.
const COMPACTION_PENDING: &str = "index_compaction_pending";

/// Free pages taken out of the file per step of `reclaim`: 1 MB of 4 kB
/// pages, a few milliseconds of writing, so a hook never waits long.
const RECLAIM_PAGES: i64 = 256;

impl Store {
    /// The ids of the observations `selection` names, oldest first.
    /// `holding_query` are the public rows that hold its query and pass its
    /// filters, as recall finds them (the store does not read queries); the
    /// other parts find private rows too.
    pub(crate) fn select(&self, selection: &Selection, holding_query: Option<Vec<i64>>) -> Result<Vec<i64>> {
        if selection.is_empty() {
            return Ok(Vec::new());
        }
        let only_ids = selection.query.is_none() && Selection { ids: Vec::new(), ..selection.clone() }.is_empty();
        let mut ids = match holding_query {
            Some(holding) => holding,
            None if only_ids => selection.ids.clone(),
            None => self.observations_passing(&selection.filters, false)?,
        };
        if !selection.ids.is_empty() {
            let asked: BTreeSet<i64> = selection.ids.iter().copied().collect();
            ids.retain(|id| asked.contains(id));
            let existing: Vec<i64> = self
                .conn
                .prepare("SELECT id FROM observations WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id")?
                .query_map([serde_json::to_string(&ids)?], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            ids = existing;
        }
        Ok(ids)
    }

    /// Deletes observations, from their table and the index, in short
    /// transactions. With `remember`, each leaves a tombstone. `progress`
    /// hears how many are done after each transaction.
    ///
    /// With `secure`, each row leaves the index at once (FTS5's
    /// secure-delete), at about 7 ms a row. Without, rows are deleted
    /// plainly (FTS5 notes them as deleted) and `compact_index` must follow:
    /// it merges the whole index, which purges them, and past a few hundred
    /// rows costs far less.
    pub(crate) fn delete_observations(
        &mut self,
        ids: &[i64],
        remember: bool,
        secure: bool,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Removed> {
        self.conn.execute_batch("PRAGMA secure_delete = ON")?;
        let _at_work = batch::at_work(&self.path)?;
        let mut removed = Removed::default();
        let now = super::now_ms();
        let mut rest = ids;
        while !rest.is_empty() {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            if !secure {
                index::secure_delete(&tx, self.index, false)?;
                schema::set_meta(&tx, COMPACTION_PENDING, "1")?;
            }
            let mut batch = Batch::begin(&self.path);
            while let Some((&id, tail)) = rest.split_first() {
                if batch.is_over() {
                    break;
                }
                rest = tail;
                if let Some((session, kind)) = delete_observation(&tx, self.index, id, remember.then_some(now))? {
                    removed.observations += 1;
                    if kind != super::LEARNING {
                        removed.sources_of_learnings.insert(session.clone());
                    }
                    removed.sessions.insert(session);
                }
            }
            if !secure {
                index::secure_delete(&tx, self.index, true)?;
            }
            tx.commit()?;
            self.checkpoint_between_batches()?;
            progress(removed.observations);
            batch.end();
            // Each commit adds a segment of deletions: merged now, not in a
            // hook's write (see `tidy_index`).
            self.tidy_index()?;
        }
        Ok(removed)
    }

    /// After plain deletes (`delete_observations` without `secure`), merges
    /// the index into one segment, which drops what the deleted rows left
    /// in it (see `index::optimize`). It is one transaction, as long as
    /// indexing the remaining rows' text once: hooks that arrive meanwhile
    /// spool their events, which later hooks store. So with a `budget` (a
    /// hook's slice of gc) it is left for a command, and returns false.
    /// Remembered in the store until done, so that a process killed
    /// meanwhile leaves it to the next gc.
    pub(crate) fn compact_index(&mut self, budget: Option<Duration>) -> Result<bool> {
        if schema::get_meta(&self.conn, COMPACTION_PENDING)?.as_deref() != Some("1") {
            return Ok(true);
        }
        if budget.is_some() {
            return Ok(false);
        }
        let index = self.index;
        let _holding = batch::holding(&self.path)?;
        self.write(|w| {
            index::optimize(w.conn(), index)?;
            schema::set_meta(w.conn(), COMPACTION_PENDING, "0")
        })?;
        Ok(true)
    }

    /// How many observations a session has, private ones included.
    pub(crate) fn observation_count(&self, session_id: &str) -> Result<u64> {
        let count: i64 =
            self.conn
                .query_row("SELECT count(*) FROM observations WHERE session_id = ?1", [session_id], |r| r.get(0))?;
        Ok(count as u64)
    }

    /// Deletes a session's summaries from their table and the index, and
    /// the facts beside them.
    pub(crate) fn delete_summaries(&mut self, session_id: &str) -> Result<()> {
        self.conn.execute_batch("PRAGMA secure_delete = ON")?;
        let index = self.index;
        self.write(|w| delete_summaries(w.conn(), index, session_id))
    }

    /// Deletes a session with its summaries and client keys; its
    /// observations must be gone already (`delete_observations`), since
    /// their index entries are removed there. With `remember`, leaves a
    /// tombstone. Returns false when there is no such session.
    pub(crate) fn delete_session(&mut self, session_id: &str, remember: bool) -> Result<bool> {
        self.conn.execute_batch("PRAGMA secure_delete = ON")?;
        let index = self.index;
        self.write(|w| {
            let conn = w.conn();
            delete_summaries(conn, index, session_id)?;
            // Any observations left (there should be none) leave the index first.
            let left: Vec<i64> = conn
                .prepare_cached("SELECT id FROM observations WHERE session_id = ?1")?
                .query_map([session_id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for id in left {
                delete_observation(conn, index, id, None)?;
            }
            // Keys go with the session (ON DELETE CASCADE).
            let deleted = conn.execute("DELETE FROM sessions WHERE id = ?1", [session_id])? == 1;
            if deleted && remember {
                bury(conn, TombstoneKind::Session, session_id, super::now_ms())?;
            }
            Ok(deleted)
        })
    }

    /// Gives the space of deleted rows back to the file system, and with it
    /// the bytes of every freed page: free pages leave the file a step at a
    /// time, then the write-ahead log is copied in and emptied. A store
    /// made before auto-vacuum was on is first converted by a VACUUM, which
    /// rewrites it whole (and holds the write lock while it does).
    /// Stops early, returning false, once `budget` is spent.
    pub(crate) fn reclaim(&mut self, budget: Option<Duration>) -> Result<bool> {
        let started = Instant::now();
        let out_of_time = || budget.is_some_and(|b| started.elapsed() >= b);
        let auto_vacuum: i64 = self.conn.pragma_query_value(None, "auto_vacuum", |r| r.get(0))?;
        if auto_vacuum != 2 {
            if budget.is_some() {
                return Ok(false);
            }
            let _holding = batch::holding(&self.path)?;
            self.conn.execute_batch("PRAGMA auto_vacuum = INCREMENTAL; VACUUM;")?;
        }
        loop {
            let free: i64 = self.conn.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
            if free == 0 {
                break;
            }
            if out_of_time() {
                return Ok(false);
            }
            // The pragma frees one page per row it returns: step it through.
            let mut stmt = self.conn.prepare_cached(&format!("PRAGMA incremental_vacuum({RECLAIM_PAGES})"))?;
            let mut freed = stmt.query([])?;
            while freed.next()?.is_some() {}
            drop(freed);
            drop(stmt);
            self.checkpoint_between_batches()?;
            std::thread::sleep(BATCH_PAUSE);
        }
        self.empty_wal()?;
        Ok(true)
    }

    /// Copies the write-ahead log into the database and truncates it to
    /// nothing, waiting for readers to move on. Hooks that keep arriving
    /// (an agent at work) can leave no gap within one busy timeout, so it
    /// tries again for up to `WAL_PATIENCE`.
    fn empty_wal(&self) -> Result<()> {
        let started = Instant::now();
        loop {
            // A passive checkpoint copies the log without holding up writers;
            // the truncating one then has little left to copy while it does.
            self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
            let (busy, _, _): (i64, i64, i64) = self
                .conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            if busy == 0 {
                return Ok(());
            }
            if started.elapsed() >= WAL_PATIENCE {
                anyhow::bail!(
                    "another process kept reading the database, so its write-ahead log ({}-wal) still holds \
                     copies of what was deleted; run `trae-mem gc` when it is done",
                    self.path.display()
                );
            }
            std::thread::sleep(BATCH_PAUSE * 10);
        }
    }
}

/// How long emptying the write-ahead log keeps trying while other
/// processes read.
const WAL_PATIENCE: Duration = Duration::from_secs(30);

/// Deletes one observation and its index entry; returns its session and
/// kind, or `None` when there was no such row. With `tombstone_at`,
/// buries it.
pub(super) fn delete_observation(
    conn: &Connection,
    index: index::IndexMode,
    id: i64,
    tombstone_at: Option<i64>,
) -> Result<Option<(String, String)>> {
    let row: Option<(String, i64, String, bool, String)> = conn
        .prepare_cached("SELECT session_id, ts, content, private, kind FROM observations WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .optional()?;
    let Some((session, ts, content, private, kind)) = row else { return Ok(None) };
    if !private {
        index::remove(conn, index, id)?;
    }
    conn.prepare_cached("DELETE FROM observations WHERE id = ?1")?.execute([id])?;
    if let Some(at) = tombstone_at {
        bury(conn, TombstoneKind::Observation, &fingerprint(&session, ts, &content), at)?;
    }
    Ok(Some((session, kind)))
}

fn delete_summaries(conn: &Connection, index: index::IndexMode, session_id: &str) -> Result<()> {
    let summaries: Vec<i64> = conn
        .prepare_cached("SELECT id FROM summaries WHERE session_id = ?1")?
        .query_map([session_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for id in summaries {
        index::remove_summary(conn, index, id)?;
        conn.prepare_cached("DELETE FROM summaries WHERE id = ?1")?.execute([id])?;
    }
    super::facts::delete(conn, session_id)
}

impl Store {
    /// The ids of the oldest observations (older than `before`, if given),
    /// oldest first: what retention deletes first.
    pub(crate) fn oldest_observations(&self, before: Option<i64>, limit: usize) -> Result<Vec<i64>> {
        let ids = self
            .conn
            .prepare_cached("SELECT id FROM observations WHERE ts < ?1 ORDER BY ts, id LIMIT ?2")?
            .query_map(params![before.unwrap_or(i64::MAX), limit as i64], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }

    /// Forgets which events were stored before `before`. Their ids only
    /// guard against storing an event twice, which can happen while it
    /// waits in the spool; older ones guard nothing. Returns how many went.
    pub(crate) fn prune_ingested(&mut self, before: i64) -> Result<u64> {
        Ok(self.conn.execute("DELETE FROM ingested WHERE received_at < ?1", [before])? as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Kind, NewObservation, OpenOptions};

    /// A store holding 1,200 observations, each with words of its own.
    fn store_with_rows(dir: &std::path::Path) -> (Store, Vec<i64>) {
        let mut store = Store::open(&dir.join("t.db"), &OpenOptions::default()).unwrap();
        let ids = store
            .write(|w| {
                let session = w.new_session("/p", 0, &serde_json::json!({}))?;
                (0..1200)
                    .map(|i| {
                        let content =
                            format!("row{i} tells of zq{i}x and of walrus{} {}", i * 7919 % 1000, "filler ".repeat(20));
                        w.add_observation(&NewObservation {
                            session_id: &session,
                            ts: i,
                            kind: &Kind::Tool,
                            tool: None,
                            content: &content,
                            private: false,
                            tags: &[],
                        })
                    })
                    .collect()
            })
            .unwrap();
        (store, ids)
    }

    /// The bytes of the observations' index.
    fn index_bytes(store: &Store) -> i64 {
        store.conn.query_row("SELECT sum(length(block)) FROM observations_fts_data", [], |r| r.get(0)).unwrap()
    }

    /// After deleting, the index holds no more than an index built afresh
    /// from the rows that remain: nothing of the deleted rows is left in it.
    /// Secure deletes get there at once; plain ones once compacted.
    #[test]
    fn deleted_rows_leave_nothing_in_the_index_either_way() {
        for secure in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let (mut store, ids) = store_with_rows(dir.path());
            let mode = store.index;
            store.write(|w| index::optimize(w.conn(), mode)).unwrap();
            let gone: Vec<i64> = ids.iter().copied().filter(|id| id % 2 == 0).collect();
            let removed = store.delete_observations(&gone, true, secure, &mut |_| {}).unwrap();
            assert_eq!(removed.observations, gone.len() as u64);
            if !secure {
                assert!(store.compact_index(None).unwrap());
            }
            let after = index_bytes(&store);
            store.conn.execute("INSERT INTO observations_fts(observations_fts) VALUES ('rebuild')", []).unwrap();
            let fresh = index_bytes(&store);
            assert!(after <= fresh + fresh / 20, "secure: {secure}: {after} bytes against {fresh} built afresh");
            assert!(store.integrity_problems().unwrap().is_empty());
            let buried: i64 = store.conn.query_row("SELECT count(*) FROM tombstones", [], |r| r.get(0)).unwrap();
            assert_eq!(buried, gone.len() as i64);
        }
    }
}
