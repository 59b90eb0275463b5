//! The primitives search is built from: which rows the full-text index
//! nominates for an expression, how many rows a table holds, the text of
//! candidates, and a row read for a hit. What a query means and how its
//! hits rank is `recall::search`'s to decide; nothing here knows a query.

use anyhow::Result;
use rusqlite::OptionalExtension;
use rusqlite::types::Value;
use rustc_hash::FxHashSet;

use super::facts::asked_without_work;
use super::index;
use super::tokenizer::{PROJECT_MARK, project_mark};
use super::{IndexMode, Kind, Store, SummaryLevel};

/// Narrows a search (or a listing) to part of the store.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub project: Option<String>,
    pub session: Option<String>,
    /// Leaves one session out: the one asking, when a prompt recalls memory.
    pub exclude_session: Option<String>,
    /// An observation's kind, or `Kind::Summary` for summaries alone.
    pub kind: Option<Kind>,
    pub tool: Option<String>,
    /// Only memories pulled from this teammate: `user@device` as sync
    /// labels them, or the user alone (any of their devices).
    pub author: Option<String>,
    /// Unix milliseconds, inclusive.
    pub since: Option<i64>,
    /// Unix milliseconds, exclusive.
    pub until: Option<i64>,
}

impl Filters {
    /// Whether any filter narrows the search.
    pub fn narrows(&self) -> bool {
        let Filters { project, session, exclude_session, kind, tool, author, since, until } = self;
        project.is_some()
            || author.is_some()
            || session.is_some()
            || exclude_session.is_some()
            || kind.is_some()
            || tool.is_some()
            || since.is_some()
            || until.is_some()
    }

    /// Whether a filter names the sessions to look in (a project, an
    /// author, a session): their rows are then found by the project's mark
    /// or from the sessions down (`Store::scope`), not by reading each row
    /// a search nominates to learn its session. All sessions but one is no
    /// such filter: its rows are nearly the whole store's.
    pub fn names_sessions(&self) -> bool {
        self.project.is_some() || self.author.is_some() || self.session.is_some()
    }

    /// The filters on what a row says of itself: its kind, tool and time.
    fn of_rows(&self) -> Filters {
        Filters {
            kind: self.kind.clone(),
            tool: self.tool.clone(),
            since: self.since,
            until: self.until,
            ..Filters::default()
        }
    }

    /// The filters on a row's session.
    fn of_sessions(&self) -> Filters {
        Filters {
            project: self.project.clone(),
            session: self.session.clone(),
            exclude_session: self.exclude_session.clone(),
            author: self.author.clone(),
            ..Filters::default()
        }
    }

    /// The tables a search with these filters looks in: a kind or tool
    /// filter rules summaries, or observations, out.
    pub fn tables(&self) -> Vec<Table> {
        let summaries_only = self.kind == Some(Kind::Summary);
        let observations_only = self.tool.is_some() || self.kind.is_some() && !summaries_only;
        let mut tables = Vec::new();
        if !summaries_only {
            tables.push(Table::Observations);
        }
        if !observations_only {
            tables.push(Table::Summaries);
        }
        tables
    }
}

/// Which rows of a table a search looks in (`Store::scope`).
pub(crate) enum Scope {
    /// Every row: no filter names sessions.
    Everywhere,
    /// One project's rows: the index's token for the project, as an FTS5
    /// expression, asked for beside the terms.
    Project(String),
    /// These rows, of the sessions the filters name.
    Rows(FxHashSet<i64>),
}

/// Where a hit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    Observations,
    Summaries,
}

