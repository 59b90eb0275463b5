//! Stdio framing for rmcp: one JSON-RPC message per line.
//!
//! rmcp's own stdio transport drops input it cannot parse without a word,
//! and answers some methods this server does not serve (it would take a
//! `server/discover` as the start of the 2026 lifecycle). So a reader thread
//! screens every line before rmcp sees it: a blank line is skipped, a line
//! that is not JSON gets -32700, a request for a method that is not served
//! gets -32601 (the answer that makes newer clients fall back to
//! `initialize`), a served request with malformed params gets -32602, and
//! before `initialize` only it and `ping` pass.
//! A writer thread owns stdout, so protocol lines never interleave.
//!
//! Both are plain threads: blocking reads of stdin never stall the runtime,
//! and reading from a channel is what rmcp needs (its `receive` may be
//! cancelled at any await, which a half-read line would not survive).

use std::borrow::Cow;
use std::io::{BufRead, Read, Write};
use std::sync::mpsc as std_mpsc;
use std::thread::JoinHandle;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, InitializeRequestParams, JsonRpcMessage,
    PaginatedRequestParams,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The requests this server answers. Anything else is -32601.
const SERVED: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// The largest message read. A hook payload passed to
/// `trae_mem_hook_event` can be tens of megabytes, as it can on the
/// command line; past this the line is refused and skipped.
const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// How many screened messages may wait for rmcp before the reader pauses.
const INCOMING_QUEUE: usize = 4;

/// The server side of the stdio connection.
pub struct Stdio {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: std_mpsc::Sender<Outgoing>,
    writer: Option<JoinHandle<()>>,
}

/// What the writer thread is told.
enum Outgoing {
    Line(String),
    Close,
}

impl Stdio {
    /// Starts the reader and writer threads on this process's stdin and stdout.
    pub fn start() -> Self {
        let (incoming_tx, incoming) = mpsc::channel(INCOMING_QUEUE);
        let (outgoing, outgoing_rx) = std_mpsc::channel();
        let replies = outgoing.clone();
        std::thread::spawn(move || read_stdin(&incoming_tx, &replies));
        let writer = std::thread::spawn(move || write_stdout(&outgoing_rx));
        Self { incoming, outgoing, writer: Some(writer) }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_string(&item).map_err(std::io::Error::other).and_then(|line| {
            self.outgoing.send(Outgoing::Line(line)).map_err(|_| std::io::ErrorKind::BrokenPipe.into())
        });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
    }

    /// Writes out everything sent so far, then stops the writer.
    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.outgoing.send(Outgoing::Close);
        if let Some(writer) = self.writer.take() {
            tokio::task::spawn_blocking(move || writer.join())
                .await
                .map_err(std::io::Error::other)?
                .map_err(|_| std::io::Error::other("the stdout writer panicked"))?;
        }
        Ok(())
    }
}

fn write_stdout(lines: &std_mpsc::Receiver<Outgoing>) {
    let mut stdout = std::io::stdout().lock();
    while let Ok(Outgoing::Line(line)) = lines.recv() {
        let written =
            stdout.write_all(line.as_bytes()).and_then(|()| stdout.write_all(b"\n")).and_then(|()| stdout.flush());
        if let Err(err) = written {
            eprintln!("trae-mem mcp: cannot write to stdout ({err}); the client is gone");
            return;
        }
    }
}

fn read_stdin(incoming: &mpsc::Sender<ClientJsonRpcMessage>, replies: &std_mpsc::Sender<Outgoing>) {
    let mut stdin = std::io::stdin().lock();
    let mut screen = Screen::default();
    let mut line = Vec::new();
    loop {
        let verdict = match read_line(&mut stdin, &mut line) {
            Ok(Frame::End) => return,
            Ok(Frame::TooLong) => Verdict::Reply(error_reply(
                Value::Null,
                -32600,
                format!("the message is longer than {} MiB; send less per call", MAX_MESSAGE_BYTES >> 20),
            )),
            Ok(Frame::Line) => screen.check(&line),
            Err(err) => {
                eprintln!("trae-mem mcp: cannot read stdin: {err}");
                return;
            }
        };
        match verdict {
            Verdict::Pass(message) => {
                // Closed only when the server is shutting down.
                if incoming.blocking_send(*message).is_err() {
                    return;
                }
            }
            Verdict::Reply(reply) => {
                let _ = replies.send(Outgoing::Line(reply.to_string()));
            }
            Verdict::Skip => {}
        }
    }
}

/// What one read from stdin found.
#[derive(Debug, PartialEq)]
enum Frame {
    /// A line is in the buffer (its newline, if any, included).
    Line,
    /// A line past `MAX_MESSAGE_BYTES`, now skipped.
    TooLong,
    /// Stdin is closed.
    End,
}

/// Reads one line into `line`, never holding more than `MAX_MESSAGE_BYTES`.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Frame> {
    line.clear();
    let read = Read::take(&mut *input, MAX_MESSAGE_BYTES as u64 + 1).read_until(b'\n', line)?;
    if read == 0 {
        return Ok(Frame::End);
    }
    if line.len() > MAX_MESSAGE_BYTES && line.last() != Some(&b'\n') {
        line.clear();
        input.skip_until(b'\n')?;
        return Ok(Frame::TooLong);
    }
    Ok(Frame::Line)
}

/// What to do with one line.
#[derive(Debug)]
enum Verdict {
    /// Hand it to rmcp.
    Pass(Box<ClientJsonRpcMessage>),
    /// Answer it here, with this JSON-RPC error.
    Reply(Value),
    /// Nothing: a blank line, or a notification nobody needs.
    Skip,
}

/// Screens lines for rmcp, remembering whether the handshake has begun.
#[derive(Default)]
struct Screen {
    initialize_seen: bool,
}

