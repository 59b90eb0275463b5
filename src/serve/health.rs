//! `GET /health`: what `stats` and `doctor` know, at a glance: sizes,
//! counts, the spool, retention, plugins and installed clients.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Html;
use maud::html;

use super::html::{Nav, page};
use super::{App, PageError};
use crate::forget::retention;
use crate::ingest::Spool;
use crate::text::bytes;
use crate::{doctor, timefmt};

pub async fn show(State(app): State<Arc<App>>) -> Result<Html<String>, PageError> {
    app.with_store(|app, store| {
        let stats = super::reader(store).stats()?;
        let spool = Spool::new(&app.loaded.home);
        let spooled = spool.pending()?.len();
        let dead = spool.dead_letters()?.len();
        let gc = retention::last_finished(store)?;
        let retention = &app.loaded.config.retention;
        let checks = doctor::checks(&app.cwd, app.home_arg.as_deref());
        let body = html! {
            h1 { "Health" }
            section.tiles {
                div.tile { b { (bytes(stats.db_bytes)) } span { "database (" (bytes(stats.used_bytes)) " in use)" } }
                div.tile { b { (bytes(stats.wal_bytes)) } span { "write-ahead log" } }
                div.tile { b { (bytes(stats.index_bytes)) } span { "full-text index" } }
                div.tile { b { (stats.observations) } span { "observations (" (stats.private_observations) " private)" } }
                div.tile { b { (stats.sessions) } span { "sessions" } }
                div.tile { b { (stats.summaries) } span { "summaries" } }
                div.tile { b { (spooled) } span { "events waiting in the spool" } }
                div.tile { b { (dead) } span { "dead letters" } }
            }
            dl.facts {
                dt { "home" } dd { code { (app.loaded.home.display()) } }
                dt { "oldest" } dd { (stats.oldest.map(timefmt::local_minute).unwrap_or_default()) }
                dt { "newest" } dd { (stats.newest.map(timefmt::local_minute).unwrap_or_default()) }
                dt { "retention" } dd {
                    @if retention.is_set() {
                        (retention.max_age_days.map(|d| format!("{d} days")).unwrap_or_default())
                        " " (retention.max_db_mb.map(|m| format!("{m} MB at most")).unwrap_or_default())
                    } @else { "none: memory is kept until forgotten" }
                }
                dt { "gc last finished" } dd { (gc.map(timefmt::local_minute).unwrap_or_else(|| "never".to_owned())) }
            }
            h2 { "Checks" }
            table.list.checks {
                tbody {
                    @for check in &checks {
                        @let verdict = if !check.ok { "fail" } else if check.is_warning() { "warn" } else { "ok" };
                        tr class=(verdict) {
                            td.verdict { (verdict) }
                            td { (check.check) }
                            td {
                                (check.detail)
                                @if let Some(fix) = &check.fix { br; span.fix { "fix: " code { (fix) } } }
                            }
                        }
                    }
                }
            }
        };
        Ok(Html(page("Health", Nav::Health, body).into_string()))
    })
    .await
}
