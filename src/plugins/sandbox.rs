//! What a plugin runs inside: a fresh `Store` per call, holding a WASI
//! context that grants nothing beyond the plugin's `grants` (read-only
//! directories, and the HTTP endpoints `net::Gate` admits), captured and
//! capped stdout and stderr, and a memory limit.
//!
//! Calls run asynchronously (see `Plugins::call`), under a timer that ends
//! the call at its time limit wherever the guest is. An epoch deadline alone
//! would only interrupt running wasm code: a guest blocked in a host call
//! (sleeping on a WASI clock, waiting on a poll) would hold the hook until
//! its watchdog fired. Here running code yields at every epoch tick, and a
//! guest waiting in WASI waits on a future that the timer drops.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use anyhow::{Context as _, Result};
use bytes::Bytes;
use tokio::io::AsyncWrite;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{FsPerms, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use super::net::Gate;
use super::wit::since_v0_1_0::host;
use super::wit::since_v0_2_0::host as host_v0_2_0;
use crate::config::PluginDecl;

/// How often the engine's epoch advances: the granularity of timeouts.
const TICK: Duration = Duration::from_millis(5);

/// The most bytes a plugin may write to its stdout, and to its stderr.
/// Writing more traps the plugin, which then counts as failed.
pub const CAPTURE_BYTES: usize = 64 << 10;

/// The engine and the linker every plugin shares, made once per process and
/// only by the processes that run a plugin.
pub struct Runtime {
    pub engine: Engine,
    pub linker: Linker<State>,
}

/// The runtime, started on first use.
pub fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    if let Some(runtime) = RUNTIME.get() {
        return Ok(runtime);
    }
    let mut config = Config::new();
    config.epoch_interruption(true);
    let engine = Engine::new(&config)?;
    let mut linker = Linker::new(&engine);
    // Guests built with a standard library import WASI even when they never
    // use it; link it, with a context that grants nothing.
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    // HTTP for every plugin that imports it; only granted endpoints answer.
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    host::add_to_linker::<State, HasSelf<State>>(&mut linker, |state| state)?;
    host_v0_2_0::add_to_linker::<State, HasSelf<State>>(&mut linker, |state| state)?;
    let ticker = engine.clone();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(TICK);
            ticker.increment_epoch();
        }
    });
    Ok(RUNTIME.get_or_init(|| Runtime { engine, linker }))
}

/// One call's state.
pub struct State {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    pub gate: Gate,
    table: ResourceTable,
    limits: MemoryLimit,
    config_json: String,
    /// Lines the plugin logged through `host.log`.
    pub logged: Vec<(host::Level, String)>,
    stdout: CappedOutput,
    stderr: CappedOutput,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for State {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.gate }
    }
}

impl host::Host for State {
    fn log(&mut self, level: host::Level, message: String) {
        // Capped like stdout: a plugin cannot fill the disk through its log.
        if self.logged.len() < 100 {
            self.logged.push((level, crate::text::clip(&message, 2000)));
        }
    }

    fn config(&mut self) -> String {
        self.config_json.clone()
    }
}

/// 0.2.0's `host` is 0.1.0's, under the new package version.
impl host_v0_2_0::Host for State {
    fn log(&mut self, level: host_v0_2_0::Level, message: String) {
        let level = match level {
            host_v0_2_0::Level::Debug => host::Level::Debug,
            host_v0_2_0::Level::Info => host::Level::Info,
            host_v0_2_0::Level::Warn => host::Level::Warn,
            host_v0_2_0::Level::Error => host::Level::Error,
        };
        host::Host::log(self, level, message);
    }

    fn config(&mut self) -> String {
        host::Host::config(self)
    }
}

/// The plugin's memory limit, which remembers being hit: how the host
/// tells a memory overrun from any other trap.
struct MemoryLimit {
    bytes: usize,
    exceeded: bool,
}

