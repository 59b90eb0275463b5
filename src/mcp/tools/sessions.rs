//! Tools that record, for clients that have no hooks: start a session, log
//! observations in it, end and summarize it.

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Memory, Spec, ToolDef, ToolError, rfc3339};
use crate::ingest::Note;
use crate::store::{Kind, SessionKey, Store, SummaryLevel, now_ms};

/// The client name of sessions started here when the caller names none.
const DEFAULT_CLIENT: &str = "mcp";

pub(super) fn definitions() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            Spec {
                name: "trae_mem_start_session",
                title: "Start recording a session",
                description: "Start recording a session of work in a project, for a client without hooks (such as Trae). Pass external_id (your own conversation id) to get the same session back on every call; without it, each call starts a new session. Returns the session_id the other recording tools take. Next: trae_mem_log for each request, decision, error or note worth remembering, and trae_mem_end_session when the work is done.",
                example: r#"{"project": "/home/me/app", "external_id": "conversation-17", "client": "trae"}"#,
                read_only: false,
            },
            start_session,
        ),
        ToolDef::new(
            Spec {
                name: "trae_mem_log",
                title: "Record an observation",
                description: "Record one observation in a session from trae_mem_start_session: what the user asked (kind user), a decision, an error, a tool's result (kind tool, with tool), or a note. Secrets and <private>...</private> spans are removed before storage; private: true stores the row but never indexes, summarizes or returns it. Content past the config's [capture] response_chars (8000 by default) is cut. Next: more trae_mem_log calls, then trae_mem_end_session.",
                example: r#"{"session_id": "<from trae_mem_start_session>", "kind": "decision", "content": "Use BEGIN IMMEDIATE for the import", "tags": ["db"]}"#,
                read_only: false,
            },
            log,
        ),
        ToolDef::new(
            Spec {
                name: "trae_mem_end_session",
                title: "End and summarize a session",
                description: "End a session from trae_mem_start_session and summarize it. Its brief summary is what later work in the project gets from trae_mem_inject and at session start. Call it once, when the work is done. Returns the brief and detailed summaries, null when nothing public was recorded.",
                example: r#"{"session_id": "<from trae_mem_start_session>"}"#,
                read_only: false,
            },
            end_session,
        ),
    ]
}

/// Arguments of trae_mem_start_session.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct StartSessionInput {
    /// The project: a directory (resolved to its git repository) or a stored project path. Default: the server's working directory.
    project: Option<String>,
    /// Your own id for this conversation: the same id (with the same client and project) gets the same session back. Default: a new session.
    external_id: Option<String>,
    /// The client's name, such as trae. Default: mcp.
    client: Option<String>,
}

/// The session to record into.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct StartSessionOutput {
    /// Pass it to trae_mem_log and trae_mem_end_session.
    session_id: String,
    /// False when external_id found an existing session.
    created: bool,
    project: String,
    client: String,
    external_id: String,
}

fn start_session(memory: &Memory, input: StartSessionInput) -> Result<StartSessionOutput, ToolError> {
    let project = memory.project(input.project.as_deref())?;
    let client = non_empty(input.client).unwrap_or_else(|| DEFAULT_CLIENT.to_owned());
    let external_id = non_empty(input.external_id).unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let key = SessionKey { client: &client, project: &project, external_id: &external_id };
    // Coming back to an ended session resumes it, as a hook's SessionStart does.
    let (session_id, created) = memory.ingest().open_session(&mut memory.store(), key)?;
    Ok(StartSessionOutput { session_id, created, project, client, external_id })
}

/// Arguments of trae_mem_log.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct LogInput {
    /// The session, from trae_mem_start_session.
    session_id: String,
    /// What to remember.
    content: String,
    /// What it is: user (a request), decision, error, tool (a tool's result), response, or note. Default: note.
    kind: Option<String>,
    /// The tool it is about, such as Bash.
    tool: Option<String>,
    /// Free labels.
    #[serde(default)]
    tags: Vec<String>,
    /// Store it, but never index, summarize or return it. Default: false.
    #[serde(default)]
    private: bool,
}

/// The recorded observation.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct LogOutput {
    id: i64,
    session_id: String,
    #[schemars(with = "String")]
    kind: Kind,
    /// True when it will never be returned: asked for, or all of it was in <private> tags.
    private: bool,
}

fn log(memory: &Memory, input: LogInput) -> Result<LogOutput, ToolError> {
    let kind = non_empty(input.kind).map_or(Kind::Note, |k| Kind::from(k.as_str()));
    if input.content.trim().is_empty() {
        return Err(ToolError("content is empty; pass the text to remember".to_owned()));
    }
    let tool = non_empty(input.tool);
    let mut store = memory.store();
    let session_id = session_id(&store, &input.session_id)?;
    let note = Note { kind, tool: tool.as_deref(), content: &input.content, tags: &input.tags, private: input.private };
    let (id, private) = memory.ingest().log(&mut store, &session_id, &note)?;
    Ok(LogOutput { id, session_id, kind: note.kind, private })
}

/// Arguments of trae_mem_end_session.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct EndSessionInput {
    /// The session, from trae_mem_start_session.
    session_id: String,
}

/// The ended session and its summaries.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct EndSessionOutput {
    session_id: String,
    /// When it ended (RFC 3339, UTC).
    ended_at: String,
    /// What later sessions are told; null when nothing public was recorded.
    brief: Option<String>,
    /// The longer summary; null when nothing public was recorded.
    detailed: Option<String>,
    /// Who wrote them: "builtin" or the configured summarizer plugin; null when nothing public was recorded.
    summarizer: Option<String>,
    /// Why the configured summarizer plugin did not write them (the built-in one did), if it failed.
    warning: Option<String>,
}

fn end_session(memory: &Memory, input: EndSessionInput) -> Result<EndSessionOutput, ToolError> {
    let mut store = memory.store();
    let session_id = session_id(&store, &input.session_id)?;
    let (summaries, summarized) = memory.ingest().end_session(&mut store, &session_id)?;
    let ended_at = super::reader(&store).session(&session_id)?.ended_at.unwrap_or_else(now_ms);
    let level = |level: SummaryLevel| summaries.iter().find(|s| s.level == level).map(|s| s.content.clone());
    Ok(EndSessionOutput {
        brief: level(SummaryLevel::Brief),
        detailed: level(SummaryLevel::Detailed),
        summarizer: summarized.written.then_some(summarized.by),
        warning: summarized.warning,
        session_id,
        ended_at: rfc3339(ended_at),
    })
}

/// The full id of a session named by the caller.
fn session_id(store: &Store, named: &str) -> Result<String, ToolError> {
    // A blank id would be the prefix of every id.
    let found = match named.trim() {
        "" => None,
        named => super::reader(store).session(named).ok(),
    };
    found.map(|s| s.id).ok_or_else(|| {
        ToolError(format!(
            "no session has id {named:?}; call trae_mem_start_session and pass the session_id it returns"
        ))
    })
}

/// The text, unless it is missing or blank.
fn non_empty(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty())
}
