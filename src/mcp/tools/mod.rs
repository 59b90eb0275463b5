//! The tools: each one's name, description and schemas, and the code that
//! runs it against the library. Names match the reference design, so
//! existing Trae configurations keep working.
//!
//! A tool takes a typed input, derived from its JSON arguments, and returns
//! a typed output; the schemas of both come from the same types, so what
//! `tools/list` promises is what `tools/call` gives. A failure is a message
//! for the model that says how to fix the call.

mod forget;
mod hook_event;
mod recall;
mod sessions;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Result;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::Loaded;
use crate::privacy::Privacy;
use crate::recall::{Private, Reader};
use crate::store::Store;

/// What every tool works with: the settings, the store and the privacy
/// filter of the home the server was started for.
pub struct Memory {
    loaded: Loaded,
    store: Mutex<Store>,
    privacy: Privacy,
    /// The server's working directory, which its client chose.
    cwd: PathBuf,
    /// The project of the server's working directory: what a tool means
    /// when no project is named.
    default_project: String,
}

impl Memory {
    pub fn new(loaded: Loaded, store: Store, cwd: &Path) -> Result<Self> {
        let privacy = crate::ingest::privacy(&loaded)?;
        let cwd = crate::project::canonical(cwd).unwrap_or_else(|_| cwd.to_owned());
        let default_project = crate::project::identify(&cwd);
        Ok(Self { loaded, store: Mutex::new(store), privacy, cwd, default_project })
    }

    /// The store, for one call. Every use is synchronous, so no lock (and
    /// no transaction) is ever held across an await.
    fn store(&self) -> MutexGuard<'_, Store> {
        // A panic in another call leaves the connection itself intact.
        self.store.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The way in, for the tools that record.
    fn ingest(&self) -> crate::ingest::Ingest<'_> {
        crate::ingest::Ingest::new(&self.loaded, &self.privacy)
    }

    /// Whether `trae_mem_forget` is offered (`[mcp] allow_forget`).
    pub fn allows_forget(&self) -> bool {
        self.loaded.config.mcp.allow_forget
    }

    /// The project an argument names, or the server's own.
    fn project(&self, named: Option<&str>) -> Result<String, ToolError> {
        match named.map(str::trim).filter(|p| !p.is_empty()) {
            Some(named) => crate::project::from_arg(named).map_err(|err| ToolError(format!("project: {err:#}"))),
            None => Ok(self.default_project.clone()),
        }
    }
}

/// A failure to show the model: what went wrong and how to call again.
#[derive(Debug)]
pub struct ToolError(pub String);

impl From<anyhow::Error> for ToolError {
    fn from(err: anyhow::Error) -> Self {
        Self(format!("{err:#}"))
    }
}

/// A tool as `tools/list` shows it, and the code behind it.
pub struct ToolDef {
    pub tool: Tool,
    run: Run,
}

/// A tool's code, from JSON arguments to JSON output.
type Run = Box<dyn Fn(&Memory, JsonObject) -> Result<Value, ToolError> + Send + Sync>;

/// The words of a tool: what the model reads in `tools/list`.
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    /// A valid call's arguments, shown when a call's arguments do not fit.
    example: &'static str,
    read_only: bool,
}

impl ToolDef {
    /// Defines a tool whose schemas are those of `I` and `O`.
    fn new<I, O>(spec: Spec, run: fn(&Memory, I) -> Result<O, ToolError>) -> Self
    where
        I: DeserializeOwned + JsonSchema + 'static,
        O: Serialize + JsonSchema + 'static,
    {
        let mut tool = Tool::new(spec.name, spec.description, JsonObject::new())
            .with_title(spec.title)
            .with_input_schema::<I>()
            .with_output_schema::<O>()
            .annotate(ToolAnnotations::new().read_only(spec.read_only).destructive(false).open_world(false));
        tool.input_schema = Arc::new(standard_formats(&tool.input_schema));
        tool.output_schema = tool.output_schema.map(|schema| Arc::new(standard_formats(&schema)));
        let Spec { name, example, .. } = spec;
        let run = move |memory: &Memory, arguments: JsonObject| {
            let input: I = serde_json::from_value(Value::Object(arguments)).map_err(|err| {
                ToolError(format!("invalid arguments for {name}: {err}. A valid call's arguments look like {example}"))
            })?;
            let output = run(memory, input)?;
            serde_json::to_value(output).map_err(|err| ToolError(format!("{name}: {err}")))
        };
        Self { tool, run: Box::new(run) }
    }

    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// Runs the tool: its structured output, or the message of its failure.
    pub fn call(&self, memory: &Memory, arguments: JsonObject) -> Result<Value, String> {
        (self.run)(memory, arguments).map_err(|ToolError(message)| message)
    }
}

/// Every tool, in the order `tools/list` shows them; `trae_mem_forget`
/// only when the config allows it.
pub fn catalog(allow_forget: bool) -> Vec<ToolDef> {
    let mut tools = recall::definitions();
    tools.extend(sessions::definitions());
    tools.push(hook_event::definition());
    if allow_forget {
        tools.push(forget::definition());
    }
    tools
}

/// The formats JSON Schema defines. schemars also writes its own (`uint`,
/// `int64`, `double`), which strict validators warn about: Gemini CLI
/// printed `unknown format "uint" ignored` for each at every start. Their
/// `minimum` says what they meant.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A schema without the formats JSON Schema does not define.
fn standard_formats(schema: &JsonObject) -> JsonObject {
    fn clean(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
                    map.remove("format");
                }
                map.values_mut().for_each(clean);
            }
            Value::Array(items) => items.iter_mut().for_each(clean),
            _ => {}
        }
    }
    let mut value = Value::Object(schema.clone());
    clean(&mut value);
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object stays an object"),
    }
}

/// How the tools read memory: an agent never learns that a private row exists.
fn reader(store: &Store) -> Reader<'_> {
    Reader::new(store, Private::Hidden)
}

/// A stored time as tools show it: RFC 3339, in UTC.
fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms).map_or_else(|_| ms.to_string(), |t| t.to_string())
}

/// Checks that a count argument lies in `range`, naming the argument otherwise.
fn in_range(name: &str, value: usize, range: std::ops::RangeInclusive<usize>) -> Result<usize, ToolError> {
    if range.contains(&value) {
        return Ok(value);
    }
    Err(ToolError(format!("{name} must be from {} to {}, not {value}", range.start(), range.end())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `format` left in any tool's schemas is one JSON Schema defines.
    #[test]
    fn schemas_use_only_standard_formats() {
        fn formats<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
            match value {
                Value::Object(map) => {
                    found.extend(map.get("format").and_then(Value::as_str));
                    map.values().for_each(|v| formats(v, found));
                }
                Value::Array(items) => items.iter().for_each(|v| formats(v, found)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        let schemas: Vec<Value> = catalog(true)
            .iter()
            .flat_map(|t| [Some(&t.tool.input_schema), t.tool.output_schema.as_ref()])
            .flatten()
            .map(|s| Value::Object((**s).clone()))
            .collect();
        for schema in &schemas {
            formats(schema, &mut found);
        }
        let unknown: Vec<&&str> = found.iter().filter(|f| !STANDARD_FORMATS.contains(f)).collect();
        assert!(unknown.is_empty(), "non-standard formats: {unknown:?}");
        // Counts still say they cannot be negative.
        assert!(schemas.iter().any(|s| s.to_string().contains("\"minimum\":0")));
    }
}
