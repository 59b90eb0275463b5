//! Vectors: what search finds by meaning. The store keeps them, one per
//! public row that says something (see `gets_a_vector`) and per brief summary, beside the name
//! of the model that made them; it neither makes nor compares them (see
//! `embed` and `recall::meaning`). Triggers drop a row's vector with the
//! row, or when its text changes (migration 0007).

use anyhow::Result;
use rusqlite::OptionalExtension;

use super::candidates::Sql;
use super::model::{SESSION_END_NOTE, STOP_NOTE};
use super::{Filters, Store, Table, schema};

/// `store_meta`'s keys for the model the stored vectors come from: its id,
/// and where it is loaded from (`embed::load` reads it).
const MODEL_KEY: &str = "vector_model";
const SOURCE_KEY: &str = "vector_model_source";
/// `store_meta`'s key for the highest observation and summary ids that
/// had every vector due when a fill last finished: `"<observation> <summary>"`.
const FILLED_KEY: &str = "vectors_filled_through";

/// The most waiting rows a search counts (`Store::vectors_waiting`): enough
/// to say how far behind the vectors are, few enough to read at once.
pub const WAITING_COUNTED_UP_TO: u64 = 1000;

/// The model the stored vectors come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorModel {
    pub id: String,
    pub source: String,
}

/// The observations that get a vector: each part of a session that says
/// something in enough words to have a meaning, the user's prompt
/// included (a task, a fact stated, a question), so that a short
/// paraphrase meets the part it paraphrases rather than a session's
/// average. Tool rows and the notes of a tool about to run are
/// identifiers, paths and output, which words find; a turn's end says
/// only that it ended. A text of a word or two ("done") is near every
/// short query, whatever it asks.
fn gets_a_vector() -> String {
    format!(
        "r.private = 0 AND r.kind IN {KINDS_WITH_VECTORS}
         AND octet_length(r.content) >= {MIN_BYTES}
         AND NOT (r.kind = 'note' AND (r.tool_name IS NOT NULL
                  OR r.content LIKE '{STOP_NOTE}%' OR r.content LIKE '{SESSION_END_NOTE}%'))"
    )
}

/// The kinds of observation that get a vector (some of their rows: see
/// [`gets_a_vector`]).
const KINDS_WITH_VECTORS: &str = "('user', 'response', 'note', 'decision', 'error', 'learning')";

/// The shortest text that gets a vector: "Fixed the import." and 修复了登录问题 do.
const MIN_BYTES: usize = 16;

/// A row waiting for its vector.
#[derive(Debug, Clone)]
pub struct Unembedded {
    pub table: Table,
    pub id: i64,
    pub text: String,
}

/// How many rows have vectors, and how many wait for one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct VectorCounts {
    pub embedded: u64,
    pub pending: u64,
}

impl Table {
    /// The `vectors.source` of this table's rows.
    fn source(self) -> i64 {
        match self {
            Table::Observations => 0,
            Table::Summaries => 1,
        }
    }
}

/// The rows of `table` (as `r`) that should have a vector and have none:
/// the `FROM` and `WHERE` of a statement.
fn waiting(table: Table) -> String {
    let should = match table {
        Table::Observations => format!("FROM observations r WHERE {}", gets_a_vector()),
        Table::Summaries => "FROM summaries r WHERE r.level = 'brief'".to_owned(),
    };
    format!("{should} AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.source = {} AND v.row_id = r.id)", table.source())
}

impl Store {
    /// The model the stored vectors come from, if any were made.
    pub(crate) fn vector_model(&self) -> Result<Option<VectorModel>> {
        let id = schema::get_meta(&self.conn, MODEL_KEY)?;
        let source = schema::get_meta(&self.conn, SOURCE_KEY)?;
        Ok(id.zip(source).map(|(id, source)| VectorModel { id, source }))
    }

