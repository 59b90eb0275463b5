//! The Windows build (`x86_64-pc-windows-gnu`), run under Wine as a Windows
//! client runs it: payloads with drive letters and backslashes on stdin,
//! exit codes, stdout, and the store it writes, read back from here.
//!
//! `scripts/test` builds the `.exe` and the test-only stand-in for the
//! `bcryptprimitives.dll` Wine 8 lacks (`tests/windows/`), and names them in
//! `TRAE_MEM_TEST_WINDOWS_EXE` and `TRAE_MEM_TEST_WINDOWS_SHIM`. One Wine
//! prefix serves every test of a run (its first start takes about 10 s).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::llm_summarizer as llm;
use crate::mock_model::{self, MockModel};
use crate::util::{self, Home, Run};

/// The project folder the recorded sessions work in, as Windows names it;
/// it exists in the prefix, so that Windows can say how it is spelled.
const PROJECT: &str = r"C:\src\app";

struct Wine {
    wine: PathBuf,
    prefix: PathBuf,
    exe: PathBuf,
}

/// The Wine set-up, or `None` (said loudly) when a part is missing.
fn wine(test: &str) -> Option<&'static Wine> {
    static WINE: OnceLock<Result<Wine, String>> = OnceLock::new();
    match WINE.get_or_init(set_up) {
        Ok(wine) => Some(wine),
        Err(missing) => {
            util::skip(test, missing);
            None
        }
    }
}

fn set_up() -> Result<Wine, String> {
    let given = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_file());
    let exe = given("TRAE_MEM_TEST_WINDOWS_EXE")
        .ok_or("the Windows build (TRAE_MEM_TEST_WINDOWS_EXE; scripts/test sets it)")?;
    let shim = given("TRAE_MEM_TEST_WINDOWS_SHIM").ok_or("the ProcessPrng stand-in (TRAE_MEM_TEST_WINDOWS_SHIM)")?;
    let wine = ["/usr/lib/wine/wine64", "/usr/bin/wine64", "/usr/bin/wine"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or("Wine (Debian's wine64)")?;
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine");
    let _ = std::fs::remove_dir_all(&root);
    let prefix = root.join("prefix");
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| e.to_string())?;
    std::fs::copy(&exe, bin.join("trae-mem.exe")).map_err(|e| e.to_string())?;
    std::fs::copy(&shim, bin.join("bcryptprimitives.dll")).map_err(|e| e.to_string())?;
    let wine = Wine { wine, prefix, exe: bin.join("trae-mem.exe") };
    let started =
        wine.command(&Home::new(), &["--version"]).output().map_err(|e| format!("Wine does not start: {e}"))?;
    if !started.status.success() {
        return Err(format!("trae-mem.exe does not start under Wine: {}", String::from_utf8_lossy(&started.stderr)));
    }
    std::fs::create_dir_all(wine.prefix.join("drive_c/src/app")).map_err(|e| e.to_string())?;
    Ok(wine)
}

