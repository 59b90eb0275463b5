//! The store through the command line: search, timeline, sessions, show,
//! export and import.

use crate::util::Home;

#[test]
fn an_empty_home_has_no_sessions() {
    let home = Home::new();
    let run = home.run(&["sessions", "--json"], None).ok();
    assert_eq!(run.json(), serde_json::json!([]));
}
