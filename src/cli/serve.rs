//! `trae-mem serve`: the web viewer.

use std::io::Write;
use std::net::IpAddr;

use anyhow::Result;
use clap::Args;

use super::Env;
use trae_mem::serve::{self, Listening, Options};

/// Show memory in the browser: a live feed, search, sessions, projects, health, and forget.
///
/// Serves on 127.0.0.1, port 37711 (or a free port when that one is taken), and prints the URL.
/// The viewer shows everything your agents recorded (never private rows), so it answers only to
/// its own address, and deleting needs a page it served. Stop it with Ctrl-C.
#[derive(Debug, Args)]
pub struct Cmd {
    /// The port. [default: 37711, or a free port when that one is taken; 0: any free port]
    #[arg(long)]
    port: Option<u16>,
    /// Open the viewer in the default browser.
    #[arg(long)]
    open: bool,
    /// The address to listen on. Anything but loopback shows your agents' memory to the network.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    listen: IpAddr,
}

impl Cmd {
    pub fn run(self, env: &Env) -> Result<()> {
        // A new home gets its (empty) store, and the pages say how to fill it.
        let (loaded, store) = env.open()?;
        let empty = super::reader(&store).observation_total()? == 0;
        let home = loaded.home.clone();
        let options = Options { listen: self.listen, port: self.port };
        let ready = |listening: &Listening| {
            if let Some(port) = listening.moved_from {
                eprintln!("trae-mem: port {port} is taken, so the viewer took another");
            }
            if !self.listen.is_loopback() {
                eprintln!(
                    "trae-mem: warning: listening on {}: anyone who can reach this address can read your agents' memory",
                    self.listen
                );
            }
            // Written, not printed: a reader that has gone (`serve | head -1`)
            // must not end the viewer, and println! would panic.
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "trae-mem viewer: {} (Ctrl-C stops it)", listening.url);
            if empty {
                let _ = writeln!(
                    out,
                    "No memory yet in {}. Run `trae-mem install claude-code` in a project (or cursor, codex, gemini, cline, trae), \
                     or `trae-mem demo` to see it work.",
                    home.display()
                );
            }
            drop(out);
            if self.open {
                open_browser(&listening.url);
            }
        };
        serve::run(loaded, store, env.cwd.clone(), env.home.clone(), &options, ready)
    }
}

/// Opens `url` in the default browser, or says how to.
#[cfg(not(windows))]
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let opened = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if opened.is_err() {
        eprintln!("trae-mem: cannot run {opener}: open {url} in a browser");
    }
}

/// Opens `url` in the default browser the Windows way: the shell's "open"
/// verb, which hands a URL to the browser the user chose (Windows has no
/// `xdg-open`, and `cmd /c start` would read the `&` of a URL as a command).
#[cfg(windows)]
fn open_browser(url: &str) {
    use windows_sys::Win32::UI::Shell::ShellExecuteW;
    use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;
    let wide = |text: &str| text.encode_utf16().chain(Some(0)).collect::<Vec<u16>>();
    let (verb, file) = (wide("open"), wide(url));
    // SAFETY: NUL-terminated strings that outlive the call, and no window.
    let result = unsafe {
        ShellExecuteW(
            std::ptr::null_mut(),
            verb.as_ptr(),
            file.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            SW_SHOWNORMAL,
        )
    };
    // Above 32 is success, by ShellExecute's own convention.
    if result as usize <= 32 {
        eprintln!("trae-mem: cannot open a browser: open {url} in one");
    }
}