impl Table {
    /// The SQL that says about how many rows the table has.
    fn size_sql(self) -> &'static str {
        match self {
            Table::Observations => "SELECT coalesce(max(id), 0) FROM observations",
            Table::Summaries => "SELECT coalesce(max(id), 0) FROM summaries",
        }
    }

    /// The table's name, and its alias in the SQL here (`Sql::filters`).
    pub(super) fn name_and_alias(self) -> (&'static str, &'static str) {
        match self {
            Table::Observations => ("observations", "o"),
            Table::Summaries => ("summaries", "sm"),
        }
    }

    /// The SQL that reads candidates to rank, by a JSON array of ids:
    /// id, kind, time, text, session, and for a summary of a session that
    /// ran no tool and met no error, what it asked (its facts' JSON list).
    fn candidates_sql(self) -> &'static str {
        match self {
            Table::Observations => {
                "SELECT o.id, o.kind, o.ts, o.content, o.session_id, NULL FROM observations o
                 WHERE o.id IN (SELECT value FROM json_each(?1)) AND o.private = 0"
            }
            Table::Summaries => {
                concat!(
                    "SELECT sm.id, 'summary', sm.created_at, sm.content, sm.session_id, ",
                    asked_without_work!(),
                    " FROM summaries sm WHERE sm.id IN (SELECT value FROM json_each(?1))"
                )
            }
        }
    }

    /// The SQL that reads a row of this table, by id, with its session.
    fn row_sql(self) -> &'static str {
        match self {
            Table::Observations => {
                "SELECT o.session_id, s.project_path, o.ts, o.kind, o.tool_name, o.content, NULL,
                        json_extract(s.meta_json, '$.author')
                 FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?1 AND o.private = 0"
            }
            Table::Summaries => {
                "SELECT sm.session_id, s.project_path, sm.created_at, 'summary', NULL, sm.content, sm.level,
                        json_extract(s.meta_json, '$.author')
                 FROM summaries sm JOIN sessions s ON s.id = sm.session_id WHERE sm.id = ?1"
            }
        }
    }
}

/// A candidate's text, to confirm and rank it.
pub struct Candidate<'r> {
    pub id: i64,
    pub kind: Kind,
    /// Unix milliseconds.
    pub ts: i64,
    /// Bytes: terms are found without checking the text is UTF-8.
    pub content: &'r [u8],
    pub session_id: &'r str,
    /// A summary's session that ran no tool and met no error: what it
    /// asked, as a JSON list (`Facts::asked`). None for an observation.
    pub asked_without_work: Option<&'r str>,
}

/// A public row read for a hit.
pub struct HitRow {
    pub session_id: String,
    pub project: String,
    pub ts: i64,
    pub kind: Kind,
    pub tool: Option<String>,
    pub content: String,
    /// For a summary, its level; none for an observation.
    pub level: Option<SummaryLevel>,
    pub author: Option<String>,
}

/// SQL text plus the values bound to its placeholders.
pub(super) struct Sql {
    pub(super) text: String,
    pub(super) params: Vec<Value>,
}

impl Sql {
    pub(super) fn new() -> Self {
        Self { text: String::new(), params: Vec::new() }
    }

    pub(super) fn bind(&mut self, value: impl Into<Value>) -> String {
        self.params.push(value.into());
        format!("?{}", self.params.len())
    }

    fn clause(&mut self, column: &str, op: &str, value: impl Into<Value>) {
        let placeholder = self.bind(value);
        self.text.push_str(&format!(" AND {column} {op} {placeholder}"));
    }

    /// Appends the filter clauses for `table`'s rows (`o` for observations,
    /// `sm` for summaries, with their session as `s`). Whether the filters
    /// rule a whole table out is `Filters::tables`' to say.
    pub(super) fn filters(&mut self, filters: &Filters, table: Table) {
        let (session, time) = match table {
            Table::Observations => ("o.session_id", "o.ts"),
            Table::Summaries => ("sm.session_id", "sm.created_at"),
        };
        if table == Table::Observations {
            if let Some(kind) = &filters.kind {
                self.clause("o.kind", "=", kind.as_str().to_owned());
            }
            if let Some(tool) = &filters.tool {
                self.clause("o.tool_name", "=", tool.clone());
            }
        }
        if let Some(project) = &filters.project {
            self.clause("s.project_path", "=", project.clone());
        }
        if let Some(author) = &filters.author {
            let exact = self.bind(author.clone());
            let user = self.bind(format!("{author}@"));
            self.text.push_str(&format!(
                " AND (json_extract(s.meta_json, '$.author') = {exact}
                       OR substr(json_extract(s.meta_json, '$.author'), 1, length({user})) = {user})"
            ));
        }
        if let Some(id) = &filters.session {
            self.clause(session, "=", id.clone());
        }
        if let Some(id) = &filters.exclude_session {
            self.clause(session, "<>", id.clone());
        }
        if let Some(since) = filters.since {
            self.clause(time, ">=", since);
        }
        if let Some(until) = filters.until {
            self.clause(time, "<", until);
        }
    }
}

