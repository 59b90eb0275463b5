//! The `trae-mem` binary: parses the command line, runs the subcommand, and
//! picks the exit code. Everything else lives in the library.

mod cli;

// See Cargo.toml: on musl, mimalloc serves every allocation.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// trae-mem: local memory for AI coding agents.
///
/// Coding agents run `trae-mem hook` on their lifecycle events; trae-mem
/// records each into one SQLite file, summarizes each session, and gives
/// memory back: context at session start, search, and timelines.
#[derive(Debug, Parser)]
#[command(name = "trae-mem", version, max_term_width = 100)]
struct Cli {
    /// The home directory: database, spool and logs.
    /// [default: $TRAE_MEM_HOME, else the project config's `home`, else ~/.trae-mem]
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Demo(cli::demo::Cmd),
    Hook(cli::hook::Cmd),
    Mcp(cli::mcp::Cmd),
    Serve(cli::serve::Cmd),
    Search(cli::search::Cmd),
    Timeline(cli::timeline::Cmd),
    Sessions(cli::sessions::Cmd),
    Show(cli::show::Cmd),
    Export(cli::export::Cmd),
    Import(cli::import::Cmd),
    Forget(cli::forget::Cmd),
    Gc(cli::gc::Cmd),
    Embed(cli::embed::Cmd),
    Stats(cli::stats::Cmd),
    Install(cli::install::InstallCmd),
    Uninstall(cli::install::UninstallCmd),
    Doctor(cli::doctor::Cmd),
    Config(cli::config::Cmd),
    Summarize(cli::summarize::Cmd),
    Spool(cli::spool::Cmd),
    Plugins(cli::plugins::Cmd),
    Sync(cli::sync::Cmd),
}

// `trae-mem hook` and its arguments alone. clap builds its parser from
// every subcommand, which took 0.2–0.3 ms of each hook's start: a sixth of
// its whole cost. Hooks run on every tool call, so they parse only their own
// arguments; everything else goes through `Cli`.
#[derive(Debug, Parser)]
#[command(
    name = "trae-mem hook",
    bin_name = "trae-mem hook",
    version,
    max_term_width = 100,
    about = cli::hook::ABOUT,
    long_about = cli::hook::LONG_ABOUT
)]
struct HookCli {
    /// The home directory: database, spool and logs.
    /// [default: $TRAE_MEM_HOME, else the project config's `home`, else ~/.trae-mem]
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    #[command(flatten)]
    cmd: cli::hook::Cmd,
}

/// The arguments without the `hook` subcommand, when that is what runs.
fn hook_arguments(args: &[OsString]) -> Option<Vec<OsString>> {
    let mut rest = args.iter().enumerate().skip(1);
    while let Some((i, arg)) = rest.next() {
        match arg.to_str() {
            Some("--home") => {
                rest.next();
            }
            Some(flag) if flag.starts_with("--home=") => {}
            Some("hook") => {
                let mut hook_args = args.to_vec();
                hook_args.remove(i);
                return Some(hook_args);
            }
            _ => return None,
        }
    }
    None
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some(hook_args) = hook_arguments(&args) {
        // One malloc arena: the hook's watchdog thread would otherwise map
        // (and at exit unmap) an arena of its own, 128 MB of address space.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt takes two integers and only tunes malloc; no other
        // thread exists yet to allocate meanwhile.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
        return match HookCli::try_parse_from(hook_args) {
            Ok(hook) => hook.cmd.run(&cli::Env { home: hook.home, cwd: current_dir() }),
            Err(err) if err.use_stderr() => hook_usage_failure(&err, &args),
            Err(err) => err.exit(),
        };
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // Any command line naming `hook` may be a hook's, whatever comes
        // before it (`trae-mem -v hook`): it takes the hook's way out.
        Err(err) if err.use_stderr() && args.iter().skip(1).any(|a| a == "hook") => {
            return hook_usage_failure(&err, &args);
        }
        Err(err) => err.exit(),
    };
    let env = cli::Env { home: cli.home, cwd: current_dir() };
    // Die quietly when a pager or `head` closes the pipe, as Unix tools do;
    // but a hook always finishes its work and answers its client, and the
    // MCP server shuts down on its own when its client goes.
    #[cfg(unix)]
    if !matches!(cli.command, Command::Hook(_) | Command::Mcp(_)) {
        // SAFETY: SIG_DFL restores the default action and installs no handler
        // of ours; no other thread exists yet.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        // Parsed by `HookCli` above; here for `trae-mem help hook` and the command list.
        Command::Hook(cmd) => return cmd.run(&env),
        Command::Demo(cmd) => cmd.run(&env),
        Command::Mcp(cmd) => cmd.run(&env),
        Command::Serve(cmd) => cmd.run(&env),
        Command::Search(cmd) => cmd.run(&env),
        Command::Embed(cmd) => cmd.run(&env),
        Command::Timeline(cmd) => cmd.run(&env),
        Command::Sessions(cmd) => cmd.run(&env),
        Command::Show(cmd) => cmd.run(&env),
        Command::Export(cmd) => cmd.run(&env),
        Command::Import(cmd) => cmd.run(&env),
        Command::Forget(cmd) => cmd.run(&env),
        Command::Gc(cmd) => cmd.run(&env),
        Command::Stats(cmd) => cmd.run(&env),
        Command::Install(cmd) => cmd.run(&env),
        Command::Uninstall(cmd) => cmd.run(&env),
        Command::Doctor(cmd) => return cmd.run(&env),
        Command::Config(cmd) => cmd.run(&env),
        Command::Summarize(cmd) => cmd.run(&env),
        Command::Spool(cmd) => cmd.run(&env),
        Command::Plugins(cmd) => cmd.run(&env),
        Command::Sync(cmd) => cmd.run(&env),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("trae-mem: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// A hook's command line that does not parse. clap would print a usage
/// block and exit 2, and 2 blocks a coding agent: a hook says what is wrong
/// in one line and exits as its client's failure.
fn hook_usage_failure(err: &clap::Error, args: &[OsString]) -> ExitCode {
    let rendered = err.render().to_string();
    let first = rendered.lines().next().unwrap_or_default();
    let what = first.strip_prefix("error: ").unwrap_or(first);
    eprintln!("trae-mem: {what} (`trae-mem hook --help` lists the hook's arguments)");
    cli::hook::usage_failure(&args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>())
}

fn current_dir() -> PathBuf {
    std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."))
}
