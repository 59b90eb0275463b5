//! `trae-mem sessions` and `trae-mem show`: listing sessions and showing
//! one with its summaries and observations.

use serde_json::{Value, json};

use crate::seed::{HOUR, MINUTE, Seed, T0};
use crate::util::Home;

const SA: &str = "aaaa1111-0000-4000-8000-000000000001";
const SB: &str = "aaaa2222-0000-4000-8000-000000000002";
const SC: &str = "cccc3333-0000-4000-8000-000000000003";

/// Three sessions written out of time order; SA has summaries and a private row.
fn sessions_seed() -> Seed {
    Seed::new()
        .session(SB, "/proj/beta", T0 + 2 * HOUR, None)
        .obs(10, SB, T0 + 2 * HOUR + MINUTE, "beta work")
        .session(SA, "/proj/alpha", T0, Some(T0 + HOUR))
        .set("meta", json!({"client": "claude-code"}))
        .obs(2, SA, T0 + 2 * MINUTE, "second")
        .set("kind", json!("response"))
        .set("tool", Value::Null)
        .obs(1, SA, T0 + MINUTE, "first")
        .set("kind", json!("user"))
        .set("tool", Value::Null)
        .set("tags", json!(["prompt"]))
        .obs(3, SA, T0 + 3 * MINUTE, "secret stuff")
        .private()
        .summary(SA, "detailed", T0 + HOUR, "In detail:\n- first\n- second")
        .summary(SA, "brief", T0 + HOUR, "Did the first and second things.")
        .session(SC, "/proj/alpha", T0 + HOUR, None)
}

fn session_json(id: &str, project: &str, started: i64, ended: Option<i64>, count: i64) -> Value {
    let meta = if id == SA { json!({"client": "claude-code"}) } else { json!({}) };
    json!({"id": id, "project": project, "started_at": started, "ended_at": ended,
           "meta": meta, "observations": count})
}

#[test]
fn sessions_are_listed_newest_first_with_counts() {
    let home = sessions_seed().home("trigram");
    let sa = session_json(SA, "/proj/alpha", T0, Some(T0 + HOUR), 3);
    let sb = session_json(SB, "/proj/beta", T0 + 2 * HOUR, None, 1);
    let sc = session_json(SC, "/proj/alpha", T0 + HOUR, None, 0);

    let run = home.run(&["sessions", "--json"], None).ok();
    assert_eq!(run.json(), json!([sb, sc, sa]), "{run}");
    let run = home.run(&["sessions", "--json", "--project", "/proj/alpha"], None).ok();
    assert_eq!(run.json(), json!([sc, sa]), "{run}");
    let run = home.run(&["sessions", "--json", "--limit", "1"], None).ok();
    assert_eq!(run.json(), json!([sb]), "{run}");
    let run = home.run(&["sessions", "--json", "--project", "/proj/none"], None).ok();
    assert_eq!(run.json(), json!([]), "{run}");
}

#[test]
fn show_gives_a_session_with_summaries_and_observations() {
    let home = sessions_seed().home("trigram");
    let expected = json!({
        "session": session_json(SA, "/proj/alpha", T0, Some(T0 + HOUR), 3),
        "summaries": [
            {"session_id": SA, "level": "brief", "created_at": T0 + HOUR,
             "content": "Did the first and second things."},
            {"session_id": SA, "level": "detailed", "created_at": T0 + HOUR,
             "content": "In detail:\n- first\n- second"},
        ],
        "observations": [
            {"id": 1, "session_id": SA, "ts": T0 + MINUTE, "kind": "user", "tool": null,
             "content": "first", "private": false, "tags": ["prompt"]},
            {"id": 2, "session_id": SA, "ts": T0 + 2 * MINUTE, "kind": "response", "tool": null,
             "content": "second", "private": false, "tags": []},
            {"id": 3, "session_id": SA, "ts": T0 + 3 * MINUTE, "kind": "tool", "tool": "Bash",
             "content": "[PRIVATE]", "private": true, "tags": []},
        ],
    });
    let run = home.run(&["show", SA, "--json"], None).ok();
    assert_eq!(run.json(), expected, "{run}");
    // A unique prefix is enough.
    let run = home.run(&["show", "aaaa1", "--json"], None).ok();
    assert_eq!(run.json(), expected, "{run}");
    let run = home.run(&["show", "cccc", "--json"], None).ok();
    assert_eq!(run.json()["session"]["id"], SC, "{run}");
    assert_eq!(run.json()["summaries"], json!([]), "{run}");
    assert_eq!(run.json()["observations"], json!([]), "{run}");
}

#[test]
fn show_refuses_unknown_and_ambiguous_sessions() {
    let home = sessions_seed().home("trigram");
    let run = home.run(&["show", "ffff", "--json"], None).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert_eq!(run.stderr, "trae-mem: no session has id \"ffff\"; `trae-mem sessions` lists them\n", "{run}");
    let run = home.run(&["show", "aaaa", "--json"], None).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("\"aaaa\" is the start of several session ids"), "{run}");
}

#[test]
fn sessions_of_a_project_without_any_names_the_project_and_the_others() {
    let home = Home::new();
    crate::util::claude_code_hook(&home, "s1", "UserPromptSubmit", serde_json::json!({"prompt": "hello"})).ok();
    let empty = home.work().join("elsewhere");
    std::fs::create_dir_all(&empty).unwrap();
    let run = home.run(&["sessions", "--project", empty.to_str().unwrap()], None).ok();
    let resolved = empty.canonicalize().unwrap();
    assert!(run.stderr.contains(&format!("project {} has no sessions", resolved.display())), "{run}");
    assert!(run.stderr.contains("1 other project has some"), "{run}");
}

#[test]
fn show_opens_an_observation_written_as_search_prints_it() {
    let home = sessions_seed().home("trigram");
    let run = home.run(&["show", "#2", "--json"], None).ok();
    let obs = run.json();
    assert_eq!(
        (obs["id"].as_i64(), obs["session_id"].as_str(), obs["content"].as_str()),
        (Some(2), Some(SA), Some("second"))
    );
    let text = home.run(&["show", "#2"], None).ok();
    assert!(text.stdout.starts_with("observation #2\n") && text.stdout.contains(SA), "{text}");
    // A private row is shown as such, never its text.
    let private = home.run(&["show", "#3", "--json"], None).ok().json();
    assert_eq!(private["content"], "[PRIVATE]", "{private}");
    let run = home.run(&["show", "#999"], None).code(1);
    assert_eq!(run.stderr, "trae-mem: no observation has id 999; `trae-mem search` shows ids\n", "{run}");
}
