//! Which model: the one compiled into the binary, or a model file that
//! `[search] model` names. The store records the model its vectors came
//! from, and search embeds each query with that same model, so the two
//! always compare.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use anyhow::Result;

use super::Embedder;
use crate::store::{Store, VectorModel};

/// The source that names the built-in model.
pub const BUILTIN_SOURCE: &str = "builtin";

/// The model at `source` (`builtin`, or a file's absolute path). A file is
/// read once per process: the MCP server and the viewer search many times.
pub fn load(source: &str) -> Result<&'static Embedder> {
    if source == BUILTIN_SOURCE {
        return Ok(Embedder::builtin());
    }
    static FILES: OnceLock<Mutex<HashMap<String, &'static Embedder>>> = OnceLock::new();
    let mut files = FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(embedder) = files.get(source) {
        return Ok(embedder);
    }
    // Leaked on purpose: a model lives as long as the process that loaded it.
    let embedder: &'static Embedder = Box::leak(Box::new(Embedder::from_file(Path::new(source))?));
    files.insert(source.to_owned(), embedder);
    Ok(embedder)
}

/// The model `[search] model` names (the built-in one when unset), with
/// what the store records of it.
pub fn configured(model: Option<&Path>) -> Result<(&'static Embedder, VectorModel)> {
    let source = model.map_or(BUILTIN_SOURCE.to_owned(), |path| path.display().to_string());
    let embedder = load(&source)?;
    Ok((embedder, VectorModel { id: embedder.id().to_owned(), source }))
}

/// The model the store's vectors came from, loaded, or `None` when there
/// are no vectors or the model cannot be had as it was (its file moved or
/// changed): then search finds by words alone until vectors are made again.
pub fn of_store(store: &Store) -> Result<Option<&'static Embedder>> {
    let Some(model) = store.vector_model()? else { return Ok(None) };
    Ok(load(&model.source).ok().filter(|embedder| embedder.id() == model.id))
}
