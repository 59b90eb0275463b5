//! `trae-mem serve`, over real HTTP: the security checks (Host, token,
//! origin, escaping, private rows), forget, the live stream while hooks
//! write, and a new empty home. The browser tests are in `browser.rs`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::{Home, claude_code_hook};

/// A running viewer, stopped when dropped.
pub struct Viewer {
    child: Child,
    /// `127.0.0.1:port`
    pub addr: String,
    /// What it prints after its URL, line by line.
    banner: std::sync::Mutex<std::sync::mpsc::Receiver<String>>,
    stderr: std::path::PathBuf,
}

/// An HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl Viewer {
    /// Starts `trae-mem serve --port 0` in `home` and waits for its URL.
    pub fn start(home: &Home) -> Self {
        Self::start_with(home, &["--port", "0"])
    }

    /// Starts `trae-mem serve ARGS`; its stderr goes to `stderr()`.
    pub fn start_with(home: &Home, args: &[&str]) -> Self {
        let stderr = std::fs::File::create(home.home().join("serve.stderr")).unwrap();
        let mut child = home
            .command(&[&["serve"], args].concat())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn trae-mem serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().expect("serve printed nothing").unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {first:?}"));
        let addr = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
        let (sender, banner) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let _ = sender.send(line);
            }
        });
        Self { child, addr, banner: std::sync::Mutex::new(banner), stderr: home.home().join("serve.stderr") }
    }

    /// The next line it printed after its URL, waiting for it as long as
    /// a loaded machine may take; None when it printed no more.
    pub fn next_banner_line(&self) -> Option<String> {
        self.banner.lock().unwrap().recv_timeout(Duration::from_secs(10)).ok()
    }

    /// What it printed on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Sends `request` (headers and body; `Host` and `Connection` are
    /// added unless given) and reads the whole response.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Response {
        let mut stream = TcpStream::connect(&self.addr).expect("connect to the viewer");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut request = format!("{method} {path} HTTP/1.1\r\n");
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Connection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read the response");
        parse(&String::from_utf8_lossy(&raw))
    }

    pub fn get(&self, path: &str) -> Response {
        self.send("GET", path, &[], "")
    }

    /// A page that must answer 200.
    #[track_caller]
    pub fn page(&self, path: &str) -> String {
        let response = self.get(path);
        assert_eq!(response.status, 200, "GET {path}: {response:?}");
        response.body
    }

    /// POSTs a form as the viewer's own page does: from its origin.
    pub fn post_form(&self, path: &str, form: &str, origin: Option<&str>) -> Response {
        let own = format!("http://{}", self.addr);
        let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
        if let Some(origin) = origin.or(Some(&own)).filter(|o| !o.is_empty()) {
            headers.push(("Origin", origin));
        }
        self.send("POST", path, &headers, form)
    }

    /// Opens the live stream; `next_event` reads from it.
    pub fn events(&self, query: &str) -> BufReader<TcpStream> {
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        let request =
            format!("GET /events{query} HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n", self.addr);
        stream.write_all(request.as_bytes()).unwrap();
        BufReader::new(stream)
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads the stream until an event's data holds `needle` or `within` passes;
/// returns every data line read.
pub fn read_events_until(stream: &mut BufReader<TcpStream>, needle: &str, within: Duration) -> (bool, String) {
    let started = Instant::now();
    let mut seen = String::new();
    while started.elapsed() < within {
        let mut line = String::new();
        match stream.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {
                seen.push_str(&line);
                if line.starts_with("data:") && line.contains(needle) {
                    return (true, seen);
                }
            }
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => panic!("reading the live stream: {e}"),
        }
    }
    (false, seen)
}

