//! `trae-mem import`: JSON lines back into memory.

use std::io::{BufReader, IsTerminal};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::{Env, output};
use trae_mem::bulk;
use trae_mem::store::{DB_FILE, Records};

/// Read a file written by `trae-mem export`.
///
/// Records already in memory are left alone, so importing twice is harmless. What was forgotten
/// (`trae-mem forget`) after the file was written stays forgotten: its tombstones keep it out. The
/// file's own tombstones are kept, and what they name is forgotten here too.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The JSON lines file; `-` reads stdin.
    file: PathBuf,
    /// Print the report as JSON: {sessions, observations, summaries, duplicates, forgotten, tombstones}.
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let loaded = env.load_config()?;
        // The input first: one that cannot be opened makes nothing.
        let (mut input, size): (Box<dyn std::io::BufRead>, Option<u64>) = if self.file.as_os_str() == "-" {
            (Box::new(BufReader::new(std::io::stdin().lock())), None)
        } else {
            let file =
                std::fs::File::open(&self.file).with_context(|| format!("cannot open {}", self.file.display()))?;
            let size = file.metadata().ok().map(|m| m.len());
            (Box::new(BufReader::with_capacity(1 << 20, file)), size)
        };
        let db = loaded.home.join(DB_FILE);
        let created = !db.exists();
        // The directories opening the store makes (the home, and any parent
        // it lacks), innermost first.
        let made: Vec<PathBuf> = loaded
            .home
            .ancestors()
            .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
            .map(Path::to_owned)
            .collect();
        let mut store = super::open_store(&loaded)?;
        let bar = progress_bar(size);
        let records = Records::File { input: &mut input, progress: &mut |bytes| bar.set_position(bytes) };
        let taken = bulk::take_in(&mut store, &loaded, records);
        bar.finish_and_clear();
        let (report, _) = match taken {
            Ok(taken) => taken,
            // An import that stored nothing leaves no database it created,
            // nor the directories it made for it: read commands and doctor
            // go on saying there is no memory here.
            Err(err) if created && super::reader(&store).holds_nothing().unwrap_or(false) => {
                match store.discard() {
                    Err(left) => {
                        eprintln!("trae-mem: warning: cannot remove the empty database {}: {left:#}", db.display())
                    }
                    // Each only while empty: what another process put there stays.
                    Ok(()) => {
                        let _ = made.iter().try_for_each(std::fs::remove_dir);
                    }
                }
                return Err(err);
            }
            Err(err) => return Err(err),
        };
        if self.json {
            return output::json(&report);
        }
        println!(
            "imported {}, {}, {} ({} already present)",
            output::count(report.sessions, "session", "sessions"),
            output::count(report.observations, "observation", "observations"),
            output::count(report.summaries, "summary", "summaries"),
            report.duplicates
        );
        if report.forgotten > 0 || report.tombstones > 0 {
            println!(
                "left out {} forgotten since; kept {} from the file",
                output::count(report.forgotten, "record", "records"),
                output::count(report.tombstones, "new tombstone", "new tombstones")
            );
        }
        // Imported rows get no vectors until an embed runs (a hook starts one
        // after each turn): the user who searches right away should know
        // why a question in other words finds nothing yet.
        // Counting them reads the whole store: an import that added nothing
        // skips it.
        let pending = match report.observations + report.summaries {
            0 => 0,
            _ => trae_mem::embed::vector_counts(&store)?.pending,
        };
        if pending > 0 {
            trae_mem::embed::start_after_writing(&loaded.home);
            let (wait, them) = if pending == 1 { ("waits", "it") } else { ("wait", "them") };
            eprintln!(
                "{} {wait} for a vector: a background `trae-mem embed` is giving {them} one (`trae-mem embed` waits for it); search finds by words meanwhile",
                output::count(pending, "memory", "memories"),
            );
        }
        Ok(())
    }
}

/// A byte-progress bar on stderr, hidden when stderr is not a terminal.
fn progress_bar(size: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = size.map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_style(
        ProgressStyle::with_template("{spinner} importing {bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})")
            .expect("the template is valid"),
    );
    bar
}
