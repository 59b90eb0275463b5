//! Keeps the first and last lines of a large tool output, plus every line
//! in between that looks like an error or a warning, and says what it dropped.

wit_bindgen::generate!({ world: "sampler", path: "../../wit/since_v0.1.0" });

use trae_mem::plugin::host::config;

struct HeadTail;

const ALERT: &[&str] = &[
    "error",
    "warning",
    "warn",
    "panic",
    "failed",
    "failure",
    "exception",
    "traceback",
    "fatal",
    "错误",
    "失败",
    "警告",
];

impl Guest for HeadTail {
    fn sample(_tool: String, _input: String, output: String, budget: u32) -> Result<Sample, String> {
        let settings: serde_json::Value = serde_json::from_str(&config()).unwrap_or_default();
        let head = settings["head_lines"].as_u64().unwrap_or(20) as usize;
        let tail = settings["tail_lines"].as_u64().unwrap_or(20) as usize;
        let lines: Vec<&str> = output.lines().collect();
        let budget = budget as usize;
        if lines.len() <= head + tail && output.chars().count() <= budget {
            return Ok(Sample { text: output, dropped: String::new() });
        }
        let mut kept: Vec<String> = Vec::new();
        let mut dropped = 0usize;
        let middle_end = lines.len().saturating_sub(tail).max(head);
        for (i, line) in lines.iter().enumerate() {
            let edge = i < head || i >= middle_end;
            let alert = ALERT.iter().any(|w| line.to_lowercase().contains(w));
            if edge || alert {
                if dropped > 0 {
                    kept.push(format!("… [{dropped} lines dropped] …"));
                    dropped = 0;
                }
                kept.push((*line).to_owned());
            } else {
                dropped += 1;
            }
        }
        let dropped_lines = lines.len() - kept.iter().filter(|l| !l.starts_with("… [")).count();
        let mut text = kept.join("\n");
        if text.chars().count() > budget {
            text = text.chars().take(budget.saturating_sub(1)).collect::<String>() + "…";
        }
        Ok(Sample {
            text,
            dropped: format!(
                "kept the first {head} and last {tail} lines and alerts; dropped {dropped_lines} of {} lines",
                lines.len()
            ),
        })
    }
}

export!(HeadTail);
