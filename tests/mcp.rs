//! `trae-mem mcp` driven as MCP clients drive it: raw JSON-RPC lines on
//! stdin, answers read from stdout with a timeout (a hung server fails the
//! test instead of hanging the suite), and the official Python SDK.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::Home;

/// How long one answer may take. Generous: the suite runs on two cores
/// beside other tests that spawn many processes.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// A running `trae-mem mcp`.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: i64,
}

impl Server {
    fn start(home: &Home) -> Self {
        let mut child = home
            .command(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn trae-mem mcp");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut err_pipe, &mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { stdin: child.stdin.take(), child, lines, stderr, next_id: 1 }
    }

    /// A server that has done the handshake.
    pub fn ready(home: &Home) -> Self {
        let mut server = Self::start(home);
        let answer = server.initialize("2025-06-18");
        assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next message on stdout, as JSON.
    #[track_caller]
    fn recv(&self) -> Value {
        match self.lines.recv_timeout(ANSWER_TIMEOUT) {
            Ok(line) => {
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"))
            }
            Err(RecvTimeoutError::Timeout) => {
                panic!("no answer within {ANSWER_TIMEOUT:?}\n--- stderr\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the server closed stdout\n--- stderr\n{}", self.stderr())
            }
        }
    }

    /// Sends a request and returns the whole response.
    #[track_caller]
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.recv();
        assert_eq!(answer["id"], id, "answers come in order here: {answer}");
        answer
    }

    #[track_caller]
    fn initialize(&mut self, version: &str) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "1"}}),
        )
    }

    /// Calls a tool; returns the `result` (the test fails on a protocol error).
    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(answer["error"].is_null(), "protocol error: {answer}");
        answer["result"].clone()
    }

    /// Calls a tool that must succeed; returns its structured content,
    /// checking that the text block says the same.
    #[track_caller]
    pub fn call_ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], false, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert_eq!(serde_json::from_str::<Value>(text).unwrap(), result["structuredContent"]);
        result["structuredContent"].clone()
    }

    /// Calls a tool that must fail; returns its message.
    #[track_caller]
    fn call_err(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments);
        assert_eq!(result["isError"], true, "{result}");
        result["content"][0]["text"].as_str().unwrap().to_owned()
    }

    /// Closes stdin and waits for the process to exit.
    #[track_caller]
    fn close(mut self) -> (std::process::ExitStatus, Vec<String>, String) {
        drop(self.stdin.take());
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < ANSWER_TIMEOUT,
                "the server did not exit after stdin closed\n--- stderr\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest: Vec<String> = self.lines.iter().collect();
        (status, rest, self.stderr())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[track_caller]
fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("expected an error: {answer}"))
}

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The work directory as the server resolves it.
fn project(home: &Home) -> String {
    std::fs::canonicalize(home.work()).unwrap().to_string_lossy().into_owned()
}

#[test]
fn every_handshake_version_is_echoed_and_a_newer_one_gets_the_newest() {
    let home = Home::new();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut server = Server::start(&home);
        let result = server.initialize(version)["result"].clone();
        assert_eq!(result["protocolVersion"], version);
        assert_eq!(result["serverInfo"]["name"], "trae-mem");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert!(result["instructions"].as_str().unwrap().contains("trae_mem_inject"));
    }
    // A revision without the handshake, or one from the future: the newest served.
    for version in ["2026-07-28", "2099-01-01"] {
        let mut server = Server::start(&home);
        assert_eq!(server.initialize(version)["result"]["protocolVersion"], "2025-11-25");
    }
}

