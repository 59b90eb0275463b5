//! `trae-mem hook` driven as Claude Code drives it: a payload on stdin,
//! the exit code and stdout read back, the stored rows checked.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Home, claude_code_hook as hook, claude_code_payload as payload, fixtures};

/// (kind, tool, content, private) of every observation, in order.
fn rows(home: &Home) -> Vec<(String, Option<String>, String, bool)> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT kind, tool_name, content, private FROM observations ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))).unwrap().map(Result::unwrap).collect()
}

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn every_recorded_fixture_is_accepted_and_stored() {
    // (fixture, kinds it records, a piece of the stored text)
    let expected: &[(&str, &[&str], &str)] = &[
        ("SessionStart", &[], ""),
        ("SessionStart.startup", &[], ""),
        ("SessionStart.resume", &[], ""),
        ("SessionStart.compact", &[], ""),
        ("UserPromptSubmit", &["user"], "Run echo hello"),
        ("PreToolUse", &["note"], "about to run Bash, input={\"command\":\"echo hello\""),
        ("PreToolUse.subagent", &["note"], "echo from-subagent"),
        ("PostToolUse", &["tool"], "echo hello\n→ hello"),
        ("PostToolUse.subagent", &["tool"], "echo from-subagent\n→ from-subagent"),
        ("PostToolUseFailure", &["error"], "echo failing >&2; exit 3\n✗ Exit code 3\nfailing"),
        ("Stop", &["note", "response"], "MOCK-FINAL: done."),
        ("StopFailure", &["note"], "StopFailure error=unknown last_assistant_message=API Error: 400"),
        ("SessionEnd", &["note"], "session end: other"),
        ("FileChanged", &["note"], "FileChanged file_path=/home/dev/src/watchers/notes.txt event=change"),
        ("SubagentStart", &["note"], "SubagentStart agent_id=a38384e8f1d5b3f15"),
        ("SubagentStop", &["note"], "last_assistant_message=SUBAGENT-FINAL: done."),
        ("PreCompact", &["note"], "PreCompact trigger=manual"),
        ("PostCompact", &["note"], "compact_summary=MOCK-FINAL: done."),
        ("Notification", &["note"], "Notification"),
        ("PermissionRequest", &["note"], "PermissionRequest"),
        ("TaskCreated", &["note"], "task_subject=e2e task"),
        ("TaskCompleted", &["note"], "TaskCompleted"),
        ("UserPromptExpansion", &["note"], "command_name=e2e-cmd"),
        ("InstructionsLoaded", &["note"], "memory_type=Project"),
        ("ConfigChange", &["note"], "ConfigChange"),
        ("CwdChanged", &["note"], "new_cwd=/home/dev/src/extended/sub"),
        ("MessageDisplay", &["note"], "MessageDisplay"),
        ("PostToolBatch", &["note"], "PostToolBatch"),
        ("PostToolBatch.subagent", &["note"], "PostToolBatch"),
        ("Setup", &["note"], "Setup trigger=init"),
    ];
    let mut files: Vec<String> = std::fs::read_dir(fixtures())
        .expect("the recorded payloads are in tests/fixtures/claude-code")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.starts_with('_'))
        .map(|n| n.trim_end_matches(".json").to_owned())
        .collect();
    files.sort();
    for name in &files {
        let Some((_, kinds, text)) = expected.iter().find(|(n, _, _)| n == name) else {
            // Notification has no fixture today; every fixture must have an expectation.
            panic!("fixture {name}.json has no expectation in this test");
        };
        let home = Home::new();
        let bytes = std::fs::read(fixtures().join(format!("{name}.json"))).unwrap();
        let run = home.run(&["hook"], Some(&bytes)).ok();
        assert_eq!(run.stdout, "", "no memory yet, so nothing to inject\n{run}");
        assert_eq!(run.stderr, "", "{run}");
        let stored = rows(&home);
        let stored_kinds: Vec<&str> = stored.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(&stored_kinds, kinds, "{name}: kinds stored");
        if !text.is_empty() {
            assert!(stored.iter().any(|r| r.2.contains(text)), "{name}: no row holds {text:?}: {stored:#?}");
        }
        assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1, "{name}: one session");
    }
}

