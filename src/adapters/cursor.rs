//! Cursor (`.cursor/hooks.json`): camelCase event names, the session in
//! `conversation_id`, the project in `workspace_roots[0]`, and tool calls
//! in one of three shapes (a shell command, an MCP call, a generic tool).

use std::path::PathBuf;

use anyhow::Result;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Adapter, as_text, event_name, unwrap_json_string, wire};
use crate::client::Client;
use crate::event::{Event, EventKind};

#[derive(Debug, Default, Deserialize)]
struct Wire {
    hook_event_name: Option<String>,
    conversation_id: Option<String>,
    /// Only on sessionStart and sessionEnd.
    session_id: Option<String>,
    workspace_roots: Option<Vec<String>>,
    /// Only on tool events.
    cwd: Option<String>,
    prompt: Option<String>,
    /// Shell events.
    command: Option<String>,
    output: Option<Value>,
    /// Generic and MCP tool events; input and output are JSON in a string.
    tool_name: Option<String>,
    tool_input: Option<Value>,
    tool_output: Option<Value>,
    result_json: Option<Value>,
    error: Option<Value>,
    /// beforeReadFile and afterFileEdit.
    file_path: Option<String>,
    /// afterAgentResponse.
    text: Option<String>,
    reason: Option<String>,
}

pub struct Cursor;

/// Cursor's event names, as internal kinds. Internal names read as themselves.
fn kind(name: &str) -> EventKind {
    match name {
        "sessionStart" => EventKind::SessionStart,
        "beforeSubmitPrompt" => EventKind::UserPromptSubmit,
        "preToolUse" | "beforeShellExecution" | "beforeMCPExecution" | "beforeReadFile" => EventKind::PreToolUse,
        "postToolUse" | "afterShellExecution" | "afterMCPExecution" => EventKind::PostToolUse,
        "postToolUseFailure" => EventKind::PostToolUseFailure,
        // The agent's message is the turn's answer; Cursor's own `stop`
        // carries only a status, so it stays a note.
        "afterAgentResponse" => EventKind::Stop,
        "afterFileEdit" => EventKind::Other("FileChanged".to_owned()),
        "sessionEnd" => EventKind::SessionEnd,
        other => EventKind::parse(other),
    }
}

impl Adapter for Cursor {
    fn client(&self) -> Client {
        Client::Cursor
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        let wire: Wire = wire(&payload)?;
        let kind = kind(&event_name(event, wire.hook_event_name, "hook_event_name")?);
        let project_dir = wire.workspace_roots.and_then(|roots| roots.into_iter().next()).or(wire.cwd);
        let (tool_name, tool_input, tool_response) = if let Some(command) = wire.command {
            (Some("Shell".to_owned()), Some(json!({ "command": command })), wire.output)
        } else if let Some(tool) = wire.tool_name {
            let response = wire.tool_output.or(wire.result_json).map(unwrap_json_string);
            (Some(tool), wire.tool_input.map(unwrap_json_string), response)
        } else if let (EventKind::PreToolUse, Some(path)) = (&kind, wire.file_path) {
            (Some("Read".to_owned()), Some(json!({ "file_path": path })), None)
        } else {
            (None, None, None)
        };
        Ok(Event {
            session_id: wire.conversation_id.or(wire.session_id),
            project_dir: project_dir.map(PathBuf::from),
            prompt: wire.prompt,
            tool_name,
            tool_input,
            tool_response,
            error: wire.error.map(as_text),
            final_answer: wire.text,
            reason: wire.reason,
            ..Event::new(kind, self.name(), payload)
        })
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        matches!(event.kind, EventKind::SessionStart | EventKind::PostToolUse)
            .then(|| json!({ "additional_context": context }).to_string())
    }
}
