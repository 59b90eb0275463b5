//! `trae-mem plugins`: list, check and try the plugins in `trae-mem.toml`.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use serde::Serialize;

use super::Env;
use super::output::{self, Style, plain, styled};
use super::scaffold::Scaffold;
use trae_mem::config::Role;
use trae_mem::plugins::Plugins;

/// Write, list, check and try WebAssembly plugins.
///
/// Plugins are declared in trae-mem.toml (see plugins/README.md).
#[derive(Debug, Args)]
pub struct Cmd {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Start a plugin: a Rust crate for one role, against the current interface.
    ///
    /// The crate builds with `cargo build --release` (for wasm32-wasip2), and
    /// its src/lib.rs is a small working plugin to change. Prints the
    /// [[plugins]] block that declares it.
    New {
        /// The plugin's name, which is also the crate's.
        name: String,
        /// What it does: event-handler (events into observations), sampler
        /// (shrinks large tool outputs) or summarizer (writes the summaries).
        #[arg(long, value_parser = ["event-handler", "sampler", "summarizer"])]
        role: String,
        /// Where to create the crate. [default: ./NAME]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// List the declared plugins: name, role, events or tools, path, and whether it is compiled.
    List {
        /// Print JSON: [{name, role, events, tools, path, cached}].
        #[arg(long)]
        json: bool,
    },
    /// Validate the config, then compile (and cache) and instantiate every plugin.
    Check {
        /// Print JSON: [{name, ok, source, error}].
        #[arg(long)]
        json: bool,
    },
    /// Run one plugin on a payload from stdin and print what it returns.
    ///
    /// An event handler gets the event and the payload's JSON; a sampler gets
    /// the payload's tool_name, tool_input and tool_response (as text) with
    /// the capture budget; a summarizer gets the payload as a list of observations.
    Run {
        /// The plugin's name.
        name: String,
        /// The event to hand an event handler.
        #[arg(long, default_value = "ModelResponse")]
        event: String,
    },
}

#[derive(Serialize)]
struct Listed<'a> {
    name: &'a str,
    role: &'a str,
    events: &'a [String],
    tools: &'a [String],
    path: String,
    cached: bool,
}

#[derive(Serialize)]
struct Checked {
    name: String,
    ok: bool,
    source: Option<trae_mem::plugins::cache::Source>,
    error: Option<String>,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        if let Action::New { name, role, dir } = &self.action {
            return new(env, name, role, dir.as_deref());
        }
        let loaded = env.load_config()?;
        let plugins = Plugins::of(&loaded.config, &loaded.home, true);
        match self.action {
            Action::New { .. } => unreachable!("handled before the config is loaded"),
            Action::List { json } => {
                let listed: Vec<Listed> = plugins
                    .all()
                    .iter()
                    .map(|p| Listed {
                        name: &p.name,
                        role: p.role.as_str(),
                        events: &p.events,
                        tools: &p.tools,
                        path: p.path.display().to_string(),
                        cached: plugins.artifact(p).is_some_and(|a| a.exists()),
                    })
                    .collect();
                if json {
                    return output::json(&listed);
                }
                if listed.is_empty() {
                    eprintln!("no plugins declared; see plugins/README.md");
                    return Ok(());
                }
                let mut table = output::Table::new();
                for l in &listed {
                    let subscribed =
                        if l.role == Role::Sampler.as_str() { l.tools.join(",") } else { l.events.join(",") };
                    table.row(vec![
                        styled(l.name, Style::Bold),
                        plain(l.role),
                        plain(subscribed),
                        plain(if l.cached { "compiled" } else { "not compiled" }),
                        plain(l.path.clone()),
                    ]);
                }
                table.print(output::colour())
            }
            Action::Check { json } => {
                let checked: Vec<Checked> = plugins
                    .all()
                    .iter()
                    .map(|p| match plugins.check(p) {
                        Ok(source) => Checked { name: p.name.clone(), ok: true, source: Some(source), error: None },
                        Err(err) => {
                            Checked { name: p.name.clone(), ok: false, source: None, error: Some(format!("{err:#}")) }
                        }
                    })
                    .collect();
                let failed = checked.iter().filter(|c| !c.ok).count();
                if json {
                    output::json(&checked)?;
                } else {
                    let c = output::colour();
                    println!("config ok ({})", output::count(checked.len() as u64, "plugin", "plugins"));
                    for check in &checked {
                        match &check.error {
                            None => println!("{} {}", output::paint("ok  ", Style::Green, c), check.name),
                            Some(error) => println!("{} {error}", output::paint("FAIL", Style::Red, c)),
                        }
                    }
                }
                if failed > 0 {
                    bail!("{failed} of {} failed the check", output::count(checked.len() as u64, "plugin", "plugins"));
                }
                Ok(())
            }
            Action::Run { name, event } => {
                let plugin = plugins.named(&name).with_context(|| format!("no plugin named {name:?} is declared"))?;
                let mut input = String::new();
                std::io::stdin().read_to_string(&mut input)?;
                let payload: serde_json::Value =
                    serde_json::from_str(&input).context("the payload on stdin is not JSON")?;
                match plugin.role {
                    Role::EventHandler => output::json(&plugins.handle(plugin, &event, &input)?),
                    Role::Sampler => {
                        let tool = payload["tool_name"].as_str().unwrap_or("Bash");
                        let output_text =
                            trae_mem::ingest::record::response_text(&payload["tool_response"], usize::MAX);
                        let budget = loaded.config.capture.tool_response_chars;
                        output::json(&plugins.sample(
                            plugin,
                            tool,
                            &payload["tool_input"].to_string(),
                            &output_text,
                            budget,
                        )?)
                    }
                    Role::Summarizer => {
                        let observations: Vec<trae_mem::store::Observation> = serde_json::from_value(payload)
                            .context("a summarizer takes a JSON list of observations")?;
                        let facts = trae_mem::plugins::SessionFacts {
                            id: "cli".into(),
                            project: env.cwd.display().to_string(),
                            started_at: observations.first().map_or(0, |o| o.ts),
                            ended_at: observations.last().map(|o| o.ts),
                        };
                        // A model's call gets the time a queued summary gets.
                        let limit = plugin
                            .uses_network()
                            .then(|| std::time::Duration::from_millis(loaded.config.summarize.timeout_ms));
                        output::json(&plugins.summarize(plugin, &facts, &observations, limit)?)
                    }
                }
            }
        }
    }
}

/// `plugins new`: writes the crate and says how to build and declare it.
fn new(env: &Env, name: &str, role: &str, dir: Option<&Path>) -> Result<()> {
    let role: Role = serde_json::from_value(serde_json::json!(role)).context("an unknown role")?;
    let dir = dir.map_or_else(|| env.cwd.join(name), |d| env.cwd.join(d));
    let scaffold = Scaffold::create(name, role, &dir)?;
    let shown = trae_mem::install::shell_quote(&scaffold.dir);
    println!("created the {} plugin {name} in {}", role.as_str(), scaffold.dir.display());
    println!("build it (once before: rustup target add wasm32-wasip2):");
    println!("  cd {shown} && cargo build --release");
    println!("then declare it in trae-mem.toml (the project's, or the one in trae-mem's home):\n");
    print!("{}", scaffold.declaration());
    Ok(())
}
