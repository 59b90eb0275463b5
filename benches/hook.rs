//! The hook benchmark: a whole `trae-mem hook` process (spawn to exit) for a
//! PostToolUse event on a database of 100k observations, against the floor
//! of a trivial Rust binary that only reads stdin and exits, measured in
//! the same run and interleaved so that both see the same machine load.
//! Also: how soon a hook facing a locked database exits (having spooled its
//! event), how long hooks wait while `trae-mem import` loads the corpus into
//! the same home, SessionEnd (with its summary) on a 5,000-observation
//! session, and the peak memory of one hook process.
//!
//! `cargo bench -- hook --observations 100000 --runs 300`
//!
//! `--baseline PATH` also runs another trae-mem binary (an older build),
//! interleaved with this one, and prints the ratios for PostToolUse and
//! SessionStart: a change's cost measured in one run, on one machine's
//! load. The baseline gets a store of its own, imported by itself from the
//! same corpus, since an older build refuses a store a newer one migrated.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::floor::build_floor;
use crate::run::{percentile, spawn, spawn_in};
use crate::{built, corpus};
use serde_json::json;
use trae_mem::config::Summarize;
use trae_mem::plugins::Plugins;
use trae_mem::recall::{Private, Reader};
use trae_mem::store::{DB_FILE, OpenOptions, Store};
use trae_mem::summarize;

