//! `trae-mem install` and `uninstall`: the config each client gets (golden
//! files under tests/golden/, the binary's path shown as $TRAE_MEM), merging
//! beside the user's own hooks and settings, idempotency, and the round trip.
//! Set UPDATE_GOLDEN=1 to rewrite the golden files from what install writes.

use std::path::{Path, PathBuf};

use crate::util::{Home, bin};

/// The files each client's project install writes, relative to the project.
const WRITTEN: &[(&str, &[&str])] = &[
    ("claude-code", &[".claude/settings.local.json"]),
    ("cursor", &[".cursor/hooks.json", ".cursor/mcp.json"]),
    ("codex", &[".codex/hooks.json", ".codex/config.toml"]),
    ("gemini", &[".gemini/settings.json"]),
    ("cline", &[".clinerules/hooks/TaskStart", ".clinerules/hooks/PostToolUse", ".clinerules/hooks/TaskCancel"]),
    ("trae", &[".trae/mcp.json"]),
];

fn binary() -> String {
    Path::new(bin()).canonicalize().unwrap().to_string_lossy().into_owned()
}

/// The user's home directory (HOME) of a test home.
fn user_home(home: &Home) -> PathBuf {
    home.work().parent().unwrap().to_owned()
}

/// Where install keeps the original of `file`: in the trae-mem home.
fn backup_of(home: &Home, file: &Path) -> PathBuf {
    home.home().join("install-backups").join(file.to_string_lossy().replace('/', "%"))
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A file's text with this binary's path as $TRAE_MEM.
fn normalized(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).replace(&binary(), "$TRAE_MEM")
}

/// Every file under `dir`, with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().map(Result::unwrap) {
            if entry.file_type().unwrap().is_dir() {
                stack.push(entry.path());
            } else {
                files.push((entry.path(), std::fs::read(entry.path()).unwrap()));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn each_client_gets_its_golden_config() {
    for (client, files) in WRITTEN {
        let home = Home::new();
        // The default home, which the MCP entry need not name.
        let mut install = home.command(&["install", client]);
        install.env_remove("TRAE_MEM_HOME");
        let run = crate::util::run_command(install, &["install", client], None).ok();
        for file in *files {
            let path = home.work().join(file);
            assert!(run.stdout.contains(&path.display().to_string()), "{client}: {file} not reported\n{run}");
            let golden = golden_dir().join(client).join(file.trim_start_matches('.'));
            let actual = normalized(&path);
            if std::env::var_os("UPDATE_GOLDEN").is_some() {
                std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
                std::fs::write(&golden, &actual).unwrap();
            }
            let expected = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
            assert_eq!(actual, expected, "{client}: {file} differs from {}", golden.display());
        }
    }
}

#[test]
fn cline_scripts_are_executable_and_run_this_binary() {
    let home = Home::new();
    home.run(&["install", "cline"], None).ok();
    let script = home.work().join(".clinerules/hooks/UserPromptSubmit");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o111, 0o111);
    let payload = br#"{"clineVersion":"3.36.0","hookName":"UserPromptSubmit","timestamp":"1","taskId":"t1","workspaceRoots":["/tmp"],"userId":"u","userPromptSubmit":{"prompt":"from the script","attachments":[]}}"#;
    let mut cmd = std::process::Command::new(&script);
    cmd.env("TRAE_MEM_HOME", home.home());
    let run = crate::util::run_command(cmd, &["<script>"], Some(payload)).ok();
    assert_eq!(run.stdout.trim(), r#"{"cancel":false}"#, "{run}");
    let prompt: String = home.db().query_row("SELECT content FROM observations", [], |r| r.get(0)).unwrap();
    assert_eq!(prompt, "from the script");
}

/// A Claude Code settings file with the user's own hook and settings.
const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }
}
"#;

