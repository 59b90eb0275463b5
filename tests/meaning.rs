//! Search by meaning: `trae-mem embed` gives rows their vectors with the
//! model inside the binary (or one `[search] model` names), search fuses
//! them with words and says which found each hit, forgetting takes a row's
//! vector with it, and a hook's turn gets its vectors in the background.

use serde_json::{Value, json};

use crate::seed::{MINUTE, S1, S2, Seed, T0};
use crate::util::{Home, copies_of};

/// Two sessions: a fix stated in its own words, among unrelated work.
fn seed() -> Seed {
    Seed::new()
        .session(S1, "/proj/alpha", T0, None)
        .obs(
            1,
            S1,
            T0 + MINUTE,
            "Fixed: loading the settings now falls back to the defaults when trae.toml is absent, instead of aborting.",
        )
        .set("kind", json!("response"))
        .obs(2, S1, T0 + 2 * MINUTE, "The release notes list the new colour palette for the dashboard.")
        .set("kind", json!("note"))
        .set("tool", json!(null))
        .obs(3, S1, T0 + 3 * MINUTE, "cargo build --release")
        .session(S2, "/proj/alpha", T0 + 60 * MINUTE, None)
        .obs(4, S2, T0 + 61 * MINUTE, "Switched the CSV export to write dates as ISO 8601.")
        .set("kind", json!("decision"))
        .obs(5, S2, T0 + 62 * MINUTE, "Bumped the tokio dependency and reran the test suite; everything passed.")
        .set("kind", json!("response"))
}

fn search(home: &Home, query: &str) -> Value {
    home.run(&["search", "--json", "--limit", "3", "--", query], None).ok().json()
}

fn first_hit(out: &Value) -> (Option<i64>, String) {
    let hit = &out["hits"][0];
    (hit["id"].as_i64(), hit["found_by"].as_str().unwrap_or_default().to_owned())
}

fn embed(home: &Home) -> Value {
    home.run(&["embed", "--json"], None).ok().json()
}

/// A question that shares no word with its answer (nor, in Chinese, a
/// word the dictionary glosses it by), asked in English and in Chinese,
/// finds it only once the rows have vectors, and says it was by meaning.
#[test]
fn a_paraphrased_question_is_found_through_meaning_in_english_and_chinese() {
    let home = seed().home("trigram");
    let english = "what happens at launch when the user's preferences are gone?";
    let chinese = "偏好丢失时程序启动就挂掉，后来怎么处理的？";
    for query in [english, chinese] {
        let out = home.run_unsettled(&["search", "--json", "--limit", "3", "--", query], None).ok().json();
        assert_ne!(first_hit(&out).0, Some(1), "no vectors yet, no meaning: {query}");
    }
    let report = embed(&home);
    assert_eq!(report["embedded"], 4, "the four rows that state something: {report}");
    assert_eq!(report["pending"], 0, "{report}");
    assert_eq!(report["finished"], true, "{report}");
    for query in [english, chinese] {
        let out = search(&home, query);
        assert_eq!(first_hit(&out), (Some(1), "meaning".to_owned()), "{query}: {out}");
    }
    // Words still find what words hold, and say so.
    let out = search(&home, "tokio dependency");
    let (first, by) = first_hit(&out);
    assert_eq!(first, Some(5), "{out}");
    assert!(by == "words" || by == "both", "{out}");
    // Nothing is embedded twice.
    assert_eq!(embed(&home)["embedded"], 0);
}

/// A search limited to a project, a session or all but one session finds
/// by meaning only there: its vectors are read from those sessions down.
#[test]
fn a_question_limited_to_a_project_or_session_finds_by_meaning_only_there() {
    const S3: &str = "33333333-3333-4333-8333-333333333333";
    let home = seed()
        .session(S3, "/proj/beta", T0 + 120 * MINUTE, None)
        .obs(
            6,
            S3,
            T0 + 121 * MINUTE,
            "Fixed: the daemon starts with built-in options when its config file is missing.",
        )
        .set("kind", json!("response"))
        .home("trigram");
    embed(&home);
    let question = "what happens at launch when the user's preferences are gone?";
    let hits = |flags: &[&str]| {
        let mut args = vec!["search", "--json", "--limit", "5"];
        args.extend(flags);
        args.extend(["--", question]);
        let out = home.run(&args, None).ok().json();
        let ids: Vec<i64> = out["hits"].as_array().unwrap().iter().map(|h| h["id"].as_i64().unwrap()).collect();
        (ids, first_hit(&out).1, out)
    };
    // Everywhere, both fixes are near the question.
    let (everywhere, _, out) = hits(&[]);
    assert!(everywhere.contains(&1) && everywhere.contains(&6), "{out}");
    // Alpha's fix shares no word with the question; beta's shares "start"
    // (a synonym of "launch").
    for (flags, first, other) in [
        (&["--project", "/proj/alpha"][..], Some((1, "meaning")), 6),
        (&["--project", "/proj/beta"][..], Some((6, "both")), 1),
        (&["--session", S3][..], Some((6, "both")), 1),
        (&["--author", "nobody"][..], None, 1),
    ] {
        let (ids, by, out) = hits(flags);
        assert!(!ids.contains(&other), "{flags:?}: {out}");
        match first {
            Some((id, found_by)) => {
                assert_eq!((ids.first().copied(), by.as_str()), (Some(id), found_by), "{flags:?}: {out}")
            }
            None => assert!(ids.is_empty(), "{flags:?}: {out}"),
        }
    }
}

