//! `trae-mem config`: the documented defaults, the settings in effect with
//! where each comes from, and the files read.

use serde_json::json;

use crate::util::Home;

#[test]
fn config_default_prints_a_file_that_parses_to_the_defaults() {
    let run = Home::new().run(&["config", "default"], None).ok();
    let table: toml::Table = toml::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}\n{run}"));
    assert_eq!(table["summarize"]["summarizer"].as_str(), Some("builtin"));
    assert_eq!(table["capture"]["prompt_chars"].as_integer(), Some(8000));
}

#[test]
fn config_show_says_where_each_setting_comes_from() {
    let home = Home::new();
    std::fs::write(home.home().join("trae-mem.toml"), "[context]\nsessions = 9\n[capture]\nprompt_chars = 50\n")
        .unwrap();
    std::fs::write(home.work().join("trae-mem.toml"), "[capture]\nprompt_chars = 100\n").unwrap();
    let run = home.run_env(&["config", "show", "--json"], &[("TRAE_MEM_DEADLINE_MS", "700")], None).ok();
    let out = run.json();
    let project = home.work().join("trae-mem.toml").display().to_string();
    let global = home.home().join("trae-mem.toml").display().to_string();
    let setting = |table: &str, key: &str| out["settings"][table][key].clone();
    assert_eq!(setting("capture", "prompt_chars"), json!({"value": 100, "from": format!("project {project}")}));
    assert_eq!(setting("context", "sessions"), json!({"value": 9, "from": format!("global {global}")}));
    assert_eq!(setting("hook", "deadline_ms"), json!({"value": 700, "from": "TRAE_MEM_DEADLINE_MS"}));
    assert_eq!(setting("capture", "response_chars")["from"], "default");
    assert_eq!(out["home"]["from"], "TRAE_MEM_HOME");

    let paths = home.run(&["config", "path", "--json"], None).ok().json();
    assert_eq!(paths, json!([{"scope": "global", "path": global}, {"scope": "project", "path": project}]));
    // The human form says the same.
    let text = home.run(&["config", "show"], None).ok().stdout;
    assert!(text.contains(&format!("prompt_chars = 100  # project {project}")), "{text}");
}
