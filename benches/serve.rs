//! The viewer benchmark, on a store of 100k observations:
//! - the live page and a search, each request's time at the client over
//!   loopback, against a static asset from the same server in the same run
//!   (the floor: HTTP and the process, no store);
//! - how long after its hook exits a new observation reaches an open live
//!   stream.
//!
//! `cargo bench -- serve --observations 100000 --rounds 40`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::built;
use crate::run::{percentile, spawn};
use serde_json::json;

/// Searches as people type them into the viewer.
const QUERIES: [&str; 6] =
    ["database is locked", "why did the import time out", "fix flaky test", "src/store/mod.rs", "批量导入 超时", ""];

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let observations: usize = flag("--observations").map_or(Ok(100_000), |v| v.parse())?;
    let rounds: usize = flag("--rounds").map_or(Ok(40), |v| v.parse())?;
    let exe = Path::new(env!("CARGO_BIN_EXE_trae-mem"));
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    let built = Instant::now();
    build_store(&home, observations, dir.path())?;
    println!("database: {observations} observations (built in {:.0} s)", built.elapsed().as_secs_f64());

    let server = Server::start(exe, &home)?;
    // Warm: the first requests read the store's pages from disk.
    for query in QUERIES {
        server.get(&search_path(query))?;
    }
    let (mut floor, mut live, mut search) = (Vec::new(), Vec::new(), Vec::new());
    let mut by_query = vec![Vec::new(); QUERIES.len()];
    for round in 0..rounds {
        floor.push(server.get("/assets/app.css")?);
        live.push(server.get("/")?);
        let ms = server.get(&search_path(QUERIES[round % QUERIES.len()]))?;
        search.push(ms);
        by_query[round % QUERIES.len()].push(ms);
    }
    let floor_p50 = percentile(&mut floor, 50.0);
    println!("{rounds} rounds, interleaved; milliseconds at the client, over loopback");
    println!("  static asset (floor)  p50 {floor_p50:6.2}  p90 {:6.2}", percentile(&mut floor, 90.0));
    for (name, times) in [("live page", &mut live), ("search", &mut search)] {
        let p50 = percentile(times, 50.0);
        println!(
            "  {name:<20}  p50 {p50:6.2}  p90 {:6.2}  max {:6.2}  ({:.1}× the floor; target p50 ≤ 30 ms)",
            percentile(times, 90.0),
            percentile(times, 100.0),
            p50 / floor_p50
        );
    }

    for (query, times) in QUERIES.iter().zip(&mut by_query).filter(|(_, t)| !t.is_empty()) {
        println!("    search {query:<30?} p50 {:6.2}", percentile(times, 50.0));
    }

    let mut arrivals = Vec::new();
    for i in 0..rounds.min(20) {
        arrivals.push(live_arrival(&server, exe, &home, i)?);
    }
    println!(
        "a new observation on an open live stream, after its hook exited: p50 {:.0} ms, max {:.0} ms (target ≤ 1000 ms)",
        percentile(&mut arrivals, 50.0),
        percentile(&mut arrivals, 100.0)
    );
    Ok(())
}

fn search_path(query: &str) -> String {
    let encoded: String = form_urlencoded::byte_serialize(query.as_bytes()).collect();
    format!("/search?q={encoded}")
}

fn build_store(home: &Path, observations: usize, dir: &Path) -> anyhow::Result<()> {
    let store = built::store(home, observations, 13, dir)?;
    store.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    Ok(())
}

/// Runs a hook with a new prompt while a live stream is open; returns the
/// milliseconds from the hook's exit to the event.
fn live_arrival(server: &Server, exe: &Path, home: &Path, i: usize) -> anyhow::Result<f64> {
    let mut stream = TcpStream::connect(&server.addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET /events HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr)?;
    let mut reader = BufReader::new(stream);
    // The stream is open once its headers arrive.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    // At a random point of the watcher's cycle, or every run would fall
    // at the same point of it.
    std::thread::sleep(Duration::from_millis(fastrand::u64(0..250)));
    let marker = format!("benchmark-arrival-{i}-{}", std::process::id());
    let payload = json!({
        "session_id": "bench-live", "transcript_path": "/tmp/bench-live.jsonl", "cwd": home,
        "hook_event_name": "UserPromptSubmit", "prompt": format!("{marker} arrives"),
    });
    spawn(exe, &["hook"], home, &serde_json::to_vec(&payload)?)?;
    let exited = Instant::now();
    loop {
        line.clear();
        anyhow::ensure!(reader.read_line(&mut line)? > 0, "the live stream closed");
        if line.contains(&marker) {
            return Ok(exited.elapsed().as_secs_f64() * 1e3);
        }
    }
}

/// `trae-mem serve` on a free port.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(exe: &Path, home: &Path) -> anyhow::Result<Self> {
        let mut child = Command::new(exe)
            .args(["serve", "--port", "0"])
            .env("TRAE_MEM_HOME", home)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let mut first = String::new();
        BufReader::new(child.stdout.take().expect("piped")).read_line(&mut first)?;
        let url = first.split_whitespace().find(|w| w.starts_with("http://"));
        let addr = url.ok_or_else(|| anyhow::anyhow!("no URL in {first:?}"))?;
        Ok(Self { child, addr: addr.trim_start_matches("http://").trim_end_matches('/').to_owned() })
    }

    /// One request on a new connection; the milliseconds to the whole response.
    fn get(&self, path: &str) -> anyhow::Result<f64> {
        let started = Instant::now();
        let mut stream = TcpStream::connect(&self.addr)?;
        write!(stream, "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", self.addr)?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response)?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        anyhow::ensure!(response.starts_with(b"HTTP/1.1 200"), "GET {path}: {}", String::from_utf8_lossy(&response));
        Ok(ms)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
