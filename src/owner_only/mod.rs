//! Files only their owner may read. The database and the spool hold what
//! agents saw and did, and the team key opens a team's records, so each is
//! created through this module.
//!
//! On unix a new file is created 0600 and a new directory 0700; a umask can
//! only take bits away, never give the group or others any. On Windows a
//! new directory gets a protected access list that allows only its owner,
//! inherited by all that is made inside (`windows`): the home is made this
//! way, so the database, its write-ahead log, the spool and the sync key
//! are the owner's alone there too. Files and directories that already
//! exist keep their permissions; `trae-mem doctor` says whether the home is
//! its owner's alone.

#[cfg(windows)]
mod windows;

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `dir` and any missing parents, each new one owner-only.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    #[cfg(windows)]
    let new = !dir.exists();
    builder.create(dir)?;
    // At its best: a file system without access lists still stores the
    // event, and doctor says what it found.
    #[cfg(windows)]
    if new {
        let _ = windows::restrict(dir);
    }
    Ok(())
}

/// Whether only the owner may open `path`, and how that was told: on unix
/// its mode (nothing for the group or others), on Windows its access list
/// (it allows no one else).
pub fn is_owner_only(path: &Path) -> io::Result<(bool, &'static str)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        Ok((mode & 0o077 == 0, "its mode gives the group and others nothing"))
    }
    #[cfg(windows)]
    {
        Ok((windows::is_owner_only(path)?, "its access list allows only you"))
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = path;
        Err(io::Error::other("this platform's permissions are not checked"))
    }
}

/// Options to open a file for writing that is owner-only if they create it;
/// the caller says how (`create_new`, or `create` with `truncate`).
pub fn open_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

/// Creates a new owner-only file for writing; fails if `path` exists.
pub fn create_new(path: &Path) -> io::Result<File> {
    open_options().create_new(true).open(path)
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn new_dirs_and_files_are_owner_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_dir_all(&dir).unwrap();
        create_dir_all(&dir).unwrap();
        assert_eq!((mode(&root.path().join("a")), mode(&dir)), (0o700, 0o700));
        let file = dir.join("f");
        create_new(&file).unwrap();
        assert_eq!(mode(&file), 0o600);
        assert_eq!(create_new(&file).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
    }
}
