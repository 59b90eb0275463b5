//! Team sync's local side: which records of a project are still to push,
//! and applying pulled ones. A record of the shared log is an export record
//! (`ExportRecord`) under a global id; the server and the sealing live in
//! `crate::sync`.
//!
//! - What is on the server (pushed from here, or pulled) is kept in
//!   `sync_records` by id, so nothing is pushed twice and one's own records
//!   coming back are recognised.
//! - Observations are found by a mark: the local id up to which they were
//!   offered. Local ids are reused after the newest rows are forgotten, so
//!   the mark remembers its row's fingerprint, and a mark whose row has
//!   changed starts the search again from the first row.
//! - Applying pulled records and moving the cursor past them happen in one
//!   transaction: a process killed at any point leaves both or neither.

use std::collections::HashSet;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use super::batch::{self, Batch};
use super::timeline::{observation, session};
use super::tombstone::{Tombstone, TombstoneKind, fingerprint, is_buried, tombstones};
use super::transfer::{ImportReport, import_record};
use super::write::Writer;
use super::{ExportRecord, Store, Summary, now_ms};

/// A record's global id: the same on every device that holds the record.
pub type RecordId = [u8; 16];

/// A PreToolUse note younger than this may still be replaced by its tool
/// call's result, so it is not pushed yet.
const PENDING_NOTE_MS: i64 = 60 * 60 * 1000;

/// A shared project as this device syncs it.
#[derive(Debug, Clone)]
pub struct SyncState {
    /// The local row of `sync_projects`.
    pub project: i64,
    /// The last server sequence number applied here.
    pub cursor: i64,
    /// Unix milliseconds of the last sync that completed.
    pub last_sync: Option<i64>,
    observation_mark: i64,
    mark_fingerprint: Option<String>,
    /// Where this run's search for observations goes on from: past the
    /// mark when a note waiting for its result holds the mark back.
    scanned: i64,
}

/// Records to push, in the order they must arrive: sessions before what
/// they hold.
#[derive(Debug, Default)]
pub struct Outgoing {
    pub records: Vec<(RecordId, ExportRecord)>,
    /// How far the search for observations got: the id and fingerprint of
    /// the row it stopped at, once this batch is on the server.
    mark: Option<(i64, String)>,
    /// The last observation this batch's search read.
    scanned: Option<i64>,
    /// The sessions whose records this batch carries.
    sessions: HashSet<RecordId>,
    /// Records this batch supersedes, for the server to delete: what its
    /// tombstones name, and the older versions of the summaries it carries.
    pub withdrawn: Vec<RecordId>,
}

impl ExportRecord {
    /// The record's global id, the same on every device: an observation's
    /// is its fingerprint, so that the same memory, however it reached a
    /// device (a hook, an import, a pull), is one record; the others' are
    /// hashes of what names them (a session's id, never shown to the server
    /// as such) or of what they say.
    pub fn record_id(&self) -> RecordId {
        match self {
            ExportRecord::Session { session, .. } => hashed(&["session", &session.id]),
            ExportRecord::Observation(obs) => fingerprint_id(&fingerprint(&obs.session_id, obs.ts, &obs.content)),
            ExportRecord::Summary(summary) => {
                hashed(&["summary", &summary.session_id, summary.level.as_str(), &summary.content])
            }
            ExportRecord::Tombstone(stone) => hashed(&["tombstone", stone.kind.as_str(), &stone.key]),
        }
    }
}

/// The id of the record a tombstone names.
fn buried_record(stone: &Tombstone) -> RecordId {
    match stone.kind {
        TombstoneKind::Session => hashed(&["session", &stone.key]),
        TombstoneKind::Observation => fingerprint_id(&stone.key),
    }
}

/// An observation's fingerprint (32 hex digits) as a record id. A key
/// that is not one (never written so) is hashed, as other ids are.
fn fingerprint_id(hex: &str) -> RecordId {
    crate::text::from_hex(hex).unwrap_or_else(|| hashed(&["observation", hex]))
}

fn hashed(parts: &[&str]) -> RecordId {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    hash.finalize()[..16].try_into().expect("a SHA-256 digest has 16 bytes to spare")
}

fn on_server(conn: &Connection, id: &RecordId) -> Result<bool> {
    let found = conn
        .prepare_cached("SELECT 1 FROM sync_records WHERE record_id = ?1")?
        .query_row([&id[..]], |_| Ok(()))
        .optional()?;
    Ok(found.is_some())
}

