//! Search through the command line: each index mode, query parsing, short
//! terms, snippets, ranking, filters and privacy. Every test seeds a fresh
//! home with `Seed`, then searches it with the real binary.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::seed::{HOUR, MINUTE, S1, S2, Seed, T0};
use crate::util::Home;

/// Every index mode, as `TRAE_MEM_INDEX` names it.
const MODES: [&str; 3] = ["trigram", "unicode61", "like"];
/// The modes that find any substring.
const SUBSTRING_MODES: [&str; 2] = ["trigram", "like"];

// ---------------------------------------------------------------------------
// Harness: searching

/// Runs `search --json FLAGS -- QUERY` with index `mode`, and checks that
/// the output echoes the query and names the mode.
pub fn search(home: &Home, mode: &str, query: &str, flags: &[&str]) -> Value {
    let mut args = vec!["search", "--json"];
    args.extend_from_slice(flags);
    args.extend(["--", query]);
    let run = home.run_env(&args, &[("TRAE_MEM_INDEX", mode)], None).ok();
    let out = run.json();
    assert_eq!(out["index"], mode, "{run}");
    assert_eq!(out["query"], query, "{run}");
    assert!(out["hits"].is_array(), "{run}");
    out
}

/// The observation hits' ids, in order (a summary hit has none).
pub fn ids(out: &Value) -> Vec<i64> {
    out["hits"].as_array().unwrap().iter().filter_map(|hit| hit["id"].as_i64()).collect()
}

/// Terms need not all match, but rows holding every one of the query's
/// `terms` come first: the leading hits are exactly `expected`, each holding
/// every term, and no later hit holds them all.
fn assert_every_term_first(out: &Value, expected: &BTreeSet<i64>, terms: usize, context: &str) {
    let hits = out["hits"].as_array().unwrap();
    let (leading, rest) = hits.split_at(expected.len().min(hits.len()));
    let leading_ids: BTreeSet<i64> = leading.iter().filter_map(|h| h["id"].as_i64()).collect();
    assert_eq!(&leading_ids, expected, "{context}: {out}");
    let held = |hit: &Value| hit["matched"].as_array().unwrap().len();
    assert!(leading.iter().all(|h| held(h) == terms), "{context}: {out}");
    assert!(rest.iter().all(|h| held(h) < terms), "{context}: a later hit holds every term: {out}");
}

fn id_set(out: &Value) -> BTreeSet<i64> {
    ids(out).into_iter().collect()
}

fn set(ids: &[i64]) -> BTreeSet<i64> {
    ids.iter().copied().collect()
}

/// The hit with `id`'s snippet.
fn snippet(out: &Value, id: i64) -> String {
    let hit = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hit| hit["id"] == id)
        .unwrap_or_else(|| panic!("no hit {id} in {out}"));
    hit["snippet"].as_str().unwrap().to_owned()
}

