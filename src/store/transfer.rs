//! Export to and import from JSON lines: one record a line, lossless,
//! private flags and private content included (it is the user's own file).

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::batch::{self, Batch};
use super::tombstone::{Tombstone, TombstoneKind, bury, fingerprint, is_buried};
use super::write::{NewObservation, Writer};
use super::{Observation, RecordId, Session, Store, Summary, SyncState, index};

/// A client's id for a session, as kept in `session_keys`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExternalKey {
    pub client: String,
    pub external_id: String,
}

/// One line of an export file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ExportRecord {
    Session {
        session: Session,
        #[serde(default)]
        keys: Vec<ExternalKey>,
    },
    Observation(Observation),
    Summary(Summary),
    /// Something forgotten: importing this file does not bring it back,
    /// and removes it where it is still stored.
    Tombstone(Tombstone),
}

/// What an import did.
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct ImportReport {
    pub sessions: u64,
    pub observations: u64,
    pub summaries: u64,
    /// Records already in the store, left as they were.
    pub duplicates: u64,
    /// Records a tombstone names (forgotten here or where the file came
    /// from), not imported.
    pub forgotten: u64,
    /// Tombstones new to this store.
    pub tombstones: u64,
    /// Rows already stored that the file's tombstones name: the caller
    /// forgets them (`forget::carry_out`), so that the removal is whole.
    #[serde(skip)]
    pub to_forget: (Vec<i64>, Vec<String>),
    /// Sessions whose summaries came in during the batch being written:
    /// their facts are dropped, for `summarize::fill_facts` to take anew,
    /// all at once before the batch commits (`drop_outdated_facts`).
    #[serde(skip)]
    facts_outdated: Vec<String>,
}

impl ImportReport {
    /// Drops the facts of the sessions whose summaries came in since the
    /// last call. Once a batch rather than once a summary: the statement
    /// opens a savepoint, at which FTS5 writes out the terms it holds as a
    /// new segment, and per summary that made an import write one small
    /// segment a session and merge them all again (a tenth of its time).
    pub(super) fn drop_outdated_facts(&mut self, conn: &Connection) -> Result<()> {
        for session in self.facts_outdated.drain(..) {
            super::facts::delete(conn, &session)?;
        }
        Ok(())
    }
}

/// Records taken in in bulk (`Store::take_in`).
pub enum Records<'a> {
    /// The lines of an export file; `progress` hears the bytes read so far.
    File { input: &'a mut dyn BufRead, progress: &'a mut dyn FnMut(u64) },
    /// Records pulled from the sync server, each with its sequence number,
    /// for `project` (the local path they are filed under): the cursor in
    /// `state` moves past each in the same transaction.
    Pulled { state: &'a mut SyncState, project: &'a str, records: Vec<(i64, RecordId, ExportRecord)> },
}

/// Leaf pages merged per step of `tidy_index`: a few milliseconds of work.
const MERGE_PAGES: u32 = 64;

impl Store {
    /// Writes every session (of `project`, if given) with its observations
    /// and summaries. Returns the number of records written.
    pub(crate) fn export(&self, project: Option<&str>, out: &mut dyn Write) -> Result<u64> {
        let mut written = 0;
        let mut emit = |record: &ExportRecord, out: &mut dyn Write| -> Result<()> {
            serde_json::to_writer(&mut *out, record)?;
            out.write_all(b"\n")?;
            written += 1;
            Ok(())
        };
        let sessions = self.sessions(project, usize::MAX >> 1)?;
        for session in sessions.into_iter().rev() {
            let keys = self.session_keys(&session.id)?;
            let id = session.id.clone();
            emit(&ExportRecord::Session { session, keys }, out)?;
            for obs in self.session_observations(&id, true)? {
                emit(&ExportRecord::Observation(obs), out)?;
            }
            for summary in self.summaries(&id)? {
                emit(&ExportRecord::Summary(summary), out)?;
            }
        }
        // All of them, whatever the project: a tombstone names no project,
        // and is only a hash or an id.
        for tombstone in self.tombstones()? {
            emit(&ExportRecord::Tombstone(tombstone), out)?;
        }
        out.flush()?;
        Ok(written)
    }

