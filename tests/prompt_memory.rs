//! Memory that reaches the agent unasked, by meaning as well as by words:
//! a prompt that asks about earlier work in other words (or in another
//! language) is told that work, and an unrelated prompt is told nothing.
//! Driven through the hook
//! binary as Claude Code drives it.

use serde_json::{Value, json};

use crate::util::{Home, claude_code_hook as hook};

/// The fix the paraphrases ask about, as its session stated it.
const FIX_ASKED: &str = "The program dies at start when the settings file is missing. Fix it.";
const FIX_CONCLUDED: &str =
    "Fixed: load_settings now falls back to the defaults when settings.toml is absent, instead of aborting at launch.";

/// One task a session, as an agent works: the prompt, a tool call, the answer.
const OTHER_WORK: &[(&str, &str)] = &[
    ("Add a --json flag to the export command.", "Done: `export --json` prints one JSON object per line."),
    (
        "The CSV export writes dates in the local format; switch it to ISO 8601.",
        "Done: the CSV export writes dates as ISO 8601, like 2026-12-05.",
    ),
    ("Bump tokio to 1.40 and run the test suite.", "Bumped tokio to 1.40; all 214 tests pass."),
    (
        "The search results page is slow with ten thousand rows, paginate it.",
        "Paginated the search page at 50 rows a page; it renders in 40 ms now.",
    ),
    ("Rename the usr module to users everywhere.", "Renamed the module; imports were updated in 12 files."),
    ("Write a README section on installing with Homebrew.", "Added an 'Install with Homebrew' section to README.md."),
    (
        "tests/upload.rs fails now and then on CI, find out why.",
        "The test raced the upload thread; it now waits on the completion channel, and passed 500 runs in a row.",
    ),
    (
        "Cache the results of the inventory query for five minutes.",
        "Done: inventory query results are cached in Redis with a 300 second TTL.",
    ),
    ("Log the request id on every error line.", "Every error line now carries the request_id field."),
    (
        "Draw the monthly revenue chart with a logarithmic axis.",
        "The revenue chart now uses a log scale on its y axis, with ticks at powers of ten.",
    ),
];

/// A session of one task: its prompt, a read of `file`, and its answer.
fn session(home: &Home, sid: &str, asked: &str, file: &str, concluded: &str) {
    hook(home, sid, "UserPromptSubmit", json!({"prompt": asked})).ok();
    hook(
        home,
        sid,
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": format!("{sid}-read"), "tool_input": {"file_path": file},
               "tool_response": {"file": {"filePath": file, "content": "fn main() {}\n"}}}),
    )
    .ok();
    hook(home, sid, "Stop", json!({"last_assistant_message": concluded})).ok();
    hook(home, sid, "SessionEnd", json!({"reason": "exit"})).ok();
}

/// A project of eleven one-task sessions, one of them the fix, every
/// memory given its vector (as the hooks' background embed gives it).
fn project_with_the_fix() -> Home {
    let home = Home::new();
    for (i, (asked, concluded)) in OTHER_WORK.iter().enumerate().take(5) {
        session(&home, &format!("work-{i}"), asked, &format!("src/part{i}.rs"), concluded);
    }
    session(&home, "the-fix", FIX_ASKED, "src/settings.rs", FIX_CONCLUDED);
    for (i, (asked, concluded)) in OTHER_WORK.iter().enumerate().skip(5) {
        session(&home, &format!("work-{i}"), asked, &format!("src/part{i}.rs"), concluded);
    }
    home.settle();
    home
}

