//! What the agent is told: the memory given at session start and with each
//! prompt, driven through the hook binary as a client drives it.

use serde_json::json;

use crate::mcp::Server;
use crate::util::{Home, claude_code_hook as hook};

#[test]
fn a_failed_calls_error_text_survives_into_the_summary_and_the_next_session_start() {
    let home = Home::new();
    hook(&home, "e", "UserPromptSubmit", json!({"prompt": "run the test suite"})).ok();
    let output = "Exit code 101\n   Compiling app v0.1.0 (/home/dev/src/app)\n\
                  error[E0433]: failed to resolve: use of undeclared crate `tokio`\n --> src/main.rs:3:5\n\
                  warning: build failed, waiting for other jobs to finish...";
    hook(
        &home,
        "e",
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_use_id": "t1", "error": output}),
    )
    .ok();
    hook(&home, "e", "Stop", json!({"last_assistant_message": "The build fails: tokio is not a dependency."})).ok();
    hook(&home, "e", "SessionEnd", json!({"reason": "exit"})).ok();
    let brief: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap();
    assert!(
        brief.contains("Bash: Exit code 101 — error[E0433]: failed to resolve: use of undeclared crate `tokio`"),
        "{brief}"
    );
    let told = hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok().json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.contains("use of undeclared crate `tokio`"), "{context}");
}

#[test]
fn a_summary_retention_kept_is_told_at_the_next_session_start() {
    let home = Home::new();
    // A session from ten days ago, its rows and its summaries, as an export holds them.
    let now = jiff::Timestamp::now().as_millisecond();
    let start = now - 10 * 24 * 60 * 60 * 1000;
    let sid = "00000000-0000-4000-8000-000000000001";
    let project = home.work().canonicalize().unwrap().display().to_string();
    let mut lines = vec![json!({"type": "session", "keys": [{"client": "claude-code", "external_id": "old"}],
        "session": {"id": sid, "project": project, "started_at": start, "ended_at": start + 60_000, "meta": {"client": "claude-code"}}})];
    for (i, (kind, text)) in
        [("user", "why does the deploy key fail in CI?"), ("response", "Fixed: the key lacked write access.")]
            .into_iter()
            .enumerate()
    {
        lines.push(json!({"type": "observation", "id": i + 1, "session_id": sid, "ts": start + i as i64, "kind": kind,
                          "tool": null, "content": text, "private": false, "tags": []}));
    }
    for level in ["brief", "detailed"] {
        lines.push(json!({"type": "summary", "session_id": sid, "level": level, "created_at": start + 60_000,
                          "content": "Asked: why does the deploy key fail in CI?\nConcluded: Fixed: the key lacked write access."}));
    }
    let file = home.write("old.jsonl", lines.iter().map(|l| format!("{l}\n")).collect::<String>().as_bytes());
    home.run(&["import", file.to_str().unwrap()], None).ok();
    // Retention takes the rows and keeps the summaries (keep_summaries is on by default).
    let gc = home.run(&["gc", "--max-age-days", "5", "--json"], None).ok().json();
    assert_eq!(gc["aged_out"], 2, "{gc}");

    let told = hook(&home, "next", "SessionStart", json!({"source": "startup", "cwd": project})).ok().json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("the key lacked write access"), "the kept summary is told:\n{told}");
}

#[test]
fn prompt_memory_for_a_related_prompt_carries_what_was_asked_and_the_whole_conclusion() {
    let home = Home::new();
    let asked = "The app crashes on startup when the config file is missing. Steps: remove \
                 ~/.config/app/config.toml, run `app serve`, and it panics with 'called Option::unwrap() on a None \
                 value' in src/config.rs. This started after the settings refactor last week; find out why and fix it \
                 properly, with a test.";
    let concluded = "Fixed: load_config now falls back to the defaults when config.toml is missing, and \
                     tests/config.rs covers a start without the file.";
    hook(&home, "fix", "UserPromptSubmit", json!({"prompt": asked})).ok();
    for (i, file) in ["src/config.rs", "src/main.rs", "tests/config.rs"].iter().enumerate() {
        hook(
            &home,
            "fix",
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": format!("r{i}"), "tool_input": {"file_path": file},
                   "tool_response": {"file": {"content": "fn load_config() -> Config { todo!() }\n".repeat(40)}}}),
        )
        .ok();
    }
    hook(&home, "fix", "Stop", json!({"last_assistant_message": concluded})).ok();
    hook(&home, "fix", "SessionEnd", json!({"reason": "exit"})).ok();

    let memory = prompt_memory(&home, "again", "the app crashes on startup again when the config file is missing");
    assert!(memory.contains(&format!("Concluded: {concluded}")), "the whole conclusion:\n{memory}");
    assert!(memory.contains("Asked: The app crashes on startup when the config file is missing."), "{memory}");
    assert!(memory.chars().count() <= 1500, "within the default budget: {}", memory.chars().count());
}

