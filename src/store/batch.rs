//! Long writers (an import, a pull, a forget, the index's tidying) take
//! the write lock in batches, and give it up as soon as a hook waits.
//!
//! A hook that finds the lock held says so by touching a file beside the
//! database (`<db>-wait`) each time it polls. The writer looks for that
//! file every half millisecond; when it is there, the writer removes it,
//! commits and pauses for the hook. So a batch can run long while nobody
//! waits, which an import gains from (fewer commits, each flushing the
//! full-text index's pending terms as a new segment to merge later), and a
//! hook that arrives waits for one row and one commit, not for a batch.
//!
//! Before this, batches were 3 ms with a 2 ms pause after each, whether
//! anyone waited or not: an import's rows had the lock about a third of
//! its time.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest a batch runs while no hook waits: long enough that the
/// commits cost little beside the rows, short enough that a hook that
/// missed the signal (one from an older build) still gets in soon.
const LONGEST: Duration = Duration::from_millis(50);

/// How often a batch looks for a waiting hook: a failed `stat`, about a
/// microsecond.
const LOOK_EVERY: Duration = Duration::from_micros(500);

/// The pause after a batch a hook waited for: longer than the hook's poll
/// (`store::LOCK_POLL`), so that it takes the lock before the next batch.
const PAUSE: Duration = Duration::from_millis(2);

/// The signal file of the database this process opened last. One process
/// works on one store, and SQLite's busy handler carries no path.
static SIGNAL: OnceLock<PathBuf> = OnceLock::new();

/// The files beside the database that this module keeps: where waiting
/// processes say so, and what long writers hold while they work.
pub(super) const WAIT_SUFFIX: &str = "-wait";
pub(super) const BULK_SUFFIX: &str = "-bulk";
pub(super) const HOLD_SUFFIX: &str = "-hold";

/// Where a writer in a step that cannot give the lock up (see `holding`)
/// says so, for the database this process opened last.
static HOLD: OnceLock<PathBuf> = OnceLock::new();

/// Whether this process gives way to such a step (a hook's, which spools).
static GIVES_WAY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Where the processes waiting for `db`'s write lock say so.
fn signal_path(db: &Path) -> PathBuf {
    PathBuf::from(super::stats::beside(db, WAIT_SUFFIX))
}

/// What long writers at work on `db` hold a shared lock on.
fn bulk_path(db: &Path) -> PathBuf {
    PathBuf::from(super::stats::beside(db, BULK_SUFFIX))
}

/// What a writer in a step that cannot give the lock up holds a lock on.
fn hold_path(db: &Path) -> PathBuf {
    PathBuf::from(super::stats::beside(db, HOLD_SUFFIX))
}

/// Notes `db` as the database this process's waits are for; with
/// `gives_way`, its waits end at once while a writer holds the lock for a
/// step that cannot give it up (`holding`).
pub(super) fn note_database(db: &Path, gives_way: bool) {
    let _ = SIGNAL.set(signal_path(db));
    let _ = HOLD.set(hold_path(db));
    GIVES_WAY.store(gives_way, std::sync::atomic::Ordering::Relaxed);
}

/// Says that this process waits for the write lock: called at each poll of
/// a wait, since a writer removes the signal when it sees it and another
/// process may have taken the lock first.
pub(super) fn say_waiting() {
    if let Some(path) = SIGNAL.get() {
        // Nothing to do if it fails: the writer's batch ends on time anyway.
        let _ = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path);
    }
}

/// A long writer at work, from its first batch to its last: it holds a
/// shared lock on `<db>-bulk`, so that hooks leave the write-ahead log to
/// it (see `someone_at_work`).
pub(super) struct AtWork {
    _lock: std::fs::File,
}

/// Says that a long writer is at work on `db` until the guard is dropped.
pub(super) fn at_work(db: &Path) -> anyhow::Result<AtWork> {
    Ok(AtWork { _lock: lock_shared(&bulk_path(db))? })
}

/// Whether a long writer is at work on `db`. A hook then leaves the
/// write-ahead log as it is: checkpointing it copies the frames the
/// writer's last batch added, megabytes, in the hook's time (this was the
/// tail of hooks beside an import, 65–90 ms), and the writer checkpoints
/// as it goes.
pub(super) fn someone_at_work(db: &Path) -> bool {
    locked(&bulk_path(db))
}

