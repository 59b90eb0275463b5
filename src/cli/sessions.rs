//! `trae-mem sessions`: the sessions in memory.

use anyhow::Result;
use clap::Args;

use super::output::{self, Style, plain, styled};
use super::{Env, project_arg};
use trae_mem::store::Session;
use trae_mem::timefmt;

/// List sessions, newest first.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Only this project: a directory (resolved to its repository) or a stored project path.
    #[arg(long, value_name = "PATH")]
    project: Option<String>,
    /// The most sessions.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print JSON: [{id, project, started_at, ended_at, meta, observations}].
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (_, store) = env.open_to_read()?;
        let project = project_arg(self.project.as_deref())?;
        let reader = super::reader(&store);
        let sessions = reader.sessions(project.as_deref(), self.limit)?;
        if self.json {
            return output::json(&sessions);
        }
        if sessions.is_empty() {
            let others = reader.project_names()?.len();
            match project {
                Some(project) if others > 0 => eprintln!(
                    "project {project} has no sessions; {} other project{} {} (`trae-mem sessions` lists them all)",
                    others,
                    if others == 1 { "" } else { "s" },
                    if others == 1 { "has some" } else { "have some" }
                ),
                Some(project) => eprintln!("project {project} has no sessions, nor does any other yet"),
                None => eprintln!("no sessions yet: `trae-mem demo` records one"),
            }
            return Ok(());
        }
        let colour = output::colour();
        let mut table = output::Table::new();
        // A teammate's session (team sync) says whose it is.
        let author = |s: &Session| s.meta.get("author").and_then(|a| a.as_str()).map(str::to_owned);
        let shared = sessions.iter().any(|s| author(s).is_some());
        let mut header = vec![
            styled("SESSION", Style::Bold),
            styled("STARTED", Style::Bold),
            styled("STATE", Style::Bold),
            styled("OBS", Style::Bold),
            styled("CLIENT", Style::Bold),
        ];
        if shared {
            header.push(styled("BY", Style::Bold));
        }
        header.push(styled("PROJECT", Style::Bold));
        table.row(header);
        for s in &sessions {
            let state = match s.ended_at {
                Some(end) => format!("ended {}", timefmt::local_clock(end)),
                None => "open".to_owned(),
            };
            let mut row = vec![
                styled(s.id[..8].to_owned(), Style::Cyan),
                plain(timefmt::local_minute(s.started_at)),
                plain(state),
                plain(s.observations.to_string()),
                plain(s.meta.get("client").and_then(|c| c.as_str()).unwrap_or("-").to_owned()),
            ];
            if shared {
                row.push(plain(author(s).unwrap_or_else(|| "you".to_owned())));
            }
            row.push(plain(s.project.clone()));
            table.row(row);
        }
        table.print(colour)
    }
}
