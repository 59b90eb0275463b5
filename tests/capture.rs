//! One event, one memory: a hook configured twice stores each event once,
//! a tool call's result replaces its PreToolUse note, and calls of
//! trae-mem's own MCP tools are remembered as what was asked, never as the
//! memories they returned.

use serde_json::json;

use crate::util::{Home, claude_code_hook};

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

fn contents(home: &Home) -> Vec<(String, String)> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT kind, content FROM observations ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn bash(tool_use_id: Option<&str>, command: &str) -> serde_json::Value {
    let mut call = json!({"tool_name": "Bash", "tool_input": {"command": command}});
    if let Some(id) = tool_use_id {
        call["tool_use_id"] = json!(id);
    }
    call
}

#[test]
fn a_hook_configured_twice_stores_each_event_once() {
    let home = Home::new();
    let mut post = bash(Some("toolu_1"), "cargo test");
    post["tool_response"] = json!({"stdout": "test result: ok", "stderr": ""});
    // As with the same hooks in ~/.claude/settings.json and the project's:
    // every event arrives twice, each delivery a process of its own.
    for _ in 0..2 {
        claude_code_hook(&home, "s1", "UserPromptSubmit", json!({"prompt": "run the tests"})).ok();
        claude_code_hook(&home, "s1", "PostToolUse", post.clone()).ok();
        // Cursor sends no tool call id: the content decides.
        home.run(
            &["hook", "--client", "cursor"],
            Some(
                json!({"hook_event_name": "afterShellExecution", "conversation_id": "c1", "command": "ls",
                       "output": "Cargo.toml", "workspace_roots": ["/home/dev/src/app"]})
                .to_string()
                .as_bytes(),
            ),
        )
        .ok();
    }
    let stored = contents(&home);
    assert_eq!(stored.iter().filter(|(_, c)| c == "run the tests").count(), 1, "{stored:?}");
    assert_eq!(stored.iter().filter(|(_, c)| c.starts_with("cargo test")).count(), 1, "{stored:?}");
    assert_eq!(stored.iter().filter(|(_, c)| c.contains("Cargo.toml")).count(), 1, "{stored:?}");

    // The same prompt asked again later is a new memory.
    home.db().execute("UPDATE ingested SET received_at = received_at - 60000", []).unwrap();
    claude_code_hook(&home, "s1", "UserPromptSubmit", json!({"prompt": "run the tests"})).ok();
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content = 'run the tests'"), 2);
    // And a different one right away, of course.
    claude_code_hook(&home, "s1", "UserPromptSubmit", json!({"prompt": "run them again"})).ok();
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content = 'run them again'"), 1);
}

#[test]
fn a_tool_calls_result_replaces_its_pretooluse_note() {
    let home = Home::new();
    claude_code_hook(&home, "s1", "PreToolUse", bash(Some("toolu_done"), "grep -rn quokka src")).ok();
    claude_code_hook(&home, "s1", "PreToolUse", bash(Some("toolu_denied"), "rm -rf wombat")).ok();
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE kind = 'note'"), 2);
    let mut post = bash(Some("toolu_done"), "grep -rn quokka src");
    post["tool_response"] = json!({"stdout": "src/a.rs:1: quokka", "stderr": ""});
    claude_code_hook(&home, "s1", "PostToolUse", post).ok();

    let stored = contents(&home);
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.iter().any(|(k, c)| k == "tool" && c.contains("src/a.rs:1: quokka")), "{stored:?}");
    // The call that never completed (denied, interrupted) keeps its note.
    assert!(stored.iter().any(|(k, c)| k == "note" && c.contains("rm -rf wombat")), "{stored:?}");
    // The replaced note is gone from the index too: one hit, the result.
    let hits = home.run(&["search", "quokka", "--json"], None).ok().json();
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["kind"], "tool");

    // A failure replaces its note the same way.
    claude_code_hook(&home, "s1", "PreToolUse", bash(Some("toolu_fail"), "cargo build")).ok();
    let mut failed = bash(Some("toolu_fail"), "cargo build");
    failed["error"] = json!("exit code 101");
    claude_code_hook(&home, "s1", "PostToolUseFailure", failed).ok();
    let stored = contents(&home);
    assert_eq!(stored.iter().filter(|(_, c)| c.contains("cargo build")).count(), 1, "{stored:?}");
    assert_eq!(count(&home, "SELECT count(*) FROM pending_tools"), 1, "only the denied call waits");
}

#[test]
fn trae_mems_own_tool_calls_are_remembered_as_the_question_not_the_memories() {
    let home = Home::new();
    for (client_tool, id) in [
        ("mcp__trae-mem__trae_mem_search", "t1"),
        ("mcp__trae_mem__trae_mem_timeline", "t2"),
        ("mcp_trae-mem_trae_mem_search", "t3"),
    ] {
        claude_code_hook(
            &home,
            "s1",
            "PostToolUse",
            json!({"tool_name": client_tool, "tool_use_id": id, "tool_input": {"query": "flaky parser"},
                   "tool_response": [{"type": "text", "text": "#12 an old memory about the zanzibar outage"}]}),
        )
        .ok();
    }
    let stored = contents(&home);
    assert_eq!(stored.len(), 3, "{stored:?}");
    for (kind, content) in &stored {
        assert_eq!(kind, "note");
        assert!(content.contains("flaky parser"), "{content}");
        assert!(!content.contains("zanzibar"), "the memories came back as a memory: {content}");
    }
    let search = home.run(&["search", "zanzibar", "--json"], None).ok().json();
    assert_eq!(search["hits"], json!([]));
}

#[test]
fn memory_a_client_echoes_back_in_the_prompt_is_not_the_users_words() {
    let home = Home::new();
    let dir = home.work().canonicalize().unwrap();
    let gemini = |event: &str, extra: serde_json::Value| {
        let mut payload = json!({"session_id": "g1", "cwd": dir, "hook_event_name": event});
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        home.run(&["hook", "--client", "gemini"], Some(payload.to_string().as_bytes())).ok()
    };
    gemini("BeforeAgent", json!({"prompt": "fix the flaky parser test"}));
    gemini("SessionEnd", json!({"reason": "exit"}));
    let told = gemini("SessionStart", json!({"session_id": "g2", "source": "startup"})).json();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(context.contains("fix the flaky parser test"), "{context}");
    // Gemini CLI 0.61 hands that block back inside the next prompt.
    let echoed = format!("<hook_context>\n{context}\n</hook_context>\n\nwhy does the import time out?");
    gemini("BeforeAgent", json!({"session_id": "g2", "prompt": echoed}));
    let prompts: Vec<String> = contents(&home).into_iter().filter(|(k, _)| k == "user").map(|(_, c)| c).collect();
    assert_eq!(prompts, ["fix the flaky parser test", "why does the import time out?"]);
}

/// A real BeforeAgent payload of Gemini CLI 0.61, recorded: the session-start
/// block comes back inside the prompt, HTML-escaped (`&lt;words&gt;`).
#[test]
fn geminis_html_escaped_echo_of_the_memory_is_stripped_from_the_recorded_prompt() {
    let home = Home::new();
    let recorded = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gemini-cli/BeforeAgent.hook_context.json"),
    )
    .unwrap();
    assert!(String::from_utf8_lossy(&recorded).contains("&lt;words&gt;"), "the fixture is the escaped echo");
    home.run(&["hook", "--client", "gemini"], Some(&recorded)).ok();
    let prompts: Vec<String> = contents(&home).into_iter().filter(|(k, _)| k == "user").map(|(_, c)| c).collect();
    assert_eq!(prompts, ["What did we do last time?"]);
}