    /// The client keys that map to a session.
    pub(crate) fn session_keys(&self, session_id: &str) -> Result<Vec<ExternalKey>> {
        let mut stmt =
            self.conn.prepare_cached("SELECT client, external_id FROM session_keys WHERE session_id = ?1")?;
        let keys = stmt
            .query_map([session_id], |row| Ok(ExternalKey { client: row.get(0)?, external_id: row.get(1)? }))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(keys)
    }

    /// Takes `records` in, in batched transactions as short as a hook can
    /// wait for. Records already here are skipped, so taking the same ones
    /// twice changes nothing the second time. The report's `to_forget`
    /// names rows already stored that the records' tombstones name:
    /// `bulk::take_in` forgets them, and is the way in for every caller
    /// that may bring tombstones.
    pub(crate) fn take_in(&mut self, records: Records<'_>) -> Result<ImportReport> {
        match records {
            Records::File { input, progress } => self.import(input, progress),
            Records::Pulled { state, project, records } => self.apply_pulled(state, project, records),
        }
    }

    /// Reads records written by `export`. `progress` is called with the
    /// bytes read so far after each batch.
    fn import(&mut self, input: &mut dyn BufRead, progress: &mut dyn FnMut(u64)) -> Result<ImportReport> {
        let mut report = ImportReport::default();
        let mut bytes = 0u64;
        let mut line_no = 0u64;
        let mut line = String::new();
        let at_work = batch::at_work(&self.path)?;
        loop {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let mut batch = Batch::begin(&self.path);
            let mut finished = false;
            while !batch.is_over() {
                line.clear();
                let read = input.read_line(&mut line)?;
                if read == 0 {
                    finished = true;
                    break;
                }
                bytes += read as u64;
                line_no += 1;
                if line.trim().is_empty() {
                    continue;
                }
                let record: ExportRecord = serde_json::from_str(&line)
                    .with_context(|| format!("line {line_no} is not a trae-mem export record"))?;
                import_record(&Writer::new(&tx, self.index), &record, &mut report)
                    .with_context(|| format!("cannot import line {line_no}"))?;
            }
            report.drop_outdated_facts(&tx)?;
            tx.commit()?;
            progress(bytes);
            batch.end();
            self.tidy_index()?;
            if finished {
                if report.tombstones > 0 {
                    report.to_forget = self.buried_but_stored()?;
                }
                drop(at_work);
                self.tidy_wal()?;
                return Ok(report);
            }
        }
    }

    /// Merges the index's segments, two at a time, until no level holds
    /// two: after a bulk write, in `gc`, and after each batch of a long
    /// writer. In short steps, so that a hook never inherits the merge
    /// debt and never waits long behind it.
    ///
    /// A long writer's commits each add a segment. Left to FTS5, the write
    /// that crosses its next automerge mark (every 64 leaf pages written)
    /// merges 64 pages a level wherever a level holds four: beside an
    /// import or a forget, 1–3% of hooks, at 100–230 ms under the lock, and
    /// at worst FTS5's crisis merge of a whole level. Merged in pairs after
    /// each batch, no level holds more than one; a hook's write and the
    /// next batch's make three, which an automerge leaves alone.
    pub(crate) fn tidy_index(&mut self) -> Result<()> {
        let _at_work = batch::at_work(&self.path)?;
        loop {
            let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            index::merge_in_pairs(&tx, self.index)?;
            let mut batch = Batch::begin(&self.path);
            let mut more = true;
            while more && !batch.is_over() {
                more = index::merge_step(&tx, self.index, MERGE_PAGES)?;
            }
            tx.commit()?;
            self.checkpoint_between_batches()?;
            if !more {
                return Ok(());
            }
            batch.end();
        }
    }
}

