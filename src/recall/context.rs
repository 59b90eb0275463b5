//! The context given back to the agent:
//! - at session start, the project's earlier sessions that did work, most
//!   recently active first (`earlier` chooses them), and how to search for more;
//! - with each prompt, the project's earlier memories relevant to it.
//!
//! The MCP server's `trae_mem_inject` uses the same code, optionally
//! focused by a query whose best hits come first.

use anyhow::Result;

use super::earlier;
use super::search::{SearchHit, SearchRequest};
use super::snippet::{self, MARK_END, MARK_START};
use super::{asking, meaning, query, rank};
use crate::config::ContextSettings;
use crate::store::{Facts, Filters, Recalled, Store};
use crate::text::{Language, clip, clip_at_sentence};
use crate::timefmt;

/// The line that tells the agent how to recall more.
pub const HOW_TO_SEARCH: &str = "Search this memory with `trae-mem search \"<words>\" --project .` and see what happened around a hit with `trae-mem timeline <id>`.";

/// The first line of the block given at session start.
const SESSION_START_HEADER: &str = "# Memory from earlier sessions in this project (trae-mem)\n";

/// The first line of the block given with a prompt.
const PROMPT_HEADER: &str = "# Earlier memory related to this prompt (trae-mem)\n";

/// `text` without the blocks trae-mem gave the client, and whatever tag
/// the client wrapped them in. Gemini CLI prepends the session-start block
/// to the next prompt as `<hook_context>…</hook_context>`: stored as the
/// user's words, it would replace their question in summaries and feed old
/// memory back into the store.
pub fn without_injected(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(" (trae-mem)\n") {
        return text.into();
    }
    let mut out = text.to_owned();
    while let Some(start) = [SESSION_START_HEADER, PROMPT_HEADER].iter().filter_map(|h| out.find(h)).min() {
        let Some(end) = how_to_search_as_echoed().find(&out[start..]).map(|at| start + at.end()) else { break };
        let (mut start, mut end) = (start, end);
        // The wrapper, when the block fills it: `<tag>` before, `</tag>` after.
        let before = out[..start].trim_end();
        if let Some(open) = before.rfind('<')
            && let Some(tag) = before[open + 1..].strip_suffix('>')
            && !tag.is_empty()
            && tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            let close = format!("</{tag}>");
            let after = out[end..].trim_start();
            if after.starts_with(&close) {
                start = open;
                end = out.len() - after.len() + close.len();
            }
        }
        out.replace_range(start..end, "");
    }
    out.trim().to_owned().into()
}

/// `HOW_TO_SEARCH`, the last line of every block, as a client may echo it:
/// as written, or HTML-escaped (Gemini CLI 0.61 hands it back with
/// `&lt;words&gt;`), by named, decimal or hex entities, quotes escaped or not.
fn how_to_search_as_echoed() -> &'static regex::Regex {
    static PATTERN: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    PATTERN.get_or_init(|| {
        let either = |c: char, name: &str| {
            format!("(?:{}|(?i:&{name};|&#0*{};|&#x0*{:x};))", regex::escape(&c.to_string()), c as u32, c as u32)
        };
        let pattern: String = HOW_TO_SEARCH
            .chars()
            .map(|c| match c {
                '<' => either(c, "lt"),
                '>' => either(c, "gt"),
                '"' => either(c, "quot"),
                '\'' => either(c, "apos"),
                '&' => either(c, "amp"),
                c => regex::escape(&c.to_string()),
            })
            .collect();
        regex::Regex::new(&pattern).expect("the pattern of a constant compiles")
    })
}

/// How many search hits a focused context shows.
const FOCUS_HITS: usize = 5;

/// A prompt's first this many characters are its query: enough for what
/// it is about, and a long paste does not slow the hook.
const PROMPT_QUERY_CHARS: usize = 400;

/// A memory goes with a prompt by its words when it holds at least this
/// share of the prompt's weighted terms: a common word in common is not
/// relevance.
pub const PROMPT_RELEVANCE: f64 = 0.5;

