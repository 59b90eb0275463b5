//! The sync benchmark, against a PostgreSQL server of its own on a unix
//! socket (started as the tests start theirs):
//! - the raw insert rate of that server in the same run: the same rows'
//!   text, unsealed, in the same multi-row INSERTs, with nothing else to do;
//! - the first push of a store of the corpus (`trae-mem sync`, the whole
//!   process), and the first pull of it into an empty home: observations a
//!   second and MB a second of sealed bodies;
//! - a sync with nothing to do: its median, against `trae-mem --version`.
//!
//! `cargo bench -- sync --observations 100000`

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::run::percentile;
use crate::{built, pg};

/// Rows per INSERT in the raw baseline: what a push sends per transaction.
const RAW_BATCH: usize = 500;

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let observations: usize = flag("--observations").map_or(Ok(100_000), |v| v.parse())?;
    let idle_runs: usize = flag("--idle-runs").map_or(Ok(30), |v| v.parse())?;
    let exe = Path::new(env!("CARGO_BIN_EXE_trae-mem"));
    let Some(server) = pg::Postgres::start() else { return Ok(()) };
    let dir = tempfile::tempdir()?;

    let built = Instant::now();
    let laptop = dir.path().join("laptop");
    let laptop_project = dir.path().join("laptop-app");
    let store = built::store(&laptop, observations, 5, dir.path())?;
    drop(store);
    clone_at(&laptop_project)?;
    let project = std::fs::canonicalize(&laptop_project)?.display().to_string();
    let db = rusqlite::Connection::open(laptop.join(trae_mem::store::DB_FILE))?;
    db.execute("UPDATE sessions SET project_path = ?1", [&project])?;
    let contents: Vec<String> =
        db.prepare("SELECT content FROM observations")?.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    drop(db);
    println!(
        "store: {observations} observations of the corpus in one shared project (built in {:.0} s)",
        built.elapsed().as_secs_f64()
    );

    let (raw_seconds, raw_bytes) = raw_inserts(&server, &contents)?;
    let mb = |bytes: f64| bytes / 1e6;
    println!(
        "raw INSERT (same server, same text unsealed, {RAW_BATCH} rows a statement): {:.0} rows/s, {:.1} MB/s",
        contents.len() as f64 / raw_seconds,
        mb(raw_bytes as f64) / raw_seconds
    );

    run(exe, &laptop, &laptop_project, &server, &["sync", "key", "new"])?;
    let push = run(exe, &laptop, &laptop_project, &server, &["sync"])?;
    let mut client = server.client();
    let sealed: i64 = client.query_one("SELECT sum(octet_length(body))::bigint FROM trae_mem_records", &[])?.get(0);
    println!(
        "push (first sync of the store): {:.2} s, {:.0} observations/s, {:.1} MB/s ({:.0} MB sealed; {:.2}× the raw rate's time)",
        push,
        observations as f64 / push,
        mb(sealed as f64) / push,
        mb(sealed as f64),
        push / raw_seconds
    );

    let desk = dir.path().join("desk");
    let desk_project = dir.path().join("desk-app");
    clone_at(&desk_project)?;
    let key = std::fs::read_to_string(laptop.join("sync.key"))?;
    std::fs::create_dir_all(&desk)?;
    std::fs::write(desk.join("sync.key"), key)?;
    let pull = run(exe, &desk, &desk_project, &server, &["sync"])?;
    let pulled: i64 = rusqlite::Connection::open(desk.join(trae_mem::store::DB_FILE))?.query_row(
        "SELECT count(*) FROM observations",
        [],
        |r| r.get(0),
    )?;
    anyhow::ensure!(pulled as usize == observations, "pulled {pulled} of {observations} observations");
    println!(
        "pull (a new device): {:.2} s, {:.0} observations/s, {:.1} MB/s ({:.2}× the raw rate's time)",
        pull,
        observations as f64 / pull,
        mb(sealed as f64) / pull,
        pull / raw_seconds
    );

    let mut idle = Vec::new();
    let mut floor = Vec::new();
    for _ in 0..idle_runs {
        idle.push(run(exe, &laptop, &laptop_project, &server, &["sync"])? * 1e3);
        floor.push(run(exe, &laptop, &laptop_project, &server, &["--version"])? * 1e3);
    }
    let (idle, floor) = (percentile(&mut idle, 50.0), percentile(&mut floor, 50.0));
    println!(
        "sync with nothing to do ({idle_runs} runs, interleaved): p50 {idle:.1} ms (target < 50 ms); \
         `trae-mem --version` p50 {floor:.1} ms"
    );
    Ok(())
}

/// A checkout of the team's repository that shares its memory.
fn clone_at(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir.join(".git"))?;
    std::fs::write(dir.join(".git/config"), "[remote \"origin\"]\n\turl = git@github.com:acme/billing.git\n")?;
    std::fs::write(dir.join("trae-mem.toml"), "[sync]\nshare = true\n")?;
    Ok(())
}

/// Runs trae-mem in `project` with this home and server; returns seconds.
fn run(exe: &Path, home: &Path, project: &Path, server: &pg::Postgres, args: &[&str]) -> anyhow::Result<f64> {
    let started = Instant::now();
    let out = Command::new(exe)
        .args(args)
        .current_dir(project)
        .env("TRAE_MEM_HOME", home)
        .env("TRAE_MEM_SYNC_URL", server.url())
        .stdin(Stdio::null())
        .output()?;
    let seconds = started.elapsed().as_secs_f64();
    anyhow::ensure!(out.status.success(), "trae-mem {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(seconds)
}

/// Inserts every text as a row of a plain table, in the statements a push
/// uses; returns the seconds taken and the bytes inserted.
fn raw_inserts(server: &pg::Postgres, contents: &[String]) -> anyhow::Result<(f64, usize)> {
    let mut client = server.client();
    client.batch_execute("CREATE TABLE raw_rows (id uuid PRIMARY KEY, body bytea NOT NULL)")?;
    let started = Instant::now();
    let mut bytes = 0;
    for (n, batch) in contents.chunks(RAW_BATCH).enumerate() {
        let ids: Vec<String> =
            (0..batch.len()).map(|i| format!("00000000-0000-4000-8000-{:012}", n * RAW_BATCH + i)).collect();
        let bodies: Vec<&[u8]> = batch.iter().map(|c| c.as_bytes()).collect();
        bytes += bodies.iter().map(|b| b.len()).sum::<usize>();
        let mut tx = client.transaction()?;
        tx.execute(
            "INSERT INTO raw_rows(id, body) SELECT r.id::uuid, r.body FROM unnest($1::text[], $2::bytea[]) AS r(id, body)",
            &[&ids, &bodies],
        )?;
        tx.commit()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    client.batch_execute("DROP TABLE raw_rows")?;
    Ok((seconds, bytes))
}
