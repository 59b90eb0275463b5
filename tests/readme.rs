//! The README, followed as a new user follows it: its two commands' demo
//! and the commands the demo prints, then "Getting started" (install, a
//! client's hooks at work, doctor, uninstall), each command taken from the
//! README's own text and run by a shell, with a fresh HOME and no
//! TRAE_MEM_HOME. A README that stops working fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Run, bin, run_command};

/// The commands of the first `sh` block after `heading`, without comments.
fn commands_under(heading: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = &readme[readme.find(&format!("## {heading}\n")).unwrap_or_else(|| panic!("no {heading:?}"))..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    block.lines().map(|l| l.split(" #").next().unwrap().trim().to_owned()).filter(|l| !l.is_empty()).collect()
}

/// A new user's machine: a home directory, a project, and `trae-mem` on
/// PATH, as `npm install -g trae-mem` or `cargo install --path . --locked`
/// leaves it (the same build the tests run; tests/npm.rs packs and installs
/// it with npm).
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        let machine = Machine { dir: tempfile::tempdir().unwrap() };
        for dir in ["home/.cargo/bin", "project", "tmp"] {
            std::fs::create_dir_all(machine.dir.path().join(dir)).unwrap();
        }
        std::os::unix::fs::symlink(
            Path::new(bin()).canonicalize().unwrap(),
            machine.home().join(".cargo/bin/trae-mem"),
        )
        .unwrap();
        machine
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project").canonicalize().unwrap()
    }

    /// Runs a command line as the user's shell would, in the project.
    fn sh(&self, line: &str, stdin: Option<&[u8]>) -> Run {
        let mut sh = Command::new("sh");
        let path = format!("{}:{}", self.home().join(".cargo/bin").display(), std::env::var("PATH").unwrap());
        sh.args(["-c", line])
            .current_dir(self.project())
            .env("HOME", self.home())
            // The machine's own: git's user config, and the temporary folder
            // (where a kept demo home stays).
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("TMPDIR", self.dir.path().join("tmp"))
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .env_remove("TRAE_MEM_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME");
        run_command(sh, &["sh", "-c", line], stdin)
    }
}

#[test]
fn the_demo_runs_and_the_commands_it_prints_run_as_printed() {
    let machine = Machine::new();
    let [demo, _test] = &commands_under("Two commands")[..] else { panic!("two commands") };
    // `cargo run --release -- demo` runs the release binary with `demo`.
    let demo = demo.strip_prefix("cargo run --release -- ").unwrap();
    let run = machine.sh(&format!("trae-mem {demo}"), None).ok();
    // It removes its home, and says how to keep one.
    let keep = run.stdout.split("== Explore it yourself").nth(1).unwrap().trim();
    let keep = keep.split("  #").next().unwrap().trim();
    assert!(keep.ends_with(" demo --keep"), "{run}");
    let run = machine.sh(keep, None).ok();
    let printed: Vec<&str> =
        run.stdout.split("== Explore it yourself").nth(1).unwrap().lines().map(str::trim).collect();
    let printed: Vec<&str> =
        printed.into_iter().filter(|l| !l.is_empty() && !l.starts_with("the demo's home")).collect();
    assert_eq!(printed.len(), 3, "{run}");
    // The viewer (the third) serves until stopped; tests/serve.rs covers it.
    assert!(printed[2].contains(" serve "), "{run}");
    let search = machine.sh(printed[0], None).ok();
    assert!(search.stdout.to_lowercase().contains("busy"), "the search finds what it names: {search}");
    let sessions = machine.sh(printed[1], None).ok();
    assert!(sessions.stdout.contains("inventory-api"), "{sessions}");
}

/// Runs the command Claude Code would run for `event`, from the installed
/// settings, with `payload` on stdin.
fn claude_code_runs(machine: &Machine, event: &str, payload: Value) -> Run {
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(machine.project().join(".claude/settings.local.json")).unwrap())
            .unwrap();
    let command = settings["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    let mut payload = payload;
    payload["hook_event_name"] = json!(event);
    payload["cwd"] = json!(machine.project());
    machine.sh(&command, Some(payload.to_string().as_bytes())).ok()
}

#[test]
fn getting_started_installs_remembers_checks_and_uninstalls() {
    let machine = Machine::new();
    let commands = commands_under("Getting started");
    assert_eq!(commands[0], "npm install -g trae-mem", "Machine::new stands in for it (tests/npm.rs installs it)");
    let install = machine.sh(&commands[1], None).ok();
    assert!(install.stdout.contains(".claude/settings.local.json"), "{install}");

    // "Start Claude Code in that project": one session, then the next one
    // starts with what it did.
    for (event, payload) in [
        ("SessionStart", json!({"session_id": "one", "source": "startup"})),
        ("UserPromptSubmit", json!({"session_id": "one", "prompt": "Fix the flaky login test"})),
        (
            "PostToolUse",
            json!({"session_id": "one", "tool_name": "Bash", "tool_use_id": "t1",
                "tool_input": {"command": "cargo test login"}, "tool_response": {"stdout": "1 passed"}}),
        ),
        (
            "Stop",
            json!({"session_id": "one", "last_assistant_message": "Fixed: the login test waited on a real clock."}),
        ),
        ("SessionEnd", json!({"session_id": "one", "reason": "exit"})),
    ] {
        claude_code_runs(&machine, event, payload);
    }
    let next = claude_code_runs(&machine, "SessionStart", json!({"session_id": "two", "source": "startup"}));
    let told: Value = serde_json::from_str(&next.stdout).unwrap();
    let context = told["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.contains("Fix the flaky login test"), "{context}");
    assert!(machine.home().join(".trae-mem/trae-mem.db").is_file(), "the default home");

    // "`trae-mem doctor` checks the setup"
    let doctor = machine.sh("trae-mem doctor --json", None).ok();
    let checks: Value = serde_json::from_str(&doctor.stdout).unwrap();
    let client = checks["checks"].as_array().unwrap().iter().find(|c| c["check"] == "client claude-code").unwrap();
    assert_eq!(client["ok"], true, "{doctor}");

    // "`trae-mem uninstall claude-code` takes it all out again"
    machine.sh("trae-mem uninstall claude-code", None).ok();
    assert!(!machine.project().join(".claude").exists());
    let user_json = std::fs::read_to_string(machine.home().join(".claude.json")).unwrap_or_default();
    assert!(!user_json.contains("trae-mem"), "{user_json}");
}