/// A memory goes with a prompt by its meaning when its session's nearest
/// part stands this many standard deviations above the project's other
/// sessions. Raw similarity cannot tell: this model puts an unrelated
/// prompt at 0.84–0.89 from its best session, a related one at 0.82–0.92,
/// but a related prompt's session stands out from the rest of its project.
/// Chosen with `STANDS_OUT_BESIDE_WORDS` on the tuning half of
/// `tests/fixtures/sessions/prompts.jsonl` (30 paraphrases, 15 unrelated
/// prompts asked in each of 4 projects): 3.0 and 2.0 told 24 of 30 and
/// gave something to 17 of 60 unrelated; 3.5 and 2.5, 23 of 30 and 1 of 60.
/// With ten more unrelated prompts in that half (renaming a variable, a
/// leap-year function, a coupon field: 25 asked in each project), 3.5 gave
/// something to 5 of 100, two by meaning alone ("rename the variable tmp"
/// stood 3.9 for a session that removed `/tmp/never-added`); 4.0 gave 3 of
/// 100 and told the same 23 of 30, as did leaving meaning alone out.
pub const STANDS_OUT: f32 = 4.0;

/// Or when it is among the first this many sessions both by words and by
/// meaning, and stands at least `STANDS_OUT_BESIDE_WORDS` above the rest.
const FIRST_IN_BOTH: usize = 3;
const STANDS_OUT_BESIDE_WORDS: f32 = 2.5;

/// Words agree with meaning only when the session holds at least this
/// share of the prompt's weight. One common word is no agreement: "the
/// difference between TCP and UDP" was told an fd session that shared
/// "difference" (0.12) and stood 2.9 by meaning. A prompt with Chinese in
/// it shares almost no words with English memory, so there any words in
/// common agree, as before. On the tuning half of
/// `tests/fixtures/sessions/prompts.jsonl`: 0.15 told the same 23 of 30
/// and 0 of 60 unrelated (from 1); 0.12, 1 of 60; 0.2, 22 of 30; 0.15 for
/// Chinese prompts too, 22 of 30.
const AGREEING_COVERAGE: f64 = 0.15;

/// Below this many other sessions a project has no spread to stand out
/// from, and meaning alone tells nothing.
const SPREAD_SESSIONS: usize = 5;

/// How many of the project's latest sessions a prompt's memories come from.
const PROMPT_SESSIONS: usize = 100;

/// Builds the context block for `project` at the start of session
/// `current`, or `None` when there is no memory yet. It only reads: a
/// stale summary is told as the built-in summarizer writes it now, which is
/// what the hook's catch-up stores before it asks. The hook, the viewer's
/// project page and the demo all call this, so what they show is exactly
/// what the next session is told.
pub fn at_session_start(
    store: &Store,
    project: &str,
    current: Option<&str>,
    settings: &ContextSettings,
) -> Result<Option<String>> {
    build_focused(store, project, current, settings, None)
}

/// Builds the context block, putting the project's best hits for `query`
/// (when given) before the session summaries, all within the one budget.
/// Session `current` (the one asking) is left out.
pub fn build_focused(
    store: &Store,
    project: &str,
    current: Option<&str>,
    settings: &ContextSettings,
    query: Option<&str>,
) -> Result<Option<String>> {
    let mut sections = Vec::new();
    if let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) {
        let hits = search(store, project, current, query, FOCUS_HITS)?;
        if !hits.is_empty() {
            sections.push(format!("\n## Related to {query:?}\n{}", lines(&hits)));
        }
    }
    let header = SESSION_START_HEADER;
    let footer = format!("\n{HOW_TO_SEARCH}");
    let budget = settings.budget_chars.saturating_sub(header.chars().count() + footer.chars().count());
    let mut body = String::new();
    for section in sections {
        body.push_str(&clip(&section, budget));
    }
    let earlier = earlier::tell(store, project, current, settings, budget.saturating_sub(body.chars().count()))?;
    if body.is_empty() && earlier.sections.is_empty() && earlier.tail.is_empty() {
        return Ok(None);
    }
    let room = budget.saturating_sub(earlier.tail.chars().count());
    for section in earlier.sections {
        let left = room.saturating_sub(body.chars().count());
        if left < 80 {
            break;
        }
        body.push_str(&clip(&section, left));
    }
    Ok(Some(clip(&format!("{header}{body}{}{footer}", earlier.tail), settings.budget_chars)))
}

