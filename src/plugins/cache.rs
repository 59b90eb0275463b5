//! Compiled plugins, cached as precompiled artifacts under the home.
//!
//! The key is the wasm's SHA-256 and the engine's compatibility hash, so a
//! changed plugin or a new trae-mem never loads a stale artifact. Artifacts
//! are written to a temporary file and renamed into place, so a reader
//! never sees half of one; one that fails to load is rebuilt.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Loaded from a cached artifact.
    Cached,
    /// Compiled now, and cached.
    Compiled,
    /// The cached artifact was unusable: compiled again, and cached.
    Rebuilt,
}

/// Compiling a plugin larger than this inside a hook could stall the agent
/// (a Python component takes seconds), so a hook skips it instead and the
/// next `trae-mem plugins check` compiles it. A Rust plugin of ~100 KB
/// compiles in about 40 ms.
pub const COMPILE_IN_HOOK_MAX_BYTES: u64 = 2 << 20;

/// The hex SHA-256 of a file's bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    crate::text::hex(&Sha256::digest(bytes))
}

/// Where the artifact for `wasm` (with this hash) lives.
pub fn artifact_path(cache_dir: &Path, engine: &Engine, wasm_sha256: &str) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    cache_dir.join(format!("{wasm_sha256}-{:016x}.cwasm", hasher.finish()))
}

/// Loads a plugin's component, from the cache when possible. Checks the
/// sha256 pin first. With `may_compile` false, a large uncached plugin is
/// an error rather than a long compile.
pub fn load(
    engine: &Engine,
    wasm: &Path,
    pin: Option<&str>,
    cache_dir: &Path,
    may_compile: bool,
) -> Result<(Component, Source)> {
    let bytes = std::fs::read(wasm).map_err(|err| {
        let build = (err.kind() == std::io::ErrorKind::NotFound).then(|| super::build::command(wasm)).flatten();
        match build {
            Some(build) => anyhow::anyhow!("cannot read {}: it is not built; build it with `{build}`", wasm.display()),
            None => anyhow::Error::new(err).context(format!("cannot read {}", wasm.display())),
        }
    })?;
    let sha = sha256_hex(&bytes);
    if let Some(pin) = pin
        && !pin.eq_ignore_ascii_case(&sha)
    {
        bail!("its sha256 is {sha}, not the pinned {pin}; refusing to load it (update the pin if the change is yours)");
    }
    let artifact = artifact_path(cache_dir, engine, &sha);
    let mut source = Source::Compiled;
    if artifact.exists() {
        // SAFETY: the artifact was written by `Component::serialize` of this
        // engine configuration (its name carries the compatibility hash) and
        // is only ever replaced whole, by rename. A damaged one fails
        // wasmtime's header checks and is rebuilt below.
        match unsafe { Component::deserialize_file(engine, &artifact) } {
            Ok(component) => return Ok((component, Source::Cached)),
            Err(_) => source = Source::Rebuilt,
        }
    }
    if !may_compile && bytes.len() as u64 > COMPILE_IN_HOOK_MAX_BYTES {
        bail!("it is not compiled yet and too large to compile inside a hook; run `trae-mem plugins check`");
    }
    let component = Component::new(engine, &bytes)
        .map_err(anyhow::Error::from)
        .context("it is not a valid WebAssembly component")?;
    store_artifact(&artifact, &component.serialize()?)?;
    Ok((component, source))
}

fn store_artifact(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().expect("artifacts live in a directory");
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let temp = dir.join(format!(".{}.{}.tmp", std::process::id(), fastrand::u64(..)));
    std::fs::write(&temp, bytes).with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, path).with_context(|| format!("cannot move the artifact to {}", path.display()))?;
    Ok(())
}
