//! `trae-mem demo`: the first thing a new user runs.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Deserialize;
use serde_json::Value;

use super::Env;
use super::output::{self, Style, paint};

/// Real Claude Code payloads, then two longer sessions in the same format.
const RECORDED: &str = include_str!("../../examples/demo/recorded.jsonl");
const INVENTORY_API: &str = include_str!("../../examples/demo/inventory-api.jsonl");

/// See trae-mem work: replay recorded sessions, then search and recall them.
///
/// Replays recorded coding sessions through the real hook path into a fresh home, then shows
/// what trae-mem remembers: sessions, a search in English and in Chinese, a timeline, the
/// summaries, and the context the next session starts with.
/// Uses a new temporary home, removed at the end unless --keep is given,
/// or the home --home names (which is kept).
#[derive(Debug, Args)]
pub struct Cmd {
    /// Keep the temporary home, and end with the commands to explore it.
    #[arg(long)]
    keep: bool,
}

#[derive(Deserialize)]
struct Line {
    event: String,
    payload: Value,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let temporary = match &env.home {
            Some(home) => DemoHome { path: home.clone(), remove: false },
            None => DemoHome { path: fresh_home()?, remove: !self.keep },
        };
        let home = temporary.path.clone();
        let exe = std::env::current_exe().context("cannot find the trae-mem binary")?;
        let loaded = trae_mem::config::load(&env.cwd, Some(&home))?;
        if let Some(warning) = plugins_standing_down(&loaded) {
            eprintln!("warning: {warning}");
        }
        let c = output::colour();
        let lines: Vec<Line> = RECORDED
            .lines()
            .chain(INVENTORY_API.lines())
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()
            .context("the demo data is corrupt")?;

        heading(&format!("Replaying {} hook events into {}", lines.len(), home.display()), c);
        for line in &lines {
            let payload = serde_json::to_vec(&line.payload)?;
            let run = trae_mem(&exe, &home, &["hook", "--event", &line.event], Some(&payload))?;
            if !run.status.success() {
                bail!("the hook failed on {}: {}", line.event, String::from_utf8_lossy(&run.stderr));
            }
        }
        println!(
            "{}",
            paint("each event ran `trae-mem hook` as Claude Code runs it: JSON on stdin, one process", Style::Dim, c)
        );

        show(&exe, &home, &["sessions"], c)?;
        show(&exe, &home, &["search", "database locked"], c)?;
        show(&exe, &home, &["search", "缓存"], c)?;
        let first_hit = first_hit_id(&exe, &home, "database is locked")?;
        show(&exe, &home, &["timeline", &first_hit, "--window", "5"], c)?;
        let session = first_session_with(&exe, &home, "inventory-api")?;
        show(&exe, &home, &["show", &session[..8]], c)?;

        heading("What the next session in this project is told at SessionStart", c);
        // The block a SessionStart hook would give, from the code the hook
        // runs, without starting a session (which would leave an empty one
        // behind, beside those the listing above showed).
        let store = super::open_store(&loaded)?;
        let project = trae_mem::project::identify(Path::new("/home/dev/src/inventory-api"));
        let settings = &loaded.config.context;
        let told = trae_mem::recall::context::at_session_start(&store, &project, None, settings)?;
        println!("{}", told.context("the demo's project has no memory to tell")?);

        heading("Explore it yourself", c);
        // As they run before anything is installed: this binary, by its path.
        let exe = trae_mem::install::shell_quote(&exe);
        if temporary.remove {
            println!("  {exe} demo --keep      # keeps the demo's home, and ends with the commands to explore it");
            return Ok(());
        }
        if env.home.is_none() {
            println!("{}", paint(&format!("the demo's home is kept in {}", home.display()), Style::Dim, c));
        }
        let prefix = format!("{exe} --home {}", trae_mem::install::shell_quote(&home));
        println!("  {prefix} search \"busy timeout\"");
        println!("  {prefix} sessions");
        println!("  {prefix} serve --open      # the web viewer");
        Ok(())
    }
}

/// The demo's home, removed when the demo ends (whichever way) if it is
/// a temporary one the user did not ask to keep.
struct DemoHome {
    path: PathBuf,
    remove: bool,
}

