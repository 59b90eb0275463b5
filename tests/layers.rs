//! The library's layers, read off its own source: imports point one way
//! (front ends → ingest, recall, forget, sync → summarize, plugins →
//! store), with no loop between modules or between the files of one
//! module, and the few rules the layers rest on hold.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the sibling modules it names.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// A source file without its comments and its unit tests, which may reach
/// anywhere.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines().map(|line| line.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// The names `prefix` reaches in `code`: `prefix::a`, `prefix::{a, b::c}`.
fn named_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident =
        |text: &str| -> String { text.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        match rest.strip_prefix('{') {
            Some(group) => names.extend(group[..group.find('}').unwrap_or(group.len())].split(',').map(ident)),
            None => {
                names.insert(ident(rest));
            }
        }
    }
    names.remove("");
    names
}

/// The library's top-level modules and the others each imports.
fn top_level() -> Graph {
    let modules: BTreeSet<String> = std::fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|name| name != "main" && name != "lib" && name != "cli")
        .collect();
    let mut graph = Graph::new();
    for module in &modules {
        let dir = src().join(module);
        let sources = if dir.is_dir() { files(&dir) } else { vec![src().join(format!("{module}.rs"))] };
        let uses = graph.entry(module.clone()).or_default();
        for file in sources {
            let named = named_after(&code(&file), "crate::");
            uses.extend(named.into_iter().filter(|n| n != module && modules.contains(n)));
        }
    }
    graph
}

/// The files of module `dir` (`mod.rs` as `mod`) and the siblings each imports.
fn inside(module: &str) -> Graph {
    let dir = src().join(module);
    let names: BTreeSet<String> = files(&dir).iter().filter(|p| p.parent() == Some(&dir)).map(|p| stem(p)).collect();
    let mut graph = Graph::new();
    for file in files(&dir).iter().filter(|p| p.parent() == Some(&dir)) {
        let code = code(file);
        let mut named = named_after(&code, "super::");
        named.extend(named_after(&code, &format!("crate::{module}::")));
        let me = stem(file);
        named.retain(|n| n != &me && n != "mod" && names.contains(n));
        graph.insert(me, named);
    }
    graph
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// A loop in `graph`, as the path that closes it, if there is one.
fn a_loop(graph: &Graph) -> Option<Vec<String>> {
    fn visit(graph: &Graph, node: &str, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

#[test]
fn the_library_s_modules_import_one_another_without_a_loop() {
    let graph = top_level();
    assert!(graph.len() > 10 && graph["ingest"].contains("store"), "the graph was not read: {graph:?}");
    assert_eq!(a_loop(&graph), None, "{graph:#?}");
    for module in ["store", "ingest", "recall", "forget"] {
        assert_eq!(a_loop(&inside(module)), None, "inside {module}: {:#?}", inside(module));
    }
}

#[test]
fn the_store_is_the_bottom_layer_and_ingest_only_records_and_answers() {
    let graph = top_level();
    for above in ["recall", "ingest", "forget", "sync", "summarize", "plugins"] {
        assert!(!graph["store"].contains(above), "store imports {above}: {:?}", graph["store"]);
    }
    for after in ["forget", "sync", "bulk", "after_delivery"] {
        assert!(!graph["ingest"].contains(after), "ingest imports {after}: {:?}", graph["ingest"]);
    }
    assert!(!graph["forget"].contains("ingest"), "forget imports ingest: {:?}", graph["forget"]);
    assert!(!graph["recall"].contains("ingest"), "recall imports ingest: {:?}", graph["recall"]);
}

#[test]
fn every_bulk_write_goes_through_one_function() {
    let callers: Vec<String> = files(&src())
        .into_iter()
        .filter(|file| code(file).contains(".take_in("))
        .map(|file| file.strip_prefix(src()).unwrap().display().to_string())
        .collect();
    assert_eq!(callers, ["bulk.rs"], "only bulk::take_in calls Store::take_in");
    for front in ["cli/import.rs", "sync/mod.rs"] {
        assert!(code(&src().join(front)).contains("bulk::take_in("), "{front} does not use bulk::take_in");
    }
}

#[test]
fn names_that_decide_control_flow_are_types_not_strings() {
    // Outside the one place each name is parsed, only comments and sample
    // text may spell it (`code` drops comments and unit tests).
    let clients = ["\"claude-code\"", "\"claude\"", "\"cursor\"", "\"codex\"", "\"gemini\"", "\"cline\""];
    for file in files(&src()) {
        let name = file.strip_prefix(src()).unwrap().display().to_string();
        let code = code(&file);
        if name != "config.rs" {
            assert!(!code.contains("\"builtin\""), "{name} compares with \"builtin\": use config::Summarizer");
        }
        if name != "client.rs" {
            for client in clients {
                assert!(!code.contains(client), "{name} names the client {client}: use client::Client");
            }
        }
        assert!(!code.contains("index_mode()?"), "{name} parses the index mode again: use config.search.index");
    }
}

/// The store's queries: the methods of `Store` and `Writer` kept to the
/// library (`pub(crate)`), and the raw connection.
fn store_queries() -> BTreeSet<String> {
    let mut queries = BTreeSet::from(["conn".to_owned()]);
    for file in files(&src().join("store")) {
        let mut in_store = false;
        for line in code(&file).lines() {
            if let Some(rest) = line.strip_prefix("impl") {
                // `impl Store`, `impl Writer<'_>`, `impl<'a> Writer<'a>`
                let rest = rest.strip_prefix('<').map_or(rest, |r| &r[r.find('>').map_or(0, |at| at + 1)..]);
                in_store = rest.trim_start().starts_with("Store ") || rest.trim_start().starts_with("Writer");
            } else if in_store && let Some(rest) = line.strip_prefix("    pub(crate) fn ") {
                queries.insert(rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
        }
    }
    queries
}

#[test]
fn the_front_ends_read_through_recall_and_call_no_store_query() {
    let queries = store_queries();
    for expected in ["timeline", "observations_by_id", "session_detail", "stats", "put_summary"] {
        assert!(queries.contains(expected), "the store's queries were not read: {queries:?}");
    }
    let mut calls = Vec::new();
    for front in ["cli", "mcp", "serve"] {
        for file in files(&src().join(front)) {
            let code = code(&file);
            for query in &queries {
                for (at, _) in code.match_indices(&format!(".{query}(")) {
                    // The receiver: `store`, `store()` or `memory.store()`.
                    let before = code[..at].trim_end();
                    if before.ends_with("store") || before.ends_with("store()") {
                        calls.push(format!("{}: .{query}(", file.strip_prefix(src()).unwrap().display()));
                    }
                }
            }
        }
    }
    assert!(calls.is_empty(), "front ends call store queries (read through recall::Reader): {calls:#?}");
}