#[test]
fn session_start_keeps_its_source_and_the_event_flag_overrides_the_payload() {
    let home = Home::new();
    let bytes = std::fs::read(fixtures().join("SessionStart.compact.json")).unwrap();
    home.run(&["hook", "--event=SessionStart"], Some(&bytes)).ok();
    let meta: String = home.db().query_row("SELECT meta_json FROM sessions", [], |r| r.get(0)).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&meta).unwrap()["source"], "compact");

    // --event wins over hook_event_name.
    hook(&home, "s2", "Whatever", json!({"prompt": "from the flag"}));
    home.run(&["hook", "--event", "UserPromptSubmit"], Some(&payload("s2", "Whatever", json!({"prompt": "typed"}))))
        .ok();
    assert!(rows(&home).iter().any(|r| r.0 == "user" && r.2 == "typed"));
}

#[test]
fn a_full_session_is_summarized_and_given_to_the_next_one() {
    let home = Home::new();
    let first = "11111111-aaaa";
    assert_eq!(hook(&home, first, "SessionStart", json!({"source": "startup"})).ok().stdout, "");
    hook(&home, first, "UserPromptSubmit", json!({"prompt": "Why does the nightly import say database is locked?"}))
        .ok();
    hook(&home, first, "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "ok", "stderr": ""}})).ok();
    hook(
        &home,
        first,
        "Stop",
        json!({"last_assistant_message": "Decision: use BEGIN IMMEDIATE and a 5 s busy timeout."}),
    )
    .ok();
    hook(&home, first, "SessionEnd", json!({"reason": "logout"})).ok();

    let ended: Option<i64> = home.db().query_row("SELECT ended_at FROM sessions", [], |r| r.get(0)).unwrap();
    assert!(ended.is_some());
    let brief: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap();
    assert!(brief.contains("Asked: Why does the nightly import say database is locked?"), "{brief}");

    let run = hook(&home, "22222222-bbbb", "SessionStart", json!({"source": "startup"})).ok();
    let out = run.json();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = out["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    // The session that did most (here the only one) is told in detail.
    let detailed: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'detailed'", [], |r| r.get(0)).unwrap();
    assert!(context.contains(&detailed), "the detailed summary is injected:\n{context}");
    assert!(context.contains("Decision: use BEGIN IMMEDIATE"), "{context}");
    assert!(context.contains("trae-mem search"), "it says how to search:\n{context}");
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 2);

    // Another project has no memory yet.
    let other = home.run(&["hook"], Some(&payload("33333333", "SessionStart", json!({"cwd": "/elsewhere"})))).ok();
    assert_eq!(other.stdout, "");
}

#[test]
fn injection_respects_its_budget_and_can_be_turned_off() {
    let home = Home::new();
    for i in 0..6 {
        let sid = format!("s{i}");
        hook(&home, &sid, "UserPromptSubmit", json!({"prompt": format!("task {i}: {}", "word ".repeat(300))})).ok();
        hook(&home, &sid, "SessionEnd", json!({"reason": "exit"})).ok();
    }
    let context = hook(&home, "next", "SessionStart", json!({})).ok().json()["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(context.chars().count() <= 4000, "{} chars", context.chars().count());
    assert!(context.contains("task 5"), "newest first:\n{context}");

    home.write("work/trae-mem.toml", b"[context]\ninject = false\n");
    assert_eq!(hook(&home, "next2", "SessionStart", json!({})).ok().stdout, "");
    home.write("work/trae-mem.toml", b"[context]\nbudget_chars = 500\n");
    let small = hook(&home, "next3", "SessionStart", json!({})).ok().json();
    assert!(small["hookSpecificOutput"]["additionalContext"].as_str().unwrap().chars().count() <= 500);
}

#[test]
fn sixteen_racing_processes_make_one_session_and_lose_nothing() {
    let home = Home::new();
    let home = std::sync::Arc::new(home);
    let threads: Vec<_> = (0..16)
        .map(|t| {
            let home = std::sync::Arc::clone(&home);
            std::thread::spawn(move || {
                for i in 0..50 {
                    let run =
                        hook(&home, "racing-session", "UserPromptSubmit", json!({"prompt": format!("prompt {t}-{i}")}));
                    assert_eq!(run.code, 0, "{run}");
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    // Anything spooled under contention is stored by the next call.
    home.run(&["spool", "replay"], None).ok();
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1);
    assert_eq!(count(&home, "SELECT count(*) FROM session_keys"), 1);
    assert_eq!(count(&home, "SELECT count(DISTINCT content) FROM observations"), 800);
    assert_eq!(count(&home, "SELECT count(*) FROM observations"), 800);
}

#[test]
fn unreadable_payloads_exit_1_and_are_kept_as_dead_letters() {
    let cases: &[(&str, &[u8], &str)] = &[
        ("malformed", b"{\"session_id\": ", "not valid JSON"),
        ("empty", b"", "empty"),
        ("garbage", &[0xff, 0x00, 0xfe, 0x13, 0x37, 0x80], "not valid JSON"),
        ("not an object", b"[1, 2, 3]", "not an object"),
    ];
    for (name, bytes, message) in cases {
        let home = Home::new();
        let run = home.run(&["hook"], Some(bytes)).code(1);
        assert_eq!(run.stderr.lines().count(), 1, "{name}: one clear line\n{run}");
        assert!(run.stderr.starts_with("trae-mem: ") && run.stderr.contains(message), "{name}\n{run}");
        assert!(run.stderr.contains("kept in"), "{name}\n{run}");
        let listing = home.run(&["spool", "list", "--json"], None).ok().json();
        let letters = listing["dead_letters"].as_array().unwrap();
        assert_eq!(letters.len(), 1, "{name}");
        let kept = std::fs::read(letters[0]["payload_file"].as_str().unwrap()).unwrap();
        assert_eq!(&kept, bytes, "{name}: the exact bytes are kept");
    }
}

#[test]
fn bad_arguments_and_unknown_clients_never_exit_2() {
    let home = Home::new();
    let run = home.run(&["hook", "--no-such-flag"], Some(b"{}")).code(1);
    assert!(run.stderr.contains("--no-such-flag"), "{run}");
    assert_eq!(run.stderr.lines().count(), 1, "one line\n{run}");
    // Whatever comes before `hook`, a command line naming it takes the hook's way out.
    let home_dir = home.home().display().to_string();
    for args in [&["--bogus", "hook"][..], &["-v", "hook"], &["--home", &home_dir, "--nope", "hook", "--event", "Stop"]]
    {
        let run = home.run(args, Some(b"{}")).code(1);
        assert_eq!(run.stderr.lines().count(), 1, "one line\n{run}");
        assert!(run.stderr.starts_with("trae-mem: ") && run.stderr.contains("trae-mem hook --help"), "{run}");
    }
    let run = home.run(&["hook", "--client", "nonesuch"], Some(&payload("s", "Stop", json!({})))).code(1);
    assert!(run.stderr.contains("unknown client \"nonesuch\""), "{run}");
    // No event named anywhere: a clear error, the bytes kept.
    let run = home.run(&["hook"], Some(b"{\"session_id\": \"s\"}")).code(1);
    assert!(run.stderr.contains("no event given"), "{run}");
}

#[test]
fn a_50_mb_payload_is_stored_clipped_inside_the_deadline() {
    let home = Home::new();
    let big = "0123456789abcdef".repeat(50 * 1024 * 1024 / 16);
    let bytes = payload(
        "big",
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "cat huge.log"}, "tool_response": {"stdout": big, "stderr": ""}}),
    );
    assert!(bytes.len() > 50 * 1024 * 1024);
    // Inside the deadline: stored now, not spooled by the watchdog.
    let run = home.run(&["hook"], Some(&bytes)).ok();
    assert!(!run.stderr.contains("spooled"), "{run}");
    let stored = rows(&home);
    assert_eq!(stored.len(), 1);
    let content = &stored[0].2;
    assert!(content.starts_with("cat huge.log\n→ 0123456789abcdef"));
    assert!(content.ends_with('…'));
    assert_eq!(content.chars().count(), "cat huge.log\n→ ".chars().count() + 4000);
}

#[test]
fn a_database_locked_past_the_deadline_spools_the_event_then_replays_it() {
    let home = Home::new();
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "first"})).ok();
    let locker = home.lock_db();

    let started = Instant::now();
    let run = home
        .run_env(
            &["hook"],
            &[("TRAE_MEM_DEADLINE_MS", "700")],
            Some(&payload("s", "UserPromptSubmit", json!({"prompt": "while locked"}))),
        )
        .ok();
    // Ends long before the lock is let go (after this returns): a hook
    // that waited for it would never return here. The bound is slack a
    // loaded machine keeps; the benchmark times the exit.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "exits at its deadline, took {took:?}");
    assert!(run.stderr.contains("spooled"), "{run}");
    // While it waited, it said so beside the database: a long writer (an
    // import) that sees this ends its batch and lets the hook in.
    let signal = format!("{}-wait", home.db_path().display());
    assert!(std::path::Path::new(&signal).exists(), "a waiting hook leaves {signal} for the writer");
    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    assert_eq!(listing["pending"].as_array().unwrap().len(), 1);
    assert_eq!(listing["pending"][0]["event"], "UserPromptSubmit");
    assert_eq!(listing["pending"][0]["payload"]["prompt"], "while locked");

    locker.release();
    // The next successful hook stores the spooled event too, with its own time.
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "after"})).ok();
    let contents: Vec<String> = rows(&home).into_iter().map(|r| r.2).collect();
    assert_eq!(contents, vec!["first", "after", "while locked"]);
    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    assert!(listing["pending"].as_array().unwrap().is_empty());
    let times: Vec<i64> = {
        let db = home.db();
        let mut stmt = db.prepare("SELECT ts FROM observations ORDER BY id").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert!(times[2] < times[1], "the spooled event keeps the time it happened");
}