fn parse(raw: &str) -> Response {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect::<Vec<_>>();
    // Chunked bodies are joined: the pages are HTML, chunk sizes are not.
    let body = if headers.iter().any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v == "chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response { status, headers, body }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// The project a test's prompts are filed under.
fn project(home: &Home) -> String {
    home.work().canonicalize().unwrap().display().to_string()
}

/// Records a prompt in session `sid` of the test's project.
fn prompt(home: &Home, sid: &str, text: &str) {
    let dir = project(home);
    home.run_env(
        &["hook"],
        &[("CLAUDE_PROJECT_DIR", &dir)],
        Some(&crate::util::claude_code_payload(sid, "UserPromptSubmit", json!({"prompt": text, "cwd": dir}))),
    )
    .ok();
}

/// The local id of the session a client named `sid`.
fn session_of(home: &Home, sid: &str) -> String {
    home.db().query_row("SELECT session_id FROM session_keys WHERE external_id = ?1", [sid], |r| r.get(0)).unwrap()
}

fn newest_id(home: &Home) -> i64 {
    home.db().query_row("SELECT max(id) FROM observations", [], |r| r.get(0)).unwrap()
}

fn count(home: &Home, sql: &str) -> i64 {
    home.db().query_row(sql, [], |r| r.get(0)).unwrap()
}

/// The token a forget form carries, read off its confirmation page.
fn token(viewer: &Viewer, target: &str) -> String {
    let page = viewer.page(&format!("/forget?{target}"));
    let at = page.find("name=\"token\" value=\"").expect("a token field") + "name=\"token\" value=\"".len();
    page[at..].split('"').next().unwrap().to_owned()
}

#[test]
fn a_new_home_is_served_and_says_how_to_install_a_client() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let banner = viewer.next_banner_line();
    assert!(banner.as_deref().is_some_and(|l| l.contains("trae-mem install claude-code")), "{banner:?}");
    let live = viewer.page("/");
    assert!(live.contains("Nothing recorded yet") && live.contains("trae-mem install claude-code"), "{live}");
    for path in ["/search?q=anything", "/projects", "/health"] {
        viewer.page(path);
    }
    assert_eq!(viewer.get("/observation/1").status, 404);
    assert_eq!(viewer.get("/nowhere").status, 404);
}

#[test]
fn a_busy_default_port_gives_way_to_a_free_one_and_other_addresses_are_warned_about() {
    let home = Home::new();
    // Taken by this test, or already by something else: taken either way.
    let _holder = std::net::TcpListener::bind(("127.0.0.1", 37711));
    let viewer = Viewer::start_with(&home, &[]);
    assert!(!viewer.addr.ends_with(":37711"), "{}", viewer.addr);
    assert!(viewer.stderr().contains("port 37711 is taken"), "{}", viewer.stderr());
    viewer.page("/");
    assert!(!viewer.stderr().contains("warning"), "{}", viewer.stderr());

    let wide = Viewer::start_with(&home, &["--port", "0", "--listen", "0.0.0.0"]);
    assert!(wide.stderr().contains("warning: listening on 0.0.0.0"), "{}", wide.stderr());
    let port = wide.addr.rsplit(':').next().unwrap();
    let by_ip = wide.send("GET", "/", &[("Host", &format!("127.0.0.1:{port}"))], "");
    assert_eq!(by_ip.status, 200, "{by_ip:?}");

    let explicit = home.run(&["serve", "--port", viewer.addr.rsplit(':').next().unwrap()], None);
    assert_eq!(explicit.code, 1, "{explicit}");
    assert!(explicit.stderr.contains("cannot listen on 127.0.0.1:"), "{explicit}");
}

#[test]
fn another_host_is_refused_and_pages_carry_a_strict_policy() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    for host in ["evil.example", "evil.example:80", "localhost.evil.example"] {
        let refused = viewer.send("GET", "/", &[("Host", host)], "");
        assert_eq!(refused.status, 421, "Host {host}: {refused:?}");
        assert!(!refused.body.contains("<html"), "{refused:?}");
    }
    let port = viewer.addr.rsplit(':').next().unwrap();
    let rebound = viewer.send("GET", "/", &[("Host", &format!("rebind.example:{port}"))], "");
    assert_eq!(rebound.status, 421, "{rebound:?}");
    let by_name = viewer.send("GET", "/", &[("Host", &format!("localhost:{port}"))], "");
    assert_eq!(by_name.status, 200, "{by_name:?}");
    let csp = by_name.header("content-security-policy").expect("a Content-Security-Policy");
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(by_name.header("x-frame-options"), Some("DENY"));
}

