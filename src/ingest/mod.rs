//! The one way in. Every writer enters here: the hook command, the MCP tools
//! that record (`trae_mem_hook_event`, `trae_mem_start_session`,
//! `trae_mem_log`, `trae_mem_end_session`), `trae-mem summarize`, spool
//! replay and dead-letter revival.
//!
//! - **accept** scrubs what arrived (private spans, secrets), lets the
//!   client's adapter normalise it into an `Event`, and resolves, once, all
//!   that depends on where it arrived: the project and the settings. The
//!   result carries an id.
//! - **deliver** runs the event's plugins and records it in one transaction,
//!   or spools it with everything accept resolved, and says what the client
//!   is told. A replay stores it from what was spooled and never asks its
//!   own environment. Nothing else: the work a hook does afterwards (spool
//!   replay, retention, a background sync) is `after_delivery`'s.
//! - The store keeps every delivered id under a unique key, so an event
//!   delivered twice (a commit that raced the hook's watchdog, a replay
//!   after a crash) is stored once.
//!
//! A hook never exits 2, which would block the agent: failures come back
//! as a `Failure` whose message says what became of the payload.

mod error;
mod plugged;
pub mod record;

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::Value;

use crate::adapters::{self, Adapter};
use crate::config::Loaded;
use crate::event::{Event, EventKind, Origin};
use crate::plugins::Plugins;
use crate::privacy::Privacy;
pub use crate::spool::{DeadLetter, Resolved, Spool, SpoolEntry};
use crate::store::{DB_FILE, Kind, OpenOptions, SessionKey, Store, Summary, now_ms};
use crate::summarize::{self, Summarized};
pub use error::{Failure, Rejected, Warning};

/// Time kept back from the deadline to spool and exit.
const EXIT_RESERVE: Duration = Duration::from_millis(250);

/// How long a replay outside a hook (`spool replay`) may take per event.
const REPLAY_DEADLINE: Duration = Duration::from_secs(30);

/// What delivering an event produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// What to print on stdout for the client.
    pub stdout: Option<String>,
    /// Problems worth a line on stderr each, none of which lost the event.
    pub warnings: Vec<Warning>,
    /// Whether the event was stored now (not spooled, nor left out by the
    /// capture settings).
    pub stored: bool,
}

/// An event taken in: normalised, scrubbed, resolved, and given an id.
pub struct Accepted {
    pub id: String,
    /// Unix milliseconds when it arrived; its observations keep this time.
    pub received_at: i64,
    pub event: Event,
    pub adapter: Box<dyn Adapter>,
    pub resolved: Resolved,
}

impl Accepted {
    /// What stands for the event in the spool.
    pub fn spool_entry(&self, reason: &str) -> SpoolEntry {
        SpoolEntry {
            id: self.id.clone(),
            client: self.adapter.name().to_owned(),
            event: self.event.kind.name().to_owned(),
            received_at: self.received_at,
            resolved: Some(self.resolved.clone()),
            payload: self.event.payload.clone(),
            reason: reason.to_owned(),
        }
    }
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

/// An observation to add to a session that exists (`trae_mem_log`).
pub struct Note<'a> {
    pub kind: Kind,
    pub tool: Option<&'a str>,
    pub content: &'a str,
    pub tags: &'a [String],
    /// Asked to be private, whatever the content.
    pub private: bool,
}

/// The way in, for one home and its settings.
pub struct Ingest<'a> {
    loaded: &'a Loaded,
    privacy: &'a Privacy,
}

impl<'a> Ingest<'a> {
    pub fn new(loaded: &'a Loaded, privacy: &'a Privacy) -> Self {
        Self { loaded, privacy }
    }

    /// Accepts a hook's payload as it came on stdin. What cannot be read
    /// is kept as a dead letter, scrubbed as a stored event would be.
    pub fn accept_bytes(&self, client: &str, event: Option<&str>, stdin: &[u8]) -> Result<Accepted, Failure> {
        let adapter = adapters::for_client(client).map_err(Rejected::UnknownClient);
        let origin = adapters::origin_here(adapter.as_deref().ok());
        let accepted = read_json(stdin).and_then(|payload| self.accept_with(adapter?, event, payload, origin.clone()));
        accepted.map_err(|error| self.dead_letter(stdin, client, event, origin, error))
    }