/// A Linux path as the Windows process sees it (Wine's drive Z: is `/`).
fn windows_path(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

impl Wine {
    fn command(&self, home: &Home, args: &[&str]) -> Command {
        let mut command = self.program(home, self.exe.as_os_str());
        command.args(args);
        command
    }

    /// Runs a Windows program (a path, or one Wine has, like `cmd`) as a
    /// client with this home would.
    fn program(&self, home: &Home, program: &std::ffi::OsStr) -> Command {
        let mut command = Command::new(&self.wine);
        command
            .arg(program)
            .env("WINEPREFIX", &self.prefix)
            .env("WINEDEBUG", "-all")
            .env("TRAE_MEM_HOME", windows_path(&home.home()))
            .current_dir(home.work());
        command
    }

    fn run(&self, home: &Home, args: &[&str], stdin: Option<&[u8]>) -> Run {
        util::run_command(self.command(home, args), args, stdin)
    }

    /// Runs a UserPromptSubmit hook `command`, as a client config holds
    /// it, in Windows' own shell; returns how many rows hold the prompt.
    fn prompt_through_cmd(&self, home: &Home, command: &str, prompt: &str) -> i64 {
        let payload = serde_json::to_vec(&json!({"session_id": "c1", "cwd": PROJECT,
            "hook_event_name": "UserPromptSubmit", "prompt": prompt}))
        .unwrap();
        let mut shell = self.program(home, "cmd".as_ref());
        shell.args(["/c", command]);
        util::run_command(shell, &["(cmd /c)", command], Some(&payload)).ok();
        home.db().query_row("SELECT count(*) FROM observations WHERE content = ?1", [prompt], |r| r.get(0)).unwrap()
    }

    /// Runs the hook as Claude Code on Windows does, in `cwd`.
    fn hook(&self, home: &Home, cwd: &str, sid: &str, event: &str, mut extra: Value) -> Run {
        extra["cwd"] = json!(cwd);
        extra["transcript_path"] = json!(format!(r"C:\Users\dev\.claude\projects\C--src-app\{sid}.jsonl"));
        self.run(home, &["hook"], Some(&util::claude_code_payload(sid, event, extra)))
    }
}

/// The projects of the stored sessions, as stored.
fn projects(home: &Home) -> Vec<String> {
    let db = home.db();
    let mut stmt = db.prepare("SELECT DISTINCT project_path FROM sessions ORDER BY 1").unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
}

#[test]
fn a_session_on_windows_is_stored_summarized_and_told_at_the_next_start() {
    let Some(wine) = wine("windows: a session stored and told") else { return };
    let home = Home::new();
    let hook = |sid: &str, event: &str, extra: Value| wine.hook(&home, PROJECT, sid, event, extra);
    let started = hook("w1", "SessionStart", json!({"source": "startup"})).ok();
    assert_eq!(started.stdout, "", "no memory yet\n{started}");
    hook("w1", "UserPromptSubmit", json!({"prompt": "Why does the nightly import fail on Windows?"})).ok();
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "cargo test import"}, "tool_use_id": "toolu_w1"});
    hook("w1", "PreToolUse", call.clone()).ok();
    let mut done = call.clone();
    done["tool_response"] = json!({"stdout": "test import::nightly ... FAILED: database is locked", "stderr": ""});
    hook("w1", "PostToolUse", done).ok();
    hook(
        "w1",
        "Stop",
        json!({"last_assistant_message": "The nightly import now retries while the database is locked."}),
    )
    .ok();
    hook("w1", "SessionEnd", json!({"reason": "exit"})).ok();

    let next = hook("w2", "SessionStart", json!({"source": "startup"})).ok();
    let context = next.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned();
    assert!(context.contains("retries while the database is locked"), "{next}");

    let found = wine.run(&home, &["search", "--json", "nightly import"], None).ok();
    let hits = found.json()["hits"].as_array().cloned().unwrap_or_default();
    assert!(hits.iter().any(|h| h["snippet"].as_str().unwrap_or_default().contains("retries")), "{found}");
    let id = hits.iter().find_map(|h| h["id"].as_i64()).expect("an observation among the hits").to_string();
    let timeline = wine.run(&home, &["timeline", "--json", &id], None).ok();
    assert!(timeline.stdout.contains("cargo test import"), "{timeline}");

    assert_eq!(projects(&home), [PROJECT]);
}

