//! `trae-mem install` and `uninstall`: the hook configuration (and MCP
//! registration) each client needs, merged into the user's own config.
//!
//! What install adds is recognisable by itself, so uninstall removes
//! exactly that: hook commands that run `<…>/trae-mem hook …`, the
//! `trae-mem` MCP server entry, and Cline scripts that carry a marker line.
//! A `trae-mem hook` written by hand (the README's JSON) counts as
//! trae-mem's too, so install replaces it rather than adding a second hook
//! that would store every event twice.
//! Each file is backed up once, before its first change, into the
//! trae-mem home (never beside it: a project's `.claude/` is committed);
//! uninstall puts those bytes back when the config means what it meant
//! before.
//!
//! A project install is personal by default: Claude Code gets its hooks in
//! `.claude/settings.local.json` and its MCP server in the user's
//! `~/.claude.json`, both uncommitted, with this binary's absolute path.
//! `--shared` writes the committed files (`.claude/settings.json`,
//! `.mcp.json`) with `trae-mem` found on `PATH`, so that they work on every
//! teammate's machine. Like Claude Code, a personal install has git ignore
//! `.claude/settings.local.json` (`git_ignore`).

mod claude_plugin;
mod cline;
mod codex_toml;
mod codex_trust;
pub mod file;
mod git_ignore;
mod json;
mod short_path;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::client::Client;
pub use claude_plugin::Enabled as ClaudePlugin;
use file::{Action, Format, rewrite};
use json::Json;

/// The key of trae-mem's MCP server entry.
pub const MCP_SERVER: &str = "trae-mem";

/// This binary's absolute path: clients run hooks without the user's PATH.
pub fn this_binary() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot find the path of this trae-mem binary")?;
    Ok(crate::project::canonical(&exe).unwrap_or(exe))
}

/// Gemini CLI's hook timeout, in milliseconds (its unit): the hook's own
/// deadline is 3 s by default.
const GEMINI_TIMEOUT_MS: u64 = 5000;

/// Where to install: a project's directory, or the user's home (`--global`).
#[derive(Debug, Clone)]
pub struct Target {
    /// The project directory, or the home directory for `--global`.
    pub root: PathBuf,
    pub global: bool,
    /// The project's committed config, for the whole team, rather than the
    /// user's own (`--shared`).
    pub shared: bool,
    /// The trae-mem binary the configs run: an absolute path, or the bare
    /// name `trae-mem` (from `PATH`) in a shared config.
    pub bin: PathBuf,
    /// The home the MCP server must open, when it is not the one it would
    /// find by itself: some clients (Codex) start MCP servers with only a
    /// few environment variables, so a `TRAE_MEM_HOME` the hooks see is
    /// lost on the way. Named with `--home` in the entry's arguments.
    pub home: Option<PathBuf>,
}

impl Target {
    /// The MCP server's arguments.
    fn mcp_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(home) = &self.home {
            args.extend(["--home".to_owned(), home.to_string_lossy().into_owned()]);
        }
        args.push("mcp".to_owned());
        args
    }

    /// Where a client keeps its user-wide config: its own variable when set
    /// (`CODEX_HOME`, `CLAUDE_CONFIG_DIR`), else `dir` under the home.
    /// (Gemini CLI's `GEMINI_CLI_HOME` replaces the home itself.)
    fn client_home(&self, variable: &str, dir: &str) -> PathBuf {
        match std::env::var_os(variable).filter(|v| !v.is_empty()) {
            Some(own) if self.global => PathBuf::from(own),
            _ => self.root.join(dir),
        }
    }
}

/// One file changed.
#[derive(Debug, Clone)]
pub struct Change {
    pub path: PathBuf,
    pub what: String,
}

/// A config that runs trae-mem, and the binary it runs.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub binary: String,
}

/// The bare command a shared config runs: whatever `trae-mem` is on `PATH`.
pub const ON_PATH: &str = "trae-mem";

/// Writes `client`'s configuration for `target`, keeping each original in
/// `backups`; returns what changed (nothing when it is already installed).
pub fn install(client: Client, target: &Target, backups: &Path) -> Result<Vec<Change>> {
    // A shared config is for teammates, whose own plugins this cannot see.
    if !target.shared
        && let Some(plugin) = claude_code_plugin(client, target)?
    {
        let what = format!(
            "enables the {} plugin, which runs trae-mem already; nothing added (hooks beside it would run it twice)",
            plugin.id
        );
        return Ok(vec![Change { path: plugin.settings, what }]);
    }
    let mut changes = apply(client, target, backups, Action::Install)?;
    // Claude Code's personal file, kept out of git as Claude Code keeps it.
    let personal = target.root.join(".claude/settings.local.json");
    if client == Client::ClaudeCode && !target.global && !target.shared && personal.exists() {
        changes.extend(git_ignore::keep_out(&target.root, &personal)?);
    }
    Ok(changes)
}

