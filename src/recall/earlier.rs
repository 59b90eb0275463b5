//! Which earlier sessions session start tells, and how much of each.
//!
//! Recency alone tells the latest chatter: one session fixes a real bug,
//! five more ask "what time is it?", and the fix is gone. So sessions are
//! chosen by substance as well: a session that ran tools, met errors or
//! stated a decision is told (most recently active first, the ones that did
//! most in detail while the budget lasts); one that only talked briefly, or
//! only asked memory, is folded with the others like it into one line.

use std::collections::HashMap;

use anyhow::Result;

use super::asking::asks_memory;
use crate::config::ContextSettings;
use crate::store::{Facts, Store, TOLD_CANDIDATES, Told};
use crate::summarize;
use crate::text::clip;
use crate::timefmt;

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
    detailed: Detailed,
}

/// A session's detailed summary, as far as choosing what to tell needs it.
enum Detailed {
    /// Written now, for a session that went on after its summaries.
    Written(String),
    /// Stored: its length is known, and its text is read only if it is told.
    Stored {
        chars: usize,
    },
    Missing,
}

impl Detailed {
    fn chars(&self) -> Option<usize> {
        match self {
            Detailed::Written(text) => Some(text.chars().count()),
            Detailed::Stored { chars } => Some(*chars),
            Detailed::Missing => None,
        }
    }
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
    let candidates = store.sessions_to_tell(project, current, TOLD_CANDIDATES)?;
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
    Ok(Earlier { sections: sections(store, &work, room)?, tail })
}

/// The sections for the sessions that did work, in their order: each told
/// by its brief, then the ones that did most told in detail instead while
/// the room holds it. Only the detailed summaries told are read.
fn sections(store: &Store, work: &[ToTell], room: usize) -> Result<Vec<String>> {
    let heads: Vec<String> = work.iter().map(|w| heading(&w.told)).collect();
    let mut lengths: Vec<usize> = work.iter().map(|w| w.brief.chars().count()).collect();
    let used = |lengths: &[usize]| -> usize { heads.iter().zip(lengths).map(|(h, t)| h.chars().count() + t + 1).sum() };
    let mut in_detail = vec![false; work.len()];
    let mut by_weight: Vec<usize> = (0..work.len()).collect();
    by_weight.sort_by_key(|&i| std::cmp::Reverse(work[i].weight));
    for i in by_weight {
        let Some(detailed) = work[i].detailed.chars() else { continue };
        let mut upgraded = lengths.clone();
        upgraded[i] = detailed;
        if used(&upgraded) <= room {
            lengths = upgraded;
            in_detail[i] = true;
        }
    }
    let stored: Vec<&str> = work
        .iter()
        .zip(&in_detail)
        .filter(|(w, told)| **told && matches!(w.detailed, Detailed::Stored { .. }))
        .map(|(w, _)| w.told.session.id.as_str())
        .collect();
    let read: HashMap<String, String> = match stored.is_empty() {
        true => HashMap::new(),
        false => {
            store.detailed_summaries(&stored)?.into_iter().map(|r| (r.summary.session_id, r.summary.content)).collect()
        }
    };
    Ok(work
        .iter()
        .zip(heads)
        .zip(in_detail)
        .map(|((w, head), told_in_detail)| {
            let text = match &w.detailed {
                Detailed::Written(text) if told_in_detail => text,
                // Gone since its length was read (a forget): the brief.
                Detailed::Stored { .. } if told_in_detail => read.get(&w.told.session.id).unwrap_or(&w.brief),
                _ => &w.brief,
            };
            format!("{head}{text}\n")
        })
        .collect())
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
fn to_tell(store: &Store, told: &Told) -> Result<Option<(String, Detailed, Facts)>> {
    let facts = match &told.facts {
        Some(facts) if !told.stale => facts.clone(),
        _ => {
            let (now, facts) = summarize::as_it_stands(store, &told.session.id)?;
            if let (true, Some(now)) = (told.stale, now) {
                return Ok(Some((now.brief, Detailed::Written(now.detailed), facts)));
            }
            facts
        }
    };
    let Some(brief) = told.brief.clone() else { return Ok(None) };
    let detailed = told.detailed_chars.map_or(Detailed::Missing, |chars| Detailed::Stored { chars });
    Ok(Some((brief, detailed, facts)))
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
