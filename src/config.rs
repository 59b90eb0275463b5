//! Settings: defaults, then the global `trae-mem.toml` in the home, then the
//! project's `trae-mem.toml` (found from the working directory upward), then
//! `TRAE_MEM_*` environment variables. Each field's doc names its default,
//! and `Default` is the one place defaults live.
//!
//! Merging: tables merge key by key, and a value in the project file
//! replaces the same key's value in the global file.

use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use crate::store::IndexMode;

/// The config file's name, in the home and in projects.
pub const CONFIG_FILE: &str = "trae-mem.toml";

/// The documented example config, printed by `trae-mem config default`.
pub const DEFAULTS: &str = include_str!("../trae-mem.defaults.toml");

/// Every setting, resolved.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
#[derive(Default)]
pub struct Config {
    /// Where the database, spool and logs live. Default: `~/.trae-mem`.
    /// `TRAE_MEM_HOME` or `--home` override it; a relative path is relative
    /// to the config file that names it. Only read from a project's file.
    pub home: Option<PathBuf>,
    pub capture: Capture,
    pub privacy: Privacy,
    pub context: ContextSettings,
    pub hook: Hook,
    pub search: Search,
    pub summarize: Summarize,
    pub retention: Retention,
    pub mcp: Mcp,
    pub sync: Sync,
    /// WebAssembly plugins. Default: none.
    pub plugins: Vec<PluginDecl>,
}

/// Which summarizer runs at SessionEnd, and what a language model may cost.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Summarize {
    /// "builtin", or the name of a plugin whose role is "summarizer".
    /// Default: "builtin".
    pub summarizer: Summarizer,
    /// The most tokens a summarizer plugin granted HTTP endpoints (a
    /// language model) may spend in a day, UTC, as its server counts them;
    /// past it, sessions keep their built-in summaries. Default: 200000.
    pub max_tokens_per_day: u64,
    /// The most characters of a session sent to such a plugin: prompts,
    /// answers, errors and the files touched come first, tool output last.
    /// Default: 24000.
    pub max_input_chars: usize,
    /// How long one session's summary by such a plugin may take, in
    /// milliseconds (its `limits.timeout_ms` bounds calls on a hook's path).
    /// Default: 60000.
    pub timeout_ms: u64,
}

impl Default for Summarize {
    fn default() -> Self {
        Self {
            summarizer: Summarizer::Builtin,
            max_tokens_per_day: 200_000,
            max_input_chars: 24_000,
            timeout_ms: 60_000,
        }
    }
}

/// Who writes the summaries: written in the config (and in the spool) as
/// its name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(from = "String", into = "String")]
pub enum Summarizer {
    /// The built-in summarizer (`crate::summarize::builtin`).
    #[default]
    Builtin,
    /// The plugin of this name, whose role is "summarizer".
    Plugin(String),
}

impl Summarizer {
    /// The built-in summarizer's name.
    const BUILTIN: &str = "builtin";

    /// The name it is written under: "builtin", or the plugin's.
    pub fn name(&self) -> &str {
        match self {
            Summarizer::Builtin => Self::BUILTIN,
            Summarizer::Plugin(name) => name,
        }
    }
}

impl From<String> for Summarizer {
    fn from(name: String) -> Self {
        match name == Self::BUILTIN {
            true => Summarizer::Builtin,
            false => Summarizer::Plugin(name),
        }
    }
}

impl From<Summarizer> for String {
    fn from(summarizer: Summarizer) -> Self {
        summarizer.name().to_owned()
    }
}

impl std::fmt::Display for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A summarizer equals the name it is written under.
impl PartialEq<&str> for Summarizer {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

/// Where search's embedding model comes from. The store records it, as
/// its name, beside the vectors it made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSource {
    /// The model compiled into trae-mem.
    Builtin,
    /// A model file, by its absolute path.
    File(PathBuf),
}

impl ModelSource {
    /// The name it is recorded under: "builtin", or the file's path.
    pub fn name(&self) -> String {
        match self {
            ModelSource::Builtin => Summarizer::BUILTIN.to_owned(),
            ModelSource::File(path) => path.display().to_string(),
        }
    }
}

impl From<&str> for ModelSource {
    fn from(name: &str) -> Self {
        match name == Summarizer::BUILTIN {
            true => ModelSource::Builtin,
            false => ModelSource::File(PathBuf::from(name)),
        }
    }
}

/// What a plugin does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Turns events (ModelResponse, FileChanged, ...) into observations.
    EventHandler,
    /// Shrinks large tool outputs before they are stored.
    Sampler,
    /// Replaces the built-in summarizer.
    Summarizer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::EventHandler => "event-handler",
            Role::Sampler => "sampler",
            Role::Summarizer => "summarizer",
        }
    }
}

