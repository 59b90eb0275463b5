//! Files only their owner may read. The database and the spool hold what
//! agents saw and did, and the team key opens a team's records, so each is
//! created through this module.
//!
//! On unix a new file is created 0600 and a new directory 0700; a umask can
//! only take bits away, never give the group or others any. On other
//! platforms both get the platform's default (on Windows, the access list
//! inherited from the parent folder). Files and directories that already
//! exist keep their permissions.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::path::Path;

/// Creates `dir` and any missing parents, each new one owner-only.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
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