/// The project's earlier memories relevant to a prompt of session
/// `current`, or `None` when nothing is relevant enough.
///
/// The prompt is first stripped of the words that only ask memory ("what
/// did we do last time about…"). Its memories are chosen two ways, and a
/// session is told when either makes it stand out:
/// - by words, from the detailed summaries of the project's latest
///   `PROMPT_SESSIONS` sessions (what each asked, concluded, ran and ran
///   into), ranked as search ranks, with each term's rarity taken among
///   them; a summary holding `PROMPT_RELEVANCE` of the prompt's weight;
/// - by meaning, each of the project's sessions by its part nearest the
///   prompt (a prompt, an answer, an error, a decision, its brief
///   summary), on a thread beside the words: a session standing
///   `STANDS_OUT` deviations above the others, or first by both ways.
///
/// Without vectors (none made yet, or no model), words alone decide. The
/// query vector costs about 5 ms of a core; the rest well under one.
pub fn for_prompt(
    store: &Store,
    project: &str,
    current: Option<&str>,
    prompt: &str,
    settings: &ContextSettings,
) -> Result<Option<String>> {
    let about = asking::without_asking(&clip(prompt, PROMPT_QUERY_CHARS));
    // Told unasked, a memory must match what the prompt says: a Chinese
    // word's dictionary senses, by words or appended for meaning, told
    // unrelated Chinese prompts earlier work (sessions set, tuning half:
    // 2 of 28 by words, 2 by meaning, from 0).
    let query = query::understand_as_said(&about);
    let near = match about.chars().any(char::is_alphanumeric) {
        true => meaning::NearSessions::begin(store, &about, project, current)?,
        false => meaning::NearSessions::none(),
    };
    if query.terms.is_empty() && !near.sought() {
        return Ok(None);
    }
    let mut recalled = store.recent_summaries(project, current, PROMPT_SESSIONS)?;
    // A session that only asked memory restates what memory holds: the
    // session that did the work is told instead.
    recalled.retain(|r| !only_asked_memory(r));
    let by_words = by_words(&query, &recalled);
    let agreeing = match about.chars().any(query::is_cjk) {
        true => 0.0,
        false => AGREEING_COVERAGE,
    };
    let near = near.wait(store)?;
    let standing = standing(&near);
    // Sessions meaning found beyond the latest are read now.
    let missing: Vec<&str> = standing
        .iter()
        .take(settings.prompt_hits.max(FIRST_IN_BOTH))
        .map(|(session, _)| *session)
        .filter(|session| recalled.iter().all(|r| r.summary.session_id != *session))
        .collect();
    let found = store.detailed_summaries(&missing)?;
    recalled.extend(found.into_iter().filter(|r| !only_asked_memory(r)));

    let chosen = choose(&recalled, &by_words, &standing, agreeing, settings.prompt_hits);
    if chosen.is_empty() {
        return Ok(None);
    }
    let told: Vec<&str> = chosen.iter().map(|&key| recalled[key].summary.session_id.as_str()).collect();
    let facts = store.facts_of(&told)?;
    // Each memory is told in its session's language, as session start
    // tells it; so is where the rest is, when every memory told is Chinese.
    let language_of = |session: &str| Language::of_prompts(facts.get(session).map_or(&[], |f| &f.asked));
    let rest = match told.iter().all(|s| language_of(s) == Language::Chinese) {
        true => "`trae-mem show <session>` 可查看一个会话的其余内容。",
        false => "`trae-mem show <session>` has the rest of a session.",
    };
    // Two sentences: `HOW_TO_SEARCH` opens with a capital, and ends every
    // block as written (an echoed block is found by it).
    let footer = format!("{rest}\n{HOW_TO_SEARCH}");
    // The budget is shared out among the memories, each told as far as its
    // share goes: what was asked, and what was concluded, whole if it fits.
    let room = settings.prompt_budget_chars.saturating_sub(PROMPT_HEADER.chars().count() + footer.chars().count());
    let share = room / chosen.len();
    let mut lines = String::new();
    for key in chosen {
        let Recalled { summary, author, .. } = &recalled[key];
        let by = author.as_deref().map(|a| format!(", by {a}")).unwrap_or_default();
        let when = timefmt::local_minute(summary.created_at);
        let head = format!("- session {} ({when}{by}): ", &summary.session_id[..8.min(summary.session_id.len())]);
        let body_room = share.saturating_sub(head.chars().count() + 1);
        let body = match facts.get(&summary.session_id) {
            Some(facts) if !facts.asked.is_empty() || !facts.concluded.is_empty() => {
                asked_and_concluded(facts, body_room)
            }
            _ => {
                let marks = query.terms.iter().flat_map(|t| t.needles.iter().map(|n| (n.text.as_str(), false)));
                let excerpt = snippet::Folded::new(&summary.content).snippet(&snippet::needles(marks));
                clip_at_sentence(&unmarked(&excerpt), body_room)
            }
        };
        lines.push_str(&format!("{head}{body}\n"));
    }
    Ok(Some(clip(&format!("{PROMPT_HEADER}{lines}{footer}"), settings.prompt_budget_chars)))
}