/// One `[[plugins]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PluginDecl {
    /// A unique name, used in logs and by `[summarize] summarizer`.
    pub name: String,
    /// The component's `.wasm` file, relative to the config file that declares it.
    pub path: PathBuf,
    pub role: Role,
    /// For event handlers: the events handled; "*" is all of them.
    #[serde(default)]
    pub events: Vec<String>,
    /// For samplers: the tools whose output is sampled; "*" is all of them.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The file's expected SHA-256, in hex. A mismatch refuses the plugin.
    pub sha256: Option<String>,
    #[serde(default)]
    pub limits: Limits,
    #[serde(default)]
    pub grants: Grants,
    /// Free settings, handed to the plugin as JSON by `host.config()`.
    #[serde(default)]
    pub config: toml::Table,
}

/// What one call of a plugin may use.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Wall-clock time per call, in milliseconds. Default: 500.
    pub timeout_ms: u64,
    /// Linear memory, in MiB. Default: 64.
    pub memory_mb: u64,
    /// The most bytes a call may return (all texts together). Default: 1048576.
    pub max_output_bytes: u64,
    /// The most observations one event handler call may return. Default: 100.
    pub max_observations: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self { timeout_ms: 500, memory_mb: 64, max_output_bytes: 1 << 20, max_observations: 100 }
    }
}

/// What a plugin may reach beyond its own memory. Default: nothing.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Grants {
    /// Host directories the plugin may read, at the same path inside it.
    pub read_only_paths: Vec<PathBuf>,
    /// HTTP endpoints a summarizer may call. Default: none.
    pub http: Vec<HttpGrant>,
}

/// One HTTP endpoint a plugin may call: requests whose scheme, host and
/// port are the URL's, and whose path starts with its path.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HttpGrant {
    /// `https://api.anthropic.com/v1/messages`, `http://localhost:11434/v1/`.
    pub url: String,
    /// A header the host adds to each request, with the value of `env`: so
    /// the plugin never sees the key. Only from your own `trae-mem.toml` in
    /// the home, never a project's.
    pub header: Option<String>,
    /// The environment variable that holds the header's value.
    pub env: Option<String>,
    /// A prefix for the value, such as "Bearer " for `authorization`.
    #[serde(default)]
    pub prefix: String,
}

impl PluginDecl {
    /// Whether the plugin may reach the network: then it never runs on a
    /// hook's path.
    pub fn uses_network(&self) -> bool {
        !self.grants.http.is_empty()
    }
}

impl PluginDecl {
    /// Whether this plugin handles `event`.
    pub fn handles(&self, event: &str) -> bool {
        self.role == Role::EventHandler && self.events.iter().any(|e| e == "*" || e == event)
    }

    /// Whether this plugin samples `tool`'s output.
    pub fn samples(&self, tool: &str) -> bool {
        self.role == Role::Sampler && self.tools.iter().any(|t| t == "*" || t == tool)
    }
}

/// What is recorded, and how much of it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Capture {
    /// Characters kept of a prompt. Default: 8000.
    pub prompt_chars: usize,
    /// Characters kept of a PreToolUse note. Default: 1800.
    pub pre_tool_chars: usize,
    /// Characters kept of a tool's input. Default: 2000.
    pub tool_input_chars: usize,
    /// Characters kept of a tool's response or error. Default: 4000.
    pub tool_response_chars: usize,
    /// Characters kept of the model's final answer. Default: 8000.
    pub response_chars: usize,
    /// Events to record; `"*"` is all. Default: `["*"]`.
    pub events: Vec<String>,
}

/// What never reaches the store.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Privacy {
    /// Redact secrets (keys, tokens, passwords) before storing. Default: true.
    pub redact_secrets: bool,
    /// More regular expressions whose matches are redacted. Default: none.
    pub secret_patterns: Vec<String>,
}

/// The memory given back to the agent at session start.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ContextSettings {
    /// Inject context at SessionStart. Default: true.
    pub inject: bool,
    /// The most characters injected. Default: 4000.
    pub budget_chars: usize,
    /// The most past sessions summarized. Default: 5.
    pub sessions: usize,
    /// With each prompt, add the project's earlier memories relevant to it
    /// (for clients that take context then). Default: true.
    pub on_prompt: bool,
    /// The most memories added to a prompt. Default: 3.
    pub prompt_hits: usize,
    /// The most characters added to a prompt. Default: 1500.
    pub prompt_budget_chars: usize,
}

