//! The pages that read: live, search, a session, an observation with its
//! timeline, the projects, and a project with what its next session will
//! be told. Private rows never appear: search leaves them out, and the rest
//! is read through the viewer's `reader`, which hides them.

use std::path::Path;
use std::sync::Arc;

use axum::extract::{Path as UrlPath, Query, State};
use axum::response::Html;
use maud::{Markup, html};
use serde::Deserialize;

use super::html::{Nav, by, card, encode, page, project_href, session_heading, session_href, session_label};
use super::{App, PageError, hits, live, reader};
use crate::recall::{self, Reader, SearchRequest};
use crate::store::{Filters, Kind, ListedSession, Observation};
use crate::{config, timefmt};

/// Observations on a freshly opened live page.
const LIVE_FIRST: usize = 50;

/// Hits per search page.
const PAGE_HITS: usize = 20;

/// The characters of each observation a session page shows; its own page
/// shows it whole.
const SESSION_CHARS: usize = 2_000;

/// Minutes before and after an observation that its timeline shows.
const TIMELINE_MINUTES: i64 = 10;

/// The sessions a project page lists.
const PROJECT_SESSIONS: usize = 50;

type Page = Result<Html<String>, PageError>;

/// An empty form field is no filter.
fn given(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

#[derive(Debug, Deserialize)]
pub struct LiveParams {
    project: Option<String>,
}

/// `GET /`: the newest observations, and new ones as hooks record them.
pub async fn live(State(app): State<Arc<App>>, Query(params): Query<LiveParams>) -> Page {
    let project = given(params.project);
    app.with_store(move |app, store| {
        // The stream starts after `newest`, read first: a row recorded in
        // between is then sent as well as shown, never missed (the page
        // drops a card it already has).
        let reader = reader(store);
        let newest = reader.newest_observation_id()?;
        let latest = reader.latest_observations(project.as_deref(), LIVE_FIRST)?;
        let events = match &project {
            Some(project) => format!("/events?after={newest}&project={}", encode(project)),
            None => format!("/events?after={newest}"),
        };
        let body = html! {
            div.bar {
                h1 { "Live" }
                @if let Some(project) = &project {
                    span.filter { "project " a href=(project_href(project)) { (project) } " · " a href="/" { "all projects" } }
                }
                button #pause type="button" { "Pause" }
            }
            @if latest.is_empty() { (empty_notice(app)) }
            div #feed data-events=(events) {
                @for located in &latest {
                    (card(&located.observation, Some(&located.project), Some(live::CARD_CHARS), false))
                }
            }
        };
        Ok(Html(page("Live", Nav::Live, body).into_string()))
    })
    .await
}

/// What an empty store's pages say: how memory gets here.
fn empty_notice(app: &App) -> Markup {
    html! {
        div.notice #empty {
            p { "Nothing recorded yet in " code { (app.loaded.home.display()) } ". New observations appear here as your agents work." }
            p {
                "Give an agent memory: run " code { "trae-mem install claude-code" }
                " in a project (or cursor, codex, gemini, cline, trae), then start the agent there. "
                "To see it work first, run " code { "trae-mem demo" } "."
            }
        }
    }
}

#[derive(Debug, Default, Deserialize)]
pub struct SearchParams {
    #[serde(default)]
    q: String,
    project: Option<String>,
    kind: Option<String>,
    tool: Option<String>,
    since: Option<String>,
    until: Option<String>,
    #[serde(default)]
    offset: usize,
    /// Only the results, for search as you type.
    #[serde(default)]
    fragment: bool,
}

impl SearchParams {
    fn filters(&self) -> Result<Filters, PageError> {
        let time = |t: &Option<String>| given(t.clone()).map(|t| timefmt::parse(&t)).transpose();
        Ok(Filters {
            project: given(self.project.clone()),
            kind: given(self.kind.clone()).as_deref().map(Kind::from),
            tool: given(self.tool.clone()),
            since: time(&self.since).map_err(|e| PageError::bad_request(format!("since: {e:#}")))?,
            until: time(&self.until).map_err(|e| PageError::bad_request(format!("until: {e:#}")))?,
            ..Filters::default()
        })
    }

    /// This search's URL at another offset.
    fn at(&self, offset: usize) -> String {
        let fields = [
            ("q", Some(self.q.clone())),
            ("project", self.project.clone()),
            ("kind", self.kind.clone()),
            ("tool", self.tool.clone()),
            ("since", self.since.clone()),
            ("until", self.until.clone()),
        ];
        let mut url = format!("/search?offset={offset}");
        for (name, value) in fields {
            if let Some(value) = given(value) {
                url.push_str(&format!("&{name}={}", encode(&value)));
            }
        }
        url
    }
}

