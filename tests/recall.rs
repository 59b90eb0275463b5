//! Recall driven as clients and people use it: questions asked in English
//! and Chinese, pasted identifiers and paths, the next session told about
//! every earlier one, and each prompt given the memories relevant to it.

use serde_json::{Value, json};

use crate::util::{Home, Run, claude_code_hook as hook};

/// Records a session as Claude Code sends it: start, a prompt, a Bash call
/// with its output, the answer, and (when `end`) SessionEnd.
fn session(home: &Home, sid: &str, prompt: &str, output: &str, answer: &str, end: bool) {
    hook(home, sid, "SessionStart", json!({"source": "startup"})).ok();
    self::prompt(home, sid, prompt);
    hook(
        home,
        sid,
        "PostToolUse",
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": output}}),
    )
    .ok();
    hook(home, sid, "Stop", json!({"last_assistant_message": answer})).ok();
    if end {
        hook(home, sid, "SessionEnd", json!({"reason": "logout"})).ok();
    }
}

/// Runs UserPromptSubmit with `prompt` in session `sid`.
fn prompt(home: &Home, sid: &str, prompt: &str) -> Run {
    hook(home, sid, "UserPromptSubmit", json!({"prompt": prompt})).ok()
}

fn search(home: &Home, query: &str) -> Value {
    home.run(&["search", "--json", "--", query], None).ok().json()
}

fn hits(out: &Value) -> &Vec<Value> {
    out["hits"].as_array().unwrap()
}

/// The first hit's snippet, without the match marks.
fn first_snippet(out: &Value) -> String {
    hits(out).first().unwrap_or_else(|| panic!("no hits: {out}"))["snippet"].as_str().unwrap().replace(['«', '»'], "")
}

/// What a hook told the client: its `additionalContext`, if anything.
fn context(run: &Run) -> Option<String> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    Some(run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned())
}

/// Three sessions of a project: a crash fixed, a slow import fixed (in
/// Chinese), and something unrelated.
fn project_history() -> Home {
    let home = Home::new();
    session(
        &home,
        "crash",
        "The loader dies on startup for new users",
        "thread 'main' panicked at src/config/load.rs:88:14: called parse_config() on an empty file",
        "Fixed a panic when the config file is missing: load() now falls back to defaults.",
        true,
    );
    session(
        &home,
        "import",
        "每天晚上的批量导入总是超过时间限制",
        "导入 50000 行用了 412 秒",
        "把批量导入改成每批五百行提交一次以后，就不再超过时间限制了。",
        true,
    );
    session(&home, "docs", "Polish the README wording", "ok", "Reworded the install section.", true);
    home
}

#[test]
fn a_question_finds_the_memory_that_answers_it_without_sharing_its_phrases() {
    let home = project_history();
    // No two words in a row in common with the answer; crash/panic,
    // configuration/config and absent/missing are different words.
    let out = search(&home, "how did we fix the crash when the configuration file was absent?");
    assert_eq!(
        first_snippet(&out),
        "Fixed a panic when the config file is missing: load() now falls back to defaults.",
        "{out}"
    );
    // Each term, as the form found: a synonym stands for its term.
    assert_eq!(hits(&out)[0]["matched"], json!(["fix", "panic", "config", "file", "missing"]), "{out}");
    // "why did last time's batch import time out?", asked in Chinese: the
    // memory says 超过时间限制 (went over the time limit), never 超时.
    let out = search(&home, "上次批量导入为什么会超时");
    assert!(first_snippet(&out).contains("批量导入"), "{out}");
    assert!(first_snippet(&out).contains("超过时间限制"), "{out}");
    // Every hit from the import's session comes before any other session's.
    let sessions: Vec<&str> = hits(&out).iter().map(|h| h["session_id"].as_str().unwrap()).collect();
    let others = sessions.iter().position(|s| *s != sessions[0]).unwrap_or(sessions.len());
    assert!(sessions[others..].iter().all(|s| *s != sessions[0]), "{out}");
}

