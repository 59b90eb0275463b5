//! What the front ends show, read one way: the CLI, the MCP server and the
//! viewer take a timeline, a session, the sessions list, observations by
//! id, the projects, the counts and the live feed from a [`Reader`], and
//! call no store query themselves. Search is `recall::search`, beside it.
//!
//! Private rows are decided here, once: the owner at their terminal sees
//! that one is there (as `[PRIVATE]`), and an agent or a browser never
//! learns that it exists.

use std::io::Write;

use anyhow::Result;

use crate::store::{
    Facts, KindCount, ListedSession, Located, Observation, ProjectStats, Session, SessionDetail, Stats, Store, Summary,
    Timeline,
};

/// What becomes of a private row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Private {
    /// Shown as `[PRIVATE]`: the owner reading their own store.
    Marked,
    /// Left out, as if it were never recorded: an agent over MCP, the viewer.
    Hidden,
}

/// Reads `store` for a front end.
pub struct Reader<'s> {
    store: &'s Store,
    private: Private,
}

impl<'s> Reader<'s> {
    pub fn new(store: &'s Store, private: Private) -> Self {
        Self { store, private }
    }

    /// The observations a reader may see, of those given.
    fn shown(&self, observations: Vec<Observation>) -> Vec<Observation> {
        match self.private {
            Private::Marked => observations,
            Private::Hidden => observations.into_iter().filter(|o| !o.private).collect(),
        }
    }

    /// Observations by id, in the order asked; ids that do not exist, or
    /// may not be seen, are left out.
    pub fn observations(&self, ids: &[i64]) -> Result<Vec<Observation>> {
        Ok(self.shown(self.store.observations_by_id(ids)?))
    }

    /// One observation; none when it does not exist or may not be seen
    /// (the front end names where its ids come from).
    pub fn observation(&self, id: i64) -> Result<Option<Observation>> {
        Ok(self.observations(&[id])?.into_iter().next())
    }

    /// The observations of the anchor's session within ±`window_minutes` of
    /// it, in order; none when the anchor does not exist. A hidden anchor is
    /// as good as absent: its id does not confirm that it exists.
    pub fn timeline(&self, anchor: i64, window_minutes: i64) -> Result<Option<Timeline>> {
        let Some(timeline) = self.store.timeline(anchor, window_minutes)? else { return Ok(None) };
        // The window is around the anchor, so the anchor is in it.
        let observations = self.shown(timeline.observations);
        Ok(observations.iter().any(|o| o.id == anchor).then_some(Timeline { observations, ..timeline }))
    }

    /// One session, by its id or a unique prefix of it.
    pub fn session(&self, id_or_prefix: &str) -> Result<Session> {
        self.store.session(id_or_prefix)
    }

    /// A session with its summaries and its observations.
    pub fn session_detail(&self, id_or_prefix: &str) -> Result<SessionDetail> {
        let detail = self.store.session_detail(id_or_prefix)?;
        Ok(SessionDetail { observations: self.shown(detail.observations), ..detail })
    }

    /// What a session did (its tools, files, failures), as its summaries
    /// were written; empty before it has any.
    pub fn facts(&self, session_id: &str) -> Result<Facts> {
        Ok(self.store.facts_of(&[session_id])?.remove(session_id).unwrap_or_default())
    }

    /// A session's summaries, brief first.
    pub fn summaries(&self, session_id: &str) -> Result<Vec<Summary>> {
        self.store.summaries(session_id)
    }

    /// Sessions, newest first, optionally of one project.
    pub fn sessions(&self, project: Option<&str>, limit: usize) -> Result<Vec<Session>> {
        self.store.sessions(project, limit)
    }

    /// Sessions as [`Reader::sessions`] gives them, each named by its first
    /// public prompt and its brief summary.
    pub fn listed_sessions(&self, project: Option<&str>, limit: usize) -> Result<Vec<ListedSession>> {
        self.store.listed_sessions(project, limit)
    }

    /// Every project with its counts, the busiest first.
    pub fn projects(&self) -> Result<Vec<ProjectStats>> {
        self.store.projects()
    }

    /// Every project's path, in order.
    pub fn project_names(&self) -> Result<Vec<String>> {
        self.store.project_names()
    }

    /// The kinds observations have, the commonest first.
    pub fn kinds(&self) -> Result<Vec<KindCount>> {
        self.store.kinds()
    }

    /// Counts and sizes.
    pub fn stats(&self) -> Result<Stats> {
        self.store.stats()
    }

    /// How many observations are recorded, private ones included.
    pub fn observation_total(&self) -> Result<u64> {
        self.store.observation_total()
    }

    /// Nothing is recorded: no session, and no tombstone.
    pub fn holds_nothing(&self) -> Result<bool> {
        self.store.holds_nothing()
    }

    /// About how many memories search finds by their words alone, for want
    /// of a vector yet.
    pub fn vectors_waiting(&self) -> Result<u64> {
        self.store.vectors_waiting()
    }

    /// The store's records as `trae-mem import` reads them, optionally of
    /// one project; how many were written.
    pub fn export(&self, project: Option<&str>, out: &mut dyn Write) -> Result<u64> {
        self.store.export(project, out)
    }

    /// The live feed starts after this observation: the highest id, hidden
    /// rows included, 0 when there is none.
    pub fn newest_observation_id(&self) -> Result<i64> {
        self.store.newest_observation_id()
    }

    /// The newest public observations, newest first, optionally of one
    /// project. The feed is public whoever reads it: it shows what agents do.
    pub fn latest_observations(&self, project: Option<&str>, limit: usize) -> Result<Vec<Located>> {
        self.store.latest_observations(project, limit)
    }

    /// The public observations recorded after observation `after`, oldest
    /// first, and the id from which to go on.
    pub fn observations_after(&self, after: i64, limit: usize) -> Result<(Vec<Located>, i64)> {
        self.store.observations_after(after, limit)
    }
}
