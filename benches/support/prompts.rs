//! Prompt memory on a labelled set: what `UserPromptSubmit` tells the
//! agent for prompts that ask about an earlier session in other words
//! (it should tell that session), and for prompts unrelated to anything
//! stored (it should tell nothing), by half and by language.
//! `PROMPTS_VERBOSE=1` prints each case and the sessions it was told.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::Deserialize;
use trae_mem::config::ContextSettings;
use trae_mem::recall::context;
use trae_mem::store::Store;

use super::{Row, project_path, session_id};

/// A labelled prompt.
#[derive(Deserialize)]
pub struct Case {
    half: String,
    /// `paraphrase` or `unrelated`.
    kind: String,
    /// `en`, `zh`, `zh->en` (a Chinese prompt about an English session), `en->zh`.
    lang: String,
    prompt: String,
    /// The session it asks about; none for an unrelated prompt.
    session: Option<String>,
}

/// Each labelled session's project.
pub fn projects(rows: &[Row]) -> BTreeMap<String, String> {
    rows.iter().map(|r| (r.session.clone(), project_path(r.project.as_deref()))).collect()
}

/// Tallies of one half and language.
#[derive(Default)]
struct Tally {
    prompts: usize,
    /// The session asked about was told (paraphrases), or anything was (unrelated).
    told: usize,
    /// The session asked about was told first.
    first: usize,
    memories: usize,
}

/// Puts every case to prompt memory and prints, per half: for paraphrases,
/// how often the session asked about is told (and told first); for
/// unrelated prompts, asked in every project, how often anything is told.
/// `only` names one half to run (`tuning` while a rule is being chosen).
pub fn score(
    store: &Store,
    projects: &BTreeMap<String, String>,
    cases: &[Case],
    only: Option<&str>,
) -> anyhow::Result<()> {
    let settings = ContextSettings::default();
    let every_project: BTreeSet<&String> = projects.values().collect();
    let mut tallies: BTreeMap<(String, String, String), Tally> = BTreeMap::new();
    let mut times = Vec::new();
    for case in cases.iter().filter(|c| only.is_none_or(|half| c.half.starts_with(half))) {
        let asked_in: Vec<&String> = match &case.session {
            Some(session) => vec![&projects[session]],
            None => every_project.iter().copied().collect(),
        };
        for project in asked_in {
            let started = Instant::now();
            let block = context::for_prompt(store, project, None, &case.prompt, &settings)?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            let told = told_sessions(block.as_deref().unwrap_or_default());
            if std::env::var_os("PROMPTS_VERBOSE").is_some() {
                println!(
                    "{:?} {} {:?} -> {told:?}",
                    case.session.as_deref().map(|s| session_id(s)[..8].to_owned()),
                    case.lang,
                    case.prompt
                );
            }
            let tally = tallies.entry((case.half.clone(), case.kind.clone(), case.lang.clone())).or_default();
            tally.prompts += 1;
            tally.memories += told.len();
            match &case.session {
                Some(session) => {
                    let prefix = session_id(session)[..8].to_owned();
                    tally.told += usize::from(told.contains(&prefix));
                    tally.first += usize::from(told.first() == Some(&prefix));
                }
                None => tally.told += usize::from(!told.is_empty()),
            }
        }
    }
    println!(
        "{:<9} {:<11} {:<7} {:>7} {:>6} {:>6} {:>9}",
        "half", "kind", "lang", "prompts", "told", "first", "memories"
    );
    for half in ["tuning", "held-out"].into_iter().filter(|h| only.is_none_or(|o| h.starts_with(o))) {
        for kind in ["paraphrase", "unrelated"] {
            let mut all = Tally::default();
            for ((h, k, lang), t) in tallies.iter().filter(|((h, k, _), _)| h == half && k == kind) {
                println!(
                    "{h:<9} {k:<11} {lang:<7} {:>7} {:>6} {:>6} {:>9.2}",
                    t.prompts,
                    t.told,
                    if kind == "paraphrase" { t.first.to_string() } else { "-".into() },
                    t.memories as f64 / t.prompts.max(1) as f64
                );
                all.prompts += t.prompts;
                all.told += t.told;
                all.first += t.first;
                all.memories += t.memories;
            }
            let share = all.told as f64 / all.prompts.max(1) as f64;
            let what =
                if kind == "paraphrase" { "told the session asked about" } else { "told anything (false positives)" };
            println!("{half:<9} {kind:<11} all: {}/{} {what} ({:.0}%)", all.told, all.prompts, share * 100.0);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "prompt memory in process: p50 {:.2} ms, p95 {:.2} ms",
        times[times.len() / 2],
        times[times.len() * 95 / 100]
    );
    // Of which the prompt's vector, on the one core that makes it.
    if let Some(embedder) = trae_mem::embed::of_store(store)? {
        let mut vectors: Vec<f64> = cases
            .iter()
            .map(|case| {
                let started = Instant::now();
                std::hint::black_box(
                    embedder.embed_query_within(&case.prompt, trae_mem::recall::meaning::PROMPT_TOKENS),
                );
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        vectors.sort_by(f64::total_cmp);
        println!("of which the prompt's vector: p50 {:.2} ms", vectors[vectors.len() / 2]);
    }
    Ok(())
}

/// The sessions a prompt's block tells, by the first eight characters of
/// their ids, in order.
fn told_sessions(block: &str) -> Vec<String> {
    block
        .lines()
        .filter_map(|line| line.strip_prefix("- session "))
        .map(|rest| rest.chars().take(8).collect())
        .collect()
}
