//! The SQLite store: one file holds sessions, observations, summaries, the
//! full-text index and the vectors.
//!
//! Invariants:
//! - The schema is migrated forward on open, driven by `PRAGMA user_version`;
//!   an up-to-date database costs one pragma read, never `CREATE ... IF NOT EXISTS`.
//! - Private observations are stored but never indexed, and no query here
//!   returns their content.
//! - Every user value is bound, never formatted into SQL.

mod batch;
mod candidates;
mod facts;
mod forget;
mod index;
mod model;
mod rewrite;
mod schema;
mod stats;
mod summary_queue;
mod sync;
mod timeline;
mod tokenizer;
mod tombstone;
mod transfer;
mod vectors;
pub mod write;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use rusqlite::{Connection, OpenFlags};

use crate::owner_only;

pub(crate) use candidates::Scope;
pub use candidates::{Candidate, Filters, HitRow, Table};
pub use facts::Facts;
pub use forget::{Removed, SECURE_DELETE_MAX, Selection};
pub use index::IndexMode;
pub use model::{
    Kind, LEARNING, Observation, SESSION_END_NOTE, STOP_NOTE, Session, SessionDetail, Summary, SummaryLevel, TURN_ENDED,
};
pub use rewrite::StoredText;
pub use stats::{KindCount, ProjectStats, Stats};
pub use summary_queue::{QueueCounts, Queued};
pub use sync::{Outgoing, RecordId, SyncState};
pub use timeline::{ListedSession, Located, Recalled, TOLD_CANDIDATES, Timeline, Told};
pub use tombstone::{Tombstone, fingerprint};
pub use transfer::{ExportRecord, ExternalKey, ImportReport, Records};
pub use vectors::{Unembedded, VectorCounts, VectorModel, WAITING_COUNTED_UP_TO};
pub use write::{NewObservation, SessionKey, Writer};

/// The placeholder that stands wherever private text would have been shown.
pub const PRIVATE_PLACEHOLDER: &str = "[PRIVATE]";

/// The write-ahead log size past which `Store::tidy_wal` checkpoints it.
const WAL_LIMIT: u64 = 1 << 20;

/// The pause between the steps of a long maintenance job that holds the
/// write lock a step at a time (reclaiming free pages): longer than a
/// waiting hook's poll, so that it gets the lock before the next step.
/// Writers of many rows end their batches when a hook waits instead (see
/// `batch`).
const BATCH_PAUSE: Duration = Duration::from_millis(2);

/// The database file's name inside the home directory.
pub const DB_FILE: &str = "trae-mem.db";

/// Reads the whole file through a memory map (see
/// `OpenOptions::memory_map`): up to 1 TB, which `.cargo/config.toml` builds
/// SQLite to allow (its own cap is 2 GB).
const MEMORY_MAP: &str = "PRAGMA mmap_size = 1099511627776;";

/// How to open a store.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// How long a write waits for another process's lock before it fails.
    pub busy_timeout: Duration,
    /// Which full-text index to use; `None` keeps whatever the database has
    /// (or picks the best available for a new one).
    pub index: Option<IndexMode>,
    /// Whether opening may rebuild the index (for another `index`, or one
    /// made by an older trae-mem), which reads every row. Hooks may not: they
    /// must finish within their deadline, so they leave it to a command.
    pub may_rebuild_index: bool,
    /// Whether to read the file through a memory map. Search reads many
    /// rows and gains (copying pages through `read()` was a quarter of a
    /// path query); a hook reads a few pages, and mapping a large file and
    /// unmapping it at exit cost it more than that.
    pub memory_map: bool,
    /// Whether a wait for the lock ends at once while another process
    /// holds it for a step that will outlast any wait (`batch::holding`):
    /// a hook's, which spools its event instead.
    pub gives_way: bool,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            index: None,
            may_rebuild_index: true,
            memory_map: true,
            gives_way: false,
        }
    }
}

/// An open store. Cheap to open: one process per hook opens one.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    index: IndexMode,
    busy_timeout: Duration,
    memory_map: bool,
    /// The last `sessions_to_tell` answer, with what it was asked and the
    /// connection's count of changes then.
    told_memo: std::sync::Mutex<Option<(ToldAsked, Vec<Told>)>>,
}