/// `GET /search`: the CLI's search, with its filters, a page at a time.
pub async fn search(State(app): State<Arc<App>>, Query(params): Query<SearchParams>) -> Page {
    let request = SearchRequest {
        text: params.q.trim().to_owned(),
        filters: params.filters()?,
        limit: PAGE_HITS,
        offset: params.offset,
    };
    app.with_store(move |_, store| {
        let hits = recall::search(store, &request)?;
        let reader = reader(store);
        let list = hits::list(&reader, &hits)?;
        let waiting = recall::meaning::waiting_line(reader.vectors_waiting()?);
        let results = html! {
            @if let Some(waiting) = waiting {
                p.waiting { (waiting) }
            }
            (list)
            nav.pages {
                @if params.offset > 0 {
                    a.prev href=(params.at(params.offset.saturating_sub(PAGE_HITS))) { "← newer hits" }
                }
                @if hits.len() == PAGE_HITS {
                    a.next href=(params.at(params.offset + PAGE_HITS)) { "more hits →" }
                }
            }
        };
        if params.fragment {
            return Ok(Html(results.into_string()));
        }
        let projects = reader.project_names()?;
        let body = html! {
            h1 { "Search" }
            form.search #search action="/search" method="get" {
                input #q type="search" name="q" value=(params.q) placeholder="words, an error, a path…" autofocus;
                select name="project" {
                    option value="" { "every project" }
                    @for project in &projects {
                        option value=(project) selected[params.project.as_deref() == Some(project.as_str())] { (project) }
                    }
                }
                select name="kind" {
                    @for kind in ["", "user", "tool", "response", "error", "decision", "note", "summary"] {
                        option value=(kind) selected[params.kind.as_deref().unwrap_or("") == kind] {
                            @if kind.is_empty() { "every kind" } @else { (kind) }
                        }
                    }
                }
                input type="text" name="tool" value=(params.tool.clone().unwrap_or_default()) placeholder="tool (Bash, Edit…)";
                input type="text" name="since" value=(params.since.clone().unwrap_or_default()) placeholder="since (7d, 2026-11-30)";
                input type="text" name="until" value=(params.until.clone().unwrap_or_default()) placeholder="until";
                button type="submit" { "Search" }
            }
            div #results { (results) }
        };
        Ok(Html(page("Search", Nav::Search, body).into_string()))
    })
    .await
}

/// A public observation, or "not found": a private one is not shown to exist.
pub(super) fn public_observation(reader: &Reader, id: i64) -> Result<Observation, PageError> {
    reader.observation(id)?.ok_or_else(|| PageError::not_found(format!("no observation #{id}")))
}

/// `GET /session/{id}`: its summaries, then its observations in order.
pub async fn session(State(app): State<Arc<App>>, UrlPath(id): UrlPath<String>) -> Page {
    app.with_store(move |_, store| {
        let reader = reader(store);
        let detail = reader.session_detail(&id).map_err(|e| PageError::not_found(format!("{e:#}")))?;
        let session = &detail.session;
        let observations = &detail.observations;
        let facts = reader.facts(&session.id)?;
        let tools: Vec<String> = facts.tool_counts.iter().map(|(tool, n)| format!("{tool} ×{n}")).collect();
        let body = html! {
            div.bar {
                h1 { (session_label(&session.id)) }
                a.danger href={"/forget?session=" (encode(&session.id))} { "Forget this session…" }
            }
            dl.facts {
                dt { "id" } dd { code { (session.id) } }
                dt { "project" } dd { a href=(project_href(&session.project)) { (session.project) } }
                dt { "started" } dd { (timefmt::local_minute(session.started_at)) }
                dt { "ended" } dd { (session.ended_at.map_or("not yet".to_owned(), timefmt::local_minute)) }
                @if let Some(client) = session.meta.get("client").and_then(|c| c.as_str()) {
                    dt { "client" } dd { (client) }
                }
                @if !tools.is_empty() {
                    dt { "tools" } dd { (tools.join(", ")) }
                }
                @if !facts.files.is_empty() {
                    dt { "files" } dd { @for file in &facts.files { code { (file) } " " } }
                }
                @if !facts.failed.is_empty() {
                    dt { "failed" } dd { @for failure in &facts.failed { div { (failure) } } }
                }
            }
            h2 { "Summaries" }
            @if detail.summaries.is_empty() { p.none { "No summary yet." } }
            @for summary in &detail.summaries {
                section.summary {
                    h3 { (summary.level.as_str()) }
                    pre.content { (summary.content) }
                }
            }
            h2 { "Observations (" (observations.len()) ")" }
            @for observation in observations {
                (card(observation, None, Some(SESSION_CHARS), false))
            }
        };
        Ok(Html(page(&session_label(&session.id), Nav::None, body).into_string()))
    })
    .await
}

