//! `trae-mem sync`: share a project's memory with the team through PostgreSQL.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use indicatif::ProgressBar;

use super::{Env, open_store, output};
use trae_mem::sync::{self, Shared, TeamKey};
use trae_mem::timefmt;

/// Pull teammates' memory of shared projects, then push your own.
///
/// A project is shared when its own trae-mem.toml says `[sync] share = true`; no other project
/// ever leaves this machine, and private rows never do. The server is `[sync] url` (a PostgreSQL
/// connection string) or TRAE_MEM_SYNC_URL. Records are sealed with the team key (`trae-mem sync
/// key new`, shared out of band), so the server sees only ciphertext, ids and sizes.
///
/// Without --project, syncs every shared project this home has memory of, and the project here.
/// Hooks never wait for a sync; one interrupted at any point is finished by the next.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cmd {
    #[command(subcommand)]
    key: Option<KeyCmd>,
    /// Sync only this project (a directory; repeatable).
    #[arg(long, value_name = "DIR")]
    project: Vec<PathBuf>,
    /// Show what is waiting each way and the last sync; change nothing.
    #[arg(long)]
    status: bool,
    /// Print JSON: a list of {project, portable_key, pushed, pulled_sessions, pulled_observations,
    /// pulled_summaries, forgotten}; with --status, {project, portable_key, to_push, to_pull,
    /// server_error, last_sync, key_id, plaintext}.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum KeyCmd {
    /// Manage the team key that seals shared records.
    #[command(subcommand)]
    Key(KeyAction),
}

#[derive(Debug, Subcommand)]
enum KeyAction {
    /// Make a new team key, keep it in the home (owner-only), and print it to share.
    New {
        /// Replace a key this home already has.
        #[arg(long)]
        force: bool,
    },
    /// Keep a teammate's key: given here, or read from stdin (which keeps it out of shell history).
    Import {
        /// The key's 64 hex digits.
        key: Option<String>,
        /// Replace a key this home already has.
        #[arg(long)]
        force: bool,
    },
    /// Print the key again, to share with a teammate.
    Show,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        if let Some(KeyCmd::Key(action)) = self.key {
            return key(env, action);
        }
        let (targets, failed_to_read) = self.targets(env)?;
        if targets.is_empty() && failed_to_read == 0 {
            bail!(
                "no project here shares its memory: add `[sync]\nshare = true` to a project's trae-mem.toml \
                 (and commit it, so the team shares it too)"
            );
        }
        let mut failures = failed_to_read;
        if self.status {
            let mut statuses = Vec::new();
            for shared in &targets {
                statuses.push(sync::status(&mut open_store(&shared.loaded)?, shared)?);
            }
            if self.json {
                return output::json(&statuses);
            }
            for status in statuses {
                println!("{} ({})", status.portable_key, status.project);
                let to_pull = match (status.to_pull, &status.server_error) {
                    (Some(n), _) => output::count(n, "record", "records"),
                    (None, Some(err)) => format!("unknown ({err})"),
                    (None, None) => "unknown".to_owned(),
                };
                let last = status.last_sync.map_or_else(|| "never".to_owned(), timefmt::local_minute);
                let key = match (status.key_id, status.plaintext) {
                    (_, true) => "none: records go up unsealed ([sync] plaintext = true)".to_owned(),
                    (Some(id), false) => id,
                    (None, false) => "none, and sync will not run without one: `trae-mem sync key new` makes \
                                      one to share, `trae-mem sync key import` keeps a teammate's"
                        .to_owned(),
                };
                println!("  to push: {}", output::count(status.to_push as u64, "record", "records"));
                println!("  to pull: {to_pull}");
                println!("  last sync: {last}; team key: {key}");
            }
            return Ok(());
        }
        let mut reports = Vec::new();
        for shared in &targets {
            let bar = if std::io::stderr().is_terminal() { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
            let synced = open_store(&shared.loaded).and_then(|mut store| {
                sync::sync(&mut store, shared, &mut |what, done| {
                    bar.set_message(format!("{}: {what} {done} records", shared.portable_key));
                    bar.tick();
                })
            });
            bar.finish_and_clear();
            match synced {
                Ok(report) => {
                    if report.pulled_observations + report.pulled_summaries > 0 {
                        trae_mem::embed::start_after_writing(&shared.loaded.home);
                    }
                    reports.push(report)
                }
                Err(err) => {
                    eprintln!("error: {} ({}): {err:#}", shared.portable_key, shared.project);
                    failures += 1;
                }
            }
        }
        if self.json {
            output::json(&reports)?;
        } else {
            for r in &reports {
                println!(
                    "{} ({}): pulled {}, {}, {}; pushed {}",
                    r.portable_key,
                    r.project,
                    output::count(r.pulled_sessions, "session", "sessions"),
                    output::count(r.pulled_observations, "observation", "observations"),
                    output::count(r.pulled_summaries, "summary", "summaries"),
                    output::count(r.pushed, "record", "records"),
                );
                if r.forgotten > 0 {
                    println!(
                        "  forgot {} a teammate forgot",
                        output::count(r.forgotten, "observation", "observations")
                    );
                }
            }
        }
        if failures > 0 {
            bail!("{} could not be synced", output::count(failures, "project", "projects"));
        }
        Ok(())
    }

