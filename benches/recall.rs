//! The recall benchmark: does search find the right memory for questions
//! asked the way people and agents ask them?
//!
//! The labelled set is `tests/fixtures/recall/` (its README says where the
//! text comes from): real changelogs, docs and code, in English and Chinese,
//! as observations, with hand-written queries in six categories, in two
//! halves: `queries.jsonl`, which the ranking may be tuned on, and
//! `heldout.jsonl`, written blind after that tuning and only reported. For
//! each half and category this prints recall@5 and MRR@10 of trae-mem's
//! search, beside textbook BM25 over the same rows measured in the same
//! run (FTS5's Porter stemmer, the query's words ORed, `bm25()`).
//!
//! `cargo bench -- recall` runs the labelled set alone (8,442 rows).
//! `cargo bench -- recall --padding 100000` first adds that many
//! generated rows, newer than the labelled ones, as distractors, and also
//! prints search times. `--store DIR` keeps the store with its vectors in
//! DIR, and a later run with the same DIR reuses it. `--half tuning` (or
//! `held-out`) runs one half of the queries.

#[path = "support/prompts.rs"]
mod prompts;

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::time::Instant;

use crate::{built, corpus};
use serde::Deserialize;
use serde_json::json;
use trae_mem::embed;
use trae_mem::recall::{self, Private, Reader, SearchRequest, meaning, query};
use trae_mem::store::{DB_FILE, Filters, OpenOptions, Store, Table};

#[derive(Deserialize)]
struct Row {
    id: String,
    session: String,
    /// The repository the session worked in; one project when absent.
    #[serde(default)]
    project: Option<String>,
    kind: String,
    tool: Option<String>,
    text: String,
}

#[derive(Deserialize)]
struct Labelled {
    category: String,
    query: String,
    relevant: Vec<String>,
}

/// Recall is counted in the first this many hits.
const RECALL_AT: usize = 5;
/// The reciprocal rank of the first relevant hit, within this many.
const MRR_AT: usize = 10;

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let only = flag(&args, "--set");
    if only.is_none_or(|set| set == "recall") {
        recall_set(&args)?;
    }
    if only.is_none_or(|set| set == "sessions") {
        sessions_set(&args)?;
    }
    Ok(())
}

/// The value given after `name` on the command line.
fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(String::as_str)
}

/// The changelog set (`tests/fixtures/recall/`), with its options.
fn recall_set(args: &[String]) -> anyhow::Result<()> {
    let padding: usize = flag(args, "--padding").map_or(Ok(0), |v| v.parse())?;
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recall");
    let rows: Vec<Row> = read_lines(&fixtures.join("corpus.jsonl"))?;
    println!("== the changelog set (tests/fixtures/recall) ==");

    // `--store DIR` keeps the store (and its vectors) for the next run,
    // which then only searches: for trying a ranking change quickly.
    let temporary = tempfile::tempdir()?;
    let dir = flag(args, "--store").map_or(temporary.path().to_owned(), std::path::PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    let reused = dir.join(DB_FILE).exists();
    let mut store = Store::open(&dir.join(DB_FILE), &OpenOptions::default())?;
    if !reused {
        import_labelled(&mut store, &rows, &dir)?;
    }
    if padding > 0 && !reused {
        let generated = dir.join("padding.jsonl");
        corpus::Corpus::new(11).write_export(padding, &mut BufWriter::new(std::fs::File::create(&generated)?))?;
        built::import(&mut store, &dir, &generated)?;
    }
    let started = Instant::now();
    let (embedder, model) = embed::configured(None, &dir)?;
    let filled = embed::fill(&mut store, embedder, &model, None, &mut |_| {})?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "vectors: {} rows embedded in {seconds:.1} s ({:.0} rows/s)",
        filled.embedded,
        filled.embedded as f64 / seconds
    );
    println!("recall: {} labelled rows and {padding} generated", rows.len());
    print_query_vector_times(embedder, &read_lines(&fixtures.join(QUERY_SETS[0].1))?);
    let mut all_rows: Vec<(i64, String)> = rows.iter().map(|r| (row_id(&r.id), r.text.clone())).collect();
    if padding > 0 {
        all_rows.extend(generated_rows(&dir.join("padding.jsonl"))?);
    }
    let textbook = Textbook::new(all_rows.iter().cloned())?;
    score_halves(args, &fixtures, &store, &textbook)
}