#[test]
fn session_start_tells_the_fix_and_folds_five_trivial_sessions_after_it_into_one_line() {
    let home = Home::new();
    hook(&home, "fix", "UserPromptSubmit", json!({"prompt": "CI fails to push: the deploy key is rejected"})).ok();
    hook(
        &home,
        "fix",
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "git push deploy main"},
               "error": "Exit code 128\nERROR: The key you are authenticating with has been marked as read only."}),
    )
    .ok();
    hook(
        &home,
        "fix",
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": "t2", "tool_input": {"file_path": ".github/workflows/deploy.yml"},
               "tool_response": {"filePath": ".github/workflows/deploy.yml"}}),
    )
    .ok();
    hook(&home, "fix", "Stop", json!({"last_assistant_message": "Fixed: the deploy key in CI secrets was the read-only one; it now uses the write key."})).ok();
    hook(&home, "fix", "SessionEnd", json!({"reason": "exit"})).ok();
    let trivial = ["what time is it?", "what did we do?", "hello", "what did we do last time?", "thanks"];
    for (i, question) in trivial.iter().enumerate() {
        let sid = format!("t{i}");
        hook(&home, &sid, "UserPromptSubmit", json!({"prompt": question})).ok();
        hook(&home, &sid, "Stop", json!({"last_assistant_message": "It is 10:00."})).ok();
        hook(&home, &sid, "SessionEnd", json!({"reason": "exit"})).ok();
    }

    let told = hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok().json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(context.contains("it now uses the write key"), "the fix is told:\n{context}");
    assert!(context.contains("marked as read only"), "with what it ran into:\n{context}");
    let trivial_lines: Vec<&str> =
        context.lines().filter(|l| trivial.iter().any(|q| l.contains(&format!("“{q}”")))).collect();
    assert_eq!(trivial_lines.len(), 1, "the trivial sessions take one line:\n{context}");
    assert!(trivial_lines[0].contains("5 sessions that only talked"), "{context}");
}

/// What session `sid` is told with `prompt`, or "" for nothing.
fn prompt_memory(home: &Home, sid: &str, prompt: &str) -> String {
    let run = hook(home, sid, "UserPromptSubmit", json!({ "prompt": prompt })).ok();
    run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

/// The fix, then four sessions that asked memory how it was fixed, in the
/// same words, and got the memory told back.
fn a_fix_and_four_sessions_asking_how() -> Home {
    let home = Home::new();
    hook(
        &home,
        "fix",
        "UserPromptSubmit",
        json!({"prompt": "The app crashes on startup when the config file is missing. Fix it."}),
    )
    .ok();
    hook(
        &home,
        "fix",
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": "t1",
               "tool_input": {"file_path": "src/config.rs", "old_string": "read_to_string(path)?",
                              "new_string": "read_to_string(path).unwrap_or_default()"},
               "tool_response": {"filePath": "src/config.rs"}}),
    )
    .ok();
    // The answer says "absent", not "missing", and never "file".
    hook(&home, "fix", "Stop", json!({"last_assistant_message": FIX})).ok();
    hook(&home, "fix", "SessionEnd", json!({"reason": "exit"})).ok();
    for i in 0..4 {
        let sid = format!("asked-{i}");
        hook(&home, &sid, "UserPromptSubmit", json!({"prompt": QUESTION})).ok();
        hook(
            &home,
            &sid,
            "Stop",
            json!({"last_assistant_message": "Memory says a session changed load_config to use defaults."}),
        )
        .ok();
        hook(&home, &sid, "SessionEnd", json!({"reason": "exit"})).ok();
    }
    home
}