#[test]
fn install_merges_beside_other_hooks_and_settings_and_is_idempotent() {
    let home = Home::new();
    let settings = home.work().join(".claude/settings.json");
    home.write("work/.claude/settings.json", USER_SETTINGS.as_bytes());
    let first = home.run(&["install", "claude-code", "--shared"], None).ok();
    assert!(first.stdout.contains("original kept in"), "{first}");
    let merged: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(merged["model"], "opus");
    assert_eq!(merged["permissions"]["allow"][0], "Bash(ls:*)");
    assert_eq!(merged["hooks"]["Notification"][0]["hooks"][0]["command"], "notify-send done");
    let pre = merged["hooks"]["PreToolUse"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "the user's hook, then trae-mem's: {pre:#?}");
    assert_eq!(pre[0]["hooks"][0]["command"], "~/bin/guard.sh");
    assert_eq!(pre[1]["hooks"][0]["command"], "trae-mem hook --client claude-code --event PreToolUse");
    assert_eq!(std::fs::read_to_string(backup_of(&home, &settings)).unwrap(), USER_SETTINGS);

    let before = snapshot(&home.work());
    let second = home.run(&["install", "claude-code", "--shared"], None).ok();
    assert_eq!(second.stdout, "already installed; nothing changed\n");
    assert_eq!(snapshot(&home.work()), before, "a second install changes no file");
}

#[test]
fn uninstall_restores_every_client_config_exactly() {
    // The user's configs before install, where each client has one.
    let originals: &[(&str, &str, &str)] = &[
        ("claude-code", ".claude/settings.local.json", USER_SETTINGS),
        (
            "cursor",
            ".cursor/hooks.json",
            "{\"version\": 1, \"hooks\": {\"afterFileEdit\": [{\"command\": \"./fmt.sh\"}]}}\n",
        ),
        (
            "codex",
            ".codex/config.toml",
            "# my codex\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\" # keep\n",
        ),
        (
            "gemini",
            ".gemini/settings.json",
            "{\"theme\":\"dark\",\"hooks\":{\"BeforeTool\":[{\"matcher\":\"write_file\",\"hooks\":[{\"type\":\"command\",\"command\":\"./check.sh\"}]}]}}",
        ),
        ("cline", ".clinerules/hooks/TaskStart", "#!/bin/sh\necho '{\"cancel\": false}'\n"),
        ("trae", ".trae/mcp.json", "{\"mcpServers\": {\"github\": {\"command\": \"npx\", \"args\": [\"gh\"]}}}\n"),
    ];
    for (client, file, text) in originals {
        let home = Home::new();
        home.write(&format!("work/{file}"), text.as_bytes());
        let before = snapshot(&home.work());
        let install = home.run(&["install", client], None).ok();
        assert_ne!(snapshot(&home.work()), before, "{client}: install changed nothing\n{install}");
        if *client == "cline" {
            assert!(install.stdout.contains("left alone"), "the user's TaskStart stays\n{install}");
        }
        home.run(&["uninstall", client], None).ok();
        assert_eq!(snapshot(&home.work()), before, "{client}: uninstall left the project changed");
        let again = home.run(&["uninstall", client], None).ok();
        assert_eq!(again.stdout, "not installed; nothing changed\n", "{client}");
    }
}

#[test]
fn a_fresh_project_is_left_without_config_files_after_uninstall() {
    for (client, files) in WRITTEN {
        let home = Home::new();
        home.run(&["install", client], None).ok();
        home.run(&["uninstall", client], None).ok();
        for file in *files {
            assert!(!home.work().join(file).exists(), "{client}: {file} is left");
        }
        let left: Vec<_> = std::fs::read_dir(home.work()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{client}: the project keeps {left:?}");
    }
}

#[test]
fn global_installs_go_to_the_home_directory() {
    let home = Home::new();
    let user_home = home.work().parent().unwrap().to_owned();
    let run = home.run(&["install", "cursor", "--global"], None).ok();
    assert!(user_home.join(".cursor/hooks.json").is_file(), "{run}");
    assert!(!home.work().join(".cursor").exists());
    home.run(&["install", "trae", "--global"], None).code(1);
    home.run(&["uninstall", "cursor", "--global"], None).ok();
    assert!(!user_home.join(".cursor/hooks.json").exists());
}

#[test]
fn a_config_that_is_not_json_is_left_alone_with_a_clear_error() {
    let home = Home::new();
    home.write("work/.cursor/hooks.json", b"{ not json");
    let run = home.run(&["install", "cursor"], None).code(1);
    assert!(run.stderr.contains("hooks.json is not valid JSON; fix it first"), "{run}");
    assert_eq!(std::fs::read(home.work().join(".cursor/hooks.json")).unwrap(), b"{ not json");
}

/// The top-level keys of a JSON object file, in the file's order.
fn key_order(text: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    value.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn install_keeps_the_order_of_the_users_keys_and_uninstall_gives_the_file_back() {
    let home = Home::new();
    let settings = home.work().join(".claude/settings.json");
    // Not in sorted order, at the top and inside `hooks`.
    let original = r#"{
  "permissions": {"deny": ["Read(.env)"], "allow": ["Bash(ls:*)"]},
  "model": "opus",
  "hooks": {
    "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard.sh"}]}]
  },
  "env": {"RUST_LOG": "info", "CARGO_TERM_COLOR": "always"}
}
"#;
    home.write("work/.claude/settings.json", original.as_bytes());
    home.run(&["install", "claude-code", "--shared"], None).ok();
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(key_order(&installed), ["permissions", "model", "hooks", "env"]);
    let value: serde_json::Value = serde_json::from_str(&installed).unwrap();
    let hook_events: Vec<&String> = value["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(hook_events[..2], ["Notification", "PreToolUse"], "the user's events first, as they were");
    let env_keys: Vec<&String> = value["env"].as_object().unwrap().keys().collect();
    assert_eq!(env_keys, ["RUST_LOG", "CARGO_TERM_COLOR"]);

    // Without the backup, uninstall writes the document itself back.
    std::fs::remove_file(backup_of(&home, &settings)).unwrap();
    home.run(&["uninstall", "claude-code", "--shared"], None).ok();
    let restored = std::fs::read_to_string(&settings).unwrap();
    let pretty = |text: &str| serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(text).unwrap());
    assert_eq!(pretty(&restored).unwrap(), pretty(original).unwrap(), "the same keys, values and order");
}