/// A row of a corpus: id, content, private. Row `id` is at `T0 + id` minutes.
type Row = (i64, &'static str, bool);

/// One session in project /proj/alpha holding `rows`.
fn corpus_seed(rows: &[Row]) -> Seed {
    let mut seed = Seed::new().session(S1, "/proj/alpha", T0, None);
    for &(id, content, private) in rows {
        seed = seed.obs(id, S1, T0 + id * MINUTE, content);
        if private {
            seed = seed.private();
        }
    }
    seed
}

/// What a substring index must return: the public rows holding every term
/// (ignoring case); with no terms, every public row.
fn substring_matches(rows: &[Row], terms: &[&str]) -> BTreeSet<i64> {
    rows.iter()
        .filter(|(_, content, private)| {
            !private && terms.iter().all(|t| content.to_lowercase().contains(&t.to_lowercase()))
        })
        .map(|(id, _, _)| *id)
        .collect()
}

// ---------------------------------------------------------------------------
// Index modes

const MODE_ROWS: &[Row] = &[
    (1, "Refactored the tokenizer module", false),
    (2, "tokenizers are configured here", false),
    (3, "ran the retokenizer pass", false),
    (4, "启用数据缓存以后", false),
    (5, "缓存 失效", false),
    (6, "unrelated words", false),
    (7, "tokenizer secret 缓存", true),
];

#[test]
fn each_index_mode_is_reported_and_finds_what_it_promises() {
    let seed = corpus_seed(MODE_ROWS);
    // (query, found by trigram and like, found by unicode61)
    let cases: &[(&str, &[i64], &[i64])] = &[
        ("tokenizer", &[1, 2, 3], &[1, 2]),
        ("TOKEN", &[1, 2, 3], &[1, 2]),
        // Inside a word: only substring modes.
        ("izer", &[1, 2, 3], &[]),
        // A phrase is matched as written: never as a word prefix.
        ("\"tokenizer\"", &[1, 2, 3], &[1]),
        // unicode61 sees a run of Chinese as one word.
        ("缓存", &[4, 5], &[5]),
        // Two-character pieces: the row with all three first, then row 5 with one.
        ("数据缓存", &[4], &[]),
        ("启用", &[4], &[4]),
        ("nowhere", &[], &[]),
    ];
    for mode in MODES {
        let home = seed.home(mode);
        for &(query, substring, words) in cases {
            let expected = if mode == "unicode61" { words } else { substring };
            let out = search(&home, mode, query, &[]);
            let leading: BTreeSet<i64> = ids(&out).into_iter().take(expected.len()).collect();
            assert_eq!(leading, set(expected), "{mode} {query:?}: {out}");
        }
        // The pieces of 数据缓存: rows with fewer of them follow.
        if mode != "unicode61" {
            assert_eq!(ids(&search(&home, mode, "数据缓存", &[])), [4, 5], "{mode}");
        }
    }
}

#[test]
fn a_new_database_defaults_to_trigram() {
    let home = corpus_seed(MODE_ROWS).home("auto");
    let run = home.run(&["search", "--json", "retokenizer"], None).ok();
    let out = run.json();
    assert_eq!(out["index"], "trigram", "{run}");
    assert_eq!(ids(&out), vec![3], "{run}");
}

#[test]
fn switching_the_index_mode_rebuilds_it_for_existing_rows() {
    let home = corpus_seed(MODE_ROWS).home("trigram");
    let stored_mode = || -> String {
        home.db().query_row("SELECT value FROM store_meta WHERE key = 'index_mode'", [], |r| r.get(0)).unwrap()
    };
    assert_eq!(stored_mode(), "trigram");
    // The whole word first, then the inflected one, then the piece of a longer word.
    assert_eq!(ids(&search(&home, "trigram", "tokenizer", &[])), vec![1, 2, 3]);

    // unicode61 rebuilds from the stored rows (words only, private left out).
    assert_eq!(id_set(&search(&home, "unicode61", "tokenizer", &[])), set(&[1, 2]));
    assert_eq!(stored_mode(), "unicode61");

    // A row written while in unicode61 mode is indexed in that mode...
    let later = Seed::new().obs(8, S1, T0 + 8 * MINUTE, "tokenizer added later");
    let report = later.import_env(&home, &[("TRAE_MEM_INDEX", "unicode61")]);
    assert_eq!(report["observations"], 1, "{report}");
    assert_eq!(id_set(&search(&home, "unicode61", "tokenizer", &[])), set(&[1, 2, 8]));

    // ...and every later mode sees all public rows.
    assert_eq!(id_set(&search(&home, "like", "tokenizer", &[])), set(&[1, 2, 3, 8]));
    assert_eq!(stored_mode(), "like");
    assert_eq!(id_set(&search(&home, "trigram", "tokenizer", &[])), set(&[1, 2, 3, 8]));
    assert_eq!(id_set(&search(&home, "trigram", "缓", &[])), set(&[4, 5]));
    assert_eq!(stored_mode(), "trigram");

    // "auto" keeps what the database has.
    let run = home.run(&["search", "--json", "izer"], None).ok();
    assert_eq!(run.json()["index"], "trigram", "{run}");
    assert_eq!(id_set(&run.json()), set(&[1, 2, 3, 8]), "{run}");
}

#[test]
fn an_unknown_index_mode_is_refused() {
    let home = Home::new();
    let run = home.run_env(&["search", "--json", "x"], &[("TRAE_MEM_INDEX", "bigram")], None).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("unknown index mode \"bigram\""), "{run}");
}

