//! `trae-mem mcp`: the MCP server, for clients that reach memory through
//! tools (Trae, or any agent beside its hooks).
//!
//! rmcp, the official Rust SDK, speaks the protocol; `transport` frames it
//! on stdio; `server` answers `tools/list` and `tools/call` from the catalog
//! in `tools`, whose code calls the same library as the CLI and the hooks.
//!
//! Invariants:
//! - stdout carries protocol messages only; logs go to stderr.
//! - No private row leaves: searches skip them, reads drop them.
//! - It opens the same home and database as the hooks and writes beside
//!   them: every write is one short `BEGIN IMMEDIATE` transaction that
//!   waits out a hook's lock, and none spans an await.

mod server;
mod tools;
mod transport;

use std::path::Path;

use anyhow::{Context, Result};
use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;

use crate::config::Loaded;
use crate::store::Store;

/// Serves the store over stdio until the client closes stdin. `cwd` names
/// the project that tools use when the caller names none.
pub fn serve(loaded: Loaded, store: Store, cwd: &Path) -> Result<()> {
    let memory = tools::Memory::new(loaded, store, cwd)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let running = match server::Server::new(memory).serve(transport::Stdio::start()).await {
            Ok(running) => running,
            // The client left before the handshake: nothing to serve.
            Err(ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(err) => return Err(err).context("the MCP handshake failed"),
        };
        running.waiting().await.context("the MCP server stopped unexpectedly")?;
        Ok(())
    })
}