    /// Makes `model` the one vectors come from: vectors of any other model
    /// are deleted, since they cannot be compared with its own.
    pub(crate) fn use_vector_model(&mut self, model: &VectorModel) -> Result<()> {
        let current = self.vector_model()?;
        if current.as_ref() == Some(model) {
            return Ok(());
        }
        let tx = self.conn.transaction()?;
        if current.is_none_or(|c| c.id != model.id) {
            tx.execute("DELETE FROM vectors", [])?;
            tx.execute("DELETE FROM store_meta WHERE key = ?1", [FILLED_KEY])?;
        }
        schema::set_meta(&tx, MODEL_KEY, &model.id)?;
        schema::set_meta(&tx, SOURCE_KEY, &model.source)?;
        tx.commit()?;
        Ok(())
    }

    /// Up to `limit` rows that should have a vector and have none, newest
    /// first, summaries before observations.
    pub(crate) fn unembedded(&self, limit: usize) -> Result<Vec<Unembedded>> {
        let mut rows = Vec::new();
        for table in [Table::Summaries, Table::Observations] {
            let left = limit - rows.len();
            if left == 0 {
                break;
            }
            let mut stmt = self
                .conn
                .prepare_cached(&format!("SELECT r.id, r.content {} ORDER BY r.id DESC LIMIT ?1", waiting(table)))?;
            let found = stmt.query_map([left as i64], |r| Ok(Unembedded { table, id: r.get(0)?, text: r.get(1)? }))?;
            for row in found {
                rows.push(row?);
            }
        }
        Ok(rows)
    }

