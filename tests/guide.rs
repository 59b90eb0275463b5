//! `plugins/README.md`, followed as written: its code blocks become a Rust
//! crate and a Python app, built with the commands it gives, declared with
//! its TOML, and driven through a real hook. A guide that stops working
//! fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::llm_summarizer as llm;
use crate::mock_model::{self, MockModel};
use crate::util::{Home, Run, run_command, skip};

/// The code blocks of one section of the guide, in order, as (language, text),
/// with the indentation of list items taken off.
fn blocks(section: &str) -> Vec<(String, String)> {
    let guide = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/README.md")).unwrap();
    let start = guide.find(&format!("## {section}\n")).unwrap_or_else(|| panic!("no section {section:?}"));
    let body = &guide[start + 3..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut found = Vec::new();
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.trim_start().strip_prefix("```") else { continue };
        let indent = line.len() - line.trim_start().len();
        let mut text = String::new();
        for line in lines.by_ref() {
            if line.trim_start().starts_with("```") {
                break;
            }
            text.push_str(line.get(indent..).unwrap_or(line.trim_start()));
            text.push('\n');
        }
        found.push((lang.to_owned(), text));
    }
    found
}

/// The one block of `lang` at `index` among those of that language.
fn block(blocks: &[(String, String)], lang: &str, index: usize) -> String {
    blocks.iter().filter(|(l, _)| l == lang).nth(index).unwrap_or_else(|| panic!("no {lang} block {index}")).1.clone()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().map(Result::unwrap) {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A command run in `dir` without the variables cargo sets for this test,
/// so that a nested build starts clean.
fn clean_command(program: &str, dir: &Path) -> Command {
    let mut command = Command::new(program);
    command.current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" || key == "RUSTFLAGS" || key == "RUSTC_WRAPPER" {
            command.env_remove(&key);
        }
    }
    command
}

/// Declares the guide's plugin in `project`, checks it, and sends a Stop
/// whose answer holds two TODO lines through a real hook run there.
fn drive(home: &Home, project: &Path, declaration: &str) -> Vec<(String, String)> {
    std::fs::write(project.join("trae-mem.toml"), declaration).unwrap();
    let mut check = home.command(&["plugins", "check"]);
    check.current_dir(project);
    let checked = run_command(check, &["plugins", "check"], None).ok();
    assert!(checked.stdout.contains("ok   todos"), "{checked}");
    let payload = json!({"session_id": "guide", "cwd": project, "hook_event_name": "Stop",
        "last_assistant_message": "Done.\nTODO: measure the import\nTODO: write the changelog"});
    let mut hook = home.command(&["hook"]);
    hook.current_dir(project);
    let run: Run = run_command(hook, &["hook"], Some(&serde_json::to_vec(&payload).unwrap())).ok();
    assert!(!run.stderr.contains("plugin"), "no plugin warning: {run}");
    let db = home.db();
    let mut stmt = db.prepare("SELECT kind, content FROM observations WHERE kind = 'todo' ORDER BY id").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn todos() -> Vec<(String, String)> {
    vec![
        ("todo".to_owned(), "TODO: measure the import".to_owned()),
        ("todo".to_owned(), "TODO: write the changelog".to_owned()),
    ]
}

#[test]
fn the_rust_guide_builds_a_plugin_that_a_hook_runs() {
    let home = Home::new();
    let guide = blocks("A plugin in Rust, step by step");
    let krate = home.work().join("todos");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(krate.join("Cargo.toml"), block(&guide, "toml", 0)).unwrap();
    std::fs::write(krate.join("src/lib.rs"), block(&guide, "rust", 0)).unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("wit"), &krate.join("wit"));

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = clean_command(&cargo, &krate);
    build.args(["build", "--release", "--target", "wasm32-wasip2"]);
    run_command(build, &["cargo", "build"], None).ok();
    assert!(krate.join("target/wasm32-wasip2/release/todos.wasm").exists());

    assert_eq!(drive(&home, &krate, &block(&guide, "toml", 1)), todos());
}

/// componentize-py, from `TRAE_MEM_TEST_COMPONENTIZE_PY` (set by
/// `scripts/test`), or `None` with a loud skip; under `CI=true` a missing
/// tool is a failure.
fn componentize_py() -> Option<PathBuf> {
    let found = std::env::var_os("TRAE_MEM_TEST_COMPONENTIZE_PY").map(PathBuf::from).filter(|p| p.exists());
    if found.is_none() {
        let message = "componentize-py is not installed (TRAE_MEM_TEST_COMPONENTIZE_PY is unset): \
                       run scripts/test, which installs it";
        skip("the Python plugin guide", message);
    }
    found
}

