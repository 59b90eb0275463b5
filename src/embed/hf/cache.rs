//! Converted folders, kept: converting e5-small from safetensors takes
//! about 1.3 s, which every search process would pay, where reading the
//! converted image back takes tens of milliseconds.
//!
//! An image is kept in the home's `models/` under a name made of the
//! folder's path and of its three files' sizes and modification times, so
//! a changed file is converted again, and the image it replaces is removed.

use std::path::Path;
use std::time::UNIX_EPOCH;

use anyhow::Result;
use sha2::{Digest, Sha256};

use super::{CONFIG, TOKENIZER, WEIGHTS};

/// The E5S1 image of the folder `dir`, from `cache` when it was converted
/// before as it is now, else converted (and kept, when `cache` can be
/// written: a cache that cannot be written costs time, not an answer).
pub(in crate::embed) fn load(dir: &Path, cache: &Path) -> Result<Vec<u8>> {
    let Some((folder, state)) = names(dir) else { return super::load(dir) };
    let kept = cache.join(format!("{folder}-{state}.e5s"));
    if let Ok(bytes) = std::fs::read(&kept) {
        return Ok(bytes);
    }
    let bytes = super::load(dir)?;
    let _ = keep(cache, &folder, &kept, &bytes);
    Ok(bytes)
}

/// A name for the folder, and one for its files' state; none when a file
/// is missing (converting then says which).
fn names(dir: &Path) -> Option<(String, String)> {
    let folder = std::fs::canonicalize(dir).ok()?;
    let mut state = Sha256::new();
    for file in [CONFIG, TOKENIZER, WEIGHTS] {
        let meta = std::fs::metadata(folder.join(file)).ok()?;
        let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        state.update(format!("{file} {} {}\n", meta.len(), modified.as_nanos()));
    }
    let short = |digest: &[u8]| crate::text::hex(&digest[..8]);
    Some((short(&Sha256::digest(folder.as_os_str().as_encoded_bytes())), short(&state.finalize())))
}

/// Writes `bytes` to `kept` whole or not at all (a temporary file renamed),
/// and removes the folder's images of earlier states.
fn keep(cache: &Path, folder: &str, kept: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::create_dir_all(cache)?;
    let earlier = format!("{folder}-");
    for entry in std::fs::read_dir(cache)? {
        let path = entry?.path();
        if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&earlier)) {
            std::fs::remove_file(path)?;
        }
    }
    let partial = kept.with_extension(format!("partial-{}", std::process::id()));
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, kept)?;
    Ok(())
}
