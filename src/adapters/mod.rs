//! Adapters: one per client, each turning that client's payload into the
//! internal `Event` and writing the hook's answer the way that client reads it.

mod claude_code;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::event::Event;

/// What an adapter does for its client.
pub trait Adapter {
    /// The client's name, as given to `--client`.
    fn name(&self) -> &'static str;

    /// Builds the Event from a payload. `event` is `--event`, when given;
    /// otherwise the payload names it.
    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event>;

    /// The stdout that gives `context` to the agent after `event`, if this
    /// client reads context there.
    fn context_output(&self, event: &Event, context: &str) -> Option<String>;

    /// The exit code for trae-mem's own failure: one that never blocks the agent.
    fn failure_exit_code(&self) -> u8 {
        1
    }
}

/// The clients trae-mem has adapters for.
pub const CLIENTS: &[&str] = &["claude-code"];

/// The adapter for `client`.
pub fn for_client(client: &str) -> Result<Box<dyn Adapter>> {
    match client {
        "claude-code" | "claude" => Ok(Box::new(claude_code::ClaudeCode)),
        other => bail!("unknown client {other:?}; supported: {}", CLIENTS.join(", ")),
    }
}
