"""``LoopGuard(store=...)``: the decisions on state kept in a store shared by replicas
(docs/SCALING.md).

The decision calls go to the native ``StoredGuard``, which makes each one, typed, on its key's
state (read, decide, compare-and-set) and answers in the same tuples as the native ``Guard``, so
``LoopGuard`` builds the same result types. Calls that are not decisions (``stats``,
``policy``, ``swap``, snapshots) go to the process's own guard. ``end_session`` forgets nothing
in the store: a session's key expires with the store's TTL.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Tuple

from . import _native
from ._errors import LoopGuardError

#: The calls the store's state decides.
_DECISIONS = frozenset({
    "check_tool_call", "record_tool_outcome", "compaction_retried", "check_bot_message",
    "start_group_thread", "finish_group_round", "cancel_group_thread", "apply_events",
    # the LiteLLM guardrail's cursors (``_cursors``): a state blob's batch, records of their own
    "apply_calls_on", "record_get", "record_cas",
    # the decisions counted for the metrics are the stored guard's, which makes them
    "decision_counts", "count_decision",
})


def _tls_file(value: Any, name: str) -> Optional[str]:
    """A TLS file argument (``store_ca``, …): None, or a path."""
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise LoopGuardError("input", name, f"must be a path to a PEM file, not {type(value).__name__}")
    return os.fspath(value)


class Stored:
    """The native guard's decision calls, made on the store's state; everything else is the
    process's own guard (``local``)."""

    def __init__(self, local: Any, config: str, store: str, prefix: str, ttl_s: Optional[int],
                 deadline_ms: Optional[int], fail_closed: bool, policy: Optional[str],
                 expect_digest: Optional[str],
                 tls: Tuple[Optional[str], Optional[str], Optional[str]] = (None, None, None)) -> None:
        self._local = local
        ca, cert, key = tls
        self._stored = _native.StoredGuard(config, store, prefix, ttl_s, deadline_ms, fail_closed, policy,
                                           expect_digest, ca, cert, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stored if name in _DECISIONS else self._local, name)

    def health(self) -> list[tuple[str, int]]:
        """The supervisor's counters and the store's (``store_on_store``, ``store_on_local``, …)."""
        return list(self._local.health()) + [(f"store_{k}", v) for k, v in self._stored.stats()]

    def end_session(self, session: str) -> None:
        """The session's key expires with the store's TTL; its local state (if any) goes now."""
        self._local.end_session(session)