impl ResourceLimiter for MemoryLimit {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.bytes {
            self.exceeded = true;
            // An error, not `false`: the plugin traps at once instead of
            // seeing a failed allocation it might survive in a bad state.
            wasmtime::bail!("the plugin asked for {desired} bytes of memory, over its limit of {}", self.bytes);
        }
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= TABLE_ELEMENTS)
    }
}

/// The most elements in one of a plugin's tables (function references):
/// far more than a real plugin needs, small next to its memory limit.
const TABLE_ELEMENTS: usize = 1 << 20;

impl State {
    /// Whether the call was stopped for asking more memory than its limit.
    pub fn memory_exceeded(&self) -> bool {
        self.limits.exceeded
    }

    /// What the plugin wrote to stdout and stderr.
    pub fn output(&self) -> (String, String) {
        (self.stdout.text(), self.stderr.text())
    }

    /// The stream the plugin tried to write more than `CAPTURE_BYTES` to, if any.
    pub fn flooded(&self) -> Option<&'static str> {
        [(&self.stdout, "stdout"), (&self.stderr, "stderr")].into_iter().find(|(o, _)| o.overflowed()).map(|(_, n)| n)
    }
}

/// A time that never moves: plugins get no clock unless one is granted.
struct Frozen;

impl HostWallClock for Frozen {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for Frozen {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A fresh store for one call of `plugin`, with its limits and grants.
pub fn store(runtime: &Runtime, plugin: &PluginDecl) -> Result<Store<State>> {
    let stdout = CappedOutput::default();
    let stderr = CappedOutput::default();
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(stdout.clone())
        .stderr(stderr.clone())
        .wall_clock(Frozen)
        .monotonic_clock(Frozen)
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    for dir in &plugin.grants.read_only_paths {
        let guest = dir.to_string_lossy();
        wasi.preopened_dir(dir, &*guest, FsPerms::ReadOnly)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("cannot grant {}: is it a directory?", dir.display()))?;
    }
    let memory = usize::try_from(plugin.limits.memory_mb.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
    let limits = MemoryLimit { bytes: memory, exceeded: false };
    let config_json = serde_json::to_string(&plugin.config)?;
    let state = State {
        wasi: wasi.build(),
        http: WasiHttpCtx::new(),
        gate: Gate::new(&plugin.grants.http),
        table: ResourceTable::new(),
        limits,
        config_json,
        logged: Vec::new(),
        stdout,
        stderr,
    };
    let mut store = Store::new(&runtime.engine, state);
    store.limiter(|state| &mut state.limits);
    // Running code yields to the call's timer at every tick.
    store.set_epoch_deadline(1);
    store.epoch_deadline_async_yield_and_update(1);
    Ok(store)
}

/// A plugin's stdout or stderr: kept in memory up to `CAPTURE_BYTES`; a
/// write past that traps the plugin and marks the stream as flooded. (WASI's
/// own memory pipe instead refuses the write, and a guest that ignores the
/// error carries on.)
#[derive(Clone, Default)]
struct CappedOutput {
    buffer: Arc<Mutex<Vec<u8>>>,
    overflowed: Arc<AtomicBool>,
}

impl CappedOutput {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
    }

    fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Keeps `bytes`, or says the cap is passed.
    fn keep(&self, bytes: &[u8]) -> bool {
        let mut buffer = self.buffer.lock().unwrap_or_else(|p| p.into_inner());
        if buffer.len() + bytes.len() > CAPTURE_BYTES {
            self.overflowed.store(true, Ordering::Relaxed);
            return false;
        }
        buffer.extend_from_slice(bytes);
        true
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[async_trait::async_trait]
impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        if self.keep(&bytes) {
            Ok(())
        } else {
            Err(StreamError::Trap(wasmtime::format_err!("wrote more than {CAPTURE_BYTES} bytes of output")))
        }
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always room: the write past the cap is the one that traps.
        Ok(CAPTURE_BYTES)
    }
}

#[async_trait::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CappedOutput {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        Poll::Ready(if self.keep(buf) {
            Ok(buf.len())
        } else {
            Err(std::io::Error::other(format!("wrote more than {CAPTURE_BYTES} bytes of output")))
        })
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
