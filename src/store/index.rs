//! The full-text index over observations, in one of three modes.
//!
//! - `trigram`: FTS5 with SQLite's trigram tokenizer, wrapped in trae-mem's
//!   own (see `tokenizer`), which also indexes one- and two-character pieces
//!   so that short terms are found too. Finds any substring, in any script,
//!   which suits Chinese and code. The index keeps which rows hold each token
//!   but not where (`detail=none`): that makes it about a seventh of the size
//!   and twice as fast to build, and search checks each candidate row's text
//!   itself (see `search`). FTS5 keeps no per-row sizes (`columnsize=0`):
//!   search ranks in Rust and never asks for them.
//! - `unicode61`: FTS5 with word tokens, for SQLite builds without trigram.
//! - `like`: no index at all, a `LIKE` scan, for builds without FTS5.
//!
//! Summaries have an index of their own, `summaries_fts`, of the same mode.
//!
//! The index is "external content": writes add public rows to it (`add`),
//! and a rebuild reads text from the view `observations_fts_src`, which
//! leaves out private rows, so they are never indexed. The view appends two
//! spaces to each text so that every character, even the last two, begins a
//! trigram, whose short prefixes then cover every one- and two-character
//! piece of the text.

use std::fmt;
use std::str::FromStr;

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension};

use super::tokenizer::Support;

/// Which full-text index a store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexMode {
    Trigram,
    Unicode61,
    Like,
}

impl IndexMode {
    pub fn as_str(self) -> &'static str {
        match self {
            IndexMode::Trigram => "trigram",
            IndexMode::Unicode61 => "unicode61",
            IndexMode::Like => "like",
        }
    }
}

impl fmt::Display for IndexMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for IndexMode {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "trigram" => Ok(IndexMode::Trigram),
            "unicode61" => Ok(IndexMode::Unicode61),
            "like" => Ok(IndexMode::Like),
            other => bail!("unknown index mode {other:?}: use trigram, unicode61 or like"),
        }
    }
}

const SOURCE_VIEW: &str = "
CREATE VIEW observations_fts_src AS
    SELECT id, content || '  ' AS content FROM observations WHERE private = 0;";

/// Summaries are indexed the same way, by `put_summary` (not by triggers,
/// which would make a plain `sqlite3` shell, without trae-mem's tokenizer,
/// unable to touch the summaries table).
const SUMMARY_SOURCE_VIEW: &str =
    "CREATE VIEW summaries_fts_src AS SELECT id, content || '  ' AS content FROM summaries;";

/// Bytes of new index data FTS5 holds in memory before writing a segment.
/// The default (1 MB) makes a bulk import write and merge many small
/// segments; 32 MB made imports about 20% faster. A hook's transaction is
/// far smaller, so it never reaches this.
const HASH_SIZE: usize = 32 << 20;

/// Creates the index objects for `wanted`, or for the best mode this
/// SQLite supports when it cannot do that one. Returns the mode created.
pub fn create(conn: &Connection, wanted: IndexMode, support: Support) -> Result<IndexMode> {
    let mode = match (wanted, support) {
        (_, Support::NoFts5) | (IndexMode::Like, _) => return Ok(IndexMode::Like),
        (IndexMode::Trigram, Support::Trigram) => IndexMode::Trigram,
        _ => IndexMode::Unicode61,
    };
    let Some(options) = fts_options(mode) else { return Ok(mode) };
    conn.execute_batch(&format!(
        "{SOURCE_VIEW}
         CREATE VIRTUAL TABLE observations_fts USING fts5(
             content, content='observations_fts_src', content_rowid='id', {options});
         INSERT INTO observations_fts(observations_fts, rank) VALUES ('hashsize', {HASH_SIZE});"
    ))?;
    create_summary_index(conn, mode)?;
    secure_delete(conn, mode, true)?;
    Ok(mode)
}

/// Makes both indexes remove a deleted row's entries from their pages at
/// once (FTS5's `secure-delete`), or stop doing so. Without it FTS5 only
/// records that the row is gone, and the forgotten text's tokens stay in
/// the file until a merge rewrites their segment. It costs about 7 ms a
/// row (every token's leaf page is rewritten), so bulk deletes turn it off
/// and then merge the whole index (`optimize`).
pub fn secure_delete(conn: &Connection, mode: IndexMode, on: bool) -> Result<()> {
    if mode != IndexMode::Like {
        let on = i32::from(on);
        conn.execute_batch(&format!(
            "INSERT INTO observations_fts(observations_fts, rank) VALUES ('secure-delete', {on});
             INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('secure-delete', {on});"
        ))?;
    }
    Ok(())
}

/// The FTS5 options of an index in `mode`; `None` for the LIKE mode, which has none.
fn fts_options(mode: IndexMode) -> Option<&'static str> {
    match mode {
        IndexMode::Trigram => Some("tokenize='trae_mem skip_json_keys', detail='none', columnsize=0"),
        IndexMode::Unicode61 => Some("tokenize='unicode61 remove_diacritics 2'"),
        IndexMode::Like => None,
    }
}

/// Creates the summaries' index for `mode` and fills it: for a new store,
/// and for one from before summaries were searchable (a few rows a session,
/// quick enough for a hook).
pub fn create_summary_index(conn: &Connection, mode: IndexMode) -> Result<()> {
    let Some(options) = fts_options(mode) else { return Ok(()) };
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE summaries_fts USING fts5(
             content, content='summaries_fts_src', content_rowid='id', {options});
         {SUMMARY_SOURCE_VIEW}
         INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild');"
    ))?;
    Ok(())
}