fn note_on_server(conn: &Connection, project: i64, id: &RecordId, record: &ExportRecord) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO sync_records(record_id, project, summary_of) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
    )?
    .execute(params![&id[..], project, summary_of(record)])?;
    Ok(())
}

/// What a summary record is a version of: its session and level.
fn summary_of(record: &ExportRecord) -> Option<String> {
    match record {
        ExportRecord::Summary(summary) => Some(format!("{}/{}", summary.session_id, summary.level.as_str())),
        _ => None,
    }
}

impl Store {
    /// How this device syncs `project` (a local project path), made on
    /// first use.
    pub(crate) fn sync_state(&self, project: &str) -> Result<SyncState> {
        self.conn
            .prepare_cached("INSERT INTO sync_projects(project_path) VALUES (?1) ON CONFLICT DO NOTHING")?
            .execute([project])?;
        let state = self
            .conn
            .prepare_cached(
                "SELECT id, cursor, last_sync, observation_mark, mark_fingerprint
                 FROM sync_projects WHERE project_path = ?1",
            )?
            .query_row([project], |r| {
                Ok(SyncState {
                    project: r.get(0)?,
                    cursor: r.get(1)?,
                    last_sync: r.get(2)?,
                    observation_mark: r.get(3)?,
                    mark_fingerprint: r.get(4)?,
                    scanned: r.get(3)?,
                })
            })?;
        Ok(state)
    }

    /// The projects this device has synced, by local path.
    pub(crate) fn synced_projects(&self) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT project_path FROM sync_projects ORDER BY project_path")?;
        let projects = stmt.query_map([], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(projects)
    }

    /// The next records of `project` to push, at most about `limit`, in
    /// one consistent read. `author` labels its sessions. Empty when
    /// everything is on the server.
    pub(crate) fn outgoing(
        &mut self,
        state: &mut SyncState,
        project: &str,
        author: &str,
        limit: usize,
    ) -> Result<Outgoing> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Deferred)?;
        if state.observation_mark > 0 && state.scanned == state.observation_mark && !mark_holds(&tx, state)? {
            state.observation_mark = 0;
            state.scanned = 0;
        }
        let mut out = Outgoing::default();
        observations_to_push(&tx, state, project, author, limit, &mut out)?;
        if out.records.len() < limit {
            summaries_to_push(&tx, project, author, &mut out)?;
            tombstones_to_push(&tx, state, &mut out)?;
        }
        Ok(out)
    }

    /// Notes that `batch` is on the server.
    pub(crate) fn pushed(&mut self, state: &mut SyncState, batch: &Outgoing) -> Result<()> {
        // An idle sync's empty batch has nothing to note: no write lock.
        if batch.records.is_empty() && batch.mark.is_none() && batch.withdrawn.is_empty() {
            state.scanned = batch.scanned.unwrap_or(state.scanned);
            return Ok(());
        }
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for (id, record) in &batch.records {
            note_on_server(&tx, state.project, id, record)?;
        }
        // Withdrawn summary versions are gone from the server; a buried
        // record stays noted, which keeps it from being pushed again.
        for id in &batch.withdrawn {
            tx.prepare_cached("DELETE FROM sync_records WHERE record_id = ?1 AND summary_of IS NOT NULL")?
                .execute([&id[..]])?;
        }
        if let Some((mark, fingerprint)) = &batch.mark {
            tx.prepare_cached("UPDATE sync_projects SET observation_mark = ?2, mark_fingerprint = ?3 WHERE id = ?1")?
                .execute(params![state.project, mark, fingerprint])?;
            state.observation_mark = *mark;
            state.mark_fingerprint = Some(fingerprint.clone());
        }
        tx.commit()?;
        state.scanned = batch.scanned.unwrap_or(state.scanned);
        Ok(())
    }

    /// Stores records pulled from the server for `project` (the local
    /// path they are filed under), each with its sequence number, moving
    /// the cursor past each in the same transaction. Transactions are as
    /// short as an import's, so that hooks beside a long pull wait
    /// milliseconds. Records already here (one's own, coming back) are
    /// skipped. The caller forgets what the report's `to_forget` names.
    pub(super) fn apply_pulled(
        &mut self,
        state: &mut SyncState,
        project: &str,
        records: Vec<(i64, RecordId, ExportRecord)>,
    ) -> Result<ImportReport> {
        let mut report = ImportReport::default();
        let mut records = records.into_iter().peekable();
        let _at_work = batch::at_work(&self.path)?;
        while records.peek().is_some() {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let writer = Writer::new(&tx, self.index);
            let mut batch = Batch::begin(&self.path);
            let mut cursor = state.cursor;
            while !batch.is_over()
                && let Some((seq, id, record)) = records.next()
            {
                apply_one(&writer, state.project, project, id, record, &mut report)?;
                cursor = seq;
            }
            report.drop_outdated_facts(&tx)?;
            tx.prepare_cached("UPDATE sync_projects SET cursor = ?2 WHERE id = ?1")?
                .execute(params![state.project, cursor])?;
            tx.commit()?;
            state.cursor = cursor;
            self.checkpoint_between_batches()?;
            batch.end();
            self.tidy_index()?;
        }
        if report.tombstones > 0 {
            report.to_forget = self.buried_but_stored()?;
        }
        Ok(report)
    }

    /// After a pull that stored observations, as after an import: keeps
    /// the write-ahead log short (each batch merged the index already).
    pub(crate) fn settle_after_pull(&mut self) -> Result<()> {
        self.tidy_wal()
    }

    /// How many of `ids` (records on the server) this device does not
    /// hold: what a pull would store. Its own pushes, and what it pulled,
    /// are here already.
    pub(crate) fn not_here(&self, ids: &[RecordId]) -> Result<u64> {
        let mut missing = 0;
        for id in ids {
            missing += u64::from(!on_server(&self.conn, id)?);
        }
        Ok(missing)
    }

    /// Notes a sync of the project that completed now.
    pub(crate) fn synced(&self, state: &mut SyncState) -> Result<()> {
        let now = now_ms();
        self.conn
            .prepare_cached("UPDATE sync_projects SET last_sync = ?2 WHERE id = ?1")?
            .execute(params![state.project, now])?;
        state.last_sync = Some(now);
        Ok(())
    }
}

