//! The `trae-mem` binary: parses the command line, runs the subcommand, and
//! picks the exit code. Everything else lives in the library.

mod cli;

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
    Search(cli::search::Cmd),
    Timeline(cli::timeline::Cmd),
    Sessions(cli::sessions::Cmd),
    Show(cli::show::Cmd),
    Export(cli::export::Cmd),
    Import(cli::import::Cmd),
    Install(cli::install::InstallCmd),
    Uninstall(cli::install::UninstallCmd),
    Doctor(cli::doctor::Cmd),
    Summarize(cli::summarize::Cmd),
    Spool(cli::spool::Cmd),
    Plugins(cli::plugins::Cmd),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // clap exits 2 on a usage error, and 2 blocks a coding agent: a hook
        // with bad arguments must exit 1 instead.
        Err(err) if err.use_stderr() && std::env::args().any(|a| a == "hook") => {
            let _ = err.print();
            return cli::hook::usage_failure(&std::env::args().collect::<Vec<_>>());
        }
        Err(err) => err.exit(),
    };
    let env = cli::Env { home: cli.home, cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")) };
    // Die quietly when a pager or `head` closes the pipe, as Unix tools do;
    // but a hook always finishes its work and answers its client, and the
    // MCP server shuts down on its own when its client goes.
    #[cfg(unix)]
    if !matches!(cli.command, Command::Hook(_) | Command::Mcp(_)) {
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Command::Hook(cmd) => return cmd.run(&env),
        Command::Demo(cmd) => cmd.run(&env),
        Command::Mcp(cmd) => cmd.run(&env),
        Command::Search(cmd) => cmd.run(&env),
        Command::Timeline(cmd) => cmd.run(&env),
        Command::Sessions(cmd) => cmd.run(&env),
        Command::Show(cmd) => cmd.run(&env),
        Command::Export(cmd) => cmd.run(&env),
        Command::Import(cmd) => cmd.run(&env),
        Command::Install(cmd) => cmd.run(&env),
        Command::Uninstall(cmd) => cmd.run(&env),
        Command::Doctor(cmd) => return cmd.run(&env),
        Command::Summarize(cmd) => cmd.run(&env),
        Command::Spool(cmd) => cmd.run(&env),
        Command::Plugins(cmd) => cmd.run(&env),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("trae-mem: {err:#}");
            ExitCode::FAILURE
        }
    }
}
