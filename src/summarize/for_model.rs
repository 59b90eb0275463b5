//! What a language model is sent of a session: its stored public rows only
//! (private text and secrets never reached the store), without what
//! trae-mem itself put there, cut to `[summarize] max_input_chars` with
//! what matters first: prompts, answers, decisions and errors whole, then
//! each tool call's input (the files and commands it touched), then as much
//! of the tools' output as still fits. Kept in the session's order.

use crate::store::{Kind, LEARNING, Observation, SESSION_END_NOTE, STOP_NOTE};
use crate::text::clip;

/// The most characters of one prompt, answer or error.
const STATED_CHARS: usize = 4000;
/// The most characters of a tool call's input line.
const INPUT_CHARS: usize = 300;
/// The most characters of a tool call with its output.
const TOOL_CHARS: usize = 1500;

/// The rows of `observations` to send, cut to `max_chars` in all.
pub fn select(observations: &[Observation], max_chars: usize) -> Vec<Observation> {
    let sent: Vec<&Observation> = observations.iter().filter(|o| is_sent(o)).collect();
    // What each row is sent as, so far: nothing yet.
    let mut texts: Vec<Option<String>> = vec![None; sent.len()];
    let mut left = max_chars;
    let is_tool = |o: &Observation| o.kind == Kind::Tool;
    let passes: [Pass; 3] = [
        (&|o| !is_tool(o), &|text| clip(text, STATED_CHARS)),
        (&is_tool, &|text| clip(text.lines().next().unwrap_or_default(), INPUT_CHARS)),
        (&is_tool, &|text| clip(text, TOOL_CHARS)),
    ];
    for (takes, cut) in passes {
        for (row, text) in sent.iter().zip(texts.iter_mut()) {
            if !takes(row) {
                continue;
            }
            let had = text.as_ref().map_or(0, |t| t.chars().count());
            let wanted = cut(&row.content);
            let grows = wanted.chars().count().saturating_sub(had);
            if grows == 0 {
                continue;
            }
            if grows > left {
                // The last that fits in part; the rest of this pass would not.
                if had == 0 && left >= MIN_PART {
                    *text = Some(clip(&wanted, left));
                    left = 0;
                }
                continue;
            }
            left -= grows;
            *text = Some(wanted);
        }
    }
    sent.into_iter()
        .zip(texts)
        .filter_map(|(row, text)| text.map(|content| Observation { content, ..row.clone() }))
        .collect()
}

/// One pass over the rows: which it takes, and how much of each.
type Pass<'a> = (&'a dyn Fn(&Observation) -> bool, &'a dyn Fn(&str) -> String);

/// The least worth sending of a row cut to fit.
const MIN_PART: usize = 200;

/// Whether a row is the session's own: not trae-mem's notes (a tool about
/// to run, a call of trae-mem's own tools, a turn's or a session's end)
/// nor its earlier learnings, which the model wrote.
fn is_sent(row: &Observation) -> bool {
    if row.private {
        return false;
    }
    match &row.kind {
        Kind::Note => {
            row.tool.is_none() && !row.content.starts_with(STOP_NOTE) && !row.content.starts_with(SESSION_END_NOTE)
        }
        Kind::Other(kind) => kind != LEARNING,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: Kind, tool: Option<&str>, content: &str) -> Observation {
        Observation {
            id: 0,
            session_id: "s".into(),
            ts: 0,
            kind,
            tool: tool.map(str::to_owned),
            content: content.into(),
            private: false,
            tags: Vec::new(),
        }
    }

    #[test]
    fn prompts_and_answers_come_before_tool_output_and_trae_mems_own_rows_never_go() {
        let output = "x".repeat(5000);
        let rows = vec![
            row(Kind::User, None, "fix the config loader"),
            row(Kind::Note, Some("Read"), "about to run Read"),
            row(Kind::Tool, Some("Read"), &format!("{{\"file_path\":\"src/config.rs\"}}\n→ {output}")),
            row(Kind::Note, Some("mcp__trae-mem__trae_mem_search"), "asked trae-mem's memory: config"),
            row(Kind::Other(LEARNING.into()), None, "an earlier learning"),
            row(Kind::Response, None, "Fixed: a missing file now means the defaults."),
            row(Kind::Note, None, "stop: turn ended"),
        ];
        let sent = select(&rows, 400);
        let texts: Vec<&str> = sent.iter().map(|o| o.content.as_str()).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert_eq!(texts[0], "fix the config loader");
        assert_eq!(texts[1], "{\"file_path\":\"src/config.rs\"}", "the input line fits, the output does not");
        assert_eq!(texts[2], "Fixed: a missing file now means the defaults.");
        let all = select(&rows, 100_000);
        assert_eq!(all[1].content.chars().count(), TOOL_CHARS, "with room, the output goes too, cut");
    }
}
