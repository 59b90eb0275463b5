//! Project identity: the git top level of a directory, with every worktree
//! of a repository mapped to its main checkout; else the directory itself.
//!
//! Read straight from `.git` rather than by running `git`, which would cost
//! the hook several milliseconds on every call.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Reads a project as a person or model names it: a directory that exists
/// is resolved to its project (the git repository it is in); anything else
/// is taken as a stored project path, as written.
pub fn from_arg(project: &str) -> Result<String> {
    let path = Path::new(project);
    if path.is_dir() {
        let absolute = std::fs::canonicalize(path).with_context(|| format!("cannot resolve {project}"))?;
        return Ok(identify(&absolute));
    }
    Ok(project.to_owned())
}

/// The project that `dir` (absolute) belongs to, as a path string.
pub fn identify(dir: &Path) -> String {
    top_level(dir).unwrap_or_else(|| dir.to_path_buf()).to_string_lossy().into_owned()
}

fn top_level(dir: &Path) -> Option<PathBuf> {
    for candidate in dir.ancestors() {
        let dot_git = candidate.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return Some(candidate.to_path_buf());
        }
        // A `.git` file points elsewhere: a linked worktree or a submodule.
        return Some(main_checkout(candidate, &dot_git).unwrap_or_else(|| candidate.to_path_buf()));
    }
    None
}

/// For a linked worktree, the main checkout: its git dir holds `commondir`,
/// the path of the main repository's `.git`. A submodule has none and is a
/// project of its own.
fn main_checkout(worktree: &Path, dot_git_file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git_file).ok()?;
    let git_dir = worktree.join(text.strip_prefix("gitdir:")?.trim());
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
    let common = std::fs::canonicalize(git_dir.join(common.trim())).ok()?;
    match common.file_name() {
        Some(name) if name == ".git" => common.parent().map(Path::to_path_buf),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_directory_is_its_own_project() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(identify(dir.path()), dir.path().to_string_lossy());
    }

    #[test]
    fn subdirectories_and_worktrees_map_to_the_main_checkout() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let main = root.join("repo");
        std::fs::create_dir_all(main.join(".git/worktrees/feature")).unwrap();
        std::fs::create_dir_all(main.join("src/deep")).unwrap();
        std::fs::write(main.join(".git/worktrees/feature/commondir"), "../..\n").unwrap();
        let worktree = root.join("feature");
        std::fs::create_dir_all(worktree.join("src")).unwrap();
        std::fs::write(worktree.join(".git"), format!("gitdir: {}\n", main.join(".git/worktrees/feature").display()))
            .unwrap();

        assert_eq!(identify(&main.join("src/deep")), main.to_string_lossy());
        assert_eq!(identify(&worktree.join("src")), main.to_string_lossy());
    }

    #[test]
    fn a_submodule_is_its_own_project() {
        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("sub");
        std::fs::create_dir_all(root.path().join(".git/modules/sub")).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(".git"), "gitdir: ../.git/modules/sub\n").unwrap();
        assert_eq!(identify(&sub), sub.to_string_lossy());
    }
}