/// Each half of a set's queries, scored and printed.
fn score_halves(args: &[String], fixtures: &std::path::Path, store: &Store, textbook: &Textbook) -> anyhow::Result<()> {
    let only = flag(args, "--half");
    for (name, file) in QUERY_SETS {
        let path = fixtures.join(file);
        if !path.exists() || only.is_some_and(|half| !name.starts_with(half)) {
            continue;
        }
        let queries: Vec<Labelled> = read_lines(&path)?;
        println!("\n{name} ({file}, {} queries):", queries.len());
        let misses = score(store, textbook, &queries)?;
        // The held-out half's misses stay unseen: reading them is tuning.
        if file == QUERY_SETS[0].1 && args.iter().any(|a| a == "--misses") {
            println!("queries with nothing relevant in the first {RECALL_AT}:");
            misses.iter().for_each(|m| println!("{m}"));
        }
    }
    Ok(())
}

/// The set shaped like real sessions (`tests/fixtures/sessions/`): one task
/// a session, in the project of its repository, each summarized as a
/// session's end summarizes it. Its queries are scored as the changelog
/// set's; then its prompts are put to prompt memory, as `UserPromptSubmit`
/// puts them, first with words alone (before `trae-mem embed`), then with
/// meaning.
fn sessions_set(args: &[String]) -> anyhow::Result<()> {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sessions");
    let rows: Vec<Row> = read_lines(&fixtures.join("corpus.jsonl"))?;
    println!("\n== the sessions set (tests/fixtures/sessions): {} rows ==", rows.len());
    // `--sessions-store DIR` keeps this store for the next run, which then
    // only asks: for choosing a rule quickly.
    let temporary = tempfile::tempdir()?;
    let dir = flag(args, "--sessions-store").map_or(temporary.path().to_owned(), std::path::PathBuf::from);
    std::fs::create_dir_all(&dir)?;
    let reused = dir.join(DB_FILE).exists();
    let mut store = Store::open(&dir.join(DB_FILE), &OpenOptions::default())?;
    let cases: Vec<prompts::Case> = read_lines(&fixtures.join("prompts.jsonl"))?;
    let projects = prompts::projects(&rows);
    let half = flag(args, "--half");
    if !reused {
        import_labelled(&mut store, &rows, &dir)?;
        summarize_every_session(&mut store, &dir)?;
        println!("\nprompt memory, words alone (no vectors yet):");
        prompts::score(&store, &projects, &cases, half)?;
        let started = Instant::now();
        let (embedder, model) = embed::configured(None, &dir)?;
        let filled = embed::fill(&mut store, embedder, &model, None, &mut |_| {})?;
        println!("\nvectors: {} rows embedded in {:.1} s", filled.embedded, started.elapsed().as_secs_f64());
    }
    if !args.iter().any(|a| a == "--prompts-only") {
        let textbook = Textbook::new(rows.iter().map(|r| (row_id(&r.id), r.text.clone())))?;
        score_halves(args, &fixtures, &store, &textbook)?;
    }
    println!("\nprompt memory, words and meaning:");
    prompts::score(&store, &projects, &cases, half)?;
    Ok(())
}

/// Imports the labelled rows into an empty store, through an export in `dir`.
fn import_labelled(store: &mut Store, rows: &[Row], dir: &std::path::Path) -> anyhow::Result<()> {
    let export = dir.join("labelled.jsonl");
    write_labelled(rows, &export)?;
    built::import(store, dir, &export)?;
    Ok(())
}

