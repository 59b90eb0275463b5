//! A plugin that misbehaves on purpose, for the host's containment tests.
//! Its `config` table's `mode` picks the misdeed. Never declare it for real use.

wit_bindgen::generate!({ world: "event-handler", path: "../../wit/since_v0.1.0" });

use trae_mem::plugin::host::config;

struct Hostile;

fn note(content: String) -> Vec<Observation> {
    vec![Observation { kind: "note".into(), content, tool: None, tags: vec!["hostile".into()] }]
}

impl Guest for Hostile {
    fn handle(_event: String, _payload: String) -> Result<Vec<Observation>, String> {
        let settings: serde_json::Value = serde_json::from_str(&config()).unwrap_or_default();
        match settings["mode"].as_str().unwrap_or("") {
            "loop" => loop {
                std::hint::black_box(0);
            },
            "grow" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![7u8; 1 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "trap" => core::arch::wasm32::unreachable(),
            "panic" => panic!("the hostile plugin panics"),
            "flood" => Ok(note("x".repeat(100 << 20))),
            "chatter" => {
                for _ in 0..1_000_000 {
                    println!("chatter chatter chatter chatter chatter chatter chatter");
                }
                Ok(note("chattered".into()))
            }
            "read-file" => {
                let path = settings["path"].as_str().unwrap_or("/etc/passwd");
                Ok(note(match std::fs::read_to_string(path) {
                    Ok(text) => format!("read {path}: {text}"),
                    Err(err) => format!("denied {path}: {err}"),
                }))
            }
            "read-env" => {
                let vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
                Ok(note(format!("env: [{}]", vars.join(", "))))
            }
            // Blocks in a WASI clock call, where no epoch deadline reaches it.
            "sleep" => {
                std::thread::sleep(std::time::Duration::from_secs(10));
                Ok(note("slept".into()))
            }
            // Waits on a pollable again and again, a millisecond at a time.
            "poll-loop" => loop {
                std::thread::sleep(std::time::Duration::from_millis(1));
            },
            // Writes far past the stdout cap, ignoring every failed write.
            "quiet-flood" => {
                use std::io::Write;
                let mut out = std::io::stdout();
                for _ in 0..100_000 {
                    let _ = out.write_all(b"flood flood flood flood flood flood flood flood\n");
                }
                Ok(note("flooded quietly".into()))
            }
            // Far more observations than a hook should store for one event.
            "many" => Ok((0..1000)
                .map(|i| Observation { kind: "note".into(), content: format!("{i}"), tool: None, tags: vec![] })
                .collect()),
            "bad-output" => Ok(vec![Observation { kind: "".into(), content: "".into(), tool: None, tags: vec![] }]),
            other => Err(format!("unknown mode {other:?}")),
        }
    }
}

export!(Hostile);
