//! What the store holds and how big it is: `trae-mem stats`, doctor, and
//! retention's size cap.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;

use super::Store;

/// The store's sizes and contents.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    /// Bytes the memory takes on disk: the database file with its
    /// write-ahead log and shared memory file. Between checkpoints the log
    /// may hold most of what was stored, so the database file alone says
    /// little.
    pub size_bytes: u64,
    /// Each of those files that exists, the database first.
    pub files: Vec<StoreFile>,
    /// Bytes of the database file, its write-ahead log and shared memory file.
    pub db_bytes: u64,
    pub wal_bytes: u64,
    pub shm_bytes: u64,
    /// Bytes of the database file in use (the rest is free pages).
    pub used_bytes: u64,
    /// Bytes the full-text indexes take.
    pub index_bytes: u64,
    pub sessions: u64,
    pub observations: u64,
    pub private_observations: u64,
    pub summaries: u64,
    pub tombstones: u64,
    /// Rows with a vector (search by meaning), and rows waiting for one.
    pub vectors: super::VectorCounts,
    /// The model the vectors come from.
    pub vector_model: Option<String>,
    /// Unix milliseconds of the oldest and newest observation.
    pub oldest: Option<i64>,
    pub newest: Option<i64>,
    pub projects: Vec<ProjectStats>,
    pub kinds: Vec<KindCount>,
}

/// One file of the store on disk.
#[derive(Debug, Clone, Serialize)]
pub struct StoreFile {
    pub path: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectStats {
    pub project: String,
    pub sessions: u64,
    pub observations: u64,
    pub oldest: Option<i64>,
    pub newest: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KindCount {
    pub kind: String,
    pub observations: u64,
}

impl Store {
    /// How many observations are of each kind, most first.
    pub(crate) fn kinds(&self) -> Result<Vec<KindCount>> {
        let kinds = self
            .conn
            .prepare("SELECT kind, count(*) FROM observations GROUP BY kind ORDER BY count(*) DESC, kind")?
            .query_map([], |r| Ok(KindCount { kind: r.get(0)?, observations: r.get::<_, i64>(1)? as u64 }))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(kinds)
    }

    /// Bytes of the database in use: its pages less the free ones.
    pub(crate) fn used_bytes(&self) -> Result<u64> {
        let (pages, free, size): (i64, i64, i64) = self.conn.query_row(
            "SELECT (SELECT page_count FROM pragma_page_count), (SELECT freelist_count FROM pragma_freelist_count),
                    (SELECT page_size FROM pragma_page_size)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok(((pages - free) * size) as u64)
    }

    /// Whether nothing was ever stored here: no session, and no tombstone.
    pub(crate) fn holds_nothing(&self) -> Result<bool> {
        Ok(self.conn.query_row(
            "SELECT NOT EXISTS (SELECT 1 FROM sessions) AND NOT EXISTS (SELECT 1 FROM tombstones)",
            [],
            |r| r.get(0),
        )?)
    }

    /// Counts and sizes. Reads every page of the indexes once (SQLite's
    /// `dbstat`), which takes a moment on a large store.
    pub(crate) fn stats(&self) -> Result<Stats> {
        let count = |sql: &str| -> Result<u64> { Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
        let (oldest, newest) =
            self.conn.query_row("SELECT min(ts), max(ts) FROM observations", [], |r| Ok((r.get(0)?, r.get(1)?)))?;
        let index_bytes = self.conn.query_row(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE aggregate = TRUE
             AND name IN ('observations_fts_data', 'observations_fts_idx', 'observations_fts_config',
                          'summaries_fts_data', 'summaries_fts_idx', 'summaries_fts_config')",
            [],
            |r| r.get::<_, i64>(0),
        )? as u64;
        let projects = self.projects()?;
        let kinds = self.kinds()?;
        let on_disk = |suffix: &str| {
            let path = beside(&self.path, suffix);
            let bytes = std::fs::metadata(&path).ok()?.len();
            Some(StoreFile { path: Path::new(&path).display().to_string(), bytes })
        };
        let (db, wal, shm) = (on_disk(""), on_disk("-wal"), on_disk("-shm"));
        let bytes = |file: &Option<StoreFile>| file.as_ref().map_or(0, |f| f.bytes);
        Ok(Stats {
            size_bytes: bytes(&db) + bytes(&wal) + bytes(&shm),
            db_bytes: bytes(&db),
            wal_bytes: bytes(&wal),
            shm_bytes: bytes(&shm),
            files: [db, wal, shm].into_iter().flatten().collect(),
            used_bytes: self.used_bytes()?,
            index_bytes,
            sessions: count("SELECT count(*) FROM sessions")?,
            observations: count("SELECT count(*) FROM observations")?,
            private_observations: count("SELECT count(*) FROM observations WHERE private = 1")?,
            summaries: count("SELECT count(*) FROM summaries")?,
            tombstones: count("SELECT count(*) FROM tombstones")?,
            vectors: self.vector_counts()?,
            vector_model: self.vector_model()?.map(|m| m.id),
            oldest,
            newest,
            projects,
            kinds,
        })
    }
}

/// The size of the database file, or of its `-wal` or `-shm` companion; 0 when absent.
pub fn file_size(db: &Path, suffix: &str) -> u64 {
    std::fs::metadata(beside(db, suffix)).map(|m| m.len()).unwrap_or(0)
}

/// The file SQLite keeps beside the database `db` under `suffix` ("-wal",
/// "-shm"; "" is the database itself).
pub(crate) fn beside(db: &Path, suffix: &str) -> std::ffi::OsString {
    let mut path = db.as_os_str().to_owned();
    path.push(suffix);
    path
}

impl Store {
    /// Every project with its counts, the busiest first.
    pub(crate) fn projects(&self) -> Result<Vec<ProjectStats>> {
        let projects = self
            .conn
            .prepare_cached(
                "SELECT s.project_path, count(DISTINCT s.id), count(o.id), min(o.ts), max(o.ts)
                 FROM sessions s LEFT JOIN observations o ON o.session_id = s.id
                 GROUP BY s.project_path ORDER BY count(o.id) DESC, s.project_path",
            )?
            .query_map([], |r| {
                Ok(ProjectStats {
                    project: r.get(0)?,
                    sessions: r.get::<_, i64>(1)? as u64,
                    observations: r.get::<_, i64>(2)? as u64,
                    oldest: r.get(3)?,
                    newest: r.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(projects)
    }

    /// The names of every project, in order: what a filter offers. Quick
    /// (the sessions' index alone), unlike `projects`.
    pub(crate) fn project_names(&self) -> Result<Vec<String>> {
        let names = self
            .conn
            .prepare_cached("SELECT DISTINCT project_path FROM sessions ORDER BY project_path")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(names)
    }

    /// The database file's size in bytes.
    pub(crate) fn stats_file_bytes(&self) -> u64 {
        file_size(&self.path, "")
    }

    /// How many observations the store holds, private ones included.
    pub(crate) fn observation_total(&self) -> Result<u64> {
        Ok(self.conn.query_row("SELECT count(*) FROM observations", [], |r| r.get::<_, i64>(0))? as u64)
    }
}
