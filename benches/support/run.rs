//! Running the binary from a benchmark, timed, and the percentiles of the
//! times: shared by the benchmarks that spawn hooks.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Spawns `exe` with the payload on stdin and waits; returns milliseconds.
pub fn spawn(exe: &Path, args: &[&str], home: &Path, payload: &[u8]) -> anyhow::Result<f64> {
    spawn_in(exe, args, home, payload, home)
}

/// Like `spawn`, in `cwd` (whose trae-mem.toml, if any, applies).
pub fn spawn_in(exe: &Path, args: &[&str], home: &Path, payload: &[u8], cwd: &Path) -> anyhow::Result<f64> {
    let mut command = Command::new(exe);
    command.args(args).current_dir(cwd).env("TRAE_MEM_HOME", home).env_remove("CLAUDE_PROJECT_DIR");
    timed(command, payload)
}

/// Runs `command` with the payload on stdin and waits; returns milliseconds.
pub fn timed(mut command: Command, payload: &[u8]) -> anyhow::Result<f64> {
    let started = Instant::now();
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).spawn()?;
    child.stdin.take().expect("piped").write_all(payload)?;
    let status = child.wait()?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(status.success(), "{command:?} exited with {status}");
    Ok(ms)
}

/// The `p`th percentile of `values` (sorting them).
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((p / 100.0) * (values.len() - 1) as f64).round() as usize]
}