#[test]
fn case_is_ignored_beyond_ascii() {
    let seed = corpus_seed(&[(1, "Grüße aus MÜNCHEN", false), (2, "ΣΦΑΛΜΑ δίσκου", false), (3, "plain ascii", false)]);
    let cases: &[(&str, &[i64])] =
        &[("münchen", &[1]), ("MÜNCHEN", &[1]), ("GRÜSSE", &[]), ("grüße", &[1]), ("σφαλμα", &[2]), ("ΔΊΣΚΟΥ", &[2])];
    for mode in MODES {
        let home = seed.home(mode);
        for &(query, expected) in cases {
            let out = search(&home, mode, query, &[]);
            assert_eq!(id_set(&out), set(expected), "{mode} {query:?}: {out}");
        }
        let out = search(&home, mode, "münchen", &[]);
        assert_eq!(snippet(&out, 1), "Grüße aus «MÜNCHEN»");
    }
}

// ---------------------------------------------------------------------------
// Query parsing

const QUERY_ROWS: &[Row] = &[
    (1, "error: database is locked while writing the journal", false),
    (2, "Edited src/store/mod.rs to open the database in WAL mode", false),
    (3, "Edited src/store/schema.rs to add an index", false),
    (4, "fn main() { run(); }", false),
    (5, "the log says exact phrase here", false),
    (6, "a phrase that is not exact", false),
    (7, "pass foo-bar to the C++ compiler", false),
    (8, "parsed key:value pairs", false),
    (9, "locked: the database is read-only", false),
    (10, "glob **/*.rs matched 12 files", false),
    (11, "NOT x means negate x", false),
    (12, "database is locked; token hunter2 (see *notes*)", true),
];

/// Raw queries as typed, each with the terms a substring index must find.
const RAW_QUERIES: &[(&str, &[&str])] = &[
    // "is" says nothing: stop words are dropped when anything else is asked.
    ("database is locked", &["database", "locked"]),
    ("src/store/mod.rs", &["src/store/mod.rs"]),
    // A call's parentheses are what pasting adds.
    ("fn main()", &["fn", "main"]),
    ("\"exact phrase\"", &["exact phrase"]),
    // Hyphenated words are words, found in any order.
    ("foo-bar", &["foo", "bar"]),
    ("C++", &["c++"]),
    ("key:value", &["key:value"]),
    ("OR", &["or"]),
    ("NOT x", &["not", "x"]),
    ("(", &["("]),
    ("\"exact phr", &["exact phr"]),
    ("say \"", &["say"]),
    ("\"", &[]),
    ("*", &["*"]),
    ("", &[]),
    ("  \t ", &[]),
];

#[test]
fn raw_queries_never_fail_in_any_mode() {
    let seed = corpus_seed(QUERY_ROWS);
    let public_newest_first: Vec<i64> = (1..=11).rev().collect();
    for mode in MODES {
        let home = seed.home(mode);
        for &(query, terms) in RAW_QUERIES {
            let out = search(&home, mode, query, &[]);
            let found = ids(&out);
            assert!(!found.contains(&12), "{mode} {query:?} found a private row: {out}");
            if terms.is_empty() {
                // Nothing to find: the most recent public rows, unranked.
                assert_eq!(found, public_newest_first, "{mode} {query:?}: {out}");
                assert!(out["hits"].as_array().unwrap().iter().all(|h| h["score"] == 0.0));
            } else if mode != "unicode61" {
                let expected = substring_matches(QUERY_ROWS, terms);
                assert_every_term_first(&out, &expected, terms.len(), &format!("{mode} {query:?}"));
            }
            for hit in out["hits"].as_array().unwrap() {
                if !terms.is_empty() && mode != "unicode61" {
                    assert!(hit["snippet"].as_str().unwrap().contains('«'), "{mode} {query:?}: unmarked snippet {hit}");
                }
            }
        }
    }
}

