//! One test binary for all integration tests (one link, shared harness).

mod util;

mod hook;
mod plugins;
mod store_cli;
