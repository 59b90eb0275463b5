//! `trae-mem gc`: apply retention and give space back.

use std::io::IsTerminal;

use anyhow::Result;
use clap::Args;
use indicatif::ProgressBar;

use super::{Env, output};
use trae_mem::forget::{rescan, retention};
use trae_mem::ingest;

/// Apply retention and give free space back to the file system.
///
/// Deletes what `[retention]` in trae-mem.toml no longer keeps: observations older than
/// `max_age_days`, then the oldest ones while the data is over `max_db_mb`. A session whose
/// observations all go keeps its summaries (unless `keep_summaries = false`). Then free pages
/// leave the file and the write-ahead log is emptied. Without limits, gc only does the latter
/// (and converts a store made before trae-mem 0.3, by rewriting it once).
///
/// With --rescan, the secret rules of this version (and `[privacy] secret_patterns`) are first
/// applied to every row already stored: rows kept before a rule existed are redacted in place,
/// their sessions' summaries are written again, and the old text leaves the file.
///
/// Deletes go in short transactions, so hooks running meanwhile are not held up, and a gc
/// stopped at any point is finished by the next one. SessionEnd hooks also run a short slice of
/// it at most once a day, when limits are set.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Delete observations older than this many days, whatever the config says.
    #[arg(long, value_name = "DAYS")]
    max_age_days: Option<u32>,
    /// Keep the data under this many megabytes, whatever the config says.
    #[arg(long, value_name = "MB")]
    max_db_mb: Option<u64>,
    /// First redact, in every stored row and summary, what today's secret rules find.
    #[arg(long)]
    rescan: bool,
    /// Print JSON: {aged_out, over_size, sessions_removed, events_pruned, facts_written, bytes_before,
    /// bytes_after, finished}, with --rescan also "rescan": {observations_scanned, observations_redacted,
    /// sessions_resummarized, summaries_redacted}.
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, mut store) = env.open_existing()?;
        let mut limits = loaded.config.retention.clone();
        limits.max_age_days = self.max_age_days.or(limits.max_age_days);
        limits.max_db_mb = self.max_db_mb.or(limits.max_db_mb);
        let bar = if std::io::stderr().is_terminal() { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
        let rescanned = match self.rescan {
            true => {
                let privacy = ingest::privacy(&loaded)?;
                Some(rescan::rescan(&mut store, &loaded, &privacy, &mut |done| {
                    bar.set_message(format!("rescanned {done} observations"));
                    bar.tick();
                })?)
            }
            false => None,
        };
        let collected = retention::gc(&mut store, &limits, None, &mut |done| {
            bar.set_message(format!("deleted {done} observations"));
            bar.tick();
        })?;
        bar.finish_and_clear();
        if rescanned.as_ref().is_some_and(|r| r.observations_redacted + r.summaries_redacted > 0) {
            trae_mem::embed::start_after_writing(&loaded.home);
        }
        if self.json {
            let mut json = serde_json::to_value(&collected)?;
            if let Some(rescanned) = &rescanned {
                json["rescan"] = serde_json::to_value(rescanned)?;
            }
            return output::json(&json);
        }
        if let Some(r) = &rescanned {
            println!(
                "rescanned {}: redacted {} and {}; wrote the summaries of {} again",
                output::count(r.observations_scanned, "observation", "observations"),
                output::count(r.observations_redacted, "observation", "observations"),
                output::count(r.summaries_redacted, "summary", "summaries"),
                output::count(r.sessions_resummarized, "session", "sessions"),
            );
        }
        if !limits.is_set() {
            println!("no retention limits are set ([retention] in trae-mem.toml): nothing deleted");
        } else {
            println!(
                "deleted {} ({} by age, {} by size); removed {}",
                output::count(collected.aged_out + collected.over_size, "observation", "observations"),
                collected.aged_out,
                collected.over_size,
                output::count(collected.sessions_removed, "empty session", "empty sessions"),
            );
        }
        println!(
            "database {} → {}",
            trae_mem::text::bytes(collected.bytes_before),
            trae_mem::text::bytes(collected.bytes_after)
        );
        Ok(())
    }
}
