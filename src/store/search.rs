//! Full-text search with filters, ranked best first.

use anyhow::Result;
use rusqlite::OptionalExtension;
use rusqlite::types::Value;
use serde::Serialize;

use super::query::{self, Term};
use super::{IndexMode, Kind, Store, snippet};

/// Narrows a search (or a listing) to part of the store.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub project: Option<String>,
    pub session: Option<String>,
    pub kind: Option<String>,
    pub tool: Option<String>,
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
    pub id: i64,
    pub session_id: String,
    pub project: String,
    /// Unix milliseconds.
    pub ts: i64,
    pub kind: Kind,
    pub tool: Option<String>,
    /// An excerpt with matches between « and ».
    pub snippet: String,
    /// BM25 relevance, higher is better; 0 without a text query.
    pub score: f64,
}

/// SQL text plus the values bound to its placeholders.
struct Sql {
    text: String,
    params: Vec<Value>,
}

impl Sql {
    fn bind(&mut self, value: impl Into<Value>) -> String {
        self.params.push(value.into());
        format!("?{}", self.params.len())
    }

    /// Appends the filter clauses, each bound, and says whether they need
    /// `sessions s` joined.
    fn filters(&mut self, filters: &Filters) -> bool {
        let clause = |sql: &mut Sql, column: &str, op: &str, value: Value| {
            let placeholder = sql.bind(value);
            sql.text.push_str(&format!(" AND {column} {op} {placeholder}"));
        };
        if let Some(project) = &filters.project {
            clause(self, "s.project_path", "=", project.clone().into());
        }
        if let Some(session) = &filters.session {
            clause(self, "o.session_id", "=", session.clone().into());
        }
        if let Some(kind) = &filters.kind {
            clause(self, "o.kind", "=", kind.clone().into());
        }
        if let Some(tool) = &filters.tool {
            clause(self, "o.tool_name", "=", tool.clone().into());
        }
        if let Some(since) = filters.since {
            clause(self, "o.ts", ">=", since.into());
        }
        if let Some(until) = filters.until {
            clause(self, "o.ts", "<", until.into());
        }
        filters.project.is_some()
    }
}

/// With many matches, BM25 ranks the most recent this many. Ranking every
/// match of a common word in a million rows would cost far more than the
/// answer is worth, and for an agent's memory recent work matters most.
pub const RANKED_CANDIDATES: usize = 500;

/// Past this many rows, a term's document frequency is taken as this many:
/// its weight is already near the floor, and counting further costs time.
const DOC_FREQUENCY_CAP: i64 = 10_000;

/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// A result row, read in full.
struct Row {
    id: i64,
    session_id: String,
    project: String,
    ts: i64,
    kind: Kind,
    tool: Option<String>,
    content: String,
}

/// A confirmed match: its id, how often each term occurs, and its length.
struct Candidate {
    id: i64,
    frequencies: Vec<usize>,
    length: usize,
}

impl Store {
    /// Searches public observations. Never fails on what the text says:
    /// every query is valid, and one that cannot match returns no hits.
    ///
    /// The index nominates rows newest first; each row's text confirms it
    /// (the trigram index keeps no positions, so it can nominate a row that
    /// holds a term's trigrams but not the term) and gives the term
    /// frequencies that BM25 ranks by. The newest `RANKED_CANDIDATES`
    /// confirmed rows are ranked. Without a query, results are newest first.
    pub fn search(&self, request: &SearchRequest) -> Result<Vec<SearchHit>> {
        let terms = query::parse(&request.text);
        let mut sql = Sql { text: String::new(), params: Vec::new() };
        let join = if sql.filters(&request.filters) { "JOIN sessions s ON s.id = o.session_id" } else { "" };

        if terms.is_empty() {
            let limit = sql.bind(request.limit as i64);
            let offset = sql.bind(request.offset as i64);
            let newest = format!(
                "SELECT o.id FROM observations o {join} WHERE o.private = 0 {}
                 ORDER BY o.ts DESC, o.id DESC LIMIT {limit} OFFSET {offset}",
                sql.text
            );
            let ids: Vec<i64> = self
                .conn
                .prepare_cached(&newest)?
                .query_map(rusqlite::params_from_iter(sql.params.iter()), |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            return ids.into_iter().filter_map(|id| self.hit(id, &[], 0.0).transpose()).collect();
        }

        let (nominations, weights) = if self.index == IndexMode::Like {
            // SQLite's lower() folds ASCII letters only, so it can rule rows
            // out only for ASCII terms; every term is confirmed below.
            for term in terms.iter().filter(|t| t.text.is_ascii()) {
                let placeholder = sql.bind(term.text.to_lowercase());
                sql.text.push_str(&format!(" AND instr(lower(o.content), {placeholder}) > 0"));
            }
            let nominations = format!(
                "SELECT o.id, o.content FROM observations o {join} WHERE o.private = 0 {} ORDER BY o.id DESC",
                sql.text
            );
            (nominations, vec![1.0; terms.len()])
        } else {
            let Some(expressions) = query::fts_expressions(self.index, &terms) else {
                return Ok(Vec::new());
            };
            let weights = if terms.len() == 1 {
                vec![1.0]
            } else {
                expressions.iter().map(|e| self.inverse_document_frequency(e)).collect::<Result<_>>()?
            };
            let placeholder = sql.bind(expressions.join(" AND "));
            let nominations = format!(
                "SELECT o.id, o.content FROM observations_fts f JOIN observations o ON o.id = f.rowid {join}
                 WHERE observations_fts MATCH {placeholder} {} ORDER BY f.rowid DESC",
                sql.text
            );
            (nominations, weights)
        };

        let counter = TermCounter::new(&terms);
        // Unicode61 matches words, which need not hold the term as written
        // (diacritics); the other modes promise the substring itself.
        let confirm = self.index != IndexMode::Unicode61;
        let mut candidates = Vec::with_capacity(RANKED_CANDIDATES);
        let mut stmt = self.conn.prepare_cached(&nominations)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(sql.params.iter()))?;
        while let Some(row) = rows.next()? {
            // Bytes: the terms are found without checking the text is UTF-8.
            let content = row.get_ref(1)?.as_bytes()?;
            let frequencies = counter.count(content);
            if confirm && frequencies.contains(&0) {
                continue;
            }
            candidates.push(Candidate { id: row.get(0)?, frequencies, length: content.len() });
            if candidates.len() == RANKED_CANDIDATES {
                break;
            }
        }

        let mut ranked = bm25(&candidates, &weights);
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        let needles: Vec<&str> = terms.iter().map(|t: &Term| t.text.as_str()).collect();
        ranked
            .into_iter()
            .skip(request.offset)
            .take(request.limit)
            .filter_map(|(id, score)| self.hit(id, &needles, score).transpose())
            .collect()
    }

