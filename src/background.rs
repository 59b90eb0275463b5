//! Commands a hook starts and never waits for (a sync after a session, the
//! vectors of a turn's new rows): another trae-mem process, detached from
//! the hook (its own process group, no pipes), so that the hook returns at
//! once and the work costs the agent nothing. What it prints goes to a
//! capped log in the home.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The size past which a background log is rotated (to `<name>.log.1`,
/// replacing the one before).
const LOG_CAP: u64 = 1 << 20;

/// Where background runs of `name` write what they did, and their errors.
pub fn log_path(home: &Path, name: &str) -> PathBuf {
    home.join("logs").join(format!("{name}.log"))
}

/// Starts `trae-mem --home <home> <args>` in the background, noting `why`
/// in the log `name`.
pub fn start(home: &Path, name: &str, args: &[&str], why: &str) -> Result<()> {
    let exe = std::env::current_exe().context("cannot find this trae-mem binary")?;
    let path = log_path(home, name);
    std::fs::create_dir_all(path.parent().expect("the log lives in a directory"))?;
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_CAP) {
        std::fs::rename(&path, path.with_extension("log.1"))?;
    }
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    writeln!(log, "{} {why}", jiff::Timestamp::now())?;
    let mut command = std::process::Command::new(exe);
    command.arg("--home").arg(home).args(args).stdin(std::process::Stdio::null()).stdout(log.try_clone()?).stderr(log);
    detach(&mut command);
    command.spawn().with_context(|| format!("cannot start a background {name}"))?;
    Ok(())
}

/// Puts the process in a group of its own, so that the client's signal to
/// the hook's group (a timeout, Ctrl-C) does not end it too.
#[cfg(unix)]
fn detach(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
}

/// Windows' way: no console of its own (a hook's child would otherwise
/// flash a window, or die with the client's console) and a process group
/// of its own, out of reach of the client's Ctrl-C.
#[cfg(windows)]
fn detach(command: &mut std::process::Command) {
    use std::os::windows::process::CommandExt;
    const DETACHED_PROCESS: u32 = 0x0000_0008;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
}

/// Waits for the lock on `file` (a background run's `*.lock`), trying it
/// every 50 ms: a blocking lock is refused at once with a lock violation
/// where Windows' locks are emulated (Wine), instead of waiting.
pub fn wait_for_lock(file: &std::fs::File) -> std::io::Result<()> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(std::time::Duration::from_millis(50)),
            Err(std::fs::TryLockError::Error(err)) => return Err(err),
        }
    }
}

/// Opens (making it if need be) the file a background run holds locked.
pub fn open_lock(path: &Path) -> Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))
}
