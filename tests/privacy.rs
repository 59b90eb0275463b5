//! Secrets and private text never reach the home: not the rows, not the
//! summaries, not what the next session is told, not search, and not any
//! file under the home (the spool and dead letters included). Each check
//! scans every file, byte for byte, as the forget tests do.

use serde_json::json;

use crate::util::{Home, claude_code_hook as hook, claude_code_payload as payload, copies};

/// A key of each format the README promises to keep out, as a user pastes
/// it, with the part of it that must never be stored.
const KEYS: &[(&str, &str)] = &[
    ("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQQ", "Ab3dEf6hIj9kLm2nOp5q"),
    ("sk-ant-api03-abcDEF123_ghiJKL456-mnoPQR789stuVWX", "abcDEF123_ghiJKL456"),
    ("sk_live_51H8abcDEF123ghiJKL456mno", "51H8abcDEF123ghiJKL"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "A1b2C3d4E5f6G7h8I9j0"),
    ("glpat-xZ8pQr2sT4uV6wX8yZ0a", "xZ8pQr2sT4uV6wX8yZ0a"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "AbCdEfGhIjKlMnOpQrSt"),
    ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0"),
    ("SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG", "qrstuvwxyz0123456789ABCDEFG"),
    ("postgres://admin:hunter2pass@db:5432/app", "hunter2pass"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "dozjgNryP4J3jVmNHl0w",
    ),
];

#[test]
fn a_key_of_every_promised_format_is_redacted_wherever_memory_is_kept_or_shown() {
    let home = Home::new();
    for (key, _) in KEYS {
        hook(&home, "k", "UserPromptSubmit", json!({"prompt": format!("use the key {key} please")})).ok();
    }
    hook(&home, "k", "Stop", json!({"last_assistant_message": format!("Done: I used {} as you asked.", KEYS[0].0)}))
        .ok();
    hook(&home, "k", "SessionEnd", json!({"reason": "exit"})).ok();
    let told = hook(&home, "next", "SessionStart", json!({})).ok().stdout;
    assert!(told.contains("use the key [REDACTED] please"), "the prompts are told, redacted:\n{told}");
    for (key, secret) in KEYS {
        assert!(!told.contains(secret), "{key} is told at session start:\n{told}");
        let hits = home.run(&["search", secret, "--json"], None).ok().json();
        assert!(hits["hits"].as_array().unwrap().is_empty(), "{key} is searchable: {hits}");
        assert_eq!(copies(&home.home(), secret), Vec::<std::path::PathBuf>::new(), "{key} is in a file");
    }
}

