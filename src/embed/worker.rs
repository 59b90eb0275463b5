//! The background run that hooks start after a turn: `trae-mem embed
//! --background`, one at a time per home.

use std::path::{Path, PathBuf};

use anyhow::Result;

/// Starts a background `trae-mem embed`, which gives the new rows their
/// vectors and exits; the hook never waits for it.
pub fn start_in_background(home: &Path) -> Result<()> {
    crate::background::start(home, "embed", &["embed", "--background"], "vectors for new memories")
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