/// Whether the index was made by an older trae-mem and should be rebuilt:
/// a trigram index from before the `trae_mem` tokenizer cannot find short
/// terms.
pub fn is_outdated(conn: &Connection, mode: IndexMode) -> Result<bool> {
    if mode != IndexMode::Trigram {
        return Ok(false);
    }
    let definition: Option<String> = conn
        .query_row("SELECT sql FROM sqlite_schema WHERE name = 'observations_fts'", [], |row| row.get(0))
        .optional()?;
    // One made before JSON keys were skipped (`tokenize='trae_mem'`) is
    // not: rebuilding a large store would stall its next search for
    // minutes, and search's ranking already drops what only a key matched.
    Ok(!definition.is_some_and(|sql| sql.contains("tokenize='trae_mem")))
}

/// Removes every index object, whatever the mode.
pub fn drop(conn: &Connection) -> Result<()> {
    conn.execute_batch(
        // The vocabulary table is gone from new stores; older ones have one.
        "DROP TABLE IF EXISTS observations_fts_vocab;
         DROP TABLE IF EXISTS observations_fts;
         DROP VIEW IF EXISTS observations_fts_src;
         DROP TABLE IF EXISTS summaries_fts;
         DROP VIEW IF EXISTS summaries_fts_src;",
    )?;
    Ok(())
}

/// Indexes one newly written public observation. Done here rather than by
/// a trigger: a trigger's statement savepoint makes FTS5 flush its pending
/// data for every row, which made bulk imports four times slower.
pub fn add(conn: &Connection, mode: IndexMode, id: i64, content: &str) -> Result<()> {
    if mode != IndexMode::Like {
        conn.prepare_cached("INSERT INTO observations_fts(rowid, content) VALUES (?1, ?2 || '  ')")?
            .execute(rusqlite::params![id, content])?;
    }
    Ok(())
}

/// Removes an observation about to be deleted from the index. External
/// content indexes need the text the row was indexed with.
pub fn remove(conn: &Connection, mode: IndexMode, id: i64, content: &str) -> Result<()> {
    remove_from(conn, mode, "observations_fts", id, content)
}

/// Removes a summary about to be deleted or rewritten from the index.
pub fn remove_summary(conn: &Connection, mode: IndexMode, id: i64, content: &str) -> Result<()> {
    remove_from(conn, mode, "summaries_fts", id, content)
}

fn remove_from(conn: &Connection, mode: IndexMode, index: &str, id: i64, content: &str) -> Result<()> {
    if mode != IndexMode::Like {
        conn.prepare_cached(&format!(
            "INSERT INTO {index}({index}, rowid, content) VALUES ('delete', ?1, ?2 || '  ')"
        ))?
        .execute(rusqlite::params![id, content])?;
    }
    Ok(())
}

/// Indexes a summary written as `id`, in place of its `old` text if it had one.
pub fn put_summary(conn: &Connection, mode: IndexMode, id: i64, old: Option<&str>, content: &str) -> Result<()> {
    if mode == IndexMode::Like {
        return Ok(());
    }
    if let Some(old) = old {
        remove_summary(conn, mode, id, old)?;
    }
    conn.prepare_cached("INSERT INTO summaries_fts(rowid, content) VALUES (?1, ?2 || '  ')")?
        .execute(rusqlite::params![id, content])?;
    Ok(())
}

/// Does one bounded step of FTS5's segment merging (`pages` leaf pages at
/// most), so that hooks later find a tidy index without one long lock.
/// Returns whether there was work to do.
pub fn merge_step(conn: &Connection, mode: IndexMode, pages: u32) -> Result<bool> {
    if mode == IndexMode::Like {
        return Ok(false);
    }
    let before = conn.total_changes();
    conn.execute("INSERT INTO observations_fts(observations_fts, rank) VALUES ('merge', ?1)", [pages])?;
    // FTS5's documented way to tell: a merge that did nothing changes nothing.
    Ok(conn.total_changes() > before + 1)
}

/// Has `merge_step` take segments two at a time (FTS5's `usermerge`, 4 by
/// default), so that merging ends with about one segment a level, not up
/// to three: a search looks each of its trigrams up in every segment, and
/// at 100k rows 11 segments cost a question's search about 15 ms more than
/// 2. The index keeps the setting.
pub fn merge_in_pairs(conn: &Connection, mode: IndexMode) -> Result<()> {
    if mode != IndexMode::Like {
        conn.execute("INSERT INTO observations_fts(observations_fts, rank) VALUES ('usermerge', 2)", [])?;
    }
    Ok(())
}

/// Merges the observations' index into one segment, at once (FTS5's
/// `optimize`), which drops what plainly deleted rows left in it. One
/// transaction: FTS5's incremental form of it (`merge` with a negative
/// count) never finishes beside hooks that keep adding segments, and
/// piles them up until FTS5 refuses every write (SQLITE_FULL at 2,000
/// segments), so it is not used.
pub fn optimize(conn: &Connection, mode: IndexMode) -> Result<()> {
    if mode != IndexMode::Like {
        conn.execute("INSERT INTO observations_fts(observations_fts) VALUES ('optimize')", [])?;
    }
    Ok(())
}

/// Re-reads every public observation into the index.
pub fn rebuild(conn: &Connection, mode: IndexMode) -> Result<()> {
    if mode != IndexMode::Like {
        conn.execute("INSERT INTO observations_fts(observations_fts) VALUES ('rebuild')", [])?;
        conn.execute("INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild')", [])?;
    }
    Ok(())
}

/// FTS5's own integrity check: the index matches the public rows exactly.
pub fn check(conn: &Connection, mode: IndexMode) -> Result<()> {
    if mode != IndexMode::Like {
        conn.execute("INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)", [])?;
        conn.execute("INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('integrity-check', 1)", [])?;
    }
    Ok(())
}
