//! `trae-mem install` and `trae-mem uninstall`: a client's hook and MCP
//! configuration, merged into (and taken back out of) the user's own.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::Env;
use trae_mem::install::{self, Change, Target};

/// Where a client's config goes.
#[derive(Debug, Args)]
pub struct Scope {
    /// The client: claude-code, cursor, codex, gemini, cline, or trae (MCP only).
    #[arg(value_name = "CLIENT", value_parser = clap::builder::PossibleValuesParser::new(install::CLIENTS))]
    client: String,
    /// The project to configure. [default: the current directory]
    #[arg(long, value_name = "DIR", conflicts_with = "global")]
    project: Option<PathBuf>,
    /// Configure the client for every project, in the user's home directory.
    #[arg(long)]
    global: bool,
}

/// Make a coding agent run trae-mem: write its hooks (and MCP registration).
///
/// Merges into the client's existing config, keeping every other hook and
/// setting; a second run changes nothing. The original file is kept as
/// <file>.trae-mem.bak. The config runs this binary by its absolute path.
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
        let target = self.scope.target(env)?;
        report(&install::install(&self.scope.client, &target)?, "already installed; nothing changed");
        if self.scope.client == "codex" {
            println!(
                "Codex runs only the hooks you trust: start codex{}, open /hooks and trust trae-mem's hooks \
                 (again after trae-mem moves: trust follows the command).",
                if self.scope.global { "" } else { " in this project, trust the project," }
            );
        }
        Ok(())
    }
}

impl UninstallCmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let target = self.scope.target(env)?;
        report(&install::uninstall(&self.scope.client, &target)?, "not installed; nothing changed");
        Ok(())
    }
}

impl Scope {
    fn target(&self, env: &Env) -> Result<Target> {
        let root = if self.global {
            std::env::var_os("HOME").map(PathBuf::from).context("--global needs HOME to be set")?
        } else {
            let dir = self.project.clone().unwrap_or_else(|| env.cwd.clone());
            dir.canonicalize().with_context(|| format!("no project directory {}", dir.display()))?
        };
        // A home chosen by --home or TRAE_MEM_HOME is named in the MCP
        // entry: not every client passes its environment on to MCP servers.
        let chosen = env.home.is_some() || std::env::var_os("TRAE_MEM_HOME").is_some_and(|h| !h.is_empty());
        let home = match chosen {
            true => {
                let home = env.load_config()?.home;
                Some(std::path::absolute(&home).unwrap_or(home))
            }
            false => None,
        };
        Ok(Target { root, global: self.global, bin: install::this_binary()?, home })
    }
}

fn report(changes: &[Change], nothing: &str) {
    if changes.is_empty() {
        println!("{nothing}");
    }
    for change in changes {
        println!("{}: {}", change.path.display(), change.what);
    }
}
