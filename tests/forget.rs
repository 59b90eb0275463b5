//! Forget, retention, gc and stats, driven as a user drives them: hooks
//! record real Claude Code payloads, then the commands delete, and every
//! file under the home is scanned byte for byte for what should be gone.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Home, claude_code_hook as hook, claude_code_payload as payload, copies, trigrams_left_in_index};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// A session in project `cwd` whose first prompt holds `marker`, another
/// prompt and a tool call, ended (so its summaries quote the prompt).
fn session(home: &Home, sid: &str, cwd: &str, marker: &str) {
    let at = |extra: Value| {
        let mut extra = extra;
        extra["cwd"] = json!(cwd);
        extra
    };
    hook(home, sid, "SessionStart", at(json!({"source": "startup"}))).ok();
    hook(
        home,
        sid,
        "UserPromptSubmit",
        at(json!({"prompt": format!("the customer record {marker} breaks the invoice export")})),
    )
    .ok();
    hook(home, sid, "UserPromptSubmit", at(json!({"prompt": format!("then paginate the {sid} report listing")}))).ok();
    hook(
        home,
        sid,
        "PostToolUse",
        at(json!({"tool_name": "Bash", "tool_input": {"command": "cargo test invoice"}, "tool_response": {"stdout": "test result: ok"}})),
    )
    .ok();
    hook(home, sid, "SessionEnd", at(json!({"reason": "exit"}))).ok();
}

/// The local session id of client session `sid`.
fn local_session(home: &Home, sid: &str) -> String {
    home.db().query_row("SELECT session_id FROM session_keys WHERE external_id = ?1", [sid], |r| r.get(0)).unwrap()
}

/// The ids of observations whose text holds `text`.
fn observation_ids(home: &Home, text: &str) -> Vec<i64> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT id FROM observations WHERE instr(content, ?1) > 0 ORDER BY id").unwrap();
    stmt.query_map([text], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
}

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Asserts that SQLite's and the full-text index's checks pass.
#[track_caller]
fn assert_sound(home: &Home) {
    let doctor = home.run(&["doctor", "--json"], None).json();
    let database = doctor["checks"].as_array().unwrap().iter().find(|c| c["check"] == "database").unwrap().clone();
    assert_eq!(database["ok"], true, "{doctor:#}");
}

/// Search hits for `text`, as (kind, id) pairs.
fn hits(home: &Home, text: &str) -> Vec<(String, Value)> {
    let out = home.run(&["search", text, "--json"], None).ok().json();
    out["hits"].as_array().unwrap().iter().map(|h| (h["kind"].as_str().unwrap().to_owned(), h["id"].clone())).collect()
}

const APP: &str = "/home/dev/src/app";
const OTHER: &str = "/home/dev/src/other";

#[test]
fn forgetting_an_observation_leaves_no_copy_in_any_file_and_rewrites_its_summaries() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    session(&home, "b", APP, "WPLK-0815-INITECH");
    // The scan can fail: before forgetting, the marker is in the files.
    assert!(!copies(&home.home(), "QXZV-4711-ACME").is_empty());
    let a = local_session(&home, "a");
    let quoted: i64 = count(
        &home,
        &format!("SELECT count(*) FROM summaries WHERE session_id = '{a}' AND content LIKE '%QXZV-4711-ACME%'"),
    );
    assert!(quoted > 0, "the summary quotes the prompt");

    let ids = observation_ids(&home, "QXZV-4711-ACME");
    assert_eq!(ids.len(), 1);
    let forgotten = home.run(&["forget", &format!("#{}", ids[0]), "--json"], None).ok().json();
    assert_eq!(forgotten["observations"], 1, "{forgotten}");
    assert_eq!(forgotten["sessions_resummarized"], 1, "{forgotten}");

    assert_eq!(copies(&home.home(), "QXZV-4711-ACME"), Vec::<PathBuf>::new());
    assert!(hits(&home, "QXZV-4711-ACME").is_empty());
    // The rest of the session, and its summaries, stay: written again from what remains.
    let summary: String = home
        .db()
        .query_row("SELECT content FROM summaries WHERE session_id = ?1 AND level = 'detailed'", [&a], |r| r.get(0))
        .unwrap();
    assert!(summary.contains("paginate the a report"), "{summary}");
    assert!(!copies(&home.home(), "WPLK-0815-INITECH").is_empty(), "the other session is untouched");
    assert_eq!(count(&home, "SELECT count(*) FROM tombstones WHERE kind = 'observation'"), 1);
    assert_sound(&home);
}

