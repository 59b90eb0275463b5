//! The stylesheet and script, built into the binary: `cargo build` builds
//! the whole viewer, with no Node step and nothing to install beside it.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

const ASSETS: [(&str, &str, &str); 3] = [
    ("app.css", "text/css; charset=utf-8", include_str!("assets/app.css")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("assets/app.js")),
    ("icon.svg", "image/svg+xml", include_str!("assets/icon.svg")),
];

/// `GET /assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|(asset, ..)| *asset == name) {
        Some((_, content_type, body)) => ([(header::CONTENT_TYPE, *content_type)], *body).into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}
