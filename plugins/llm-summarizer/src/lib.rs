//! A summarizer that asks a language model: the Anthropic Messages API, or
//! any OpenAI-compatible chat server (OpenAI, Ollama, llama.cpp's server,
//! vLLM), chosen by its config:
//!
//! ```toml
//! [plugins.config]
//! api = "anthropic"            # or "openai"
//! url = "https://api.anthropic.com/v1/messages"
//! model = "claude-haiku-4-5"
//! max_tokens = 1024            # the most the reply may take
//! ```
//!
//! It sends the session's rows as trae-mem chose them (within `[summarize]
//! max_input_chars`), asks for JSON, and returns a brief and a detailed
//! summary, typed learnings, and the tokens the server counted. Its key is
//! added by the host from the grant; this plugin never sees it.

wit_bindgen::generate!({ world: "summarizer", path: "../../wit/since_v0.2.0", generate_all });

mod http;

use serde_json::{Value, json};
use trae_mem::plugin::host::{Level, config, log};
use trae_mem::plugin::types::Learning;

struct LlmSummarizer;

/// What the model is asked to do.
const INSTRUCTIONS: &str = "You summarize a coding agent's session for its memory. \
Reply with one JSON object and nothing else: \
{\"brief\": \"<= 600 characters: what was asked and what came of it\", \
\"detailed\": \"<= 2500 characters: the goal, what was done and decided, what failed, what is left\", \
\"learnings\": [{\"title\": \"one line\", \"facts\": [\"a sentence each\"], \"files\": [\"paths read or changed\"], \
\"concepts\": [\"libraries, subsystems, techniques\"]}]}. \
Give at most five learnings, only what a later session would want to know. \
Write in the language the user wrote in. Never invent what the session does not show.";

/// The plugin's settings.
struct Settings {
    api: Api,
    url: String,
    model: String,
    max_tokens: u64,
    timeout_ms: u64,
}

#[derive(PartialEq)]
enum Api {
    Anthropic,
    OpenAi,
}

impl Settings {
    fn read() -> Result<Settings, String> {
        let config: Value = serde_json::from_str(&config()).map_err(|e| format!("config: {e}"))?;
        let text = |key: &str| config[key].as_str().map(str::to_owned);
        let api = match text("api").as_deref() {
            Some("anthropic") | None => Api::Anthropic,
            Some("openai") => Api::OpenAi,
            Some(other) => return Err(format!("config: api = {other:?}: use \"anthropic\" or \"openai\"")),
        };
        let url = text("url").ok_or("config: `url` is missing: the endpoint to POST to")?;
        let model = text("model").ok_or("config: `model` is missing")?;
        let max_tokens = config["max_tokens"].as_u64().unwrap_or(1024);
        let timeout_ms = config["timeout_ms"].as_u64().unwrap_or(60_000);
        Ok(Settings { api, url, model, max_tokens, timeout_ms })
    }
}

impl Guest for LlmSummarizer {
    fn summarize(session: SessionFacts, observations: Vec<Recorded>) -> Result<Summary, String> {
        let settings = Settings::read()?;
        let transcript = transcript(&session, &observations);
        let (headers, body) = request(&settings, &transcript);
        let (status, reply) = http::post_json(&settings.url, &headers, body.to_string().as_bytes(), settings.timeout_ms)?;
        let reply: Value = serde_json::from_slice(&reply)
            .map_err(|e| format!("HTTP {status}: the reply is not JSON ({e}): {}", preview(&reply)))?;
        if !(200..300).contains(&status) {
            return Err(format!("HTTP {status}: {}", reply["error"]["message"].as_str().unwrap_or(&reply.to_string())));
        }
        let (text, tokens) = answer(&settings.api, &reply)?;
        log(Level::Info, &format!("{} answered for session {} ({tokens} tokens)", settings.model, session.id));
        parse(&text, tokens)
    }
}

/// The session as the model reads it: one line per row, in order.
fn transcript(session: &SessionFacts, observations: &[Recorded]) -> String {
    let mut text = format!("Project: {}\n", session.project);
    for row in observations {
        let tool = row.tool.as_deref().map(|t| format!(" {t}")).unwrap_or_default();
        text.push_str(&format!("[{}{tool}] {}\n", row.kind, row.content));
    }
    text
}

/// The request's headers and body for the configured API.
fn request(settings: &Settings, transcript: &str) -> (Vec<(&'static str, &'static str)>, Value) {
    match settings.api {
        Api::Anthropic => (
            vec![("anthropic-version", "2023-06-01")],
            json!({
                "model": settings.model,
                "max_tokens": settings.max_tokens,
                "system": INSTRUCTIONS,
                "messages": [{"role": "user", "content": transcript}],
            }),
        ),
        Api::OpenAi => (
            Vec::new(),
            json!({
                "model": settings.model,
                "max_tokens": settings.max_tokens,
                "messages": [
                    {"role": "system", "content": INSTRUCTIONS},
                    {"role": "user", "content": transcript},
                ],
            }),
        ),
    }
}

/// The model's text and the tokens the server counted, from its reply.
fn answer(api: &Api, reply: &Value) -> Result<(String, u32), String> {
    let (text, input, output) = match api {
        Api::Anthropic => (
            reply["content"].as_array().and_then(|parts| parts.iter().find_map(|p| p["text"].as_str())),
            &reply["usage"]["input_tokens"],
            &reply["usage"]["output_tokens"],
        ),
        Api::OpenAi => (
            reply["choices"][0]["message"]["content"].as_str(),
            &reply["usage"]["prompt_tokens"],
            &reply["usage"]["completion_tokens"],
        ),
    };
    let text = text.ok_or_else(|| format!("the reply holds no text: {}", preview(reply.to_string().as_bytes())))?;
    let tokens = input.as_u64().unwrap_or(0) + output.as_u64().unwrap_or(0);
    Ok((text.to_owned(), u32::try_from(tokens).unwrap_or(u32::MAX)))
}

/// The summary in the model's text: the JSON object in it, even inside a
/// code fence or after a sentence.
fn parse(text: &str, tokens: u32) -> Result<Summary, String> {
    let object = text.find('{').zip(text.rfind('}')).filter(|(a, b)| a < b).map(|(a, b)| &text[a..=b]);
    let value: Value = object
        .and_then(|o| serde_json::from_str(o).ok())
        .ok_or_else(|| format!("the model did not answer with a JSON object: {}", preview(text.as_bytes())))?;
    let brief = value["brief"].as_str().unwrap_or_default().trim().to_owned();
    if brief.is_empty() {
        return Err(format!("the model's answer has no `brief`: {}", preview(text.as_bytes())));
    }
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    let learnings = value["learnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| {
            Some(Learning {
                title: l["title"].as_str()?.to_owned(),
                facts: strings(&l["facts"]),
                files: strings(&l["files"]),
                concepts: strings(&l["concepts"]),
            })
        })
        .collect();
    let detailed = value["detailed"].as_str().unwrap_or(&brief).trim().to_owned();
    Ok(Summary { brief, detailed, learnings, tokens_used: tokens })
}

/// The start of a reply, for an error message.
fn preview(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(300).collect()
}

export!(LlmSummarizer);