#[test]
fn forget_needs_this_processs_token_and_its_origin() {
    let home = Home::new();
    prompt(&home, "s-forget", "remember the flaky parser fix");
    prompt(&home, "s-forget", "and the second thing");
    let id = newest_id(&home);
    let viewer = Viewer::start(&home);
    let token = token(&viewer, &format!("observation={id}"));
    let remaining = || count(&home, &format!("SELECT count(*) FROM observations WHERE id = {id}"));

    let without_token = viewer.post_form("/forget", &format!("observation={id}"), None);
    assert_eq!(without_token.status, 403, "{without_token:?}");
    let other_first = if token.starts_with('0') { '1' } else { '0' };
    let wrong_token =
        viewer.post_form("/forget", &format!("token={other_first}{}&observation={id}", &token[1..]), None);
    assert_eq!(wrong_token.status, 403, "{wrong_token:?}");
    let cross_origin =
        viewer.post_form("/forget", &format!("token={token}&observation={id}"), Some("http://evil.example"));
    assert_eq!(cross_origin.status, 403, "{cross_origin:?}");
    let no_origin = viewer.post_form("/forget", &format!("token={token}&observation={id}"), Some(""));
    assert_eq!(no_origin.status, 403, "{no_origin:?}");
    assert_eq!(remaining(), 1, "a refused forget deleted the row");

    let done = viewer.post_form("/forget", &format!("token={token}&observation={id}"), None);
    assert_eq!(done.status, 200, "{done:?}");
    assert!(done.body.contains("1 observation(s) forgotten"), "{}", done.body);
    assert_eq!(remaining(), 0);
    assert!(!viewer.page("/search?q=second+thing").contains("class=\"hit\""));
    assert_eq!(viewer.get(&format!("/observation/{id}")).status, 404);
    // The whole session, from its page's link.
    let sid = session_of(&home, "s-forget");
    let session = viewer.page(&format!("/session/{sid}"));
    assert!(session.contains("flaky parser"), "{session}");
    let token = crate::serve::token(&viewer, &format!("session={sid}"));
    let done = viewer.post_form("/forget", &format!("token={token}&session={sid}"), None);
    assert!(done.body.contains("1 session(s) removed"), "{}", done.body);
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 0);
    assert_eq!(count(&home, "SELECT count(*) FROM tombstones WHERE kind = 'session'"), 1);
}

#[test]
fn a_session_page_shows_the_files_touched_the_tools_run_and_what_failed() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let sid = "s-facts";
    claude_code_hook(&home, sid, "UserPromptSubmit", json!({"prompt": "make the importer stop flaking"})).ok();
    claude_code_hook(
        &home,
        sid,
        "PostToolUse",
        json!({"tool_name": "Edit", "tool_use_id": "t1",
               "tool_input": {"file_path": "src/import.rs", "old_string": "BEGIN", "new_string": "BEGIN IMMEDIATE"},
               "tool_response": {"filePath": "src/import.rs"}}),
    )
    .ok();
    claude_code_hook(
        &home,
        sid,
        "PostToolUseFailure",
        json!({"tool_name": "Bash", "tool_use_id": "t2", "tool_input": {"command": "cargo test"}, "error": "Exit code 101"}),
    )
    .ok();
    claude_code_hook(&home, sid, "SessionEnd", json!({"reason": "exit"})).ok();
    let page = viewer.page(&format!("/session/{}", session_of(&home, sid)));
    assert!(page.contains("<dt>files</dt><dd><code>src/import.rs</code>"), "{page}");
    assert!(page.contains("<dt>tools</dt><dd>Edit ×1</dd>"), "{page}");
    assert!(page.contains("<dt>failed</dt><dd><div>Bash: Exit code 101</div>"), "{page}");
}

