//! The database file: commands that only read create none, the one
//! created is owner-only and in WAL mode, and `stats` tells its size on
//! disk with its write-ahead log's.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::util::{Home, claude_code_hook as hook};

#[test]
fn query_commands_on_a_home_without_a_database_say_so_and_create_nothing() {
    let home = Home::new();
    for args in
        [&["search", "anything"][..], &["timeline", "1"], &["sessions", "--json"], &["show", "abc"], &["export"]]
    {
        let run = home.run(args, None).code(1);
        let expected = format!("trae-mem: there is no memory in {}: ", home.home().display());
        assert!(run.stderr.starts_with(&expected), "{run}");
        assert!(run.stderr.contains("trae-mem install <client>"), "{run}");
        assert!(!home.db_path().exists(), "{args:?} created a database");
    }
    // A database that exists but holds nothing has no sessions.
    home.run(&["import", "-"], Some(b"")).ok();
    let run = home.run(&["sessions", "--json"], None).ok();
    assert_eq!(run.json(), json!([]));
}

#[test]
fn an_import_that_fails_before_storing_anything_leaves_no_database() {
    let home = Home::new();
    let run = home.run(&["import", "-"], Some(b"garbage\n")).code(1);
    assert!(run.stderr.contains("line 1"), "the error names the line: {run}");
    assert!(!home.db_path().exists(), "a failed import left a database");
    let run = home.run(&["search", "anything"], None).code(1);
    assert!(run.stderr.contains("there is no memory in"), "{run}");
    // Into a store that exists, a failed import removes nothing.
    home.run(&["import", "-"], Some(b"")).ok();
    home.run(&["import", "-"], Some(b"garbage\n")).code(1);
    assert!(home.db_path().exists());
}

#[test]
fn the_database_is_owner_only_and_in_wal_mode() {
    let home = Home::new();
    assert!(!home.db_path().exists());
    home.run(&["import", "-"], Some(b"")).ok();
    let mode = std::fs::metadata(home.db_path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    let journal: String = home.db().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(journal, "wal");

    // A home that does not exist yet is created owner-only.
    let fresh = home.work().join("new-home");
    let run = home.run(&["--home", fresh.to_str().unwrap(), "import", "--json", "-"], Some(b"")).ok();
    assert_eq!(run.json()["sessions"], 0, "{run}");
    let dir_mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700, "{dir_mode:o}");
    let db_mode = std::fs::metadata(fresh.join("trae-mem.db")).unwrap().permissions().mode();
    assert_eq!(db_mode & 0o777, 0o600, "{db_mode:o}");
}

#[test]
fn stats_gives_the_memorys_size_as_its_files_add_up_write_ahead_log_included() {
    let home = Home::new();
    for i in 0..6 {
        let sid = format!("s{i}");
        hook(&home, &sid, "UserPromptSubmit", json!({"prompt": format!("make step {i} of the importer resumable")}))
            .ok();
        hook(
            &home,
            &sid,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("t{i}"), "tool_input": {"command": "cargo test import"},
                   "tool_response": {"stdout": "test result: ok. 12 passed".repeat(40)}}),
        )
        .ok();
        hook(&home, &sid, "Stop", json!({"last_assistant_message": format!("Step {i} now resumes where it stopped.")}))
            .ok();
    }
    home.settle();
    let text = home.run(&["stats"], None).ok();
    let stats = home.run(&["stats", "--json"], None).ok().json();
    // Read after `stats`, which only reads: no checkpoint has copied the log in.
    let on_disk: Vec<(String, u64)> = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let path = format!("{}{suffix}", home.db_path().display());
            std::fs::metadata(&path).ok().map(|m| (path, m.len()))
        })
        .collect();
    let size = |suffix: &str| on_disk.iter().find(|(p, _)| p.ends_with(&format!(".db{suffix}"))).map_or(0, |f| f.1);
    let total: u64 = on_disk.iter().map(|(_, bytes)| bytes).sum();
    assert!(size("-wal") > 0 && total > size(""), "the log holds what was stored: {on_disk:?}");

    assert_eq!(stats["size_bytes"], total, "the memory's size is its files': {on_disk:?}\n{stats:#}");
    let listed: Vec<(String, u64)> = stats["files"]
        .as_array()
        .unwrap_or_else(|| panic!("each file is listed: {stats:#}"))
        .iter()
        .map(|f| (f["path"].as_str().unwrap_or_default().to_owned(), f["bytes"].as_u64().unwrap_or_default()))
        .collect();
    assert_eq!(listed, on_disk, "{stats:#}");

    let headline = format!("  {} on disk (", trae_mem::text::bytes(total));
    assert!(text.stdout.contains(&headline), "the headline size is {headline:?}: {on_disk:?}\n{text}");
    let bytes = |suffix| trae_mem::text::bytes(size(suffix));
    let each =
        format!("  database {}, write-ahead log {}, shared memory {}\n", bytes(""), bytes("-wal"), bytes("-shm"));
    assert!(text.stdout.contains(&each), "each file's size, {each:?}:\n{text}");
}
