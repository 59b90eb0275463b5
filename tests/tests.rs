//! One test binary for all integration tests (one link, shared harness).

mod util;

mod browser;
mod capture;
mod clients;
mod config;
mod doctor;
mod forget;
mod guide;
mod hook;
mod ingest;
mod install;
mod layers;
mod mcp;
mod pg;
mod plugins;
mod readme;
mod recall;
mod serve;
mod store_cli;
mod sync;
