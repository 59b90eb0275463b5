//! Search: candidates from the full-text index, ranked by `recall::rank`.
//!
//! A query's terms (see `recall::query`) need not all match. The index
//! nominates, newest first, the rows holding every term, and for each form
//! of each term the newest rows holding it; the rows whose terms weigh most
//! are read and ranked. Summaries are searched beside observations and
//! come back as hits of kind `summary`.

use anyhow::Result;
use rusqlite::OptionalExtension;
use rusqlite::types::Value;
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::{IndexMode, Kind, Store, SummaryLevel, snippet};
use crate::recall::query::{self, Needle, Query, Shape, Term};
use crate::recall::rank::{self, Document};

/// Narrows a search (or a listing) to part of the store.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub project: Option<String>,
    pub session: Option<String>,
    /// Leaves one session out: the one asking, when a prompt recalls memory.
    pub exclude_session: Option<String>,
    pub kind: Option<String>,
    pub tool: Option<String>,
    /// Only memories pulled from this teammate: `user@device` as sync
    /// labels them, or the user alone (any of their devices).
    pub author: Option<String>,
    /// Unix milliseconds, inclusive.
    pub since: Option<i64>,
    /// Unix milliseconds, exclusive.
    pub until: Option<i64>,
}

/// What to search for.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// Raw text as typed. Empty means "the most recent observations".
    pub text: String,
    pub filters: Filters,
    pub limit: usize,
    pub offset: usize,
}

/// One search result: enough to decide whether to look closer, no full content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The observation's id, for `timeline` and `show`; none for a
    /// summary, which `session_id` names.
    pub id: Option<i64>,
    pub session_id: String,
    pub project: String,
    /// Unix milliseconds.
    pub ts: i64,
    /// The observation's kind, or `summary`.
    pub kind: Kind,
    pub tool: Option<String>,
    /// For a summary: `brief` or `detailed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<SummaryLevel>,
    /// The teammate it was pulled from (`trae-mem sync`); none for one's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// An excerpt with matches between « and ».
    pub snippet: String,
    /// Relevance, higher is better; 0 without a text query.
    pub score: f64,
    /// The query's terms this hit holds; a synonym found stands for its term.
    pub matched: Vec<String>,
}

impl SearchHit {
    /// How a person or agent names the hit: `#42` for an observation, the
    /// session for a summary.
    pub fn reference(&self) -> String {
        match self.id {
            Some(id) => format!("#{id}"),
            None => format!("session {}", &self.session_id[..self.session_id.len().min(8)]),
        }
    }
}

