//! `trae-mem summarize`: summarize a session again.

use anyhow::{Result, bail};
use clap::Args;

use super::Env;
use trae_mem::store::now_ms;
use trae_mem::summarize;

/// Summarize a session again, replacing its summaries.
///
/// Useful after a summarizer change, or for a session that never ended. Uses the configured
/// summarizer (`[summarize] summarizer`), as a SessionEnd hook does, falling back on the built-in
/// one. Prints who wrote them, then the new summaries.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The session's id, or the start of it.
    session: String,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, mut store) = env.open()?;
        let session = store.session(&self.session)?;
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
        Ok(())
    }
}
