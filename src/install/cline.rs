//! Cline: one executable script per event in a hooks directory, each
//! running this binary. A script is trae-mem's when it holds `MARKER`; a
//! user's own script of the same name is left alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::file::{read_optional, write};
use super::{Change, command_binary, shell_quote};

/// Cline's events that trae-mem records.
pub const EVENTS: &[&str] =
    &["TaskStart", "TaskResume", "UserPromptSubmit", "PreToolUse", "PostToolUse", "TaskComplete", "TaskCancel"];

const MARKER: &str = "# Added by `trae-mem install cline`; `trae-mem uninstall cline` removes it.";

fn script(bin: &Path, event: &str) -> String {
    format!("#!/bin/sh\n{MARKER}\nexec {} hook --client cline --event {event}\n", shell_quote(bin))
}

fn is_ours(text: &str) -> bool {
    text.lines().any(|l| l == MARKER)
}

/// Writes a script per event; reports each written, and each left alone.
pub fn install(dir: &Path, bin: &Path) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for event in EVENTS {
        let path = dir.join(event);
        let wanted = script(bin, event);
        let what = match read_optional(&path)? {
            Some(text) if text == wanted => continue,
            Some(text) if !is_ours(&text) => "left alone: a hook of this name exists and is not trae-mem's".to_owned(),
            existing => {
                write(&path, &wanted)?;
                make_executable(&path)?;
                let how = if existing.is_some() { "updated" } else { "created" };
                format!("{how}: runs trae-mem on {event}")
            }
        };
        changes.push(Change { path, what });
    }
    Ok(changes)
}

/// Removes trae-mem's scripts, and the directory if that empties it.
pub fn uninstall(dir: &Path) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for (path, _) in scripts(dir)? {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        changes.push(Change { path, what: "removed".to_owned() });
    }
    if !changes.is_empty() {
        // Fails, as it should, when the user keeps other hooks there.
        if std::fs::remove_dir(dir).is_ok()
            && let Some(parent) = dir.parent()
        {
            super::file::remove_emptied(parent);
        }
    }
    Ok(changes)
}

/// trae-mem's scripts in `dir`, with the binary each runs.
pub fn scripts(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut found = Vec::new();
    for event in EVENTS {
        let path = dir.join(event);
        if let Some(text) = read_optional(&path)?.filter(|t| is_ours(t)) {
            let bin = text.lines().find_map(|l| l.strip_prefix("exec ").and_then(command_binary));
            found.push((path, bin.unwrap_or_default()));
        }
    }
    Ok(found)
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<()> {
    Ok(())
}
