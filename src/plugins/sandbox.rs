//! What a plugin runs inside: a fresh `Store` per call, holding a WASI
//! context that grants nothing beyond the plugin's `grants`, captured and
//! capped stdout and stderr, a memory limit, and an epoch deadline.

use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use super::wit::since_v0_1_0::host;
use crate::config::PluginDecl;

/// How often the engine's epoch advances: the granularity of timeouts.
const TICK: Duration = Duration::from_millis(5);

/// The most bytes kept of a plugin's stdout, and of its stderr. Writing more
/// traps the plugin, which then counts as failed.
const CAPTURE_BYTES: usize = 64 << 10;

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
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    host::add_to_linker::<State, HasSelf<State>>(&mut linker, |state| state)?;
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
    table: ResourceTable,
    limits: MemoryLimit,
    config_json: String,
    /// Lines the plugin logged through `host.log`.
    pub logged: Vec<(host::Level, String)>,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
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
        let text = |pipe: &MemoryOutputPipe| String::from_utf8_lossy(&pipe.contents()).into_owned();
        (text(&self.stdout), text(&self.stderr))
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
    let stdout = MemoryOutputPipe::new(CAPTURE_BYTES);
    let stderr = MemoryOutputPipe::new(CAPTURE_BYTES);
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
        table: ResourceTable::new(),
        limits,
        config_json,
        logged: Vec::new(),
        stdout,
        stderr,
    };
    let mut store = Store::new(&runtime.engine, state);
    store.limiter(|state| &mut state.limits);
    let ticks = plugin.limits.timeout_ms.div_ceil(TICK.as_millis() as u64).max(1);
    store.set_epoch_deadline(ticks);
    Ok(store)
}
