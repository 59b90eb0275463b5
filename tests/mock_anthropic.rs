//! A stand-in for the Anthropic Messages API on loopback, enough for the
//! real Claude Code to run a session: `POST /v1/messages` answers every
//! request with one short text turn (streamed as server-sent events when the
//! request asks for a stream), and anything else (Claude Code's reachability
//! probe) gets an empty 200. It records each request's body.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the model says to every request.
pub const ANSWER: &str = "Done: nothing to change.";

pub struct MockAnthropic {
    pub url: String,
    requests: Arc<Mutex<Vec<serde_json::Value>>>,
}

impl MockAnthropic {
    /// Listens on a free loopback port, serving each connection on a thread
    /// for as long as the test runs.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        Self { url, requests }
    }

    /// The bodies of the Messages requests so far.
    pub fn messages_requests(&self) -> Vec<serde_json::Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// One HTTP/1.1 request as a mock server reads it.
pub struct Request {
    /// `POST /v1/messages HTTP/1.1`.
    pub line: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Reads the next request on a connection; `None` once the client closes it.
pub fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 {
            return None;
        }
        if header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers.iter().find(|(n, _)| n == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request { line: line.trim_end().to_owned(), headers, body })
}

/// Writes a response with a body; false when the client has gone.
pub fn respond(out: &mut impl Write, status: &str, headers: &[(&str, &str)], body: &[u8]) -> bool {
    let mut head = format!("HTTP/1.1 {status}\r\ncontent-length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes()).and_then(|()| out.write_all(body)).is_ok()
}

/// Answers requests on one connection until the client closes it.
fn serve(stream: TcpStream, seen: &Mutex<Vec<serde_json::Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some(request) = read_request(&mut reader) {
        let (content_type, reply) = if request.line.starts_with("POST /v1/messages") {
            let request: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
            let model = request["model"].as_str().unwrap_or("claude").to_owned();
            let stream = request["stream"] == true;
            seen.lock().unwrap().push(request);
            match stream {
                true => ("text/event-stream", streamed_answer(&model)),
                false => ("application/json", message(&model, true).to_string()),
            }
        } else {
            ("text/plain", String::new())
        };
        if !respond(&mut out, "200 OK", &[("content-type", content_type)], reply.as_bytes()) {
            return;
        }
    }
}

/// A whole assistant message, with its text or (for a stream's start) none.
fn message(model: &str, with_text: bool) -> serde_json::Value {
    let content = if with_text { serde_json::json!([{"type": "text", "text": ANSWER}]) } else { serde_json::json!([]) };
    serde_json::json!({
        "id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": content,
        "stop_reason": if with_text { serde_json::json!("end_turn") } else { serde_json::Value::Null },
        "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 5}
    })
}

/// The answer as the Messages API streams it.
fn streamed_answer(model: &str) -> String {
    let events = [
        ("message_start", serde_json::json!({"type": "message_start", "message": message(model, false)})),
        (
            "content_block_start",
            serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ANSWER}}),
        ),
        ("content_block_stop", serde_json::json!({"type": "content_block_stop", "index": 0})),
        (
            "message_delta",
            serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": 5}}),
        ),
        ("message_stop", serde_json::json!({"type": "message_stop"})),
    ];
    events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect()
}