const QUESTION: &str = "how did we fix the crash when the config file was missing";
const FIX: &str =
    "Fixed: load_config now falls back to the defaults when trae.toml is absent instead of panicking on the unwrap.";

/// Where in `hits` the first hit of `kind` (and with `content`) is.
fn place(hits: &[serde_json::Value], kind: &str, content: &str) -> Option<usize> {
    hits.iter()
        .position(|h| h["kind"] == kind && h["snippet"].as_str().unwrap().replace(['«', '»'], "").contains(content))
}

#[test]
fn a_repeated_memory_question_does_not_outrank_its_answer_in_search_or_mcp() {
    let home = a_fix_and_four_sessions_asking_how();
    let project = "/home/dev/src/app";
    let cli = home.run(&["search", QUESTION, "--project", project, "--json"], None).ok().json();
    let mut server = Server::ready(&home);
    let mcp = server.call_ok("trae_mem_search", json!({"query": QUESTION, "project": project}));
    for (reader, found) in [("search", &cli), ("MCP", &mcp)] {
        let hits = found["hits"].as_array().unwrap();
        let answer = place(hits, "response", "load_config now falls back");
        let question = place(hits, "user", QUESTION);
        let (Some(answer), Some(question)) = (answer, question) else {
            panic!("{reader}: the answer and the question are found:\n{found:#}")
        };
        assert!(answer < question, "{reader}: the answer ranks above the question:\n{found:#}");
        // The fix's session summary comes first: it states the fix with every word.
        assert_eq!(hits[0]["kind"], "summary", "{reader}: {found:#}");
        assert!(hits[0]["session_id"].as_str().unwrap().len() > 8);
        let fix_session = home
            .db()
            .query_row("SELECT session_id FROM observations WHERE content = ?1", [FIX], |r| r.get::<_, String>(0))
            .unwrap();
        assert_eq!(hits[0]["session_id"], fix_session.as_str(), "{reader}: {found:#}");
        // The four identical questions count once, as do each session's two summaries.
        let questions = hits
            .iter()
            .filter(|h| h["kind"] == "user" && h["snippet"].as_str().unwrap().contains("how did we"))
            .count();
        assert_eq!(questions, 1, "{reader}: {found:#}");
        let mut summarized: Vec<&str> =
            hits.iter().filter(|h| h["kind"] == "summary").map(|h| h["session_id"].as_str().unwrap()).collect();
        let all = summarized.len();
        summarized.dedup();
        assert_eq!(summarized.len(), all, "{reader}: one hit per session summary: {found:#}");
    }
}

#[test]
fn prompt_memory_tells_the_fix_not_the_sessions_that_asked_about_it() {
    let home = a_fix_and_four_sessions_asking_how();
    let memory = prompt_memory(&home, "next", "the config file is missing again and it crashes, how did we fix it?");
    assert!(memory.contains("load_config now falls back to the defaults"), "{memory}");
    assert!(!memory.contains("Memory says"), "the sessions that only asked are not told:\n{memory}");
}

