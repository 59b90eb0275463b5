//! The Linux arm64 build (`aarch64-unknown-linux-gnu`), cross-linked here by
//! Debian's gcc-aarch64-linux-gnu and statically, as the x86-64 one is, and
//! run under qemu-user-static as an agent on an arm64 machine runs it: it
//! starts, stores a hook's events, and search finds them by meaning.
//!
//! The cross build takes about as long as the native one, so `scripts/test`
//! makes it only where its toolchain is installed, names it in
//! `TRAE_MEM_TEST_ARM64_EXE`, and says at the end whether it ran.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::util::{Home, Run, run_command};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// qemu and the arm64 binary, or `None` (said) when scripts/test built none.
fn arm64(test: &str) -> Option<(PathBuf, PathBuf)> {
    let exe = std::env::var_os("TRAE_MEM_TEST_ARM64_EXE").map(PathBuf::from).filter(|p| p.is_file());
    let qemu =
        ["/usr/bin/qemu-aarch64-static", "/usr/bin/qemu-aarch64"].into_iter().map(PathBuf::from).find(|p| p.is_file());
    match (qemu, exe) {
        (Some(qemu), Some(exe)) => Some((qemu, exe)),
        _ => {
            eprintln!(
                "NOT RUN {test}: no arm64 build (scripts/test makes one where gcc-aarch64-linux-gnu and qemu-user-static are installed)"
            );
            None
        }
    }
}

/// Runs the arm64 binary under qemu with `home`'s environment.
fn run(qemu: &PathBuf, exe: &PathBuf, home: &Home, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut qemu = Command::new(qemu);
    qemu.arg(exe);
    run_command(home.command_via(qemu, args), args, stdin)
}

#[test]
fn the_arm64_build_stores_a_hook_and_finds_it_by_meaning_under_qemu() {
    let Some((qemu, exe)) = arm64("arm64: a hook stored and found under qemu") else { return };
    // An ELF for AArch64 (e_machine 183), not this machine's own binary.
    let head = std::fs::read(&exe).unwrap();
    assert_eq!(&head[..4], b"\x7fELF", "{}", exe.display());
    assert_eq!(u16::from_le_bytes([head[18], head[19]]), 183, "{} is not an arm64 binary", exe.display());

    let home = Home::new();
    let version = run(&qemu, &exe, &home, &["--version"], None).ok();
    assert_eq!(version.stdout, format!("trae-mem {VERSION}\n"), "{version}");

    let sid = "arm64-turn";
    let prompt = json!({"session_id": sid, "cwd": home.work(), "hook_event_name": "UserPromptSubmit",
                        "prompt": "why does the app crash without a settings file?"});
    run(&qemu, &exe, &home, &["hook"], Some(prompt.to_string().as_bytes())).ok();
    let stop = json!({"session_id": sid, "cwd": home.work(), "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "Fixed: a missing settings file now falls back to the defaults instead of aborting."});
    run(&qemu, &exe, &home, &["hook"], Some(stop.to_string().as_bytes())).ok();
    let stored: i64 = home.db().query_row("SELECT count(*) FROM observations", [], |r| r.get(0)).unwrap();
    assert!(stored >= 2, "the prompt and the answer are stored: {stored}");

    // The vectors, made by the arm64 build's own encoder.
    let embedded = run(&qemu, &exe, &home, &["embed", "--json"], None).ok().json();
    assert_eq!(embedded["finished"], true, "{embedded}");
    let query = "偏好丢失时程序启动就挂掉，后来怎么处理的？";
    let found = run(&qemu, &exe, &home, &["search", "--json", "--limit", "3", "--", query], None).ok().json();
    assert_eq!(found["hits"][0]["kind"], "response", "{found}");
    assert_eq!(found["hits"][0]["found_by"], "meaning", "{found}");
    // And what this machine's build finds in the same store, the same.
    let here = home.run(&["search", "--json", "--limit", "3", "--", query], None).ok().json();
    assert_eq!(here["hits"][0]["id"], found["hits"][0]["id"], "x86-64: {here}\narm64: {found}");
}