#[test]
fn a_hook_gives_way_at_once_to_a_step_that_holds_the_lock_and_its_event_is_stored_later() {
    let home = Home::new();
    // A hook that waited for the lock would wait 20 s here.
    home.write("home/trae-mem.toml", b"[hook]\nlock_wait_ms = 20000\ndeadline_ms = 30000\n");
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "first"})).ok();
    // A forget's merge of the whole index, as `batch::holding` says it: the
    // write lock, and a lock on `<db>-hold` for as long as the step runs.
    let locker = home.lock_db();
    let hold = std::fs::File::create(format!("{}-hold", home.db_path().display())).unwrap();
    hold.lock_shared().unwrap();

    let started = Instant::now();
    let run = hook(&home, "s", "UserPromptSubmit", json!({"prompt": "during the merge"})).ok();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "gives way at once, not after its 20 s wait: took {took:?}");
    assert!(run.stderr.contains("spooled"), "{run}");
    let signal = format!("{}-wait", home.db_path().display());
    assert!(!std::path::Path::new(&signal).exists(), "it did not wait, so it asked no writer to let it in");

    drop(hold);
    locker.release();
    hook(&home, "s", "UserPromptSubmit", json!({"prompt": "after"})).ok();
    let contents: Vec<String> = rows(&home).into_iter().map(|r| r.2).collect();
    assert_eq!(contents, vec!["first", "after", "during the merge"]);
}

