//! The built-in handlers: what each lifecycle event writes.

use anyhow::Result;
use serde_json::{Value, json};

use super::plugged::PluginWork;
use crate::config::Capture;
use crate::event::{Event, EventKind};
use crate::plugins::PluginObservation;
use crate::store::{NewObservation, PRIVATE_PLACEHOLDER, SessionKey, SummaryLevel, Writer};
use crate::summarize;
use crate::text::{clip, clip_json};

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
struct Draft {
    kind: String,
    tool: Option<String>,
    content: String,
    private: bool,
    tags: Vec<String>,
}

impl Draft {
    fn new(kind: &str, tool: Option<&str>, content: String) -> Self {
        let private = content == PRIVATE_PLACEHOLDER;
        Self { kind: kind.to_owned(), tool: tool.map(str::to_owned), content, private, tags: Vec::new() }
    }

    /// An observation a plugin returned.
    fn from_plugin(observation: &PluginObservation, max_chars: usize) -> Self {
        let mut draft =
            Self::new(&observation.kind, observation.tool.as_deref(), clip(&observation.content, max_chars));
        draft.tags = observation.tags.clone();
        draft
    }
}

/// Records `event` in one transaction: finds or creates its session, writes
/// its observations, and on SessionEnd ends and summarizes the session.
/// Returns the local session id.
pub fn record(
    writer: &Writer<'_>,
    event: &Event,
    project: &str,
    at: i64,
    capture: &Capture,
    plugins: &PluginWork,
) -> Result<String> {
    let external_id = event.session_id.as_deref().unwrap_or("unknown");
    let key = SessionKey { client: &event.client, project, external_id };
    let meta = json!({"client": event.client, "external_id": external_id});
    let (session_id, _) = writer.resolve_session(key, at, &meta)?;

    let drafts = drafts(event, capture, plugins);
    for draft in &drafts {
        writer.add_observation(&NewObservation {
            session_id: &session_id,
            ts: at,
            kind: &draft.kind,
            tool: draft.tool.as_deref(),
            content: &draft.content,
            private: draft.private,
            tags: &draft.tags,
        })?;
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
            summarize_session(writer, &session_id, at)?;
        }
        _ => {}
    }
    Ok(session_id)
}

/// Runs the built-in summarizer over a session and replaces its summaries.
/// Returns false when the session has nothing public to summarize.
pub fn summarize_session(writer: &Writer<'_>, session_id: &str, at: i64) -> Result<bool> {
    let observations = writer.session_observations(session_id)?;
    let Some(summaries) = summarize::summarize(&observations) else {
        return Ok(false);
    };
    writer.put_summary(session_id, SummaryLevel::Brief, &summaries.brief, at)?;
    writer.put_summary(session_id, SummaryLevel::Detailed, &summaries.detailed, at)?;
    Ok(true)
}

fn drafts(event: &Event, capture: &Capture, plugins: &PluginWork) -> Vec<Draft> {
    let tool = event.tool_name.as_deref();
    let input = |max| event.tool_input.as_ref().map_or_else(String::new, |v| input_text(v, max));
    match &event.kind {
        EventKind::SessionStart => Vec::new(),
        EventKind::UserPromptSubmit => {
            let prompt = event.prompt.as_deref().unwrap_or_default();
            vec![Draft::new("user", None, clip(prompt, capture.prompt_chars))]
        }
        EventKind::PreToolUse => {
            let json =
                event.tool_input.as_ref().map_or_else(|| "null".to_owned(), |v| clip_json(v, capture.pre_tool_chars));
            let text = format!("about to run {}, input={json}", tool.unwrap_or("a tool"));
            vec![Draft::new("note", tool, clip(&text, capture.pre_tool_chars))]
        }
        EventKind::PostToolUse => {
            let (response, sampled_by) = match &plugins.sampled {
                Some((text, sampler)) => (text.clone(), Some(sampler)),
                None => {
                    let response = event.tool_response.as_ref();
                    (response.map_or_else(String::new, |v| response_text(v, capture.tool_response_chars)), None)
                }
            };
            let mut draft = tool_draft("tool", tool, input(capture.tool_input_chars), "→", response);
            draft.tags.extend(sampled_by.map(|s| format!("sampled-by:{s}")));
            vec![draft]
        }
        EventKind::PostToolUseFailure => {
            let error = clip(event.error.as_deref().unwrap_or("failed"), capture.tool_response_chars);
            vec![tool_draft("error", tool, input(capture.tool_input_chars), "✗", error)]
        }
        EventKind::Stop => {
            let reason = event.reason.as_deref().unwrap_or("turn ended");
            let mut drafts = vec![Draft::new("note", None, format!("stop: {reason}"))];
            if let Some(answer) = event.final_answer.as_deref().filter(|a| !a.trim().is_empty()) {
                drafts.push(Draft::new("response", None, clip(answer, capture.response_chars)));
            }
            drafts.extend(plugins.model_response.iter().map(|o| Draft::from_plugin(o, capture.response_chars)));
            drafts
        }
        EventKind::SessionEnd => {
            vec![Draft::new("note", None, format!("session end: {}", event.reason.as_deref().unwrap_or("unknown")))]
        }
        EventKind::Other(_) if plugins.handled.is_some() => {
            plugins.handled.iter().flatten().map(|o| Draft::from_plugin(o, capture.response_chars)).collect()
        }
        EventKind::Other(name) => {
            let mut draft = Draft::new("note", tool, clip(&other_event_text(name, &event.payload), OTHER_EVENT_CHARS));
            draft.tags.push(format!("event:{name}"));
            vec![draft]
        }
    }
}

/// A tool observation: its input, a marker, then its result or error.
/// Private only when every part of it was private.
fn tool_draft(kind: &'static str, tool: Option<&str>, input: String, marker: &str, result: String) -> Draft {
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
