//! Loading a policy component and making instances of it.
//!
//! Why this shape: compiling a component costs far more than instantiating it, so a [`Policy`]
//! compiles and links once (one process-wide [`Engine`], one `InstancePre`) and every
//! [`Instance`] after that is cheap. The interface version is checked at load, so that an
//! incompatible policy is refused before any traffic reaches it; a pinned digest is checked
//! before the bytes are even compiled, so that an unexpected file never runs at all.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine, Store};

use crate::bindings::{self, HostState, PolicyPre};
use crate::compile_cache;
use crate::error::{Error, Result};
use crate::limits::{self, Limiter, Limits};

/// The policy built from `guest/` when this crate was compiled.
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/loopguard_policy.wasm"));

/// The WIT package version this host was generated from (read from `wit/policy.wit`).
pub const INTERFACE_VERSION: &str = env!("LOOPGUARD_WIT_VERSION");

/// The one engine of this process. Engines are meant to be shared; one per policy would
/// duplicate the compiler and code memory for no gain.
static ENGINE: OnceLock<Engine> = OnceLock::new();

/// Epoch interruption is always on: it is how every call gets its deadline (see `limits`).
fn engine_config() -> Config {
    let mut config = Config::new();
    config.epoch_interruption(true);
    // For profiling the policy: `LOOPGUARD_PERFMAP=1 perf record …` names the compiled guest
    // functions in perf's reports (wasmtime writes /tmp/perf-PID.map).
    if std::env::var_os("LOOPGUARD_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

fn engine() -> &'static Engine {
    let engine = ENGINE.get_or_init(|| {
        // The default config with epochs on cannot fail to build an engine on a supported platform.
        Engine::new(&engine_config()).unwrap_or_default()
    });
    limits::start_ticker(engine);
    engine
}

/// How to load a policy: an optional pinned digest and the sandbox limits of its instances.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// The blake3 digest (64 hex digits) the bytes must have; checked before compiling.
    pub expect_digest: Option<String>,
    /// Time and memory limits of every instance of the policy.
    pub limits: Limits,
}

/// What `loopguard inspect` shows about a component, read without the version check.
#[derive(Debug, Clone)]
pub struct Inspection {
    /// Where it came from.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: usize,
    /// The blake3 digest of its bytes.
    pub digest: blake3::Hash,
    /// `version()`: the policy's own version.
    pub policy_version: String,
    /// `interface-version()`: the WIT version it implements.
    pub interface_version: String,
    /// Whether this host accepts that interface version.
    pub compatible: bool,
    /// The names of the component's imports (WASI interfaces, `loopguard:policy/types`).
    pub imports: Vec<String>,
}

impl std::fmt::Display for Inspection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "file: {}", self.path.display())?;
        writeln!(f, "size: {}", self.size)?;
        writeln!(f, "digest: {}", self.digest.to_hex())?;
        writeln!(f, "policy: {}", self.policy_version)?;
        writeln!(f, "interface: {}", self.interface_version)?;
        writeln!(f, "compatible: {}", if self.compatible { "yes" } else { "no" })?;
        for import in &self.imports {
            writeln!(f, "import: {import}")?;
        }
        Ok(())
    }
}

/// Keeps compiled policies in `dir` (`compile_cache.rs`), so that a short-lived process
/// (the CLI, a test) does not pay the compilation again for a policy it has seen. A long-lived
/// gateway compiles once and does not need it. One directory per process: setting another
/// fails.
pub fn use_compile_cache(dir: &Path) -> Result<()> {
    compile_cache::use_dir(dir).map_err(|e| Error::load(dir, e))
}

/// Where compiled policies are cached by default: `$LOOPGUARD_CACHE_DIR` (empty = no cache),
/// else `$XDG_CACHE_HOME/loopguard`, else `~/.cache/loopguard`. One rule for every host that
/// starts short-lived processes (the CLI, the Python package).
pub fn default_compile_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LOOPGUARD_CACHE_DIR") {
        return (!dir.is_empty()).then(|| PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("loopguard"))
}

/// [`use_compile_cache`] on [`default_compile_cache_dir`], if there is one. A cache that cannot
/// be used only costs time, so a failure (an unwritable directory, an engine that already
/// exists) is returned for the caller to ignore or log, and loading works as without it.
pub fn use_default_compile_cache() -> Result<Option<PathBuf>> {
    let Some(dir) = default_compile_cache_dir() else { return Ok(None) };
    use_compile_cache(&dir)?;
    Ok(Some(dir))
}

/// A compiled, linked, version-checked policy component.
#[derive(Clone)]
pub struct Policy {
    pre: PolicyPre<HostState>,
    digest: blake3::Hash,
    path: Arc<Path>,
    limits: Limits,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("path", &self.path).field("digest", &self.digest.to_hex()).finish()
    }
}

