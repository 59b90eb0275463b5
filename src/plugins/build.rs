//! How to build a plugin whose wasm is missing: a Rust plugin's path names
//! the cargo build that makes it (`<crate>/target/wasm32-wasip2/<profile>/
//! <name>.wasm`), as the example plugins' in the repository's
//! `trae-mem.toml` do, so the error can name the command.

use std::path::Path;

/// The target Rust plugins are built for.
const TARGET: &str = "wasm32-wasip2";

/// The command that builds the missing `wasm`, when its path is a cargo
/// build's output for a crate (or workspace) that is there.
pub fn command(wasm: &Path) -> Option<String> {
    let profile_dir = wasm.parent()?;
    let target_dir = profile_dir.parent()?;
    if target_dir.file_name()? != TARGET || target_dir.parent()?.file_name()? != "target" {
        return None;
    }
    let manifest = target_dir.parent()?.parent()?.join("Cargo.toml");
    if !manifest.is_file() {
        return None;
    }
    let profile = match profile_dir.file_name()?.to_str()? {
        "release" => " --release",
        "debug" => "",
        _ => return None,
    };
    Some(format!(
        "rustup target add {TARGET} && cargo build{profile} --target {TARGET} --manifest-path {}",
        crate::install::shell_quote(&manifest)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cargo_builds_output_names_its_build() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\n").unwrap();
        let wasm = dir.path().join("target/wasm32-wasip2/release/file_changed.wasm");
        let manifest = dir.path().join("Cargo.toml");
        assert_eq!(
            command(&wasm).unwrap(),
            format!(
                "rustup target add wasm32-wasip2 && cargo build --release --target wasm32-wasip2 --manifest-path {}",
                manifest.display()
            )
        );
        assert_eq!(command(&dir.path().join("plugin.wasm")), None);
        assert_eq!(command(&dir.path().join("elsewhere/target/wasm32-wasip2/release/x.wasm")), None);
    }
}