#[test]
fn a_chosen_home_is_named_in_every_mcp_entry() {
    let home = Home::new();
    let chosen = home.home().display().to_string();
    let user_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(user_home(&home).join(".claude.json")).unwrap_or_default())
            .unwrap_or_default();
    assert!(user_json.is_null(), "nothing there yet");
    home.run(&["install", "claude-code"], None).ok();
    let user_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(user_home(&home).join(".claude.json")).unwrap()).unwrap();
    let project = home.work().canonicalize().unwrap().display().to_string();
    assert_eq!(
        user_json["projects"][&project]["mcpServers"]["trae-mem"]["args"],
        serde_json::json!(["--home", chosen, "mcp"])
    );
    for (client, mcp_file) in
        [("cursor", ".cursor/mcp.json"), ("gemini", ".gemini/settings.json"), ("trae", ".trae/mcp.json")]
    {
        home.run(&["install", client], None).ok();
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(home.work().join(mcp_file)).unwrap()).unwrap();
        assert_eq!(config["mcpServers"]["trae-mem"]["args"], serde_json::json!(["--home", chosen, "mcp"]), "{client}");
    }
    home.run(&["install", "codex"], None).ok();
    let codex = std::fs::read_to_string(home.work().join(".codex/config.toml")).unwrap();
    assert!(codex.contains(&format!("args = [\"--home\", \"{chosen}\", \"mcp\"]")), "{codex}");
}

#[test]
fn global_installs_honour_each_clients_own_config_home() {
    let home = Home::new();
    let codex_home = home.work().join("elsewhere/codex");
    let claude_home = home.work().join("elsewhere/claude");
    let gemini_home = home.work().join("elsewhere/gemini");
    for (client, variable, dir) in [
        ("codex", "CODEX_HOME", &codex_home),
        ("claude-code", "CLAUDE_CONFIG_DIR", &claude_home),
        ("gemini", "GEMINI_CLI_HOME", &gemini_home),
    ] {
        let run = home.run_env(&["install", client, "--global"], &[(variable, dir.to_str().unwrap())], None).ok();
        assert!(dir.is_dir(), "{client}: {run}");
    }
    assert!(codex_home.join("hooks.json").is_file() && codex_home.join("config.toml").is_file());
    assert!(claude_home.join("settings.json").is_file() && claude_home.join(".claude.json").is_file());
    assert!(gemini_home.join(".gemini/settings.json").is_file());
    let user_home = home.work().parent().unwrap().to_owned();
    for dir in [".codex", ".claude", ".gemini"] {
        assert!(!user_home.join(dir).exists(), "{dir} written in the home");
    }
    let run =
        home.run_env(&["install", "codex", "--global"], &[("CODEX_HOME", codex_home.to_str().unwrap())], None).ok();
    assert!(run.stdout.contains("/hooks"), "install codex says how to trust its hooks: {run}");
}

