//! The background run that hooks start after a turn: `trae-mem embed
//! --background`, one at a time per home.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Starts a background `trae-mem embed`, which gives the new rows their
/// vectors and exits; the hook never waits for it.
pub fn start_in_background(home: &Path) -> Result<()> {
    crate::background::start(home, "embed", &["embed", "--background"], "vectors for new memories")
}

/// Starts the background embed, as a hook does after a turn, for rows a
/// command (an import, a forget, a rescan, a pull) added or rewrote: they
/// wait for a vector, and search finds them by words alone until it has
/// run. A failure to start it costs nothing but the wait for the next
/// hook's, so it is said on stderr, not returned.
pub fn start_after_writing(home: &Path) {
    if let Err(err) = start_in_background(home) {
        eprintln!("trae-mem: warning: {err:#}");
    }
}

/// The file a running embed holds locked, so that a second one (a hook's,
/// while a backfill runs) leaves the work to it.
pub fn lock_path(home: &Path) -> PathBuf {
    home.join("embed.lock")
}

/// The file the one run waiting behind a running embed holds locked.
pub fn queue_path(home: &Path) -> PathBuf {
    home.join("embed.queue")
}
