//! The spool: events that could not be stored yet, and payloads that could
//! not be read at all (dead letters). Nothing a client sends is lost.
//!
//! - `spool/pending/<time>-<id>.json`: one event a file, written under a
//!   temporary name and renamed into place, so a reader never sees half of
//!   one. A replay claims a file by renaming it into `spool/claimed/`, one
//!   event at a time: a rename either wins or finds the file gone, so two
//!   replays never take the same event, and an event being written is never
//!   claimed. (One shared file, appended by hooks and renamed away by
//!   replays, lost events: an append could land in a file already claimed,
//!   read and deleted.) A claim names its process; a claim whose process has
//!   died goes back to replay.
//! - `spool/dead/<id>.payload` with `<id>.json` beside it: the exact bytes
//!   received and why they could not be read.
//!
//! When the home itself cannot be written, both fall back to a directory
//! under the system temp dir, one per home, and replays look there too.
//!
//! Storing an event twice is harmless: each carries an id that the store
//! records under a unique key (see `record`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::adapters::{self, Adapter};
use crate::config::IngestSettings;
use crate::event::{Event, Origin};
use crate::owner_only;

/// An event waiting to be stored: already scrubbed of private text and
/// secrets, with what was resolved when it was accepted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpoolEntry {
    /// The event's id; storing it twice stores it once. Empty in entries
    /// spooled by trae-mem before 0.2, which get one at replay.
    #[serde(default)]
    pub id: String,
    pub client: String,
    pub event: String,
    /// Unix milliseconds when the hook received it; its observations keep this time.
    pub received_at: i64,
    /// The project and settings resolved at accept time; `None` in old entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolved>,
    pub payload: Value,
    /// Why it was spooled.
    #[serde(default)]
    pub reason: String,
}

impl SpoolEntry {
    /// The event as it was accepted: its client's adapter, the event read
    /// from the payload, and what was resolved. Entries from before 0.2
    /// kept no project or settings; those are resolved now, as they always
    /// were, with `settings_now`.
    pub fn restore(
        &self,
        settings_now: impl FnOnce() -> IngestSettings,
    ) -> Result<(Box<dyn Adapter>, Event, Resolved)> {
        let adapter = adapters::for_client(&self.client)?;
        let event = adapter.parse(Some(&self.event), self.payload.clone())?;
        let resolved = match &self.resolved {
            Some(resolved) => resolved.clone(),
            None => {
                let origin = adapters::origin_here(Some(adapter.as_ref()));
                Resolved { project: crate::project::identify(&origin.project_dir_of(&event)), settings: settings_now() }
            }
        };
        Ok((adapter, event, resolved))
    }
}

/// What an event's environment decided, once, when it was accepted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub project: String,
    pub settings: IngestSettings,
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
    /// Where it came from, so that a revival files it under the right project.
    #[serde(default)]
    pub origin: Origin,
}

const PENDING_DIR: &str = "pending";
const CLAIMED_DIR: &str = "claimed";
/// The one shared file older versions appended to; still replayed.
const LEGACY_PENDING: &str = "pending.jsonl";

/// The spool directories: the home's, then the fallback.
pub struct Spool {
    dirs: [PathBuf; 2],
}

/// A spooled event taken for replay. Finish it with `Spool::done` or
/// `Spool::release`; a process that dies holding it leaves it to the next replay.
pub struct Claim {
    pub entry: SpoolEntry,
    path: PathBuf,
    /// The pending directory it came from and its name there.
    home: PathBuf,
    name: String,
}

impl Spool {
    pub fn new(home: &Path) -> Self {
        Self { dirs: [home.join("spool"), fallback_dir(home)] }
    }

    /// Spools an event, in the home's spool or else the fallback. Returns the file.
    pub fn append(&self, entry: &SpoolEntry) -> Result<PathBuf> {
        let bytes = serde_json::to_vec(entry)?;
        let name = format!("{:013}-{}.json", entry.received_at.max(0), file_safe(&entry.id));
        let mut last_error = None;
        for dir in &self.dirs {
            match write_atomically(&dir.join(PENDING_DIR), &name, &bytes) {
                Ok(path) => return Ok(path),
                Err(err) => last_error = Some(err),
            }
        }
        Err(last_error.expect("there are spool directories"))
    }

