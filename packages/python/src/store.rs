//! `loopguard._native.StoredGuard`: decisions on state kept in a store shared by replicas
//! (`LoopGuard(store="redis://…")`, docs/SCALING.md). It has the decision methods of `Guard`,
//! taking and answering the same tuples (`convert.rs`), each one typed call made on its key's
//! state by the host's store loop (`loopguard_host::store::StoredGateway::decide_call`), and
//! `apply_events` for trace lines. Everything else (stats, swaps, snapshots) is the process's own
//! `Guard` (`loopguard/_stored.py`).

use std::num::NonZeroU64;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use loopguard_host::metrics::DecisionCounts;
use loopguard_host::store::{
    redacted, Cas, MemoryStore, RedisStore, StateStore, StoreError, StoreFailure, StoreOptions, StoreTls,
    StoredGateway, Via,
};
use loopguard_host::{Call, Compaction, Error, ErrorKind, GroupFinals, GroupMessage, Limits, Verdict};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::convert::*;
use super::{load, loopguard_error, py_error};

/// A gateway deciding on a store's state.
#[pyclass(module = "loopguard._native", frozen)]
pub struct StoredGuard {
    inner: Mutex<StoredGateway>,
    /// The decisions made, for the metrics (as `Guard`'s).
    counts: DecisionCounts,
}

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
        let inner = Mutex::new(StoredGateway::new(gateway, backend, options));
        Ok(StoredGuard { inner, counts: DecisionCounts::default() })
    }

    fn check_tool_call(&self, py: Python<'_>, call: CallTuple) -> PyResult<VerdictTuple> {
        match self.decide(py, Call::CheckToolCall(tool_call(call)))? {
            Verdict::CheckToolCall(v) => {
                let v = tool_verdict(v);
                self.counts.add("tool_call", v.0, v.1.as_deref());
                Ok(v)
            }
            other => Err(unexpected(py, &other)),
        }
    }

    fn record_tool_outcome(
        &self,
        py: Python<'_>,
        call: CallTuple,
        threw: bool,
        text: String,
    ) -> PyResult<OutcomeTuple> {
        match self.decide(py, Call::RecordToolOutcome((tool_call(call), outcome(threw, text))))? {
            Verdict::RecordToolOutcome(v) => {
                let v = outcome_verdict(v);
                self.counts.add("tool_result", v.0, v.1.as_deref());
                Ok(v)
            }
            other => Err(unexpected(py, &other)),
        }
    }

    #[pyo3(signature = (session, run=None, agent=None))]
    fn compaction_retried(
        &self,
        py: Python<'_>,
        session: String,
        run: Option<String>,
        agent: Option<String>,
    ) -> PyResult<Option<u32>> {
        match self.decide(py, Call::CompactionRetried(Compaction { session, run, agent }))? {
            Verdict::CompactionRetried(v) => Ok(armed(v)),
            other => Err(unexpected(py, &other)),
        }
    }

    fn check_bot_message(&self, py: Python<'_>, m: BotTuple) -> PyResult<BotVerdictTuple> {
        match self.decide(py, Call::CheckBotMessage(bot_message(m)))? {
            Verdict::CheckBotMessage(v) => {
                let v = bot_verdict(v);
                self.counts.add("bot_message", v.0, None);
                Ok(v)
            }
            other => Err(unexpected(py, &other)),
        }
    }

    fn start_group_thread(&self, py: Python<'_>, t: ThreadTuple, peer: String, text: String) -> PyResult<GroupTuple> {
        match self.decide(py, Call::StartGroupThread(GroupMessage { thread: thread(t), peer, text }))? {
            Verdict::StartGroupThread(v) => Ok(group_start(v)),
            other => Err(unexpected(py, &other)),
        }
    }

    fn finish_group_round(
        &self,
        py: Python<'_>,
        t: ThreadTuple,
        finals: Vec<(String, Option<String>)>,
    ) -> PyResult<GroupTuple> {
        match self.decide(py, Call::FinishGroupRound(GroupFinals { thread: thread(t), replies: replies(finals) }))? {
            Verdict::FinishGroupRound(v) => Ok(group_step(v)),
            other => Err(unexpected(py, &other)),
        }
    }

    fn cancel_group_thread(&self, py: Python<'_>, t: ThreadTuple) -> PyResult<GroupTuple> {
        match self.decide(py, Call::CancelGroupThread(thread(t)))? {
            Verdict::CancelGroupThread(v) => Ok(group_step(v)),
            other => Err(unexpected(py, &other)),
        }
    }

    /// Each line of `jsonl` decided on its key's state, numbered from `first_line`; blank lines
    /// skipped. The decision lines, as `Guard.apply_events` returns them.
    fn apply_events(&self, py: Python<'_>, jsonl: &str, first_line: u32) -> PyResult<String> {
        let mut out = String::new();
        for (i, line) in jsonl.split('\n').enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let n = first_line.saturating_add(i as u32);
            let decided =
                py.detach(|| self.lock().decide(line.trim_end_matches('\r'), n)).map_err(|e| py_error(py, e))?;
            match decided.decision {
                Some(line) => out.push_str(&line),
                None => return Err(refused(py, &decided.key, decided.via, Some(n))),
            }
        }
        Ok(out)
    }

    /// `Guard.apply_calls` made on a blob of one key's state (`state`; None: no state) instead
    /// of the store's: each item by the policy's `decide-call`, the state carried from one to the
    /// next; neither the store nor the gateway's own state is touched. Returns the made items'
    /// verdicts, the error of the item that failed (as `apply_calls`: it changed nothing, the
    /// items after it were not made) and the state after the items made. Why: the LiteLLM
    /// guardrail keeps a conversation's state in a record of its own together with how much of the
    /// history it consumed, and writes both at once (`loopguard/_cursors.py`).
    #[allow(clippy::type_complexity)]
    fn apply_calls_on<'py>(
        &self,
        py: Python<'py>,
        state: Option<Vec<u8>>,
        items: Vec<ItemTuple>,
    ) -> PyResult<(Vec<Py<PyAny>>, Option<(String, String, String)>, Option<Bound<'py, PyBytes>>)> {
        let calls = item_calls(items);
        let (made, failed, state) = py
            .detach(|| {
                let mut inner = self.lock();
                let gateway = inner.gateway();
                let (mut made, mut state) = (Vec::with_capacity(calls.len()), state);
                for call in &calls {
                    match gateway.decide_call(call, state.as_deref()) {
                        Ok(keyed) => {
                            made.push(keyed.verdict);
                            state = keyed.state;
                        }
                        Err(Error::Policy { kind, path, reason }) => {
                            return Ok((made, Some((Error::kind_name(kind).to_string(), path, reason)), state))
                        }
                        Err(e) => return Err(e),
                    }
                }
                Ok((made, None, state))
            })
            .map_err(|e| py_error(py, e))?;
        let verdicts = made.into_iter().map(|v| item_verdict(py, v)).collect::<PyResult<Vec<_>>>()?;
        Ok((verdicts, failed, state.map(|s| PyBytes::new(py, &s))))
    }

    /// A record of the host's own in the store (not the policy's): its version and bytes, 0 and
    /// empty when absent. Fails with `LoopGuardError("store", key, …)` when the store does not
    /// answer within the deadline.
    fn record_get<'py>(&self, py: Python<'py>, key: &str) -> PyResult<(u64, Bound<'py, PyBytes>)> {
        let got = py.detach(|| self.lock().store().0.get(key)).map_err(|e| store_error(py, key, e))?;
        Ok((got.version, PyBytes::new(py, &got.blob)))
    }

    /// Writes a record of the host's own if it is still at version `expected` (0: absent), with
    /// the store's TTL: `(True, new version, b"")`, or `(False, its version, its bytes)` when
    /// another writer came first. Fails as `record_get`.
    fn record_cas<'py>(
        &self,
        py: Python<'py>,
        key: &str,
        expected: u64,
        blob: Vec<u8>,
    ) -> PyResult<(bool, u64, Bound<'py, PyBytes>)> {
        let done = py.detach(|| {
            let mut inner = self.lock();
            let (store, ttl) = inner.store();
            store.cas(key, expected, &blob, ttl)
        });
        match done.map_err(|e| store_error(py, key, e))? {
            Cas::Written(version) => Ok((true, version, PyBytes::new(py, b""))),
            Cas::Conflict(now) => Ok((false, now.version, PyBytes::new(py, &now.blob))),
        }
    }

    /// The decisions made, as `Guard.decision_counts`.
    fn decision_counts(&self) -> Vec<(&'static str, &'static str, &'static str, u64)> {
        self.counts.snapshot()
    }

    /// As `Guard.count_decision`.
    #[pyo3(signature = (kind, action, detector=None))]
    fn count_decision(&self, kind: &str, action: &str, detector: Option<&str>) {
        self.counts.add(kind, action, detector);
    }

    /// The store counters, as (name, value) pairs.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        let s = self.lock().stats();
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