/// Text that would run as script if a page put it in as markup.
const HOSTILE: &str = "<script>alert('xss')</script> <img src=x onerror=alert(1)> \"><svg onload=alert(2)>";

#[test]
fn stored_markup_is_shown_as_text_on_every_page_and_in_the_stream() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let mut stream = viewer.events("?after=0");
    prompt(&home, "s-xss", &format!("hostile prompt {HOSTILE}"));
    let dir = project(&home);
    claude_code_hook(
        &home,
        "s-xss",
        "PostToolUse",
        json!({"cwd": dir, "tool_name": "Bash", "tool_input": {"command": "cat page.html"}, "tool_response": {"stdout": HOSTILE}}),
    )
    .ok();
    let id = newest_id(&home);
    let session = session_of(&home, "s-xss");
    // Its summaries quote it: a search card and the project's list show them.
    home.run(&["summarize", &session], None).ok();
    let (arrived, streamed) = read_events_until(&mut stream, "hostile prompt", Duration::from_secs(10));
    assert!(arrived, "the prompt never reached the live stream:\n{streamed}");
    let pages = [
        "/".to_owned(),
        "/search?q=alert".to_owned(),
        "/search?q=alert&fragment=true".to_owned(),
        format!("/session/{session}"),
        format!("/observation/{id}"),
        format!("/forget?observation={id}"),
        format!("/project?path={}", trae_mem_encode(&dir)),
    ];
    let search = viewer.page("/search?q=alert");
    let card = summary_cards(&search, &session).concat();
    assert!(card.contains("Asked: hostile prompt &lt;script&gt;alert("), "the brief, escaped: {card}");
    assert!(card.contains("<details class=\"io\"><summary>detailed summary</summary>"), "{card}");
    let project_page = viewer.page(&format!("/project?path={}", trae_mem_encode(&dir)));
    let listed = sessions_section(&project_page);
    assert!(listed.contains("\">hostile prompt &lt;script&gt;alert("), "named by its prompt, escaped: {listed}");
    for (path, body) in pages.iter().map(|p| (p.as_str(), viewer.page(p))).chain([("/events", streamed)]) {
        for live_markup in ["<script>alert", "<img src=x", "<svg onload"] {
            assert!(!body.contains(live_markup), "{path} holds live markup {live_markup:?}:\n{body}");
        }
        // Search marks its matches, so there the escaped text is split.
        let escaped = if path.starts_with("/search") { "&lt;script&gt;" } else { "&lt;script&gt;alert(" };
        assert!(body.contains(escaped), "{path} lost the text:\n{body}");
    }
}

#[test]
fn private_rows_appear_on_no_page_and_in_no_stream() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let mut stream = viewer.events("?after=0");
    prompt(&home, "s-private", "<private>the whole of this prompt is private</private>");
    let private_id = newest_id(&home);
    assert_eq!(count(&home, &format!("SELECT private FROM observations WHERE id = {private_id}")), 1);
    prompt(&home, "s-private", "a public prompt after it");
    let public_id = newest_id(&home);
    let (arrived, streamed) = read_events_until(&mut stream, "a public prompt", Duration::from_secs(10));
    assert!(arrived, "{streamed}");
    let dir = project(&home);
    let marker = format!("data-id=\"{private_id}\"");
    for path in [
        "/".to_owned(),
        "/projects".to_owned(),
        "/health".to_owned(),
        "/search".to_owned(),
        "/search?q=private".to_owned(),
        format!("/session/{}", session_of(&home, "s-private")),
        format!("/observation/{public_id}"),
        format!("/project?path={}", trae_mem_encode(&dir)),
    ] {
        let body = viewer.page(&path);
        assert!(!body.contains(&marker) && !body.contains("[PRIVATE]"), "{path} shows the private row:\n{body}");
        assert!(!body.contains(&format!("#{private_id}<")), "{path} links the private row:\n{body}");
    }
    assert!(!streamed.contains(&marker) && !streamed.contains("[PRIVATE]"), "{streamed}");
    assert_eq!(viewer.get(&format!("/observation/{private_id}")).status, 404);
    assert_eq!(viewer.get(&format!("/forget?observation={private_id}")).status, 404);
}

