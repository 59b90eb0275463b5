//! trae-mem's Claude Code plugin (`claude-code-plugin/` in the repository),
//! as Claude Code records it: its settings (the user's, the project's, then
//! the project's local file; the later wins) enable `trae-mem@<marketplace>`
//! in `enabledPlugins`, and `plugins/installed_plugins.json` in its config
//! home says where each installed copy lives. Install and doctor read this,
//! so that the plugin and `trae-mem install claude-code` never both run
//! trae-mem: the store would keep each event once, but the agent would be
//! told each memory twice and see two MCP servers.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

use super::file::{self, Format};
use super::json::Json;
use super::{Target, user_home};

/// The plugin's name in its manifest, before `@<marketplace>`.
const PLUGIN_NAME: &str = "trae-mem";

/// The plugin, enabled where a target's hooks would run.
#[derive(Debug, Clone)]
pub struct Enabled {
    /// `trae-mem@<marketplace>`, as Claude Code names it.
    pub id: String,
    /// The settings file that enables it (the last one that says so).
    pub settings: PathBuf,
    /// Where Claude Code keeps the installed copy; None when it is enabled
    /// but not installed (yet).
    pub install_path: Option<PathBuf>,
}

/// Claude Code's own config home: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn config_home() -> Result<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir)),
        None => Ok(user_home()?.join(".claude")),
    }
}

/// The plugin when Claude Code runs it for `target`: in every project for a
/// global target, in the target's project otherwise.
pub fn enabled(target: &Target) -> Result<Option<Enabled>> {
    let config = config_home()?;
    let mut settings = vec![config.join("settings.json")];
    if !target.global {
        settings.extend([".claude/settings.json", ".claude/settings.local.json"].map(|f| target.root.join(f)));
    }
    // Each id's last word wins, as Claude Code layers its settings.
    let mut said: Vec<(String, PathBuf, bool)> = Vec::new();
    for path in settings {
        let text = file::read_optional(&path)?.unwrap_or_default();
        let doc = Json::parse(&text, &path)?;
        let plugins = doc.get("enabledPlugins").and_then(Value::as_object).into_iter().flatten();
        for (id, on) in plugins.filter(|(id, _)| id.split('@').next() == Some(PLUGIN_NAME)) {
            said.retain(|(known, ..)| known != id);
            said.push((id.clone(), path.clone(), on.as_bool() == Some(true)));
        }
    }
    let Some((id, settings, _)) = said.into_iter().find(|(.., on)| *on) else { return Ok(None) };
    let project = (!target.global).then_some(target.root.as_path());
    let install_path = install_path(&config.join("plugins/installed_plugins.json"), &id, project)?;
    Ok(Some(Enabled { id, settings, install_path }))
}

/// Where `installed_plugins.json` says the copy of `id` that serves
/// `project` lives: one installed for the user, or for that project.
fn install_path(installed: &Path, id: &str, project: Option<&Path>) -> Result<Option<PathBuf>> {
    let text = file::read_optional(installed)?.unwrap_or_default();
    let doc = Json::parse(&text, installed)?;
    let copies = doc.get("plugins").and_then(|p| p.get(id)).and_then(Value::as_array).into_iter().flatten();
    let serves = |copy: &&Value| match copy.get("projectPath").and_then(Value::as_str) {
        None => true,
        Some(path) => project.is_some_and(|p| Path::new(path) == p),
    };
    Ok(copies.filter(serves).find_map(|c| c.get("installPath")?.as_str()).map(PathBuf::from))
}