#[test]
fn an_unwritable_store_spools_and_spool_replay_stores_later() {
    let home = Home::new();
    // A directory where the database file should be: SQLite cannot open it.
    std::fs::create_dir_all(home.db_path()).unwrap();
    let run = hook(&home, "s", "UserPromptSubmit", json!({"prompt": "kept for later"})).ok();
    assert!(run.stderr.contains("stored later"), "{run}");
    std::fs::remove_dir(home.db_path()).unwrap();
    let replay = home.run(&["spool", "replay", "--json"], None).ok().json();
    assert_eq!(replay["stored"], 1);
    assert_eq!(replay["remaining"], 0);
    assert_eq!(rows(&home)[0].2, "kept for later");
}

#[test]
fn private_text_is_removed_everywhere_and_never_searchable() {
    let home = Home::new();
    hook(&home, "p", "UserPromptSubmit", json!({"prompt": "deploy to <private>staging-42.internal</private> tonight"}))
        .ok();
    hook(&home, "p", "UserPromptSubmit", json!({"prompt": "<private>my salary is 9000</private>"})).ok();
    hook(&home, "p", "PostToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "<private>cat diary.txt</private>"}, "tool_response": {"stdout": "<private>dear diary</private>", "stderr": ""}})).ok();
    hook(&home, "p", "Stop", json!({"last_assistant_message": "done <private>hidden-answer-part</private>"})).ok();
    hook(&home, "p", "SessionEnd", json!({"reason": "exit"})).ok();

    let stored = rows(&home);
    let all: String = stored.iter().map(|r| r.2.clone()).collect::<Vec<_>>().join("\n");
    for secret in ["staging-42", "salary", "diary", "hidden-answer-part"] {
        assert!(!all.contains(secret), "{secret} was stored:\n{all}");
    }
    assert!(stored.contains(&("user".into(), None, "deploy to  tonight".into(), false)));
    assert!(stored.contains(&("user".into(), None, "[PRIVATE]".into(), true)));
    assert!(stored.contains(&("tool".into(), Some("Bash".into()), "[PRIVATE]".into(), true)));
    assert!(stored.contains(&("response".into(), None, "done ".into(), false)));

    let hits = home.run(&["search", "PRIVATE", "--json"], None).ok().json();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 0, "private rows are never indexed: {hits}");
    let summaries: String =
        home.db().query_row("SELECT group_concat(content) FROM summaries", [], |r| r.get(0)).unwrap();
    assert!(!summaries.contains("PRIVATE") && !summaries.contains("salary"), "{summaries}");
    let context = hook(&home, "next", "SessionStart", json!({})).ok().stdout;
    assert!(!context.contains("PRIVATE"), "{context}");
}

