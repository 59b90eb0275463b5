//! The built-in handlers: what each lifecycle event writes.

use anyhow::Result;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Note;
use crate::config::Capture;
use crate::event::{Event, EventKind};
use crate::plugins::PluginObservation;
use crate::privacy::Privacy;
use crate::store::{
    Kind, NewObservation, PRIVATE_PLACEHOLDER, SESSION_END_NOTE, STOP_NOTE, SessionKey, TURN_ENDED, Writer,
};
use crate::text::{clip, clip_json};

/// What plugins contributed to one event.
#[derive(Debug, Default)]
pub struct PluginWork {
    /// For an event that is not built in: what its handlers returned, in
    /// place of the plain note. `None` when no handler answered.
    pub handled: Option<Vec<PluginObservation>>,
    /// Observations about the model's answer (ModelResponse handlers).
    pub model_response: Vec<PluginObservation>,
    /// A sampler's version of a large tool output.
    pub sampled: Option<Sampled>,
    /// Every plugin failure, as one line each.
    pub warnings: Vec<String>,
}

/// A large tool output as a sampler plugin shortened it.
#[derive(Debug)]
pub struct Sampled {
    pub text: String,
    /// The sampler's name.
    pub by: String,
}

/// Payload fields every event of a client carries (Claude Code's, then
/// those of Cursor, Codex, Gemini CLI and Cline); a note about an unfamiliar
/// event shows the others.
const COMMON_FIELDS: &[&str] = &[
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "permission_mode",
    "prompt_id",
    "effort",
    "agent_transcript_path",
    "conversation_id",
    "generation_id",
    "workspace_roots",
    "cursor_version",
    "user_email",
    "turn_id",
    "timestamp",
    "clineVersion",
    "hookName",
    "taskId",
    "workspaceRoots",
    "userId",
];

/// The most characters of a note about an unfamiliar event.
const OTHER_EVENT_CHARS: usize = 600;

/// One observation a handler wants written.
pub struct Draft {
    kind: Kind,
    tool: Option<String>,
    content: String,
    pub private: bool,
    tags: Vec<String>,
}

impl Draft {
    fn new(kind: Kind, tool: Option<&str>, content: String) -> Self {
        let private = content == PRIVATE_PLACEHOLDER;
        Self { kind, tool: tool.map(str::to_owned), content, private, tags: Vec::new() }
    }

    /// An observation a plugin returned.
    fn from_plugin(observation: &PluginObservation, max_chars: usize) -> Self {
        let kind = Kind::from(observation.kind.as_str());
        let mut draft = Self::new(kind, observation.tool.as_deref(), clip(&observation.content, max_chars));
        draft.tags = observation.tags.clone();
        draft
    }

    /// A note logged by hand, scrubbed of private spans and secrets, then
    /// clipped to `max_chars` (scrubbing first, so that a cut cannot split a
    /// secret out of the redactor's reach).
    pub fn scrubbed(privacy: &Privacy, note: &Note<'_>, max_chars: usize) -> Self {
        let (content, all_private) = privacy.scrub(note.content);
        let mut draft = Self::new(note.kind.clone(), note.tool, clip(&content, max_chars));
        draft.private |= note.private || all_private;
        draft.tags = note.tags.iter().map(|tag| privacy.scrub(tag).0).filter(|tag| !tag.trim().is_empty()).collect();
        draft
    }

    fn write(&self, writer: &Writer<'_>, session_id: &str, at: i64) -> Result<i64> {
        writer.add_observation(&NewObservation {
            session_id,
            ts: at,
            kind: &self.kind,
            tool: self.tool.as_deref(),
            content: &self.content,
            private: self.private,
            tags: &self.tags,
        })
    }
}

