//! Summaries by a language model: the example `llm-summarizer` plugin,
//! granted the endpoints of a mock model server on loopback (`mock_model`),
//! driven through real hooks and `trae-mem summarize --pending`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mock_model::{self, MockModel, Reply};
use crate::plugins::wasm;
use crate::util::{Home, Run, claude_code_payload, copies};

/// The key the host adds to each request; the plugin never holds it.
pub const KEY: &str = "sk-mock-4f1c0ffee-key";
pub const KEY_VAR: &str = "TRAE_MEM_TEST_MODEL_KEY";

/// The APIs the plugin speaks, each with its endpoint's path, the header
/// its key goes in, and that header's prefix.
#[derive(Clone, Copy)]
pub enum Api {
    Anthropic,
    OpenAi,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Api::Anthropic => "/v1/messages",
            Api::OpenAi => "/v1/chat/completions",
        }
    }
}

/// A home whose own `trae-mem.toml` makes `llm` the summarizer (see
/// `model_config`).
fn model_home(api: Api, grant_url: &str, call_url: &str, extra: &str) -> Home {
    let home = Home::new();
    home.write("home/trae-mem.toml", model_config(api, grant_url, call_url, extra).as_bytes());
    home
}

/// Settings that make `llm` the summarizer, granted `grant_url` (with its
/// key) and told to call `call_url`; `extra` is more TOML for `[summarize]`.
pub fn model_config(api: Api, grant_url: &str, call_url: &str, extra: &str) -> String {
    let (name, header, prefix) = match api {
        Api::Anthropic => ("anthropic", "x-api-key", ""),
        Api::OpenAi => ("openai", "authorization", "Bearer "),
    };
    format!(
        "[summarize]\nsummarizer = \"llm\"\n{extra}\n\n[[plugins]]\nname = \"llm\"\npath = \"{}\"\nrole = \"summarizer\"\n\
         [plugins.grants]\nhttp = [{{ url = \"{grant_url}\", header = \"{header}\", env = \"{KEY_VAR}\", prefix = \"{prefix}\" }}]\n\
         [plugins.config]\napi = \"{name}\"\nurl = \"{call_url}\"\nmodel = \"mock-model\"\n",
        wasm("llm_summarizer").display()
    )
}

/// Runs a hook as Claude Code does, with the key in the environment.
pub fn hook(home: &Home, sid: &str, event: &str, extra: Value) -> Run {
    home.run_env(&["hook"], &[(KEY_VAR, KEY)], Some(&claude_code_payload(sid, event, extra))).ok()
}

/// A session that fixes a crash, with private text, a secret and a call of
/// trae-mem's own search tool (whose results must never be sent back).
pub fn session(home: &Home, sid: &str) {
    hook(home, sid, "SessionStart", json!({"source": "startup"}));
    let prompt = "The app crashes when trae.toml is missing <private>PRIVATE-MARKER-91</private>; \
                  my token is ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    hook(home, sid, "UserPromptSubmit", json!({"prompt": prompt}));
    hook(
        home,
        sid,
        "PostToolUse",
        json!({"tool_name": "mcp__trae-mem__trae_mem_search", "tool_use_id": format!("{sid}-m"),
               "tool_input": {"query": "config crash"},
               "tool_response": "INJECTED-MEMORY-MARKER: an earlier session fixed the parser"}),
    );
    hook(
        home,
        sid,
        "PostToolUse",
        json!({"tool_name": "Read", "tool_use_id": format!("{sid}-r"), "tool_input": {"file_path": "src/config.rs"},
               "tool_response": "fn load_config() -> Config { std::fs::read_to_string(\"trae.toml\").unwrap() }"}),
    );
    hook(home, sid, "Stop", json!({"last_assistant_message": "Fixed: load_config now returns the defaults."}));
}

pub fn end(home: &Home, sid: &str) -> Duration {
    let started = Instant::now();
    hook(home, sid, "SessionEnd", json!({"reason": "exit"}));
    started.elapsed()
}

