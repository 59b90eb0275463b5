//! A session's facts: what recall knows of a session without reading any
//! summarizer's prose. `summarize` takes them from the session's public
//! rows whenever it writes the summaries; here they are stored and read.

use std::collections::HashMap;

use anyhow::Result;
use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{Store, Writer};

/// What a session did, as data.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Facts {
    /// What the user asked, each prompt's first line once, in order.
    pub asked: Vec<String>,
    /// What was concluded: each answer's first line and each item of a
    /// decision, in order, the last one last.
    pub concluded: Vec<String>,
    /// What failed: the tool, then the error's own words.
    pub failed: Vec<String>,
    /// The files the tools read or changed, each once.
    pub files: Vec<String>,
    /// Each distinct tool call, named as it is shown (`Bash: cargo test`).
    pub tools: Vec<String>,
    /// How many calls of each tool, most used first.
    pub tool_counts: Vec<(String, u64)>,
    /// Tool calls that completed, other than calls to trae-mem itself
    /// (which ask memory, and are not work).
    pub tool_calls: u64,
    /// Tool calls that failed.
    pub errors: u64,
    /// Decisions, and rows of kinds a plugin or `trae_mem_log` named.
    pub stated: u64,
    /// The model's answers.
    pub answers: u64,
    /// Characters of the prompts and answers.
    pub talk_chars: u64,
}

impl Facts {
    /// Nothing public was left to take facts from: a forget took the rows,
    /// or retention did before the facts were taken.
    pub fn is_empty(&self) -> bool {
        *self == Facts::default()
    }
}

/// SQL for what a summary's session asked (`Facts::asked`, a JSON list),
/// when it ran no tool and met no error; NULL when it did, or has no facts.
/// Read beside a summary `sm`: the index on `worked` answers for the
/// sessions that worked, so a hook reads no facts of theirs (the planner
/// would take the primary key's index, and compute `worked` from each
/// session's facts).
///
/// A macro, so that `concat!` can put it into the queries' literals.
macro_rules! asked_without_work {
    () => {
        "(SELECT json_extract(f.facts, '$.asked') FROM session_facts f INDEXED BY session_facts_worked
          WHERE f.session_id = sm.session_id AND f.worked = 0)"
    };
}
pub(super) use asked_without_work;

/// Facts as a query reads them beside a session (`LEFT JOIN session_facts`):
/// none when the session has none yet, or they are of a shape this build
/// cannot read (the next catch-up or gc writes them again).
pub(super) fn parse(json: Option<String>) -> Option<Facts> {
    json.and_then(|json| serde_json::from_str(&json).ok())
}

impl Writer<'_> {
    /// Stores a session's facts, replacing any it had.
    pub(crate) fn put_facts(&self, session_id: &str, facts: &Facts, at: i64) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO session_facts(session_id, written_at, facts) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id) DO UPDATE SET written_at = excluded.written_at, facts = excluded.facts",
            )?
            .execute(params![session_id, at, serde_json::to_string(facts)?])?;
        Ok(())
    }
}

impl Store {
    /// The facts of those of `sessions` that have them.
    pub(crate) fn facts_of(&self, sessions: &[&str]) -> Result<HashMap<String, Facts>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT session_id, facts FROM session_facts WHERE session_id IN (SELECT value FROM json_each(?1))",
        )?;
        let rows = stmt.query_map([serde_json::to_string(sessions)?], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let mut facts = HashMap::new();
        for row in rows {
            let (session, json): (String, String) = row?;
            if let Some(parsed) = parse(Some(json)) {
                facts.insert(session, parsed);
            }
        }
        Ok(facts)
    }

    /// Up to `limit` sessions that have summaries but no facts: those
    /// summarized before facts were kept, or pulled and imported with
    /// their summaries. Oldest first, so that filling them resumes where
    /// it stopped.
    pub(crate) fn sessions_lacking_facts(&self, limit: usize) -> Result<Vec<String>> {
        let ids = self
            .conn
            .prepare_cached(
                "SELECT s.id FROM sessions s
                 WHERE EXISTS (SELECT 1 FROM summaries sm WHERE sm.session_id = s.id)
                   AND NOT EXISTS (SELECT 1 FROM session_facts f WHERE f.session_id = s.id)
                 ORDER BY s.started_at, s.id LIMIT ?1",
            )?
            .query_map([limit as i64], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }
}

/// Deletes a session's facts: they go with its summaries.
pub(super) fn delete(conn: &rusqlite::Connection, session_id: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM session_facts WHERE session_id = ?1")?.execute([session_id])?;
    Ok(())
}