/// Every file under `dir` whose name says it is a backup.
fn stray_backups(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir).into_iter().map(|(p, _)| p).filter(|p| p.to_string_lossy().contains(".bak")).collect()
}

#[test]
fn a_project_install_is_personal_unless_shared_with_the_team() {
    let home = Home::new();
    let project = home.work().canonicalize().unwrap().display().to_string();
    let user_json = user_home(&home).join(".claude.json");
    let user_original = "{\"numStartups\": 3, \"projects\": {\"/elsewhere\": {\"allowedTools\": []}}}\n";
    std::fs::write(&user_json, user_original).unwrap();
    let team_original = "{\"permissions\": {\"allow\": [\"Bash(ls:*)\"]}}\n";
    home.write("work/.claude/settings.json", team_original.as_bytes());

    // Personal: uncommitted files only, with this binary's absolute path.
    home.run(&["install", "claude-code"], None).ok();
    let local = std::fs::read_to_string(home.work().join(".claude/settings.local.json")).unwrap();
    assert!(local.contains(&format!("{} hook --client claude-code --event SessionStart", binary())), "{local}");
    assert_eq!(std::fs::read_to_string(home.work().join(".claude/settings.json")).unwrap(), team_original);
    assert!(!home.work().join(".mcp.json").exists());
    let user: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&user_json).unwrap()).unwrap();
    assert_eq!(user["projects"][&project]["mcpServers"]["trae-mem"]["command"], binary());
    assert_eq!(user["projects"]["/elsewhere"]["allowedTools"], serde_json::json!([]), "other projects kept");
    assert_eq!(user["numStartups"], 3);
    home.run(&["uninstall", "claude-code"], None).ok();
    assert_eq!(std::fs::read_to_string(&user_json).unwrap(), user_original, "~/.claude.json given back");
    assert!(!home.work().join(".claude/settings.local.json").exists());

    // Shared: the committed files, a portable command, no home of this
    // machine, and no backup left in the project.
    let run = home.run(&["install", "claude-code", "--shared"], None).ok();
    assert!(run.stderr.contains("`trae-mem` is not on your PATH"), "{run}");
    let team = std::fs::read_to_string(home.work().join(".claude/settings.json")).unwrap();
    assert!(!team.contains(&binary()) && !team.contains(&home.home().display().to_string()), "{team}");
    let mcp: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.work().join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(mcp["mcpServers"]["trae-mem"], serde_json::json!({"command": "trae-mem", "args": ["mcp"]}));
    assert_eq!(stray_backups(&home.work()), Vec::<PathBuf>::new());

    // The shared command runs as a teammate's client runs it: by name, from PATH.
    let settings: serde_json::Value = serde_json::from_str(&team).unwrap();
    let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap();
    assert_eq!(command, "trae-mem hook --client claude-code --event UserPromptSubmit");
    let bin_dir = Path::new(bin()).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let payload = serde_json::json!({"session_id": "t", "cwd": home.work(), "prompt": "shared hooks work"});
    let mut sh = std::process::Command::new("sh");
    sh.current_dir(home.work()).env("TRAE_MEM_HOME", home.home()).env("PATH", &path).args(["-c", command]);
    crate::util::run_command(sh, &["sh", "-c", command], Some(payload.to_string().as_bytes())).ok();
    let stored: String =
        home.db().query_row("SELECT content FROM observations WHERE kind = 'user'", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, "shared hooks work");
    // With PATH set, no warning.
    let again = home.run_env(&["install", "claude-code", "--shared"], &[("PATH", &path)], None).ok();
    assert_eq!(again.stderr, "", "{again}");

    home.run(&["uninstall", "claude-code", "--shared"], None).ok();
    assert_eq!(std::fs::read_to_string(home.work().join(".claude/settings.json")).unwrap(), team_original);
    assert!(!home.work().join(".mcp.json").exists());

    // A client without a personal project file says how to share instead.
    let cursor = home.run(&["install", "cursor"], None).ok();
    assert!(cursor.stdout.contains("install with --shared"), "{cursor}");
}