/// The target whose libc trae-mem was built on, where that is not the libc
/// rustc builds the floor on by default.
const OWN_LIBC_TARGET: Option<&str> = if cfg!(all(target_os = "linux", target_arch = "x86_64", target_env = "musl")) {
    Some("x86_64-unknown-linux-musl")
} else {
    None
};

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    if args.get(1).is_some_and(|a| a == "--rss-of") {
        // Runs as a small process of its own: see `hook_rss_kb`.
        let payload = std::fs::read(&args[4])?;
        println!("{}", child_rss_kb(Path::new(&args[2]), Path::new(&args[3]), &payload)?);
        return Ok(());
    }
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let observations: usize = flag("--observations").map_or(Ok(100_000), |v| v.parse())?;
    let runs: usize = flag("--runs").map_or(Ok(300), |v| v.parse())?;
    let session_size: usize = flag("--session").map_or(Ok(5_000), |v| v.parse())?;

    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let export = dir.path().join("corpus.jsonl");
    corpus::Corpus::new(7).write_export(observations, &mut BufWriter::new(std::fs::File::create(&export)?))?;
    let mut store = Store::open(&home.join(DB_FILE), &OpenOptions::default())?;
    built::import(&mut store, &home, &export)?;
    // Every session summarized, as SessionEnd would have: a prompt recalls
    // from the summaries.
    let settings = Summarize::default();
    let builtin = Plugins::new(&[], &settings, &home, false);
    for session in Reader::new(&store, Private::Marked).sessions(None, usize::MAX)? {
        summarize::session(&mut store, &builtin, &session.id, session.ended_at.unwrap_or(session.started_at))?;
    }
    // Every memory given its vector, as the hooks' background embed gives
    // it: a prompt recalls by meaning too.
    let started = Instant::now();
    let (embedder, model) = trae_mem::embed::configured(None, &home)?;
    let filled = trae_mem::embed::fill(&mut store, embedder, &model, None, &mut |_| {})?;
    store.conn().execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(store);
    println!(
        "database: {observations} observations, {} vectors (made in {:.1} s)",
        filled.embedded,
        started.elapsed().as_secs_f64()
    );
    if args.iter().any(|a| a == "--keep") {
        println!("keeping {}", dir.keep().display());
        return Ok(());
    }

    let floor = build_floor(dir.path(), None, &dir.path().join("floor"))?;
    // The floor is built as rustc builds any program here (glibc, on Linux).
    // trae-mem itself may be built on another libc (musl on x86-64 Linux),
    // whose start costs less: a floor built the same way shows how much of
    // the ratio that is.
    let own_floor = match OWN_LIBC_TARGET {
        Some(target) => Some(build_floor(dir.path(), Some(target), &dir.path().join("floor-own-libc"))?),
        None => None,
    };
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_trae-mem"));
    // Each tool call has its own id, as a client sends it: with one id for
    // all, every hook after the first would be dropped as a duplicate.
    let tool_call = |n: usize| {
        serde_json::to_vec(&json!({
            "session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/dev/src/bench",
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cargo test --release", "description": "Run the tests"},
            "tool_response": {"stdout": "test result: ok. 42 passed; 0 failed\n".repeat(20), "stderr": "", "interrupted": false},
            "tool_use_id": format!("toolu_bench_{n}")
        }))
    };
    let payload = tool_call(0)?;

    // Warm the page cache and the binaries, then interleave.
    for n in 0..5 {
        spawn(&floor, &[], &home, &payload)?;
        spawn(&exe, &["hook"], &home, &tool_call(runs + n)?)?;
    }
    let baseline = match flag("--baseline") {
        Some(path) => Some(Baseline::import(PathBuf::from(path), dir.path(), &export)?),
        None => None,
    };
    let (mut floor_ms, mut hook_ms, mut base_ms, mut own_floor_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for n in 0..runs {
        let payload = tool_call(n)?;
        floor_ms.push(spawn(&floor, &[], &home, &payload)?);
        if let Some(own_floor) = &own_floor {
            own_floor_ms.push(spawn(own_floor, &[], &home, &payload)?);
        }
        hook_ms.push(spawn(&exe, &["hook"], &home, &payload)?);
        if let Some(base) = &baseline {
            base_ms.push(spawn(&base.exe, &["hook"], &base.home, &payload)?);
        }
    }
    let (floor_p50, hook_p50) = (percentile(&mut floor_ms, 50.0), percentile(&mut hook_ms, 50.0));
    println!("floor (read stdin, exit)   p50 {floor_p50:6.2} ms  p95 {:6.2} ms", percentile(&mut floor_ms, 95.0));
    println!("hook PostToolUse           p50 {hook_p50:6.2} ms  p95 {:6.2} ms", percentile(&mut hook_ms, 95.0));
    println!("hook / floor (p50)         {:.2}x", hook_p50 / floor_p50);
    if let Some(target) = OWN_LIBC_TARGET {
        let own_p50 = percentile(&mut own_floor_ms, 50.0);
        println!(
            "floor built for {target}   p50 {own_p50:6.2} ms  (trae-mem's own libc; hook / it {:.2}x)",
            hook_p50 / own_p50
        );
    }
    if let Some(base) = &baseline {
        let base_p50 = percentile(&mut base_ms, 50.0);
        println!(
            "baseline {}  p50 {base_p50:6.2} ms  p95 {:6.2} ms",
            base.exe.display(),
            percentile(&mut base_ms, 95.0)
        );
        println!("hook / baseline (p50)      {:.3}x", hook_p50 / base_p50);
    }
    session_start_figures(&exe, &home, dir.path(), runs, baseline.as_ref())?;
    let payload_file = dir.path().join("payload.json");
    std::fs::write(&payload_file, &payload)?;
    println!("peak memory of a hook      {:.1} MB (max RSS)", hook_rss_kb(&exe, &home, &payload_file)? as f64 / 1024.0);

    locked_figures(&exe, &home, &payload)?;
    import_figures(&exe, dir.path(), &export, &tool_call, hook_p50)?;
    plugin_figures(&exe, &home, dir.path(), runs)?;
    prompt_figures(&exe, &home, dir.path(), runs)?;

    // SessionEnd on a session of `session_size` observations.
    let end_session = "bench-end-session";
    let mut ends = Vec::new();
    for round in 0..5 {
        let sid = format!("{end_session}-{round}");
        fill_session(&exe, &home, &sid, session_size, dir.path())?;
        let end = serde_json::to_vec(
            &json!({"session_id": sid, "cwd": "/home/dev/src/bench", "hook_event_name": "SessionEnd", "reason": "exit"}),
        )?;
        ends.push(spawn(&exe, &["hook"], &home, &end)?);
    }
    println!(
        "hook SessionEnd ({session_size} obs)   p50 {:6.2} ms  (5 runs, summary included)",
        percentile(&mut ends, 50.0)
    );
    Ok(())
}

/// Another trae-mem binary, with a store of its own that it imported
/// from the benchmark's corpus. The embed that an import starts is kept
/// from running (its locks are held here), so that it takes no CPU from
/// the figures; neither hook measured reads vectors.
struct Baseline {
    exe: PathBuf,
    home: PathBuf,
    _embed_locks: [std::fs::File; 2],
}

