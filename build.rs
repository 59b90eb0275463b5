//! Builds the example plugins (`plugins/`, a workspace of its own) for
//! `wasm32-wasip2`, installing that target with rustup when it is missing,
//! so that `cargo run` and `cargo test` need no other set-up step.
//!
//! A failure here is a warning, not a build error: trae-mem itself does not
//! need the plugins, and a missing plugin fails at run time with a message
//! that names it. Set `TRAE_MEM_SKIP_PLUGINS=1` to skip this step.
//!
//! On x86-64 musl it also compiles `native/musl_mem.c`, whose memcpy,
//! memmove and memcmp take the place of musl's (that file says why).

use std::path::Path;
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let target = |key: &str| std::env::var(key).unwrap_or_default();
    if target("CARGO_CFG_TARGET_ENV") == "musl" && target("CARGO_CFG_TARGET_ARCH") == "x86_64" {
        println!("cargo:rerun-if-changed=native/musl_mem.c");
        cc::Build::new()
            .file("native/musl_mem.c")
            .opt_level(2)
            .flag("-fno-builtin")
            .flag("-fno-tree-loop-distribute-patterns")
            .compile("musl_mem");
    }
    println!("cargo:rerun-if-env-changed=TRAE_MEM_SKIP_PLUGINS");
    // Only the sources: watching plugins/ whole would see its own target
    // directory change and rebuild trae-mem on every build.
    println!("cargo:rerun-if-changed=wit");
    println!("cargo:rerun-if-changed=plugins/Cargo.toml");
    println!("cargo:rerun-if-changed=plugins/Cargo.lock");
    for entry in std::fs::read_dir("plugins").into_iter().flatten().flatten() {
        if entry.path().join("Cargo.toml").exists() {
            println!("cargo:rerun-if-changed={}", entry.path().join("Cargo.toml").display());
            println!("cargo:rerun-if-changed={}", entry.path().join("src").display());
        }
    }
    if std::env::var_os("TRAE_MEM_SKIP_PLUGINS").is_some() {
        return;
    }
    if let Err(problem) = build_plugins() {
        println!("cargo:warning=the example plugins were not built: {problem}");
    }
}

fn build_plugins() -> Result<(), String> {
    let installed = Command::new("rustup").args(["target", "list", "--installed"]).output();
    let has_target = installed.as_ref().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l == TARGET));
    if !has_target {
        run(Command::new("rustup").args(["target", "add", TARGET]))?;
    }
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .args(["build", "--release", "--target", TARGET, "--manifest-path"])
        .arg(Path::new("plugins").join("Cargo.toml"));
    // The outer build's settings are not the plugins': clear what cargo
    // passes to build scripts so the inner build starts clean.
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("CARGO_") && key != "CARGO_HOME" || key == "RUSTFLAGS" || key == "RUSTC_WRAPPER" {
            cargo.env_remove(&key);
        }
    }
    run(&mut cargo)
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {}", String::from_utf8_lossy(&output.stderr).lines().last().unwrap_or("")))
    }
}
