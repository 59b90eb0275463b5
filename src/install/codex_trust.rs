//! Whether Codex will run trae-mem's hooks. Codex runs a hook from a
//! `hooks.json` only once the user has trusted it in its `/hooks` screen,
//! which records `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]`
//! `trusted_hash = "sha256:…"` in the user's `config.toml`. The hash is of
//! the hook as it is then, so a hook that changes (a new binary path) is
//! skipped again until trusted again. A project's `.codex/` is loaded only
//! when the project itself is trusted (`[projects."<dir>"] trust_level`).
//! All of it without a word, which is why `doctor` reads it.
//! (codex-rs/hooks/src/engine/discovery.rs, `command_hook_hash`.)

use std::path::Path;

use anyhow::Result;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{command_binary, file};

/// Codex's default hook timeout, in seconds: part of a hook's identity.
const DEFAULT_TIMEOUT_SEC: u64 = 600;
/// SessionEnd's own default, and the most it allows.
const SESSION_END_TIMEOUT_SEC: (u64, u64) = (1, 3);

/// What stops Codex from running trae-mem's hooks in `hooks_json`, judged
/// by the user's `config.toml`; for a project install, `project` is the
/// project's directory, which Codex must trust too. Empty when they run.
pub fn problems(hooks_json: &Path, user_config: &Path, project: Option<&Path>) -> Result<Vec<String>> {
    let hooks: Value = match file::read_optional(hooks_json)? {
        Some(text) => serde_json::from_str(&text).unwrap_or_default(),
        None => return Ok(Vec::new()),
    };
    let config: toml::Table =
        file::read_optional(user_config)?.and_then(|text| toml::from_str(&text).ok()).unwrap_or_default();
    let states = config.get("hooks").and_then(|h| h.get("state"));
    // Codex files a hook's state under its hooks.json path, as given or
    // canonical (it canonicalizes an explicit CODEX_HOME).
    let canonical = hooks_json.canonicalize().ok().filter(|c| c != hooks_json);
    let sources: Vec<&Path> = [Some(hooks_json), canonical.as_deref()].into_iter().flatten().collect();
    let mut untrusted = Vec::new();
    let mut changed = Vec::new();
    let mut disabled = Vec::new();
    let events = hooks.get("hooks").and_then(Value::as_object).into_iter().flatten();
    for (event, groups) in events {
        let groups = groups.as_array().into_iter().flatten().enumerate();
        for (group_index, group) in groups {
            let handlers = group.get("hooks").and_then(Value::as_array).into_iter().flatten().enumerate();
            for (handler_index, handler) in handlers {
                let Some(command) = handler.get("command").and_then(Value::as_str) else { continue };
                if command_binary(command).is_none() {
                    continue;
                }
                let event_key = snake_case(event);
                let state = sources
                    .iter()
                    .map(|source| format!("{}:{event_key}:{group_index}:{handler_index}", source.display()))
                    .find_map(|key| states.and_then(|s| s.get(&key)));
                let trusted = state.and_then(|s| s.get("trusted_hash")).and_then(|h| h.as_str());
                if state.and_then(|s| s.get("enabled")).and_then(|e| e.as_bool()) == Some(false) {
                    disabled.push(event.clone());
                } else if trusted.is_none() {
                    untrusted.push(event.clone());
                } else if trusted != Some(&hook_hash(&event_key, group, handler)) {
                    changed.push(event.clone());
                }
            }
        }
    }
    let mut problems = Vec::new();
    if let Some(project) = project
        && !project_trusted(&config, project)
    {
        problems
            .push(format!("Codex does not trust the project {}, so it loads none of its .codex/", project.display()));
    }
    for (events, what) in [
        (untrusted, "not trusted in Codex"),
        (changed, "changed since Codex trusted them"),
        (disabled, "disabled in Codex"),
    ] {
        if !events.is_empty() {
            problems.push(format!("hooks {what}, so Codex skips them: {}", events.join(", ")));
        }
    }
    Ok(problems)
}

/// `PostToolUse` → `post_tool_use`, as Codex names events in keys and hashes.
fn snake_case(event: &str) -> String {
    let mut snake = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    snake
}

/// Codex's hash of a hook: SHA-256 of its normalized identity as compact
/// JSON with sorted keys (the event, the group's matcher for tool events,
/// and the one command handler with its defaults filled in).
fn hook_hash(event: &str, group: &Value, handler: &Value) -> String {
    let (default, most) = match event {
        "session_end" => SESSION_END_TIMEOUT_SEC,
        _ => (DEFAULT_TIMEOUT_SEC, u64::MAX),
    };
    let timeout = handler.get("timeout").and_then(Value::as_u64).unwrap_or(default).clamp(1, most);
    let mut normalized = serde_json::Map::new();
    normalized.insert("async".into(), handler.get("async").cloned().unwrap_or(Value::Bool(false)));
    normalized.insert("command".into(), handler["command"].clone());
    if let Some(message) = handler.get("statusMessage") {
        normalized.insert("statusMessage".into(), message.clone());
    }
    normalized.insert("timeout".into(), timeout.into());
    normalized.insert("type".into(), "command".into());
    let mut identity = serde_json::Map::new();
    identity.insert("event_name".into(), event.into());
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(normalized)]));
    let tool_event = event.contains("tool_use");
    if let Some(matcher) = group.get("matcher").filter(|m| tool_event && !m.is_null()) {
        identity.insert("matcher".into(), matcher.clone());
    }
    let digest = Sha256::digest(Value::Object(identity).to_string().as_bytes());
    format!("sha256:{}", crate::text::hex(&digest))
}

/// Whether the user's config trusts `project` (or a directory above it).
fn project_trusted(config: &toml::Table, project: &Path) -> bool {
    let Some(projects) = config.get("projects").and_then(|p| p.as_table()) else { return false };
    project.ancestors().any(|dir| {
        let entry = projects.get(dir.to_string_lossy().as_ref());
        entry.and_then(|e| e.get("trust_level")).and_then(|t| t.as_str()) == Some("trusted")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_names_become_codex_keys() {
        assert_eq!(snake_case("PostToolUse"), "post_tool_use");
        assert_eq!(snake_case("SessionStart"), "session_start");
        assert_eq!(snake_case("Stop"), "stop");
    }

    #[test]
    fn the_hash_is_the_one_codex_recorded() {
        // A trusted_hash that a live Codex reported for this hook, published
        // by another project that pins it (the command is theirs).
        let group =
            serde_json::json!({"hooks": [{"type": "command", "command": "/private/tmp/boss-hook-trust-golden/h.sh"}]});
        assert_eq!(
            hook_hash("session_start", &group, &group["hooks"][0]),
            "sha256:f6412f932140037c9b09b4fd9a240fb62e7aa9e563e1d0a5af4019254acb0941"
        );
    }
}
