//! `trae-mem:plugin@0.2.0`: one `bindgen!` per world, as for 0.1.0. The
//! summarizer imports `wasi:http/outgoing-handler`, which wasmtime-wasi-http
//! implements (`sandbox` links it, and `net::Gate` decides what passes);
//! its bindings are reused here rather than generated again.

/// The interface version these bindings are for.
pub const VERSION: &str = "0.2.0";

pub mod event_handler {
    wasmtime::component::bindgen!({ world: "event-handler", path: "wit/since_v0.2.0", exports: { default: async } });
}

pub mod sampler {
    wasmtime::component::bindgen!({
        world: "sampler",
        path: "wit/since_v0.2.0",
        exports: { default: async },
        with: {
            "trae-mem:plugin/host": super::event_handler::trae_mem::plugin::host,
            "trae-mem:plugin/types": super::event_handler::trae_mem::plugin::types,
        },
    });
}

pub mod summarizer {
    wasmtime::component::bindgen!({
        world: "summarizer",
        path: "wit/since_v0.2.0",
        exports: { default: async },
        with: {
            "trae-mem:plugin/host": super::event_handler::trae_mem::plugin::host,
            "trae-mem:plugin/types": super::event_handler::trae_mem::plugin::types,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "wasi:io": wasmtime_wasi::p2::bindings::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        },
    });
}

pub use event_handler::trae_mem::plugin::host;
pub use event_handler::trae_mem::plugin::types;
