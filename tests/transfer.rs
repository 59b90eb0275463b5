//! `trae-mem export` and `trae-mem import`: lossless round trips, one
//! project or stdout, duplicates, taken ids and bad lines.

use serde_json::{Value, json};

use crate::search::{ids, search};
use crate::seed::{HOUR, MINUTE, S1, S2, Seed, T0};
use crate::util::Home;

/// Every kind of record and field: meta, keys, null and set tools and end
/// times, tags, a private row, both summary levels, text needing escapes.
/// Written in export order, with true observation counts, so that an export
/// of it is the same records.
fn full_seed() -> Seed {
    Seed::new()
        .record(json!({
            "type": "session",
            "session": {"id": S1, "project": "/proj/alpha", "started_at": T0,
                        "ended_at": T0 + HOUR, "meta": {"client": "claude-code", "model": "m1"},
                        "observations": 3},
            "keys": [{"client": "claude-code", "external_id": "ext-1"}],
        }))
        .obs(1, S1, T0 + MINUTE, "fix the 数据缓存 bug")
        .set("kind", json!("user"))
        .set("tool", Value::Null)
        .set("tags", json!(["prompt", "bug"]))
        .obs(2, S1, T0 + 2 * MINUTE, "cargo test")
        .obs(3, S1, T0 + 3 * MINUTE, "export TOKEN=hunter2")
        .private()
        .summary(S1, "brief", T0 + HOUR, "Fixed the cache bug.")
        .summary(S1, "detailed", T0 + HOUR, "Long story\nwith lines")
        .session(S2, "/proj/beta", T0 + 2 * HOUR, None)
        .set("observations", json!(1))
        .obs(4, S2, T0 + 2 * HOUR + MINUTE, "note: ünïcödé \"quotes\" \\ and\ttab")
        .set("kind", json!("note"))
        .set("tool", Value::Null)
}

fn parse_lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))).collect()
}

