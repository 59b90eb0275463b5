//! `trae_mem_hook_event`: a lifecycle event through exactly the pipeline of
//! `trae-mem hook` (`Ingest::accept_value`, then `Ingest::deliver`), for
//! clients that can call tools but cannot run hook commands, such as Trae.
//! The payload arrives as a JSON object and goes in as one, never as bytes.

use std::time::Instant;

use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Memory, Spec, ToolDef, ToolError};
use crate::client::Client;
use crate::event::Origin;

/// The payload format read when the caller names none.
const DEFAULT_CLIENT: Client = Client::ClaudeCode;

pub(super) fn definition() -> ToolDef {
    ToolDef::new(
        Spec {
            name: "trae_mem_hook_event",
            title: "Record a lifecycle event",
            description: "Send one lifecycle event through the same pipeline as the `trae-mem hook` command (private spans and secrets removed, the capture settings, plugins, storage, and a spool when the database is busy). Use it from a client that cannot run hook commands: SessionStart when a conversation starts (its `stdout` is the memory to read), UserPromptSubmit with each request, PostToolUse after a tool, Stop after an answer, SessionEnd at the end (which summarizes the session). The payload is the event's JSON object in Claude Code's hook format unless `client` names another: session_id, cwd, and the event's own fields (prompt; tool_name, tool_input, tool_response; last_assistant_message; reason).",
            example: r#"{"event": "UserPromptSubmit", "payload": {"session_id": "conversation-17", "cwd": "/home/me/app", "prompt": "Fix the flaky import test"}}"#,
            read_only: false,
        },
        hook_event,
    )
}

/// Arguments of trae_mem_hook_event.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct HookEventInput {
    /// The event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, PostToolUseFailure, Stop, SessionEnd, or any other name.
    event: String,
    /// The event's JSON object, as the client's hook would get it on stdin.
    payload: JsonObject,
    /// Whose hook format the payload is in. Default: claude-code.
    client: Option<String>,
}

/// What the hook did.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct HookEventOutput {
    event: String,
    client: String,
    /// What `trae-mem hook` prints for the client: at SessionStart, the memory to give the agent.
    stdout: Option<String>,
    /// A problem that did not lose the event, such as a busy database (the event is spooled and stored by a later call).
    warning: Option<String>,
}

fn hook_event(memory: &Memory, input: HookEventInput) -> Result<HookEventOutput, ToolError> {
    let event = input.event.trim();
    if event.is_empty() {
        return Err(ToolError("event is empty; name the hook event, such as SessionStart or PostToolUse".to_owned()));
    }
    let started = Instant::now();
    let client = input.client.as_deref().unwrap_or(DEFAULT_CLIENT.name());
    let ingest = memory.ingest();
    // The server's working directory is where its client runs it: the
    // project, when the payload names none.
    let origin = Origin { project_dir: None, cwd: Some(memory.cwd.clone()) };
    // Kept aside in case it cannot be read: a dead letter holds what was sent.
    let sent = input.payload.clone();
    let accepted = ingest.accept_value(client, Some(event), input.payload.into(), origin.clone()).map_err(|error| {
        let bytes = serde_json::to_vec(&sent).unwrap_or_default();
        ToolError(ingest.dead_letter(&bytes, client, Some(event), origin, error).to_string())
    })?;
    let event = accepted.event.kind.name().to_owned();
    let adapter_name = accepted.adapter.name().to_owned();
    let mut outcome = ingest.deliver(&accepted, started).map_err(|failure| ToolError(failure.to_string()))?;
    crate::after_delivery::run(&ingest, &memory.loaded, &accepted, started, &mut outcome);
    Ok(HookEventOutput {
        event,
        client: adapter_name,
        stdout: outcome.stdout,
        warning: (!outcome.warnings.is_empty())
            .then(|| outcome.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")),
    })
}