/// trae-mem's Claude Code plugin, when `client` is Claude Code and the
/// plugin is enabled where `target`'s hooks would run.
pub fn claude_code_plugin(client: Client, target: &Target) -> Result<Option<ClaudePlugin>> {
    match client {
        Client::ClaudeCode => claude_plugin::enabled(target),
        _ => Ok(None),
    }
}

/// Removes what `install` added for `client`.
pub fn uninstall(client: Client, target: &Target, backups: &Path) -> Result<Vec<Change>> {
    apply(client, target, backups, Action::Uninstall)
}

/// Project files of `client` that teammates share (committed), which a
/// personal install writes too because the client has no personal file.
pub fn shared_only_files(client: Client, target: &Target) -> Result<Vec<PathBuf>> {
    if target.global || target.shared || client == Client::ClaudeCode {
        return Ok(Vec::new());
    }
    Ok(files(client, target)?.into_iter().map(|f| f.path).collect())
}

/// The configs of `client` under `target` that run trae-mem, personal and
/// shared alike.
pub fn find(client: Client, target: &Target) -> Result<Vec<Found>> {
    let mut found = Vec::new();
    let mut add = |path: PathBuf, binaries: Vec<String>| {
        found.extend(binaries.into_iter().map(|binary| Found { path: path.clone(), binary }));
    };
    let mut all = files(client, &Target { shared: false, ..target.clone() })?;
    if !target.global {
        // Most clients have one set of project files for both.
        let shared = files(client, &Target { shared: true, ..target.clone() })?;
        all.extend(shared.into_iter().filter(|f| !all.iter().any(|p| p.path == f.path)).collect::<Vec<_>>());
    }
    for file in all {
        let text = file::read_optional(&file.path)?.unwrap_or_default();
        match file.kind {
            Kind::ClineScripts => {
                for (path, binary) in cline::scripts(&file.path)? {
                    add(path, vec![binary]);
                }
            }
            Kind::CodexMcp => add(
                file.path.clone(),
                codex_toml::binary(&codex_toml::Toml::parse(&text, &file.path)?).into_iter().collect(),
            ),
            Kind::ClaudeProjectMcp => {
                let doc = Json::parse(&text, &file.path)?;
                let project = json::project_entry(&doc, &target.root);
                add(file.path.clone(), project.map(json::binaries).unwrap_or_default());
            }
            _ => add(file.path.clone(), json::binaries(&Json::parse(&text, &file.path)?)),
        }
    }
    found.dedup_by(|a, b| a.path == b.path && a.binary == b.binary);
    Ok(found)
}

/// What one config file holds for trae-mem.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Claude Code's and Codex's `hooks`: event → [{matcher, hooks: [command]}].
    NestedHooks,
    /// Gemini CLI's: the same, with a name and a timeout in ms.
    GeminiHooks,
    /// Cursor's `hooks.json`: event → [{command}], with `version: 1`.
    CursorHooks,
    /// `mcpServers` in a JSON file.
    JsonMcp,
    /// `mcpServers` of one project in `~/.claude.json` (Claude Code's
    /// "local" scope: this user, this project).
    ClaudeProjectMcp,
    /// `[mcp_servers]` in Codex's `config.toml`.
    CodexMcp,
    /// A directory of Cline scripts.
    ClineScripts,
}

struct File {
    path: PathBuf,
    kind: Kind,
}

