//! The store benchmark: bulk import rate, the vectors' backfill, search
//! latency over a fixed query mix, and database size against raw text,
//! without vectors and with them.
//!
//! `cargo bench -- store --observations 100000` (the default), or
//! 1000000. Prints medians and p95; timings are in-process and warm, then
//! questions again as a client asks them, whole process, beside a floor.
//! `--index like|unicode61` measures another index mode,
//! `--max-row-bytes N` caps the length of the corpus's rows, `--keep` keeps
//! the home it made, and `--store DIR` times search alone on such a home.

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::run::percentile;
use crate::{built, corpus, run};
use trae_mem::embed;
use trae_mem::recall::{self, SearchRequest};
use trae_mem::store::{DB_FILE, Filters, OpenOptions, Store};

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let rounds: usize = flag(&args, "--rounds").map_or(Ok(30), |v| v.parse())?;
    let dir = tempfile::tempdir()?;
    let (home, store) = match flag(&args, "--store") {
        // A home kept by `--keep` (or any store): its search alone is timed.
        Some(kept) => {
            let home = PathBuf::from(kept);
            let options = OpenOptions { may_rebuild_index: false, ..OpenOptions::default() };
            let store = Store::open(&home.join(DB_FILE), &options)?;
            (home, store)
        }
        None => {
            if args.iter().any(|a| a == "--keep") {
                println!("keeping {}", dir.path().display());
            }
            (dir.path().to_owned(), build(&args, dir.path())?)
        }
    };
    // Warm up, then time each query `rounds` times.
    let search = |text: &str| {
        let request = SearchRequest { text: text.to_owned(), filters: Filters::default(), limit: 20, offset: 0 };
        let started = Instant::now();
        let hits = recall::search(&store, &request).expect("search");
        (started.elapsed().as_secs_f64() * 1e3, hits.len())
    };
    for (_, q) in QUERIES {
        search(q);
    }
    let mut all = Vec::new();
    let mut by_category: Vec<(&str, Vec<f64>)> = Vec::new();
    for (category, q) in QUERIES {
        let mut times = Vec::with_capacity(rounds);
        let mut found = 0;
        for _ in 0..rounds {
            let (ms, hits) = search(q);
            times.push(ms);
            found = hits;
        }
        println!("  {q:<30} {:>7.2} ms median, {found} hits", percentile(&mut times.clone(), 50.0));
        match by_category.iter_mut().find(|(c, _)| c == category) {
            Some((_, v)) => v.extend(&times),
            None => by_category.push((category, times.clone())),
        }
        all.extend(times);
    }
    for (category, times) in &mut by_category {
        println!(
            "search {category:<11} p50 {:>7.2} ms  p95 {:>7.2} ms",
            percentile(times, 50.0),
            percentile(times, 95.0)
        );
    }
    println!(
        "search all         p50 {:>7.2} ms  p95 {:>7.2} ms",
        percentile(&mut all, 50.0),
        percentile(&mut all, 95.0)
    );
    whole_process(&home, rounds)?;
    if args.iter().any(|a| a == "--keep") {
        let _ = dir.keep();
    }
    Ok(())
}

/// Questions as a client asks them: `trae-mem search` from spawn to exit,
/// interleaved with `trae-mem --version` (the floor: a process that starts,
/// parses its arguments and exits), measured in the same run.
fn whole_process(home: &Path, rounds: usize) -> anyhow::Result<()> {
    let exe = Path::new(env!("CARGO_BIN_EXE_trae-mem"));
    let questions = QUERIES.iter().filter(|(category, _)| *category == "question");
    let (mut floor, mut all) = (Vec::new(), Vec::new());
    for (_, q) in questions {
        let mut times = Vec::with_capacity(rounds);
        run::spawn(exe, &["search", q], home, b"")?;
        for _ in 0..rounds {
            floor.push(run::spawn(exe, &["--version"], home, b"")?);
            times.push(run::spawn(exe, &["search", q], home, b"")?);
        }
        println!("  {q:<30} {:>7.2} ms median, whole process", percentile(&mut times.clone(), 50.0));
        all.extend(times);
    }
    let floor = percentile(&mut floor, 50.0);
    println!(
        "search question    whole process p50 {:>7.2} ms  p95 {:>7.2} ms (floor, `trae-mem --version`: p50 {floor:.2} ms)",
        percentile(&mut all, 50.0),
        percentile(&mut all, 95.0)
    );
    // The search the memory told at session start asks agents to run:
    // `--project .`, one project of the corpus's twenty.
    println!("search of one project against all of them, whole process, interleaved:");
    for (what, q) in [
        ("question", "how did we fix the timeout when the database was locked?"),
        ("keywords", "database locked"),
        ("keyword", "timeout"),
    ] {
        let (mut everywhere, mut limited) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
        let project = ["search", "--project", ONE_PROJECT, q];
        run::spawn(exe, &project, home, b"")?;
        for _ in 0..rounds {
            everywhere.push(run::spawn(exe, &["search", q], home, b"")?);
            limited.push(run::spawn(exe, &project, home, b"")?);
        }
        let (everywhere, limited) = (percentile(&mut everywhere, 50.0), percentile(&mut limited, 50.0));
        println!(
            "  {what:<9} p50 all {everywhere:>7.2} ms  one project {limited:>7.2} ms  ({:.2}×)  {q}",
            limited / everywhere
        );
    }
    Ok(())
}

