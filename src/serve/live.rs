//! The live feed. Hooks are other processes, so one thread watches the
//! store for new observations (a lookup by id, five times a second) and
//! broadcasts each, rendered once, to every open live page as a
//! server-sent event. Private rows are never sent.

use std::convert::Infallible;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::{App, PageError, html};
use crate::config::Loaded;
use crate::store::{Located, OpenOptions, Store};

/// How often the watcher looks for new observations: well within the
/// second in which a new one should show.
const POLL: Duration = Duration::from_millis(200);

/// The most observations read at once.
const BATCH: usize = 200;

/// The characters of an observation's content a live card shows.
pub const CARD_CHARS: usize = 400;

/// Open live pages, each behind by at most this many items before it
/// skips ahead.
const CHANNEL: usize = 1024;

/// A new observation, ready to send.
#[derive(Debug)]
struct Item {
    id: i64,
    project: String,
    html: String,
}

impl Item {
    fn of(located: &Located) -> Self {
        let card = html::card(&located.observation, Some(&located.project), Some(CARD_CHARS), false);
        // An event's data may not hold a carriage return of its own.
        let html = card.into_string().replace('\r', "");
        Self { id: located.observation.id, project: located.project.clone(), html }
    }
}

/// Where new observations are announced.
pub struct Feed {
    sender: broadcast::Sender<Arc<Item>>,
}

impl Feed {
    /// Starts the watcher, on its own connection to the store at `db`.
    pub fn start(db: &Path, loaded: &Loaded) -> Result<Self> {
        let (sender, _) = broadcast::channel(CHANNEL);
        let options = OpenOptions { index: loaded.config.search.index, ..OpenOptions::default() };
        let store = Store::open(db, &options)?;
        let announce = sender.clone();
        std::thread::Builder::new()
            .name("live-feed".to_owned())
            .spawn(move || watch(&store, &announce))
            .context("cannot start the live feed")?;
        Ok(Self { sender })
    }
}

/// Announces every observation recorded from now on.
fn watch(store: &Store, announce: &broadcast::Sender<Arc<Item>>) {
    let reader = super::reader(store);
    let mut last = reader.newest_observation_id().unwrap_or(0);
    loop {
        std::thread::sleep(POLL);
        // Ids are reused after the newest rows are forgotten: start again
        // from the newest that is left.
        if let Ok(newest) = reader.newest_observation_id()
            && newest < last
        {
            last = newest;
        }
        // A failed read (the store busy being rebuilt) is tried again next time.
        let Ok((found, seen)) = reader.observations_after(last, BATCH) else { continue };
        last = seen;
        for located in &found {
            // No page listening is no error.
            let _ = announce.send(Arc::new(Item::of(located)));
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct EventsParams {
    /// The newest observation the page already shows: those after it are
    /// sent first, so none recorded while the page loaded is missed.
    after: Option<i64>,
    project: Option<String>,
}

/// `GET /events`: the live stream of new observations, as `observation`
/// events whose data is the card's HTML.
pub async fn events(
    State(app): State<Arc<App>>,
    Query(params): Query<EventsParams>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, PageError> {
    // Listen first, then catch up, so nothing falls between the two.
    let receiver = app.feed.sender.subscribe();
    let project = params.project.filter(|p| !p.is_empty());
    let wanted = move |item_project: &str| project.as_deref().is_none_or(|p| p == item_project);
    let (backlog, last) = match params.after {
        Some(after) => {
            app.with_store(move |_, store| Ok(super::reader(store).observations_after(after, BATCH)?)).await?
        }
        None => (Vec::new(), i64::MIN),
    };
    let backlog: Vec<Arc<Item>> =
        backlog.iter().filter(|l| wanted(&l.project)).map(|l| Arc::new(Item::of(l))).collect();
    let live = stream::unfold((receiver, wanted), move |(mut receiver, wanted)| async move {
        loop {
            match receiver.recv().await {
                Ok(item) if item.id > last && wanted(&item.project) => return Some((item, (receiver, wanted))),
                Ok(_) | Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => return None,
            }
        }
    });
    let events = stream::iter(backlog)
        .chain(live)
        .map(|item| Ok(Event::default().event("observation").id(item.id.to_string()).data(&item.html)));
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
