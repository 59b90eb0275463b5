//! Plugins through `trae-mem hook` and `trae-mem plugins`: the four example
//! plugins end to end, hostile plugins contained, the compile cache, pins,
//! and config errors. The plugins are built by build.rs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Home, Run, fixtures};

/// A built plugin's wasm file.
pub fn wasm(name: &str) -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("plugins/target/wasm32-wasip2/release/{name}.wasm"));
    assert!(path.exists(), "{} is missing: build.rs builds the plugins (see its warnings)", path.display());
    path
}

/// Writes the project config with these `[[plugins]]` entries (TOML text).
fn declare(home: &Home, plugins: &str) {
    home.write("work/trae-mem.toml", plugins.as_bytes());
}

fn entry(name: &str, file: &str, role: &str, subscribe: &str, extra: &str) -> String {
    format!(
        "[[plugins]]\nname = \"{name}\"\npath = \"{}\"\nrole = \"{role}\"\n{subscribe}\n{extra}\n",
        wasm(file).display()
    )
}

/// The file-changed example, subscribed to FileChanged, with `extra` keys.
fn file_changed(extra: &str) -> String {
    entry("file-changed", "file_changed", "event-handler", "events = [\"FileChanged\"]", extra)
}

/// (kind, content, tags) of every observation.
fn rows(home: &Home) -> Vec<(String, String, Vec<String>)> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT kind, content, tags_json FROM observations ORDER BY id").unwrap();
    stmt.query_map([], |r| {
        let tags: String = r.get(2)?;
        Ok((r.get(0)?, r.get(1)?, serde_json::from_str(&tags).unwrap()))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn hook(home: &Home, args: &[&str], payload: Value) -> Run {
    let mut all = vec!["hook"];
    all.extend_from_slice(args);
    home.run(&all, Some(&serde_json::to_vec(&payload).unwrap()))
}

#[test]
fn file_changed_turns_the_real_event_into_a_tagged_note() {
    let home = Home::new();
    declare(&home, &file_changed(""));
    let payload = std::fs::read(fixtures().join("FileChanged.json")).unwrap();
    let run = home.run(&["hook"], Some(&payload)).ok();
    assert_eq!(run.stderr, "", "{run}");
    assert_eq!(
        rows(&home),
        vec![(
            "note".into(),
            "file changed: change /home/dev/src/watchers/notes.txt".into(),
            vec!["file:/home/dev/src/watchers/notes.txt".into(), "change:change".into()]
        )]
    );
}

#[test]
fn model_response_pulls_decisions_out_of_the_final_answer() {
    let home = Home::new();
    declare(&home, &entry("model-response", "model_response", "event-handler", "events = [\"ModelResponse\"]", ""));
    let answer = "Fixed the lock errors. The cause was a zero busy timeout. Decision: use WAL and BEGIN IMMEDIATE. Next step: add a lock-wait metric.";
    hook(
        &home,
        &[],
        json!({"session_id": "s", "cwd": "/p", "hook_event_name": "Stop", "last_assistant_message": answer}),
    )
    .ok();
    let stored = rows(&home);
    let kinds: Vec<&str> = stored.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(kinds, ["note", "response", "decision"], "{stored:#?}");
    assert_eq!(
        stored[2].1,
        "Conclusions:\n- Fixed the lock errors.\n- The cause was a zero busy timeout.\nDecisions:\n- Decision: use WAL and BEGIN IMMEDIATE.\nNext steps:\n- Next step: add a lock-wait metric."
    );
    // ModelResponse sent directly is handled too.
    hook(
        &home,
        &["--event", "ModelResponse"],
        json!({"session_id": "s", "cwd": "/p", "last_assistant_message": "Decision: keep it."}),
    )
    .ok();
    assert_eq!(rows(&home).last().unwrap().1, "Decisions:\n- Decision: keep it.");
}

#[test]
fn head_tail_sampler_keeps_the_edges_and_the_errors_of_a_large_output() {
    let home = Home::new();
    declare(
        &home,
        &entry(
            "sampler",
            "head_tail_sampler",
            "sampler",
            "tools = [\"*\"]",
            "[plugins.config]\nhead_lines = 3\ntail_lines = 2\n",
        ),
    );
    let mut lines: Vec<String> = (1..=5000).map(|i| format!("line {i} of the build log")).collect();
    lines[2500] = "error[E0308]: mismatched types in src/store/mod.rs".into();
    let stdout = lines.join("\n");
    hook(
        &home,
        &[],
        json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "cargo build"}, "tool_response": {"stdout": stdout, "stderr": ""}}),
    )
    .ok();
    let (kind, content, tags) = rows(&home).remove(0);
    assert_eq!(kind, "tool");
    assert_eq!(tags, ["sampled-by:sampler"]);
    assert_eq!(
        content,
        "cargo build\n→ line 1 of the build log\nline 2 of the build log\nline 3 of the build log\n… [2497 lines dropped] …\n\
         error[E0308]: mismatched types in src/store/mod.rs\n… [2497 lines dropped] …\nline 4999 of the build log\nline 5000 of the build log\n\
         [kept the first 3 and last 2 lines and alerts; dropped 4994 of 5000 lines]"
    );
    // A short output is not sampled.
    hook(
        &home,
        &[],
        json!({"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "ls"}, "tool_response": {"stdout": "a\nb", "stderr": ""}}),
    )
    .ok();
    assert_eq!(rows(&home)[1].2, Vec::<String>::new());
}

/// Declares the sectioned-summarizer example as the project's summarizer.
fn declare_the_sectioned_summarizer(home: &Home) {
    declare(
        home,
        &format!(
            "[summarize]\nsummarizer = \"sections\"\n{}",
            entry("sections", "sectioned_summarizer", "summarizer", "", "")
        ),
    );
}

#[test]
fn the_sectioned_summarizer_replaces_the_built_in_one() {
    let home = Home::new();
    declare_the_sectioned_summarizer(&home);
    let sid = json!("s");
    for payload in [
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "Make the import survive a busy database"}),
        json!({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101"}),
        json!({"hook_event_name": "Stop", "last_assistant_message": "Switched to BEGIN IMMEDIATE. Next: measure lock waits."}),
        json!({"hook_event_name": "SessionEnd", "reason": "exit"}),
    ] {
        let mut p = payload;
        p["session_id"] = sid.clone();
        p["cwd"] = json!("/p");
        hook(&home, &[], p).ok();
    }
    let brief: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap();
    assert_eq!(
        brief,
        "Goal: Make the import survive a busy database\nDone: Switched to BEGIN IMMEDIATE. Next: measure lock waits.\n\
         Open problems: Bash: ✗ Exit code 101\nNext steps: measure lock waits"
    );
}

#[test]
fn a_session_the_sectioned_summarizer_wrote_is_told_and_folded_as_a_built_in_one_is() {
    let home = Home::new();
    declare_the_sectioned_summarizer(&home);
    let run = |sid: &str, payload: Value| -> Run {
        let mut p = payload;
        p["session_id"] = json!(sid);
        p["cwd"] = json!("/p");
        // As Claude Code sends it, so that it answers as to Claude Code.
        p["transcript_path"] = json!(format!("/home/dev/.claude/projects/x/{sid}.jsonl"));
        hook(&home, &[], p).ok()
    };
    const FIX: &str = "Switched the importer to BEGIN IMMEDIATE with a five second busy timeout.";
    run("fix", json!({"hook_event_name": "UserPromptSubmit", "prompt": "Make the import survive a busy database"}));
    run(
        "fix",
        json!({"hook_event_name": "PostToolUse", "tool_name": "Edit", "tool_use_id": "t1",
               "tool_input": {"file_path": "src/import.rs", "old_string": "BEGIN", "new_string": "BEGIN IMMEDIATE"},
               "tool_response": {"filePath": "src/import.rs"}}),
    );
    run("fix", json!({"hook_event_name": "Stop", "last_assistant_message": FIX}));
    run("fix", json!({"hook_event_name": "SessionEnd", "reason": "exit"}));
    const ASKED: &str = "What did we do about the import and the busy database last time?";
    run("asked", json!({"hook_event_name": "UserPromptSubmit", "prompt": ASKED}));
    run(
        "asked",
        json!({"hook_event_name": "Stop", "last_assistant_message": "Memory says the import and the busy database were handled."}),
    );
    run("asked", json!({"hook_event_name": "SessionEnd", "reason": "exit"}));
    // The plugin wrote both sessions' summaries, in its own sections.
    let briefs: Vec<String> = home
        .db()
        .prepare("SELECT content FROM summaries WHERE level = 'brief' ORDER BY session_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(briefs.len(), 2);
    assert!(briefs.iter().all(|b| b.starts_with("Goal: ")), "{briefs:?}");

    // Session start tells the fix, and folds the session that only asked memory.
    let start = run("next", json!({"hook_event_name": "SessionStart", "source": "startup"})).json();
    let context = start["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(context.contains(FIX), "{context}");
    assert!(context.contains(&format!("Also 1 session that only talked: “{ASKED}”")), "{context}");

    // A prompt about it is told what was asked and concluded, from the
    // session's facts, and not the session that only asked memory.
    let prompt = json!({"hook_event_name": "UserPromptSubmit",
                        "prompt": "How did we make the import survive a busy database?"});
    let memory = run("next", prompt).json();
    let memory = memory["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(
        memory.contains("Asked: Make the import survive a busy database")
            && memory.contains(&format!("Concluded: {FIX}")),
        "{memory}"
    );
    assert!(!memory.contains("Memory says"), "the session that only asked memory is not told:\n{memory}");
}

/// Declares the hostile plugin for the event "Hostile" in `mode`.
fn hostile(home: &Home, mode: &str, extra: &str) {
    let limits = "[plugins.limits]\ntimeout_ms = 300\nmemory_mb = 32\nmax_output_bytes = 100000\n";
    declare(
        home,
        &entry(
            "hostile",
            "hostile",
            "event-handler",
            "events = [\"Hostile\"]",
            &format!("{limits}{extra}[plugins.config]\nmode = \"{mode}\"\n"),
        ),
    );
}

/// Runs the Hostile event and checks that the host held: exit 0, the event
/// recorded as the built-in note, a warning on stderr and in the log.
fn contained(mode: &str, expected: &str) {
    contained_within(mode, expected, Duration::from_secs(3));
}

/// `contained`, with the plugin compiled beforehand, so that the hook ends
/// on the plugin's 300 ms limit, well before its own 3 s deadline (the
/// bound leaves a loaded machine slack, and still fails a host that let
/// the plugin run on to the deadline); and a plain hook after it finds
/// nothing spooled to store again.
fn contained_in_time(mode: &str, expected: &str) {
    let home = contained_within(mode, expected, Duration::from_millis(2000));
    hook(&home, &[], json!({"session_id": "s", "cwd": "/p", "hook_event_name": "UserPromptSubmit", "prompt": "next"}))
        .ok();
    let stored: Vec<String> = rows(&home).into_iter().map(|r| r.1).collect();
    assert_eq!(stored, ["Hostile detail=still recorded", "next"], "{mode}: each event stored once");
    let listing = home.run(&["spool", "list", "--json"], None).ok().json();
    assert_eq!(listing["pending"], json!([]), "{mode}: nothing spooled");
}

fn contained_within(mode: &str, expected: &str, limit: Duration) -> Home {
    let home = Home::new();
    hostile(&home, mode, "");
    home.run(&["plugins", "check"], None).ok();
    let started = Instant::now();
    let run =
        hook(&home, &["--event", "Hostile"], json!({"session_id": "s", "cwd": "/p", "detail": "still recorded"})).ok();
    assert!(started.elapsed() < limit, "{mode}: took {:?}, over {limit:?}", started.elapsed());
    assert!(
        run.stderr.contains("plugin hostile") && run.stderr.contains(expected),
        "{mode}: expected {expected:?}\n{run}"
    );
    let stored = rows(&home);
    assert_eq!(stored.len(), 1, "{mode}: {stored:#?}");
    assert_eq!(stored[0].1, "Hostile detail=still recorded", "{mode}: the built-in note stands");
    let log = std::fs::read_to_string(home.home().join("logs/plugins.log")).unwrap();
    assert!(log.contains(expected), "{mode}: the log says why\n{log}");
    home
}

#[test]
fn a_plugin_blocked_in_a_wasi_call_is_stopped_at_its_time_limit() {
    contained_in_time("sleep", "took longer than its limit of 300 ms");
    contained_in_time("poll-loop", "took longer than its limit of 300 ms");
    contained_in_time("loop", "took longer than its limit of 300 ms");
}

#[test]
fn a_plugin_that_floods_its_output_or_returns_too_many_observations_is_stopped() {
    contained_in_time("quiet-flood", "wrote more than 64 KB to its stdout");
    contained_in_time("many", "returned 1000 observations, more than its limits.max_observations of 100");
}

#[test]
fn an_endless_loop_is_stopped_at_its_deadline() {
    contained("loop", "took longer than its limit of 300 ms");
}

#[test]
fn a_memory_bomb_is_stopped_at_its_limit() {
    contained("grow", "more than its limit of 32 MB of memory");
}

#[test]
fn traps_and_panics_are_contained() {
    contained("trap", "crashed (trap)");
    contained("panic", "crashed (trap)");
}

#[test]
fn a_flood_of_output_is_refused() {
    // 100 MB cannot even be built inside a 32 MB plugin.
    contained("flood", "more than its limit of 32 MB of memory");
    contained("chatter", "wrote more than 64 KB to its stdout");
    contained("bad-output", "empty kind or content");
}

#[test]
fn a_plugin_cannot_read_host_files_unless_granted() {
    let home = Home::new();
    let secret_dir = home.write("granted/notes.txt", b"granted content").parent().unwrap().to_path_buf();
    let outside = home.write("outside/secret.txt", b"top secret host file");
    hostile(&home, "read-file", "");
    home.write(
        "work/trae-mem.toml",
        std::fs::read_to_string(home.work().join("trae-mem.toml"))
            .unwrap()
            .replace("mode = \"read-file\"", &format!("mode = \"read-file\"\npath = \"{}\"", outside.display()))
            .as_bytes(),
    );
    hook(&home, &["--event", "Hostile"], json!({"session_id": "s", "cwd": "/p"})).ok();
    let content = rows(&home).remove(0).1;
    assert!(content.starts_with(&format!("denied {}", outside.display())), "{content}");
    assert!(!content.contains("top secret"), "{content}");

    // With a grant, it reads that directory, and only that one.
    let home = Home::new();
    let granted = home.write("granted/notes.txt", b"granted content");
    let _ = secret_dir;
    hostile(
        &home,
        "read-file",
        &format!("[plugins.grants]\nread_only_paths = [\"{}\"]\n", granted.parent().unwrap().display()),
    );
    let text = std::fs::read_to_string(home.work().join("trae-mem.toml"))
        .unwrap()
        .replace("mode = \"read-file\"", &format!("mode = \"read-file\"\npath = \"{}\"", granted.display()));
    home.write("work/trae-mem.toml", text.as_bytes());
    hook(&home, &["--event", "Hostile"], json!({"session_id": "s", "cwd": "/p"})).ok();
    assert_eq!(rows(&home).remove(0).1, format!("read {}: granted content", granted.display()));
}

#[test]
fn a_plugin_cannot_read_the_environment() {
    let home = Home::new();
    hostile(&home, "read-env", "");
    let payload = serde_json::to_vec(&json!({"session_id": "s", "cwd": "/p"})).unwrap();
    home.run_env(&["hook", "--event", "Hostile"], &[("TRAE_MEM_CANARY", "canary-value-42")], Some(&payload)).ok();
    assert_eq!(rows(&home).remove(0).1, "env: []");
}

#[test]
fn plugins_are_compiled_once_cached_and_rebuilt_when_damaged() {
    let home = Home::new();
    declare(&home, &file_changed(""));
    let listed = home.run(&["plugins", "list", "--json"], None).ok().json();
    assert_eq!(listed[0]["cached"], false);
    assert_eq!(listed[0]["role"], "event-handler");
    assert_eq!(home.run(&["plugins", "check", "--json"], None).ok().json()[0]["source"], "compiled");
    assert_eq!(home.run(&["plugins", "list", "--json"], None).ok().json()[0]["cached"], true);
    assert_eq!(home.run(&["plugins", "check", "--json"], None).ok().json()[0]["source"], "cached");

    let cache = home.home().join("cache/plugins");
    let artifact = std::fs::read_dir(&cache).unwrap().next().unwrap().unwrap().path();
    assert!(artifact.to_string_lossy().ends_with(".cwasm"));
    std::fs::write(&artifact, b"not a compiled component at all").unwrap();
    assert_eq!(home.run(&["plugins", "check", "--json"], None).ok().json()[0]["source"], "rebuilt");
    assert_eq!(home.run(&["plugins", "check", "--json"], None).ok().json()[0]["source"], "cached");
    // And the hook still works with it.
    home.run(&["hook"], Some(&std::fs::read(fixtures().join("FileChanged.json")).unwrap())).ok();
    assert!(rows(&home)[0].1.starts_with("file changed:"));
}

#[test]
fn a_sha256_pin_that_does_not_match_refuses_the_plugin() {
    let home = Home::new();
    let wrong = "0".repeat(64);
    declare(&home, &file_changed(&format!("sha256 = \"{wrong}\"")));
    let run = home.run(&["plugins", "check"], None).code(1);
    assert!(run.stdout.contains("refusing to load it"), "{run}");
    // A hook falls back to the built-in note and says why.
    let run = home.run(&["hook"], Some(&std::fs::read(fixtures().join("FileChanged.json")).unwrap())).ok();
    assert!(run.stderr.contains("not the pinned"), "{run}");
    assert!(rows(&home)[0].1.starts_with("FileChanged "), "{:?}", rows(&home));

    // The right pin loads.
    let right = trae_mem::plugins::cache::sha256_hex(&std::fs::read(wasm("file_changed")).unwrap());
    declare(&home, &file_changed(&format!("sha256 = \"{right}\"")));
    home.run(&["plugins", "check"], None).ok();
}

#[test]
fn config_errors_name_the_file_the_key_and_what_is_allowed() {
    let home = Home::new();
    declare(&home, &format!("{}timeout = 5\n", entry("a", "file_changed", "event-handler", "events = [\"X\"]", "")));
    let run = home.run(&["plugins", "list"], None).code(1);
    assert!(
        run.stderr.contains("trae-mem.toml")
            && run.stderr.contains("unknown field `timeout`")
            && run.stderr.contains("limits"),
        "{run}"
    );

    declare(&home, "[summarize]\nsummarizer = \"missing\"\n");
    let run = home.run(&["plugins", "list"], None).code(1);
    assert!(run.stderr.contains("summarizer = \"missing\"") && run.stderr.contains("builtin"), "{run}");

    declare(&home, &entry("a", "file_changed", "sampler", "", ""));
    let run = home.run(&["plugins", "check"], None).code(1);
    assert!(run.stderr.contains("a sampler needs `tools`"), "{run}");

    declare(&home, "[[plugins]]\nname = \"a\"\npath = \"a.wasm\"\nrole = \"filter\"\nevents = [\"X\"]\n");
    let run = home.run(&["plugins", "list"], None).code(1);
    assert!(run.stderr.contains("unknown variant `filter`") && run.stderr.contains("event-handler"), "{run}");
}

#[test]
fn a_missing_plugin_is_named_and_the_event_still_recorded() {
    let home = Home::new();
    declare(
        &home,
        "[[plugins]]\nname = \"gone\"\npath = \"nowhere/gone.wasm\"\nrole = \"event-handler\"\nevents = [\"FileChanged\"]\n",
    );
    let run = home.run(&["hook"], Some(&std::fs::read(fixtures().join("FileChanged.json")).unwrap())).ok();
    assert!(run.stderr.contains("plugin gone") && run.stderr.contains("nowhere/gone.wasm"), "{run}");
    assert_eq!(rows(&home).len(), 1);
}

#[test]
fn plugins_run_tries_one_plugin_on_a_payload() {
    let home = Home::new();
    declare(&home, &file_changed(""));
    let payload = std::fs::read(fixtures().join("FileChanged.json")).unwrap();
    let out = home.run(&["plugins", "run", "file-changed", "--event", "FileChanged"], Some(&payload)).ok().json();
    assert_eq!(out[0]["content"], "file changed: change /home/dev/src/watchers/notes.txt");
    home.run(&["plugins", "run", "nope"], Some(b"{}")).code(1);
}

/// A component that claims a version of the plugin interface this host does
/// not know is refused before it is instantiated, with the versions it does
/// know; a hook for its event still records the plain note.
#[test]
fn a_plugin_built_for_a_future_interface_version_is_refused_by_name() {
    let home = Home::new();
    let component = wat::parse_str(r#"(component (import "trae-mem:plugin/host@0.9.0" (instance)))"#).unwrap();
    let path = home.write("future.wasm", &component);
    declare(
        &home,
        &format!(
            "[[plugins]]\nname = \"future\"\npath = \"{}\"\nrole = \"event-handler\"\nevents = [\"Future\"]\n",
            path.display()
        ),
    );
    let expected = "plugin future: built against trae-mem:plugin@0.9.0, but this trae-mem supports \
                    trae-mem:plugin@0.1.0, @0.2.0; rebuild the plugin against one of those, or upgrade trae-mem";
    let check = home.run(&["plugins", "check"], None).code(1);
    assert!(check.stdout.contains(expected) || check.stderr.contains(expected), "{check}");
    let run = hook(&home, &["--event", "Future"], json!({"session_id": "s", "cwd": "/p", "detail": "kept"})).ok();
    assert!(run.stderr.contains(expected), "{run}");
    assert_eq!(rows(&home)[0].1, "Future detail=kept");
}

/// Replays the demo's two recorded sessions (one English, one Chinese)
/// through the hook, with the model-response plugin and `summarizer`
/// declared, and returns each session's (brief, detailed) summaries.
fn summaries_of_the_demo_sessions(summarizer: &str) -> Vec<(String, String)> {
    let home = Home::new();
    let sectioned = entry("sectioned-summarizer", "sectioned_summarizer", "summarizer", "", "");
    let responses = entry("model-response", "model_response", "event-handler", "events = [\"ModelResponse\"]", "");
    declare(&home, &format!("[summarize]\nsummarizer = \"{summarizer}\"\n{responses}\n{sectioned}"));
    let recorded =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/demo/inventory-api.jsonl"))
            .unwrap();
    for line in recorded.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        hook(&home, &["--event", line["event"].as_str().unwrap()], line["payload"].clone()).ok();
    }
    let db = home.db();
    let mut stmt = db
        .prepare(
            "SELECT b.content, d.content FROM summaries b JOIN summaries d USING (session_id)
             JOIN sessions s ON s.id = b.session_id
             WHERE b.level = 'brief' AND d.level = 'detailed' ORDER BY s.started_at",
        )
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

/// What no summary a person would write contains: a heading with nothing
/// after it, a tool's raw JSON input, a label said twice, a file name cut
/// at its dot.
fn assert_reads_well(summary: &str) {
    for line in summary.lines() {
        assert!(!(line.starts_with("- ") && line.ends_with([':', '：'])), "an empty bullet {line:?} in:\n{summary}");
    }
    assert!(!summary.contains("{\""), "raw JSON in:\n{summary}");
    for doubled in ["Next steps: Next", "下一步: 下一步", "Done: Done", "已完成: 已完成", "Concluded: Conclusions"]
    {
        assert!(!summary.contains(doubled), "{doubled:?} in:\n{summary}");
    }
    for file in ["src/api/stock", "src/db/pool"] {
        assert_eq!(
            summary.matches(file).count(),
            summary.matches(&format!("{file}.rs")).count(),
            "{file}.rs cut at its dot in:\n{summary}"
        );
    }
}

#[test]
fn the_sectioned_summarizer_writes_as_a_person_would_in_english_and_chinese() {
    let sessions = summaries_of_the_demo_sessions("sectioned-summarizer");
    let [(en_brief, en_detailed), (zh_brief, zh_detailed)] = &sessions[..] else { panic!("{sessions:#?}") };
    for summary in [en_brief, en_detailed, zh_brief, zh_detailed] {
        assert_reads_well(summary);
    }
    assert_eq!(
        en_brief,
        "Goal: The nightly import fails with `database is locked` when the API is busy. Find out why and fix it.\n\
         Done: Fixed the `database is locked` failures. Cause: the pool set busy_timeout to zero and the importer used deferred \
         transactions, so a read that upgraded to a write failed at once when the API held the lock. Decision: WAL mode plus a 5 s \
         busy timeout in src/db/pool.rs, and BEGIN IM…\n\
         Open problems: none\n\
         Next steps: add a metric for lock waits"
    );
    // Tools are named by what they did, files relative to the project.
    assert!(en_detailed.contains("\n- Edit: src/db/pool.rs\n"), "{en_detailed}");
    assert!(en_detailed.contains("\n- Bash: cargo test import::concurrent\n"), "{en_detailed}");
    assert_eq!(
        zh_brief,
        "目标: 商品详情接口太慢了，给库存查询加一层缓存，缓存失效时间设为 30 秒。\n\
         已完成: 库存查询加了 30 秒的内存缓存（src/api/stock.rs），热路径从 4.9 ms 降到 42 µs。 决定：缓存按商品 ID 分片，写库存时主动失效。 \
         Read: src/api/stock.rs; Edit: src/api/stock.rs; Bash: cargo bench --bench stock\n\
         未解决: 无\n\
         下一步: 在仪表盘上显示缓存命中率"
    );
    assert!(zh_detailed.starts_with("目标: 商品详情接口太慢了"), "{zh_detailed}");
}

#[test]
fn the_built_in_summarizer_reads_model_response_decisions_as_conclusions() {
    let sessions = summaries_of_the_demo_sessions("builtin");
    let [(en_brief, en_detailed), (zh_brief, zh_detailed)] = &sessions[..] else { panic!("{sessions:#?}") };
    for summary in [en_brief, en_detailed, zh_brief, zh_detailed] {
        assert_reads_well(summary);
    }
    // The brief concludes with the answer itself, not a heading.
    assert!(en_brief.contains("\nConcluded: Fixed the `database is locked` failures. Cause:"), "{en_brief}");
    assert!(en_detailed.contains("\n- Next step: add a metric for lock waits.\n"), "{en_detailed}");
    assert!(zh_brief.starts_with("用户请求: 商品详情接口太慢了"), "{zh_brief}");
    assert!(zh_brief.contains("\n结论与决定: 已完成：库存查询加了 30 秒的内存缓存（src/api/stock.rs）"), "{zh_brief}");
    assert!(zh_detailed.contains("\n- 决定：缓存按商品 ID 分片，写库存时主动失效。\n"), "{zh_detailed}");
}

#[test]
fn plugins_check_names_the_build_of_an_example_plugin_that_is_not_built() {
    let home = Home::new();
    let clone = crate::demo::unbuilt_clone(&home);
    let run = home.run(&["plugins", "check"], None).code(1);
    let fails: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 4, "{run}");
    let build = crate::demo::build_command(&clone);
    for fail in fails {
        assert!(fail.contains(&format!("it is not built; build it with `{build}`")), "{fail}");
    }
    // A wasm that is not a cargo build's output has no build to name.
    declare(&home, "[[plugins]]\nname = \"lost\"\npath = \"lost.wasm\"\nrole = \"sampler\"\ntools = [\"*\"]\n");
    let run = home.run(&["plugins", "check"], None).code(1);
    assert!(run.stdout.contains("cannot read") && !run.stdout.contains("build it"), "{run}");
}