/// Runs the queue in the foreground (after any background run) and returns its JSON.
pub fn pending(home: &Home, now: bool) -> Value {
    let args: &[&str] =
        if now { &["summarize", "--pending", "--now", "--json"] } else { &["summarize", "--pending", "--json"] };
    home.run_env(args, &[(KEY_VAR, KEY)], None).ok().json()
}

pub fn brief(home: &Home) -> String {
    home.db().query_row("SELECT content FROM summaries WHERE level = 'brief'", [], |r| r.get(0)).unwrap()
}

fn queue_row(home: &Home) -> (String, i64, i64, Option<String>) {
    home.db()
        .query_row("SELECT state, tries, next_try_at, last_error FROM summary_queue", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

#[test]
fn a_session_end_never_waits_for_the_model_whose_summary_and_learnings_come_later() {
    // The model takes 2 s to answer; the hook must not.
    let model = MockModel::start(vec![Reply::Slow(Duration::from_secs(2))]);
    let url = format!("{}{}", model.url, Api::Anthropic.path());
    let home = model_home(Api::Anthropic, &url, &url, "");
    session(&home, "s1");
    let took = end(&home, "s1");
    assert!(took < Duration::from_millis(1500), "the SessionEnd hook waited {took:?} for the model");
    assert!(brief(&home).contains("trae.toml"), "the built-in summary stands meanwhile: {}", brief(&home));

    // The background worker asked the model; a foreground run waits for it.
    let ran = pending(&home, false);
    assert_eq!(ran["queue"]["pending"], 0, "{ran}");
    assert_eq!(brief(&home), mock_model::BRIEF);
    let seen = model.seen();
    assert_eq!(seen.len(), 1, "one request for one session: {seen:?}");
    let request = &seen[0];
    assert_eq!(request.header("x-api-key"), Some(KEY), "the host added the key");
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    for leaked in ["PRIVATE-MARKER-91", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "INJECTED-MEMORY-MARKER"] {
        assert!(!request.body.contains(leaked), "the request holds {leaked}: {}", request.body);
    }
    assert!(request.body.contains("load_config"), "the session's own rows are sent: {}", request.body);
    let (state, tries, _, _) = queue_row(&home);
    assert_eq!((state.as_str(), tries), ("done", 0));

    // The learning is memory like any other: searchable, and told.
    let found = home.run(&["search", "missing config file defaults", "--kind", "learning", "--json"], None).ok().json();
    let hits = found["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["snippet"].as_str().unwrap().contains("config")), "{found}");
    let told = hook(&home, "s2", "SessionStart", json!({"source": "startup"}));
    let by_model = [mock_model::BRIEF, mock_model::DETAILED];
    assert!(by_model.iter().any(|s| told.stdout.contains(s)), "the next session is told the model's summary: {told}");
    assert!(!told.stdout.contains("ended without a SessionEnd"), "its learnings are no new activity: {told}");

    // The key is in no file of the home: not the store, not a log.
    assert_eq!(copies(&home.home(), KEY), Vec::<std::path::PathBuf>::new());

    // Forgetting the session takes its learnings too.
    home.run(&["forget", "--session", &session_id(&home, "s1"), "--yes"], None).ok();
    let learnings: i64 =
        home.db().query_row("SELECT count(*) FROM observations WHERE kind = 'learning'", [], |r| r.get(0)).unwrap();
    assert_eq!(learnings, 0);
    assert!(copies(&home.home(), mock_model::LEARNING_TITLE).is_empty(), "no byte of the learning is left");
}

fn session_id(home: &Home, external: &str) -> String {
    home.db()
        .query_row(
            "SELECT id FROM sessions WHERE meta_json LIKE ?1",
            [format!("%\"external_id\":\"{external}\"%")],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn forgetting_a_row_takes_the_sessions_learnings_and_asks_no_model_again() {
    let model = MockModel::start(Vec::new());
    let url = format!("{}{}", model.url, Api::Anthropic.path());
    let home = model_home(Api::Anthropic, &url, &url, "");
    session(&home, "s1");
    end(&home, "s1");
    pending(&home, false);
    assert_eq!(brief(&home), mock_model::BRIEF);
    let prompt: i64 = home.db().query_row("SELECT id FROM observations WHERE kind = 'user'", [], |r| r.get(0)).unwrap();
    home.run_env(&["forget", &prompt.to_string(), "--yes"], &[(KEY_VAR, KEY)], None).ok();
    let learnings: i64 =
        home.db().query_row("SELECT count(*) FROM observations WHERE kind = 'learning'", [], |r| r.get(0)).unwrap();
    assert_eq!(learnings, 0, "a learning may quote what was forgotten");
    assert_ne!(brief(&home), mock_model::BRIEF, "the summaries are written again, by the built-in summarizer");
    pending(&home, true);
    assert_eq!(model.seen().len(), 1, "a deletion spends no tokens");
    assert!(copies(&home.home(), mock_model::LEARNING_TITLE).is_empty(), "no byte of the learning is left");
}

#[test]
fn an_openai_compatible_server_gets_the_same_summary_with_a_bearer_key() {
    let model = MockModel::start(Vec::new());
    let url = format!("{}{}", model.url, Api::OpenAi.path());
    let home = model_home(Api::OpenAi, &url, &url, "");
    session(&home, "s1");
    end(&home, "s1");
    pending(&home, false);
    assert_eq!(brief(&home), mock_model::BRIEF);
    let seen = model.seen();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].line.starts_with("POST /v1/chat/completions"), "{}", seen[0].line);
    assert_eq!(seen[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let body: Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(body["model"], "mock-model");
    assert_eq!(body["messages"][0]["role"], "system");
    let tokens = mock_model::TOKENS.0 + mock_model::TOKENS.1;
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert_eq!(stats["model_summaries"]["tokens_today"], tokens, "{stats}");
}

#[test]
fn failures_keep_the_built_in_summary_and_are_retried_after_a_growing_pause() {
    let model = MockModel::start(vec![Reply::Status(429), Reply::Status(503), Reply::Malformed, Reply::Summary]);
    let url = format!("{}{}", model.url, Api::Anthropic.path());
    let home = model_home(Api::Anthropic, &url, &url, "");
    session(&home, "s1");
    end(&home, "s1");
    let built_in = brief(&home);
    // The background run met the 429; the foreground one finds nothing due.
    pending(&home, false);
    let (state, tries, next, error) = queue_row(&home);
    assert_eq!((state.as_str(), tries), ("pending", 1));
    assert!(next - now_ms() > 50_000, "the first retry waits a minute, not {} ms", next - now_ms());
    assert!(error.unwrap().contains("429"));
    assert_eq!(brief(&home), built_in, "a failure keeps the built-in summary");

    let ran = pending(&home, true);
    assert_eq!(ran["sessions"][0]["outcome"], "failed", "{ran}");
    let (_, tries, next, error) = queue_row(&home);
    assert_eq!(tries, 2);
    assert!(next - now_ms() > 250_000, "the second waits five minutes, not {} ms", next - now_ms());
    assert!(error.unwrap().contains("503"));

    let ran = pending(&home, true);
    assert!(ran["sessions"][0]["error"].as_str().unwrap().contains("not JSON"), "{ran}");
    assert_eq!(brief(&home), built_in);

    let ran = pending(&home, true);
    assert_eq!(ran["sessions"][0]["outcome"], "summarized", "{ran}");
    assert_eq!(brief(&home), mock_model::BRIEF);
    assert_eq!(model.seen().len(), 4, "one request a try, none doubled");
    let rows: i64 = home.db().query_row("SELECT count(*) FROM summaries", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 2, "one brief and one detailed summary");
    // Summarized once more (resumed and ended again), its learnings are replaced, not added to.
    hook(&home, "s1", "UserPromptSubmit", json!({"prompt": "one more thing about the config"}));
    end(&home, "s1");
    pending(&home, false);
    let learnings: i64 =
        home.db().query_row("SELECT count(*) FROM observations WHERE kind = 'learning'", [], |r| r.get(0)).unwrap();
    assert_eq!(learnings, 1);
}

/// A home whose model server is not there, with one session that ended and
/// was tried once.
fn tried_once_with_no_server() -> Home {
    // Nothing listens on this port once the listener is gone.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1/messages");
    let home = model_home(Api::Anthropic, &url, &url, "");
    session(&home, "s1");
    end(&home, "s1");
    pending(&home, false);
    home
}

#[test]
fn a_server_that_is_down_or_slow_is_given_up_after_five_tries_and_reported() {
    let home = tried_once_with_no_server();
    for _ in 0..4 {
        pending(&home, true);
    }
    let (state, tries, _, error) = queue_row(&home);
    assert_eq!((state.as_str(), tries), ("given_up", 5), "{error:?}");
    assert!(brief(&home).contains("trae.toml"), "the built-in summary stands");
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert_eq!(stats["model_summaries"]["given_up"], 1, "{stats}");
    assert!(stats["model_summaries"]["last_error"].as_str().unwrap().contains("llm"), "{stats}");
    let doctor = home.run_env(&["doctor"], &[(KEY_VAR, KEY)], None);
    assert!(doctor.stdout.contains("given up"), "{doctor}");

    // Slow past [summarize] timeout_ms: a failure like any other.
    let slow = MockModel::start(vec![Reply::Slow(Duration::from_secs(5))]);
    let url = format!("{}{}", slow.url, Api::Anthropic.path());
    let home = model_home(Api::Anthropic, &url, &url, "timeout_ms = 1000");
    session(&home, "s1");
    end(&home, "s1");
    let started = Instant::now();
    pending(&home, false);
    let (state, tries, _, error) = queue_row(&home);
    assert_eq!((state.as_str(), tries), ("pending", 1));
    assert!(error.as_deref().unwrap().contains("longer than its limit of 1000 ms"), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "the call was ended at its time limit");
}

#[test]
fn the_daily_budget_stops_requests_and_says_so() {
    let model = MockModel::start(Vec::new());
    let url = format!("{}{}", model.url, Api::Anthropic.path());
    // One session's request costs about 1,500 (by estimate) and the mock
    // reports 1,500: the second session is over the budget.
    let home = model_home(Api::Anthropic, &url, &url, "max_tokens_per_day = 3000");
    session(&home, "s1");
    end(&home, "s1");
    pending(&home, false);
    session(&home, "s2");
    end(&home, "s2");
    let ran = pending(&home, true);
    assert_eq!(model.seen().len(), 1, "no request past the budget");
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert_eq!(stats["model_summaries"]["over_budget"], 1, "{ran} {stats}");
    let human = home.run(&["stats"], None).ok();
    assert!(human.stdout.contains("max_tokens_per_day"), "{human}");
}

#[test]
fn a_grant_reaches_only_its_own_endpoint() {
    let granted = MockModel::start(Vec::new());
    let other = MockModel::start(Vec::new());
    let grant = format!("{}/v1/messages", granted.url);
    let observations = json!([{"id": 1, "session_id": "s", "ts": 1, "kind": "user", "tool": null,
                               "content": "fix the config loader", "private": false, "tags": []}]);
    let input = observations.to_string();
    let port = granted.url.rsplit(':').next().unwrap();
    let refused = [
        format!("{}/v1/messages", other.url),               // another port
        format!("http://localhost:{port}/v1/messages"),     // another host name
        format!("https://127.0.0.1:{port}/v1/messages"),    // another scheme
        format!("{}/v1/models", granted.url),               // another path
        format!("{}/v1/messages/../../admin", granted.url), // a path that climbs out
    ];
    for url in &refused {
        let home = model_home(Api::Anthropic, &grant, url, "");
        let run = home.run_env(&["plugins", "run", "llm"], &[(KEY_VAR, KEY)], Some(input.as_bytes()));
        assert_ne!(run.code, 0, "{url} must be refused: {run}");
        assert!(run.stderr.contains("HttpRequestDenied"), "{url}: {run}");
        let log = std::fs::read_to_string(home.home().join("logs/plugins.log")).unwrap();
        assert!(log.contains(&format!("llm denied: POST {url}")), "the log says what was refused: {log}");
    }
    assert!(granted.seen().is_empty() && other.seen().is_empty(), "no refused request left the host");

    // A redirect off the grant is a request like any other: refused.
    let redirecting = MockModel::start(vec![Reply::Redirect(format!("{}/v1/messages", other.url))]);
    let grant = format!("{}/v1/messages", redirecting.url);
    let home = model_home(Api::Anthropic, &grant, &grant, "");
    let run = home.run_env(&["plugins", "run", "llm"], &[(KEY_VAR, KEY)], Some(input.as_bytes()));
    assert!(run.stderr.contains("HttpRequestDenied"), "{run}");
    assert_eq!(redirecting.seen().len(), 1);
    assert!(other.seen().is_empty(), "the redirect target was never reached");

    // With no grant at all, the plugin reaches nothing.
    let home = Home::new();
    let config = format!(
        "[[plugins]]\nname = \"llm\"\npath = \"{}\"\nrole = \"summarizer\"\n[plugins.config]\napi = \"anthropic\"\nurl = \"{}/v1/messages\"\nmodel = \"m\"\n",
        wasm("llm_summarizer").display(),
        other.url
    );
    home.write("home/trae-mem.toml", config.as_bytes());
    let run = home.run(&["plugins", "run", "llm"], Some(input.as_bytes()));
    assert!(run.stderr.contains("HttpRequestDenied"), "{run}");
    assert!(other.seen().is_empty());
    assert_eq!(other.scripted(), 0);

    // A redirect to a loopback address that a grant names is followed.
    let redirecting = MockModel::start(vec![Reply::Redirect(format!("{}/v1/messages", other.url))]);
    let grant = format!("{}/v1/messages", redirecting.url);
    let both = model_config(Api::Anthropic, &grant, &grant, "")
        .replace("http = [", &format!("http = [{{ url = \"{}/v1/messages\" }}, ", other.url));
    let home = Home::new();
    home.write("home/trae-mem.toml", both.as_bytes());
    let run = home.run_env(&["plugins", "run", "llm"], &[(KEY_VAR, KEY)], Some(input.as_bytes()));
    assert_eq!(run.code, 0, "{run}");
    assert_eq!((redirecting.seen().len(), other.seen().len()), (1, 1), "the granted redirect was followed: {run}");
}

#[test]
fn a_host_name_that_resolves_to_a_private_address_is_refused_unless_the_grant_names_the_address() {
    // The machine's own name resolves to a loopback address here (`/etc/hosts`).
    use std::net::ToSocketAddrs;
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default().trim().to_owned();
    let loopback = (name.as_str(), 80).to_socket_addrs().is_ok_and(|mut a| a.all(|a| a.ip().is_loopback()));
    if name.is_empty() || name == "localhost" || !loopback {
        crate::util::skip("the private-address refusal", "this machine's name does not resolve to a loopback address");
        return;
    }
    let model = MockModel::start(Vec::new());
    let port = model.url.rsplit(':').next().unwrap();
    let url = format!("http://{name}:{port}/v1/messages");
    let home = model_home(Api::Anthropic, &url, &url, "");
    let input = json!([{"id": 1, "session_id": "s", "ts": 1, "kind": "user", "tool": null,
                        "content": "fix the config loader", "private": false, "tags": []}])
    .to_string();
    let run = home.run_env(&["plugins", "run", "llm"], &[(KEY_VAR, KEY)], Some(input.as_bytes()));
    assert!(run.stderr.contains("DestinationIpProhibited"), "{run}");
    let log = std::fs::read_to_string(home.home().join("logs/plugins.log")).unwrap();
    assert!(log.contains(&format!("{name} resolves to the private address 127.")), "{log}");
    assert!(model.seen().is_empty());
    // Granted by its address, the same server answers.
    let url = format!("{}/v1/messages", model.url);
    let home = model_home(Api::Anthropic, &url, &url, "");
    let run = home.run_env(&["plugins", "run", "llm"], &[(KEY_VAR, KEY)], Some(input.as_bytes())).ok();
    assert_eq!(run.json()["brief"], mock_model::BRIEF);
}

#[test]
fn a_projects_config_may_grant_an_endpoint_but_never_a_key_from_your_environment() {
    let home = Home::new();
    let config = format!(
        "[[plugins]]\nname = \"llm\"\npath = \"{}\"\nrole = \"summarizer\"\n[plugins.grants]\n\
         http = [{{ url = \"https://evil.example/\", header = \"x-api-key\", env = \"{KEY_VAR}\" }}]\n",
        wasm("llm_summarizer").display()
    );
    home.write("work/trae-mem.toml", config.as_bytes());
    // Commands that read go on with the defaults, and say why.
    let run = home.run_env(&["config", "show"], &[(KEY_VAR, KEY)], None).ok();
    assert!(run.stderr.contains("only your own trae-mem.toml in the trae-mem home"), "{run}");
    assert!(run.stdout.contains("summarizer = \"builtin\""), "{run}");
    let doctor = home.run_env(&["doctor"], &[(KEY_VAR, KEY)], None);
    assert_eq!(doctor.code, 1, "{doctor}");
}

#[test]
fn a_request_that_fails_once_the_server_has_it_is_charged_its_estimate() {
    // A server error, and an answer slower than [summarize] timeout_ms:
    // either way the server had the request and may have spent tokens.
    for (reply, extra) in [(Reply::Status(500), ""), (Reply::Slow(Duration::from_secs(5)), "timeout_ms = 1000")] {
        let model = MockModel::start(vec![reply]);
        let url = format!("{}{}", model.url, Api::Anthropic.path());
        let home = model_home(Api::Anthropic, &url, &url, extra);
        session(&home, "s1");
        end(&home, "s1");
        pending(&home, false);
        assert_eq!(model.seen().len(), 1);
        let (state, tries, _, _) = queue_row(&home);
        assert_eq!((state.as_str(), tries), ("pending", 1));
        let stats = home.run(&["stats", "--json"], None).ok().json();
        let charged = stats["model_summaries"]["failed_tokens_today"].as_u64().unwrap();
        assert!(charged > 1000, "the request's estimate is charged: {stats}");
        assert_eq!(stats["model_summaries"]["tokens_today"], charged, "{stats}");
        let human = home.run(&["stats"], None).ok();
        assert!(human.stdout.contains(&format!("{charged} for failed requests")), "{human}");
    }

    // A server that is not there received nothing: nothing is charged.
    let home = tried_once_with_no_server();
    let stats = home.run(&["stats", "--json"], None).ok().json();
    assert_eq!(stats["model_summaries"]["tokens_today"], 0, "{stats}");
}

#[test]
fn a_session_end_beside_a_running_worker_starts_no_second_one_and_is_summarized_by_it() {
    // Long enough for the second session's hooks to run while it waits.
    let model = MockModel::start(vec![Reply::Slow(Duration::from_secs(8))]);
    let url = format!("{}{}", model.url, Api::Anthropic.path());
    let home = model_home(Api::Anthropic, &url, &url, "");
    let started = || {
        let log = std::fs::read_to_string(home.home().join("logs/summarize.log")).unwrap_or_default();
        log.matches("summaries by a model").count()
    };
    session(&home, "s1");
    end(&home, "s1");
    let waited = Instant::now();
    while model.seen().is_empty() {
        assert!(waited.elapsed() < Duration::from_secs(120), "the background worker never asked the model");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The worker waits for the model's answer, holding its lock.
    let before = started();
    session(&home, "s2");
    end(&home, "s2");
    assert_eq!(started(), before, "no second worker was started while one runs");

    // The running worker takes the session queued meanwhile, unasked.
    let waited = Instant::now();
    loop {
        let done: i64 =
            home.db().query_row("SELECT count(*) FROM summary_queue WHERE state = 'done'", [], |r| r.get(0)).unwrap();
        if done == 2 {
            break;
        }
        assert!(waited.elapsed() < Duration::from_secs(120), "the second session was left waiting");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(model.seen().len(), 2);
}
