//! Where plugins join the hook pipeline: event handlers for events that are
//! not built in (and for the model's answer, as ModelResponse), samplers for
//! large tool outputs. (A summarizer plugin is chosen where every summary
//! is: `summarize::session`.) Each plugin failure becomes a warning, and the
//! built-in behaviour stands.

use crate::config::Capture;
use crate::event::{Event, EventKind};
use crate::plugins::{PluginObservation, Plugins};

use super::record::{self, PluginWork, Sampled};

/// The name under which the model's final answer reaches event handlers.
pub const MODEL_RESPONSE: &str = "ModelResponse";

/// Runs the plugins an event needs before it is stored.
pub fn before(plugins: &Plugins<'_>, event: &Event, capture: &Capture) -> PluginWork {
    let mut work = PluginWork::default();
    if plugins.all().is_empty() {
        return work;
    }
    match &event.kind {
        EventKind::Other(name) => work.handled = handle(plugins, name, event, &mut work.warnings),
        EventKind::Stop if event.final_answer.as_deref().is_some_and(|a| !a.trim().is_empty()) => {
            work.model_response = handle(plugins, MODEL_RESPONSE, event, &mut work.warnings).unwrap_or_default();
        }
        EventKind::PostToolUse => work.sampled = sample(plugins, event, capture, &mut work.warnings),
        _ => {}
    }
    work
}

/// Gives an event to every handler subscribed to `name`. `None` when none
/// is subscribed or none succeeded.
fn handle(
    plugins: &Plugins<'_>,
    name: &str,
    event: &Event,
    warnings: &mut Vec<String>,
) -> Option<Vec<PluginObservation>> {
    let handlers = plugins.handlers(name);
    if handlers.is_empty() {
        return None;
    }
    let payload = event.payload.to_string();
    let mut answered = false;
    let mut observations = Vec::new();
    for handler in handlers {
        match plugins.handle(handler, name, &payload) {
            Ok(mut found) => {
                answered = true;
                observations.append(&mut found);
            }
            Err(err) => warnings.push(format!("{err:#}")),
        }
    }
    answered.then_some(observations)
}

/// Samples a tool output longer than the capture limit, if a sampler is
/// declared for the tool.
fn sample(plugins: &Plugins<'_>, event: &Event, capture: &Capture, warnings: &mut Vec<String>) -> Option<Sampled> {
    let tool = event.tool_name.as_deref()?;
    let sampler = plugins.sampler(tool)?;
    let output = record::response_text(event.tool_response.as_ref()?, usize::MAX);
    if output.chars().count() <= capture.tool_response_chars {
        return None;
    }
    let input = event.tool_input.as_ref().map_or_else(|| "null".to_owned(), ToString::to_string);
    match plugins.sample(sampler, tool, &input, &output, capture.tool_response_chars) {
        Ok(sample) => {
            let text =
                if sample.dropped.is_empty() { sample.text } else { format!("{}\n[{}]", sample.text, sample.dropped) };
            Some(Sampled { text, by: sampler.name.clone() })
        }
        Err(err) => {
            warnings.push(format!("{err:#}"));
            None
        }
    }
}
