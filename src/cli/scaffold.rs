//! `trae-mem plugins new`: a Rust plugin crate for one role, against the
//! current interface, that builds with one command.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use trae_mem::config::Role;

/// The interface version new plugins are written against, and its text:
/// the interface and the WASI packages it imports (a summarizer's HTTP).
const WIT_FOLDER: &str = "since_v0.2.0";
const WIT: [(&str, &str); 8] = [
    ("plugin.wit", include_str!("../../wit/since_v0.2.0/plugin.wit")),
    ("deps/cli.wit", include_str!("../../wit/since_v0.2.0/deps/cli.wit")),
    ("deps/clocks.wit", include_str!("../../wit/since_v0.2.0/deps/clocks.wit")),
    ("deps/filesystem.wit", include_str!("../../wit/since_v0.2.0/deps/filesystem.wit")),
    ("deps/http.wit", include_str!("../../wit/since_v0.2.0/deps/http.wit")),
    ("deps/io.wit", include_str!("../../wit/since_v0.2.0/deps/io.wit")),
    ("deps/random.wit", include_str!("../../wit/since_v0.2.0/deps/random.wit")),
    ("deps/sockets.wit", include_str!("../../wit/since_v0.2.0/deps/sockets.wit")),
];

const CARGO_TOML: &str = include_str!("plugin_template/Cargo.toml.in");
const CARGO_CONFIG: &str = include_str!("plugin_template/cargo_config.toml");
const EVENT_HANDLER: &str = include_str!("plugin_template/event_handler.rs");
const SAMPLER: &str = include_str!("plugin_template/sampler.rs");
const SUMMARIZER: &str = include_str!("plugin_template/summarizer.rs");
/// A summarizer's HTTP client: the model-summarizer example's own.
const SUMMARIZER_HTTP: &str = include_str!("../../plugins/llm-summarizer/src/http.rs");

/// A new plugin crate.
pub struct Scaffold {
    pub name: String,
    pub role: Role,
    /// The crate's directory (absolute).
    pub dir: PathBuf,
}

impl Scaffold {
    /// Writes the crate into `dir`, which must be missing or empty.
    pub fn create(name: &str, role: Role, dir: &Path) -> Result<Scaffold> {
        let valid = name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            bail!("{name:?} cannot name a crate: use letters, digits, - and _, starting with a letter");
        }
        if std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some()) {
            bail!("{} is not empty; choose another --dir", dir.display());
        }
        let dir = std::path::absolute(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
        let source = match role {
            Role::EventHandler => EVENT_HANDLER,
            Role::Sampler => SAMPLER,
            Role::Summarizer => SUMMARIZER,
        };
        let mut files = vec![
            ("Cargo.toml".to_owned(), CARGO_TOML.replace("{name}", name)),
            (".cargo/config.toml".to_owned(), CARGO_CONFIG.to_owned()),
            (".gitignore".to_owned(), "/target\n".to_owned()),
            ("src/lib.rs".to_owned(), source.to_owned()),
        ];
        if role == Role::Summarizer {
            files.push(("src/http.rs".to_owned(), SUMMARIZER_HTTP.to_owned()));
        }
        files.extend(WIT.iter().map(|(file, text)| (format!("wit/{WIT_FOLDER}/{file}"), (*text).to_owned())));
        for (file, text) in files {
            let path = dir.join(file);
            std::fs::create_dir_all(path.parent().expect("a file in the crate"))
                .with_context(|| format!("cannot create {}", dir.display()))?;
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(Scaffold { name: name.to_owned(), role, dir })
    }

    /// Where `cargo build --release` puts the component: under
    /// CARGO_TARGET_DIR when that is set, with each hyphen of the crate's
    /// name turned into an underscore.
    pub fn wasm(&self) -> PathBuf {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .filter(|d| !d.is_empty())
            .map_or_else(|| self.dir.join("target"), PathBuf::from);
        target.join("wasm32-wasip2/release").join(format!("{}.wasm", self.name.replace('-', "_")))
    }

    /// The `trae-mem.toml` text that declares the plugin.
    pub fn declaration(&self) -> String {
        let (before, subscribe) = match self.role {
            Role::EventHandler => ("", "events = [\"ModelResponse\"]\n"),
            Role::Sampler => ("", "tools = [\"*\"]\n"),
            Role::Summarizer => ("[summarize]\nsummarizer = \"{name}\"\n\n", ""),
        };
        format!(
            "{}[[plugins]]\nname = \"{}\"\npath = \"{}\"\nrole = \"{}\"\n{subscribe}",
            before.replace("{name}", &self.name),
            self.name,
            self.wasm().display(),
            self.role.as_str()
        )
    }
}