impl Store {
    /// About how many rows `table` holds: the statistic rarity is reckoned from.
    pub(crate) fn table_size(&self, table: Table) -> Result<i64> {
        Ok(self.conn.query_row(table.size_sql(), [], |r| r.get::<_, i64>(0))?)
    }

    /// The index expression that nominates rows holding `text`, or `None`
    /// when this index cannot find it (a form with no word characters, in
    /// the word index). `phrase`: quoted text, found as written. In the
    /// LIKE mode, the text `instr` looks for.
    pub(crate) fn expression(&self, text: &str, phrase: bool) -> Option<String> {
        Some(match self.index {
            // The index's tokenizer keeps one- and two-character pieces as
            // tokens of their own (see `tokenizer`).
            IndexMode::Trigram if text.chars().count() < 3 => fts_string(text),
            IndexMode::Trigram => {
                let trigrams: Vec<String> = trigrams(text).iter().map(|t| fts_string(t)).collect();
                format!("({})", trigrams.join(" AND "))
            }
            IndexMode::Unicode61 => {
                if !text.chars().any(char::is_alphanumeric) {
                    return None;
                }
                // Word tokens: a form is found at the start of one (a run of
                // Chinese is a single token), and quoted text as written.
                if phrase { fts_string(text) } else { format!("{} *", fts_string(text)) }
            }
            IndexMode::Like => text.to_owned(),
        })
    }

    /// Where in `table` a search with these filters looks
    /// (`Filters::names_sessions`): a project's rows by the index's mark
    /// for it, where the index marks projects; other named sessions' rows,
    /// and a project's beside an author or a session (whose rows are fewer,
    /// and would each be read to check them), from the sessions down.
    pub(crate) fn scope(&self, table: Table, filters: &Filters) -> Result<Scope> {
        if !filters.names_sessions() {
            return Ok(Scope::Everywhere);
        }
        if let Some(project) = &filters.project
            && filters.author.is_none()
            && filters.session.is_none()
            // A path holding the mark's own character would end its mark early.
            && !project.contains(PROJECT_MARK)
            && self.index == IndexMode::Trigram
            && index::marks_projects(&self.conn, table.name_and_alias().0)?
        {
            return Ok(Scope::Project(fts_string(&project_mark(project))));
        }
        // Read from the index on sessions' project down the index on rows'
        // session: no row is read, and the cost grows with those sessions,
        // not the store. CROSS JOIN keeps the order: sessions first.
        let mut sql = Sql::new();
        sql.filters(&filters.of_sessions(), table);
        let (rows, alias) = table.name_and_alias();
        let text = format!(
            "SELECT {alias}.id FROM sessions s CROSS JOIN {rows} {alias} ON {alias}.session_id = s.id WHERE 1 {}",
            sql.text
        );
        Ok(Scope::Rows(self.ids(&text, &sql)?.into_iter().collect()))
    }

