//! trae-mem from an npm registry, as users get it: the packed packages are
//! published to a registry on loopback (verdaccio, which scripts/test
//! installs from npm), then `npm install -g trae-mem` picks this machine's
//! platform package among those published, `trae-mem install claude-code`
//! writes hooks that run its binary, `npm update -g trae-mem` replaces that
//! binary in place, and `npm uninstall -g trae-mem` removes both packages.

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use crate::npm::{read_json, repo};
use crate::util::{Home, Run, bin, run_command, skip};

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A verdaccio on a free loopback port, with its own storage and one user,
/// stopped when dropped.
struct Registry {
    server: Child,
    root: PathBuf,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

impl Registry {
    fn start(verdaccio: &Path, root: PathBuf) -> Registry {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let config = root.join("config.yaml");
        std::fs::write(
            &config,
            "storage: ./storage\nauth:\n  htpasswd:\n    file: ./htpasswd\nuplinks: {}\npackages:\n  '**':\n    \
             access: $all\n    publish: $authenticated\n    unpublish: $authenticated\nlog: { type: stdout, format: \
             pretty, level: warn }\nmax_body_size: 500mb\n",
        )
        .unwrap();
        let log = std::fs::File::create(root.join("verdaccio.log")).unwrap();
        let server = Command::new(verdaccio)
            .arg("--config")
            .arg(&config)
            .arg("--listen")
            .arg(format!("127.0.0.1:{port}"))
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let registry = Registry { server, root };
        let deadline = Instant::now() + Duration::from_secs(60);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "verdaccio did not listen: {}", registry.log());
            std::thread::sleep(Duration::from_millis(100));
        }
        // A user to publish as; npm keeps its token in the test's own npmrc.
        let add_user = format!(
            "fetch('http://127.0.0.1:{port}/-/user/org.couchdb.user:ci', {{method: 'PUT', headers: \
             {{'content-type': 'application/json'}}, body: JSON.stringify({{name: 'ci', password: 'ci-password'}})}})\
             .then(r => r.json()).then(j => {{ if (!j.token) throw new Error(JSON.stringify(j)); console.log(j.token) }})"
        );
        let mut node = Command::new("node");
        node.args(["-e", &add_user]);
        let token = run_command(node, &["node", "-e", "add a user"], None).ok().stdout.trim().to_owned();
        std::fs::write(
            registry.npmrc(),
            format!("registry=http://127.0.0.1:{port}/\n//127.0.0.1:{port}/:_authToken={token}\n"),
        )
        .unwrap();
        registry
    }

    fn npmrc(&self) -> PathBuf {
        self.root.join("npmrc")
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("verdaccio.log")).unwrap_or_default()
    }

    /// Where `npm install -g` puts packages and commands.
    fn global(&self) -> PathBuf {
        self.root.join("global")
    }

    /// `npm <args>` against this registry, with the test's own HOME, cache
    /// and global prefix.
    fn npm(&self, args: &[&str]) -> Run {
        let mut npm = Command::new("npm");
        npm.args(args)
            .current_dir(&self.root)
            .env("HOME", self.root.join("home"))
            .env("npm_config_userconfig", self.npmrc())
            .env("npm_config_cache", self.root.join("npm-cache"))
            .env("npm_config_prefix", self.global())
            .env("npm_config_update_notifier", "false")
            .env("npm_config_audit", "false")
            .env("npm_config_fund", "false")
            .env("npm_config_loglevel", "error")
            .env_remove("TRAE_MEM_HOME");
        let run = run_command(npm, args, None);
        assert_eq!(run.code, 0, "{run}\nverdaccio:\n{}", self.log());
        run
    }

    /// Packs `binary` as `platform`'s package (and the main one) at
    /// `version`, and publishes them, the platform package first.
    fn publish(&self, platform: &str, binary: &Path, version: &str) {
        let out = self.root.join(format!("packed/{version}/{platform}"));
        let mut pack = Command::new("node");
        pack.arg(repo().join("npm/pack.mjs"))
            .args(["--out"])
            .arg(&out)
            .args(["--platform", platform, "--version", version, "--binary"])
            .arg(binary);
        let packed = run_command(pack, &["node", "npm/pack.mjs"], None).ok();
        let tarballs: Vec<&str> = packed.stdout.lines().collect();
        assert_eq!(tarballs.len(), 2, "{packed}");
        self.npm(&["publish", tarballs[0]]);
        // Every platform packs the same main package: it is published once.
        if platform == "linux-x64-gnu" {
            self.npm(&["publish", tarballs[1]]);
        }
    }
}