impl Baseline {
    fn import(exe: PathBuf, dir: &Path, export: &Path) -> anyhow::Result<Baseline> {
        let home = dir.join("baseline-home");
        std::fs::create_dir_all(&home)?;
        let lock = |name: &str| -> anyhow::Result<std::fs::File> {
            let file = std::fs::File::create(home.join(name))?;
            file.lock()?;
            Ok(file)
        };
        let _embed_locks = [lock("embed.lock")?, lock("embed.queue")?];
        let status = Command::new(&exe)
            .args(["import", "--json"])
            .arg(export)
            .env("TRAE_MEM_HOME", &home)
            .stdout(Stdio::null())
            .status()?;
        anyhow::ensure!(status.success(), "{} could not import the corpus: {status}", exe.display());
        Ok(Baseline { exe, home, _embed_locks })
    }
}

/// SessionStart in a project of the corpus, telling its earlier sessions,
/// against the baseline when given. The same session resumes each run: a
/// new one each time would pile up sessions that recorded nothing. Each
/// binary first runs until what it tells stops changing, which brings the
/// summaries it tells up to date (the baseline's store has none yet), so
/// that no timed run writes them.
fn session_start_figures(
    exe: &Path,
    home: &Path,
    dir: &Path,
    runs: usize,
    baseline: Option<&Baseline>,
) -> anyhow::Result<()> {
    let payload = serde_json::to_vec(&json!({"session_id": "bench-session-start", "cwd": "/home/dev/src/project-3",
        "hook_event_name": "SessionStart", "source": "resume"}))?;
    let mut hooks = vec![(exe, home)];
    hooks.extend(baseline.map(|b| (b.exe.as_path(), b.home.as_path())));
    for (exe, home) in &hooks {
        let told = || -> anyhow::Result<Vec<u8>> {
            let out = Command::new(exe)
                .arg("hook")
                .current_dir(dir)
                .env("TRAE_MEM_HOME", home)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .and_then(|mut child| {
                    child.stdin.take().expect("piped").write_all(&payload)?;
                    child.wait_with_output()
                })?;
            anyhow::ensure!(out.status.success(), "{} hook exited with {}", exe.display(), out.status);
            Ok(out.stdout)
        };
        let mut before = told()?;
        for _ in 0..20 {
            let now = told()?;
            if now == before {
                break;
            }
            before = now;
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); hooks.len()];
    for _ in 0..runs {
        for ((exe, home), times) in hooks.iter().zip(&mut times) {
            times.push(spawn_in(exe, &["hook"], home, &payload, dir)?);
        }
    }
    let p50: Vec<f64> = times.iter_mut().map(|t| percentile(t, 50.0)).collect();
    println!("hook SessionStart          p50 {:6.2} ms  (telling project-3's earlier sessions)", p50[0]);
    if let Some(base_p50) = p50.get(1) {
        println!("SessionStart / baseline    {:.3}x  (baseline p50 {base_p50:6.2} ms)", p50[0] / base_p50);
    }
    Ok(())
}

/// UserPromptSubmit with the project's relevant memories recalled (the
/// default: by words and by meaning, the prompt's vector made in the hook)
/// and with `[context] on_prompt = false`, interleaved, in a project of
/// the corpus (about a twentieth of it). The budget with recall on is a
/// p50 of 25 ms: it runs once a human turn, and the agent then takes seconds.
fn prompt_figures(exe: &Path, home: &Path, dir: &Path, runs: usize) -> anyhow::Result<()> {
    let on = dir.join("recall-on");
    let off = dir.join("recall-off");
    std::fs::create_dir_all(&on)?;
    std::fs::create_dir_all(&off)?;
    std::fs::write(off.join("trae-mem.toml"), "[context]\non_prompt = false\n")?;
    for prompt in ["why does the database migration time out when the cache is cold?", "上次数据库连接超时是怎么解决的"]
    {
        // The same prompt again in one session within seconds would be
        // dropped as a duplicate, so each run's differs by trailing spaces,
        // which recall ignores. (A session of its own per run would not do:
        // hundreds of fresh sessions without summaries would be the
        // project's latest, and recall would find nothing to read.)
        let payload = |run: usize, recall: &str| {
            serde_json::to_vec(&json!({"session_id": format!("bench-prompt-{recall}"),
                "cwd": "/home/dev/src/project-3", "hook_event_name": "UserPromptSubmit",
                "prompt": format!("{prompt}{}", " ".repeat(run + 1))}))
        };
        let (mut with, mut without) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
        for run in 0..runs {
            without.push(spawn_in(exe, &["hook"], home, &payload(run, "off")?, &off)?);
            with.push(spawn_in(exe, &["hook"], home, &payload(run, "on")?, &on)?);
        }
        let (with_p50, without_p50) = (percentile(&mut with, 50.0), percentile(&mut without, 50.0));
        println!(
            "hook UserPromptSubmit, recall off / on   p50 {without_p50:6.2} / {with_p50:6.2} ms  (recall costs {:.2} ms; budget on: 25 ms)  {prompt}",
            with_p50 - without_p50
        );
    }
    Ok(())
}

