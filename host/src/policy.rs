//! Loading a policy component and making instances of it.
//!
//! Why this shape: compiling a component costs far more than instantiating it, so a [`Policy`]
//! compiles and links once (one process-wide [`Engine`], one `InstancePre`) and every
//! [`Instance`] after that is cheap. The interface version is checked at load, so that an
//! incompatible policy is refused before any traffic reaches it.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Cache, CacheConfig, Config, Engine, Store, StoreLimitsBuilder};

use crate::bindings::{self, HostState, PolicyPre};
use crate::error::{Error, Result};
use crate::gateway::Gateway;

/// The policy built from `guest/` when this crate was compiled.
static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/loopguard_policy.wasm"));

/// The WIT package version this host was generated from (read from `wit/policy.wit`).
pub const INTERFACE_VERSION: &str = env!("LOOPGUARD_WIT_VERSION");

/// Guest linear memory cap per instance: far above what the bounded state needs, low enough that
/// a runaway input fails as an error and not as an OOM of the gateway.
const MEMORY_LIMIT: usize = 1 << 30;

/// The one engine of this process. Engines are meant to be shared; one per policy would
/// duplicate the compiler and code memory for no gain.
static ENGINE: OnceLock<Engine> = OnceLock::new();

fn engine() -> &'static Engine {
    ENGINE.get_or_init(Engine::default)
}

/// Makes the process-wide engine keep compiled policies in `dir`, so that a short-lived process
/// (the CLI, a test) does not pay the compilation again for a policy it has seen. A long-lived
/// gateway compiles once and does not need it. Call it before the first policy is loaded;
/// afterwards it fails, because the engine already exists.
pub fn use_compile_cache(dir: &Path) -> Result<()> {
    let mut cache_config = CacheConfig::new();
    cache_config.with_directory(dir);
    let cache = Cache::new(cache_config).map_err(|e| Error::load(dir, e))?;
    let mut config = Config::new();
    config.cache(Some(cache));
    let engine = Engine::new(&config).map_err(|e| Error::load(dir, e))?;
    ENGINE.set(engine).map_err(|_| Error::load(dir, "the compile cache must be set before the first policy is loaded"))
}

/// A compiled, linked, version-checked policy component.
#[derive(Clone)]
pub struct Policy {
    pre: PolicyPre<HostState>,
    digest: blake3::Hash,
    path: Arc<Path>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy").field("path", &self.path).field("digest", &self.digest.to_hex()).finish()
    }
}

impl Policy {
    /// The policy embedded in this binary (built from `guest/` by `build.rs`).
    pub fn embedded() -> Result<Self> {
        Self::load(EMBEDDED, Path::new("<embedded>"))
    }

    /// Reads and loads a policy component from a file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::load(path, e))?;
        Self::load(&bytes, path)
    }

    /// Loads a policy component from its bytes (named `<bytes>` in errors).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::load(bytes, Path::new("<bytes>"))
    }

    fn load(bytes: &[u8], path: &Path) -> Result<Self> {
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
        let component = Component::new(engine, bytes).map_err(|e| Error::load(path, e))?;
        let mut linker = Linker::<HostState>::new(engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker).map_err(|e| Error::load(path, e))?;
        bindings::Policy::add_to_linker::<_, HasSelf<HostState>>(&mut linker, |s| s)
            .map_err(|e| Error::load(path, e))?;
        let instance_pre = linker.instantiate_pre(&component).map_err(|e| Error::load(path, e))?;
        let pre = PolicyPre::new(instance_pre).map_err(|e| Error::load(path, e))?;
        let policy = Policy { pre, digest: blake3::hash(bytes), path: Arc::from(path) };
        policy.check_interface()?;
        Ok(policy)
    }

    /// Refuses a policy whose interface is not compatible with [`INTERFACE_VERSION`] (semver:
    /// same major, or for 0.x the same minor).
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
        let limits = StoreLimitsBuilder::new().memory_size(MEMORY_LIMIT).instances(4).build();
        let mut store = Store::new(engine(), HostState::new(limits));
        store.limiter(|s| &mut s.limits);
        let bindings = self.pre.instantiate(&mut store).map_err(|e| Error::load(&*self.path, e))?;
        Ok(Instance { store, bindings, path: self.path.clone() })
    }

    /// Shorthand for `instantiate()?.create_gateway(config)`.
    pub fn gateway(&self, config: &str) -> Result<Gateway> {
        self.instantiate()?.create_gateway(config)
    }
}

/// Semver compatibility of two `major.minor.patch` strings.
fn compatible(found: &str, expected: &str) -> bool {
    let parts = |v: &str| -> Option<(u64, u64)> {
        let mut it = v.split(['.', '-', '+']);
        Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
    };
    match (parts(found), parts(expected)) {
        (Some((0, a)), Some((0, b))) => a == b,
        (Some((a, _)), Some((b, _))) => a == b,
        _ => false,
    }
}

/// One instance of the policy: a store and the guest's exports.
pub struct Instance {
    pub(crate) store: Store<HostState>,
    pub(crate) bindings: bindings::Policy,
    pub(crate) path: Arc<Path>,
}

impl Instance {
    /// The policy's own version (the guest crate version).
    pub fn version(&mut self) -> Result<String> {
        self.bindings.call_version(&mut self.store).map_err(Error::trap)
    }

    /// The WIT interface version the policy implements.
    pub fn interface_version(&mut self) -> Result<String> {
        self.bindings.call_interface_version(&mut self.store).map_err(Error::trap)
    }

    /// Replays a whole trace on a fresh gateway inside the guest (the stateless export).
    pub fn replay(&mut self, config: &str, trace: &str) -> Result<String> {
        let out = self.bindings.call_replay(&mut self.store, config, trace).map_err(Error::trap)?;
        out.map_err(|e| Error::Policy { path: e.path, reason: e.reason })
    }

    /// Builds a gateway from a config document; the gateway owns this instance.
    pub fn create_gateway(mut self, config: &str) -> Result<Gateway> {
        let created = self.bindings.loopguard_policy_guard().gateway().call_create(&mut self.store, config);
        match created.map_err(Error::trap)? {
            Ok(handle) => Ok(Gateway::new(self, handle)),
            Err(e) => Err(Error::Policy { path: e.path, reason: e.reason }),
        }
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
        assert!(!compatible("2.0.0", "1.0.0"));
        assert!(!compatible("garbage", "0.1.0"));
    }
}