/// How a hook process behaves.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hook {
    /// A hook finishes within this many milliseconds, spooling what it could
    /// not store. Default: 3000. `TRAE_MEM_DEADLINE_MS` overrides it.
    pub deadline_ms: u64,
    /// How long a hook waits for a database that another process is
    /// writing before it spools the event instead. Default: 250.
    pub lock_wait_ms: u64,
}

/// How search works.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Search {
    /// The full-text index: "auto" (keep the database's; trigram for a new
    /// one), "trigram", "unicode61" or "like". Default: "auto".
    /// `TRAE_MEM_INDEX` overrides it. `None` is "auto".
    #[serde(with = "index_choice")]
    pub index: Option<IndexMode>,
    /// The embedding model search finds meaning with: a folder in Hugging
    /// Face's layout (`config.json`, `model.safetensors`, `tokenizer.json`
    /// of an XLM-RoBERTa encoder, such as multilingual-e5-base), or a model
    /// file in the format of `models/`; relative to the config file that
    /// names it. Default: the model compiled into trae-mem. Changing it
    /// makes `trae-mem embed` compute every vector again.
    pub model: Option<PathBuf>,
}

/// `[search] index` as written: "auto" (or nothing) for `None`, else the
/// mode's name, in any case.
mod index_choice {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::store::IndexMode;

    const AUTO: &str = "auto";

    /// Reads a choice; the error names the modes there are.
    pub fn parse(text: &str) -> anyhow::Result<Option<IndexMode>> {
        match text.trim().eq_ignore_ascii_case(AUTO) || text.trim().is_empty() {
            true => Ok(None),
            false => text.parse().map(Some),
        }
    }

    pub fn serialize<S: Serializer>(index: &Option<IndexMode>, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(index.map_or(AUTO, IndexMode::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<IndexMode>, D::Error> {
        parse(&String::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// How much the store keeps. Off by default: nothing is deleted unless asked.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Retention {
    /// Observations older than this many days are deleted. Default: none.
    pub max_age_days: Option<u32>,
    /// A session whose observations all age out keeps its summaries, so
    /// later sessions are still told what happened. Default: true.
    pub keep_summaries: bool,
    /// Past this many megabytes of data, the oldest observations are
    /// deleted first. Default: none.
    pub max_db_mb: Option<u64>,
}

impl Retention {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_age_days.is_some() || self.max_db_mb.is_some()
    }
}

impl Default for Retention {
    fn default() -> Self {
        Self { max_age_days: None, keep_summaries: true, max_db_mb: None }
    }
}

/// What the MCP server lets an agent do.
#[derive(Debug, Clone, PartialEq, Deserialize, Default, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mcp {
    /// Offer `trae_mem_forget`, which deletes observations or a session by
    /// id (never by query). Default: false.
    pub allow_forget: bool,
}

/// Team memory through PostgreSQL (`trae-mem sync`).
#[derive(Debug, Clone, PartialEq, Deserialize, Default, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Sync {
    /// The server: a PostgreSQL connection string. `TRAE_MEM_SYNC_URL`
    /// overrides it, so that a password stays out of committed files.
    pub url: Option<String>,
    /// Whether this project's memory is shared. Only a project's own file
    /// can say so: a team opts a repository in by committing it.
    pub share: bool,
    /// Push records unsealed, readable by whoever can read the server.
    pub plaintext: bool,
    /// Who pulled records are labelled with. Default: `$USER@hostname`.
    pub author: Option<String>,
}

impl Default for Capture {
    fn default() -> Self {
        Self {
            prompt_chars: 8000,
            pre_tool_chars: 1800,
            tool_input_chars: 2000,
            tool_response_chars: 4000,
            response_chars: 8000,
            events: vec!["*".to_owned()],
        }
    }
}

impl Default for Privacy {
    fn default() -> Self {
        Self { redact_secrets: true, secret_patterns: Vec::new() }
    }
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            inject: true,
            budget_chars: 4000,
            sessions: 5,
            on_prompt: true,
            prompt_hits: 3,
            prompt_budget_chars: 1500,
        }
    }
}

impl Default for Hook {
    fn default() -> Self {
        Self { deadline_ms: 3000, lock_wait_ms: 250 }
    }
}

impl Capture {
    /// Whether `event` is to be recorded.
    pub fn records(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == "*" || e.eq_ignore_ascii_case(event))
    }
}

/// The variables that override a setting of the files, and the settings
/// they override: (table, key, variable).
const ENV_OVERRIDES: [(&str, &str, &str); 3] =
    [("hook", "deadline_ms", DEADLINE_ENV), ("search", "index", INDEX_ENV), ("sync", "url", SYNC_URL_ENV)];