#[test]
fn the_viewer_serves_while_hooks_write_and_streams_every_new_observation() {
    let home = Home::new();
    prompt(&home, "s-first", "before the viewer started");
    let viewer = Viewer::start(&home);
    let after = newest_id(&home);
    let mut stream = viewer.events(&format!("?after={after}"));
    let writers = [0, 1, 2, 3];
    std::thread::scope(|scope| {
        for w in &writers {
            let home = &home;
            scope.spawn(move || {
                for i in 0..10 {
                    prompt(home, &format!("s-writer-{w}"), &format!("writer {w} prompt {i} zebra"));
                }
            });
        }
        scope.spawn(|| {
            for _ in 0..10 {
                viewer.page("/");
                viewer.page("/search?q=zebra");
            }
        });
    });
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE content LIKE '%zebra'"), 40);
    let mut streamed = String::new();
    for w in &writers {
        for i in 0..10 {
            let needle = format!("writer {w} prompt {i} zebra");
            if !streamed.contains(&needle) {
                let (arrived, more) = read_events_until(&mut stream, &needle, Duration::from_secs(10));
                streamed.push_str(&more);
                assert!(arrived, "{needle} never reached the live stream:\n{streamed}");
            }
        }
    }
    assert!(!streamed.contains("before the viewer started"), "the stream repeated what the page showed");
    assert!(viewer.page("/search?q=zebra").contains("zebra"));
}

/// Percent-encodes a query value as the viewer's links do.
fn trae_mem_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The database file and its write-ahead log, byte for byte.
fn database_bytes(home: &Home) -> (Vec<u8>, Vec<u8>) {
    let db = home.db_path();
    let wal = std::fs::read(db.with_extension("db-wal")).unwrap_or_default();
    (std::fs::read(&db).unwrap(), wal)
}

#[test]
fn the_viewers_pages_read_and_never_write() {
    let home = Home::new();
    let dir = project(&home);
    prompt(&home, "s-ended", "rename the settings loader");
    claude_code_hook(&home, "s-ended", "SessionEnd", json!({"cwd": dir})).ok();
    // Never ended: its summary is missing, which a session start would
    // write first; the viewer tells it the same way without writing.
    prompt(&home, "s-open", "why does the walrus cache evict hot keys");
    let id = newest_id(&home);
    let open = session_of(&home, "s-open");
    let viewer = Viewer::start(&home);
    let before = database_bytes(&home);
    let pages = [
        "/".to_owned(),
        "/projects".to_owned(),
        "/health".to_owned(),
        "/search?q=walrus".to_owned(),
        format!("/session/{open}"),
        format!("/observation/{id}"),
        format!("/forget?observation={id}"),
    ];
    for path in &pages {
        viewer.page(path);
    }
    let told = viewer.page(&format!("/project?path={}", trae_mem_encode(&dir)));
    assert!(told.contains("walrus cache") && told.contains("rename the settings loader"), "{told}");
    assert!(database_bytes(&home) == before, "reading the viewer's pages changed the database file");
    drop(viewer);
    assert_eq!(count(&home, &format!("SELECT count(*) FROM summaries WHERE session_id = '{open}'")), 0);
}

