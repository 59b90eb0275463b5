//! `trae-mem doctor`: checks the home, database, config, plugins, client
//! installs and spool, each with a verdict and, for a problem, its fix.

use std::process::ExitCode;

use clap::Args;

use super::Env;
use trae_mem::doctor;

/// Check that trae-mem works here, and say how to fix what does not.
///
/// Exits 0 when every check passes, 1 when any finds a problem.
#[derive(Debug, Args)]
pub struct Cmd {
    /// Print JSON: {"ok", "checks": [{"check", "ok", "detail", "fix"}]}.
    #[arg(long)]
    json: bool,
}

impl Cmd {
    pub fn run(self, env: &Env) -> ExitCode {
        let checks = doctor::checks(&env.cwd, env.home.as_deref());
        let ok = checks.iter().all(|c| c.ok);
        if self.json {
            println!("{}", serde_json::json!({ "ok": ok, "checks": checks }));
        } else {
            for check in &checks {
                let verdict = match (check.ok, check.is_warning()) {
                    (false, _) => "FAIL",
                    (true, true) => "warn",
                    (true, false) => "ok  ",
                };
                println!("{verdict} {}: {}", check.check, check.detail);
                if let Some(fix) = &check.fix {
                    println!("     fix: {fix}");
                }
            }
            let problems = checks.iter().filter(|c| !c.ok).count();
            println!("{}", if ok { "all good".to_owned() } else { format!("{problems} problem(s) found") });
        }
        if ok { ExitCode::SUCCESS } else { ExitCode::from(1) }
    }
}