/// Records `event` in one transaction: finds or creates its session,
/// writes its observations, and on SessionEnd ends the session. Returns
/// the local session id, or `None` when the event with this `id` was
/// stored before (a second delivery stores nothing).
pub fn record(
    writer: &Writer<'_>,
    id: &str,
    event: &Event,
    project: &str,
    at: i64,
    capture: &Capture,
    plugins: &PluginWork,
) -> Result<Option<String>> {
    if !writer.claim_event(id, at)? {
        return Ok(None);
    }
    let external_id = event.session_id.as_deref().unwrap_or("unknown");
    let key = SessionKey { client: &event.client, project, external_id };
    let meta = json!({"client": event.client, "external_id": external_id});
    let (session_id, _) = writer.resolve_session(key, at, &meta)?;

    let drafts = drafts(event, capture, plugins);
    let fresh = drafts.is_empty()
        || writer.claim_content(&content_key(event, &session_id, &drafts), at, DUPLICATE_WINDOW_MS)?;
    if fresh {
        let tool_use_id = event.tool_use_id.as_deref();
        if let Some(tool_use_id) = tool_use_id
            && matches!(event.kind, EventKind::PostToolUse | EventKind::PostToolUseFailure)
        {
            writer.supersede_tool_note(&session_id, tool_use_id)?;
        }
        for draft in drafts {
            let observation = draft.write(writer, &session_id, at)?;
            if let Some(tool_use_id) = tool_use_id
                && event.kind == EventKind::PreToolUse
            {
                writer.hold_tool_note(&session_id, tool_use_id, observation)?;
            }
        }
    }

    match &event.kind {
        EventKind::SessionStart => {
            let source = event.source.as_deref().unwrap_or("startup");
            writer.merge_session_meta(&session_id, &json!({"source": source}))?;
            // A resumed session is live again.
            writer.reopen_session(&session_id)?;
        }
        EventKind::SessionEnd => {
            writer.end_session(&session_id, at)?;
        }
        _ => {}
    }
    Ok(Some(session_id))
}

/// The same content recorded again in a session within this long is one
/// event delivered twice (a hook configured both globally and in the
/// project, say), and stored once.
const DUPLICATE_WINDOW_MS: i64 = 10_000;

/// What makes an event the same as another: its tool call's id where the
/// client sends one, or else what it would store.
fn content_key(event: &Event, session_id: &str, drafts: &[Draft]) -> Vec<u8> {
    let mut hash = Sha256::new();
    for part in [session_id, event.kind.name()] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    match &event.tool_use_id {
        Some(tool_use_id) => hash.update(tool_use_id.as_bytes()),
        None => {
            for draft in drafts {
                for part in [draft.kind.as_str(), draft.tool.as_deref().unwrap_or_default(), &draft.content] {
                    hash.update(part.as_bytes());
                    hash.update([0]);
                }
            }
        }
    }
    hash.finalize().to_vec()
}

/// Whether a tool is one of trae-mem's own MCP tools, whatever prefix the
/// client gives it: `mcp__trae-mem__trae_mem_search` in Claude Code,
/// `mcp__trae_mem__…` in Codex, `mcp_trae-mem_trae_mem_search` in Gemini
/// CLI, the bare name elsewhere.
fn is_own_tool(name: &str) -> bool {
    name.starts_with("trae_mem_") || name.contains("_trae_mem_")
}

/// The characters of the note that stands for a call of trae-mem's own tools.
const OWN_TOOL_CHARS: usize = 300;

/// Adds one drafted observation to a session, as the event `id`. Returns the
/// observation's id.
pub fn add_to_session(writer: &Writer<'_>, id: &str, session_id: &str, at: i64, draft: &Draft) -> Result<i64> {
    writer.claim_event(id, at)?;
    draft.write(writer, session_id, at)
}