/// Records an Edit of `file` in session `sid` of the test's project.
fn edit(home: &Home, sid: &str, file: &str) {
    let dir = project(home);
    claude_code_hook(
        home,
        sid,
        "PostToolUse",
        json!({"cwd": dir, "tool_name": "Edit", "tool_use_id": format!("toolu_{sid}"),
               "tool_input": {"file_path": file, "old_string": "max = 4", "new_string": "max = 16"},
               "tool_response": {"filePath": file, "structuredPatch": "@@ -1 +1 @@"}}),
    )
    .ok();
}

/// The card of observation `id` in a page or a stream.
fn card_of(body: &str, id: i64) -> String {
    let start = body.find(&format!("data-id=\"{id}\"")).unwrap_or_else(|| panic!("no card #{id} in:\n{body}"));
    let end = body[start..].find("</article>").unwrap() + start;
    body[start..end].to_owned()
}

#[test]
fn tool_rows_are_named_as_summaries_name_them_with_their_input_and_output_a_click_away() {
    let home = Home::new();
    let viewer = Viewer::start(&home);
    let mut stream = viewer.events("?after=0");
    edit(&home, "s-tool", "src/db/pool.rs");
    let id = newest_id(&home);
    let content: String =
        home.db().query_row("SELECT content FROM observations WHERE id = ?1", [id], |r| r.get(0)).unwrap();
    // As the session's summary names it.
    home.run(&["summarize", &session_of(&home, "s-tool")], None).ok();
    let detailed: String =
        home.db().query_row("SELECT content FROM summaries WHERE level = 'detailed'", [], |r| r.get(0)).unwrap();
    assert!(detailed.lines().any(|l| l == "- Edit: src/db/pool.rs"), "{detailed}");

    let (arrived, streamed) = read_events_until(&mut stream, "</details>", Duration::from_secs(10));
    assert!(arrived, "{streamed}");
    // An event's data is its data lines, joined by line breaks.
    let data: Vec<&str> =
        streamed.lines().filter_map(|l| l.strip_prefix("data:")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    let streamed = data.join("\n");
    let escaped = escaped(&content);
    let full = format!(
        "<details class=\"io\"><summary>input and output</summary><pre class=\"content\">{escaped}</pre></details>"
    );
    for (place, card) in [("live page", card_of(&viewer.page("/"), id)), ("live stream", card_of(&streamed, id))] {
        assert!(card.contains("<p class=\"action\">Edit: src/db/pool.rs</p>"), "{place}: {card}");
        assert!(card.contains(&full), "{place}: the whole input and output, folded: {card}");
        let shown = card.replace(&full, "");
        assert!(!shown.contains("old_string") && !shown.contains("filePath"), "{place} shows the raw JSON: {card}");
    }
    // The observation's own page shows them unfolded.
    let own = card_of(&viewer.page(&format!("/observation/{id}")), id);
    assert!(own.contains("<details class=\"io\" open><summary>input and output</summary>"), "{own}");
}

/// What `text` looks like on a page: escaped as maud escapes it.
fn escaped(text: &str) -> String {
    maud::html! { (text) }.into_string()
}

/// A session's summary at `level`, as stored.
fn summary(home: &Home, session: &str, level: &str) -> String {
    home.db()
        .query_row("SELECT content FROM summaries WHERE session_id = ?1 AND level = ?2", [session, level], |r| r.get(0))
        .unwrap()
}

/// The summary cards of local session `session` in a search page.
fn summary_cards<'b>(body: &'b str, session: &str) -> Vec<&'b str> {
    let own = format!("data-session=\"{session}\"");
    body.split("<li class=\"hit summary\"")
        .skip(1)
        .map(|card| card.split("</li>").next().unwrap())
        .filter(|card| card.starts_with(&format!(" {own}")))
        .collect()
}