/// `GET /observation/{id}`: the observation whole, and what happened
/// around it in its session.
pub async fn observation(State(app): State<Arc<App>>, UrlPath(id): UrlPath<i64>) -> Page {
    app.with_store(move |_, store| {
        let reader = reader(store);
        let observation = public_observation(&reader, id)?;
        let timeline = reader.timeline(id, TIMELINE_MINUTES)?.map(|t| t.observations).unwrap_or_default();
        let project = reader.session(&observation.session_id)?.project;
        let body = html! {
            div.bar {
                h1 { "#" (id) }
                a.danger href={"/forget?observation=" (id)} { "Forget #" (id) "…" }
            }
            (card(&observation, Some(&project), None, true))
            h2 { "Timeline: ±" (TIMELINE_MINUTES) " minutes in " a href=(session_href(&observation.session_id)) { (session_label(&observation.session_id)) } }
            @for neighbour in &timeline {
                (card(neighbour, None, Some(live::CARD_CHARS), neighbour.id == id))
            }
        };
        Ok(Html(page(&format!("#{id}"), Nav::None, body).into_string()))
    })
    .await
}

/// `GET /projects`: every project, the busiest first.
pub async fn projects(State(app): State<Arc<App>>) -> Page {
    app.with_store(|app, store| {
        let projects = reader(store).projects()?;
        let body = html! {
            h1 { "Projects" }
            @if projects.is_empty() { (empty_notice(app)) }
            table.list {
                thead { tr { th { "project" } th.num { "sessions" } th.num { "observations" } th { "latest" } } }
                tbody {
                    @for p in &projects {
                        tr {
                            td { a href=(project_href(&p.project)) { (p.project) } }
                            td.num { (p.sessions) }
                            td.num { (p.observations) }
                            td { (p.newest.map(timefmt::local_minute).unwrap_or_default()) }
                        }
                    }
                }
            }
        };
        Ok(Html(page("Projects", Nav::Projects, body).into_string()))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub struct ProjectParams {
    path: String,
}

/// `GET /project?path=P`: its sessions, and the exact context block a
/// session starting there now would be given.
pub async fn project(State(app): State<Arc<App>>, Query(params): Query<ProjectParams>) -> Page {
    app.with_store(move |app, store| {
        let project = params.path;
        // The hook reads the config of the project it runs in: so does this.
        let loaded = match Path::new(&project).is_dir() {
            true => config::load(Path::new(&project), app.home_arg.as_deref()).unwrap_or_else(|_| app.loaded.clone()),
            false => app.loaded.clone(),
        };
        let settings = &loaded.config.context;
        let told = match settings.inject {
            true => crate::recall::context::at_session_start(store, &project, None, settings)?,
            false => None,
        };
        let sessions = reader(store).listed_sessions(Some(&project), PROJECT_SESSIONS)?;
        let body = html! {
            div.bar {
                h1 { (project) }
                a href={"/?project=" (encode(&project))} { "live" }
                a href={"/search?project=" (encode(&project))} { "search" }
            }
            h2 { "What the next session will be told" }
            @match &told {
                Some(context) => pre.context #context { (context) },
                None if !settings.inject => p.none { "Nothing: [context] inject is off for this project." },
                None => p.none { "Nothing yet: no session here has recorded anything." },
            }
            h2 { "Sessions" }
            table.list {
                thead { tr { th { "session" } th { "started" } th { "ended" } th.num { "observations" } } }
                tbody {
                    @for listed in &sessions { (session_row(listed)) }
                }
            }
        };
        Ok(Html(page(&project, Nav::Projects, body).into_string()))
    })
    .await
}

/// A session in a project's list, named by what it began with (its id
/// beside it), and whose it is when a teammate's.
fn session_row(listed: &ListedSession) -> Markup {
    let s = &listed.session;
    let author = s.meta.get("author").and_then(|a| a.as_str());
    html! {
        tr {
            td {
                a href=(session_href(&s.id)) { (session_heading(listed).unwrap_or_else(|| session_label(&s.id))) }
                div.meta { span.ref { (session_label(&s.id)) } (by(author)) }
            }
            td { (timefmt::local_minute(s.started_at)) }
            td { (s.ended_at.map(timefmt::local_minute).unwrap_or_default()) }
            td.num { (s.observations) }
        }
    }
}
