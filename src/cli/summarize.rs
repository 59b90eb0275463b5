//! `trae-mem summarize`: summarize a session again.

use anyhow::{Result, bail};
use clap::Args;

use super::Env;
use trae_mem::hooks::record;
use trae_mem::store::now_ms;

/// Summarize a session again, replacing its summaries.
///
/// Useful after a summarizer change, or for a session that never ended.
/// Prints the new summaries.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The session's id, or the start of it.
    session: String,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, mut store) = env.open()?;
        let session = store.session(&self.session)?;
        if !store.write(|w| record::summarize_session(w, &session.id, now_ms()))? {
            bail!("session {} has nothing public to summarize", session.id);
        }
        for summary in store.summaries(&session.id)? {
            println!("{} summary:\n{}\n", summary.level.as_str(), summary.content);
        }
        Ok(())
    }
}