#[test]
fn unknown_methods_get_method_not_found_so_newer_clients_fall_back() {
    let home = Home::new();
    let mut server = Server::start(&home);
    // As the Python SDK v2 probes, and bare.
    let probe = server.request(
        "server/discover",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "2"},
            "io.modelcontextprotocol/clientCapabilities": {}
        }}),
    );
    assert_eq!(error_code(&probe), -32601, "{probe}");
    let bare = server.request("server/discover", json!({}));
    assert_eq!(error_code(&bare), -32601, "{bare}");
    assert!(bare["error"]["message"].as_str().unwrap().contains("server/discover"));
    let early = server.request("tools/list", json!({}));
    assert_eq!(error_code(&early), -32600, "the handshake comes first: {early}");
    // The fallback handshake then works on the same connection.
    assert_eq!(server.initialize("2025-11-25")["result"]["protocolVersion"], "2025-11-25");
    for method in ["foo/bar", "resources/list", "prompts/list", "logging/setLevel"] {
        let answer = server.request(method, json!({}));
        assert_eq!(error_code(&answer), -32601, "{method}: {answer}");
    }
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn blank_lines_are_skipped_and_invalid_json_is_a_parse_error() {
    let home = Home::new();
    let mut server = Server::ready(&home);
    server.send_raw(b"\n\n   \n\r\n\t\n");
    server.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n");
    let answer = server.recv();
    assert_eq!(error_code(&answer), -32700, "{answer}");
    assert_eq!(answer["id"], Value::Null, "JSON-RPC wants a null id here");
    server.send_raw(&[0xff, 0xfe, b'\n']);
    assert_eq!(error_code(&server.recv()), -32700);
    // JSON, but no JSON-RPC message.
    server.send_raw(b"[1, 2]\n");
    assert_eq!(error_code(&server.recv()), -32600);
    // Nothing answered the blank lines: the next answer is this ping's.
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
    let (status, rest, stderr) = server.close();
    assert!(status.success(), "{stderr}");
    assert_eq!(rest, Vec::<String>::new());
}

#[test]
fn wrong_parameters_are_invalid_params_and_bad_arguments_are_tool_errors() {
    let home = Home::new();
    let mut server = Server::ready(&home);
    // A tools/call request of the wrong shape is a protocol error...
    for params in [json!({"name": 5}), json!({}), json!({"arguments": {}})] {
        let answer = server.request("tools/call", params.clone());
        assert_eq!(error_code(&answer), -32602, "{params}: {answer}");
        assert!(
            answer["error"]["message"].as_str().unwrap().starts_with("invalid params for tools/call: "),
            "{answer}"
        );
    }
    // Params that are not an object or array break JSON-RPC itself.
    let answer = server.request("tools/call", json!("trae_mem_search"));
    assert_eq!(error_code(&answer), -32600, "{answer}");
    // ...while arguments that miss the tool's input schema are the tool's
    // error, which the model reads and corrects (SEP-1303, 2025-11-25).
    let message = server.call_err("trae_mem_get_observations", json!({}));
    assert_eq!(
        message,
        "invalid arguments for trae_mem_get_observations: missing field `ids`. A valid call's arguments look like {\"ids\": [42, 43]}"
    );
    let message = server.call_err("trae_mem_timeline", json!({"id": "seven"}));
    assert!(
        message.starts_with("invalid arguments for trae_mem_timeline: invalid type: string \"seven\", expected i64"),
        "{message}"
    );
    let message = server.call_err("trae_mem_search", json!({"query": "x", "limit": 0}));
    assert_eq!(message, "limit must be from 1 to 100, not 0");
    let message = server.call_err("trae_mem_hook_event", json!({"event": "Stop", "payload": []}));
    assert!(message.contains("expected a map"), "{message}");
    let message = server.call_err(
        "trae_mem_hook_event",
        json!({"event": "Stop", "payload": {"session_id": "s"}, "client": "nonesuch"}),
    );
    assert!(message.starts_with("unknown client \"nonesuch\""), "{message}");
}

#[test]
fn an_unknown_tool_is_invalid_params() {
    let home = Home::new();
    let mut server = Server::ready(&home);
    let answer = server.request("tools/call", json!({"name": "trae_mem_forget", "arguments": {}}));
    assert_eq!(error_code(&answer), -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("unknown tool \"trae_mem_forget\"; the tools are trae_mem_search, "), "{message}");
}