/// Sets up a connection as every connection to a store is: it waits for
/// another process's lock as `wait_for_locks` says, plans each statement
/// once, maps the file if asked to, and knows the index's tokenizer.
///
/// Each statement's plan is made independent of the values bound to it.
/// SQLite otherwise plans a `LIMIT ?` with its bound value and prepares the
/// statement again at its first step after each new binding: every
/// statement here that takes a limit was prepared at least twice, and
/// search's cached lookup of each form of each term once more for every
/// form. On a store of 2,000 rows, a question's lookups took 2.5 ms this
/// way against about 4.5. No statement here relies on a plan made for its
/// values (a `LIKE ?` on an indexed prefix would).
fn set_up_connection(conn: &Connection, busy_timeout: Duration, memory_map: bool) -> Result<tokenizer::Support> {
    wait_for_locks(conn, busy_timeout);
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    if memory_map {
        conn.execute_batch(MEMORY_MAP)?;
    }
    tokenizer::register(conn)
}

/// What `sessions_to_tell` was asked: project, excluded session, limit, and
/// the connection's count of changes.
type ToldAsked = (String, Option<String>, usize, u64);

impl Store {
    /// Opens (creating if needed, with owner-only permissions) the database at `path`.
    pub fn open(path: &Path, options: &OpenOptions) -> Result<Self> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        let created = !path.exists();
        if created {
            create_private_file(path)?;
        }
        batch::note_database(path, options.gives_way);
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .with_context(|| format!("cannot open the database {}", path.display()))?;
        let support = set_up_connection(&conn, options.busy_timeout, options.memory_map)?;
        // Every hook is a short process whose connection is the last one to
        // close. By default SQLite would then checkpoint and delete the WAL
        // on every call (fsyncs, and the next process recreates the files);
        // `tidy_wal` checkpoints now and then instead.
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)?;
        // WAL is persistent in the file; the rest is per connection.
        // `secure_delete = FAST` zeroes what a write frees inside a page it
        // rewrites anyway (an old summary's text), at no extra I/O, so that
        // forgetting later has fewer stray copies to chase.
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA secure_delete = FAST;")?;
        let mut conn = conn;
        let index = schema::migrate(&mut conn, options.index, options.may_rebuild_index, support)
            .with_context(|| format!("cannot prepare the database {}", path.display()))?;
        Ok(Self {
            conn,
            path: path.to_owned(),
            index,
            busy_timeout: options.busy_timeout,
            memory_map: options.memory_map,
            told_memo: Default::default(),
        })
    }

    /// Another connection to this store's file, read-only, for a thread
    /// that reads beside this one (search's meaning half). It skips what
    /// `open` prepares: this store has done it. It maps the file only where
    /// this store does: a short process that maps a large file spends more
    /// faulting in and unmapping its pages than it reads.
    pub(crate) fn read_only(&self) -> Result<Store> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI,
        )
        .with_context(|| format!("cannot open the database {}", self.path.display()))?;
        set_up_connection(&conn, self.busy_timeout, self.memory_map)?;
        Ok(Self {
            conn,
            path: self.path.clone(),
            index: self.index,
            busy_timeout: self.busy_timeout,
            memory_map: self.memory_map,
            told_memo: Default::default(),
        })
    }

    /// Closes this store and deletes its file, with the write-ahead log and
    /// shared memory beside it: for a store just created that holds nothing.
    pub fn discard(self) -> Result<()> {
        let path = self.path.clone();
        drop(self);
        // With the signals of `batch`: a store discarded after a failed
        // import leaves its directory empty, to be removed.
        for suffix in ["", "-wal", "-shm", batch::BULK_SUFFIX, batch::WAIT_SUFFIX, batch::HOLD_SUFFIX] {
            if let Err(err) = std::fs::remove_file(stats::beside(&path, suffix))
                && err.kind() != std::io::ErrorKind::NotFound
            {
                return Err(err.into());
            }
        }
        Ok(())
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The full-text index this store searches with.
    pub fn index_mode(&self) -> IndexMode {
        self.index
    }

    /// The raw connection, for callers that compose several writes in one transaction.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Keeps the write-ahead log short. Each hook is a new process, and the
    /// first connection of a process rebuilds its index of the log by
    /// reading all of it: about 1.4 ms per MB here. So once the log passes
    /// `WAL_LIMIT`, copy it into the database and truncate it. Cheap to call:
    /// one `stat` when there is nothing to do.
    pub(crate) fn tidy_wal(&self) -> Result<()> {
        if stats::file_size(&self.path, "-wal") > WAL_LIMIT && !batch::someone_at_work(&self.path) {
            // A TRUNCATE checkpoint waits for every writer and reader to
            // finish: beside a running import, that is every time. So it
            // does not wait here; busy is fine, and a later call will do it.
            wait_for_locks(&self.conn, Duration::ZERO);
            let checkpointed = self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
            wait_for_locks(&self.conn, self.busy_timeout);
            checkpointed?;
        }
        Ok(())
    }

    /// A fact about the store itself (`store_meta`), such as when gc last ran.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        schema::get_meta(&self.conn, key)
    }

    /// Records a fact about the store itself.
    pub(crate) fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        schema::set_meta(&self.conn, key, value)
    }

    /// For long writers (import, forget, gc), between their transactions:
    /// copies a write-ahead log past `WAL_LIMIT` into the database without
    /// holding up anyone (a passive checkpoint). Otherwise the next hook
    /// would find a long log to copy in its own `tidy_wal`, and wait for it.
    pub(crate) fn checkpoint_between_batches(&self) -> Result<()> {
        if stats::file_size(&self.path, "-wal") > WAL_LIMIT {
            self.conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))?;
        }
        Ok(())
    }

    /// Runs SQLite's and FTS5's integrity checks; returns the problems found.
    pub(crate) fn integrity_problems(&self) -> Result<Vec<String>> {
        let mut problems: Vec<String> = self
            .conn
            .prepare("PRAGMA integrity_check")?
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<rusqlite::Result<_>>()?;
        problems.retain(|p| p != "ok");
        if let Err(err) = index::check(&self.conn, self.index) {
            problems.push(format!("full-text index: {err}"));
        }
        Ok(problems)
    }
}

