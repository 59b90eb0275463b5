//! The Claude Code plugin (claude-code-plugin/, listed by
//! .claude-plugin/marketplace.json): its launcher finds the installed
//! binary and never starts Node; its hooks are the ones `trae-mem install`
//! writes; doctor and install see it, so that it never runs beside a manual
//! install unnoticed, and an event both send is stored once. Then the real
//! Claude Code (TRAE_MEM_TEST_CLAUDE, installed from npm by scripts/test)
//! validates the manifests, installs the plugin from the repository as a
//! local marketplace, and a session's prompt reaches the store through it,
//! answered by a mock Anthropic API on loopback.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::mock_anthropic::{ANSWER, MockAnthropic};
use crate::util::{Home, Run, bin, run_command, skip};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn plugin_dir() -> PathBuf {
    repo().join("claude-code-plugin")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write_executable(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The binary under test, linked at `path` as an installer would put it.
fn link_binary(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(Path::new(bin()).canonicalize().unwrap(), path).unwrap();
}

/// npm's Node launcher: a node script, as npm puts `trae-mem` on PATH.
const NODE_LAUNCHER: &str = "#!/usr/bin/env node\nrequire('../lib/node_modules/trae-mem/bin/trae-mem.js');\n";

/// Runs the plugin's launcher with only `path` and a bare HOME: as Claude
/// Code runs it, with its own bin/ first on PATH.
fn launch(dir: &Path, path: &[PathBuf], env: &[(&str, &str)]) -> Run {
    let launcher = plugin_dir().join("bin/trae-mem");
    let mut all = vec![plugin_dir().join("bin")];
    all.extend(path.iter().cloned());
    let mut cmd = Command::new(&launcher);
    cmd.arg("--version").env_clear().env("PATH", std::env::join_paths(all).unwrap()).env("HOME", dir.join("bare-home"));
    cmd.envs(env.iter().copied());
    run_command(cmd, &["<plugin>/bin/trae-mem", "--version"], None)
}

#[test]
fn the_launcher_runs_the_binary_it_finds_and_never_node() {
    let home = Home::new();
    let dir = home.work();
    // First on PATH: a `node` that fails, so a launcher that starts Node shows.
    let trap = dir.join("trap");
    write_executable(&trap.join("node"), "#!/bin/sh\necho node started >&2\nexit 9\n");
    let ours = format!("trae-mem {}\n", env!("CARGO_PKG_VERSION"));

    // Nothing installed: a clear line, and not Claude Code's blocking exit 2.
    let none = launch(&dir, std::slice::from_ref(&trap), &[]).code(1);
    assert!(none.stderr.contains("npm install -g trae-mem"), "{none}");

    // npm's layouts: (where its Node launcher is, where the binary is).
    let npm_layouts = [
        // `npm install -g`: the platform package nested in trae-mem's own.
        ("global/bin", "global/lib/node_modules/trae-mem/node_modules/@trae-mem/linux-x64-gnu"),
        // The same, installed from tarballs: the platform package beside trae-mem.
        ("beside/bin", "beside/lib/node_modules/@trae-mem/linux-x64-gnu"),
        // A project's node_modules/.bin, the platform package hoisted beside it.
        ("project/node_modules/.bin", "project/node_modules/@trae-mem/linux-x64-gnu"),
    ];
    for (bin_dir, package) in npm_layouts {
        write_executable(&dir.join(bin_dir).join("trae-mem"), NODE_LAUNCHER);
        link_binary(&dir.join(package).join("bin/trae-mem"));
        let run = launch(&dir, &[trap.clone(), dir.join(bin_dir)], &[]).ok();
        assert_eq!(run.stdout, ours, "{bin_dir}: {run}");
    }

    // Node's launcher in a layout not known: it is run, rather than nothing.
    let odd = dir.join("odd/bin");
    write_executable(&odd.join("trae-mem"), NODE_LAUNCHER);
    let run = launch(&dir, &[trap.clone(), odd], &[]).code(9);
    assert!(run.stderr.contains("node started"), "{run}");

    // A binary on PATH (cargo install, a download); then ~/.cargo/bin, then TRAE_MEM_BIN.
    let plain = dir.join("plain");
    link_binary(&plain.join("trae-mem"));
    assert_eq!(launch(&dir, &[trap.clone(), plain], &[]).ok().stdout, ours);
    link_binary(&dir.join("bare-home/.cargo/bin/trae-mem"));
    assert_eq!(launch(&dir, std::slice::from_ref(&trap), &[]).ok().stdout, ours);
    let chosen = [("TRAE_MEM_BIN", bin())];
    assert_eq!(launch(&dir, std::slice::from_ref(&trap), &chosen).ok().stdout, ours);
}

/// The hook commands of a Claude Code hooks document, by event, each with
/// its binary (the first word) cut off.
fn hook_arguments(doc: &Value, binary: &str) -> Vec<(String, String)> {
    let hooks = doc["hooks"].as_object().unwrap();
    let mut found: Vec<(String, String)> = hooks
        .iter()
        .map(|(event, groups)| {
            let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
            let rest = command.strip_prefix(binary).unwrap_or_else(|| panic!("{command} does not run {binary}"));
            (event.clone(), rest.to_owned())
        })
        .collect();
    found.sort();
    found
}

#[test]
fn the_plugin_hooks_and_mcp_server_are_the_ones_install_writes() {
    let home = Home::new();
    home.run(&["install", "claude-code"], None).ok();
    let installed = read_json(&home.work().join(".claude/settings.local.json"));
    let binary = Path::new(bin()).canonicalize().unwrap().display().to_string();
    let plugin = read_json(&plugin_dir().join("hooks/hooks.json"));
    let launcher = "\"${CLAUDE_PLUGIN_ROOT}/bin/trae-mem\"";
    assert_eq!(hook_arguments(&plugin, launcher), hook_arguments(&installed, &binary));
    let user = read_json(&home.work().parent().unwrap().join(".claude.json"));
    let project = home.work().canonicalize().unwrap().display().to_string();
    let installed_mcp = &user["projects"][&project]["mcpServers"]["trae-mem"];
    let plugin_mcp = &read_json(&plugin_dir().join(".mcp.json"))["mcpServers"]["trae-mem"];
    assert_eq!(plugin_mcp["command"], "${CLAUDE_PLUGIN_ROOT}/bin/trae-mem");
    // The installed entry names the test's home; the plugin's finds it as the hooks do.
    assert_eq!(plugin_mcp["args"], json!(["mcp"]));
    assert_eq!(installed_mcp["args"].as_array().unwrap().last(), Some(&json!("mcp")));
}

/// Claude Code's records of the plugin installed for the user, from the
/// marketplace `marketplace`, with its copy at `copy`: as `claude plugin
/// install` writes them (format checked against the real one below).
fn record_plugin_install(user_home: &Path, marketplace: &str, copy: &Path) {
    let config = user_home.join(".claude");
    std::fs::create_dir_all(config.join("plugins")).unwrap();
    let id = format!("trae-mem@{marketplace}");
    let settings = json!({"enabledPlugins": {&id: true}});
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    let installed =
        json!({"version": 2, "plugins": {&id: [{"scope": "user", "installPath": copy, "version": "0.1.0"}]}});
    std::fs::write(config.join("plugins/installed_plugins.json"), installed.to_string()).unwrap();
}

fn check(doctor: &Run, name: &str) -> Value {
    let out = doctor.json();
    let found = out["checks"].as_array().unwrap().iter().find(|c| c["check"] == name).cloned();
    found.unwrap_or_else(|| panic!("no check {name}\n{doctor}"))
}

/// Observations of `kind` whose content is `text`.
fn stored(home: &Home, kind: &str, text: &str) -> i64 {
    home.db()
        .query_row("SELECT count(*) FROM observations WHERE kind = ?1 AND content = ?2", [kind, text], |r| r.get(0))
        .unwrap()
}

#[test]
fn doctor_and_install_see_the_plugin_and_an_event_both_send_is_stored_once() {
    let home = Home::new();
    let user_home = home.work().parent().unwrap().to_owned();
    let path = format!("{}:{}", Path::new(bin()).parent().unwrap().display(), std::env::var("PATH").unwrap());
    // A manual install first, then the plugin beside it.
    home.run(&["install", "claude-code"], None).ok();
    let manual = read_json(&home.work().join(".claude/settings.local.json"));
    record_plugin_install(&user_home, "trae-mem", &plugin_dir());
    let doctor = home.run_env(&["doctor", "--json"], &[("PATH", &path)], None).code(1);
    let both = check(&doctor, "client claude-code (plugin)");
    assert_eq!(both["ok"], false, "{doctor}");
    assert!(both["detail"].as_str().unwrap().contains("settings.local.json"), "{doctor}");
    assert!(both["fix"].as_str().unwrap().contains("trae-mem uninstall claude-code"), "{doctor}");

    // Claude Code runs both sets of hooks, at once: each event is stored
    // once, whichever hook reads the clock or commits first (so, many times).
    let plugin = read_json(&plugin_dir().join("hooks/hooks.json"));
    let root = plugin_dir().display().to_string();
    let both_run = |event: &str, fields: Value| {
        let mut payload = json!({"session_id": "both", "cwd": home.work(), "hook_event_name": event});
        payload.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let commands = [
            manual["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_owned(),
            plugin["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().replace("${CLAUDE_PLUGIN_ROOT}", &root),
        ];
        let runs: Vec<_> = commands
            .iter()
            .map(|command| {
                let mut sh = Command::new("sh");
                sh.args(["-c", command]).current_dir(home.work()).env("TRAE_MEM_HOME", home.home()).env("PATH", &path);
                let payload = payload.to_string();
                std::thread::spawn(move || run_command(sh, &["sh", "-c"], Some(payload.as_bytes())))
            })
            .collect();
        for run in runs {
            run.join().unwrap().ok();
        }
    };
    for round in 0..20 {
        both_run("UserPromptSubmit", json!({"prompt": format!("asked through both hooks, {round}")}));
        both_run(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_both_{round}"), "tool_input": {"command": "ls"},
                "tool_response": {"stdout": format!("listed through both hooks, {round}")}}),
        );
    }
    let counts = |sql: &str| -> Vec<i64> {
        let db = home.db();
        let mut statement = db.prepare(sql).unwrap();
        statement.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    let per_prompt = "SELECT count(*) FROM observations WHERE kind = 'user' GROUP BY content ORDER BY content";
    assert_eq!(counts(per_prompt), [1; 20], "each prompt stored once");
    let per_call =
        "SELECT count(*) FROM observations WHERE content LIKE '%listed through both hooks%' GROUP BY content";
    assert_eq!(counts(per_call), [1; 20], "each tool call stored once");

    // The fix doctor gives; then install adds nothing beside the plugin.
    home.run(&["uninstall", "claude-code"], None).ok();
    let doctor = home.run_env(&["doctor", "--json"], &[("PATH", &path)], None).ok();
    let alone = check(&doctor, "client claude-code (plugin)");
    assert_eq!(
        alone["detail"],
        format!(
            "the trae-mem@trae-mem plugin (enabled in {}) runs trae-mem {}",
            user_home.join(".claude/settings.json").display(),
            env!("CARGO_PKG_VERSION")
        ),
        "{doctor}"
    );
    let install = home.run(&["install", "claude-code"], None).ok();
    assert!(install.stdout.contains("enables the trae-mem@trae-mem plugin"), "{install}");
    assert!(!home.work().join(".claude").exists(), "{install}");
    // A plugin that cannot find trae-mem is a problem, with the fix.
    let doctor = home.run_env(&["doctor", "--json"], &[("PATH", "/usr/bin:/bin")], None).code(1);
    let lost = check(&doctor, "client claude-code (plugin)");
    assert!(lost["fix"].as_str().unwrap().contains("npm install -g trae-mem"), "{doctor}");
}

/// The real Claude Code, or a loud skip.
fn claude(test: &str) -> Option<PathBuf> {
    let found = std::env::var_os("TRAE_MEM_TEST_CLAUDE").map(PathBuf::from);
    let works =
        found.as_ref().is_some_and(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()));
    if !works {
        skip(test, "Claude Code is not installed (TRAE_MEM_TEST_CLAUDE): run scripts/test, which installs it from npm");
        return None;
    }
    found
}

/// Runs `claude` with `args` in the project, with the test's home, the mock
/// API, and trae-mem on PATH; within two minutes.
fn run_claude(claude: &Path, home: &Home, api: &MockAnthropic, args: &[&str]) -> Run {
    let user_home = home.work().parent().unwrap().to_owned();
    let path = format!("{}:{}", Path::new(bin()).parent().unwrap().display(), std::env::var("PATH").unwrap());
    let mut cmd = Command::new("timeout");
    cmd.arg("120")
        .arg(claude)
        .args(args)
        .current_dir(home.work())
        .env_clear()
        .env("PATH", path)
        .env("HOME", &user_home)
        .env("TRAE_MEM_HOME", home.home())
        .env("ANTHROPIC_BASE_URL", &api.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    run_command(cmd, args, None)
}

#[test]
fn claude_code_installs_the_plugin_from_the_repository_and_a_prompt_reaches_the_store() {
    let Some(claude) = claude("claude-code-plugin: the real Claude Code") else { return };
    let home = Home::new();
    let api = MockAnthropic::start();
    let version = run_claude(&claude, &home, &api, &["--version"]).ok();
    eprintln!("Claude Code {}", version.stdout.trim());
    for manifest in [repo().to_owned(), plugin_dir()] {
        let validate =
            run_claude(&claude, &home, &api, &["plugin", "validate", "--strict", manifest.to_str().unwrap()]);
        assert!(validate.ok().stdout.contains("Validation passed"));
    }

    // A manual install, then the plugin from the repository as a marketplace.
    home.run(&["install", "claude-code"], None).ok();
    run_claude(&claude, &home, &api, &["plugin", "marketplace", "add", repo().to_str().unwrap()]).ok();
    run_claude(&claude, &home, &api, &["plugin", "install", "trae-mem@trae-mem"]).ok();
    let path = format!("{}:{}", Path::new(bin()).parent().unwrap().display(), std::env::var("PATH").unwrap());
    let doctor = home.run_env(&["doctor", "--json"], &[("PATH", &path)], None).code(1);
    assert!(check(&doctor, "client claude-code (plugin)")["detail"].as_str().unwrap().contains("both run trae-mem"));

    // Both run each hook; the prompt and the answer are stored once.
    let prompt = "Where is the retry budget for uploads set? (asked through both)";
    let session = run_claude(&claude, &home, &api, &["-p", prompt]).ok();
    assert!(session.stdout.contains(ANSWER), "{session}");
    assert!(!api.messages_requests().is_empty(), "Claude Code never asked the mock API");
    assert_eq!(stored(&home, "user", prompt), 1);
    assert_eq!(stored(&home, "response", ANSWER), 1);
    // Both MCP servers too: the model sees each tool twice.
    let sent = api.messages_requests().last().unwrap().to_string();
    for tool in ["mcp__trae-mem__trae_mem_search", "mcp__plugin_trae-mem_trae-mem__trae_mem_search"] {
        assert!(sent.contains(tool), "{tool} not offered: {sent}");
    }

    // Through the plugin alone, after doctor's fix.
    home.run(&["uninstall", "claude-code"], None).ok();
    let doctor = home.run_env(&["doctor", "--json"], &[("PATH", &path)], None).ok();
    assert_eq!(check(&doctor, "client claude-code (plugin)")["ok"], true, "{doctor}");
    let prompt = "Which flag turns the upload retries off? (asked through the plugin)";
    run_claude(&claude, &home, &api, &["-p", prompt]).ok();
    assert_eq!(stored(&home, "user", prompt), 1);
    // What the model was sent: the memory the plugin's SessionStart hook
    // gave back, and the tools of the plugin's MCP server (not a manual one's).
    let sent = api.messages_requests().last().unwrap().to_string();
    assert!(sent.contains("SessionStart hook additional context") && sent.contains("trae-mem"), "{sent}");
    assert!(sent.contains("mcp__plugin_trae-mem_trae-mem__trae_mem_search"), "{sent}");
    assert!(!sent.contains("mcp__trae-mem__trae_mem_search"), "the manual MCP server is still there");
}
