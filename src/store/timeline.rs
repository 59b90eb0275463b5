//! Reads that are not searches: timelines, sessions, summaries, observations by id.

use anyhow::{Result, bail};
use rusqlite::{OptionalExtension, Row, params};
use serde::Serialize;

use super::facts::{self, Facts, asked_without_work};
use super::{Observation, PRIVATE_PLACEHOLDER, Session, SessionDetail, Store, Summary, SummaryLevel};

/// The observations around one observation, in its session.
#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub anchor: i64,
    pub session_id: String,
    pub window_minutes: i64,
    /// Ordered by time, then by insertion.
    pub observations: Vec<Observation>,
}

const OBSERVATION_COLUMNS: &str = "id, session_id, ts, kind, tool_name, content, private, tags_json";
const SESSION_COLUMNS: &str = "s.id, s.project_path, s.started_at, s.ended_at, s.meta_json,
    (SELECT count(*) FROM observations o WHERE o.session_id = s.id)";

/// How many of a project's latest started sessions `sessions_to_tell`
/// looks at for the most recently active.
const SESSIONS_CONSIDERED: i64 = 50;
/// How many of those, the most recently active, a session start weighs
/// (and its catch-up brings up to date first).
pub const TOLD_CANDIDATES: usize = 30;
/// A session `s` that recorded something to tell: a public row, or a brief
/// summary that retention kept (so its last activity is never null). Sessions opened and closed without a prompt
/// are not counted among the ones considered: 50 of them had hidden all the
/// work before them.
const RECORDED: &str = "(EXISTS (SELECT 1 FROM observations o WHERE o.session_id = s.id AND o.private = 0)
     OR EXISTS (SELECT 1 FROM summaries sm WHERE sm.session_id = s.id AND sm.level = 'brief'))";
/// How many sessions `recent_summaries` looks through for each summary it
/// returns.
const SUMMARIES_LOOKBACK: usize = 4;

/// How much of its first prompt `listed_sessions` reads to name a session:
/// a list shows a line, and a pasted log can run to megabytes.
const LISTED_PROMPT_CHARS: i64 = 300;

/// A session to tell the next one about.
#[derive(Debug, Clone)]
pub struct Told {
    pub session: Session,
    pub brief: Option<String>,
    /// Unix milliseconds of its last public observation.
    pub last_active: i64,
    /// It has no brief summary, or went on after it was written.
    pub stale: bool,
    /// What it did, as of its summaries; none before they were kept.
    pub facts: Option<Facts>,
    /// How long its detailed summary is, in characters: its text is read
    /// (`Store::detailed_summaries`) only for the sessions told in detail.
    pub detailed_chars: Option<usize>,
}

impl Told {
    /// No SessionEnd came after its last activity: still open, or closed
    /// without saying so.
    pub fn open(&self) -> bool {
        self.session.ended_at.is_none_or(|ended| ended < self.last_active)
    }
}

/// A session as a list names it: by what it began with, or by what its
/// brief summary says when no prompt of it is left (retention, a forget).
#[derive(Debug, Clone)]
pub struct ListedSession {
    pub session: Session,
    /// Its first public prompt, cut to `LISTED_PROMPT_CHARS`.
    pub first_prompt: Option<String>,
    pub brief: Option<String>,
}

