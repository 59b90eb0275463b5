//! `trae-mem mcp`: the MCP server on stdio.

use anyhow::Result;
use clap::Args;

use super::Env;

/// Serve memory to MCP clients (Claude Code, Trae, ...) over stdio.
///
/// Search, timelines, context for a task, and recording, as tools. The client starts
/// it and talks JSON-RPC on stdin and stdout; it runs until stdin closes.
/// Logs go to stderr. See the README for client configuration.
#[derive(Debug, Args)]
pub struct Cmd {}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        let (loaded, store) = env.open()?;
        trae_mem::mcp::serve(loaded, store, &env.cwd)
    }
}
