//! The one way in, as clients drive it: spooled events keep the project and
//! settings they arrived with, many writers beside a lock that comes and
//! goes lose and double nothing, and a second delivery stores nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Home, Run, run_command};

fn prompt(sid: &str, cwd: &Path, text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": sid, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": text,
    }))
    .unwrap()
}

/// A hook run from `project`, with Claude Code's `CLAUDE_PROJECT_DIR` naming it.
fn hook_in(home: &Home, project: &Path, payload: &[u8]) -> Run {
    let mut command = home.command(&["hook"]);
    command.current_dir(project).env("CLAUDE_PROJECT_DIR", project);
    run_command(command, &["hook"], Some(payload))
}

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A project directory under the temp dir, with its own trae-mem.toml.
fn project(home: &Home, name: &str, config: &str) -> PathBuf {
    let config = home.write(&format!("{name}/trae-mem.toml"), config.as_bytes());
    config.parent().unwrap().canonicalize().unwrap()
}

/// Holds the database's write lock until dropped.
struct Lock(rusqlite::Connection);

impl Lock {
    fn take(home: &Home) -> Self {
        let mut conn = home.db();
        // Poll as often as hooks do, so that the lock is taken between their writes.
        conn.busy_handler(Some(|_| {
            std::thread::sleep(Duration::from_millis(1));
            true
        }))
        .unwrap();
        conn.execute_batch("BEGIN IMMEDIATE; INSERT INTO store_meta VALUES ('lock', 'held');").unwrap();
        Self(conn)
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        self.0.execute_batch("ROLLBACK").unwrap();
    }
}

#[test]
fn a_spooled_event_is_stored_under_the_project_and_settings_it_came_with() {
    let home = Home::new();
    // Project A keeps 12 characters of a prompt; project B keeps the default.
    let a = project(&home, "project-a", "[capture]\nprompt_chars = 12\n");
    let b = project(&home, "project-b", "");
    hook_in(&home, &a, &prompt("sa", &a, "first in A")).ok();

    let lock = Lock::take(&home);
    let run = hook_in(&home, &a, &prompt("sa", &a, "A's prompt while the store was locked")).ok();
    assert!(run.stderr.contains("stored later"), "{run}");
    drop(lock);
    // The next hook runs in project B, with B's environment and settings, and replays A's event.
    hook_in(&home, &b, &prompt("sb", &b, "B's own prompt")).ok();

    let hits = home.run(&["search", "locked", "--json"], None).ok().json();
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 0, "A's settings clipped the prompt before 'locked': {hits:?}");
    let stored: Vec<(String, String)> = {
        let db = home.db();
        let mut stmt = db
            .prepare(
                "SELECT s.project_path, o.content FROM observations o JOIN sessions s ON s.id = o.session_id
                 ORDER BY o.ts",
            )
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    let (a, b) = (a.to_string_lossy().into_owned(), b.to_string_lossy().into_owned());
    assert_eq!(
        stored,
        [(a.clone(), "first in A".to_owned()), (a, "A's prompt …".to_owned()), (b, "B's own prompt".to_owned())]
    );
}

#[test]
fn a_second_delivery_of_a_spooled_event_stores_nothing() {
    let home = Home::new();
    let work = home.work();
    hook_in(&home, &work, &prompt("s", &work, "before")).ok();
    let lock = Lock::take(&home);
    hook_in(&home, &work, &prompt("s", &work, "delivered twice")).ok();
    drop(lock);
    // Keep a copy of the spooled file, as if the event had been spooled
    // after its commit (the watchdog) or a replay died before removing it.
    let pending = home.home().join("spool/pending");
    let files: Vec<PathBuf> = std::fs::read_dir(&pending).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let copy = std::fs::read(&files[0]).unwrap();

    let replay = home.run(&["spool", "replay", "--json"], None).ok().json();
    assert_eq!(replay["stored"], 1);
    std::fs::write(&files[0], &copy).unwrap();
    let replay = home.run(&["spool", "replay", "--json"], None).ok().json();
    assert_eq!(replay["remaining"], 0, "{replay}");
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content = 'delivered twice'"), 1);
    assert_eq!(count(&home, "SELECT count(*) FROM observations"), 2);
    assert!(std::fs::read_dir(&pending).unwrap().next().is_none(), "nothing left waiting");
}

/// Eight writers, while another connection takes the write lock now and
/// then for 0.3–0.6 s, longer than a hook waits (0.25 s): every hook that said it
/// stored or spooled its event must have it stored exactly once.
#[test]
fn many_writers_beside_a_lock_that_comes_and_goes_store_every_event_once() {
    const WRITERS: usize = 8;
    const PROMPTS: usize = 30;
    for round in 0..2 {
        let home = Arc::new(Home::new());
        let work = home.work();
        hook_in(&home, &work, &prompt("s", &work, "opening")).ok();
        let stop = Arc::new(AtomicBool::new(false));
        let locker = {
            let (home, stop) = (Arc::clone(&home), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut held = 0;
                while !stop.load(Ordering::SeqCst) {
                    let lock = Lock::take(&home);
                    std::thread::sleep(Duration::from_millis(fastrand::u64(300..=600)));
                    drop(lock);
                    held += 1;
                    std::thread::sleep(Duration::from_millis(fastrand::u64(50..=300)));
                }
                held
            })
        };
        // The first hold starts before the writers do.
        std::thread::sleep(Duration::from_millis(50));
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let home = Arc::clone(&home);
                std::thread::spawn(move || {
                    let work = home.work();
                    let mut spooled = 0;
                    for i in 0..PROMPTS {
                        let run = hook_in(&home, &work, &prompt("s", &work, &format!("round {round} writer {w} #{i}")));
                        assert_eq!(run.code, 0, "{run}");
                        spooled += usize::from(run.stderr.contains("stored later"));
                    }
                    spooled
                })
            })
            .collect();
        let spooled: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
        stop.store(true, Ordering::SeqCst);
        let held = locker.join().unwrap();
        home.run(&["spool", "replay"], None).ok();
        assert!(held > 0 && spooled > 0, "the lock was taken ({held}) and events spooled ({spooled})");
        let total = (WRITERS * PROMPTS) as i64 + 1;
        assert_eq!(count(&home, "SELECT count(DISTINCT content) FROM observations"), total, "round {round}");
        assert_eq!(count(&home, "SELECT count(*) FROM observations"), total, "round {round}: nothing doubled");
        let listing = home.run(&["spool", "list", "--json"], None).ok().json();
        assert_eq!(listing["pending"], Value::Array(Vec::new()));
    }
}
