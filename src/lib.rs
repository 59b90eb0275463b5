//! trae-mem: a local memory layer for AI coding agents.
//!
//! The binary (`src/main.rs`, `src/cli/`) only parses arguments and picks
//! exit codes; everything it does lives in this library, which the tests,
//! benchmarks and MCP server share.

pub mod adapters;
pub mod after_delivery;
pub mod bulk;
pub mod client;
pub mod config;
pub mod doctor;
pub mod embed;
pub mod event;
pub mod forget;
pub mod ingest;
pub mod install;
pub mod mcp;
pub mod owner_only;
pub mod plugins;
pub mod privacy;
pub mod project;
pub mod recall;
pub mod serve;
pub mod spool;
pub mod store;
pub mod summarize;
pub mod sync;
pub mod text;
pub mod timefmt;