impl Policy {
    /// The policy embedded in this binary (built from `guest/` by `build.rs`).
    pub fn embedded() -> Result<Self> {
        Self::embedded_with(&LoadOptions::default())
    }

    /// [`Policy::embedded`] with a pinned digest and/or limits.
    pub fn embedded_with(options: &LoadOptions) -> Result<Self> {
        Self::load(EMBEDDED, Path::new("<embedded>"), options)
    }

    /// Reads and loads a policy component from a file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        Self::from_file_with(path, &LoadOptions::default())
    }

    /// [`Policy::from_file`] with a pinned digest and/or limits.
    pub fn from_file_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::load(path, e))?;
        Self::load(&bytes, path, options)
    }

    /// Loads a policy component from its bytes (named `<bytes>` in errors).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with(bytes, &LoadOptions::default())
    }

    /// [`Policy::from_bytes`] with a pinned digest and/or limits.
    pub fn from_bytes_with(bytes: &[u8], options: &LoadOptions) -> Result<Self> {
        Self::load(bytes, Path::new("<bytes>"), options)
    }

    /// [`Policy::from_bytes_with`] for bytes read from `path` (named in errors), for a caller that
    /// reads the file itself (to cache compiled policies by their bytes, say).
    pub fn from_bytes_at(bytes: &[u8], path: &Path, options: &LoadOptions) -> Result<Self> {
        Self::load(bytes, path, options)
    }

    /// Loads a policy only if its bytes have the blake3 digest `expected_hex`; a mismatch is
    /// refused before anything is compiled or run.
    pub fn from_bytes_pinned(bytes: &[u8], expected_hex: &str) -> Result<Self> {
        Self::from_bytes_with(
            bytes,
            &LoadOptions { expect_digest: Some(expected_hex.into()), ..LoadOptions::default() },
        )
    }

    /// The same compiled policy with other limits for the instances made from now on.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits of this policy's instances.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Reads what a component says about itself (versions, digest, imports) without refusing an
    /// incompatible interface version, so that an operator can see why a file is refused.
    pub fn inspect_file(path: impl AsRef<Path>) -> Result<Inspection> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::load(path, e))?;
        let (policy, component) = Self::compile(&bytes, path, &LoadOptions::default())?;
        let engine = engine();
        let imports = component.component_type().imports(engine).map(|(name, _)| name.to_string()).collect();
        let mut instance = policy.instantiate()?;
        let interface_version = instance.interface_version()?;
        Ok(Inspection {
            path: path.to_path_buf(),
            size: bytes.len(),
            digest: policy.digest,
            policy_version: instance.version()?,
            compatible: compatible(&interface_version, INTERFACE_VERSION),
            interface_version,
            imports,
        })
    }

    fn load(bytes: &[u8], path: &Path, options: &LoadOptions) -> Result<Self> {
        let (policy, _) = Self::compile(bytes, path, options)?;
        policy.check_interface()?;
        Ok(policy)
    }

    /// Checks the pin, compiles and links; no version check.
    fn compile(bytes: &[u8], path: &Path, options: &LoadOptions) -> Result<(Self, Component)> {
        let digest = blake3::hash(bytes);
        if let Some(expected) = &options.expect_digest {
            if !expected.trim().eq_ignore_ascii_case(digest.to_hex().as_str()) {
                return Err(Error::DigestMismatch {
                    path: path.to_path_buf(),
                    expected: expected.trim().to_ascii_lowercase(),
                    found: digest.to_hex().to_string(),
                });
            }
        }
        if bytes.is_empty() {
            return Err(Error::load(path, "empty file (built with LOOPGUARD_SKIP_GUEST=1?)"));
        }
        if bytes.starts_with(b"\0asm\x01\0\0\0") {
            return Err(Error::load(
                path,
                "this is a core wasm module, not a component; build the policy for wasm32-wasip2",
            ));
        }
        let engine = engine();
        let component = compile_cache::component(engine, bytes, &digest).map_err(|e| Error::load(path, e))?;
        let mut linker = Linker::<HostState>::new(engine);
        bindings::Policy::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| Error::load(path, e))?;
        bindings::no_io(&mut linker, &component).map_err(|e| Error::load(path, e))?;
        let instance_pre = linker.instantiate_pre(&component).map_err(|e| Error::load(path, e))?;
        let pre = PolicyPre::new(instance_pre).map_err(|e| Error::load(path, e))?;
        Ok((Policy { pre, digest, path: Arc::from(path), limits: options.limits }, component))
    }

    /// Refuses a policy whose interface is not compatible with [`INTERFACE_VERSION`] (the same
    /// major and at least its minor; for 0.x the same minor).
    fn check_interface(&self) -> Result<()> {
        let found = self.instantiate()?.interface_version()?;
        if compatible(&found, INTERFACE_VERSION) {
            Ok(())
        } else {
            Err(Error::Incompatible { path: self.path.to_path_buf(), found, expected: INTERFACE_VERSION })
        }
    }

    /// The blake3 digest of the component bytes, to log which policy a gateway runs.
    pub fn digest(&self) -> blake3::Hash {
        self.digest
    }

    /// Where the policy came from (`<embedded>`, `<bytes>` or the file path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A fresh instance with its own store and memory.
    pub fn instantiate(&self) -> Result<Instance> {
        let mut store = Store::new(engine(), HostState::new(Limiter::new(&self.limits)));
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut ctx| limits::on_deadline(&mut ctx.data_mut().limits));
        store.set_epoch_deadline(limits::ticks(self.limits.batch_deadline));
        let bindings = self.pre.instantiate(&mut store).map_err(|e| Error::load(&*self.path, e))?;
        Ok(Instance { store, bindings, path: self.path.clone(), limits: self.limits })
    }
}