    /// The shared projects to sync, and how many could not be read.
    fn targets(&self, env: &Env) -> Result<(Vec<Shared>, u64)> {
        let home = env.home.as_deref();
        if !self.project.is_empty() {
            let mut targets = Vec::new();
            for dir in &self.project {
                let dir =
                    trae_mem::project::canonical(dir).with_context(|| format!("cannot find {}", dir.display()))?;
                match sync::shared(&dir, home)? {
                    Some(shared) => targets.push(shared),
                    None => bail!(
                        "{} does not share its memory: add `[sync]\nshare = true` to its trae-mem.toml",
                        dir.display()
                    ),
                }
            }
            return Ok((targets, 0));
        }
        let mut candidates = BTreeSet::new();
        candidates.insert(trae_mem::project::identify(&env.cwd));
        let loaded = env.load_config()?;
        if loaded.home.join(trae_mem::store::DB_FILE).exists() {
            let store = open_store(&loaded)?;
            candidates.extend(sync::known_projects(&store)?);
        }
        let (mut targets, mut failed) = (Vec::new(), 0);
        for project in candidates {
            if !Path::new(&project).is_dir() {
                continue;
            }
            match sync::shared(Path::new(&project), home) {
                Ok(Some(shared)) if shared.loaded.home == loaded.home => targets.push(shared),
                Ok(_) => {}
                Err(err) => {
                    eprintln!("error: {project}: {err:#}");
                    failed += 1;
                }
            }
        }
        Ok((targets, failed))
    }
}

fn key(env: &Env, action: KeyAction) -> Result<()> {
    let home = env.load_config()?.home;
    match action {
        KeyAction::New { force } => {
            let key = TeamKey::generate();
            let path = key.save(&home, force)?;
            println!("{}", key.to_hex());
            eprintln!(
                "kept in {} (key id {}). Share the line above with your team out of band (a password \
                 manager, not the repository); each teammate runs `trae-mem sync key import`.",
                path.display(),
                key.id()
            );
        }
        KeyAction::Import { key, force } => {
            let text = match key {
                Some(key) => key,
                None => {
                    let mut text = String::new();
                    std::io::stdin().read_to_string(&mut text).context("cannot read the key from stdin")?;
                    text
                }
            };
            let key = TeamKey::parse(&text)?;
            let path = key.save(&home, force)?;
            println!("kept the team key {} in {}", key.id(), path.display());
        }
        KeyAction::Show => match TeamKey::load(&home)? {
            Some(key) => {
                println!("{}", key.to_hex());
                eprintln!("key id {}", key.id());
            }
            None => bail!("no team key in {}: `trae-mem sync key new` makes one", home.display()),
        },
    }
    Ok(())
}
