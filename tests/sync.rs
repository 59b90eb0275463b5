//! Team memory against a real PostgreSQL server: several homes ("machines")
//! record sessions through hooks as Claude Code runs them, and `trae-mem
//! sync` shares them. Each test starts its own server (`tests/postgres.rs`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::llm_summarizer as llm;
use crate::mock_model::{self, MockModel, Reply};
use crate::pg::{Postgres, holds};
use crate::util::{Home, Run, claude_code_payload, copies, run_command, trigrams_left_in_index};

/// One machine: a home, and a clone of the team's repository whose
/// `origin` is spelled `origin`.
struct Machine {
    home: Home,
    project: PathBuf,
    url: String,
}

impl Machine {
    /// A machine of `author` whose clone shares its memory, with `extra`
    /// lines in its `[sync]` table.
    fn new(server: &Postgres, author: &str, origin: &str, extra: &str) -> Self {
        let home = Home::new();
        home.write("home/trae-mem.toml", format!("[sync]\nauthor = \"{author}\"\n").as_bytes());
        let project = home.work().join("app");
        let machine = Self { home, project, url: server.url() };
        machine.clone_at(&machine.project, origin, &format!("[sync]\nshare = true\n{extra}"));
        machine
    }

    /// Makes a git checkout at `dir` with this `origin` and this project config.
    fn clone_at(&self, dir: &std::path::Path, origin: &str, config: &str) {
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(
            dir.join(".git/config"),
            format!("[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = {origin}\n"),
        )
        .unwrap();
        std::fs::write(dir.join("trae-mem.toml"), config).unwrap();
    }

    /// Runs a hook as Claude Code does: in the project's directory.
    fn hook_in(&self, dir: &std::path::Path, sid: &str, event: &str, mut extra: Value) -> Run {
        extra["cwd"] = json!(dir);
        let mut command = self.home.command(&["hook"]);
        command.current_dir(dir);
        run_command(command, &["hook"], Some(&claude_code_payload(sid, event, extra))).ok()
    }

    /// A whole session in `dir`: a prompt holding `marker`, a tool call, an end.
    fn session_in(&self, dir: &std::path::Path, sid: &str, marker: &str) {
        self.hook_in(dir, sid, "SessionStart", json!({"source": "startup"}));
        self.hook_in(
            dir,
            sid,
            "UserPromptSubmit",
            json!({"prompt": format!("why does the invoice export drop {marker}")}),
        );
        self.hook_in(
            dir,
            sid,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": format!("toolu_{sid}"),
                   "tool_input": {"command": format!("grep -rn {marker} src")},
                   "tool_response": {"stdout": format!("src/invoice.rs:12: {marker}"), "stderr": ""}}),
        );
        self.hook_in(dir, sid, "SessionEnd", json!({"reason": "exit"}));
    }

    fn session(&self, sid: &str, marker: &str) {
        self.session_in(&self.project, sid, marker);
    }

    /// `trae-mem sync --project <clone>` with these extra arguments.
    fn sync(&self, args: &[&str]) -> Run {
        let project = self.project.display().to_string();
        let mut all = vec!["sync", "--project", &project];
        all.extend_from_slice(args);
        self.home.run_env(&all, &[("TRAE_MEM_SYNC_URL", &self.url)], None)
    }

    /// The public observations: (session, time, text).
    fn observations(&self) -> BTreeSet<(String, i64, String)> {
        let db = self.home.db();
        let mut stmt = db.prepare("SELECT session_id, ts, content FROM observations WHERE private = 0").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect()
    }

    /// What `search` answers, as (session, kind, snippet).
    fn search(&self, query: &str) -> Vec<(String, String, String)> {
        let found = self.home.run(&["search", query, "--json", "--limit", "50"], None).ok().json();
        let mut hits: Vec<_> = found["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| (h["session_id"].as_str().unwrap().to_owned(), h["kind"].to_string(), h["snippet"].to_string()))
            .collect();
        hits.sort();
        hits
    }

    fn author_of(&self, session: &str) -> Option<String> {
        self.home
            .db()
            .query_row("SELECT json_extract(meta_json, '$.author') FROM sessions WHERE id = ?1", [session], |r| {
                r.get(0)
            })
            .unwrap()
    }

    fn session_of(&self, marker: &str) -> String {
        self.home
            .db()
            .query_row(
                "SELECT session_id FROM observations WHERE content LIKE ?1 LIMIT 1",
                [format!("%{marker}%")],
                |r| r.get(0),
            )
            .unwrap()
    }
}

