//! The internal Event: one shape for what every client sends. Adapters
//! (`crate::adapters`) build it; hook handlers consume it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The lifecycle events trae-mem handles itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    Stop,
    SessionEnd,
    /// Anything else: recorded as a short note (or given to plugins).
    Other(String),
}

impl EventKind {
    /// Reads an event name as Claude Code spells it.
    pub fn parse(name: &str) -> Self {
        match name {
            "SessionStart" => Self::SessionStart,
            "UserPromptSubmit" => Self::UserPromptSubmit,
            "PreToolUse" => Self::PreToolUse,
            "PostToolUse" => Self::PostToolUse,
            "PostToolUseFailure" => Self::PostToolUseFailure,
            "Stop" => Self::Stop,
            "SessionEnd" => Self::SessionEnd,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::PostToolUseFailure => "PostToolUseFailure",
            Self::Stop => "Stop",
            Self::SessionEnd => "SessionEnd",
            Self::Other(name) => name,
        }
    }
}

/// One event from a client, normalized. Texts are already scrubbed of
/// private spans and secrets by the time handlers see them.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventKind,
    /// The client's name, such as `claude-code`.
    pub client: String,
    /// The client's own session id.
    pub session_id: Option<String>,
    /// The directory that decides the project.
    pub project_dir: Option<PathBuf>,
    /// How a session started (`startup`, `resume`, `compact`, ...).
    pub source: Option<String>,
    pub prompt: Option<String>,
    pub tool_name: Option<String>,
    /// The client's id of one tool call, the same in its PreToolUse and
    /// PostToolUse (Claude Code and Codex send it).
    pub tool_use_id: Option<String>,
    pub tool_input: Option<Value>,
    pub tool_response: Option<Value>,
    pub error: Option<String>,
    /// The model's final answer for the turn.
    pub final_answer: Option<String>,
    /// Why a session ended or a turn stopped.
    pub reason: Option<String>,
    /// The whole payload, for notes about other events and for plugins.
    pub payload: Value,
}

impl Event {
    /// An event of `kind` from `client` with only its payload; adapters fill in the rest.
    pub fn new(kind: EventKind, client: &str, payload: Value) -> Self {
        Self {
            kind,
            client: client.to_owned(),
            session_id: None,
            project_dir: None,
            source: None,
            prompt: None,
            tool_name: None,
            tool_use_id: None,
            tool_input: None,
            tool_response: None,
            error: None,
            final_answer: None,
            reason: None,
            payload,
        }
    }
}

/// Where an event arrived from, as the hook's process saw it: read from the
/// environment once, when the event is accepted, and never again, so that
/// storing it later (from the spool, or a dead letter revived) files it
/// under the project it came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The project root the client named in its environment (Claude Code's
    /// `CLAUDE_PROJECT_DIR`); it wins over the payload's `cwd`, which can
    /// wander into subdirectories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<PathBuf>,
    /// The hook process's working directory: the last resort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

impl Origin {
    /// The directory that decides `event`'s project.
    pub fn project_dir_of(&self, event: &Event) -> PathBuf {
        self.project_dir
            .clone()
            .or_else(|| event.project_dir.clone())
            .or_else(|| self.cwd.clone())
            .unwrap_or_else(|| PathBuf::from("."))
    }
}
