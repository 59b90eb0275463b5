//! An alternative summarizer: Goal / Done / Open problems / Next steps.

wit_bindgen::generate!({ world: "summarizer", path: "../../wit/since_v0.1.0" });

struct Sectioned;

const BRIEF: usize = 900;
const DETAILED: usize = 3200;

impl Guest for Sectioned {
    fn summarize(_session: SessionFacts, observations: Vec<Recorded>) -> Result<Summary, String> {
        let first_line =
            |o: &Recorded| o.content.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
        let of = |kinds: &[&str]| -> Vec<&Recorded> {
            observations.iter().filter(|o| kinds.contains(&o.kind.as_str())).collect()
        };
        let goal = of(&["user"]).first().map(|o| first_line(o)).unwrap_or_else(|| "(no prompt recorded)".into());
        let mut done: Vec<String> = of(&["response", "decision"]).iter().map(|o| first_line(o)).collect();
        done.extend(
            of(&["tool"]).iter().map(|o| format!("{}: {}", o.tool.as_deref().unwrap_or("tool"), first_line(o))),
        );
        dedup(&mut done);
        // An error counts as open unless the same tool succeeded after it.
        let mut open: Vec<String> = Vec::new();
        for (i, o) in observations.iter().enumerate().filter(|(_, o)| o.kind == "error") {
            let fixed = observations[i + 1..].iter().any(|later| later.kind == "tool" && later.tool == o.tool);
            if !fixed {
                open.push(format!(
                    "{}: {}",
                    o.tool.as_deref().unwrap_or("error"),
                    o.content.lines().last().unwrap_or("").trim()
                ));
            }
        }
        dedup(&mut open);
        let mut next: Vec<String> = of(&["response", "decision"])
            .iter()
            .flat_map(|o| o.content.split(['.', '。', '\n']))
            .filter(|s| {
                let l = s.trim().to_lowercase();
                // A heading such as "Next steps:" (from the model-response plugin) is not a step.
                !l.ends_with(':') && (l.contains("next") || l.contains("todo") || l.contains("下一步"))
            })
            .map(|s| s.trim().trim_start_matches(['-', ' ']).to_owned())
            .collect();
        dedup(&mut next);

        let section = |title: &str, items: &[String], max: usize| -> String {
            if items.is_empty() {
                return format!("{title}: none\n");
            }
            let mut s = format!("{title}:\n");
            items.iter().take(max).for_each(|i| s.push_str(&format!("- {}\n", clip(i, 300))));
            s
        };
        let detailed = format!(
            "Goal: {}\n{}{}{}",
            clip(&goal, 400),
            section("Done", &done, 10),
            section("Open problems", &open, 6),
            section("Next steps", &next, 6)
        );
        let brief = format!(
            "Goal: {}\nDone: {}\nOpen problems: {}\nNext steps: {}",
            clip(&goal, 240),
            done.first().map_or("nothing recorded".into(), |d| clip(d, 280)),
            if open.is_empty() { "none".into() } else { clip(&open.join("; "), 160) },
            if next.is_empty() { "none".into() } else { clip(&next.join("; "), 160) },
        );
        Ok(Summary { brief: clip(&brief, BRIEF), detailed: clip(detailed.trim_end(), DETAILED) })
    }
}

fn dedup(items: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| !i.is_empty() && seen.insert(i.clone()));
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max { text.to_owned() } else { text.chars().take(max - 1).collect::<String>() + "…" }
}

export!(Sectioned);