#[test]
fn code_and_operator_text_is_found_as_written() {
    let seed = corpus_seed(QUERY_ROWS);
    // Each query finds at least this row in every mode.
    let cases: &[(&str, i64)] =
        &[("database is locked", 1), ("fn main()", 4), ("foo-bar", 7), ("C++", 7), ("key:value", 8), ("NOT x", 11)];
    for mode in MODES {
        let home = seed.home(mode);
        for &(query, id) in cases {
            let out = search(&home, mode, query, &[]);
            assert!(ids(&out).contains(&id), "{mode} {query:?}: {out}");
        }
        // Text without a word character cannot match a word index.
        if mode == "unicode61" {
            for query in ["(", "*", "\"(\""] {
                assert_eq!(ids(&search(&home, mode, query, &[])), Vec::<i64>::new());
            }
        }
    }
}

#[test]
fn a_path_is_hit_first_and_a_similar_path_is_not_hit() {
    let home_per_mode = MODES.map(|mode| (mode, corpus_seed(QUERY_ROWS).home(mode)));
    for (mode, home) in &home_per_mode {
        let out = search(home, mode, "src/store/mod.rs", &[]);
        assert_eq!(ids(&out), vec![2], "{mode}: {out}");
        assert_eq!(snippet(&out, 2), "Edited «src/store/mod.rs» to open the database in WAL mode");
        let out = search(home, mode, "src/store", &[]);
        assert_eq!(id_set(&out), set(&[2, 3]), "{mode}: {out}");
        // Pasted with a line number: the path is found, the number kept as a term of its own.
        let out = search(home, mode, "`src/store/mod.rs:120`", &[]);
        assert_eq!(ids(&out), vec![2], "{mode}: {out}");
    }
}

#[test]
fn a_quoted_phrase_matches_as_written_and_loose_words_in_any_order() {
    for mode in MODES {
        let home = corpus_seed(QUERY_ROWS).home(mode);
        // Row 6 has both words, apart and in the other order.
        let out = search(&home, mode, "\"exact phrase\"", &[]);
        assert_eq!(ids(&out), vec![5], "{mode}: {out}");
        assert_eq!(snippet(&out, 5), "the log says «exact phrase» here");
        let out = search(&home, mode, "exact phrase", &[]);
        assert_every_term_first(&out, &set(&[5, 6]), 2, mode);
        // Row 9 has these words in another order; row 12 is private; row 2
        // has only "database", so it follows.
        let out = search(&home, mode, "database is locked", &[]);
        assert_every_term_first(&out, &set(&[1, 9]), 2, mode);
        assert!(!ids(&out).contains(&12), "{mode}: {out}");
        let out = search(&home, mode, "locked database", &[]);
        assert_every_term_first(&out, &set(&[1, 9]), 2, mode);
        // A word and a phrase together.
        let out = search(&home, mode, "journal \"database is locked\"", &[]);
        assert_eq!(ids(&out), vec![1], "{mode}: {out}");
    }
}

#[test]
fn terms_that_contain_each_other_all_match() {
    for mode in MODES {
        let home = corpus_seed(QUERY_ROWS).home(mode);
        let out = search(&home, mode, "store src/store/mod.rs", &[]);
        assert_every_term_first(&out, &set(&[2]), 2, mode);
        let out = search(&home, mode, "database data", &[]);
        assert_every_term_first(&out, &set(&[1, 2, 9]), 2, mode);
        let out = search(&home, mode, "locked \"database is locked\"", &[]);
        assert_eq!(ids(&out), vec![1], "{mode}: {out}");
    }
}

// ---------------------------------------------------------------------------
// Short terms

const SHORT_ROWS: &[Row] = &[
    (1, "启用数据缓存以后速度变快", false),
    (2, "数据库连接失败", false),
    (3, "缓慢的查询", false),
    (4, "the db id is 42", false),
    (5, "DB_PATH points at trae.db", false),
    (6, "ordinary text without them", false),
    (7, "Paid invoice", false),
    (8, "db id 数据缓存 缓 secret", true),
];

