//! trae-mem: a local memory layer for AI coding agents.
//!
//! The binary (`src/main.rs`, `src/cli/`) only parses arguments and picks
//! exit codes; everything it does lives in this library, which the tests,
//! benchmarks and MCP server share.

pub mod config;
pub mod project;
pub mod store;
pub mod timefmt;
pub mod privacy;
pub mod text;
pub mod adapters;
pub mod event;
pub mod summarize;
pub mod hooks;