/// What a prompt of a new session is told, or "" for nothing.
fn told(home: &Home, prompt: &str) -> String {
    let run = hook(home, "new", "UserPromptSubmit", json!({"prompt": prompt})).ok();
    if run.stdout.trim().is_empty() {
        return String::new();
    }
    run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_prompt_asking_in_other_words_or_in_chinese_is_told_the_fix_and_an_unrelated_one_nothing() {
    let home = project_with_the_fix();
    for prompt in [
        "What did we end up doing about the program dying at launch when the user's preferences are absent?",
        "上次程序一启动就挂掉、因为找不到用户设置的那个问题，我们是怎么处理的？",
    ] {
        let memory = told(&home, prompt);
        assert!(memory.contains("falls back to the defaults"), "{prompt}: the fix is told:\n{memory}");
        assert!(
            memory.ends_with("has the rest of a session.\nSearch this memory with `trae-mem search \"<words>\" --project .` and see what happened around a hit with `trae-mem timeline <id>`."),
            "{prompt}: the block ends in two sentences:\n{memory}"
        );
    }
    for prompt in ["what is 17 times 23?", "thanks, that's all for today", "写一首关于秋天的短诗"] {
        let memory = told(&home, prompt);
        assert_eq!(memory, "", "{prompt}: nothing is related, nothing is told");
    }
}

#[test]
fn a_chinese_session_is_told_to_a_later_prompt_in_chinese_as_session_start_tells_it() {
    let how_to_search = "Search this memory with `trae-mem search \"<words>\" --project .` and see what happened around a hit with `trae-mem timeline <id>`.";
    // What is told is the point here, not how fast: a debug build on a busy
    // machine may take longer than a hook's 3 s to embed the prompt.
    let patient = |home: &Home| home.write("home/trae-mem.toml", b"[hook]\ndeadline_ms = 60000\n");
    let home = Home::new();
    patient(&home);
    session(&home, "zh", "请修复数据缓存的超时问题", "src/cache.rs", "已修复：数据缓存现在有超时和重试。");
    home.settle();
    let start = hook(&home, "later", "SessionStart", json!({"source": "startup"})).ok().json();
    let start = start["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned();
    assert!(
        start.contains("用户请求:") && start.contains("结论与决定:"),
        "session start tells it in Chinese:\n{start}"
    );

    let memory = told(&home, "数据缓存的超时问题上次是怎么修的？");
    assert!(memory.contains("用户请求: 请修复数据缓存的超时问题"), "as session start asks:\n{memory}");
    assert!(memory.contains("结论与决定: 已修复：数据缓存现在有超时和重试。"), "and concludes:\n{memory}");
    assert!(!memory.contains("Asked:") && !memory.contains("Concluded:"), "no English titles:\n{memory}");
    assert!(
        memory.ends_with(&format!("`trae-mem show <session>` 可查看一个会话的其余内容。\n{how_to_search}")),
        "the block ends in two whole sentences, the first in Chinese:\n{memory}"
    );

    // An English session keeps English titles and footer, each sentence whole.
    let home = Home::new();
    patient(&home);
    session(
        &home,
        "en",
        "Fix the timeout of the data cache.",
        "src/cache.rs",
        "Fixed: the data cache now times out and retries.",
    );
    let memory = told(&home, "How did we fix the data cache timeout last time?");
    assert!(memory.contains("Asked: Fix the timeout of the data cache."), "{memory}");
    assert!(memory.contains("Concluded: Fixed: the data cache now times out and retries."), "{memory}");
    assert!(
        memory.ends_with(&format!("\n`trae-mem show <session>` has the rest of a session.\n{how_to_search}")),
        "the block ends in two whole sentences:\n{memory}"
    );
    assert!(!memory.contains("; Search") && !memory.contains("；"), "no sentence runs into the next:\n{memory}");
}

/// A home whose background embed cannot run, as its model file is not a
/// model: what waits for a vector there stays waiting.
fn home_that_cannot_embed() -> Home {
    let home = Home::new();
    let bogus = home.write("bogus.e5s", b"not a model at all");
    home.write("home/trae-mem.toml", format!("[search]\nmodel = {:?}\n", bogus.display().to_string()).as_bytes());
    home
}

#[test]
fn search_says_while_memories_wait_for_vectors_and_an_import_starts_giving_them() {
    let home = Home::new();
    let export = home.write(
        "memory.jsonl",
        concat!(
            r#"{"type":"session","session":{"id":"00000000-0000-4000-8000-000000000001","project":"/p","started_at":1700000000000,"ended_at":null,"meta":{},"observations":2}}"#,
            "\n",
            r#"{"type":"observation","id":1,"session_id":"00000000-0000-4000-8000-000000000001","ts":1700000060000,"kind":"response","tool":null,"content":"Fixed: the settings loader falls back to the defaults when the file is absent.","private":false,"tags":[]}"#,
            "\n",
            r#"{"type":"observation","id":2,"session_id":"00000000-0000-4000-8000-000000000001","ts":1700000120000,"kind":"decision","tool":null,"content":"We keep one SQLite file per home, never one per project.","private":false,"tags":[]}"#,
            "\n",
        )
        .as_bytes(),
    );
    // Where the background embed cannot run, what waits stays waiting,
    // and search says so.
    let stuck = home_that_cannot_embed();
    let file = stuck.write("memory.jsonl", &std::fs::read(&export).unwrap());
    stuck.run_unsettled(&["import", file.to_str().unwrap()], None).ok();
    let text = stuck.run_unsettled(&["search", "--", "settings loader"], None).ok();
    assert!(text.stderr.contains("2 memories wait for a vector") && text.stderr.contains("trae-mem embed"), "{text}");
    let json = stuck.run_unsettled(&["search", "--json", "--", "settings loader"], None).ok().json();
    assert_eq!(json["waiting_for_vectors"], 2, "{json}");

    let import = home.run_unsettled(&["import", export.to_str().unwrap()], None).ok();
    assert!(import.stderr.contains("2 memories wait for a vector"), "{import}");
    let vectors = || -> i64 { home.db().query_row("SELECT count(*) FROM vectors", [], |r| r.get(0)).unwrap() };
    // The import started the background embed: the vectors come without
    // anyone running `trae-mem embed`.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while vectors() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(vectors(), 2, "the background embed gave both memories their vectors");
    let json = home.run_unsettled(&["search", "--json", "--", "settings loader"], None).ok().json();
    assert_eq!(json["waiting_for_vectors"], 0, "{json}");
    let text = home.run_unsettled(&["search", "--", "settings loader"], None).ok();
    assert!(!text.stderr.contains("wait for a vector"), "{text}");
}

#[test]
fn a_search_counts_the_memories_waiting_for_vectors_up_to_a_thousand_and_stats_counts_them_all() {
    // 1,200 memories that cannot get a vector (the home's model file is
    // not a model): a search says 1,000 or more wait, and stops counting
    // there, which keeps a search of a store just imported fast.
    let stuck = home_that_cannot_embed();
    let session = "00000000-0000-4000-8000-000000000001";
    let mut export = format!(
        r#"{{"type":"session","session":{{"id":"{session}","project":"/p","started_at":1700000000000,"ended_at":null,"meta":{{}},"observations":1200}}}}"#
    );
    for n in 1..=1200 {
        export.push_str(&format!(
            "\n{{\"type\":\"observation\",\"id\":{n},\"session_id\":\"{session}\",\"ts\":{},\"kind\":\"response\",\"tool\":null,\"content\":\"Fixed the settings loader, step {n} of the migration.\",\"private\":false,\"tags\":[]}}",
            1_700_000_000_000_i64 + n
        ));
    }
    let file = stuck.write("memory.jsonl", export.as_bytes());
    stuck.run_unsettled(&["import", file.to_str().unwrap()], None).ok();
    let json = stuck.run_unsettled(&["search", "--json", "--", "settings loader"], None).ok().json();
    assert_eq!(json["waiting_for_vectors"], 1000, "{json}");
    let text = stuck.run_unsettled(&["search", "--", "settings loader"], None).ok();
    assert!(text.stderr.contains("1000 or more memories wait for a vector"), "{text}");
    let stats = stuck.run_unsettled(&["stats"], None).ok();
    assert!(stats.stdout.contains("1200 waiting"), "{stats}");
}

#[test]
fn a_keyword_query_has_no_tail_of_hits_found_by_meaning_alone() {
    let home = project_with_the_fix();
    session(
        &home,
        "busy",
        "Hooks fail with database is locked under load.",
        "src/store.rs",
        "Set SQLite's busy timeout to 250 ms on every connection; the locked errors are gone.",
    );
    home.settle();
    let out = home.run(&["search", "--json", "--", "busy timeout"], None).ok().json();
    let hits = out["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{out}");
    let first = hits[0]["snippet"].as_str().unwrap_or_default();
    assert!(first.contains("busy") && first.contains("timeout"), "{out}");
    for hit in hits {
        assert_ne!(hit["found_by"], "meaning", "a hit by meaning alone trails a keyword query: {out}");
    }
}

#[test]
fn a_word_found_only_as_a_json_key_does_not_match() {
    let home = Home::new();
    hook(&home, "edit", "UserPromptSubmit", json!({"prompt": "Tidy the parser module."})).ok();
    hook(
        &home,
        "edit",
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": "e1",
               "tool_input": {"file_path": "src/parser.rs", "old_string": "let x = 1;", "new_string": "let count = 1;"},
               "tool_response": {"filePath": "src/parser.rs", "userModified": false,
                                 "structuredPatch": [{"oldStart": 3, "oldLines": 1, "newStart": 3, "newLines": 1}]}}),
    )
    .ok();
    for key in ["oldStart", "userModified", "structuredPatch"] {
        let out = home.run(&["search", "--json", "--", key], None).ok().json();
        assert_eq!(out["hits"], json!([]), "{key} is only a JSON key: {out}");
    }
    // The values are the memory's words.
    let out: Value = home.run(&["search", "--json", "--", "src/parser.rs"], None).ok().json();
    assert!(out["hits"].as_array().is_some_and(|h| h.iter().any(|h| h["tool"] == "Edit")), "{out}");
}