/// The session only asked memory (see `asking::all_ask_memory`).
fn only_asked_memory(recalled: &Recalled) -> bool {
    recalled.asked_without_work.as_deref().is_some_and(asking::all_ask_memory)
}

/// The summaries of `recalled` ranked by the prompt's words, best first,
/// with each term's rarity taken among them. A term no summary holds
/// weighs as the rarest: a prompt about something memory never saw must
/// not match on its one common word.
fn by_words(query: &query::Query, recalled: &[Recalled]) -> Vec<rank::Ranked> {
    if query.terms.is_empty() {
        return Vec::new();
    }
    let counter = rank::Counter::new(query.terms.iter().map(|t| t.needles.iter().collect()).collect());
    let documents: Vec<rank::Document> = recalled
        .iter()
        .enumerate()
        .map(|(key, r)| rank::Document {
            key,
            length: r.summary.content.len(),
            ts: r.summary.created_at,
            voice: rank::Voice::States,
            counts: counter.count(r.summary.content.as_bytes()),
        })
        .collect();
    let total = documents.len() as f64;
    let weights: Vec<f64> = (0..query.terms.len())
        .map(|term| {
            let holding = documents.iter().filter(|d| d.counts[term].tf > 0.0).count() as f64;
            (1.0 + (total - holding + 0.5) / (holding + 0.5)).ln()
        })
        .collect();
    rank::rank(&documents, &weights).into_iter().filter(|r| r.coverage > 0.0).collect()
}

/// Each session near the prompt, nearest first, with how many standard
/// deviations it stands above the project's other sessions (all but the
/// nearest, so that the one that stands out does not widen the spread it
/// is measured by). Empty when there are too few sessions for a spread.
fn standing(near: &[meaning::SessionNear]) -> Vec<(&str, f32)> {
    let Some((_, rest)) = near.split_first() else { return Vec::new() };
    if rest.len() < SPREAD_SESSIONS {
        return Vec::new();
    }
    let mut spread = meaning::Spread::default();
    rest.iter().for_each(|s| spread.add(s.similarity));
    near.iter().map(|s| (s.session_id.as_str(), spread.stands(s.similarity))).collect()
}

/// The keys of `recalled` to tell, at most `limit`, best first: those that
/// stand out by words or by meaning, or that both put first, words holding
/// at least `agreeing` of the prompt's weight; ordered by both fused.
fn choose(
    recalled: &[Recalled],
    by_words: &[rank::Ranked],
    standing: &[(&str, f32)],
    agreeing: f64,
    limit: usize,
) -> Vec<usize> {
    let key_of = |session: &str| recalled.iter().position(|r| r.summary.session_id == session);
    let mut told: Vec<(usize, f64)> = Vec::new();
    let mut consider = |key: usize| {
        let session = recalled[key].summary.session_id.as_str();
        let words = by_words.iter().position(|r| r.key == key);
        let meaning = standing.iter().position(|(s, _)| *s == session);
        let coverage = words.map_or(0.0, |at| by_words[at].coverage);
        let stands = meaning.map_or(f32::NEG_INFINITY, |at| standing[at].1);
        let first_in_both = words.is_some_and(|w| w < FIRST_IN_BOTH && coverage >= agreeing)
            && meaning.is_some_and(|m| m < FIRST_IN_BOTH);
        let stands_out =
            coverage >= PROMPT_RELEVANCE || stands >= STANDS_OUT || first_in_both && stands >= STANDS_OUT_BESIDE_WORDS;
        if stands_out && told.iter().all(|(k, _)| *k != key) {
            let fused = [words, meaning].iter().flatten().map(|at| 1.0 / (60.0 + *at as f64)).sum();
            told.push((key, fused));
        }
    };
    by_words.iter().for_each(|r| consider(r.key));
    standing.iter().filter_map(|(session, _)| key_of(session)).for_each(&mut consider);
    told.sort_by(|a, b| b.1.total_cmp(&a.1));
    told.into_iter().take(limit).map(|(key, _)| key).collect()
}

