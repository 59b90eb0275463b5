//! `trae-mem hook`: what a coding agent runs on each lifecycle event.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

use super::Env;
use trae_mem::config;
use trae_mem::hooks::{self, Call, Spool, SpoolEntry};
use trae_mem::privacy::Privacy;

/// Record one lifecycle event from a coding agent.
///
/// The event's JSON payload comes on stdin. Exits 0 when the event is stored (or spooled to
/// be stored later), 1 on trae-mem's own failure, never 2 (which would block the agent). At
/// SessionStart it prints the memory to give the agent.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
    /// PostToolUseFailure, Stop, SessionEnd, or any other name.
    /// [default: the payload's hook_event_name]
    #[arg(long, value_name = "EVENT")]
    event: Option<String>,
    /// The client whose payload this is.
    #[arg(long, default_value = "claude-code", value_name = "NAME")]
    client: String,
}

impl Cmd {
    pub fn run(self, env: &Env) -> ExitCode {
        let started = Instant::now();
        let mut stdin = Vec::new();
        if let Err(err) = std::io::stdin().lock().read_to_end(&mut stdin) {
            eprintln!("trae-mem: cannot read the hook payload from stdin: {err}");
            return ExitCode::from(1);
        }
        // A broken config must not lose the event: store it with defaults, then say so.
        let mut problems = Vec::new();
        let loaded = match env.load_config() {
            Ok(loaded) => loaded,
            Err(err) => {
                problems.push(format!("{err:#} (recorded with default settings)"));
                match config::defaults(env.home.as_deref()) {
                    Ok(defaults) => defaults,
                    Err(err) => {
                        eprintln!("trae-mem: {err:#}");
                        return ExitCode::from(1);
                    }
                }
            }
        };
        let privacy = hooks::privacy(&loaded).unwrap_or_else(|err| {
            problems.push(format!("{err:#} (redacting with the built-in patterns only)"));
            Privacy::new(true, &[]).expect("no user patterns")
        });

        let call = Call { loaded: &loaded, client: &self.client, event: self.event.as_deref(), stdin: &stdin, started };
        let (entry, adapter) = match hooks::accept(&call, &privacy) {
            Ok(accepted) => accepted,
            Err(failure) => {
                eprintln!("trae-mem: {}", failure.message);
                return ExitCode::from(1);
            }
        };
        let deadline = started + Duration::from_millis(loaded.config.hook.deadline_ms);
        let done = watchdog(deadline, Spool::new(&loaded.home), entry.clone());
        let result = hooks::deliver(&call, entry, adapter.as_ref());
        done.store(true, Ordering::SeqCst);
        match result {
            Ok(outcome) => {
                if let Some(stdout) = outcome.stdout {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{stdout}");
                }
                problems.extend(outcome.warnings.into_iter().map(|w| format!("warning: {w}")));
                for problem in &problems {
                    eprintln!("trae-mem: {problem}");
                }
                // Exit 1 for a broken config so the user hears of it; the event is stored.
                if problems.iter().any(|p| !p.starts_with("warning:")) {
                    ExitCode::from(adapter.failure_exit_code())
                } else {
                    ExitCode::SUCCESS
                }
            }
            Err(failure) => {
                eprintln!("trae-mem: {}", failure.message);
                ExitCode::from(adapter.failure_exit_code())
            }
        }
    }
}

/// A last guard for the deadline: if the hook is somehow still working
/// when it passes (a stalled disk, say), spool the event and exit 0 so the
/// agent goes on. Set the returned flag once the work is done.
fn watchdog(deadline: Instant, spool: Spool, entry: SpoolEntry) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    std::thread::spawn(move || {
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        if !flag.load(Ordering::SeqCst) {
            let entry = SpoolEntry { reason: "the hook's deadline passed".to_owned(), ..entry };
            match spool.append(&entry) {
                Ok(path) => eprintln!("trae-mem: warning: deadline passed; the event is spooled to {}", path.display()),
                Err(err) => eprintln!("trae-mem: deadline passed and the event could not be spooled: {err:#}"),
            }
            std::process::exit(0);
        }
    });
    done
}
