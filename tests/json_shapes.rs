//! The JSON shapes the README lists under "JSON output", pinned: each
//! command's output has exactly the keys written here, and the README's
//! bullet for it names every one of them. A key added, renamed or dropped
//! fails until the README says so.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::util::{Home, claude_code_hook as hook, claude_code_payload as payload};

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().unwrap_or_else(|| panic!("not an object: {value}")).keys().map(String::as_str).collect()
}

/// The README's bullet for `command` under "### JSON output".
fn readme_bullet(command: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find("### JSON output\n").expect("a JSON output section")..];
    let section = &section[..section[4..].find("\n### ").map_or(section.len(), |end| end + 4)];
    section
        .lines()
        .find(|l| l.starts_with(&format!("- `{command}")))
        .unwrap_or_else(|| panic!("no README bullet for {command}"))
        .to_owned()
}

/// Asserts that `value` has exactly `expected` keys and that the README's
/// bullet for `command` names each.
#[track_caller]
fn assert_shape(command: &str, value: &Value, expected: &[&str]) {
    assert_eq!(keys(value), expected.iter().copied().collect::<BTreeSet<_>>(), "{command}: {value:#}");
    let bullet = readme_bullet(command);
    for key in expected {
        assert!(bullet.contains(&format!("\"{key}\"")), "the README's {command} does not name {key:?}: {bullet}");
    }
}

const OBSERVATION: &[&str] = &["id", "session_id", "ts", "kind", "tool", "content", "private", "tags"];