/// A session as a prompt's memory tells it, in `room` characters: what was
/// asked and what was concluded (the last conclusion, which a session ends
/// on), then what went wrong if room is left. The conclusion is never cut
/// for the question: it takes up to two thirds of the room first. Its
/// titles are session start's, in the session's language.
fn asked_and_concluded(facts: &Facts, room: usize) -> String {
    let labels = Language::of_prompts(&facts.asked).labels();
    let label = |title: &str| format!("{title}: ");
    let (asked_label, concluded_label, errors_label) =
        (label(labels.asked), label(labels.concluded), label(labels.errors));
    let chars = |text: &str| text.chars().count();
    let concluded = facts.concluded.last().map(|c| clip_at_sentence(c, room * 2 / 3));
    let concluded_chars = concluded.as_ref().map_or(0, |c| chars(c) + 1 + chars(&concluded_label));
    let mut parts = Vec::new();
    if let Some(asked) = facts.asked.first() {
        let asked_room = room.saturating_sub(concluded_chars + chars(&asked_label));
        parts.push(format!("{asked_label}{}", clip_at_sentence(asked, asked_room)));
    }
    if let Some(concluded) = concluded {
        parts.push(format!("{concluded_label}{concluded}"));
    }
    let used: usize = parts.iter().map(|p| chars(p) + 1).sum();
    if let Some(error) = facts.failed.first()
        && room > used + 40
    {
        parts.push(format!("{errors_label}{}", clip_at_sentence(error, room - used - chars(&errors_label))));
    }
    parts.join(" ")
}

/// The project's best hits for `query`, outside session `current`.
fn search(store: &Store, project: &str, current: Option<&str>, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
    super::search(
        store,
        &SearchRequest {
            text: query.to_owned(),
            filters: Filters {
                project: Some(project.to_owned()),
                exclude_session: current.map(str::to_owned),
                ..Filters::default()
            },
            limit,
            offset: 0,
        },
    )
}

/// One line a hit: where it is, when, what, and its excerpt.
fn lines(hits: &[SearchHit]) -> String {
    let mut lines = String::new();
    for hit in hits {
        let tool = hit.tool.as_deref().map(|t| format!(" {t}")).unwrap_or_default();
        lines.push_str(&format!(
            "- {} {} {}{tool}: {}\n",
            hit.reference(),
            timefmt::local_minute(hit.ts),
            hit.kind,
            unmarked(&hit.snippet)
        ));
    }
    lines
}

