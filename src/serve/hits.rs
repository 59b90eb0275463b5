//! A search's results as the viewer shows them. An observation's hit is its
//! excerpt, matches marked. A session's summaries are one hit (search ranks
//! whichever of the two matches better), shown as one card: the excerpt of
//! whichever matched, marked as an observation's, then the brief summary,
//! with the detailed one a click away.

use anyhow::Result;
use maud::{Markup, html};

use super::html::{by, observation_href, project_href, session_href, snippet};
use crate::recall::fuse::FoundBy;
use crate::recall::{Reader, SearchHit};
use crate::store::{Summary, SummaryLevel};
use crate::timefmt;

/// The hits as a list, each read whole where its card needs more than the
/// hit (a summary's two levels).
pub fn list(reader: &Reader, hits: &[SearchHit]) -> Result<Markup> {
    let mut cards = Vec::with_capacity(hits.len());
    for hit in hits {
        cards.push(match hit.level {
            Some(_) => summary_card(hit, &reader.summaries(&hit.session_id)?),
            None => observation_card(hit),
        });
    }
    Ok(html! {
        @if hits.is_empty() {
            p.none { "No matches." }
        }
        ol.hits { @for card in cards { (card) } }
    })
}

/// An observation's hit: its excerpt, matches marked.
fn observation_card(hit: &SearchHit) -> Markup {
    html! {
        li.hit {
            (meta(hit))
            (excerpt(hit))
        }
    }
}

/// A session's summaries as one card: the matched excerpt, marked as an
/// observation's is, then the brief shown and the detailed folded (a
/// teammate's store may have pushed only one level).
fn summary_card(hit: &SearchHit, summaries: &[Summary]) -> Markup {
    let level = |wanted: SummaryLevel| summaries.iter().find(|s| s.level == wanted).map(|s| s.content.as_str());
    html! {
        li.hit.summary data-session=(hit.session_id) {
            (meta(hit))
            (excerpt(hit))
            @if let Some(brief) = level(SummaryLevel::Brief) {
                pre.content.brief { (brief) }
            }
            @if let Some(detailed) = level(SummaryLevel::Detailed) {
                details.io {
                    summary { "detailed summary" }
                    pre.content { (detailed) }
                }
            }
        }
    }
}

/// Where a hit holds the query's words: its excerpt, matches marked. Every
/// card shows it, an observation's and a summary's alike.
fn excerpt(hit: &SearchHit) -> Markup {
    html! { p.snippet { (snippet(&hit.snippet)) } }
}

/// What a hit is and where it comes from: its reference (an observation's
/// page, or the session's for a summary), kind, tool, project, author and time.
fn meta(hit: &SearchHit) -> Markup {
    html! {
        div.meta {
            @match hit.id {
                Some(id) => a class="ref" href=(observation_href(id)) { (hit.reference()) },
                None => a class="ref" href=(session_href(&hit.session_id)) { (hit.reference()) },
            }
            span.kind { (hit.kind.as_str()) }
            @if let Some(tool) = &hit.tool { span.tool { (tool) } }
            // The card shows the brief either way: say which one holds the words.
            @if let Some(level) = hit.level { span.tool { "matched in " (level.as_str()) } }
            @if hit.found_by == Some(FoundBy::Meaning) { span.tool title="It says something alike, in other words" { "by meaning" } }
            a.project href=(project_href(&hit.project)) { (hit.project) }
            (by(hit.author.as_deref()))
            time { (timefmt::local_minute(hit.ts)) }
        }
    }
}
