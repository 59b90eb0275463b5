//! `trae-mem doctor` on a healthy home and on broken ones: each problem
//! has a verdict and a fix, and any problem makes it exit 1.

use serde_json::{Value, json};

use crate::util::{Home, Run};

/// The checks of a `doctor --json` run, by name.
fn checks(out: &Value) -> Vec<(String, bool)> {
    out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["check"].as_str().unwrap().to_owned(), c["ok"] == true))
        .collect()
}

fn check<'a>(out: &'a Value, name: &str) -> &'a Value {
    out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {out:#}"))
}

/// A home with some memory, and Claude Code installed in the project.
fn healthy() -> Home {
    let home = Home::new();
    let payload =
        json!({"session_id": "s", "cwd": home.work(), "hook_event_name": "UserPromptSubmit", "prompt": "hello"});
    home.run(&["hook"], Some(payload.to_string().as_bytes())).ok();
    home.run(&["install", "claude-code"], None).ok();
    home
}

#[test]
fn a_healthy_home_passes_every_check() {
    let home = healthy();
    let run = home.run(&["doctor", "--json"], None).ok();
    let out = run.json();
    assert_eq!(out["ok"], true, "{run}");
    assert_eq!(
        checks(&out),
        ["config", "home", "database", "client claude-code", "spool", "dead letters"]
            .iter()
            .map(|c| (c.to_string(), true))
            .collect::<Vec<_>>()
    );
    assert!(check(&out, "database")["detail"].as_str().unwrap().contains("passes its integrity checks"));
    let text = home.run(&["doctor"], None).ok();
    assert!(text.stdout.ends_with("all good\n"), "{text}");
}

#[test]
fn a_home_trae_mem_makes_is_its_owners_alone_and_doctor_says_so() {
    let home = Home::new();
    let fresh = home.home().join("fresh");
    let fresh_str = fresh.display().to_string();
    let payload = json!({"session_id": "s", "cwd": home.work(), "hook_event_name": "UserPromptSubmit", "prompt": "hi"});
    home.run_env(&["hook"], &[("TRAE_MEM_HOME", &fresh_str)], Some(payload.to_string().as_bytes())).ok();
    let run = home.run_env(&["doctor", "--json"], &[("TRAE_MEM_HOME", &fresh_str)], None);
    let detail = check(&run.json(), "home")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("yours alone (its mode gives the group and others nothing)"), "{run}");

    // A home made by hand, readable by others: a warning with the fix.
    std::fs::set_permissions(&fresh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = home.run_env(&["doctor", "--json"], &[("TRAE_MEM_HOME", &fresh_str)], None);
    let out = run.json();
    let home_check = check(&out, "home");
    assert!(home_check["detail"].as_str().unwrap().contains("can be read by other users"), "{run}");
    assert_eq!(home_check["fix"], format!("make it yours alone: chmod -R go-rwx {fresh_str}"), "{run}");
}

#[test]
fn a_corrupt_database_fails_with_a_fix() {
    let home = healthy();
    // Keep SQLite's 100-byte header; overwrite every page after it.
    let mut bytes = std::fs::read(home.db_path()).unwrap();
    bytes[100..].iter_mut().for_each(|b| *b = 0x5a);
    std::fs::write(home.db_path(), bytes).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", home.db_path().display()));
    }
    let run = home.run(&["doctor", "--json"], None).code(1);
    let db = check(&run.json(), "database").clone();
    assert_eq!(db["ok"], false, "{run}");
    assert!(db["fix"].as_str().unwrap().contains("move the damaged file aside"), "{run}");
}

#[test]
fn a_bad_config_and_a_missing_plugin_fail_with_fixes() {
    let home = healthy();
    home.write("work/trae-mem.toml", b"[capture]\nprompt_chars = \"many\"\n");
    let run = home.run(&["doctor"], None).code(1);
    assert!(run.stdout.contains("FAIL config:"), "{run}");
    assert!(run.stdout.contains("fix: correct the file named above"), "{run}");

    home.write(
        "work/trae-mem.toml",
        b"[[plugins]]\nname = \"gone\"\npath = \"plugins/gone.wasm\"\nrole = \"event-handler\"\nevents = [\"FileChanged\"]\n",
    );
    let run = home.run(&["doctor", "--json"], None).code(1);
    let out = run.json();
    let plugin = check(&out, "plugin gone");
    assert_eq!(plugin["ok"], false, "{run}");
    assert!(plugin["fix"].as_str().unwrap().contains("trae-mem plugins check"));
    assert_eq!(check(&out, "config")["ok"], true, "{run}");
}

