//! `trae-mem forget`: delete memory for good.

use std::io::IsTerminal;

use anyhow::{Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use super::output::{self, Style, plain, styled};
use super::{Env, project_arg};
use trae_mem::forget::{self, Forgotten, Plan};
use trae_mem::store::{Filters, Kind, Selection, Store};
use trae_mem::timefmt;

/// Forget observations, sessions or whole projects: delete them for good.
///
/// Select by observation ids, or by any of the filters below (all given must hold). What goes:
/// the observations and their full-text index entries; the summaries that quoted them, written
/// again from what remains (or removed when nothing does); sessions left empty, with their client
/// keys; spooled events of the sessions removed. The bytes go too: deleted content is zeroed,
/// free pages leave the file, and the write-ahead log is emptied, so no copy stays in
/// trae-mem.db, -wal or -shm. Each deletion leaves a tombstone (a hash, not the text), so that
/// importing an older export does not bring it back.
///
/// Not covered: copies outside the store, such as exports and backups you made.
///
/// Forgetting more than one observation asks first; without a terminal, it needs --yes.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Observation ids, as search and timeline show them (`#42` or `42`).
    ids: Vec<String>,
    /// Only this session (its id, or the start of it): alone, the whole session.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Only this project (a directory, or a stored project path): alone, the whole project.
    #[arg(long, value_name = "PATH")]
    project: Option<String>,
    /// Only observations from before this time: 2026-11-30, "2026-11-30 14:00", RFC 3339, or an
    /// age (90d, 12h).
    #[arg(long, value_name = "TIME")]
    before: Option<String>,
    /// Only this kind: user, tool, note, response, decision, error, ...
    #[arg(long)]
    kind: Option<String>,
    /// Only this tool, such as Bash or Edit.
    #[arg(long)]
    tool: Option<String>,
    /// Only observations holding every term of this text, matched as search matches them (but
    /// never by synonym). Private observations are not searchable, so a query never finds them.
    #[arg(long, value_name = "TEXT")]
    query: Option<String>,
    /// List what would be forgotten, with counts, and forget nothing.
    #[arg(long)]
    dry_run: bool,
    /// Do not ask: needed to forget more than one observation without a terminal.
    #[arg(long, short = 'y')]
    yes: bool,
    /// Print JSON: with --dry-run {dry_run, observations, sessions, ids, session_ids}; otherwise
    /// {observations, sessions_removed, sessions_resummarized, spooled_dropped}.
    #[arg(long)]
    json: bool,
}

/// What a dry run prints as JSON.
#[derive(Serialize)]
struct DryRun<'a> {
    dry_run: bool,
    observations: usize,
    sessions: usize,
    ids: &'a [i64],
    session_ids: &'a [String],
}

/// Observations a dry run lists before it only counts.
const LISTED: usize = 20;

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, mut store) = env.open_existing()?;
        let selection = self.selection(&store)?;
        if selection.is_empty() {
            bail!(
                "name what to forget: observation ids, or --session, --project, --before, --kind, --tool or --query \
                 (`trae-mem forget --help`)"
            );
        }
        let plan = forget::plan(&store, &selection)?;
        if self.dry_run {
            return self.show_plan(&store, &plan);
        }
        if plan.observations.is_empty() && plan.sessions.is_empty() {
            return self.report(&Forgotten::default());
        }
        self.confirm(&plan)?;
        let bar = progress_bar(plan.observations.len() as u64);
        let forgotten = forget::carry_out(&mut store, &loaded, &plan, &mut |done| bar.set_position(done))?;
        bar.finish_and_clear();
        if forgotten.sessions_resummarized > 0 {
            trae_mem::embed::start_after_writing(&loaded.home);
        }
        self.report(&forgotten)
    }

    fn selection(&self, store: &Store) -> Result<Selection> {
        let ids = self
            .ids
            .iter()
            .map(|id| output::observation_id(id).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        let session = self.session.as_deref().map(|s| super::reader(store).session(s).map(|s| s.id)).transpose()?;
        Ok(Selection {
            ids,
            filters: Filters {
                project: project_arg(self.project.as_deref())?,
                session,
                kind: self.kind.as_deref().map(Kind::from),
                tool: self.tool.clone(),
                until: self.before.as_deref().map(timefmt::parse).transpose()?,
                ..Filters::default()
            },
            query: self.query.clone(),
        })
    }

    /// Asks before forgetting more than one observation, or whole sessions.
    fn confirm(&self, plan: &Plan) -> Result<()> {
        let many = plan.observations.len() > 1 || !plan.sessions.is_empty();
        if self.yes || !many {
            return Ok(());
        }
        output::confirm("forget", &describe(plan))
    }

    fn show_plan(&self, store: &Store, plan: &Plan) -> Result<()> {
        if self.json {
            return output::json(&DryRun {
                dry_run: true,
                observations: plan.observations.len(),
                sessions: plan.sessions.len(),
                ids: &plan.observations,
                session_ids: &plan.sessions,
            });
        }
        println!("would forget {}", describe(plan));
        let colour = output::colour();
        let mut table = output::Table::new();
        let listed = &plan.observations[..plan.observations.len().min(LISTED)];
        for obs in super::reader(store).observations(listed)? {
            table.row(vec![
                styled(format!("#{}", obs.id), Style::Cyan),
                styled(timefmt::local_minute(obs.ts), Style::Dim),
                plain(obs.kind.to_string()),
                plain(output::one_line(&obs.content, 80)),
            ]);
        }
        table.print(colour)?;
        if plan.observations.len() > LISTED {
            println!("… and {} more", plan.observations.len() - LISTED);
        }
        Ok(())
    }

    fn report(&self, forgotten: &Forgotten) -> Result<()> {
        if self.json {
            return output::json(forgotten);
        }
        if forgotten.observations == 0 && forgotten.sessions_removed == 0 {
            println!("nothing matches: nothing was forgotten");
            return Ok(());
        }
        println!(
            "forgot {}; removed {}; summarized {} again from what remains",
            output::count(forgotten.observations, "observation", "observations"),
            output::count(forgotten.sessions_removed, "session", "sessions"),
            output::count(forgotten.sessions_resummarized, "session", "sessions"),
        );
        if forgotten.spooled_dropped > 0 {
            println!(
                "dropped {} waiting in the spool",
                output::count(forgotten.spooled_dropped as u64, "event", "events")
            );
        }
        Ok(())
    }
}

fn describe(plan: &Plan) -> String {
    let observations = output::count(plan.observations.len() as u64, "observation", "observations");
    if plan.sessions.is_empty() {
        observations
    } else {
        format!("{observations} and {} whole", output::count(plan.sessions.len() as u64, "session", "sessions"))
    }
}

/// A progress bar on stderr, hidden when stderr is not a terminal.
fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() || total < 1000 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{spinner} forgetting {bar:40} {pos}/{len} ({per_sec}, {eta})")
            .expect("the template is valid"),
    );
    bar
}
