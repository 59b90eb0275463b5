//! The database file: commands that only read create none, and the one
//! created is owner-only and in WAL mode.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::util::Home;

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
