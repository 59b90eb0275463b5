//! Rewriting one config file safely: unchanged when nothing changes, a
//! backup of the user's original before the first change (kept in the
//! trae-mem home, not beside the file, where a team would commit it), and
//! on uninstall the original bytes back when the config is what it was.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::Change;

/// A config file's format: its text as a document, and back.
pub trait Format {
    type Doc;
    /// Reads `text` ("" for a missing file).
    fn parse(text: &str, path: &Path) -> Result<Self::Doc>;
    /// The text to write; None when the document holds nothing (the file
    /// can go).
    fn print(doc: &Self::Doc) -> Option<String>;
    /// What the document means, whatever its layout: two documents that
    /// agree here are the same config.
    fn canonical(doc: &Self::Doc) -> Option<String> {
        Self::print(doc)
    }
}

/// Whether the file is being installed into or uninstalled from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Install,
    Uninstall,
}

/// Where the original of `path` is kept in `backups`: its absolute path
/// as one file name (`%home%me%proj%.claude%settings.json`), so that
/// every config has its own and a person can tell which is which.
pub fn backup_path(backups: &Path, path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    backups.join(absolute.to_string_lossy().replace(['/', '\\'], "%"))
}

/// Reads a file, None when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Applies `edit` to the document in `path`, and writes the result if it
/// differs (in meaning, not just layout) from what is there. `what` says
/// what the edit is about, for the printed change.
pub fn rewrite<F: Format>(
    path: &Path,
    backup: &Path,
    action: Action,
    what: &str,
    edit: impl FnOnce(&mut F::Doc),
) -> Result<Option<Change>> {
    let old = read_optional(path)?;
    let old_doc = F::parse(old.as_deref().unwrap_or(""), path)?;
    let mut doc = F::parse(old.as_deref().unwrap_or(""), path)?;
    edit(&mut doc);
    if F::canonical(&old_doc) == F::canonical(&doc) {
        return Ok(None);
    }
    let change = |how: String| Some(Change { path: path.to_owned(), what: format!("{how}: {what}") });
    let new = F::print(&doc);
    match (action, new) {
        (Action::Install, Some(text)) => {
            let mut how = if old.is_some() { "updated".to_owned() } else { "created".to_owned() };
            if old.is_some() && !backup.exists() {
                if let Some(dir) = backup.parent() {
                    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
                }
                std::fs::copy(path, backup).with_context(|| format!("cannot back up {}", path.display()))?;
                how = format!("updated (original kept in {})", backup.display());
            }
            write(path, &text)?;
            Ok(change(how))
        }
        (_, new) => {
            // The original, byte for byte, when the edit made it again.
            if let Some(original) = read_optional(backup)? {
                let original_doc = F::parse(&original, backup)?;
                if F::canonical(&original_doc) == F::canonical(&doc) {
                    write(path, &original)?;
                    std::fs::remove_file(backup).with_context(|| format!("cannot remove {}", backup.display()))?;
                    return Ok(change(format!("restored from {}", backup.display())));
                }
            }
            match new {
                Some(text) => {
                    write(path, &text)?;
                    Ok(change("updated".to_owned()))
                }
                None => {
                    std::fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
                    if let Some(dir) = path.parent() {
                        remove_emptied(dir);
                    }
                    Ok(change("removed".to_owned()))
                }
            }
        }
    }
}

/// Removes a client's config folder (`.claude/`, `.clinerules/`, …) that
/// the removal of trae-mem's files left empty: install made it. Only
/// folders whose name starts with a dot, never the project or the home.
pub fn remove_emptied(dir: &Path) {
    let dotted = |d: &&Path| d.file_name().is_some_and(|name| name.to_string_lossy().starts_with('.'));
    let mut current = Some(dir);
    // remove_dir fails, harmlessly, on a folder that still holds anything.
    while let Some(folder) = current.filter(dotted)
        && std::fs::remove_dir(folder).is_ok()
    {
        current = folder.parent();
    }
}

/// Writes a file, creating its directory.
pub fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
