//! `trae-mem hook`: what a coding agent runs on each lifecycle event.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

use super::Env;
use trae_mem::adapters::{self, Adapter};
use trae_mem::client::Client;
use trae_mem::ingest::{self, Accepted, Ingest, Spool};
use trae_mem::privacy::Privacy;
use trae_mem::{after_delivery, config};

/// The help's first line, here and in `trae-mem help`.
pub const ABOUT: &str = "Record one lifecycle event from a coding agent.";
/// The help's whole text.
pub const LONG_ABOUT: &str = "Record one lifecycle event from a coding agent.

The event's JSON payload comes on stdin. Exits 0 when the event is stored (or spooled to be \
stored later), 1 on trae-mem's own failure (0 for Cline, which any other code blocks), never 2 \
(which would block the agent). At SessionStart it prints the memory to give the agent, in the \
client's format.";

/// The client whose payload a hook reads when `--client` names none.
const DEFAULT_CLIENT: Client = Client::ClaudeCode;

#[derive(Debug, Args)]
#[command(about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cmd {
    /// The event: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse,
    /// PostToolUseFailure, Stop, SessionEnd, or any other name.
    /// [default: the payload's hook_event_name]
    #[arg(long, value_name = "EVENT")]
    event: Option<String>,
    /// The client whose payload this is: claude-code, cursor, codex, gemini or cline.
    // Read by `adapters::for_client` in `run`, not by clap: an unknown
    // client must fail as the hook's own one line, with the exit code of
    // the client's failure.
    #[arg(long, default_value = DEFAULT_CLIENT.name(), value_name = "NAME")]
    client: String,
}

impl Cmd {
    pub fn run(self, env: &Env) -> ExitCode {
        let started = Instant::now();
        // The client decides what a failure may exit with, so it comes first.
        let adapter = match adapters::for_client(&self.client) {
            Ok(adapter) => adapter,
            Err(err) => {
                eprintln!("trae-mem: {err:#}");
                return ExitCode::from(1);
            }
        };
        let mut stdin = Vec::new();
        if let Err(err) = std::io::stdin().lock().read_to_end(&mut stdin) {
            return fail(adapter.as_ref(), &format!("cannot read the hook payload from stdin: {err}"));
        }
        // A broken config must not lose the event: store it with defaults,
        // then say so in one line. The event is stored, so the hook succeeds.
        let (loaded, broken) = match config::load_or_defaults(&env.cwd, env.home.as_deref()) {
            Ok(loaded) => loaded,
            Err(err) => return fail(adapter.as_ref(), &format!("{err:#}")),
        };
        let mut warnings: Vec<String> = broken.into_iter().collect();
        let privacy = ingest::privacy(&loaded).unwrap_or_else(|err| {
            warnings.push(format!("{err:#} (redacting with the built-in patterns only)"));
            Privacy::new(true, &[]).expect("no user patterns")
        });

        let ingest = Ingest::new(&loaded, &privacy);
        let accepted = match ingest.accept_bytes(&self.client, self.event.as_deref(), &stdin) {
            Ok(accepted) => accepted,
            Err(failure) => return fail(adapter.as_ref(), &failure.to_string()),
        };
        let deadline = started + Duration::from_millis(loaded.config.hook.deadline_ms);
        let accepted = Arc::new(accepted);
        let done = watchdog(deadline, Spool::new(&loaded.home), Arc::clone(&accepted), adapter.idle_output());
        let result = ingest.deliver(&accepted, started).map(|mut outcome| {
            after_delivery::run(&ingest, &loaded, &accepted, started, &mut outcome);
            outcome
        });
        done.store(true, Ordering::SeqCst);
        match result {
            Ok(outcome) => {
                answer(outcome.stdout.or_else(|| adapter.idle_output()));
                let ours = outcome.warnings.iter().map(ToString::to_string);
                for warning in warnings.into_iter().chain(ours) {
                    eprintln!("trae-mem: warning: {warning}");
                }
                ExitCode::SUCCESS
            }
            Err(failure) => fail(adapter.as_ref(), &failure.to_string()),
        }
    }
}

/// trae-mem's own failure: one line on stderr, the client's idle answer on
/// stdout, and the client's exit code for a failure that must not block it.
fn fail(adapter: &dyn Adapter, message: &str) -> ExitCode {
    eprintln!("trae-mem: {message}");
    answer(adapter.idle_output());
    ExitCode::from(adapter.failure_exit_code())
}

/// Prints the answer for the client, if there is one.
fn answer(stdout: Option<String>) {
    if let Some(stdout) = stdout {
        let _ = writeln!(std::io::stdout().lock(), "{stdout}");
    }
}

/// The exit code for `trae-mem hook` arguments that do not parse: the
/// failure code of the `--client` named in `args`, if it names one (clap's
/// own 2 would block the agent). Gives that client its idle answer too.
pub fn usage_failure(args: &[String]) -> ExitCode {
    let client = args.iter().enumerate().find_map(|(i, arg)| match arg.strip_prefix("--client") {
        Some("") => args.get(i + 1).map(String::as_str),
        Some(rest) => rest.strip_prefix('='),
        None => None,
    });
    match adapters::for_client(client.unwrap_or(DEFAULT_CLIENT.name())) {
        Ok(adapter) => {
            answer(adapter.idle_output());
            ExitCode::from(adapter.failure_exit_code())
        }
        Err(_) => ExitCode::from(1),
    }
}

/// A last guard for the deadline: if the hook is somehow still working
/// when it passes (a stalled disk, say), spool the event and exit 0 so the
/// agent goes on. Set the returned flag once the work is done.
fn watchdog(deadline: Instant, spool: Spool, accepted: Arc<Accepted>, idle: Option<String>) -> Arc<AtomicBool> {
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    std::thread::spawn(move || {
        std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
        if !flag.load(Ordering::SeqCst) {
            // Spooled even if the event was stored just now: its id makes the replay store nothing.
            match spool.append(&accepted.spool_entry("the hook's deadline passed")) {
                Ok(path) => eprintln!("trae-mem: warning: deadline passed; the event is spooled to {}", path.display()),
                Err(err) => eprintln!("trae-mem: deadline passed and the event could not be spooled: {err:#}"),
            }
            answer(idle);
            std::process::exit(0);
        }
    });
    done
}
