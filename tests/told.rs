//! What the agent is told: the memory given at session start and with each
//! prompt, driven through the hook binary as a client drives it.

use serde_json::json;

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

    let run = hook(
        &home,
        "again",
        "UserPromptSubmit",
        json!({"prompt": "the app crashes on startup again when the config file is missing"}),
    )
    .ok();
    let memory = run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned();
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
    assert!(trivial_lines[0].contains("5 short sessions"), "{context}");
}
