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
//!   or spools it with everything accept resolved. A replay stores it from
//!   what was spooled and never asks its own environment.
//! - The store keeps every delivered id under a unique key, so an event
//!   delivered twice (a commit that raced the hook's watchdog, a replay
//!   after a crash) is stored once.
//!
//! A hook never exits 2, which would block the agent: failures come back
//! as a `Failure` whose message says what became of the payload.

mod plugged;
pub mod record;
pub mod spool;

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::Value;

use crate::adapters::{self, Adapter};
use crate::config::Loaded;
use crate::event::{Event, EventKind, Origin};
use crate::forget::retention;
use crate::plugins::Plugins;
use crate::privacy::Privacy;
use crate::store::{DB_FILE, Kind, OpenOptions, SessionKey, Store, Summary, now_ms};
use crate::summarize::{self, Summarized};
pub use spool::{DeadLetter, Resolved, Spool, SpoolEntry};

/// Time kept back from the deadline to spool and exit.
const EXIT_RESERVE: Duration = Duration::from_millis(250);

/// The most a SessionEnd hook spends on its daily slice of retention: the
/// agent is done by then, but a client may still wait for the hook.
const RETENTION_BUDGET: Duration = Duration::from_millis(300);

/// How long a replay outside a hook (`spool replay`) may take per event.
const REPLAY_DEADLINE: Duration = Duration::from_secs(30);

/// What delivering an event produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// What to print on stdout for the client.
    pub stdout: Option<String>,
    /// Problems worth a line on stderr each, none of which lost the event.
    pub warnings: Vec<String>,
}

/// A failure to take an event in, with a message that says what became of
/// the payload.
#[derive(Debug)]
pub struct Failure {
    pub message: String,
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
    /// is kept byte for byte as a dead letter.
    pub fn accept_bytes(&self, client: &str, event: Option<&str>, stdin: &[u8]) -> Result<Accepted, Failure> {
        let adapter = adapters::for_client(client).map_err(|e| format!("{e:#}"));
        let origin = origin_here(adapter.as_deref().ok());
        let accepted = read_json(stdin).and_then(|payload| self.accept_with(adapter?, event, payload, origin.clone()));
        accepted.map_err(|error| self.dead_letter(stdin, client, event, origin, error))
    }