/// Builds the Python plugin of the guide's `section` in a folder `name`,
/// with its `app.py` and its componentize-py command as written; returns the
/// folder and the section's blocks.
fn build_python(componentize: &Path, home: &Home, section: &str, name: &str) -> (PathBuf, Vec<(String, String)>) {
    let guide = blocks(section);
    let app = home.work().join(name);
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(app.join("app.py"), block(&guide, "python", 0)).unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("wit"), &app.join("wit"));
    let command_line = block(&guide, "sh", 0);
    let mut words = command_line.split_whitespace();
    assert_eq!(words.next(), Some("componentize-py"), "{command_line}");
    let mut build = clean_command(componentize.to_str().unwrap(), &app);
    build.args(words);
    run_command(build, &["componentize-py"], None).ok();
    (app, guide)
}

#[test]
fn the_python_guide_builds_a_plugin_that_a_hook_runs() {
    let Some(componentize) = componentize_py() else { return };
    let home = Home::new();
    let (app, _) = build_python(&componentize, &home, "A plugin in Python", "py-todos");

    // The Rust guide's declaration, with the path the Python section gives.
    let rust_guide = blocks("A plugin in Rust, step by step");
    let declaration = block(&rust_guide, "toml", 1).replace("target/wasm32-wasip2/release/todos.wasm", "todos.wasm");
    assert_eq!(drive(&home, &app, &declaration), todos());
    let log = std::fs::read_to_string(home.home().join("logs/plugins.log")).unwrap();
    assert!(log.contains("todos info: reading a ModelResponse"), "host.log reaches the plugin log\n{log}");
}

#[test]
fn the_python_model_summarizer_guide_asks_the_granted_server_with_a_key_it_never_holds() {
    let Some(componentize) = componentize_py() else { return };
    let model = MockModel::start(Vec::new());
    let home = Home::new();
    let (app, guide) = build_python(&componentize, &home, "A summarizer that asks a model, in Python", "py-summarizer");

    // The guide's declaration, pointed at the mock server instead of Anthropic's.
    let declaration = block(&guide, "toml", 0)
        .replace("https://api.anthropic.com", &model.url)
        .replace("/path/to/summarizer.wasm", &app.join("summarizer.wasm").display().to_string())
        .replace("ANTHROPIC_API_KEY", llm::KEY_VAR);
    home.write("home/trae-mem.toml", declaration.as_bytes());
    home.run(&["plugins", "check"], None).ok();
    llm::session(&home, "py");
    llm::end(&home, "py");
    llm::pending(&home, false);
    assert_eq!(llm::brief(&home), mock_model::BRIEF);
    let seen = model.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].header("x-api-key"), Some(llm::KEY), "the host added the key");
    let log = std::fs::read_to_string(home.home().join("logs/plugins.log")).unwrap();
    assert!(log.contains("py-summarizer info: summarized"), "{log}");
    let learnings: i64 =
        home.db().query_row("SELECT count(*) FROM observations WHERE kind = 'learning'", [], |r| r.get(0)).unwrap();
    assert_eq!(learnings, 1);
}

/// Runs `trae-mem hook` in `project` with this payload.
fn hook_in(home: &Home, project: &Path, payload: serde_json::Value) -> Run {
    let mut hook = home.command(&["hook"]);
    hook.current_dir(project);
    run_command(hook, &["hook"], Some(&serde_json::to_vec(&payload).unwrap())).ok()
}

