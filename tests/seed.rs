//! The store's content for the command-line tests: a JSON-lines export
//! built record by record with `Seed`, imported into a fresh home, so that
//! every test drives the real binary over rows it chose.

use serde_json::{Value, json};

use crate::util::Home;

/// 2026-11-30T00:00:00Z in unix milliseconds.
pub const T0: i64 = 1_795_996_800_000;
pub const MINUTE: i64 = 60_000;
pub const HOUR: i64 = 60 * MINUTE;

pub const S1: &str = "11111111-1111-4111-8111-111111111111";
pub const S2: &str = "22222222-2222-4222-8222-222222222222";

/// An export file under construction: `ExportRecord`s, one a line.
pub struct Seed {
    pub records: Vec<Value>,
}

impl Seed {
    pub fn new() -> Self {
        Self { records: Vec::new() }
    }

    /// A session record with empty meta and no keys.
    pub fn session(mut self, id: &str, project: &str, started_at: i64, ended_at: Option<i64>) -> Self {
        self.records.push(json!({
            "type": "session",
            "session": {
                "id": id,
                "project": project,
                "started_at": started_at,
                "ended_at": ended_at,
                "meta": {},
                "observations": 0,
            },
            "keys": [],
        }));
        self
    }

    /// A public observation, kind "tool", tool "Bash", no tags; `set` and
    /// `private` change it.
    pub fn obs(mut self, id: i64, session: &str, ts: i64, content: &str) -> Self {
        self.records.push(json!({
            "type": "observation",
            "id": id,
            "session_id": session,
            "ts": ts,
            "kind": "tool",
            "tool": "Bash",
            "content": content,
            "private": false,
            "tags": [],
        }));
        self
    }

    pub fn summary(mut self, session: &str, level: &str, created_at: i64, content: &str) -> Self {
        self.records.push(json!({
            "type": "summary",
            "session_id": session,
            "level": level,
            "created_at": created_at,
            "content": content,
        }));
        self
    }

    /// Any record, as written.
    pub fn record(mut self, record: Value) -> Self {
        self.records.push(record);
        self
    }

    /// Sets a field of the last record (inside `session` for a session record).
    pub fn set(mut self, field: &str, value: Value) -> Self {
        let last = self.records.last_mut().expect("a record to change");
        let target = if last["type"] == "session" { &mut last["session"] } else { last };
        target[field] = value;
        self
    }

    /// Makes the last observation private.
    pub fn private(self) -> Self {
        self.set("private", json!(true))
    }

    pub fn jsonl(&self) -> String {
        self.records.iter().map(|r| format!("{r}\n")).collect()
    }

    /// Imports into `home` with `env`; returns the `import --json` report.
    pub fn import_env(&self, home: &Home, env: &[(&str, &str)]) -> Value {
        let file = home.write("seed.jsonl", self.jsonl().as_bytes());
        home.run_env(&["import", "--json", file.to_str().unwrap()], env, None).ok().json()
    }

    pub fn import(&self, home: &Home) -> Value {
        self.import_env(home, &[])
    }

    /// A fresh home holding this seed, its index created in `mode`.
    pub fn home(&self, mode: &str) -> Home {
        let home = Home::new();
        let report = self.import_env(&home, &[("TRAE_MEM_INDEX", mode)]);
        assert_eq!(report["duplicates"], 0, "{report}");
        home
    }
}
