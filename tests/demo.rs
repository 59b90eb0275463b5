//! `trae-mem demo` as a new user runs it: from a clone whose example
//! plugins are not built (it says so, once, on stderr), and with its
//! temporary home removed at the end unless kept.

use std::path::{Path, PathBuf};

use crate::util::{Home, Run, run_command};

/// A clone of the repository before its example plugins are built: its
/// `trae-mem.toml` and the plugins' workspace manifest, no wasm.
pub fn unbuilt_clone(home: &Home) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["trae-mem.toml", "plugins/Cargo.toml"] {
        home.write(&format!("work/{file}"), &std::fs::read(repo.join(file)).unwrap());
    }
    home.work().canonicalize().unwrap()
}

/// The command that builds the clone's example plugins.
pub fn build_command(clone: &Path) -> String {
    format!(
        "rustup target add wasm32-wasip2 && cargo build --release --target wasm32-wasip2 --manifest-path {}",
        clone.join("plugins/Cargo.toml").display()
    )
}

/// `trae-mem demo ARGS` in the clone, with the system's temporary folder at `tmp`.
fn demo(home: &Home, tmp: &Path, args: &[&str]) -> Run {
    let all = [&["demo"], args].concat();
    let mut command = home.command(&all);
    command.env_remove("TRAE_MEM_HOME").env("TMPDIR", tmp);
    run_command(command, &all, None).ok()
}

/// The demo homes left in `tmp`.
fn left_behind(tmp: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(tmp).unwrap().map(|e| e.unwrap().path());
    entries.filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("trae-mem-demo-")).collect()
}

#[test]
fn the_demo_says_once_that_unbuilt_plugins_stand_down_and_cleans_up_unless_kept() {
    let home = Home::new();
    let clone = unbuilt_clone(&home);
    let tmp = home.work().parent().unwrap().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();

    let run = demo(&home, &tmp, &[]);
    let warning: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(warning.len(), 1, "one line on stderr: {run}");
    let warning = warning[0];
    assert!(
        warning.starts_with(
            "warning: the plugins file-changed, model-response, head-tail-sampler, sectioned-summarizer not loaded, \
             so the built-in behaviour stands in (the built-in summarizer writes the summaries): "
        ),
        "{warning}"
    );
    assert!(warning.contains(&build_command(&clone)), "it names the build: {warning}");
    assert!(run.stdout.contains("demo --keep"), "{run}");
    assert_eq!(left_behind(&tmp), Vec::<PathBuf>::new(), "the demo left its home behind");

    let kept = demo(&home, &tmp, &["--keep"]);
    let left = left_behind(&tmp);
    assert_eq!(left.len(), 1, "{kept}");
    assert!(kept.stdout.contains(&format!("the demo's home is kept in {}", left[0].display())), "{kept}");
    let explore = kept.stdout.split("== Explore it yourself").nth(1).unwrap();
    assert!(explore.contains(&format!("--home {} search", left[0].display())), "{kept}");
}