    /// Stores vectors, each with its row's session, in one short
    /// transaction. A row deleted or changed since it was read gets none:
    /// its vector would describe other text.
    pub(crate) fn put_vectors(&mut self, vectors: &[(Unembedded, Vec<u8>)]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut session_if_still = tx.prepare_cached(
                "SELECT session_id FROM observations WHERE ?1 = 0 AND id = ?2 AND content = ?3 AND private = 0
                 UNION ALL SELECT session_id FROM summaries WHERE ?1 = 1 AND id = ?2 AND content = ?3",
            )?;
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO vectors (source, row_id, session_id, embedding) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (row, embedding) in vectors {
                let source = row.table.source();
                let session: Option<String> =
                    session_if_still.query_row((source, row.id, &row.text), |r| r.get(0)).optional()?;
                if let Some(session) = session {
                    put.execute((source, row.id, session, embedding))?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// How many rows have vectors and how many wait for one.
    pub(crate) fn vector_counts(&self) -> Result<VectorCounts> {
        let embedded: i64 = self.conn.query_row("SELECT count(*) FROM vectors", [], |r| r.get(0))?;
        Ok(VectorCounts { embedded: embedded as u64, pending: self.waiting_above((0, 0), None)? })
    }

    /// About how many rows wait for a vector, cheaply enough for every
    /// search: those newer than the rows a fill last finished with, which
    /// is where new rows wait (a row rewritten since, by a forget or a
    /// rescan, waits too and is not counted; the next fill embeds it), and
    /// at most `WAITING_COUNTED_UP_TO`. Until a fill first finishes, every
    /// row is newer than its mark: uncapped, a search of a million rows
    /// just imported counted them all, 0.9 s of each search.
    pub(crate) fn vectors_waiting(&self) -> Result<u64> {
        let filled = schema::get_meta(&self.conn, FILLED_KEY)?;
        let mut marks = filled.as_deref().unwrap_or("0 0").split(' ').map(|m| m.parse::<i64>().unwrap_or(0));
        let above = (marks.next().unwrap_or(0), marks.next().unwrap_or(0));
        self.waiting_above(above, Some(WAITING_COUNTED_UP_TO))
    }

    /// How many observations above the first id, and summaries above the
    /// second, wait for a vector; counted up to `most` in all.
    fn waiting_above(&self, (observations, summaries): (i64, i64), most: Option<u64>) -> Result<u64> {
        // A fill goes newest first, so the oldest rows above the marks
        // wait, and a capped count, which reads up from the marks, finds
        // them first. LIMIT -1 is SQLite's "no limit".
        let most = most.map_or(-1, |m| m as i64);
        let waiting: i64 = self
            .conn
            .prepare_cached(&format!(
                "SELECT count(*) FROM (SELECT 1 {} AND r.id > ?1 UNION ALL SELECT 1 {} AND r.id > ?2 LIMIT ?3)",
                waiting(Table::Observations),
                waiting(Table::Summaries)
            ))?
            .query_row([observations, summaries, most], |r| r.get(0))?;
        Ok(waiting as u64)
    }

    /// The highest observation and summary ids now: what `mark_vectors_filled`
    /// takes once no row up to them waits.
    pub(crate) fn newest_ids(&self) -> Result<(i64, i64)> {
        Ok((self.table_size(Table::Observations)?, self.table_size(Table::Summaries)?))
    }

    /// Notes that no row up to these ids waits for a vector.
    pub(crate) fn mark_vectors_filled(&self, (observations, summaries): (i64, i64)) -> Result<()> {
        schema::set_meta(&self.conn, FILLED_KEY, &format!("{observations} {summaries}"))
    }

    /// Hands each vector of `project`'s public rows and brief summaries,
    /// but those of session `exclude`, to `each` with the row's session.
    pub(crate) fn each_session_vector(
        &self,
        project: &str,
        exclude: Option<&str>,
        mut each: impl FnMut(&str, &[u8]),
    ) -> Result<()> {
        // From the project's sessions down to their vectors, by the
        // indexes on sessions' project and vectors' session (migration
        // 0013): the project's vectors are read, not the whole store's, nor
        // every row of the project. CROSS JOIN keeps that order: left to
        // choose, SQLite went from every vector of the store up to its row
        // and session, 25 ms against 4.7 for a project of 600 vectors in a
        // store of 40k observations. INDEXED BY, because without statistics
        // SQLite read every vector by the primary key's `source` instead:
        // 990 ms for a project of twenty at a million rows.
        let mut stmt = self.conn.prepare_cached(
            "SELECT s.id, v.embedding FROM sessions s
             CROSS JOIN vectors v INDEXED BY vectors_by_session ON v.session_id = s.id
             WHERE s.project_path = ?1 AND s.id IS NOT ?2",
        )?;
        let mut rows = stmt.query(rusqlite::params![project, exclude])?;
        while let Some(row) = rows.next()? {
            each(row.get_ref(0)?.as_str()?, row.get_ref(1)?.as_blob()?);
        }
        Ok(())
    }

    /// Hands each vector of `table`'s rows that pass the filters to `each`,
    /// with its row's id.
    pub(crate) fn each_vector(&self, table: Table, filters: &Filters, mut each: impl FnMut(i64, &[u8])) -> Result<()> {
        let mut sql = Sql::new();
        sql.filters(filters, table);
        let text = match (table, filters.narrows()) {
            (_, false) => format!("SELECT v.row_id, v.embedding FROM vectors v WHERE v.source = {}", table.source()),
            // From the named sessions down to their vectors, as
            // `each_session_vector` reads (and why), then to each vector's
            // row, for the filters on it.
            (_, true) if filters.names_sessions() => {
                let (rows, alias) = table.name_and_alias();
                format!(
                    "SELECT v.row_id, v.embedding FROM sessions s
                     CROSS JOIN vectors v INDEXED BY vectors_by_session ON v.session_id = s.id AND v.source = {}
                     CROSS JOIN {rows} {alias} ON {alias}.id = v.row_id
                     WHERE 1 {}",
                    table.source(),
                    sql.text
                )
            }
            (Table::Observations, true) => format!(
                "SELECT v.row_id, v.embedding FROM vectors v
                 JOIN observations o ON o.id = v.row_id JOIN sessions s ON s.id = o.session_id
                 WHERE v.source = 0 AND o.private = 0 {}",
                sql.text
            ),
            (Table::Summaries, true) => format!(
                "SELECT v.row_id, v.embedding FROM vectors v
                 JOIN summaries sm ON sm.id = v.row_id JOIN sessions s ON s.id = sm.session_id
                 WHERE v.source = 1 {}",
                sql.text
            ),
        };
        let mut stmt = self.conn.prepare_cached(&text)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(sql.params.iter()))?;
        while let Some(row) = rows.next()? {
            each(row.get(0)?, row.get_ref(1)?.as_blob()?);
        }
        Ok(())
    }
}
