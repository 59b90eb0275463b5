//! The hook's cost under Wine: the Windows build's `trae-mem.exe hook` for a
//! PostToolUse event, against the floor of a bare Windows process (the same
//! trivial Rust program as the hook benchmark's, built for Windows: it reads
//! stdin and exits), both started through Wine, interleaved, in one run.
//! The Linux build and its floor are measured beside them, so the two
//! ratios can be compared: what Wine adds to the hook beyond what it adds
//! to any process. `trae-mem.exe --version` under Wine tells how much of
//! the hook's time is loading the binary rather than its work.
//!
//! `scripts/test` builds the `.exe` and names it (as for tests/windows.rs):
//! `TRAE_MEM_TEST_WINDOWS_EXE`, `TRAE_MEM_TEST_WINDOWS_SHIM`.
//!
//! `cargo bench -- windows --observations 100000 --runs 100`

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::built;
use crate::floor::build_floor;
use crate::run::{percentile, spawn, timed};
use serde_json::json;

const WINE: &str = "/usr/lib/wine/wine64";
const WINESERVER: &str = "/usr/lib/wine/wineserver";

pub fn main(args: Vec<String>) -> anyhow::Result<()> {
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let observations: usize = flag("--observations").map_or(Ok(100_000), |v| v.parse())?;
    let runs: usize = flag("--runs").map_or(Ok(100), |v| v.parse())?;

    let given = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_file());
    let (Some(exe), Some(shim), true) =
        (given("TRAE_MEM_TEST_WINDOWS_EXE"), given("TRAE_MEM_TEST_WINDOWS_SHIM"), Path::new(WINE).is_file())
    else {
        let missing = "the Windows build or Wine (scripts/test provides both)";
        eprintln!("bench windows: SKIPPED for want of {missing}");
        anyhow::ensure!(std::env::var("CI").as_deref() != Ok("true"), "a skipped benchmark fails under CI=true");
        return Ok(());
    };

    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    drop(built::store(&home, observations, 7, dir.path())?);
    println!("database: {observations} observations");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::copy(&exe, bin.join("trae-mem.exe"))?;
    std::fs::copy(&shim, bin.join("bcryptprimitives.dll"))?;
    let windows_floor = build_floor(dir.path(), Some("x86_64-pc-windows-gnu"), &bin.join("floor.exe"))?;
    let linux_floor = build_floor(dir.path(), None, &dir.path().join("floor"))?;
    let linux_exe = PathBuf::from(env!("CARGO_BIN_EXE_trae-mem"));

    // A Windows machine has no wineserver to start: one kept running
    // (`-p`) spares every process that start, as Windows would.
    let prefix = dir.path().join("prefix");
    let windows_home = format!("Z:{}", home.display()).replace('/', "\\");
    let wine = |program: &Path, args: &[&str]| {
        let mut command = Command::new(WINE);
        command
            .arg(program)
            .args(args)
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .env("TRAE_MEM_HOME", &windows_home)
            .current_dir(dir.path());
        command
    };
    std::fs::create_dir_all(&prefix)?;
    let server = Command::new(WINESERVER).arg("-p").env("WINEPREFIX", &prefix).status()?;
    anyhow::ensure!(server.success(), "wineserver did not start");

    let tool_call = |n: usize| {
        serde_json::to_vec(&json!({
            "session_id": "bench-session", "transcript_path": r"C:\Users\dev\.claude\t.jsonl", "cwd": r"C:\src\bench",
            "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "cargo test --release", "description": "Run the tests"},
            "tool_response": {"stdout": "test result: ok. 42 passed; 0 failed\n".repeat(20), "stderr": "", "interrupted": false},
            "tool_use_id": format!("toolu_bench_{n}")
        }))
    };
    // Warm the prefix (its first start takes seconds), the page cache and
    // the binaries, then interleave.
    let windows_exe = bin.join("trae-mem.exe");
    for n in 0..3 {
        timed(wine(&windows_floor, &[]), &tool_call(0)?)?;
        timed(wine(&windows_exe, &["hook"]), &tool_call(runs * 4 + n)?)?;
    }
    let mut figures = [Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for n in 0..runs {
        let payload = tool_call(n)?;
        figures[0].push(timed(wine(&windows_floor, &[]), &payload)?);
        figures[1].push(timed(wine(&windows_exe, &["hook"]), &payload)?);
        figures[2].push(spawn(&linux_floor, &[], &home, &payload)?);
        figures[3].push(spawn(&linux_exe, &["hook"], &home, &tool_call(runs + n)?)?);
        figures[4].push(timed(wine(&windows_exe, &["--version"]), b"")?);
    }
    let _ = Command::new(WINESERVER).arg("-k").env("WINEPREFIX", &prefix).status();
    let [wine_floor, wine_hook, floor, hook, wine_version] = figures.map(|mut ms| percentile(&mut ms, 50.0));
    println!("Wine: bare process (read stdin, exit)  p50 {wine_floor:7.2} ms");
    println!("Wine: hook PostToolUse                 p50 {wine_hook:7.2} ms");
    println!("Wine: trae-mem.exe --version           p50 {wine_version:7.2} ms  (loading the binary, no work)");
    println!("Wine: hook / bare process (p50)        {:.2}x", wine_hook / wine_floor);
    println!("Linux: bare process                    p50 {floor:7.2} ms");
    println!("Linux: hook PostToolUse                p50 {hook:7.2} ms");
    println!("Linux: hook / bare process (p50)       {:.2}x", hook / floor);
    println!("Wine / Linux, hook (p50)               {:.2}x  ({runs} runs each, interleaved)", wine_hook / hook);
    Ok(())
}