#[test]
fn pasted_identifiers_and_paths_lose_their_decoration_and_phrases_stay_exact() {
    let home = project_history();
    for query in ["`parse_config()`", "parse_config", "src/config/load.rs:88", "'src/config/load.rs:88:14',"] {
        let out = search(&home, query);
        assert!(
            first_snippet(&out).contains("load.rs:88:14: called parse_config() on an empty file"),
            "{query}: {out}"
        );
        assert_eq!(hits(&out)[0]["kind"], "tool", "{query}: {out}");
    }
    // Quoted text must appear as written, words in that order.
    let out = search(&home, "\"empty file\"");
    assert!(!hits(&out).is_empty(), "{out}");
    assert!(hits(&out).iter().all(|h| h["snippet"].as_str().unwrap().contains("«empty file»")), "{out}");
    assert_eq!(hits(&search(&home, "\"file empty\"")).len(), 0);
    assert_eq!(hits(&search(&home, "panic \"file empty\"")).len(), 0);
}

#[test]
fn summaries_are_hits_of_their_own_kind_linked_to_their_session() {
    let home = project_history();
    let out = search(&home, "README install section");
    let summary = hits(&out).iter().find(|h| h["kind"] == "summary").unwrap_or_else(|| panic!("{out}"));
    assert!(summary["id"].is_null(), "{out}");
    assert!(["brief", "detailed"].contains(&summary["level"].as_str().unwrap()), "{out}");
    let session = summary["session_id"].as_str().unwrap();
    let shown = home.run(&["show", session, "--json"], None).ok().json();
    assert!(shown["observations"].to_string().contains("Polish the README wording"), "{shown}");
    // --kind narrows to summaries, and --tool leaves them out.
    let only = home.run(&["search", "--json", "--kind", "summary", "README"], None).ok().json();
    assert!(!hits(&only).is_empty() && hits(&only).iter().all(|h| h["kind"] == "summary"), "{only}");
    let tools = home.run(&["search", "--json", "--tool", "Bash", "README"], None).ok().json();
    assert!(hits(&tools).iter().all(|h| h["kind"] != "summary"), "{tools}");
}

#[test]
fn a_session_that_never_ended_is_told_to_the_next_one() {
    let home = Home::new();
    session(&home, "left-open", "Add retries to the uploader", "3 passed", "Retries added with backoff.", false);
    let told = context(&hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok())
        .expect("the next session is told about the one that never ended");
    assert!(told.contains("Add retries to the uploader"), "{told}");
    assert!(told.contains("Retries added with backoff."), "{told}");
    assert!(told.contains("still open or ended without a SessionEnd"), "{told}");
    // Its summary was written on the way, so it is searchable too.
    let out = search(&home, "uploader retries");
    assert!(hits(&out).iter().any(|h| h["kind"] == "summary"), "{out}");
}

#[test]
fn a_resumed_session_is_told_with_what_it_did_after_resuming() {
    let home = Home::new();
    session(&home, "resumed", "Rename the --fast flag", "ok", "Renamed it to --quick.", true);
    hook(&home, "resumed", "SessionStart", json!({"source": "resume"})).ok();
    prompt(&home, "resumed", "Also update the changelog for the rename");
    hook(&home, "resumed", "Stop", json!({"last_assistant_message": "Changelog updated."})).ok();

    let told = context(&hook(&home, "next", "SessionStart", json!({"source": "startup"})).ok()).unwrap();
    // The summary was brought up to date: it has what came after resuming.
    assert!(told.contains("Rename the --fast flag"), "{told}");
    assert!(told.contains("Also update the changelog for the rename"), "{told}");
    assert!(told.contains("Changelog updated."), "{told}");
    assert!(told.contains("still open or ended without a SessionEnd"), "{told}");
    // Once it ends again, it is told as ended.
    hook(&home, "resumed", "SessionEnd", json!({"reason": "logout"})).ok();
    let told = context(&hook(&home, "third", "SessionStart", json!({"source": "startup"})).ok()).unwrap();
    assert!(told.contains("Changelog updated."), "{told}");
    assert!(!told.contains("still open"), "{told}");
}