const SYNC_URL_ENV: &str = "TRAE_MEM_SYNC_URL";
const DEADLINE_ENV: &str = "TRAE_MEM_DEADLINE_MS";
const INDEX_ENV: &str = "TRAE_MEM_INDEX";

/// The variables of `ENV_OVERRIDES` this process was given: read from the
/// environment once, by `Overrides::from_env`, and applied by `resolve`.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// Each variable that is set, with its value (`None` when it is not
    /// Unicode, which no setting can use).
    set: Vec<(&'static str, Option<String>)>,
}

impl Overrides {
    /// The variables as this process finds them.
    pub fn from_env() -> Self {
        let set = ENV_OVERRIDES
            .iter()
            .filter_map(|&(_, _, variable)| {
                std::env::var_os(variable).map(|value| (variable, value.into_string().ok()))
            })
            .collect();
        Self { set }
    }

    /// The variable that overrides `[table] key`, when it is set.
    pub fn source(&self, table: &str, key: &str) -> Option<&'static str> {
        let (_, _, variable) = ENV_OVERRIDES.iter().find(|(t, k, _)| *t == table && *k == key)?;
        self.set.iter().any(|(set, _)| set == variable).then_some(*variable)
    }

    /// The value of `variable`, when it is set and Unicode.
    fn value(&self, variable: &str) -> Option<&str> {
        self.set.iter().find(|(set, _)| *set == variable).and_then(|(_, value)| value.as_deref())
    }

    /// `config` with these overrides applied.
    fn apply(&self, mut config: Config) -> Result<Config> {
        if let Some(ms) = self.value(DEADLINE_ENV) {
            config.hook.deadline_ms =
                ms.trim().parse().with_context(|| format!("{DEADLINE_ENV}={ms:?} is not a number of milliseconds"))?;
        }
        if let Some(index) = self.value(INDEX_ENV) {
            config.search.index =
                index_choice::parse(index).with_context(|| format!("bad [search] index or {INDEX_ENV}"))?;
        }
        if let Some(url) = self.value(SYNC_URL_ENV).filter(|url| !url.trim().is_empty()) {
            config.sync.url = Some(url.to_owned());
        }
        Ok(config)
    }
}

/// The settings that decide what an event becomes: resolved once, when the
/// event is accepted, and kept with it should it be spooled, so that a later
/// replay in another project or process stores it exactly as it would have
/// been stored now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngestSettings {
    pub capture: Capture,
    pub summarize: Summarize,
    pub plugins: Vec<PluginDecl>,
}

impl Config {
    /// This config's settings for ingest.
    pub fn ingest_settings(&self) -> IngestSettings {
        IngestSettings {
            capture: self.capture.clone(),
            summarize: self.summarize.clone(),
            plugins: self.plugins.clone(),
        }
    }
}

/// The resolved config and the home it belongs to.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub home: PathBuf,
    /// Where the home was decided.
    pub home_from: HomeFrom,
    /// The files read, global first.
    pub files: Vec<PathBuf>,
    /// The environment's override variables it was resolved under.
    pub overrides: Overrides,
}

/// Where the home directory was decided, in the order `resolve_home`
/// decides it.
#[derive(Debug, Clone, PartialEq)]
pub enum HomeFrom {
    /// `--home`.
    Flag,
    /// `TRAE_MEM_HOME`.
    Env,
    /// The `home` key of this project config file.
    Project(PathBuf),
    /// `~/.trae-mem`.
    Default,
}

impl HomeFrom {
    /// Whether the user chose it for this run (`--home` or `TRAE_MEM_HOME`)
    /// rather than it being found: a process started without the user's
    /// environment would not find it.
    pub fn chosen(&self) -> bool {
        matches!(self, HomeFrom::Flag | HomeFrom::Env)
    }
}

impl std::fmt::Display for HomeFrom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HomeFrom::Flag => f.write_str("--home"),
            HomeFrom::Env => f.write_str("TRAE_MEM_HOME"),
            HomeFrom::Project(file) => write!(f, "project {}", file.display()),
            HomeFrom::Default => f.write_str("default"),
        }
    }
}

/// The config files that apply to work in a directory, each with its
/// table, and the home they resolve.
#[derive(Debug, Clone)]
pub struct Layers {
    pub home: PathBuf,
    pub home_from: HomeFrom,
    /// `trae-mem.toml` in the home, when it exists.
    pub global: Option<(PathBuf, toml::Table)>,
    /// The project's `trae-mem.toml`, found upward from the directory.
    pub project: Option<(PathBuf, toml::Table)>,
}

