//! `loopguard._native.StoredGuard`: decisions on state kept in a store shared by replicas
//! (`LoopGuard(store="redis://…")`, docs/SCALING.md). It only converts: a trace line in, the decision
//! line and where it was made out; `loopguard/_stored.py` maps the typed calls onto trace lines
//! and the decision lines back onto the verdict tuples. The decision path is the host's
//! (`loopguard_host::store::StoredGateway`).

use std::num::NonZeroU64;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use loopguard_host::store::{
    redacted, MemoryStore, RedisStore, StateStore, StoreFailure, StoreOptions, StoreTls, StoredGateway, Via,
};
use loopguard_host::{Error, ErrorKind, Limits};
use pyo3::prelude::*;

use super::{load, py_error};

/// A gateway deciding on a store's state.
#[pyclass(module = "loopguard._native", frozen)]
pub struct StoredGuard {
    inner: Mutex<StoredGateway>,
}

/// One decision as the Python side unpacks it: (decision line or None when refused, key,
/// version, via).
type DecidedTuple = (Option<String>, String, u64, &'static str);

#[pymethods]
impl StoredGuard {
    /// A guard with `config` whose state lives in `store` (`memory` or `redis://…`).
    #[new]
    #[pyo3(signature = (config, store, prefix="lg:1:".to_string(), ttl_s=None, deadline_ms=None, fail_closed=false, policy=None, expect_digest=None, ca=None, cert=None, key=None))]
    #[allow(clippy::too_many_arguments)] // the Python keyword arguments, one each
    fn new(
        py: Python<'_>,
        config: String,
        store: String,
        prefix: String,
        ttl_s: Option<NonZeroU64>,
        deadline_ms: Option<NonZeroU64>,
        fail_closed: bool,
        policy: Option<PathBuf>,
        expect_digest: Option<String>,
        ca: Option<PathBuf>,
        cert: Option<PathBuf>,
        key: Option<PathBuf>,
    ) -> PyResult<Self> {
        let mut options = StoreOptions::default();
        if let Some(s) = ttl_s {
            options.ttl = Duration::from_secs(s.get());
        }
        if let Some(ms) = deadline_ms {
            options.deadline = Duration::from_millis(ms.get());
        }
        if fail_closed {
            options.failure = StoreFailure::Closed;
        }
        let backend: Box<dyn StateStore> = if store == "memory" {
            Box::new(MemoryStore::default())
        } else {
            let tls = StoreTls { ca, cert, key };
            let opened = RedisStore::open(&store, &prefix, options.deadline, &tls)
                .map_err(|e| Error::invalid(ErrorKind::Config, "store", format!("{:?}: {e}", redacted(&store))));
            Box::new(opened.map_err(|e| py_error(py, e))?)
        };
        let gateway = py.detach(|| load(policy, expect_digest, Limits::default()).and_then(|p| p.gateway(&config)));
        let gateway = gateway.map_err(|e| py_error(py, e))?;
        Ok(StoredGuard { inner: Mutex::new(StoredGateway::new(gateway, backend, options)) })
    }

    /// Decides one trace line (numbered `line`).
    fn decide(&self, py: Python<'_>, event: &str, line: u32) -> PyResult<DecidedTuple> {
        // The store's round trips are I/O: other Python threads may run meanwhile (the lock is
        // taken without the GIL, so a thread waiting for it never holds up the others).
        let decided = py
            .detach(|| self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).decide(event, line))
            .map_err(|e| py_error(py, e))?;
        let via = match decided.via {
            Via::Store => "store",
            Via::Local => "local",
            Via::Refused => "refused",
        };
        Ok((decided.decision, decided.key, decided.version, via))
    }

    /// The store counters, as (name, value) pairs.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).stats();
        vec![
            ("on_store", s.on_store),
            ("on_local", s.on_local),
            ("refused", s.refused),
            ("cas_retries", s.cas_retries),
            ("store_errors", s.store_errors),
            ("unreadable", s.unreadable),
            ("episodes", s.episodes),
            ("degraded", u64::from(s.degraded)),
            ("local_keys", s.local_keys),
        ]
    }
}