/// Imports, as sync would bring it, alice's session `id` in the test's
/// project with only its two summaries, both `text`.
fn teammates_summaries(home: &Home, id: &str, text: &str) {
    let started = jiff::Timestamp::now().as_millisecond() - 60_000;
    let meta = json!({"client": "claude-code", "author": "alice@laptop"});
    let mut export = vec![json!({"type": "session", "keys": [],
        "session": {"id": id, "project": project(home), "started_at": started, "ended_at": null, "meta": meta}})];
    export.extend(["brief", "detailed"].map(
        |level| json!({"type": "summary", "session_id": id, "level": level, "created_at": started, "content": text}),
    ));
    let text: String = export.iter().map(|record| format!("{record}\n")).collect();
    home.run(&["import", home.write("teammate.jsonl", text.as_bytes()).to_str().unwrap()], None).ok();
}

/// A project page's list of sessions (the context block above it quotes
/// prompts and summaries too).
fn sessions_section(page: &str) -> &str {
    page.split("<h2>Sessions</h2>").nth(1).unwrap_or_else(|| panic!("no list of sessions in:\n{page}"))
}

#[test]
fn a_sessions_summaries_are_one_search_card_showing_the_brief_with_the_detailed_a_click_away() {
    let home = Home::new();
    let dir = project(&home);
    prompt(&home, "s-pelican", "why does the pelican importer drop rows with empty tags");
    edit(&home, "s-pelican", "src/pelican/gannet_loader.rs");
    claude_code_hook(
        &home,
        "s-pelican",
        "Stop",
        json!({"cwd": dir, "last_assistant_message": "Fixed: the pelican importer keeps rows with empty tags."}),
    )
    .ok();
    let session = session_of(&home, "s-pelican");
    home.run(&["summarize", &session], None).ok();
    let (brief, detailed) = (summary(&home, &session, "brief"), summary(&home, &session, "detailed"));
    // The edited file's name is in the detailed summary only.
    assert!(!brief.contains("gannet") && detailed.contains("gannet_loader"), "{brief}\n---\n{detailed}");
    let folded = format!(
        "<details class=\"io\"><summary>detailed summary</summary><pre class=\"content\">{}</pre></details>",
        escaped(&detailed)
    );
    let viewer = Viewer::start(&home);
    // Words in both summaries, and words in the detailed one only.
    for (query, matched) in [("pelican+importer+tags", None), ("gannet_loader", Some("detailed"))] {
        for path in [format!("/search?q={query}"), format!("/search?q={query}&fragment=true")] {
            let page = viewer.page(&path);
            let cards = summary_cards(&page, &session);
            assert_eq!(cards.len(), 1, "{path}: one card for the session's two summaries:\n{page}");
            let card = cards[0];
            assert!(
                card.contains(&format!("<pre class=\"content brief\">{}</pre>", escaped(&brief))),
                "{path}: {card}"
            );
            assert!(card.contains(&folded), "{path}: the detailed summary, folded: {card}");
            if let Some(level) = matched {
                assert!(card.contains(&format!("matched in {level}")), "{path}: says which summary matched: {card}");
            }
        }
    }
    // A teammate's says whose it is.
    let theirs = "00000000-0000-4000-8000-0000000a11ce";
    teammates_summaries(&home, theirs, "Asked: why do gannet batches stall\nConcluded: a lock.");
    let page = viewer.page("/search?q=gannet+batches+stall");
    let cards = summary_cards(&page, theirs);
    assert!(cards.len() == 1 && cards[0].contains("<span class=\"by\">by alice@laptop</span>"), "{page}");
}

