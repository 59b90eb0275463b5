//! The published versions of the plugin interface, behind one enum per
//! world, as Zed wraps its extension API versions.
//!
//! Each version lives in its own module, generated from its frozen folder
//! under `wit/` (`since_v0_1_0`, `since_v0_2_0`). `Version::of` reads which one a component
//! was built against from its import and export names, before anything is
//! instantiated; the world enums (`Handler`, `Sampler`, `Summarizer`)
//! instantiate the matching bindings and turn each version's types into the
//! host's own. A new version adds a module, a `Version` variant and one arm
//! per match below; a call that an older version lacks fails with a clear
//! message or returns a default there.

pub mod since_v0_1_0;
pub mod since_v0_2_0;

use anyhow::{Result, bail};
use wasmtime::component::{Component, Linker};
use wasmtime::{AsContextMut, Engine};

use super::sandbox::State;
use super::{Learning, PluginObservation, PluginSummary, Sample, SessionFacts};
use crate::store::Observation;

/// The package every plugin interface belongs to.
const PACKAGE: &str = "trae-mem:plugin";

/// A version of the plugin interface that this host can load.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V0_1_0,
    /// Adds HTTP for summarizers, learnings and the tokens spent.
    V0_2_0,
}

impl Version {
    /// Every version this host loads, oldest first.
    pub const ALL: &[Version] = &[Version::V0_1_0, Version::V0_2_0];

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V0_1_0 => since_v0_1_0::VERSION,
            Version::V0_2_0 => since_v0_2_0::VERSION,
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
            V0_2_0(since_v0_2_0::$module::$bindings),
        }

        impl $name {
            pub async fn instantiate(
                version: Version,
                store: impl AsContextMut<Data = State>,
                component: &Component,
                linker: &Linker<State>,
            ) -> wasmtime::Result<Self> {
                Ok(match version {
                    Version::V0_1_0 => Self::V0_1_0(
                        since_v0_1_0::$module::$bindings::instantiate_async(store, component, linker).await?,
                    ),
                    Version::V0_2_0 => Self::V0_2_0(
                        since_v0_2_0::$module::$bindings::instantiate_async(store, component, linker).await?,
                    ),
                })
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

/// Each version's records, as the host's own types: the same fields under
/// another package version.
macro_rules! convert_records {
    ($($version:ident),*) => {$(
        impl From<$version::types::Observation> for PluginObservation {
            fn from(o: $version::types::Observation) -> Self {
                PluginObservation { kind: o.kind, content: o.content, tool: o.tool, tags: o.tags }
            }
        }

        impl From<$version::types::Sample> for Sample {
            fn from(s: $version::types::Sample) -> Self {
                Sample { text: s.text, dropped: s.dropped }
            }
        }

        impl From<&SessionFacts> for $version::types::SessionFacts {
            fn from(facts: &SessionFacts) -> Self {
                $version::types::SessionFacts {
                    id: facts.id.clone(),
                    project: facts.project.clone(),
                    started_at: facts.started_at,
                    ended_at: facts.ended_at,
                }
            }
        }

        impl From<&Observation> for $version::types::Recorded {
            fn from(o: &Observation) -> Self {
                $version::types::Recorded {
                    id: o.id,
                    ts: o.ts,
                    kind: o.kind.to_string(),
                    tool: o.tool.clone(),
                    content: o.content.clone(),
                    tags: o.tags.clone(),
                }
            }
        }
    )*};
}

convert_records!(since_v0_1_0, since_v0_2_0);

impl From<since_v0_1_0::types::Summary> for PluginSummary {
    fn from(s: since_v0_1_0::types::Summary) -> Self {
        PluginSummary { brief: s.brief, detailed: s.detailed, learnings: Vec::new(), tokens_used: 0 }
    }
}

impl From<since_v0_2_0::types::Summary> for PluginSummary {
    fn from(s: since_v0_2_0::types::Summary) -> Self {
        let learnings = s
            .learnings
            .into_iter()
            .map(|l| Learning { title: l.title, facts: l.facts, files: l.files, concepts: l.concepts })
            .collect();
        PluginSummary { brief: s.brief, detailed: s.detailed, learnings, tokens_used: u64::from(s.tokens_used) }
    }
}

fn converted<T: Into<U>, U>(items: Vec<T>) -> Vec<U> {
    items.into_iter().map(Into::into).collect()
}

/// A session's public observations, as a version's records.
fn recorded<'a, R: From<&'a Observation>>(observations: &'a [Observation]) -> Vec<R> {
    observations.iter().filter(|o| !o.private).map(R::from).collect()
}

impl Handler {
    pub async fn handle(
        &self,
        store: impl AsContextMut<Data = State>,
        event: &str,
        payload: &str,
    ) -> wasmtime::Result<Result<Vec<PluginObservation>, String>> {
        Ok(match self {
            Self::V0_1_0(bindings) => bindings.call_handle(store, event, payload).await?.map(converted),
            Self::V0_2_0(bindings) => bindings.call_handle(store, event, payload).await?.map(converted),
        })
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
        Ok(match self {
            Self::V0_1_0(bindings) => bindings.call_sample(store, tool, input, output, budget).await?.map(Sample::from),
            Self::V0_2_0(bindings) => bindings.call_sample(store, tool, input, output, budget).await?.map(Sample::from),
        })
    }
}

impl Summarizer {
    /// The summaries of a session's public observations.
    pub async fn summarize(
        &self,
        store: impl AsContextMut<Data = State>,
        facts: &SessionFacts,
        observations: &[Observation],
    ) -> wasmtime::Result<Result<PluginSummary, String>> {
        Ok(match self {
            Self::V0_1_0(bindings) => {
                let (facts, recorded) = (facts.into(), recorded(observations));
                bindings.call_summarize(store, &facts, &recorded).await?.map(PluginSummary::from)
            }
            Self::V0_2_0(bindings) => {
                let (facts, recorded) = (facts.into(), recorded(observations));
                bindings.call_summarize(store, &facts, &recorded).await?.map(PluginSummary::from)
            }
        })
    }
}