impl StoredGuard {
    fn lock(&self) -> std::sync::MutexGuard<'_, StoredGateway> {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Makes `call` on its key's state. The store's round trips are I/O: other Python threads
    /// may run meanwhile (the lock is taken without the GIL, so a thread waiting for it never
    /// holds up the others).
    fn decide(&self, py: Python<'_>, call: Call) -> PyResult<Verdict> {
        let decided = py.detach(|| self.lock().decide_call(&call)).map_err(|e| py_error(py, e))?;
        match decided.decision {
            Some(verdict) => Ok(verdict),
            None => Err(refused(py, &decided.key, decided.via, None)),
        }
    }
}

fn via(v: Via) -> &'static str {
    match v {
        Via::Store => "store",
        Via::Local => "local",
        Via::Refused => "refused",
    }
}

/// The error of a decision the store loop refused (the store failed, `store_fail_closed`).
fn refused(py: Python<'_>, key: &str, v: Via, line: Option<u32>) -> PyErr {
    let at = line.map(|n| format!("line {n}: ")).unwrap_or_default();
    let reason = format!("{at}the store failed and store_fail_closed is set: no decision for {key} ({})", via(v));
    loopguard_error(py, "store".into(), "store".into(), reason)
}

/// A record the store did not read or write (down, slow, refused).
fn store_error(py: Python<'_>, key: &str, e: StoreError) -> PyErr {
    loopguard_error(py, "store".into(), key.into(), e.to_string())
}

/// A verdict of another call than the one made: a policy that breaks the interface.
fn unexpected(py: Python<'_>, v: &Verdict) -> PyErr {
    loopguard_error(py, "policy".into(), "policy".into(), format!("the policy answered another call: {v:?}"))
}
