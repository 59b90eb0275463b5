//! The test harness: each test gets a fresh home in a temp dir and runs the
//! real `trae-mem` binary there, as a client would: arguments, stdin, exit
//! code, stdout and stderr. Failures show all of them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where skipped tests are listed, for `scripts/test` to print at the end
/// of the run (cargo test hides what a passing test wrote).
pub const SKIPPED_LIST: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/skipped.txt");

/// Says loudly that `what` cannot run for want of a part: on stderr, and in
/// `SKIPPED_LIST`. Under `CI=true` a skip is a failure.
pub fn skip(what: &str, missing: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{what} cannot run: {missing}");
    let line = format!("SKIPPED {what}: {missing}\n");
    eprint!("{line}");
    // One write of the whole line, so that tests skipping at once don't interleave.
    let mut list = std::fs::OpenOptions::new().create(true).append(true).open(SKIPPED_LIST).expect("skipped list");
    list.write_all(line.as_bytes()).expect("skipped list");
}

/// A write transaction another process holds; `release` ends it.
pub struct Locked(rusqlite::Connection);

impl Locked {
    pub fn release(self) {
        self.0.execute_batch("ROLLBACK").expect("release db");
    }
}

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_trae-mem")
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts exit 0 and returns self.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "expected success\n{self}");
        self
    }

    /// Asserts the exit code and returns self.
    #[track_caller]
    pub fn code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "expected exit {code}\n{self}");
        self
    }

    /// Parses stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{self}"))
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "$ trae-mem {}\nexit: {}\n--- stdout\n{}\n--- stderr\n{}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        )
    }
}

/// The commands that read memory (see `Home::command`).
const READERS: [&str; 4] = ["search", "timeline", "mcp", "serve"];

/// A fresh trae-mem home, with a working directory beside it.
pub struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Self { dir }
    }

    /// The home directory (TRAE_MEM_HOME).
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A working directory outside the home, where commands run.
    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The database file.
    pub fn db_path(&self) -> PathBuf {
        self.home().join("trae-mem.db")
    }

    /// A command for the binary with this home, run in `work()`. A command
    /// that reads memory runs once the background work of earlier hooks
    /// is done (see `settle`).
    pub fn command(&self, args: &[&str]) -> Command {
        if args.first().is_some_and(|a| READERS.contains(a)) {
            self.settle();
        }
        self.unsettled_command(args)
    }

    /// Waits for the vectors earlier hooks started computing in the
    /// background, and computes any still missing: a foreground `trae-mem
    /// embed` waits for a running one. A user who searches a moment after
    /// a turn finds what this finds; without it, what a test finds would
    /// depend on how fast the background run was.
    pub fn settle(&self) {
        if self.db_path().exists() {
            let _ = self.unsettled_command(&["embed"]).output();
        }
    }

    /// Runs the binary at once, even if background work is still running.
    pub fn run_unsettled(&self, args: &[&str], stdin: Option<&[u8]>) -> Run {
        run_command(self.unsettled_command(args), args, stdin)
    }

    fn unsettled_command(&self, args: &[&str]) -> Command {
        self.command_via(Command::new(bin()), args)
    }

    /// `program` (a trae-mem, or what runs one: qemu, Wine) with `args`,
    /// set up as every command of this home is.
    pub fn command_via(&self, mut cmd: Command, args: &[&str]) -> Command {
        cmd.args(args)
            .current_dir(self.work())
            .env("TRAE_MEM_HOME", self.home())
            .env("HOME", self.dir.path())
            // Git's user config too, so that nothing a test runs (install
            // adds to git's excludes file) reaches the real user's.
            .env("XDG_CONFIG_HOME", self.dir.path().join(".config"))
            .env_remove("GIT_CONFIG_GLOBAL")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            // Claude Code's config home, which install and doctor read.
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TRAE_MEM_INDEX")
            .env_remove("TRAE_MEM_DEADLINE_MS")
            .env("NO_COLOR", "1");
        cmd
    }

    /// Runs the binary with `args` and optional stdin.
    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Run {
        run_command(self.command(args), args, stdin)
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>) -> Run {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run_command(cmd, args, stdin)
    }

    /// Opens the database directly, to check stored rows.
    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.db_path()).expect("open db")
    }

    /// The database held by another writer, as an import holds it, until
    /// the returned lock is let go.
    pub fn lock_db(&self) -> Locked {
        let locker = self.db();
        locker.execute_batch("BEGIN IMMEDIATE; INSERT INTO store_meta VALUES ('lock', 'held');").expect("lock db");
        Locked(locker)
    }

    /// Writes a file under the temp dir and returns its path.
    pub fn write(&self, name: &str, contents: &[u8]) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// Runs a prepared command, feeding `stdin`, and collects what it did.
