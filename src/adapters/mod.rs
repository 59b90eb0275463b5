//! Adapters: one per client, each turning that client's payload into the
//! internal `Event` and writing the hook's answer the way that client reads it.
//!
//! An adapter must also read back the internal event names (`PostToolUse`,
//! `FileChanged`, ...): the spool keeps an event under its internal name and
//! hands the same payload to the same adapter later.

mod claude_code;
mod cline;
mod codex;
mod cursor;
mod gemini;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{Client, UnknownClient};
use crate::event::Event;

/// What an adapter does for its client.
pub trait Adapter: Send + Sync {
    /// The client whose payloads this adapter reads.
    fn client(&self) -> Client;

    /// The client's name, as given to `--client`.
    fn name(&self) -> &'static str {
        self.client().name()
    }

    /// Builds the Event from a payload. `event` is `--event`, when given;
    /// otherwise the payload names it.
    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event>;

    /// The project root this client names in the hook's environment, if
    /// it does. Read once, when an event is accepted (see `event::Origin`).
    fn project_dir_from_env(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// The stdout that gives `context` to the agent after `event`, if this
    /// client reads context there.
    fn context_output(&self, event: &Event, context: &str) -> Option<String>;

    /// The stdout when there is nothing to say, for a client that reads an
    /// answer on every call (and may stall or block without one), even after
    /// trae-mem's own failure.
    fn idle_output(&self) -> Option<String> {
        None
    }

    /// The exit code for trae-mem's own failure: one that never blocks the agent.
    fn failure_exit_code(&self) -> u8 {
        1
    }
}

impl Client {
    /// The adapter for this client's hooks; none for a client without hooks.
    pub fn adapter(self) -> Option<Box<dyn Adapter>> {
        match self {
            Client::ClaudeCode => Some(Box::new(claude_code::ClaudeCode)),
            Client::Cursor => Some(Box::new(cursor::Cursor)),
            Client::Codex => Some(Box::new(codex::Codex)),
            Client::Gemini => Some(Box::new(gemini::Gemini)),
            Client::Cline => Some(Box::new(cline::Cline)),
            Client::Trae => None,
        }
    }
}

/// The adapter for the hook client called `name` (or an alias of it), as
/// `--client`, the spool and dead letters name it.
pub fn for_client(name: &str) -> Result<Box<dyn Adapter>, UnknownClient> {
    name.parse().ok().and_then(Client::adapter).ok_or_else(|| UnknownClient::for_hooks(name))
}

/// Where an event arrives from, as this process sees it, for the client
/// `adapter` reads (none when the client is unknown).
pub fn origin_here(adapter: Option<&dyn Adapter>) -> crate::event::Origin {
    crate::event::Origin {
        project_dir: adapter.and_then(Adapter::project_dir_from_env),
        cwd: std::env::current_dir().ok(),
    }
}

/// Reads a client's wire struct out of its payload.
fn wire<T: DeserializeOwned>(payload: &Value) -> Result<T> {
    T::deserialize(payload).context("the payload's fields have unexpected types")
}

/// The event's name: `--event` wins over the payload's own `field`.
fn event_name(flag: Option<&str>, from_payload: Option<String>, field: &str) -> Result<String> {
    flag.map(str::to_owned).or(from_payload).with_context(|| format!("no event given: pass --event or send {field}"))
}

/// An error or result as text: a string as itself, anything else as JSON.
fn as_text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// A field some clients send as a JSON document inside a string (Cursor's
/// `tool_input`, `tool_output`): the document when it parses, else the string.
fn unwrap_json_string(value: Value) -> Value {
    match &value {
        Value::String(s) => serde_json::from_str(s).unwrap_or(value),
        _ => value,
    }
}