/// A Chinese question finds English memory by words, before any vector:
/// its words' English glosses (CC-CEDICT's) are looked for as synonyms.
#[test]
fn a_chinese_question_finds_english_memory_through_the_dictionary() {
    let rows = [
        (
            "response",
            "Done: inventory query results are cached in Redis, and the cache entries expire after 300 seconds.",
        ),
        ("decision", "Switched the CSV export to write dates as ISO 8601."),
    ];
    let mut seed = Seed::new().session(S1, "/proj/alpha", T0, None);
    for (id, (kind, text)) in (1..).zip(rows) {
        seed = seed.obs(id, S1, T0 + id * MINUTE, text).set("kind", json!(kind));
    }
    let home = seed.home("trigram");
    let out = home.run_unsettled(&["search", "--json", "--", "库存查询的缓存多久过期？"], None).ok().json();
    let (first, by) = first_hit(&out);
    assert_eq!((first, by.as_str()), (Some(1), "words"), "{out}");
    let matched = out["hits"][0]["matched"].to_string();
    assert!(matched.contains("inventory") && matched.contains("cache"), "{out}");
    assert_eq!(out["hits"].as_array().map(Vec::len), Some(1), "the CSV row holds none of it: {out}");
}

/// An import says how many memories wait for their vectors, so that a
/// question in other words finding nothing yet is no surprise; an import
/// that adds nothing says nothing of them.
#[test]
fn an_import_says_what_waits_for_vectors() {
    let home = Home::new();
    let file = home.write("seed.jsonl", seed().jsonl().as_bytes());
    let run = home.run(&["import", file.to_str().unwrap()], None).ok();
    assert_eq!(
        run.stderr,
        "4 memories wait for a vector: a background `trae-mem embed` is giving them one (`trae-mem embed` waits for it); search finds by words meanwhile\n",
        "{run}"
    );
    embed(&home);
    let again = home.run(&["import", file.to_str().unwrap()], None).ok();
    assert_eq!(again.stderr, "", "{again}");
}