#[test]
fn a_client_config_for_another_binary_is_a_problem_and_a_dead_letter_a_warning() {
    let home = healthy();
    let settings = home.work().join(".claude/settings.local.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let bin = std::path::Path::new(crate::util::bin()).canonicalize().unwrap();
    std::fs::write(&settings, text.replace(&bin.display().to_string(), "/old/place/trae-mem")).unwrap();
    home.run(&["hook"], Some(b"not json")).code(1);
    let run = home.run(&["doctor", "--json"], None).code(1);
    let out = run.json();
    let client = check(&out, "client claude-code");
    assert!(client["detail"].as_str().unwrap().contains("/old/place/trae-mem"), "{run}");
    assert_eq!(client["fix"], "trae-mem install claude-code");
    // A dead letter stops no hook: a warning with the command that clears it.
    let dead = check(&out, "dead letters");
    assert_eq!(dead["ok"], true, "{run}");
    assert!(dead["fix"].as_str().unwrap().contains("trae-mem spool drop"), "{run}");
    // The fix works.
    home.run(&["install", "claude-code"], None).ok();
    home.run(&["spool", "replay"], None);
    let after = home.run(&["doctor", "--json"], None);
    assert_eq!(check(&after.json(), "client claude-code")["ok"], true, "{after}");
}

/// The README's "Use with Claude Code" hooks, pasted by hand.
const MANUAL_HOOKS: &str = r#"{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "trae-mem hook --event SessionStart"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "trae-mem hook --event UserPromptSubmit"}]}],
  "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "trae-mem hook --event PostToolUse"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "echo the user's own hook"}]}]
}}"#;

#[test]
fn hand_written_hooks_are_recognised_and_install_replaces_them() {
    let home = Home::new();
    let settings = home.work().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, MANUAL_HOOKS).unwrap();
    // `trae-mem` on PATH is this binary.
    let bin_dir = std::path::Path::new(crate::util::bin()).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = home.run_env(&["doctor", "--json"], &[("PATH", &path)], None);
    let client = check(&run.json(), "client claude-code").clone();
    assert_eq!(client["ok"], true, "{run}");

    // A personal install adds no second set beside the team's.
    let personal = home.run(&["install", "claude-code"], None).ok();
    assert!(personal.stdout.contains("no personal hooks added"), "{personal}");
    assert!(!home.work().join(".claude/settings.local.json").exists(), "{personal}");
    home.run(&["install", "claude-code", "--shared"], None).ok();
    let installed: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    for (event, entries) in installed["hooks"].as_object().unwrap() {
        let commands: Vec<&str> = entries
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|e| e["hooks"].as_array().unwrap())
            .map(|h| h["command"].as_str().unwrap())
            .collect();
        let ours = commands.iter().filter(|c| c.contains("trae-mem")).count();
        assert_eq!(ours, 1, "{event} would run trae-mem {ours} times: {commands:?}");
        if event == "Stop" {
            assert!(commands.contains(&"echo the user's own hook"), "{commands:?}");
        }
    }
}