/// The platforms whose binaries this run has: this machine's, and the cross
/// builds scripts/test made.
fn binaries() -> Vec<(&'static str, PathBuf)> {
    let mut found = vec![("linux-x64-gnu", PathBuf::from(bin()))];
    for (platform, var) in [
        ("win32-x64", "TRAE_MEM_TEST_WINDOWS_EXE"),
        ("linux-arm64-gnu", "TRAE_MEM_TEST_ARM64_EXE"),
        ("darwin-arm64", "TRAE_MEM_TEST_MACOS_ARM64_EXE"),
        ("darwin-x64", "TRAE_MEM_TEST_MACOS_X64_EXE"),
    ] {
        if let Some(exe) = std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_file()) {
            found.push((platform, exe));
        }
    }
    found
}

/// A registry in `name` under the target's temporary folder, holding every
/// platform package this run has a binary for; `None` (said) without verdaccio.
fn registry(test: &str, name: &str) -> Option<Registry> {
    let Some(verdaccio) = std::env::var_os("TRAE_MEM_TEST_VERDACCIO").map(PathBuf::from).filter(|p| p.is_file()) else {
        skip(test, "verdaccio (TRAE_MEM_TEST_VERDACCIO; scripts/test installs it from npm)");
        return None;
    };
    let registry = Registry::start(&verdaccio, Path::new(env!("CARGO_TARGET_TMPDIR")).join(name));
    // Linux x86-64 last: the main package, published with it, then names
    // packages that are there.
    for (platform, binary) in binaries().iter().rev() {
        registry.publish(platform, binary, VERSION);
    }
    Some(registry)
}

#[test]
fn install_update_and_uninstall_from_a_registry_as_users_do() {
    let Some(registry) = registry("npm: install, update and uninstall from a registry", "npm-registry") else {
        return;
    };
    let binaries = binaries();

    registry.npm(&["install", "-g", "trae-mem"]);
    let installed = registry.global().join("lib/node_modules");
    let nested = installed.join("trae-mem/node_modules/@trae-mem");
    let chosen: Vec<String> =
        std::fs::read_dir(&nested).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(chosen, ["linux-x64-gnu"], "of {:?}", binaries.iter().map(|b| b.0).collect::<Vec<_>>());
    let native = nested.join("linux-x64-gnu/bin/trae-mem");

    // The command npm put on PATH writes hooks that run the native binary.
    let home = Home::new();
    let project = home.work().canonicalize().unwrap();
    let mut install = Command::new(registry.global().join("bin/trae-mem"));
    install
        .args(["install", "claude-code", "--project"])
        .arg(&project)
        .env("TRAE_MEM_HOME", home.home())
        .env("HOME", home.work().parent().unwrap());
    run_command(install, &["trae-mem", "install", "claude-code"], None).ok();
    let settings = read_json(&project.join(".claude/settings.local.json"));
    let command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    assert_eq!(command, format!("{} hook --client claude-code --event UserPromptSubmit", native.display()));
    let hook = |prompt: &str| {
        let payload = serde_json::json!({"session_id": "registry", "cwd": project,
            "hook_event_name": "UserPromptSubmit", "prompt": prompt});
        let mut sh = Command::new("sh");
        sh.args(["-c", &command]).current_dir(&project).env("TRAE_MEM_HOME", home.home());
        run_command(sh, &["sh", "-c", &command], Some(payload.to_string().as_bytes())).ok();
        let stored: i64 = home
            .db()
            .query_row("SELECT count(*) FROM observations WHERE content = ?1", [prompt], |r| r.get(0))
            .unwrap();
        assert_eq!(stored, 1, "{prompt}");
    };
    hook("stored by the hook npm install wrote");

    // A new version: `npm update -g` puts its binary where the hooks run it.
    let next = {
        let (release, patch) = VERSION.rsplit_once('.').unwrap();
        format!("{release}.{}", patch.parse::<u32>().unwrap() + 1)
    };
    for (platform, binary) in binaries.iter().rev() {
        registry.publish(platform, binary, &next);
    }
    let before = std::fs::metadata(&native).unwrap().ino();
    registry.npm(&["update", "-g", "trae-mem"]);
    assert_eq!(read_json(&nested.join("linux-x64-gnu/package.json"))["version"], next.as_str());
    assert_eq!(read_json(&installed.join("trae-mem/package.json"))["version"], next.as_str());
    assert_ne!(std::fs::metadata(&native).unwrap().ino(), before, "the binary was not replaced");
    hook("stored by the same hook after the update");

    // Uninstalling takes the binary with it.
    registry.npm(&["uninstall", "-g", "trae-mem"]);
    let left: Vec<_> = std::fs::read_dir(&installed).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "left after uninstall: {left:?}");
    let listed = registry.npm(&["ls", "-g", "--parseable"]);
    assert!(!listed.stdout.contains("trae-mem"), "{listed}");
    assert!(!registry.global().join("bin/trae-mem").exists());
}

