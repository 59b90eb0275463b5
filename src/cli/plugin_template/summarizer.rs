//! A trae-mem summarizer: writes each session's brief and detailed
//! summaries in place of the built-in summarizer. This one lists what the
//! user asked and counts the tool calls and errors.
//! The interface, with every type documented: wit/since_v0.1.0/plugin.wit.

wit_bindgen::generate!({ world: "summarizer", path: "wit/since_v0.1.0" });

struct Plugin;

/// The most characters the host takes for each summary.
const BRIEF: usize = 900;
const DETAILED: usize = 3200;

impl Guest for Plugin {
    fn summarize(session: SessionFacts, observations: Vec<Recorded>) -> Result<Summary, String> {
        let count = |kind: &str| observations.iter().filter(|o| o.kind == kind).count();
        let asked: Vec<&str> = observations
            .iter()
            .filter(|o| o.kind == "user")
            .map(|o| o.content.lines().next().unwrap_or_default().trim())
            .collect();
        let brief = format!(
            "{} asked, {} tool calls, {} errors. First: {}",
            asked.len(),
            count("tool"),
            count("error"),
            asked.first().copied().unwrap_or("(no prompt)")
        );
        let mut detailed = format!("Session {} in {}\nAsked:\n", session.id, session.project);
        for prompt in &asked {
            detailed.push_str(&format!("- {prompt}\n"));
        }
        Ok(Summary { brief: clip(&brief, BRIEF), detailed: clip(detailed.trim_end(), DETAILED) })
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max { text.to_owned() } else { text.chars().take(max - 1).collect::<String>() + "…" }
}

export!(Plugin);
