//! `trae-mem hook --client X` driven with each client's documented payloads:
//! the rows stored, and the answer on stdout in that client's format.

use serde_json::{Value, json};

use crate::util::{Home, Run};

fn hook(home: &Home, client: &str, payload: &Value) -> Run {
    home.run(&["hook", "--client", client], Some(payload.to_string().as_bytes()))
}

/// (kind, tool, content) of every observation, in order.
fn rows(home: &Home) -> Vec<(String, Option<String>, String)> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT kind, tool_name, content FROM observations ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
}

fn row(kind: &str, tool: Option<&str>, content: &str) -> (String, Option<String>, String) {
    (kind.to_owned(), tool.map(str::to_owned), content.to_owned())
}

/// The sessions stored: (client, external id, ended).
fn sessions(home: &Home) -> Vec<(String, String, bool)> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT meta_json, ended_at IS NOT NULL FROM sessions ORDER BY started_at").unwrap();
    stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .map(|(meta, ended)| {
            let meta: Value = serde_json::from_str(&meta).unwrap();
            (meta["client"].as_str().unwrap().to_owned(), meta["external_id"].as_str().unwrap().to_owned(), ended)
        })
        .collect()
}

/// `base` with the fields of `extra` added.
fn with(mut base: Value, extra: Value) -> Value {
    base.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    base
}

// Cursor: https://cursor.com/docs/hooks — conversation_id, workspace_roots,
// camelCase events; postToolUse's tool_input and tool_output are JSON strings.
fn cursor(event: &str, home: &Home, extra: Value) -> Value {
    with(
        json!({
            "conversation_id": "c-1", "generation_id": "g-1", "hook_event_name": event,
            "workspace_roots": [home.work()], "cursor_version": "2.1.0", "model": "claude-4.5-sonnet"
        }),
        extra,
    )
}

