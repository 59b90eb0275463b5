//! Which model: the one compiled into the binary, or a model file that
//! `[search] model` names. The store records the model its vectors came
//! from, and search embeds each query with that same model, so the two
//! always compare.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::Result;

use super::Embedder;
use crate::config::ModelSource;
use crate::store::{Store, VectorModel};

/// The model at `source`. A file is read once per process: the MCP server
/// and the viewer search many times. A folder in Hugging Face's layout is
/// converted once, and kept converted in `home`'s `models/`.
pub fn load(source: &ModelSource, home: &Path) -> Result<&'static Embedder> {
    let ModelSource::File(path) = source else { return Ok(Embedder::builtin()) };
    static FILES: OnceLock<Mutex<HashMap<PathBuf, &'static Embedder>>> = OnceLock::new();
    let mut files = FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(embedder) = files.get(path) {
        return Ok(embedder);
    }
    // Leaked on purpose: a model lives as long as the process that loaded it.
    let embedder: &'static Embedder = Box::leak(Box::new(Embedder::from_file(path, Some(&home.join("models")))?));
    files.insert(path.clone(), embedder);
    Ok(embedder)
}

/// The model `[search] model` names (the built-in one when unset), with
/// what the store records of it, for the store in `home`.
pub fn configured(model: Option<&Path>, home: &Path) -> Result<(&'static Embedder, VectorModel)> {
    let source = model.map_or(ModelSource::Builtin, |path| ModelSource::File(path.to_owned()));
    let embedder = load(&source, home)?;
    Ok((embedder, VectorModel { id: embedder.id().to_owned(), source: source.name() }))
}

/// The model the store's vectors came from, loaded, or `None` when there
/// are no vectors or the model cannot be had as it was (its file moved or
/// changed): then search finds by words alone until vectors are made again.
pub fn of_store(store: &Store) -> Result<Option<&'static Embedder>> {
    let Some(model) = store.vector_model()? else { return Ok(None) };
    let home = store.path().parent().unwrap_or(Path::new("."));
    Ok(load(&ModelSource::from(model.source.as_str()), home).ok().filter(|embedder| embedder.id() == model.id))
}