/// An excerpt (white space already folded) without its match marks: the
/// agent reads it as text, and the marks are noise to it.
fn unmarked(excerpt: &str) -> String {
    excerpt.replace([MARK_START, MARK_END], "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Kind, NewObservation, OpenOptions};

    /// The database file and its write-ahead log, byte for byte.
    fn file_bytes(db: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
        let wal = std::fs::read(db.with_extension("db-wal")).unwrap_or_default();
        (std::fs::read(db).unwrap(), wal)
    }

    #[test]
    fn an_echoed_block_is_stripped_however_the_client_escaped_it() {
        let block = format!("{SESSION_START_HEADER}\n## a session\nAsked: fix it\n\n{HOW_TO_SEARCH}");
        let escapings = [
            block.clone(),
            block.replace('<', "&lt;").replace('>', "&gt;"),
            block.replace('<', "&LT;").replace('>', "&GT;").replace('"', "&quot;"),
            block.replace('<', "&#60;").replace('>', "&#62;").replace('"', "&#34;"),
            block.replace('<', "&#x3C;").replace('>', "&#x3e;"),
        ];
        for echoed in escapings {
            let prompt = format!("<hook_context>{echoed}</hook_context>\n\nWhat did we do last time?");
            assert_eq!(without_injected(&prompt), "What did we do last time?", "{echoed}");
        }
    }

    #[test]
    fn the_session_start_block_is_read_without_writing_and_tells_stale_sessions_as_they_are_now() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let mut store = Store::open(&db, &OpenOptions::default()).unwrap();
        fn note<'a>(session_id: &'a str, ts: i64, kind: &'a Kind, content: &'a str) -> NewObservation<'a> {
            NewObservation { session_id, ts, kind, tool: None, content, private: false, tags: &[] }
        }
        let stale = store
            .write(|w| {
                let session = w.new_session("/p", 1_000, &serde_json::json!({}))?;
                w.add_observation(&note(&session, 1_000, &Kind::User, "why does the walrus cache evict hot keys"))?;
                w.put_summary(&session, crate::store::SummaryLevel::Brief, "an older brief", 1_500)?;
                w.add_observation(&note(&session, 2_000, &Kind::Response, "the eviction clock was in seconds"))?;
                Ok(session)
            })
            .unwrap();
        store.tidy_wal().unwrap();
        let before = file_bytes(&db);
        let block = at_session_start(&store, "/p", None, &ContextSettings::default()).unwrap().unwrap();
        assert_eq!(file_bytes(&db), before, "telling the session start wrote to the database");
        // The brief went stale when the session went on: it is told as the
        // built-in summarizer writes it now, which the hook's catch-up stores.
        assert!(block.contains("walrus cache") && !block.contains("an older brief"), "{block}");
        let brief = store.summaries(&stale).unwrap().into_iter().find(|s| s.level == crate::store::SummaryLevel::Brief);
        assert_eq!(brief.unwrap().content, "an older brief");
    }

    #[test]
    fn words_agree_with_meaning_only_when_they_hold_enough_of_the_prompt() {
        let recalled: Vec<Recalled> = ["a", "b", "c"]
            .into_iter()
            .map(|id| Recalled {
                summary: crate::store::Summary {
                    session_id: id.to_owned(),
                    level: crate::store::SummaryLevel::Detailed,
                    created_at: 0,
                    content: String::new(),
                },
                author: None,
                asked_without_work: None,
            })
            .collect();
        let first = |coverage: f64| vec![rank::Ranked { key: 0, score: 1.0, coverage }];
        // First by meaning, but standing out too little to be told alone.
        let standing = [("a", 2.9), ("b", 1.0), ("c", 0.5)];
        // One common word ("difference") is no agreement.
        assert!(choose(&recalled, &first(0.12), &standing, AGREEING_COVERAGE, 3).is_empty());
        assert_eq!(choose(&recalled, &first(0.3), &standing, AGREEING_COVERAGE, 3), vec![0]);
        // A Chinese prompt's few words in common with English memory agree.
        assert_eq!(choose(&recalled, &first(0.05), &standing, 0.0, 3), vec![0]);
        // Words agree only with meaning that puts the session first too.
        let apart = [("b", 2.9), ("c", 1.0)];
        assert!(choose(&recalled, &first(0.3), &apart, AGREEING_COVERAGE, 3).is_empty());
    }

    fn block(header: &str) -> String {
        format!("{header}\n## 2026-11-30 10:00 (session 1a2b3c4d)\nAsked: fix the parser\n\n{HOW_TO_SEARCH}")
    }

    #[test]
    fn injected_blocks_leave_the_prompt_and_take_their_wrapper_with_them() {
        let gemini = format!(
            "<hook_context>\n{}\n</hook_context>\n\nwhy does the import time out?",
            block(SESSION_START_HEADER)
        );
        assert_eq!(without_injected(&gemini), "why does the import time out?");
        let bare = format!("{}\nand the second {}\n question", block(PROMPT_HEADER), block(SESSION_START_HEADER));
        assert_eq!(without_injected(&bare), "and the second \n question");
        let quoted = "what does \"(trae-mem)\" mean?";
        assert_eq!(without_injected(quoted), quoted);
        // A wrapper that holds more than the block stays.
        let mixed = format!("<note>mine {}</note> ok", block(PROMPT_HEADER));
        assert_eq!(without_injected(&mixed), "<note>mine </note> ok");
    }
}