    /// The ids of `table`'s newest rows (up to `limit`) in `scope` that hold
    /// every one of `expressions` and pass the filters. In a scope of rows,
    /// the index's matches are checked against them, newest first, instead
    /// of reading each match's row and session: three lookups a match,
    /// which made a search of one project of twenty 9 to 12 times as slow
    /// as a search of all of them.
    pub(crate) fn matching(
        &self,
        table: Table,
        expressions: &[String],
        filters: &Filters,
        scope: &Scope,
        limit: usize,
    ) -> Result<Vec<i64>> {
        let narrowed;
        let (filters, within, mark) = match scope {
            Scope::Everywhere => (filters, None, None),
            Scope::Rows(rows) => {
                narrowed = filters.of_rows();
                (&narrowed, Some(rows), None)
            }
            Scope::Project(mark) => {
                narrowed = Filters { project: None, ..filters.clone() };
                (&narrowed, None, Some(mark))
            }
        };
        let mut sql = Sql::new();
        sql.filters(filters, table);
        let (rows, alias) = table.name_and_alias();
        let private = if table == Table::Observations { " AND o.private = 0" } else { "" };
        let join = if filters.project.is_some() || filters.author.is_some() {
            format!("JOIN sessions s ON s.id = {alias}.session_id")
        } else {
            String::new()
        };
        let text = if self.index == IndexMode::Like {
            // SQLite's lower() folds ASCII letters only: a form with other
            // cased letters (`münchen`) is left for ranking to confirm.
            let foldable = |e: &String| e.chars().all(|c| c.is_ascii() || c.to_uppercase().eq([c]));
            let mut found: Vec<String> = expressions
                .iter()
                .filter(|e| foldable(e))
                .map(|e| format!("instr(lower({alias}.content), {}) > 0", sql.bind(e.clone())))
                .collect();
            found.push("1".to_owned());
            let limit = sql.bind(sql_limit(limit, within));
            format!(
                "SELECT {alias}.id FROM {rows} {alias} {join} WHERE {}{private} {} ORDER BY {alias}.id DESC LIMIT {limit}",
                found.join(" AND "),
                sql.text,
            )
        } else {
            let fts = format!("{rows}_fts");
            // Each in brackets: FTS5's AND binds before OR, and a form may be `a OR b`.
            let all: Vec<String> = expressions.iter().chain(mark).map(|e| format!("({e})")).collect();
            let matches = sql.bind(all.join(" AND "));
            let base = if join.is_empty() && sql.text.is_empty() {
                String::new()
            } else {
                format!("JOIN {rows} {alias} ON {alias}.id = f.rowid {join}")
            };
            let limit = sql.bind(sql_limit(limit, within));
            format!(
                "SELECT f.rowid FROM {fts} f {base} WHERE {fts} MATCH {matches} {} ORDER BY f.rowid DESC LIMIT {limit}",
                sql.text,
            )
        };
        let Some(within) = within else { return self.ids(&text, &sql) };
        let mut stmt = self.conn.prepare_cached(&text)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(sql.params.iter()))?;
        let mut ids = Vec::new();
        while ids.len() < limit
            && let Some(row) = rows.next()?
        {
            let id = row.get(0)?;
            if within.contains(&id) {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// Hands each public row of `table` among `ids` to `each`, with its text.
    pub(crate) fn candidates(
        &self,
        table: Table,
        ids: &[i64],
        mut each: impl FnMut(Candidate<'_>) -> Result<()>,
    ) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(table.candidates_sql())?;
        let mut rows = stmt.query([serde_json::to_string(ids)?])?;
        while let Some(row) = rows.next()? {
            each(Candidate {
                id: row.get(0)?,
                kind: row.get(1)?,
                ts: row.get(2)?,
                content: row.get_ref(3)?.as_bytes()?,
                session_id: row.get_ref(4)?.as_str()?,
                asked_without_work: row.get_ref(5)?.as_str_or_null()?,
            })?;
        }
        Ok(())
    }

    /// The observations that pass the filters, oldest first: private ones
    /// too unless `public_only`.
    pub(crate) fn observations_passing(&self, filters: &Filters, public_only: bool) -> Result<Vec<i64>> {
        let mut sql = Sql::new();
        sql.filters(filters, Table::Observations);
        let public = if public_only { "AND o.private = 0" } else { "" };
        let text = format!(
            "SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE 1 {public} {} ORDER BY o.id",
            sql.text
        );
        self.ids(&text, &sql)
    }

    /// The newest public observations that pass the filters, a page of them.
    pub(crate) fn newest_observations(&self, filters: &Filters, limit: usize, offset: usize) -> Result<Vec<i64>> {
        let mut sql = Sql::new();
        sql.filters(filters, Table::Observations);
        let limit = sql.bind(limit as i64);
        let offset = sql.bind(offset as i64);
        let newest = format!(
            "SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.private = 0 {}
             ORDER BY o.ts DESC, o.id DESC LIMIT {limit} OFFSET {offset}",
            sql.text
        );
        self.ids(&newest, &sql)
    }

    /// Reads one public row of `table`.
    pub(crate) fn hit_row(&self, table: Table, id: i64) -> Result<Option<HitRow>> {
        let row = self
            .conn
            .prepare_cached(table.row_sql())?
            .query_row([id], |r| {
                Ok(HitRow {
                    session_id: r.get(0)?,
                    project: r.get(1)?,
                    ts: r.get(2)?,
                    kind: r.get(3)?,
                    tool: r.get(4)?,
                    content: r.get(5)?,
                    level: r.get::<_, Option<String>>(6)?.as_deref().and_then(SummaryLevel::parse),
                    author: r.get(7)?,
                })
            })
            .optional()?;
        Ok(row)
    }

    /// The ids a query of one id column returns.
    fn ids(&self, text: &str, sql: &Sql) -> Result<Vec<i64>> {
        let ids = self
            .conn
            .prepare_cached(text)?
            .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }
}

/// The SQL limit of a `matching` query: none when its matches are checked
/// against `within` after it (-1 is SQLite's "no limit").
fn sql_limit(limit: usize, within: Option<&FxHashSet<i64>>) -> i64 {
    match within {
        Some(_) => -1,
        None => i64::try_from(limit).unwrap_or(i64::MAX),
    }
}

/// Quotes text as one FTS5 string: a phrase of whatever tokens it holds.
/// Every term is quoted, so `OR`, `NOT`, `(`, `*`, `:` and `-` are just
/// characters to find.
fn fts_string(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Every trigram of `text` (at least three characters), once each. The index
/// has no positions (`detail=none`), so a row holding them all is only a
/// candidate that search then confirms; asking for all of them, rather than
/// a covering few, nominated 40% fewer false candidates for file paths.
fn trigrams(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.to_lowercase().chars().collect();
    let mut trigrams: Vec<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    let mut seen = std::collections::HashSet::new();
    trigrams.retain(|t| seen.insert(t.clone()));
    trigrams
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_terms_become_all_their_trigrams() {
        assert_eq!(trigrams("Database"), vec!["dat", "ata", "tab", "aba", "bas", "ase"]);
        assert_eq!(trigrams("abc"), vec!["abc"]);
        assert_eq!(trigrams("aaaa"), vec!["aaa"]);
        assert_eq!(trigrams("数据缓存"), vec!["数据缓", "据缓存"]);
    }

    /// A store of two projects, one path the start of the other, whose
    /// rows all mention "build"; `before_marks`: its index as made before
    /// the index filed rows under their project.
    fn two_projects(dir: &std::path::Path, before_marks: bool) -> Store {
        let mut store = Store::open(&dir.join("t.db"), &super::super::OpenOptions::default()).unwrap();
        if before_marks {
            index::drop(&store.conn).unwrap();
            store
                .conn
                .execute_batch(
                    "CREATE VIEW observations_fts_src AS
                         SELECT id, content || '  ' AS content FROM observations WHERE private = 0;
                     CREATE VIRTUAL TABLE observations_fts USING fts5(content, content='observations_fts_src',
                         content_rowid='id', tokenize='trae_mem skip_json_keys', detail='none', columnsize=0);
                     CREATE VIEW summaries_fts_src AS SELECT id, content || '  ' AS content FROM summaries;
                     CREATE VIRTUAL TABLE summaries_fts USING fts5(content, content='summaries_fts_src',
                         content_rowid='id', tokenize='trae_mem skip_json_keys', detail='none', columnsize=0);",
                )
                .unwrap();
        }
        store
            .write(|w| {
                let meta = serde_json::json!({});
                let (a, ab) = (w.new_session("/p/a", 0, &meta)?, w.new_session("/p/a b", 0, &meta)?);
                for (session, content) in [(&a, "build one"), (&ab, "build two"), (&a, "build three")] {
                    let kind = Kind::from("note");
                    let row = super::super::NewObservation {
                        session_id: session,
                        ts: 0,
                        kind: &kind,
                        tool: None,
                        content,
                        private: false,
                        tags: &[],
                    };
                    w.add_observation(&row)?;
                }
                w.put_summary(&ab, SummaryLevel::Brief, "build two, in brief", 0)
            })
            .unwrap();
        store
    }

    #[test]
    fn a_project_is_found_by_its_mark_or_from_its_sessions_before_marks() {
        for before_marks in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut store = two_projects(dir.path(), before_marks);
            let build = store.expression("build", false).unwrap();
            let found = |store: &Store, table: Table, project: &str| -> Vec<i64> {
                let filters = Filters { project: Some(project.to_owned()), ..Filters::default() };
                let scope = store.scope(table, &filters).unwrap();
                assert_eq!(matches!(scope, Scope::Project(_)), !before_marks, "before marks: {before_marks}");
                store.matching(table, std::slice::from_ref(&build), &filters, &scope, 10).unwrap()
            };
            assert_eq!(found(&store, Table::Observations, "/p/a"), [3, 1], "before marks: {before_marks}");
            assert_eq!(found(&store, Table::Observations, "/p/a b"), [2]);
            assert_eq!(found(&store, Table::Observations, "/p"), Vec::<i64>::new());
            assert_eq!(found(&store, Table::Summaries, "/p/a b"), [1]);
            assert_eq!(found(&store, Table::Summaries, "/p/a"), Vec::<i64>::new());
            // A term of several forms stays one term beside the project.
            let forms = format!("{build} OR {}", store.expression("nothing", false).unwrap());
            let filters = Filters { project: Some("/p/a b".to_owned()), ..Filters::default() };
            let scope = store.scope(Table::Observations, &filters).unwrap();
            assert_eq!(store.matching(Table::Observations, &[forms], &filters, &scope, 10).unwrap(), [2]);
            // A session beside the project, or a path holding the mark's
            // character, is looked for from the sessions down.
            let session: String =
                store.conn.query_row("SELECT session_id FROM observations WHERE id = 3", [], |r| r.get(0)).unwrap();
            let with_session =
                Filters { project: Some("/p/a".to_owned()), session: Some(session), ..Filters::default() };
            let scope = store.scope(Table::Observations, &with_session).unwrap();
            assert!(matches!(scope, Scope::Rows(_)));
            assert_eq!(
                store.matching(Table::Observations, std::slice::from_ref(&build), &with_session, &scope, 10).unwrap(),
                [3, 1]
            );
            let odd = Filters { project: Some(format!("/p/a{PROJECT_MARK}b")), ..Filters::default() };
            let scope = store.scope(Table::Observations, &odd).unwrap();
            assert!(matches!(scope, Scope::Rows(_)));
            assert_eq!(
                store.matching(Table::Observations, std::slice::from_ref(&build), &odd, &scope, 10).unwrap(),
                Vec::<i64>::new()
            );
            // What is removed is what was added, marked or not.
            store.delete_observations(&[1], false, true, &mut |_| {}).unwrap();
            assert_eq!(found(&store, Table::Observations, "/p/a"), [3]);
            index::check(&store.conn, store.index).unwrap();
        }
    }

    #[test]
    fn quotes_inside_terms_are_escaped() {
        assert_eq!(fts_string(r#"a"b"#), r#""a""b""#);
    }
}
