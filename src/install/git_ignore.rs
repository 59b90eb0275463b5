//! Keeping Claude Code's personal settings file out of git, the way Claude
//! Code does when it creates that file itself: the pattern
//! `**/.claude/settings.local.json` in the user's own excludes file, which
//! git reads for every repository (`core.excludesFile`, by default
//! `$XDG_CONFIG_HOME/git/ignore`, or `~/.config/git/ignore`). Nothing in the
//! repository changes, so a team's `.gitignore` is never edited for one
//! person's tool. Unlike Claude Code, the file git actually reads is the
//! one written: a `core.excludesFile` the user set is honoured.
//!
//! Uninstall leaves the line: Claude Code writes the same one whenever it
//! makes the file, and the file (with the user's own settings in it) may
//! well outlive trae-mem's hooks.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use super::Change;

/// The line Claude Code adds to the user's git excludes file.
pub const PATTERN: &str = "**/.claude/settings.local.json";

/// Makes git ignore `file`, inside `project`, when the project is a git
/// work tree and git does not ignore the file already (by any rule:
/// `.gitignore`, `info/exclude`, the user's excludes). Nothing happens
/// outside a git work tree, or without git.
pub fn keep_out(project: &Path, file: &Path) -> Result<Option<Change>> {
    if git(project, &["rev-parse", "--is-inside-work-tree"]).as_deref() != Some("true") {
        return Ok(None);
    }
    let ignored = Command::new("git")
        .args(["check-ignore", "--quiet", "--no-index", "--"])
        .arg(file)
        .current_dir(project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if ignored {
        return Ok(None);
    }
    let excludes = excludes_file(project)?;
    let text = super::file::read_optional(&excludes)?.unwrap_or_default();
    // The repository may un-ignore it (`!…` in its .gitignore): the line
    // is there, and a second install adds nothing.
    if text.lines().any(|line| line.trim() == PATTERN) {
        return Ok(None);
    }
    if let Some(dir) = excludes.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let separator = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&excludes)
        .and_then(|mut out| out.write_all(format!("{separator}{PATTERN}\n").as_bytes()))
        .with_context(|| format!("cannot add {PATTERN} to {}", excludes.display()))?;
    Ok(Some(Change {
        path: excludes,
        what: format!(
            "{PATTERN} ignored in every git repository, as Claude Code does, so your personal settings stay out of commits"
        ),
    }))
}

/// The excludes file git reads for `project`: `core.excludesFile` when it
/// is set, else git's default.
fn excludes_file(project: &Path) -> Result<PathBuf> {
    if let Some(set) = git(project, &["config", "--path", "--get", "core.excludesFile"]).filter(|p| !p.is_empty()) {
        return Ok(project.join(set));
    }
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => super::user_home()?.join(".config"),
    };
    Ok(config.join("git").join("ignore"))
}

/// What `git ARGS` prints in `dir`, trimmed, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).current_dir(dir).stderr(Stdio::null()).output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
