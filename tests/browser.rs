//! The viewer in a real headless Chromium, driven by Playwright for Python
//! (`tests/viewer_browser.py`): the live page, search, a session, forget,
//! and the README's screenshot, taken from the demo's data.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::serve::Viewer;
use crate::util::{Home, run_command, skip};

/// Python with Playwright, and a Chromium to launch; or `None` with a loud
/// skip. Under `CI=true` a missing part is a failure.
fn browser() -> Option<(String, PathBuf)> {
    let python = std::env::var("TRAE_MEM_TEST_PYTHON").ok();
    let chromium = std::env::var_os("TRAE_MEM_TEST_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium-headless-shell", "/usr/bin/chromium"].map(PathBuf::from))
        .find(|p| p.exists());
    let has_playwright = python.as_ref().is_some_and(|python| {
        std::process::Command::new(python)
            .args(["-c", "import playwright.sync_api"])
            .status()
            .is_ok_and(|s| s.success())
    });
    let missing = match (&python, &chromium, has_playwright) {
        (None, ..) => "TRAE_MEM_TEST_PYTHON is unset: run scripts/test, which installs Playwright into .venv",
        (_, None, _) => "no Chromium: install Debian's chromium-headless-shell (scripts/test does, as root)",
        (_, _, false) => "Playwright for Python is not installed in TRAE_MEM_TEST_PYTHON's environment",
        _ => return python.zip(chromium),
    };
    skip("the browser tests", missing);
    None
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/viewer_browser.py")
}

/// The steps the script printed, by name.
fn steps(stdout: &str) -> Vec<Value> {
    stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

fn step<'a>(steps: &'a [Value], name: &str) -> &'a Value {
    steps.iter().find(|s| s["step"] == name).unwrap_or_else(|| panic!("no step {name} in {steps:?}"))
}

#[test]
fn a_browser_sees_an_observation_arrive_finds_it_opens_its_session_and_forgets_it() {
    let Some((python, chromium)) = browser() else { return };
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let project = home.work().canonicalize().unwrap();
    let mut command = std::process::Command::new(&python);
    command
        .arg(script())
        .args(["flow", &format!("http://{}/", viewer.addr), crate::util::bin()])
        .arg(&project)
        .arg(&chromium)
        .env("TRAE_MEM_HOME", home.home());
    let run = run_command(command, &["(python)", "tests/viewer_browser.py", "flow"], None);
    assert_eq!(run.code, 0, "{run}");
    let steps = steps(&run.stdout);
    assert_eq!(steps.last().unwrap()["step"], "done", "{run}");

    let live = step(&steps, "live");
    eprintln!("a new observation showed on the live page {} s after its hook exited", live["seconds"]);
    assert!(live["cards"].as_u64().unwrap() >= 1, "{live}");
    assert_eq!(step(&steps, "paused")["held_back"], true, "a paused feed showed a new card");

    let search = step(&steps, "search");
    assert_eq!(search["marked"], serde_json::json!(["quokka"]), "{search}");
    assert!(
        search["url"].as_str().unwrap().ends_with("/search?q=quokka"),
        "search as you type keeps the URL: {search}"
    );
    let reference = search["reference"].as_str().unwrap();
    let id: i64 = reference.trim_start_matches('#').parse().unwrap_or_else(|_| panic!("{search}"));
    assert_eq!(search["session_has_it"], true, "{search}");
    assert!(search["forgotten"].as_str().unwrap().contains("1 observation(s) forgotten"), "{search}");
    assert_eq!(search["hits_after"], 0, "{search}");
    let gone: i64 = home.db().query_row("SELECT count(*) FROM observations WHERE id = ?1", [id], |r| r.get(0)).unwrap();
    assert_eq!(gone, 0, "the forgotten row is still stored");

    let hostile = step(&steps, "hostile");
    assert!(
        hostile["text"].as_str().unwrap().contains("<img src=x onerror=alert(1)><script>alert(2)</script>"),
        "{hostile}"
    );
    assert_eq!(hostile["dialogs"], serde_json::json!([]), "hostile text ran as script: {hostile}");
    assert_eq!(hostile["console_errors"], serde_json::json!([]), "{hostile}");
}

/// Whether a font for Chinese is installed (`fc-list :lang=zh` names one).
fn cjk_font() -> bool {
    std::process::Command::new("fc-list")
        .arg(":lang=zh")
        .output()
        .is_ok_and(|out| out.status.success() && !out.stdout.trim_ascii().is_empty())
}

/// The README's picture of the viewer, from the demo's data: a search in
/// English and in Chinese, with a summary card for each, its words marked.
/// Written to `docs/viewer.png` when `TRAE_MEM_SCREENSHOT=1` (quantized by
/// pngquant, which must be installed then), and to the test's temporary
/// home otherwise, so that a test run leaves the tree clean. Without a CJK
/// font its Chinese would show as boxes, so it is not taken at all.
#[test]
fn the_readme_screenshot_is_taken_from_the_demo() {
    let Some((python, chromium)) = browser() else { return };
    if !cjk_font() {
        skip(
            "the README screenshot (not retaken)",
            "no CJK font (`fc-list :lang=zh` names none), so its Chinese would show as boxes: \
             install fonts-noto-cjk (scripts/test does, as root)",
        );
        return;
    }
    let home = Home::new();
    home.run(&["--home", home.home().to_str().unwrap(), "demo"], None).ok();
    let viewer = Viewer::start(&home);
    let out = match std::env::var("TRAE_MEM_SCREENSHOT").as_deref() {
        Ok("1") => Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/viewer.png"),
        _ => home.home().join("viewer.png"),
    };
    let mut command = std::process::Command::new(&python);
    command
        .arg(script())
        .args(["screenshot", &format!("http://{}/", viewer.addr)])
        .arg(&chromium)
        .arg(&out)
        .env("TRAE_MEM_HOME", home.home());
    let run = run_command(command, &["(python)", "tests/viewer_browser.py", "screenshot"], None);
    assert_eq!(run.code, 0, "{run}");
    let png = std::fs::read(&out).unwrap();
    assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{} bytes", png.len());

    // The picture shows a summary card for each language, its words marked
    // as an observation's are.
    let steps = steps(&run.stdout);
    let shot = step(&steps, "screenshot");
    let marks: Vec<Vec<&str>> = shot["summary_marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|card| card.as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect())
        .collect();
    assert!(marks.len() >= 2, "fewer than two summary cards in the picture: {shot}");
    for word in ["database", "缓存"] {
        assert!(marks.iter().any(|card| card.contains(&word)), "no summary card marks {word}: {shot}");
    }
    let retaken = out.starts_with(env!("CARGO_MANIFEST_DIR"));
    assert!(
        !retaken || shot["quantized"] == true,
        "docs/viewer.png was written as Chromium took it ({} bytes): retake it with pngquant installed, \
         which quantizes it to about half",
        png.len()
    );
}