/// How often a connection that finds the database locked tries again.
const LOCK_POLL: Duration = Duration::from_millis(1);

/// Makes `conn` wait up to `wait` for another process's lock, trying again
/// every millisecond. SQLite's own busy timeout backs off to 100 ms between
/// tries, and a writer that commits in short batches (an import) takes the
/// lock back within microseconds, so a hook could sleep through every gap
/// and wait its whole timeout. A short poll takes the next gap.
///
/// The wait is bounded by the clock, not by a count of polls: a poll takes
/// longer than its sleep (timer slack, the retry itself), and 250 polls of
/// a nominal millisecond took 290 ms.
fn wait_for_locks(conn: &Connection, wait: Duration) {
    thread_local! {
        /// When the current wait began. SQLite calls the handler on the
        /// thread running the statement, with `polls` at 0 for a new wait.
        static WAIT_BEGAN: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
    }
    /// SQLite's busy handler: whether to try again (1) or give up (0).
    ///
    /// # Safety
    /// None beyond being called as a busy handler: `wait_micros` carries the
    /// wait in microseconds, a number that is never dereferenced.
    unsafe extern "C" fn poll(wait_micros: *mut std::ffi::c_void, polls: std::ffi::c_int) -> std::ffi::c_int {
        let now = Instant::now();
        if polls == 0 {
            WAIT_BEGAN.set(Some(now));
        }
        let began = WAIT_BEGAN.get().unwrap_or(now);
        let wait = Duration::from_micros(wait_micros as u64);
        let Some(left) = wait.checked_sub(now - began).filter(|left| !left.is_zero()) else {
            return 0;
        };
        if batch::give_way() {
            return 0;
        }
        batch::say_waiting();
        std::thread::sleep(LOCK_POLL.min(left));
        1
    }
    // The wait rides in the callback's pointer: no allocation to keep alive
    // beside the connection.
    let wait_micros = wait.as_micros().min(usize::MAX as u128) as usize;
    // SAFETY: the handle is `conn`'s open connection, and `poll` is sound for
    // any argument; SQLite drops the handler with the connection.
    unsafe {
        rusqlite::ffi::sqlite3_busy_handler(conn.handle(), Some(poll), wait_micros as *mut std::ffi::c_void);
    }
}

fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    owner_only::create_dir_all(dir).with_context(|| format!("cannot create the directory {}", dir.display()))
}

/// Creates the database file readable by its owner only, before SQLite
/// creates it with the umask's permissions. SQLite gives its -wal and -shm
/// files the same permissions as the database.
fn create_private_file(path: &Path) -> Result<()> {
    owner_only::open_options()
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(|| format!("cannot create the database {}", path.display()))?;
    Ok(())
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A statement with a bound limit, cached and bound again, is not
    /// prepared again, on a store's connection and on the one a search
    /// reads beside it.
    #[test]
    fn a_statement_is_planned_once_whatever_is_bound_to_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join(DB_FILE), &OpenOptions::default()).unwrap();
        let beside = store.read_only().unwrap();
        for store in [&store, &beside] {
            let mut stmt = store.conn.prepare_cached("SELECT id FROM observations ORDER BY id DESC LIMIT ?1").unwrap();
            for limit in [1, 5, 250, 2000] {
                stmt.query_map([limit], |r| r.get::<_, i64>(0)).unwrap().for_each(drop);
            }
            assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
        }
    }
}