#[test]
fn a_models_summaries_and_learnings_travel_like_any_other_row() {
    let Some(server) = Postgres::start() else { return };
    let model = MockModel::start(Vec::new());
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let desktop = Machine::new(&server, "ana@desktop", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop, &desktop]);
    let url = format!("{}/v1/messages", model.url);
    let config = llm::model_config(llm::Api::Anthropic, &url, &url, "");
    laptop.home.write("home/trae-mem.toml", format!("[sync]\nauthor = \"ana@laptop\"\n\n{config}").as_bytes());
    laptop.session("l1", "quokkamodel");
    // The hooks ran without the key, so the background try was refused
    // before it left: the foreground run, with the key, is the one request.
    laptop.home.run_env(&["summarize", "--pending", "--now"], &[(llm::KEY_VAR, llm::KEY)], None).ok();
    assert_eq!(model.seen().len(), 1);
    laptop.sync(&[]).ok();
    desktop.sync(&[]).ok();
    let db = desktop.home.db();
    let learned: String =
        db.query_row("SELECT content FROM observations WHERE kind = 'learning'", [], |r| r.get(0)).unwrap();
    assert!(learned.starts_with(mock_model::LEARNING_TITLE), "{learned}");
    let brief: String = db.query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap();
    assert_eq!(brief, mock_model::BRIEF, "the model's summary, not a rebuilt one");
}

#[test]
fn a_learning_replaced_by_summarizing_again_leaves_the_server_and_every_teammate() {
    let Some(server) = Postgres::start() else { return };
    const NEW_TITLE: &str = "The loader reads TRAE_CONFIG before trae.toml";
    let model = MockModel::start(vec![Reply::Summary, Reply::Learned(NEW_TITLE)]);
    // Plaintext, so that what the server holds can be read there.
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "plaintext = true\n");
    let desktop = Machine::new(&server, "ana@desktop", "git@github.com:acme/billing.git", "plaintext = true\n");
    let url = format!("{}/v1/messages", model.url);
    let config = llm::model_config(llm::Api::Anthropic, &url, &url, "");
    laptop.home.write("home/trae-mem.toml", format!("[sync]\nauthor = \"ana@laptop\"\n\n{config}").as_bytes());
    laptop.session("l1", "quokkamodel");
    let by_model = |args: &[&str]| laptop.home.run_env(args, &[(llm::KEY_VAR, llm::KEY)], None).ok();
    by_model(&["summarize", "--pending", "--now"]);
    laptop.sync(&[]).ok();
    desktop.sync(&[]).ok();
    let learnings = |machine: &Machine| -> Vec<String> {
        let db = machine.home.db();
        let mut stmt = db.prepare("SELECT content FROM observations WHERE kind = 'learning'").unwrap();
        stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
    };
    assert!(learnings(&desktop).iter().any(|l| l.starts_with(mock_model::LEARNING_TITLE)));

    // Summarized again, the session taught something else.
    by_model(&["summarize", &laptop.session_of("quokkamodel")]);
    by_model(&["summarize", "--pending", "--now"]);
    assert_eq!(model.seen().len(), 2);
    laptop.sync(&[]).ok();
    desktop.sync(&[]).ok();
    for machine in [&laptop, &desktop] {
        let left = learnings(machine);
        assert!(left.len() == 1 && left[0].starts_with(NEW_TITLE), "{left:?}");
    }
    let rows = server.dump();
    assert!(rows.iter().any(|r| holds(r, NEW_TITLE)));
    assert!(!rows.iter().any(|r| holds(r, mock_model::LEARNING_TITLE)), "the replaced learning is off the server");
}

