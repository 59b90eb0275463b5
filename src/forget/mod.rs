//! The one way out. `trae-mem forget`, the MCP tool `trae_mem_forget` and an
//! import's tombstones remove through `carry_out`, and retention through
//! `retention`, so that every removal is whole: the rows and their index
//! entries, the summaries that quoted them (written again from what
//! remains), sessions left empty with their client keys, spooled copies,
//! and the bytes in the file (`Store::reclaim`).

pub mod rescan;
pub mod retention;

use std::collections::BTreeSet;

use anyhow::Result;
use serde::Serialize;

use crate::config::Loaded;
use crate::spool::Spool;
use crate::store::{Filters, SECURE_DELETE_MAX, Selection, Store, now_ms};
use crate::summarize;

/// What a forget will remove, worked out before anything is deleted, so
/// that `--dry-run` shows exactly what would go.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Plan {
    /// Observation ids, oldest first.
    pub observations: Vec<i64>,
    /// Sessions removed whole, even those with no observations left (a
    /// selection by session or project alone).
    pub sessions: Vec<String>,
    /// A project forgotten whole: its spooled events go too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// What a forget removed.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Forgotten {
    pub observations: u64,
    /// Sessions removed with their summaries and client keys.
    pub sessions_removed: u64,
    /// Sessions that lost observations and were summarized again from the rest.
    pub sessions_resummarized: u64,
    /// Spooled events and dead letters of removed sessions, dropped.
    pub spooled_dropped: usize,
}

/// Which step of a forget failed. Each step is whole: running the same
/// forget again finishes the work.
#[derive(Debug, thiserror::Error)]
pub enum ForgetError {
    #[error("cannot delete the observations: {0:#}")]
    Delete(anyhow::Error),
    #[error("cannot write the summaries of session {session} again: {source:#}")]
    Resummarize { session: String, source: anyhow::Error },
    #[error("cannot remove session {session}: {source:#}")]
    RemoveSession { session: String, source: anyhow::Error },
    #[error("cannot drop the spooled events of what was forgotten: {0:#}")]
    Spool(anyhow::Error),
    #[error("cannot merge the full-text index: {0:#}")]
    Merge(anyhow::Error),
    #[error("cannot give the space back: {0:#}")]
    Reclaim(anyhow::Error),
}

/// Works out what `selection` would forget.
pub fn plan(store: &Store, selection: &Selection) -> Result<Plan> {
    let holding_query = match &selection.query {
        Some(text) => Some(crate::recall::search::observations_holding(store, text, &selection.filters)?),
        None => None,
    };
    let observations = store.select(selection, holding_query)?;
    let Filters { project, session, kind, tool, since, until, .. } = &selection.filters;
    let whole = selection.ids.is_empty()
        && selection.query.is_none()
        && kind.is_none()
        && tool.is_none()
        && since.is_none()
        && until.is_none();
    let sessions = match (whole, session, project) {
        (false, _, _) => Vec::new(),
        // A session named with a project it is not in is no session to remove.
        (true, Some(session), Some(project)) if &store.session(session)?.project != project => Vec::new(),
        (true, Some(session), _) => vec![session.clone()],
        (true, None, Some(project)) => {
            store.sessions(Some(project), usize::MAX >> 1)?.into_iter().map(|s| s.id).collect()
        }
        (true, None, None) => Vec::new(),
    };
    let project = if whole && session.is_none() { project.clone() } else { None };
    Ok(Plan { observations, sessions, project })
}