    /// Whether any event waits: one directory read per spool, cheap enough
    /// for every hook.
    pub fn has_pending(&self) -> bool {
        self.dirs.iter().any(|dir| {
            dir.join(LEGACY_PENDING).exists()
                || std::fs::read_dir(dir.join(PENDING_DIR))
                    .is_ok_and(|mut entries| entries.any(|e| e.is_ok_and(|e| is_entry_name(&e.file_name()))))
        })
    }

    /// The events waiting, oldest first, with claims that a dead process
    /// left behind given back first. Claim each with `claim`.
    pub fn waiting(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for dir in &self.dirs {
            self.adopt_legacy(dir);
            release_orphans(dir);
            files.extend(entry_files(&dir.join(PENDING_DIR)));
        }
        files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        files
    }

    /// Takes one waiting event for this process. `None` when another
    /// replay took it first; an unreadable file is moved aside, never dropped.
    pub fn claim(&self, pending: &Path) -> Result<Option<Claim>> {
        let (Some(dir), Some(name)) = (pending.parent(), pending.file_name()) else { return Ok(None) };
        let name = name.to_string_lossy().into_owned();
        let claimed_dir = dir.with_file_name(CLAIMED_DIR);
        create_private_dir(&claimed_dir)?;
        let path = claimed_dir.join(format!("{name}@{}", std::process::id()));
        if std::fs::rename(pending, &path).is_err() {
            return Ok(None);
        }
        let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        match serde_json::from_slice::<SpoolEntry>(&bytes) {
            Ok(entry) => Ok(Some(Claim { entry, path, home: dir.to_owned(), name })),
            Err(err) => {
                let kept = dir.with_file_name(format!("{name}.torn"));
                std::fs::rename(&path, &kept).with_context(|| format!("cannot keep {}", kept.display()))?;
                Err(anyhow::anyhow!("{} is not a spooled event ({err}); kept as {}", name, kept.display()))
            }
        }
    }

    /// The claimed event is stored: forget it.
    pub fn done(&self, claim: Claim) -> Result<()> {
        std::fs::remove_file(&claim.path).with_context(|| format!("cannot remove {}", claim.path.display()))
    }

    /// The claimed event could not be stored: put it back, saying why.
    pub fn release(&self, claim: Claim, reason: String) -> Result<()> {
        let entry = SpoolEntry { reason, ..claim.entry };
        write_atomically(&claim.home, &claim.name, &serde_json::to_vec(&entry)?)?;
        std::fs::remove_file(&claim.path).with_context(|| format!("cannot remove {}", claim.path.display()))
    }

    /// Every event waiting, without claiming them.
    pub fn pending(&self) -> Result<Vec<SpoolEntry>> {
        let mut entries = Vec::new();
        for dir in &self.dirs {
            let legacy = dir.join(LEGACY_PENDING);
            if legacy.exists() {
                entries.extend(read_lines(&legacy)?.0);
            }
            let claimed = entry_files(&dir.join(CLAIMED_DIR));
            for file in entry_files(&dir.join(PENDING_DIR)).into_iter().chain(claimed) {
                // A file claimed and removed since the listing is simply gone.
                if let Ok(bytes) = std::fs::read(&file) {
                    entries.push(
                        serde_json::from_slice(&bytes).with_context(|| format!("cannot read {}", file.display()))?,
                    );
                }
            }
        }
        entries.sort_by_key(|e| e.received_at);
        Ok(entries)
    }