/// A hook facing a database another process holds locked: it should wait
/// `[hook] lock_wait_ms` (250 ms), spool its event and exit.
fn locked_figures(exe: &Path, home: &Path, payload: &[u8]) -> anyhow::Result<()> {
    let locker = rusqlite::Connection::open(home.join(DB_FILE))?;
    locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO store_meta VALUES ('bench-lock', 'held');")?;
    let mut exits = Vec::new();
    for _ in 0..10 {
        exits.push(spawn(exe, &["hook"], home, payload)?);
    }
    locker.execute_batch("ROLLBACK")?;
    // The next hook stores what was spooled.
    spawn(exe, &["hook"], home, payload)?;
    println!(
        "hook, database locked       p50 {:6.1} ms  max {:6.1} ms  (exit with the event spooled; 10 runs)",
        percentile(&mut exits, 50.0),
        percentile(&mut exits, 100.0)
    );
    Ok(())
}

/// Hooks run back to back while `trae-mem import` loads the corpus into a
/// fresh home: how long each takes, against the idle hook's p50.
fn import_figures(
    exe: &Path,
    dir: &Path,
    export: &Path,
    tool_call: &dyn Fn(usize) -> serde_json::Result<Vec<u8>>,
    idle_p50: f64,
) -> anyhow::Result<()> {
    let home = dir.join("import-home");
    std::fs::create_dir_all(&home)?;
    // The hook creates the database, so that the import starts at once.
    spawn(exe, &["hook"], &home, &tool_call(0)?)?;
    let started = Instant::now();
    let mut import = Command::new(exe)
        .args(["import", "--json"])
        .arg(export)
        .env("TRAE_MEM_HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let mut during = Vec::new();
    while import.try_wait()?.is_none() {
        during.push(spawn(exe, &["hook"], &home, &tool_call(during.len() + 1)?)?);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = started.elapsed().as_secs_f64();
    anyhow::ensure!(import.wait()?.success(), "the import failed");
    // A hook that waited out its 250 ms for the lock spooled its event.
    let spooled = during.iter().filter(|&&ms| ms >= 250.0).count();
    if during.is_empty() {
        println!("hooks during an import      none ran: the import took {took:.2} s");
        return Ok(());
    }
    let (p50, p99) = (percentile(&mut during, 50.0), percentile(&mut during, 99.0));
    println!(
        "hooks during an import      p50 {p50:6.2} ms  p99 {p99:6.2} ms  wait p99 {:6.2} ms  ({} hooks, {spooled} spooled; import {took:.1} s)",
        (p99 - idle_p50).max(0.0),
        during.len()
    );
    Ok(())
}

/// The sampler plugin's cost: a PostToolUse whose output is over the
/// capture limit, with the head-tail sampler (warm cache) against plain
/// clipping, interleaved; the first, cold load; and a 1 MB output.
fn plugin_figures(exe: &Path, home: &Path, dir: &Path, runs: usize) -> anyhow::Result<()> {
    let wasm =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/target/wasm32-wasip2/release/head_tail_sampler.wasm");
    if !wasm.exists() {
        println!("sampler figures skipped: {} is not built", wasm.display());
        return Ok(());
    }
    let with = dir.join("with-sampler");
    let without = dir.join("without-plugins");
    std::fs::create_dir_all(&with)?;
    std::fs::create_dir_all(&without)?;
    std::fs::write(
        with.join("trae-mem.toml"),
        format!(
            "[[plugins]]\nname = \"sampler\"\npath = \"{}\"\nrole = \"sampler\"\ntools = [\"*\"]\n",
            wasm.display()
        ),
    )?;
    let output = |lines: usize| {
        (0..lines)
            .map(|i| format!("line {i}: compiling crate number {i} of the workspace"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // A tool call of its own each time: the same content again within
    // seconds would be dropped as a duplicate.
    let calls = std::cell::Cell::new(0);
    let payload = |stdout: &str| {
        calls.set(calls.get() + 1);
        serde_json::to_vec(
            &json!({"session_id": "bench-sampler", "cwd": "/home/dev/src/bench", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_input": {"command": "cargo build"}, "tool_response": {"stdout": stdout, "stderr": ""},
            "tool_use_id": format!("toolu_sampler_{}", calls.get())}),
        )
    };
    let medium = output(400); // ~20 KB: over the 4,000-character limit
    let cache = home.join("cache");
    let _ = std::fs::remove_dir_all(&cache);
    let cold = spawn_in(exe, &["hook"], home, &payload(&medium)?, &with)?;
    let (mut plain, mut sampled) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        plain.push(spawn_in(exe, &["hook"], home, &payload(&medium)?, &without)?);
        sampled.push(spawn_in(exe, &["hook"], home, &payload(&medium)?, &with)?);
    }
    let (plain_p50, sampled_p50) = (percentile(&mut plain, 50.0), percentile(&mut sampled, 50.0));
    println!("hook PostToolUse 20 KB, clipped      p50 {plain_p50:6.2} ms");
    println!(
        "hook PostToolUse 20 KB, sampler      p50 {sampled_p50:6.2} ms  ({:.2}x, warm cache)",
        sampled_p50 / plain_p50
    );
    println!("hook with sampler, first (cold) load     {cold:6.2} ms  (compile and cache)");
    let big = output(20_000); // ~1 MB
    let (mut big_plain, mut big_sampled) = (Vec::new(), Vec::new());
    for _ in 0..runs.min(30) {
        big_plain.push(spawn_in(exe, &["hook"], home, &payload(&big)?, &without)?);
        big_sampled.push(spawn_in(exe, &["hook"], home, &payload(&big)?, &with)?);
    }
    let (bp, bs) = (percentile(&mut big_plain, 50.0), percentile(&mut big_sampled, 50.0));
    println!("hook PostToolUse 1 MB, clipped       p50 {bp:6.2} ms");
    println!("hook PostToolUse 1 MB, sampler       p50 {bs:6.2} ms  (sampler's cost {:.2} ms)", bs - bp);
    Ok(())
}

/// Adds `count` observations to a session keyed as the hook keys it, by import.
fn fill_session(exe: &Path, home: &Path, sid: &str, count: usize, dir: &Path) -> anyhow::Result<()> {
    let start = serde_json::to_vec(
        &json!({"session_id": sid, "cwd": "/home/dev/src/bench", "hook_event_name": "SessionStart"}),
    )?;
    spawn(exe, &["hook"], home, &start)?;
    let mut store = Store::open(&home.join(DB_FILE), &OpenOptions::default())?;
    let local: String =
        store.conn().query_row("SELECT session_id FROM session_keys WHERE external_id = ?1", [sid], |r| r.get(0))?;
    let file = dir.join(format!("{sid}.jsonl"));
    let mut out = BufWriter::new(std::fs::File::create(&file)?);
    for i in 0..count {
        let kind = ["user", "tool", "note", "response", "error"][i % 5];
        let record = json!({"type": "observation", "id": 900_000_000 + i as i64, "session_id": local, "ts": i as i64,
            "kind": kind, "tool": "Bash", "content": format!("step {i}: ran cargo test and read src/store/mod.rs"), "private": false, "tags": []});
        writeln!(out, "{record}")?;
    }
    drop(out);
    store.conn().execute("DELETE FROM observations WHERE id >= 900000000", [])?;
    built::import(&mut store, home, &file)?;
    Ok(())
}

/// The peak resident memory of one hook process. A child shares its
/// parent's memory until it execs, and the kernel counts that too; this
/// process is large after the import, so a fresh small copy of this bench
/// spawns the hook and reports.
fn hook_rss_kb(exe: &Path, home: &Path, payload_file: &Path) -> anyhow::Result<i64> {
    let out = Command::new(std::env::current_exe()?)
        .args(["hook", "--rss-of"])
        .arg(exe)
        .arg(home)
        .arg(payload_file)
        .output()?;
    anyhow::ensure!(out.status.success(), "measuring memory failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8(out.stdout)?.trim().parse()?)
}

/// The peak resident memory of `exe hook`, from the kernel's own count.
fn child_rss_kb(exe: &Path, home: &Path, payload: &[u8]) -> anyhow::Result<i64> {
    let mut child = Command::new(exe)
        .arg("hook")
        .env("TRAE_MEM_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    child.stdin.take().expect("piped").write_all(payload)?;
    let mut status = 0;
    // SAFETY: rusage is a C struct of integers and timevals, for which all
    // zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // wait4 reports this one child's usage, unlike getrusage's running maximum.
    // SAFETY: `status` and `usage` are live locals of the types wait4 writes,
    // and `child` is our own child, not yet waited for.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    anyhow::ensure!(pid > 0, "wait4 failed");
    Ok(usage.ru_maxrss)
}