/// A forgotten row's vector goes with it, down to the bytes in the file.
#[test]
fn forgetting_a_row_removes_its_vector() {
    let home = seed().home("trigram");
    embed(&home);
    let vector: Vec<u8> =
        home.db().query_row("SELECT embedding FROM vectors WHERE source = 0 AND row_id = 1", [], |r| r.get(0)).unwrap();
    assert!(!copies_of(&home.home(), &vector).is_empty(), "the vector is stored");
    home.run(&["forget", "#1", "--json"], None).ok();
    let left: i64 =
        home.db().query_row("SELECT count(*) FROM vectors WHERE source = 0 AND row_id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0);
    assert_eq!(copies_of(&home.home(), &vector), Vec::<std::path::PathBuf>::new(), "no copy of its bytes is left");
    let out = search(&home, "what happens at launch when the user's preferences are gone?");
    assert_ne!(first_hit(&out).0, Some(1), "{out}");
}

/// `[search] model` loads a model file (here the built-in one's own file,
/// through the same path a user's model takes), and the store remembers
/// which model its vectors came from; a file that is not a model is a
/// clear error that stores nothing.
#[test]
fn a_model_file_named_in_the_config_is_loaded_and_used() {
    let home = seed().home("trigram");
    let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/multilingual-e5-small-q4.e5s");
    home.write("home/trae-mem.toml", format!("[search]\nmodel = {:?}\n", model.display().to_string()).as_bytes());
    let report = embed(&home);
    assert_eq!(report["embedded"], 4, "{report}");
    let source: String = home
        .db()
        .query_row("SELECT value FROM store_meta WHERE key = 'vector_model_source'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(source, model.display().to_string());
    let out = search(&home, "what happens at launch when the user's preferences are gone?");
    assert_eq!(first_hit(&out), (Some(1), "meaning".to_owned()), "{out}");

    let bogus = home.write("bogus.e5s", b"not a model at all");
    home.write("home/trae-mem.toml", format!("[search]\nmodel = {:?}\n", bogus.display().to_string()).as_bytes());
    let run = home.run(&["embed"], None).code(1);
    assert!(run.stderr.contains("bogus.e5s"), "the error names the file: {run}");
    let source_after: String = home
        .db()
        .query_row("SELECT value FROM store_meta WHERE key = 'vector_model_source'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(source_after, source, "the vectors and their model are as they were");
}

/// The built-in model, written in Hugging Face's layout by `embed
/// --export-model`, loads through the folder `[search] model` names (as a
/// model downloaded from its page would) and finds the same answers by
/// meaning; a folder without a tokenizer is a clear error.
#[test]
fn a_model_folder_in_hugging_face_layout_is_loaded_and_used() {
    let home = seed().home("trigram");
    let folder = home.home().join("e5-export");
    let out = home.run(&["embed", "--export-model", &folder.display().to_string(), "--json"], None).ok().json();
    assert_eq!(out["model"], "multilingual-e5-small-q4/99k-4e8a3c9f", "{out}");
    for file in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert!(folder.join(file).is_file(), "{file} is written");
    }
    // Relative to the config file, as a user writes it.
    home.write("home/trae-mem.toml", b"[search]\nmodel = \"e5-export\"\n");
    let report = embed(&home);
    assert_eq!(report["embedded"], 4, "{report}");
    assert!(report["model"].as_str().unwrap().starts_with("e5-export/99k-"), "{report}");
    for query in
        ["what happens at launch when the user's preferences are gone?", "偏好丢失时程序启动就挂掉，后来怎么处理的？"]
    {
        let out = search(&home, query);
        assert_eq!(first_hit(&out), (Some(1), "meaning".to_owned()), "{query}: {out}");
    }

    // Converted once, and kept in the home for the next process: what is
    // kept is what loads (the built-in model's image put in its place
    // loads under its own hash).
    let kept = |home: &Home| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(home.home().join("models")).unwrap().map(|e| e.unwrap().path()).collect()
    };
    let first = kept(&home);
    assert_eq!(first.len(), 1, "{first:?}");
    let builtin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/multilingual-e5-small-q4.e5s");
    std::fs::copy(&builtin, &first[0]).unwrap();
    let swapped = embed(&home);
    assert!(swapped["model"].as_str().unwrap().ends_with("-4e8a3c9f"), "{swapped}");
    // A changed file is converted again, in place of the image kept before.
    let config = std::fs::read(folder.join("config.json")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(folder.join("config.json"), config).unwrap();
    let again = embed(&home);
    assert_eq!(again["model"], report["model"], "{again}");
    let second = kept(&home);
    assert!(second.len() == 1 && second != first, "{first:?} then {second:?}");

    std::fs::remove_file(folder.join("tokenizer.json")).unwrap();
    home.write("home/trae-mem.toml", b"[search]\nmodel = \"e5-export\"\n");
    let run = home.run(&["search", "--", "settings"], None).ok();
    let run_embed = home.run(&["embed"], None).code(1);
    assert!(run_embed.stderr.contains("tokenizer.json"), "the error names the file: {run_embed}");
    assert!(!run.stdout.is_empty(), "search still finds by words: {run}");
}

/// After a turn (Stop), the hook starts `trae-mem embed` in the background
/// and returns; the turn's answer soon has its vector.
#[test]
fn a_turn_gets_its_vectors_in_the_background() {
    let home = Home::new();
    let sid = "meaning-turn";
    let prompt = json!({"session_id": sid, "cwd": home.work(), "hook_event_name": "UserPromptSubmit",
                        "prompt": "why does the app crash without a settings file?"});
    home.run(&["hook"], Some(prompt.to_string().as_bytes())).ok();
    let stop = json!({"session_id": sid, "cwd": home.work(), "hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "Fixed: a missing settings file now falls back to the defaults instead of aborting."});
    home.run(&["hook"], Some(stop.to_string().as_bytes())).ok();
    let done = json!({"session_id": sid, "cwd": home.work(), "hook_event_name": "Stop", "stop_hook_active": false,
                      "last_assistant_message": "Done."});
    home.run(&["hook"], Some(done.to_string().as_bytes())).ok();
    let embedded = || -> i64 { home.db().query_row("SELECT count(*) FROM vectors", [], |r| r.get(0)).unwrap() };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while embedded() == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        embedded() > 0,
        "the background embed stored a vector; its log: {:?}",
        std::fs::read_to_string(home.home().join("logs/embed.log"))
    );
    // The turns' end notes say only that they ended, and "Done." is near
    // any short query: the fix has a vector, and so has the prompt (each
    // part a session states gets one, so a paraphrase meets its part).
    home.settle();
    assert_eq!(embedded(), 2);
    let out = search(&home, "偏好丢失时程序启动就挂掉，后来怎么处理的？");
    assert_eq!(out["hits"][0]["kind"], "response", "{out}");
    assert_eq!(out["hits"][0]["found_by"], "meaning", "{out}");
}