/// One of the twenty projects the corpus spreads its sessions over.
const ONE_PROJECT: &str = "/home/dev/src/project-7";

/// The value after `name` among the arguments.
fn flag(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

/// A store of `--observations` generated rows in `home`, imported and given
/// its vectors, each step timed, and the file's size before and after.
fn build(args: &[String], home: &Path) -> anyhow::Result<Store> {
    let flag = |name: &str| flag(args, name);
    let observations: usize = flag("--observations").map_or(Ok(100_000), |v| v.parse())?;
    let export = home.join("corpus.jsonl");
    let raw_bytes = {
        let mut out = BufWriter::new(std::fs::File::create(&export)?);
        let mut corpus = corpus::Corpus::new(7);
        // `--max-row-bytes 6000` makes rows no longer than a hook stores
        // (2,000 characters of tool input and 4,000 of its output).
        corpus.max_length = flag("--max-row-bytes").map_or(Ok(usize::MAX), |v| v.parse())?;
        corpus.write_export(observations, &mut out)?
    };
    println!("corpus: {observations} observations, {:.1} MB of text", raw_bytes as f64 / 1e6);

    let db = home.join(DB_FILE);
    let index = flag("--index").map(|m| m.parse()).transpose()?;
    let mut store = Store::open(&db, &OpenOptions { index, ..OpenOptions::default() })?;
    let started = Instant::now();
    let report = built::import(&mut store, home, &export)?;
    let seconds = started.elapsed().as_secs_f64();
    assert_eq!(report.observations as usize, observations);
    println!(
        "import: {:.0} observations/s, {:.1} MB/s of text ({observations} in {seconds:.1} s, index {})",
        observations as f64 / seconds,
        raw_bytes as f64 / 1e6 / seconds,
        store.index_mode()
    );

    store.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let db_bytes = std::fs::metadata(&db)?.len();
    println!(
        "size: {:.1} MB database for {:.1} MB text = {:.2}x",
        db_bytes as f64 / 1e6,
        raw_bytes as f64 / 1e6,
        db_bytes as f64 / raw_bytes as f64
    );

    // Vectors, as `trae-mem embed` gives an existing store: how long the
    // backfill takes and how much the file grows.
    let started = Instant::now();
    let (embedder, model) = embed::configured(None, home)?;
    let filled = embed::fill(&mut store, embedder, &model, None, &mut |_| {})?;
    let seconds = started.elapsed().as_secs_f64();
    store.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let with_vectors = std::fs::metadata(&db)?.len();
    println!(
        "vectors: {} rows embedded in {seconds:.1} s ({:.0} rows/s, {:.0} observations/s of the store); \
         database {:.1} MB, {:+.1}% over {:.1} MB without",
        filled.embedded,
        filled.embedded as f64 / seconds,
        observations as f64 / seconds,
        with_vectors as f64 / 1e6,
        (with_vectors as f64 / db_bytes as f64 - 1.0) * 100.0,
        db_bytes as f64 / 1e6,
    );

    Ok(store)
}

/// The fixed query mix, by category.
const QUERIES: &[(&str, &str)] = &[
    ("english", "database"),
    ("english", "timeout"),
    ("english", "migration"),
    ("english", "permission"),
    ("chinese-2", "缓存"),
    ("chinese-2", "数据"),
    ("chinese-2", "超时"),
    ("chinese-2", "泄漏"),
    ("identifier", "parse_config"),
    ("identifier", "HashMap"),
    ("identifier", "retry_with_backoff"),
    ("identifier", "fn main"),
    ("path", "src/store/schema.rs"),
    ("path", "crates/core/src/handler.go"),
    ("multi-word", "database locked"),
    ("multi-word", "connection refused timeout"),
    ("multi-word", "缓存 latency"),
    ("multi-word", "\"cache miss\""),
    ("question", "how did we fix the timeout when the database was locked?"),
    ("question", "why does the cache miss so often after a migration"),
    ("question", "where do we parse the config and handle a missing file"),
    ("question", "上次数据库连接超时是怎么解决的"),
];