#[test]
fn a_rescan_that_takes_a_secret_out_takes_every_copy_off_the_server_and_teammates_get_the_redacted_rows() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "plaintext = true\n");
    let bob = Machine::new(&server, "bob@work", "git@github.com:acme/billing.git", "plaintext = true\n");
    // Stored and shared before any rule knew it for a secret.
    laptop.session("l1", "acme_482913");
    laptop.sync(&[]).ok();
    bob.sync(&[]).ok();
    assert!(server.dump().iter().any(|r| holds(r, "acme_482913")), "on the server before the rule");
    assert!(bob.observations().iter().any(|(_, _, c)| c.contains("acme_482913")));

    laptop.home.write(
        "home/trae-mem.toml",
        b"[sync]\nauthor = \"ana@laptop\"\n[privacy]\nsecret_patterns = ['acme_[0-9]{6}']\n",
    );
    let rescanned = laptop.home.run(&["gc", "--rescan", "--json"], None).ok().json();
    assert!(rescanned["rescan"]["observations_redacted"].as_u64().unwrap() >= 2, "{rescanned}");
    laptop.sync(&[]).ok();
    bob.sync(&[]).ok();

    let rows = server.dump();
    assert!(!rows.iter().any(|r| holds(r, "acme_482913")), "a copy of the secret is left on the server");
    assert!(rows.iter().any(|r| holds(r, "[REDACTED]")), "the redacted rows went up in their place");
    let held = bob.observations();
    assert!(!held.iter().any(|(_, _, c)| c.contains("482913")), "{held:#?}");
    assert!(held.iter().any(|(_, _, c)| c.contains("[REDACTED]")), "{held:#?}");
    let summaries: String =
        bob.home.db().query_row("SELECT group_concat(content) FROM summaries", [], |r| r.get(0)).unwrap();
    assert!(!summaries.contains("482913"), "{summaries}");
}

/// Gives every machine after the first the first one's new team key.
fn share_key(machines: &[&Machine]) {
    let made = machines[0].home.run(&["sync", "key", "new"], None).ok();
    let key = made.stdout.trim().to_owned();
    assert_eq!(key.len(), 64, "{}", made.stdout);
    for machine in &machines[1..] {
        machine.home.run(&["sync", "key", "import"], Some(key.as_bytes())).ok();
    }
}

fn pushed(run: &Run) -> u64 {
    run.json()[0]["pushed"].as_u64().unwrap()
}

