//! Tools that give memory back: search, timeline, observations by id, and
//! the context block. Private rows never appear: search skips them, and the
//! others read with `Private::Hidden`.

use rmcp::schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Memory, Spec, ToolDef, ToolError, in_range, rfc3339};
use crate::config::ContextSettings;
use crate::recall::context;
use crate::recall::fuse::FoundBy;
use crate::recall::{self, SearchRequest};
use crate::store::{Filters, Kind};
use crate::text::clip;
use crate::timefmt;

/// The characters of each timeline entry's excerpt.
const EXCERPT_CHARS: usize = 300;

pub(super) fn definitions() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            Spec {
                name: "trae_mem_search",
                title: "Search memory",
                description: "Search the memory of past coding sessions (prompts, tool calls, answers, decisions, errors, notes) by words. Use it when a task touches something that may have come up before: an error message, a file, a decision. Ask as you would a colleague, in English or Chinese, or paste an identifier, path or error: hits holding every term come first, then hits holding the rarest terms; words are matched in their other forms and common synonyms, identifiers and paths as written, ignoring case; \"quoted text\" must appear as written; an empty query lists the newest observations. Session summaries are hits of kind summary. Returns a compact index (id, session_id, time, kind, tool, snippet, score, matched terms), not full content. Next: trae_mem_get_observations with the ids worth reading in full, or trae_mem_timeline with one id to see what happened around it.",
                example: r#"{"query": "database is locked", "project": "/home/me/app", "limit": 10}"#,
                read_only: true,
            },
            search,
        ),
        ToolDef::new(
            Spec {
                name: "trae_mem_timeline",
                title: "What happened around an observation",
                description: "Show what happened around one observation: the observations of its session within window_minutes before and after it, in order, each as a short excerpt. Use it after trae_mem_search, when a hit needs its context (what led to an error, what followed a decision). Next: trae_mem_get_observations for the full text of the entries that matter.",
                example: r#"{"id": 42, "window_minutes": 10}"#,
                read_only: true,
            },
            timeline,
        ),
        ToolDef::new(
            Spec {
                name: "trae_mem_get_observations",
                title: "Read observations in full",
                description: "Fetch observations in full by id, as found with trae_mem_search or trae_mem_timeline. Use it for the few ids worth reading whole: it returns complete content, so ask only for what you need. Ids that do not exist are listed in `missing`.",
                example: r#"{"ids": [42, 43]}"#,
                read_only: true,
            },
            get_observations,
        ),
        ToolDef::new(
            Spec {
                name: "trae_mem_inject",
                title: "Memory for a project",
                description: "Get the memory block for a project: the brief summaries of its latest sessions, most recently active first, ended or not (the same context a hook injects at session start), led by the best search hits for `query` when one is given, all within budget_chars. Use it once at the start of a task, with the task as the query. `context` is null when the project has no memory yet. Next: trae_mem_search for anything it mentions that needs more detail.",
                example: r#"{"project": "/home/me/app", "query": "flaky import test", "budget_chars": 4000}"#,
                read_only: true,
            },
            inject,
        ),
    ]
}

/// Arguments of trae_mem_search.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct SearchInput {
    /// What to find: a question, words, identifiers or paths; hits with every term come first; "quoted text" must appear as written. Empty lists the newest observations.
    #[serde(default)]
    query: String,
    /// Only this project: a directory (resolved to its git repository) or a stored project path. Default: every project.
    project: Option<String>,
    /// Only this session (its id).
    session: Option<String>,
    /// Only this kind: user, tool, note, response, decision, error, ...
    kind: Option<String>,
    /// Only this tool, such as Bash or Edit.
    tool: Option<String>,
    /// Only from this time on: 2026-11-30, "2026-11-30 14:00", RFC 3339, or an age (30m, 12h, 7d).
    since: Option<String>,
    /// Only before this time (same forms as since).
    until: Option<String>,
    /// Only memories pulled from this teammate by trae-mem sync: user@device, or the user alone.
    author: Option<String>,
    /// The most hits, 1 to 100. Default: 20.
    #[schemars(range(min = 1, max = 100))]
    limit: Option<usize>,
    /// Hits to skip, for paging. Default: 0.
    offset: Option<usize>,
}

/// Hits of trae_mem_search, best first.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct SearchOutput {
    query: String,
    /// Memories that have no vector yet: search finds them by their words
    /// alone until the background embed reaches them.
    waiting_for_vectors: u64,
    /// Says so in a sentence, with the command that gives them their vectors; absent when none wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    hits: Vec<Hit>,
}

/// One search hit: enough to decide whether to look closer.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Hit {
    /// The observation's id, for trae_mem_timeline and trae_mem_get_observations; null for a session's summary.
    id: Option<i64>,
    /// The session it belongs to.
    session_id: String,
    /// When it was recorded (RFC 3339, UTC).
    time: String,
    /// user, tool, note, response, decision, error, ..., or summary.
    kind: String,
    tool: Option<String>,
    /// For a summary: brief or detailed.
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<String>,
    /// An excerpt, with the matches between « and ».
    snippet: String,
    /// Relevance, higher is better; 0 without a query.
    score: f64,
    /// The query's terms this hit holds (a synonym found stands for its term).
    matched: Vec<String>,
    /// What found it: "words" (it holds the query's terms), "meaning" (it says
    /// something alike in other words) or "both"; absent without a query.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    found_by: Option<FoundBy>,
    /// The teammate it was pulled from by trae-mem sync; absent for one's own memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    author: Option<String>,
}

