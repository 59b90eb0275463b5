//! `trae-mem serve`: the web viewer. A live feed of what agents record,
//! search, sessions, projects (with the context their next session gets),
//! health, and forget.
//!
//! Pages are rendered on the server (`html`, with every value escaped) and
//! a little plain JavaScript (`assets/app.js`) adds the live stream and
//! search as you type. The viewer shows everything a user's agents did, so
//! every request passes `guard` first. A hook never reaches this module.

mod assets;
mod forget;
mod guard;
mod health;
mod hits;
mod html;
mod live;
mod pages;

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use axum::Router;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::config::Loaded;
use crate::recall::{Private, Reader};
use crate::store::Store;

/// The port the viewer listens on unless told otherwise; a free one is
/// taken when it is busy.
pub const DEFAULT_PORT: u16 = 37711;

/// Where to listen.
pub struct Options {
    pub listen: IpAddr,
    /// None: `DEFAULT_PORT`, or any free port if that one is taken.
    pub port: Option<u16>,
}

/// What the viewer works with. The home is the one every other command
/// resolves; `cwd` and `home_arg` are what the health checks need to say
/// what `doctor` would.
pub struct App {
    loaded: Loaded,
    store: Mutex<Store>,
    cwd: PathBuf,
    home_arg: Option<PathBuf>,
    guard: guard::Guard,
    feed: live::Feed,
}

/// How the viewer reads: a browser never learns that a private row exists.
fn reader(store: &Store) -> Reader<'_> {
    Reader::new(store, Private::Hidden)
}

impl App {
    /// Runs `work` with the store, to read: every page but the forget form's
    /// POST reads and never writes.
    async fn with_store<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&App, &Store) -> Result<T, PageError> + Send + 'static,
    ) -> Result<T, PageError> {
        self.writing(move |app, store| work(app, store)).await
    }

    /// Runs `work` with the store on a blocking thread: SQLite calls
    /// block, and a long forget must not stall the other requests' I/O.
    async fn writing<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&App, &mut Store) -> Result<T, PageError> + Send + 'static,
    ) -> Result<T, PageError> {
        let app = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            // A panic in another request leaves the connection itself intact.
            let mut store = app.store.lock().unwrap_or_else(|p| p.into_inner());
            work(&app, &mut store)
        })
        .await
        .map_err(|err| PageError::internal(anyhow::anyhow!("the request's task failed: {err}")))?
    }
}

/// A request that could not be answered: its status and what to tell.
#[derive(Debug)]
pub struct PageError {
    status: StatusCode,
    message: String,
}

impl PageError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into() }
    }

    fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    fn bad_request(err: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, err.to_string())
    }

    fn internal(err: anyhow::Error) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{err:#}"))
    }
}

impl From<anyhow::Error> for PageError {
    fn from(err: anyhow::Error) -> Self {
        Self::internal(err)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error");
        let body = maud::html! { h1 { (title) } p.error { (self.message) } };
        (self.status, Html(html::page(title, html::Nav::None, body).into_string())).into_response()
    }
}

/// The viewer once it listens: where, and whether the default port was busy.
pub struct Listening {
    pub url: String,
    /// The port asked for (or the default) was taken, so another was used.
    pub moved_from: Option<u16>,
}

/// Serves the viewer until the process is stopped. `ready` hears where it
/// listens once the socket is bound.
pub fn run(
    loaded: Loaded,
    store: Store,
    cwd: PathBuf,
    home_arg: Option<PathBuf>,
    options: &Options,
    ready: impl FnOnce(&Listening),
) -> Result<()> {
    let (listener, moved_from) = bind(options)?;
    let addr = listener.local_addr()?;
    let url = format!("http://{}/", SocketAddr::new(addr.ip(), addr.port()));
    let feed = live::Feed::start(store.path(), &loaded)?;
    let app = Arc::new(App { guard: guard::Guard::new(addr), loaded, store: Mutex::new(store), cwd, home_arg, feed });
    ready(&Listening { url, moved_from });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("cannot start the viewer's runtime")?;
    runtime.block_on(async move {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        axum::serve(listener, router(app)).await.context("the viewer stopped")
    })
}

/// Binds the port asked for; with none asked for, the default port, or a
/// free one when that is taken.
fn bind(options: &Options) -> Result<(TcpListener, Option<u16>)> {
    let port = options.port.unwrap_or(DEFAULT_PORT);
    match TcpListener::bind((options.listen, port)) {
        Ok(listener) => Ok((listener, None)),
        Err(err) if err.kind() == ErrorKind::AddrInUse && options.port.is_none() => {
            let listener = TcpListener::bind((options.listen, 0))
                .with_context(|| format!("cannot listen on {}", options.listen))?;
            Ok((listener, Some(port)))
        }
        Err(err) => Err(err)
            .with_context(|| format!("cannot listen on {}:{port} (--port 0 takes any free port)", options.listen)),
    }
}

fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(pages::live))
        .route("/events", get(live::events))
        .route("/search", get(pages::search))
        .route("/session/{id}", get(pages::session))
        .route("/observation/{id}", get(pages::observation))
        .route("/projects", get(pages::projects))
        .route("/project", get(pages::project))
        .route("/health", get(health::show))
        .route("/forget", get(forget::confirm).post(forget::carry_out))
        .route("/assets/{name}", get(assets::serve))
        .layer(axum::middleware::from_fn_with_state(Arc::clone(&app), guard::check))
        .with_state(app)
}