#[test]
fn three_machines_of_two_users_converge_whatever_the_remote_is_called() {
    let Some(server) = Postgres::start() else { return };
    // One repository, three spellings of its remote.
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:Acme/Billing.git", "");
    let desktop = Machine::new(&server, "ana@desktop", "https://github.com/acme/billing", "");
    let bob = Machine::new(&server, "bob@work", "ssh://git@github.com/Acme/Billing/", "");
    share_key(&[&laptop, &desktop, &bob]);

    laptop.session("l1", "quokkalaptop");
    desktop.session("d1", "quokkadesktop");
    bob.session("b1", "quokkabob");
    let own: usize = [&laptop, &desktop, &bob].iter().map(|m| m.observations().len()).sum();

    let first = laptop.sync(&["--json"]).ok();
    assert!(pushed(&first) > 0, "{}", first.stdout);
    assert_eq!(first.json()[0]["portable_key"], "github.com/acme/billing");
    for machine in [&desktop, &bob, &laptop, &desktop] {
        machine.sync(&[]).ok();
    }

    let everything = laptop.observations();
    assert_eq!(everything.len(), own, "every machine's memory, once: {everything:#?}");
    assert_eq!(desktop.observations(), everything);
    assert_eq!(bob.observations(), everything);
    let answers = laptop.search("invoice export");
    assert!(answers.iter().any(|(_, _, s)| s.contains("quokkabob")), "{answers:#?}");
    assert_eq!(desktop.search("invoice export"), answers);
    assert_eq!(bob.search("invoice export"), answers);

    // Teammates' sessions carry who did them; one's own carry no label.
    let bobs = laptop.session_of("quokkabob");
    assert_eq!(laptop.author_of(&bobs).as_deref(), Some("bob@work"));
    assert_eq!(desktop.author_of(&laptop.session_of("quokkalaptop")).as_deref(), Some("ana@laptop"));
    assert_eq!(bob.author_of(&bob.session_of("quokkabob")), None);
    // Search narrows to a teammate, by user or by device.
    for (author, found) in [("bob", "quokkabob"), ("ana@desktop", "quokkadesktop")] {
        let hits = laptop.home.run(&["search", "invoice", "--author", author, "--json"], None).ok().json();
        let hits = hits["hits"].as_array().unwrap().clone();
        assert!(!hits.is_empty());
        assert!(hits.iter().all(|h| h["author"].as_str().unwrap().starts_with(author)), "{hits:#?}");
        assert!(hits.iter().any(|h| h["snippet"].as_str().unwrap().contains(found)), "{hits:#?}");
    }
    // A new session is told of teammates' work, and by whom.
    let start = laptop.hook_in(&laptop.project, "l2", "SessionStart", json!({"source": "startup"}));
    let told = start.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(told.contains("by bob@work") && told.contains("by ana@desktop"), "{told}");
    assert!(told.contains("quokkabob"), "{told}");
    // And so are a prompt's memories, and the session list.
    let prompt = laptop.hook_in(
        &laptop.project,
        "l2",
        "UserPromptSubmit",
        json!({"prompt": "why does the invoice export drop quokkabob"}),
    );
    let recalled = prompt.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned();
    assert!(recalled.contains("by bob@work") && recalled.contains("quokkabob"), "{}", prompt.stdout);
    let listed = laptop.home.run(&["sessions"], None).ok().stdout;
    assert!(listed.contains("BY") && listed.contains("bob@work") && listed.contains("you"), "{listed}");
    // Pulled summaries are searchable like one's own.
    let summaries: i64 = laptop.home.db().query_row("SELECT count(*) FROM summaries", [], |r| r.get(0)).unwrap();
    assert_eq!(summaries, 6, "a brief and a detailed summary of each of the three sessions");
}

#[test]
fn pushing_twice_adds_nothing_even_when_the_device_forgot_it_had_pushed() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop]);
    laptop.session("l1", "wombat");
    // More than a push batch, so that a whole batch's worth can already be
    // on the server when the device has forgotten it.
    long_history(&laptop, 2);
    assert!(pushed(&laptop.sync(&["--json"]).ok()) > 0);
    let held = server.records();

    let again = laptop.sync(&["--json"]).ok();
    assert_eq!(pushed(&again), 0, "{}", again.stdout);
    assert_eq!(server.records(), held);

    // A crash between the server's commit and the local note: everything
    // is offered again, and the server keeps one copy.
    laptop.home.db().execute_batch("DELETE FROM sync_records; UPDATE sync_projects SET observation_mark = 0").unwrap();
    let redone = laptop.sync(&["--json"]).ok();
    assert_eq!(pushed(&redone), 0, "{}", redone.stdout);
    assert_eq!(server.records(), held);
    let status = laptop.sync(&["--status", "--json"]).ok().json();
    assert_eq!(status[0]["to_push"], 0, "{status}");
    assert_eq!(status[0]["to_pull"], 0, "{status}");

    // Forgotten again, with new rows past all that: pulling its own records
    // back tells the device they are on the server, and the push reads on
    // past them to the new ones.
    laptop
        .home
        .db()
        .execute_batch("DELETE FROM sync_records; UPDATE sync_projects SET observation_mark = 0, cursor = 0")
        .unwrap();
    laptop.session("l2", "numbat");
    let redone = laptop.sync(&["--json"]).ok();
    assert!(pushed(&redone) > 0, "{}", redone.stdout);
    assert_eq!(server.records(), held + pushed(&redone) as i64);
    let status = laptop.sync(&["--status", "--json"]).ok().json();
    assert_eq!(status[0]["to_push"], 0, "{status}");
}

