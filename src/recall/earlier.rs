//! Which earlier sessions session start tells, and how much of each.
//!
//! Recency alone tells the latest chatter: one session fixes a real bug,
//! five more ask "what time is it?", and the fix is gone. So sessions are
//! chosen by substance as well: a session that ran tools, met errors or
//! stated a decision is told (most recently active first, the ones that did
//! most in detail while the budget lasts); one that only talked briefly, or
//! only asked memory, is folded with the others like it into one line.

use anyhow::Result;

use super::asking::asks_memory;
use crate::config::ContextSettings;
use crate::store::{Facts, Store, Told};
use crate::summarize;
use crate::text::clip;
use crate::timefmt;

/// How many of the project's latest active sessions are considered.
const CANDIDATES: usize = 30;

/// A session with no work whose prompts and answers come to less than this
/// only talked briefly.
const SHORT_TALK_CHARS: u64 = 200;

/// A folded session shows this much of what it asked, and at most
/// `FOLDED_SHOWN` of them are shown.
const FOLDED_CHARS: usize = 80;
const FOLDED_SHOWN: usize = 5;

/// What session start tells of earlier sessions: a section for each session
/// that did work, within the room given, and the short lines after them
/// (the sessions folded, the ones left out), which are always told whole.
pub struct Earlier {
    pub sections: Vec<String>,
    pub tail: String,
}

/// One session to tell, with both its summaries.
struct ToTell {
    told: Told,
    weight: u64,
    brief: String,
    detailed: Option<String>,
}

/// Chooses and words the earlier sessions of `project` for the start of
/// session `current`; the sections fill at most `room` characters, less the
/// tail's.
pub fn tell(
    store: &Store,
    project: &str,
    current: Option<&str>,
    settings: &ContextSettings,
    room: usize,
) -> Result<Earlier> {
    let candidates = store.sessions_to_tell(project, current, CANDIDATES)?;
    let considered = candidates.len();
    let mut work = Vec::new();
    let mut folded = Vec::new();
    let mut seen = 0;
    for told in candidates {
        if work.len() == settings.sessions {
            break;
        }
        seen += 1;
        let Some((brief, detailed, facts)) = to_tell(store, &told)? else { continue };
        // A session with no row left kept its summaries through
        // retention: what is left of it is told.
        if told.session.observations > 0 && only_talked(&facts) {
            let asked = facts.asked.first().cloned().unwrap_or_else(|| first_line(&brief));
            folded.push(asked);
        } else {
            work.push(ToTell { told, weight: weight(&facts), brief, detailed });
        }
    }
    let tail = format!("{}{}", folded_line(&folded), left_out_line(considered - seen));
    let room = room.saturating_sub(tail.chars().count());
    Ok(Earlier { sections: sections(&work, room), tail })
}

/// The sections for the sessions that did work, in their order: each told
/// by its brief, then the ones that did most told in detail instead while
/// the room holds it.
fn sections(work: &[ToTell], room: usize) -> Vec<String> {
    let mut texts: Vec<&str> = work.iter().map(|w| w.brief.as_str()).collect();
    let heads: Vec<String> = work.iter().map(|w| heading(&w.told)).collect();
    let used = |texts: &[&str]| -> usize {
        heads.iter().zip(texts).map(|(h, t)| h.chars().count() + t.chars().count() + 1).sum()
    };
    let mut by_weight: Vec<usize> = (0..work.len()).collect();
    by_weight.sort_by_key(|&i| std::cmp::Reverse(work[i].weight));
    for i in by_weight {
        let Some(detailed) = work[i].detailed.as_deref() else { continue };
        let mut upgraded = texts.clone();
        upgraded[i] = detailed;
        if used(&upgraded) <= room {
            texts = upgraded;
        }
    }
    heads.iter().zip(texts).map(|(head, text)| format!("{head}{text}\n")).collect()
}

/// A session's heading: when, which, whose, and whether it ended.
fn heading(told: &Told) -> String {
    let when = timefmt::local_minute(told.last_active);
    let open = if told.open() { ", still open or ended without a SessionEnd" } else { "" };
    let by = match told.session.meta.get("author").and_then(|a| a.as_str()) {
        Some(author) => format!(", by {author}"),
        None => String::new(),
    };
    format!("\n## {when} (session {}{by}{open})\n", &told.session.id[..8])
}

/// A session's brief and detailed summaries as the next session is told
/// them, and its facts. A stale one (it went on after its summary was
/// written) is told as the built-in summarizer writes it now, which is what
/// the hook's catch-up stores, and one without facts yet by its facts as
/// its rows stand: this only reads.
fn to_tell(store: &Store, told: &Told) -> Result<Option<(String, Option<String>, Facts)>> {
    let facts = match &told.facts {
        Some(facts) if !told.stale => facts.clone(),
        _ => {
            let (now, facts) = summarize::as_it_stands(store, &told.session.id)?;
            if let (true, Some(now)) = (told.stale, now) {
                return Ok(Some((now.brief, Some(now.detailed), facts)));
            }
            facts
        }
    };
    let Some(brief) = told.brief.clone() else { return Ok(None) };
    let detailed =
        store.summaries(&told.session.id)?.into_iter().find(|s| s.level == crate::store::SummaryLevel::Detailed);
    Ok(Some((brief, detailed.map(|d| d.content), facts)))
}

/// The session ran no tool, met no error and stated no decision, and
/// either talked briefly or only asked memory. One with no public row left
/// (a forget took them) is told.
fn only_talked(facts: &Facts) -> bool {
    if facts.is_empty() || facts.tool_calls + facts.errors + facts.stated > 0 {
        return false;
    }
    facts.talk_chars < SHORT_TALK_CHARS || !facts.asked.is_empty() && facts.asked.iter().all(|p| asks_memory(p))
}

/// How much a session did, to choose which are told in detail.
fn weight(facts: &Facts) -> u64 {
    facts.tool_calls.min(20) + 3 * facts.errors.min(5) + 3 * facts.stated.min(5) + 2 * u64::from(facts.answers > 0)
}

/// One line for the sessions that only talked, or nothing. A question
/// asked in several sessions is shown once, with how many times.
fn folded_line(asked: &[String]) -> String {
    if asked.is_empty() {
        return String::new();
    }
    let mut distinct: Vec<(String, usize)> = Vec::new();
    for question in asked {
        let line = clip(&first_line(question), FOLDED_CHARS);
        match distinct.iter_mut().find(|(seen, _)| seen.to_lowercase() == line.to_lowercase()) {
            Some((_, times)) => *times += 1,
            None => distinct.push((line, 1)),
        }
    }
    let shown: Vec<String> = distinct
        .iter()
        .take(FOLDED_SHOWN)
        .map(|(line, times)| if *times > 1 { format!("“{line}” ×{times}") } else { format!("“{line}”") })
        .collect();
    let more = if distinct.len() > shown.len() { ", …" } else { "" };
    format!("\nAlso {} that only talked: {}{more}\n", count(asked.len(), "session", "sessions"), shown.join(", "))
}

/// One line for the earlier sessions not considered, or nothing.
fn left_out_line(left_out: usize) -> String {
    if left_out == 0 {
        return String::new();
    }
    format!(
        "\n{} not told here: `trae-mem sessions --project .` lists them.\n",
        count(left_out, "earlier session is", "earlier sessions are")
    )
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}

/// `n` with its noun, in the singular or the plural.
fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