#[test]
fn cursor_payloads_become_events_and_context_is_additional_context() {
    let home = Home::new();
    let events = [
        cursor("sessionStart", &home, json!({"session_id": "c-1", "is_background_agent": false})),
        cursor("beforeSubmitPrompt", &home, json!({"prompt": "why is the build slow", "attachments": []})),
        cursor(
            "postToolUse",
            &home,
            json!({"tool_name": "Read", "tool_input": "{\"path\":\"Cargo.toml\"}", "tool_output": "{\"lines\":42}", "cwd": "/x"}),
        ),
        cursor("afterShellExecution", &home, json!({"command": "cargo build", "output": "Finished", "duration": 150})),
        cursor(
            "afterFileEdit",
            &home,
            json!({"file_path": "/p/src/main.rs", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ),
        cursor("afterAgentResponse", &home, json!({"text": "LTO makes the build slow."})),
        cursor("stop", &home, json!({"status": "completed", "loop_count": 0})),
    ];
    for event in &events {
        let run = hook(&home, "cursor", event).ok();
        assert_eq!(run.stdout, "", "{run}");
    }
    assert_eq!(
        rows(&home),
        vec![
            row("user", None, "why is the build slow"),
            row("tool", Some("Read"), "{\"path\":\"Cargo.toml\"}\n→ {\"lines\":42}"),
            row("tool", Some("Shell"), "cargo build\n→ Finished"),
            row(
                "note",
                None,
                "FileChanged model=claude-4.5-sonnet file_path=/p/src/main.rs edits=[{\"old_string\":\"a\",\"new_string\":\"b\"}]"
            ),
            row("note", None, "stop: turn ended"),
            row("response", None, "LTO makes the build slow."),
            row("note", None, "stop model=claude-4.5-sonnet status=completed loop_count=0"),
        ]
    );
    hook(&home, "cursor", &cursor("sessionEnd", &home, json!({"session_id": "c-1", "reason": "user_close"}))).ok();
    assert_eq!(sessions(&home), vec![("cursor".to_owned(), "c-1".to_owned(), true)]);

    let mut next = cursor("sessionStart", &home, json!({"session_id": "c-2"}));
    next["conversation_id"] = json!("c-2");
    let run = hook(&home, "cursor", &next).ok();
    let context = run.json()["additional_context"].as_str().unwrap_or_default().to_owned();
    assert!(context.contains("why is the build slow"), "{run}");
}

// Codex CLI: Claude Code's shape plus turn_id.
fn codex(event: &str, home: &Home, extra: Value) -> Value {
    with(
        json!({
            "session_id": "x-1", "turn_id": "t-1", "transcript_path": null, "cwd": home.work(),
            "hook_event_name": event, "model": "gpt-5-codex"
        }),
        extra,
    )
}

#[test]
fn codex_payloads_become_events_and_context_is_hook_specific_output() {
    let home = Home::new();
    hook(&home, "codex", &codex("SessionStart", &home, json!({"source": "startup"}))).ok();
    hook(&home, "codex", &codex("UserPromptSubmit", &home, json!({"prompt": "add a retry"}))).ok();
    let bash = json!({"tool_name": "Bash", "tool_use_id": "u1", "tool_input": {"command": "cargo test"}});
    hook(&home, "codex", &codex("PreToolUse", &home, bash.clone())).ok();
    let mut post = bash;
    post["tool_response"] = json!("test result: ok");
    hook(&home, "codex", &codex("PostToolUse", &home, post)).ok();
    hook(
        &home,
        "codex",
        &codex("Stop", &home, json!({"stop_hook_active": false, "last_assistant_message": "Retry added."})),
    )
    .ok();
    assert_eq!(
        rows(&home),
        vec![
            row("user", None, "add a retry"),
            // The PreToolUse note gave way to the call's result: one call, one memory.
            row("tool", Some("Bash"), "cargo test\n→ test result: ok"),
            row("note", None, "stop: turn ended"),
            row("response", None, "Retry added."),
        ]
    );
    hook(&home, "codex", &codex("SessionEnd", &home, json!({"reason": "exit"}))).ok();
    let mut next = codex("SessionStart", &home, json!({"source": "startup"}));
    next["session_id"] = json!("x-2");
    let run = hook(&home, "codex", &next).ok();
    let out = run.json();
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(out["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("add a retry"), "{run}");
}

// Gemini CLI: https://geminicli.com/docs/hooks/reference
fn gemini(event: &str, home: &Home, extra: Value) -> Value {
    with(
        json!({
            "session_id": "g-1", "transcript_path": "/tmp/t.json", "cwd": home.work(),
            "hook_event_name": event, "timestamp": "2026-11-30T10:00:00Z"
        }),
        extra,
    )
}

#[test]
fn gemini_payloads_become_events_and_stdout_is_json_only() {
    let home = Home::new();
    hook(&home, "gemini", &gemini("SessionStart", &home, json!({"source": "startup"}))).ok();
    hook(&home, "gemini", &gemini("BeforeAgent", &home, json!({"prompt": "rename the crate"}))).ok();
    let call = json!({"tool_name": "run_shell_command", "tool_input": {"command": "cargo check"}});
    hook(&home, "gemini", &gemini("BeforeTool", &home, call.clone())).ok();
    let mut ok = call.clone();
    // As Gemini CLI 0.61 sends a shell result: the model's copy wrapped, the user's clean.
    ok["tool_response"] = json!({
        "llmContent": "<untrusted_context>\nOutput: Finished dev\nProcess Group PGID: 4242\n</untrusted_context>",
        "returnDisplay": "Finished dev", "error": null});
    hook(&home, "gemini", &gemini("AfterTool", &home, ok)).ok();
    let mut failed = call;
    failed["tool_response"] = json!({"llmContent": "", "returnDisplay": "", "error": "exit 101"});
    hook(&home, "gemini", &gemini("AfterTool", &home, failed)).ok();
    let after = json!({"prompt": "rename the crate", "prompt_response": "Renamed.", "stop_hook_active": false});
    hook(&home, "gemini", &gemini("AfterAgent", &home, after)).ok();
    assert_eq!(
        rows(&home),
        vec![
            row("user", None, "rename the crate"),
            row(
                "note",
                Some("run_shell_command"),
                "about to run run_shell_command, input={\"command\":\"cargo check\"}"
            ),
            row("tool", Some("run_shell_command"), "cargo check\n→ Finished dev"),
            row("error", Some("run_shell_command"), "cargo check\n✗ exit 101"),
            row("note", None, "stop: turn ended"),
            row("response", None, "Renamed."),
        ]
    );
    hook(&home, "gemini", &gemini("SessionEnd", &home, json!({"reason": "exit"}))).ok();
    let mut next = gemini("SessionStart", &home, json!({"source": "startup"}));
    next["session_id"] = json!("g-2");
    let run = hook(&home, "gemini", &next).ok();
    assert!(run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("rename the crate"));
}

// Cline: https://docs.cline.bot/features/hooks/hook-reference — nested
// fields, and the last JSON object on stdout is the answer.
fn cline(event: &str, home: &Home, key: &str, data: Value) -> Value {
    let mut p = json!({
        "clineVersion": "3.36.0", "hookName": event, "timestamp": "1764496800000",
        "taskId": "task-1", "workspaceRoots": [home.work()], "userId": "u-1"
    });
    p[key] = data;
    p
}

#[test]
fn cline_payloads_become_events_and_every_answer_is_json() {
    let home = Home::new();
    let meta = json!({"taskMetadata": {"taskId": "task-1", "ulid": "01J", "initialTask": "speed up search"}});
    let calls = [
        cline("TaskStart", &home, "taskStart", meta.clone()),
        cline("UserPromptSubmit", &home, "userPromptSubmit", json!({"prompt": "speed up search", "attachments": []})),
        cline(
            "PreToolUse",
            &home,
            "preToolUse",
            json!({"toolName": "read_file", "parameters": {"path": "src/search.rs"}}),
        ),
        cline(
            "PostToolUse",
            &home,
            "postToolUse",
            json!({"toolName": "execute_command", "parameters": {"command": "cargo bench"}, "result": "12 ms", "success": true, "executionTimeMs": 900}),
        ),
        cline(
            "PostToolUse",
            &home,
            "postToolUse",
            json!({"toolName": "execute_command", "parameters": {"command": "cargo fmt --check"}, "result": "Diff in lib.rs", "success": false, "executionTimeMs": 90}),
        ),
    ];
    for call in &calls {
        let run = hook(&home, "cline", call).ok();
        assert_eq!(run.json(), json!({"cancel": false}), "{run}");
    }
    assert_eq!(
        rows(&home),
        vec![
            row("user", None, "speed up search"),
            row("note", Some("read_file"), "about to run read_file, input={\"path\":\"src/search.rs\"}"),
            row("tool", Some("execute_command"), "cargo bench\n→ 12 ms"),
            row("error", Some("execute_command"), "cargo fmt --check\n✗ Diff in lib.rs"),
        ]
    );
    hook(&home, "cline", &cline("TaskComplete", &home, "taskComplete", meta)).ok();
    assert_eq!(sessions(&home), vec![("cline".to_owned(), "task-1".to_owned(), true)]);
    let end: String = home
        .db()
        .query_row("SELECT content FROM observations WHERE content LIKE 'session end%'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(end, "session end: completed");

    let mut next = cline("TaskStart", &home, "taskStart", json!({"taskMetadata": {"taskId": "task-2"}}));
    next["taskId"] = json!("task-2");
    let run = hook(&home, "cline", &next).ok();
    let out = run.json();
    assert_eq!(out["cancel"], false);
    assert!(out["contextModification"].as_str().unwrap().contains("speed up search"), "{run}");
}

#[test]
fn cline_never_blocks_on_trae_mem_failures() {
    let home = Home::new();
    // Bad JSON, a payload with no event, a bad argument: each exits 0 with
    // an answer that lets Cline go on, and says why on stderr.
    for (args, stdin) in [
        (&["hook", "--client", "cline"][..], &b"{not json"[..]),
        (&["hook", "--client", "cline"], br#"{"taskId": "t"}"#),
        (&["hook", "--client=cline", "--no-such-flag"], b"{}"),
    ] {
        let run = home.run(args, Some(stdin)).code(0);
        assert_eq!(run.stdout.trim(), r#"{"cancel":false}"#, "{run}");
        assert!(run.stderr.contains("trae-mem") || run.stderr.contains("error"), "{run}");
    }
    // A broken config still records, and still exits 0 for Cline.
    home.write("work/trae-mem.toml", b"[capture\n");
    let run =
        hook(&home, "cline", &cline("UserPromptSubmit", &home, "userPromptSubmit", json!({"prompt": "p"}))).code(0);
    assert!(run.stderr.contains("default settings used"), "{run}");
    // Other clients keep exit 1 for trae-mem's own failure; an unknown client too.
    home.run(&["hook", "--client", "cursor"], Some(b"{not json")).code(1);
    home.run(&["hook", "--client", "nope"], Some(b"{}")).code(1);
}

#[test]
fn spooled_events_of_every_client_are_replayed_under_their_client() {
    let home = Home::new();
    // A locked database spools the event under its internal name; replay
    // must read the client's payload back the same way.
    std::fs::write(home.home().join("trae-mem.toml"), "[hook]\ndeadline_ms = 400\n").unwrap();
    let db = home.db();
    db.execute_batch("CREATE TABLE hold(x); BEGIN EXCLUSIVE; INSERT INTO hold VALUES (1);").unwrap();
    let shell = cursor("afterShellExecution", &home, json!({"command": "make", "output": "done"}));
    let run = hook(&home, "cursor", &shell).ok();
    assert!(run.stderr.contains("spooled"), "{run}");
    db.execute_batch("COMMIT").unwrap();
    drop(db);
    home.run(&["spool", "replay"], None).ok();
    let stored = rows(&home);
    assert_eq!(stored, vec![row("tool", Some("Shell"), "make\n→ done")]);
}