impl Screen {
    fn check(&mut self, line: &[u8]) -> Verdict {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Verdict::Skip;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(err) => {
                return Verdict::Reply(error_reply(
                    Value::Null,
                    -32700,
                    format!("parse error: the line is not JSON ({err})"),
                ));
            }
        };
        let id = value.get("id").cloned();
        let method = value.get("method").and_then(Value::as_str).map(str::to_owned);
        match (&method, id) {
            (Some(method), Some(id)) => self.check_request(method, id, value),
            // Before the handshake rmcp takes anything but a request as a
            // broken client and ends the session; notifications and
            // responses wait for nothing, so drop them.
            _ if !self.initialize_seen => Verdict::Skip,
            (Some(_), None) => match serde_json::from_value(value) {
                Ok(notification) => Verdict::Pass(Box::new(notification)),
                Err(_) => Verdict::Skip,
            },
            (None, id) => match serde_json::from_value(value) {
                Ok(response) => Verdict::Pass(Box::new(response)),
                Err(err) => Verdict::Reply(error_reply(
                    id.unwrap_or(Value::Null),
                    -32600,
                    format!("invalid request: not a JSON-RPC 2.0 message ({err})"),
                )),
            },
        }
    }

    fn check_request(&mut self, method: &str, id: Value, value: Value) -> Verdict {
        if !SERVED.contains(&method) {
            return Verdict::Reply(error_reply(
                id,
                -32601,
                format!("method not found: {method}; this server answers {}", SERVED.join(", ")),
            ));
        }
        // rmcp would take such a request as the start of the 2026
        // lifecycle, which has no handshake; this server has one.
        if !self.initialize_seen && !matches!(method, "initialize" | "ping") {
            return Verdict::Reply(error_reply(
                id,
                -32600,
                format!("invalid request: {method} before initialize; send initialize first"),
            ));
        }
        let params = value.get("params").cloned();
        match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            // rmcp reads a served method whose params do not fit as a
            // custom request; its own answer would be -32601.
            Ok(JsonRpcMessage::Request(request)) if matches!(request.request, ClientRequest::CustomRequest(_)) => {
                Verdict::Reply(error_reply(id, -32602, params_problem(method, params)))
            }
            Ok(message) => {
                self.initialize_seen |= method == "initialize";
                Verdict::Pass(Box::new(message))
            }
            Err(err) => {
                Verdict::Reply(error_reply(id, -32600, format!("invalid request: not a JSON-RPC 2.0 request ({err})")))
            }
        }
    }
}

/// Says what is wrong with the params of a served method.
fn params_problem(method: &str, params: Option<Value>) -> String {
    fn problem<T: DeserializeOwned>(params: Option<Value>) -> Option<String> {
        serde_json::from_value::<T>(params.unwrap_or(Value::Null)).err().map(|err| err.to_string())
    }
    let problem = match method {
        "initialize" => problem::<InitializeRequestParams>(params),
        "tools/call" => problem::<CallToolRequestParams>(params),
        _ => problem::<Option<PaginatedRequestParams>>(params),
    };
    let detail: Cow<'_, str> = problem.map_or("they do not fit the method".into(), Cow::Owned);
    format!("invalid params for {method}: {detail}")
}

/// A JSON-RPC error response. Built by hand, since rmcp omits a null id,
/// which JSON-RPC 2.0 requires when the request's id is unknown.
fn error_reply(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    /// A screen past the handshake.
    fn initialized() -> Screen {
        let mut screen = Screen::default();
        assert!(matches!(screen.check(INITIALIZE), Verdict::Pass(_)));
        screen
    }

    fn reply(verdict: Verdict) -> Value {
        match verdict {
            Verdict::Reply(reply) => reply,
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn blank_lines_are_skipped_and_garbage_is_a_parse_error() {
        let mut screen = Screen::default();
        assert!(matches!(screen.check(b"  \r\n"), Verdict::Skip));
        let answer = reply(screen.check(b"{\"jsonrpc\": \"2.0\", \"id\": 1,\n"));
        assert_eq!(answer["error"]["code"], -32700);
        assert_eq!(answer["id"], Value::Null);
    }

    #[test]
    fn unserved_methods_are_not_found_whatever_their_params() {
        let mut screen = Screen::default();
        let answer =
            reply(screen.check(br#"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{}}}"#));
        assert_eq!(answer["error"]["code"], -32601);
        assert_eq!(answer["id"], "d");
    }

    #[test]
    fn malformed_params_of_a_served_method_are_invalid_params() {
        let mut screen = initialized();
        let answer = reply(screen.check(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}"#));
        assert_eq!(answer["error"]["code"], -32602);
        assert_eq!(answer["id"], 7);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("invalid params for tools/call: "), "{message}");
    }

    #[test]
    fn only_the_handshake_passes_before_the_handshake() {
        let mut screen = Screen::default();
        let list = br#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        assert_eq!(reply(screen.check(list))["error"]["code"], -32600);
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(screen.check(initialized), Verdict::Skip));
        assert!(matches!(screen.check(INITIALIZE), Verdict::Pass(_)));
        assert!(matches!(screen.check(initialized), Verdict::Pass(_)));
        assert!(matches!(screen.check(list), Verdict::Pass(_)));
    }

    #[test]
    fn overlong_lines_are_skipped_up_to_their_end() {
        let mut input = std::io::Cursor::new([vec![b'x'; MAX_MESSAGE_BYTES + 10], b"\n{}\n".to_vec()].concat());
        let mut line = Vec::new();
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Frame::TooLong);
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Frame::Line);
        assert_eq!(line, b"{}\n");
        assert_eq!(read_line(&mut input, &mut line).unwrap(), Frame::End);
    }
}
