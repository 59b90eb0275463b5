//! `trae-mem timeline`: the rows around an anchor, in time then id order.

use crate::seed::{MINUTE, S1, S2, Seed, T0};
use crate::util::Home;

/// Session S1 around anchor #5 at T0+30m; S2 has a row at the same time.
fn timeline_seed() -> Seed {
    let anchor = T0 + 30 * MINUTE;
    Seed::new()
        .session(S1, "/proj/alpha", T0, None)
        .obs(1, S1, T0, "first row of the session")
        .obs(2, S1, anchor - 10 * MINUTE - 1, "just before the window")
        .obs(3, S1, anchor - 10 * MINUTE, "on the window's start")
        .obs(9, S1, anchor - 5 * MINUTE, "later id, earlier time")
        .obs(5, S1, anchor, "the anchor")
        .obs(12, S1, anchor + MINUTE, "a private row")
        .private()
        // Same time, written in the other order.
        .obs(7, S1, anchor + 5 * MINUTE, "same time, id 7")
        .obs(6, S1, anchor + 5 * MINUTE, "same time, id 6")
        .obs(8, S1, anchor + 10 * MINUTE, "on the window's end")
        .obs(10, S1, anchor + 10 * MINUTE + 1, "just after the window")
        .obs(11, S1, T0 + 60 * MINUTE, "last row of the session")
        .session(S2, "/proj/alpha", T0, None)
        .obs(20, S2, anchor, "another session, same time")
}

/// The ids of `timeline ID --window MINUTES --json`, after checking its header.
fn timeline(home: &Home, id: i64, window: i64) -> Vec<i64> {
    let (id_arg, window_arg) = (id.to_string(), window.to_string());
    let run = home.run(&["timeline", &id_arg, "--window", &window_arg, "--json"], None).ok();
    let out = run.json();
    assert_eq!(out["anchor"], id, "{run}");
    assert_eq!(out["session_id"], S1, "{run}");
    assert_eq!(out["window_minutes"], window, "{run}");
    out["observations"].as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect()
}

#[test]
fn timeline_includes_its_window_edges_in_time_then_id_order() {
    let home = timeline_seed().home("trigram");
    assert_eq!(timeline(&home, 5, 10), vec![3, 9, 5, 12, 6, 7, 8]);
    // The default window is 10 minutes.
    let run = home.run(&["timeline", "5", "--json"], None).ok();
    let default: Vec<i64> =
        run.json()["observations"].as_array().unwrap().iter().map(|o| o["id"].as_i64().unwrap()).collect();
    assert_eq!(default, vec![3, 9, 5, 12, 6, 7, 8], "{run}");
    // A zero window: only rows at the very same time.
    assert_eq!(timeline(&home, 7, 0), vec![6, 7]);
    assert_eq!(timeline(&home, 6, 0), vec![6, 7]);
}

#[test]
fn timeline_anchored_at_the_first_and_last_row_of_a_session() {
    let home = timeline_seed().home("trigram");
    assert_eq!(timeline(&home, 1, 30), vec![1, 2, 3, 9, 5]);
    assert_eq!(timeline(&home, 11, 30), vec![5, 12, 6, 7, 8, 10, 11]);
    assert_eq!(timeline(&home, 1, 600), vec![1, 2, 3, 9, 5, 12, 6, 7, 8, 10, 11]);
}

#[test]
fn timeline_of_an_unknown_id_fails_clearly() {
    let home = timeline_seed().home("trigram");
    let run = home.run(&["timeline", "999", "--json"], None).code(1);
    assert!(run.stdout.is_empty(), "{run}");
    assert_eq!(run.stderr, "trae-mem: no observation has id 999; `trae-mem search` shows ids\n", "{run}");
}

#[test]
fn an_id_is_taken_as_search_prints_it() {
    let home = timeline_seed().home("trigram");
    let plain = home.run(&["timeline", "5", "--json"], None).ok();
    let marked = home.run(&["timeline", "#5", "--json"], None).ok();
    assert_eq!(marked.json(), plain.json(), "{marked}");
    let run = home.run(&["timeline", "#five"], None).code(2);
    assert!(run.stderr.contains("\"#five\" is not an observation id (a number, such as 42 or #42)"), "{run}");
}