    /// Keeps bytes that could not be accepted, byte for byte, and says where.
    pub fn dead_letter(
        &self,
        bytes: &[u8],
        client: &str,
        event: Option<&str>,
        origin: Origin,
        error: String,
    ) -> Failure {
        let letter = DeadLetter {
            client: client.to_owned(),
            event: event.map(str::to_owned),
            received_at: now_ms(),
            error: error.clone(),
            payload_file: Default::default(),
            bytes: 0,
            origin,
        };
        match Spool::new(&self.loaded.home).dead_letter(bytes, letter) {
            Ok(path) => Failure { message: format!("{error}; the payload is kept in {}", path.display()) },
            Err(keep_err) => Failure { message: format!("{error}; and it could not be kept: {keep_err:#}") },
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
    ) -> Result<Accepted, String> {
        let adapter = adapters::for_client(client).map_err(|e| format!("{e:#}"))?;
        self.accept_with(adapter, event, payload, origin)
    }

    /// `accept_value`, with the client's adapter already looked up.
    fn accept_with(
        &self,
        adapter: Box<dyn Adapter>,
        event: Option<&str>,
        mut payload: Value,
        origin: Origin,
    ) -> Result<Accepted, String> {
        if !payload.is_object() {
            return Err("the hook payload is JSON but not an object".to_owned());
        }
        self.privacy.scrub_value(&mut payload);
        let mut event = adapter.parse(event, payload).map_err(|e| format!("{e:#}"))?;
        if let Some(prompt) = &event.prompt
            && let std::borrow::Cow::Owned(own_words) = crate::recall::context::without_injected(prompt)
        {
            event.prompt = Some(own_words);
        }
        let project = crate::project::identify(&origin.project_dir_of(&event));
        let resolved = Resolved { project, settings: self.loaded.config.ingest_settings() };
        Ok(Accepted { id: new_event_id(), received_at: now_ms(), event, adapter, resolved })
    }

    /// Stores an accepted event, or spools it; then replays the spool if
    /// the store is healthy. Never loses the event: the error case has
    /// spooled it. `started` is when the hook began: its deadline counts from then.
    pub fn deliver(&self, accepted: &Accepted, started: Instant) -> Result<Outcome, Failure> {
        let deadline = started + Duration::from_millis(self.loaded.config.hook.deadline_ms);
        let capture = &accepted.resolved.settings.capture;
        if !records(capture, &accepted.event.kind) {
            return Ok(Outcome::default());
        }
        let spool = Spool::new(&self.loaded.home);
        match self.store(accepted, deadline) {
            Ok(Stored { mut store, session, warnings }) => {
                let mut outcome = Outcome { warnings, ..Outcome::default() };
                if let Err(err) = store.tidy_wal() {
                    outcome.warnings.push(format!("could not checkpoint the database: {err:#}"));
                }
                let event = &accepted.event;
                match self.context(&mut store, accepted, session.as_deref()) {
                    Ok(context) => outcome.stdout = context.and_then(|c| accepted.adapter.context_output(event, &c)),
                    Err(err) => outcome.warnings.push(format!("could not recall memory: {err:#}")),
                }
                if event.kind == EventKind::SessionEnd {
                    let left = deadline.saturating_duration_since(Instant::now()).saturating_sub(EXIT_RESERVE);
                    let budget = RETENTION_BUDGET.min(left / 2);
                    if let Err(err) = retention::daily(&mut store, &self.loaded.config.retention, budget) {
                        outcome.warnings.push(format!("could not apply retention: {err:#}"));
                    }
                    if crate::sync::after_sessions(self.loaded)
                        && let Err(err) =
                            crate::sync::start_in_background(&self.loaded.home, &accepted.resolved.project)
                    {
                        outcome.warnings.push(format!("could not start a sync: {err:#}"));
                    }
                }
                drop(store);
                if spool.has_pending()
                    && let Err(err) = self.replay(&spool, Some(deadline))
                {
                    outcome.warnings.push(format!("could not replay the spool: {err:#}"));
                }
                Ok(outcome)
            }
            Err(err) => match spool.append(&accepted.spool_entry(&format!("{err:#}"))) {
                Ok(path) => Ok(Outcome {
                    stdout: None,
                    warnings: vec![format!("stored later: {err:#} (spooled to {})", path.display())],
                }),
                Err(spool_err) => {
                    Err(Failure { message: format!("cannot store the event ({err:#}) nor spool it ({spool_err:#})") })
                }
            },
        }
    }

    /// What the client is told back: at session start, the project's
    /// earlier sessions (their summaries brought up to date first); with a
    /// prompt, the earlier memories relevant to it.
    fn context(&self, store: &mut Store, accepted: &Accepted, session: Option<&str>) -> Result<Option<String>> {
        let settings = &self.loaded.config.context;
        let project = &accepted.resolved.project;
        let event = &accepted.event;
        match event.kind {
            EventKind::SessionStart if settings.inject => {
                let budget = catch_up_budget(&self.loaded.config);
                crate::recall::context::at_session_start(store, &self.loaded.home, project, session, settings, budget)
            }
            EventKind::UserPromptSubmit if settings.on_prompt => match event.prompt.as_deref() {
                Some(prompt) => crate::recall::context::for_prompt(store, project, session, prompt, settings),
                None => Ok(None),
            },
            _ => Ok(None),
        }
    }

    /// Runs the event's plugins, then records it in one transaction, giving
    /// up on a locked database after the configured wait, in time to spool
    /// before `deadline`; then summarizes a session that ended.
    fn store(&self, accepted: &Accepted, deadline: Instant) -> Result<Stored> {
        let Accepted { id, received_at, event, resolved, .. } = accepted;
        let home = &self.loaded.home;
        let plugins = Plugins::new(&resolved.settings.plugins, &resolved.settings.summarize.summarizer, home, false);
        let mut work = plugged::before(&plugins, event, &resolved.settings.capture);
        let remaining = deadline.saturating_duration_since(Instant::now()).saturating_sub(EXIT_RESERVE);
        let lock_wait = remaining.min(Duration::from_millis(self.loaded.config.hook.lock_wait_ms));
        let index = self.loaded.config.search.index;
        let options = OpenOptions { busy_timeout: lock_wait, index, may_rebuild_index: false, memory_map: false };
        let mut store = Store::open(&home.join(DB_FILE), &options)?;
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
        Ok(Stored { store, session: recorded, warnings: work.warnings })
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

    /// A spooled event as it was accepted. Entries from before 0.2 kept no
    /// project or settings; those are resolved now, as they always were.
    pub(crate) fn restore(&self, entry: &SpoolEntry) -> Result<Accepted> {
        let adapter = adapters::for_client(&entry.client)?;
        let event = adapter.parse(Some(&entry.event), entry.payload.clone())?;
        let resolved = match &entry.resolved {
            Some(resolved) => resolved.clone(),
            None => {
                let project = crate::project::identify(&origin_here(Some(adapter.as_ref())).project_dir_of(&event));
                Resolved { project, settings: self.loaded.config.ingest_settings() }
            }
        };
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
        self.summarize(store, session_id, now)
    }

    /// Summarizes a session again with the configured summarizer, replacing
    /// its summaries.
    pub fn summarize(&self, store: &mut Store, session_id: &str, at: i64) -> Result<(Vec<Summary>, Summarized)> {
        let plugins = Plugins::of(&self.loaded.config, &self.loaded.home, true);
        let summarized = summarize::session(store, &plugins, session_id, at)?;
        let summaries = if summarized.written { store.summaries(session_id)? } else { Vec::new() };
        Ok((summaries, summarized))
    }
}

/// An event stored: the open store, and what plugins had to say.
struct Stored {
    store: Store,
    /// The session the event was recorded in; none for a second delivery.
    session: Option<String>,
    warnings: Vec<String>,
}

/// The most a session start spends bringing earlier sessions' summaries up
/// to date (a quarter of the hook's deadline, if that is less).
const CATCH_UP_BUDGET: Duration = Duration::from_millis(500);

/// What a session start under `config` spends bringing summaries up to date.
pub fn catch_up_budget(config: &crate::config::Config) -> Duration {
    CATCH_UP_BUDGET.min(Duration::from_millis(config.hook.deadline_ms) / 4)
}

/// Whether these settings record this event. Session start and end always
/// run: they carry identity, context and summaries.
fn records(capture: &crate::config::Capture, kind: &EventKind) -> bool {
    matches!(kind, EventKind::SessionStart | EventKind::SessionEnd) || capture.records(kind.name())
}

/// Reads a payload's bytes as JSON; the error says what is wrong.
fn read_json(bytes: &[u8]) -> Result<Value, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err("the hook payload on stdin is empty; expected the event's JSON".to_owned());
    }
    serde_json::from_slice(bytes).map_err(|e| format!("the hook payload is not valid JSON ({e})"))
}

/// Where an event arrives from, as this process sees it, for the client
/// `adapter` reads (none when the client is unknown).
fn origin_here(adapter: Option<&dyn Adapter>) -> Origin {
    Origin { project_dir: adapter.and_then(Adapter::project_dir_from_env), cwd: std::env::current_dir().ok() }
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
