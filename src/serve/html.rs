//! The pages' shared parts: the chrome, an observation's card, a search
//! snippet with its marks, how a session is named and whose it is, and
//! links. maud escapes every value it is given, so stored text (which may
//! hold `<script>`) is always shown as text.

use maud::{DOCTYPE, Markup, html};

use crate::recall::{MARK_END, MARK_START};
use crate::store::{Kind, ListedSession, Observation};
use crate::summarize::tool_action;
use crate::text::clip;
use crate::timefmt;

/// The page a link in the top bar leads to, to mark the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Live,
    Search,
    Projects,
    Health,
    None,
}

const NAV: [(&str, &str, Nav); 4] = [
    ("/", "Live", Nav::Live),
    ("/search", "Search", Nav::Search),
    ("/projects", "Projects", Nav::Projects),
    ("/health", "Health", Nav::Health),
];

/// A whole page: the top bar, then `body`.
pub fn page(title: &str, current: Nav, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · trae-mem" }
                link rel="icon" href="/assets/icon.svg";
                link rel="stylesheet" href="/assets/app.css";
                script src="/assets/app.js" defer {}
            }
            body {
                header.top {
                    a.brand href="/" { "trae-mem" }
                    nav {
                        @for (href, label, nav) in NAV {
                            a href=(href) class=[(nav == current).then_some("current")] { (label) }
                        }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The characters of a tool call's name on a card (`Bash: <command>`).
const ACTION_CHARS: usize = 240;

/// An observation as a card: its id, kind, tool, project, session and
/// time, then its content (clipped to `chars`, or whole with `None`). A
/// tool call is named as summaries name it, with its recorded input and
/// output, whole, a click away (open on its own page).
pub fn card(observation: &Observation, project: Option<&str>, chars: Option<usize>, anchor: bool) -> Markup {
    let o = observation;
    let body = match o.kind {
        Kind::Tool => html! {
            p.action { (clip(&tool_action(o.tool.as_deref(), &o.content), ACTION_CHARS)) }
            details.io open[chars.is_none()] {
                summary { "input and output" }
                pre.content { (o.content) }
            }
        },
        _ => html! { pre.content { (chars.map_or_else(|| o.content.clone(), |chars| clip(&o.content, chars))) } },
    };
    html! {
        article.card.anchor[anchor] data-id=(o.id) {
            div.meta {
                a class="ref" href=(observation_href(o.id)) { "#" (o.id) }
                span.kind { (o.kind.as_str()) }
                @if let Some(tool) = &o.tool { span.tool { (tool) } }
                @if let Some(project) = project { a.project href=(project_href(project)) { (project) } }
                a.session href=(session_href(&o.session_id)) { (session_label(&o.session_id)) }
                time { (timefmt::local_minute(o.ts)) }
            }
            (body)
        }
    }
}

/// A search snippet, its matches (between « and ») marked.
pub fn snippet(text: &str) -> Markup {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(MARK_START) {
        let after = &rest[start + MARK_START.len_utf8()..];
        let Some(end) = after.find(MARK_END) else { break };
        parts.push((&rest[..start], false));
        parts.push((&after[..end], true));
        rest = &after[end + MARK_END.len_utf8()..];
    }
    parts.push((rest, false));
    html! {
        @for (part, marked) in parts {
            @if marked { mark { (part) } } @else { (part) }
        }
    }
}

/// "session 1a2b3c4d": how a session is named in a list.
pub fn session_label(id: &str) -> String {
    format!("session {}", id.get(..8).unwrap_or(id))
}

/// The characters of what a list names a session by.
const HEADING_CHARS: usize = 160;

/// What a session began with, on one line: its first prompt, or else the
/// first line of its brief summary (`Asked: …`); none when it has neither.
pub fn session_heading(listed: &ListedSession) -> Option<String> {
    let folded = |text: &str| {
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        (!words.is_empty()).then_some(words)
    };
    let prompt = listed.first_prompt.as_deref().and_then(folded);
    let heading = prompt.or_else(|| listed.brief.as_deref()?.lines().find_map(folded))?;
    Some(clip(&heading, HEADING_CHARS))
}

/// "by alice@laptop": whose a teammate's session is (it came by sync);
/// nothing for one's own.
pub fn by(author: Option<&str>) -> Markup {
    html! { @if let Some(author) = author { span.by { "by " (author) } } }
}

pub fn observation_href(id: i64) -> String {
    format!("/observation/{id}")
}

pub fn session_href(id: &str) -> String {
    format!("/session/{}", encode(id))
}

pub fn project_href(project: &str) -> String {
    format!("/project?path={}", encode(project))
}

/// Percent-encodes a value for a URL's path segment or query.
pub fn encode(value: &str) -> String {
    // The query form (`+` for a space) is wrong in a path; `%20` suits both.
    form_urlencoded::byte_serialize(value.as_bytes()).collect::<String>().replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_mark_matches_and_escape_the_rest() {
        let marked = snippet(&format!("a <b> {MARK_START}x{MARK_END} c {MARK_START}y")).into_string();
        assert_eq!(marked, format!("a &lt;b&gt; <mark>x</mark> c {MARK_START}y"));
    }

    #[test]
    fn a_session_is_named_by_its_first_prompt_else_its_briefs_first_line() {
        let session = crate::store::Session {
            id: "0123456789".to_owned(),
            project: "/w/app".to_owned(),
            started_at: 0,
            ended_at: None,
            meta: serde_json::Value::Null,
            observations: 0,
        };
        let listed = |prompt: Option<&str>, brief: Option<&str>| ListedSession {
            session: session.clone(),
            first_prompt: prompt.map(str::to_owned),
            brief: brief.map(str::to_owned),
        };
        let brief = Some("\n  Asked: rotate   the key\nConcluded: done");
        assert_eq!(session_heading(&listed(Some("fix the\n  parser"), brief)).as_deref(), Some("fix the parser"));
        assert_eq!(session_heading(&listed(Some(" \n "), brief)).as_deref(), Some("Asked: rotate the key"));
        assert_eq!(session_heading(&listed(None, brief)).as_deref(), Some("Asked: rotate the key"));
        assert_eq!(session_heading(&listed(None, None)), None);
        let long = "word ".repeat(100);
        assert_eq!(session_heading(&listed(Some(&long), None)).unwrap().chars().count(), HEADING_CHARS);
    }

    #[test]
    fn ids_are_encoded_for_links() {
        assert_eq!(session_href("a/b c"), "/session/a%2Fb%20c");
        assert_eq!(project_href("/w/my app"), "/project?path=%2Fw%2Fmy%20app");
    }
}
