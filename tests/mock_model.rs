//! A language model's server on loopback, speaking the Anthropic Messages
//! API (`POST …/v1/messages`) and the OpenAI chat API (`POST
//! …/chat/completions`), for the summarizer plugin's tests. Its replies are
//! scripted: each request takes the next `Reply` in the script, and a good
//! summary once the script is spent. It records every request whole.

use std::io::BufReader;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mock_anthropic::{Request, read_request, respond};

/// What the model's summaries say.
pub const BRIEF: &str = "Made the config loader fall back to defaults when trae.toml is missing.";
pub const DETAILED: &str = "Goal: no crash without a config file. Done: load_config returns the defaults.";
pub const LEARNING_TITLE: &str = "A missing config file means the defaults";
/// The tokens each good reply says it cost, in and out.
pub const TOKENS: (u64, u64) = (1200, 300);

/// One scripted reply.
#[derive(Clone)]
pub enum Reply {
    /// The good summary.
    Summary,
    /// An HTTP status with a JSON error.
    Status(u16),
    /// 200 with a body that is not JSON.
    Malformed,
    /// The good summary, after this long.
    Slow(Duration),
    /// A 307 to this URL.
    Redirect(String),
    /// The good summary, with one learning of this title.
    Learned(&'static str),
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

pub struct MockModel {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    script: Arc<Mutex<Vec<Reply>>>,
}

impl MockModel {
    /// Listens on a free loopback port, replying with `script` in order.
    pub fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(script.into_iter().rev().collect::<Vec<_>>()));
        let (log, replies) = (seen.clone(), script.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (log, replies) = (log.clone(), replies.clone());
                std::thread::spawn(move || serve(stream, &log, &replies));
            }
        });
        Self { url, seen, script }
    }

    /// The requests so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Replies still scripted.
    pub fn scripted(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, script: &Mutex<Vec<Reply>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    while let Some(request) = read_request(&mut reader) {
        let Request { line, headers, body } = request;
        let body = String::from_utf8_lossy(&body).into_owned();
        let openai = line.contains("/chat/completions");
        seen.lock().unwrap().push(Seen { line, headers, body });
        let reply = script.lock().unwrap().pop().unwrap_or(Reply::Summary);
        let json = [("content-type", "application/json")];
        let sent = match reply {
            Reply::Summary => respond(&mut out, "200 OK", &json, answer(openai, LEARNING_TITLE).to_string().as_bytes()),
            Reply::Learned(title) => respond(&mut out, "200 OK", &json, answer(openai, title).to_string().as_bytes()),
            Reply::Slow(pause) => {
                std::thread::sleep(pause);
                respond(&mut out, "200 OK", &json, answer(openai, LEARNING_TITLE).to_string().as_bytes())
            }
            Reply::Status(code) => {
                let error =
                    json!({"type": "error", "error": {"type": "mock", "message": format!("mock status {code}")}});
                respond(&mut out, &format!("{code} Mock"), &json, error.to_string().as_bytes())
            }
            Reply::Malformed => respond(&mut out, "200 OK", &json, b"<html>not json</html>"),
            Reply::Redirect(to) => respond(&mut out, "307 Temporary Redirect", &[("location", &to)], b""),
        };
        if !sent {
            return;
        }
    }
}

/// The model's text: the JSON object the plugin asks for, with one
/// learning of this title, in a code fence as models often write it.
fn text(learning_title: &str) -> String {
    let summary = json!({
        "brief": BRIEF,
        "detailed": DETAILED,
        "learnings": [{
            "title": learning_title,
            "facts": ["load_config returns Config::default() when the file is absent"],
            "files": ["src/config.rs"],
            "concepts": ["configuration"],
        }],
    });
    format!("Here it is:\n```json\n{summary}\n```")
}

/// A whole reply in the API's shape.
fn answer(openai: bool, learning_title: &str) -> Value {
    let (input, output) = TOKENS;
    match openai {
        true => json!({
            "id": "chatcmpl-mock", "object": "chat.completion", "model": "mock",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text(learning_title)}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output},
        }),
        false => json!({
            "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock",
            "content": [{"type": "text", "text": text(learning_title)}], "stop_reason": "end_turn",
            "usage": {"input_tokens": input, "output_tokens": output},
        }),
    }
}
