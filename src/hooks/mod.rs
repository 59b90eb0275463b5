//! The hook runtime: one short process per client event.
//!
//! The pipeline: read the payload, scrub it (private spans, secrets), let
//! the client's adapter normalize it, then store it in one transaction. What
//! cannot be stored within the deadline is spooled and stored by a later
//! hook; what cannot even be read is kept as a dead letter. The hook never
//! exits 2, which would block the agent.

pub mod context;
mod plugged;
pub mod record;
pub mod spool;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;

use crate::adapters::{self, Adapter};
use crate::config::Loaded;
use crate::event::{Event, EventKind};
use crate::plugins::Plugins;
use crate::privacy::Privacy;
use crate::store::{DB_FILE, OpenOptions, Store};
pub use spool::{DeadLetter, Spool, SpoolEntry};

/// Time kept back from the deadline to spool and exit.
const EXIT_RESERVE: Duration = Duration::from_millis(250);

/// What a hook call produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// What to print on stdout for the client.
    pub stdout: Option<String>,
    /// Problems worth a line on stderr each, none of which lost the event.
    pub warnings: Vec<String>,
}

/// A hook failure, with a message that says what became of the payload.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
}

/// One hook call's inputs.
pub struct Call<'a> {
    pub loaded: &'a Loaded,
    pub client: &'a str,
    pub event: Option<&'a str>,
    pub stdin: &'a [u8],
    pub started: Instant,
}

/// A payload read, scrubbed and normalized, ready to deliver.
pub struct Accepted {
    /// What stands for the event from now on, should it be spooled.
    pub entry: SpoolEntry,
    /// The event the entry's payload parses to.
    pub event: Event,
    pub adapter: Box<dyn Adapter>,
}

/// Reads and scrubs a payload, producing the spool entry that stands for
/// it from now on. Unreadable input becomes a dead letter and a failure.
pub fn accept(call: &Call<'_>, privacy: &Privacy) -> Result<Accepted, Failure> {
    read_payload(call, privacy).map_err(|error| {
        match Spool::new(&call.loaded.home).dead_letter(call.stdin, call.client, call.event, &error) {
            Ok(path) => Failure { message: format!("{error}; the payload is kept in {}", path.display()) },
            Err(keep_err) => Failure { message: format!("{error}; and it could not be kept: {keep_err:#}") },
        }
    })
}

/// Parses, scrubs and normalizes a payload; the error says what is wrong with it.
fn read_payload(call: &Call<'_>, privacy: &Privacy) -> Result<Accepted, String> {
    let adapter = adapters::for_client(call.client).map_err(|e| format!("{e:#}"))?;
    if call.stdin.iter().all(u8::is_ascii_whitespace) {
        return Err("the hook payload on stdin is empty; expected the event's JSON".to_owned());
    }
    let mut payload: Value =
        serde_json::from_slice(call.stdin).map_err(|e| format!("the hook payload is not valid JSON ({e})"))?;
    if !payload.is_object() {
        return Err("the hook payload is JSON but not an object".to_owned());
    }
    privacy.scrub_value(&mut payload);
    let event = adapter.parse(call.event, payload.clone()).map_err(|e| format!("{e:#}"))?;
    let entry = SpoolEntry {
        client: adapter.name().to_owned(),
        event: event.kind.name().to_owned(),
        received_at: crate::store::now_ms(),
        payload,
        reason: String::new(),
    };
    Ok(Accepted { entry, event, adapter })
}

/// Stores an accepted event, or spools it; then replays the spool if the
/// store is healthy. Never loses the event: the error case has spooled it.
pub fn deliver(call: &Call<'_>, accepted: Accepted) -> Result<Outcome, Failure> {
    let Accepted { entry, event, adapter } = accepted;
    let loaded = call.loaded;
    let spool = Spool::new(&loaded.home);
    let deadline = call.started + Duration::from_millis(loaded.config.hook.deadline_ms);
    if !records(loaded, &event.kind) {
        return Ok(Outcome::default());
    }
    match store_event(loaded, &event, entry.received_at, deadline) {
        Ok(Stored { store, project, warnings }) => {
            let mut outcome = Outcome { warnings, ..Outcome::default() };
            if let Err(err) = store.tidy_wal() {
                outcome.warnings.push(format!("could not checkpoint the database: {err:#}"));
            }
            if event.kind == EventKind::SessionStart && loaded.config.context.inject {
                let context = context::build(&store, &project, &loaded.config.context).unwrap_or(None);
                outcome.stdout = context.and_then(|c| adapter.context_output(&event, &c));
            }
            if spool.has_pending()
                && let Err(err) = replay(loaded, &spool, Some(deadline))
            {
                outcome.warnings.push(format!("could not replay the spool: {err:#}"));
            }
            Ok(outcome)
        }
        Err(err) => {
            let entry = SpoolEntry { reason: format!("{err:#}"), ..entry };
            match spool.append(&entry) {
                Ok(path) => Ok(Outcome {
                    stdout: None,
                    warnings: vec![format!("stored later: {err:#} (spooled to {})", path.display())],
                }),
                Err(spool_err) => {
                    Err(Failure { message: format!("cannot store the event ({err:#}) nor spool it ({spool_err:#})") })
                }
            }
        }
    }
}

