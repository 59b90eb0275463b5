//! The WebAssembly plugin host.
//!
//! Plugins are components for one world of `wit/` (event handler, sampler,
//! summarizer), declared in `trae-mem.toml`. Each call gets a fresh sandbox
//! (`sandbox`); compiled plugins are cached (`cache`); only the plugins
//! subscribed to the current event or tool are ever loaded. Every failure
//! comes back as an error naming the plugin, for the caller to log and fall
//! back on the built-in behaviour: a plugin can never break a hook.

pub mod build;
pub mod cache;
mod error;
mod net;
mod pinned;
mod sandbox;
mod wit;

use std::io::Write;
use std::path::{Path, PathBuf};

use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::component::Component;

use crate::config::{self, Config, PluginDecl, Role};
use crate::store::Observation;
use wit::since_v0_1_0::host::Level;
use wit::{Handler, Sampler, Summarizer, Version};

pub use error::{PluginError, PluginErrorKind};

/// An observation a plugin asked to record.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PluginObservation {
    pub kind: String,
    pub content: String,
    pub tool: Option<String>,
    pub tags: Vec<String>,
}

/// What a sampler kept of a large output.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Sample {
    pub text: String,
    pub dropped: String,
}

/// What a summarizer plugin wrote of a session.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PluginSummary {
    pub brief: String,
    pub detailed: String,
    /// What the session taught (0.2.0 and later).
    pub learnings: Vec<Learning>,
    /// The tokens it says it spent (0.2.0 and later; 0 before).
    pub tokens_used: u64,
}

/// Something a session taught, as a summarizer plugin put it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Learning {
    pub title: String,
    pub facts: Vec<String>,
    pub files: Vec<String>,
    pub concepts: Vec<String>,
}

/// Facts about the session a summarizer plugin summarizes.
#[derive(Debug, Clone)]
pub struct SessionFacts {
    pub id: String,
    pub project: String,
    pub started_at: i64,
    pub ended_at: Option<i64>,
}

/// The plugins of one config, in one home.
pub struct Plugins<'a> {
    decls: &'a [PluginDecl],
    summarize: &'a config::Summarize,
    home: &'a Path,
    /// False inside a hook: large uncached plugins are skipped, not compiled.
    may_compile: bool,
    /// HTTP requests its plugins' calls handed to a server so far.
    handed_over: std::cell::Cell<usize>,
}

impl<'a> Plugins<'a> {
    /// The plugins `decls`, of which the one `summarize` names (or the
    /// built-in summarizer) writes summaries.
    pub fn new(decls: &'a [PluginDecl], summarize: &'a config::Summarize, home: &'a Path, may_compile: bool) -> Self {
        Self { decls, summarize, home, may_compile, handed_over: Default::default() }
    }

    /// The plugins a config declares.
    pub fn of(config: &'a Config, home: &'a Path, may_compile: bool) -> Self {
        Self::new(&config.plugins, &config.summarize, home, may_compile)
    }

    /// How many HTTP requests the calls so far handed to a server: a model
    /// may charge for each, even one whose answer never came back.
    pub fn requests_handed_over(&self) -> usize {
        self.handed_over.get()
    }