/// The events each hook client runs trae-mem on, in its own spelling.
fn events(client: Client) -> &'static [&'static str] {
    match client {
        Client::ClaudeCode => &[
            "SessionStart",
            "UserPromptSubmit",
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "Stop",
            "SessionEnd",
        ],
        Client::Codex => &["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
        Client::Gemini => &["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"],
        // postToolUse covers shell and MCP calls too: their own after-hooks
        // would record each call twice.
        Client::Cursor => &[
            "sessionStart",
            "beforeSubmitPrompt",
            "preToolUse",
            "postToolUse",
            "postToolUseFailure",
            "afterFileEdit",
            "afterAgentResponse",
            "sessionEnd",
        ],
        Client::Cline | Client::Trae => &[],
    }
}

/// The files `client` is configured in, under `target`.
fn files(client: Client, target: &Target) -> Result<Vec<File>> {
    let root = &target.root;
    let file = |path: PathBuf, kind| File { path, kind };
    Ok(match client {
        Client::ClaudeCode if target.shared => {
            vec![
                file(root.join(".claude/settings.json"), Kind::NestedHooks),
                file(root.join(".mcp.json"), Kind::JsonMcp),
            ]
        }
        Client::ClaudeCode => {
            let config = target.client_home("CLAUDE_CONFIG_DIR", ".claude");
            // MCP servers of the user's own live in ~/.claude.json (inside
            // CLAUDE_CONFIG_DIR when that is set): at its top for every
            // project, under `projects` for one.
            let user_json = match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
                Some(dir) => PathBuf::from(dir).join(".claude.json"),
                None if target.global => root.join(".claude.json"),
                None => user_home()?.join(".claude.json"),
            };
            match target.global {
                true => vec![file(config.join("settings.json"), Kind::NestedHooks), file(user_json, Kind::JsonMcp)],
                false => vec![
                    file(root.join(".claude/settings.local.json"), Kind::NestedHooks),
                    file(user_json, Kind::ClaudeProjectMcp),
                ],
            }
        }
        Client::Cursor => {
            vec![
                file(root.join(".cursor/hooks.json"), Kind::CursorHooks),
                file(root.join(".cursor/mcp.json"), Kind::JsonMcp),
            ]
        }
        Client::Codex => {
            let config = target.client_home("CODEX_HOME", ".codex");
            vec![file(config.join("hooks.json"), Kind::NestedHooks), file(config.join("config.toml"), Kind::CodexMcp)]
        }
        Client::Gemini => {
            // GEMINI_CLI_HOME stands in for the home directory, not for
            // its .gemini folder.
            let home = match std::env::var_os("GEMINI_CLI_HOME").filter(|v| !v.is_empty()) {
                Some(own) if target.global => PathBuf::from(own),
                _ => root.clone(),
            };
            vec![file(home.join(".gemini/settings.json"), Kind::GeminiHooks)]
        }
        Client::Cline if target.global => vec![file(root.join("Documents/Cline/Rules/Hooks"), Kind::ClineScripts)],
        Client::Cline => vec![file(root.join(".clinerules/hooks"), Kind::ClineScripts)],
        Client::Trae if target.global => {
            bail!(
                "Trae keeps its user-wide MCP servers in its own settings (Settings → MCP); install per project instead"
            )
        }
        Client::Trae => vec![file(root.join(".trae/mcp.json"), Kind::JsonMcp)],
    })
}

/// What stops Codex from running the hooks installed for `target` (see
/// `codex_trust`): hooks not trusted, changed since, or disabled, and a
/// project Codex does not trust. Empty when Codex runs them.
pub fn codex_trust_problems(target: &Target) -> Result<Vec<String>> {
    let user_config = Target { global: true, root: user_home()?, ..target.clone() }.client_home("CODEX_HOME", ".codex");
    let hooks = target.client_home("CODEX_HOME", ".codex").join("hooks.json");
    let project = (!target.global).then_some(target.root.as_path());
    codex_trust::problems(&hooks, &user_config.join("config.toml"), project)
}

/// The first file called `name` in a directory on `PATH`, as a shell finds it.
pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The user's home directory, where personal configs live: `HOME`, or on
/// Windows `USERPROFILE`.
pub fn user_home() -> Result<PathBuf> {
    std::env::home_dir()
        .filter(|h| !h.as_os_str().is_empty())
        .context("cannot find your home directory: HOME (USERPROFILE on Windows) is not set")
}

fn apply(client: Client, target: &Target, backups: &Path, action: Action) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    for file in files(client, target)? {
        let path = &file.path;
        let backup = file::backup_path(backups, path);
        let backup = backup.as_path();
        let bin = &target.bin;
        let mcp_args = target.mcp_args();
        let install = action == Action::Install;
        let change = match file.kind {
            Kind::ClineScripts if install && cfg!(windows) => bail!(
                "Cline on Windows runs each hook as a PowerShell script (<Event>.ps1), which trae-mem does not write yet; \
                 run Cline in WSL, where `trae-mem install cline` works, or use another client's hooks"
            ),
            Kind::ClineScripts if install => {
                changes.extend(cline::install(path, bin)?);
                continue;
            }
            Kind::ClineScripts => {
                changes.extend(cline::uninstall(path)?);
                continue;
            }
            Kind::CodexMcp => rewrite::<codex_toml::Toml>(path, backup, action, "MCP server trae-mem", |doc| {
                if install {
                    codex_toml::set_mcp_server(doc, bin, &mcp_args);
                } else {
                    codex_toml::remove_mcp_server(doc);
                }
            })?,
            Kind::JsonMcp => rewrite::<Json>(path, backup, action, "MCP server trae-mem", |doc| {
                if install {
                    json::set_mcp_server(doc, bin, &mcp_args);
                } else {
                    json::remove_mcp_server(doc);
                }
            })?,
            Kind::ClaudeProjectMcp => {
                let what = format!("MCP server trae-mem for {}", target.root.display());
                rewrite::<Json>(path, backup, action, &what, |doc| {
                    json::edit_project_entry(doc, &target.root, |project| match install {
                        true => json::set_mcp_server(project, bin, &mcp_args),
                        false => json::remove_mcp_server(project),
                    })
                })?
            }
            Kind::NestedHooks if install && let Some(team) = team_hooks(client, target)? => {
                changes.push(Change {
                    path: team,
                    what: "already runs trae-mem for the team; no personal hooks added (they would run it twice)"
                        .to_owned(),
                });
                continue;
            }
            kind => {
                let events = events(client);
                let mut what = format!("hooks on {}", events.join(", "));
                if let Kind::GeminiHooks = kind {
                    what.push_str(", and MCP server trae-mem");
                }
                rewrite::<Json>(path, backup, action, &what, |doc| {
                    if install {
                        let entries: Vec<(&str, Value)> =
                            events.iter().map(|e| (*e, hook_entry(kind, client, e, bin))).collect();
                        json::set_hooks(doc, &entries);
                        if let Kind::CursorHooks = kind {
                            doc.entry("version").or_insert(json!(1));
                        }
                        if let Kind::GeminiHooks = kind {
                            json::set_mcp_server(doc, bin, &mcp_args);
                        }
                    } else {
                        json::remove_hooks(doc);
                        if let Kind::GeminiHooks = kind {
                            json::remove_mcp_server(doc);
                        }
                    }
                })?
            }
        };
        changes.extend(change);
    }
    Ok(changes)
}