#[test]
fn a_folder_spelled_three_ways_is_one_project() {
    let Some(wine) = wine("windows: one project however spelled") else { return };
    let home = Home::new();
    for (sid, cwd) in [("p1", r"C:\src\app"), ("p2", "c:/src/app"), ("p3", r"C:\SRC\App\")] {
        wine.hook(&home, cwd, sid, "UserPromptSubmit", json!({"prompt": format!("work in {sid}")})).ok();
    }
    assert_eq!(projects(&home), [PROJECT]);
}

#[test]
fn a_payload_with_windows_line_endings_is_read() {
    let Some(wine) = wine("windows: CRLF payloads") else { return };
    let home = Home::new();
    let lines = [
        "{",
        r#"  "session_id": "crlf","#,
        r#"  "cwd": "C:\\src\\app","#,
        r#"  "hook_event_name": "UserPromptSubmit","#,
        r#"  "prompt": "line one\r\nline two""#,
        "}",
    ];
    let payload = lines.join("\r\n") + "\r\n";
    wine.run(&home, &["hook"], Some(payload.as_bytes())).ok();
    let stored: String =
        home.db().query_row("SELECT content FROM observations WHERE kind = 'user'", [], |r| r.get(0)).unwrap();
    assert!(stored.contains("line one") && stored.contains("line two"), "{stored}");
}

#[test]
fn junk_on_stdin_exits_1_never_2_and_is_kept() {
    let Some(wine) = wine("windows: junk input") else { return };
    let home = Home::new();
    let junk = wine.run(&home, &["hook"], Some(b"this is not json")).code(1);
    assert_eq!(junk.stderr.lines().count(), 1, "{junk}");
    let dead = std::fs::read_dir(home.home().join("spool/dead")).map(|d| d.count()).unwrap_or(0);
    assert!(dead >= 1, "the payload is kept as a dead letter\n{junk}");
    let bad_flag = wine.run(&home, &["hook", "--no-such-flag"], Some(b"{}"));
    assert_eq!(bad_flag.code, 1, "{bad_flag}");
}

#[test]
fn the_mcp_server_answers_over_stdio() {
    let Some(wine) = wine("windows: the MCP server") else { return };
    let home = Home::new();
    wine.hook(&home, PROJECT, "m1", "UserPromptSubmit", json!({"prompt": "Rotate the staging certificates"})).ok();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "wine-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "trae_mem_search", "arguments": {"query": "staging certificates"}}}),
    ];
    let input: String = messages.iter().map(|m| format!("{m}\r\n")).collect();
    let out = wine.run(&home, &["mcp"], Some(input.as_bytes())).ok();
    let answers: Vec<Value> = out.stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let answer = |id: i64| answers.iter().find(|a| a["id"] == id).unwrap_or_else(|| panic!("no answer {id}\n{out}"));
    assert_eq!(answer(1)["result"]["protocolVersion"], "2025-06-18", "{out}");
    let tools = answer(2)["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "trae_mem_search"), "{out}");
    let text = answer(3)["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("staging"), "{out}");
}

#[test]
fn install_writes_hooks_a_windows_shell_runs_and_uninstall_takes_them_out() {
    let Some(wine) = wine("windows: install and uninstall") else { return };
    let home = Home::new();
    let project = windows_path(&home.work());
    let settings = home.work().join(".claude/settings.local.json");
    wine.run(&home, &["install", "claude-code", "--project", &project], None).ok();
    let written = std::fs::read(&settings).expect("install writes .claude/settings.local.json");
    let config: Value = serde_json::from_slice(&written).unwrap();
    let command = config["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap_or_default().to_owned();
    // Forward slashes: Git Bash, which Claude Code runs hooks with on
    // Windows, would take a backslash for an escape.
    assert!(command.ends_with("/bin/trae-mem.exe hook --client claude-code --event SessionStart"), "{command}");
    assert!(!command.contains('\\'), "{command}");

    let again = wine.run(&home, &["install", "claude-code", "--project", &project], None).ok();
    assert_eq!(std::fs::read(&settings).unwrap(), written, "a second install changes nothing\n{again}");

    // The command as written runs in Windows' own shell and stores its event.
    let hook = command.replace("SessionStart", "UserPromptSubmit");
    assert_eq!(wine.prompt_through_cmd(&home, &hook, "installed on windows"), 1);

    wine.run(&home, &["uninstall", "claude-code", "--project", &project], None).ok();
    assert!(!settings.exists(), "uninstall removes the file install made");
}

#[test]
fn cursor_codex_and_gemini_installs_write_commands_windows_runs_and_uninstall_takes_them_out() {
    let Some(wine) = wine("windows: install for each client") else { return };
    for (client, hooks_file) in
        [("cursor", ".cursor/hooks.json"), ("codex", ".codex/hooks.json"), ("gemini", ".gemini/settings.json")]
    {
        let home = Home::new();
        let project = windows_path(&home.work());
        wine.run(&home, &["install", client, "--project", &project], None).ok();
        let written: Value = serde_json::from_slice(&std::fs::read(home.work().join(hooks_file)).unwrap()).unwrap();
        let mut commands = Vec::new();
        collect_commands(&written, &mut commands);
        assert!(!commands.is_empty(), "{client}: {written:#}");
        for command in &commands {
            assert!(command.contains(&format!("/bin/trae-mem.exe hook --client {client}")), "{client}: {command}");
            assert!(!command.contains('\\'), "{client}: {command}");
        }
        wine.run(&home, &["uninstall", client, "--project", &project], None).ok();
        assert!(!home.work().join(hooks_file).exists(), "{client}: uninstall removes the file install made");
    }
}

#[test]
fn a_binary_in_a_folder_with_a_space_is_named_so_every_windows_shell_runs_it() {
    let Some(wine) = wine("windows: a binary in a folder with a space") else { return };
    let home = Home::new();
    let folder = home.work().join("Program Files/trae-mem");
    std::fs::create_dir_all(&folder).unwrap();
    let exe = folder.join("trae-mem.exe");
    std::fs::copy(&wine.exe, &exe).unwrap();
    std::fs::copy(wine.exe.with_file_name("bcryptprimitives.dll"), folder.join("bcryptprimitives.dll")).unwrap();
    let project = windows_path(&home.work());
    let spaced = |args: &[&str]| {
        let mut command = wine.program(&home, exe.as_os_str());
        command.args(args);
        util::run_command(command, args, None)
    };

    spaced(&["install", "claude-code", "--project", &project]).ok();
    let settings = home.work().join(".claude/settings.local.json");
    let config: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    let command = config["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap_or_default().to_owned();
    // No space and no quotes: PowerShell would read a quoted path as a
    // value and fail on the word after it; Bash and cmd read either.
    let (binary, _) = command.split_once(" hook ").unwrap_or_else(|| panic!("{command}"));
    assert!(!binary.contains([' ', '"', '\\']), "{command}");
    assert!(binary.to_ascii_lowercase().ends_with("/trae-mem.exe"), "{command}");

    let stored = wine.prompt_through_cmd(&home, &command, "installed under a folder with a space");
    assert_eq!(stored, 1, "the short name runs the binary");

    let doctor = spaced(&["doctor", "--json"]);
    assert!(!doctor.stdout.contains("does not exist"), "doctor follows the short name\n{doctor}");
    spaced(&["uninstall", "claude-code", "--project", &project]).ok();
    assert!(!settings.exists(), "uninstall knows the short name for its own");
}

#[test]
fn cline_on_windows_is_refused_with_the_reason_and_nothing_written() {
    let Some(wine) = wine("windows: cline") else { return };
    let home = Home::new();
    let project = windows_path(&home.work());
    let refused = wine.run(&home, &["install", "cline", "--project", &project], None).code(1);
    assert!(refused.stderr.contains("PowerShell"), "{refused}");
    assert!(!home.work().join(".clinerules").exists(), "{refused}");
}

/// Every hook's `command` string in a client's config: run by a shell,
/// unlike an MCP server's, which the client starts itself (Gemini keeps
/// both in one file).
fn collect_commands(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("mcpServers", _) => {}
                    ("command", Value::String(command)) => into.push(command.clone()),
                    _ => collect_commands(value, into),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_commands(v, into)),
        _ => {}
    }
}

#[test]
fn a_database_another_windows_process_holds_costs_the_hook_a_short_wait_then_is_stored_later() {
    let Some(wine) = wine("windows: a locked database") else { return };
    let Some(locker) = std::env::var_os("TRAE_MEM_TEST_WINDOWS_LOCKER").map(PathBuf::from).filter(|p| p.is_file())
    else {
        util::skip("windows: a locked database", "the locker (TRAE_MEM_TEST_WINDOWS_LOCKER; scripts/test builds it)");
        return;
    };
    let home = Home::new();
    wine.hook(&home, PROJECT, "l1", "SessionStart", json!({"source": "startup"})).ok();
    let mut holder = wine.program(&home, locker.as_os_str());
    holder.arg(windows_path(&home.db_path()));
    let mut holder = holder
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the locker starts under Wine");
    let mut said = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.stdout.take().unwrap()), &mut said).unwrap();
    assert_eq!(said.trim(), "locked");

    let prompt = json!({"prompt": "Why does the nightly import hang on Windows?"});
    let started = std::time::Instant::now();
    let spooled = wine.hook(&home, PROJECT, "l1", "UserPromptSubmit", prompt).ok();
    let waited = started.elapsed();
    let pending = || std::fs::read_dir(home.home().join("spool/pending")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(pending(), 1, "the event is spooled\n{spooled}");
    // Wine starts a process in well under a second here; the hook itself
    // waits [hook] lock_wait_ms (250 ms) before it spools.
    assert!(waited < std::time::Duration::from_secs(3), "the hook took {waited:?}");

    // Told to wait for the lock far past its deadline, the hook waits no
    // longer than the deadline leaves (a timer, no signal): spooled, exit 0.
    home.write("home/trae-mem.toml", b"[hook]\nlock_wait_ms = 20000\ndeadline_ms = 700\n");
    let prompt = json!({"prompt": "Why does the nightly export hang on Windows?"});
    let started = std::time::Instant::now();
    let cut = wine.hook(&home, PROJECT, "l1", "UserPromptSubmit", prompt).ok();
    let waited = started.elapsed();
    assert!(cut.stderr.contains("spooled"), "{cut}");
    assert_eq!(pending(), 2, "the event is spooled\n{cut}");
    assert!(waited < std::time::Duration::from_secs(5), "the hook took {waited:?}");

    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    wine.hook(&home, PROJECT, "l1", "Stop", json!({"last_assistant_message": "It waits for the lock now."})).ok();
    assert_eq!(pending(), 0, "the next hook stored the spooled events");
    for what in ["import", "export"] {
        let stored: i64 = home
            .db()
            .query_row(
                "SELECT count(*) FROM observations WHERE content LIKE ?1",
                [format!("%nightly {what} hang%")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(stored, 1, "{what}: stored once");
    }
}

#[test]
fn the_default_home_is_dot_trae_mem_in_the_users_profile() {
    let Some(wine) = wine("windows: the default home") else { return };
    let home = Home::new();
    let prompt = "stored in the default home on windows";
    let payload = util::claude_code_payload("d1", "UserPromptSubmit", json!({"cwd": PROJECT, "prompt": prompt}));
    let mut hook = wine.command(&home, &["hook"]);
    hook.env_remove("TRAE_MEM_HOME");
    util::run_command(hook, &["hook"], Some(&payload)).ok();
    // Wine's profile for this user is C:\users\<name>, %USERPROFILE%.
    let profiles = std::fs::read_dir(wine.prefix.join("drive_c/users")).unwrap();
    let db = profiles
        .flatten()
        .map(|profile| profile.path().join(".trae-mem/trae-mem.db"))
        .find(|db| db.is_file())
        .expect("a store in %USERPROFILE%\\.trae-mem");
    let stored: i64 = rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT count(*) FROM observations WHERE content = ?1", [prompt], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 1);
}

#[test]
fn doctor_checks_the_homes_access_list_and_says_how_to_make_it_the_owners_alone() {
    let Some(wine) = wine("windows: an owner-only home") else { return };
    let home = Home::new();
    let doctor_home = |trae_mem_home: &str| {
        let mut doctor = wine.command(&home, &["doctor", "--json"]);
        doctor.env("TRAE_MEM_HOME", trae_mem_home);
        let run = util::run_command(doctor, &["doctor", "--json"], None);
        let out = run.json();
        let check = out["checks"].as_array().unwrap().iter().find(|c| c["check"] == "home").cloned();
        check.unwrap_or_else(|| panic!("no home check\n{run}"))
    };

    // A home the first hook makes, which trae-mem gives an access list that
    // allows only its owner. Wine keeps no access list: it derives one from
    // the folder's Unix mode bits (the group's and everyone's too) and drops
    // what is set, so only what doctor checked and says can be seen here.
    let fresh = windows_path(&home.home().join("fresh"));
    let payload = util::claude_code_payload("o1", "UserPromptSubmit", json!({"cwd": PROJECT, "prompt": "hello"}));
    let mut hook = wine.command(&home, &["hook"]);
    hook.env("TRAE_MEM_HOME", &fresh);
    util::run_command(hook, &["hook"], Some(&payload)).ok();
    for trae_mem_home in [fresh, windows_path(&home.home())] {
        let check = doctor_home(&trae_mem_home);
        let detail = check["detail"].as_str().unwrap();
        let said = detail.contains("yours alone (its access list allows only you)")
            || detail.contains("can be read by other users") && check["fix"].as_str().unwrap().contains("icacls");
        assert!(said, "doctor says what it checked, and how to fix it the Windows way: {check}");
    }
}

#[test]
fn plugins_run_on_windows_an_event_handler_in_a_hook_and_a_model_summarizer_off_it() {
    let Some(wine) = wine("windows: plugins") else { return };
    let home = Home::new();
    let model = MockModel::start(Vec::new());
    let url = format!("{}/v1/messages", model.url);
    let wasm = |name: &str| windows_path(&crate::plugins::wasm(name));
    let config = format!(
        "[summarize]\nsummarizer = \"llm\"\n\n\
         [[plugins]]\nname = \"file-changed\"\npath = '{}'\nrole = \"event-handler\"\nevents = [\"FileChanged\"]\n\n\
         [[plugins]]\nname = \"llm\"\npath = '{}'\nrole = \"summarizer\"\n[plugins.grants]\n\
         http = [{{ url = \"{url}\", header = \"x-api-key\", env = \"{}\" }}]\n\
         [plugins.config]\napi = \"anthropic\"\nurl = \"{url}\"\nmodel = \"mock-model\"\n",
        wasm("file_changed"),
        wasm("llm_summarizer"),
        llm::KEY_VAR
    );
    home.write("home/trae-mem.toml", config.as_bytes());
    let run = |args: &[&str], stdin: Option<&[u8]>| {
        let mut command = wine.command(&home, args);
        command.env(llm::KEY_VAR, llm::KEY);
        util::run_command(command, args, stdin).ok()
    };
    let hook = |sid: &str, event: &str, mut extra: Value| {
        extra["cwd"] = json!(PROJECT);
        run(&["hook", "--event", event], Some(&util::claude_code_payload(sid, event, extra)))
    };

    hook("p1", "FileChanged", json!({"file_path": r"C:\src\app\main.rs", "event": "change"}));
    let note: String = home
        .db()
        .query_row("SELECT content FROM observations WHERE content LIKE 'file changed%'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(note, r"file changed: change C:\src\app\main.rs");

    hook("p1", "UserPromptSubmit", json!({"prompt": "The app crashes when trae.toml is missing"}));
    hook("p1", "Stop", json!({"last_assistant_message": "Fixed: load_config now returns the defaults."}));
    hook("p1", "SessionEnd", json!({"reason": "exit"}));
    run(&["summarize", "--pending"], None);
    let brief: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap();
    assert_eq!(brief, mock_model::BRIEF);
    let seen = model.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].header("x-api-key"), Some(llm::KEY));
}

#[test]
fn serve_open_hands_the_viewer_to_the_browser_windows_chose() {
    let Some(wine) = wine("windows: serve --open") else { return };
    let home = Home::new();
    // ShellExecute's "open" on a URL reaches Wine's winebrowser, which hands
    // it to the Unix browser its registry names (xdg-open unless told
    // otherwise): a stand-in here writes down what it was given.
    let browser = home.work().join("browser");
    let opened = home.work().join("opened");
    std::fs::create_dir_all(&browser).unwrap();
    let script = browser.join("xdg-open");
    std::fs::write(&script, format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display())).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = script.display().to_string();
    let mut named = wine.program(&home, "reg".as_ref());
    named.args(["add", r"HKCU\Software\Wine\WineBrowser", "/v", "Browsers", "/d", &script, "/f"]);
    util::run_command(named, &["(reg add)"], None).ok();
    let mut serve = wine.command(&home, &["serve", "--open", "--port", "0"]);
    let mut serve = serve
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(home.work().join("stderr")).unwrap())
        .spawn()
        .expect("serve starts under Wine");
    let mut said = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(serve.stdout.take().unwrap()), &mut said).unwrap();
    let url = said.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("no URL in {said}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !opened.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = serve.kill();
    let _ = serve.wait();
    let given = std::fs::read_to_string(&opened).unwrap_or_else(|_| {
        let stderr = std::fs::read_to_string(home.work().join("stderr")).unwrap_or_default();
        panic!("no browser was started for {url}\n{stderr}")
    });
    assert_eq!(given, url);
}