/// Whether a host of interface `expected` can run a policy of interface `found`: the same major
/// and at least the host's minor (minors only add exports, which a host of an older minor never
/// calls, and a policy of an older minor lacks ones this host links); for 0.x the same minor.
fn compatible(found: &str, expected: &str) -> bool {
    let parts = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split(['.', '-', '+']);
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    match (parts(found), parts(expected)) {
        (Some((0, a)), Some((0, b))) => a == b,
        (Some((a, found_minor)), Some((b, minor))) => a == b && found_minor >= minor,
        _ => false,
    }
}

/// One instance of the policy: a store and the guest's exports.
pub struct Instance {
    pub(crate) store: Store<HostState>,
    pub(crate) bindings: bindings::Policy,
    pub(crate) path: Arc<Path>,
    pub(crate) limits: Limits,
}

impl Instance {
    /// Runs one call into the guest under `deadline` and the memory cap, and names the failure:
    /// a failure after a refused memory growth is an [`Error::OutOfMemory`], an epoch interrupt
    /// a [`Error::Timeout`], anything else a [`Error::Trap`].
    pub(crate) fn call<T>(
        &mut self,
        name: &'static str,
        deadline: limits::Deadline,
        f: impl FnOnce(&mut Store<HostState>, &bindings::Policy) -> wasmtime::Result<T>,
    ) -> Result<T> {
        let ticks = limits::ticks(deadline);
        self.store.set_epoch_deadline(ticks);
        let limiter = &mut self.store.data_mut().limits;
        (limiter.refused, limiter.window_cpu, limiter.window_ticks) = (false, None, ticks);
        f(&mut self.store, &self.bindings).map_err(|err| {
            // A refused growth comes first: it is the cause even if the guest then ran out of time.
            if self.store.data().limits.refused {
                Error::OutOfMemory { call: name, limit_bytes: self.limits.memory_bytes.get() }
            } else if err.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt) {
                Error::Timeout { call: name, deadline: deadline.get() }
            } else {
                Error::trap(err)
            }
        })
    }

    /// The policy's own version (the guest crate version).
    pub fn version(&mut self) -> Result<String> {
        let deadline = self.limits.call_deadline;
        self.call("version", deadline, |store, b| b.call_version(store))
    }

    /// The WIT interface version the policy implements.
    pub fn interface_version(&mut self) -> Result<String> {
        let deadline = self.limits.call_deadline;
        self.call("interface-version", deadline, |store, b| b.call_interface_version(store))
    }

    /// Replays a whole trace on a fresh gateway inside the guest (the stateless export).
    pub fn replay(&mut self, config: &str, trace: &str) -> Result<String> {
        let deadline = self.limits.batch(config.len() + trace.len());
        let out = self.call("replay", deadline, |store, b| b.call_replay(store, config, trace))?;
        out.map_err(Error::policy)
    }

    /// Where the policy came from.
    pub fn path(&self) -> PathBuf {
        self.path.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::compatible;

    #[test]
    fn semver_compatibility_follows_the_zero_major_rule() {
        assert!(compatible("0.1.0", "0.1.0"));
        assert!(compatible("0.1.7", "0.1.0"));
        assert!(!compatible("0.2.0", "0.1.0"));
        assert!(compatible("1.4.0", "1.0.0"));
        assert!(compatible("1.1.3", "1.1.0"));
        assert!(!compatible("1.0.0", "1.1.0"), "a 1.0 policy lacks the exports 1.1 added");
        assert!(!compatible("2.0.0", "1.0.0"));
        assert!(!compatible("garbage", "0.1.0"));
    }
}
