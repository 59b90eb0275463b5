//! One test binary for all integration tests (one link, shared harness).

mod util;

mod hook;
mod mcp;
mod plugins;
mod store_cli;
