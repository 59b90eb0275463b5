//! The floor a hook is measured against: a trivial Rust program that only
//! reads stdin and exits, so a ratio to it is the hook's own cost, free of
//! what starting any process costs on this machine (or under Wine).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The floor program, built for `target` (this machine's when `None`) as `out`.
pub fn build_floor(dir: &Path, target: Option<&str>, out: &Path) -> anyhow::Result<PathBuf> {
    let source = dir.join("floor.rs");
    std::fs::write(
        &source,
        "use std::io::Read;\nfn main() { let mut b = Vec::new(); std::io::stdin().read_to_end(&mut b).unwrap(); }\n",
    )?;
    let mut rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
    rustc.args(["-C", "opt-level=3", "-o"]).arg(out).arg(&source);
    if let Some(target) = target {
        rustc.args(["--target", target]);
    }
    anyhow::ensure!(rustc.status()?.success(), "rustc could not build the floor binary");
    Ok(out.to_owned())
}