#[test]
fn short_terms_are_found_as_substrings() {
    let cases: &[(&str, &[i64])] = &[
        ("缓存", &[1]),
        ("数据", &[1, 2]),
        ("据缓", &[1]),
        ("缓", &[1, 3]),
        ("数", &[1, 2]),
        // 数据库 (database) is a synonym of db: it holds the term too.
        ("db", &[2, 4, 5]),
        ("DB", &[2, 4, 5]),
        ("id", &[4, 7]),
        ("42", &[4]),
        ("zq", &[]),
        ("嗯", &[]),
    ];
    // Several terms: (query, rows holding every term, how many terms).
    let several: &[(&str, &[i64], usize)] = &[("db id", &[4], 2), ("数据库 数据", &[2], 2), ("缓存 db", &[], 2)];
    for mode in SUBSTRING_MODES {
        let home = corpus_seed(SHORT_ROWS).home(mode);
        for &(query, expected) in cases {
            let out = search(&home, mode, query, &[]);
            assert_eq!(id_set(&out), set(expected), "{mode} {query:?}: {out}");
        }
        for &(query, expected, terms) in several {
            let out = search(&home, mode, query, &[]);
            assert_every_term_first(&out, &set(expected), terms, &format!("{mode} {query:?}"));
        }
        // The term as asked ranks before its synonym.
        assert_eq!(ids(&search(&home, mode, "db", &[])).last(), Some(&2), "{mode}");
    }
}

/// An index made before the `trae_mem` tokenizer has SQLite's plain trigram
/// tokenizer, which cannot find short terms. A hook keeps using it (a
/// rebuild could outlast its deadline); the next command rebuilds it.
#[test]
fn an_index_from_an_older_trae_mem_is_rebuilt_by_a_command_not_a_hook() {
    let home = corpus_seed(SHORT_ROWS).home("like");
    home.db()
        .execute_batch(
            "CREATE VIEW observations_fts_src AS
                 SELECT id, content || '  ' AS content FROM observations WHERE private = 0;
             CREATE VIRTUAL TABLE observations_fts USING fts5(
                 content, content='observations_fts_src', content_rowid='id', tokenize='trigram', detail='none');
             CREATE VIRTUAL TABLE observations_fts_vocab USING fts5vocab(observations_fts, row);
             INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');
             UPDATE store_meta SET value = 'trigram' WHERE key = 'index_mode';",
        )
        .unwrap();
    let definition = || -> String {
        home.db().query_row("SELECT sql FROM sqlite_schema WHERE name = 'observations_fts'", [], |r| r.get(0)).unwrap()
    };

    let prompt = json!({"session_id": "old-index", "cwd": home.work(), "hook_event_name": "UserPromptSubmit",
                        "prompt": "数据缓存 is slow again"});
    home.run(&["hook"], Some(prompt.to_string().as_bytes())).ok();
    assert!(definition().contains("tokenize='trigram'"), "{}", definition());

    let out = home.run(&["search", "--json", "--", "缓存"], None).ok().json();
    assert_eq!(out["index"], "trigram", "{out}");
    assert_eq!(id_set(&out).len(), 2, "the seeded row and the hook's prompt: {out}");
    assert!(id_set(&out).contains(&1), "{out}");
    assert!(definition().contains("tokenize='trae_mem skip_json_keys project_marks'"), "{}", definition());
}

// ---------------------------------------------------------------------------
// Snippets

#[test]
fn snippets_mark_every_match() {
    let long = format!("{} needle {}", "x".repeat(300), "y".repeat(300));
    let seed = corpus_seed(&[
        (1, "error: database is locked while writing the journal", false),
        (2, "Database and database", false),
        (3, "启用数据缓存以后", false),
        (4, "缓存 失效", false),
    ])
    .obs(5, S1, T0 + 5 * MINUTE, &long);
    for mode in MODES {
        let home = seed.home(mode);
        let out = search(&home, mode, "database is locked", &[]);
        // Stop words are not looked for, so not marked.
        assert_eq!(snippet(&out, 1), "error: «database» is «locked» while writing the journal");
        // Case is kept, matches are found ignoring it.
        let out = search(&home, mode, "DATABASE", &[]);
        assert_eq!(snippet(&out, 2), "«Database» and «database»");
        let out = search(&home, mode, "缓存", &[]);
        assert_eq!(snippet(&out, 4), "«缓存» 失效");
        if mode != "unicode61" {
            assert_eq!(snippet(&out, 3), "启用数据«缓存»以后");
        }
        // A long text is cut around the first match.
        let out = search(&home, mode, "needle", &[]);
        let cut = snippet(&out, 5);
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert!(cut.contains(" «needle» "), "{cut}");
        assert!(cut.chars().count() < 200, "{cut}");
    }
}

