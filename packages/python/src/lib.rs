//! `loopguard._native`: the `loopguard-host` embedding, for Python.
//!
//! Why over the host crate and not a Python reimplementation over wasmtime-py: every feature the
//! Rust host has (a pinned policy, hot swap with state, shadow-free supervision with a standby,
//! time and memory limits, health) comes along, and a decision costs a few microseconds instead
//! of wasmtime-py's ~150 µs of type reflection per call. This module only converts: Python
//! values in, `loopguard-host` calls, plain tuples out; `loopguard/__init__.py` builds the
//! public dataclasses from them. Every decision is made inside the policy component.
//!
//! The GIL is released only around slow calls (loading a policy, batches, swaps, snapshots): a
//! decision takes ~3 µs, and releasing and re-taking the GIL around it made two threads slower.

use std::num::{NonZeroU64, NonZeroUsize};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use loopguard_host::metrics::DecisionCounts;
use loopguard_host::{Deadline, Error, FailureMode, Limits, LoadOptions, Policy, Supervision, SwappableGateway};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyType};

mod convert;
mod store;

use convert::*;

/// The Python `loopguard.LoopGuardError` type, looked up once.
static ERROR_TYPE: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A host error as `loopguard.LoopGuardError(kind, path, reason)`.
fn py_error(py: Python<'_>, e: Error) -> PyErr {
    let (kind, path, reason) = match &e {
        Error::Policy { kind, path, reason } => (Error::kind_name(*kind).to_string(), path.clone(), reason.clone()),
        Error::Load { path, reason } => ("policy".into(), path.display().to_string(), reason.clone()),
        Error::Incompatible { path, .. } | Error::DigestMismatch { path, .. } => {
            ("policy".into(), path.display().to_string(), without_path(&e.to_string(), path))
        }
        other => ("policy".into(), "policy".into(), other.to_string()),
    };
    loopguard_error(py, kind, path, reason)
}

/// `loopguard.LoopGuardError(kind, path, reason)`.
fn loopguard_error(py: Python<'_>, kind: String, path: String, reason: String) -> PyErr {
    match ERROR_TYPE.get_or_try_init(py, || -> PyResult<Py<PyType>> {
        let module = py.import("loopguard._errors")?;
        Ok(module.getattr("LoopGuardError")?.cast_into::<PyType>()?.unbind())
    }) {
        Ok(ty) => PyErr::from_type(ty.bind(py).clone(), (kind, path, reason)),
        Err(import_failed) => import_failed,
    }
}

/// The message of an error that names its file, without the file (the error's `path` holds it).
fn without_path(text: &str, path: &std::path::Path) -> String {
    text.replace(&format!(" {}", path.display()), "")
}

/// Policies compiled in this process, by the blake3 digest of their bytes: compiling the
/// component is most of the cost of a first guard (~0.3 s), so each guard, `replay` and
/// `versions` after the first for the same bytes takes the compiled one (`Policy` is a cheap
/// handle). At most [`KEEP_COMPILED`] are kept, least recently used dropped first.
static COMPILED: Mutex<Vec<([u8; 32], Policy)>> = Mutex::new(Vec::new());
const KEEP_COMPILED: usize = 4;

/// Loads the policy at `path` (or the embedded one) with its limits; a pinned digest is checked
/// on the bytes before anything is compiled or taken from the cache.
fn load(path: Option<PathBuf>, expect_digest: Option<String>, limits: Limits) -> Result<Policy, Error> {
    let Some(path) = path else {
        return Policy::embedded_with(&LoadOptions { expect_digest, limits });
    };
    let bytes = std::fs::read(&path).map_err(|e| Error::Load { path: path.clone(), reason: e.to_string() })?;
    let digest = *blake3::hash(&bytes).as_bytes();
    let mut cache = COMPILED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let cached = cache.iter().position(|(d, _)| *d == digest).map(|i| cache.remove(i).1);
    let policy = match cached {
        // The pin is checked before the cache is used, exactly as a fresh load checks it.
        Some(p) if expect_digest.as_deref().is_none_or(|hex| hex.trim().eq_ignore_ascii_case(&p.digest().to_hex())) => {
            p
        }
        _ => Policy::from_bytes_at(&bytes, &path, &LoadOptions { expect_digest, limits })?,
    };
    cache.push((digest, policy.clone()));
    if cache.len() > KEEP_COMPILED {
        cache.remove(0);
    }
    Ok(policy.with_limits(limits))
}