/// The project's committed Claude Code settings, when they already run
/// `trae-mem hook` (a `--shared` install, or hooks written by hand) and a
/// personal install would run it a second time.
fn team_hooks(client: Client, target: &Target) -> Result<Option<PathBuf>> {
    if client != Client::ClaudeCode || target.global || target.shared {
        return Ok(None);
    }
    let settings = target.root.join(".claude/settings.json");
    let text = file::read_optional(&settings)?.unwrap_or_default();
    let runs = !json::binaries(&Json::parse(&text, &settings)?).is_empty();
    Ok(runs.then_some(settings))
}

/// One event's hook entry in `kind`'s shape.
fn hook_entry(kind: Kind, client: Client, event: &str, bin: &Path) -> Value {
    let command = format!("{} hook --client {client} --event {event}", shell_quote(&short_path::for_commands(bin)));
    match kind {
        Kind::CursorHooks => json!({ "command": command }),
        Kind::GeminiHooks => json!({
            "hooks": [{ "name": "trae-mem", "type": "command", "command": command, "timeout": GEMINI_TIMEOUT_MS }]
        }),
        _ => json!({ "hooks": [{ "type": "command", "command": command }] }),
    }
}

/// A path as one shell word: quoted when it holds anything a shell reads.
///
/// On Windows, clients run hooks with Git Bash (Claude Code, where it is
/// installed), cmd or PowerShell: the path is written with forward slashes,
/// which all of them and Windows itself take, leaving no backslash for Bash
/// to eat, and put in double quotes when it must be quoted (Bash and cmd
/// read that as one word; PowerShell does not, hence `short_path`).
pub fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    #[cfg(windows)]
    let text: std::borrow::Cow<'_, str> = text.replace('\\', "/").into();
    // `~` is literal but where it starts a word (Windows' short names hold one).
    let plain = |(i, c): (usize, char)| c.is_ascii_alphanumeric() || "/._-+:@".contains(c) || (c == '~' && i > 0);
    if text.chars().enumerate().all(plain) {
        text.into_owned()
    } else if cfg!(windows) {
        format!("\"{text}\"")
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The binary of a command that runs `trae-mem hook`: the one install
/// writes (`<bin> hook --client …`), or one written by hand, by any path
/// (`trae-mem hook --event SessionStart`, as the README shows). None for
/// any other command.
fn command_binary(command: &str) -> Option<String> {
    let (bin, rest) = match (command.strip_prefix('\''), command.strip_prefix('"')) {
        (Some(quoted), _) => {
            let end = quoted.find("' ")?;
            (quoted[..end].replace(r"'\''", "'"), &quoted[end + 1..])
        }
        (_, Some(quoted)) => {
            let end = quoted.find("\" ")?;
            (quoted[..end].to_owned(), &quoted[end + 1..])
        }
        _ => {
            let (bin, _) = command.split_once(' ')?;
            (bin.to_owned(), &command[bin.len()..])
        }
    };
    let arguments = rest.strip_prefix(' ')?;
    let runs_hook = arguments == "hook" || arguments.starts_with("hook ");
    // `trae-mem`, or on Windows `trae-mem.exe` (any case).
    let name = Path::new(&bin).file_name()?.to_str()?.to_ascii_lowercase();
    (runs_hook && (name == "trae-mem" || name == "trae-mem.exe")).then_some(bin)
}
