//! `trae-mem show`: one session, or one observation, in full.

use anyhow::{Result, bail};
use clap::Args;

use super::Env;
use super::output::{self, Style, paint};
use trae_mem::timefmt;

/// Print one session, or one observation, in full.
///
/// A session: its facts, its summaries and every observation (private ones as [PRIVATE]).
/// `#42` (as `search` prints ids): observation 42, whole.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The session's id, or the start of it (as `trae-mem sessions` shows); or #ID for an observation.
    session: String,
    /// Print JSON: {session, summaries: [{session_id, level, created_at, content}], observations: [...]};
    /// for #ID, the observation: {id, session_id, ts, kind, tool, content, private, tags}.
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, store) = env.open_to_read()?;
        let reader = super::reader(&store);
        if self.session.starts_with('#') {
            let id = output::observation_id(&self.session).map_err(anyhow::Error::msg)?;
            return self.observation(&reader, id);
        }
        let detail = reader.session_detail(&self.session)?;
        if self.json {
            return output::json(&detail);
        }
        let c = output::colour();
        let s = &detail.session;
        println!("{} {}", paint("session", Style::Bold, c), paint(&s.id, Style::Cyan, c));
        println!("  project  {}", s.project);
        println!("  started  {}", timefmt::local_minute(s.started_at));
        if let Some(end) = s.ended_at {
            println!("  ended    {}", timefmt::local_minute(end));
        }
        if s.meta.as_object().is_some_and(|m| !m.is_empty()) {
            println!("  meta     {}", s.meta);
        }
        for summary in &detail.summaries {
            println!("\n{}", paint(&format!("{} summary", summary.level.as_str()), Style::Bold, c));
            for line in summary.content.lines() {
                println!("  {line}");
            }
        }
        println!("\n{} ({})", paint("observations", Style::Bold, c), detail.observations.len());
        let mut table = output::Table::new();
        for obs in &detail.observations {
            table.row(vec![
                output::styled(format!("#{}", obs.id), Style::Cyan),
                output::styled(timefmt::local_clock(obs.ts), Style::Dim),
                output::plain(obs.kind.to_string()),
                output::plain(obs.tool.clone().unwrap_or_default()),
                output::plain(output::one_line(&obs.content, 120)),
            ]);
        }
        table.print(c)
    }

    /// Prints observation `id` whole, with the session it belongs to.
    fn observation(&self, reader: &trae_mem::recall::Reader, id: i64) -> Result<()> {
        let Some(obs) = reader.observation(id)? else {
            bail!("no observation has id {id}; `trae-mem search` shows ids");
        };
        if self.json {
            return output::json(&obs);
        }
        let c = output::colour();
        println!("{} {}", paint("observation", Style::Bold, c), paint(&format!("#{}", obs.id), Style::Cyan, c));
        println!("  session  {}", obs.session_id);
        println!("  time     {}", timefmt::local_minute(obs.ts));
        println!("  kind     {}", obs.kind);
        if let Some(tool) = &obs.tool {
            println!("  tool     {tool}");
        }
        if !obs.tags.is_empty() {
            println!("  tags     {}", obs.tags.join(", "));
        }
        println!();
        println!("{}", obs.content);
        Ok(())
    }
}