impl Drop for DemoHome {
    fn drop(&mut self) {
        if self.remove {
            // Nothing to do about a home that will not go: it is in the
            // system's temporary folder.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Why some of the plugins the config declares would not run, in one
/// line, when they would not: the hooks then fall back on the built-in
/// behaviour quietly (their reasons go to logs/plugins.log), and someone
/// watching the demo should know that it is not showing the plugins.
fn plugins_standing_down(loaded: &trae_mem::config::Loaded) -> Option<String> {
    let plugins = trae_mem::plugins::Plugins::of(&loaded.config, &loaded.home, true);
    let failed: Vec<(&str, anyhow::Error)> =
        plugins.all().iter().filter_map(|p| plugins.check(p).err().map(|e| (p.name.as_str(), e))).collect();
    let (_, first) = failed.first()?;
    let names: Vec<&str> = failed.iter().map(|(name, _)| *name).collect();
    let summarizer = plugins.summarizer().filter(|s| names.contains(&s.name.as_str()));
    Some(format!(
        "{} not loaded, so the built-in behaviour stands in{}: {first:#}",
        match names.len() {
            1 => format!("the plugin {}", names[0]),
            _ => format!("the plugins {}", names.join(", ")),
        },
        if summarizer.is_some() { " (the built-in summarizer writes the summaries)" } else { "" },
    ))
}

fn heading(text: &str, colour: bool) {
    println!("\n{}", paint(&format!("== {text}"), Style::Bold, colour));
}

/// Runs one command, printing it and its output as a user would see them.
fn show(exe: &Path, home: &Path, args: &[&str], colour: bool) -> Result<()> {
    heading(
        &format!(
            "trae-mem {}",
            args.iter()
                .map(|a| if a.contains(' ') { format!("\"{a}\"") } else { a.to_string() })
                .collect::<Vec<_>>()
                .join(" ")
        ),
        colour,
    );
    let run = trae_mem(exe, home, args, None)?;
    std::io::stdout().write_all(&run.stdout)?;
    if !run.status.success() {
        bail!("`trae-mem {}` failed: {}", args.join(" "), String::from_utf8_lossy(&run.stderr));
    }
    Ok(())
}

/// The best observation hit's id (a summary hit has none), for `timeline`.
fn first_hit_id(exe: &Path, home: &Path, query: &str) -> Result<String> {
    let run = trae_mem(exe, home, &["search", query, "--json"], None)?;
    let found: Value = serde_json::from_slice(&run.stdout)?;
    let hits = found["hits"].as_array().into_iter().flatten();
    hits.filter_map(|hit| hit["id"].as_i64()).next().map(|id| id.to_string()).context("the demo search found nothing")
}

fn first_session_with(exe: &Path, home: &Path, project_part: &str) -> Result<String> {
    let run = trae_mem(exe, home, &["sessions", "--json"], None)?;
    let sessions: Vec<Value> = serde_json::from_slice(&run.stdout)?;
    sessions
        .iter()
        .rev()
        .find(|s| s["project"].as_str().is_some_and(|p| p.contains(project_part)))
        .and_then(|s| s["id"].as_str().map(str::to_owned))
        .context("the demo recorded no session")
}

/// Runs the trae-mem binary against `home`, as a client would.
fn trae_mem(exe: &Path, home: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<std::process::Output> {
    let mut cmd = Command::new(exe);
    cmd.arg("--home")
        .arg(home)
        .args(args)
        // The demo's sessions belong to their recorded project, not to
        // whatever project the user runs the demo from.
        .env_remove("CLAUDE_PROJECT_DIR")
        .env_remove("TRAE_MEM_INDEX")
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if output::colour() {
        cmd.env("CLICOLOR_FORCE", "1");
    }
    let mut child = cmd.spawn().with_context(|| format!("cannot run {}", exe.display()))?;
    if let Some(input) = stdin {
        child.stdin.take().expect("piped").write_all(input)?;
    }
    Ok(child.wait_with_output()?)
}

fn fresh_home() -> Result<PathBuf> {
    let home = std::env::temp_dir().join(format!("trae-mem-demo-{}", std::process::id()));
    if home.exists() {
        std::fs::remove_dir_all(&home)?;
    }
    std::fs::create_dir_all(&home).with_context(|| format!("cannot create {}", home.display()))?;
    Ok(home)
}