    /// Keeps bytes that could not be accepted, and says where. Private spans
    /// and secrets are removed first, as from a stored event: a dead letter
    /// is a file under the home like any other.
    pub fn dead_letter(
        &self,
        bytes: &[u8],
        client: &str,
        event: Option<&str>,
        origin: Origin,
        rejected: Rejected,
    ) -> Failure {
        let letter = DeadLetter {
            client: client.to_owned(),
            event: event.map(str::to_owned),
            received_at: now_ms(),
            error: rejected.to_string(),
            payload_file: Default::default(),
            bytes: 0,
            origin,
        };
        match Spool::new(&self.loaded.home).dead_letter(&self.scrubbed(bytes), letter) {
            Ok(kept) => Failure::DeadLettered { rejected, kept },
            Err(keep) => Failure::NotKept { rejected, keep },
        }
    }

    /// Payload bytes with private spans and secrets removed: as JSON when
    /// they parse (so that a revival can read them), else as text. Bytes
    /// with nothing to remove are kept exactly as they came.
    fn scrubbed(&self, bytes: &[u8]) -> Vec<u8> {
        if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
            let mut clean = value.clone();
            self.privacy.scrub_value(&mut clean);
            return match clean == value {
                true => bytes.to_vec(),
                false => serde_json::to_vec(&clean).expect("a JSON value serializes"),
            };
        }
        let text = String::from_utf8_lossy(bytes);
        match self.privacy.scrub(&text).0 {
            clean if clean == text => bytes.to_vec(),
            clean => clean.into_bytes(),
        }
    }

    /// Accepts an event's JSON object from `client`, arriving from `origin`.
    /// The error says what is wrong with it.
    pub fn accept_value(
        &self,
        client: &str,
        event: Option<&str>,
        payload: Value,
        origin: Origin,
    ) -> Result<Accepted, Rejected> {
        let adapter = adapters::for_client(client).map_err(Rejected::UnknownClient)?;
        self.accept_with(adapter, event, payload, origin)
    }

    /// `accept_value`, with the client's adapter already looked up.
    fn accept_with(
        &self,
        adapter: Box<dyn Adapter>,
        event: Option<&str>,
        mut payload: Value,
        origin: Origin,
    ) -> Result<Accepted, Rejected> {
        if !payload.is_object() {
            return Err(Rejected::NotAnObject);
        }
        self.privacy.scrub_value(&mut payload);
        let mut event = adapter.parse(event, payload).map_err(Rejected::Unreadable)?;
        if event.session_id.as_deref().is_none_or(|id| id.trim().is_empty()) {
            return Err(Rejected::NoSession);
        }
        if let Some(prompt) = &event.prompt
            && let std::borrow::Cow::Owned(own_words) = crate::recall::context::without_injected(prompt)
        {
            event.prompt = Some(own_words);
        }
        let project = crate::project::identify(&origin.project_dir_of(&event));
        let resolved = Resolved { project, settings: self.loaded.config.ingest_settings() };
        Ok(Accepted { id: new_event_id(), received_at: now_ms(), event, adapter, resolved })
    }

    /// Stores an accepted event, or spools it, and works out what the
    /// client is told. Never loses the event: the error case has spooled
    /// it. `started` is when the hook began: its deadline counts from then.
    pub fn deliver(&self, accepted: &Accepted, started: Instant) -> Result<Outcome, Failure> {
        let deadline = self.deadline(started);
        let capture = &accepted.resolved.settings.capture;
        if !records(capture, &accepted.event.kind) {
            return Ok(Outcome::default());
        }
        let spool = Spool::new(&self.loaded.home);
        match self.store(accepted, deadline) {
            Ok(Stored { store, session, warnings }) => {
                let mut outcome = Outcome { warnings, stored: true, ..Outcome::default() };
                if let Err(err) = store.tidy_wal() {
                    outcome.warnings.push(Warning::Checkpoint(err));
                }
                let event = &accepted.event;
                match self.context(&store, accepted, session.as_deref()) {
                    Ok(context) => outcome.stdout = context.and_then(|c| accepted.adapter.context_output(event, &c)),
                    Err(err) => outcome.warnings.push(Warning::Recall(err)),
                }
                Ok(outcome)
            }
            Err(err) => match spool.append(&accepted.spool_entry(&format!("{err:#}"))) {
                Ok(path) => {
                    Ok(Outcome { stdout: None, warnings: vec![Warning::Spooled { reason: err, path }], stored: false })
                }
                Err(spool) => Err(Failure::Unstorable { store: err, spool }),
            },
        }
    }

    /// When a hook that began at `started` must be done.
    pub fn deadline(&self, started: Instant) -> Instant {
        started + Duration::from_millis(self.loaded.config.hook.deadline_ms)
    }

    /// What the client is told back: at session start, the project's
    /// earlier sessions; with a prompt, the earlier memories relevant to it.
    /// Only reads: `store` has brought stale summaries up to date.
    fn context(&self, store: &Store, accepted: &Accepted, session: Option<&str>) -> Result<Option<String>> {
        let settings = &self.loaded.config.context;
        let project = &accepted.resolved.project;
        let event = &accepted.event;
        match event.kind {
            EventKind::SessionStart if settings.inject => {
                crate::recall::context::at_session_start(store, project, session, settings)
            }
            EventKind::UserPromptSubmit if settings.on_prompt => match event.prompt.as_deref() {
                Some(prompt) => crate::recall::context::for_prompt(store, project, session, prompt, settings),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// Opens the store as a hook does: giving up on a locked database after
    /// the configured wait, in time to spool and exit before `deadline`, or
    /// at once while a writer holds it for a long step.
    pub fn open_store(&self, deadline: Instant) -> Result<Store> {
        let lock_wait = time_left(deadline).min(Duration::from_millis(self.loaded.config.hook.lock_wait_ms));
        let index = self.loaded.config.search.index;
        let options = OpenOptions {
            busy_timeout: lock_wait,
            index,
            may_rebuild_index: false,
            memory_map: false,
            gives_way: true,
        };
        Store::open(&self.loaded.home.join(DB_FILE), &options)
    }

    /// Runs the event's plugins, then records it in one transaction (see
    /// `open_store`); then summarizes a session that ended, or brings the
    /// summaries a session start will tell up to date.
    fn store(&self, accepted: &Accepted, deadline: Instant) -> Result<Stored> {
        let Accepted { id, received_at, event, resolved, .. } = accepted;
        let home = &self.loaded.home;
        let plugins = Plugins::new(&resolved.settings.plugins, &resolved.settings.summarize, home, false);
        let mut work = plugged::before(&plugins, event, &resolved.settings.capture);
        let mut store = self.open_store(deadline)?;
        let recorded = store.write(|w| {
            record::record(w, id, event, &resolved.project, *received_at, &resolved.settings.capture, &work)
        })?;
        if event.kind == EventKind::SessionEnd
            && let Some(session_id) = &recorded
        {
            let summarized = summarize::session(&mut store, &plugins, session_id, *received_at)?;
            work.warnings.extend(summarized.warning);
        }
        for warning in &work.warnings {
            crate::plugins::log_line(home, "host", "warn", warning);
        }
        let mut warnings: Vec<Warning> = work.warnings.into_iter().map(Warning::Plugin).collect();
        if event.kind == EventKind::SessionStart && self.loaded.config.context.inject {
            let budget = catch_up_budget(self.loaded);
            let current = recorded.as_deref();
            if let Err(err) = summarize::catch_up(&mut store, &plugins, &resolved.project, current, budget) {
                warnings.push(Warning::CatchUp(err));
            }
        }
        Ok(Stored { store, session: recorded, warnings })
    }

    /// Stores spooled events, oldest first, each as it was accepted. What
    /// fails, or is left when `deadline` nears, stays spooled.
    pub fn replay(&self, spool: &Spool, deadline: Option<Instant>) -> Result<Replayed> {
        let mut report = Replayed::default();
        let mut failed = false;
        for file in spool.waiting() {
            let out_of_time = deadline.is_some_and(|d| Instant::now() + EXIT_RESERVE * 2 >= d);
            if failed || out_of_time {
                report.remaining += 1;
                continue;
            }
            let Some(claim) = spool.claim(&file)? else { continue };
            let started = Instant::now();
            let deadline = deadline.unwrap_or(started + REPLAY_DEADLINE);
            match self.restore(&claim.entry).and_then(|accepted| self.store(&accepted, deadline)) {
                Ok(_) => {
                    spool.done(claim)?;
                    report.stored += 1;
                }
                Err(err) => {
                    spool.release(claim, format!("{err:#}"))?;
                    report.remaining += 1;
                    // The store is failing: leave the rest for later.
                    failed = true;
                }
            }
        }
        Ok(report)
    }

    /// A spooled event as it was accepted (see `SpoolEntry::restore`).
    fn restore(&self, entry: &SpoolEntry) -> Result<Accepted> {
        let (adapter, event, resolved) = entry.restore(|| self.loaded.config.ingest_settings())?;
        let id = if entry.id.is_empty() { new_event_id() } else { entry.id.clone() };
        Ok(Accepted { id, received_at: entry.received_at, event, adapter, resolved })
    }

    /// Tries every dead letter again (after a fix to trae-mem or by hand):
    /// those that now read are stored and removed; the rest stay.
    pub fn revive_dead_letters(&self, spool: &Spool) -> Result<usize> {
        let mut revived = 0;
        for letter in spool.dead_letters()? {
            let Ok(bytes) = std::fs::read(&letter.payload_file) else {
                continue;
            };
            let accepted = read_json(&bytes).and_then(|payload| {
                self.accept_value(&letter.client, letter.event.as_deref(), payload, letter.origin.clone())
            });
            let Ok(mut accepted) = accepted else { continue };
            accepted.received_at = letter.received_at;
            if self.deliver(&accepted, Instant::now()).is_ok() {
                spool.remove_dead_letter(&letter)?;
                revived += 1;
            }
        }
        Ok(revived)
    }

    /// Finds or starts the session `key` names, and makes it live again if
    /// it had ended. Returns its id and whether it was created.
    pub fn open_session(&self, store: &mut Store, key: SessionKey<'_>) -> Result<(String, bool)> {
        let meta = serde_json::json!({"client": key.client, "external_id": key.external_id});
        store.write(|w| {
            let (id, created) = w.resolve_session(key, now_ms(), &meta)?;
            w.reopen_session(&id)?;
            Ok((id, created))
        })
    }

    /// Adds one observation to a session that exists, scrubbed and clipped
    /// as a hook's would be. Returns its id and whether it is private.
    pub fn log(&self, store: &mut Store, session_id: &str, note: &Note<'_>) -> Result<(i64, bool)> {
        let capture = &self.loaded.config.capture;
        let draft = record::Draft::scrubbed(self.privacy, note, capture.response_chars);
        let private = draft.private;
        let id = store.write(|w| record::add_to_session(w, &new_event_id(), session_id, now_ms(), &draft))?;
        Ok((id, private))
    }

    /// Ends a session and summarizes it with the configured summarizer.
    /// Returns its summaries (none when nothing public was recorded) and
    /// who wrote them.
    pub fn end_session(&self, store: &mut Store, session_id: &str) -> Result<(Vec<Summary>, Summarized)> {
        let now = now_ms();
        store.write(|w| w.end_session(session_id, now).map(drop))?;
        let (summaries, summarized) = summarize::again(store, self.loaded, session_id, now)?;
        if summarized.queued {
            // As after a hook's SessionEnd: the model is asked in the background.
            summarize::queue::start_in_background(&self.loaded.home)?;
        }
        Ok((summaries, summarized))
    }
}

/// An event stored: the open store, and what plugins had to say.
struct Stored {
    store: Store,
    /// The session the event was recorded in; none for a second delivery.
    session: Option<String>,
    warnings: Vec<Warning>,
}

/// The most a session start spends bringing earlier sessions' summaries up
/// to date (a quarter of the hook's deadline, if that is less).
const CATCH_UP_BUDGET: Duration = Duration::from_millis(500);

/// What a session start spends bringing summaries up to date.
fn catch_up_budget(loaded: &Loaded) -> Duration {
    CATCH_UP_BUDGET.min(Duration::from_millis(loaded.config.hook.deadline_ms) / 4)
}

/// What is left of the time before `deadline`, less what spooling and
/// exiting need.
pub fn time_left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).saturating_sub(EXIT_RESERVE)
}

/// Whether these settings record this event. Session start and end always
/// run: they carry identity, context and summaries.
fn records(capture: &crate::config::Capture, kind: &EventKind) -> bool {
    matches!(kind, EventKind::SessionStart | EventKind::SessionEnd) || capture.records(kind.name())
}

/// Reads a payload's bytes as JSON; the error says what is wrong.
fn read_json(bytes: &[u8]) -> Result<Value, Rejected> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Rejected::Empty);
    }
    serde_json::from_slice(bytes).map_err(Rejected::NotJson)
}

/// A new event id: a UUIDv7, so that ids recorded together sit together in
/// the store's index.
fn new_event_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Builds the privacy filter from the config.
pub fn privacy(loaded: &Loaded) -> Result<Privacy> {
    Privacy::new(loaded.config.privacy.redact_secrets, &loaded.config.privacy.secret_patterns)
}