    /// Keeps bytes that could not be read, with the reason. Returns the payload file.
    pub fn dead_letter(&self, bytes: &[u8], letter: DeadLetter) -> Result<PathBuf> {
        let id = format!("{}-{}-{:08x}", letter.received_at, std::process::id(), fastrand::u32(..));
        let mut last_error = None;
        for dir in &self.dirs {
            let dead = dir.join("dead");
            let payload_file = dead.join(format!("{id}.payload"));
            let letter = DeadLetter { payload_file: payload_file.clone(), bytes: bytes.len() as u64, ..letter.clone() };
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

    /// Turns the shared file of older versions into one file per event.
    /// Claimed by a rename first, so that it happens once.
    fn adopt_legacy(&self, dir: &Path) {
        let legacy = dir.join(LEGACY_PENDING);
        if !legacy.exists() {
            return;
        }
        let taken = dir.join(format!("{LEGACY_PENDING}.{}.adopting", std::process::id()));
        if std::fs::rename(&legacy, &taken).is_err() {
            return;
        }
        let Ok((entries, torn)) = read_lines(&taken) else { return };
        for entry in &entries {
            if self.append(entry).is_err() {
                // Leave the file for the next replay rather than lose an event.
                let _ = std::fs::rename(&taken, &legacy);
                return;
            }
        }
        if !torn.is_empty() {
            let _ = std::fs::write(dir.join(format!("{LEGACY_PENDING}.torn")), torn.join("\n") + "\n");
        }
        let _ = std::fs::remove_file(&taken);
    }
}

/// Reads a file of one entry a line: the entries, and lines that were not entries.
fn read_lines(path: &Path) -> Result<(Vec<SpoolEntry>, Vec<String>)> {
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

/// The spooled events in a directory (temporary files start with a dot).
fn entry_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().filter(|e| is_entry_name(&e.file_name())).map(|e| e.path()).collect()
}

fn is_entry_name(name: &std::ffi::OsStr) -> bool {
    !name.to_string_lossy().starts_with('.')
}

/// Gives back the claims of processes that no longer run: their replay
/// was interrupted, and their events are still to be stored.
fn release_orphans(dir: &Path) {
    for claimed in entry_files(&dir.join(CLAIMED_DIR)) {
        let name = claimed.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let Some((original, pid)) = name.rsplit_once('@') else { continue };
        if pid.parse::<u32>().is_ok_and(is_running) {
            continue;
        }
        let _ = std::fs::rename(&claimed, dir.join(PENDING_DIR).join(original));
    }
}

/// Whether a process with this id runs (or may: we cannot always tell).
fn is_running(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
        // Signal 0 checks without sending; EPERM means it runs as someone else.
        // SAFETY: kill takes plain integers and signal 0 sends nothing, and
        // errno is read on this thread right after the call.
        unsafe { libc::kill(pid, 0) == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM) }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::{CloseHandle, ERROR_ACCESS_DENIED, GetLastError};
        use windows_sys::Win32::System::Threading::{
            GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
        };
        /// What GetExitCodeProcess says of a process that has not exited.
        const STILL_ACTIVE: u32 = 259;
        // SAFETY: OpenProcess takes plain values and returns a handle or
        // null; GetLastError reads this thread's last error right after.
        let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if handle.is_null() {
            // Denied: it runs, as someone else. Any other failure: no such process.
            // SAFETY: as above.
            return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
        }
        let mut code = 0u32;
        // SAFETY: `handle` is a valid process handle of ours, `code` a u32
        // it writes, and the handle is closed once, here.
        unsafe {
            let known = GetExitCodeProcess(handle, &mut code) != 0;
            CloseHandle(handle);
            !known || code == STILL_ACTIVE
        }
    }
    #[cfg(not(any(unix, windows)))]
    true
}

/// Writes `bytes` as `dir/name` whole or not at all: a temporary file, then a rename.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf> {
    create_private_dir(dir)?;
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    write_private(&temp, bytes)?;
    let path = dir.join(name);
    std::fs::rename(&temp, &path).with_context(|| format!("cannot write the spool {}", path.display()))?;
    Ok(path)
}

