//! `trae-mem install` and `trae-mem uninstall`: a client's hook and MCP
//! configuration, merged into (and taken back out of) the user's own.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};

use super::Env;
use trae_mem::client::Client;
use trae_mem::install::{self, Change, Target};

/// Where a client's config goes.
#[derive(Debug, Args)]
pub struct Scope {
    /// The client: claude-code, cursor, codex, gemini, cline, or trae (MCP only).
    #[arg(value_name = "CLIENT", value_parser = client_parser())]
    client: Client,
    /// The project to configure. [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "global")]
    project: Option<PathBuf>,
    /// Configure the client for every project, in the user's home directory.
    #[arg(long)]
    global: bool,
    /// Write the project's committed config, for the whole team: it runs
    /// `trae-mem` from PATH rather than this binary's path, and names no
    /// home. Without it, Claude Code's hooks go to your own
    /// .claude/settings.local.json and its MCP server to ~/.claude.json.
    #[arg(long, conflicts_with = "global")]
    shared: bool,
}

/// Make a coding agent run trae-mem: write its hooks (and MCP registration).
///
/// Merges into the client's existing config, keeping every other hook and
/// setting; a second run changes nothing. Each original file is kept in the
/// trae-mem home (install-backups/) until uninstall. The config runs this
/// binary by its absolute path, except with --shared.
#[derive(Debug, Args)]
pub struct InstallCmd {
    #[command(flatten)]
    scope: Scope,
}

/// Remove exactly what `trae-mem install` added to a client's config.
#[derive(Debug, Args)]
pub struct UninstallCmd {
    #[command(flatten)]
    scope: Scope,
}

impl InstallCmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (target, backups) = self.scope.target(env)?;
        report(&install::install(self.scope.client, &target, &backups)?, "already installed; nothing changed");
        self.scope.advise(&target)
    }
}

impl UninstallCmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (target, backups) = self.scope.target(env)?;
        report(&install::uninstall(self.scope.client, &target, &backups)?, "not installed; nothing changed");
        Ok(())
    }
}

impl Scope {
    /// Where to write, and where the originals are kept.
    fn target(&self, env: &Env) -> Result<(Target, PathBuf)> {
        let root = if self.global {
            install::user_home().context("--global writes to your home directory")?
        } else {
            let dir = self.project.clone().unwrap_or_else(|| env.cwd.clone());
            trae_mem::project::canonical(&dir).with_context(|| format!("no project directory {}", dir.display()))?
        };
        let config = env.load_config()?;
        let trae_mem_home = std::path::absolute(&config.home).unwrap_or(config.home);
        // A home chosen by --home or TRAE_MEM_HOME is named in the MCP
        // entry: not every client passes its environment on to MCP servers.
        // Not in a shared config: it is this machine's path.
        let home = (config.home_from.chosen() && !self.shared).then(|| trae_mem_home.clone());
        let bin = if self.shared { PathBuf::from(install::ON_PATH) } else { install::this_binary()? };
        let target = Target { root, global: self.global, shared: self.shared, bin, home };
        Ok((target, trae_mem_home.join("install-backups")))
    }

    /// What the user should know after installing.
    fn advise(&self, target: &Target) -> Result<()> {
        if self.shared && install::on_path(install::ON_PATH).is_none() {
            eprintln!(
                "warning: `trae-mem` is not on your PATH, and the shared config runs it from there; \
                 install it with `npm install -g trae-mem` or `cargo install --path . --locked` (each teammate does the same)"
            );
        }
        // `npx trae-mem install` runs the binary from npx's cache, which npm
        // clears as it likes: the hooks written here would stop with it.
        if target.bin.components().any(|part| part.as_os_str() == "_npx") {
            eprintln!(
                "warning: this trae-mem runs from npx's cache ({}), which npm may clear, and these hooks with it; \
                 keep them working with `npm install -g trae-mem`, then `trae-mem install {}` again",
                target.bin.display(),
                self.client
            );
        }
        let committed = install::shared_only_files(self.client, target)?;
        if let Some(first) = committed.first() {
            println!(
                "{} is the project's own file: if your team commits it, install with --shared \
                 so that it runs `trae-mem` from PATH rather than this machine's path.",
                first.display()
            );
        }
        if self.client == Client::Codex {
            println!(
                "Codex runs only the hooks you trust: start codex{}, open /hooks and trust trae-mem's hooks \
                 (again after trae-mem moves: trust follows the command).",
                if self.global { "" } else { " in this project, trust the project," }
            );
        }
        Ok(())
    }
}

/// Reads a client by its name exactly (no aliases), listing the names in
/// the help and in the error for any other word.
fn client_parser() -> impl TypedValueParser<Value = Client> {
    PossibleValuesParser::new(Client::ALL.map(Client::name)).try_map(|name| name.parse::<Client>())
}

fn report(changes: &[Change], nothing: &str) {
    if changes.is_empty() {
        println!("{nothing}");
    }
    for change in changes {
        println!("{}: {}", change.path.display(), change.what);
    }
}