/// Reads an observation row; private content is replaced unless `reveal`.
pub(super) fn observation(row: &Row<'_>, reveal: bool) -> rusqlite::Result<Observation> {
    let private: bool = row.get(6)?;
    let tags: String = row.get(7)?;
    Ok(Observation {
        id: row.get(0)?,
        session_id: row.get(1)?,
        ts: row.get(2)?,
        kind: row.get(3)?,
        tool: row.get(4)?,
        content: if private && !reveal { PRIVATE_PLACEHOLDER.to_owned() } else { row.get(5)? },
        private,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}

pub(super) fn session(row: &Row<'_>) -> rusqlite::Result<Session> {
    let meta: String = row.get(4)?;
    Ok(Session {
        id: row.get(0)?,
        project: row.get(1)?,
        started_at: row.get(2)?,
        ended_at: row.get(3)?,
        meta: serde_json::from_str(&meta).unwrap_or_default(),
        observations: row.get(5)?,
    })
}

/// A public observation with its session's project: what a live feed shows.
#[derive(Debug, Clone)]
pub struct Located {
    pub observation: Observation,
    pub project: String,
}

fn located(row: &Row<'_>) -> rusqlite::Result<Located> {
    Ok(Located { observation: observation(row, false)?, project: row.get(8)? })
}

const LOCATED_COLUMNS: &str =
    "o.id, o.session_id, o.ts, o.kind, o.tool_name, o.content, o.private, o.tags_json, s.project_path";

/// A session's detailed summary as a prompt recalls it, with the teammate
/// who recorded the session when it came by team sync.
#[derive(Debug, Clone)]
pub struct Recalled {
    pub summary: Summary,
    pub author: Option<String>,
    /// What its session asked (a JSON list), when it ran no tool and met no
    /// error (see `Facts`); the rest of its facts are read for the few told
    /// (`Store::facts_of`).
    pub asked_without_work: Option<String>,
}

/// A detailed summary read as `session_id, created_at, content, author,
/// asked_without_work`.
fn recalled(row: &Row<'_>) -> rusqlite::Result<Recalled> {
    Ok(Recalled {
        summary: Summary {
            session_id: row.get(0)?,
            level: SummaryLevel::Detailed,
            created_at: row.get(1)?,
            content: row.get(2)?,
        },
        author: row.get(3)?,
        asked_without_work: row.get(4)?,
    })
}

impl Store {
    /// The highest observation id, private rows included; 0 when there is none.
    pub(crate) fn newest_observation_id(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT coalesce(max(id), 0) FROM observations", [], |r| r.get(0))?)
    }

    /// The newest public observations, newest first, optionally of one project.
    pub(crate) fn latest_observations(&self, project: Option<&str>, limit: usize) -> Result<Vec<Located>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {LOCATED_COLUMNS} FROM observations o JOIN sessions s ON s.id = o.session_id
             WHERE o.private = 0 AND (?1 IS NULL OR s.project_path = ?1) ORDER BY o.id DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![project, limit as i64], located)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The public observations recorded after observation `after`, oldest
    /// first, and the highest id looked at (private rows included), from
    /// which to go on.
    pub(crate) fn observations_after(&self, after: i64, limit: usize) -> Result<(Vec<Located>, i64)> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {LOCATED_COLUMNS} FROM observations o JOIN sessions s ON s.id = o.session_id
             WHERE o.id > ?1 ORDER BY o.id LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![after, limit as i64], located)?.collect::<rusqlite::Result<Vec<_>>>()?;
        let last = rows.last().map_or(after, |r| r.observation.id);
        Ok((rows.into_iter().filter(|r| !r.observation.private).collect(), last))
    }

    /// The observations of the anchor's session within ±`window_minutes` of
    /// it; none when the anchor does not exist. Private rows appear as
    /// `[PRIVATE]`.
    pub(crate) fn timeline(&self, anchor: i64, window_minutes: i64) -> Result<Option<Timeline>> {
        let found: Option<(String, i64)> = self
            .conn
            .query_row("SELECT session_id, ts FROM observations WHERE id = ?1", [anchor], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?;
        let Some((session_id, ts)) = found else {
            return Ok(None);
        };
        let window_ms = window_minutes.max(0).saturating_mul(60_000);
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations
             WHERE session_id = ?1 AND ts BETWEEN ?2 AND ?3 ORDER BY ts, id"
        ))?;
        let observations = stmt
            .query_map(params![session_id, ts.saturating_sub(window_ms), ts.saturating_add(window_ms)], |row| {
                observation(row, false)
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(Some(Timeline { anchor, session_id, window_minutes, observations }))
    }

    /// Observations by id, in the order asked, skipping ids that do not exist.
    /// Private rows appear as `[PRIVATE]`.
    pub(crate) fn observations_by_id(&self, ids: &[i64]) -> Result<Vec<Observation>> {
        let mut stmt =
            self.conn.prepare_cached(&format!("SELECT {OBSERVATION_COLUMNS} FROM observations WHERE id = ?1"))?;
        let mut found = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(obs) = stmt.query_row([id], |row| observation(row, false)).optional()? {
                found.push(obs);
            }
        }
        Ok(found)
    }

    /// Sessions, newest first, optionally of one project.
    pub(crate) fn sessions(&self, project: Option<&str>, limit: usize) -> Result<Vec<Session>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS} FROM sessions s
             WHERE ?1 IS NULL OR s.project_path = ?1
             ORDER BY s.started_at DESC, s.rowid DESC LIMIT ?2"
        ))?;
        let sessions =
            stmt.query_map(params![project, limit as i64], session)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(sessions)
    }

    /// Sessions as `sessions` gives them, each with its first public prompt
    /// and its brief summary, in one query: a private prompt is never read.
    /// The limit applies first, so that only the listed sessions are looked into.
    pub(crate) fn listed_sessions(&self, project: Option<&str>, limit: usize) -> Result<Vec<ListedSession>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {SESSION_COLUMNS},
                    (SELECT substr(o.content, 1, ?3) FROM observations o
                     WHERE o.session_id = s.id AND o.kind = 'user' AND o.private = 0
                     ORDER BY o.ts, o.id LIMIT 1),
                    (SELECT sm.content FROM summaries sm WHERE sm.session_id = s.id AND sm.level = 'brief')
             FROM (SELECT rowid AS seq, * FROM sessions WHERE ?1 IS NULL OR project_path = ?1
                   ORDER BY started_at DESC, rowid DESC LIMIT ?2) s
             ORDER BY s.started_at DESC, s.seq DESC"
        ))?;
        let rows = stmt
            .query_map(params![project, limit as i64, LISTED_PROMPT_CHARS], |row| {
                Ok(ListedSession { session: session(row)?, first_prompt: row.get(6)?, brief: row.get(7)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// One session, found by its id or by a unique prefix of it.
    pub(crate) fn session(&self, id_or_prefix: &str) -> Result<Session> {
        let pattern = format!("{}%", id_or_prefix.replace(['%', '_'], ""));
        let mut stmt = self
            .conn
            .prepare_cached(&format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id LIKE ?1 LIMIT 2"))?;
        let mut matches = stmt.query_map([pattern], session)?.collect::<rusqlite::Result<Vec<_>>>()?;
        match matches.len() {
            1 => Ok(matches.remove(0)),
            0 => bail!("no session has id {id_or_prefix:?}; `trae-mem sessions` lists them"),
            _ => bail!("{id_or_prefix:?} is the start of several session ids; give more of it"),
        }
    }

    /// A session's summaries, brief first.
    pub(crate) fn summaries(&self, session_id: &str) -> Result<Vec<Summary>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT session_id, level, created_at, content FROM summaries
             WHERE session_id = ?1 ORDER BY level",
        )?;
        let summaries = stmt
            .query_map([session_id], |row| {
                let level: String = row.get(1)?;
                Ok(Summary {
                    session_id: row.get(0)?,
                    level: SummaryLevel::parse(&level).unwrap_or(SummaryLevel::Detailed),
                    created_at: row.get(2)?,
                    content: row.get(3)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(summaries)
    }

    /// All observations of a session in order. `reveal` includes private
    /// content, for exports and the summarizer's privacy filter only.
    pub(crate) fn session_observations(&self, session_id: &str, reveal: bool) -> Result<Vec<Observation>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {OBSERVATION_COLUMNS} FROM observations WHERE session_id = ?1 ORDER BY ts, id"
        ))?;
        let observations =
            stmt.query_map([session_id], |row| observation(row, reveal))?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(observations)
    }

    /// A session with its summaries and observations (private ones as `[PRIVATE]`).
    pub(crate) fn session_detail(&self, id_or_prefix: &str) -> Result<SessionDetail> {
        let session = self.session(id_or_prefix)?;
        let summaries = self.summaries(&session.id)?;
        let observations = self.session_observations(&session.id, false)?;
        Ok(SessionDetail { session, summaries, observations })
    }

    /// The detailed summaries of the project's `limit` latest started
    /// sessions, but `exclude`: what a prompt's memories are chosen from.
    pub(crate) fn recent_summaries(&self, project: &str, exclude: Option<&str>, limit: usize) -> Result<Vec<Recalled>> {
        let mut stmt = self.conn.prepare_cached(concat!(
            "SELECT sm.session_id, sm.created_at, sm.content, json_extract(s.meta_json, '$.author'), ",
            asked_without_work!(),
            " FROM (SELECT id, started_at, meta_json FROM sessions WHERE project_path = ?1 AND id IS NOT ?2
                   ORDER BY started_at DESC LIMIT ?4) s
             JOIN summaries sm ON sm.session_id = s.id AND sm.level = 'detailed'
             ORDER BY s.started_at DESC LIMIT ?3",
        ))?;
        // Sessions without a summary yet (in progress, or never ended) are
        // passed over rather than taking a place; looking no further back
        // than a few times `limit` keeps the cost bounded.
        let considered = limit.saturating_mul(SUMMARIES_LOOKBACK) as i64;
        let rows = stmt
            .query_map(params![project, exclude, limit as i64, considered], recalled)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The detailed summaries of `sessions`, those that have one, in no
    /// particular order: the sessions a prompt's meaning found.
    pub(crate) fn detailed_summaries(&self, sessions: &[&str]) -> Result<Vec<Recalled>> {
        let mut stmt = self.conn.prepare_cached(concat!(
            "SELECT sm.session_id, sm.created_at, sm.content, json_extract(s.meta_json, '$.author'), ",
            asked_without_work!(),
            " FROM summaries sm JOIN sessions s ON s.id = sm.session_id
             WHERE sm.session_id IN (SELECT value FROM json_each(?1)) AND sm.level = 'detailed'",
        ))?;
        let ids = serde_json::to_string(sessions)?;
        let rows = stmt.query_map([ids], recalled)?.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }

    /// The project's sessions that recorded something public, or kept their
    /// summary when retention took their rows, but `exclude`, most recently
    /// active first: ended or not, resumed or not. Each comes
    /// with its brief summary and whether that summary is older than its
    /// last activity. Looks among the `SESSIONS_CONSIDERED` latest started,
    /// so that the cost stays the same however long the project's history.
    pub(crate) fn sessions_to_tell(&self, project: &str, exclude: Option<&str>, limit: usize) -> Result<Vec<Told>> {
        // A session start asks twice, for its catch-up and then for the
        // telling, and the read counts every chosen session's rows: while
        // this connection has written nothing in between, the first answer
        // stands.
        let asked = (project.to_owned(), exclude.map(str::to_owned), limit, self.conn.total_changes());
        let mut memo = self.told_memo.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, told)) = memo.as_ref()
            && *at == asked
        {
            return Ok(told.clone());
        }
        let told = self.read_sessions_to_tell(project, exclude, limit)?;
        *memo = Some((asked, told.clone()));
        Ok(told)
    }

    fn read_sessions_to_tell(&self, project: &str, exclude: Option<&str>, limit: usize) -> Result<Vec<Told>> {
        // The sessions are chosen by their last activity first, and only
        // the chosen ones are read: their rows counted, their summaries and
        // facts. Reading all of the considered ones before choosing counted
        // every row of 50 sessions, twice a session start.
        let mut stmt = self.conn.prepare_cached(&format!(
            "WITH chosen AS (
                 SELECT s.id, sm.created_at AS summarized_at,
                        coalesce((SELECT max(o.ts) FROM observations o WHERE o.session_id = s.id AND o.private = 0),
                                 sm.created_at) AS active
                 FROM (SELECT id FROM sessions s WHERE project_path = ?1 AND id IS NOT ?2 AND {RECORDED}
                       ORDER BY started_at DESC LIMIT ?3) s
                 LEFT JOIN summaries sm ON sm.session_id = s.id AND sm.level = 'brief'
                 ORDER BY active DESC, s.id LIMIT ?4)
             SELECT {SESSION_COLUMNS}, b.content, c.summarized_at, c.active, f.facts,
                    (SELECT length(d.content) FROM summaries d WHERE d.session_id = s.id AND d.level = 'detailed')
             FROM chosen c JOIN sessions s ON s.id = c.id
             LEFT JOIN summaries b ON b.session_id = s.id AND b.level = 'brief'
             LEFT JOIN session_facts f ON f.session_id = s.id
             ORDER BY c.active DESC, s.id"
        ))?;
        let rows = stmt
            .query_map(params![project, exclude, SESSIONS_CONSIDERED, limit as i64], |row| {
                let summarized_at: Option<i64> = row.get(7)?;
                let last_active: i64 = row.get(8)?;
                Ok(Told {
                    session: session(row)?,
                    brief: row.get(6)?,
                    last_active,
                    stale: summarized_at.is_none_or(|at| at < last_active),
                    facts: facts::parse(row.get(9)?),
                    detailed_chars: row.get::<_, Option<i64>>(10)?.map(|chars| chars as usize),
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}
