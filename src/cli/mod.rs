//! The command line: one module per subcommand, each with a clap `Cmd` and a
//! `run`. All real work is in the library.

pub mod config;
pub mod demo;
pub mod doctor;
pub mod embed;
pub mod export;
pub mod forget;
pub mod gc;
pub mod hook;
pub mod import;
pub mod install;
pub mod mcp;
pub mod output;
pub mod plugins;
pub mod scaffold;
pub mod search;
pub mod serve;
pub mod sessions;
pub mod show;
pub mod spool;
pub mod stats;
pub mod summarize;
pub mod sync;
pub mod timeline;

use std::path::PathBuf;

use anyhow::{Result, bail};

use trae_mem::config::Loaded;
use trae_mem::recall::{Private, Reader};
use trae_mem::store::{DB_FILE, OpenOptions, Store};

/// What every subcommand gets: where to work.
pub struct Env {
    /// `--home`, if given.
    pub home: Option<PathBuf>,
    /// The directory whose project config applies.
    pub cwd: PathBuf,
}

impl Env {
    pub fn load_config(&self) -> Result<Loaded> {
        trae_mem::config::load(&self.cwd, self.home.as_deref())
    }

    /// Loads the config and opens the store in its home, creating it if
    /// needed: for commands that write.
    pub fn open(&self) -> Result<(Loaded, Store)> {
        let loaded = self.load_config()?;
        let store = open_store(&loaded)?;
        Ok((loaded, store))
    }

    /// Loads the config and opens the store in its home, which must exist:
    /// for commands that change what is stored (forget, gc). A mistyped
    /// `--home` is then an error that names the home, not a new empty
    /// database.
    pub fn open_existing(&self) -> Result<(Loaded, Store)> {
        let loaded = self.load_config()?;
        let store = open_existing_store(&loaded)?;
        Ok((loaded, store))
    }

    /// As `open_existing`, for commands that only read: a config that cannot
    /// be read costs one warning line and the defaults, as it does a hook,
    /// so that memory stays readable while the file is being fixed.
    pub fn open_to_read(&self) -> Result<(Loaded, Store)> {
        let (loaded, broken) = trae_mem::config::load_or_defaults(&self.cwd, self.home.as_deref())?;
        if let Some(warning) = broken {
            eprintln!("trae-mem: warning: {warning}");
        }
        let store = open_existing_store(&loaded)?;
        Ok((loaded, store))
    }
}

/// Opens the store of a loaded config, which must exist.
fn open_existing_store(loaded: &Loaded) -> Result<Store> {
    let db = loaded.home.join(DB_FILE);
    if !db.exists() {
        bail!(
            "there is no memory in {}: {} does not exist. Hooks create it on their first event: \
             run `trae-mem install <client>` (or try `trae-mem demo`), or check --home and TRAE_MEM_HOME",
            loaded.home.display(),
            db.display()
        );
    }
    open_store(loaded)
}

/// Opens the store of a loaded config.
pub fn open_store(loaded: &Loaded) -> Result<Store> {
    let options = OpenOptions { index: loaded.config.search.index, ..OpenOptions::default() };
    Store::open(&loaded.home.join(DB_FILE), &options)
}

/// How the CLI reads memory: the owner at their own terminal sees that a
/// private row is there, as `[PRIVATE]`.
pub fn reader(store: &Store) -> Reader<'_> {
    Reader::new(store, Private::Marked)
}

/// Reads `--project`: a directory that exists is resolved to its project
/// (the git repository it is in); anything else is taken as written.
pub fn project_arg(project: Option<&str>) -> Result<Option<String>> {
    project.map(trae_mem::project::from_arg).transpose()
}
