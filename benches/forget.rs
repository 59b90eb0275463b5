//! The forget benchmark, on a store whose older half is 400 days old:
//! - `trae-mem forget --before` of that half, with hooks running beside it
//!   all the while: the forget's time, and how long the hooks waited
//!   (their p99 against an idle hook's p50, measured in the same run);
//! - `trae-mem gc` with `max_age_days` dropping the same half: the file's
//!   size after, against a fresh store holding the rows that remain.
//!
//! `cargo bench -- forget --observations 1000000`

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::built;
use crate::run::{percentile, spawn};
use serde_json::json;
use trae_mem::store::{DB_FILE, now_ms};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let observations: usize = flag("--observations").map_or(Ok(1_000_000), |v| v.parse())?;
    let exe = Path::new(env!("CARGO_BIN_EXE_trae-mem"));
    let dir = tempfile::tempdir()?;

    let built = Instant::now();
    let aged = dir.path().join("aged");
    build_aged_store(&aged, observations, dir.path())?;
    println!(
        "database: {observations} observations, half of them 400 days old (built in {:.0} s)",
        built.elapsed().as_secs_f64()
    );
    if args.iter().any(|a| a == "--keep") {
        println!("keeping {}", dir.keep().display());
        return Ok(());
    }

    let forget_home = dir.path().join("forget");
    copy_home(&aged, &forget_home)?;
    forget_figures(exe, &forget_home)?;

    let gc_home = dir.path().join("gc");
    copy_home(&aged, &gc_home)?;
    gc_figures(exe, &gc_home, dir.path())?;
    Ok(())
}

/// Imports the corpus, then dates the first half of the rows 400 days back
/// and the rest to yesterday.
fn build_aged_store(home: &Path, observations: usize, dir: &Path) -> anyhow::Result<()> {
    let store = built::store(home, observations, 11, dir)?;
    let half = (observations / 2) as i64;
    let now = now_ms();
    store.conn().execute(
        "UPDATE observations SET ts = CASE WHEN id <= ?1 THEN ?2 + id ELSE ?3 + id END",
        [half, now - 400 * DAY_MS, now - DAY_MS],
    )?;
    store.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    Ok(())
}

fn copy_home(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    std::fs::copy(from.join(DB_FILE), to.join(DB_FILE))?;
    Ok(())
}

/// The `n`th hook's payload: a tool call of its own, so that every hook
/// stores a row (the same call twice would be stored once, and time a hook
/// that writes nothing).
fn hook_payload(n: usize) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "session_id": "bench-forget", "cwd": "/home/dev/src/bench", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_input": {"command": format!("cargo test --test case_{n}")},
        "tool_response": {"stdout": format!("test result: ok. {n} passed\n").repeat(10)},
        "tool_use_id": format!("toolu_bench_{n}")
    }))
    .expect("a payload")
}

/// The rows the benchmark's hooks stored, and the events they spooled.
fn hooks_stored(exe: &Path, home: &Path) -> anyhow::Result<(u64, usize)> {
    let db = rusqlite::Connection::open(home.join(DB_FILE))?;
    let stored: i64 = db.query_row(
        "SELECT count(*) FROM observations o JOIN session_keys k ON k.session_id = o.session_id \
         WHERE k.external_id = 'bench-forget'",
        [],
        |r| r.get(0),
    )?;
    let listing = Command::new(exe).args(["spool", "list", "--json"]).env("TRAE_MEM_HOME", home).output()?;
    let listing: serde_json::Value = serde_json::from_slice(&listing.stdout)?;
    Ok((stored as u64, listing["pending"].as_array().map_or(0, Vec::len)))
}