/// One gateway's guard: a supervised, swappable policy instance.
#[pyclass(module = "loopguard._native", frozen)]
struct Guard {
    inner: SwappableGateway,
    /// The decisions made, for the metrics (`loopguard/_metrics.py` reads them when collected).
    counts: DecisionCounts,
}

#[pymethods]
impl Guard {
    /// A guard of the policy at `policy` (a path; `None` = the shipped one) with `config`.
    #[new]
    #[pyo3(signature = (config, policy=None, expect_digest=None, deadline_ms=None, memory_mib=None, fail_closed=false))]
    fn new(
        py: Python<'_>,
        config: String,
        policy: Option<PathBuf>,
        expect_digest: Option<String>,
        deadline_ms: Option<NonZeroU64>,
        memory_mib: Option<NonZeroUsize>,
        fail_closed: bool,
    ) -> PyResult<Self> {
        let mut limits = Limits::default();
        if let Some(ms) = deadline_ms {
            limits.call_deadline = Deadline::from_millis(ms);
        }
        if let Some(mib) = memory_mib {
            limits.memory_bytes = mib.saturating_mul(NonZeroUsize::MIN.saturating_add((1 << 20) - 1));
        }
        let failure_mode = if fail_closed { FailureMode::Closed } else { FailureMode::Open };
        let supervision = Supervision { failure_mode, ..Supervision::default() };
        let created = py.detach(|| {
            load(policy, expect_digest, limits).and_then(|p| SwappableGateway::new(p, &config, supervision))
        });
        created.map(|inner| Guard { inner, counts: DecisionCounts::default() }).map_err(|e| py_error(py, e))
    }

    /// `before_tool_call`: (action, detector, count, message, notify).
    fn check_tool_call(&self, py: Python<'_>, call: CallTuple) -> PyResult<VerdictTuple> {
        let v = self.inner.check_tool_call(&tool_call(call)).map(tool_verdict).map_err(|e| py_error(py, e))?;
        self.counts.add("tool_call", v.0, v.1.as_deref());
        Ok(v)
    }

    /// `after_tool_outcome` with an outcome: (action, detector, count, tool, message). `text`
    /// is the error (`threw`) or the result as JSON text.
    fn record_tool_outcome(
        &self,
        py: Python<'_>,
        call: CallTuple,
        threw: bool,
        text: String,
    ) -> PyResult<OutcomeTuple> {
        let verdict = self.inner.record_tool_outcome(&tool_call(call), &outcome(threw, text));
        let v = verdict.map(outcome_verdict).map_err(|e| py_error(py, e))?;
        self.counts.add("tool_result", v.0, v.1.as_deref());
        Ok(v)
    }

    /// The window it was armed for, or `None` when the guard is disabled.
    #[pyo3(signature = (session, run=None, agent=None))]
    fn compaction_retried(
        &self,
        py: Python<'_>,
        session: &str,
        run: Option<&str>,
        agent: Option<&str>,
    ) -> PyResult<Option<u32>> {
        self.inner.compaction_retried(session, run, agent).map(armed).map_err(|e| py_error(py, e))
    }

    fn end_session(&self, py: Python<'_>, session: &str) -> PyResult<()> {
        self.inner.end_session(session).map_err(|e| py_error(py, e))
    }

    /// (action, cooldown_until_ms, budget) for (channel, account, conversation, room, sender,
    /// receiver, ts_ms, event_id).
    fn check_bot_message(&self, py: Python<'_>, m: BotTuple) -> PyResult<BotVerdictTuple> {
        let v = self.inner.check_bot_message(&bot_message(m)).map(bot_verdict).map_err(|e| py_error(py, e))?;
        self.counts.add("bot_message", v.0, None);
        Ok(v)
    }