/// A writer in one step that holds the write lock from its start to its
/// end, however long (FTS5's `optimize` of the whole index, a `VACUUM`):
/// it holds a shared lock on `<db>-hold`, and a hook that finds the
/// database locked meanwhile gives up at once and spools its event, which
/// a later hook stores. Waiting would not help it: the step outlasts a
/// hook's `lock_wait_ms` (an `optimize` after forgetting 10,000 of 20,000
/// rows held the lock 0.8 s), so it waited 250 ms and spooled anyway.
pub(super) fn holding(db: &Path) -> anyhow::Result<AtWork> {
    Ok(AtWork { _lock: lock_shared(&hold_path(db))? })
}

/// Whether this process gives way (see `note_database`) and a writer now
/// holds the lock for a step that cannot give it up.
pub(super) fn give_way() -> bool {
    GIVES_WAY.load(std::sync::atomic::Ordering::Relaxed) && HOLD.get().is_some_and(|hold| locked(hold))
}

/// A shared lock on the file at `path`, made if missing, held until the
/// file is dropped.
fn lock_shared(path: &Path) -> anyhow::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path)?;
    file.lock_shared()?;
    Ok(file)
}

/// Whether another process holds a lock on the file at `path`.
fn locked(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// One transaction of a long writer, from its first row to its commit.
pub(super) struct Batch {
    started: Instant,
    looked: Instant,
    signal: PathBuf,
    waited: bool,
}

impl Batch {
    /// A batch beginning now, on the store at `db`.
    pub(super) fn begin(db: &Path) -> Batch {
        let now = Instant::now();
        Batch { started: now, looked: now, signal: signal_path(db), waited: false }
    }

    /// Whether the batch should commit now: a hook waits, or it has run
    /// its time.
    pub(super) fn is_over(&mut self) -> bool {
        if self.waited {
            return true;
        }
        let now = Instant::now();
        if now - self.looked >= LOOK_EVERY {
            self.looked = now;
            if self.signal.exists() {
                // Another waiter, or this one again, touches it anew.
                let _ = std::fs::remove_file(&self.signal);
                self.waited = true;
            }
        }
        self.waited || now - self.started >= LONGEST
    }

    /// After the commit: gives a waiting hook its turn.
    pub(super) fn end(self) {
        if self.waited {
            std::thread::sleep(PAUSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_runs_on_until_a_waiter_signals_then_ends_and_takes_the_signal() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.db");
        let mut batch = Batch::begin(&db);
        std::thread::sleep(LOOK_EVERY * 2);
        assert!(!batch.is_over(), "nobody waits and its time is not up");
        std::fs::write(signal_path(&db), b"").unwrap();
        std::thread::sleep(LOOK_EVERY * 2);
        assert!(batch.is_over(), "a waiter's signal ends the batch");
        assert!(!signal_path(&db).exists(), "the writer takes the signal, so that the next batch runs on");
        assert!(batch.is_over(), "and the batch stays over until its commit");
        batch.end();
        let mut next = Batch::begin(&db);
        std::thread::sleep(LOOK_EVERY * 2);
        assert!(!next.is_over());
    }

    #[test]
    fn a_long_writer_is_seen_at_work_until_it_is_done() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.db");
        assert!(!someone_at_work(&db), "no writer has ever worked here");
        let import = at_work(&db).unwrap();
        let merge = at_work(&db).unwrap();
        assert!(someone_at_work(&db));
        drop(import);
        assert!(someone_at_work(&db), "one writer is still at work");
        drop(merge);
        assert!(!someone_at_work(&db));
    }

    #[test]
    fn a_step_that_holds_the_lock_is_seen_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("store.db");
        assert!(!locked(&hold_path(&db)), "no step has ever held this store");
        let optimize = holding(&db).unwrap();
        assert!(locked(&hold_path(&db)));
        assert!(!someone_at_work(&db), "holding is not working in batches");
        drop(optimize);
        assert!(!locked(&hold_path(&db)));
    }
}
