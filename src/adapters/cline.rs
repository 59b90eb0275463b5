//! Cline (one executable per event in `.clinerules/hooks/`): camelCase
//! fields, the event's data nested under its own key (`preToolUse`,
//! `postToolUse`, ...), the session in `taskId`.
//!
//! Cline blocks the agent on any non-zero exit and on invalid JSON, and
//! reads the last JSON object on stdout: so this adapter always answers
//! `{"cancel": false}` and fails with exit 0.

use std::path::PathBuf;

use anyhow::Result;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Adapter, as_text, event_name, wire};
use crate::client::Client;
use crate::event::{Event, EventKind};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    hook_name: Option<String>,
    task_id: Option<String>,
    workspace_roots: Option<Vec<String>>,
    user_prompt_submit: Option<PromptSubmit>,
    pre_tool_use: Option<ToolUse>,
    post_tool_use: Option<ToolUse>,
}

#[derive(Debug, Default, Deserialize)]
struct PromptSubmit {
    prompt: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolUse {
    #[serde(alias = "tool")]
    tool_name: Option<String>,
    parameters: Option<Value>,
    result: Option<Value>,
    success: Option<bool>,
}

pub struct Cline;

fn kind(name: &str, failed: bool) -> EventKind {
    match name {
        "TaskStart" | "TaskResume" => EventKind::SessionStart,
        "PostToolUse" if failed => EventKind::PostToolUseFailure,
        "TaskComplete" | "TaskCancel" => EventKind::SessionEnd,
        other => EventKind::parse(other),
    }
}

impl Adapter for Cline {
    fn client(&self) -> Client {
        Client::Cline
    }

    fn parse(&self, event: Option<&str>, payload: Value) -> Result<Event> {
        let wire: Wire = wire(&payload)?;
        // The payload's own hookName tells a resumed task from a new one,
        // even when the event comes back from the spool as SessionStart.
        let (source, reason) = match wire.hook_name.as_deref() {
            Some("TaskResume") => (Some("resume"), None),
            Some("TaskStart") => (Some("startup"), None),
            Some("TaskComplete") => (None, Some("completed")),
            Some("TaskCancel") => (None, Some("cancelled")),
            _ => (None, None),
        };
        let name = event_name(event, wire.hook_name, "hookName")?;
        let tool = wire.post_tool_use.or(wire.pre_tool_use).unwrap_or_default();
        let failed = tool.success == Some(false);
        let (tool_response, error) = if failed { (None, tool.result.map(as_text)) } else { (tool.result, None) };
        Ok(Event {
            session_id: wire.task_id,
            project_dir: wire.workspace_roots.and_then(|roots| roots.into_iter().next()).map(PathBuf::from),
            source: source.map(str::to_owned),
            prompt: wire.user_prompt_submit.and_then(|p| p.prompt),
            tool_name: tool.tool_name,
            tool_input: tool.parameters,
            tool_response,
            error,
            reason: reason.map(str::to_owned),
            ..Event::new(kind(&name, failed), self.name(), payload)
        })
    }

    fn context_output(&self, event: &Event, context: &str) -> Option<String> {
        matches!(event.kind, EventKind::SessionStart | EventKind::UserPromptSubmit)
            .then(|| json!({ "cancel": false, "contextModification": context }).to_string())
    }

    fn idle_output(&self) -> Option<String> {
        Some(json!({ "cancel": false }).to_string())
    }

    fn failure_exit_code(&self) -> u8 {
        0
    }
}