#[test]
fn unshared_projects_and_private_rows_never_reach_the_server() {
    let Some(server) = Postgres::start() else { return };
    // Plaintext, so that what reached the server can be read there.
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "plaintext = true\n");
    laptop.session("l1", "sharedquokka");
    laptop.hook_in(
        &laptop.project,
        "l1",
        "UserPromptSubmit",
        json!({"prompt": "<private>the password is hunter2secretzebra</private>"}),
    );
    let elsewhere = laptop.home.work().join("side-project");
    laptop.clone_at(&elsewhere, "git@github.com:ana/side.git", "# not shared\n");
    laptop.session_in(&elsewhere, "s1", "unsharedplatypus");

    // Without --project: every project this home knows, and only the shared one goes.
    let run = laptop.home.run_env(&["sync", "--json"], &[("TRAE_MEM_SYNC_URL", &laptop.url)], None).ok();
    assert_eq!(run.json().as_array().unwrap().len(), 1, "{}", run.stdout);
    let rows = server.dump();
    assert!(rows.iter().any(|r| holds(r, "sharedquokka")), "the shared project's rows are there, readable");
    for secret in ["hunter2secretzebra", "unsharedplatypus", "side-project"] {
        assert!(!rows.iter().any(|r| holds(r, secret)), "{secret} reached the server");
    }
    let refused = laptop.home.run_env(
        &["sync", "--project", &elsewhere.display().to_string()],
        &[("TRAE_MEM_SYNC_URL", &laptop.url)],
        None,
    );
    let refused = refused.code(1);
    assert!(refused.stderr.contains("does not share its memory"), "{}", refused.stderr);
}

#[test]
fn sealed_records_hold_no_plaintext_and_a_wrong_key_changes_nothing() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let bob = Machine::new(&server, "bob@work", "https://github.com/acme/billing.git", "");
    share_key(&[&laptop]);
    laptop.session("l1", "sealedquokka");
    laptop.sync(&[]).ok();

    let rows = server.dump();
    assert!(rows.len() > 5, "{rows:?}");
    let session = laptop.session_of("sealedquokka");
    for plain in ["sealedquokka", "invoice", "ana@laptop", "billing", &session, "Bash", "brief"] {
        assert!(!rows.iter().any(|r| holds(r, plain)), "{plain:?} is readable on the server");
    }

    // Bob holds another key: a clear error, nothing stored, nothing pushed.
    bob.home.run(&["sync", "key", "new"], None).ok();
    bob.session("b1", "bobsquokka");
    let before = bob.observations();
    let held = server.records();
    let refused = bob.sync(&[]).code(1);
    assert!(refused.stderr.contains("team key does not open"), "{}", refused.stderr);
    assert_eq!(bob.observations(), before);
    assert_eq!(server.records(), held);
    // Without any key, sync says how to get one.
    std::fs::remove_file(bob.home.home().join("sync.key")).unwrap();
    let keyless = bob.sync(&[]).code(1);
    assert!(keyless.stderr.contains("sync key import"), "{}", keyless.stderr);
}

#[test]
fn forgetting_on_one_device_forgets_on_the_others() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let bob = Machine::new(&server, "bob@work", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop, &bob]);
    laptop.session("l1", "keptquokka");
    laptop.session("l2", "doomedquokka");
    laptop.sync(&[]).ok();
    bob.sync(&[]).ok();
    assert!(bob.observations().iter().any(|(_, _, c)| c.contains("doomedquokka")));

    laptop.home.run(&["forget", "--query", "doomedquokka", "--yes"], None).ok();
    let pushed_stones = laptop.sync(&["--json"]).ok();
    assert!(pushed(&pushed_stones) > 0, "the tombstones go up: {}", pushed_stones.stdout);
    let pulled = bob.sync(&["--json"]).ok().json();
    assert!(pulled[0]["forgotten"].as_u64().unwrap() > 0, "{pulled}");

    let left = bob.observations();
    assert!(!left.iter().any(|(_, _, c)| c.contains("doomedquokka")), "{left:#?}");
    assert!(left.iter().any(|(_, _, c)| c.contains("keptquokka")));
    assert!(bob.search("doomedquokka").is_empty());
    // Gone down to the bytes on the device it reached by sync, as a local forget is.
    assert_eq!(copies(&bob.home.home(), "doomedquokka"), Vec::<std::path::PathBuf>::new());
    assert_eq!(trigrams_left_in_index(&bob.home, "doomedquokka"), Vec::<String>::new());
    // And it does not come back to either of them.
    laptop.sync(&[]).ok();
    bob.sync(&[]).ok();
    assert!(!laptop.observations().iter().any(|(_, _, c)| c.contains("doomedquokka")));
    assert!(!bob.observations().iter().any(|(_, _, c)| c.contains("doomedquokka")));
}