/// Summarizes each session with the built-in summarizer, as its end would,
/// at its last row's time.
fn summarize_every_session(store: &mut Store, dir: &std::path::Path) -> anyhow::Result<()> {
    let settings = trae_mem::config::Summarize::default();
    let builtin = trae_mem::plugins::Plugins::new(&[], &settings, dir, false);
    let sessions = Reader::new(store, Private::Marked).sessions(None, usize::MAX)?;
    for session in sessions {
        let detail = Reader::new(store, Private::Marked).session_detail(&session.id)?;
        let last = detail.observations.iter().map(|o| o.ts).max().unwrap_or(session.started_at);
        trae_mem::summarize::session(store, &builtin, &session.id, last)?;
    }
    Ok(())
}

/// The two halves of the labelled queries: the ranking may be tuned on
/// the first; the second was written blind, after that tuning, and is
/// only ever reported.
const QUERY_SETS: [(&str, &str); 2] = [("tuning half", "queries.jsonl"), ("held-out half", "heldout.jsonl")];

/// The systems each query is put to, in the tables' order: trae-mem's
/// search; textbook BM25; the embedding model alone (the rows nearest by
/// vector, nothing else); and the usual hybrid of the two, BM25 and dense
/// fused by reciprocal rank with the paper's constant and equal weights.
const SYSTEMS: [&str; 4] = ["trae-mem", "BM25", "dense", "hybrid"];

/// How deep each list goes into the hybrid baseline.
const HYBRID_DEPTH: usize = 50;

/// Runs every query, prints a table by category, and returns the queries
/// with nothing relevant in the first `RECALL_AT` hits.
fn score(store: &Store, textbook: &Textbook, queries: &[Labelled]) -> anyhow::Result<Vec<String>> {
    let mut by_category: BTreeMap<&str, Scores> = BTreeMap::new();
    let mut misses = Vec::new();
    let summarized = store.conn().query_row("SELECT count(*) FROM summaries", [], |r| r.get::<_, i64>(0))? > 0;
    for labelled in queries {
        let mut relevant: Vec<i64> = labelled.relevant.iter().map(|r| row_id(r)).collect();
        // A summary of the session the relevant rows are in answers as well
        // as they do, where sessions are summarized.
        if summarized {
            let sessions: Vec<i64> = relevant
                .iter()
                .filter_map(|&id| {
                    store.conn().query_row("SELECT session_id FROM observations WHERE id = ?1", [id], |r| r.get(0)).ok()
                })
                .map(|session: String| summary_key(&session))
                .collect();
            relevant.extend(sessions);
            relevant.sort_unstable();
            relevant.dedup();
        }
        let started = Instant::now();
        let hits = recall::search(
            store,
            &SearchRequest { text: labelled.query.clone(), filters: Filters::default(), limit: MRR_AT, offset: 0 },
        )?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        let found: Vec<i64> = hits.iter().map(|h| h.id.unwrap_or_else(|| summary_key(&h.session_id))).collect();
        let dense: Vec<i64> = meaning::Nearest::begin(
            store,
            &labelled.query,
            &Filters::default(),
            &[Table::Observations],
            HYBRID_DEPTH,
            meaning::Bounds::None,
        )?
        .wait(store)?
        .iter()
        .map(|n| n.id)
        .collect();
        let textbook = textbook.search(&labelled.query, HYBRID_DEPTH)?;
        let hybrid = reciprocal_rank_fusion(&textbook, &dense);
        if !found.iter().take(RECALL_AT).any(|id| relevant.contains(id)) {
            misses.push(format!("  [{}] {}", labelled.category, labelled.query));
        }
        let lists = vec![found, textbook, dense, hybrid];
        by_category.entry(labelled.category.as_str()).or_default().add(&lists, &relevant, ms);
    }
    let columns: Vec<String> = SYSTEMS.iter().map(|s| format!("{s:>9}")).collect();
    println!(
        "{:<11} {:>7} recall@5: {} MRR@10: {} {:>8}",
        "category",
        "queries",
        columns.join(""),
        columns.join(""),
        "p50 ms"
    );
    let mut all = Scores::default();
    for (category, scores) in &mut by_category {
        scores.print(category);
        all.merge(scores);
    }
    all.print("all");
    Ok(misses)
}