/// Finds and reads the config files for work in `project_dir`.
pub fn layers(project_dir: &Path, home_override: Option<&Path>) -> Result<Layers> {
    let project_file = find_upward(project_dir);
    let project_table = project_file.as_deref().map(read_table).transpose()?;
    let project_home = match (&project_table, &project_file) {
        (Some(table), Some(file)) => home_from_table(table, file)?.map(|home| (home, file.clone())),
        _ => None,
    };
    let (home, home_from) = resolve_home(home_override, project_home)?;
    let global_file = home.join(CONFIG_FILE);
    let global = match global_file.is_file() {
        true => Some((global_file.clone(), read_table(&global_file)?)),
        false => None,
    };
    let project = project_file.zip(project_table).filter(|(file, _)| *file != global_file);
    if let Some((file, table)) = &project {
        check_no_keys(table, file)?;
    }
    Ok(Layers { home, home_from, global, project })
}

/// Loads settings for work in `project_dir`. `home_override` is `--home`.
pub fn load(project_dir: &Path, home_override: Option<&Path>) -> Result<Loaded> {
    load_layers(layers(project_dir, home_override)?)
}

/// The settings of config files already read, resolved under this
/// process's environment (see `resolve`).
pub fn load_layers(layers: Layers) -> Result<Loaded> {
    resolve(layers, Overrides::from_env())
}

/// The one place settings are resolved: the files' layers (what they say)
/// merged and checked, then the environment's `overrides` applied.
pub fn resolve(layers: Layers, overrides: Overrides) -> Result<Loaded> {
    let Layers { home, home_from, global, project } = layers;
    let project_shares = project.as_ref().is_some_and(|(_, table)| shares(table));
    let mut files = Vec::new();
    let mut merged = toml::Table::new();
    for (file, table) in global.into_iter().chain(project) {
        merge(&mut merged, table);
        files.push(file);
    }
    let config: Config = parse(merged, files.last().map(PathBuf::as_path))?;
    check(&config).context("the merged config files")?;
    if let Summarizer::Plugin(name) = &config.summarize.summarizer
        && !config.plugins.iter().any(|p| &p.name == name && p.role == Role::Summarizer)
    {
        bail!(
            "[summarize] summarizer = {name:?}: use {:?} or the name of a plugin whose role is \"summarizer\"",
            Summarizer::BUILTIN
        );
    }
    let mut config = overrides.apply(config)?;
    config.sync.share = project_shares;
    Ok(Loaded { config, home, home_from, files, overrides })
}

/// Whether a config file's table says `[sync] share = true`.
fn shares(table: &toml::Table) -> bool {
    let share = table.get("sync").and_then(|sync| sync.get("share"));
    share.and_then(toml::Value::as_bool).unwrap_or(false)
}

/// Loads the config as `load` does; when it cannot be read, the defaults
/// (in the same home) and a one-line warning that says so. For the hook,
/// which must store its event whatever the config says, and for the
/// commands needed most when something is wrong (`spool`, `doctor`).
pub fn load_or_defaults(cwd: &Path, home_override: Option<&Path>) -> Result<(Loaded, Option<String>)> {
    match load(cwd, home_override) {
        Ok(loaded) => Ok((loaded, None)),
        Err(err) => {
            let warning = format!("{} (default settings used; `trae-mem doctor` shows it whole)", one_line(&err));
            Ok((defaults(home_override)?, Some(warning)))
        }
    }
}

/// An error on one line: TOML's errors draw the offending line under a
/// `|` margin, which a hook's one line of stderr has no room for.
fn one_line(err: &anyhow::Error) -> String {
    let text = format!("{err:#}");
    let drawn = |line: &str| {
        let line = line.trim_start();
        line.starts_with('|') || line.split_once(" |").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
    };
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !drawn(l)).collect::<Vec<_>>().join(" ")
}

/// Default settings in the home that `--home`, `TRAE_MEM_HOME` or the
/// default name: what a hook falls back on when the config cannot be read,
/// so that the event is still stored.
pub fn defaults(home_override: Option<&Path>) -> Result<Loaded> {
    let (home, home_from) = resolve_home(home_override, None)?;
    Ok(Loaded { config: Config::default(), home, home_from, files: Vec::new(), overrides: Overrides::default() })
}

/// The one place the home directory is decided: `--home` or `TRAE_MEM_HOME`,
/// else the project config's `home` (with the file that sets it), else
/// `~/.trae-mem`.
fn resolve_home(home_override: Option<&Path>, from_config: Option<(PathBuf, PathBuf)>) -> Result<(PathBuf, HomeFrom)> {
    if let Some(home) = home_override {
        return Ok((home.to_owned(), HomeFrom::Flag));
    }
    if let Some(home) = std::env::var_os("TRAE_MEM_HOME").filter(|h| !h.is_empty()) {
        return Ok((PathBuf::from(home), HomeFrom::Env));
    }
    if let Some((home, file)) = from_config {
        return Ok((home, HomeFrom::Project(file)));
    }
    match std::env::home_dir() {
        Some(user_home) => Ok((user_home.join(".trae-mem"), HomeFrom::Default)),
        None => bail!("cannot find your home directory; set TRAE_MEM_HOME"),
    }
}

