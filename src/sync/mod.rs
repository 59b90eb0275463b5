//! Team memory: a project's memory shared through PostgreSQL, sealed
//! end to end. `trae-mem sync` pulls what teammates pushed, then pushes
//! what is new here; hooks never touch the network.
//!
//! - Only a project whose own `trae-mem.toml` says `[sync] share = true`
//!   leaves the machine, and private rows never do.
//! - A project is known everywhere by its portable key (its normalised git
//!   `origin`), the server by a hash of it; records are sealed with a key
//!   derived from the team key and that portable key.
//! - Pulled records enter the store as an import's do, filed under the
//!   local path of the project; pulled tombstones forget through `forget`.

mod error;
pub mod key;
mod seal;
mod server;

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::bulk;
use crate::config::Loaded;
use crate::store::{ExportRecord, RecordId, Records, Store, SyncState};
pub use error::SyncError;
pub use key::TeamKey;
use seal::Sealer;
use server::{Pulled, Server};

/// Records pushed per server transaction.
const PUSH_BATCH: usize = 500;

/// Records pulled per local transaction.
const PULL_BATCH: i64 = 1000;

/// A project this device may sync, with its settings.
pub struct Shared {
    /// The local project path.
    pub project: String,
    /// The project's key on every machine.
    pub portable_key: String,
    pub loaded: Loaded,
}

/// What one project's sync did.
#[derive(Debug, Default, Serialize)]
pub struct Synced {
    pub project: String,
    pub portable_key: String,
    /// Records now on the server that were not before.
    pub pushed: u64,
    /// Teammates' records stored here.
    pub pulled_sessions: u64,
    pub pulled_observations: u64,
    pub pulled_summaries: u64,
    /// Observations forgotten here because a teammate forgot them.
    pub forgotten: u64,
}

/// What is waiting each way.
#[derive(Debug, Serialize)]
pub struct Status {
    pub project: String,
    pub portable_key: String,
    /// Records to push.
    pub to_push: usize,
    /// Records teammates pushed that are not here yet; `None` when the
    /// server could not be asked (`server_error` says why).
    pub to_pull: Option<u64>,
    pub server_error: Option<String>,
    /// Unix milliseconds of the last completed sync.
    pub last_sync: Option<i64>,
    /// The team key's short id; `None` in plaintext mode, and when this
    /// home has no key (then sync refuses to run).
    pub key_id: Option<String>,
    /// Whether records go up unsealed (`[sync] plaintext = true`).
    pub plaintext: bool,
}

/// The settings of the project in `dir` when it is shared; `None` when it
/// is not (its memory never leaves the machine).
pub fn shared(dir: &Path, home_override: Option<&Path>) -> Result<Option<Shared>> {
    let loaded = crate::config::load(dir, home_override)?;
    if !loaded.config.sync.share {
        return Ok(None);
    }
    let project = crate::project::identify(dir);
    let portable_key = crate::project::portable_key(&project);
    Ok(Some(Shared { project, portable_key, loaded }))
}

/// The name a device's records carry: `[sync] author`, else `$USER@hostname`.
pub fn author(loaded: &Loaded) -> String {
    if let Some(author) = &loaded.config.sync.author {
        return author.clone();
    }
    // USERNAME is Windows' name for it.
    let user = ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "someone".to_owned());
    match host_name().filter(|h| !h.is_empty()) {
        Some(host) => format!("{user}@{host}"),
        None => user,
    }
}

/// This machine's name, if it has one.
#[cfg(unix)]
fn host_name() -> Option<String> {
    let mut name = [0u8; 256];
    // SAFETY: gethostname writes at most `name.len()` bytes into `name`, a
    // buffer of ours that long. A truncated name may lack its NUL: the split
    // below then takes the whole buffer, never reading past it.
    let found = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } == 0;
    found.then(|| String::from_utf8_lossy(name.split(|b| *b == 0).next().unwrap_or_default()).into_owned())
}

/// This machine's name, if it has one: Windows sets it for every process.
#[cfg(not(unix))]
fn host_name() -> Option<String> {
    std::env::var("COMPUTERNAME").ok()
}

/// The server, and how records are sealed, or why sync cannot run.
fn connect(shared: &Shared) -> Result<(Server, Sealer)> {
    let url = url(shared)?;
    let sealer = sealer(shared)?;
    Ok((Server::connect(url)?, sealer))
}

fn url(shared: &Shared) -> Result<&str> {
    match shared.loaded.config.sync.url.as_deref() {
        Some(url) => Ok(url),
        None => Err(SyncError::NoServer { config: shared.loaded.home.join("trae-mem.toml") }.into()),
    }
}

fn sealer(shared: &Shared) -> Result<Sealer> {
    if shared.loaded.config.sync.plaintext {
        return Ok(Sealer::new(None, &shared.portable_key));
    }
    let Some(key) = TeamKey::load(&shared.loaded.home)? else {
        return Err(SyncError::NoKey { home: shared.loaded.home.clone() }.into());
    };
    Ok(Sealer::new(Some(&key), &shared.portable_key))
}

/// Where background syncs write what they did, and their errors.
pub fn log_path(home: &Path) -> std::path::PathBuf {
    crate::background::log_path(home, "sync")
}

/// Whether this config asks for a sync after each session: the project
/// shares and a server is named.
pub fn after_sessions(loaded: &Loaded) -> bool {
    loaded.config.sync.share && loaded.config.sync.url.is_some()
}

