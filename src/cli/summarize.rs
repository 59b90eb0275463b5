//! `trae-mem summarize`: summarize a session again, or run the queue of
//! sessions waiting for a language model's summaries.

use std::io::IsTerminal;

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::ProgressBar;

use super::{Env, output};
use trae_mem::background;
use trae_mem::store::now_ms;
use trae_mem::summarize::{self, queue};

/// Summarize a session again, or the sessions waiting for a language model.
///
/// With a session id: summarizes it with the configured summarizer (`[summarize] summarizer`), as
/// a SessionEnd hook does, falling back on the built-in one, and prints who wrote them, then the
/// new summaries. A summarizer granted HTTP endpoints (a language model) only queues it.
///
/// With `--pending`: asks the model for each queued session that is due, within
/// `[summarize] max_tokens_per_day`, with progress. Hooks start this in the background after
/// SessionEnd; `trae-mem stats` shows the queue, the tokens spent today and the last error.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The session's id, or the start of it.
    #[arg(required_unless_present = "pending", conflicts_with = "pending")]
    session: Option<String>,
    /// Run the queue of sessions waiting for a language model's summaries.
    #[arg(long)]
    pending: bool,
    /// With --pending: try sessions waiting out a pause after a failure now.
    #[arg(long, requires = "pending")]
    now: bool,
    /// With --pending: print JSON, one object per session, then the queue.
    #[arg(long, requires = "pending")]
    json: bool,
    /// Run as the hooks' background worker: quietly, and not beside another.
    #[arg(long, hide = true, requires = "pending")]
    background: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        match &self.session {
            Some(session) => again(env, session),
            None => self.pending(env),
        }
    }

    fn pending(&self, env: &Env) -> Result<()> {
        let (loaded, mut store) = env.open()?;
        let path = queue::lock_path(&loaded.home);
        let mut lock = background::open_lock(&path)?;
        if lock.try_lock().is_err() {
            if self.background {
                // The running worker takes what was queued since it began.
                return Ok(());
            }
            eprintln!("waiting for the `trae-mem summarize --pending` that is running in {}", loaded.home.display());
            background::wait_for_lock(&lock).with_context(|| format!("cannot lock {}", path.display()))?;
        }
        if self.now {
            queue::all_due_now(&store)?;
        }
        let waiting = queue::counts(&store)?.pending;
        let show = !self.background && !self.json && std::io::stderr().is_terminal();
        let bar = if show { ProgressBar::new(waiting) } else { ProgressBar::hidden() };
        let quiet = self.background || self.json;
        let mut outcomes = Vec::new();
        loop {
            outcomes.extend(queue::run(&mut store, &loaded.home, &mut |outcome| {
                bar.inc(1);
                if !quiet {
                    bar.suspend(|| println!("{}", describe(outcome)));
                }
            })?);
            // A session queued after the last look, whose hook found this
            // run holding the lock and left it the work, is taken now. The
            // lock is let go by closing the file: an explicit unlock fails
            // where Windows' locks are emulated (Wine).
            drop(lock);
            if !queue::any_due(&store)? {
                break;
            }
            lock = background::open_lock(&path)?;
            if lock.try_lock().is_err() {
                break;
            }
        }
        bar.finish_and_clear();
        let counts = queue::counts(&store)?;
        if self.json {
            return output::json(&serde_json::json!({"sessions": outcomes, "queue": counts}));
        }
        if !self.background {
            println!(
                "{} summarized by a model; {} waiting, {} given up; {} tokens spent today",
                output::count(
                    outcomes.iter().filter(|o| matches!(o, queue::Outcome::Summarized { .. })).count() as u64,
                    "session",
                    "sessions"
                ),
                counts.pending,
                counts.given_up,
                counts.tokens_today,
            );
        }
        Ok(())
    }
}

fn describe(outcome: &queue::Outcome) -> String {
    let when = |ms: i64| trae_mem::timefmt::local_minute(ms);
    match outcome {
        queue::Outcome::Summarized { session_id, by, tokens, learnings } => {
            format!("{session_id}: summarized by {by} ({tokens} tokens, {learnings} learnings)")
        }
        queue::Outcome::Failed { session_id, error, retry_at, charged } => {
            let charged = match charged {
                0 => String::new(),
                n => format!(" ({n} tokens charged: the server had the request)"),
            };
            match retry_at {
                Some(at) => format!("{session_id}: failed{charged}, tried again after {}: {error}", when(*at)),
                None => format!(
                    "{session_id}: failed{charged} {} times, left alone (its built-in summaries stand): {error}",
                    queue::MAX_TRIES
                ),
            }
        }
        queue::Outcome::OverBudget { session_id, until } => {
            format!("{session_id}: over [summarize] max_tokens_per_day; waits until {}", when(*until))
        }
    }
}

fn again(env: &Env, session: &str) -> Result<()> {
    let (loaded, mut store) = env.open()?;
    let session = super::reader(&store).session(session)?;
    let (summaries, summarized) = summarize::again(&mut store, &loaded, &session.id, now_ms())?;
    if !summarized.written {
        bail!("session {} has nothing public to summarize", session.id);
    }
    if let Some(warning) = &summarized.warning {
        eprintln!("trae-mem: warning: {warning}");
    }
    println!("summarized by {}\n", summarized.by);
    for summary in summaries {
        println!("{} summary:\n{}\n", summary.level.as_str(), summary.content);
    }
    if summarized.queued {
        println!("queued for the model's summaries: run `trae-mem summarize --pending`");
    }
    Ok(())
}
