//! A store built from the synthetic corpus, for the benchmarks that need a
//! large one: written as an export, then imported as a user would.

use std::io::{BufReader, BufWriter};
use std::path::Path;

use trae_mem::store::{DB_FILE, ImportReport, OpenOptions, Records, Store};

use super::corpus::Corpus;

/// Imports `observations` rows of the corpus (from `seed`) into a new store
/// in `home`, using `scratch` for the export.
#[allow(dead_code)]
pub fn store(home: &Path, observations: usize, seed: u64, scratch: &Path) -> anyhow::Result<Store> {
    std::fs::create_dir_all(home)?;
    let export = scratch.join("corpus.jsonl");
    Corpus::new(seed).write_export(observations, &mut BufWriter::new(std::fs::File::create(&export)?))?;
    let mut store = Store::open(&home.join(DB_FILE), &OpenOptions::default())?;
    import(&mut store, home, &export)?;
    std::fs::remove_file(&export)?;
    Ok(store)
}

/// Takes the export file `export` into `store` as `trae-mem import` does,
/// with the config of `home`.
pub fn import(store: &mut Store, home: &Path, export: &Path) -> anyhow::Result<ImportReport> {
    let loaded = trae_mem::config::load(home, Some(home))?;
    let mut input = BufReader::with_capacity(1 << 20, std::fs::File::open(export)?);
    let (report, _) =
        trae_mem::bulk::take_in(store, &loaded, Records::File { input: &mut input, progress: &mut |_| {} })?;
    Ok(report)
}
