//! Summaries by a language model, against the mock model server the tests
//! use, on loopback:
//! - what declaring the model summarizer costs a `SessionEnd` hook (it
//!   queues the session and starts the background worker, never waiting for
//!   the model), against the same hook with the built-in summarizer,
//!   interleaved in one run;
//! - the worker's throughput: queued sessions summarized per second by
//!   `trae-mem summarize --pending`, with the server answering at once, so
//!   what is measured is trae-mem's side (the plugin's load, the request,
//!   the writes).
//!
//! `cargo bench -- summarize --runs 50 --sessions 200`

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::mock_model;
use crate::run::{percentile, spawn_in};
use serde_json::json;

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let runs: usize = flag("--runs").map_or(Ok(50), |v| v.parse())?;
    let sessions: usize = flag("--sessions").map_or(Ok(200), |v| v.parse())?;
    let exe = Path::new(env!("CARGO_BIN_EXE_trae-mem"));
    let wasm = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/target/wasm32-wasip2/release/llm_summarizer.wasm");
    anyhow::ensure!(wasm.exists(), "{} is not built (build.rs builds it)", wasm.display());

    let model = mock_model::MockModel::start(Vec::new());
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    let (with, without) = (dir.path().join("with-model"), dir.path().join("builtin"));
    for project in [&home, &with, &without] {
        std::fs::create_dir_all(project)?;
    }
    let url = format!("{}/v1/messages", model.url);
    std::fs::write(
        with.join("trae-mem.toml"),
        format!(
            "[summarize]\nsummarizer = \"llm\"\nmax_tokens_per_day = 1000000000\n[[plugins]]\nname = \"llm\"\npath = \"{}\"\nrole = \"summarizer\"\n\
             [plugins.grants]\nhttp = [{{ url = \"{url}\" }}]\n[plugins.config]\napi = \"anthropic\"\nurl = \"{url}\"\nmodel = \"mock\"\n",
            wasm.display()
        ),
    )?;
    // Compiles and caches the plugin, as `plugins check` would.
    command(exe, &home, &with, &["plugins", "check"])?;

    // SessionEnd, built-in against model, interleaved.
    let (mut builtin_ms, mut model_ms) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for n in 0..runs + 3 {
        for (cwd, times) in [(&without, &mut builtin_ms), (&with, &mut model_ms)] {
            let sid = format!("end-{}-{n}", cwd.file_name().unwrap().to_string_lossy());
            let ms = session(exe, &home, cwd, &sid)?;
            // The first runs warm the page cache and the binary.
            if n >= 3 {
                times.push(ms);
            }
        }
    }
    let (b50, m50) = (percentile(&mut builtin_ms, 50.0), percentile(&mut model_ms, 50.0));
    println!(
        "hook SessionEnd, built-in summarizer      p50 {b50:6.2} ms  p95 {:6.2} ms",
        percentile(&mut builtin_ms, 95.0)
    );
    println!(
        "hook SessionEnd, model summarizer queued  p50 {m50:6.2} ms  p95 {:6.2} ms",
        percentile(&mut model_ms, 95.0)
    );
    println!("model / built-in (p50)                    {:.2}x  ({runs} interleaved runs each)", m50 / b50);
    // Whatever the background workers still do, done before the next figure.
    command(exe, &home, &with, &["summarize", "--pending"])?;

    // The worker's throughput: sessions recorded with the built-in
    // summarizer, queued for the model by `summarize SESSION`, then run.
    let mut ids = Vec::with_capacity(sessions);
    for n in 0..sessions {
        let sid = format!("queued-{n}");
        for (event, extra) in turn(n) {
            hook(exe, &home, &without, &sid, event, extra)?;
        }
        ids.push(local_id(&home, &sid)?);
    }
    for id in &ids {
        command(exe, &home, &with, &["summarize", id])?;
    }
    let asked = model.seen().len();
    let started = Instant::now();
    command(exe, &home, &with, &["summarize", "--pending"])?;
    let took = started.elapsed().as_secs_f64();
    let answered = model.seen().len() - asked;
    anyhow::ensure!(answered == sessions, "the worker sent {answered} requests for {sessions} sessions");
    println!(
        "worker: {sessions} queued sessions in {took:.2} s, {:.1} sessions/s ({:.1} ms each, mock answering at once)",
        sessions as f64 / took,
        took * 1e3 / sessions as f64
    );
    Ok(())
}

/// A short session's events before its end, with a different prompt each
/// time (the same content within seconds would be a duplicate).
fn turn(n: usize) -> Vec<(&'static str, serde_json::Value)> {
    vec![
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": format!("make the config loader fall back to defaults, take {n}")})),
        (
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": format!("toolu_{n}"), "tool_input": {"file_path": "src/config.rs"},
                   "tool_response": "fn load_config() -> Config { todo!() }"}),
        ),
        ("Stop", json!({"last_assistant_message": format!("Done: a missing trae.toml now means the defaults ({n}).")})),
    ]
}

/// Records a session in `cwd`'s settings and times its SessionEnd.
fn session(exe: &Path, home: &Path, cwd: &Path, sid: &str) -> anyhow::Result<f64> {
    for (event, extra) in turn(0) {
        hook(exe, home, cwd, sid, event, extra)?;
    }
    let end = payload(sid, "SessionEnd", json!({"reason": "exit"}))?;
    spawn_in(exe, &["hook"], home, &end, cwd)
}

fn hook(exe: &Path, home: &Path, cwd: &Path, sid: &str, event: &str, extra: serde_json::Value) -> anyhow::Result<f64> {
    spawn_in(exe, &["hook"], home, &payload(sid, event, extra)?, cwd)
}

fn payload(sid: &str, event: &str, extra: serde_json::Value) -> anyhow::Result<Vec<u8>> {
    let mut p = json!({"session_id": sid, "cwd": "/home/dev/src/bench", "hook_event_name": event});
    p.as_object_mut().expect("an object").extend(extra.as_object().expect("an object").clone());
    Ok(serde_json::to_vec(&p)?)
}

/// The local id of the client's session `sid`.
fn local_id(home: &Path, sid: &str) -> anyhow::Result<String> {
    let db = rusqlite::Connection::open(home.join("trae-mem.db"))?;
    Ok(db.query_row("SELECT session_id FROM session_keys WHERE external_id = ?1", [sid], |r| r.get(0))?)
}

/// Runs a trae-mem command in `cwd` and waits for it.
fn command(exe: &Path, home: &Path, cwd: &Path, args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new(exe)
        .args(args)
        .current_dir(cwd)
        .env("TRAE_MEM_HOME", home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()?;
    anyhow::ensure!(status.success(), "trae-mem {} exited with {status}", args.join(" "));
    Ok(())
}