#[test]
fn forgetting_a_session_drops_it_with_its_keys_summaries_and_spooled_events() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    session(&home, "b", APP, "WPLK-0815-INITECH");
    // An event of session a that waits in the spool: the database is locked.
    let locker = home.lock_db();
    let run = home.run_env(
        &["hook"],
        &[("TRAE_MEM_DEADLINE_MS", "600")],
        Some(&payload("a", "UserPromptSubmit", json!({"prompt": "late word on SPOOLED-9931-ACME", "cwd": APP}))),
    );
    assert!(run.stderr.contains("spooled"), "{run}");
    locker.release();
    assert!(!copies(&home.home(), "SPOOLED-9931-ACME").is_empty());

    let a = local_session(&home, "a");
    let forgotten = home.run(&["forget", "--session", &a[..8], "--yes", "--json"], None).ok().json();
    assert_eq!(forgotten["sessions_removed"], 1, "{forgotten}");
    assert_eq!(forgotten["spooled_dropped"], 1, "{forgotten}");

    for marker in ["QXZV-4711-ACME", "SPOOLED-9931-ACME"] {
        assert_eq!(copies(&home.home(), marker), Vec::<PathBuf>::new(), "{marker}");
    }
    assert_eq!(count(&home, "SELECT count(*) FROM session_keys WHERE external_id = 'a'"), 0);
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1);
    assert_eq!(hits(&home, "WPLK-0815-INITECH").len(), 2, "b's prompt and summary stay");
    assert_sound(&home);
}

#[test]
fn forgetting_a_project_leaves_other_projects_alone() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    session(&home, "a2", APP, "ZZTOP-5150-ACME");
    session(&home, "b", OTHER, "WPLK-0815-INITECH");

    let dry = home.run(&["forget", "--project", APP, "--dry-run", "--json"], None).ok().json();
    assert_eq!(dry["sessions"], 2, "{dry}");
    assert_eq!(
        dry["observations"],
        count(
            &home,
            &format!(
                "SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id WHERE s.project_path = '{APP}'"
            )
        )
    );
    assert!(!copies(&home.home(), "QXZV-4711-ACME").is_empty(), "a dry run deletes nothing");

    home.run(&["forget", "--project", APP, "--yes"], None).ok();
    for marker in ["QXZV-4711-ACME", "ZZTOP-5150-ACME", "customer record QXZV"] {
        assert_eq!(copies(&home.home(), marker), Vec::<PathBuf>::new(), "{marker}");
    }
    assert_eq!(count(&home, &format!("SELECT count(*) FROM sessions WHERE project_path = '{APP}'")), 0);
    assert_eq!(hits(&home, "WPLK-0815-INITECH").len(), 2, "the prompt and the summary");
    assert_eq!(count(&home, "SELECT count(*) FROM tombstones WHERE kind = 'session'"), 2);
    assert_sound(&home);
}

#[test]
fn forgetting_many_without_a_terminal_needs_yes_and_deletes_nothing_without_it() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    let before = count(&home, "SELECT count(*) FROM observations");
    let run = home.run(&["forget", "--query", "invoice"], None).code(1);
    assert!(run.stderr.contains("--yes") && run.stderr.contains("nothing was deleted"), "{run}");
    assert_eq!(count(&home, "SELECT count(*) FROM observations"), before);

    let run = home.run(&["forget"], None).code(1);
    assert!(run.stderr.contains("name what to forget"), "{run}");
    let run = home.run(&["forget", "nope"], None).code(1);
    assert!(run.stderr.contains("not an observation id"), "{run}");

    // A query that matches nothing forgets nothing, and says so.
    let run = home.run(&["forget", "--query", "kubernetes"], None).ok();
    assert!(run.stdout.contains("nothing matches"), "{run}");
    // Filters combine: only the Bash call mentions "cargo".
    let dry = home.run(&["forget", "--query", "invoice", "--tool", "Bash", "--dry-run", "--json"], None).ok().json();
    assert_eq!(dry["observations"], 1, "{dry}");
    let run = home.run(&["forget", "--query", "invoice", "--dry-run"], None).ok();
    assert!(run.stdout.contains("would forget 2 observations"), "{run}");
    assert_eq!(count(&home, "SELECT count(*) FROM observations"), before);
}