#[test]
fn hooks_that_run_another_working_copy_are_no_problem_but_a_broken_one_is() {
    let home = healthy();
    let settings = home.work().join(".claude/settings.local.json");
    let text = std::fs::read_to_string(&settings).unwrap();
    let bin = std::path::Path::new(crate::util::bin()).canonicalize().unwrap();
    let copy = home.work().join("other/trae-mem");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&bin, &copy).unwrap();
    std::fs::write(&settings, text.replace(&bin.display().to_string(), &copy.display().to_string())).unwrap();
    let run = home.run(&["doctor", "--json"], None).ok();
    let client = check(&run.json(), "client claude-code").clone();
    let detail = client["detail"].as_str().unwrap();
    assert!(detail.contains(&copy.display().to_string()) && detail.contains("trae-mem 0."), "{run}");

    std::fs::write(&copy, "#!/bin/sh\nexit 3\n").unwrap();
    let run = home.run(&["doctor", "--json"], None).code(1);
    let client = check(&run.json(), "client claude-code").clone();
    assert_eq!(client["ok"], false, "{run}");
    assert!(client["detail"].as_str().unwrap().contains("does not answer --version"), "{run}");
}

/// The `[hooks.state]` rows Codex's `/hooks` screen writes when the user
/// trusts every hook in `hooks_json`: its key and its hash of each
/// (`sha256` of the hook's identity as sorted, compact JSON).
fn codex_trusts(hooks_json: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(hooks_json).unwrap()).unwrap();
    let mut rows = String::new();
    for (event, groups) in hooks["hooks"].as_object().unwrap() {
        let snake: String = event
            .chars()
            .enumerate()
            .flat_map(|(i, c)| {
                let sep = (i > 0 && c.is_ascii_uppercase()).then_some('_');
                sep.into_iter().chain([c.to_ascii_lowercase()])
            })
            .collect();
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        let timeout = if snake == "session_end" { 1 } else { 600 };
        let identity = format!(
            "{{\"event_name\":\"{snake}\",\"hooks\":[{{\"async\":false,\"command\":{},\"timeout\":{timeout},\"type\":\"command\"}}]}}",
            json!(command)
        );
        let hash: String = Sha256::digest(identity.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
        rows.push_str(&format!(
            "[hooks.state.\"{}:{snake}:0:0\"]\ntrusted_hash = \"sha256:{hash}\"\n",
            hooks_json.display()
        ));
    }
    rows
}

#[test]
fn doctor_says_when_codex_will_skip_hooks_it_does_not_trust() {
    let home = Home::new();
    let codex_home = home.work().join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let codex_env = [("CODEX_HOME", codex_home.to_str().unwrap())];
    home.run_env(&["install", "codex"], &codex_env, None).ok();
    let project = home.work().canonicalize().unwrap();
    let hooks_json = project.join(".codex/hooks.json");

    // Installed, but neither the project nor the hooks trusted yet.
    let run = home.run_env(&["doctor", "--json"], &codex_env, None).code(1);
    let codex = check(&run.json(), "client codex").clone();
    let detail = codex["detail"].as_str().unwrap();
    assert!(detail.contains("does not trust the project"), "{run}");
    assert!(detail.contains("not trusted in Codex, so Codex skips them: SessionStart"), "{run}");
    assert!(codex["fix"].as_str().unwrap().contains("/hooks"), "{run}");

    // Trusted as Codex records it: all good.
    let trusted = format!(
        "model = \"o4\"\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n\n{}",
        project.display(),
        codex_trusts(&hooks_json)
    );
    std::fs::write(codex_home.join("config.toml"), &trusted).unwrap();
    let run = home.run_env(&["doctor", "--json"], &codex_env, None);
    assert_eq!(check(&run.json(), "client codex")["ok"], true, "{run}");

    // trae-mem moved: the hooks' command changed, and Codex's trust no longer holds.
    let text = std::fs::read_to_string(&hooks_json).unwrap();
    let bin = std::path::Path::new(crate::util::bin()).canonicalize().unwrap();
    let copy = home.work().join("moved/trae-mem");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&bin, &copy).unwrap();
    std::fs::write(&hooks_json, text.replace(&bin.display().to_string(), &copy.display().to_string())).unwrap();
    let run = home.run_env(&["doctor", "--json"], &codex_env, None).code(1);
    let detail = check(&run.json(), "client codex")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("changed since Codex trusted them"), "{run}");
}

