//! Schema migrations, numbered SQL files applied in order and tracked by
//! `PRAGMA user_version`.

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use super::index::{self, IndexMode};
use super::tokenizer::Support;

/// Each entry moves the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_ingested.sql"),
    include_str!("migrations/0003_summaries_searchable.sql"),
    include_str!("migrations/0004_forget.sql"),
    include_str!("migrations/0005_one_memory_per_tool_call.sql"),
    include_str!("migrations/0006_sync.sql"),
    include_str!("migrations/0007_vectors.sql"),
    include_str!("migrations/0008_summary_queue.sql"),
    include_str!("migrations/0009_session_facts.sql"),
    include_str!("migrations/0010_failed_spend.sql"),
    include_str!("migrations/0011_sync_summary_versions.sql"),
    include_str!("migrations/0012_public_rows_by_session.sql"),
    include_str!("migrations/0013_vectors_by_session.sql"),
];

/// The version whose migration made summaries searchable: older stores get
/// the summaries' index, in the mode their observations have.
const SUMMARIES_SEARCHABLE: i64 = 3;

/// The version whose migration brought forgetting: older stores' indexes
/// switch to FTS5's secure-delete.
const FORGETS: i64 = 4;

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings the database up to date and settles its full-text index mode.
///
/// Rebuilding the index (for another mode, or because `index::create` now
/// defines it differently) reads every row, which can take longer than a
/// hook may. Without `may_rebuild` the index stays as it is, still usable,
/// for the next command to rebuild.
pub fn migrate(
    conn: &mut Connection,
    wanted_index: Option<IndexMode>,
    may_rebuild: bool,
    support: Support,
) -> Result<IndexMode> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        bail!(
            "the database has schema version {version}, newer than this trae-mem understands \
             ({SCHEMA_VERSION}); upgrade trae-mem"
        );
    }
    if version < SCHEMA_VERSION {
        // WAL cannot be switched on inside a transaction; it is a property of
        // the file, so doing it once at creation is enough.
        if version == 0 {
            // Freed pages can then leave the file a few at a time
            // (`PRAGMA incremental_vacuum`), which `gc` and `forget` need.
            // Like WAL, it must be set before the first table; older stores
            // are converted by `Store::reclaim`, whose VACUUM is too long
            // for a hook.
            conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Another process may have migrated while we waited for the lock.
        let version: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        for sql in &MIGRATIONS[version as usize..] {
            tx.execute_batch(sql)?;
        }
        if version == 0 {
            let mode = index::create(&tx, wanted_index.unwrap_or(IndexMode::Trigram), support)?;
            set_meta(&tx, "index_mode", mode.as_str())?;
        } else {
            let mode = get_meta(&tx, "index_mode")?.and_then(|value| value.parse().ok()).unwrap_or(IndexMode::Like);
            if version < SUMMARIES_SEARCHABLE {
                index::create_summary_index(&tx, mode)?;
            }
            if version < FORGETS {
                index::secure_delete(&tx, mode, true)?;
            }
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
    }
    let current = get_meta(conn, "index_mode")?.and_then(|value| value.parse().ok()).unwrap_or(IndexMode::Like);
    if !may_rebuild {
        return Ok(current);
    }
    let rebuild_as = match wanted_index {
        Some(wanted) if wanted != current => Some(wanted),
        _ if index::is_outdated(conn, current)? => Some(current),
        _ => None,
    };
    match rebuild_as {
        Some(wanted) => {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mode = recreate_index(&tx, wanted, support)?;
            tx.commit()?;
            Ok(mode)
        }
        None => Ok(current),
    }
}

/// Replaces the index with a new one of `wanted` mode (or the next best),
/// built from every public observation.
fn recreate_index(conn: &Connection, wanted: IndexMode, support: Support) -> Result<IndexMode> {
    index::drop(conn)?;
    let mode = index::create(conn, wanted, support)?;
    index::rebuild(conn, mode)?;
    set_meta(conn, "index_mode", mode.as_str())?;
    Ok(mode)
}

pub(super) fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn.query_row("SELECT value FROM store_meta WHERE key = ?1", [key], |row| row.get(0)).optional()?)
}

pub(super) fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO store_meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_stored_before_they_named_their_session_are_given_it() {
        let conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..12] {
            conn.execute_batch(sql).unwrap();
        }
        conn.execute_batch(
            "INSERT INTO sessions (id, started_at, project_path) VALUES ('a', 1, '/p'), ('b', 1, '/q');
             INSERT INTO observations (id, session_id, ts, kind, content)
                 VALUES (1, 'a', 1, 'response', 'x'), (2, 'b', 1, 'response', 'y');
             INSERT INTO summaries (id, session_id, created_at, level, content) VALUES (7, 'b', 1, 'brief', 'z');
             INSERT INTO vectors (source, row_id, embedding) VALUES (0, 1, x'00'), (0, 2, x'00'), (1, 7, x'00');",
        )
        .unwrap();
        conn.execute_batch(MIGRATIONS[12]).unwrap();
        let sessions: Vec<(i64, i64, String)> = conn
            .prepare("SELECT source, row_id, session_id FROM vectors ORDER BY source, row_id")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(sessions, [(0, 1, "a".to_owned()), (0, 2, "b".to_owned()), (1, 7, "b".to_owned())]);
        // A row that moved to another session would leave its vector behind: it loses it.
        conn.execute("UPDATE observations SET session_id = 'a' WHERE id = 2", []).unwrap();
        let left: i64 = conn.query_row("SELECT count(*) FROM vectors WHERE source = 0", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 1);
    }
}
