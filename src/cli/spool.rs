//! `trae-mem spool`: events waiting to be stored, and payloads that could not be read.

use anyhow::Result;
use clap::{Args, Subcommand};
use serde::Serialize;

use super::Env;
use super::output::{self, Style, paint};
use trae_mem::ingest::{self, DeadLetter, Ingest, Spool, SpoolEntry};
use trae_mem::{config, timefmt};

/// Show or store events that are waiting.
///
/// The spool holds events a hook could not store in time (a locked database, a full disk, a
/// read-only home), and dead letters: payloads it could not read, kept with
/// private spans and secrets removed.
#[derive(Debug, Args)]
pub struct Cmd {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// List spooled events and dead letters.
    List {
        /// Print JSON: {pending: [{client, event, received_at, payload, reason}], dead_letters: [{client, event, received_at, error, payload_file, bytes}]}.
        #[arg(long)]
        json: bool,
    },
    /// Store spooled events now, and retry dead letters.
    Replay {
        /// Print JSON: {stored, remaining, revived}.
        #[arg(long)]
        json: bool,
    },
    /// Discard dead letters: payloads that cannot be read, and never will be (junk, or a payload
    /// naming no session). Spooled events, which can be stored, are never dropped.
    ///
    /// Dropping more than one asks first; without a terminal, it needs --yes.
    Drop {
        /// Show what would be dropped, and drop nothing.
        #[arg(long)]
        dry_run: bool,
        /// Drop without asking.
        #[arg(long)]
        yes: bool,
        /// Print JSON: {dry_run, dropped, dead_letters: [{client, event, received_at, error, payload_file, bytes}]}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Serialize)]
struct Dropped<'a> {
    dry_run: bool,
    dropped: usize,
    dead_letters: &'a [DeadLetter],
}

#[derive(Serialize)]
struct Listing {
    pending: Vec<SpoolEntry>,
    dead_letters: Vec<DeadLetter>,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        // The spool is what a user looks at when something is wrong: a
        // broken config is said, not a stop.
        let (loaded, broken) = config::load_or_defaults(&env.cwd, env.home.as_deref())?;
        if let Some(warning) = broken {
            eprintln!("trae-mem: warning: {warning}");
        }
        let spool = Spool::new(&loaded.home);
        match self.action {
            Action::Drop { dry_run, yes, json } => drop_dead_letters(&spool, dry_run, yes, json),
            Action::List { json } => {
                let listing = Listing { pending: spool.pending()?, dead_letters: spool.dead_letters()? };
                if json {
                    return output::json(&listing);
                }
                let c = output::colour();
                println!("{} ({})", paint("pending events", Style::Bold, c), listing.pending.len());
                for e in &listing.pending {
                    println!(
                        "  {}  {:<18} {}  {}",
                        timefmt::local_clock(e.received_at),
                        e.event,
                        e.client,
                        paint(&e.reason, Style::Dim, c)
                    );
                }
                println!("{} ({})", paint("dead letters", Style::Bold, c), listing.dead_letters.len());
                for d in &listing.dead_letters {
                    println!(
                        "  {}  {} bytes  {}",
                        timefmt::local_clock(d.received_at),
                        d.bytes,
                        paint(&d.error, Style::Yellow, c)
                    );
                    println!("    {}", d.payload_file.display());
                }
                Ok(())
            }
            Action::Replay { json } => {
                let privacy = ingest::privacy(&loaded)?;
                let ingest = Ingest::new(&loaded, &privacy);
                let mut report = ingest.replay(&spool, None)?;
                report.revived = ingest.revive_dead_letters(&spool)?;
                if json {
                    return output::json(&report);
                }
                println!(
                    "stored {}; {} still waiting; {} stored",
                    output::count(report.stored as u64, "spooled event", "spooled events"),
                    report.remaining,
                    output::count(report.revived as u64, "dead letter", "dead letters")
                );
                Ok(())
            }
        }
    }
}

fn drop_dead_letters(spool: &Spool, dry_run: bool, yes: bool, json: bool) -> Result<()> {
    let letters = spool.dead_letters()?;
    let what = output::count(letters.len() as u64, "dead letter", "dead letters");
    if !dry_run && !yes && letters.len() > 1 {
        output::confirm("drop", &what)?;
    }
    if !dry_run {
        for letter in &letters {
            spool.remove_dead_letter(letter)?;
        }
    }
    if json {
        return output::json(&Dropped {
            dry_run,
            dropped: if dry_run { 0 } else { letters.len() },
            dead_letters: &letters,
        });
    }
    println!("{} {what}", if dry_run { "would drop" } else { "dropped" });
    for letter in &letters {
        println!("  {}  {}", timefmt::local_clock(letter.received_at), letter.error);
    }
    Ok(())
}