/// Gives `machine` a long history (`sessions` of 500 observations) through
/// `import`, so that a sync takes long enough to be interrupted.
fn long_history(machine: &Machine, sessions: usize) -> usize {
    let project = std::fs::canonicalize(&machine.project).unwrap().display().to_string();
    let mut lines = String::new();
    let filler = "the ledger reconciles each invoice line against the payment batch ".repeat(6);
    for s in 0..sessions {
        let sid = format!("00000000-0000-4000-8000-{s:012}");
        let started = 1_700_000_000_000i64 + s as i64 * 10_000_000;
        let session = json!({"type": "session", "session": {"id": sid, "project": project, "started_at": started,
            "ended_at": null, "meta": {}, "observations": 0}});
        lines.push_str(&format!("{session}\n"));
        for o in 0..500 {
            let obs = json!({"type": "observation", "id": s * 500 + o + 1, "session_id": sid, "ts": started + o as i64,
                "kind": "tool", "tool": "Bash", "content": format!("step {o} of {sid}: {filler}"),
                "private": false, "tags": []});
            lines.push_str(&format!("{obs}\n"));
        }
    }
    let file = machine.home.write("history.jsonl", lines.as_bytes());
    machine.home.run(&["import", &file.display().to_string()], None).ok();
    sessions * 500
}

impl Machine {
    fn spawn_sync(&self) -> std::process::Child {
        let project = self.project.display().to_string();
        let mut command = self.home.command(&["sync", "--project", &project]);
        command
            .env("TRAE_MEM_SYNC_URL", &self.url)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        command.spawn().unwrap()
    }

    /// Rows in the store, and distinct ones: equal when nothing is doubled.
    fn rows_and_distinct(&self) -> (i64, i64) {
        self.home
            .db()
            .query_row(
                "SELECT count(*), (SELECT count(*) FROM (SELECT DISTINCT session_id, ts, content FROM observations))
                 FROM observations",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
    }
}

/// Waits (up to a minute) until `ready` holds, checking every few milliseconds.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(std::time::Instant::now() < until, "timed out waiting until {what}");
        std::thread::sleep(std::time::Duration::from_millis(3));
    }
}

#[test]
fn a_sync_killed_while_pushing_or_pulling_is_finished_by_the_next() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let bob = Machine::new(&server, "bob@work", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop, &bob]);
    let history = long_history(&laptop, 40);

    let mut push = laptop.spawn_sync();
    wait_until("the push has begun", || server.records() > 0);
    push.kill().unwrap();
    push.wait().unwrap();
    assert!((server.records() as usize) < history, "the kill came mid-push");
    laptop.sync(&[]).ok();
    let on_server = server.records();
    assert_eq!(on_server as usize, history + 40, "each observation and session once");

    let mut pull = bob.spawn_sync();
    // Until the sync has made the store, there is nothing to count.
    let stored =
        || bob.home.db().query_row("SELECT count(*) FROM observations", [], |r| r.get::<_, i64>(0)).unwrap_or(0);
    wait_until("the pull has begun", || bob.home.db_path().exists() && stored() > 0);
    pull.kill().unwrap();
    pull.wait().unwrap();
    assert!((bob.rows_and_distinct().0 as usize) < history, "the kill came mid-pull");
    bob.sync(&[]).ok();
    assert_eq!(bob.rows_and_distinct(), (history as i64, history as i64), "nothing lost, nothing doubled");
    assert_eq!(bob.observations(), laptop.observations());
    assert_eq!(server.records(), on_server, "the pull pushed nothing back");
}