    /// The decisions made, each (kind, action, detector, count) (`none`: no detector).
    fn decision_counts(&self) -> Vec<(&'static str, &'static str, &'static str, u64)> {
        self.counts.snapshot()
    }

    /// Counts a decision made without a policy call (an outcome with nothing to record), or one
    /// of a batch that a host reports as a decision (the LiteLLM guardrail's verdicts).
    #[pyo3(signature = (kind, action, detector=None))]
    fn count_decision(&self, kind: &str, action: &str, detector: Option<&str>) {
        self.counts.add(kind, action, detector);
    }

    fn start_group_thread(&self, py: Python<'_>, t: ThreadTuple, peer: &str, text: &str) -> PyResult<GroupTuple> {
        self.inner.start_group_thread(&thread(t), peer, text).map(group_start).map_err(|e| py_error(py, e))
    }

    fn finish_group_round(
        &self,
        py: Python<'_>,
        t: ThreadTuple,
        finals: Vec<(String, Option<String>)>,
    ) -> PyResult<GroupTuple> {
        self.inner.finish_group_round(&thread(t), &replies(finals)).map(group_step).map_err(|e| py_error(py, e))
    }

    fn cancel_group_thread(&self, py: Python<'_>, t: ThreadTuple) -> PyResult<GroupTuple> {
        self.inner.cancel_group_thread(&thread(t)).map(group_step).map_err(|e| py_error(py, e))
    }

    /// Tool calls and outcomes made in order in one guest call until one fails (an LLM request's
    /// history): each item `(call, None)` for a check or `(call, (threw, text))` for an outcome.
    /// Returns the made items' verdicts (a check's `VerdictTuple`, an outcome's `OutcomeTuple`)
    /// and, when one failed, its error as (kind, path, reason): it changed nothing and the items
    /// after it were not made.
    #[allow(clippy::type_complexity)]
    fn apply_calls(
        &self,
        py: Python<'_>,
        items: Vec<ItemTuple>,
    ) -> PyResult<(Vec<Py<PyAny>>, Option<(String, String, String)>)> {
        let calls = item_calls(items);
        let results = py.detach(|| self.inner.apply_calls(&calls)).map_err(|e| py_error(py, e))?;
        let mut verdicts = Vec::with_capacity(results.len());
        for result in results {
            match result {
                Ok(v) => verdicts.push(item_verdict(py, v)?),
                Err(e) => return Ok((verdicts, Some((Error::kind_name(e.kind).to_string(), e.path, e.reason)))),
            }
        }
        Ok((verdicts, None))
    }

    fn apply_events(&self, py: Python<'_>, jsonl: &str, first_line: u32) -> PyResult<String> {
        py.detach(|| self.inner.apply_events(jsonl, first_line)).map_err(|e| py_error(py, e))
    }

