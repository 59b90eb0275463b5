//! Rewriting stored text in place, for a rescan that applies today's secret
//! rules to rows stored before them. As with a forget, the old text leaves
//! the row, the index and the file's free space: `PRAGMA secure_delete`
//! zeroes what the update frees, the index drops the old text's entries
//! at once (FTS5's secure-delete), and `reclaim` empties the log after.
//! An observation's old text leaves a tombstone, which a sync pushes to
//! take it off the team server too.

use anyhow::Result;
use rusqlite::params;

use super::tombstone::{self, TombstoneKind};
use super::{PRIVATE_PLACEHOLDER, Store, SummaryLevel, index};

/// A stored text, by the row that holds it.
#[derive(Debug, Clone)]
pub struct StoredText {
    pub id: i64,
    pub session_id: String,
    /// For a summary, its level; None for an observation.
    pub level: Option<SummaryLevel>,
    pub content: String,
}

impl Store {
    /// Public observations with an id above `after`, in id order, at most `limit`.
    pub(crate) fn observation_texts_after(&self, after: i64, limit: usize) -> Result<Vec<StoredText>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, content FROM observations WHERE id > ?1 AND private = 0 ORDER BY id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, limit as i64], |r| {
            Ok(StoredText { id: r.get(0)?, session_id: r.get(1)?, level: None, content: r.get(2)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every summary, in id order, with an id above `after`, at most `limit`.
    pub(crate) fn summary_texts_after(&self, after: i64, limit: usize) -> Result<Vec<StoredText>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, session_id, level, content FROM summaries WHERE id > ?1 ORDER BY id LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![after, limit as i64], |r| {
            let level: String = r.get(2)?;
            Ok(StoredText {
                id: r.get(0)?,
                session_id: r.get(1)?,
                level: SummaryLevel::parse(&level),
                content: r.get(3)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Replaces the text of public observations (`StoredText::content` is the
    /// new text), in the index too, in one transaction. A text that became
    /// `[PRIVATE]` makes its row private, out of the index.
    pub(crate) fn rewrite_observations(&mut self, rewritten: &[StoredText]) -> Result<()> {
        self.conn.execute_batch("PRAGMA secure_delete = ON")?;
        let mode = self.index;
        self.write(|w| {
            let conn = w.conn();
            let now = super::now_ms();
            for row in rewritten {
                let (old, ts): (String, i64) = conn
                    .prepare_cached("SELECT content, ts FROM observations WHERE id = ?1")?
                    .query_row([row.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
                index::remove(conn, mode, row.id)?;
                // The old text is another memory now, gone: its tombstone
                // takes it off the team server and teammates' stores.
                tombstone::bury(
                    conn,
                    TombstoneKind::Observation,
                    &tombstone::fingerprint(&row.session_id, ts, &old),
                    now,
                )?;
                let private = row.content == PRIVATE_PLACEHOLDER;
                conn.prepare_cached("UPDATE observations SET content = ?2, private = ?3 WHERE id = ?1")?
                    .execute(params![row.id, row.content, private])?;
                if !private {
                    index::add(conn, mode, row.id)?;
                }
            }
            // Rows below a project's sync mark count as pushed: look again
            // from the first, so that the rewritten rows go up in place of
            // the old.
            if !rewritten.is_empty() {
                conn.execute("UPDATE sync_projects SET observation_mark = 0, mark_fingerprint = NULL", [])?;
            }
            Ok(())
        })
    }

    /// Replaces the text of summaries, in the index too, keeping their time.
    pub(crate) fn rewrite_summaries(&mut self, rewritten: &[StoredText]) -> Result<()> {
        self.conn.execute_batch("PRAGMA secure_delete = ON")?;
        self.write(|w| {
            for summary in rewritten {
                let level = summary.level.expect("a summary has a level");
                let created_at: i64 = w
                    .conn()
                    .prepare_cached("SELECT created_at FROM summaries WHERE id = ?1")?
                    .query_row([summary.id], |r| r.get(0))?;
                w.upsert_summary(&summary.session_id, level, &summary.content, created_at, false)?;
            }
            Ok(())
        })
    }
}