/// `forget --before` of the old half, with hooks running beside it.
fn forget_figures(exe: &Path, home: &Path) -> anyhow::Result<()> {
    let mut sent = 0;
    let mut idle: Vec<f64> = (0..30)
        .map(|_| {
            sent += 1;
            spawn(exe, &["hook"], home, &hook_payload(sent))
        })
        .collect::<Result<_, _>>()?;
    let idle_p50 = percentile(&mut idle, 50.0);
    let before = "200d";
    let started = Instant::now();
    let forget = Command::new(exe)
        .args(["forget", "--before", before, "--yes", "--json"])
        .env("TRAE_MEM_HOME", home)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut forget = forget;
    let mut during = Vec::new();
    while forget.try_wait()?.is_none() {
        sent += 1;
        during.push(spawn(exe, &["hook"], home, &hook_payload(sent))?);
        std::thread::sleep(Duration::from_millis(10));
    }
    let took = started.elapsed().as_secs_f64();
    let out = forget.wait_with_output()?;
    anyhow::ensure!(out.status.success(), "forget failed: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let forgotten = report["observations"].as_u64().unwrap_or(0);
    let (stored, spooled) = hooks_stored(exe, home)?;
    anyhow::ensure!(
        stored as usize + spooled >= sent,
        "each hook sends an event of its own: {sent} sent, {stored} stored, {spooled} spooled"
    );
    println!(
        "forget --before           {forgotten} observations in {took:.1} s ({:.0} a second)",
        forgotten as f64 / took
    );
    if during.is_empty() {
        println!("hooks during the forget   none ran");
        return Ok(());
    }
    let (p50, p99) = (percentile(&mut during, 50.0), percentile(&mut during, 99.0));
    println!(
        "hooks during the forget   p50 {p50:6.2} ms  p99 {p99:6.2} ms  wait p99 {:6.2} ms  max {:6.1} ms  (idle p50 {idle_p50:.2} ms; {} hooks, each storing a row of its own; {spooled} spooled)",
        (p99 - idle_p50).max(0.0),
        during.iter().copied().fold(0.0, f64::max),
        during.len()
    );
    Ok(())
}

/// `gc` dropping the old half by age, then the file against a fresh store
/// holding the rows that remain (exported and imported again).
fn gc_figures(exe: &Path, home: &Path, dir: &Path) -> anyhow::Result<()> {
    let size = |home: &Path| -> anyhow::Result<u64> {
        let mut total = 0;
        for suffix in ["", "-wal"] {
            let path = home.join(format!("{DB_FILE}{suffix}"));
            total += std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        }
        Ok(total)
    };
    let before = size(home)?;
    let started = Instant::now();
    let out = Command::new(exe).args(["gc", "--max-age-days", "200", "--json"]).env("TRAE_MEM_HOME", home).output()?;
    anyhow::ensure!(out.status.success(), "gc failed: {}", String::from_utf8_lossy(&out.stderr));
    let took = started.elapsed().as_secs_f64();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let after = size(home)?;

    let export = dir.join("remaining.jsonl");
    let status = Command::new(exe).args(["export", "--output"]).arg(&export).env("TRAE_MEM_HOME", home).status()?;
    anyhow::ensure!(status.success(), "export failed");
    let fresh = dir.join("fresh");
    std::fs::create_dir_all(&fresh)?;
    let status =
        Command::new(exe).arg("import").arg(&export).env("TRAE_MEM_HOME", &fresh).stdout(Stdio::null()).status()?;
    anyhow::ensure!(status.success(), "import failed");
    let status = Command::new(exe).arg("gc").env("TRAE_MEM_HOME", &fresh).stdout(Stdio::null()).status()?;
    anyhow::ensure!(status.success(), "gc of the fresh store failed");
    let fresh_size = size(&fresh)?;
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "gc --max-age-days        {} observations in {took:.1} s; {:.1} MB → {:.1} MB",
        report["aged_out"],
        mb(before),
        mb(after)
    );
    println!(
        "after gc / fresh store   {:.3}  ({:.1} MB against {:.1} MB holding the same rows)",
        after as f64 / fresh_size as f64,
        mb(after),
        mb(fresh_size)
    );
    Ok(())
}