/// Stores one pulled record, unless it is here already.
fn apply_one(
    writer: &Writer<'_>,
    sync_project: i64,
    project: &str,
    id: RecordId,
    mut record: ExportRecord,
    report: &mut ImportReport,
) -> Result<()> {
    let conn = writer.conn();
    if on_server(conn, &id)? {
        report.duplicates += 1;
        return Ok(());
    }
    match &mut record {
        ExportRecord::Session { session, keys } => {
            session.project = project.to_owned();
            keys.clear();
        }
        ExportRecord::Observation(obs) => {
            // Its id is the author's; here it takes the next one.
            obs.id = 0;
            obs.private = false;
            ensure_session(conn, &obs.session_id, project, obs.ts)?;
        }
        ExportRecord::Summary(summary) => ensure_session(conn, &summary.session_id, project, summary.created_at)?,
        ExportRecord::Tombstone(_) => {}
    }
    import_record(writer, &record, report).context("cannot store a pulled record")?;
    note_on_server(conn, sync_project, &id, &record)
}

/// Whether the row the mark stopped at is still the row it was: otherwise
/// its id, and ids below it, may since have gone to other rows.
fn mark_holds(conn: &Connection, state: &SyncState) -> Result<bool> {
    let row: Option<(String, i64, String)> = conn
        .prepare_cached("SELECT session_id, ts, content FROM observations WHERE id = ?1")?
        .query_row([state.observation_mark], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    Ok(row.is_some_and(|(session, ts, content)| {
        state.mark_fingerprint.as_deref() == Some(fingerprint(&session, ts, &content).as_str())
    }))
}

/// Puts the record of `session` before the first record of it in this
/// batch, when the server does not have it yet, labelled with its author
/// (`author` for one's own). Sessions go up only with something in them.
fn with_session(conn: &Connection, session_id: &str, author: &str, out: &mut Outgoing) -> Result<()> {
    let id = hashed(&["session", session_id]);
    if out.sessions.contains(&id) || on_server(conn, &id)? {
        return Ok(());
    }
    let mut found = conn
        .prepare_cached(
            "SELECT s.id, s.project_path, s.started_at, s.ended_at, s.meta_json, 0 FROM sessions s WHERE s.id = ?1",
        )?
        .query_row([session_id], session)?;
    if found.meta.get("author").is_none_or(|a| !a.is_string()) {
        found.meta["author"] = author.into();
    }
    out.sessions.insert(id);
    out.records.push((id, ExportRecord::Session { session: found, keys: Vec::new() }));
    Ok(())
}

/// Public observations of the project past the mark, not yet on the server.
/// A PreToolUse note still waiting for its result is left for later, and
/// the mark stays before it.
fn observations_to_push(
    conn: &Connection,
    state: &SyncState,
    project: &str,
    author: &str,
    limit: usize,
    out: &mut Outgoing,
) -> Result<()> {
    // CROSS JOIN keeps the observations outside: read from the mark on, in
    // id order, rather than every row of the project and a sort (which the
    // planner prefers for the project's index, and which cost an idle sync
    // 30 ms at 100k rows).
    let mut stmt = conn.prepare_cached(
        "SELECT o.id, o.session_id, o.ts, o.kind, o.tool_name, o.content, o.private, o.tags_json,
                EXISTS (SELECT 1 FROM pending_tools p WHERE p.observation_id = o.id)
         FROM observations o CROSS JOIN sessions s ON s.id = o.session_id
         WHERE o.id > ?1 AND s.project_path = ?2 ORDER BY o.id LIMIT ?3",
    )?;
    let young = now_ms() - PENDING_NOTE_MS;
    let from_mark = state.scanned == state.observation_mark;
    let mut held = false;
    let mut from = state.scanned;
    // Rows already on the server (pushed by a run killed before it noted
    // so, then pulled back) yield no records: read on past them, or a page
    // of them would look like the end.
    loop {
        let mut read = 0;
        let mut rows = stmt.query(params![from, project, limit as i64])?;
        while let Some(row) = rows.next()? {
            read += 1;
            let obs = observation(row, true)?;
            from = obs.id;
            out.scanned = Some(obs.id);
            let pending: bool = row.get(8)?;
            if pending && obs.ts > young {
                held = true;
                continue;
            }
            let key = fingerprint(&obs.session_id, obs.ts, &obs.content);
            if !held && from_mark {
                out.mark = Some((obs.id, key.clone()));
            }
            let id = fingerprint_id(&key);
            if obs.private || on_server(conn, &id)? {
                continue;
            }
            with_session(conn, &obs.session_id, author, out)?;
            out.records.push((id, ExportRecord::Observation(obs)));
        }
        if read < limit || out.records.len() >= limit {
            return Ok(());
        }
    }
}

/// The project's summaries, each version once.
fn summaries_to_push(conn: &Connection, project: &str, author: &str, out: &mut Outgoing) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "SELECT su.session_id, su.level, su.created_at, su.content
         FROM summaries su JOIN sessions s ON s.id = su.session_id WHERE s.project_path = ?1",
    )?;
    let mut rows = stmt.query([project])?;
    while let Some(row) = rows.next()? {
        let level: String = row.get(1)?;
        let Some(level) = super::SummaryLevel::parse(&level) else { continue };
        let summary = Summary { session_id: row.get(0)?, level, created_at: row.get(2)?, content: row.get(3)? };
        let session_id = summary.session_id.clone();
        let record = ExportRecord::Summary(summary);
        let id = record.record_id();
        if !on_server(conn, &id)? {
            let mut older = conn.prepare_cached("SELECT record_id FROM sync_records WHERE summary_of = ?1")?;
            let older = older.query_map([summary_of(&record)], |r| r.get::<_, Vec<u8>>(0))?;
            for old in older {
                out.withdrawn.extend(RecordId::try_from(old?.as_slice()).ok());
            }
            with_session(conn, &session_id, author, out)?;
            out.records.push((id, record));
        }
    }
    Ok(())
}

