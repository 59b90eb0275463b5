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
        let absolute = canonical(path).with_context(|| format!("cannot resolve {project}"))?;
        return Ok(identify(&absolute));
    }
    Ok(project.to_owned())
}

/// The project that `dir` (absolute) belongs to, as a path string.
pub fn identify(dir: &Path) -> String {
    let dir = spelled_as_stored(dir);
    top_level(&dir).unwrap_or(dir).to_string_lossy().into_owned()
}

/// `dir` as it is stored: on Unix as given. On Windows, where `C:\src\app`,
/// `c:/src/app` and `C:\SRC\App` are one folder, its one spelling: the
/// folder's own, on disk, where it exists (without the `\\?\` that
/// `canonicalize` adds), else with backslashes and the drive letter in
/// upper case.
#[cfg(not(windows))]
fn spelled_as_stored(dir: &Path) -> PathBuf {
    dir.to_path_buf()
}

#[cfg(windows)]
fn spelled_as_stored(dir: &Path) -> PathBuf {
    if let Ok(on_disk) = canonical(dir) {
        return on_disk;
    }
    let mut text = dir.to_string_lossy().replace('/', "\\");
    if text.as_bytes().get(1) == Some(&b':') {
        text[..1].make_ascii_uppercase();
    }
    while text.len() > 3 && text.ends_with('\\') {
        text.pop();
    }
    PathBuf::from(text)
}

/// The absolute path of `path`, links resolved, in the form its system's
/// users know: on Windows without the `\\?\` prefix where it is not needed.
pub fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    #[cfg(windows)]
    return dunce::canonicalize(path);
    #[cfg(not(windows))]
    return std::fs::canonicalize(path);
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
    let common = canonical(&git_dir.join(common.trim())).ok()?;
    match common.file_name() {
        Some(name) if name == ".git" => common.parent().map(Path::to_path_buf),
        _ => None,
    }
}

/// The key that names `project` (a path `identify` gave) on every machine:
/// the normalised URL of its git `origin` remote, so that clones at
/// different paths, over SSH or HTTPS, are one project. Without a remote,
/// the path itself, which meets no other machine's.
pub fn portable_key(project: &str) -> String {
    origin_url(Path::new(project)).map(|url| normalise_remote(&url)).unwrap_or_else(|| project.to_owned())
}

/// The `url` of `[remote "origin"]` in the repository's `.git/config`.
fn origin_url(project: &Path) -> Option<String> {
    let config = std::fs::read_to_string(project.join(".git/config")).ok()?;
    let mut in_origin = false;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            in_origin = line.trim_end_matches(']').trim_start_matches('[').trim() == r#"remote "origin""#;
        } else if in_origin
            && let Some((key, value)) = line.split_once('=')
            && key.trim() == "url"
        {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

/// `git@github.com:Org/Repo.git`, `ssh://git@github.com/Org/Repo`,
/// `https://user@github.com/Org/Repo/` all become `github.com/org/repo`:
/// no scheme, user, port or `.git`, lower case (the big hosts ignore case).
pub fn normalise_remote(url: &str) -> String {
    let url = url.trim();
    let (rest, scp_like) = match url.split_once("://") {
        Some((_, rest)) => (rest, false),
        None => (url, true),
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, host_and_path)| host_and_path);
    // `host:path` (scp-like) or `host:port/path` (a URL's port).
    let (host, path) = match rest.split_once(['/', ':']) {
        Some((host, path)) if scp_like || rest.as_bytes()[host.len()] == b'/' => (host, path),
        Some((host, port_and_path)) => (host, port_and_path.split_once('/').map_or("", |(_, path)| path)),
        None => (rest, ""),
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    format!("{host}/{path}").to_lowercase()
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

    #[test]
    fn one_remote_in_every_spelling_is_one_key() {
        for url in [
            "git@github.com:Org/Repo.git",
            "ssh://git@github.com/Org/Repo",
            "ssh://git@github.com:22/Org/Repo.git",
            "https://github.com/Org/Repo/",
            "https://someone@GitHub.com/org/repo.git",
        ] {
            assert_eq!(normalise_remote(url), "github.com/org/repo", "{url}");
        }
        assert_eq!(normalise_remote("git@gitlab.example.com:group/sub/proj.git"), "gitlab.example.com/group/sub/proj");
    }

    #[test]
    fn the_key_is_the_origin_remote_or_else_the_path() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let project = repo.to_string_lossy().into_owned();
        assert_eq!(portable_key(&project), project);
        std::fs::write(
            repo.join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://example.com/other/fork\n\
             [remote \"origin\"]\n\turl = git@example.com:Team/App.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
        )
        .unwrap();
        assert_eq!(portable_key(&project), "example.com/team/app");
    }
}