/// Where a hit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Table {
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

    /// The SQL that reads candidates to rank, by a JSON array of ids:
    /// id, kind, time and text.
    fn candidates_sql(self) -> &'static str {
        match self {
            Table::Observations => {
                "SELECT o.id, o.kind, o.ts, o.content FROM observations o
                 WHERE o.id IN (SELECT value FROM json_each(?1)) AND o.private = 0"
            }
            Table::Summaries => {
                "SELECT sm.id, 'summary', sm.created_at, sm.content FROM summaries sm
                 WHERE sm.id IN (SELECT value FROM json_each(?1))"
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

/// With many matches, this many of the newest rows holding every term are
/// ranked. Ranking every match of a common word in a million rows would
/// cost far more than the answer is worth, and recent work matters most.
pub const RANKED_CANDIDATES: usize = 500;

/// The newest rows nominated for each form of each term.
const PER_NEEDLE: usize = 1000;

/// The nominated rows read and ranked, those whose terms weigh most.
const POOL: usize = 250;

/// Past this many rows, a form's document frequency is taken as this many:
/// its weight is already near the floor, and counting further costs time.
const DOC_FREQUENCY_CAP: usize = 10_000;

/// The tables a search with these filters looks in: a kind or tool filter
/// rules summaries, or observations, out.
fn tables(filters: &Filters) -> Vec<Table> {
    let summaries_only = filters.kind.as_deref() == Some(Kind::Summary.as_str());
    let observations_only = filters.tool.is_some() || filters.kind.is_some() && !summaries_only;
    let mut tables = Vec::new();
    if !summaries_only {
        tables.push(Table::Observations);
    }
    if !observations_only {
        tables.push(Table::Summaries);
    }
    tables
}

/// Whether any filter narrows the search.
fn has_filters(filters: &Filters) -> bool {
    let Filters { project, session, exclude_session, kind, tool, author, since, until } = filters;
    project.is_some()
        || author.is_some()
        || session.is_some()
        || exclude_session.is_some()
        || kind.is_some()
        || tool.is_some()
        || since.is_some()
        || until.is_some()
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
    /// rule a whole table out is `tables`' to say.
    pub(super) fn filters(&mut self, filters: &Filters, table: Table) {
        let (session, time) = match table {
            Table::Observations => ("o.session_id", "o.ts"),
            Table::Summaries => ("sm.session_id", "sm.created_at"),
        };
        if table == Table::Observations {
            if let Some(kind) = &filters.kind {
                self.clause("o.kind", "=", kind.clone());
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

/// A term still in play: one or more of its forms occurs somewhere.
struct LiveTerm<'q> {
    term: &'q Term,
    /// The index expression for its own form, and for any of its synonyms.
    own: Option<String>,
    synonyms: Option<String>,
    /// Rarity: BM25's inverse document frequency of its own form (of its
    /// synonyms, at their weight, when only they occur).
    idf: f64,
    /// The newest rows holding its own form, when no filter applies: the
    /// count of document frequency read them anyway.
    newest: Vec<i64>,
}

impl LiveTerm<'_> {
    /// Every form of it, in the order `Count::found` refers to.
    fn needles(&self) -> impl Iterator<Item = &Needle> {
        self.term.needles.iter()
    }
}

impl Store {
    /// Searches public observations and summaries. Never fails on what the
    /// text says: every query is valid, and one that cannot match returns
    /// no hits. Without a query, results are the newest observations.
    pub fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let query = query::understand(&request.text);
        if query.terms.is_empty() {
            return self.newest(request);
        }
        let tables = tables(&request.filters);
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let Some(live) = self.live_terms(&query, &request.filters, &tables)? else {
            return Ok(Vec::new());
        };
        if live.is_empty() {
            return Ok(Vec::new());
        }
        let weights: Vec<f64> = live.iter().map(|t| t.idf).collect();
        let mut nominated: FxHashMap<(Table, i64), f64> = FxHashMap::default();
        for &table in &tables {
            self.nominate(table, &live, &request.filters, &mut nominated)?;
        }
        let mut pool: Vec<((Table, i64), f64)> = nominated.into_iter().collect();
        pool.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.1.cmp(&a.0.1)));
        pool.truncate(POOL);

        let counter = rank::Counter::new(live.iter().map(|t| t.needles().collect()).collect());
        let mut documents = Vec::with_capacity(pool.len());
        let mut sources = Vec::with_capacity(pool.len());
        for table in [Table::Observations, Table::Summaries] {
            let ids: Vec<i64> = pool.iter().filter(|((t, _), _)| *t == table).map(|((_, id), _)| *id).collect();
            if ids.is_empty() {
                continue;
            }
            let mut stmt = self.conn.prepare_cached(table.candidates_sql())?;
            let mut rows = stmt.query([serde_json::to_string(&ids)?])?;
            while let Some(row) = rows.next()? {
                // Bytes: the terms are found without checking the text is UTF-8.
                let content = row.get_ref(3)?.as_bytes()?;
                let counts = counter.count(content);
                let missing_required = live.iter().zip(&counts).any(|(t, c)| t.term.required && c.tf == 0.0);
                if missing_required || counts.iter().all(|c| c.tf == 0.0) {
                    continue;
                }
                let kind: Kind = row.get(1)?;
                documents.push(Document {
                    key: documents.len(),
                    length: content.len(),
                    ts: row.get(2)?,
                    states: kind != Kind::Tool,
                    counts,
                });
                sources.push((table, row.get::<_, i64>(0)?));
            }
        }
        let ranked = rank::rank(&documents, &weights);
        let mut hits = Vec::new();
        for rank::Ranked { key, score, .. } in ranked.into_iter().skip(request.offset).take(request.limit) {
            let (table, id) = sources[key];
            let Some(row) = self.read_row(table, id)? else { continue };
            let counts = &documents[key].counts;
            let mut matched = Vec::new();
            let mut marks = Vec::new();
            for (term, count) in live.iter().zip(counts) {
                if let Some(found) = count.found {
                    let needle = &term.term.needles[found];
                    matched.push(if found == 0 { term.term.label.clone() } else { needle.display().to_owned() });
                    marks.extend(term.needles().map(|n| (n.text.as_str(), matches!(n.shape, Shape::Word { .. }))));
                }
            }
            hits.push(row.into_hit(table, id, score, matched, &marks));
        }
        Ok(hits)
    }

    /// The public observations that hold every term of `text` in its own
    /// form (not a synonym: what this selects may be deleted) and pass the
    /// filters, oldest first.
    pub fn observations_holding(&self, text: &str, filters: &Filters) -> Result<Vec<i64>> {
        let query = query::understand(text);
        if query.terms.is_empty() {
            return Ok(Vec::new());
        }
        let expressions: Vec<String> =
            query.terms.iter().filter_map(|t| expression(self.index, &t.needles[0], t.required)).collect();
        let candidates = if expressions.is_empty() {
            // Nothing the index can look up (punctuation in the word index):
            // every row passing the filters is a candidate.
            self.observations_passing(filters, true)?
        } else {
            self.matching(Table::Observations, &expressions, filters, usize::MAX)?
        };
        let counter = rank::Counter::new(query.terms.iter().map(|t| vec![&t.needles[0]]).collect());
        let mut holding = Vec::new();
        for chunk in candidates.chunks(1000) {
            let mut stmt = self.conn.prepare_cached(Table::Observations.candidates_sql())?;
            let mut rows = stmt.query([serde_json::to_string(chunk)?])?;
            while let Some(row) = rows.next()? {
                if counter.count(row.get_ref(3)?.as_bytes()?).iter().all(|c| c.tf > 0.0) {
                    holding.push(row.get(0)?);
                }
            }
        }
        holding.sort_unstable();
        Ok(holding)
    }

    /// The observations that pass the filters, oldest first: private ones
    /// too unless `public_only`.
    pub(super) fn observations_passing(&self, filters: &Filters, public_only: bool) -> Result<Vec<i64>> {
        let mut sql = Sql::new();
        sql.filters(filters, Table::Observations);
        let public = if public_only { "AND o.private = 0" } else { "" };
        let text = format!(
            "SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE 1 {public} {} ORDER BY o.id",
            sql.text
        );
        let ids = self
            .conn
            .prepare(&text)?
            .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }

    /// The newest public observations that pass the filters.
    fn newest(&self, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let mut sql = Sql::new();
        sql.filters(&request.filters, Table::Observations);
        let limit = sql.bind(request.limit as i64);
        let offset = sql.bind(request.offset as i64);
        let newest = format!(
            "SELECT o.id FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.private = 0 {}
             ORDER BY o.ts DESC, o.id DESC LIMIT {limit} OFFSET {offset}",
            sql.text
        );
        let ids: Vec<i64> = self
            .conn
            .prepare_cached(&newest)?
            .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut hits = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(row) = self.read_row(Table::Observations, id)? {
                hits.push(row.into_hit(Table::Observations, id, 0.0, Vec::new(), &[]));
            }
        }
        Ok(hits)
    }

    /// Each term with the forms of it that occur, and its rarity. `None`
    /// when quoted text occurs nowhere, so nothing can match.
    fn live_terms<'q>(
        &self,
        query: &'q Query,
        filters: &Filters,
        tables: &[Table],
    ) -> Result<Option<Vec<LiveTerm<'q>>>> {
        let mut total = 0;
        for table in tables {
            total += self.conn.query_row(table.size_sql(), [], |r| r.get::<_, i64>(0))?;
        }
        let rarity = |frequency: usize| {
            let n = frequency as f64;
            (1.0 + (total as f64 - n + 0.5) / (n + 0.5)).ln().max(0.01)
        };
        let unfiltered = Filters::default();
        let mut live = Vec::new();
        for term in &query.terms {
            let own = expression(self.index, &term.needles[0], term.required);
            // One term's rarity ranks nothing against another's: counting
            // its rows would only cost time.
            let cap = if query.terms.len() == 1 { PER_NEEDLE } else { DOC_FREQUENCY_CAP };
            let (mut frequency, mut newest) = (0, Vec::new());
            if let Some(own) = &own {
                for &table in tables {
                    if frequency < cap {
                        let ids = self.matching(table, std::slice::from_ref(own), &unfiltered, cap)?;
                        frequency += ids.len();
                        if table == Table::Observations {
                            newest = ids;
                        }
                    }
                }
            }
            let synonyms: Vec<String> =
                term.needles[1..].iter().filter_map(|n| expression(self.index, n, false)).collect();
            let synonyms = (!synonyms.is_empty()).then(|| synonyms.join(" OR "));
            let idf = if frequency > 0 {
                rarity(frequency)
            } else {
                let Some(any) = &synonyms else {
                    if term.required {
                        return Ok(None);
                    }
                    continue;
                };
                let found = self.matching(tables[0], std::slice::from_ref(any), &unfiltered, cap)?;
                if found.is_empty() {
                    continue;
                }
                rarity(found.len()) * query::SYNONYM_WEIGHT
            };
            let newest = if has_filters(filters) { Vec::new() } else { newest };
            live.push(LiveTerm { term, own: own.filter(|_| idf > 0.0), synonyms, idf, newest });
        }
        Ok(Some(live))
    }

    /// Adds `table`'s nominations to `nominated`, each with the weight of
    /// the terms that nominated it: the newest rows holding every term, and
    /// the newest holding each term's own form and any of its synonyms.
    fn nominate(
        &self,
        table: Table,
        live: &[LiveTerm<'_>],
        filters: &Filters,
        nominated: &mut FxHashMap<(Table, i64), f64>,
    ) -> Result<()> {
        let every_term: f64 = live.iter().map(|t| t.idf).sum();
        let any_form = |t: &LiveTerm<'_>| -> String {
            let forms: Vec<&str> = t.own.iter().chain(&t.synonyms).map(String::as_str).collect();
            format!("({})", forms.join(" OR "))
        };
        // The LIKE mode has no expression for "any form of the term": its
        // nominations per form are all it has.
        if live.len() > 1 && self.index != IndexMode::Like {
            let all: Vec<String> = live.iter().map(any_form).collect();
            for id in self.matching(table, &all, filters, RANKED_CANDIDATES)? {
                nominated.insert((table, id), every_term);
            }
        }
        for term in live {
            let mut add = |ids: &[i64], weight: f64| {
                for &id in ids {
                    let nominee = nominated.entry((table, id)).or_insert(0.0);
                    if *nominee < every_term {
                        *nominee += term.idf * weight;
                    }
                }
            };
            match &term.own {
                Some(_) if table == Table::Observations && !term.newest.is_empty() => {
                    add(&term.newest[..term.newest.len().min(PER_NEEDLE)], 1.0);
                }
                Some(own) => add(&self.matching(table, std::slice::from_ref(own), filters, PER_NEEDLE)?, 1.0),
                None => {}
            }
            if let Some(synonyms) = &term.synonyms {
                let forms: Vec<String> = if self.index == IndexMode::Like {
                    term.term.needles[1..].iter().filter_map(|n| expression(self.index, n, false)).collect()
                } else {
                    vec![synonyms.clone()]
                };
                for form in forms {
                    add(
                        &self.matching(table, std::slice::from_ref(&form), filters, PER_NEEDLE)?,
                        query::SYNONYM_WEIGHT,
                    );
                }
            }
        }
        Ok(())
    }

    /// The ids of `table`'s newest rows (up to `limit`) that hold every one
    /// of `expressions` and pass the filters.
    fn matching(&self, table: Table, expressions: &[String], filters: &Filters, limit: usize) -> Result<Vec<i64>> {
        let mut sql = Sql::new();
        sql.filters(filters, table);
        let (rows, alias, private) = match table {
            Table::Observations => ("observations", "o", " AND o.private = 0"),
            Table::Summaries => ("summaries", "sm", ""),
        };
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
            let limit = sql.bind(limit as i64);
            format!(
                "SELECT {alias}.id FROM {rows} {alias} {join} WHERE {}{private} {} ORDER BY {alias}.id DESC LIMIT {limit}",
                found.join(" AND "),
                sql.text,
            )
        } else {
            let fts = format!("{rows}_fts");
            let matches = sql.bind(expressions.join(" AND "));
            let base = if join.is_empty() && sql.text.is_empty() {
                String::new()
            } else {
                format!("JOIN {rows} {alias} ON {alias}.id = f.rowid {join}")
            };
            let limit = sql.bind(limit as i64);
            format!(
                "SELECT f.rowid FROM {fts} f {base} WHERE {fts} MATCH {matches} {} ORDER BY f.rowid DESC LIMIT {limit}",
                sql.text,
            )
        };
        let ids: Vec<i64> = self
            .conn
            .prepare_cached(&text)?
            .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }

    /// Reads one public row of `table`.
    fn read_row(&self, table: Table, id: i64) -> Result<Option<Row>> {
        let row = self
            .conn
            .prepare_cached(table.row_sql())?
            .query_row([id], |r| {
                Ok(Row {
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
}

/// A row read for a hit.
struct Row {
    session_id: String,
    project: String,
    ts: i64,
    kind: Kind,
    tool: Option<String>,
    content: String,
    level: Option<SummaryLevel>,
    author: Option<String>,
}

impl Row {
    fn into_hit(self, table: Table, id: i64, score: f64, matched: Vec<String>, marks: &[(&str, bool)]) -> SearchHit {
        debug_assert_eq!(table == Table::Summaries, self.level.is_some());
        SearchHit {
            snippet: snippet::Folded::new(&self.content).snippet(&snippet::needles(marks.iter().copied())),
            id: (table == Table::Observations).then_some(id),
            session_id: self.session_id,
            project: self.project,
            ts: self.ts,
            kind: self.kind,
            tool: self.tool,
            level: self.level,
            author: self.author,
            score: (score * 1000.0).round() / 1000.0,
            matched,
        }
    }
}

/// The index expression that nominates rows holding `needle`, or `None`
/// when this index cannot find it (a form with no word characters, in the
/// word index). In the LIKE mode, the text `instr` looks for.
fn expression(mode: IndexMode, needle: &Needle, phrase: bool) -> Option<String> {
    let text = &needle.text;
    Some(match mode {
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
        IndexMode::Like => text.clone(),
    })
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

    #[test]
    fn quotes_inside_terms_are_escaped() {
        assert_eq!(fts_string(r#"a"b"#), r#""a""b""#);
    }
}
