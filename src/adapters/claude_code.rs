//! Claude Code: payloads as recorded in `tests/fixtures/claude-code/`.
//! Codex CLI sends the same shape (see `codex.rs`).

use std::path::PathBuf;

use anyhow::Result;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Adapter, as_text, event_name, wire};
use crate::client::Client;
use crate::event::{Event, EventKind};

/// The fields trae-mem reads from a Claude Code hook payload. Everything
/// else stays in the raw payload.
#[derive(Debug, Default, Deserialize)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    source: Option<String>,
    prompt: Option<String>,
    tool_name: Option<String>,
    tool_use_id: Option<String>,
    tool_input: Option<Value>,
    tool_response: Option<Value>,
    error: Option<Value>,
    last_assistant_message: Option<String>,
    reason: Option<String>,
}

pub struct ClaudeCode;

impl Adapter for ClaudeCode {
    fn client(&self) -> Client {
        Client::ClaudeCode
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        parse_shape(self.name(), event, payload)
    }

    /// Claude Code runs hooks with CLAUDE_PROJECT_DIR set to the project
    /// root; `cwd` can wander into subdirectories mid-session.
    fn project_dir_from_env(&self) -> Option<PathBuf> {
        std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()).map(PathBuf::from)
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        hook_specific_context(event, context)
    }
}

/// Builds the Event from a payload in Claude Code's shape, for `client`.
pub(super) fn parse_shape(client: &str, event: Option<&str>, payload: Value) -> Result<Event> {
    let wire: Wire = wire(&payload)?;
    let name = event_name(event, wire.hook_event_name, "hook_event_name")?;
    Ok(Event {
        session_id: wire.session_id,
        project_dir: wire.cwd.map(PathBuf::from),
        source: wire.source,
        prompt: wire.prompt,
        tool_name: wire.tool_name,
        tool_use_id: wire.tool_use_id,
        tool_input: wire.tool_input,
        tool_response: wire.tool_response,
        error: wire.error.map(as_text),
        final_answer: wire.last_assistant_message,
        reason: wire.reason,
        ..Event::new(EventKind::parse(&name), client, payload)
    })
}

/// `hookSpecificOutput.additionalContext`, which Claude Code, Codex and
/// Gemini CLI read at session start and prompt submission.
pub(super) fn hook_specific_context(event: &Event, context: &str) -> Option<String> {
    matches!(event.kind, EventKind::SessionStart | EventKind::UserPromptSubmit).then(|| {
        json!({"hookSpecificOutput": {"hookEventName": event.kind.name(), "additionalContext": context}}).to_string()
    })
}
