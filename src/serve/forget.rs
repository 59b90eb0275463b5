//! Forget from the viewer: a confirmation page (`GET /forget`), then the
//! form it holds (`POST /forget`), which must carry this process's token
//! and come from this origin (`guard`). The removal is `forget::carry_out`,
//! the same as `trae-mem forget`: rows, index entries, summaries, spool and
//! the bytes in the file.

use std::sync::Arc;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Html;
use maud::{Markup, html};
use serde::Deserialize;

use super::html::{Nav, card, page, session_href, session_label};
use super::pages::public_observation;
use super::{App, PageError, reader};
use crate::forget::{self, Plan};
use crate::store::{Filters, Observation, Selection, Store};

/// What to forget: one observation or one session.
#[derive(Debug, Deserialize)]
pub struct Target {
    observation: Option<i64>,
    session: Option<String>,
}

impl Target {
    /// What would go, once the target is known to exist and be public; and
    /// the observation, when it is one.
    fn plan(&self, store: &Store) -> Result<(Plan, Option<Observation>), PageError> {
        let mut observation = None;
        let selection = match (self.observation, self.session.as_deref().filter(|s| !s.is_empty())) {
            (Some(id), None) => {
                observation = Some(public_observation(&reader(store), id)?);
                Selection { ids: vec![id], ..Selection::default() }
            }
            (None, Some(session)) => {
                let session = reader(store).session(session).map_err(|e| PageError::not_found(format!("{e:#}")))?;
                Selection {
                    filters: Filters { session: Some(session.id), ..Filters::default() },
                    ..Selection::default()
                }
            }
            _ => return Err(PageError::bad_request("name one observation or one session to forget")),
        };
        Ok((forget::plan(store, &selection)?, observation))
    }

    /// The hidden fields that name it in the form.
    fn fields(&self) -> Markup {
        html! {
            @if let Some(id) = self.observation { input type="hidden" name="observation" value=(id); }
            @if let Some(session) = &self.session { input type="hidden" name="session" value=(session); }
        }
    }
}

/// `GET /forget?observation=ID` or `?session=ID`: what would go, and the
/// button that makes it go.
pub async fn confirm(State(app): State<Arc<App>>, Query(target): Query<Target>) -> Result<Html<String>, PageError> {
    app.with_store(move |app, store| {
        let (plan, shown) = target.plan(store)?;
        let (what, back) = match target.observation {
            Some(id) => (format!("#{id}"), super::html::observation_href(id)),
            None => {
                let session = plan.sessions.first().cloned().unwrap_or_default();
                (session_label(&session), session_href(&session))
            }
        };
        let body = html! {
            h1 { "Forget " (what) "?" }
            p {
                "This deletes " (plan.observations.len()) " observation(s)"
                @if !plan.sessions.is_empty() { " and the whole session, with its summaries" }
                ", with their index entries and the bytes in the database file. "
                "Summaries that quoted them are written again from what remains. "
                "A tombstone (a fingerprint, never the text) keeps an import from bringing them back. "
                strong { "It cannot be undone." }
            }
            @if let Some(observation) = &shown { (card(observation, None, Some(super::live::CARD_CHARS), false)) }
            form.confirm method="post" action="/forget" {
                input type="hidden" name="token" value=(app.guard.token());
                (target.fields())
                button.danger #confirm-forget type="submit" { "Forget " (what) }
                " "
                a href=(back) { "Cancel" }
            }
        };
        Ok(Html(page(&format!("Forget {what}"), Nav::None, body).into_string()))
    })
    .await
}

#[derive(Debug, Deserialize)]
pub struct ForgetForm {
    /// Missing is refused like wrong, by the handler, not as a bad form.
    #[serde(default)]
    token: String,
    // The target's fields, not flattened: a flattened number does not
    // parse from a form.
    observation: Option<i64>,
    session: Option<String>,
}

/// `POST /forget`: forgets, then says what went.
pub async fn carry_out(State(app): State<Arc<App>>, Form(form): Form<ForgetForm>) -> Result<Html<String>, PageError> {
    if !app.guard.token_matches(&form.token) {
        return Err(PageError::new(
            StatusCode::FORBIDDEN,
            "this form's token is missing or out of date (the viewer was restarted?): reload the page and try again",
        ));
    }
    app.writing(move |app, store| {
        let target = Target { observation: form.observation, session: form.session };
        let (plan, _) = target.plan(store)?;
        let forgotten = forget::carry_out(store, &app.loaded, &plan, &mut |_| {}).map_err(anyhow::Error::from)?;
        if forgotten.sessions_resummarized > 0 {
            crate::embed::start_after_writing(&app.loaded.home);
        }
        let body = html! {
            h1 { "Forgotten" }
            p #forgotten {
                (forgotten.observations) " observation(s) forgotten"
                @if forgotten.sessions_removed > 0 { ", " (forgotten.sessions_removed) " session(s) removed" }
                @if forgotten.sessions_resummarized > 0 { ", " (forgotten.sessions_resummarized) " session(s) summarized again" }
                "."
            }
            p { a href="/" { "Back to the live feed" } " · " a href="/search" { "Search" } }
        };
        Ok(Html(page("Forgotten", Nav::None, body).into_string()))
    })
    .await
}