    fn export_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.export_state()).map_err(|e| py_error(py, e))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn import_state(&self, py: Python<'_>, snapshot: Vec<u8>) -> PyResult<()> {
        py.detach(|| self.inner.import_state(&snapshot)).map_err(|e| py_error(py, e))
    }

    /// (sessions, evicted_sessions, bot_pairs, evicted_pairs, group_threads, memory_bytes).
    fn stats(&self, py: Python<'_>) -> PyResult<(u32, u64, u32, u64, u32, u64)> {
        let s = self.inner.stats().map_err(|e| py_error(py, e))?;
        Ok((s.sessions, s.evicted_sessions, s.bot_pairs, s.evicted_pairs, s.group_threads, s.memory_bytes))
    }

    /// Hot swap to the policy at `path`, every count carried over: (from version, to version,
    /// from digest, to digest, snapshot bytes, prepare ms, paused ms).
    #[pyo3(signature = (path, expect_digest=None))]
    #[allow(clippy::type_complexity)]
    fn swap(
        &self,
        py: Python<'_>,
        path: PathBuf,
        expect_digest: Option<String>,
    ) -> PyResult<(String, String, String, String, usize, f64, f64)> {
        let limits = self.inner.policy().limits();
        let swapped = py.detach(|| {
            let policy = load(Some(path), expect_digest, limits)?;
            self.inner.swap(policy)
        });
        let r = swapped.map_err(|e| py_error(py, e))?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        Ok((r.from_version, r.to_version, r.from_digest, r.to_digest, r.snapshot_bytes, ms(r.prepare), ms(r.paused)))
    }

    /// (policy version, interface version, blake3 digest, source).
    fn policy(&self) -> (String, String, String, String) {
        let p = self.inner.policy();
        (
            self.inner.version(),
            loopguard_host::INTERFACE_VERSION.to_string(),
            p.digest().to_hex().to_string(),
            p.path().display().to_string(),
        )
    }

    /// The supervisor's counters: recoveries, timeouts, traps, swaps, …
    fn health(&self) -> Vec<(&'static str, u64)> {
        let h = self.inner.health();
        vec![
            ("recoveries", h.recoveries),
            ("standby_recoveries", h.standby_recoveries),
            ("timeouts", h.timeouts),
            ("traps", h.traps),
            ("oom", h.oom),
            ("swaps", h.swaps),
            ("failed_swaps", h.failed_swaps),
            ("snapshots", h.snapshots),
        ]
    }
}

/// Replays a trace on a fresh gateway of the policy at `policy` (default: the shipped one).
#[pyfunction]
#[pyo3(signature = (config, trace, policy=None))]
fn replay(py: Python<'_>, config: String, trace: String, policy: Option<PathBuf>) -> PyResult<String> {
    py.detach(|| load(policy, None, Limits::default()).and_then(|p| p.instantiate()?.replay(&config, &trace)))
        .map_err(|e| py_error(py, e))
}

/// (policy version, interface version, blake3 digest) of the policy at `policy`.
#[pyfunction]
#[pyo3(signature = (policy=None))]
fn versions(py: Python<'_>, policy: Option<PathBuf>) -> PyResult<(String, String, String)> {
    let loaded = py.detach(|| {
        let p = load(policy, None, Limits::default())?;
        let version = p.instantiate()?.version()?;
        Ok::<_, Error>((version, p.digest().to_hex().to_string()))
    });
    let (version, digest) = loaded.map_err(|e| py_error(py, e))?;
    Ok((version, loopguard_host::INTERFACE_VERSION.to_string(), digest))
}

/// The user's config document (`{}` for none) with the agent-facing hosts' defaults filled in
/// where it is silent (`loopguard_host::agent_config`): what the LiteLLM guardrail decides on.
#[pyfunction]
fn agent_config(py: Python<'_>, document: &str) -> PyResult<String> {
    loopguard_host::agent_config(document)
        .map_err(|e| py_error(py, Error::invalid(loopguard_host::ErrorKind::Config, "config", e)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // `log` records of the library become `logging` records (target `loopguard::store` is the
    // logger `loopguard.store`). Another extension may have set the process's logger first: then
    // the records go there.
    let _ = pyo3_log::try_init();
    m.add_class::<Guard>()?;
    m.add_class::<store::StoredGuard>()?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(versions, m)?)?;
    m.add_function(wrap_pyfunction!(agent_config, m)?)?;
    m.add("AGENT_DEFAULTS", loopguard_host::AGENT_DEFAULTS)?;
    m.add("HOST_VERSION", loopguard_host::HOST_VERSION)?;
    // Compiling the component is most of a process's first guard (0.3-1 s here); wasmtime's
    // compile cache keeps the compiled code between processes, under the CLI's rule
    // (`LOOPGUARD_CACHE_DIR`, empty = off). Set before anything is loaded; a cache that cannot
    // be used only costs time, so the package works without it (COMPILE_CACHE is then None).
    let cache = loopguard_host::use_default_compile_cache().ok().flatten();
    m.add("COMPILE_CACHE", cache.map(|d| d.display().to_string()))?;
    // Raised only if `loopguard._errors` cannot be imported (a broken install).
    m.add("NativeError", m.py().get_type::<PyException>())?;
    Ok(())
}
