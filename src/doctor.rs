//! The checks behind `trae-mem doctor` and the viewer's health page: the
//! home, database, config, plugins, client installs and spool, each with a
//! verdict and, for a problem, its fix.

use std::path::Path;

use serde::Serialize;

use crate::client::Client;
use crate::config::{self, Loaded};
use crate::ingest::Spool;
use crate::install::{self, Target};
use crate::plugins::Plugins;
use crate::plugins::cache::Source;
use crate::store::{DB_FILE, OpenOptions, Store};

/// One check's verdict.
#[derive(Debug, Serialize)]
pub struct Check {
    pub check: String,
    pub ok: bool,
    pub detail: String,
    /// What to do about a problem; None when there is none.
    pub fix: Option<String>,
}

impl Check {
    /// Whether it is a warning: it works, but deserves attention.
    pub fn is_warning(&self) -> bool {
        self.ok && self.fix.is_some()
    }

    fn ok(check: &str, detail: impl Into<String>) -> Self {
        Self { check: check.to_owned(), ok: true, detail: detail.into(), fix: None }
    }

    fn problem(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { check: check.to_owned(), ok: false, detail: detail.into(), fix: Some(fix.into()) }
    }

    /// Works, but deserves attention: shown with its fix, not counted as a problem.
    fn warning(check: &str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Self { check: check.to_owned(), ok: true, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// A store past this size, with no retention set, gets a warning.
const LARGE_STORE: u64 = 1 << 30;

/// Runs every check for a command run in `cwd` with `--home` `home_arg`.
pub fn checks(cwd: &Path, home_arg: Option<&Path>) -> Vec<Check> {
    let mut checks = Vec::new();
    let loaded = match config::load(cwd, home_arg) {
        Ok(loaded) => {
            let files: Vec<String> = loaded.files.iter().map(|f| f.display().to_string()).collect();
            let detail = if files.is_empty() { "defaults (no trae-mem.toml)".to_owned() } else { files.join(", ") };
            checks.push(Check::ok("config", detail));
            loaded
        }
        Err(err) => {
            checks.push(Check::problem(
                "config",
                format!("{err:#}"),
                "correct the file named above (`trae-mem config default` prints every key with its default and what it does); hooks record with defaults meanwhile",
            ));
            match config::defaults(home_arg) {
                Ok(defaults) => defaults,
                Err(err) => {
                    checks.push(Check::problem("home", format!("{err:#}"), "set TRAE_MEM_HOME or pass --home DIR"));
                    return checks;
                }
            }
        }
    };
    checks.push(home(&loaded));
    checks.push(database(&loaded));
    checks.extend(size(&loaded));
    checks.extend(plugins(&loaded));
    checks.extend(model_summaries(&loaded));
    checks.extend(clients(cwd));
    checks.extend(spool(&loaded));
    checks
}

fn home(loaded: &Loaded) -> Check {
    let home = &loaded.home;
    // Never made here: a mistyped --home must not become an empty memory.
    if !home.exists() {
        return Check::ok(
            "home",
            format!(
                "no memory in {} yet (it does not exist): the first hook creates it; \
                 check --home and TRAE_MEM_HOME if you expected memory there",
                home.display()
            ),
        );
    }
    let probe = home.join(".doctor-probe");
    let writable = std::fs::write(&probe, b"").and_then(|()| std::fs::remove_file(&probe));
    match writable {
        Ok(()) => match crate::owner_only::is_owner_only(home) {
            Ok((true, how)) => Check::ok("home", format!("{}, yours alone ({how})", home.display())),
            Ok((false, _)) => Check::warning(
                "home",
                format!("{} can be read by other users of this machine: it holds what your agents saw", home.display()),
                format!("make it yours alone: {}", owner_only_command(home)),
            ),
            Err(err) => Check::ok("home", format!("{} (its permissions could not be read: {err})", home.display())),
        },
        Err(err) => Check::problem(
            "home",
            format!("{} is not writable: {err}", home.display()),
            format!(
                "give yourself write access to {} (hooks spool nothing there now), or set TRAE_MEM_HOME",
                home.display()
            ),
        ),
    }
}

fn database(loaded: &Loaded) -> Check {
    let path = loaded.home.join(DB_FILE);
    if !path.exists() {
        return Check::ok("database", format!("none yet at {}; the first hook creates it", path.display()));
    }
    let moved = format!(
        "move the damaged file aside (mv {0} {0}.damaged); the next hook starts a new one, and `trae-mem import` reads back an export",
        path.display()
    );
    let problems = Store::open(&path, &OpenOptions::default()).and_then(|store| store.integrity_problems());
    match problems {
        Ok(problems) if problems.is_empty() => {
            Check::ok("database", format!("{} passes its integrity checks", path.display()))
        }
        Ok(problems) => Check::problem("database", format!("{}: {}", path.display(), problems.join("; ")), moved),
        Err(err) => Check::problem("database", format!("cannot open {}: {err:#}", path.display()), moved),
    }
}

/// The command that makes an existing `dir` its owner's alone.
fn owner_only_command(dir: &Path) -> String {
    let quoted = crate::install::shell_quote(dir);
    if cfg!(windows) {
        format!("icacls {quoted} /inheritance:r /grant:r \"%USERNAME%:(OI)(CI)F\" /T")
    } else {
        format!("chmod -R go-rwx {quoted}")
    }
}

/// Warns when the store is large and nothing bounds it.
fn size(loaded: &Loaded) -> Option<Check> {
    let bytes = std::fs::metadata(loaded.home.join(DB_FILE)).map(|m| m.len()).ok()?;
    if bytes < LARGE_STORE || loaded.config.retention.is_set() {
        return None;
    }
    Some(Check::warning(
        "size",
        format!("the database holds {} and no retention is set", crate::text::bytes(bytes)),
        "set [retention] max_age_days or max_db_mb in trae-mem.toml, then run `trae-mem gc` (`trae-mem stats` shows what takes the space)",
    ))
}

fn plugins(loaded: &Loaded) -> Vec<Check> {
    let plugins = Plugins::of(&loaded.config, &loaded.home, true);
    plugins
        .all()
        .iter()
        .map(|plugin| {
            let name = format!("plugin {}", plugin.name);
            match plugins.check(plugin) {
                Ok(source) => {
                    let compiled = match source {
                        Source::Cached => "compiled, from the cache",
                        Source::Compiled | Source::Rebuilt => "compiled now, and cached",
                    };
                    Check::ok(&name, format!("{} ({compiled})", plugin.path.display()))
                }
                Err(err) => Check::problem(
                    &name,
                    format!("{err:#}"),
                    format!("fix the plugin's path or build it, or remove [[plugins]] {} from the config; then run `trae-mem plugins check`", plugin.name),
                ),
            }
        })
        .collect()
}

/// A summarizer that is a language model: its keys are there, and no
/// session was left to its built-in summaries without a word.
fn model_summaries(loaded: &Loaded) -> Vec<Check> {
    let plugins = Plugins::of(&loaded.config, &loaded.home, false);
    let Some(model) = crate::summarize::choose(&plugins).model() else { return Vec::new() };
    let mut checks = Vec::new();
    for grant in &model.grants.http {
        if let Some(env) = grant.env.as_deref().filter(|env| std::env::var_os(env).is_none_or(|v| v.is_empty())) {
            checks.push(Check::warning(
                "model summaries",
                format!("{env} is not set here, so requests to {} go without their key", grant.url),
                format!("set {env} in the environment the agent runs hooks in"),
            ));
        }
    }
    let path = loaded.home.join(DB_FILE);
    if !path.exists() {
        return checks;
    }
    let counts = Store::open(&path, &OpenOptions::default()).and_then(|store| crate::summarize::queue::counts(&store));
    let Ok(counts) = counts else { return checks };
    let sessions = |n: u64| if n == 1 { "1 session".to_owned() } else { format!("{n} sessions") };
    let last = counts
        .last_error
        .as_deref()
        .map(|e| format!("; last error: {}", crate::text::clip(e, 300)))
        .unwrap_or_default();
    if counts.given_up > 0 {
        checks.push(Check::warning(
            "model summaries",
            format!(
                "{} given up after {} failed tries; their built-in summaries stand{last}",
                sessions(counts.given_up),
                crate::summarize::queue::MAX_TRIES
            ),
            "fix the cause (the server, its URL, the key), then `trae-mem summarize SESSION` queues a session again",
        ));
    }
    if counts.over_budget > 0 {
        checks.push(Check::warning(
            "model summaries",
            format!(
                "{} wait for tomorrow: today's {} of [summarize] max_tokens_per_day = {} are spent; their built-in summaries stand",
                sessions(counts.over_budget),
                counts.tokens_today,
                loaded.config.summarize.max_tokens_per_day
            ),
            "raise [summarize] max_tokens_per_day in trae-mem.toml, or let them wait",
        ));
    }
    if checks.is_empty() {
        checks.push(Check::ok(
            "model summaries",
            format!(
                "{} by {}, {} waiting; {} tokens today{last}",
                counts.done, model.name, counts.pending, counts.tokens_today
            ),
        ));
    }
    checks
}

/// Which clients run trae-mem, here (the current project) and globally,
/// and whether their configs run this binary.
fn clients(cwd: &Path) -> Vec<Check> {
    let Ok(bin) = install::this_binary() else {
        return vec![Check::problem("clients", "cannot find this binary's path", "run trae-mem by its full path")];
    };
    let mut scopes = vec![(cwd.to_owned(), false)];
    scopes.extend(install::user_home().ok().map(|home| (home, true)));
    let mut checks = Vec::new();
    for client in Client::ALL {
        for (root, global) in &scopes {
            let target = Target { root: root.clone(), global: *global, shared: false, bin: bin.clone(), home: None };
            let Ok(found) = install::find(client, &target) else { continue };
            let flag = if *global { " --global" } else { "" };
            let name = format!("client {client}{}", if *global { " (global)" } else { "" });
            if found.is_empty() {
                continue;
            }
            let ours = format!("trae-mem {}", env!("CARGO_PKG_VERSION"));
            let mut problems = Vec::new();
            let mut others = Vec::new();
            let mut other_version = false;
            for f in &found {
                match runs(&f.binary) {
                    Err(why) => problems.push(format!("{} runs {}, which {why}", f.path.display(), f.binary)),
                    Ok(runs) if runs.path != bin => {
                        other_version |= runs.version != ours;
                        others.push(format!("{} runs {} ({})", f.path.display(), runs.path.display(), runs.version))
                    }
                    Ok(_) => {}
                }
            }
            let fix = format!("trae-mem install {client}{flag}");
            let untrusted = match client {
                Client::Codex => install::codex_trust_problems(&target).unwrap_or_else(|e| vec![format!("{e:#}")]),
                _ => Vec::new(),
            };
            let check = if !problems.is_empty() {
                Check::problem(&name, problems.join("; "), fix)
            } else if !untrusted.is_empty() {
                let trust = if *global { "" } else { " (and the project)" };
                Check::problem(
                    &name,
                    untrusted.join("; "),
                    format!("start codex, open /hooks and trust trae-mem's hooks{trust}"),
                )
            } else if others.is_empty() {
                Check::ok(&name, format!("installed in {}", found[0].path.display()))
            } else {
                // Another copy that works is no problem: a user may keep two.
                let detail =
                    format!("{}; this is {} ({})", others.join("; "), bin.display(), env!("CARGO_PKG_VERSION"));
                match other_version {
                    false => Check::ok(&name, detail),
                    true => Check::warning(&name, detail, fix),
                }
            };
            checks.push(check);
        }
    }
    checks.extend(claude_code_plugin(&scopes, &bin));
    if checks.is_empty() {
        let [first, others @ ..] = Client::ALL.map(Client::name);
        checks.push(Check::problem(
            "clients",
            "no client runs trae-mem here or globally",
            format!("trae-mem install {first} (or {})", others.join(", ")),
        ));
    }
    checks
}

/// trae-mem's Claude Code plugin, when it is enabled here: whether the
/// binary it finds runs, and whether hooks that `trae-mem install` wrote run
/// trae-mem a second time beside it.
fn claude_code_plugin(scopes: &[(std::path::PathBuf, bool)], bin: &Path) -> Option<Check> {
    let target = |(root, global): &(std::path::PathBuf, bool)| Target {
        root: root.clone(),
        global: *global,
        shared: false,
        bin: bin.to_owned(),
        home: None,
    };
    // The project's scope sees the user's settings too.
    let plugin = install::claude_code_plugin(Client::ClaudeCode, &target(&scopes[0])).ok().flatten()?;
    let name = "client claude-code (plugin)";
    let enabled = format!("the {} plugin (enabled in {})", plugin.id, plugin.settings.display());
    let Some(install_path) = &plugin.install_path else {
        return Some(Check::problem(
            name,
            format!("{enabled} is not installed"),
            format!(
                "start Claude Code, which installs the plugins its settings enable, or run `claude plugin install {}`",
                plugin.id
            ),
        ));
    };
    let launcher = install_path.join("bin/trae-mem");
    let runs = match runs(&launcher.to_string_lossy()) {
        Ok(runs) => runs,
        Err(why) => {
            return Some(Check::problem(
                name,
                format!("{enabled} runs {}, which {why}", launcher.display()),
                "npm install -g trae-mem (the plugin runs the trae-mem on PATH, or TRAE_MEM_BIN)",
            ));
        }
    };
    let mut twice: Vec<String> = scopes
        .iter()
        .flat_map(|scope| install::find(Client::ClaudeCode, &target(scope)).unwrap_or_default())
        .map(|found| found.path.display().to_string())
        .collect();
    twice.dedup();
    if twice.is_empty() {
        return Some(Check::ok(name, format!("{enabled} runs {}", runs.version)));
    }
    Some(Check::problem(
        name,
        format!(
            "{enabled} and {} both run trae-mem: each event is stored once, but the agent is told each memory twice",
            twice.join(", ")
        ),
        format!(
            "keep one: `trae-mem uninstall claude-code` (--shared for the project's committed files, --global for \
             your user-wide ones), or `claude plugin uninstall {}`",
            plugin.id
        ),
    ))
}

/// A trae-mem binary a client's config runs, found and asked its version.
struct Runs {
    path: std::path::PathBuf,
    version: String,
}

/// Finds the binary a hook command names (by its path, or on `PATH` for a
/// bare name) and runs `--version`; or says why it cannot run.
fn runs(binary: &str) -> Result<Runs, String> {
    let named = Path::new(binary);
    let path = if named.components().count() > 1 {
        named.to_owned()
    } else {
        install::on_path(binary).ok_or_else(|| "is not on PATH".to_owned())?
    };
    if !path.is_file() {
        return Err("does not exist".to_owned());
    }
    let path = crate::project::canonical(&path).unwrap_or(path);
    let output = std::process::Command::new(&path).arg("--version").output().map_err(|e| format!("cannot run: {e}"))?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || !version.starts_with("trae-mem ") {
        return Err(format!("does not answer --version as trae-mem does ({})", output.status));
    }
    Ok(Runs { path, version })
}

fn spool(loaded: &Loaded) -> Vec<Check> {
    // Waiting events and dead letters lose nothing and stop no hook: they
    // are warnings. Only a spool that cannot be read is a problem.
    let spool = Spool::new(&loaded.home);
    let pending = match spool.pending() {
        Ok(pending) if pending.is_empty() => Check::ok("spool", "no events waiting"),
        Ok(pending) => Check::warning(
            "spool",
            format!("{} event(s) waiting to be stored", pending.len()),
            "trae-mem spool replay (the next hook also tries)",
        ),
        Err(err) => Check::problem("spool", format!("{err:#}"), "trae-mem spool list, then remove what cannot be read"),
    };
    let dead = match spool.dead_letters() {
        Ok(letters) if letters.is_empty() => Check::ok("dead letters", "none"),
        Ok(letters) => Check::warning(
            "dead letters",
            format!("{} payload(s) could not be read", letters.len()),
            "`trae-mem spool list` says why; `trae-mem spool replay` stores those that read now, \
             and `trae-mem spool drop` discards the rest",
        ),
        Err(err) => Check::problem("dead letters", format!("{err:#}"), "trae-mem spool list"),
    };
    vec![pending, dead]
}