#[test]
fn a_server_stopped_mid_sync_is_a_clear_error_and_the_next_sync_completes() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let bob = Machine::new(&server, "bob@work", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop, &bob]);
    let history = long_history(&laptop, 40);

    let push = laptop.spawn_sync();
    wait_until("the push has begun", || server.records() > 0);
    server.stop();
    let out = push.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("sync server"), "the error names the server: {stderr}");
    // With the server down, hooks carry on as ever.
    laptop.session("l1", "offlinequokka");
    let down = laptop.sync(&[]).code(1);
    assert!(down.stderr.contains("cannot reach the sync server"), "{}", down.stderr);

    server.start_again();
    laptop.sync(&[]).ok();
    bob.sync(&[]).ok();
    assert_eq!(bob.observations(), laptop.observations());
    assert_eq!(bob.rows_and_distinct().0 as usize, laptop.observations().len());
    assert!(laptop.observations().len() > history);
}

#[test]
fn a_session_end_starts_a_sync_that_the_hook_does_not_wait_for() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    // The server named once in the user's own config, as a teammate would.
    let config = format!("[sync]\nauthor = \"ana@laptop\"\nurl = \"{}\"\n", server.url());
    laptop.home.write("home/trae-mem.toml", config.as_bytes());
    share_key(&[&laptop]);
    let log = laptop.home.home().join("logs/sync.log");

    laptop.session("l1", "backgroundquokka");
    wait_until("the background sync has pushed the session", || {
        std::thread::sleep(std::time::Duration::from_millis(50));
        let status = laptop.home.run(&["sync", "--status", "--json"], None).ok().json();
        server.records() > 0 && status[0]["to_push"] == 0
    });
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("pushed"), "{written}");

    // With the server down, the session still ends as ever, and the
    // background sync's error goes to its log.
    server.stop();
    laptop.session("l2", "offlinequokka");
    wait_until("the background sync has failed", || {
        std::fs::read_to_string(&log).unwrap().contains("cannot reach the sync server")
    });
    assert!(laptop.observations().iter().any(|(_, _, c)| c.contains("offlinequokka")));
}

#[test]
fn a_server_over_the_network_is_reached_with_tls_and_its_certificate_checked() {
    let Some(server) = Postgres::start_tls() else { return };
    let mut laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    laptop.url = server.tls_url();
    share_key(&[&laptop]);
    laptop.session("l1", "tlsquokka");
    let ca = server.ca().display().to_string();

    // A certificate no authority of the system's vouches for: refused.
    let refused = laptop.sync(&[]).code(1);
    assert!(refused.stderr.contains("certificate"), "{}", refused.stderr);
    assert_eq!(server.records(), 0);

    let project = laptop.project.display().to_string();
    let env = [("TRAE_MEM_SYNC_URL", laptop.url.as_str()), ("SSL_CERT_FILE", ca.as_str())];
    let synced = laptop.home.run_env(&["sync", "--project", &project, "--json"], &env, None).ok();
    assert!(pushed(&synced) > 0, "{}", synced.stdout);
    assert!(server.records() > 0);
    // The server takes TCP connections with TLS only (hostssl), so the
    // sync above was encrypted; one without is turned away.
    let plain = laptop.url.replace("sslmode=require", "sslmode=disable");
    let env = [("TRAE_MEM_SYNC_URL", plain.as_str())];
    let refused = laptop.home.run_env(&["sync", "--project", &project], &env, None).code(1);
    assert!(refused.stderr.contains("pg_hba.conf"), "{}", refused.stderr);
}

