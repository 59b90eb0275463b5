//! `trae-mem timeline`: what happened around one observation.

use anyhow::{Result, bail};
use clap::Args;

use super::Env;
use super::output::{self, Style, plain, styled};
use trae_mem::timefmt;

/// Show what happened around one observation.
///
/// Lists the observations of the same session within a window around it, in order.
/// Find ids with `trae-mem search`.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The observation's id, as search prints it: 42 or #42.
    #[arg(value_parser = output::observation_id)]
    id: i64,
    /// Minutes before and after it.
    #[arg(long, default_value_t = 10)]
    window: i64,
    /// Print JSON: {anchor, session_id, window_minutes, observations: [{id, session_id, ts, kind, tool, content, private, tags}]}.
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, store) = env.open_to_read()?;
        let Some(timeline) = super::reader(&store).timeline(self.id, self.window)? else {
            bail!("no observation has id {}; `trae-mem search` shows ids", self.id);
        };
        if self.json {
            return output::json(&timeline);
        }
        let colour = output::colour();
        let mut table = output::Table::new();
        for obs in &timeline.observations {
            let marker = if obs.id == timeline.anchor { styled("▶", Style::Yellow) } else { plain(" ") };
            table.row(vec![
                marker,
                styled(format!("#{}", obs.id), Style::Cyan),
                styled(timefmt::local_clock(obs.ts), Style::Dim),
                plain(obs.kind.to_string()),
                plain(obs.tool.clone().unwrap_or_default()),
                plain(output::one_line(&obs.content, 120)),
            ]);
        }
        table.print(colour)
    }
}