/// Whether the config records this event. Session start and end always
/// run: they carry identity, context and summaries.
fn records(loaded: &Loaded, kind: &EventKind) -> bool {
    matches!(kind, EventKind::SessionStart | EventKind::SessionEnd) || loaded.config.capture.records(kind.name())
}

/// The project an event belongs to.
pub fn project_of(event: &Event) -> String {
    let dir = event.project_dir.clone().or_else(|| std::env::current_dir().ok()).unwrap_or_else(|| PathBuf::from("."));
    crate::project::identify(&dir)
}

/// An event stored: the open store, its project, and what plugins had to say.
struct Stored {
    store: Store,
    project: String,
    warnings: Vec<String>,
}

/// Runs the event's plugins, then opens the store and records the event in
/// one transaction, giving up on a locked database in time to spool before
/// `deadline`; then lets a summarizer plugin replace SessionEnd's summaries.
fn store_event(loaded: &Loaded, event: &Event, at: i64, deadline: Instant) -> Result<Stored> {
    let plugins = Plugins::new(&loaded.config, &loaded.home, false);
    let mut work = plugged::before(&plugins, event, &loaded.config.capture);
    let wait = deadline.saturating_duration_since(Instant::now()).saturating_sub(EXIT_RESERVE);
    let options =
        OpenOptions { busy_timeout: wait, index: loaded.config.search.index_mode()?, may_rebuild_index: false };
    let mut store = Store::open(&loaded.home.join(DB_FILE), &options)?;
    let project = project_of(event);
    let session_id = store.write(|w| record::record(w, event, &project, at, &loaded.config.capture, &work))?;
    if event.kind == EventKind::SessionEnd
        && let Err(err) = plugged::summarize(&plugins, &mut store, &session_id, at)
    {
        work.warnings.push(format!("{err:#}; the built-in summaries stand"));
    }
    for warning in &work.warnings {
        crate::plugins::log_line(&loaded.home, "host", "warn", warning);
    }
    Ok(Stored { store, project, warnings: work.warnings })
}

/// What a replay did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Replayed {
    pub stored: usize,
    /// Events still spooled (the store failed again, or time ran out).
    pub remaining: usize,
    /// Dead letters that could now be read and were stored.
    pub revived: usize,
}

/// Stores spooled events in order. What fails, or is left when `deadline`
/// nears, goes back to the spool. Lines that are not events are kept too.
pub fn replay(loaded: &Loaded, spool: &Spool, deadline: Option<Instant>) -> Result<Replayed> {
    let mut report = Replayed::default();
    for claimed in spool.claim() {
        let (entries, torn) = spool::read_entries(&claimed)?;
        let mut failed: Option<anyhow::Error> = None;
        for entry in entries {
            let out_of_time = deadline.is_some_and(|d| Instant::now() + EXIT_RESERVE * 2 >= d);
            if failed.is_some() || out_of_time {
                spool.append(&entry)?;
                report.remaining += 1;
                continue;
            }
            match replay_one(loaded, &entry, deadline) {
                Ok(()) => report.stored += 1,
                Err(err) => {
                    spool.append(&SpoolEntry { reason: format!("{err:#}"), ..entry })?;
                    report.remaining += 1;
                    failed = Some(err);
                }
            }
        }
        if !torn.is_empty() {
            let kept = claimed.with_extension("torn");
            std::fs::write(&kept, torn.join("\n") + "\n").with_context(|| format!("cannot keep {}", kept.display()))?;
        }
        std::fs::remove_file(&claimed).with_context(|| format!("cannot remove {}", claimed.display()))?;
    }
    Ok(report)
}

fn replay_one(loaded: &Loaded, entry: &SpoolEntry, deadline: Option<Instant>) -> Result<()> {
    let adapter = adapters::for_client(&entry.client)?;
    let event = adapter.parse(Some(&entry.event), entry.payload.clone())?;
    let deadline = deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(30));
    store_event(loaded, &event, entry.received_at, deadline).map(drop)
}

/// Tries every dead letter again (after a fix to trae-mem or by hand):
/// those that now read are stored and removed; the rest stay.
pub fn revive_dead_letters(loaded: &Loaded, spool: &Spool, privacy: &Privacy) -> Result<usize> {
    let mut revived = 0;
    for letter in spool.dead_letters()? {
        let Ok(bytes) = std::fs::read(&letter.payload_file) else {
            continue;
        };
        let call = Call {
            loaded,
            client: &letter.client,
            event: letter.event.as_deref(),
            stdin: &bytes,
            started: Instant::now(),
        };
        let Ok(mut accepted) = read_payload(&call, privacy) else {
            continue;
        };
        accepted.entry.received_at = letter.received_at;
        if deliver(&call, accepted).is_ok() {
            spool.remove_dead_letter(&letter)?;
            revived += 1;
        }
    }
    Ok(revived)
}

/// Builds the privacy filter from the config.
pub fn privacy(loaded: &Loaded) -> Result<Privacy> {
    Privacy::new(loaded.config.privacy.redact_secrets, &loaded.config.privacy.secret_patterns)
}