#[test]
fn plugins_new_scaffolds_each_role_that_builds_declares_and_runs_through_a_hook() {
    let home = Home::new();
    // One target directory for the three crates, kept between runs: their
    // dependencies build once. `plugins new` honours CARGO_TARGET_DIR.
    let shared_target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/plugins-new");
    // The guide's two commands, for its event handler and the same for the
    // other roles, run by a shell with `trae-mem` on PATH.
    let quickest = block(&blocks("The quickest start"), "sh", 0);
    let commands: Vec<&str> = quickest.lines().map(|l| l.split(" #").next().unwrap().trim()).collect();
    assert_eq!(commands[0], "trae-mem plugins new my-plugin --role event-handler");
    assert_eq!(commands[1], "cd my-plugin && cargo build --release");
    let bin_dir = Path::new(crate::util::bin()).parent().unwrap().to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let plugins = home.work().join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    for (name, role) in
        [("my-plugin", "event-handler"), ("ends-sampler", "sampler"), ("counting-summary", "summarizer")]
    {
        let shell = |line: &str| {
            let line = line.replace("my-plugin", name).replace("event-handler", role);
            let mut sh = clean_command("sh", &plugins);
            sh.args(["-c", &line])
                .env("PATH", &path)
                .env("TRAE_MEM_HOME", home.home())
                .env("CARGO_TARGET_DIR", &shared_target);
            run_command(sh, &["sh", "-c", &line], None).ok()
        };
        let created = shell(commands[0]);
        let declaration = &created.stdout[created.stdout.find("\n[").unwrap_or_else(|| panic!("{created}")) + 1..];
        let krate = plugins.join(name);
        // It prints the same build command, for wherever the crate is.
        let printed = created.stdout.lines().find(|l| l.contains("cargo build")).unwrap().trim();
        assert_eq!(printed, format!("cd {} && cargo build --release", krate.display()));
        shell(commands[1]);

        let project = home.work().join(format!("project-{role}"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(project.join("trae-mem.toml"), declaration).unwrap();
        let mut check = home.command(&["plugins", "check"]);
        check.current_dir(&project);
        let checked = run_command(check, &["plugins", "check"], None).ok();
        assert!(checked.stdout.contains(&format!("ok   {name}")), "{checked}");

        let session = json!(format!("s-{role}"));
        let db = home.db();
        match role {
            "event-handler" => {
                hook_in(
                    &home,
                    &project,
                    json!({"session_id": session, "cwd": project, "hook_event_name": "Stop",
                    "last_assistant_message": "Done.\nTODO: measure it\nTODO: ship it"}),
                );
                let mut stmt = db.prepare("SELECT content FROM observations WHERE kind = 'todo' ORDER BY id").unwrap();
                let todos: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
                assert_eq!(todos, ["TODO: measure it", "TODO: ship it"]);
            }
            "sampler" => {
                let stdout = format!("first line\n{}\nlast line", "x".repeat(50_000));
                hook_in(
                    &home,
                    &project,
                    json!({"session_id": session, "cwd": project, "hook_event_name": "PostToolUse",
                    "tool_name": "Bash", "tool_input": {"command": "make"}, "tool_response": {"stdout": stdout}}),
                );
                let (content, tags): (String, String) = db
                    .query_row("SELECT content, tags_json FROM observations WHERE tool_name = 'Bash'", [], |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })
                    .unwrap();
                assert!(content.contains("→ first line\n") && content.contains("\nlast line"), "{content}");
                assert!(content.contains("characters dropped] …"), "{content}");
                assert_eq!(tags, "[\"sampled-by:ends-sampler\"]");
            }
            _ => {
                let work = |project: &Path, session: &str| {
                    for payload in [
                        json!({"hook_event_name": "UserPromptSubmit", "prompt": "Make the import faster"}),
                        json!({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "cargo bench"},
                            "tool_response": {"stdout": "ok"}}),
                        json!({"hook_event_name": "SessionEnd", "reason": "exit"}),
                    ] {
                        let mut payload = payload;
                        payload["session_id"] = json!(session);
                        payload["cwd"] = json!(project);
                        hook_in(&home, project, payload);
                    }
                };
                let brief_in = |project: &str| -> String {
                    db.query_row(
                        "SELECT content FROM summaries JOIN sessions ON sessions.id = session_id
                         WHERE level = 'brief' AND project_path LIKE '%' || ?1",
                        [project],
                        |r| r.get(0),
                    )
                    .unwrap()
                };
                work(&project, session.as_str().unwrap());
                assert_eq!(
                    brief_in(&format!("project-{role}")),
                    "1 asked, 1 tool calls, 0 errors. First: Make the import faster"
                );

                // Given a model's URL and a grant to it, the same crate asks
                // the model for the brief (off the hook's path) and reports
                // the tokens it cost.
                let model = MockModel::start(Vec::new());
                let url = format!("{}/v1/chat/completions", model.url);
                let granted = home.work().join("project-model");
                std::fs::create_dir_all(&granted).unwrap();
                let config = format!(
                    "{declaration}[plugins.grants]\nhttp = [{{ url = \"{url}\" }}]\n\
                     [plugins.config]\nurl = \"{url}\"\nmodel = \"mock-model\"\n"
                );
                std::fs::write(granted.join("trae-mem.toml"), config).unwrap();
                work(&granted, "s-model");
                let run_in_granted = |args: &[&str]| {
                    let mut command = home.command(args);
                    command.current_dir(&granted);
                    run_command(command, args, None).ok()
                };
                let ran = run_in_granted(&["summarize", "--pending", "--json"]);
                assert_eq!(model.seen().len(), 1, "{ran}");
                assert!(model.seen()[0].body.contains("Make the import faster"), "the session was sent");
                assert!(
                    brief_in("project-model").contains(mock_model::BRIEF),
                    "the model's answer is the brief: {ran}"
                );
                let stats = run_in_granted(&["stats", "--json"]).json();
                let (input, output) = mock_model::TOKENS;
                assert_eq!(stats["model_summaries"]["tokens_today"], input + output, "{stats}");
            }
        }
    }
}