#[test]
fn a_windows_machine_shares_its_memory_with_a_linux_teammate_through_postgres_over_tls() {
    let Some(wine) = wine("windows: sync") else { return };
    let Some(server) = crate::pg::Postgres::start_tls() else { return };
    // One repository, cloned on each machine, whose config shares its memory.
    let clone = |home: &Home| {
        let dir = home.work().join("app");
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        let origin = "[remote \"origin\"]\n\turl = git@github.com:acme/billing.git\n";
        std::fs::write(dir.join(".git/config"), origin).unwrap();
        std::fs::write(dir.join("trae-mem.toml"), "[sync]\nshare = true\n").unwrap();
        dir
    };
    let windows = Home::new();
    windows.write("home/trae-mem.toml", b"[sync]\nauthor = \"ana@windows\"\n");
    let project = windows_path(&clone(&windows));
    let prompt = json!({"prompt": "why does the invoice export drop winquokka rows"});
    wine.hook(&windows, &project, "w1", "UserPromptSubmit", prompt).ok();
    let key = wine.run(&windows, &["sync", "key", "new"], None).ok().stdout.trim().to_owned();

    let url = server.tls_url();
    let mut sync = wine.command(&windows, &["sync", "--project", &project, "--json"]);
    sync.env("TRAE_MEM_SYNC_URL", &url).env("SSL_CERT_FILE", windows_path(&server.ca()));
    let synced = util::run_command(sync, &["sync", "--project", &project, "--json"], None).ok();
    assert!(synced.json()[0]["pushed"].as_u64().unwrap_or(0) > 0, "{synced}");

    let linux = Home::new();
    let linux_project = clone(&linux).display().to_string();
    linux.run(&["sync", "key", "import"], Some(key.as_bytes())).ok();
    let ca = server.ca().display().to_string();
    let env = [("TRAE_MEM_SYNC_URL", url.as_str()), ("SSL_CERT_FILE", ca.as_str())];
    linux.run_env(&["sync", "--project", &linux_project], &env, None).ok();
    let found = linux.run(&["search", "winquokka", "--json"], None).ok().json();
    let hits = found["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["author"] == "ana@windows"), "{found:#}");
}
