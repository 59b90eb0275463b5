//! JSON configs: hook lists (Claude Code's nested groups, Cursor's flat
//! entries) and `mcpServers`, merged beside whatever else the file holds.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

use super::file::Format;
use super::{MCP_SERVER, command_binary};

/// A JSON object file. Keys keep the order they had (serde_json's
/// `preserve_order`), so that only what trae-mem adds changes.
pub struct Json;

impl Format for Json {
    type Doc = Map<String, Value>;

    fn parse(text: &str, path: &Path) -> Result<Self::Doc> {
        if text.trim().is_empty() {
            return Ok(Map::new());
        }
        match serde_json::from_str(text)
            .with_context(|| format!("{} is not valid JSON; fix it first", path.display()))?
        {
            Value::Object(map) => Ok(map),
            _ => bail!("{} holds JSON that is not an object; fix it first", path.display()),
        }
    }

    fn print(doc: &Self::Doc) -> Option<String> {
        let empty = doc.is_empty() || (doc.len() == 1 && doc.get("version") == Some(&json!(1)));
        (!empty).then(|| serde_json::to_string_pretty(doc).expect("JSON serializes") + "\n")
    }

    /// The same settings in another key order are the same config.
    fn canonical(doc: &Self::Doc) -> Option<String> {
        Self::print(doc)?;
        Some(sorted(&Value::Object(doc.clone())).to_string())
    }
}

/// `value` with every object's keys in sorted order.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

/// The hook commands in one entry of an event's list: its own `command`
/// (Cursor) or those of its `hooks` (Claude Code, Codex, Gemini CLI).
pub fn entry_commands(entry: &Value) -> Vec<&str> {
    let own = entry.get("command").and_then(Value::as_str);
    let nested = entry.get("hooks").and_then(Value::as_array).into_iter().flatten();
    own.into_iter().chain(nested.filter_map(|h| h.get("command").and_then(Value::as_str))).collect()
}

/// Whether this entry is trae-mem's: all its commands run `trae-mem hook`
/// (install's, or one written by hand).
fn is_ours(entry: &Value) -> bool {
    let commands = entry_commands(entry);
    !commands.is_empty() && commands.iter().all(|c| command_binary(c).is_some())
}

/// Replaces trae-mem's hook entries with `entries` (event, entry), keeping
/// every other hook where it is.
pub fn set_hooks(doc: &mut Map<String, Value>, entries: &[(&str, Value)]) {
    remove_hooks(doc);
    let hooks = object_at(doc, "hooks");
    for (event, entry) in entries {
        let list = hooks.entry(*event).or_insert_with(|| json!([]));
        if let Value::Array(list) = list {
            list.push(entry.clone());
        }
    }
}

/// Removes trae-mem's hook entries, and the lists and `hooks` object they
/// leave empty.
pub fn remove_hooks(doc: &mut Map<String, Value>) {
    let Some(Value::Object(hooks)) = doc.get_mut("hooks") else {
        return;
    };
    for list in hooks.values_mut() {
        if let Value::Array(entries) = list {
            entries.retain(|e| !is_ours(e));
        }
    }
    hooks.retain(|_, list| list.as_array().is_none_or(|l| !l.is_empty()));
    if hooks.is_empty() {
        doc.remove("hooks");
    }
}

/// Registers `trae-mem mcp` (with `args`) under `mcpServers`.
pub fn set_mcp_server(doc: &mut Map<String, Value>, bin: &Path, args: &[String]) {
    let servers = object_at(doc, "mcpServers");
    servers.insert(MCP_SERVER.to_owned(), json!({ "command": bin.to_string_lossy(), "args": args }));
}

/// Removes trae-mem's `mcpServers` entry, and the object if it is left empty.
pub fn remove_mcp_server(doc: &mut Map<String, Value>) {
    if let Some(Value::Object(servers)) = doc.get_mut("mcpServers") {
        servers.remove(MCP_SERVER);
        if servers.is_empty() {
            doc.remove("mcpServers");
        }
    }
}

/// The object under `key`, made one (empty) when it is missing or is not
/// an object.
fn object_at<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let value = map.entry(key).or_insert_with(|| json!({}));
    if !value.is_object() {
        *value = json!({});
    }
    value.as_object_mut().expect("an object")
}

/// One project's entry in `~/.claude.json` (`projects` → its path).
pub fn project_entry<'a>(doc: &'a Map<String, Value>, project: &Path) -> Option<&'a Map<String, Value>> {
    doc.get("projects")?.get(project.to_string_lossy().as_ref())?.as_object()
}

/// Edits one project's entry in `~/.claude.json`, creating it as needed
/// and removing what the edit leaves empty.
pub fn edit_project_entry(doc: &mut Map<String, Value>, project: &Path, edit: impl FnOnce(&mut Map<String, Value>)) {
    let key = project.to_string_lossy().into_owned();
    let projects = object_at(doc, "projects");
    edit(object_at(projects, &key));
    if projects[&key].as_object().is_some_and(Map::is_empty) {
        projects.remove(&key);
    }
    if projects.is_empty() {
        doc.remove("projects");
    }
}

/// The binaries a JSON config runs trae-mem from: its hooks and its MCP server.
pub fn binaries(doc: &Map<String, Value>) -> Vec<String> {
    let hooks = doc.get("hooks").and_then(Value::as_object).into_iter().flat_map(|h| h.values());
    let entries = hooks.filter_map(Value::as_array).flatten();
    let mut found: Vec<String> = entries.flat_map(entry_commands).filter_map(command_binary).collect();
    let server = doc.get("mcpServers").and_then(|s| s.get(MCP_SERVER)).and_then(|s| s.get("command"));
    found.extend(server.and_then(Value::as_str).map(str::to_owned));
    found
}
