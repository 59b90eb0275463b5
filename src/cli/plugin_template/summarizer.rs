//! A trae-mem summarizer: writes each session's brief and detailed
//! summaries in place of the built-in summarizer. This one lists what the
//! user asked and counts the tool calls and errors.
//!
//! Give it a model and it asks the model for the brief: set `url` and
//! `model` in `[plugins.config]` (any OpenAI-compatible chat server: OpenAI,
//! Ollama, llama.cpp's server, vLLM), and grant that URL in
//! `[plugins.grants] http`. The host adds the grant's key header itself, so
//! this code never sees a key, and refuses every other request.
//! The interface, with every type documented: wit/since_v0.2.0/plugin.wit.

wit_bindgen::generate!({ world: "summarizer", path: "wit/since_v0.2.0", generate_all });

mod http;

use serde_json::{Value, json};
use trae_mem::plugin::host::{Level, config, log};

struct Plugin;

/// The most characters the host takes for each summary.
const BRIEF: usize = 900;
const DETAILED: usize = 3200;
/// The most characters of the session sent to a model.
const SENT: usize = 12_000;

impl Guest for Plugin {
    fn summarize(session: SessionFacts, observations: Vec<Recorded>) -> Result<Summary, String> {
        let count = |kind: &str| observations.iter().filter(|o| o.kind == kind).count();
        let asked: Vec<&str> = observations
            .iter()
            .filter(|o| o.kind == "user")
            .map(|o| o.content.lines().next().unwrap_or_default().trim())
            .collect();
        let mut detailed = format!("Session {} in {}\nAsked:\n", session.id, session.project);
        for prompt in &asked {
            detailed.push_str(&format!("- {prompt}\n"));
        }
        let settings: Value = serde_json::from_str(&config()).map_err(|e| format!("config: {e}"))?;
        let (brief, tokens_used) = match (settings["url"].as_str(), settings["model"].as_str()) {
            (Some(url), Some(model)) => ask(url, model, &observations)?,
            _ => {
                let first = asked.first().copied().unwrap_or("(no prompt)");
                let counted = format!("{} asked, {} tool calls, {} errors. First: {first}", asked.len(), count("tool"), count("error"));
                (counted, 0)
            }
        };
        Ok(Summary {
            brief: clip(&brief, BRIEF),
            detailed: clip(detailed.trim_end(), DETAILED),
            learnings: Vec::new(),
            tokens_used,
        })
    }
}

/// Asks the model for a brief of the session, and the tokens its server
/// counted (charged against `[summarize] max_tokens_per_day`).
fn ask(url: &str, model: &str, observations: &[Recorded]) -> Result<(String, u32), String> {
    let mut transcript = String::new();
    for row in observations {
        transcript.push_str(&format!("[{}] {}\n", row.kind, row.content));
    }
    let request = json!({
        "model": model,
        "max_tokens": 400,
        "messages": [
            {"role": "system", "content": "Summarize this coding session for the agent's memory, in at most three sentences: what was asked and what came of it."},
            {"role": "user", "content": clip(&transcript, SENT)},
        ],
    });
    let (status, reply) = http::post_json(url, &[], request.to_string().as_bytes(), 60_000)?;
    let reply: Value = serde_json::from_slice(&reply).map_err(|e| format!("HTTP {status}: the reply is not JSON: {e}"))?;
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}: {reply}"));
    }
    let text = reply["choices"][0]["message"]["content"].as_str().ok_or("the reply holds no text")?;
    let usage = &reply["usage"];
    let tokens = usage["prompt_tokens"].as_u64().unwrap_or(0) + usage["completion_tokens"].as_u64().unwrap_or(0);
    log(Level::Info, &format!("{model} wrote the brief ({tokens} tokens)"));
    Ok((text.trim().to_owned(), u32::try_from(tokens).unwrap_or(u32::MAX)))
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max { text.to_owned() } else { text.chars().take(max - 1).collect::<String>() + "…" }
}

export!(Plugin);