#[test]
fn secrets_are_redacted_before_storage() {
    let home = Home::new();
    hook(&home, "k", "UserPromptSubmit", json!({"prompt": "use password=hunter2hunter and key AKIAIOSFODNN7EXAMPLE"}))
        .ok();
    hook(&home, "k", "PostToolUse", json!({
        "tool_name": "Bash",
        "tool_input": {"command": "curl -H 'Authorization: Bearer abc.def.ghijklmnop' https://api"},
        "tool_response": {"stdout": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and xoxb-123456789012-abcdefghijkl\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----", "stderr": ""}
    })).ok();
    home.write("work/trae-mem.toml", b"[privacy]\nsecret_patterns = ['acme_[0-9]{6}']\n");
    hook(&home, "k", "UserPromptSubmit", json!({"prompt": "the id is acme_123456"})).ok();

    let all: String = rows(&home).into_iter().map(|r| r.2).collect::<Vec<_>>().join("\n");
    for secret in [
        "hunter2hunter",
        "AKIAIOSFODNN7EXAMPLE",
        "abc.def.ghijklmnop",
        "ghp_abcdefghij",
        "xoxb-1234",
        "b3BlbnNzaC1rZXk",
        "acme_123456",
    ] {
        assert!(!all.contains(secret), "{secret} was stored:\n{all}");
    }
    assert!(all.contains("password=[REDACTED]"), "{all}");
    assert!(all.contains("Authorization: Bearer [REDACTED]"), "{all}");
    assert!(all.contains("the id is [REDACTED]"), "{all}");
    // Nothing of it reached the index either.
    let hits = home.run(&["search", "hunter2", "--json"], None).ok().json();
    assert!(hits["hits"].as_array().unwrap().is_empty());
}

#[test]
fn clipping_never_splits_a_character() {
    let home = Home::new();
    home.write("work/trae-mem.toml", b"[capture]\nprompt_chars = 5\n");
    hook(&home, "c", "UserPromptSubmit", json!({"prompt": "数据缓存🙂很重要"})).ok();
    assert_eq!(rows(&home)[0].2, "数据缓存…");
}

#[test]
fn sessions_in_chinese_and_english_are_summarized_in_their_language() {
    let home = Home::new();
    hook(&home, "zh", "UserPromptSubmit", json!({"prompt": "请给库存查询加一层缓存"})).ok();
    hook(&home, "zh", "Stop", json!({"last_assistant_message": "已完成：缓存失效时间为 30 秒。"})).ok();
    hook(&home, "zh", "SessionEnd", json!({"reason": "exit"})).ok();
    hook(&home, "en", "UserPromptSubmit", json!({"prompt": "Add a cache to the stock query"})).ok();
    hook(
        &home,
        "en",
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101"}),
    )
    .ok();
    hook(&home, "en", "Stop", json!({"last_assistant_message": "Done: the cache expires after 30 seconds."})).ok();
    hook(&home, "en", "SessionEnd", json!({"reason": "exit"})).ok();

    let sessions = home.run(&["sessions", "--json"], None).ok().json();
    let briefs: Vec<String> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let show = home.run(&["show", s["id"].as_str().unwrap(), "--json"], None).ok().json();
            show["summaries"].as_array().unwrap().iter().find(|x| x["level"] == "brief").unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(
        briefs
            .iter()
            .any(|b| b.starts_with("用户请求: 请给库存查询加一层缓存\n结论与决定: 已完成：缓存失效时间为 30 秒。")),
        "{briefs:#?}"
    );
    assert!(
        briefs.iter().any(|b| b == "Asked: Add a cache to the stock query\nConcluded: Done: the cache expires after 30 seconds.\nErrors (1): Bash: Exit code 101"),
        "{briefs:#?}"
    );
}

#[test]
fn summarize_replaces_a_sessions_summaries() {
    let home = Home::new();
    hook(&home, "r", "UserPromptSubmit", json!({"prompt": "first question"})).ok();
    hook(&home, "r", "SessionEnd", json!({"reason": "exit"})).ok();
    // More happened after the end (a resumed session that never ended again).
    hook(&home, "r", "Stop", json!({"last_assistant_message": "a later conclusion"})).ok();
    let id: String = home.db().query_row("SELECT id FROM sessions", [], |r| r.get(0)).unwrap();
    let run = home.run(&["summarize", &id[..8]], None).ok();
    assert!(run.stdout.contains("Concluded: a later conclusion"), "{run}");
    assert_eq!(count(&home, "SELECT count(*) FROM summaries"), 2);
    home.run(&["summarize", "no-such"], None).code(1);
}

#[test]
fn events_left_out_by_the_config_are_skipped_cleanly() {
    let home = Home::new();
    home.write("work/trae-mem.toml", b"[capture]\nevents = [\"UserPromptSubmit\"]\n");
    hook(&home, "e", "PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "ls"}})).ok();
    hook(&home, "e", "UserPromptSubmit", json!({"prompt": "kept"})).ok();
    assert_eq!(rows(&home).into_iter().map(|r| r.2).collect::<Vec<_>>(), vec!["kept"]);
}

#[test]
fn a_broken_config_still_records_the_event_and_says_so() {
    let home = Home::new();
    home.write("work/trae-mem.toml", b"[capture]\nprompt_char = 5\n");
    // Stored with defaults: the hook succeeded, and says what was wrong in one line.
    let run = hook(&home, "b", "UserPromptSubmit", json!({"prompt": "still stored"})).ok();
    assert!(run.stderr.contains("trae-mem.toml") && run.stderr.contains("prompt_char"), "{run}");
    assert!(run.stderr.starts_with("trae-mem: warning: ") && run.stderr.lines().count() == 1, "{run}");
    assert_eq!(rows(&home)[0].2, "still stored");
    // What a user reaches for then works too.
    let spool = home.run(&["spool", "list", "--json"], None).ok();
    assert!(spool.stderr.contains("prompt_char"), "{spool}");
    home.run(&["doctor", "--json"], None).code(1);
}