/// An id as it may appear in a file name.
fn file_safe(id: &str) -> String {
    let id: String = id.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
    if id.is_empty() { format!("{:016x}", fastrand::u64(..)) } else { id }
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = owner_only::create_new(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

fn create_private_dir(dir: &Path) -> Result<()> {
    owner_only::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
}

/// The spool used when the home cannot be written: per user and per home,
/// so that a replay stores events in the home they were meant for.
fn fallback_dir(home: &Path) -> PathBuf {
    #[cfg(unix)]
    // SAFETY: getuid takes nothing, touches no memory of ours and cannot fail.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, at: i64) -> SpoolEntry {
        SpoolEntry {
            id: id.to_owned(),
            client: "claude-code".to_owned(),
            event: "UserPromptSubmit".to_owned(),
            received_at: at,
            resolved: None,
            payload: serde_json::json!({"prompt": id}),
            reason: String::new(),
        }
    }

    /// The interleaving that lost events with one shared file: an event is
    /// spooled while a replay is between listing and finishing. Every
    /// event must still be claimed exactly once.
    #[test]
    fn spooling_while_a_replay_claims_loses_nothing() {
        let home = tempfile::tempdir().unwrap();
        let spool = Spool::new(home.path());
        spool.append(&entry("a", 1)).unwrap();
        let listed = spool.waiting();
        // Another hook spools between the replay's listing and its claims.
        spool.append(&entry("b", 2)).unwrap();
        let mut stored = Vec::new();
        for file in listed {
            let claim = spool.claim(&file).unwrap().expect("nobody else claims");
            stored.push(claim.entry.id.clone());
            spool.done(claim).unwrap();
        }
        assert_eq!(stored, ["a"]);
        assert!(spool.has_pending(), "b waits for the next replay");
        let next: Vec<String> = spool
            .waiting()
            .iter()
            .map(|f| {
                let claim = spool.claim(f).unwrap().unwrap();
                let id = claim.entry.id.clone();
                spool.done(claim).unwrap();
                id
            })
            .collect();
        assert_eq!(next, ["b"]);
        assert!(!spool.has_pending());
    }

    #[test]
    fn a_file_claimed_by_one_replay_is_not_claimed_by_another() {
        let home = tempfile::tempdir().unwrap();
        let spool = Spool::new(home.path());
        spool.append(&entry("a", 1)).unwrap();
        let first = spool.waiting();
        let second = spool.waiting();
        let claim = spool.claim(&first[0]).unwrap().expect("the first replay wins");
        assert!(spool.claim(&second[0]).unwrap().is_none(), "the second finds it gone");
        spool.release(claim, "still locked".to_owned()).unwrap();
        let pending = spool.pending().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].reason, "still locked");
    }

    #[test]
    fn a_dead_replayers_claim_is_given_back() {
        let home = tempfile::tempdir().unwrap();
        let spool = Spool::new(home.path());
        spool.append(&entry("a", 1)).unwrap();
        let file = &spool.waiting()[0];
        let claimed_dir = home.path().join("spool").join(CLAIMED_DIR);
        std::fs::create_dir_all(&claimed_dir).unwrap();
        // A process id that cannot run: above the kernel's pid_max.
        let orphan = claimed_dir.join(format!("{}@{}", file.file_name().unwrap().to_string_lossy(), 1u32 << 30));
        std::fs::rename(file, &orphan).unwrap();
        let again = spool.waiting();
        assert_eq!(again.len(), 1);
        assert_eq!(spool.claim(&again[0]).unwrap().unwrap().entry.id, "a");
    }

    #[test]
    fn the_shared_file_of_older_versions_is_still_replayed() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("spool");
        std::fs::create_dir_all(&dir).unwrap();
        let line = |e: &SpoolEntry| serde_json::to_string(e).unwrap();
        let old = SpoolEntry { id: String::new(), ..entry("", 5) };
        std::fs::write(dir.join(LEGACY_PENDING), format!("{}\n{{torn\n", line(&old))).unwrap();
        let spool = Spool::new(home.path());
        assert!(spool.has_pending());
        let waiting = spool.waiting();
        assert_eq!(waiting.len(), 1);
        assert_eq!(spool.claim(&waiting[0]).unwrap().unwrap().entry.received_at, 5);
        assert_eq!(std::fs::read_to_string(dir.join("pending.jsonl.torn")).unwrap(), "{torn\n");
    }
}
