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

use loopguard_host::store::{
    redacted, MemoryStore, RedisStore, StateStore, StoreFailure, StoreOptions, StoreTls, StoredGateway, Via,
};
use loopguard_host::{Call, Compaction, Error, ErrorKind, GroupFinals, GroupMessage, Limits, Verdict};
use pyo3::prelude::*;

use super::convert::*;
use super::{load, loopguard_error, py_error};

/// A gateway deciding on a store's state.
#[pyclass(module = "loopguard._native", frozen)]
pub struct StoredGuard {
    inner: Mutex<StoredGateway>,
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
        Ok(StoredGuard { inner: Mutex::new(StoredGateway::new(gateway, backend, options)) })
    }

    fn check_tool_call(&self, py: Python<'_>, call: CallTuple) -> PyResult<VerdictTuple> {
        match self.decide(py, Call::CheckToolCall(tool_call(call)))? {
            Verdict::CheckToolCall(v) => Ok(tool_verdict(v)),
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
            Verdict::RecordToolOutcome(v) => Ok(outcome_verdict(v)),
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
            Verdict::CheckBotMessage(v) => Ok(bot_verdict(v)),
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

/// A verdict of another call than the one made: a policy that breaks the interface.
fn unexpected(py: Python<'_>, v: &Verdict) -> PyErr {
    loopguard_error(py, "policy".into(), "policy".into(), format!("the policy answered another call: {v:?}"))
}
