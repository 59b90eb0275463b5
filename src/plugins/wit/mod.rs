//! The published versions of the plugin interface, behind one enum per
//! world, as Zed wraps its extension API versions.
//!
//! Each version lives in its own module, generated from its frozen folder
//! under `wit/` (`since_v0_1_0`). `Version::of` reads which one a component
//! was built against from its import and export names, before anything is
//! instantiated; the world enums (`Handler`, `Sampler`, `Summarizer`)
//! instantiate the matching bindings and turn each version's types into the
//! host's own. A new version adds a module, a `Version` variant and one arm
//! per match below; a call that an older version lacks fails with a clear
//! message or returns a default there.

pub mod since_v0_1_0;

use anyhow::{Result, bail};
use wasmtime::component::{Component, Linker};
use wasmtime::{AsContextMut, Engine};

use super::sandbox::State;
use super::{PluginObservation, Sample, SessionFacts};
use crate::store::Observation;

/// The package every plugin interface belongs to.
const PACKAGE: &str = "trae-mem:plugin";

/// A version of the plugin interface that this host can load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V0_1_0,
}

impl Version {
    /// Every version this host loads, oldest first.
    pub const ALL: &[Version] = &[Version::V0_1_0];

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V0_1_0 => since_v0_1_0::VERSION,
        }
    }

    /// The version a component was built against, read from the names of
    /// its imports and exports (`trae-mem:plugin/host@0.1.0`).
    pub fn of(component: &Component, engine: &Engine) -> Result<Version> {
        let ty = component.component_type();
        let names = ty.imports(engine).map(|(name, _)| name).chain(ty.exports(engine).map(|(name, _)| name));
        let mut seen = Vec::new();
        for name in names {
            let Some(rest) = name.strip_prefix(PACKAGE).and_then(|r| r.strip_prefix('/')) else { continue };
            let claimed = rest.split_once('@').map_or("", |(_, v)| v);
            if let Some(known) = Version::ALL.iter().find(|v| v.as_str() == claimed) {
                return Ok(*known);
            }
            seen.push(claimed.to_owned());
        }
        let supported: Vec<&str> = Version::ALL.iter().map(|v| v.as_str()).collect();
        match seen.first() {
            Some(claimed) => bail!(
                "built against {PACKAGE}@{claimed}, but this trae-mem supports {PACKAGE}@{}; \
                 rebuild the plugin against one of those, or upgrade trae-mem",
                supported.join(", @")
            ),
            None => bail!("does not import {PACKAGE}/host; is it a trae-mem plugin? (see plugins/README.md)"),
        }
    }
}

/// One world's bindings, a variant per version, and how to instantiate the
/// variant a component's version asks for.
macro_rules! world {
    ($(#[$doc:meta])* $name:ident = $module:ident::$bindings:ident) => {
        $(#[$doc])*
        pub enum $name {
            V0_1_0(since_v0_1_0::$module::$bindings),
        }

        impl $name {
            pub async fn instantiate(
                version: Version,
                store: impl AsContextMut<Data = State>,
                component: &Component,
                linker: &Linker<State>,
            ) -> wasmtime::Result<Self> {
                match version {
                    Version::V0_1_0 => Ok(Self::V0_1_0(
                        since_v0_1_0::$module::$bindings::instantiate_async(store, component, linker).await?,
                    )),
                }
            }
        }
    };
}

world!(
    /// An instantiated event handler, of whichever version it was built for.
    Handler = event_handler::EventHandler
);
world!(
    /// An instantiated sampler, of whichever version it was built for.
    Sampler = sampler::Sampler
);
world!(
    /// An instantiated summarizer, of whichever version it was built for.
    Summarizer = summarizer::Summarizer
);

impl Handler {
    pub async fn handle(
        &self,
        store: impl AsContextMut<Data = State>,
        event: &str,
        payload: &str,
    ) -> wasmtime::Result<Result<Vec<PluginObservation>, String>> {
        match self {
            Self::V0_1_0(bindings) => Ok(bindings.call_handle(store, event, payload).await?.map(|observations| {
                observations
                    .into_iter()
                    .map(|o| PluginObservation { kind: o.kind, content: o.content, tool: o.tool, tags: o.tags })
                    .collect()
            })),
        }
    }
}

impl Sampler {
    pub async fn sample(
        &self,
        store: impl AsContextMut<Data = State>,
        tool: &str,
        input: &str,
        output: &str,
        budget: u32,
    ) -> wasmtime::Result<Result<Sample, String>> {
        match self {
            Self::V0_1_0(bindings) => Ok(bindings
                .call_sample(store, tool, input, output, budget)
                .await?
                .map(|s| Sample { text: s.text, dropped: s.dropped })),
        }
    }
}

impl Summarizer {
    /// The brief and the detailed summary of a session's public observations.
    pub async fn summarize(
        &self,
        store: impl AsContextMut<Data = State>,
        facts: &SessionFacts,
        observations: &[Observation],
    ) -> wasmtime::Result<Result<(String, String), String>> {
        match self {
            Self::V0_1_0(bindings) => {
                use since_v0_1_0::types;
                let facts = types::SessionFacts {
                    id: facts.id.clone(),
                    project: facts.project.clone(),
                    started_at: facts.started_at,
                    ended_at: facts.ended_at,
                };
                let recorded: Vec<types::Recorded> = observations
                    .iter()
                    .filter(|o| !o.private)
                    .map(|o| types::Recorded {
                        id: o.id,
                        ts: o.ts,
                        kind: o.kind.to_string(),
                        tool: o.tool.clone(),
                        content: o.content.clone(),
                        tags: o.tags.clone(),
                    })
                    .collect();
                Ok(bindings.call_summarize(store, &facts, &recorded).await?.map(|s| (s.brief, s.detailed)))
            }
        }
    }
}