#[test]
fn the_spool_and_dead_letters_hold_no_private_text_and_no_secret() {
    let home = Home::new();
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "first"})).ok();
    // A database another process holds locked: the event is spooled.
    let locker = home.lock_db();
    let spooled = payload(
        "s",
        "UserPromptSubmit",
        json!({"prompt": "deploy with password=Spool9Secret and <private>SPOOLED-DIARY</private> now"}),
    );
    let run = home.run(&["hook"], Some(&spooled)).ok();
    assert!(run.stderr.contains("spooled"), "{run}");
    // A truncated payload, which cannot be read: a dead letter.
    let truncated = br#"{"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "token=Dead7Letter and <private>DEAD-DIARY</private> and"#;
    let run = home.run(&["hook"], Some(truncated)).code(1);
    assert!(run.stderr.contains("kept in"), "{run}");
    // A payload naming no session: a dead letter too, with its reason.
    let sessionless = json!({"hook_event_name": "UserPromptSubmit", "prompt": "key sk_live_51H8NoSession99abcDEFghi"});
    let run = home.run(&["hook"], Some(sessionless.to_string().as_bytes())).code(1);
    assert!(run.stderr.contains("names no session"), "{run}");

    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    assert_eq!(listing["pending"].as_array().unwrap().len(), 1, "{listing}");
    assert_eq!(listing["dead_letters"].as_array().unwrap().len(), 2, "{listing}");
    for secret in ["Spool9Secret", "SPOOLED-DIARY", "Dead7Letter", "DEAD-DIARY", "51H8NoSession99"] {
        assert_eq!(copies(&home.home(), secret), Vec::<std::path::PathBuf>::new(), "{secret} is in a file");
    }
    // What was kept is still what was sent, less what had to go.
    let dead = home.home().join("spool/dead");
    let kept: Vec<String> = std::fs::read_dir(&dead)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "payload"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(kept.iter().any(|k| k.contains("token=[REDACTED] and ")), "{kept:?}");
    assert!(kept.iter().any(|k| k.contains(r#""prompt":"key [REDACTED]""#)), "{kept:?}");
    locker.release();
}

#[test]
fn a_payload_naming_no_session_is_a_dead_letter_not_a_phantom_session() {
    let home = Home::new();
    let run = home.run(&["hook"], Some(br#"{"hook_event_name": "PostToolUse", "tool_name": "Bash"}"#)).code(1);
    assert_eq!(run.stderr.lines().count(), 1, "one line: {run}");
    assert!(run.stderr.contains("names no session") && run.stderr.contains("spool/dead"), "{run}");
    let sessions: i64 = match home.db_path().exists() {
        true => home.db().query_row("SELECT count(*) FROM sessions", [], |r| r.get(0)).unwrap(),
        false => 0,
    };
    assert_eq!(sessions, 0, "no session was made up for it");
    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    let letter = &listing["dead_letters"][0];
    assert!(letter["error"].as_str().unwrap().contains("names no session"), "{listing}");
}

#[test]
fn spool_drop_discards_dead_letters_after_a_dry_run_and_only_with_yes_off_a_terminal() {
    let home = Home::new();
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "kept"})).ok();
    for junk in [&b"not json"[..], b"{\"hook_event_name\": \"Stop\"}"] {
        home.run(&["hook"], Some(junk)).code(1);
    }
    let doctor = home.run(&["doctor", "--json"], None).json();
    let dead = doctor["checks"].as_array().unwrap().iter().find(|c| c["check"] == "dead letters").unwrap().clone();
    assert_eq!(dead["ok"], true, "dead letters stop no hook: a warning, not a failure: {dead}");
    assert!(dead["fix"].as_str().unwrap().contains("trae-mem spool drop"), "{dead}");

    let dry = home.run(&["spool", "drop", "--dry-run", "--json"], None).ok().json();
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["dropped"], 0);
    assert_eq!(dry["dead_letters"].as_array().unwrap().len(), 2, "{dry}");
    let refused = home.run(&["spool", "drop"], None).code(1);
    assert!(refused.stderr.contains("--yes") && refused.stderr.contains("nothing was deleted"), "{refused}");
    assert_eq!(home.run(&["spool", "list", "--json"], None).ok().json()["dead_letters"].as_array().unwrap().len(), 2);

    let dropped = home.run(&["spool", "drop", "--yes", "--json"], None).ok().json();
    assert_eq!(dropped["dropped"], 2, "{dropped}");
    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    assert!(listing["dead_letters"].as_array().unwrap().is_empty(), "{listing}");
    assert!(!std::fs::read_dir(home.home().join("spool/dead")).unwrap().any(|_| true), "no file is left behind");
    let doctor = home.run(&["doctor", "--json"], None).json();
    let dead = doctor["checks"].as_array().unwrap().iter().find(|c| c["check"] == "dead letters").unwrap().clone();
    assert_eq!(dead["detail"], "none");
    // The stored memory is untouched.
    let hits = home.run(&["search", "kept", "--json"], None).ok().json();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1);
}

#[test]
fn gc_rescan_redacts_rows_stored_before_a_rule_and_rewrites_their_summaries() {
    let home = Home::new();
    hook(&home, "r", "UserPromptSubmit", json!({"prompt": "the vendor id is acme_482913 for billing"})).ok();
    hook(&home, "r", "Stop", json!({"last_assistant_message": "Concluded: billing uses acme_482913."})).ok();
    hook(&home, "r", "SessionEnd", json!({"reason": "exit"})).ok();
    hook(&home, "other", "UserPromptSubmit", json!({"prompt": "an unrelated prompt"})).ok();
    let summary: String = home.db().query_row("SELECT group_concat(content) FROM summaries", [], |r| r.get(0)).unwrap();
    assert!(summary.contains("acme_482913"), "the summary quotes it before the rule exists: {summary}");

    // The user adds a rule for it: what is stored already is rescanned.
    home.write("work/trae-mem.toml", b"[privacy]\nsecret_patterns = ['acme_[0-9]{6}']\n");
    let rescanned = home.run(&["gc", "--rescan", "--json"], None).ok().json();
    assert_eq!(rescanned["rescan"]["observations_redacted"], 2, "{rescanned}");
    assert_eq!(rescanned["rescan"]["sessions_resummarized"], 1, "{rescanned}");
    assert!(rescanned["rescan"]["observations_scanned"].as_u64().unwrap() >= 3, "{rescanned}");

    assert_eq!(copies(&home.home(), "acme_482913"), Vec::<std::path::PathBuf>::new());
    assert_eq!(copies(&home.home(), "482913"), Vec::<std::path::PathBuf>::new());
    let hits = home.run(&["search", "482913", "--json"], None).ok().json();
    assert!(hits["hits"].as_array().unwrap().is_empty(), "{hits}");
    let found = home.run(&["search", "vendor billing", "--json"], None).ok().json();
    let snippets = found["hits"].to_string();
    assert!(snippets.contains("[REDACTED]"), "the row is still there, redacted: {found}");
    let unrelated = home.run(&["search", "unrelated", "--json"], None).ok().json();
    assert_eq!(unrelated["hits"].as_array().unwrap().len(), 1, "other rows are untouched");

    let again = home.run(&["gc", "--rescan", "--json"], None).ok().json();
    assert_eq!(again["rescan"]["observations_redacted"], 0, "a second rescan finds nothing: {again}");
}
