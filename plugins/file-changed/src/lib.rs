//! FileChanged becomes an observation: "file changed: {event} {path}",
//! tagged with the file and the kind of change.

wit_bindgen::generate!({ world: "event-handler", path: "../../wit/since_v0.1.0" });

struct FileChanged;

impl Guest for FileChanged {
    fn handle(event: String, payload: String) -> Result<Vec<Observation>, String> {
        let payload: serde_json::Value =
            serde_json::from_str(&payload).map_err(|e| format!("{event}: bad payload: {e}"))?;
        let path = payload["file_path"].as_str().ok_or_else(|| format!("{event}: the payload has no file_path"))?;
        // Claude Code says change, add or unlink.
        let change = payload["event"].as_str().unwrap_or("change");
        Ok(vec![Observation {
            kind: "note".into(),
            content: format!("file changed: {change} {path}"),
            tool: None,
            tags: vec![format!("file:{path}"), format!("change:{change}")],
        }])
    }
}

export!(FileChanged);
