//! `trae-mem stats`: what the store holds and how big it is.

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::Env;
use super::output::{self, Style, plain, styled};
use trae_mem::config::Retention;
use trae_mem::forget::retention;
use trae_mem::ingest::Spool;
use trae_mem::store::{QueueCounts, Stats};
use trae_mem::summarize::queue;
use trae_mem::timefmt;

/// Show what memory holds and how big it is.
///
/// The memory's size on disk (the database with its write-ahead log), each file's and the
/// full-text index's; observations and sessions by project and kind; the oldest and newest; what
/// waits in the spool; when gc last finished; the sessions waiting for a language model's
/// summaries, and the tokens spent on them today.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Print JSON: the store's figures (size_bytes, and each of its files with its path and size),
    /// plus spooled, dead_letters, gc_finished_at, retention and model_summaries.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Output<'a> {
    #[serde(flatten)]
    store: &'a Stats,
    spooled: usize,
    dead_letters: usize,
    gc_finished_at: Option<i64>,
    retention: RetentionOutput,
    model_summaries: ModelSummaries,
}

/// The queue of sessions waiting for a language model, and its budget.
#[derive(Serialize)]
struct ModelSummaries {
    #[serde(flatten)]
    queue: QueueCounts,
    max_tokens_per_day: u64,
}

#[derive(Serialize)]
struct RetentionOutput {
    max_age_days: Option<u32>,
    max_db_mb: Option<u64>,
    keep_summaries: bool,
}

impl From<&Retention> for RetentionOutput {
    fn from(r: &Retention) -> Self {
        Self { max_age_days: r.max_age_days, max_db_mb: r.max_db_mb, keep_summaries: r.keep_summaries }
    }
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, store) = env.open_to_read()?;
        let stats = super::reader(&store).stats()?;
        let spool = Spool::new(&loaded.home);
        let out = Output {
            store: &stats,
            spooled: spool.pending()?.len(),
            dead_letters: spool.dead_letters()?.len(),
            gc_finished_at: retention::last_finished(&store)?,
            retention: (&loaded.config.retention).into(),
            model_summaries: ModelSummaries {
                queue: queue::counts(&store)?,
                max_tokens_per_day: loaded.config.summarize.max_tokens_per_day,
            },
        };
        if self.json {
            return output::json(&out);
        }
        let colour = output::colour();
        let when = |ms: Option<i64>| ms.map_or_else(|| "-".to_owned(), timefmt::local_minute);
        let bytes = trae_mem::text::bytes;
        println!("{}", store.path().display());
        // The log may hold most of what was stored until a checkpoint
        // copies it in: the memory's size is all its files'.
        println!(
            "  {} on disk ({} in use, full-text index {})",
            bytes(stats.size_bytes),
            bytes(stats.used_bytes),
            bytes(stats.index_bytes)
        );
        let files: Vec<String> = [("database", stats.db_bytes), ("write-ahead log", stats.wal_bytes)]
            .into_iter()
            .chain((stats.shm_bytes > 0).then_some(("shared memory", stats.shm_bytes)))
            .map(|(file, size)| format!("{file} {}", bytes(size)))
            .collect();
        println!("  {}", files.join(", "));
        println!(
            "  {}, {} ({} private), {}, {}",
            output::count(stats.sessions, "session", "sessions"),
            output::count(stats.observations, "observation", "observations"),
            stats.private_observations,
            output::count(stats.summaries, "summary", "summaries"),
            output::count(stats.tombstones, "tombstone", "tombstones"),
        );
        println!("  oldest {}, newest {}", when(stats.oldest), when(stats.newest));
        println!(
            "  search by meaning: {}, {} waiting (`trae-mem embed`){}",
            output::count(stats.vectors.embedded, "vector", "vectors"),
            stats.vectors.pending,
            stats.vector_model.as_ref().map(|m| format!(", model {m}")).unwrap_or_default()
        );
        println!("  spool: {} waiting, {} dead letters", out.spooled, out.dead_letters);
        let model = &out.model_summaries;
        if model.queue != QueueCounts::default() {
            let budget = match model.queue.over_budget {
                0 => String::new(),
                n => format!(" ({n} over [summarize] max_tokens_per_day until tomorrow)"),
            };
            let failed = match model.queue.failed_tokens_today {
                0 => String::new(),
                n => format!(" ({n} for failed requests)"),
            };
            println!(
                "  summaries by a model: {} done, {} waiting{budget}, {} given up; {} of {} tokens spent today{failed}",
                model.queue.done,
                model.queue.pending,
                model.queue.given_up,
                model.queue.tokens_today,
                model.max_tokens_per_day
            );
            if let Some(error) = &model.queue.last_error {
                println!("  last error: {}", trae_mem::text::clip(error, 300));
            }
        }
        let limits = &loaded.config.retention;
        let retention = match (limits.max_age_days, limits.max_db_mb) {
            (None, None) => "off".to_owned(),
            (age, size) => format!(
                "max_age_days {}, max_db_mb {}",
                age.map_or("-".to_owned(), |d| d.to_string()),
                size.map_or("-".to_owned(), |m| m.to_string())
            ),
        };
        println!("  retention: {retention}; gc last finished {}", when(out.gc_finished_at));
        println!();
        let mut table = output::Table::new();
        table.row(vec![
            styled("PROJECT", Style::Bold),
            styled("SESSIONS", Style::Bold),
            styled("OBS", Style::Bold),
            styled("OLDEST", Style::Bold),
            styled("NEWEST", Style::Bold),
        ]);
        for p in &stats.projects {
            table.row(vec![
                plain(p.project.clone()),
                plain(p.sessions.to_string()),
                plain(p.observations.to_string()),
                plain(when(p.oldest)),
                plain(when(p.newest)),
            ]);
        }
        table.print(colour)?;
        println!();
        let mut kinds = output::Table::new();
        kinds.row(vec![styled("KIND", Style::Bold), styled("OBS", Style::Bold)]);
        for k in &stats.kinds {
            kinds.row(vec![plain(k.kind.clone()), plain(k.observations.to_string())]);
        }
        kinds.print(colour)
    }
}