#[test]
fn a_prompt_that_states_a_fact_is_found_first_by_a_later_question_about_it() {
    let home = project_with_the_fix();
    // The user states the fact; the session's tool call holds most of the
    // words too, and its answer does not repeat the number.
    hook(
        &home,
        "fact",
        "UserPromptSubmit",
        json!({"prompt": "The staging database listens on port 6543, not the default. Point the deploy script at it."}),
    )
    .ok();
    let script = "# staging database: the host and port come from the environment\nexport PGHOST=staging.internal\n";
    hook(
        &home,
        "fact",
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": "fact-read", "tool_input": {"file_path": "deploy.sh"},
               "tool_response": {"file": {"filePath": "deploy.sh", "content": script}}}),
    )
    .ok();
    hook(&home, "fact", "Stop", json!({"last_assistant_message": "deploy.sh now reads PGPORT from the environment."}))
        .ok();
    // Someone asked the same thing before: a question, which says nothing
    // of its answer.
    hook(&home, "asked", "UserPromptSubmit", json!({"prompt": "which port does the staging database listen on?"})).ok();
    home.settle();
    let out =
        home.run(&["search", "--json", "--", "which port does the staging database listen on?"], None).ok().json();
    let first = out["hits"][0]["snippet"].as_str().unwrap_or_default();
    assert!(first.contains("6543"), "the stated fact comes first: {out}");
}