/// Forgets what `plan` names, leaving tombstones. `progress` hears how many
/// observations are gone.
pub fn carry_out(
    store: &mut Store,
    loaded: &Loaded,
    plan: &Plan,
    progress: &mut dyn FnMut(u64),
) -> Result<Forgotten, ForgetError> {
    let secure = plan.observations.len() <= SECURE_DELETE_MAX;
    let removed = store.delete_observations(&plan.observations, true, secure, progress).map_err(ForgetError::Delete)?;
    let mut report = Forgotten { observations: removed.observations, ..Forgotten::default() };
    let mut emptied: BTreeSet<String> = plan.sessions.iter().cloned().collect();
    let mut shrunk = Vec::new();
    for session in removed.sessions.iter().cloned() {
        if emptied.contains(&session) || store.observation_count(&session).map_err(ForgetError::Delete)? == 0 {
            emptied.insert(session);
        } else {
            shrunk.push(session);
        }
    }

    for session in shrunk {
        // A model's learnings may quote what was forgotten, like the
        // summaries: they go, and the summaries are written again. A
        // learning forgotten alone (a teammate's summarizer replaced it)
        // leaves the others be.
        if removed.sources_of_learnings.contains(&session) {
            let learnings = store.learnings(&session).map_err(ForgetError::Delete)?;
            let gone = store.delete_observations(&learnings, true, secure, &mut |_| {}).map_err(ForgetError::Delete)?;
            report.observations += gone.observations;
        }
        // The summaries may quote what was forgotten: write them again from
        // what remains, or drop them when nothing public does.
        let resummarized = resummarize(store, loaded, &session)
            .map_err(|source| ForgetError::Resummarize { session: session.clone(), source })?;
        report.sessions_resummarized += u64::from(resummarized);
    }

    let mut doomed = Doomed { projects: plan.project.iter().cloned().collect(), keys: Vec::new() };
    for session in &emptied {
        let Ok(found) = store.session(session) else { continue };
        let removed = store.session_keys(session).and_then(|keys| {
            for key in keys {
                doomed.keys.push((key.client, found.project.clone(), key.external_id));
            }
            store.delete_session(session, true)
        });
        let removed = removed.map_err(|source| ForgetError::RemoveSession { session: session.clone(), source })?;
        report.sessions_removed += u64::from(removed);
    }
    if !doomed.is_empty() {
        report.spooled_dropped =
            drop_spooled(loaded, &Spool::new(&loaded.home), &doomed).map_err(ForgetError::Spool)?;
    }
    store.compact_index(None).map_err(ForgetError::Merge)?;
    store.reclaim(None).map_err(ForgetError::Reclaim)?;
    Ok(report)
}

/// Writes a session's summaries again from what remains of it, or drops
/// them when nothing public does. Returns whether it had any.
fn resummarize(store: &mut Store, loaded: &Loaded, session: &str) -> Result<bool> {
    if store.summaries(session)?.is_empty() {
        return Ok(false);
    }
    let summarized = summarize::after_removal(store, loaded, session, now_ms())?;
    if !summarized.written {
        store.delete_summaries(session)?;
    }
    Ok(true)
}

/// Whose spooled events go: whole projects, and client sessions by key.
struct Doomed {
    projects: Vec<String>,
    /// (client, project, the client's session id)
    keys: Vec<(String, String, String)>,
}

impl Doomed {
    fn is_empty(&self) -> bool {
        self.projects.is_empty() && self.keys.is_empty()
    }

    fn covers(&self, client: &str, project: &str, external_id: Option<&str>) -> bool {
        self.projects.iter().any(|p| p == project)
            || external_id.is_some_and(|id| self.keys.iter().any(|(c, p, x)| c == client && p == project && x == id))
    }

    /// Whether unreadable bytes name a doomed session: a client's session
    /// id is a UUID or alike, unique enough to find as text.
    fn named_in(&self, bytes: &[u8]) -> bool {
        self.keys.iter().any(|(_, _, id)| id.len() >= 8 && memchr::memmem::find(bytes, id.as_bytes()).is_some())
    }
}

/// Drops spooled events and dead letters that belong to what was
/// forgotten, so that a later replay does not store them again. Returns
/// how many went.
fn drop_spooled(loaded: &Loaded, spool: &Spool, doomed: &Doomed) -> Result<usize> {
    let mut dropped = 0;
    for file in spool.waiting() {
        let Some(claim) = spool.claim(&file)? else { continue };
        let restored = claim.entry.restore(|| loaded.config.ingest_settings());
        let covered = restored.is_ok_and(|(adapter, event, resolved)| {
            doomed.covers(adapter.name(), &resolved.project, event.session_id.as_deref())
        });
        if covered {
            spool.done(claim)?;
            dropped += 1;
        } else {
            let reason = claim.entry.reason.clone();
            spool.release(claim, reason)?;
        }
    }
    for letter in spool.dead_letters()? {
        let bytes = std::fs::read(&letter.payload_file).unwrap_or_default();
        let project =
            letter.origin.project_dir.as_ref().or(letter.origin.cwd.as_ref()).map(|dir| crate::project::identify(dir));
        if doomed.named_in(&bytes) || project.is_some_and(|p| doomed.projects.contains(&p)) {
            spool.remove_dead_letter(&letter)?;
            dropped += 1;
        }
    }
    Ok(dropped)
}
