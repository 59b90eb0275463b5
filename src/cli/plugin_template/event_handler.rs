//! A trae-mem event handler: turns the events it is declared for into
//! observations. This one records each line of the model's final answer
//! (the ModelResponse event) that starts with "TODO" as a `todo`.
//! The interface, with every type documented: wit/since_v0.2.0/plugin.wit.

wit_bindgen::generate!({ world: "event-handler", path: "wit/since_v0.2.0" });

use trae_mem::plugin::host::{Level, log};

struct Plugin;

impl Guest for Plugin {
    fn handle(event: String, payload: String) -> Result<Vec<Observation>, String> {
        let payload: serde_json::Value = serde_json::from_str(&payload).map_err(|e| format!("{event}: {e}"))?;
        let answer = payload["last_assistant_message"].as_str().unwrap_or_default();
        let todos: Vec<Observation> = answer
            .lines()
            .map(str::trim)
            .filter(|line| line.starts_with("TODO"))
            .map(|line| Observation { kind: "todo".into(), content: line.into(), tool: None, tags: vec![] })
            .collect();
        log(Level::Debug, &format!("{event}: {} todos", todos.len()));
        Ok(todos)
    }
}

export!(Plugin);