/// The projects this store knows of, by their sessions or by a sync:
/// where `trae-mem sync` without `--project` looks for shared ones.
pub fn known_projects(store: &Store) -> Result<Vec<String>> {
    let mut projects = store.project_names()?;
    projects.extend(store.synced_projects()?);
    Ok(projects)
}

/// Starts `trae-mem sync --project <project>` in the background, so that
/// a slow or absent server costs the agent nothing.
pub fn start_in_background(home: &Path, project: &str) -> Result<()> {
    crate::background::start(
        home,
        "sync",
        &["sync", "--project", project],
        &format!("sync of {project} after a session"),
    )
}

/// The server's kind of a record.
fn kind_of(record: &ExportRecord) -> i16 {
    match record {
        ExportRecord::Session { .. } => 1,
        ExportRecord::Observation(_) => 2,
        ExportRecord::Summary(_) => 3,
        ExportRecord::Tombstone(_) => 4,
    }
}

/// Pulls the project's new records, then pushes what is new here.
/// `progress` hears what is happening and how many records it has done.
pub fn sync(store: &mut Store, shared: &Shared, progress: &mut dyn FnMut(&str, u64)) -> Result<Synced> {
    let (mut server, sealer) = connect(shared)?;
    let mut state = store.sync_state(&shared.project)?;
    let mut report =
        Synced { project: shared.project.clone(), portable_key: shared.portable_key.clone(), ..Synced::default() };
    // Pull first: a wrong key then stops the sync before this device pushes
    // records the team could not open.
    pull(store, shared, &mut server, &sealer, &mut state, &mut report, progress)?;
    let author = author(&shared.loaded);
    loop {
        let batch = store.outgoing(&mut state, &shared.project, &author, PUSH_BATCH)?;
        if batch.records.is_empty() {
            // The mark moves past rows that were on the server already.
            store.pushed(&mut state, &batch)?;
            break;
        }
        let sealed = batch
            .records
            .iter()
            .map(|(id, record)| sealer.seal(*id, kind_of(record), serde_json::to_vec(record)?))
            .collect::<Result<Vec<_>>>()?;
        report.pushed +=
            server.push(&sealer.project, &sealed, &batch.withdrawn).context("cannot push to the sync server")?;
        store.pushed(&mut state, &batch)?;
        progress("pushed", report.pushed);
    }
    store.synced(&mut state)?;
    Ok(report)
}

fn pull(
    store: &mut Store,
    shared: &Shared,
    server: &mut Server,
    sealer: &Sealer,
    state: &mut SyncState,
    report: &mut Synced,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<()> {
    let mut pulled = 0u64;
    loop {
        let rows =
            server.pull(&sealer.project, state.cursor, PULL_BATCH).context("cannot pull from the sync server")?;
        if rows.is_empty() {
            if report.pulled_observations > 0 {
                store.settle_after_pull()?;
            }
            return Ok(());
        }
        let records = rows.iter().map(|row| open(sealer, row)).collect::<Result<Vec<_>>>()?;
        pulled += records.len() as u64;
        let records = Records::Pulled { state: &mut *state, project: &shared.project, records };
        let (applied, forgotten) = bulk::take_in(store, &shared.loaded, records)?;
        report.pulled_sessions += applied.sessions;
        report.pulled_observations += applied.observations;
        report.pulled_summaries += applied.summaries;
        report.forgotten += forgotten.observations;
        progress("pulled", pulled);
    }
}

/// A pulled record, opened and checked: its id and kind must be those of
/// what it says, so that nothing can pass one record off as another.
fn open(sealer: &Sealer, pulled: &Pulled) -> Result<(i64, RecordId, ExportRecord)> {
    let sealed = &pulled.record;
    let plain = sealer.open(sealed)?;
    let record: ExportRecord = serde_json::from_slice(&plain).context("a pulled record is not a trae-mem record")?;
    if record.record_id() != sealed.id || kind_of(&record) != sealed.kind {
        return Err(SyncError::Mismatched.into());
    }
    Ok((pulled.seq, sealed.id, record))
}

/// What is waiting each way for the project. The server is asked only for
/// the ids past this device's cursor (no key is needed for that), and
/// those this device holds (its own pushes) are not counted; when it
/// cannot be reached, the status says why.
pub fn status(store: &mut Store, shared: &Shared) -> Result<Status> {
    let mut state = store.sync_state(&shared.project)?;
    let author = author(&shared.loaded);
    let to_push = store.outgoing(&mut state, &shared.project, &author, usize::MAX >> 1)?.records.len();
    let project = seal::project_id(&shared.portable_key);
    let asked = url(shared)
        .and_then(Server::connect)
        .and_then(|mut server| server.ids_after(&project, state.cursor))
        .and_then(|ids| store.not_here(&ids));
    let plaintext = shared.loaded.config.sync.plaintext;
    let key_id = match plaintext {
        true => None,
        false => TeamKey::load(&shared.loaded.home)?.map(|key| key.id()),
    };
    let (to_pull, server_error) = match asked {
        Ok(count) => (Some(count), None),
        Err(err) => (None, Some(format!("{err:#}"))),
    };
    Ok(Status {
        project: shared.project.clone(),
        portable_key: shared.portable_key.clone(),
        to_push,
        to_pull,
        server_error,
        last_sync: state.last_sync,
        key_id,
        plaintext,
    })
}