#[test]
fn a_store_from_before_session_facts_gets_them_from_gc_and_prompt_memory_reads_them() {
    let home = a_fix_and_four_sessions_asking_how();
    // As a store written by the build before facts were kept: none of the
    // later migrations' tables and columns, schema version 8.
    home.db()
        .execute_batch(
            "DROP TABLE session_facts;
             ALTER TABLE summary_spend DROP COLUMN failed_tokens;
             DROP INDEX sync_records_summary_of;
             ALTER TABLE sync_records DROP COLUMN summary_of;
             DROP INDEX vectors_by_session;
             ALTER TABLE vectors DROP COLUMN session_id;
             PRAGMA user_version = 8;",
        )
        .unwrap();
    let collected = home.run(&["gc", "--json"], None).ok().json();
    assert_eq!(collected["facts_written"], 5, "{collected}");
    let db = home.db();
    let sessions: i64 = db.query_row("SELECT count(*) FROM session_facts", [], |r| r.get(0)).unwrap();
    assert_eq!(sessions, 5);
    let fix: String = db
        .query_row(
            "SELECT f.facts FROM session_facts f JOIN observations o ON o.session_id = f.session_id
             WHERE o.content = ?1",
            [FIX],
            |r| r.get(0),
        )
        .unwrap();
    let fix: serde_json::Value = serde_json::from_str(&fix).unwrap();
    assert_eq!(fix["concluded"], json!([FIX]), "{fix}");
    assert_eq!(fix["files"], json!(["src/config.rs"]), "{fix}");
    // A second gc has nothing left to do.
    assert_eq!(home.run(&["gc", "--json"], None).ok().json()["facts_written"], 0);
    let memory = prompt_memory(&home, "next", "the config file is missing again, how did we fix it?");
    assert!(memory.contains(&format!("Concluded: {FIX}")), "{memory}");
    assert!(!memory.contains("Memory says"), "the sessions that only asked are not told:\n{memory}");
}

#[test]
fn a_talk_only_session_with_a_real_answer_is_told_and_one_asking_memory_is_folded() {
    let home = Home::new();
    hook(
        &home,
        "design",
        "UserPromptSubmit",
        json!({"prompt": "Should the importer use one transaction per file or per row?"}),
    )
    .ok();
    let answer = "One transaction per file. Per-row commits made the nightly import take 40 minutes because each commit \
                  waits for the disk; one per file takes 50 seconds, and a failed file rolls back whole, so a rerun never \
                  sees half a file. Keep BEGIN IMMEDIATE so that a hook writing at the same time waits instead of failing.";
    hook(&home, "design", "Stop", json!({"last_assistant_message": answer})).ok();
    hook(&home, "design", "SessionEnd", json!({"reason": "exit"})).ok();
    hook(
        &home,
        "recall",
        "UserPromptSubmit",
        json!({"prompt": "What did we decide about transactions in the importer last time?"}),
    )
    .ok();
    hook(&home, "recall", "Stop", json!({"last_assistant_message": answer})).ok();
    hook(&home, "recall", "SessionEnd", json!({"reason": "exit"})).ok();

    let told = hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok().json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(
        context.contains("## ") && context.contains("Should the importer use one transaction per file"),
        "{context}"
    );
    assert!(
        context.contains(
            "Also 1 session that only talked: “What did we decide about transactions in the importer last time?”"
        ),
        "{context}"
    );
}

#[test]
fn session_start_tells_the_fix_and_names_a_question_asked_in_four_sessions_once() {
    let home = a_fix_and_four_sessions_asking_how();
    let told = hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok().json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(context.contains("load_config now falls back to the defaults"), "{context}");
    assert!(context.contains(&format!("Also 4 sessions that only talked: “{QUESTION}” ×4\n")), "{context}");
}

/// Sessions that recorded nothing (a client opened and closed again without
/// a prompt) do not push the work before them out of what session start
/// looks through.
#[test]
fn sessions_that_recorded_nothing_do_not_hide_earlier_work_from_session_start() {
    let home = Home::new();
    hook(&home, "fix", "UserPromptSubmit", json!({"prompt": "CI fails to push: the deploy key is rejected"})).ok();
    hook(
        &home,
        "fix",
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": "t1", "tool_input": {"file_path": ".github/workflows/deploy.yml"},
               "tool_response": {"filePath": ".github/workflows/deploy.yml"}}),
    )
    .ok();
    let concluded = "Fixed: CI now pushes with the deploy key that has write access.";
    hook(&home, "fix", "Stop", json!({"last_assistant_message": concluded})).ok();
    hook(&home, "fix", "SessionEnd", json!({"reason": "exit"})).ok();
    // More than the 50 latest started sessions that session start considers.
    for i in 0..55 {
        hook(&home, &format!("opened-and-closed-{i}"), "SessionStart", json!({"source": "startup"})).ok();
    }
    // Before, it told nothing at all: stdout was empty.
    let told = hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok();
    assert!(told.stdout.contains("deploy key that has write access"), "{told}");
}