/// Per-query figures of one category, for each system measured.
#[derive(Default)]
struct Scores {
    recall: Vec<Vec<f64>>,
    reciprocal_rank: Vec<Vec<f64>>,
    times: Vec<f64>,
}

impl Scores {
    /// One query's hits by each system, in the columns' order.
    fn add(&mut self, found: &[Vec<i64>], relevant: &[i64], ms: f64) {
        self.recall.resize(found.len(), Vec::new());
        self.reciprocal_rank.resize(found.len(), Vec::new());
        for (system, found) in found.iter().enumerate() {
            self.recall[system].push(recall(found, relevant));
            self.reciprocal_rank[system].push(reciprocal_rank(found, relevant));
        }
        self.times.push(ms);
    }

    fn merge(&mut self, other: &Scores) {
        self.recall.resize(other.recall.len(), Vec::new());
        self.reciprocal_rank.resize(other.recall.len(), Vec::new());
        for system in 0..other.recall.len() {
            self.recall[system].extend(&other.recall[system]);
            self.reciprocal_rank[system].extend(&other.reciprocal_rank[system]);
        }
        self.times.extend(&other.times);
    }

    fn print(&mut self, category: &str) {
        let means = |v: &[Vec<f64>]| {
            v.iter().map(|v| format!("{:>9.2}", v.iter().sum::<f64>() / v.len().max(1) as f64)).collect::<String>()
        };
        self.times.sort_by(f64::total_cmp);
        println!(
            "{category:<11} {:>7}           {}        {} {:>8.2}",
            self.times.len(),
            means(&self.recall),
            means(&self.reciprocal_rank),
            self.times[self.times.len() / 2],
        );
    }
}