    pub fn all(&self) -> &'a [PluginDecl] {
        self.decls
    }

    /// The declared plugin called `name`.
    pub fn named(&self, name: &str) -> Option<&'a PluginDecl> {
        self.decls.iter().find(|p| p.name == name)
    }

    /// The event handlers subscribed to `event`.
    pub fn handlers(&self, event: &str) -> Vec<&'a PluginDecl> {
        self.decls.iter().filter(|p| p.handles(event)).collect()
    }

    /// The sampler for `tool`'s output: the first that names the tool, else one for "*".
    pub fn sampler(&self, tool: &str) -> Option<&'a PluginDecl> {
        let samplers = || self.decls.iter().filter(|p| p.role == Role::Sampler);
        samplers().find(|p| p.tools.iter().any(|t| t == tool)).or_else(|| samplers().find(|p| p.samples(tool)))
    }

    /// The summarizer plugin, when the config names one.
    pub fn summarizer(&self) -> Option<&'a PluginDecl> {
        match &self.summarize.summarizer {
            config::Summarizer::Builtin => None,
            config::Summarizer::Plugin(name) => self.named(name),
        }
    }

    /// The `[summarize]` settings: the summarizer, and what a model may cost.
    pub fn settings(&self) -> &'a config::Summarize {
        self.summarize
    }

    /// Where compiled plugins are cached.
    pub fn cache_dir(&self) -> PathBuf {
        self.home.join("cache").join("plugins")
    }

    /// The plugin's artifact path, if its wasm can be read.
    pub fn artifact(&self, plugin: &PluginDecl) -> Option<PathBuf> {
        let bytes = std::fs::read(&plugin.path).ok()?;
        let runtime = sandbox::runtime().ok()?;
        Some(cache::artifact_path(&self.cache_dir(), &runtime.engine, &cache::sha256_hex(&bytes)))
    }

    /// Compiles (or loads from cache) and instantiates a plugin, checking it
    /// implements its role's world. For `plugins check`.
    pub fn check(&self, plugin: &PluginDecl) -> Result<cache::Source> {
        let (component, version, source) = self.load(plugin)?;
        let runtime = sandbox::runtime()?;
        let mut store = sandbox::store(runtime, plugin)?;
        let linker = &runtime.linker;
        let instantiated = block_on(async {
            match plugin.role {
                Role::EventHandler => Handler::instantiate(version, &mut store, &component, linker).await.map(drop),
                Role::Sampler => Sampler::instantiate(version, &mut store, &component, linker).await.map(drop),
                Role::Summarizer => Summarizer::instantiate(version, &mut store, &component, linker).await.map(drop),
            }
        })?;
        instantiated.map_err(|e| {
            failure(plugin, PluginErrorKind::WrongWorld { role: plugin.role.as_str(), detail: e.to_string() })
        })?;
        Ok(source)
    }

    /// Asks an event handler for the observations of one event.
    pub fn handle(&self, plugin: &PluginDecl, event: &str, payload: &str) -> Result<Vec<PluginObservation>> {
        let observations = self.call(plugin, None, async |store, component, version, linker| {
            Handler::instantiate(version, &mut *store, component, linker)
                .await?
                .handle(&mut *store, event, payload)
                .await
        })?;
        if observations.len() > plugin.limits.max_observations {
            let (count, max) = (observations.len(), plugin.limits.max_observations);
            return Err(failure(plugin, PluginErrorKind::TooManyObservations { count, max }).into());
        }
        let bytes: usize = observations
            .iter()
            .map(|o| o.kind.len() + o.content.len() + o.tags.iter().map(String::len).sum::<usize>())
            .sum();
        check_size(plugin, bytes)?;
        if let Some(bad) = observations.iter().find(|o| o.kind.trim().is_empty() || o.content.trim().is_empty()) {
            return Err(failure(plugin, PluginErrorKind::EmptyObservation(format!("{bad:?}"))).into());
        }
        Ok(observations)
    }

    /// Asks a sampler to shrink a tool's output to `budget` characters.
    pub fn sample(&self, plugin: &PluginDecl, tool: &str, input: &str, output: &str, budget: usize) -> Result<Sample> {
        let budget32 = u32::try_from(budget).unwrap_or(u32::MAX);
        let sample = self.call(plugin, None, async |store, component, version, linker| {
            Sampler::instantiate(version, &mut *store, component, linker)
                .await?
                .sample(&mut *store, tool, input, output, budget32)
                .await
        })?;
        check_size(plugin, sample.text.len() + sample.dropped.len())?;
        // The budget is the host's to keep, whatever the plugin returns.
        Ok(Sample { text: crate::text::clip(&sample.text, budget), dropped: crate::text::clip(&sample.dropped, 300) })
    }

    /// Asks a summarizer plugin for a session's summaries, as it wrote them
    /// (`summarize` clips them), within `limit` (the plugin's own time limit
    /// when `None`).
    pub fn summarize(
        &self,
        plugin: &PluginDecl,
        facts: &SessionFacts,
        observations: &[Observation],
        limit: Option<Duration>,
    ) -> Result<PluginSummary> {
        let summary = self.call(plugin, limit, async |store, component, version, linker| {
            Summarizer::instantiate(version, &mut *store, component, linker)
                .await?
                .summarize(&mut *store, facts, observations)
                .await
        })?;
        let learned: usize = summary
            .learnings
            .iter()
            .map(|l| {
                l.title.len()
                    + [&l.facts, &l.files, &l.concepts].iter().flat_map(|v| v.iter()).map(String::len).sum::<usize>()
            })
            .sum();
        check_size(plugin, summary.brief.len() + summary.detailed.len() + learned)?;
        if summary.brief.trim().is_empty() {
            return Err(failure(plugin, PluginErrorKind::EmptyBrief).into());
        }
        Ok(summary)
    }

    fn load(&self, plugin: &PluginDecl) -> Result<(Component, Version, cache::Source)> {
        let runtime = sandbox::runtime()?;
        let (component, source) =
            cache::load(&runtime.engine, &plugin.path, plugin.sha256.as_deref(), &self.cache_dir(), self.may_compile)
                .map_err(|source| failure(plugin, PluginErrorKind::Load { path: plugin.path.clone(), source }))?;
        let version =
            Version::of(&component, &runtime.engine).map_err(|e| failure(plugin, PluginErrorKind::Version(e)))?;
        Ok((component, version, source))
    }

    /// Runs one call in a fresh sandbox, under a timer that ends it at
    /// `limit` (the plugin's own time limit when `None`) wherever the guest
    /// is (running, or waiting in a WASI call), and turns every way it can
    /// fail (a trap, the time limit, the memory limit, too much output, the
    /// plugin's own error) into an error that names the plugin; logs what it
    /// printed.
    fn call<T>(
        &self,
        plugin: &PluginDecl,
        limit: Option<Duration>,
        f: impl AsyncFnOnce(
            &mut wasmtime::Store<sandbox::State>,
            &Component,
            Version,
            &wasmtime::component::Linker<sandbox::State>,
        ) -> wasmtime::Result<Result<T, String>>,
    ) -> Result<T> {
        let (component, version, _) = self.load(plugin)?;
        let runtime = sandbox::runtime()?;
        let mut store = sandbox::store(runtime, plugin)?;
        let limit = limit.unwrap_or(Duration::from_millis(plugin.limits.timeout_ms));
        let result = block_on(async {
            // Made inside the runtime: a timer needs one to exist.
            tokio::time::timeout(limit, f(&mut store, &component, version, &runtime.linker)).await
        })?;
        let state = store.data();
        let (stdout, stderr) = state.output();
        for (level, message) in &state.logged {
            log_line(self.home, &plugin.name, level_name(*level), message);
        }
        self.handed_over.set(self.handed_over.get() + state.gate.handed_over());
        for refusal in state.gate.refusals() {
            log_line(self.home, &plugin.name, "denied", &refusal);
        }
        for (stream, text) in [("stdout", stdout), ("stderr", stderr)] {
            if !text.trim().is_empty() {
                log_line(self.home, &plugin.name, stream, &crate::text::clip(text.trim_end(), 4000));
            }
        }
        let kind = match result {
            Ok(Ok(Ok(value))) => return Ok(value),
            Err(_elapsed) => PluginErrorKind::TimedOut { ms: limit.as_millis() as u64 },
            Ok(Ok(Err(message))) => PluginErrorKind::Returned(message),
            Ok(Err(_)) if state.memory_exceeded() => PluginErrorKind::OutOfMemory { mb: plugin.limits.memory_mb },
            Ok(Err(_)) if let Some(stream) = state.flooded() => {
                PluginErrorKind::Flooded { stream, kb: sandbox::CAPTURE_BYTES >> 10 }
            }
            Ok(Err(err)) => PluginErrorKind::Trapped(crate::text::clip(&format!("{err:#}"), 500)),
        };
        Err(failure(plugin, kind).into())
    }
}

