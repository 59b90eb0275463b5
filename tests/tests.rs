//! One test binary for all integration tests (one link, shared harness).

mod util;

mod store_cli;