#[test]
fn an_older_export_does_not_bring_back_what_was_forgotten_and_carries_tombstones_to_other_homes() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    let old_export = home.work().join("old.jsonl");
    home.run(&["export", "--output", old_export.to_str().unwrap()], None).ok();
    // Another machine took the old export.
    let other = Home::new();
    other.run(&["import", old_export.to_str().unwrap()], None).ok();
    assert_eq!(hits(&other, "QXZV-4711-ACME").len(), 2, "the prompt and the summary");

    let id = observation_ids(&home, "QXZV-4711-ACME")[0];
    home.run(&["forget", &id.to_string()], None).ok();
    let report = home.run(&["import", old_export.to_str().unwrap(), "--json"], None).ok().json();
    assert_eq!(report["forgotten"], 1, "{report}");
    assert!(hits(&home, "QXZV-4711-ACME").is_empty(), "the import brought nothing back");
    assert_eq!(observation_ids(&home, "QXZV-4711-ACME"), Vec::<i64>::new());

    // The new export carries the tombstone: the other machine forgets it too.
    let new_export = home.work().join("new.jsonl");
    home.run(&["export", "--output", new_export.to_str().unwrap()], None).ok();
    let report = other.run(&["import", new_export.to_str().unwrap(), "--json"], None).ok().json();
    assert_eq!(report["tombstones"], 1, "{report}");
    assert_eq!(copies(&other.home(), "QXZV-4711-ACME"), Vec::<PathBuf>::new());
    assert_sound(&other);
}

#[test]
fn forgetting_more_than_five_hundred_rows_leaves_no_copy_in_any_file_nor_a_term_in_the_index() {
    let home = Home::new();
    // Over the secure-delete limit: the rows go by plain deletes, then one merge of the index.
    import(&home, &aged_export(&home, &[("VQXJMARKER", 1, 600, 60), ("keptsession", 1, 5, 60)]));
    // The checks can fail: before forgetting, the marker is in the files and its trigrams in the index.
    assert!(!copies(&home.home(), "VQXJMARKER").is_empty());
    assert!(!trigrams_left_in_index_if_gone(&home, "VQXJMARKER").is_empty());

    let forgotten = home.run(&["forget", "--query", "VQXJMARKER", "--yes", "--json"], None).ok().json();
    assert_eq!(forgotten["observations"], 600, "{forgotten}");
    assert_eq!(copies(&home.home(), "VQXJMARKER"), Vec::<PathBuf>::new());
    assert_eq!(trigrams_left_in_index(&home, "VQXJMARKER"), Vec::<String>::new());
    assert_eq!(session_observations(&home, "keptsession"), 5, "the other session is untouched");
    assert_sound(&home);
}

/// The marker's trigrams the index lists, as if its text were already gone:
/// what `trigrams_left_in_index` would find if the rows went without their terms.
fn trigrams_left_in_index_if_gone(home: &Home, marker: &str) -> Vec<String> {
    let copy = Home::new();
    std::fs::copy(home.db_path(), copy.db_path()).unwrap();
    let wal = |db: PathBuf| db.with_extension("db-wal");
    if wal(home.db_path()).exists() {
        std::fs::copy(wal(home.db_path()), wal(copy.db_path())).unwrap();
    }
    copy.db().execute("UPDATE observations SET content = replace(content, ?1, '')", [marker]).unwrap();
    copy.db().execute("UPDATE summaries SET content = replace(content, ?1, '')", [marker]).unwrap();
    trigrams_left_in_index(&copy, marker)
}

