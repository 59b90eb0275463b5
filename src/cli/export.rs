//! `trae-mem export`: memory to JSON lines.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::{Env, output, project_arg};

/// Write memory to JSON lines (lossless).
///
/// One record a line: {"type":"session",...}, {"type":"observation",...}, {"type":"summary",...},
/// and {"type":"tombstone",...} for what was forgotten (a hash or a session id, never the text).
/// Lossless: private rows are included with their flag. `trae-mem import` reads it back.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Only this project: a directory (resolved to its repository) or a stored project path.
    #[arg(long, value_name = "PATH")]
    project: Option<String>,
    /// Write to this file instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, store) = env.open_to_read()?;
        let project = project_arg(self.project.as_deref())?;
        let mut out: Box<dyn Write> = match &self.output {
            Some(path) => Box::new(BufWriter::new(
                std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
            )),
            None => Box::new(BufWriter::new(std::io::stdout().lock())),
        };
        let records = super::reader(&store).export(project.as_deref(), &mut out)?;
        eprintln!("exported {}", output::count(records, "record", "records"));
        Ok(())
    }
}