fn search(memory: &Memory, input: SearchInput) -> Result<SearchOutput, ToolError> {
    let time = |name: &str, text: Option<&str>| {
        text.map(timefmt::parse).transpose().map_err(|err| ToolError(format!("{name}: {err:#}")))
    };
    let filters = Filters {
        project: input.project.as_deref().map(|p| memory.project(Some(p))).transpose()?,
        session: input.session,
        exclude_session: None,
        kind: input.kind.as_deref().map(Kind::from),
        tool: input.tool,
        author: input.author,
        since: time("since", input.since.as_deref())?,
        until: time("until", input.until.as_deref())?,
    };
    let request = SearchRequest {
        text: input.query.clone(),
        filters,
        limit: in_range("limit", input.limit.unwrap_or(20), 1..=100)?,
        offset: input.offset.unwrap_or(0),
    };
    let store = memory.store();
    let hits = recall::search(&store, &request)?;
    let waiting = super::reader(&store).vectors_waiting()?;
    Ok(SearchOutput {
        query: input.query,
        waiting_for_vectors: waiting,
        note: recall::meaning::waiting_line(waiting),
        hits: hits
            .into_iter()
            .map(|hit| Hit {
                id: hit.id,
                session_id: hit.session_id,
                time: rfc3339(hit.ts),
                kind: hit.kind.to_string(),
                tool: hit.tool,
                level: hit.level.map(|l| l.as_str().to_owned()),
                snippet: hit.snippet,
                score: hit.score,
                matched: hit.matched,
                found_by: hit.found_by,
                author: hit.author,
            })
            .collect(),
    })
}

/// Arguments of trae_mem_timeline.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct TimelineInput {
    /// The observation's id, from trae_mem_search.
    id: i64,
    /// Minutes before and after it, 0 to 1440. Default: 10.
    #[schemars(range(min = 0, max = 1440))]
    window_minutes: Option<usize>,
}

/// The observations around one, in order.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct TimelineOutput {
    /// The observation asked about.
    anchor: i64,
    session_id: String,
    window_minutes: usize,
    observations: Vec<Entry>,
}

/// One observation of a timeline, in short.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct Entry {
    id: i64,
    /// When it was recorded (RFC 3339, UTC).
    time: String,
    kind: String,
    tool: Option<String>,
    /// The start of its content; trae_mem_get_observations has all of it.
    excerpt: String,
}

fn timeline(memory: &Memory, input: TimelineInput) -> Result<TimelineOutput, ToolError> {
    let window = in_range("window_minutes", input.window_minutes.unwrap_or(10), 0..=1440)?;
    let Some(timeline) = super::reader(&memory.store()).timeline(input.id, window as i64)? else {
        return Err(ToolError(format!("no observation has id {}; take ids from trae_mem_search", input.id)));
    };
    Ok(TimelineOutput {
        anchor: timeline.anchor,
        session_id: timeline.session_id,
        window_minutes: window,
        observations: timeline
            .observations
            .into_iter()
            .map(|obs| Entry {
                id: obs.id,
                time: rfc3339(obs.ts),
                kind: obs.kind.to_string(),
                tool: obs.tool,
                excerpt: clip(&obs.content, EXCERPT_CHARS),
            })
            .collect(),
    })
}

/// Arguments of trae_mem_get_observations.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct GetObservationsInput {
    /// The observations' ids, 1 to 50 of them, from trae_mem_search or trae_mem_timeline.
    #[schemars(length(min = 1, max = 50))]
    ids: Vec<i64>,
}

/// Observations in full, in the order asked.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct GetObservationsOutput {
    observations: Vec<FullObservation>,
    /// Ids asked for that no observation has.
    missing: Vec<i64>,
}

/// One observation, all of it.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct FullObservation {
    id: i64,
    session_id: String,
    /// When it was recorded (RFC 3339, UTC).
    time: String,
    kind: String,
    tool: Option<String>,
    content: String,
    tags: Vec<String>,
}

fn get_observations(memory: &Memory, input: GetObservationsInput) -> Result<GetObservationsOutput, ToolError> {
    in_range("the number of ids", input.ids.len(), 1..=50)?;
    let found = super::reader(&memory.store()).observations(&input.ids)?;
    let missing = input.ids.iter().copied().filter(|id| !found.iter().any(|o| o.id == *id)).collect();
    Ok(GetObservationsOutput {
        observations: found
            .into_iter()
            .map(|obs| FullObservation {
                id: obs.id,
                session_id: obs.session_id,
                time: rfc3339(obs.ts),
                kind: obs.kind.to_string(),
                tool: obs.tool,
                content: obs.content,
                tags: obs.tags,
            })
            .collect(),
        missing,
    })
}

/// Arguments of trae_mem_inject.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(crate = "rmcp::schemars")]
struct InjectInput {
    /// The project: a directory (resolved to its git repository) or a stored project path. Default: the server's working directory.
    project: Option<String>,
    /// The task at hand: its best search hits in this project lead the block.
    query: Option<String>,
    /// The most characters of the block, 200 to 100000. Default: the config's [context] budget_chars (4000).
    #[schemars(range(min = 200, max = 100000))]
    budget_chars: Option<usize>,
}

/// The context block of a project.
#[derive(Serialize, JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
struct InjectOutput {
    project: String,
    /// The block to read, or null when the project has no memory yet.
    context: Option<String>,
}

fn inject(memory: &Memory, input: InjectInput) -> Result<InjectOutput, ToolError> {
    let project = memory.project(input.project.as_deref())?;
    let configured = &memory.loaded.config.context;
    let budget_chars = match input.budget_chars {
        Some(budget) => in_range("budget_chars", budget, 200..=100_000)?,
        None => configured.budget_chars,
    };
    let settings = ContextSettings { budget_chars, ..configured.clone() };
    let context = context::build_focused(&memory.store(), &project, None, &settings, input.query.as_deref())?;
    Ok(InjectOutput { project, context })
}