/// Writes an export of sessions in project APP: (name, age in days,
/// observations, bytes each), each observation naming its session, each
/// session with summaries. Returns the file.
fn aged_export(home: &Home, sessions: &[(&str, i64, usize, usize)]) -> PathBuf {
    let now = jiff::Timestamp::now().as_millisecond();
    let mut lines = Vec::new();
    let mut id = 1;
    for (n, &(name, age, observations, bytes)) in sessions.iter().enumerate() {
        let sid = format!("00000000-0000-4000-8000-{n:012}");
        let start = now - age * DAY_MS;
        let session = json!({"id": sid, "project": APP, "started_at": start, "ended_at": start + 60_000,
                             "meta": {"client": "claude-code"}});
        lines.push(
            json!({"type": "session", "session": session, "keys": [{"client": "claude-code", "external_id": name}]}),
        );
        for i in 0..observations {
            let filler = "lorem ipsum dolor sit amet ".repeat(bytes / 27 + 1);
            let content = format!("{name} step {i}: {}", &filler[..bytes]);
            lines.push(json!({"type": "observation", "id": id, "session_id": sid, "ts": start + i as i64,
                              "kind": "tool", "tool": "Bash", "content": content, "private": false, "tags": []}));
            id += 1;
        }
        for level in ["brief", "detailed"] {
            lines.push(json!({"type": "summary", "session_id": sid, "level": level, "created_at": start + 60_000,
                              "content": format!("{name}: what was done")}));
        }
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    home.write("aged.jsonl", text.as_bytes())
}

fn import(home: &Home, file: &Path) {
    home.run(&["import", file.to_str().unwrap()], None).ok();
}

fn session_observations(home: &Home, name: &str) -> i64 {
    count(
        home,
        &format!(
            "SELECT count(*) FROM observations o JOIN session_keys k ON k.session_id = o.session_id
             WHERE k.external_id = '{name}'"
        ),
    )
}

fn summaries_of(home: &Home, name: &str) -> i64 {
    count(
        home,
        &format!(
            "SELECT count(*) FROM summaries s JOIN session_keys k ON k.session_id = s.session_id
             WHERE k.external_id = '{name}'"
        ),
    )
}

#[test]
fn retention_by_age_drops_old_detail_and_keeps_its_summaries() {
    let home = Home::new();
    import(&home, &aged_export(&home, &[("ancient", 200, 40, 300), ("recent", 2, 40, 300)]));
    std::fs::write(home.home().join("trae-mem.toml"), "[retention]\nmax_age_days = 90\n").unwrap();
    let gc = home.run(&["gc", "--json"], None).ok().json();
    assert_eq!(gc["aged_out"], 40, "{gc}");
    assert_eq!(gc["finished"], true, "{gc}");
    assert_eq!(session_observations(&home, "ancient"), 0);
    assert_eq!(summaries_of(&home, "ancient"), 2, "the summaries are the memory that stays");
    assert_eq!(session_observations(&home, "recent"), 40);
    let found = hits(&home, "ancient");
    assert!(!found.is_empty() && found.iter().all(|(kind, _)| kind == "summary"), "{found:?}");
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert!(stats["gc_finished_at"].is_i64(), "{stats}");
    assert_eq!(stats["retention"]["max_age_days"], 90);
    assert_sound(&home);

    // Without keep_summaries, the emptied session goes whole.
    let home = Home::new();
    import(&home, &aged_export(&home, &[("ancient", 200, 10, 300), ("recent", 2, 10, 300)]));
    std::fs::write(home.home().join("trae-mem.toml"), "[retention]\nmax_age_days = 90\nkeep_summaries = false\n")
        .unwrap();
    let gc = home.run(&["gc", "--json"], None).ok().json();
    assert_eq!(gc["sessions_removed"], 1, "{gc}");
    assert_eq!(summaries_of(&home, "ancient"), 0);
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1);
}