    /// Reads one public row as a hit, with its snippet.
    fn hit(&self, id: i64, needles: &[&str], score: f64) -> Result<Option<SearchHit>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT o.id, o.session_id, s.project_path, o.ts, o.kind, o.tool_name, o.content
             FROM observations o JOIN sessions s ON s.id = o.session_id WHERE o.id = ?1 AND o.private = 0",
        )?;
        let row = stmt
            .query_row([id], |r| {
                Ok(Row {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    project: r.get(2)?,
                    ts: r.get(3)?,
                    kind: r.get(4)?,
                    tool: r.get(5)?,
                    content: r.get(6)?,
                })
            })
            .optional()?;
        Ok(row.map(|row| SearchHit {
            snippet: snippet::Folded::new(&row.content).snippet(&snippet::needles(needles.iter().copied())),
            id: row.id,
            session_id: row.session_id,
            project: row.project,
            ts: row.ts,
            kind: row.kind,
            tool: row.tool,
            score: (score * 1000.0).round() / 1000.0,
        }))
    }

    /// BM25's IDF for one term's expression, from how many rows the index
    /// nominates for it (counted up to `DOC_FREQUENCY_CAP`).
    fn inverse_document_frequency(&self, expression: &str) -> Result<f64> {
        let matching: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM (SELECT 1 FROM observations_fts WHERE observations_fts MATCH ?1 LIMIT ?2)",
            )?
            .query_row(rusqlite::params![expression, DOC_FREQUENCY_CAP], |r| r.get(0))?;
        let total: i64 = self.conn.query_row("SELECT coalesce(max(id), 0) FROM observations", [], |r| r.get(0))?;
        let n = matching as f64;
        Ok((1.0 + (total as f64 - n + 0.5) / (n + 0.5)).ln().max(0.01))
    }
}

/// Scores candidates with BM25, their own mean length standing in for the
/// corpus's. Higher is better.
fn bm25(candidates: &[Candidate], weights: &[f64]) -> Vec<(i64, f64)> {
    let mean_length =
        (candidates.iter().map(|c| c.length).sum::<usize>() as f64 / candidates.len().max(1) as f64).max(1.0);
    candidates
        .iter()
        .map(|c| {
            let norm = K1 * (1.0 - B + B * c.length as f64 / mean_length);
            let score = c
                .frequencies
                .iter()
                .zip(weights)
                .map(|(&tf, idf)| idf * (tf as f64 * (K1 + 1.0)) / (tf as f64 + norm))
                .sum();
            (c.id, score)
        })
        .collect()
}

/// Counts each term's occurrences in a text, ignoring case.
///
/// Each term gets its own SIMD substring finder over a lowercased copy of
/// the text. One Aho-Corasick automaton for all terms was slower here: a
/// path's rarest byte (`/`) is common in code, so its prefilter kept
/// stopping, and confirming candidates is most of a path query's time.
struct TermCounter {
    finders: Vec<memchr::memmem::Finder<'static>>,
    /// No term has a letter with case outside ASCII (Chinese has none), so
    /// folding ASCII letters is enough to find them.
    ascii_fold: bool,
}

impl TermCounter {
    fn new(terms: &[Term]) -> Self {
        let lowered: Vec<String> = terms.iter().map(|t| t.text.to_lowercase()).collect();
        Self {
            ascii_fold: lowered.iter().flat_map(|t| t.chars()).all(|c| c.is_ascii() || c.to_uppercase().eq([c])),
            finders: lowered.iter().map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned()).collect(),
        }
    }

    /// Occurrences of each term; a term inside another (`store` in
    /// `src/store/mod.rs`) counts for both.
    fn count(&self, text: &[u8]) -> Vec<usize> {
        let folded = if self.ascii_fold {
            text.to_ascii_lowercase()
        } else {
            String::from_utf8_lossy(text).to_lowercase().into_bytes()
        };
        self.finders.iter().map(|finder| finder.find_iter(&folded).count()).collect()
    }
}