/// Tombstones for what this project put on the server: what was forgotten
/// here is forgotten on every device.
fn tombstones_to_push(conn: &Connection, state: &SyncState, out: &mut Outgoing) -> Result<()> {
    let mut named = conn.prepare_cached("SELECT 1 FROM sync_records WHERE record_id = ?1 AND project = ?2")?;
    for stone in tombstones(conn)? {
        let shared = named.query_row(params![&buried_record(&stone)[..], state.project], |_| Ok(())).optional()?;
        if shared.is_none() {
            continue;
        }
        let buried = buried_record(&stone);
        let record = ExportRecord::Tombstone(stone);
        let id = record.record_id();
        if !on_server(conn, &id)? {
            out.withdrawn.push(buried);
            out.records.push((id, record));
        }
    }
    Ok(())
}

/// Makes sure a pulled record's session exists, should its session record
/// never have arrived (it always comes first; this keeps one lost record
/// from stopping every later pull).
fn ensure_session(conn: &Connection, session_id: &str, project: &str, at: i64) -> Result<()> {
    if is_buried(conn, TombstoneKind::Session, session_id)? {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO sessions(id, started_at, project_path, meta_json) VALUES (?1, ?2, ?3, '{}')
         ON CONFLICT(id) DO NOTHING",
    )?
    .execute(params![session_id, at, project])?;
    Ok(())
}