fn find_upward(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|dir| dir.join(CONFIG_FILE)).find(|file| file.is_file())
}

/// Reads one config file, checking it on its own first so that an error
/// names this file, the line and the key, and lists what is allowed: every
/// such error of the file at once (see `read_all`).
/// Plugin and model paths become absolute, relative to this file.
fn read_table(file: &Path) -> Result<toml::Table> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let config = read_all(&text).map_err(|problems| match problems.as_slice() {
        [one] => anyhow::anyhow!("{}: {one}", file.display()),
        all => {
            let each: Vec<String> = all.iter().map(|problem| problem.to_string()).collect();
            anyhow::anyhow!("{}: {} problems:\n{}", file.display(), all.len(), each.join("\n"))
        }
    })?;
    check(&config).map_err(|err| anyhow::anyhow!("{}: {err}", file.display()))?;
    let mut table = text.parse::<toml::Table>()?;
    let base = file.parent().unwrap_or(Path::new("."));
    if let Some(toml::Value::Table(search)) = table.get_mut("search")
        && let Some(toml::Value::String(model)) = search.get("model")
    {
        let absolute = base.join(model).to_string_lossy().into_owned();
        search.insert("model".to_owned(), toml::Value::String(absolute));
    }
    if let Some(toml::Value::Array(plugins)) = table.get_mut("plugins") {
        for plugin in plugins.iter_mut().filter_map(toml::Value::as_table_mut) {
            if let Some(toml::Value::String(path)) = plugin.get("path") {
                let absolute = base.join(path).to_string_lossy().into_owned();
                plugin.insert("path".to_owned(), toml::Value::String(absolute));
            }
        }
    }
    Ok(table)
}

/// A config file's text as settings, or every unknown key and value of the
/// wrong type in it, in the file's order, each showing its line: serde stops
/// at the first, so the entry at fault is set aside and the rest read
/// again, until they read.
fn read_all(text: &str) -> Result<Config, Vec<toml::de::Error>> {
    let root = DeTable::parse(text).map_err(|err| vec![err])?;
    let mut root = Spanned::new(root.span(), DeValue::Table(root.into_inner()));
    let mut problems: Vec<toml::de::Error> = Vec::new();
    // The tables an entry was set aside from, by their spans: a field one of
    // them misses now is that entry's fault, and said already.
    let mut set_aside_from = Vec::new();
    loop {
        let DeValue::Table(table) = root.get_ref().clone() else { unreachable!("the root is a table") };
        let mut err = match Config::deserialize(toml::de::Deserializer::from(Spanned::new(root.span(), table))) {
            Ok(config) if problems.is_empty() => return Ok(config),
            Ok(_) => break,
            Err(err) => err,
        };
        let at = err.span().and_then(|span| blame(&root, &span));
        err.set_input(Some(text));
        let Some(Blame { path, span, parent }) = at else {
            problems.push(err);
            break;
        };
        if !set_aside_from.contains(&span) {
            problems.push(err);
        }
        set_aside_from.push(parent);
        if !set_aside(root.get_mut(), &path) {
            break;
        }
    }
    problems.sort_by_key(|err| err.span().map(|span| span.start));
    Err(problems)
}

/// A step from a table to one of its entries, or from an array to an item.
#[derive(Clone)]
enum Step {
    Key(String),
    Item(usize),
}

/// The entry an error's span points into, the innermost one.
struct Blame {
    path: Vec<Step>,
    /// The entry's value's span.
    span: Range<usize>,
    /// The span of the table or array that holds it.
    parent: Range<usize>,
}

/// The innermost entry under `value` whose key or value holds `error`.
fn blame(value: &Spanned<DeValue<'_>>, error: &Range<usize>) -> Option<Blame> {
    fn walk(
        value: &Spanned<DeValue<'_>>,
        error: &Range<usize>,
        path: &mut Vec<Step>,
        best: &mut Option<(usize, Blame)>,
    ) {
        let mut visit = |step: Step, key: Option<Range<usize>>, item: &Spanned<DeValue<'_>>| {
            path.push(step);
            for span in key.into_iter().chain([item.span()]) {
                // On a tie the inner one wins: it is visited later.
                let holds = span.start <= error.start && error.end <= span.end;
                if holds && best.as_ref().is_none_or(|(len, _)| span.len() <= *len) {
                    let blame = Blame { path: path.clone(), span: item.span(), parent: value.span() };
                    *best = Some((span.len(), blame));
                }
            }
            walk(item, error, path, best);
            path.pop();
        };
        match value.get_ref() {
            DeValue::Table(table) => {
                table.iter().for_each(|(key, item)| visit(Step::Key(key.get_ref().to_string()), Some(key.span()), item))
            }
            DeValue::Array(items) => items.iter().enumerate().for_each(|(i, item)| visit(Step::Item(i), None, item)),
            _ => {}
        }
    }
    let mut best = None;
    walk(value, error, &mut Vec::new(), &mut best);
    best.map(|(_, blame)| blame)
}

