//! `trae-mem embed`: give stored memories their vectors.

use std::io::IsTerminal;

use anyhow::{Result, bail};
use clap::Args;
use indicatif::ProgressBar;
use serde_json::json;

use super::{Env, output};
use trae_mem::embed::{self, fill};

/// Give stored memories their vectors, so that search finds them by meaning.
///
/// Each answer, note, decision and error, and each session's brief summary, gets a vector from
/// the embedding model: the one built into trae-mem, or the model file `[search] model` names.
/// Newest first, in short transactions: hooks go on meanwhile, search finds by words until the
/// vectors are there, and a run stopped at any point is finished by the next. Hooks start it in
/// the background after each turn; run it by hand to give an existing store (or an import) its
/// vectors. A new model replaces every vector.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Print JSON: {model, embedded, pending, finished}.
    #[arg(long)]
    json: bool,
    /// Run as the hooks' background worker: quietly, and not at all while another embed runs.
    #[arg(long, hide = true)]
    background: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, mut store) = env.open_existing()?;
        std::fs::create_dir_all(&loaded.home)?;
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(embed::lock_path(&loaded.home))?;
        if lock.try_lock().is_err() {
            if self.background {
                return Ok(());
            }
            bail!("another `trae-mem embed` is running in {}; it will finish the work", loaded.home.display());
        }
        let (embedder, model) = embed::configured(loaded.config.search.model.as_deref())?;
        let show = !self.background && !self.json && std::io::stderr().is_terminal();
        let bar = if show { ProgressBar::new(store.vector_counts()?.pending) } else { ProgressBar::hidden() };
        let filled = fill::fill(&mut store, embedder, &model, None, &mut |done| bar.set_position(done))?;
        bar.finish_and_clear();
        let counts = store.vector_counts()?;
        if self.json {
            return output::json(&json!({"model": model.id, "embedded": filled.embedded,
                                        "pending": counts.pending, "finished": filled.finished}));
        }
        if !self.background {
            println!(
                "gave {} a vector ({}); {} in all",
                output::count(filled.embedded, "memory", "memories"),
                model.id,
                output::count(counts.embedded, "vector", "vectors"),
            );
        }
        Ok(())
    }
}