#[test]
fn every_json_shape_the_readme_lists_has_exactly_its_keys() {
    let home = Home::new();
    hook(&home, "a", "UserPromptSubmit", json!({"prompt": "fix the flaky pagination test"})).ok();
    hook(&home, "a", "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "cargo test pagination"}, "tool_response": {"stdout": "ok"}})).ok();
    hook(&home, "a", "Stop", json!({"last_assistant_message": "Fixed the pagination test."})).ok();
    hook(&home, "a", "SessionEnd", json!({"reason": "exit"})).ok();
    hook(&home, "b", "UserPromptSubmit", json!({"prompt": "a second session"})).ok();

    let search = home.run(&["search", "pagination", "--json"], None).ok().json();
    assert_shape("search --json", &search, &["query", "index", "waiting_for_vectors", "hits"]);
    let hits = search["hits"].as_array().unwrap();
    let row = hits.iter().find(|h| h["kind"] != "summary").expect("a row hit");
    // `author` comes only on a teammate's synced row, which needs a sync server.
    let hit = ["id", "session_id", "project", "ts", "kind", "tool", "snippet", "score", "matched", "found_by"];
    assert_shape("search --json", row, &hit);
    let summary = hits.iter().find(|h| h["kind"] == "summary").expect("a summary hit");
    assert_shape("search --json", summary, &[&hit[..], &["level"]].concat());

    let id = row["id"].as_i64().unwrap().to_string();
    let timeline = home.run(&["timeline", &id, "--json"], None).ok().json();
    assert_shape("timeline --json", &timeline, &["anchor", "session_id", "window_minutes", "observations"]);
    assert_shape("timeline --json", &timeline["observations"][0], OBSERVATION);

    let sessions = home.run(&["sessions", "--json"], None).ok().json();
    let session = ["id", "project", "started_at", "ended_at", "meta", "observations"];
    assert_shape("sessions --json", &sessions[0], &session);

    let session_id = row["session_id"].as_str().unwrap();
    let show = home.run(&["show", session_id, "--json"], None).ok().json();
    assert_shape("show --json", &show, &["session", "summaries", "observations"]);
    assert_shape("show --json", &show["summaries"][0], &["session_id", "level", "created_at", "content"]);

    let stats = home.run(&["stats", "--json"], None).ok().json();
    let stats_keys = [
        "size_bytes",
        "files",
        "db_bytes",
        "wal_bytes",
        "shm_bytes",
        "used_bytes",
        "index_bytes",
        "sessions",
        "observations",
        "private_observations",
        "summaries",
        "tombstones",
        "vectors",
        "vector_model",
        "oldest",
        "newest",
        "projects",
        "kinds",
        "spooled",
        "dead_letters",
        "gc_finished_at",
        "retention",
        "model_summaries",
    ];
    assert_shape("stats --json", &stats, &stats_keys);
    assert_shape("stats --json", &stats["projects"][0], &["project", "sessions", "observations", "oldest", "newest"]);
    assert_shape("stats --json", &stats["kinds"][0], &["kind", "observations"]);
    assert_shape("stats --json", &stats["files"][0], &["path", "bytes"]);
    assert_shape("stats --json", &stats["vectors"], &["embedded", "pending"]);
    assert_shape("stats --json", &stats["retention"], &["max_age_days", "max_db_mb", "keep_summaries"]);
    let model_summaries = [
        "pending",
        "over_budget",
        "given_up",
        "done",
        "tokens_today",
        "failed_tokens_today",
        "last_error",
        "max_tokens_per_day",
    ];
    assert_shape("stats --json", &stats["model_summaries"], &model_summaries);

    // A waiting event (the database held by another process) and a dead letter.
    let locker = home.lock_db();
    home.run(&["hook"], Some(&payload("b", "UserPromptSubmit", json!({"prompt": "while locked"})))).ok();
    locker.release();
    home.run(&["hook"], Some(b"not json")).code(1);
    let spool = home.run(&["spool", "list", "--json"], None).ok().json();
    assert_shape("spool list --json", &spool, &["pending", "dead_letters"]);
    let pending = ["id", "client", "event", "received_at", "resolved", "payload", "reason"];
    assert_shape("spool list --json", &spool["pending"][0], &pending);
    assert_shape("spool list --json", &spool["pending"][0]["resolved"], &["project", "settings"]);
    let letter = ["client", "event", "received_at", "error", "payload_file", "bytes", "origin"];
    assert_shape("spool list --json", &spool["dead_letters"][0], &letter);
    let dry = home.run(&["spool", "drop", "--dry-run", "--json"], None).ok().json();
    assert_shape("spool drop --json", &dry, &["dry_run", "dropped", "dead_letters"]);
    let replay = home.run(&["spool", "replay", "--json"], None).ok().json();
    assert_shape("spool list --json", &replay, &["stored", "remaining", "revived"]);

    let export = home.work().join("export.jsonl");
    home.run(&["export", "--output", export.to_str().unwrap()], None).ok();
    let other = Home::new();
    let import = other.run(&["import", export.to_str().unwrap(), "--json"], None).ok().json();
    let import_keys = ["sessions", "observations", "summaries", "duplicates", "forgotten", "tombstones"];
    assert_shape("import --json", &import, &import_keys);

    let dry = home.run(&["forget", "--session", session_id, "--dry-run", "--json"], None).ok().json();
    assert_shape("forget --json", &dry, &["dry_run", "observations", "sessions", "ids", "session_ids"]);
    let forgotten = home.run(&["forget", "--session", session_id, "--yes", "--json"], None).ok().json();
    let forget_keys = ["observations", "sessions_removed", "sessions_resummarized", "spooled_dropped"];
    assert_shape("forget --json", &forgotten, &forget_keys);

    let gc_keys = [
        "aged_out",
        "over_size",
        "sessions_removed",
        "events_pruned",
        "facts_written",
        "bytes_before",
        "bytes_after",
        "finished",
    ];
    let gc = home.run(&["gc", "--json"], None).ok().json();
    assert_shape("gc --json", &gc, &gc_keys);
    let rescanned = home.run(&["gc", "--rescan", "--json"], None).ok().json();
    assert_shape("gc --json", &rescanned, &[&gc_keys[..], &["rescan"]].concat());
    let rescan = ["observations_scanned", "observations_redacted", "sessions_resummarized", "summaries_redacted"];
    assert_shape("gc --json", &rescanned["rescan"], &rescan);
}