// ---------------------------------------------------------------------------
// Ranking

#[test]
fn ranking_prefers_more_occurrences_and_shorter_text() {
    let long = format!("the cache was mentioned once in this long line: {}", "lorem ipsum dolor sit amet ".repeat(15));
    let seed = Seed::new()
        .session(S1, "/proj/alpha", T0, None)
        .obs(1, S1, T0 + MINUTE, &long)
        .obs(2, S1, T0 + 2 * MINUTE, "cache cache cache: the cache is hot")
        .obs(3, S1, T0 + 3 * MINUTE, "cache warmed");
    for mode in MODES {
        let home = seed.home(mode);
        let out = search(&home, mode, "cache", &[]);
        assert_eq!(ids(&out), vec![2, 3, 1], "{mode}: {out}");
        let scores: Vec<f64> = out["hits"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
        assert!(scores[0] > scores[1] && scores[1] > scores[2] && scores[2] > 0.0, "{mode}: {scores:?}");
    }
}

/// Candidates are chosen by relevance over the whole index, not by
/// recency: an old row holding three of the query's four words is found
/// though each word alone is in over a thousand newer rows, and no row
/// holds all four.
#[test]
fn an_old_row_holding_most_terms_is_found_among_many_newer_rows_holding_one() {
    let words = ["scheduler", "backpressure", "watermark", "throttling"];
    let mut seed = Seed::new().session(S1, "/proj/alpha", T0, None).obs(
        1,
        S1,
        T0,
        "Fixed: the scheduler now applies backpressure once the queue passes its watermark.",
    );
    let mut id = 2;
    for word in words {
        for n in 0..1100 {
            seed = seed.obs(id, S1, T0 + id * MINUTE, &format!("{word} line {n}"));
            id += 1;
        }
    }
    for mode in ["trigram", "unicode61"] {
        let home = seed.home(mode);
        let out = search(&home, mode, "scheduler backpressure watermark throttling", &["--limit", "5"]);
        assert_eq!(ids(&out).first(), Some(&1), "{mode}: {out}");
    }
}

// ---------------------------------------------------------------------------
// Filters

/// Two sessions in two projects; every row mentions "build".
fn filter_seed() -> Seed {
    Seed::new()
        .session(S1, "/proj/alpha", T0, Some(T0 + 30 * MINUTE))
        .obs(1, S1, T0, "build the project")
        .set("kind", json!("user"))
        .set("tool", Value::Null)
        .obs(2, S1, T0 + 10 * MINUTE, "cargo build --release")
        .obs(3, S1, T0 + 20 * MINUTE, "edit build.rs for the build")
        .set("tool", json!("Edit"))
        .session(S2, "/proj/beta", T0 + HOUR, None)
        .obs(4, S2, T0 + 60 * MINUTE, "build again")
        .set("kind", json!("user"))
        .set("tool", Value::Null)
        .obs(5, S2, T0 + 70 * MINUTE, "build failed: see the log")
        .obs(6, S2, T0 + 80 * MINUTE, "build notes")
        .set("kind", json!("note"))
        .set("tool", Value::Null)
}

#[test]
fn each_filter_narrows_search_and_listing() {
    let cases: &[(&[&str], &[i64])] = &[
        (&[], &[1, 2, 3, 4, 5, 6]),
        (&["--project", "/proj/alpha"], &[1, 2, 3]),
        (&["--project", "/proj/beta"], &[4, 5, 6]),
        (&["--project", "/proj/none"], &[]),
        (&["--session", S2], &[4, 5, 6]),
        (&["--kind", "user"], &[1, 4]),
        (&["--tool", "Bash"], &[2, 5]),
        (&["--tool", "Edit"], &[3]),
        // --since is inclusive, --until exclusive.
        (&["--since", "2026-11-30T00:10:00Z"], &[2, 3, 4, 5, 6]),
        (&["--until", "2026-11-30T01:10:00Z"], &[1, 2, 3, 4]),
        (&["--since", "2026-11-30T00:10:00Z", "--until", "2026-11-30T01:10:00Z"], &[2, 3, 4]),
        // The same instant written with an offset.
        (&["--since", "2026-11-30T09:10:00+09:00"], &[2, 3, 4, 5, 6]),
        (&["--project", "/proj/alpha", "--tool", "Bash"], &[2]),
        (&["--session", S1, "--kind", "user"], &[1]),
    ];
    for mode in MODES {
        let home = filter_seed().home(mode);
        for &(flags, expected) in cases {
            let out = search(&home, mode, "build", flags);
            assert_eq!(id_set(&out), set(expected), "{mode} build {flags:?}: {out}");
            // Without a query: the same rows, newest first.
            let out = search(&home, mode, "", flags);
            let newest_first: Vec<i64> = expected.iter().rev().copied().collect();
            assert_eq!(ids(&out), newest_first, "{mode} {flags:?}: {out}");
        }
        let out = search(&home, mode, "build", &["--project", "/proj/beta"]);
        for hit in out["hits"].as_array().unwrap() {
            assert_eq!(hit["project"], "/proj/beta");
            assert_eq!(hit["session_id"], S2);
        }
    }
}

/// A search of one project weighs each word by how rare it is there: a word
/// that fills the other projects but is rare in this one says the most
/// about this one's rows. Words are counted in the project by the mark a
/// trigram index files each row under.
#[test]
fn a_search_of_one_project_weighs_words_by_their_rarity_in_it() {
    let mut seed = Seed::new().session(S1, "/proj/alpha", T0, None).session(S2, "/proj/beta", T0, None).obs(
        1,
        S1,
        T0,
        "invoice rounding fixed",
    );
    for n in 2..=21 {
        seed = seed.obs(n, S1, T0 + n * MINUTE, &format!("checkout page {n} restyled"));
    }
    for n in 22..=121 {
        seed = seed.obs(n, S2, T0 + n * MINUTE, &format!("invoice batch {n} exported"));
    }
    let home = seed.home("trigram");
    let alpha = search(&home, "trigram", "checkout invoice", &["--project", "/proj/alpha"]);
    assert_eq!(ids(&alpha).first(), Some(&1), "invoice is rare in alpha: {alpha}");
    // Over every project, invoice is the common word.
    let everywhere = search(&home, "trigram", "checkout invoice", &[]);
    assert!((2..=21).contains(&ids(&everywhere)[0]), "checkout is rarer everywhere: {everywhere}");
}

#[test]
fn limit_and_offset_page_through_disjoint_results() {
    for mode in MODES {
        let home = filter_seed().home(mode);
        for query in ["build", ""] {
            let all = ids(&search(&home, mode, query, &[]));
            assert_eq!(all.len(), 6, "{mode} {query:?}");
            let mut paged = Vec::new();
            for offset in ["0", "2", "4"] {
                let page = ids(&search(&home, mode, query, &["--limit", "2", "--offset", offset]));
                assert_eq!(page.len(), 2, "{mode} {query:?} offset {offset}");
                assert!(page.iter().all(|id| !paged.contains(id)), "{mode} {query:?}: page {page:?} repeats {paged:?}");
                paged.extend(page);
            }
            assert_eq!(paged, all, "{mode} {query:?}");
            let past = search(&home, mode, query, &["--limit", "2", "--offset", "6"]);
            assert_eq!(ids(&past), Vec::<i64>::new(), "{mode} {query:?}");
            let one = search(&home, mode, query, &["--limit", "1"]);
            assert_eq!(ids(&one), all[..1], "{mode} {query:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Privacy

fn private_seed() -> Seed {
    Seed::new()
        .session(S1, "/proj/alpha", T0, None)
        .obs(1, S1, T0, "database opened")
        .obs(2, S1, T0 + MINUTE, "password hunter2 for the database")
        .private()
        .obs(3, S1, T0 + 2 * MINUTE, "database closed")
}

/// Asserts that search never returns the private row, whatever the query.
fn assert_private_row_unsearchable(home: &Home, mode: &str) {
    for query in ["hunter2", "password", "hu", "h", "\"for the database\""] {
        let out = search(home, mode, query, &[]);
        assert_eq!(ids(&out), Vec::<i64>::new(), "{mode} {query:?}: {out}");
    }
    let out = search(home, mode, "database", &[]);
    assert_eq!(id_set(&out), set(&[1, 3]), "{mode}: {out}");
    let out = search(home, mode, "", &[]);
    assert_eq!(ids(&out), vec![3, 1], "{mode}: {out}");
}

#[test]
fn private_rows_never_come_back_from_search() {
    for mode in MODES {
        let home = private_seed().home(mode);
        assert_private_row_unsearchable(&home, mode);
    }
    // Nor after the index is rebuilt in another mode.
    let home = private_seed().home("like");
    for mode in ["trigram", "unicode61", "trigram"] {
        assert_private_row_unsearchable(&home, mode);
    }
    // The trigram index holds none of its text.
    let db = home.db();
    db.execute_batch("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, observations_fts, row)").unwrap();
    let in_index = |terms: &str| -> i64 {
        db.query_row(&format!("SELECT count(*) FROM temp.vocab WHERE term IN ({terms})"), [], |r| r.get(0)).unwrap()
    };
    assert_eq!(in_index("'hun', 'ter', 'pas'"), 0);
    assert_eq!(in_index("'dat', 'ope', 'clo'"), 3, "the public rows' trigrams are there");
}

#[test]
fn private_rows_show_as_placeholders_in_timeline_and_show() {
    let home = private_seed().home("trigram");
    let expected = json!([
        {"id": 1, "session_id": S1, "ts": T0, "kind": "tool", "tool": "Bash",
         "content": "database opened", "private": false, "tags": []},
        {"id": 2, "session_id": S1, "ts": T0 + MINUTE, "kind": "tool", "tool": "Bash",
         "content": "[PRIVATE]", "private": true, "tags": []},
        {"id": 3, "session_id": S1, "ts": T0 + 2 * MINUTE, "kind": "tool", "tool": "Bash",
         "content": "database closed", "private": false, "tags": []},
    ]);
    for anchor in ["1", "2"] {
        let run = home.run(&["timeline", anchor, "--json"], None).ok();
        assert_eq!(run.json()["observations"], expected, "{run}");
        assert!(!run.stdout.contains("hunter2"), "{run}");
    }
    let run = home.run(&["show", S1, "--json"], None).ok();
    assert_eq!(run.json()["observations"], expected, "{run}");
    assert!(!run.stdout.contains("hunter2"), "{run}");
    let run = home.run(&["show", S1], None).ok();
    assert!(run.stdout.contains("[PRIVATE]"), "{run}");
    assert!(!run.stdout.contains("hunter2"), "{run}");
}

#[test]
fn a_limit_of_zero_is_refused_rather_than_answered_with_nothing() {
    let home = filter_seed().home("trigram");
    let run = home.run(&["search", "build", "--limit", "0"], None).code(2);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("--limit") && run.stderr.contains("it must be at least 1"), "{run}");
}

#[test]
fn a_kind_no_observation_has_is_named_as_a_typo_not_answered_with_nothing() {
    let home = filter_seed().home("trigram");
    let run = home.run(&["search", "build", "--kind", "bogus"], None).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert!(run.stderr.contains("\"bogus\"") && run.stderr.contains("user, tool"), "{run}");
    // A kind that exists, built in or a plugin's, is a filter as before.
    home.run(&["search", "build", "--kind", "tool", "--json"], None).ok();
}
