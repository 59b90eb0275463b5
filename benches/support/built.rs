//! A store built from the synthetic corpus, for the benchmarks that need a
//! large one: written as an export, then imported as a user would.

use std::io::{BufReader, BufWriter};
use std::path::Path;

use trae_mem::store::{DB_FILE, OpenOptions, Records, Store};

use super::corpus::Corpus;

/// Imports `observations` rows of the corpus (from `seed`) into a new store
/// in `home`, using `scratch` for the export.
pub fn store(home: &Path, observations: usize, seed: u64, scratch: &Path) -> anyhow::Result<Store> {
    std::fs::create_dir_all(home)?;
    let export = scratch.join("corpus.jsonl");
    Corpus::new(seed).write_export(observations, &mut BufWriter::new(std::fs::File::create(&export)?))?;
    let mut store = Store::open(&home.join(DB_FILE), &OpenOptions::default())?;
    store
        .take_in(Records::File { input: &mut BufReader::new(std::fs::File::open(&export)?), progress: &mut |_| {} })?;
    std::fs::remove_file(&export)?;
    Ok(store)
}