#[test]
fn forget_is_offered_only_when_allowed_and_only_by_id_or_session() {
    let home = Home::new();
    std::fs::write(home.home().join("trae-mem.toml"), "[mcp]\nallow_forget = true\n").unwrap();
    let mut server = Server::ready(&home);
    let tools = server.request("tools/list", json!({}));
    let forget = tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == "trae_mem_forget").cloned();
    let forget = forget.expect("trae_mem_forget is listed when allowed");
    assert_eq!(forget["annotations"]["destructiveHint"], true, "{forget}");

    let session = server.call_ok("trae_mem_start_session", json!({"external_id": "c1"}))["session_id"].clone();
    let mut ids = Vec::new();
    for note in ["the staging password is FORGETME-7731", "keep the retry budget at three", "a third note"] {
        ids.push(server.call_ok("trae_mem_log", json!({"session_id": session, "content": note}))["id"].clone());
    }
    let message = server.call_err("trae_mem_forget", json!({"query": "password"}));
    assert!(message.contains("invalid arguments"), "never by query: {message}");
    let message = server.call_err("trae_mem_forget", json!({}));
    assert!(message.contains("either ids"), "{message}");

    let out = server.call_ok("trae_mem_forget", json!({"ids": [ids[0]]}));
    assert_eq!(out["observations"], 1, "{out}");
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content LIKE '%FORGETME%'"), 0);
    assert_eq!(count(&home, "SELECT count(*) FROM observations"), 2);

    let out = server.call_ok("trae_mem_forget", json!({"session_id": session}));
    assert_eq!(out["sessions_removed"], 1, "{out}");
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 0);
}