#[test]
fn a_prompt_brings_back_relevant_memory_and_stays_silent_otherwise() {
    let home = project_history();
    hook(&home, "private", "SessionStart", json!({"source": "startup"})).ok();
    prompt(&home, "private", "<private>the loader crash password is hunter2</private>");
    hook(&home, "now", "SessionStart", json!({"source": "startup"})).ok();

    let run = prompt(&home, "now", "the loader crashes again when the config file is gone");
    let told = context(&run).expect("a relevant memory comes with the prompt");
    assert_eq!(run.json()["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert!(told.contains("Fixed a panic when the config file is missing"), "{told}");
    assert!(told.chars().count() <= 1500, "{told}");
    // Never private rows, never the asking session's own prompt.
    assert!(!told.contains("hunter2") && !told.contains("[PRIVATE]"), "{told}");
    assert!(!told.contains("crashes again"), "{told}");
    assert!(told.lines().filter(|l| l.starts_with("- ")).count() <= 3, "{told}");

    // Nothing in memory is about this: nothing is said.
    let run = prompt(&home, "now", "draw a unicorn in ascii art");
    assert_eq!(context(&run), None, "{run}");

    // And it can be turned off.
    std::fs::write(home.home().join("trae-mem.toml"), "[context]\non_prompt = false\n").unwrap();
    let run = prompt(&home, "now", "the loader crashes again when the config file is gone");
    assert_eq!(context(&run), None, "{run}");
}

#[test]
fn sessions_without_a_summary_do_not_crowd_out_the_memories_of_a_prompt() {
    let home = project_history();
    // More sessions than a prompt's recall reads, each started with a
    // prompt and never ended (so never summarized).
    for n in 0..110 {
        prompt(&home, &format!("open-{n}"), &format!("say hello number {n}"));
    }
    let run = prompt(&home, "now", "the loader crashes again when the config file is gone");
    let told = context(&run).expect("the summarized sessions are still read");
    assert!(told.contains("Fixed a panic when the config file is missing"), "{told}");
}

#[test]
fn private_rows_never_come_back_from_search() {
    let home = Home::new();
    hook(&home, "p", "SessionStart", json!({"source": "startup"})).ok();
    prompt(&home, "p", "<private>vault code 4711 for the uploader</private>");
    prompt(&home, "p", "deploy the uploader to <private>staging-42</private> tonight");
    hook(&home, "p", "SessionEnd", json!({"reason": "logout"})).ok();
    for query in ["vault", "4711", "staging-42", "PRIVATE", "uploader vault code"] {
        let out = search(&home, query);
        let found = out["hits"].to_string();
        assert!(!found.contains("4711") && !found.contains("staging-42"), "{query}: {out}");
        assert!(hits(&out).iter().all(|h| !h["snippet"].as_str().unwrap().contains("vault")), "{query}: {out}");
    }
    assert!(!hits(&search(&home, "uploader tonight")).is_empty());
}

/// The README's first command: the demo replays recorded sessions, then
/// searches them and shows a hit's timeline (a summary hit, which has no
/// id, must not stop it); kept, its home is there to explore.
#[test]
fn the_demo_recalls_what_it_replayed() {
    let home = Home::new();
    let tmp = home.home().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let run = home.run_env(&["demo", "--keep"], &[("TMPDIR", tmp.to_str().unwrap())], None).ok();
    assert!(run.stdout.contains("== Explore it yourself"), "{run}");
    assert!(run.stdout.contains("# Memory from earlier sessions in this project (trae-mem)"), "{run}");
    // Every session it leaves behind recorded something: telling what the
    // next session would be told started none.
    let demo_home = run.stdout.split("hook events into ").nth(1).and_then(|r| r.lines().next()).unwrap().trim();
    let sessions = home.run(&["--home", demo_home, "sessions", "--json"], None).ok().json();
    let empty: Vec<_> = sessions.as_array().unwrap().iter().filter(|s| s["observations"] == 0).collect();
    assert!(empty.is_empty(), "{empty:?}");
    assert!(run.stdout.contains("database"), "{run}");
    // The commands it ends with run as printed, with nothing installed on PATH.
    let explore = run.stdout.split("== Explore it yourself").nth(1).unwrap();
    let search = explore.lines().find(|l| l.contains(" search ")).unwrap_or_else(|| panic!("{run}"));
    let mut shell = std::process::Command::new("sh");
    shell.args(["-c", search.trim()]).env("PATH", "/usr/bin:/bin");
    let again = crate::util::run_command(shell, &["sh", "-c", search.trim()], None);
    assert_eq!(again.code, 0, "{again}");
    assert!(again.stdout.contains("busy"), "{again}");
}
