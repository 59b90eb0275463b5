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
//! and they, removals and a rebuild read text from the view
//! `observations_fts_src`, which leaves out private rows, so they are never
//! indexed. The view appends two spaces to each text so that every
//! character, even the last two, begins a trigram, whose short prefixes then
//! cover every one- and two-character piece of the text. A trigram index's
//! view also begins each text with its project's mark, which the tokenizer
//! takes as one token: a search of one project asks for it beside its terms
//! (`marks_projects`).

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

/// The view an index reads each row's text from: for a rebuild, and for
/// every add and remove, so that what is removed is what was added. Two
/// spaces follow each text, and in a trigram index its session's project
/// mark (`tokenizer::project_mark`) precedes it: `char(64976)` is the
/// mark's U+FDD0, and a row whose session is missing is filed under "".
fn source_view(rows: &str, mode: IndexMode) -> String {
    let (alias, public) = match rows {
        "observations" => ("o", "WHERE o.private = 0"),
        _ => ("sm", ""),
    };
    let (mark, join) = match mode {
        IndexMode::Trigram => (
            "char(64976) || coalesce(s.project_path, '') || char(64976) || ",
            format!("LEFT JOIN sessions s ON s.id = {alias}.session_id"),
        ),
        _ => ("", String::new()),
    };
    format!(
        "CREATE VIEW {rows}_fts_src AS
             SELECT {alias}.id, {mark}{alias}.content || '  ' AS content FROM {rows} {alias} {join} {public};"
    )
}

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
        "{view}
         CREATE VIRTUAL TABLE observations_fts USING fts5(
             content, content='observations_fts_src', content_rowid='id', {options});
         INSERT INTO observations_fts(observations_fts, rank) VALUES ('hashsize', {HASH_SIZE});",
        view = source_view("observations", mode),
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
        IndexMode::Trigram => Some("tokenize='trae_mem skip_json_keys project_marks', detail='none', columnsize=0"),
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
         {view}
         INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild');",
        view = source_view("summaries", mode),
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

/// Whether `rows`' index files each row under its project's mark (see
/// `tokenizer`). An index made before marks has none until it is rebuilt,
/// and search then finds a project's rows from its sessions down.
pub fn marks_projects(conn: &Connection, rows: &str) -> Result<bool> {
    let definition: Option<String> = conn
        .prepare_cached("SELECT sql FROM sqlite_schema WHERE name = ?1")?
        .query_row([format!("{rows}_fts")], |row| row.get(0))
        .optional()?;
    Ok(definition.is_some_and(|sql| sql.contains(super::tokenizer::PROJECT_MARKS)))
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
pub fn add(conn: &Connection, mode: IndexMode, id: i64) -> Result<()> {
    write(conn, mode, "observations", id, false)
}

/// Removes a public observation from the index, before it is deleted or
/// its text changes: an external content index needs the text the row was
/// indexed with.
pub fn remove(conn: &Connection, mode: IndexMode, id: i64) -> Result<()> {
    write(conn, mode, "observations", id, true)
}

/// Indexes a summary written as `id`.
pub fn add_summary(conn: &Connection, mode: IndexMode, id: i64) -> Result<()> {
    write(conn, mode, "summaries", id, false)
}

/// Removes a summary from the index, before it is deleted or rewritten.
pub fn remove_summary(conn: &Connection, mode: IndexMode, id: i64) -> Result<()> {
    write(conn, mode, "summaries", id, true)
}

/// Adds row `id` of `rows` to its index, or removes it, with the text its
/// source view gives it. The row must be public and not yet changed: one
/// the view no longer gives would leave its entries behind unnoticed.
fn write(conn: &Connection, mode: IndexMode, rows: &str, id: i64, remove: bool) -> Result<()> {
    if mode != IndexMode::Like {
        let (command, value) = match remove {
            true => (format!("{rows}_fts, "), "'delete', "),
            false => (String::new(), ""),
        };
        let written = conn
            .prepare_cached(&format!(
                "INSERT INTO {rows}_fts({command}rowid, content)
                 SELECT {value}id, content FROM {rows}_fts_src WHERE id = ?1"
            ))?
            .execute([id])?;
        anyhow::ensure!(written == 1, "{rows} row {id} is missing or private: it has no text to index or unindex");
    }
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