#[test]
fn each_config_file_is_reported_once() {
    let home = Home::new();
    home.run(&["install", "cursor"], None).ok();
    let bin = std::path::Path::new(crate::util::bin()).canonicalize().unwrap().display().to_string();
    for file in [".cursor/hooks.json", ".cursor/mcp.json"] {
        let path = home.work().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace(&bin, "/old/place/trae-mem")).unwrap();
    }
    let run = home.run(&["doctor", "--json"], None).code(1);
    let detail = check(&run.json(), "client cursor")["detail"].as_str().unwrap().to_owned();
    assert_eq!(detail.matches("/old/place/trae-mem").count(), 2, "{detail}");
}

#[test]
fn a_home_that_does_not_exist_is_reported_and_never_made() {
    let home = Home::new();
    let typo = home.work().join("typo-home");
    let run = home.run(&["--home", typo.to_str().unwrap(), "doctor", "--json"], None);
    let out = run.json();
    let said = check(&out, "home").to_string();
    assert!(said.contains("no memory in") && said.contains("does not exist"), "{said}");
    assert!(!typo.exists(), "doctor made the home {}: {run}", typo.display());
}

/// The `TOML parse error at line N` reports in a config check's detail,
/// each as (N, the rest of it).
fn config_problems(out: &Value) -> Vec<(usize, String)> {
    let detail = check(out, "config")["detail"].as_str().unwrap().to_owned();
    detail
        .split("TOML parse error at line ")
        .skip(1)
        .map(|report| {
            let (line, rest) = report.split_once(", column ").unwrap();
            (line.parse().unwrap(), rest.to_owned())
        })
        .collect()
}

/// Checks that doctor named exactly these config problems, each on its line.
fn assert_problems(out: &Value, run: &Run, expected: &[(usize, &str)]) {
    let problems = config_problems(out);
    assert_eq!(problems.len(), expected.len(), "{run}");
    for ((line, said), (want_line, want)) in problems.iter().zip(expected) {
        assert!(*line == *want_line && said.contains(want), "line {want_line}: {want}\n{run}");
    }
}

#[test]
fn every_unknown_key_and_wrong_type_of_a_config_file_is_named_with_its_line() {
    let home = Home::new();
    let project =
        "[capture]\nprompt_char = 3\nevents = \"*\"\n\n[hook]\ndeadline = 5\n\n[summarize]\ntimeout_ms = \"fast\"\n";
    home.write("work/trae-mem.toml", project.as_bytes());
    let run = home.run(&["doctor", "--json"], None).code(1);
    let out = run.json();
    assert_eq!(check(&out, "config")["ok"], false, "{run}");
    let expected = [
        (2, "unknown field `prompt_char`, expected one of `prompt_chars`"),
        (3, "invalid type: string \"*\", expected a sequence"),
        (6, "unknown field `deadline`, expected `deadline_ms` or `lock_wait_ms`"),
        (9, "invalid type: string \"fast\", expected u64"),
    ];
    assert_problems(&out, &run, &expected);
    let text = home.run(&["doctor"], None).code(1);
    assert!(text.stdout.contains("FAIL config: ") && text.stdout.contains("4 problems:"), "{text}");
    assert!(text.stdout.contains("unknown field `deadline`"), "{text}");

    // The home's file likewise; a plugin whose name is no string is not
    // also said to have no name.
    std::fs::remove_file(home.work().join("trae-mem.toml")).unwrap();
    let global = "[context]\nbudget_chars = \"lots\"\nsessions = -1\n\n[mcp]\nallow_forgets = true\n\n\
                  [[plugins]]\nname = 3\npath = \"a.wasm\"\nrole = \"sampler\"\ntools = [\"*\"]\n";
    std::fs::write(home.home().join("trae-mem.toml"), global).unwrap();
    let run = home.run(&["doctor", "--json"], None).code(1);
    let out = run.json();
    let expected = [
        (2, "invalid type: string \"lots\", expected usize"),
        (3, "invalid value: integer `-1`, expected usize"),
        (6, "unknown field `allow_forgets`, expected `allow_forget`"),
        (9, "invalid type: integer `3`, expected a string"),
    ];
    assert_problems(&out, &run, &expected);
    assert!(check(&out, "config")["detail"].as_str().unwrap().contains("home/trae-mem.toml"), "{run}");
}