pub fn run_command(mut cmd: Command, args: &[&str], stdin: Option<&[u8]>) -> Run {
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn trae-mem");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let input = input.to_vec();
        // A writer thread, so a child that stops reading cannot deadlock us.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let out = child.wait_with_output().expect("wait for trae-mem");
    Run {
        args: args.iter().map(|a| a.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The recorded Claude Code payloads, kept in the repository so that a bare
/// clone tests itself.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code")
}

/// A Claude Code payload for `event` in session `sid` (working in
/// /home/dev/src/app), with extra fields.
pub fn claude_code_payload(sid: &str, event: &str, extra: serde_json::Value) -> Vec<u8> {
    let mut p = serde_json::json!({
        "session_id": sid,
        "transcript_path": format!("/home/dev/.claude/projects/x/{sid}.jsonl"),
        "cwd": "/home/dev/src/app",
        "hook_event_name": event,
    });
    p.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    serde_json::to_vec(&p).unwrap()
}

/// Runs `trae-mem hook` as Claude Code does for `event` in session `sid`.
pub fn claude_code_hook(home: &Home, sid: &str, event: &str, extra: serde_json::Value) -> Run {
    home.run(&["hook"], Some(&claude_code_payload(sid, event, extra)))
}

/// Every file under `dir` whose bytes hold `marker`, as written or in lower
/// case (the full-text index folds case).
pub fn copies(dir: &Path, marker: &str) -> Vec<PathBuf> {
    let mut found = copies_of(dir, marker.as_bytes());
    found.extend(copies_of(dir, marker.to_lowercase().as_bytes()));
    found.sort();
    found.dedup();
    found
}

/// Every file under `dir` whose bytes hold `bytes`.
pub fn copies_of(dir: &Path, bytes: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if memchr::memmem::find(&std::fs::read(&path).unwrap(), bytes).is_some() {
                found.push(path);
            }
        }
    }
    found
}

/// The trigrams of `marker` (in lower case, as the index folds it) that no
/// stored text holds any more, yet a full-text index still lists: what a
/// deletion left in the index. A byte scan cannot see these, since the index
/// keeps its terms prefix-compressed, and the rarest trigrams of a marker
/// are what would give it away.
pub fn trigrams_left_in_index(home: &Home, marker: &str) -> Vec<String> {
    let options = trae_mem::store::OpenOptions { may_rebuild_index: false, ..Default::default() };
    // Opened through the store, which registers the tokenizer the index names.
    let store = trae_mem::store::Store::open(&home.db_path(), &options).unwrap();
    let conn = store.conn();
    let chars: Vec<char> = marker.to_lowercase().chars().collect();
    let trigrams: std::collections::BTreeSet<String> = chars.windows(3).map(|w| w.iter().collect()).collect();
    let mut left = Vec::new();
    for index in ["observations_fts", "summaries_fts"] {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.{index}_terms USING fts5vocab(main, {index}, row)"
        ))
        .unwrap();
        for trigram in &trigrams {
            let in_text: bool = conn
                .query_row(
                    "SELECT EXISTS(SELECT 1 FROM observations WHERE private = 0 AND instr(lower(content), ?1) > 0)
                         OR EXISTS(SELECT 1 FROM summaries WHERE instr(lower(content), ?1) > 0)",
                    [trigram],
                    |r| r.get(0),
                )
                .unwrap();
            let listed: bool = conn
                .query_row(
                    &format!("SELECT EXISTS(SELECT 1 FROM temp.{index}_terms WHERE term = ?1)"),
                    [trigram],
                    |r| r.get(0),
                )
                .unwrap();
            if listed && !in_text {
                left.push(format!("{index}: {trigram:?}"));
            }
        }
    }
    left
}
