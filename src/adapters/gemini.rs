//! Gemini CLI (`.gemini/settings.json`): Claude Code's field names, its own
//! event names (BeforeAgent, BeforeTool, AfterTool, AfterAgent), and a tool
//! response of `{llmContent, returnDisplay, error}`. Its stdout must be JSON
//! only.

use std::path::PathBuf;

use anyhow::Result;
use serde::Deserialize;
use serde_json::Value;

use super::claude_code::hook_specific_context;
use super::{Adapter, as_text, event_name, wire};
use crate::client::Client;
use crate::event::{Event, EventKind};

#[derive(Debug, Default, Deserialize)]
struct Wire {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    cwd: Option<String>,
    /// How the session started; older releases call it `trigger`.
    #[serde(alias = "trigger")]
    source: Option<String>,
    prompt: Option<String>,
    prompt_response: Option<String>,
    tool_name: Option<String>,
    tool_input: Option<Value>,
    tool_response: Option<ToolResponse>,
    reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolResponse {
    /// What the model saw; for a shell command, wrapped in
    /// `<untrusted_context>` with the process group and exit code.
    llm_content: Option<Value>,
    /// What the user saw: a shell command's clean output.
    return_display: Option<Value>,
    error: Option<Value>,
}

impl ToolResponse {
    /// The output worth remembering: what the user saw when it is text,
    /// else what the model saw.
    fn output(self) -> Option<Value> {
        match self.return_display {
            Some(Value::String(shown)) if !shown.trim().is_empty() => Some(Value::String(shown)),
            _ => self.llm_content,
        }
    }
}

pub struct Gemini;

fn kind(name: &str, failed: bool) -> EventKind {
    match name {
        "BeforeAgent" => EventKind::UserPromptSubmit,
        "BeforeTool" => EventKind::PreToolUse,
        "AfterTool" | "PostToolUse" if failed => EventKind::PostToolUseFailure,
        "AfterTool" => EventKind::PostToolUse,
        "AfterAgent" => EventKind::Stop,
        other => EventKind::parse(other),
    }
}

impl Adapter for Gemini {
    fn client(&self) -> Client {
        Client::Gemini
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        let wire: Wire = wire(&payload)?;
        let name = event_name(event, wire.hook_event_name, "hook_event_name")?;
        let mut response = wire.tool_response.unwrap_or_default();
        let error = response.error.take().filter(|e| !e.is_null()).map(as_text);
        let kind = kind(&name, error.is_some());
        Ok(Event {
            session_id: wire.session_id,
            project_dir: wire.cwd.map(PathBuf::from),
            source: wire.source,
            prompt: wire.prompt,
            tool_name: wire.tool_name,
            tool_input: wire.tool_input,
            tool_response: response.output(),
            error,
            final_answer: wire.prompt_response,
            reason: wire.reason,
            ..Event::new(kind, self.name(), payload)
        })
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        hook_specific_context(event, context)
    }
}