impl Store {
    /// The observations and sessions still stored that a tombstone names.
    /// Reads every observation once: only after an import brought new tombstones.
    pub(super) fn buried_but_stored(&self) -> Result<(Vec<i64>, Vec<String>)> {
        let sessions: Vec<String> = self
            .conn
            .prepare("SELECT id FROM sessions WHERE id IN (SELECT key FROM tombstones WHERE kind = 'session')")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let mut observations = Vec::new();
        let mut stmt = self.conn.prepare("SELECT id, session_id, ts, content FROM observations")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let key = fingerprint(row.get_ref(1)?.as_str()?, row.get(2)?, row.get_ref(3)?.as_str()?);
            if is_buried(&self.conn, TombstoneKind::Observation, &key)? {
                observations.push(row.get(0)?);
            }
        }
        Ok((observations, sessions))
    }
}

pub(super) fn import_record(writer: &Writer<'_>, record: &ExportRecord, report: &mut ImportReport) -> Result<()> {
    let conn = writer.conn();
    let session_buried = |id: &str| is_buried(conn, TombstoneKind::Session, id);
    match record {
        ExportRecord::Tombstone(tombstone) => {
            if bury(conn, tombstone.kind, &tombstone.key, tombstone.forgotten_at)? {
                report.tombstones += 1;
            }
        }
        ExportRecord::Session { session, .. } if session_buried(&session.id)? => report.forgotten += 1,
        ExportRecord::Summary(summary) if session_buried(&summary.session_id)? => report.forgotten += 1,
        ExportRecord::Observation(obs)
            if session_buried(&obs.session_id)?
                || is_buried(
                    conn,
                    TombstoneKind::Observation,
                    &fingerprint(&obs.session_id, obs.ts, &obs.content),
                )? =>
        {
            report.forgotten += 1
        }
        ExportRecord::Session { session, keys } => {
            let inserted = conn
                .prepare_cached(
                    "INSERT INTO sessions(id, started_at, ended_at, project_path, meta_json)
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(id) DO NOTHING",
                )?
                .execute(params![
                    session.id,
                    session.started_at,
                    session.ended_at,
                    session.project,
                    session.meta.to_string()
                ])?;
            for key in keys {
                conn.prepare_cached(
                    "INSERT INTO session_keys(client, project_path, external_id, session_id)
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                )?
                .execute(params![key.client, session.project, key.external_id, session.id])?;
            }
            if inserted == 1 { report.sessions += 1 } else { report.duplicates += 1 }
        }
        ExportRecord::Observation(obs) => {
            let new = NewObservation {
                session_id: &obs.session_id,
                ts: obs.ts,
                kind: &obs.kind,
                tool: obs.tool.as_deref(),
                content: &obs.content,
                private: obs.private,
                tags: &obs.tags,
            };
            // Keep the id when it is free, so that references to it survive
            // (a pulled record has none: it takes the next).
            if writer.add_observation_with_id(Some(obs.id).filter(|id| *id > 0), &new)?.is_some() {
                report.observations += 1;
            } else if is_same_observation(conn, obs)? {
                report.duplicates += 1;
            } else {
                writer.add_observation(&new)?;
                report.observations += 1;
            }
        }
        ExportRecord::Summary(summary) => {
            let written = writer.upsert_summary(
                &summary.session_id,
                summary.level,
                &summary.content,
                summary.created_at,
                true,
            )?;
            if written {
                // New summaries, new facts: `summarize::fill_facts` takes
                // them from the rows once the records are in.
                report.facts_outdated.push(summary.session_id.clone());
                report.summaries += 1;
            } else {
                report.duplicates += 1;
            }
        }
    }
    Ok(())
}

/// Whether `obs` is already stored, under its own id or, when that id was
/// taken by another row on an earlier import, under the id it was given then.
fn is_same_observation(conn: &Connection, obs: &Observation) -> Result<bool> {
    let same = conn
        .prepare_cached("SELECT 1 FROM observations WHERE session_id = ?1 AND ts = ?2 AND content = ?3")?
        .query_row(params![obs.session_id, obs.ts, obs.content], |_| Ok(()))
        .optional()?;
    Ok(same.is_some())
}
