//! The spool: events that could not be stored yet, and payloads that could
//! not be read at all (dead letters). Nothing a client sends is lost.
//!
//! - `spool/pending.jsonl`: one scrubbed event a line, appended with a
//!   single `write` so concurrent hooks never interleave. A replay first
//!   renames it (an atomic claim), so two replays never store one event twice.
//! - `spool/dead/<id>.payload` with `<id>.json` beside it: the exact bytes
//!   received and why they could not be read.
//!
//! When the home itself cannot be written, both fall back to a directory
//! under the system temp dir, one per home, and replays look there too.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An event waiting to be stored: already scrubbed of private text and secrets.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpoolEntry {
    pub client: String,
    pub event: String,
    /// Unix milliseconds when the hook received it; its observations keep this time.
    pub received_at: i64,
    pub payload: Value,
    /// Why it was spooled.
    #[serde(default)]
    pub reason: String,
}

/// A payload that could not be read, with why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeadLetter {
    pub client: String,
    pub event: Option<String>,
    pub received_at: i64,
    pub error: String,
    /// The file holding the exact bytes received.
    #[serde(default)]
    pub payload_file: PathBuf,
    pub bytes: u64,
}

const PENDING: &str = "pending.jsonl";
const CLAIMED_SUFFIX: &str = ".claimed";

/// The spool directories: the home's, then the fallback.
pub struct Spool {
    dirs: [PathBuf; 2],
}

impl Spool {
    pub fn new(home: &Path) -> Self {
        Self { dirs: [home.join("spool"), fallback_dir(home)] }
    }

    /// Appends an event, to the home's spool or else the fallback. Returns the file.
    pub fn append(&self, entry: &SpoolEntry) -> Result<PathBuf> {
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        let mut last_error = None;
        for dir in &self.dirs {
            let path = dir.join(PENDING);
            match append_line(&path, &line) {
                Ok(()) => return Ok(path),
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error.expect("there are spool directories"))
    }

    /// Whether any event waits (one `stat` per directory: cheap enough for every hook).
    pub fn has_pending(&self) -> bool {
        self.dirs.iter().any(|d| d.join(PENDING).exists())
    }

    /// Takes every pending file for replay by renaming it, and returns the
    /// claimed files, including ones an interrupted replay left behind.
    pub fn claim(&self) -> Vec<PathBuf> {
        let mut claimed = Vec::new();
        for dir in &self.dirs {
            let pending = dir.join(PENDING);
            let target =
                dir.join(format!("{PENDING}.{}-{}{CLAIMED_SUFFIX}", std::process::id(), crate::store::now_ms()));
            if std::fs::rename(&pending, &target).is_ok() {
                claimed.push(target);
            }
            claimed.extend(stale_claims(dir));
        }
        claimed.sort();
        claimed.dedup();
        claimed
    }

    /// Every event waiting, without claiming them.
    pub fn pending(&self) -> Result<Vec<SpoolEntry>> {
        let mut entries = Vec::new();
        for dir in &self.dirs {
            for file in std::iter::once(dir.join(PENDING)).chain(stale_claims(dir)) {
                if file.exists() {
                    entries.extend(read_entries(&file)?.0);
                }
            }
        }
        Ok(entries)
    }

    /// Keeps bytes that could not be read, with the reason. Returns the payload file.
    pub fn dead_letter(&self, bytes: &[u8], client: &str, event: Option<&str>, error: &str) -> Result<PathBuf> {
        let received_at = crate::store::now_ms();
        let id = format!("{received_at}-{}-{:08x}", std::process::id(), fastrand::u32(..));
        let mut last_error = None;
        for dir in &self.dirs {
            let dead = dir.join("dead");
            let payload_file = dead.join(format!("{id}.payload"));
            let letter = DeadLetter {
                client: client.to_owned(),
                event: event.map(str::to_owned),
                received_at,
                error: error.to_owned(),
                payload_file: payload_file.clone(),
                bytes: bytes.len() as u64,
            };
            let result = create_private_dir(&dead)
                .and_then(|()| write_private(&payload_file, bytes))
                .and_then(|()| write_private(&dead.join(format!("{id}.json")), &serde_json::to_vec_pretty(&letter)?));
            match result {
                Ok(()) => return Ok(payload_file),
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error.expect("there are spool directories"))
    }

    /// Every dead letter, oldest first.
    pub fn dead_letters(&self) -> Result<Vec<DeadLetter>> {
        let mut letters = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir.join("dead")) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "json") {
                    let text = std::fs::read(&path)?;
                    let letter: DeadLetter =
                        serde_json::from_slice(&text).with_context(|| format!("cannot read {}", path.display()))?;
                    letters.push(letter);
                }
            }
        }
        letters.sort_by_key(|l| l.received_at);
        Ok(letters)
    }

    /// Removes a dead letter (after it was stored at last).
    pub fn remove_dead_letter(&self, letter: &DeadLetter) -> Result<()> {
        std::fs::remove_file(&letter.payload_file)?;
        std::fs::remove_file(letter.payload_file.with_extension("json"))?;
        Ok(())
    }
}

/// Reads a spool file: the entries, and lines that were not entries.
pub fn read_entries(path: &Path) -> Result<(Vec<SpoolEntry>, Vec<String>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut entries = Vec::new();
    let mut bad = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(entry) => entries.push(entry),
            // A line torn by a crash mid-append: kept aside, never dropped.
            Err(_) => bad.push(line.to_owned()),
        }
    }
    Ok((entries, bad))
}

/// Claimed files older than a minute: their replay was interrupted.
fn stale_claims(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(CLAIMED_SUFFIX))
        .filter(|p| {
            std::fs::metadata(p)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() >= 60))
        })
        .collect()
}

fn append_line(path: &Path, line: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| format!("cannot open the spool {}", path.display()))?;
    // One write call: O_APPEND makes it land whole, after any other hook's line.
    file.write_all(line).with_context(|| format!("cannot write the spool {}", path.display()))?;
    Ok(())
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)?;
    Ok(())
}

fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// The spool used when the home cannot be written: per user and per home,
/// so that a replay stores events in the home they were meant for.
fn fallback_dir(home: &Path) -> PathBuf {
    #[cfg(unix)]
    let user = unsafe { libc::getuid() }.to_string();
    #[cfg(not(unix))]
    let user = std::env::var("USERNAME").unwrap_or_default();
    // FNV-1a: a hash that stays the same across Rust versions.
    let home_hash = home
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    std::env::temp_dir().join(format!("trae-mem-spool-{user}-{home_hash:016x}"))
}