/// The time of a query's vector, on the one core search computes it on:
/// the encoder is most of a question's search.
fn print_query_vector_times(embedder: &embed::Embedder, queries: &[Labelled]) {
    let mut times: Vec<f64> = queries
        .iter()
        .map(|labelled| {
            let started = Instant::now();
            std::hint::black_box(embedder.embed_query(&labelled.query));
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("query vector p50 over {} queries: {:.1} ms on one core", queries.len(), times[times.len() / 2]);
}

/// Textbook RRF (Cormack et al. 2009): each list's rank r adds 1 / (60 + r).
fn reciprocal_rank_fusion(a: &[i64], b: &[i64]) -> Vec<i64> {
    let mut scores: BTreeMap<i64, f64> = BTreeMap::new();
    for list in [a, b] {
        for (rank, id) in list.iter().enumerate() {
            *scores.entry(*id).or_default() += 1.0 / (60.0 + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(i64, f64)> = scores.into_iter().collect();
    fused.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
    fused.into_iter().map(|(id, _)| id).collect()
}

/// The share of the relevant rows among the first `RECALL_AT` found.
fn recall(found: &[i64], relevant: &[i64]) -> f64 {
    let hits = relevant.iter().filter(|r| found.iter().take(RECALL_AT).any(|f| f == *r)).count();
    hits as f64 / relevant.len().min(RECALL_AT) as f64
}

/// 1 / the rank of the first relevant row within `MRR_AT`, or 0.
fn reciprocal_rank(found: &[i64], relevant: &[i64]) -> f64 {
    found.iter().take(MRR_AT).position(|f| relevant.contains(f)).map_or(0.0, |rank| 1.0 / (rank + 1) as f64)
}

/// Textbook BM25 over the labelled rows, the yardstick: SQLite's FTS5
/// with the Porter stemmer over unicode61 words, the query's words ORed,
/// ordered by FTS5's own `bm25()`. Each Han or kana character is a word of
/// its own, as Lucene's standard analyzer has it (unicode61 would take a
/// whole run of Chinese for one word).
struct Textbook {
    conn: rusqlite::Connection,
}

impl Textbook {
    fn new(rows: impl Iterator<Item = (i64, String)>) -> anyhow::Result<Self> {
        let mut conn = rusqlite::Connection::open_in_memory()?;
        conn.execute_batch("CREATE VIRTUAL TABLE rows USING fts5(content, tokenize='porter unicode61')")?;
        let tx = conn.transaction()?;
        for (id, text) in rows {
            tx.execute("INSERT INTO rows(rowid, content) VALUES (?1, ?2)", (id, spaced(&text)))?;
        }
        tx.commit()?;
        Ok(Textbook { conn })
    }

    fn search(&self, query: &str, limit: usize) -> anyhow::Result<Vec<i64>> {
        let words: Vec<String> = spaced(query)
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(|w| format!("\"{w}\""))
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut stmt =
            self.conn.prepare_cached("SELECT rowid FROM rows WHERE rows MATCH ?1 ORDER BY bm25(rows) LIMIT ?2")?;
        let ids = stmt.query_map((words.join(" OR "), limit as i64), |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    }
}

/// The observations of a generated export, each with an id of its own
/// (negative: the store numbers them after the labelled rows, and none is
/// ever relevant).
fn generated_rows(path: &std::path::Path) -> anyhow::Result<Vec<(i64, String)>> {
    let records: Vec<serde_json::Value> = read_lines(path)?;
    Ok(records
        .iter()
        .filter(|r| r["type"] == "observation")
        .filter_map(|r| Some((-r["id"].as_i64()?, r["content"].as_str()?.to_owned())))
        .collect())
}

/// `text` with a space around each Han or kana character.
fn spaced(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if query::is_cjk(c) {
            out.extend([' ', c, ' ']);
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes the labelled rows as an export: one session per labelled
/// session, in one project, a minute apart, older than any padding.
fn write_labelled(rows: &[Row], path: &std::path::Path) -> anyhow::Result<()> {
    let mut out = BufWriter::new(std::fs::File::create(path)?);
    let mut ts = 1_700_000_000_000i64;
    let mut last_session = "";
    for row in rows {
        let session = session_id(&row.session);
        if row.session != last_session {
            let project = project_path(row.project.as_deref());
            let record = json!({"type": "session", "session": {"id": session, "project": project,
                "started_at": ts, "ended_at": null, "meta": {}, "observations": 0}});
            writeln!(out, "{record}")?;
            last_session = &row.session;
        }
        ts += 60_000;
        let record = json!({"type": "observation", "id": row_id(&row.id), "session_id": session, "ts": ts,
            "kind": row.kind, "tool": row.tool, "content": row.text, "private": false, "tags": []});
        writeln!(out, "{record}")?;
    }
    out.flush()?;
    Ok(())
}

/// A labelled row's id in the store: `d00042` (or `p00042`) is observation
/// 42 (the labelled rows are imported first, into an empty store).
fn row_id(name: &str) -> i64 {
    name[1..].parse().expect("labelled row ids are a letter and a number")
}

/// A labelled session's id in the store: `t0042` is `0000002a-…`, whose
/// first eight characters (what a context block names it by) tell it.
fn session_id(name: &str) -> String {
    let number: u64 = name[1..].parse().expect("labelled session ids are a letter and a number");
    format!("{number:08x}-0000-4000-8000-{number:012}")
}

/// A summary hit's key beside row ids: its session's number, negated.
fn summary_key(session_id: &str) -> i64 {
    -i64::from_str_radix(&session_id[..8], 16).expect("labelled sessions are numbered in hex")
}

/// A labelled project's path in the store.
fn project_path(project: Option<&str>) -> String {
    format!("/bench/{}", project.unwrap_or("recall"))
}

fn read_lines<T: for<'de> Deserialize<'de>>(path: &std::path::Path) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path)?;
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| Ok(serde_json::from_str(l)?)).collect()
}