#[test]
fn a_message_of_several_megabytes_is_read_whole() {
    let home = Home::new();
    let mut server = Server::ready(&home);
    let big = "0123456789abcdef".repeat(8 * 1024 * 1024 / 16);
    let out = server.call_ok(
        "trae_mem_hook_event",
        json!({"event": "PostToolUse", "payload": {
            "session_id": "big", "cwd": project(&home), "tool_name": "Bash",
            "tool_input": {"command": "cat huge.log"},
            "tool_response": {"stdout": big, "stderr": ""}
        }}),
    );
    assert_eq!(out["event"], "PostToolUse");
    assert_eq!(out["warning"], Value::Null);
    // Stored as the hook stores it: clipped to [capture] tool_response_chars.
    let content: String = home.db().query_row("SELECT content FROM observations", [], |r| r.get(0)).unwrap();
    assert!(content.starts_with("cat huge.log\n→ 0123456789abcdef"));
    assert_eq!(content.chars().count(), "cat huge.log\n→ ".chars().count() + 4000);

    let session = server.call_ok("trae_mem_start_session", json!({}))["session_id"].clone();
    let note = "log line ".repeat(600_000);
    let logged = server.call_ok("trae_mem_log", json!({"session_id": session, "content": note}));
    let full = server.call_ok("trae_mem_get_observations", json!({"ids": [logged["id"]]}));
    let stored = full["observations"][0]["content"].as_str().unwrap();
    assert_eq!(stored.chars().count(), 8000, "[capture] response_chars");
    assert!(stored.starts_with("log line log line"));
    assert_eq!(server.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn closing_stdin_ends_the_server_cleanly() {
    let home = Home::new();
    // Before the handshake.
    let (status, rest, stderr) = Server::start(&home).close();
    assert!(status.success(), "{stderr}");
    assert!(rest.is_empty() && stderr.is_empty(), "{rest:?} {stderr}");

    // With a call still running: its answer is written before the exit.
    let mut server = Server::ready(&home);
    server.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": {"name": "trae_mem_start_session", "arguments": {"external_id": "last-words"}}}));
    let (status, rest, stderr) = server.close();
    assert!(status.success(), "{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(rest.len(), 1, "{rest:?}");
    let answer: Value = serde_json::from_str(&rest[0]).unwrap();
    assert_eq!(answer["id"], 99);
    assert_eq!(answer["result"]["structuredContent"]["external_id"], "last-words");
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1);
}

#[test]
fn the_server_and_eight_hook_processes_share_one_home() {
    let home = Arc::new(Home::new());
    let project = project(&home);
    let mut server = Server::ready(&home);
    let session = server.call_ok("trae_mem_start_session", json!({"project": project, "external_id": "beside-hooks"}))
        ["session_id"]
        .as_str()
        .unwrap()
        .to_owned();

    const HOOKS: usize = 8;
    const PER_HOOK: usize = 10;
    const NOTES: usize = 40;
    let hooks: Vec<_> = (0..HOOKS)
        .map(|t| {
            let home = Arc::clone(&home);
            let project = project.clone();
            std::thread::spawn(move || {
                for i in 0..PER_HOOK {
                    let payload = json!({"session_id": format!("hook-{t}"), "cwd": project,
                        "hook_event_name": "UserPromptSubmit", "prompt": format!("hook-write {t}-{i}")});
                    let run = home.run(&["hook"], Some(&serde_json::to_vec(&payload).unwrap()));
                    assert_eq!(run.code, 0, "{run}");
                }
            })
        })
        .collect();
    // The server writes (and reads) while the hooks write.
    for k in 0..NOTES {
        let logged = server.call_ok(
            "trae_mem_log",
            json!({"session_id": session, "kind": "decision", "content": format!("mcp-write {k}")}),
        );
        assert_eq!(logged["private"], false);
        server.call_ok("trae_mem_search", json!({"query": "\"hook-write\""}));
    }
    hooks.into_iter().for_each(|h| h.join().unwrap());
    // Anything a hook spooled under contention is stored by the next call.
    home.run(&["spool", "replay"], None).ok();

    // The server sees every hook write...
    let hits = server.call_ok("trae_mem_search", json!({"query": "\"hook-write\"", "project": project, "limit": 100}));
    let mut seen: Vec<String> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["snippet"].as_str().unwrap().replace(['«', '»'], ""))
        .collect();
    seen.sort();
    let mut expected: Vec<String> =
        (0..HOOKS).flat_map(|t| (0..PER_HOOK).map(move |i| format!("hook-write {t}-{i}"))).collect();
    expected.sort();
    assert_eq!(seen, expected);

    // ...and the hooks see the server's: its session's summary is the
    // context a new session starts with.
    let ended = server.call_ok("trae_mem_end_session", json!({"session_id": session}));
    let brief = ended["brief"].as_str().unwrap();
    assert!(brief.starts_with("Concluded: mcp-write"), "{brief}");
    // Nine sessions to tell: the server's, which stated decisions, and
    // eight hook sessions that never ended and only asked a few words
    // each, folded into one line.
    std::fs::write(home.home().join("trae-mem.toml"), "[context]\nsessions = 9\nbudget_chars = 8000\n").unwrap();
    let start = json!({"session_id": "after", "cwd": project, "hook_event_name": "SessionStart", "source": "startup"});
    let run = home.run(&["hook"], Some(&serde_json::to_vec(&start).unwrap())).ok();
    let context = run.json()["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_owned();
    assert!(context.contains("mcp-write 39"), "{context}");
    assert!(context.contains(&format!("Also {HOOKS} sessions that only talked: “hook-write ")), "{context}");
    let cli = home.run(&["search", "\"mcp-write\"", "--limit", "100", "--json"], None).ok().json();
    let hits = cli["hits"].as_array().unwrap();
    assert_eq!(hits.iter().filter(|h| h["kind"] != "summary").count(), NOTES, "{cli}");
    // The server's session summary is a hit of its own (one for its two levels).
    assert_eq!(hits.iter().filter(|h| h["kind"] == "summary" && h["id"].is_null()).count(), 1, "{cli}");

    assert_eq!(
        count(&home, "SELECT count(*) FROM observations WHERE content LIKE 'hook-write %'"),
        (HOOKS * PER_HOOK) as i64
    );
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content LIKE 'mcp-write %'"), NOTES as i64);
    let (status, _, stderr) = server.close();
    assert!(status.success(), "{stderr}");
}

/// One step's output of `tests/mcp_client.py`.
struct Steps(Vec<Value>);

impl Steps {
    #[track_caller]
    fn get(&self, step: &str) -> &Value {
        self.0.iter().find(|s| s["step"] == step).unwrap_or_else(|| panic!("the client printed no step {step:?}"))
    }

    /// A step's structured content, which must not be an error.
    #[track_caller]
    fn ok(&self, step: &str) -> &Value {
        let s = self.get(step);
        assert_eq!(s["is_error"], false, "{s}");
        &s["structured"]
    }

    /// A step's error text.
    #[track_caller]
    fn err(&self, step: &str) -> &str {
        let s = self.get(step);
        assert_eq!(s["is_error"], true, "{s}");
        s["text"].as_str().unwrap()
    }
}

#[test]
fn the_official_python_sdk_drives_every_tool() {
    let python = std::env::var("TRAE_MEM_TEST_PYTHON").unwrap_or_else(|_| {
        panic!(
            "TRAE_MEM_TEST_PYTHON is not set: run scripts/test, which installs the official \
             MCP Python SDK into .venv and points this variable at its python"
        )
    });
    let home = Home::new();
    let project = project(&home);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let mut command = std::process::Command::new(&python);
    command.arg(&script).arg(crate::util::bin()).arg(&project).env("TRAE_MEM_HOME", home.home());
    let run = crate::util::run_command(command, &["(python)", "tests/mcp_client.py"], None);
    assert_eq!(run.code, 0, "{run}");
    let steps = Steps(run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect());
    assert_eq!(steps.0.last().unwrap()["step"], "done", "{run}");

    // The SDK's default mode probed server/discover, got -32601, and fell back.
    let connected = steps.get("connected");
    assert_eq!(connected["protocol_version"], "2025-11-25");
    assert_eq!(connected["server"], "trae-mem");
    let tools = steps.get("tools")["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "trae_mem_search",
            "trae_mem_timeline",
            "trae_mem_get_observations",
            "trae_mem_inject",
            "trae_mem_start_session",
            "trae_mem_log",
            "trae_mem_end_session",
            "trae_mem_hook_event"
        ]
    );
    for tool in tools {
        assert_eq!(tool["has_output_schema"], true, "{tool}");
        assert!(tool["description"].as_str().unwrap().len() > 200, "{tool}");
    }

    // Hook events through the hook pipeline.
    for step in ["hook_start", "hook_prompt", "hook_tool", "hook_stop", "hook_end"] {
        let out = steps.ok(step);
        assert_eq!(out["warning"], Value::Null, "{step}: {out}");
        assert_eq!(out["client"], "claude-code");
    }
    assert_eq!(steps.ok("hook_start")["stdout"], Value::Null, "no memory yet");
    let bad = steps.err("hook_bad_payload");
    assert!(
        bad.starts_with("the payload's fields have unexpected types: invalid type: integer `5`, expected a string; the payload is kept in "),
        "{bad}"
    );

    // Sessions.
    let started = steps.ok("start");
    assert_eq!(started["created"], true);
    assert_eq!(started["client"], "trae");
    assert_eq!(started["project"], project);
    let again = steps.ok("start_again");
    assert_eq!(again["created"], false);
    assert_eq!(again["session_id"], started["session_id"]);
    assert_eq!(steps.ok("log_decision")["id"], 6);
    assert_eq!(steps.ok("log_private")["private"], true);
    assert_eq!(steps.ok("log_private_tags")["private"], true);
    assert_eq!(steps.ok("log_partly_private")["private"], false);
    assert_eq!(
        steps.err("log_unknown_session"),
        "no session has id \"no-such-session\"; call trae_mem_start_session and pass the session_id it returns"
    );
    let ended = steps.ok("end");
    assert_eq!(ended["brief"], "Concluded: Cache the stock query for 30 seconds");
    assert_eq!(ended["session_id"], started["session_id"]);

    // Search: a compact index, public rows only.
    let hits = steps.ok("search")["hits"].as_array().unwrap();
    // The tool row and the session's summary (one hit for its two) hold
    // both words and state something: they come first. The prompt holds
    // both too, but asks: it follows them. The row with one word comes last.
    let held = |h: &Value| h["matched"].as_array().unwrap().len();
    let both = hits.iter().take_while(|h| held(h) == 2).count();
    assert!(hits[both..].iter().all(|h| held(h) < 2), "{hits:?}");
    let ids: Vec<i64> = hits[..both].iter().filter_map(|h| h["id"].as_i64()).collect();
    assert_eq!(ids, [2, 1], "{hits:?}");
    assert_eq!(hits[..both].iter().filter(|h| h["kind"] == "summary").count(), 1, "{hits:?}");
    assert_eq!(hits[both - 1]["snippet"], "Why does the nightly import say «database» is «locked»?");
    let prompt = &hits[both - 1];
    let mut keys: Vec<&String> = prompt.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(keys, ["found_by", "id", "kind", "matched", "score", "session_id", "snippet", "time", "tool"]);
    assert_eq!(prompt["matched"], json!(["database", "locked"]));
    assert_eq!(hits.iter().find(|h| h["id"] == 2).unwrap()["tool"], "Bash");
    assert_eq!(steps.ok("search_private")["hits"], json!([]));
    assert_eq!(steps.ok("search_vault")["hits"], json!([]));
    assert_eq!(steps.err("search_bad_limit"), "limit must be from 1 to 100, not 1000");
    assert!(steps.err("search_bad_since").starts_with("since: cannot read \"the other day\" as a time"));

    // Timeline and full observations, private rows left out.
    let entry_ids = |step: &str| -> Vec<i64> {
        steps.ok(step)["observations"].as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect()
    };
    assert_eq!(entry_ids("timeline"), [1, 2, 3, 4, 5]);
    assert_eq!(entry_ids("timeline_session"), [6, 9], "7 and 8 are private");
    assert_eq!(steps.ok("timeline_session")["observations"][1]["excerpt"], "deploy to  tonight");
    assert_eq!(steps.err("timeline_missing"), "no observation has id 999999; take ids from trae_mem_search");
    let got = steps.ok("get");
    assert_eq!(entry_ids("get"), [1, 6]);
    assert_eq!(got["missing"], json!([7, 999999]));
    assert_eq!(got["observations"][0]["content"], "Why does the nightly import say database is locked?");
    assert_eq!(got["observations"][1]["tags"], json!(["cache"]));

    // The context block: the query's hits first, then the summaries.
    let context = steps.ok("inject")["context"].as_str().unwrap();
    assert!(
        context.starts_with(
            "# Memory from earlier sessions in this project (trae-mem)\n\n## Related to \"stock query\"\n- #6 "
        ),
        "{context}"
    );
    // Marks are for people; the agent reads the excerpt as plain text.
    assert!(context.contains("decision: Cache the stock query for 30 seconds"), "{context}");
    assert!(context.contains("Concluded: Cache the stock query for 30 seconds"));
    assert!(context.contains("Asked:\n- Why does the nightly import say database is locked?"), "{context}");
    let small = steps.ok("inject_small")["context"].as_str().unwrap();
    assert!(small.chars().count() <= 300, "{small}");
    assert_eq!(steps.ok("inject_elsewhere")["context"], Value::Null);
    // The same block a hook injects at session start.
    let next = steps.ok("hook_next_start")["stdout"].as_str().unwrap();
    let injected: Value = serde_json::from_str(next).unwrap();
    let injected = injected["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(injected.contains("Concluded:\n- Cache the stock query for 30 seconds"), "{injected}");

    // Mistakes a model makes.
    let unknown = &steps.get("unknown_tool")["protocol_error"];
    assert_eq!(unknown["code"], -32602);
    assert!(steps.err("bad_arguments").contains("expected a sequence"));
    assert!(steps.err("unknown_argument").contains("unknown field `qeury`, expected one of `query`"));

    // A second server process, the plain handshake, the same memory.
    let plain = steps.get("handshake_client");
    assert_eq!(plain["protocol_version"], "2025-11-25");
    assert_eq!(plain["structured"]["hits"][0]["id"], 4);

    // Private text stayed in the database and nowhere else (the searches
    // for it echo their own query).
    for step in &steps.0 {
        if ["search_private", "search_vault"].contains(&step["step"].as_str().unwrap()) {
            continue;
        }
        for secret in ["salary", "vault", "staging-42"] {
            assert!(!step.to_string().contains(secret), "{secret} left the server: {step}");
        }
    }
    assert_eq!(
        count(&home, "SELECT count(*) FROM observations WHERE private = 1 AND content = 'my salary is 9000'"),
        1
    );
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE private = 1 AND content = '[PRIVATE]'"), 1);
}

/// The hook's SessionEnd, `trae-mem summarize` and `trae_mem_end_session`
/// all summarize with the summarizer the config names.
#[test]
fn every_path_that_summarizes_uses_the_configured_summarizer_plugin() {
    let home = Home::new();
    let plugin = crate::plugins::wasm("sectioned_summarizer");
    let config = format!(
        "[summarize]\nsummarizer = \"sections\"\n[[plugins]]\nname = \"sections\"\npath = \"{}\"\nrole = \"summarizer\"\n",
        plugin.display()
    );
    home.write("work/trae-mem.toml", config.as_bytes());
    let brief = |session: &str| -> String {
        home.db()
            .query_row("SELECT content FROM summaries WHERE level = 'brief' AND session_id = ?1", [session], |r| {
                r.get(0)
            })
            .unwrap()
    };

    // The hook.
    for payload in [
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "Make the import survive a busy database"}),
        json!({"hook_event_name": "Stop", "last_assistant_message": "Switched to BEGIN IMMEDIATE."}),
        json!({"hook_event_name": "SessionEnd", "reason": "exit"}),
    ] {
        let mut payload = payload;
        payload["session_id"] = json!("via-hook");
        payload["cwd"] = json!(home.work());
        home.run(&["hook"], Some(&serde_json::to_vec(&payload).unwrap())).ok();
    }
    let hooked: String = home.db().query_row("SELECT id FROM sessions", [], |r| r.get(0)).unwrap();
    let by_plugin = "Goal: Make the import survive a busy database\nDone: Switched to BEGIN IMMEDIATE.\n\
                     Open problems: none\nNext steps: none";
    assert_eq!(brief(&hooked), by_plugin);

    // `trae-mem summarize`, after the summaries are gone.
    home.db().execute("DELETE FROM summaries", []).unwrap();
    let run = home.run(&["summarize", &hooked], None).ok();
    assert!(run.stdout.starts_with("summarized by sections\n"), "{run}");
    assert_eq!(brief(&hooked), by_plugin);

    // The MCP tools.
    let mut server = Server::ready(&home);
    let session = server.call_ok("trae_mem_start_session", json!({"external_id": "via-mcp"}))["session_id"].clone();
    server.call_ok(
        "trae_mem_log",
        json!({"session_id": session, "kind": "user", "content": "Make the import survive a busy database"}),
    );
    server.call_ok(
        "trae_mem_log",
        json!({"session_id": session, "kind": "response", "content": "Switched to BEGIN IMMEDIATE."}),
    );
    let ended = server.call_ok("trae_mem_end_session", json!({"session_id": session}));
    assert_eq!(ended["summarizer"], "sections", "{ended}");
    assert_eq!(ended["brief"], by_plugin);
    assert_eq!(brief(session.as_str().unwrap()), by_plugin);
}