/// Runs git in `dir` with the test's HOME and XDG_CONFIG_HOME, as install sees them.
fn git(home: &Home, dir: &Path, args: &[&str]) -> String {
    let user = user_home(home);
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", &user)
        .env("XDG_CONFIG_HOME", user.join(".config"))
        .env_remove("GIT_CONFIG_GLOBAL")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_personal_claude_code_install_keeps_its_file_out_of_git_as_claude_code_does() {
    let home = Home::new();
    let user = user_home(&home);
    let excludes = user.join(".config/git/ignore");

    // Not a git repository: nothing of git's is touched.
    home.run(&["install", "claude-code"], None).ok();
    assert!(!user.join(".config").exists(), "install wrote git config outside a repository");
    home.run(&["uninstall", "claude-code"], None).ok();

    git(&home, &home.work(), &["init", "-q"]);
    let first = home.run(&["install", "claude-code"], None).ok();
    assert!(
        first.stdout.contains(&format!("{}: **/.claude/settings.local.json ignored", excludes.display())),
        "{first}"
    );
    assert_eq!(std::fs::read_to_string(&excludes).unwrap(), "**/.claude/settings.local.json\n");
    let status = git(&home, &home.work(), &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("settings.local.json"), "git still offers it to commit:\n{status}");
    assert!(git(&home, &home.work(), &["check-ignore", ".claude/settings.local.json"]).contains("settings.local.json"));

    let again = home.run(&["install", "claude-code"], None).ok();
    assert_eq!(again.stdout, "already installed; nothing changed\n");
    assert_eq!(std::fs::read_to_string(&excludes).unwrap(), "**/.claude/settings.local.json\n");
    // Uninstall leaves the line, as it would be had Claude Code written it.
    home.run(&["uninstall", "claude-code"], None).ok();
    assert_eq!(std::fs::read_to_string(&excludes).unwrap(), "**/.claude/settings.local.json\n");

    // An excludes file of the user's own choosing is the one git reads, and the one written.
    let own = user.join("my-excludes");
    std::fs::write(&own, "*.log").unwrap();
    git(&home, &home.work(), &["config", "--global", "core.excludesFile", "~/my-excludes"]);
    let project = home.work().join("other");
    std::fs::create_dir_all(&project).unwrap();
    git(&home, &project, &["init", "-q"]);
    home.run(&["install", "claude-code", "--project", project.to_str().unwrap()], None).ok();
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "*.log\n**/.claude/settings.local.json\n");
    let status = git(&home, &project, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("settings.local.json"), "{status}");

    // A repository that ignores it already is left as it is.
    let ignored = home.work().join("ignored");
    std::fs::create_dir_all(&ignored).unwrap();
    git(&home, &ignored, &["init", "-q"]);
    std::fs::write(ignored.join(".gitignore"), ".claude/\n").unwrap();
    std::fs::write(&own, "*.log\n").unwrap();
    let run = home.run(&["install", "claude-code", "--project", ignored.to_str().unwrap()], None).ok();
    assert!(!run.stdout.contains("ignored in every git repository"), "{run}");
    assert_eq!(std::fs::read_to_string(&own).unwrap(), "*.log\n");
}

#[test]
fn an_install_run_from_npxs_cache_warns_that_its_hooks_would_go_with_it() {
    let home = Home::new();
    let cached = home.work().join(".npm/_npx/5b3c/node_modules/@trae-mem/linux-x64-gnu/bin/trae-mem");
    std::fs::create_dir_all(cached.parent().unwrap()).unwrap();
    std::fs::hard_link(bin(), &cached).or_else(|_| std::fs::copy(bin(), &cached).map(drop)).unwrap();
    let mut from_npx = std::process::Command::new(&cached);
    from_npx.args(["install", "claude-code"]).current_dir(home.work()).env("TRAE_MEM_HOME", home.home());
    from_npx.env("HOME", user_home(&home));
    let run = crate::util::run_command(from_npx, &["install", "claude-code"], None).ok();
    assert!(run.stderr.contains("runs from npx's cache") && run.stderr.contains("npm install -g trae-mem"), "{run}");
    let settings = std::fs::read_to_string(home.work().join(".claude/settings.local.json")).unwrap();
    assert!(settings.contains(&cached.canonicalize().unwrap().display().to_string()), "{settings}");
    home.run(&["uninstall", "claude-code"], None).ok();
    let installed = home.run(&["install", "claude-code"], None).ok();
    assert_eq!(installed.stderr, "", "{installed}");
}
