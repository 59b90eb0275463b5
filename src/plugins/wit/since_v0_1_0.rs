//! `trae-mem:plugin@0.1.0`: one `bindgen!` per world. The worlds share the
//! `host` and `types` interfaces, which are generated once (with the first
//! world) and reused by the others. Exports are called asynchronously, so
//! that a call's time limit holds even while the guest waits in a host call
//! (see `sandbox`); the host's own imports never block and stay synchronous.

/// The interface version these bindings are for.
pub const VERSION: &str = "0.1.0";

pub mod event_handler {
    wasmtime::component::bindgen!({ world: "event-handler", path: "wit/since_v0.1.0", exports: { default: async } });
}

pub mod sampler {
    wasmtime::component::bindgen!({
        world: "sampler",
        path: "wit/since_v0.1.0",
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
        path: "wit/since_v0.1.0",
        exports: { default: async },
        with: {
            "trae-mem:plugin/host": super::event_handler::trae_mem::plugin::host,
            "trae-mem:plugin/types": super::event_handler::trae_mem::plugin::types,
        },
    });
}

pub use event_handler::trae_mem::plugin::host;
pub use event_handler::trae_mem::plugin::types;
