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

#[test]
fn read_only_commands_work_with_a_broken_config_and_say_so_in_one_line() {
    let home = Home::new();
    crate::util::claude_code_hook(&home, "b", "UserPromptSubmit", json!({"prompt": "readable while broken"})).ok();
    // The prompt's vector is made while the config still reads (`embed`
    // needs it to know the model), so that search has nothing else to say.
    home.settle();
    home.write("work/trae-mem.toml", b"[capture\nprompt_chars = 5\n");
    for args in [&["search", "readable"][..], &["config", "show"], &["stats"], &["sessions"]] {
        let run = home.run(args, None).ok();
        let warnings: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "one warning line\n{run}");
        assert!(warnings[0].starts_with("trae-mem: warning: ") && warnings[0].contains("trae-mem.toml"), "{run}");
    }
    let found = home.run(&["search", "readable", "--json"], None).ok().json();
    assert_eq!(found["hits"].as_array().unwrap().len(), 1, "{found}");
    let shown = home.run(&["config", "show", "--json"], None).ok().json();
    assert_eq!(shown["settings"]["capture"]["prompt_chars"], json!({"value": 8000, "from": "default"}));
    // The hint names a command that exists, and it runs.
    let doctor = home.run(&["doctor", "--json"], None).json();
    let config = doctor["checks"].as_array().unwrap().iter().find(|c| c["check"] == "config").unwrap().clone();
    assert_eq!(config["ok"], false, "{config}");
    assert!(config["fix"].as_str().unwrap().contains("`trae-mem config default`"), "{config}");
    home.run(&["config", "default"], None).ok();
}
