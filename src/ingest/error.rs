//! What can go wrong taking an event in, typed: a caller branches on the
//! variant, and a user reads the message. None of these lose the event
//! without saying so.

use std::path::PathBuf;

/// Why a payload could not be accepted as an event.
#[derive(Debug, thiserror::Error)]
pub enum Rejected {
    /// `--client` (or the MCP tool's `client`) names no client trae-mem knows.
    #[error("{0}")]
    UnknownClient(crate::client::UnknownClient),
    #[error("the hook payload on stdin is empty; expected the event's JSON")]
    Empty,
    #[error("the hook payload is not valid JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("the hook payload is JSON but not an object")]
    NotAnObject,
    /// Without a session id, an event cannot be filed under its session:
    /// kept aside rather than stored in a session of its own.
    #[error("the hook payload names no session (no session id in it)")]
    NoSession,
    /// The client's adapter could not read the event out of the payload.
    #[error("{0:#}")]
    Unreadable(anyhow::Error),
}

/// A failure to take an event in, which says what became of the payload.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// It could not be read; its bytes are kept as a dead letter.
    #[error("{rejected}; the payload is kept in {}", kept.display())]
    DeadLettered { rejected: Rejected, kept: PathBuf },
    /// It could not be read, nor its bytes kept.
    #[error("{rejected}; and it could not be kept: {keep:#}")]
    NotKept { rejected: Rejected, keep: anyhow::Error },
    /// It was read, but neither the store nor the spool would take it.
    #[error("cannot store the event ({store:#}) nor spool it ({spool:#})")]
    Unstorable { store: anyhow::Error, spool: anyhow::Error },
}

/// A problem worth a line on stderr that lost nothing.
#[derive(Debug, thiserror::Error)]
pub enum Warning {
    /// A plugin failed, or a summarizer plugin did; the built-in behaviour stood.
    #[error("{0}")]
    Plugin(String),
    #[error("could not checkpoint the database: {0:#}")]
    Checkpoint(anyhow::Error),
    #[error("could not recall memory: {0:#}")]
    Recall(anyhow::Error),
    #[error("could not bring earlier summaries up to date: {0:#}")]
    CatchUp(anyhow::Error),
    /// The store could not take the event now; the spool keeps it.
    #[error("stored later: {reason:#} (spooled to {})", path.display())]
    Spooled { reason: anyhow::Error, path: PathBuf },
    #[error("could not apply retention: {0:#}")]
    Retention(anyhow::Error),
    #[error("could not start a sync: {0:#}")]
    Sync(anyhow::Error),
    #[error("could not start giving new memories their vectors: {0:#}")]
    Embed(anyhow::Error),
    #[error("could not start the summaries by a model: {0:#}")]
    Summarize(anyhow::Error),
    #[error("could not replay the spool: {0:#}")]
    Replay(anyhow::Error),
}