#[test]
fn retention_by_size_drops_the_oldest_first_until_under_the_cap() {
    let home = Home::new();
    let sessions: Vec<(String, i64)> = (0..12).map(|i| (format!("day{i:02}"), 100 - i as i64)).collect();
    let specs: Vec<(&str, i64, usize, usize)> = sessions.iter().map(|(n, age)| (n.as_str(), *age, 250, 1500)).collect();
    import(&home, &aged_export(&home, &specs));
    let before = home.run(&["stats", "--json"], None).ok().json();
    assert!(before["used_bytes"].as_u64().unwrap() > 4 << 20, "{before}");

    let gc = home.run(&["gc", "--max-db-mb", "2", "--json"], None).ok().json();
    assert!(gc["over_size"].as_u64().unwrap() > 0, "{gc}");
    let after = home.run(&["stats", "--json"], None).ok().json();
    assert!(after["used_bytes"].as_u64().unwrap() <= 2 << 20, "{after}");
    assert!(after["db_bytes"].as_u64().unwrap() <= 2 << 20, "the file itself shrank: {after}");
    assert_eq!(session_observations(&home, "day00"), 0, "the oldest go first");
    assert_eq!(session_observations(&home, "day11"), 250, "the newest stay");
    assert_eq!(count(&home, "SELECT count(*) FROM summaries"), 24, "every summary stays");
    assert_sound(&home);
}

/// Observations older than 90 days.
fn old_observations(home: &Home) -> i64 {
    let cutoff = jiff::Timestamp::now().as_millisecond() - 90 * DAY_MS;
    count(home, &format!("SELECT count(*) FROM observations WHERE ts < {cutoff}"))
}

/// A home with 24,000 observations from 200 days ago, and 20 recent ones.
fn home_with_old_detail() -> Home {
    let home = Home::new();
    let specs: Vec<(String, i64)> = (0..24).map(|i| (format!("old{i:02}"), 200)).collect();
    let mut specs: Vec<(&str, i64, usize, usize)> = specs.iter().map(|(n, a)| (n.as_str(), *a, 1000, 200)).collect();
    specs.push(("fresh", 1, 20, 200));
    import(&home, &aged_export(&home, &specs));
    home
}

