//! Bindings for each published version of the plugin interface. Each
//! version lives in its own module, generated from its frozen folder under
//! `wit/`; the host picks the module that matches the version a component
//! imports (see `version_of`).

pub mod since_v0_1_0;

use anyhow::{Result, bail};
use wasmtime::Engine;
use wasmtime::component::Component;

/// The interface versions this host can load.
pub const SUPPORTED: &[&str] = &[since_v0_1_0::VERSION];

/// The version of `trae-mem:plugin` a component was built against, read from
/// the names of its imports before anything is instantiated.
pub fn version_of(component: &Component, engine: &Engine) -> Result<&'static str> {
    let mut seen = Vec::new();
    for (name, _) in component.component_type().imports(engine) {
        if let Some(rest) = name.strip_prefix("trae-mem:plugin/") {
            let version = rest.split_once('@').map_or("", |(_, v)| v);
            if let Some(known) = SUPPORTED.iter().find(|s| **s == version) {
                return Ok(known);
            }
            seen.push(version.to_owned());
        }
    }
    match seen.first() {
        Some(version) => bail!(
            "built against trae-mem:plugin@{version}, but this trae-mem loads {}; rebuild the plugin or upgrade trae-mem",
            SUPPORTED.join(", ")
        ),
        None => bail!("does not import trae-mem:plugin/host; is it a trae-mem plugin? (see plugins/README.md)"),
    }
}
