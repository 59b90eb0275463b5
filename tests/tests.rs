//! One test binary for all integration tests (one link, shared harness).

mod seed;
mod util;

mod browser;
mod capture;
mod claude_plugin;
mod clients;
mod config;
mod database;
mod demo;
mod doctor;
mod forget;
mod guide;
mod hook;
mod ingest;
mod install;
mod json_shapes;
mod layers;
mod mcp;
mod meaning;
mod mock_anthropic;
mod npm;
mod pg;
mod plugins;
mod privacy;
mod readme;
mod recall;
mod search;
mod serve;
mod sessions;
mod sync;
mod timeline;
mod told;
mod transfer;
mod windows;
