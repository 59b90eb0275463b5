//! How a plugin call failed, typed. Every failure names the plugin; the
//! caller logs it and the built-in behaviour takes over, so a plugin can
//! never break a hook.

use std::path::PathBuf;

/// A plugin's failure: which plugin, and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("plugin {plugin}: {kind}")]
pub struct PluginError {
    pub plugin: String,
    pub kind: PluginErrorKind,
}

/// What went wrong in a plugin call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PluginErrorKind {
    /// It could not be read, compiled or loaded from the cache.
    #[error("{}: {source:#}", path.display())]
    Load { path: PathBuf, source: anyhow::Error },
    /// Its interface version is not one this host knows.
    #[error("{0:#}")]
    Version(anyhow::Error),
    /// It is not a component for its role's world (or any version of it).
    #[error("it does not implement the {role} world: {detail}")]
    WrongWorld { role: &'static str, detail: String },
    /// The time limit passed: it was stopped wherever it was.
    #[error("took longer than its limit of {ms} ms and was stopped")]
    TimedOut { ms: u64 },
    /// Its own error, as it said it.
    #[error("returned an error: {0}")]
    Returned(String),
    #[error("tried to use more than its limit of {mb} MB of memory and was stopped")]
    OutOfMemory { mb: u64 },
    #[error("wrote more than {kb} KB to its {stream} and was stopped")]
    Flooded { stream: &'static str, kb: usize },
    /// It trapped: a panic, an unreachable, a bad memory access.
    #[error("crashed (trap): {0}")]
    Trapped(String),
    #[error("returned {count} observations, more than its limits.max_observations of {max}")]
    TooManyObservations { count: usize, max: usize },
    #[error("returned {bytes} bytes, more than its limits.max_output_bytes of {max}")]
    TooLarge { bytes: usize, max: u64 },
    #[error("returned an observation with an empty kind or content ({0})")]
    EmptyObservation(String),
    #[error("returned an empty brief summary")]
    EmptyBrief,
}