fn drafts(event: &Event, capture: &Capture, plugins: &PluginWork) -> Vec<Draft> {
    let tool = event.tool_name.as_deref();
    let input = |max| event.tool_input.as_ref().map_or_else(String::new, |v| input_text(v, max));
    match &event.kind {
        EventKind::SessionStart => Vec::new(),
        EventKind::UserPromptSubmit => {
            let prompt = event.prompt.as_deref().unwrap_or_default();
            vec![Draft::new(Kind::User, None, clip(prompt, capture.prompt_chars))]
        }
        EventKind::PreToolUse => {
            let json =
                event.tool_input.as_ref().map_or_else(|| "null".to_owned(), |v| clip_json(v, capture.pre_tool_chars));
            let text = format!("about to run {}, input={json}", tool.unwrap_or("a tool"));
            vec![Draft::new(Kind::Note, tool, clip(&text, capture.pre_tool_chars))]
        }
        // Memory must not feed on itself: a search of it, stored with its
        // results, would be found by the next search as a copy of old
        // memories. What was asked is kept, not what came back.
        EventKind::PostToolUse if tool.is_some_and(is_own_tool) => {
            let text = format!("asked trae-mem's memory: {}", input(OWN_TOOL_CHARS));
            vec![Draft::new(Kind::Note, tool, clip(&text, OWN_TOOL_CHARS))]
        }
        EventKind::PostToolUse => {
            let (response, sampled_by) = match &plugins.sampled {
                Some(Sampled { text, by }) => (text.clone(), Some(by)),
                None => {
                    let response = event.tool_response.as_ref();
                    (response.map_or_else(String::new, |v| response_text(v, capture.tool_response_chars)), None)
                }
            };
            let mut draft = tool_draft(Kind::Tool, tool, input(capture.tool_input_chars), "→", response);
            draft.tags.extend(sampled_by.map(|s| format!("sampled-by:{s}")));
            vec![draft]
        }
        EventKind::PostToolUseFailure => {
            let error = clip(event.error.as_deref().unwrap_or("failed"), capture.tool_response_chars);
            vec![tool_draft(Kind::Error, tool, input(capture.tool_input_chars), "✗", error)]
        }
        EventKind::Stop => {
            let reason = event.reason.as_deref().unwrap_or(TURN_ENDED);
            let mut drafts = vec![Draft::new(Kind::Note, None, format!("{STOP_NOTE}{reason}"))];
            if let Some(answer) = event.final_answer.as_deref().filter(|a| !a.trim().is_empty()) {
                drafts.push(Draft::new(Kind::Response, None, clip(answer, capture.response_chars)));
            }
            drafts.extend(plugins.model_response.iter().map(|o| Draft::from_plugin(o, capture.response_chars)));
            drafts
        }
        EventKind::SessionEnd => {
            vec![Draft::new(
                Kind::Note,
                None,
                format!("{SESSION_END_NOTE}{}", event.reason.as_deref().unwrap_or("unknown")),
            )]
        }
        EventKind::Other(_) if plugins.handled.is_some() => {
            plugins.handled.iter().flatten().map(|o| Draft::from_plugin(o, capture.response_chars)).collect()
        }
        EventKind::Other(name) => {
            let mut draft =
                Draft::new(Kind::Note, tool, clip(&other_event_text(name, &event.payload), OTHER_EVENT_CHARS));
            draft.tags.push(format!("event:{name}"));
            vec![draft]
        }
    }
}

/// A tool observation: its input, a marker, then its result or error.
/// Private only when every part of it was private.
fn tool_draft(kind: Kind, tool: Option<&str>, input: String, marker: &str, result: String) -> Draft {
    let private = [&input, &result].iter().all(|t| t.is_empty() || *t == PRIVATE_PLACEHOLDER);
    let content = if private { PRIVATE_PLACEHOLDER.to_owned() } else { format!("{input}\n{marker} {result}") };
    let mut draft = Draft::new(kind, tool, content);
    draft.private = private;
    draft
}

/// A tool's input as people read it: a shell command as itself, anything
/// else as compact JSON.
fn input_text(input: &Value, max_chars: usize) -> String {
    match input.get("command") {
        Some(Value::String(command)) => clip(command, max_chars),
        _ => clip_json(input, max_chars),
    }
}

/// A tool's response as text: a string as itself, a shell result as its
/// output, anything else as compact JSON.
pub fn response_text(response: &Value, max_chars: usize) -> String {
    if let Some(stdout) = response.get("stdout").and_then(Value::as_str) {
        let stderr = response.get("stderr").and_then(Value::as_str).unwrap_or_default();
        let text = if stderr.is_empty() { stdout.to_owned() } else { format!("{stdout}\n[stderr] {stderr}") };
        return clip(&text, max_chars);
    }
    clip_json(response, max_chars)
}

/// "FileChanged file_path=/x event=change": the event's own fields.
fn other_event_text(name: &str, payload: &Value) -> String {
    let mut text = name.to_owned();
    if let Some(map) = payload.as_object() {
        for (key, value) in map.iter().filter(|(k, _)| !COMMON_FIELDS.contains(&k.as_str())) {
            let shown = match value {
                Value::String(s) => clip(s, 200),
                Value::Null => continue,
                other => clip_json(other, 200),
            };
            text.push_str(&format!(" {key}={shown}"));
        }
    }
    text
}