/// Runs a plugin call to completion on a runtime of its own, on this
/// thread. A runtime is cheap to make (tens of microseconds) and leaves
/// nothing behind: a guest's blocked file read, if any, is abandoned rather
/// than waited for.
fn block_on<T>(future: impl Future<Output = T>) -> Result<T> {
    // I/O too: a summarizer may be granted HTTP endpoints.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the plugin runtime")?;
    let value = runtime.block_on(future);
    runtime.shutdown_background();
    Ok(value)
}

fn check_size(plugin: &PluginDecl, bytes: usize) -> Result<(), PluginError> {
    let max = plugin.limits.max_output_bytes;
    if bytes as u64 > max {
        return Err(failure(plugin, PluginErrorKind::TooLarge { bytes, max }));
    }
    Ok(())
}

/// `kind` of failure, of `plugin`.
fn failure(plugin: &PluginDecl, kind: PluginErrorKind) -> PluginError {
    PluginError { plugin: plugin.name.clone(), kind }
}

fn level_name(level: Level) -> &'static str {
    match level {
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

/// The plugin log in the home.
pub fn log_path(home: &Path) -> PathBuf {
    home.join("logs").join("plugins.log")
}

/// Appends one line to the plugin log. Logging never fails a hook.
pub fn log_line(home: &Path, plugin: &str, level: &str, message: &str) {
    let path = log_path(home);
    let write = || -> Result<()> {
        std::fs::create_dir_all(path.parent().expect("the log lives in a directory"))?;
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(&path).context("cannot open the plugin log")?;
        let line = format!("{} {plugin} {level}: {}\n", jiff::Timestamp::now(), message.replace('\n', "\n    "));
        file.write_all(line.as_bytes())?;
        // Capped: past the limit the log becomes `plugins.log.1`, replacing
        // the one before, so the two never pass twice the cap.
        if file.metadata()?.len() > LOG_CAP {
            std::fs::rename(&path, path.with_extension("log.1"))?;
        }
        Ok(())
    };
    let _ = write();
}

/// The size past which the plugin log is rotated.
const LOG_CAP: u64 = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_rotates_past_its_cap() {
        let home = tempfile::tempdir().unwrap();
        let line = "x".repeat(1000);
        for _ in 0..(LOG_CAP / 1000 + 10) {
            log_line(home.path(), "p", "warn", &line);
        }
        let rotated = log_path(home.path()).with_extension("log.1");
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        assert!(size(&rotated) > LOG_CAP, "the full log was moved aside");
        assert!(size(&log_path(home.path())) < LOG_CAP / 10, "and a new one begun");
    }
}