#[test]
fn a_gc_killed_midway_leaves_a_sound_store_and_the_next_gc_finishes() {
    let home = home_with_old_detail();
    let total = old_observations(&home);
    let mut gc =
        home.command(&["gc", "--max-age-days", "90"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    // Kill it once it has deleted some, and long before it could finish.
    let mut waited = Duration::ZERO;
    while old_observations(&home) == total {
        assert!(waited < Duration::from_secs(30), "gc deleted nothing in 30 s");
        std::thread::sleep(Duration::from_millis(2));
        waited += Duration::from_millis(2);
    }
    gc.kill().unwrap();
    gc.wait().unwrap();
    let left = old_observations(&home);
    assert!(left > 0 && left < total, "killed midway: {left} of {total} left");
    assert_sound(&home);

    let gc = home.run(&["gc", "--max-age-days", "90", "--json"], None).ok().json();
    assert_eq!(gc["aged_out"], left, "{gc}");
    assert_eq!(old_observations(&home), 0);
    assert_eq!(session_observations(&home, "fresh"), 20);
    assert_sound(&home);
}

#[test]
fn hooks_racing_a_gc_lose_no_event() {
    let home = home_with_old_detail();
    let gc = home.command(&["gc", "--max-age-days", "90"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut gc = gc;
    let mut during = 0;
    for i in 0..30 {
        let prompt = format!("racing prompt RACE{i:03}X");
        hook(&home, "racer", "UserPromptSubmit", json!({"prompt": prompt})).ok();
        if gc.try_wait().unwrap().is_none() {
            during += 1;
        }
    }
    assert!(during > 0, "the hooks ran while gc did");
    assert!(gc.wait().unwrap().success());
    home.run(&["spool", "replay"], None).ok();
    for i in 0..30 {
        assert_eq!(observation_ids(&home, &format!("RACE{i:03}X")).len(), 1, "event {i} stored once");
    }
    assert_eq!(old_observations(&home), 0);
    assert_sound(&home);
}

#[test]
fn a_session_end_hook_applies_retention_once_a_day() {
    let home = Home::new();
    import(&home, &aged_export(&home, &[("ancient", 200, 30, 200)]));
    std::fs::write(home.home().join("trae-mem.toml"), "[retention]\nmax_age_days = 90\n").unwrap();
    hook(&home, "today", "UserPromptSubmit", json!({"prompt": "hello"})).ok();
    assert_eq!(session_observations(&home, "ancient"), 30, "only SessionEnd applies retention");
    hook(&home, "today", "SessionEnd", json!({"reason": "exit"})).ok();
    assert_eq!(session_observations(&home, "ancient"), 0);
    assert_eq!(summaries_of(&home, "ancient"), 2);

    // Within the day, the next SessionEnd leaves it be.
    import(&home, &aged_export(&home, &[("ancient2", 200, 5, 200)]));
    hook(&home, "later", "SessionEnd", json!({"reason": "exit"})).ok();
    assert_eq!(session_observations(&home, "ancient2"), 5);
    // A command finishes what the slices leave: merging the index whole.
    let gc = home.run(&["gc", "--json"], None).ok().json();
    assert_eq!(gc["aged_out"], 5, "{gc}");
    assert_eq!(gc["finished"], true, "{gc}");
    assert_sound(&home);
}

#[test]
fn stats_reports_sizes_counts_and_the_spool() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    session(&home, "b", OTHER, "WPLK-0815-INITECH");
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert_eq!(stats["sessions"], 2);
    assert_eq!(stats["observations"], count(&home, "SELECT count(*) FROM observations"));
    assert!(stats["index_bytes"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["db_bytes"].as_u64().unwrap() + stats["wal_bytes"].as_u64().unwrap() > 0);
    let projects: Vec<&str> =
        stats["projects"].as_array().unwrap().iter().map(|p| p["project"].as_str().unwrap()).collect();
    assert_eq!(projects.len(), 2, "{stats}");
    assert!(projects.contains(&APP) && projects.contains(&OTHER));
    let kinds: Vec<&str> = stats["kinds"].as_array().unwrap().iter().map(|k| k["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"user") && kinds.contains(&"tool"), "{kinds:?}");
    assert_eq!(stats["spooled"], 0);
    assert_eq!(stats["gc_finished_at"], Value::Null);
    let text = home.run(&["stats"], None).ok();
    assert!(text.stdout.contains("2 sessions") && text.stdout.contains(APP), "{text}");
}

#[test]
fn gc_converts_a_store_made_before_auto_vacuum() {
    let home = Home::new();
    session(&home, "a", APP, "QXZV-4711-ACME");
    let auto_vacuum = |home: &Home| -> i64 { home.db().query_row("PRAGMA auto_vacuum", [], |r| r.get(0)).unwrap() };
    assert_eq!(auto_vacuum(&home), 2, "new stores vacuum incrementally");
    home.db().execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;").unwrap();
    assert_eq!(auto_vacuum(&home), 0);
    home.run(&["gc"], None).ok();
    assert_eq!(auto_vacuum(&home), 2);
    assert_eq!(hits(&home, "QXZV-4711-ACME").len(), 2, "the prompt and the summary");
    assert_sound(&home);
}

#[test]
fn gc_merges_the_segments_hooks_left_in_the_index() {
    let home = Home::new();
    let segments = |home: &Home| count(home, "SELECT count(DISTINCT segid) FROM observations_fts_idx");
    for n in 0..3 {
        session(&home, &format!("s{n}"), APP, &format!("MARK-{n}"));
    }
    let before = segments(&home);
    // Measured: 4 more a session, up to about 16, where FTS5 merges them.
    assert!(before > 2, "each hook's insert is a segment of its own until FTS5 merges them: {before}");
    home.run(&["gc"], None).ok();
    let after = segments(&home);
    assert!(after <= 2, "{before} segments before gc, {after} after");
    assert_eq!(hits(&home, "MARK-1").len(), 2, "the prompt and the summary");
    assert_sound(&home);
}