/// Removes the entry at `path`; false when there is none.
fn set_aside(value: &mut DeValue<'_>, path: &[Step]) -> bool {
    match (value, path) {
        (DeValue::Table(table), [Step::Key(key)]) => table.remove(key.as_str()).is_some(),
        (DeValue::Array(items), [Step::Item(i)]) if *i < items.len() => {
            let kept = std::mem::replace(items, DeArray::new()).into_iter().enumerate();
            *items = kept.filter(|(j, _)| j != i).map(|(_, item)| item).collect();
            true
        }
        (DeValue::Table(table), [Step::Key(key), rest @ ..]) => {
            table.get_mut(key.as_str()).is_some_and(|item| set_aside(item.get_mut(), rest))
        }
        (DeValue::Array(items), [Step::Item(i), rest @ ..]) => {
            items.get_mut(*i).is_some_and(|item| set_aside(item.get_mut(), rest))
        }
        _ => false,
    }
}

/// Checks what serde cannot: names, roles and values that must agree.
fn check(config: &Config) -> Result<()> {
    let mut names = std::collections::HashSet::new();
    for plugin in &config.plugins {
        if !names.insert(plugin.name.as_str()) {
            bail!("two [[plugins]] are named {:?}; names must be unique", plugin.name);
        }
        match plugin.role {
            Role::EventHandler if plugin.events.is_empty() => {
                bail!("plugin {:?}: an event-handler needs `events`, such as [\"FileChanged\"] or [\"*\"]", plugin.name)
            }
            Role::Sampler if plugin.tools.is_empty() => {
                bail!("plugin {:?}: a sampler needs `tools`, such as [\"Bash\"] or [\"*\"]", plugin.name)
            }
            _ => {}
        }
        if let Some(pin) = &plugin.sha256
            && (pin.len() != 64 || !pin.chars().all(|c| c.is_ascii_hexdigit()))
        {
            bail!("plugin {:?}: `sha256` must be 64 hex digits, not {pin:?}", plugin.name);
        }
        for grant in &plugin.grants.http {
            check_http_grant(grant)
                .with_context(|| format!("plugin {:?}: grants.http {:?}", plugin.name, grant.url))?;
        }
        if plugin.uses_network() && plugin.role != Role::Summarizer {
            bail!("plugin {:?}: only a summarizer may be granted `http`: it runs off the hooks' path", plugin.name);
        }
        let limits = &plugin.limits;
        if limits.timeout_ms == 0 || limits.memory_mb == 0 || limits.max_observations == 0 {
            bail!(
                "plugin {:?}: limits.timeout_ms, limits.memory_mb and limits.max_observations must be above 0",
                plugin.name
            );
        }
    }
    Ok(())
}

fn check_http_grant(grant: &HttpGrant) -> Result<()> {
    let uri: http::Uri = grant.url.parse().context("not a URL")?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.host().is_none() {
        bail!("the URL must start with http:// or https:// and name a host");
    }
    match (&grant.header, &grant.env) {
        (Some(header), Some(_)) => {
            http::HeaderName::from_bytes(header.as_bytes()).with_context(|| format!("{header:?} is no header name"))?;
        }
        (None, None) => {}
        _ => bail!("`header` and `env` go together: the host sets the header to the variable's value"),
    }
    Ok(())
}

/// A project's file may grant endpoints, but never a key from your
/// environment: a repository you cloned could otherwise send your key
/// anywhere it likes.
fn check_no_keys(table: &toml::Table, file: &Path) -> Result<()> {
    let plugins = table.get("plugins").and_then(toml::Value::as_array).into_iter().flatten();
    for plugin in plugins {
        let grants = plugin.get("grants").and_then(|g| g.get("http")).and_then(toml::Value::as_array);
        if grants.into_iter().flatten().any(|grant| grant.get("env").is_some()) {
            let name = plugin.get("name").and_then(toml::Value::as_str).unwrap_or("?");
            bail!(
                "{}: plugin {name:?} grants a key from your environment (`env`), which only your own \
                 trae-mem.toml in the trae-mem home may do; declare the plugin there",
                file.display()
            );
        }
    }
    Ok(())
}

