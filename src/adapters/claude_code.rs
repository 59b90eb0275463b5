//! Claude Code: payloads as recorded in `shared/fixtures/claude-code/`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Adapter;
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
    tool_input: Option<Value>,
    tool_response: Option<Value>,
    error: Option<Value>,
    last_assistant_message: Option<String>,
    reason: Option<String>,
}

pub struct ClaudeCode;

impl Adapter for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        let wire: Wire =
            serde_json::from_value(payload.clone()).context("the payload's fields have unexpected types")?;
        let name = event
            .map(str::to_owned)
            .or(wire.hook_event_name)
            .context("no event given: pass --event or send hook_event_name")?;
        // Claude Code runs hooks with CLAUDE_PROJECT_DIR set to the project
        // root; `cwd` can wander into subdirectories mid-session.
        let project_dir = std::env::var_os("CLAUDE_PROJECT_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| wire.cwd.map(PathBuf::from));
        Ok(Event {
            kind: EventKind::parse(&name),
            client: self.name().to_owned(),
            session_id: wire.session_id,
            project_dir,
            source: wire.source,
            prompt: wire.prompt,
            tool_name: wire.tool_name,
            tool_input: wire.tool_input,
            tool_response: wire.tool_response,
            error: wire.error.map(|e| match e {
                Value::String(s) => s,
                other => other.to_string(),
            }),
            final_answer: wire.last_assistant_message,
            reason: wire.reason,
            payload,
        })
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        matches!(event.kind, EventKind::SessionStart | EventKind::UserPromptSubmit).then(|| {
            json!({"hookSpecificOutput": {"hookEventName": event.kind.name(), "additionalContext": context}})
                .to_string()
        })
    }
}