/// Runs `export -o FILE` and returns the file's text.
fn export(home: &Home, extra: &[&str]) -> String {
    let file = home.work().join("out.jsonl");
    let mut args = vec!["export", "-o", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let run = home.run(&args, None).ok();
    assert!(run.stdout.is_empty(), "{run}");
    std::fs::read_to_string(file).unwrap()
}

fn count(home: &Home, table: &str) -> i64 {
    home.db().query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[test]
fn export_then_import_is_lossless() {
    let seed = full_seed();
    let first = seed.home("trigram");
    let exported = export(&first, &[]);
    assert_eq!(parse_lines(&exported), seed.records);

    // Into a second home, and out again: the same bytes.
    let second = Home::new();
    let file = second.write("in.jsonl", exported.as_bytes());
    let run = second.run(&["import", "--json", file.to_str().unwrap()], None).ok();
    assert_eq!(
        run.json(),
        json!({"sessions": 2, "observations": 4, "summaries": 2, "duplicates": 0, "forgotten": 0, "tombstones": 0}),
        "{run}"
    );
    assert_eq!(export(&second, &[]), exported);

    // The private row kept its flag and its content, and is still private.
    let private = &parse_lines(&exported)[3];
    assert_eq!(private["id"], 3);
    assert_eq!(private["private"], true);
    assert_eq!(private["content"], "export TOKEN=hunter2");
    assert_eq!(ids(&search(&second, "trigram", "hunter2", &[])), Vec::<i64>::new());
    let run = second.run(&["show", S1, "--json"], None).ok();
    assert_eq!(run.json()["observations"][2]["content"], "[PRIVATE]", "{run}");
    // Public rows were indexed.
    assert_eq!(ids(&search(&second, "trigram", "缓存", &[])), vec![1]);
    assert_eq!(ids(&search(&second, "trigram", "ünïcödé", &[])), vec![4]);
}

#[test]
fn export_of_one_project_and_to_stdout() {
    let seed = full_seed();
    let home = seed.home("trigram");
    let beta = export(&home, &["--project", "/proj/beta"]);
    assert_eq!(parse_lines(&beta), seed.records[6..]);
    let run = home.run(&["export"], None).ok();
    assert_eq!(parse_lines(&run.stdout), seed.records, "{run}");
    assert_eq!(run.stderr, "exported 8 records\n", "{run}");
}

#[test]
fn importing_twice_adds_nothing() {
    let seed = full_seed();
    let home = Home::new();
    assert_eq!(
        seed.import(&home),
        json!({"sessions": 2, "observations": 4, "summaries": 2, "duplicates": 0, "forgotten": 0, "tombstones": 0})
    );
    let all_duplicates =
        json!({"sessions": 0, "observations": 0, "summaries": 0, "duplicates": 8, "forgotten": 0, "tombstones": 0});
    assert_eq!(seed.import(&home), all_duplicates);
    // From stdin as well.
    let run = home.run(&["import", "--json", "-"], Some(seed.jsonl().as_bytes())).ok();
    assert_eq!(run.json(), all_duplicates, "{run}");
    assert_eq!(count(&home, "sessions"), 2);
    assert_eq!(count(&home, "observations"), 4);
    assert_eq!(count(&home, "summaries"), 2);
    assert_eq!(count(&home, "session_keys"), 1);
    assert_eq!(ids(&search(&home, "trigram", "cargo test", &[])), vec![2]);
    // Without --json, a sentence.
    let file = home.write("again.jsonl", seed.jsonl().as_bytes());
    let run = home.run(&["import", file.to_str().unwrap()], None).ok();
    assert_eq!(run.stdout, "imported 0 sessions, 0 observations, 0 summaries (8 already present)\n", "{run}");
}

#[test]
fn counts_of_one_are_said_in_the_singular() {
    let seed = Seed::new().session(S1, "/proj/alpha", T0, None).obs(1, S1, T0, "database opened");
    let home = Home::new();
    let file = home.write("one.jsonl", seed.jsonl().as_bytes());
    let run = home.run(&["import", file.to_str().unwrap()], None).ok();
    assert_eq!(run.stdout, "imported 1 session, 1 observation, 0 summaries (0 already present)\n", "{run}");
    let run = home.run(&["export"], None).ok();
    assert_eq!(run.stderr, "exported 2 records\n", "{run}");
    let lone = Home::new();
    Seed::new().session(S1, "/proj/alpha", T0, None).import(&lone);
    let run = lone.run(&["export"], None).ok();
    assert_eq!(run.stderr, "exported 1 record\n", "{run}");
}

#[test]
fn importing_another_stores_rows_with_taken_ids_once() {
    // Two machines number their observations from 1.
    let here = Seed::new().session(S1, "/proj/alpha", T0, None).obs(1, S1, T0 + MINUTE, "local one").obs(
        2,
        S1,
        T0 + 2 * MINUTE,
        "local two",
    );
    let there = Seed::new()
        .session(S2, "/proj/alpha", T0 + HOUR, None)
        .obs(1, S2, T0 + HOUR + MINUTE, "remote one")
        .obs(2, S2, T0 + HOUR + 2 * MINUTE, "remote two");
    let home = here.home("trigram");
    assert_eq!(
        there.import(&home),
        json!({"sessions": 1, "observations": 2, "summaries": 0, "duplicates": 0, "forgotten": 0, "tombstones": 0})
    );
    assert_eq!(
        there.import(&home),
        json!({"sessions": 0, "observations": 0, "summaries": 0, "duplicates": 3, "forgotten": 0, "tombstones": 0})
    );
    assert_eq!(count(&home, "observations"), 4);
    let out = search(&home, "trigram", "remote", &[]);
    assert_eq!(out["hits"].as_array().unwrap().len(), 2, "{out}");
    let out = search(&home, "trigram", "\"local one\"", &[]);
    assert_eq!(ids(&out), vec![1], "{out}");
}

#[test]
fn a_bad_line_stops_the_import_and_names_the_line() {
    let home = Home::new();
    let text =
        format!("{}\n{{\"type\":\"observation\",\"id\":1}}\n", Seed::new().session(S1, "/p", T0, None).records[0]);
    let file = home.write("bad.jsonl", text.as_bytes());
    let run = home.run(&["import", file.to_str().unwrap()], None).code(1);
    assert!(run.stderr.starts_with("trae-mem: line 2 is not a trae-mem export record"), "{run}");
    // All or nothing: the first line's session is not kept either, and the
    // database the import created is gone with it.
    assert!(!home.db_path().exists(), "{run}");
    let run = home.run(&["sessions", "--json"], None).code(1);
    assert!(run.stderr.contains("there is no memory in"), "{run}");
    // Into an existing store, likewise nothing.
    home.run(&["import", "-"], Some(b"")).ok();
    home.run(&["import", file.to_str().unwrap()], None).code(1);
    let run = home.run(&["sessions", "--json"], None).ok();
    assert_eq!(run.json(), json!([]), "{run}");
}

#[test]
fn a_failed_import_into_a_new_home_leaves_no_home_behind() {
    let home = Home::new();
    // The default home, ~/.trae-mem, never used.
    let default_home = home.home().parent().unwrap().join(".trae-mem");
    let default_env = [("TRAE_MEM_HOME", "")];
    let never_used = home.run_env(&["search", "foo"], &default_env, None).code(1);
    assert!(never_used.stderr.contains("there is no memory in"), "{never_used}");

    let run = home.run_env(&["import", "-"], &default_env, Some(b"garbage\n")).code(1);
    assert!(run.stderr.starts_with("trae-mem: line 1 is not a trae-mem export record"), "{run}");
    assert!(!default_home.exists(), "{} was left behind\n{run}", default_home.display());
    let after = home.run_env(&["search", "foo"], &default_env, None).code(1);
    assert_eq!(after.stderr, never_used.stderr, "{after}");
    let stats = home.run_env(&["stats"], &default_env, None).code(1);
    assert!(stats.stderr.contains("there is no memory in"), "{stats}");
    let doctor = home.run_env(&["doctor", "--json"], &default_env, None);
    let said = doctor.json()["checks"][1].to_string();
    assert!(said.contains("no memory in") && said.contains("does not exist"), "{doctor}");

    // A home some levels down, and an input that cannot be read: no
    // database, and none of the directories.
    let nested = home.home().join("new/nested");
    let nested_env = [("TRAE_MEM_HOME", nested.to_str().unwrap())];
    let run = home.run_env(&["import", "missing.jsonl"], &nested_env, None).code(1);
    assert!(run.stderr.contains("cannot open missing.jsonl"), "{run}");
    assert!(!home.home().join("new").exists(), "{run}");
    let run = home.run_env(&["import", "-"], &nested_env, Some(b"garbage\n")).code(1);
    assert!(!home.home().join("new").exists(), "{run}");

    // A home that was there stays, with what it holds.
    std::fs::create_dir_all(&nested).unwrap();
    std::fs::write(nested.join("notes.txt"), "mine").unwrap();
    home.run_env(&["import", "-"], &nested_env, Some(b"garbage\n")).code(1);
    assert_eq!(std::fs::read_to_string(nested.join("notes.txt")).unwrap(), "mine");
    assert!(!nested.join("trae-mem.db").exists());
}