fn home_from_table(table: &toml::Table, file: &Path) -> Result<Option<PathBuf>> {
    match table.get("home") {
        None => Ok(None),
        Some(toml::Value::String(home)) => {
            let base = file.parent().unwrap_or(Path::new("."));
            Ok(Some(base.join(home)))
        }
        Some(other) => bail!("{}: `home` must be a string path, not {}", file.display(), other.type_str()),
    }
}

/// Deep-merges `top` over `base`: tables merge, other values replace, and
/// `[[plugins]]` from both are kept, a plugin in `top` replacing one of the
/// same name in `base`.
fn merge(base: &mut toml::Table, top: toml::Table) {
    for (key, value) in top {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(base_table)), toml::Value::Table(top_table)) => merge(base_table, top_table),
            (Some(toml::Value::Array(base_plugins)), toml::Value::Array(top_plugins)) if key == "plugins" => {
                let name = |v: &toml::Value| v.get("name").and_then(toml::Value::as_str).map(str::to_owned);
                let replaced: Vec<Option<String>> = top_plugins.iter().map(name).collect();
                base_plugins.retain(|p| !replaced.contains(&name(p)));
                base_plugins.extend(top_plugins);
            }
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn parse(table: toml::Table, file: Option<&Path>) -> Result<Config> {
    let text = toml::to_string(&table)?;
    toml::from_str(&text).map_err(|err| {
        let name = file.map_or_else(|| "config".to_owned(), |f| f.display().to_string());
        anyhow::anyhow!("{name}: {}", err.message())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented defaults are the defaults, key for key.
    #[test]
    fn the_defaults_file_is_true() {
        let config: Config = toml::from_str(DEFAULTS).expect("trae-mem.defaults.toml parses");
        assert_eq!(config, Config::default());
        // And it names every key there is.
        let documented: toml::Table = toml::from_str(DEFAULTS).unwrap();
        let all = toml::Table::try_from(Config::default()).unwrap();
        for (table, keys) in all.iter().filter_map(|(k, v)| v.as_table().map(|t| (k, t))) {
            for key in keys.keys() {
                let present = documented.get(table).and_then(|t| t.get(key)).is_some()
                    || DEFAULTS.contains(&format!("# {key} = "));
                assert!(present, "trae-mem.defaults.toml lacks [{table}] {key}");
            }
        }
    }

    /// This repository's own settings: the example plugins, for the demo.
    #[test]
    fn the_repositorys_config_declares_the_four_example_plugins() {
        let config: Config = toml::from_str(include_str!("../trae-mem.toml")).expect("trae-mem.toml parses");
        check(&config).unwrap();
        let names: Vec<&str> = config.plugins.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["file-changed", "model-response", "head-tail-sampler", "sectioned-summarizer"]);
        assert_eq!(config.summarize.summarizer, "sectioned-summarizer");
    }

    #[test]
    fn plugin_mistakes_are_named() {
        let err = |text: &str| {
            let config: Config = toml::from_str(text).unwrap();
            check(&config).unwrap_err().to_string()
        };
        let plugin = "[[plugins]]\nname = \"a\"\npath = \"a.wasm\"\n";
        assert!(err(&format!("{plugin}role = \"sampler\"\n")).contains("a sampler needs `tools`"));
        assert!(err(&format!("{plugin}role = \"event-handler\"\n")).contains("an event-handler needs `events`"));
        assert!(
            err(&format!("{plugin}role = \"sampler\"\ntools = [\"*\"]\nsha256 = \"abc\"\n")).contains("64 hex digits")
        );
        let bad_role = toml::from_str::<Config>(&format!("{plugin}role = \"filter\"\n")).unwrap_err();
        assert!(bad_role.message().contains("event-handler"), "{}", bad_role.message());
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = toml::from_str::<Config>("[capture]\nprompt_char = 3\n").unwrap_err();
        assert!(err.message().contains("unknown field `prompt_char`"), "{}", err.message());
        assert!(err.message().contains("prompt_chars"), "{}", err.message());
    }

    #[test]
    fn project_values_replace_global_ones_key_by_key() {
        let mut base: toml::Table = "[capture]\nprompt_chars = 10\ntool_input_chars = 20\n".parse().unwrap();
        merge(&mut base, "[capture]\nprompt_chars = 30\n".parse().unwrap());
        let config = parse(base, None).unwrap();
        assert_eq!(config.capture.prompt_chars, 30);
        assert_eq!(config.capture.tool_input_chars, 20);
    }
}