#[test]
fn the_project_page_names_each_session_by_its_first_public_prompt_or_else_its_brief() {
    let home = Home::new();
    prompt(&home, "s-quartz", "<private>the whole of this prompt is private</private>");
    prompt(&home, "s-quartz", "tidy the quartz scheduler\n   before the release");
    prompt(&home, "s-quartz", "and its docs");
    let quartz = session_of(&home, "s-quartz");
    // No prompt is left to name a teammate's session of which only the
    // summaries are here (sync brings a session with its summaries;
    // retention leaves no more).
    let kept = "00000000-0000-4000-8000-00000000c0de";
    teammates_summaries(&home, kept, "\nAsked: rotate the   staging deploy key\nConcluded: rotated.");
    let dir = project(&home);

    let viewer = Viewer::start(&home);
    let page = viewer.page(&format!("/project?path={}", trae_mem_encode(&dir)));
    let listed = sessions_section(&page);
    assert!(
        listed.contains(&format!("<a href=\"/session/{quartz}\">tidy the quartz scheduler before the release</a>")),
        "named by its first public prompt, on one line:\n{listed}"
    );
    let kept_row = listed.split("<tr>").find(|row| row.contains(kept)).unwrap_or_else(|| panic!("{listed}"));
    assert!(
        kept_row.contains(&format!("<a href=\"/session/{kept}\">Asked: rotate the staging deploy key</a>")),
        "named by its brief's first line: {kept_row}"
    );
    assert!(kept_row.contains("by alice@laptop"), "a teammate's session says whose: {kept_row}");
    // The private prompt came first: the heading above is the public one after it.
    assert!(!page.contains("[PRIVATE]"), "{page}");
}

/// The marked excerpt of the hit whose card starts at `card` (an
/// observation's `<li class="hit">` or a summary's), as the page shows it.
fn marked_excerpt(card: &str) -> &str {
    let start = card.find("<p class=\"snippet\">").unwrap_or_else(|| panic!("no excerpt in the card: {card}"));
    let end = card[start..].find("</p>").unwrap() + start + "</p>".len();
    &card[start..end]
}

#[test]
fn a_summary_card_marks_the_matched_words_as_an_observation_card_does() {
    let home = Home::new();
    let dir = project(&home);
    prompt(&home, "s-marmot", "why does the marmot scheduler skip the 缓存 warmup on Mondays");
    let prompt_id = newest_id(&home);
    edit(&home, "s-marmot", "src/marmot/ptarmigan_queue.rs");
    claude_code_hook(
        &home,
        "s-marmot",
        "Stop",
        json!({"cwd": dir, "last_assistant_message": "Fixed: the marmot scheduler runs the 缓存 warmup every day."}),
    )
    .ok();
    let session = session_of(&home, "s-marmot");
    home.run(&["summarize", &session], None).ok();
    let (brief, detailed) = (summary(&home, &session, "brief"), summary(&home, &session, "detailed"));
    assert!(brief.contains("marmot") && brief.contains("缓存"), "{brief}");
    assert!(!brief.contains("ptarmigan") && detailed.contains("ptarmigan_queue"), "{brief}\n---\n{detailed}");

    let viewer = Viewer::start(&home);
    // Words in the brief (a Latin one and a Chinese one), and a word in the
    // detailed summary only; the page and the fragment search as you type
    // puts in its place.
    let in_brief = ["marmot", "缓存"];
    for words in [&in_brief[..], &["ptarmigan_queue"]] {
        let query = trae_mem_encode(&words.join(" "));
        for path in [format!("/search?q={query}"), format!("/search?q={query}&fragment=true")] {
            let page = viewer.page(&path);
            let cards = summary_cards(&page, &session);
            assert_eq!(cards.len(), 1, "{path}: one card for the session's summaries:\n{page}");
            let summary_excerpt = marked_excerpt(cards[0]);
            for word in words {
                assert!(
                    summary_excerpt.contains(&format!("<mark>{word}</mark>")),
                    "{path}: {word} unmarked: {}",
                    cards[0]
                );
            }
            if words == in_brief {
                // The prompt's own card, an observation's, marks them the same way.
                let observation = page
                    .split("<li class=\"hit\">")
                    .skip(1)
                    .find(|card| card.contains(&format!(">#{prompt_id}<")))
                    .unwrap_or_else(|| panic!("{path}: no card for the prompt #{prompt_id}:\n{page}"));
                let observation_excerpt = marked_excerpt(observation);
                for word in words {
                    let marked = format!("<mark>{word}</mark>");
                    assert!(observation_excerpt.contains(&marked), "{path}: {observation}");
                }
            }
        }
    }
}
