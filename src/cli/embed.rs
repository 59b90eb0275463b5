//! `trae-mem embed`: give stored memories their vectors.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Args;
use indicatif::ProgressBar;
use serde_json::json;

use super::{Env, output};
use trae_mem::embed;

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
    /// Run as the hooks' background worker: quietly, and behind at most one other embed.
    #[arg(long, hide = true)]
    background: bool,
    /// Write the model in use (the built-in one unless `[search] model` names another) to DIR in
    /// Hugging Face's layout, `config.json`, `model.safetensors` (f16) and `tokenizer.json`, and
    /// give no vectors. `[search] model` can name such a folder, and other tools read it.
    #[arg(long, value_name = "DIR")]
    export_model: Option<std::path::PathBuf>,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        if let Some(dir) = &self.export_model {
            return export(env, dir, self.json);
        }
        let (loaded, mut store) = env.open_existing()?;
        std::fs::create_dir_all(&loaded.home)?;
        let lock = trae_mem::background::open_lock(&embed::lock_path(&loaded.home))?;
        if lock.try_lock().is_err() {
            if self.background {
                // One run waits behind the running one, for the rows that one
                // will not see; a third would find nothing left to do.
                let queue = trae_mem::background::open_lock(&embed::queue_path(&loaded.home))?;
                if queue.try_lock().is_err() {
                    return Ok(());
                }
                trae_mem::background::wait_for_lock(&lock)?;
            } else {
                eprintln!("waiting for the `trae-mem embed` that is running in {}", loaded.home.display());
                trae_mem::background::wait_for_lock(&lock)?;
            }
        }
        let (embedder, model) = embed::configured(loaded.config.search.model.as_deref(), &loaded.home)?;
        let show = !self.background && !self.json && std::io::stderr().is_terminal();
        let bar = if show { ProgressBar::new(embed::vector_counts(&store)?.pending) } else { ProgressBar::hidden() };
        let filled = embed::fill(&mut store, embedder, &model, None, &mut |done| bar.set_position(done))?;
        bar.finish_and_clear();
        let counts = embed::vector_counts(&store)?;
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

/// `--export-model DIR`.
fn export(env: &Env, dir: &std::path::Path, json: bool) -> Result<()> {
    let loaded = env.load_config()?;
    let (embedder, model) = embed::configured(loaded.config.search.model.as_deref(), &loaded.home)?;
    embedder.export(dir)?;
    if json {
        return output::json(&json!({"model": model.id, "exported": dir}));
    }
    println!("wrote {} to {} (config.json, model.safetensors, tokenizer.json)", model.id, dir.display());
    Ok(())
}