#[test]
fn the_status_counts_only_what_others_pushed_as_to_pull() {
    let Some(server) = Postgres::start() else { return };
    let laptop = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    let bob = Machine::new(&server, "bob@work", "git@github.com:acme/billing.git", "");
    share_key(&[&laptop, &bob]);
    laptop.session("l1", "ownquokka");
    assert!(pushed(&laptop.sync(&["--json"]).ok()) > 0);
    // Right after its own push, nothing waits for the laptop.
    let status = laptop.sync(&["--status", "--json"]).ok().json();
    assert_eq!((&status[0]["to_push"], &status[0]["to_pull"]), (&json!(0), &json!(0)), "{status}");
    let text = laptop.sync(&["--status"]).ok();
    assert!(text.stdout.contains("to pull: 0 records"), "{text}");

    bob.session("b1", "bobsquokka");
    let bobs = pushed(&bob.sync(&["--json"]).ok());
    assert!(bobs > 0);
    let status = bob.sync(&["--status", "--json"]).ok().json();
    assert_eq!(status[0]["to_pull"], 0, "bob pulled the laptop's and pushed his own: {status}");
    // The laptop is told of bob's records, and of none of its own.
    let status = laptop.sync(&["--status", "--json"]).ok().json();
    assert_eq!(status[0]["to_pull"], bobs, "{status}");
    laptop.sync(&[]).ok();
    let status = laptop.sync(&["--status", "--json"]).ok().json();
    assert_eq!(status[0]["to_pull"], 0, "{status}");
}

#[test]
fn the_status_of_a_home_without_a_key_says_sync_needs_one_and_how_to_make_it() {
    let Some(server) = Postgres::start() else { return };
    let keyless = Machine::new(&server, "ana@laptop", "git@github.com:acme/billing.git", "");
    keyless.session("l1", "keylessquokka");
    let status = keyless.sync(&["--status"]).ok();
    assert!(!status.stdout.contains("plaintext"), "nothing goes up unsealed: {status}");
    assert!(
        status.stdout.contains("team key: none, and sync will not run without one")
            && status.stdout.contains("`trae-mem sync key new`")
            && status.stdout.contains("`trae-mem sync key import`"),
        "{status}"
    );
    assert!(status.stdout.contains("to pull: 0 records"), "the server is asked without a key: {status}");
    let json = keyless.sync(&["--status", "--json"]).ok().json();
    assert_eq!((&json[0]["key_id"], &json[0]["plaintext"]), (&Value::Null, &json!(false)), "{json}");
    // As the status says: sync refuses, and pushes nothing.
    let refused = keyless.sync(&[]).code(1);
    assert!(refused.stderr.contains("trae-mem sync key new"), "{}", refused.stderr);
    assert_eq!(server.records(), 0);
    // The command it names makes a key, and then sync runs.
    keyless.home.run(&["sync", "key", "new"], None).ok();
    assert!(pushed(&keyless.sync(&["--json"]).ok()) > 0);

    // A team that chose plaintext is told its records go up unsealed.
    let plain = Machine::new(&server, "bob@work", "git@github.com:acme/other.git", "plaintext = true\n");
    let status = plain.sync(&["--status"]).ok();
    assert!(status.stdout.contains("team key: none: records go up unsealed ([sync] plaintext = true)"), "{status}");
}

#[test]
fn key_import_refuses_keys_nobody_drew_at_random() {
    let home = crate::util::Home::new();
    for (key, says) in [
        ("00".repeat(32), "every byte is 00"),
        ("7".repeat(64), "every byte is 77"),
        ("0123456789abcdef".repeat(4), "it repeats 8 byte values"),
        ("ab12".repeat(8), "this has 32"),
        ("zz".repeat(32), "hex digits (0-9, a-f)"),
    ] {
        let refused = home.run(&["sync", "key", "import"], Some(key.as_bytes())).code(1);
        assert!(refused.stderr.contains(says), "{key}: {}", refused.stderr);
        assert_eq!(refused.stderr.lines().count(), 1, "{}", refused.stderr);
        if !says.contains("hex digits") && !says.contains("this has") {
            assert!(refused.stderr.contains("`trae-mem sync key new`"), "{}", refused.stderr);
        }
        assert!(!home.home().join("sync.key").exists(), "{key} was kept");
    }
    let drawn = "3f9a0c7eb14d52e86a07f3c9d2e1b85649c0a7f31e8d6b25c7f04a915b3e2d08";
    home.run(&["sync", "key", "import", drawn], None).ok();
    assert!(home.home().join("sync.key").exists());
}