/// Makes the launcher see Windows, and runs what it starts under Wine.
const AS_WINDOWS: &str = "const cp = require('node:child_process');
Object.defineProperty(process, 'platform', { value: 'win32' });
Object.defineProperty(process, 'arch', { value: 'x64' });
const spawn = cp.spawn;
cp.spawn = (file, args, options) => spawn(process.env.TRAE_MEM_TEST_WINE, [file, ...args], options);
";

/// npm, told the machine is Windows, installs the win32-x64 package, and
/// the launcher, made to see Windows, runs its `trae-mem.exe` (under Wine).
#[test]
fn on_windows_npm_installs_the_win32_package_and_the_launcher_runs_its_exe() {
    let test = "npm: the launcher on Windows";
    let given = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_file());
    let Some(shim) = given("TRAE_MEM_TEST_WINDOWS_SHIM").filter(|_| given("TRAE_MEM_TEST_WINDOWS_EXE").is_some())
    else {
        return skip(test, "the Windows build (TRAE_MEM_TEST_WINDOWS_EXE; scripts/test sets it)");
    };
    let Some(wine) = ["/usr/lib/wine/wine64", "/usr/bin/wine64"].iter().map(PathBuf::from).find(|p| p.is_file()) else {
        return skip(test, "Wine (Debian's wine64)");
    };
    let Some(registry) = registry(test, "npm-registry-win32") else { return };
    registry.npm(&["install", "-g", "--os=win32", "--cpu=x64", "trae-mem"]);
    let main = registry.global().join("lib/node_modules/trae-mem");
    let nested = main.join("node_modules/@trae-mem");
    let chosen: Vec<String> =
        std::fs::read_dir(&nested).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(chosen, ["win32-x64"]);
    let installed = nested.join("win32-x64/bin/trae-mem.exe");
    let head = std::fs::read(&installed).unwrap_or_else(|e| panic!("{}: {e}", installed.display()));
    assert!(head.starts_with(b"MZ"), "{} is not a Windows program", installed.display());
    // Wine 8 lacks a DLL Rust's std imports: the test's stand-in goes beside it.
    std::fs::copy(&shim, installed.with_file_name("bcryptprimitives.dll")).unwrap();

    let preload = registry.root.join("as-windows.js");
    std::fs::write(&preload, AS_WINDOWS).unwrap();
    let mut launcher = Command::new("node");
    launcher
        .arg("--require")
        .arg(&preload)
        .arg(main.join("bin/trae-mem.js"))
        .arg("--version")
        .env("TRAE_MEM_TEST_WINE", &wine)
        .env("WINEPREFIX", registry.root.join("wine"))
        .env("WINEDEBUG", "-all");
    let run = run_command(launcher, &["node", "trae-mem.js", "--version"], None).ok();
    assert_eq!(run.stdout, format!("trae-mem {VERSION}\n"), "{run}");
}
