//! A trae-mem sampler: shrinks a tool output longer than the capture
//! budget before it is stored. This one keeps the output's beginning and
//! end, and says how much of the middle it dropped.
//! The interface, with every type documented: wit/since_v0.2.0/plugin.wit.

wit_bindgen::generate!({ world: "sampler", path: "wit/since_v0.2.0" });

struct Plugin;

/// Room kept for the marker between the two ends.
const MARKER_ROOM: usize = 64;

impl Guest for Plugin {
    fn sample(_tool: String, _input: String, output: String, budget: u32) -> Result<Sample, String> {
        let chars: Vec<char> = output.chars().collect();
        let budget = budget as usize;
        if chars.len() <= budget {
            return Ok(Sample { text: output, dropped: String::new() });
        }
        let end = budget.saturating_sub(MARKER_ROOM) / 2;
        let dropped = chars.len() - 2 * end;
        let head: String = chars[..end].iter().collect();
        let tail: String = chars[chars.len() - end..].iter().collect();
        Ok(Sample {
            text: format!("{head}\n… [{dropped} characters dropped] …\n{tail}"),
            dropped: format!("dropped {dropped} of {} characters from the middle", chars.len()),
        })
    }
}

export!(Plugin);
